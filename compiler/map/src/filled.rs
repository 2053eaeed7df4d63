//! Copies that fill their tiles (`docs/mapping.md` §5, `--copies fill:N`): each of the `N`
//! copies' layers take the PEs the copy's share of the fabric holds, not the fewest that keep
//! the pipeline's pace, so that the copies together use as much of the fabric as their tiles
//! and their ways to the edge leave.
//!
//! The share starts at the fabric's live PEs over `N`; copy 0 is mapped at the largest sizes
//! that fit it (`search::filling_sizes`, no layer slower than the one-copy mapping's
//! bottleneck), cut into its core and tiled as any copies are (`crate::copies`). When fewer
//! than `N` tiles lie on the fabric, or fewer than `N` copies find their ways to the edge,
//! the share shrinks by a fifth (and below the copy just tried) and the copy is mapped
//! again, a few times. Large copies are few, so their tiles are tried harder than copies at
//! the least-area sizes: every slot and every color offset (`copies::THOROUGH`).

use wsel_ir::graph::{LayerGraph, Mode};
use wsel_target::Target;

use crate::copies::{THOROUGH, map_one, tiled};
use crate::placement::{PlacedLayer, Placement};
use crate::report::group;
use crate::tiles::{self, Core};
use crate::{MapOptions, search};

/// The most times the share of a copy shrinks before the copies are given up: each try maps
/// a copy and routes every copy's streams.
const MAX_SHRINKS: usize = 8;

/// `wanted` copies whose layers fill their tiles, each copy's layers no slower than
/// `copy0`'s (the copy mapped at the least-area sizes); `None` when no share found room for
/// all of them.
pub(crate) fn filled_copies(
    graph: &LayerGraph,
    target: &Target,
    mode: Mode,
    options: &MapOptions,
    wanted: u32,
    copy0: &Placement,
) -> Option<Placement> {
    // Diagnostics of the attempts are not the user's: the copy at the least-area sizes mapped.
    let mut ignored = Vec::new();
    let problem = search::Problem::build(graph, target, mode, options, None, &mut ignored)?;
    let period = copy0.layers.iter().map(|l| l.estimate.cycles).max()?;
    let least = copy_pes(copy0);
    let mut share = problem.live_pes / u64::from(wanted.max(1));
    for _ in 0..MAX_SHRINKS {
        if share <= least {
            return None;
        }
        let sizes = search::filling_sizes(&problem, share, period)?;
        let mapped = map_one(graph, target, mode, options, Some(&sizes), 0, &mut ignored);
        let core = mapped.as_ref().and_then(|(copy, _)| Core::of(copy));
        if let (Some((copy, _)), Some(core)) = (&mapped, core)
            && tiles::slots(&core, target, 0).len() >= wanted as usize
            && let Some(whole) = tiled(&core, copy, target, wanted, THOROUGH)
            && whole.copies == wanted
        {
            return Some(whole);
        }
        // Smaller than the copy just tried, which may have taken less than its share.
        let tried = search::pes(&sizes);
        share = (share * 4 / 5).min(tried.saturating_sub(1));
    }
    None
}

/// What [`Placement::copies_reason`] adds when the copies could not fill their tiles.
pub(crate) const NOT_FILLED: &str = "they could not fill their tiles: no share of the fabric held them all, so each takes \
     the least-area sizes";

/// What [`Placement::copies_reason`] adds about `whole`'s copies filling their tiles: the
/// PEs a copy takes against `least`'s (the copy at the least-area sizes).
pub(crate) fn reason(whole: &Placement, least: &Placement) -> String {
    format!(
        "filling their tiles: {} PEs a copy (at the least-area sizes, {})",
        group(copy_pes(whole)),
        group(copy_pes(least))
    )
}

/// The PEs of one copy's regions in `p`.
fn copy_pes(p: &Placement) -> u64 {
    let per_copy = p.layers_per_copy().max(1);
    p.layers
        .iter()
        .take(per_copy)
        .map(PlacedLayer::pe_count)
        .sum()
}

//! Replication for data parallelism (`docs/mapping.md` §5): when the fabric has room, the
//! whole pipeline is placed several times, and each copy processes its own block of the
//! batch's samples.
//!
//! Copy 0 is mapped as usual; every further copy is copy 0's regions and the routes between
//! them moved to another tile of a grid over the fabric (`crate::tiles`), nearest the edges
//! first, and each copy's inputs and result are routed to the fabric's edge through the gaps
//! between tiles, or across them (`crate::io_routes`), sharing routers and links with other
//! copies' regions and streams on other colors. Gaps of 0, 1, 2, 4, … PEs are
//! tried; the one that fits most copies wins.
//!
//! [`map_batch`] chooses the number of copies `k` by the estimate of the whole batch
//! (`crate::batch`), in which every copy's host streams share the host's bandwidth: `k` must
//! divide the batch, and a copy count is kept only when its estimate beats one copy's. Mapping
//! the copies for real may find room for fewer than the first guess; the choice then falls
//! back to the next best count. The placement says why it holds as many copies as it does
//! ([`Placement::copies_reason`]).

use std::path::PathBuf;

use wsel_diagnostic::Diagnostic;
use wsel_ir::graph::{LayerGraph, Mode, SourceSpan};
use wsel_target::{Coord, Target};

use crate::batch::{copies_bound, copies_estimate, estimate_batch};
use crate::companion;
use crate::diagnostics as diag;
use crate::io_routes::{Occupancy, route_copy};
use crate::place::DeadIndex;
use crate::placement::{self, PlacedLayer, Placement};
use crate::report::group;
use crate::tiles::{self, Core};
use crate::{MapOptions, MapResult, colors, filled, routes, search};

/// How many copies of the pipeline [`map_batch`] places.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Copies {
    /// As many as make the estimated batch faster (at most [`MAX_AUTO_COPIES`]). Weight
    /// streaming is never copied: it runs one layer at a time over its region.
    #[default]
    Auto,
    /// Exactly this many; it must divide the batch. `Exactly(1)` turns replication off.
    Exactly(u32),
    /// Exactly this many, each copy's layers taking the PEs its share of the fabric holds
    /// (`crate::filled`); it must divide the batch.
    Filled(u32),
}

impl Copies {
    /// The count asked for, when one is.
    pub fn asked(self) -> Option<u32> {
        match self {
            Copies::Auto => None,
            Copies::Exactly(k) | Copies::Filled(k) => Some(k),
        }
    }
}

impl std::fmt::Display for Copies {
    /// As `--copies` takes it: `auto` or the number.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Copies::Auto => f.write_str("auto"),
            Copies::Exactly(n) => write!(f, "{n}"),
            Copies::Filled(n) => write!(f, "fill:{n}"),
        }
    }
}

impl std::str::FromStr for Copies {
    type Err = String;

    /// `auto`, a positive number, or `fill:` and a positive number.
    fn from_str(text: &str) -> Result<Copies, String> {
        if text == "auto" {
            return Ok(Copies::Auto);
        }
        let (filled, count) = match text.strip_prefix("fill:") {
            Some(count) => (true, count),
            None => (false, text),
        };
        match count.parse::<u32>() {
            Ok(n) if n > 0 && filled => Ok(Copies::Filled(n)),
            Ok(n) if n > 0 => Ok(Copies::Exactly(n)),
            _ => {
                Err("expected `auto`, a positive number of copies, or `fill:` and one".to_string())
            }
        }
    }
}

/// The most copies [`Copies::Auto`] considers, which bounds the mapping time on large fabrics.
pub const MAX_AUTO_COPIES: u64 = 4096;

/// The narrowest gap between tiles tried, in PEs: none, the copies' streams to the edge then
/// cross other tiles on colors those leave free. Wider gaps (1, then doubling) leave more
/// ways to the edge between tiles, and fewer tiles.
const FIRST_GAP: u32 = 0;

/// How hard [`tile`] tries to find ways to the edge before it gives up a copy, and the rest.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tries {
    /// The most color offsets tried for one copy whose streams find no way to the edge.
    offsets: u32,
    /// Copies given up one after another before the rest of the slots are.
    misses: u32,
}

/// The tries for copies at their least-area sizes: the ways to the edge from further in are
/// no less crowded than the ways of the slots given up.
pub(crate) const QUICK: Tries = Tries {
    offsets: 3,
    misses: 4,
};

/// The tries for copies that fill their tiles (`crate::filled`): a few large copies, each
/// worth every offset and every slot.
pub(crate) const THOROUGH: Tries = Tries {
    offsets: u32::MAX,
    misses: u32::MAX,
};

/// What [`map_batch`] returns: the mapping result, and the layer graph its placement runs,
/// lowered for one copy's share of the batch.
#[derive(Debug, Clone)]
pub struct Mapped {
    pub result: MapResult,
    pub graph: LayerGraph,
}

/// Maps `graph` (lowered for the whole batch) with the number of copies `copies` asks for.
/// `per_copy(b)` lowers the same model for a batch of `b` samples, the share of one copy.
pub fn map_batch(
    graph: &LayerGraph,
    per_copy: &mut dyn FnMut(u64) -> Result<LayerGraph, Vec<Diagnostic>>,
    target: &Target,
    mode: Mode,
    options: &MapOptions,
    copies: Copies,
) -> Mapped {
    let with = |k: u32| MapOptions {
        copies: k,
        ..*options
    };
    let batch = graph.batch;
    let unchanged = |result: MapResult| Mapped {
        result,
        graph: graph.clone(),
    };
    match copies {
        // Weight streaming runs one layer at a time over its region: nothing to copy.
        _ if mode == Mode::Streaming => unchanged(crate::map(graph, target, mode, &with(1))),
        Copies::Exactly(k) | Copies::Filled(k) if k <= 1 => unchanged(explained(
            crate::map(graph, target, mode, &with(1)),
            "one copy, as asked",
        )),
        Copies::Exactly(k) | Copies::Filled(k) => {
            if u64::from(k) > batch || !batch.is_multiple_of(u64::from(k)) {
                return unchanged(MapResult {
                    placement: None,
                    diagnostics: vec![diag::copies_do_not_divide(&first_call(graph), k, batch)],
                });
            }
            let fill = matches!(copies, Copies::Filled(_));
            let asked = MapOptions { fill, ..with(k) };
            match per_copy(batch / u64::from(k)) {
                Ok(lowered) => Mapped {
                    result: explained(
                        crate::map(&lowered, target, mode, &asked),
                        &format!("{k} copies, as asked"),
                    ),
                    graph: lowered,
                },
                Err(diagnostics) => unchanged(MapResult {
                    placement: None,
                    diagnostics,
                }),
            }
        }
        Copies::Auto => {
            let single = crate::map(graph, target, mode, &with(1));
            match &single.placement {
                Some(one) if mode == Mode::Pipelined && batch > 1 => {
                    match replicate(graph, one, per_copy, target, mode, options) {
                        Ok(better) => better,
                        Err(why) => unchanged(explained(single, &format!("auto: one copy: {why}"))),
                    }
                }
                _ if batch <= 1 => unchanged(explained(single, "auto: one copy for one sample")),
                _ => unchanged(single),
            }
        }
    }
}

/// The best replicated mapping by the estimate, if any beats the single copy `one`; else why
/// none does.
fn replicate(
    graph: &LayerGraph,
    one: &Placement,
    per_copy: &mut dyn FnMut(u64) -> Result<LayerGraph, Vec<Diagnostic>>,
    target: &Target,
    mode: Mode,
    options: &MapOptions,
) -> Result<Mapped, String> {
    let batch = graph.batch;
    let guess = |k: u64| copies_estimate(graph, one, target, k, batch);
    let room = Core::of(one).map_or(1, |core| tiles::slots(&core, target, FIRST_GAP).len());
    let most = (room as u64).min(batch).min(MAX_AUTO_COPIES);
    let dividing: Vec<u64> = (2..=most).filter(|&k| batch.is_multiple_of(k)).collect();
    let mut allowed: Vec<u64> = dividing
        .iter()
        .copied()
        .filter(|&k| guess(k) < one.estimated_cycles)
        .collect();
    let why = match dividing.first() {
        None if most < 2 => Some("a second copy finds no room on the fabric".to_string()),
        None => Some(format!(
            "no count of copies up to {most} divides the batch of {batch}"
        )),
        Some(&k) if allowed.is_empty() => {
            let (cycles, bound) = copies_bound(graph, one, target, k);
            Some(format!(
                "no count of copies is estimated faster ({k} copies: {} cycles against {}; \
                 {bound})",
                group(cycles),
                group(one.estimated_cycles)
            ))
        }
        Some(_) => None,
    };
    // Counts tried and given up, with why.
    let mut failed: Vec<(u64, String)> = Vec::new();
    while let Some(k) = allowed.iter().copied().min_by_key(|&k| (guess(k), k)) {
        let Ok(lowered) = per_copy(batch / k) else {
            allowed.retain(|&j| j != k);
            continue;
        };
        let (placement, _) = place_copies(&lowered, target, mode, options, k as u32);
        match placement {
            Some(mut p)
                if u64::from(p.copies) == k && p.estimated_cycles < one.estimated_cycles =>
            {
                p.copies_reason = reason(graph, one, target, &p, &failed);
                return Ok(Mapped {
                    result: MapResult {
                        placement: Some(p),
                        diagnostics: Vec::new(),
                    },
                    graph: lowered,
                });
            }
            // Fewer copies fit: only counts up to that many are worth trying.
            Some(p) if u64::from(p.copies) < k => {
                failed.push((k, format!("only {} of them fit on the fabric", p.copies)));
                allowed.retain(|&j| j <= u64::from(p.copies));
            }
            Some(p) => {
                failed.push((
                    k,
                    format!(
                        "placed, they are estimated at {} cycles against {} for one copy \
                         (their ways to the fabric's edge are longer than the guess)",
                        group(p.estimated_cycles),
                        group(one.estimated_cycles)
                    ),
                ));
                allowed.retain(|&j| j != k);
            }
            None => allowed.retain(|&j| j != k),
        }
    }
    Err(why.unwrap_or_else(|| match failed.first() {
        Some((k, what)) => format!("{k} copies: {what}"),
        None => "no count of copies could be mapped".to_string(),
    }))
}

/// Why `chosen` holds as many copies as it does: the estimate against one copy's, and what
/// the next larger count does (tried and given up, in `failed`, or its estimate).
fn reason(
    graph: &LayerGraph,
    one: &Placement,
    target: &Target,
    chosen: &Placement,
    failed: &[(u64, String)],
) -> String {
    let k = u64::from(chosen.copies);
    let mut why = format!(
        "auto: {k} copies of {} samples, estimated {} cycles against {} for one copy",
        group(chosen.samples_per_copy),
        group(chosen.estimated_cycles),
        group(one.estimated_cycles)
    );
    let next = (k + 1..=graph.batch.min(MAX_AUTO_COPIES)).find(|j| graph.batch.is_multiple_of(*j));
    match next {
        Some(j) => match failed.iter().find(|(f, _)| *f == j) {
            Some((_, what)) => why += &format!("; {j} copies: {what}"),
            None => {
                let (cycles, bound) = copies_bound(graph, one, target, j);
                why += &format!("; {j} copies are estimated at {} ({bound})", group(cycles));
            }
        },
        None => why += "; no larger count divides the batch",
    }
    why
}

/// Places up to `wanted` copies of `graph` as tiles of copy 0; the placement holds as many as
/// fit (at least one), or is `None` with the diagnostics of copy 0.
pub(crate) fn place_copies(
    graph: &LayerGraph,
    target: &Target,
    mode: Mode,
    options: &MapOptions,
    wanted: u32,
) -> (Option<Placement>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let Some((mut copy0, _)) = map_one(
        graph,
        target,
        mode,
        options,
        options.sizes,
        0,
        &mut diagnostics,
    ) else {
        return (None, diagnostics);
    };
    let fill = options.fill && wanted > 1 && options.sizes.is_none();
    let filled = fill
        .then(|| filled::filled_copies(graph, target, mode, options, wanted, &copy0))
        .flatten();
    let filling = match &filled {
        Some(p) => filled::reason(p, &copy0),
        None if fill => filled::NOT_FILLED.to_string(),
        None => String::new(),
    };
    // Cutting the core walks every PE's routes: only worth it when copies are wanted.
    let tiled = filled.or_else(|| {
        let core = (wanted > 1).then(|| Core::of(&copy0)).flatten()?;
        tiled(&core, &copy0, target, wanted, QUICK)
    });
    let mut whole = match tiled {
        Some(p) => p,
        None => {
            copy0.copies = 1;
            copy0
        }
    };
    whole.batch = graph.batch * u64::from(whole.copies);
    whole.copies_reason = filling;
    estimate_batch(graph, &mut whole, target);
    (Some(whole), diagnostics)
}

/// Up to `wanted` copies of `core` (cut from `copy0`) as tiles, at the gap between tiles that
/// holds the most; `None` when not even copy 0's streams find a way.
pub(crate) fn tiled(
    core: &Core,
    copy0: &Placement,
    target: &Target,
    wanted: u32,
    tries: Tries,
) -> Option<Placement> {
    let mut best: Option<Placement> = None;
    for gap in gaps(core) {
        // Wider gaps leave no more slots than this one has.
        let room = tiles::slots(core, target, gap).len() as u32;
        if best.as_ref().is_some_and(|b| b.copies >= room.min(wanted)) {
            break;
        }
        let Some(p) = tile(core, copy0, target, wanted, gap, tries) else {
            continue;
        };
        let done = p.copies == wanted;
        if best.as_ref().is_none_or(|b| p.copies > b.copies) {
            best = Some(p);
        }
        if done {
            break;
        }
    }
    best
}

/// The gaps tried between tiles: [`FIRST_GAP`], then 1 doubling until one is wider than the
/// widest stream the copies route to the edge (its parts go side by side).
fn gaps(core: &Core) -> Vec<u32> {
    let widest = core.edge.iter().map(|e| e.point.parts).max().unwrap_or(1);
    let mut out = vec![FIRST_GAP, 1];
    while out.last().is_some_and(|&g| g <= widest) {
        out.push(2 * out[out.len() - 1]);
    }
    out
}

/// Up to `wanted` copies of `core` on the slots of a grid with `gap` PEs between tiles, each
/// with its edge streams routed; `None` when not even copy 0's streams find a way.
fn tile(
    core: &Core,
    copy0: &Placement,
    target: &Target,
    wanted: u32,
    gap: u32,
    tries: Tries,
) -> Option<Placement> {
    let dead = DeadIndex::new(target);
    let mut occ = Occupancy::new(target);
    let mut chosen: Vec<(i64, i64)> = Vec::new();
    for slot in tiles::slots(core, target, gap) {
        if chosen.len() == wanted as usize {
            break;
        }
        if core.fits(target, &dead, slot.0, slot.1)
            && core.routers(slot.0, slot.1).all(|c| occ.tile_free(c))
        {
            core.routers(slot.0, slot.1)
                .for_each(|c| occ.set_tile(c, true));
            chosen.push(slot);
        }
    }
    // Colors in use by one copy: further copies shift theirs by multiples of it first.
    let used = core
        .uses
        .iter()
        .map(|&(_, mask)| 64 - mask.leading_zeros())
        .chain(core.edge.iter().map(|e| u32::from(e.transfer.color) + 1))
        .max()
        .unwrap_or(1);
    let colors = target.colors.max(1);
    let mut whole = Placement {
        layers: Vec::new(),
        transfers: Vec::new(),
        inputs: Vec::new(),
        outputs: Vec::new(),
        copies: 0,
        ..copy0.clone()
    };
    let mut misses = 0;
    for slot in chosen {
        if misses == tries.misses {
            break;
        }
        let copy = whole.copies;
        let first = (copy * used) % colors;
        let edges = (0..colors.min(tries.offsets)).find_map(|k| {
            let offset = ((first + k) % colors) as u8;
            let uses: Vec<(Coord, u64)> = tiles::moved_uses(core, slot, offset, colors).collect();
            if !uses.iter().all(|&(c, mask)| occ.colors_free(c, mask)) {
                return None;
            }
            uses.iter()
                .for_each(|&(c, mask)| occ.set_colors(c, mask, true));
            match route_copy(&mut occ, target, &dead, core, copy, slot, offset) {
                Some(e) => Some((offset, e)),
                None => {
                    uses.iter()
                        .for_each(|&(c, mask)| occ.set_colors(c, mask, false));
                    None
                }
            }
        });
        let Some((offset, edges)) = edges else {
            core.routers(slot.0, slot.1)
                .for_each(|c| occ.set_tile(c, false));
            misses += 1;
            continue;
        };
        misses = 0;
        let (layers, transfers) = core.moved(copy, slot, offset, target.colors);
        whole.layers.extend(layers);
        whole.transfers.extend(transfers);
        whole.transfers.extend(edges.transfers);
        whole.inputs.extend(edges.inputs);
        whole.outputs.extend(edges.outputs);
        whole.copies += 1;
    }
    if whole.copies == 0 {
        return None;
    }
    whole.colors_used = whole
        .transfers
        .iter()
        .map(|t| t.color)
        .chain(whole.layers.iter().flat_map(PlacedLayer::colors))
        .max()
        .map_or(0, |c| u32::from(c) + 1);
    Some(whole)
}

/// Maps one copy of the pipeline (numbered `copy`), at the `pinned` sizes if given; the
/// placement (of that copy alone) and its layers' sizes.
pub(crate) fn map_one(
    graph: &LayerGraph,
    target: &Target,
    mode: Mode,
    options: &MapOptions,
    pinned: Option<&[(u32, u32)]>,
    copy: u32,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<(Placement, Vec<(u32, u32)>)> {
    let problem = search::Problem::build(graph, target, mode, options, pinned, diagnostics)?;
    let complete = |choice: &search::Choice| {
        let mut found = Vec::new();
        let mut blamed = Vec::new();
        let Some(routed) = routes::route_all(&problem, choice, &mut found, &mut blamed) else {
            return Err(search::Incomplete {
                diagnostics: found,
                layers: blamed,
                sized: false,
            });
        };
        let Some(coloring) = colors::assign(&problem, choice, &routed, &mut found, &mut blamed)
        else {
            return Err(search::Incomplete {
                diagnostics: found,
                layers: blamed,
                sized: false,
            });
        };
        if let Some(companion) = &options.companion {
            companion::check(companion, target, mode, choice)?;
        }
        Ok((routed, coloring))
    };
    let (choice, (routed, coloring)) = search::choose(&problem, diagnostics, complete)?;
    let placement = placement::assemble(&problem, &choice, &routed, &coloring, copy);
    Some((placement, choice.sizes))
}

/// `result` with its placement's [`Placement::copies_reason`] set to `why`, followed by what
/// the placing said (whether copies filled their tiles).
fn explained(mut result: MapResult, why: &str) -> MapResult {
    if let Some(p) = &mut result.placement {
        p.copies_reason = match p.copies_reason.as_str() {
            "" => why.to_string(),
            placing => format!("{why}; {placing}"),
        };
    }
    result
}

/// Where a diagnostic about the whole pipeline points: the model's first layer call.
fn first_call(graph: &LayerGraph) -> SourceSpan {
    graph.layers.first().map_or_else(
        || SourceSpan {
            file: PathBuf::new(),
            span: 0..0,
        },
        |l| l.call.clone(),
    )
}

/// E0610 when fewer than `wanted` copies fit.
pub(crate) fn shortfall(graph: &LayerGraph, wanted: u32, fitted: u32) -> Diagnostic {
    diag::copies_do_not_fit(&first_call(graph), wanted, fitted)
}

//! Replication for data parallelism (`docs/mapping.md` §5): when the fabric has room, the
//! whole pipeline is placed several times, and each copy processes its own block of the
//! batch's samples.
//!
//! Copy 0 is mapped as usual. Every further copy takes copy 0's region sizes and is mapped onto
//! the fabric with each PE an earlier copy uses (its regions, the routers its routes cross and
//! the edge PEs where its streams enter and leave) treated as dead, so copies never share a
//! router: each copy colors its own streams, and the colors repeat from copy to copy.
//!
//! [`map_batch`] chooses the number of copies `k` by the estimate of the whole batch
//! (`crate::estimate`): `k` must divide the batch, and a copy count is kept only when its
//! estimate beats one copy's. Mapping the copies for real may find room for fewer than the
//! first guess, or longer routes; the choice then falls back to the next best count.

use std::collections::BTreeSet;
use std::path::PathBuf;

use wsel_diagnostic::Diagnostic;
use wsel_ir::graph::{LayerGraph, Mode, SourceSpan};
use wsel_target::{Coord, Target};

use crate::diagnostics as diag;
use crate::estimate::{CopyCost, batch_cycles, host_io_cycles};
use crate::placement::{self, Placement};
use crate::{MapOptions, MapResult, colors, routes, search};

/// How many copies of the pipeline [`map_batch`] places.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Copies {
    /// As many as make the estimated batch faster (at most [`MAX_AUTO_COPIES`]). Weight
    /// streaming is never copied: it runs one layer at a time over its region.
    #[default]
    Auto,
    /// Exactly this many; it must divide the batch. `Exactly(1)` turns replication off.
    Exactly(u32),
}

impl std::fmt::Display for Copies {
    /// As `--copies` takes it: `auto` or the number.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Copies::Auto => f.write_str("auto"),
            Copies::Exactly(n) => write!(f, "{n}"),
        }
    }
}

impl std::str::FromStr for Copies {
    type Err = String;

    /// `auto` or a positive number.
    fn from_str(text: &str) -> Result<Copies, String> {
        if text == "auto" {
            return Ok(Copies::Auto);
        }
        match text.parse::<u32>() {
            Ok(n) if n > 0 => Ok(Copies::Exactly(n)),
            _ => Err("expected `auto` or a positive number of copies".to_string()),
        }
    }
}

/// The most copies [`Copies::Auto`] considers, which bounds the mapping time on large fabrics.
pub const MAX_AUTO_COPIES: u64 = 64;

/// The most places on the fabric's edge tried for the first layer of a further copy.
const MAX_ANCHORS: usize = 4;

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
        Copies::Exactly(k) if k <= 1 => unchanged(crate::map(graph, target, mode, &with(1))),
        Copies::Exactly(k) => {
            if u64::from(k) > batch || !batch.is_multiple_of(u64::from(k)) {
                return unchanged(MapResult {
                    placement: None,
                    diagnostics: vec![diag::copies_do_not_divide(&first_call(graph), k, batch)],
                });
            }
            match per_copy(batch / u64::from(k)) {
                Ok(lowered) => Mapped {
                    result: crate::map(&lowered, target, mode, &with(k)),
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
                        Some(better) => better,
                        None => unchanged(single),
                    }
                }
                _ => unchanged(single),
            }
        }
    }
}

/// The best replicated mapping by the estimate, if any beats the single copy `one`.
fn replicate(
    graph: &LayerGraph,
    one: &Placement,
    per_copy: &mut dyn FnMut(u64) -> Result<LayerGraph, Vec<Diagnostic>>,
    target: &Target,
    mode: Mode,
    options: &MapOptions,
) -> Option<Mapped> {
    let batch = graph.batch;
    let cost = CopyCost::of(&one.layers, &one.transfers, target.hop_latency);
    let io = host_io_cycles(graph, target, batch);
    let guess = |k: u64| batch_cycles(&[cost], batch / k, io);
    let live = target.pe_count() - target.defects.dead_pes.len() as u64;
    let room = live / (footprint(one).len() as u64).max(1);
    let mut allowed: Vec<u64> = (2..=room.min(batch).min(MAX_AUTO_COPIES))
        .filter(|&k| batch.is_multiple_of(k) && guess(k) < one.estimated_cycles)
        .collect();
    while let Some(k) = allowed.iter().copied().min_by_key(|&k| (guess(k), k)) {
        let Ok(lowered) = per_copy(batch / k) else {
            allowed.retain(|&j| j != k);
            continue;
        };
        let (placement, _) = place_copies(&lowered, target, mode, options, k as u32);
        match placement {
            Some(p) if u64::from(p.copies) == k && p.estimated_cycles < one.estimated_cycles => {
                return Some(Mapped {
                    result: MapResult {
                        placement: Some(p),
                        diagnostics: Vec::new(),
                    },
                    graph: lowered,
                });
            }
            // Fewer copies fit: only counts up to that many are worth trying.
            Some(p) if u64::from(p.copies) < k => allowed.retain(|&j| j <= u64::from(p.copies)),
            _ => allowed.retain(|&j| j != k),
        }
    }
    None
}

/// Places up to `wanted` copies of `graph`, each beside the earlier ones; the placement holds
/// as many as fit (at least one), or is `None` with the diagnostics of copy 0.
pub(crate) fn place_copies(
    graph: &LayerGraph,
    target: &Target,
    mode: Mode,
    options: &MapOptions,
    wanted: u32,
) -> (Option<Placement>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let Some((mut whole, sizes)) = map_one(
        graph,
        target,
        mode,
        options,
        options.sizes,
        0,
        0,
        &mut diagnostics,
    ) else {
        return (None, diagnostics);
    };
    let mut costs = vec![CopyCost::of(
        &whole.layers,
        &whole.transfers,
        target.hop_latency,
    )];
    let mut fenced = target.clone();
    fenced.defects.dead_pes.extend(footprint(&whole));
    for copy in 1..wanted.max(1) {
        // The first layer takes the first free place on the fabric's edge, or a later one
        // when the rest of the copy cannot be placed, routed or colored from there.
        let Some((more, _)) = (0..MAX_ANCHORS).find_map(|anchor| {
            let mut ignored = Vec::new();
            map_one(
                graph,
                &fenced,
                mode,
                options,
                Some(&sizes),
                anchor,
                copy,
                &mut ignored,
            )
        }) else {
            break;
        };
        costs.push(CopyCost::of(
            &more.layers,
            &more.transfers,
            target.hop_latency,
        ));
        fenced.defects.dead_pes.extend(footprint(&more));
        whole.colors_used = whole.colors_used.max(more.colors_used);
        whole.layers.extend(more.layers);
        whole.transfers.extend(more.transfers);
        whole.inputs.extend(more.inputs);
        whole.outputs.extend(more.outputs);
    }
    whole.copies = costs.len() as u32;
    whole.batch = graph.batch * u64::from(whole.copies);
    whole.estimated_cycles = batch_cycles(
        &costs,
        graph.batch,
        host_io_cycles(graph, target, whole.batch),
    );
    (Some(whole), diagnostics)
}

/// Maps one copy of the pipeline (numbered `copy`), at the `pinned` sizes if given, with its
/// first layer at the `anchor`-th free place on the fabric's edge; the placement (of that
/// copy alone) and its layers' sizes.
#[allow(clippy::too_many_arguments)]
pub(crate) fn map_one(
    graph: &LayerGraph,
    target: &Target,
    mode: Mode,
    options: &MapOptions,
    pinned: Option<&[(u32, u32)]>,
    anchor: usize,
    copy: u32,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<(Placement, Vec<(u32, u32)>)> {
    let mut problem = search::Problem::build(graph, target, mode, options, pinned, diagnostics)?;
    problem.anchor = anchor;
    let complete = |choice: &search::Choice| {
        let mut found = Vec::new();
        let mut blamed = Vec::new();
        let Some(routed) = routes::route_all(&problem, choice, &mut found, &mut blamed) else {
            return Err(search::Incomplete {
                diagnostics: found,
                layers: blamed,
            });
        };
        let Some(coloring) = colors::assign(&problem, choice, &routed, &mut found, &mut blamed)
        else {
            return Err(search::Incomplete {
                diagnostics: found,
                layers: blamed,
            });
        };
        Ok((routed, coloring))
    };
    let (choice, (routed, coloring)) = search::choose(&problem, diagnostics, complete)?;
    let placement = placement::assemble(&problem, &choice, &routed, &coloring, copy);
    Some((placement, choice.sizes))
}

/// Every PE a placement uses: its regions and the routers its transfers cross (which include
/// the edge PEs where streams enter and leave the fabric).
fn footprint(p: &Placement) -> BTreeSet<Coord> {
    let mut out = BTreeSet::new();
    for l in &p.layers {
        let r = l.rect;
        for y in r.y..r.y + r.height {
            for x in r.x..r.x + r.width {
                out.insert(Coord::new(x, y));
            }
        }
    }
    for t in &p.transfers {
        out.extend(t.hops.iter().map(|h| h.at));
    }
    out
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

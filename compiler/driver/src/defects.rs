//! Mapping around defects without changing results. A layer's region size decides how its
//! tensors are tiled over the PEs, and so the order in which its sums are taken: a different
//! size may change the last bits of its results. Dead PEs should only move regions, so on a
//! target with defects the model is first mapped on the same fabric without them, and its
//! region sizes are kept when they still fit around the defects. When they do not, the model
//! is mapped freely and the decision says which sizes changed.

use wsel_ir::graph::{LayerGraph, Mode};
use wsel_map::{Copies, KernelWork, Placement};
use wsel_target::{DefectMap, Target};

use crate::pipeline::{BuildError, Lowerings, Mapping, ModeRequest, map_with_sizes};

/// Maps on `target`, which has defects, keeping the defect-free mapping's region sizes (and
/// mode and number of copies) where they fit.
pub fn map_around_defects(
    graph: &LayerGraph,
    lowerings: &mut Lowerings<'_>,
    work: &dyn KernelWork,
    target: &Target,
    request: ModeRequest,
    copies: Copies,
) -> Result<Mapping, BuildError> {
    let clean = Target {
        defects: DefectMap::new(),
        ..target.clone()
    };
    let Ok((_, ideal, ideal_decision)) =
        map_with_sizes(graph, lowerings, work, &clean, request, copies, None)
    else {
        // Not even the whole fabric takes the model: the defective one says why.
        return map_with_sizes(graph, lowerings, work, target, request, copies, None);
    };
    let sizes = sizes_of(&ideal);
    let same_mode = match ideal_decision.mode {
        Mode::Pipelined => ModeRequest::Pipelined,
        Mode::Streaming => ModeRequest::Streaming,
    };
    let kept = map_with_sizes(
        graph,
        lowerings,
        work,
        target,
        same_mode,
        Copies::Exactly(ideal.copies),
        Some(&sizes),
    );
    if let Ok((graph, placement, _)) = kept {
        return Ok((graph, placement, ideal_decision));
    }
    let (graph, placement, mut decision) =
        map_with_sizes(graph, lowerings, work, target, request, copies, None)?;
    decision.sizes_note = Some(changed_sizes(
        &ideal,
        ideal_decision.mode,
        &placement,
        decision.mode,
    ));
    Ok((graph, placement, decision))
}

/// The logical region size of every layer of the first copy, in graph order; without the
/// relayouts weight streaming inserts between per-layer rows (`std.resident`'s `relayout`),
/// which the kept rows insert again.
fn sizes_of(placement: &Placement) -> Vec<(u32, u32)> {
    placement
        .layers
        .iter()
        .filter(|l| l.copy == 0 && !(l.layer == "relayout" && l.kernel == "relayout_tile"))
        .map(|l| (l.rows, l.cols))
        .collect()
}

/// One sentence on how `placement` differs from the defect-free `ideal`.
fn changed_sizes(ideal: &Placement, ideal_mode: Mode, placement: &Placement, mode: Mode) -> String {
    let mut changes: Vec<String> = ideal
        .layers
        .iter()
        .filter(|l| l.copy == 0)
        .zip(placement.layers.iter().filter(|l| l.copy == 0))
        .filter(|(a, b)| (a.rows, a.cols) != (b.rows, b.cols))
        .map(|(a, b)| {
            format!(
                "{} {} × {} → {} × {}",
                a.name, a.rows, a.cols, b.rows, b.cols
            )
        })
        .collect();
    if mode != ideal_mode {
        changes.insert(
            0,
            format!("{} mode → {} mode", mode_name(ideal_mode), mode_name(mode)),
        );
    }
    format!(
        "the region sizes chosen on the same fabric without defects could not be placed and \
         routed around them ({}), so results may differ from a defect-free fabric's in the \
         last bits",
        changes.join(", ")
    )
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Pipelined => "pipelined",
        Mode::Streaming => "streaming",
    }
}

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
    let mut changes = size_changes(&named_sizes(ideal), &named_sizes(placement));
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

/// Every layer of the first copy with its logical region size, in graph order.
fn named_sizes(placement: &Placement) -> Vec<(&str, u32, u32)> {
    placement
        .layers
        .iter()
        .filter(|l| l.copy == 0)
        .map(|l| (l.name.as_str(), l.rows, l.cols))
        .collect()
}

/// `name R × C → R' × C'` for every layer of `ideal` whose size differs in `now`. Layers are
/// paired by name: the two mappings may have different phases (a relayout, a park) between
/// the same layers, and a layer in only one of them changed no size.
fn size_changes(ideal: &[(&str, u32, u32)], now: &[(&str, u32, u32)]) -> Vec<String> {
    ideal
        .iter()
        .filter_map(|&(name, rows, cols)| {
            let &(_, r, c) = now.iter().find(|l| l.0 == name)?;
            ((rows, cols) != (r, c)).then(|| format!("{name} {rows} × {cols} → {r} × {c}"))
        })
        .collect()
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Pipelined => "pipelined",
        Mode::Streaming => "streaming",
    }
}

#[cfg(test)]
mod tests {
    use super::size_changes;

    #[test]
    fn sizes_are_compared_layer_by_name_across_inserted_phases() {
        // The defect-free mapping relays dense#1's result to one row; the one around the
        // defects keeps one region, so its phases are one fewer and every later layer sits
        // one place earlier: paired by position, relu#1 would be compared with relayout#1.
        let ideal = [
            ("dense#1", 16, 16),
            ("relayout#1", 16, 16),
            ("relu#1", 1, 16),
            ("dense#2", 1, 16),
        ];
        let now = [("dense#1", 15, 16), ("relu#1", 15, 16), ("dense#2", 1, 16)];
        assert_eq!(
            size_changes(&ideal, &now),
            ["dense#1 16 × 16 → 15 × 16", "relu#1 1 × 16 → 15 × 16"]
        );
    }
}

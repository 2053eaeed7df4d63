//! The estimated cycles of a layer-major run (`docs/running.md`, "Micro-batches"): every
//! phase runs once per micro-batch, but a layer that holds its weights streams them from the
//! store in its first micro-batch only, so its later micro-batches take its work and its
//! chain down the rows, not the store's time. Where each PE holds a share of its row's
//! weights (fewer words on more columns: std.nn's `dense_held`), the later micro-batches
//! pass the row's weights along the row again, one word a cycle, while the PEs work: the
//! ramp's time, not the store's. A park and an unpark run for every micro-batch but the one
//! that stays on the fabric, and an unpark takes its micro-batch's parked activations from
//! the store at the store's bandwidth, as the weights come. Used by the programme of
//! per-layer rows (`crate::regions`) and to compare layer-major order with one region and
//! with micro-batch-major order (`crate::layer_major`).

use wsel_ir::graph::{LayerGraph, TensorRef};
use wsel_target::Target;

use crate::placement::{Estimate, Placement};
use crate::streaming::{bytes_of, holds, streamed_weights};

/// The cycles of one phase over `micro` micro-batches of `batch` samples, given its
/// estimate `e` for one (per sample); `held` when the phase holds its weights, with the
/// words each row passes along itself again in a later micro-batch ([`held`]).
pub(crate) fn phase_cycles(e: &Estimate, batch: u64, micro: u64, held: Option<u64>) -> u64 {
    let first = e.cycles * batch;
    let later = match held {
        Some(along) => first.min(e.batch_compute.max(along) + e.chain * batch),
        None => first,
    };
    first + micro.saturating_sub(1) * later
}

/// Whether layer `l` of `graph` holds its weights on its implementation `imp` on a
/// `rows × cols` region, and if so the words each row passes along itself in each later
/// micro-batch: the row's weights when a PE holds only a share of them (its held words
/// fewer than on one column), else none.
pub(crate) fn held(graph: &LayerGraph, l: usize, imp: usize, size: (u32, u32)) -> Option<u64> {
    let (layer, (rows, cols)) = (&graph.layers[l], size);
    let imp = layer.impls.get(imp)?;
    if !holds(imp) {
        return None;
    }
    let words = |c: u32| bytes_of(&imp.held_words, layer, imp, rows, c);
    let shared = cols > 1 && words(cols) < words(1);
    Some(match shared {
        true => streamed_weights(graph, layer, imp, rows).0,
        false => 0,
    })
}

/// The cycles of phase `l` of `graph` (one micro-batch's parked graph) on its implementation
/// `imp` and `size` over `micro` micro-batches, given its estimate `e` for one (per sample):
/// a held layer's as [`phase_cycles`] says; a park's [`runs`] at its estimate; an unpark's
/// at the longer of its estimate and its micro-batch's parked bytes from the store
/// ([`unpark_store_cycles`]); any other phase's at its estimate for each micro-batch.
pub(crate) fn layer_cycles(
    graph: &LayerGraph,
    (l, imp): (usize, usize),
    size: (u32, u32),
    e: &Estimate,
    micro: u64,
    target: &Target,
) -> u64 {
    let batch = graph.batch.max(1);
    if !parking(graph, l) {
        return phase_cycles(e, batch, micro, held(graph, l, imp, size));
    }
    let store = match unparks(graph, l) {
        true => unpark_store_cycles(graph, l, target),
        false => 0,
    };
    runs(graph, l, micro) * (e.cycles * batch).max(store)
}

/// How many of `micro` micro-batches phase `l` of `graph` runs for: a park and an unpark
/// for all but the one that stays on the fabric between two layers (the last of one
/// segment, the first of the next), every other phase for each.
fn runs(graph: &LayerGraph, l: usize, micro: u64) -> u64 {
    match parking(graph, l) {
        true => micro.saturating_sub(1),
        false => micro,
    }
}

/// Whether layer `l` of `graph` is a park or an unpark.
fn parking(graph: &LayerGraph, l: usize) -> bool {
    graph.layers[l].layer == "park" || unparks(graph, l)
}

/// Whether layer `l` of `graph` is an unpark (layer-major order, `wsel_lower::parked_graph`):
/// it takes a `park`'s result back from the store.
pub(crate) fn unparks(graph: &LayerGraph, l: usize) -> bool {
    matches!(graph.layers[l].args.first(),
        Some(&TensorRef::Layer(p)) if graph.layers[p].layer == "park")
}

/// The cycles the store takes to send unpark `l`'s micro-batch of parked activations (its
/// result's bytes) at its bandwidth: they come in from the store as the weights do, sharing
/// its bandwidth (`weight_store.bandwidth_bytes_per_cycle`).
fn unpark_store_cycles(graph: &LayerGraph, l: usize, target: &Target) -> u64 {
    let bytes = 4 * graph.layers[l].output_shape.iter().product::<u64>();
    let bandwidth = u64::from(target.weight_store.bandwidth_bytes_per_cycle.max(1));
    bytes.div_ceil(bandwidth)
}

/// The estimated cycles of `placement` (of `graph`, one micro-batch's) run layer-major over
/// `micro` micro-batches: every phase as [`layer_cycles`] says, and a reconfiguration
/// before each run but the first.
pub(crate) fn run_cycles(
    graph: &LayerGraph,
    placement: &Placement,
    micro: u64,
    target: &Target,
) -> u64 {
    let (mut phases, mut runs_all) = (0, 0);
    for (l, placed) in placement.layers.iter().enumerate() {
        let (instance, size) = (placement.instance(l), (placed.rows, placed.cols));
        let layer = (instance, placed.implementation);
        phases += layer_cycles(graph, layer, size, &placed.estimate, micro, target);
        runs_all += runs(graph, instance, micro);
    }
    phases + u64::from(target.reconfigure_cycles) * runs_all.saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4 samples at 100 cycles each, the store binding; 120 cycles of work for the 4 and a
    /// chain of 5 a sample.
    fn estimate() -> Estimate {
        Estimate {
            cycles: 100,
            batch_compute: 120,
            chain: 5,
            ..Estimate::default()
        }
    }

    #[test]
    fn a_held_phase_streams_its_weights_in_its_first_micro_batch_only() {
        // The first micro-batch 400, each later one 120 + 5·4 = 140; unheld, 400 each.
        let e = estimate();
        assert_eq!(phase_cycles(&e, 4, 3, Some(0)), 400 + 2 * 140);
        assert_eq!(phase_cycles(&e, 4, 3, None), 3 * 400);
        assert_eq!(phase_cycles(&e, 4, 1, Some(0)), 400);
    }

    #[test]
    fn a_held_share_passes_the_rows_weights_along_the_row_in_later_micro_batches() {
        // Each row's 200 weights pass along the row again in each later micro-batch, one a
        // cycle beside the 120 cycles of work: 200 + 5·4 = 220 each; with 100 words, the
        // work binds: 140.
        let e = estimate();
        assert_eq!(phase_cycles(&e, 4, 3, Some(200)), 400 + 2 * 220);
        assert_eq!(phase_cycles(&e, 4, 3, Some(100)), 400 + 2 * 140);
    }

    /// 64 → 1024 → 10 as one micro-batch of 32 parks it (`wsel_lower::parked_graph`):
    /// dense#1, relu#1, a park of relu#1's result, its unpark, dense#2.
    fn parked() -> LayerGraph {
        let mut graph = crate::fixtures::mlp(&[64, 1024, 10], 32, true);
        let dense2 = graph.layers.pop().expect("dense#2");
        let mut park = graph.layers[1].clone();
        (park.name, park.layer) = ("park#1".into(), "park".into());
        park.args = vec![TensorRef::Layer(1)];
        let mut unpark = park.clone();
        (unpark.name, unpark.layer) = ("stage_in#2".into(), "stage_in".into());
        unpark.args = vec![TensorRef::Layer(2)];
        graph.layers.extend([park, unpark, dense2]);
        graph
    }

    #[test]
    fn parks_and_unparks_run_for_all_micro_batches_but_one_unparks_at_the_stores_pace() {
        // 8 micro-batches: 7 park and unpark. An unpark brings relu#1's 32 × 1024 result,
        // 131,072 B: at 16 B a cycle 8,192 cycles, more than its 100 × 32 = 3,200 of
        // estimate; at dev's 64 B a cycle 2,048, fewer. A park is not paced by the store.
        let (graph, e) = (parked(), estimate());
        let mut target = Target::dev();
        target.weight_store.bandwidth_bytes_per_cycle = 16;
        let cycles =
            |l: usize, target: &Target| layer_cycles(&graph, (l, 0), (16, 16), &e, 8, target);
        assert_eq!(cycles(3, &target), 7 * 8_192);
        assert_eq!(cycles(2, &target), 7 * 3_200);
        assert_eq!(cycles(1, &target), 8 * 3_200);
        assert_eq!(cycles(3, &Target::dev()), 7 * 3_200);
    }
}

//! The estimated cycles of a layer-major run (`docs/running.md`, "Micro-batches"): every
//! phase runs once per micro-batch, but a layer that holds its weights streams them from the
//! store in its first micro-batch only, so its later micro-batches take its work and its
//! chain down the rows, not the store's time. Where each PE holds a share of its row's
//! weights (fewer words on more columns: std.nn's `dense_held`), the later micro-batches
//! pass the row's weights along the row again, one word a cycle, while the PEs work: the
//! ramp's time, not the store's. Used by the programme of per-layer rows (`crate::regions`)
//! and to compare layer-major order with one region and with micro-batch-major order
//! (`crate::layer_major`).

use wsel_ir::graph::LayerGraph;
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

/// The estimated cycles of `placement` (of `graph`, one micro-batch's) run layer-major over
/// `micro` micro-batches: every phase for every micro-batch ([`phase_cycles`]), and a
/// reconfiguration before each but the first.
pub(crate) fn run_cycles(
    graph: &LayerGraph,
    placement: &Placement,
    micro: u64,
    target: &Target,
) -> u64 {
    let batch = graph.batch.max(1);
    let phases: u64 = placement
        .layers
        .iter()
        .enumerate()
        .map(|(l, placed)| {
            let size = (placed.rows, placed.cols);
            let held = held(graph, placement.instance(l), placed.implementation, size);
            phase_cycles(&placed.estimate, batch, micro, held)
        })
        .sum();
    let runs = placement.layers.len() as u64 * micro.max(1);
    phases + u64::from(target.reconfigure_cycles) * runs.saturating_sub(1)
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
}

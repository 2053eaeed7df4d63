//! The estimated cycles of a layer-major run (`docs/running.md`, "Micro-batches"): every
//! phase runs once per micro-batch, but a layer that holds its weights streams them in its
//! first micro-batch only, so its later micro-batches take its work and its chain down the
//! rows, not the store's or the ramp's time. Used by the programme of per-layer rows
//! (`crate::regions`) and to compare layer-major order with one region and with
//! micro-batch-major order (`crate::layer_major`).

use wsel_ir::graph::LayerGraph;
use wsel_target::Target;

use crate::placement::{Estimate, Placement};
use crate::streaming::holds;

/// The cycles of one phase over `micro` micro-batches of `batch` samples, given its
/// estimate `e` for one (per sample); `held` when the phase holds its weights.
pub(crate) fn phase_cycles(e: &Estimate, batch: u64, micro: u64, held: bool) -> u64 {
    let first = e.cycles * batch;
    let later = match held {
        true => first.min(e.batch_compute + e.chain * batch),
        false => first,
    };
    first + micro.saturating_sub(1) * later
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
            let layer = &graph.layers[placement.instance(l)];
            let held = layer.impls.get(placed.implementation).is_some_and(holds);
            phase_cycles(&placed.estimate, batch, micro, held)
        })
        .sum();
    let runs = placement.layers.len() as u64 * micro.max(1);
    phases + u64::from(target.reconfigure_cycles) * runs.saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_phase_streams_its_weights_in_its_first_micro_batch_only() {
        // 4 samples at 100 cycles each, the store binding; 120 cycles of work for the 4 and a
        // chain of 5 a sample: the first micro-batch 400, each later one 120 + 5·4 = 140;
        // unheld, 400 each.
        let e = Estimate {
            cycles: 100,
            batch_compute: 120,
            chain: 5,
            ..Estimate::default()
        };
        assert_eq!(phase_cycles(&e, 4, 3, true), 400 + 2 * 140);
        assert_eq!(phase_cycles(&e, 4, 3, false), 3 * 400);
        assert_eq!(phase_cycles(&e, 4, 1, true), 400);
    }
}

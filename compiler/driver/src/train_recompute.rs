//! Recomputation in streamed training (`docs/running.md`, "How a training step runs"). The
//! mapper checks every phase of the training graph beside the activations kept for later
//! phases (`wsel_map::kept_fit`, E0624). When they do not fit, the backward pass may
//! recompute some of them (`wsel_lower::recomputed`): of the forward results a backward layer
//! reads (`wsel_lower::droppable`), every k-th is kept as a checkpoint, and the others are
//! made again from the checkpoint before them just before the backward layers that read
//! them, once for all of them or (`fresh`) once for each. The plans are tried from k = 2
//! (every second kept) up to keeping none, first with one copy for all readers, then with a
//! copy for each; the first that maps is taken, since each further plan keeps fewer or runs
//! more layers again. Micro-batches are the other way out (`crate::train_session`); with
//! `recompute = "auto"` the one with the fewer estimated cycles a step runs.

use serde::Serialize;
use wsel_lower::TrainGraph;
use wsel_map::Placement;

/// What a streamed training run does about the activations its backward pass reads: keep
/// them all, recompute some, or run micro-batches, and why (the report's `kept`).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct KeptPlan {
    /// The forward layers run again for the backward pass (their instance names), in the order
    /// they run; empty when nothing is recomputed.
    pub recomputed: Vec<String>,
    /// Of the forward results a backward layer reads, every `checkpoint_every`-th is kept
    /// (0: nothing recomputed; more than their number: none kept).
    pub checkpoint_every: usize,
    /// Whether every backward layer reading a dropped result gets a copy of its own.
    pub copy_per_reader: bool,
    /// The mapper's estimate of a step's cycles as run, and of the other way when both
    /// were compared (recomputing against micro-batches).
    pub estimated_cycles: u64,
    pub alternative_cycles: Option<u64>,
    /// Why the run keeps, recomputes or splits its batch, in a sentence.
    pub reason: String,
}

/// The report's `kept`: the most SRAM any phase needs beside the activations kept for later
/// phases, the plan, and the recomputing phases' cycles.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct KeptReport {
    /// The most SRAM per PE any phase needs: its own working set and the activations kept
    /// beside it (`wsel_map::kept_fit`), and that phase's layer.
    pub peak_bytes_per_pe: u64,
    pub peak_phase: String,
    #[serde(flatten)]
    pub plan: KeptPlan,
    /// Cycles of the recomputing phases over all steps (part of the backward cycles).
    pub recompute_cycles: u64,
}

/// The checkpoints of `droppable` when every `k`-th is kept (the k-th, the 2k-th, ...
/// counting from 1).
pub fn checkpoints(droppable: &[usize], k: usize) -> Vec<usize> {
    droppable
        .iter()
        .enumerate()
        .filter(|(i, _)| (i + 1) % k.max(1) == 0)
        .map(|(_, &f)| f)
        .collect()
}

/// A training graph with recomputation, mapped.
pub struct Recomputing {
    pub train: TrainGraph,
    pub placement: Placement,
    pub every: usize,
    pub fresh: bool,
}

/// The first plan, from every second result kept to none, whose graph `map` places (`None`
/// when no plan does, or nothing can be dropped). `map` gives `None` for a graph that does not
/// fit.
pub fn plan(
    train: &TrainGraph,
    map: &mut dyn FnMut(&TrainGraph) -> Option<Placement>,
) -> Option<Recomputing> {
    let droppable = wsel_lower::droppable(train);
    let plans = [false, true]
        .into_iter()
        .flat_map(|fresh| (2..=droppable.len() + 1).map(move |k| (k, fresh)));
    for (k, fresh) in plans {
        let graph = wsel_lower::recomputed(train, &checkpoints(&droppable, k), fresh);
        if let Some(placement) = map(&graph) {
            return Some(Recomputing {
                train: graph,
                placement,
                every: k,
                fresh,
            });
        }
    }
    None
}

/// The names of the forward layers `train` runs again, in the order they run.
pub fn recomputed_names(train: &TrainGraph) -> Vec<String> {
    train
        .rerun
        .iter()
        .map(|&(_, f)| train.graph.layers[f].name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kth_result_is_kept() {
        let d = [3, 4, 5, 6, 7];
        assert_eq!(checkpoints(&d, 2), [4, 6]);
        assert_eq!(checkpoints(&d, 3), [5]);
        assert!(checkpoints(&d, 6).is_empty());
    }
}

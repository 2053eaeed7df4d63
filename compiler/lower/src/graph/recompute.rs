//! Recomputation in the streamed training graph (`docs/running.md`, "How a training step
//! runs"). A training graph keeps every forward result a backward layer reads in SRAM from
//! the forward pass to that backward layer. When they do not all fit, only some are kept, the
//! *checkpoints*; the others are *dropped*: their forward layers still run in the forward
//! pass, but the backward layers read a copy of them made again just before the first
//! backward layer that needs it. A copy is an ordinary forward phase (its weights streamed
//! from the store once more) reading checkpoints, staged model inputs or other copies; so
//! the forward layers from the last checkpoint before a dropped result up to it run again,
//! right before the backward layers that read it. A copy serves every later backward layer
//! that reads it, or (`fresh`) only the backward layer it is made for, each reader getting a
//! copy of its own: more phases run again, but no copy stays beside the backward phases
//! between two readers. Nothing else changes: the copies compute what the dropped layers
//! computed, from the same inputs and weights.

use std::collections::HashMap;

use wsel_ir::graph::{LayerGraph, TensorRef};

use super::training::TrainGraph;

/// The forward layers whose results a backward layer reads and which may be dropped (the
/// candidates for checkpoints): all but the stage layers (they take the model's inputs from
/// the host) and the model's result (the loss reads it right after the forward pass), in
/// graph order.
pub fn droppable(train: &TrainGraph) -> Vec<usize> {
    let backward = &train.graph.layers[train.loss + 1..];
    (0..train.forward)
        .filter(|&f| {
            recomputable(train, f)
                && backward
                    .iter()
                    .any(|b| b.args.contains(&TensorRef::Layer(f)))
        })
        .collect()
}

/// Whether forward layer `f` of `train` may run again: it is neither a stage layer nor the
/// model's result.
fn recomputable(train: &TrainGraph, f: usize) -> bool {
    let graph = &train.graph;
    let result = graph.layers[train.loss].args.first().copied();
    f < train.forward
        && !graph.layers[f]
            .args
            .iter()
            .any(|a| matches!(a, TensorRef::Input(_)))
        && result != Some(TensorRef::Layer(f))
}

/// `train` with only the results of `checkpoints` (and of the stage layers and the model's
/// result) kept for the backward pass: every backward layer that reads another forward
/// result reads a copy of its layer instead, inserted before the first backward layer that
/// needs it (after the copies it needs in turn); with `fresh`, every backward layer gets
/// copies of its own. The forward layers, the loss and their indices are unchanged; the
/// backward layers follow in their order.
pub fn recomputed(train: &TrainGraph, checkpoints: &[usize], fresh: bool) -> TrainGraph {
    let old = &train.graph;
    let dropped: Vec<usize> = (0..train.forward)
        .filter(|f| recomputable(train, *f) && !checkpoints.contains(f))
        .collect();
    let mut rerun = Rerun {
        old,
        dropped: &dropped,
        layers: old.layers[..=train.loss].to_vec(),
        copies: HashMap::new(),
        made: Vec::new(),
    };
    let mut moved: Vec<usize> = (0..=train.loss).collect();
    for b in train.loss + 1..old.layers.len() {
        let mut layer = old.layers[b].clone();
        for arg in &mut layer.args {
            if let TensorRef::Layer(q) = *arg {
                let at = if dropped.contains(&q) {
                    rerun.copy_of(q)
                } else {
                    moved[q]
                };
                *arg = TensorRef::Layer(at);
            }
        }
        rerun.layers.push(layer);
        moved.push(rerun.layers.len() - 1);
        if fresh {
            rerun.copies.clear();
        }
    }
    // Every layer runs beside its old one's forward layer; a copy beside the one it repeats.
    let mut beside = vec![0; rerun.layers.len()];
    for (b, &at) in moved.iter().enumerate() {
        beside[at] = train.beside[b];
    }
    for &(c, q) in &rerun.made {
        beside[c] = q;
    }
    TrainGraph {
        graph: LayerGraph {
            layers: rerun.layers,
            ..old.clone()
        },
        targets: train.targets,
        loss: train.loss,
        grads: train.grads.iter().map(|&(g, p)| (moved[g], p)).collect(),
        forward: train.forward,
        rerun: rerun.made,
        beside,
    }
}

/// The copies of dropped forward layers made so far, appended to `layers`.
struct Rerun<'a> {
    old: &'a LayerGraph,
    dropped: &'a [usize],
    layers: Vec<wsel_ir::graph::LayerInstance>,
    /// Dropped forward layer → its copy in `layers`.
    copies: HashMap<usize, usize>,
    /// (copy, forward layer), in the order made.
    made: Vec<(usize, usize)>,
}

impl Rerun<'_> {
    /// The copy of dropped forward layer `q`, made (after the copies of its dropped inputs)
    /// when it does not exist yet.
    fn copy_of(&mut self, q: usize) -> usize {
        if let Some(&c) = self.copies.get(&q) {
            return c;
        }
        let mut layer = self.old.layers[q].clone();
        for arg in &mut layer.args {
            if let TensorRef::Layer(a) = *arg
                && self.dropped.contains(&a)
            {
                *arg = TensorRef::Layer(self.copy_of(a));
            }
        }
        let n = 1 + self.made.iter().filter(|m| m.1 == q).count();
        layer.name = format!("{}.re{n}", layer.name);
        self.layers.push(layer);
        let c = self.layers.len() - 1;
        self.copies.insert(q, c);
        self.made.push((c, q));
        c
    }
}

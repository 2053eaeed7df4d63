//! Activations kept beside a weight-streaming phase (`docs/running.md`, "How weight streaming
//! runs" and "How a training step runs"). Between phases a layer's result stays in SRAM, on
//! the PEs of the region it was made on, until the last phase that reads it has run. So while
//! a phase runs, every PE holds its kernel's own arrays (the placement's `sram_bytes`, which
//! hold the phase's inputs and result) and, beside them, the blocks of the results made
//! before the phase and read only after it. Both must fit the PE's SRAM: E0624 otherwise.
//!
//! Liveness over the phase order: the result of layer `q` is kept beside phase `p` when
//! `q < p`, some layer after `p` reads it and `p` itself does not (a result `p` reads is in
//! `p`'s own arrays). A result's block on a PE is what its kernel's array bind splits it into
//! on its own region (`split [cols, rows]`: samples over the columns, features over the rows;
//! the largest block, a word an element). Each phase's own region is the placement's, so the
//! check holds whether or not the phases share one region.

use wsel_diagnostic::Diagnostic;
use wsel_ir::graph::{BindTarget, LayerGraph, SplitAxis, TensorRef};
use wsel_target::Target;

use crate::Placement;
use crate::diagnostics as diag;

/// The SRAM of one phase: its own arrays and the results kept beside it, in bytes per PE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseSram {
    /// The graph layer the phase runs (one layer a phase).
    pub layer: usize,
    /// Its kernel's SRAM per PE on its region (with any reserve).
    pub own: u64,
    /// The results kept beside it: (graph layer, bytes per PE), in graph order.
    pub kept: Vec<(usize, u64)>,
}

impl PhaseSram {
    /// Bytes per PE of the results kept beside the phase.
    pub fn kept_bytes(&self) -> u64 {
        self.kept.iter().map(|k| k.1).sum()
    }

    /// Bytes per PE the phase needs in all.
    pub fn total(&self) -> u64 {
        self.own + self.kept_bytes()
    }
}

/// Every phase's SRAM per PE, in phase order, for a weight-streaming `placement` of `graph`
/// (one copy, one layer a phase).
pub fn phases(graph: &LayerGraph, placement: &Placement) -> Vec<PhaseSram> {
    let placed = placed_layers(graph, placement);
    let blocks: Vec<u64> = (0..graph.layers.len())
        .map(|q| placed[q].map_or(0, |i| result_block_bytes(graph, placement, q, i)))
        .collect();
    kept_beside(graph, &blocks)
        .into_iter()
        .enumerate()
        .filter_map(|(p, kept)| {
            let own = placement.layers.get(placed[p]?)?.sram_bytes;
            Some(PhaseSram {
                layer: p,
                own,
                kept,
            })
        })
        .collect()
}

/// For each phase (graph layer) `p`, the results kept beside it with their bytes per PE
/// (`blocks[q]` for layer `q`'s result, 0 when it is not left in SRAM): made before `p`, read
/// after `p`, not read by `p`.
pub fn kept_beside(graph: &LayerGraph, blocks: &[u64]) -> Vec<Vec<(usize, u64)>> {
    let last_reader = last_readers(graph);
    (0..graph.layers.len())
        .map(|p| {
            let reads = |q: usize| graph.layers[p].args.contains(&TensorRef::Layer(q));
            (0..p)
                .filter(|&q| blocks[q] > 0 && last_reader[q].is_some_and(|r| r > p) && !reads(q))
                .map(|q| (q, blocks[q]))
                .collect()
        })
        .collect()
}

/// The phase that needs the most SRAM per PE beyond `target`'s, if any.
pub fn overflow(graph: &LayerGraph, placement: &Placement, target: &Target) -> Option<PhaseSram> {
    let sram = u64::from(target.sram_bytes);
    phases(graph, placement)
        .into_iter()
        .filter(|p| p.total() > sram)
        .max_by_key(|p| (p.total(), std::cmp::Reverse(p.layer)))
}

/// E0624 at the layer of the phase that does not fit beside the results kept for later
/// phases (the one that needs the most); `None` when every phase fits.
pub fn check(graph: &LayerGraph, placement: &Placement, target: &Target) -> Option<Diagnostic> {
    let phase = overflow(graph, placement, target)?;
    let layer = &graph.layers[phase.layer];
    let mut largest = phase.kept.clone();
    largest.sort_by_key(|k| std::cmp::Reverse(k.1));
    let names: Vec<String> = largest
        .iter()
        .take(3)
        .map(|&(q, bytes)| format!("`{}` {bytes} B", graph.layers[q].name))
        .collect();
    let region = placed_layers(graph, placement)[phase.layer].map_or((0, 0), |i| {
        (placement.layers[i].rows, placement.layers[i].cols)
    });
    Some(diag::kept_do_not_fit(
        diag::KeptBeside {
            phase: phase.layer,
            name: &layer.name,
            call: &layer.call,
            largest: &names.join(", "),
        },
        (phase.kept_bytes(), phase.own),
        region,
        target.sram_bytes,
    ))
}

/// For each graph layer, the placed layer that runs it (the first copy's), if placed.
fn placed_layers(graph: &LayerGraph, placement: &Placement) -> Vec<Option<usize>> {
    let mut placed = vec![None; graph.layers.len()];
    for i in 0..placement.layers.len() {
        let l = placement.instance(i);
        if let Some(slot) = placed.get_mut(l).filter(|s| s.is_none()) {
            *slot = Some(i);
        }
    }
    placed
}

/// For each graph layer, the last layer that reads its result, if any.
fn last_readers(graph: &LayerGraph) -> Vec<Option<usize>> {
    let mut last = vec![None; graph.layers.len()];
    for (r, layer) in graph.layers.iter().enumerate() {
        for arg in &layer.args {
            if let TensorRef::Layer(q) = *arg
                && q < last.len()
            {
                last[q] = Some(r);
            }
        }
    }
    last
}

/// Bytes per PE of the largest block of graph layer `q`'s result that its kernel (placed as
/// `placement.layers[i]`) leaves in an array; 0 when the result leaves through a port.
pub fn result_block_bytes(graph: &LayerGraph, placement: &Placement, q: usize, i: usize) -> u64 {
    let layer = &graph.layers[q];
    let placed = &placement.layers[i];
    let Some(imp) = layer.impls.get(placed.implementation) else {
        return 0;
    };
    let Some(bind) = imp
        .binds
        .iter()
        .find(|b| b.tensor == layer.output_name && b.target == BindTarget::Array)
    else {
        return 0;
    };
    4 * block_elements(&layer.output_shape, &bind.split, placed.rows, placed.cols)
}

/// The elements of the largest block of a tensor of `shape` split by `split` over a
/// `rows × cols` region: ⌈n / cols⌉ along a dimension split over the columns, ⌈n / rows⌉ over
/// the rows, n along a whole one (and along every dimension `split` leaves out).
pub fn block_elements(shape: &[u64], split: &[SplitAxis], rows: u32, cols: u32) -> u64 {
    shape
        .iter()
        .enumerate()
        .map(
            |(d, &n)| match split.get(d).copied().unwrap_or(SplitAxis::Whole) {
                SplitAxis::Cols => n.div_ceil(u64::from(cols.max(1))),
                SplitAxis::Rows => n.div_ceil(u64::from(rows.max(1))),
                SplitAxis::Whole => n,
            },
        )
        .product()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    /// x: f32[B, 64] → dense (32) → relu → dense (16), then a fourth layer reading the third's
    /// result and the first's, as a backward layer reads a forward result, and a fifth
    /// reading the fourth's. B = 12 samples on a 4 × 5 region (rows × cols):
    /// - layer 0 `dense` [12, 32] split [cols, rows]: ⌈12/5⌉ · ⌈32/4⌉ = 3 · 8 = 24 words, 96 B;
    /// - layer 1 `relu` [12, 32]: 96 B; layer 2 `dense` [12, 16]: 3 · 4 = 12 words, 48 B;
    /// - layer 3 `dense` reads layer 2 and layer 0, layer 4 `relu` reads layer 3.
    ///
    /// Kept beside each phase (made before, read after, not read by the phase itself):
    /// - phase 0: nothing made before; phase 1 reads 0, which layer 3 reads later: 0 is
    ///   read by phase 1 itself, so nothing beside it;
    /// - phase 2: 0 (read by 3) — 96 B; 1 is read by 2 itself and by no one after;
    /// - phase 3: reads 0 and 2, the last reader of both — nothing beside it;
    /// - phase 4: reads 3 — nothing else is read after it.
    #[test]
    fn the_results_kept_beside_each_phase_are_those_read_after_it() {
        let rows_cols = (4, 5);
        let split = [SplitAxis::Cols, SplitAxis::Rows];
        assert_eq!(
            block_elements(&[12, 32], &split, rows_cols.0, rows_cols.1),
            24
        );
        assert_eq!(
            block_elements(&[12, 16], &split, rows_cols.0, rows_cols.1),
            12
        );
        // A dimension the split leaves out is whole: [12, 3, 8] by [cols, rows] on 4 × 5 keeps
        // ⌈12/5⌉ · ⌈3/4⌉ · 8 = 3 · 1 · 8 = 24.
        assert_eq!(block_elements(&[12, 3, 8], &split, 4, 5), 24);
        let mut graph = fixtures::mlp(&[64, 32, 16], 12, true);
        // mlp: dense (0), relu (1), dense (2); then a dense of [16 + …]: reads 2 and 0.
        let mut reader = graph.layers[2].clone();
        reader.args = vec![
            TensorRef::Layer(2),
            TensorRef::Layer(0),
            reader.args[1],
            reader.args[2],
        ];
        graph.layers.push(reader);
        let last = fixtures::relu(4, TensorRef::Layer(3), 16, 12);
        graph.layers.push(last);
        let blocks = [96, 96, 48, 48, 48];
        let kept = kept_beside(&graph, &blocks);
        assert_eq!(kept, [vec![], vec![], vec![(0, 96)], vec![], vec![]]);
        // Without the reader of layer 0 nothing is kept beside any phase.
        graph.layers[3].args.remove(1);
        assert!(kept_beside(&graph, &blocks).iter().all(Vec::is_empty));
    }
}

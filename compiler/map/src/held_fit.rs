//! Phases beside held weights (`docs/running.md`, "Micro-batches"). In layer-major order a
//! layer holds its weights on the fabric from its first micro-batch's phase until its
//! *segment* — the phases from the unparks after one parking boundary to the parks before the
//! next — has run for every micro-batch; so every other phase of the segment runs on the same
//! PEs beside them. Its arrays and the held ones never share a word, so they must fit a PE's
//! SRAM together (E0619, checked on every region the mapper considers).
//!
//! A layer whose held weights fit no region even alone runs in chunks of its outputs
//! ([`chunk_counts`], `wsel_lower::chunked_graph`): the fewest whose held share fits.

use wsel_ir::graph::{LayerGraph, LayerInstance, TensorRef};
use wsel_target::Target;

use crate::MapOptions;
use crate::streaming::{allowed, bytes_of, holds};

/// The most chunks a layer is cut into (each chunk's phases run over every micro-batch).
const MOST_CHUNKS: u64 = 64;

/// The chunks of its outputs each layer with weights of `staged` runs in, layer-major at
/// micro-batches of `size` samples, as `(layer, K)` in graph order: none for a layer whose
/// implementation that holds its weights (its twin in `parked`, `staged` parked whole) fits
/// some region of the fabric alone, else the fewest `K` (dividing its output width, at most
/// [`MOST_CHUNKS`]) whose chunks (the layers of `chunk(l, K)` named `{layer}.1` …) each fit
/// one. A layer no `K` helps stays whole, and the mapping says why it does not fit.
pub(crate) fn chunk_counts(
    staged: &LayerGraph,
    parked: &LayerGraph,
    chunk: &dyn Fn(usize, u32) -> Option<LayerGraph>,
    size: u64,
    target: &Target,
    options: &MapOptions,
) -> Vec<(usize, u32)> {
    let fits = |layer: &LayerInstance| fits_alone(layer, size, target, options);
    let mut counts = Vec::new();
    for (l, layer) in staged.layers.iter().enumerate() {
        let weighted = layer.args.iter().any(|a| matches!(a, TensorRef::Param(_)));
        let held = parked.layers.iter().find(|h| h.name == layer.name);
        if !weighted || held.is_none_or(fits) {
            continue;
        }
        let width = layer.output_shape.last().copied().unwrap_or(1);
        let prefix = format!("{}.", layer.name);
        let chunks_fit = |k: u64| {
            let Some(graph) = chunk(l, k as u32) else {
                return false;
            };
            let mut chunks = graph.layers.iter().filter(|c| c.name.starts_with(&prefix));
            chunks.clone().next().is_some() && chunks.all(fits)
        };
        let count = (2..=width.min(MOST_CHUNKS))
            .filter(|k| width.is_multiple_of(*k))
            .find(|&k| chunks_fit(k));
        counts.extend(count.map(|k| (l, k as u32)));
    }
    counts
}

/// Whether `layer`'s implementation that holds its weights fits a region of the fabric on
/// its own at micro-batches of `size` samples (at most one a column); true without one (its
/// E0618 is not a matter of size).
fn fits_alone(layer: &LayerInstance, size: u64, target: &Target, options: &MapOptions) -> bool {
    let Some(imp) = layer.impls.iter().find(|i| holds(i)) else {
        return true;
    };
    let cols = u64::from(target.width).min(size.max(1)) as u32;
    (1..=target.height).any(|r| (1..=cols).any(|c| allowed(layer, imp, r, c, target, options)))
}

/// A phase that does not fit a PE beside a layer's held weights, with the bytes per PE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Overflow {
    /// The graph layer that holds its weights, and the bytes it holds.
    pub holder: usize,
    pub held: u64,
    /// The phase (its graph layer: one layer a phase) and the bytes of its own arrays.
    pub phase: usize,
    pub own: u64,
}

/// On a `rows × cols` region with `limit` bytes per PE for the kernels, the phase that
/// overflows most beside a layer's held weights; `None` when every phase fits (always, when
/// no layer of `graph` holds its weights on implementation `impls[l]`: `hold = true`).
pub(crate) fn overflow(
    graph: &LayerGraph,
    impls: &[usize],
    (rows, cols): (u32, u32),
    limit: u64,
) -> Option<Overflow> {
    overflow_on(graph, impls, &vec![rows; graph.layers.len()], cols, limit)
}

/// [`overflow`] with every phase `l` on its own `rows[l]` of the `cols` columns (per-layer
/// rows, `crate::held_rows`): the regions share their north-west corner, so every phase of a
/// segment runs on some of the PEs that hold the segment's weights, and each is checked with
/// its own arrays on its rows beside the weights as held on the holder's.
pub(crate) fn overflow_on(
    graph: &LayerGraph,
    impls: &[usize],
    rows: &[u32],
    cols: u32,
    limit: u64,
) -> Option<Overflow> {
    // Most streamed models hold nothing: then there is nothing to walk, region after region.
    if !graph
        .layers
        .iter()
        .enumerate()
        .any(|(l, layer)| holds(&layer.impls[impls[l]]))
    {
        return None;
    }
    // A kernel may name its buffers `held_*` without holding them (`hold = false`).
    let bytes = |l: usize, held: bool| {
        let (layer, imp) = (&graph.layers[l], &graph.layers[l].impls[impls[l]]);
        match held {
            true if !holds(imp) => 0,
            true => bytes_of(&imp.held_words, layer, imp, rows[l], cols).unwrap_or(0),
            false => bytes_of(&imp.sram_words, layer, imp, rows[l], cols).unwrap_or(0),
        }
    };
    let mut worst: Option<Overflow> = None;
    for segment in segments(graph) {
        let holders: Vec<(usize, u64)> = segment
            .iter()
            .map(|&l| (l, bytes(l, true)))
            .filter(|&(_, held)| held > 0)
            .collect();
        let held: u64 = holders.iter().map(|h| h.1).sum();
        for &phase in &segment {
            if holders.iter().any(|h| h.0 == phase) {
                continue;
            }
            let own = bytes(phase, false);
            if own + held > limit && worst.is_none_or(|w| own + held > w.own + w.held) {
                let holder = holders.first().map_or(phase, |h| h.0);
                worst = Some(Overflow {
                    holder,
                    held,
                    phase,
                    own,
                });
            }
        }
    }
    worst
}

/// The graph's layers in layer-major segments (`docs/running.md`, "Micro-batches"): a new
/// segment starts at the first unpark (a layer taking a `park`'s result) after a park.
pub fn segments(graph: &LayerGraph) -> Vec<Vec<usize>> {
    let park = |l: usize| graph.layers[l].layer == "park";
    let unpark =
        |l: usize| matches!(graph.layers[l].args.first(), Some(&TensorRef::Layer(p)) if park(p));
    let mut segments: Vec<Vec<usize>> = vec![Vec::new()];
    for l in 0..graph.layers.len() {
        if l > 0 && park(l - 1) && unpark(l) {
            segments.push(Vec::new());
        }
        segments.last_mut().expect("one segment").push(l);
    }
    segments
}

#[cfg(test)]
mod tests {
    use wsel_target::Target;

    use super::*;
    use crate::fixtures;

    /// `staged` with `dense#1` (64 → 2048, 16 samples) cut into `k` held chunks of
    /// `2048 / k` outputs, as `wsel_lower::chunked_graph` names them.
    fn chunked(staged: &LayerGraph, k: u32) -> LayerGraph {
        let mut graph = staged.clone();
        for c in 1..=k {
            let (x, w, b) = (
                TensorRef::Input(0),
                TensorRef::Param(0),
                TensorRef::Param(1),
            );
            let mut chunk =
                fixtures::held(fixtures::dense(1, x, w, b, 64, 2048 / u64::from(k), 16));
            chunk.name = format!("dense#1.{c}");
            graph.layers.push(chunk);
        }
        graph
    }

    /// 64 → 2048 → 10 at micro-batches of 16, every dense held ([`fixtures::held`]), on a
    /// `dev` fabric (16 × 16 PEs) of `sram` bytes a PE: the chunk counts.
    fn counts(sram: u32) -> Vec<(usize, u32)> {
        let staged = fixtures::mlp(&[64, 2048, 10], 16, true);
        let mut parked = staged.clone();
        for layer in parked.layers.iter_mut().filter(|l| l.layer == "dense") {
            *layer = fixtures::held(layer.clone());
        }
        let target = Target {
            sram_bytes: sram,
            ..Target::dev()
        };
        let chunk = |l: usize, k: u32| (l == 0).then(|| chunked(&staged, k));
        chunk_counts(
            &staged,
            &parked,
            &chunk,
            16,
            &target,
            &MapOptions::default(),
        )
    }

    #[test]
    fn a_layer_too_big_to_hold_takes_the_fewest_chunks_that_fit() {
        // dense#1 held needs the least on 16 × 16 (one sample a column, nmax = 4, mmax =
        // 128): 1 · (4 + 4 · 128) + 512 + 128 words and a share of 4 · 2048 / 16 = 512:
        // 1,668 words, 6,672 B. In 2 chunks of 1,024 outputs (mmax = 64): 260 + 576 + 256 =
        // 1,092 words, 4,368 B, still more than 4,096; in 4 of 512 (mmax = 32): 132 + 544 +
        // 128 = 804 words, 3,216 B. dense#2 (2048 → 10: 128 + 4 + 513 + a share of 80
        // words, 2,900 B) holds whole.
        assert_eq!(counts(4096), [(0, 4)]);
        // With 4,368 B a PE, 2 chunks fit.
        assert_eq!(counts(4368), [(0, 2)]);
        // With 6,672 B dense#1 holds whole; with 2,048 B (the blocks to receive into alone,
        // 512 words) no number of chunks helps, and the layer stays whole.
        assert_eq!(counts(6672), []);
        assert_eq!(counts(2048), []);
    }
}

//! Phases beside held weights (`docs/running.md`, "Micro-batches"). In layer-major order a
//! layer holds its weights on the fabric from its first micro-batch's phase until its
//! *segment* — the phases from the unparks after one parking boundary to the parks before the
//! next — has run for every micro-batch; so every other phase of the segment runs on the same
//! PEs beside them. Its arrays and the held ones never share a word, so they must fit a PE's
//! SRAM together (E0619, checked on every region the mapper considers).

use wsel_ir::graph::{LayerGraph, TensorRef};

use crate::streaming::{bytes_of, holds};

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

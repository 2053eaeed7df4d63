//! Fusion for pipelined inference (`docs/mapping.md` §4, "Fusion"): a layer whose result one
//! other layer alone reads, as its only input, runs with that reader on one region as one
//! stage, when the producer's file has a fused twin for the pair. The twin is a layer of its
//! own (std.nn's `dense_relu`: `dense_tile` applying relu to its results before it sends
//! them), so this module only chooses the pairs and rewrites the graph; the caller that can
//! lower layers makes the twins (`wsel_lower::fused_twin`, or [`crate::fixtures::fused_twin`]
//! for hand-built graphs).
//!
//! A pair fuses when the reader takes the producer's result as its one argument and has no
//! scalar inputs, nothing else reads the producer's result (no other layer, not the reader a
//! second time, not the model's output), and the twin takes the producer's arguments and
//! gives the reader's result. The twin replaces the producer, named by both layers
//! (`dense#1+relu#1`); the reader goes, and whatever read its result reads the twin's.
//! Training and weight streaming never fuse: they keep every layer's result apart.

use wsel_ir::graph::{LayerGraph, LayerInstance, TensorRef};

/// Makes the fused twin of `graph.layers[producer]` and its only reader
/// `graph.layers[reader]`, or `None` when the pair has none.
pub type Twins<'a> = dyn Fn(&LayerGraph, usize, usize) -> Option<LayerInstance> + 'a;

/// The name of the stage a producer and its reader fuse into: both names, joined by `+`.
pub fn fused_name(producer: &str, reader: &str) -> String {
    format!("{producer}+{reader}")
}

/// `graph` with every pair [`pairs`] finds replaced by the twin `twins` makes for it (pairs
/// without a twin, or whose twin does not fit the pair, stay apart).
pub fn fused(graph: &LayerGraph, twins: &Twins<'_>) -> LayerGraph {
    let mut replaced: Vec<Option<LayerInstance>> = vec![None; graph.layers.len()];
    let mut absorbed: Vec<Option<usize>> = vec![None; graph.layers.len()];
    for (producer, reader) in pairs(graph) {
        if let Some(twin) =
            twins(graph, producer, reader).filter(|t| fits(graph, t, producer, reader))
        {
            replaced[producer] = Some(twin);
            absorbed[reader] = Some(producer);
        }
    }
    let mut out = LayerGraph {
        layers: Vec::with_capacity(graph.layers.len()),
        ..graph.clone()
    };
    // Where each layer of `graph` went in `out` (a reader: where its producer's twin went).
    let mut now: Vec<usize> = Vec::with_capacity(graph.layers.len());
    let moved = |now: &[usize], t: TensorRef| match t {
        TensorRef::Layer(l) => TensorRef::Layer(now[l]),
        other => other,
    };
    for (j, layer) in graph.layers.iter().enumerate() {
        if let Some(producer) = absorbed[j] {
            now.push(now[producer]);
            continue;
        }
        let mut layer = replaced[j].take().unwrap_or_else(|| layer.clone());
        layer.args = layer.args.iter().map(|&t| moved(&now, t)).collect();
        now.push(out.layers.len());
        out.layers.push(layer);
    }
    out.output = moved(&now, graph.output);
    out
}

/// The (producer, reader) pairs of `graph` that may fuse, in graph order: the reader's one
/// argument is the producer's result, it has no scalar inputs, and nothing else reads that
/// result. A layer is in one pair at most (a reader is never a producer as well).
pub fn pairs(graph: &LayerGraph) -> Vec<(usize, usize)> {
    let mut found: Vec<(usize, usize)> = Vec::new();
    for (reader, layer) in graph.layers.iter().enumerate() {
        let [TensorRef::Layer(producer)] = layer.args[..] else {
            continue;
        };
        let taken = |l: usize| found.iter().any(|&(p, r)| p == l || r == l);
        if layer.scalars.is_empty()
            && producer < reader
            && readings(graph, producer) == 1
            && graph.output != TensorRef::Layer(producer)
            && !taken(producer)
        {
            found.push((producer, reader));
        }
    }
    found
}

/// How many times the layers of `graph` read layer `l`'s result (a layer reading it twice
/// counts twice).
fn readings(graph: &LayerGraph, l: usize) -> usize {
    graph
        .layers
        .iter()
        .flat_map(|layer| &layer.args)
        .filter(|&&a| a == TensorRef::Layer(l))
        .count()
}

/// Whether `twin` can stand for the pair: it takes the producer's arguments and gives the
/// reader's result.
fn fits(graph: &LayerGraph, twin: &LayerInstance, producer: usize, reader: usize) -> bool {
    let (p, r) = (&graph.layers[producer], &graph.layers[reader]);
    twin.args == p.args && twin.output_shape == r.output_shape && twin.output_elem == r.output_elem
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{self, fused_twin, relu};

    /// `dense → relu → dense → relu` (widths 8, 4, 2), the last relu the model's output.
    fn chain() -> LayerGraph {
        let mut graph = fixtures::mlp(&[8, 4, 2], 3, true);
        graph.layers.push(relu(2, TensorRef::Layer(2), 2, 3));
        graph.output = TensorRef::Layer(3);
        graph
    }

    fn names(graph: &LayerGraph) -> Vec<&str> {
        graph.layers.iter().map(|l| l.name.as_str()).collect()
    }

    #[test]
    fn every_dense_fuses_with_the_relu_that_alone_reads_it() {
        let graph = chain();
        assert_eq!(pairs(&graph), [(0, 1), (2, 3)]);
        let fused = fused(&graph, &fused_twin);
        assert_eq!(names(&fused), ["dense#1+relu#1", "dense#2+relu#2"]);
        assert_eq!(fused.layers[0].layer, "dense_relu");
        // The second twin reads the first's result; the model's output is the last twin's.
        assert_eq!(fused.layers[1].args[0], TensorRef::Layer(0));
        assert_eq!(fused.output, TensorRef::Layer(1));
        assert_eq!(fused.layers[1].output_shape, graph.layers[3].output_shape);
    }

    #[test]
    fn a_result_read_by_another_layer_too_does_not_fuse() {
        // dense#1's result goes to relu#1 and, as a residual would, to a second relu.
        let mut graph = chain();
        graph.layers.push(relu(3, TensorRef::Layer(0), 4, 3));
        assert_eq!(pairs(&graph), [(2, 3)]);
        let fused = fused(&graph, &fused_twin);
        assert_eq!(
            names(&fused),
            ["dense#1", "relu#1", "dense#2+relu#2", "relu#3"]
        );
        assert_eq!(fused.layers[3].args[0], TensorRef::Layer(0));
    }

    #[test]
    fn the_models_output_and_a_result_read_twice_do_not_fuse() {
        let mut graph = chain();
        graph.output = TensorRef::Layer(2);
        assert_eq!(pairs(&graph), [(0, 1)]);
        let mut twice = chain();
        twice.layers[1].args = vec![TensorRef::Layer(0), TensorRef::Layer(0)];
        assert_eq!(pairs(&twice), [(2, 3)]);
    }

    #[test]
    fn a_pair_without_a_twin_or_with_one_that_does_not_fit_stays_apart() {
        let graph = chain();
        let none = |_: &LayerGraph, _: usize, _: usize| None;
        assert_eq!(fused(&graph, &none), graph);
        let wrong = |g: &LayerGraph, p: usize, r: usize| {
            let mut twin = fused_twin(g, p, r)?;
            twin.output_shape[1] += 1;
            Some(twin)
        };
        assert_eq!(fused(&graph, &wrong), graph);
    }
}

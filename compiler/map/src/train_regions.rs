//! Per-layer rows in a streamed training step (`docs/running.md`, "How a training step
//! runs"). The forward phases take the rows the chain's programme gives them
//! (`crate::regions`), as inference does; every other layer of the training graph runs on
//! the rows of the forward layer it runs beside (`wsel_lower::TrainGraph::beside`): the
//! targets' `stage_in` and the loss on the model result's rows, each backward layer on the
//! rows of the layer it differentiates, where the activations it reads were kept. The driver's
//! `relaid` inserts a relayout before every layer for each activation it reads from other rows
//! — a forward input moved down, a gradient moved back up — and the whole step is estimated
//! with every phase and relayout on its own rows. The plan is kept only when that estimate is
//! below the one region's; otherwise (or for a model that is not a chain, or when a phase does
//! not fit its rows) the step runs on one region as before.

use wsel_ir::graph::{LayerGraph, TensorRef};
use wsel_target::Target;

use crate::streaming as st;
use crate::{MapOptions, MapResult, Placement, regions};

/// Builds the training graph with each of its layers on the rows given (one per layer), a
/// relayout wherever a layer reads an activation from other rows: the new graph and the rows
/// each of its layers runs on (`wsel_lower::relaid_training`); `None` when it cannot be built.
pub type TrainRelaid<'r> = dyn Fn(&[u32]) -> Option<(LayerGraph, Vec<u32>)> + 'r;

/// What the mapper needs to know of a training graph beside its layers.
#[derive(Debug, Clone, Copy)]
pub struct TrainParts<'a> {
    /// The forward layers are the graph's first `forward` (the model's, staged).
    pub forward: usize,
    /// The index of the targets among the graph's inputs.
    pub targets: usize,
    /// For every layer, the forward layer whose rows it runs on.
    pub beside: &'a [usize],
}

/// A training graph mapped for weight streaming: the placement (or why not) and, when its
/// phases take rows of their own, the rows of every layer of the graph given — the graph the
/// placement runs is what `relaid` builds from them.
pub struct TrainMapped {
    pub result: MapResult,
    pub rows: Option<Vec<u32>>,
}

/// Maps the training graph `graph` for weight streaming: on per-layer rows when the step's
/// estimate falls below the one region's (or when the one region does not map), else on one
/// region (`streaming::map_streamed`).
pub fn map_training(
    graph: &LayerGraph,
    parts: TrainParts<'_>,
    relaid: &TrainRelaid<'_>,
    target: &Target,
    options: &MapOptions,
) -> TrainMapped {
    let one = st::map_streamed(
        graph,
        target,
        &MapOptions {
            work: None,
            ..*options
        },
    );
    match per_layer(
        graph,
        parts,
        one.placement.as_ref(),
        relaid,
        target,
        options,
    ) {
        Some((result, rows)) => TrainMapped {
            result,
            rows: Some(rows),
        },
        None => TrainMapped {
            result: one,
            rows: None,
        },
    }
}

/// The step on per-layer rows, with the rows of every layer of `graph`, when the forward
/// chain's programme gives its phases different rows and the whole step (relayouts both ways
/// and reconfigurations counted) estimates faster than `one`; `None` otherwise.
fn per_layer(
    graph: &LayerGraph,
    parts: TrainParts<'_>,
    one: Option<&Placement>,
    relaid: &TrainRelaid<'_>,
    target: &Target,
    options: &MapOptions,
) -> Option<(MapResult, Vec<u32>)> {
    let impls = st::streaming_impls(graph, false).ok()?;
    let chain = forward_chain(graph, parts)?;
    // Every other phase costs on the rows of the forward layer it runs beside.
    let mut of = vec![Vec::new(); parts.forward];
    for (l, &f) in parts.beside.iter().enumerate().skip(parts.forward) {
        of.get_mut(f)?.push(l);
    }
    let beside = regions::Beside {
        graph,
        impls: &impls,
        of,
    };
    let fwd = &impls[..parts.forward];
    let (cols, choice) = regions::best_rows(&chain, fwd, None, Some(&beside), target, options)?;
    if choice.rows.iter().all(|&r| r == choice.rows[0]) {
        return None;
    }
    let rows: Vec<u32> = parts.beside.iter().map(|&f| choice.rows[f]).collect();
    let (whole, all_rows) = relaid(&rows)?;
    let whole_impls = st::streaming_impls(&whole, false).ok()?;
    st::check_residency(&whole, &whole_impls).ok()?;
    let plan = regions::plan(&whole, &whole_impls, &all_rows, cols, target, options)?;
    // The one region's estimate with the same measured work, for a like comparison.
    let one_total = match one {
        Some(p) => {
            let (r, c) = p.layers.first().map(|l| (l.rows, l.cols))?;
            let rows = vec![r; graph.layers.len()];
            Some(regions::plan(graph, &impls, &rows, c, target, options)?.total)
        }
        None => None,
    };
    if one_total.is_some_and(|t| plan.total >= t) {
        return None;
    }
    let mut result = st::place_phases(&whole, &whole_impls, &plan, target, options);
    let placement = result.placement.as_mut()?;
    placement.one_region = one.and_then(|p| {
        let first = p.layers.first()?;
        Some((first.rows, first.cols, one_total?))
    });
    Some((result, rows))
}

/// The forward layers of a training graph as a graph of their own (the targets left out),
/// when they are a chain (`regions::is_chain`).
fn forward_chain(graph: &LayerGraph, parts: TrainParts<'_>) -> Option<LayerGraph> {
    let last = parts.forward.checked_sub(1)?;
    let mut inputs = graph.inputs.clone();
    if parts.targets != inputs.len().checked_sub(1)? || parts.beside.len() != graph.layers.len() {
        return None;
    }
    inputs.truncate(parts.targets);
    let chain = LayerGraph {
        layers: graph.layers[..parts.forward].to_vec(),
        inputs,
        output: TensorRef::Layer(last),
        ..graph.clone()
    };
    regions::is_chain(&chain).then_some(chain)
}

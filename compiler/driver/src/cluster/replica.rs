//! A pipelined replica's gradients out of its fabric and the cluster's sums back in
//! (`docs/running.md`, "Pipelined training on a cluster").
//!
//! When a replica's deferred backward program ends, its gradients are in SRAM (`gw`, `gbias`
//! beside `w`, `bias`). A *drain* program per parameter (`L_train_grad_p`, one layer on the
//! region of the layer the parameter belongs to) streams it out of the region, over the
//! routes the mapper gives it, to the fabric's edge; the driver reads it from the edge output
//! as it reads any result. The sums, once reduced and broadcast, come back in as the *fill*
//! program's parameters (`L_train_fill`: the update program with every parameter's sum bound
//! to a port), which enter from the weight store's side of the fabric at its rate, are
//! written into `gw`, `gbias` by the kernels and given to the optimizer. The host touches
//! neither the gradients nor the sums in SRAM.

use wsel_diagnostic::{Diagnostic, Location};
use wsel_ir::graph::LayerGraph;
use wsel_lower::{ReplicaError, ReplicaGraphs};
use wsel_map::MapOptions;
use wsel_sim::SimOptions;

use wsel_target::Target;

use crate::assemble::HostData;
use crate::carry::Carry;
use crate::pipeline::BuildError;
use crate::run_errors::{E0818, E0819};
use crate::tensor::Tensor;
use crate::train_pipelined::{Pipelined, Side, UPDATE_SPAN, simulate};
use crate::training::gather_rows;

/// A replica's drain and fill programs, placed and compiled.
pub(crate) struct ReplicaSides {
    /// Per parameter, in parameter order: the program that streams its gradient out.
    pub drains: Vec<Side>,
    /// The update program, the sums streamed in.
    pub fill: Side,
    /// The target the fill program runs on: its weight store is the tree's feed from the
    /// store, where the sums are (`super::feed_target`).
    pub fed: Target,
}

/// Builds the drain programs (each on its layer's region of the forward program `forward`)
/// and the fill program (on the backward's regions, `pinned`) of `graphs`, or E0818/E0819.
pub(crate) fn build(
    graphs: Result<ReplicaGraphs, ReplicaError>,
    fed: Target,
    forward: &Side,
    pinned: &MapOptions<'_>,
    build: &dyn Fn(LayerGraph, &MapOptions<'_>) -> Result<Side, BuildError>,
) -> Result<ReplicaSides, BuildError> {
    let graphs = graphs.map_err(replica_error)?;
    let mut drains = Vec::new();
    for drain in graphs.drains {
        let placed = &forward.placement.layers[drain.layer];
        let region = [(placed.rect, placed.orientation)];
        let on_region = MapOptions {
            regions: Some(&region),
            ..MapOptions::default()
        };
        drains.push(build(drain.graph, &on_region)?);
    }
    let fill = build(graphs.fill, pinned)?;
    Ok(ReplicaSides { drains, fill, fed })
}

/// E0818 (no drain or fill layer) or E0819 (a drain layer of another size), or the
/// lowering's own diagnostics.
fn replica_error(error: ReplicaError) -> BuildError {
    let diagnostic = match error {
        ReplicaError::Diagnostics(diagnostics) => return BuildError::Diagnostics(diagnostics),
        ReplicaError::Missing {
            call,
            layer,
            wanted,
        } => missing(call, &layer, &wanted),
        ReplicaError::Shape {
            call,
            layer,
            param,
            result,
        } => Diagnostic::error(
            E0819,
            format!(
                "`{layer}` gives a gradient of shape {result:?} for a parameter of shape {param:?}: another number of elements"
            ),
            call,
            "trained by pipelined replicas here",
        )
        .with_help(
            "its result is the parameter's gradient, element for element in the parameter's order, summed over the cluster and given back: declare it with the parameter's elements (docs/language.md §11.2)",
        ),
    };
    BuildError::Diagnostics(vec![diagnostic])
}

/// E0818: a layer that updates parameters has no layer `wanted` to take its gradient out of
/// the fabric or its sum back in.
fn missing(call: Location, layer: &str, wanted: &str) -> Diagnostic {
    let what = if wanted.ends_with("_train_fill") {
        "take the cluster's sum of its gradients back in"
    } else {
        "stream its gradient out of the fabric"
    };
    Diagnostic::error(
        E0818,
        format!("`{layer}` has no `{wanted}` layer, so pipelined replicas cannot {what}"),
        call,
        "trained by pipelined replicas here",
    )
    .with_help(format!(
        "define `{wanted}` beside `{layer}` (docs/language.md §11.2, as std.nn's dense does), or train on one system"
    ))
}

/// Every parameter's gradient streamed out of the replica's fabric by its drain program, from
/// the SRAM `carry` holds: the gradients, in parameter order, and the programs' cycles, the
/// fabric's switch to each included.
pub(crate) fn drain(
    run: &Pipelined<'_>,
    carry: &mut Carry,
    options: &SimOptions,
) -> Result<(Vec<Vec<f32>>, u64), BuildError> {
    let switch = u64::from(run.target.reconfigure_cycles);
    let mut gradients = Vec::new();
    let mut cycles = 0;
    for side in &sides(run)?.drains {
        let host = HostData {
            inputs: &[],
            params: &run.params,
        };
        let (gradient, drained) = simulate(&run.target, side, &host, carry, options)?;
        gradients.push(gradient.words.into_iter().map(f32::from_bits).collect());
        cycles += drained + switch;
    }
    Ok((gradients, cycles))
}

/// The fill program on the gradient `sums` (per parameter): the sums streamed in, then the
/// update. Its cycles, the fabric's switch to it included, and the update's span.
pub(crate) fn fill_and_update(
    run: &Pipelined<'_>,
    carry: &mut Carry,
    sums: &[Vec<f32>],
    options: &SimOptions,
) -> Result<(u64, u64), BuildError> {
    let sides = sides(run)?;
    let side = &sides.fill;
    let mut params = run.params.clone();
    params.extend(sums.iter().zip(&run.params).map(|(sum, param)| Tensor {
        elem: param.elem,
        shape: param.shape.clone(),
        words: sum.iter().map(|v| v.to_bits()).collect(),
    }));
    let none = gather_rows(&run.targets, &[]);
    let host = HostData {
        inputs: &[none],
        params: &params,
    };
    let (_, cycles) = simulate(&sides.fed, side, &host, carry, options)?;
    let switch = u64::from(run.target.reconfigure_cycles);
    Ok((
        cycles + switch,
        carry.longest_span(&side.placement, UPDATE_SPAN),
    ))
}

fn sides<'a>(run: &'a Pipelined<'_>) -> Result<&'a ReplicaSides, BuildError> {
    run.replica.as_ref().ok_or_else(|| {
        BuildError::Message("pipelined training without a cluster has no replica programs".into())
    })
}

//! The programs that carry a pipelined replica's gradients out of its fabric and the
//! cluster's sums back in (`docs/running.md`, "Pipelined training on a cluster";
//! `docs/language.md` §11.2).
//!
//! - A *drain* graph per parameter: one layer, `L_train_grad_p` for parameter input `p` of
//!   model layer `L` (found beside `L`, as `L_train` is), whose only argument is the
//!   parameter and whose result (`-> param`: the parameter's elements in its order, in any
//!   shape — `f32[1, M]` for an `f32[M]` lets it leave by columns) is the gradient the
//!   deferred backward left in SRAM, streamed out of the region to the fabric's edge.
//! - The *fill* graph: the update program (the backward graph for no samples) with every
//!   `L_train_back` that updates parameters replaced by `L_train_fill`, which takes the same
//!   arguments and then, per parameter, the cluster's sum of its gradient — a parameter of the
//!   graph after the model's (`g` + its name), streamed in through a port, written into SRAM
//!   and given to the optimizer.

use std::path::PathBuf;

use wsel_ir::graph::{LayerGraph, ParamDecl, TensorDecl, TensorRef};
use wsel_sema::ty::Value;
use wsel_sema::{Db, Diagnostic, ItemId, ItemKind, Location, check_model};

use super::find_item;
use super::pipelined_training::{given, push_call};

/// The drain graphs and the fill graph of a replica.
#[derive(Debug, Clone)]
pub struct ReplicaGraphs {
    /// One per parameter, in parameter order.
    pub drains: Vec<Drain>,
    /// The update program with the sums streamed in: its parameters are the model's, then
    /// the sums (parameter `P + p` is the sum of parameter `p`'s gradient).
    pub fill: LayerGraph,
}

/// The graph that streams one parameter's gradient out, and the model layer whose region
/// it runs on.
#[derive(Debug, Clone)]
pub struct Drain {
    pub graph: LayerGraph,
    pub layer: usize,
    pub param: usize,
}

/// Why the replica's graphs cannot be built.
#[derive(Debug, Clone)]
pub enum ReplicaError {
    /// A layer that updates parameters has no layer `wanted` beside it.
    Missing {
        call: Location,
        layer: String,
        wanted: String,
    },
    /// `layer`'s gradient layer gives another number of elements than the parameter has.
    Shape {
        call: Location,
        layer: String,
        param: Vec<u64>,
        result: Vec<u64>,
    },
    /// Lowering a call failed.
    Diagnostics(Vec<Diagnostic>),
}

/// The drain and fill graphs of `model` lowered as `graph` (a replica's share), its update
/// program `update` (the backward graph for no samples, whose layer `k` stands for model
/// layer `region_of[k]`) and the optimizer's settings.
pub fn replica_graphs(
    db: &dyn Db,
    model: ItemId<'_>,
    graph: &LayerGraph,
    update: &LayerGraph,
    region_of: &[usize],
    optimizer: &[(String, Value)],
) -> Result<ReplicaGraphs, ReplicaError> {
    let files: Vec<PathBuf> = check_model(db, model)
        .graph
        .nodes
        .iter()
        .map(|n| n.layer_file.clone())
        .collect();
    let beside = |l: usize, name: String| -> Result<ItemId<'_>, ReplicaError> {
        let layer = &graph.layers[l];
        let file = files.get(l).cloned().unwrap_or_default();
        find_item(db, &file, ItemKind::Layer, &name).ok_or_else(|| ReplicaError::Missing {
            call: located(&layer.call),
            layer: layer.layer.clone(),
            wanted: name,
        })
    };
    let mut drains = Vec::new();
    for (l, layer) in graph.layers.iter().enumerate() {
        for (a, arg) in layer.args.iter().enumerate() {
            let TensorRef::Param(p) = *arg else { continue };
            let item = beside(
                l,
                format!("{}_train_grad_{}", layer.layer, layer.arg_names[a]),
            )?;
            drains.push(Drain {
                graph: drain_graph(db, graph, item, l, p)?,
                layer: l,
                param: p,
            });
        }
    }
    drains.sort_by_key(|d| d.param);
    let mut fill = update.clone();
    let count = graph.params.len();
    fill.params.extend(graph.params.iter().map(|p| ParamDecl {
        tensor: TensorDecl {
            name: format!("g{}", p.tensor.name),
            ..p.tensor.clone()
        },
        path: PathBuf::new(),
        columns: None,
    }));
    for (k, &l) in region_of.iter().enumerate() {
        let back = &fill.layers[k];
        let params: Vec<TensorRef> = back
            .args
            .iter()
            .filter_map(|a| match a {
                TensorRef::Param(p) => Some(TensorRef::Param(count + p)),
                _ => None,
            })
            .collect();
        if params.is_empty() {
            continue;
        }
        let item = beside(l, format!("{}_train_fill", graph.layers[l].layer))?;
        let args = back.args.iter().copied().chain(params).collect();
        let scalars = given(db, item, optimizer);
        let call = back.call.clone();
        fill.layers[k] =
            push_call(db, &fill, item, &call, args, &scalars).map_err(ReplicaError::Diagnostics)?;
    }
    Ok(ReplicaGraphs { drains, fill })
}

/// The graph of one layer, `item` called on parameter `p` of model layer `l`: no inputs, the
/// model's parameters, the gradient as its result.
fn drain_graph(
    db: &dyn Db,
    graph: &LayerGraph,
    item: ItemId<'_>,
    l: usize,
    p: usize,
) -> Result<LayerGraph, ReplicaError> {
    let mut drain = LayerGraph {
        inputs: Vec::new(),
        layers: Vec::new(),
        output: TensorRef::Layer(0),
        ..graph.clone()
    };
    let call = &graph.layers[l].call;
    let instance = push_call(db, &drain, item, call, vec![TensorRef::Param(p)], &[])
        .map_err(ReplicaError::Diagnostics)?;
    let param = graph.params[p].tensor.shape.clone();
    let elements = |shape: &[u64]| shape.iter().product::<u64>();
    if elements(&instance.output_shape) != elements(&param) {
        return Err(ReplicaError::Shape {
            call: located(call),
            layer: instance.layer,
            param,
            result: instance.output_shape,
        });
    }
    drain.layers.push(instance);
    Ok(drain)
}

fn located(span: &wsel_ir::graph::SourceSpan) -> Location {
    Location {
        file: span.file.clone(),
        span: span.span.clone(),
    }
}

//! The staged graph of weight streaming (`docs/running.md`): a model's layer graph with a
//! `stage_in` before the layers fed by each model input and a `stage_out` after the result —
//! the two layers of `std.resident`, lowered at the model's shapes. Between layers a streamed
//! model keeps its activations in SRAM; the stage layers move a model input from the host
//! into SRAM and the result back out, so in the staged graph every activation passed between
//! two layers is resident on both sides. A model input or result of rank 3 or 4 is staged
//! as the `f32[B, N]` of its features, the same words, and its edge to the model's layer is
//! relabelled (`relabel.rs`): the region's rows divide its first feature dimension.

use std::path::Path;

use wsel_ir::graph::{LayerGraph, SourceSpan, TensorRef};
use wsel_sema::{Db, Diagnostic, ItemKind, Location};

use super::instance::{CallArgs, lower_instance};
use super::{relabel, shape_of};

/// The `std.resident` module, which every program's file set holds
/// (`wsel_sema::load::ALWAYS_LOADED`).
pub(super) const RESIDENT: &str = "<std>/resident.wse";

/// `graph` staged for weight streaming: `stage_in#k` for model input `k` (in input order),
/// then the model's layers, then `stage_out#1` on the result. `None` when `std.resident` is
/// missing from the file set.
pub fn staged_graph(db: &dyn Db, graph: &LayerGraph) -> Option<(LayerGraph, Vec<Diagnostic>)> {
    let find = |name: &str| super::find_item(db, Path::new(RESIDENT), ItemKind::Layer, name);
    let (stage_in, stage_out) = (find("stage_in")?, find("stage_out")?);
    let mut diags = Vec::new();
    let mut out = LayerGraph {
        layers: Vec::new(),
        ..graph.clone()
    };
    let located = |span: &SourceSpan| Location {
        file: span.file.clone(),
        span: span.span.clone(),
    };
    for (k, input) in graph.inputs.iter().enumerate() {
        let shape = flat(&input.shape);
        let args = CallArgs {
            tensors: vec![TensorRef::Input(k)],
            shapes: std::slice::from_ref(&shape),
            scalars: &[],
        };
        let name = format!("stage_in#{}", k + 1);
        let instance = lower_instance(db, stage_in, name, located(&input.span), args, &mut diags)?;
        out.layers.push(instance);
    }
    let inputs = graph.inputs.len();
    let moved = |t: TensorRef| match t {
        TensorRef::Input(k) => TensorRef::Layer(k),
        TensorRef::Layer(l) => TensorRef::Layer(inputs + l),
        param => param,
    };
    for layer in &graph.layers {
        let mut layer = layer.clone();
        for (arg, name) in layer.args.clone().iter().zip(layer.arg_names.clone()) {
            if let TensorRef::Input(k) = *arg
                && graph.inputs[k].shape.len() > 2
            {
                relabel::line_up_staged(&mut layer, &name, &graph.inputs[k].shape);
            }
        }
        layer.args = layer.args.into_iter().map(moved).collect();
        out.layers.push(layer);
    }
    let result = moved(graph.output);
    let call = match graph.output {
        TensorRef::Layer(l) => graph.layers[l].call.clone(),
        TensorRef::Input(k) => graph.inputs[k].span.clone(),
        TensorRef::Param(p) => graph.params[p].tensor.span.clone(),
    };
    let shape = shape_of(&out, result);
    if let (TensorRef::Layer(l), true) = (result, shape.len() > 2) {
        let producer = &mut out.layers[l];
        let name = producer.output_name.clone();
        relabel::line_up_staged(producer, &name, &shape);
    }
    let staged = flat(&shape);
    let args = CallArgs {
        tensors: vec![result],
        shapes: std::slice::from_ref(&staged),
        scalars: &[],
    };
    let name = "stage_out#1".to_string();
    let mut instance = lower_instance(db, stage_out, name, located(&call), args, &mut diags)?;
    // The words are the model's result in its declared shape.
    instance.output_shape = shape;
    out.layers.push(instance);
    out.output = TensorRef::Layer(out.layers.len() - 1);
    Some((out, diags))
}

/// `shape` (batch first) as std.resident's stage layers take it: `[B, N]`, N its features.
fn flat(shape: &[u64]) -> Vec<u64> {
    let batch = shape.first().copied().unwrap_or(1);
    vec![batch, shape.iter().skip(1).product()]
}

//! The fused layer pipelined training takes apart (`docs/language.md` §11.2): std.nn's
//! `attention(q, k, v)`, each of whose three input gradients needs all three inputs, trains
//! as `attention_qkv(pack_qkv(q, k, v))` — `pack_qkv` a layer with a gradient layer per input
//! (each input's part of the packed gradient, [`super::pipelined_shape::Role::Pair`]),
//! `attention_qkv` a layer of one input whose backward gives the packed gradient. Both
//! stand for the attention's call: its span, its model layer.

use std::path::Path;

use wsel_ir::graph::{LayerGraph, LayerInstance, TensorRef};
use wsel_sema::{Db, Diagnostic, ItemKind, Location};

use super::instance::{CallArgs, lower_instance};
use super::pipelined_training::values;
use super::shape_of;
use crate::diagnostics;

/// std.nn, the module of the fused attention and of the two layers it trains as.
pub(super) const NN: &str = "<std>/nn.wse";

/// The layers the rewrite puts in the graph, all of [`NN`].
const INSERTED: [&str; 2] = ["pack_qkv", "attention_qkv"];

/// The graph with every std.nn `attention` taken apart, and the layer of `graph` each of its
/// layers stands for.
pub(super) struct Unfused {
    pub graph: LayerGraph,
    pub origin: Vec<usize>,
}

/// The module of a layer the rewrite put in the graph (no call of the model names it).
pub(super) fn module_of(layer: &str) -> Option<&'static Path> {
    INSERTED.contains(&layer).then(|| Path::new(NN))
}

/// `graph` with every layer `l` that is std.nn's `attention` (`fused(l)`) replaced by
/// `pack_qkv` and `attention_qkv`; diagnostics when either is missing or does not lower.
pub(super) fn unfused(
    db: &dyn Db,
    graph: &LayerGraph,
    fused: &dyn Fn(usize) -> bool,
) -> Result<Unfused, Vec<Diagnostic>> {
    let mut out = LayerGraph {
        layers: Vec::new(),
        ..graph.clone()
    };
    let mut origin = Vec::new();
    let mut moved_to: Vec<usize> = Vec::with_capacity(graph.layers.len());
    let moved = |moved_to: &[usize], t: TensorRef| match t {
        TensorRef::Layer(p) => TensorRef::Layer(moved_to[p]),
        other => other,
    };
    for (l, layer) in graph.layers.iter().enumerate() {
        let mut layer = layer.clone();
        layer.args = layer.args.iter().map(|&a| moved(&moved_to, a)).collect();
        if fused(l) {
            let inputs: Vec<TensorRef> = layer.activations().collect();
            let heads: Vec<_> = values(&layer.scalars)
                .into_iter()
                .filter(|(name, _)| name == "heads")
                .collect();
            let packed = push(db, &mut out, &layer, "pack_qkv", inputs, &heads)?;
            origin.push(l);
            push(
                db,
                &mut out,
                &layer,
                "attention_qkv",
                vec![packed],
                &values(&layer.scalars),
            )?;
        } else {
            out.layers.push(layer);
        }
        origin.push(l);
        moved_to.push(out.layers.len() - 1);
    }
    out.output = moved(&moved_to, graph.output);
    Ok(Unfused { graph: out, origin })
}

/// Pushes a call of std.nn's `name` on `tensors` with `scalars` onto `out`, at `fused`'s call;
/// its result.
fn push(
    db: &dyn Db,
    out: &mut LayerGraph,
    fused: &LayerInstance,
    name: &str,
    tensors: Vec<TensorRef>,
    scalars: &[(String, wsel_sema::ty::Value)],
) -> Result<TensorRef, Vec<Diagnostic>> {
    let at = Location {
        file: fused.call.file.clone(),
        span: fused.call.span.clone(),
    };
    let item = super::find_item(db, Path::new(NN), ItemKind::Layer, name).ok_or_else(|| {
        vec![diagnostics::no_pipelined_training(
            at.clone(),
            &fused.layer,
            name,
        )]
    })?;
    let k = 1 + out.layers.iter().filter(|l| l.layer == name).count();
    let shapes: Vec<Vec<u64>> = tensors.iter().map(|t| shape_of(out, *t)).collect();
    let args = CallArgs {
        tensors,
        shapes: &shapes,
        scalars,
    };
    let mut diags = Vec::new();
    match lower_instance(db, item, format!("{name}#{k}"), at, args, &mut diags) {
        Some(instance) if diags.is_empty() => {
            out.layers.push(instance);
            Ok(TensorRef::Layer(out.layers.len() - 1))
        }
        _ => Err(diags),
    }
}

//! Relays for pipelined mode (`docs/mapping.md` §4, "Fan-out"): a layer that reads one layer's
//! result on two of its ports (`add(h, h)`) needs it on two colors, since a router delivers a
//! wavelet of one color to one input queue of its PE and never changes its color. Before
//! such a layer the graph gets a `relay#k` (`std.resident`'s `relay`, lowered at the tensor's
//! shape) that sends the tensor on as its own stream, and the second port reads the relay.

use std::path::Path;

use wsel_ir::graph::{LayerGraph, TensorRef};
use wsel_sema::{Db, Diagnostic, ItemKind, Location};

use super::instance::{CallArgs, lower_instance};
use super::shape_of;
use super::staging::RESIDENT;

/// `graph` with a relay before every second reading of a layer's result by one layer, or
/// `graph` itself when no layer reads a result twice. `None` when `std.resident` is missing
/// from the file set.
pub fn relayed_graph(db: &dyn Db, graph: &LayerGraph) -> Option<(LayerGraph, Vec<Diagnostic>)> {
    let mut diags = Vec::new();
    if !graph
        .layers
        .iter()
        .any(|l| repeats(&l.args).next().is_some())
    {
        return Some((graph.clone(), diags));
    }
    let relay = super::find_item(db, Path::new(RESIDENT), ItemKind::Layer, "relay")?;
    let mut out = LayerGraph {
        layers: Vec::new(),
        ..graph.clone()
    };
    // Where each layer of `graph` went in `out`.
    let mut moved_to: Vec<usize> = Vec::with_capacity(graph.layers.len());
    let moved = |moved_to: &[usize], t: TensorRef| match t {
        TensorRef::Layer(l) => TensorRef::Layer(moved_to[l]),
        other => other,
    };
    let mut relays = 0;
    for layer in &graph.layers {
        let mut layer = layer.clone();
        let again: Vec<usize> = repeats(&layer.args).collect();
        layer.args = layer.args.iter().map(|&t| moved(&moved_to, t)).collect();
        for i in again {
            let shape = shape_of(&out, layer.args[i]);
            let args = CallArgs {
                tensors: vec![layer.args[i]],
                shapes: std::slice::from_ref(&shape),
                scalars: &[],
            };
            relays += 1;
            let name = format!("relay#{relays}");
            let call = Location {
                file: layer.call.file.clone(),
                span: layer.call.span.clone(),
            };
            let instance = lower_instance(db, relay, name, call, args, &mut diags)?;
            out.layers.push(instance);
            layer.args[i] = TensorRef::Layer(out.layers.len() - 1);
        }
        moved_to.push(out.layers.len());
        out.layers.push(layer);
    }
    out.output = moved(&moved_to, graph.output);
    Some((out, diags))
}

/// The positions of `args` that repeat an earlier layer result.
fn repeats(args: &[TensorRef]) -> impl Iterator<Item = usize> + '_ {
    args.iter().enumerate().filter_map(|(i, a)| {
        (matches!(a, TensorRef::Layer(_)) && args[..i].contains(a)).then_some(i)
    })
}

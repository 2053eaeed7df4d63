//! The layers pipelined training adds to a model with branches (`docs/language.md` §11.2),
//! so that every backward layer has a region of its own: before every reading of a result
//! but one (and but a residual block's skip), a `relay` (`std.resident`), on whose region the
//! backward adds that reading's gradient to the others (`gradient_sum_train_back`); and before
//! the second input of a layer with a gradient layer per input ([`Role::Pair`]), a `keep`,
//! which keeps that input in its forward and runs the first input's gradient in the backward.

use std::path::Path;

use wsel_ir::graph::{LayerGraph, TensorRef};
use wsel_sema::{Db, Diagnostic, ItemKind, Location};

use super::instance::{CallArgs, lower_instance};
use super::pipelined_shape::{Role, readings};
use super::shape_of;
use super::staging::RESIDENT;

/// What a layer of the branched graph stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Node {
    /// Model layer `.0`, in its role.
    Model(usize, Role),
    /// A relay before a second reading of a result: its region sums that reading's gradient in.
    Relay,
    /// A keep before a [`Role::Pair`]'s input but the first (or a relay, when the gradient
    /// layer needs nothing kept): its region runs the previous input's gradient.
    Keep,
}

/// The model's graph with the relays and keeps, and what each of its layers stands for.
pub(super) struct Branched {
    pub graph: LayerGraph,
    pub nodes: Vec<Node>,
}

/// `graph` (with `roles`) with a relay before every reading of a result but its first that is
/// not a residual block's skip, and a keep before every pair's inputs but the first (a relay
/// where `keeps(layer, argument)` says the input need not be kept,
/// [`super::pipelined_keeps`]). `graph` itself when it needs neither. Diagnostics when
/// `std.resident`'s `relay` or `keep` is missing or does not lower.
pub(super) fn branched(
    db: &dyn Db,
    graph: &LayerGraph,
    roles: &[Role],
    keeps: &dyn Fn(usize, usize) -> bool,
) -> Result<Branched, Vec<Diagnostic>> {
    let relayed = relayed_readings(graph, roles);
    let mut out = LayerGraph {
        layers: Vec::new(),
        ..graph.clone()
    };
    let mut nodes = Vec::new();
    let mut moved_to: Vec<usize> = Vec::with_capacity(graph.layers.len());
    let mut inserted = Inserted::new(db, graph);
    for (r, layer) in graph.layers.iter().enumerate() {
        let mut layer = layer.clone();
        let activations = activation_positions(&layer.args);
        for (i, arg) in layer.args.clone().into_iter().enumerate() {
            let TensorRef::Layer(p) = arg else { continue };
            let mut arg = TensorRef::Layer(moved_to[p]);
            if relayed.contains(&(r, i)) {
                arg = inserted.push(&mut out, "relay", arg, &layer.call)?;
                nodes.push(Node::Relay);
            }
            if roles[r] == Role::Pair && activations.iter().skip(1).any(|&a| a == i) {
                let keep = if keeps(r, i) { "keep" } else { "relay" };
                arg = inserted.push(&mut out, keep, arg, &layer.call)?;
                nodes.push(Node::Keep);
            }
            layer.args[i] = arg;
        }
        moved_to.push(out.layers.len());
        out.layers.push(layer);
        nodes.push(Node::Model(r, roles[r]));
    }
    out.output = match graph.output {
        TensorRef::Layer(l) => TensorRef::Layer(moved_to[l]),
        other => other,
    };
    Ok(Branched { graph: out, nodes })
}

/// The readings (reader, argument position) that get a relay: every reading of a result but
/// the first that is not a residual block's skip, and but the skips.
fn relayed_readings(graph: &LayerGraph, roles: &[Role]) -> Vec<(usize, usize)> {
    let mut relayed = Vec::new();
    for (p, reads) in readings(graph).iter().enumerate() {
        let closes = Role::BlockEnd {
            start: TensorRef::Layer(p),
        };
        let skip = |&(r, i): &(usize, usize)| {
            let before = r.checked_sub(1).map(TensorRef::Layer);
            roles[r] == closes && Some(graph.layers[r].args[i]) != before
        };
        let direct: Vec<(usize, usize)> = reads.iter().filter(|at| !skip(at)).copied().collect();
        relayed.extend(direct.into_iter().skip(1));
    }
    relayed
}

/// The positions of `args` that are activations.
fn activation_positions(args: &[TensorRef]) -> Vec<usize> {
    (0..args.len())
        .filter(|&i| !matches!(args[i], TensorRef::Param(_)))
        .collect()
}

/// The relays and keeps inserted so far, for their names (`relay#3`, after the graph's own).
struct Inserted<'a> {
    db: &'a dyn Db,
    counts: Vec<(&'static str, usize)>,
}

impl<'a> Inserted<'a> {
    fn new(db: &'a dyn Db, graph: &LayerGraph) -> Inserted<'a> {
        let count = |name: &str| graph.layers.iter().filter(|l| l.layer == name).count();
        Inserted {
            db,
            counts: vec![("relay", count("relay")), ("keep", count("keep"))],
        }
    }

    /// Pushes a call of `std.resident`'s `layer` (`relay` or `keep`) on `arg` onto `out`,
    /// at `call` (the reader's); its result.
    fn push(
        &mut self,
        out: &mut LayerGraph,
        layer: &'static str,
        arg: TensorRef,
        call: &wsel_ir::graph::SourceSpan,
    ) -> Result<TensorRef, Vec<Diagnostic>> {
        let at = Location {
            file: call.file.clone(),
            span: call.span.clone(),
        };
        let item = super::find_item(self.db, Path::new(RESIDENT), ItemKind::Layer, layer)
            .ok_or_else(|| {
                vec![crate::diagnostics::no_pipelined_training(
                    at.clone(),
                    layer,
                    layer,
                )]
            })?;
        let slot = self.counts.iter_mut().find(|(n, _)| *n == layer);
        let k = slot.map_or(1, |(_, c)| {
            *c += 1;
            *c
        });
        let shape = shape_of(out, arg);
        let args = CallArgs {
            tensors: vec![arg],
            shapes: std::slice::from_ref(&shape),
            scalars: &[],
        };
        let mut diags = Vec::new();
        match lower_instance(self.db, item, format!("{layer}#{k}"), at, args, &mut diags) {
            Some(instance) if diags.is_empty() => {
                out.layers.push(instance);
                Ok(TensorRef::Layer(out.layers.len() - 1))
            }
            _ => Err(diags),
        }
    }
}

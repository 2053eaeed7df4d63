//! The calls pipelined training puts in place of a layer's (`docs/language.md` §6.4, §11.2):
//! a call of a layer with a `train as` clause becomes the clause's calls (std.nn's fused
//! `attention(q, k, v)`: `attention_qkv(pack_qkv(q, k, v))`, whose three input gradients
//! each need all three inputs, which no one-input keep holds), a clause's layer with a clause
//! of its own in turn. Every inserted layer stands for the call: its span, its model layer.

use std::path::PathBuf;

use wsel_ir::graph::{LayerGraph, LayerInstance, SourceSpan, TensorRef};
use wsel_sema::analysis::ModelNode;
use wsel_sema::diagnostics::train_as::result_mismatch;
use wsel_sema::{Db, Diagnostic, ItemId, ItemKind, Location, TrainArg, TrainScalar, train_as};

use super::pipelined_training::{given, push_call, values};
use super::{find_item, shape_of};

/// How deep clauses inside clauses are applied: the checker rules out a clause that leads
/// back to its layer (E0218), so this only bounds a broken program's work.
const DEPTH: usize = 16;

/// The graph with every call of a layer with a `train as` clause taken apart, and what each
/// of its layers stands for.
pub(super) struct Unfused {
    pub graph: LayerGraph,
    /// The layer of the model's graph each layer stands for.
    pub origin: Vec<usize>,
    /// Every inserted layer: its name, its call (the model's) and its module.
    inserted: Vec<(String, SourceSpan, PathBuf)>,
    /// Every call taken apart and its layer's clause, for the errors at an inserted layer.
    clauses: Vec<(SourceSpan, String, Location)>,
}

impl Unfused {
    /// The module of a layer the clauses put in the graph (no call of the model names it).
    pub fn module_of(&self, layer: &LayerInstance) -> Option<&PathBuf> {
        self.inserted
            .iter()
            .find(|(name, call, _)| *name == layer.layer && *call == layer.call)
            .map(|(_, _, file)| file)
    }

    /// `diags` with a label at the clause of every taken-apart call they are at: an error at
    /// an inserted layer names the user's call and the clause it comes from.
    pub fn explained(&self, diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
        diags
            .into_iter()
            .map(|d| {
                let call = |(c, _, _): &&(SourceSpan, String, Location)| {
                    c.file == d.primary.location.file && c.span == d.primary.location.span
                };
                match self.clauses.iter().find(call) {
                    Some((_, layer, at)) => {
                        let label = format!("in `{layer}`'s `train as` clause");
                        d.with_secondary(at.clone(), label)
                    }
                    None => d,
                }
            })
            .collect()
    }
}

/// `graph` with every call of a layer with a `train as` clause (`nodes`: the model's calls)
/// replaced by the clause's calls; diagnostics when one does not lower.
pub(super) fn unfused(
    db: &dyn Db,
    graph: &LayerGraph,
    nodes: &[ModelNode],
) -> Result<Unfused, Vec<Diagnostic>> {
    let mut out = Unfused {
        graph: LayerGraph {
            layers: Vec::new(),
            ..graph.clone()
        },
        origin: Vec::new(),
        inserted: Vec::new(),
        clauses: Vec::new(),
    };
    let mut moved_to: Vec<usize> = Vec::with_capacity(graph.layers.len());
    let moved = |moved_to: &[usize], t: TensorRef| match t {
        TensorRef::Layer(p) => TensorRef::Layer(moved_to[p]),
        other => other,
    };
    for (l, layer) in graph.layers.iter().enumerate() {
        let mut layer = layer.clone();
        layer.args = layer.args.iter().map(|&a| moved(&moved_to, a)).collect();
        let node = nodes
            .iter()
            .find(|n| n.layer == layer.layer && n.span == layer.call.span);
        let item = node.and_then(|n| find_item(db, &n.layer_file, ItemKind::Layer, &n.layer));
        match item.filter(|&i| train_as(db, i).is_some()) {
            Some(item) => {
                let call = Call {
                    at: layer.call.clone(),
                    tensors: layer.args.clone(),
                    scalars: values(&layer.scalars),
                };
                let result = out
                    .expand(db, item, &call, l, 0)
                    .map_err(|diags| out.explained(diags))?;
                check_result(&out.graph, result, &layer)?;
            }
            None => {
                out.graph.layers.push(layer);
                out.origin.push(l);
            }
        }
        moved_to.push(out.graph.layers.len() - 1);
    }
    out.graph.output = moved(&moved_to, graph.output);
    Ok(out)
}

/// The clause's result at this call has the shape of the call's own: the checker compared
/// the two in the layer's terms at trial sizes (`wsel_sema`'s `train_as::dims`), this
/// compares the sizes of the call. E0453 at the call otherwise.
fn check_result(
    graph: &LayerGraph,
    result: TensorRef,
    call: &LayerInstance,
) -> Result<(), Vec<Diagnostic>> {
    let found = shape_of(graph, result);
    if found == call.output_shape {
        return Ok(());
    }
    let at = Location {
        file: call.call.file.clone(),
        span: call.call.span.clone(),
    };
    let sizes = |s: &[u64]| format!("{s:?}");
    Err(vec![result_mismatch(
        at,
        &call.layer,
        &sizes(&call.output_shape),
        &sizes(&found),
    )])
}

/// A call to take apart: where the model makes it, its tensors and its scalars' values.
struct Call {
    at: SourceSpan,
    tensors: Vec<TensorRef>,
    scalars: Vec<(String, wsel_sema::ty::Value)>,
}

impl Unfused {
    /// Pushes the calls of `item`'s clause at `call`, standing for model layer `origin`
    /// (`item` itself, at `DEPTH` or without a clause); its result.
    fn expand(
        &mut self,
        db: &dyn Db,
        item: ItemId<'_>,
        call: &Call,
        origin: usize,
        depth: usize,
    ) -> Result<TensorRef, Vec<Diagnostic>> {
        let Some(clause) = train_as(db, item).filter(|_| depth < DEPTH) else {
            return self.push(db, item, call, origin);
        };
        let file = item.file(db).path(db).clone();
        let at = Location {
            file,
            span: clause.span.clone(),
        };
        self.clauses
            .push((call.at.clone(), item.name(db).clone(), at));
        let mut results: Vec<TensorRef> = Vec::new();
        for c in &clause.calls {
            let tensors = c
                .args
                .iter()
                .map(|a| match *a {
                    TrainArg::Input(i) => call.tensors[i],
                    TrainArg::Call(k) => results[k],
                })
                .collect();
            let settings: Vec<_> = c
                .scalars
                .iter()
                .filter_map(|(name, s)| {
                    let value = match s {
                        TrainScalar::Value(v) => *v,
                        TrainScalar::Input(own) => call.scalars.iter().find(|(n, _)| n == own)?.1,
                    };
                    Some((name.clone(), value))
                })
                .collect();
            let inner = Call {
                at: call.at.clone(),
                tensors,
                scalars: given(db, c.layer, &settings),
            };
            results.push(self.expand(db, c.layer, &inner, origin, depth + 1)?);
        }
        results.last().copied().ok_or_else(Vec::new)
    }

    /// Pushes the call of `item` at `call` onto the graph, standing for model layer `origin`.
    fn push(
        &mut self,
        db: &dyn Db,
        item: ItemId<'_>,
        call: &Call,
        origin: usize,
    ) -> Result<TensorRef, Vec<Diagnostic>> {
        let instance = push_call(
            db,
            &self.graph,
            item,
            &call.at,
            call.tensors.clone(),
            &call.scalars,
        )?;
        let file = item.file(db).path(db).clone();
        self.inserted
            .push((instance.layer.clone(), call.at.clone(), file));
        self.graph.layers.push(instance);
        self.origin.push(origin);
        Ok(TensorRef::Layer(self.graph.layers.len() - 1))
    }
}

//! The relaid graph of weight streaming's per-layer regions (`docs/running.md`, "How weight
//! streaming runs"): a staged graph with a `relayout` (`std.resident`) before every layer
//! whose resident input lies on other rows than the layer runs on. The mapper chooses the
//! rows and says where the moves go; the relayout phase moves the activation's blocks from
//! the rows its producer left them on to the rows the next layer takes them from, on the
//! fabric. A training graph (`relaid_training`) is relaid the same way: each layer runs on
//! the rows the mapper gives it, and every activation it reads on other rows — a kept forward
//! result, a gradient flowing back — is moved there first.

use std::collections::HashMap;
use std::path::Path;

use wsel_ir::graph::{LayerGraph, RowMove, SourceSpan, TensorRef};
use wsel_sema::ty::Value;
use wsel_sema::{Db, Diagnostic, ItemId, ItemKind, Location};

use super::Inserting;
use super::instance::{CallArgs, lower_instance};
use super::shape_of;
use super::staging::RESIDENT;
use super::training::TrainGraph;

/// `staged` with `relayout#k` before the layers `moves` name, in order, each on that layer's
/// activation arguments. `None` when `std.resident` lacks `relayout`.
pub fn relaid_graph(
    db: &dyn Db,
    staged: &LayerGraph,
    moves: &[RowMove],
) -> Option<(LayerGraph, Vec<Diagnostic>)> {
    let mut relayouts = Relayouts::new(db, staged)?;
    for (j, layer) in staged.layers.iter().enumerate() {
        let mut layer = layer.clone();
        layer.args = layer.args.iter().map(|&a| relayouts.out.moved(a)).collect();
        let call = layer.call.clone();
        for m in moves.iter().filter(|m| m.before == j) {
            for arg in layer.args.iter_mut() {
                let TensorRef::Layer(p) = *arg else { continue };
                *arg = TensorRef::Layer(relayouts.make(&call, p, (m.from_rows, m.to_rows))?);
            }
        }
        relayouts.out.keep(layer);
    }
    Some((relayouts.out.finish(staged.output), relayouts.diags))
}

/// `train` with layer `l` on `rows[l]` rows: before every layer, a relayout of each resident
/// activation it reads from other rows (one per result and rows, shared by every later reader
/// on those rows, so a forward layer's relaid input stays kept for its backward layers), and
/// the rows of every layer of the new graph (a relayout's the larger of its two). The
/// indices of the training graph follow its layers; a relayout runs beside the layer it is
/// made for. `None` when `std.resident` lacks `relayout` or a relayout does not lower.
pub fn relaid_training(
    db: &dyn Db,
    train: &TrainGraph,
    rows: &[u32],
) -> Option<(TrainGraph, Vec<u32>)> {
    let graph = &train.graph;
    let mut relayouts = Relayouts::new(db, graph)?;
    // Per new layer: the rows it runs on, the rows its result lies on, and its forward layer.
    let (mut runs, mut lies, mut beside) = (Vec::new(), Vec::new(), Vec::new());
    let mut made: HashMap<(usize, u32), usize> = HashMap::new();
    for (j, layer) in graph.layers.iter().enumerate() {
        let mut layer = layer.clone();
        let call = layer.call.clone();
        for arg in layer.args.iter_mut() {
            let TensorRef::Layer(p) = relayouts.out.moved(*arg) else {
                continue;
            };
            *arg = TensorRef::Layer(p);
            if lies[p] == rows[j] {
                continue;
            }
            let at = match made.get(&(p, rows[j])) {
                Some(&at) => at,
                None => {
                    let at = relayouts.make(&call, p, (lies[p], rows[j]))?;
                    runs.push(lies[p].max(rows[j]));
                    lies.push(rows[j]);
                    beside.push(train.beside[j]);
                    made.insert((p, rows[j]), at);
                    at
                }
            };
            *arg = TensorRef::Layer(at);
        }
        relayouts.out.keep(layer);
        runs.push(rows[j]);
        lies.push(rows[j]);
        beside.push(train.beside[j]);
    }
    if !relayouts.diags.is_empty() {
        return None;
    }
    let now = relayouts.out.now.clone();
    let relaid = TrainGraph {
        graph: relayouts.out.finish(graph.output),
        targets: train.targets,
        loss: now[train.loss],
        grads: train.grads.iter().map(|&(g, p)| (now[g], p)).collect(),
        forward: now.get(train.forward).copied().unwrap_or(now.len()),
        rerun: train.rerun.iter().map(|&(c, q)| (now[c], now[q])).collect(),
        beside: beside.into_iter().map(|f| now[f]).collect(),
    };
    Some((relaid, runs))
}

/// Relayout layers inserted into a graph being rebuilt.
struct Relayouts<'db> {
    db: &'db dyn Db,
    item: ItemId<'db>,
    out: Inserting,
    count: usize,
    diags: Vec<Diagnostic>,
}

impl<'db> Relayouts<'db> {
    /// `None` when `std.resident` lacks `relayout`.
    fn new(db: &'db dyn Db, from: &LayerGraph) -> Option<Relayouts<'db>> {
        Some(Relayouts {
            db,
            item: super::find_item(db, Path::new(RESIDENT), ItemKind::Layer, "relayout")?,
            out: Inserting::new(from),
            count: 0,
            diags: Vec::new(),
        })
    }

    /// Inserts `relayout#k` of the new graph's layer `p`, from `rows.0` rows to `rows.1`, at
    /// the call of the layer that reads it (`call`); its index.
    fn make(&mut self, call: &SourceSpan, p: usize, rows: (u32, u32)) -> Option<usize> {
        self.count += 1;
        let scalars = [
            ("from_rows".to_string(), Value::Int(rows.0.into())),
            ("to_rows".to_string(), Value::Int(rows.1.into())),
        ];
        let shape = shape_of(&self.out.out, TensorRef::Layer(p));
        let args = CallArgs {
            tensors: vec![TensorRef::Layer(p)],
            shapes: std::slice::from_ref(&shape),
            scalars: &scalars,
        };
        let location = Location {
            file: call.file.clone(),
            span: call.span.clone(),
        };
        let name = format!("relayout#{}", self.count);
        let instance = lower_instance(self.db, self.item, name, location, args, &mut self.diags)?;
        Some(self.out.insert(instance))
    }
}

//! The relaid graph of weight streaming's per-layer regions (`docs/running.md`, "How weight
//! streaming runs"): a staged graph with a `relayout` (`std.resident`) before every layer
//! whose resident input lies on other rows than the layer runs on. The mapper chooses the
//! rows and says where the moves go; the relayout phase moves the activation's blocks from
//! the rows its producer left them on to the rows the next layer takes them from, on the
//! fabric.

use std::path::Path;

use wsel_ir::graph::{LayerGraph, RowMove, TensorRef};
use wsel_sema::ty::Value;
use wsel_sema::{Db, Diagnostic, ItemKind, Location};

use super::instance::{CallArgs, lower_instance};
use super::shape_of;
use super::staging::RESIDENT;

/// `staged` with `relayout#k` before the layers `moves` name, in order, each on that layer's
/// activation arguments. `None` when `std.resident` lacks `relayout`.
pub fn relaid_graph(
    db: &dyn Db,
    staged: &LayerGraph,
    moves: &[RowMove],
) -> Option<(LayerGraph, Vec<Diagnostic>)> {
    let item = super::find_item(db, Path::new(RESIDENT), ItemKind::Layer, "relayout")?;
    let mut diags = Vec::new();
    let mut out = super::Inserting::new(staged);
    let mut count = 0;
    for (j, layer) in staged.layers.iter().enumerate() {
        let mut layer = layer.clone();
        layer.args = layer.args.iter().map(|&a| out.moved(a)).collect();
        for m in moves.iter().filter(|m| m.before == j) {
            for arg in layer.args.iter_mut() {
                let TensorRef::Layer(p) = *arg else { continue };
                count += 1;
                let scalars = [
                    ("from_rows".to_string(), Value::Int(m.from_rows.into())),
                    ("to_rows".to_string(), Value::Int(m.to_rows.into())),
                ];
                let shape = shape_of(&out.out, TensorRef::Layer(p));
                let args = CallArgs {
                    tensors: vec![TensorRef::Layer(p)],
                    shapes: std::slice::from_ref(&shape),
                    scalars: &scalars,
                };
                let location = Location {
                    file: layer.call.file.clone(),
                    span: layer.call.span.clone(),
                };
                let name = format!("relayout#{count}");
                let instance = lower_instance(db, item, name, location, args, &mut diags)?;
                *arg = TensorRef::Layer(out.insert(instance));
            }
        }
        out.keep(layer);
    }
    Some((out.finish(staged.output), diags))
}

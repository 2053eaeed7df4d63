//! The parked graph of layer-major micro-batches (`docs/running.md`, "Micro-batches"): a
//! staged graph (`super::staging`) with, before every layer that streams weights but the
//! first, a `park` and an `unpark` (`std.resident`'s `park` and `stage_in`) for each result
//! still live there. In layer-major order the micro-batches waiting their turn at that layer
//! send those results to the weight store (`park`) and take them back (`unpark`, a `stage_in`
//! fed from the store); the layers from there on take the unparked copy.

use std::path::Path;

use wsel_ir::graph::{LayerGraph, LayerInstance, TensorRef};
use wsel_sema::{Db, Diagnostic, ItemKind, Location};

use super::instance::{CallArgs, lower_instance, lower_twin};
use super::pipelined_training::{given, values};
use super::staging::RESIDENT;

/// `staged` with a `park#k` and `unpark#k` for every result live across each boundary before
/// a layer with weights (except the first such layer). `None` when `std.resident` lacks them.
pub fn parked_graph(db: &dyn Db, staged: &LayerGraph) -> Option<(LayerGraph, Vec<Diagnostic>)> {
    let find = |name: &str| super::find_item(db, Path::new(RESIDENT), ItemKind::Layer, name);
    let (park, unpark) = (find("park")?, find("stage_in")?);
    let weighted = |l: usize| {
        staged.layers[l]
            .args
            .iter()
            .any(|a| matches!(a, TensorRef::Param(_)))
    };
    let first = (0..staged.layers.len()).find(|&l| weighted(l));
    let mut diags = Vec::new();
    let mut out = super::Inserting::new(staged);
    let mut count = 0;
    for (j, layer) in staged.layers.iter().enumerate() {
        if weighted(j) && first.is_some_and(|f| j > f) {
            for p in (0..j).filter(|&p| live(staged, p, j)) {
                let location = Location {
                    file: layer.call.file.clone(),
                    span: layer.call.span.clone(),
                };
                count += 1;
                let shape = staged.layers[p].output_shape.clone();
                for (item, name) in [(park, "park"), (unpark, "unpark")] {
                    let args = CallArgs {
                        tensors: vec![out.moved(TensorRef::Layer(p))],
                        shapes: std::slice::from_ref(&shape),
                        scalars: &[],
                    };
                    let name = format!("{name}#{count}");
                    let instance =
                        lower_instance(db, item, name, location.clone(), args, &mut diags)?;
                    out.now[p] = out.insert(instance);
                }
            }
        }
        let mut layer = match weighted(j) {
            true => with_held(db, staged, layer, &mut diags)?,
            false => layer.clone(),
        };
        layer.args = layer.args.iter().map(|&a| out.moved(a)).collect();
        out.keep(layer);
    }
    Some((out.finish(staged.output), diags))
}

/// `layer` (of `staged`) with the implementations of `{its layer}_held` added, the layer of
/// the same file that holds its weights (std.nn's `dense_held`, `layernorm_held`,
/// `embedding_held`), when there is one; it is called with the layer's scalar inputs
/// (layernorm's `eps`).
fn with_held(
    db: &dyn Db,
    staged: &LayerGraph,
    layer: &LayerInstance,
    diags: &mut Vec<Diagnostic>,
) -> Option<LayerInstance> {
    let file = layer.impls.first().map(|i| i.kernel.file.clone());
    let name = format!("{}_held", layer.layer);
    let item = file.and_then(|f| super::find_item(db, &f, ItemKind::Layer, &name));
    let Some(item) = item else {
        return Some(layer.clone());
    };
    // Its scalars with their defaults (dense_held's chunk count, 1, and chunk, 0).
    let scalars = given(db, item, &values(&layer.scalars));
    let held = lower_twin(db, staged, layer, item, layer.name.clone(), &scalars, diags)?;
    let mut out = layer.clone();
    out.impls.extend(held.impls);
    Some(out)
}

/// Whether layer `p`'s result is taken by layer `j` or a later one, or is the model's result.
fn live(graph: &LayerGraph, p: usize, j: usize) -> bool {
    let taken = graph.layers[j..]
        .iter()
        .any(|layer| layer.args.contains(&TensorRef::Layer(p)));
    taken || graph.output == TensorRef::Layer(p)
}

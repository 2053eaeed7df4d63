//! The fused twins of pipelined inference (`docs/mapping.md` §4, "Fusion"): for a layer
//! `p` whose result a layer `r` alone reads, the layer `{p}_{r}` of `p`'s file (std.nn's
//! `dense_relu`, `dense_gelu`) called with `p`'s arguments, named by both calls
//! (`dense#1+relu#1`). `wsel_map::fusion` chooses the pairs and puts the twins in the graph.

use std::path::{Path, PathBuf};

use wsel_ir::graph::{LayerGraph, LayerInstance};
use wsel_sema::db::lookup_file;
use wsel_sema::items::module_scope;
use wsel_sema::{Db, ItemKind};

use super::instance::lower_twin;
use super::pipelined_training::values;

/// The fused twin of `graph.layers[producer]` and `graph.layers[reader]`, or `None` when the
/// producer's file has no layer `{producer's layer}_{reader's layer}` with a pipelined
/// implementation, or it does not lower cleanly for the producer's arguments.
pub fn fused_twin(
    db: &dyn Db,
    graph: &LayerGraph,
    producer: usize,
    reader: usize,
) -> Option<LayerInstance> {
    let (p, r) = (graph.layers.get(producer)?, graph.layers.get(reader)?);
    let file = layer_file(db, &p.call.file, &p.layer)?;
    let twin = format!("{}_{}", p.layer, r.layer);
    let item = super::find_item(db, &file, ItemKind::Layer, &twin)?;
    let name = format!("{}+{}", p.name, r.name);
    let mut diags = Vec::new();
    let instance = lower_twin(db, graph, p, item, name, &values(&p.scalars), &mut diags)?;
    let pipelined = instance
        .impls
        .iter()
        .any(|i| i.modes.contains(&wsel_ir::graph::Mode::Pipelined));
    (diags.is_empty() && pipelined).then_some(instance)
}

/// The file that defines the layer `layer` a call in `call_file` names (under its own name or
/// an import's alias).
fn layer_file(db: &dyn Db, call_file: &Path, layer: &str) -> Option<PathBuf> {
    let file = lookup_file(db, call_file)?;
    module_scope(db, file)
        .names
        .values()
        .find(|i| i.kind(db) == ItemKind::Layer && i.name(db) == layer)
        .map(|i| i.file(db).path(db).clone())
}

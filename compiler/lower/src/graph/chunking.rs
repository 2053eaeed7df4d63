//! The chunked graph of layer-major micro-batches (`docs/running.md`, "Micro-batches"): a
//! staged graph in which a layer whose weights cannot stay on the fabric between
//! micro-batches, even shared out over its rows' PEs, runs as `K` chunks of its outputs —
//! layers of their own, each holding its share of the weights, which layer-major order runs
//! over every micro-batch before the next chunk's weights stream in.
//!
//! Chunk `c` of layer `L` takes every `K`-th column of each of `L`'s weights from column `c`
//! (`ParamColumns`: the weight's file, read in part), so that each weight streams from the
//! store once over the chunks. The first chunk is `L_held` of `L`'s file, called with `L`'s
//! activation inputs, the weights' columns and the scalars `K` and `c`; every later one is
//! `L_held_into`, which takes the result so far after the activation inputs and writes its
//! outputs into it in place (std.nn's `dense_held` and `dense_held_into`). The last chunk's
//! result is `L`'s.

use wsel_ir::graph::{LayerGraph, LayerInstance, ParamColumns, ParamDecl, TensorDecl, TensorRef};
use wsel_sema::ty::Value;
use wsel_sema::{Db, Diagnostic, ItemId, ItemKind, Location};

use super::Inserting;
use super::instance::{CallArgs, lower_instance};
use super::pipelined_training::{given, values};
use super::shape_of;

/// `staged` with each layer `l` of `chunks` (`(l, K)`, `K` dividing the last dimension of
/// each of its weights) replaced by its `K` chunks, named `{name}.1` … `{name}.K`. `None`
/// when a layer has no `L_held`/`L_held_into` pair in its file.
pub fn chunked_graph(
    db: &dyn Db,
    staged: &LayerGraph,
    chunks: &[(usize, u32)],
) -> Option<(LayerGraph, Vec<Diagnostic>)> {
    let mut diags = Vec::new();
    let mut out = Inserting::new(staged);
    for (j, layer) in staged.layers.iter().enumerate() {
        match chunks.iter().find(|(l, _)| *l == j) {
            Some(&(_, k)) => {
                let last = chunk_layer(db, staged, &mut out, layer, k, &mut diags)?;
                out.now.push(last);
            }
            None => {
                let mut layer = layer.clone();
                layer.args = layer.args.iter().map(|&a| out.moved(a)).collect();
                out.keep(layer);
            }
        }
    }
    Some((out.finish(staged.output), diags))
}

/// Inserts the `k` chunks of `layer` (of `staged`) into `out`; the last one's index.
fn chunk_layer(
    db: &dyn Db,
    staged: &LayerGraph,
    out: &mut Inserting,
    layer: &LayerInstance,
    k: u32,
    diags: &mut Vec<Diagnostic>,
) -> Option<usize> {
    let file = layer.impls.first()?.kernel.file.clone();
    let find = |suffix: &str| {
        let name = format!("{}_{suffix}", layer.layer);
        super::find_item(db, &file, ItemKind::Layer, &name)
    };
    let (first, into) = (find("held")?, find("held_into")?);
    let location = Location {
        file: layer.call.file.clone(),
        span: layer.call.span.clone(),
    };
    let mut so_far: Option<usize> = None;
    for c in 0..k {
        let mut tensors = Vec::new();
        let mut shapes = Vec::new();
        for &arg in layer
            .args
            .iter()
            .filter(|a| !matches!(a, TensorRef::Param(_)))
        {
            tensors.push(out.moved(arg));
            shapes.push(shape_of(staged, arg));
        }
        if let Some(prev) = so_far {
            tensors.push(TensorRef::Layer(prev));
            shapes.push(layer.output_shape.clone());
        }
        for &arg in &layer.args {
            let TensorRef::Param(p) = arg else { continue };
            let columns = column_param(&staged.params[p], c, k);
            shapes.push(columns.tensor.shape.clone());
            out.out.params.push(columns);
            tensors.push(TensorRef::Param(out.out.params.len() - 1));
        }
        let item: ItemId<'_> = if c == 0 { first } else { into };
        let mut settings = values(&layer.scalars);
        settings.push(("K".into(), Value::Int(i128::from(k))));
        settings.push(("c".into(), Value::Int(i128::from(c))));
        let args = CallArgs {
            tensors,
            shapes: &shapes,
            scalars: &given(db, item, &settings),
        };
        let name = format!("{}.{}", layer.name, c + 1);
        let instance = lower_instance(db, item, name, location.clone(), args, diags)?;
        so_far = Some(out.insert(instance));
    }
    so_far
}

/// Chunk `c` of `k` of weight `param`: every `k`-th column of its last dimension from `c`.
fn column_param(param: &ParamDecl, c: u32, k: u32) -> ParamDecl {
    let columns = ParamColumns {
        of: param.tensor.name.clone(),
        whole: param.tensor.shape.clone(),
        first: u64::from(c),
        step: u64::from(k),
    };
    let mut shape = columns.whole.clone();
    if let Some(last) = shape.last_mut() {
        *last = columns.taken(*last);
    }
    ParamDecl {
        tensor: TensorDecl {
            name: format!("{}[{c}::{k}]", param.tensor.name),
            shape,
            ..param.tensor.clone()
        },
        path: param.path.clone(),
        columns: Some(columns),
    }
}

//! Graph lowering: a checked model, evaluated for one batch size, as a `LayerGraph` — inputs
//! and parameters with concrete shapes, then every layer call as a layer instance in
//! topological order (`instance`) with its implementations (`implementation`) and its cost
//! (`cost`, shared with the language server).
//! `model_graph` is a tracked query keyed by an interned ([`GraphKey`]) model and batch size.

mod chunking;
pub mod cost;
mod fusion;
mod implementation;
mod instance;
mod parking;
mod pipelined_branches;
mod pipelined_keeps;
pub mod pipelined_replica;
mod pipelined_shape;
mod pipelined_train_as;
pub mod pipelined_training;
pub mod recompute;
pub(crate) mod relabel;
mod relayout;
mod relays;
mod settings;
mod staging;
mod switch;
pub mod training;

pub use chunking::chunked_graph;
pub use fusion::fused_twin;
pub use parking::parked_graph;
pub use relayout::{relaid_graph, relaid_training};
pub use relays::relayed_graph;
pub use staging::staged_graph;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use wsel_ir::graph::{KernelRef, LayerGraph, ParamDecl, SourceSpan, TensorDecl, TensorRef};
use wsel_sema::analysis::ValueRef;
use wsel_sema::db::lookup_file;
use wsel_sema::syntax::written_span;
use wsel_sema::ty::Dim;
use wsel_sema::{Db, Diagnostic, ItemId, ItemKind, Location, check_model, item_ast, item_index};
use wsel_syntax::ast;

use crate::diagnostics;
use crate::value::scalar_ty;

/// A model evaluated for one batch size.
#[salsa::interned(debug)]
pub struct GraphKey<'db> {
    #[returns(copy)]
    pub model: ItemId<'db>,
    #[returns(copy)]
    pub batch: u64,
}

/// The layer graph of `model` for `batch` samples per batch, with the diagnostics (E05xx) of
/// problems only the concrete shapes reveal.
pub fn layer_graph<'db>(
    db: &'db dyn Db,
    model: ItemId<'db>,
    batch: u64,
) -> (LayerGraph, Vec<Diagnostic>) {
    model_graph(db, GraphKey::new(db, model, batch)).clone()
}

/// The tracked query behind [`layer_graph`].
#[salsa::tracked(returns(ref))]
pub fn model_graph<'db>(db: &'db dyn Db, key: GraphKey<'db>) -> (LayerGraph, Vec<Diagnostic>) {
    build(db, key.model(db), key.batch(db))
}

/// The kernel item a `KernelRef` names, for `lower_kernel`.
pub fn kernel_item<'db>(db: &'db dyn Db, kernel: &KernelRef) -> Option<ItemId<'db>> {
    find_item(db, &kernel.file, ItemKind::Kernel, &kernel.name)
}

/// The item of `kind` named `name` defined in the file at `path`.
fn find_item<'db>(db: &'db dyn Db, path: &Path, kind: ItemKind, name: &str) -> Option<ItemId<'db>> {
    let file = lookup_file(db, path)?;
    item_index(db, file)
        .iter()
        .copied()
        .find(|i| i.kind(db) == kind && i.name(db) == name)
}

fn build(db: &dyn Db, model: ItemId<'_>, batch: u64) -> (LayerGraph, Vec<Diagnostic>) {
    let check = check_model(db, model);
    let graph = &check.graph;
    let file = model.file(db).path(db).clone();
    let model_ast = match item_ast(db, model) {
        Some(ast::Item::Model(m)) => Some(m),
        _ => None,
    };
    let mut diags = Vec::new();
    let span_of = |span: ast::Span| SourceSpan {
        file: file.clone(),
        span,
    };
    let mut out = LayerGraph {
        model: graph.name.clone(),
        batch,
        inputs: Vec::new(),
        params: Vec::new(),
        layers: Vec::new(),
        output: TensorRef::Input(0),
    };
    for (name, ty) in &graph.inputs {
        let decl = model_ast.and_then(|m| m.inputs.iter().find(|p| &p.name.name == name));
        let span = decl.map(|p| p.span.clone()).unwrap_or_default();
        let mut shape = Vec::new();
        for (i, dim) in ty.dims.iter().enumerate() {
            shape.push(match dim {
                Dim::Known(n) => *n,
                Dim::Var(_) if i == 0 => batch,
                // Only a layer's output has expressions, never a model input.
                Dim::Expr(_) => 0,
                Dim::Var(v) => {
                    let at = Location {
                        file: file.clone(),
                        span: decl.map(|p| written_span(&p.ty)).unwrap_or_default(),
                    };
                    diags.push(diagnostics::symbolic_input_dim(at, name, v));
                    0
                }
            });
        }
        out.inputs.push(TensorDecl {
            name: name.clone(),
            elem: scalar_ty(ty.elem),
            shape,
            span: span_of(span),
        });
    }
    for (name, ty, path) in &graph.params {
        let span = model_ast
            .and_then(|m| {
                m.body.iter().find_map(|s| match s {
                    ast::ModelStmt::Param { name: n, span, .. } if &n.name == name => {
                        Some(span.clone())
                    }
                    _ => None,
                })
            })
            .unwrap_or_default();
        let shape = ty
            .dims
            .iter()
            .map(|d| match d {
                Dim::Known(n) => *n,
                Dim::Var(_) | Dim::Expr(_) => 0,
            })
            .collect();
        out.params.push(ParamDecl {
            tensor: TensorDecl {
                name: name.clone(),
                elem: scalar_ty(ty.elem),
                shape,
                span: span_of(span),
            },
            path: resolve_path(&file, path),
            columns: None,
        });
    }
    let mut counters: BTreeMap<String, usize> = BTreeMap::new();
    for node in &graph.nodes {
        let args: Vec<TensorRef> = node.args.iter().map(|v| tensor_ref(*v)).collect();
        // As the call sees them: a `reshape` relabels its argument (docs/language.md §7.1).
        let shapes: Vec<Vec<u64>> = args
            .iter()
            .zip(&node.arg_types)
            .map(|(a, ty)| seen_shape(ty, batch).unwrap_or_else(|| shape_of(&out, *a)))
            .collect();
        let counter = counters.entry(node.layer.clone()).or_insert(0);
        *counter += 1;
        let name = format!("{}#{}", node.layer, counter);
        let call = Location {
            file: file.clone(),
            span: node.span.clone(),
        };
        let layer = find_item(db, &node.layer_file, ItemKind::Layer, &node.layer);
        let instance = layer.and_then(|layer| {
            let args = instance::CallArgs {
                tensors: args,
                shapes: &shapes,
                scalars: &node.scalars,
            };
            instance::lower_instance(db, layer, name, call, args, &mut diags)
        });
        match instance {
            Some(mut instance) => {
                for (i, (arg, seen)) in instance.args.clone().iter().zip(&shapes).enumerate() {
                    let produced = shape_of(&out, *arg);
                    if let (TensorRef::Layer(p), true) = (arg, &produced != seen) {
                        let shapes = (&produced[..], &seen[..]);
                        relabel::line_up(&mut out.layers[*p], &mut instance, i, shapes, &mut diags);
                    }
                }
                out.layers.push(instance);
            }
            // Keep indices aligned with the model graph's nodes even for a broken call.
            None => return (out, diags),
        }
    }
    if let Some(output) = graph.output {
        out.output = tensor_ref(output);
    }
    (out, diags)
}

/// `path` (as written in a `.wse` file) resolved against the folder of `file`.
pub fn resolve_path(file: &Path, path: &str) -> PathBuf {
    match file.parent() {
        Some(dir) => dir.join(path),
        None => PathBuf::from(path),
    }
}

fn tensor_ref(value: ValueRef) -> TensorRef {
    match value {
        ValueRef::Input(i) => TensorRef::Input(i),
        ValueRef::Param(i) => TensorRef::Param(i),
        ValueRef::Node(i) => TensorRef::Layer(i),
    }
}

/// The concrete shape of a tensor of type `ty` for `batch` samples (`None` while a feature
/// dimension is unknown).
fn seen_shape(ty: &wsel_sema::ty::TensorType, batch: u64) -> Option<Vec<u64>> {
    ty.dims
        .iter()
        .enumerate()
        .map(|(i, d)| match d {
            Dim::Var(_) if i == 0 => Some(batch),
            Dim::Known(n) => Some(*n),
            Dim::Var(_) | Dim::Expr(_) => None,
        })
        .collect()
}

/// A graph rebuilt from another with layers inserted between the old ones (the parked and the
/// relaid graph): the new graph so far, and where each old layer's result lies in it.
struct Inserting {
    out: LayerGraph,
    now: Vec<usize>,
}

impl Inserting {
    fn new(from: &LayerGraph) -> Inserting {
        Inserting {
            out: LayerGraph {
                layers: Vec::new(),
                ..from.clone()
            },
            now: Vec::with_capacity(from.layers.len()),
        }
    }

    /// The old graph's tensor `t` in the new one.
    fn moved(&self, t: TensorRef) -> TensorRef {
        match t {
            TensorRef::Layer(p) => TensorRef::Layer(self.now[p]),
            other => other,
        }
    }

    /// Appends an inserted layer; its index.
    fn insert(&mut self, layer: wsel_ir::graph::LayerInstance) -> usize {
        self.out.layers.push(layer);
        self.out.layers.len() - 1
    }

    /// Appends the old graph's next layer, whose arguments already name the new graph's.
    fn keep(&mut self, layer: wsel_ir::graph::LayerInstance) {
        let at = self.insert(layer);
        self.now.push(at);
    }

    /// The new graph, its result the old one's `output`.
    fn finish(mut self, output: TensorRef) -> LayerGraph {
        self.out.output = self.moved(output);
        self.out
    }
}

fn shape_of(graph: &LayerGraph, tensor: TensorRef) -> Vec<u64> {
    match tensor {
        TensorRef::Input(i) => graph.inputs.get(i).map(|t| t.shape.clone()),
        TensorRef::Param(i) => graph.params.get(i).map(|p| p.tensor.shape.clone()),
        TensorRef::Layer(i) => graph.layers.get(i).map(|l| l.output_shape.clone()),
    }
    .unwrap_or_default()
}

//! The two programs of pipelined training (`docs/language.md` §11.2): a model whose branches
//! join at layers of several inputs, with residual blocks ([`super::pipelined_shape`]; the
//! calls of layers with a `train as` clause taken apart first, [`super::pipelined_train_as`]),
//! as a
//! *forward* graph and a *backward* graph that run one after the other on one placement,
//! every step.
//!
//! - The forward graph: the model's input and the targets; every layer `L` of the model
//!   replaced by `L_train` (its forward, keeping in SRAM what its backward needs), found in
//!   the module that defines `L`, with the relays and keeps of [`super::pipelined_branches`];
//!   then the loss's `F_train` of `std.loss`, whose result (the batch's mean loss) is the
//!   graph's.
//! - The backward graph: the targets; `F_train_back` (the gradient of the loss), then, for
//!   every forward layer from the last to the first, the sum of its result's gradients and
//!   its own gradient layers; the result is the first layer's input gradient. A result's
//!   gradients: the one of its first reader; through a residual block `add(h, f(h))`'s skip,
//!   added by the end's `add_train_back(dy, dr)` at the block's fork between `h`'s region and
//!   its first reader's ([`PipelinedTrain::fork_of`]), else on `add`'s region (a block inside
//!   it from `h` too: on its own `add`'s region, after the outer block's sum); and each later
//!   reading's, added by `gradient_sum_train_back` on its relay's region. A layer of one input
//!   gives `L_train_back(dy, params)`; a pair (`matmul_qk`, `pack_qkv`) `L_train_back_<input>(dy)`
//!   for every input but the last on the region of the next input's keep (a relay when it reads
//!   nothing kept, [`super::pipelined_keeps`]), then the last's
//!   `L_train_back_<last>(dy, params)` on its own; a block's end passes
//!   dy to both inputs. A backward layer's scalar inputs are the optimizer's settings, by
//!   name (`lr`, `momentum`, ...), and for any other name the forward call's scalar or
//!   dimension variable of that name (attention's `heads`, `N`); the loss's `F_train` and
//!   `F_train_back` take theirs (`over`: the samples of the mean) from the same settings.
//!
//! A call reading a result through a `reshape` (`docs/language.md` §7.1) takes it in the
//! shape it sees, in both graphs (its `L_train_back` its `dy` in its own result's shape), and
//! the edge's parts are lined up as the model graph's are (`super::relabel::line_up`).
//!
//! The backward graph's layer `k` runs on the region of forward layer [`PipelinedTrain::
//! region_of`]`[k]` (or at a block's fork); the driver carries SRAM between the two by array
//! name.

use std::path::Path;

use wsel_ir::graph::{CValue, LayerGraph, LayerInstance, SourceSpan, TensorDecl, TensorRef};
use wsel_sema::analysis::ModelNode;
use wsel_sema::ty::Value;
use wsel_sema::{Db, Diagnostic, ItemId, ItemKind, Location, check_model, layer_signature};

use super::instance::{CallArgs, lower_instance};
use super::pipelined_branches::{Node, branched};
use super::pipelined_keeps::keeps;
use super::pipelined_shape::{Role, roles};
use super::pipelined_train_as::{Unfused, unfused};
use super::staging::RESIDENT;
use super::training::{LOSS_MODULE, TARGETS};
use super::{find_item, settings, shape_of};
use crate::diagnostics;

/// The forward and backward graphs of pipelined training.
#[derive(Debug, Clone)]
pub struct PipelinedTrain {
    /// Inputs: the model's, then the targets. Layers: `L_train` per model layer, then the
    /// loss's `F_train` (the output).
    pub forward: LayerGraph,
    /// Inputs: the targets. Layers: `F_train_back`, then `L_train_back` from the last model
    /// layer to the first, a residual block's end after its branch (the output: the first
    /// layer's input gradient).
    pub backward: LayerGraph,
    /// For every backward layer, the forward layer whose region it runs on.
    pub region_of: Vec<usize>,
    /// For every backward layer that is a residual block's sum, the layer `p` whose result
    /// the block reads twice and the branch's first layer: the sum runs at the fork, between
    /// their regions, when the placement leaves a free line there (`wsel_map::Seat::Fork`).
    pub fork_of: Vec<Option<(usize, usize)>>,
    /// For every forward layer, the model layer it stands for (a relay or keep the compiler
    /// put before a layer: that layer; the loss: the model's layer count).
    pub model_of: Vec<usize>,
}

/// The pipelined-training graphs of `model`, lowered as `graph`, with the loss `loss` of
/// `std.loss` (named at `loss_at`) and the optimizer's settings `optimizer` (given to every
/// backward layer and to the loss's two layers that declare a scalar input of that name; one
/// it does not give takes its default).
pub fn pipelined_training_graphs(
    db: &dyn Db,
    model: ItemId<'_>,
    graph: &LayerGraph,
    loss: &str,
    loss_at: Location,
    optimizer: &[(String, Value)],
) -> Result<PipelinedTrain, Vec<Diagnostic>> {
    if find_item(db, Path::new(LOSS_MODULE), ItemKind::Layer, loss).is_none() {
        return Err(vec![diagnostics::unknown_loss(loss_at, loss)]);
    }
    let nodes = &check_model(db, model).graph.nodes;
    let unfused = unfused(db, graph, nodes)?;
    let loss = (loss, loss_at);
    trained(db, nodes, &unfused, graph.layers.len(), loss, optimizer)
        .map_err(|diags| unfused.explained(diags))
}

/// [`pipelined_training_graphs`] of the model graph `unfused` (of `model_layers` layers before
/// its `train as` clauses were applied), whose calls are `nodes`.
fn trained(
    db: &dyn Db,
    nodes: &[ModelNode],
    unfused: &Unfused,
    model_layers: usize,
    (loss, loss_at): (&str, Location),
    optimizer: &[(String, Value)],
) -> Result<PipelinedTrain, Vec<Diagnostic>> {
    // The module of every layer: the model's call's, a clause's layer's, or std.resident's
    // for a relay the compiler inserted (`relayed_graph`, [`branched`]), which no call of the
    // model names.
    let node_of = |layer: &LayerInstance| {
        nodes
            .iter()
            .find(|n| n.layer == layer.layer && n.span == layer.call.span)
    };
    let files_of = |graph: &LayerGraph| -> Vec<std::path::PathBuf> {
        graph
            .layers
            .iter()
            .map(|layer| match node_of(layer) {
                Some(n) => n.layer_file.clone(),
                None => unfused
                    .module_of(layer)
                    .cloned()
                    .unwrap_or_else(|| RESIDENT.into()),
            })
            .collect()
    };
    let graph = &unfused.graph;
    let model_files = files_of(graph);
    let paired = |l: usize| {
        let layer = &graph.layers[l];
        let mut named = layer.args.iter().zip(&layer.arg_names);
        let first = named.find(|(a, _)| !matches!(a, TensorRef::Param(_)));
        first.is_some_and(|(_, name)| {
            let name = format!("{}_train_back_{name}", layer.layer);
            find_item(db, &model_files[l], ItemKind::Layer, &name).is_some()
        })
    };
    let roles = roles(graph, &paired, &located)?;
    let keeps = |r: usize, i: usize| keeps(db, &model_files[r], &graph.layers[r], i);
    let branched = branched(db, graph, &roles, &keeps)?;
    let graph = &branched.graph;
    let files = files_of(graph);
    // The shapes each layer's call sees its arguments in (through a `reshape`, §7.1).
    let seen = |layer: &LayerInstance| -> Vec<Vec<u64>> {
        let batch = layer.output_shape.first().copied().unwrap_or(1);
        let types = node_of(layer)
            .map(|n| n.arg_types.as_slice())
            .unwrap_or_default();
        layer
            .args
            .iter()
            .enumerate()
            .map(|(i, a)| {
                types
                    .get(i)
                    .and_then(|ty| super::seen_shape(ty, batch))
                    .unwrap_or_else(|| shape_of(graph, *a))
            })
            .collect()
    };
    let variant = |l: usize, suffix: &str| -> Result<ItemId<'_>, Vec<Diagnostic>> {
        let layer = &graph.layers[l];
        let name = format!("{}{suffix}", layer.layer);
        let file = files.get(l).cloned().unwrap_or_default();
        find_item(db, &file, ItemKind::Layer, &name).ok_or_else(|| {
            vec![diagnostics::no_pipelined_training(
                located(&layer.call),
                &layer.layer,
                &name,
            )]
        })
    };
    let loss_variant = |suffix: &str| -> Result<ItemId<'_>, Vec<Diagnostic>> {
        let name = format!("{loss}{suffix}");
        find_item(db, Path::new(LOSS_MODULE), ItemKind::Layer, &name).ok_or_else(|| {
            vec![diagnostics::no_pipelined_training(
                loss_at.clone(),
                loss,
                &name,
            )]
        })
    };
    let result = graph.output;
    let result_shape = shape_of(graph, result);
    let last_call = graph
        .layers
        .last()
        .map(|l| l.call.clone())
        .ok_or_else(Vec::new)?;
    let targets = TensorDecl {
        name: TARGETS.to_string(),
        elem: wsel_ir::kernel::ScalarTy::F32,
        shape: result_shape,
        span: last_call.clone(),
    };

    // Forward: the model's layers as `L_train`, then `F_train`.
    let mut forward = LayerGraph {
        layers: Vec::new(),
        ..graph.clone()
    };
    forward.inputs.push(targets.clone());
    for (l, layer) in graph.layers.iter().enumerate() {
        let item = variant(l, "_train")?;
        let file = files.get(l).cloned().unwrap_or_default();
        if let Some(fwd) = find_item(db, &file, ItemKind::Layer, &layer.layer) {
            settings::check_kept(db, fwd, &layer.scalars, &[item], &located(&layer.call))?;
        }
        let scalars = values(&layer.scalars);
        let args = (layer.args.clone(), seen(layer));
        let instance = push_relabelled(db, &mut forward, item, &layer.call, args, &scalars)?;
        forward.layers.push(instance);
    }
    let t = TensorRef::Input(forward.inputs.len() - 1);
    let item = loss_variant("_train")?;
    let scalars = given(db, item, optimizer);
    let instance = push_call(db, &forward, item, &last_call, vec![result, t], &scalars)?;
    forward.layers.push(instance);
    forward.output = TensorRef::Layer(forward.layers.len() - 1);

    // Backward: `F_train_back`, then every layer's backward layers from the last to the first.
    let backward = LayerGraph {
        inputs: vec![targets],
        layers: Vec::new(),
        ..graph.clone()
    };
    let mut back = Backward {
        db,
        graph,
        nodes: &branched.nodes,
        optimizer,
        out: backward,
        region_of: Vec::new(),
        fork_of: Vec::new(),
        grads: vec![Vec::new(); graph.layers.len()],
    };
    let item = loss_variant("_train_back")?;
    let targets_in = vec![TensorRef::Input(0)];
    let scalars = given(db, item, optimizer);
    let loss = push_call(db, &back.out, item, &last_call, targets_in, &scalars)?;
    let at_loss = graph.layers.len();
    let dy = back.push(loss, at_loss, None);
    back.grads[at_loss - 1].push(Grad::direct(dy, at_loss));
    for l in (0..graph.layers.len()).rev() {
        back.layer(l, &variant)?;
    }
    let mut backward = back.out;
    backward.output = TensorRef::Layer(backward.layers.len() - 1);
    let model_of = model_of(&branched.nodes)
        .into_iter()
        .map(|m| unfused.origin.get(m).copied().unwrap_or(model_layers))
        .collect();
    Ok(PipelinedTrain {
        forward,
        backward,
        region_of: back.region_of,
        fork_of: back.fork_of,
        model_of,
    })
}

/// For every layer of the forward graph, the model layer it stands for: itself, or for a relay
/// or keep the layer after it (its reader); the loss the model's layer count.
fn model_of(nodes: &[Node]) -> Vec<usize> {
    let mut next = nodes
        .iter()
        .filter(|n| matches!(n, Node::Model(..)))
        .count();
    let mut out = vec![next; nodes.len() + 1];
    for (l, node) in nodes.iter().enumerate().rev() {
        if let Node::Model(m, _) = node {
            next = *m;
        }
        out[l] = next;
    }
    out
}

/// A gradient of a forward layer's result: the backward layer giving it, how it reached the
/// result, and the reader whose gradient it is.
#[derive(Debug, Clone, Copy)]
struct Grad {
    tensor: TensorRef,
    via: Via,
    reader: usize,
}

/// A forward layer's pipelined-training variant (`L_train_back`, ...) by its suffix.
type Variant<'a, 'db> = &'a dyn Fn(usize, &str) -> Result<ItemId<'db>, Vec<Diagnostic>>;

/// How a gradient reaches a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    /// From the result's one reader that reads it directly.
    Direct,
    /// Through a residual block's skip, to be summed by the block's end (`add_train_back`).
    Skip,
    /// Through the relay before the reading: summed on the relay's region.
    Relay,
}

impl Grad {
    fn direct(tensor: TensorRef, reader: usize) -> Grad {
        Grad {
            tensor,
            via: Via::Direct,
            reader,
        }
    }
}

/// The backward graph as it is built, from the last forward layer to the first.
struct Backward<'a, 'db> {
    db: &'db dyn Db,
    /// The forward graph's model layers with the relays and keeps.
    graph: &'a LayerGraph,
    nodes: &'a [Node],
    optimizer: &'a [(String, Value)],
    out: LayerGraph,
    region_of: Vec<usize>,
    fork_of: Vec<Option<(usize, usize)>>,
    /// Per forward layer, the gradients of its result found so far.
    grads: Vec<Vec<Grad>>,
}

impl<'db> Backward<'_, 'db> {
    /// Pushes `instance`, run on forward layer `region`'s region (or at the fork `fork`); its
    /// result.
    fn push(
        &mut self,
        instance: LayerInstance,
        region: usize,
        fork: Option<(usize, usize)>,
    ) -> TensorRef {
        self.out.layers.push(instance);
        self.region_of.push(region);
        self.fork_of.push(fork);
        TensorRef::Layer(self.out.layers.len() - 1)
    }

    /// The backward layers of forward layer `l`: its gradients summed, then its own.
    fn layer(&mut self, l: usize, variant: Variant<'_, 'db>) -> Result<(), Vec<Diagnostic>> {
        match self.nodes[l] {
            Node::Relay | Node::Keep => {
                let Some(TensorRef::Layer(p)) = self.graph.layers[l].activations().next() else {
                    return Ok(());
                };
                let grad = self.grads[l].first().copied().ok_or_else(Vec::new)?;
                let via = if self.nodes[l] == Node::Relay {
                    Via::Relay
                } else {
                    Via::Direct
                };
                self.grads[p].push(Grad {
                    via,
                    reader: l,
                    ..grad
                });
                Ok(())
            }
            Node::Model(_, role) => {
                let dy = self.summed(l, variant)?;
                self.model_layer(l, role, dy, variant)
            }
        }
    }

    /// The gradient of forward layer `l`'s result: its readers' gradients, summed.
    fn summed(
        &mut self,
        l: usize,
        variant: Variant<'_, 'db>,
    ) -> Result<TensorRef, Vec<Diagnostic>> {
        let grads = std::mem::take(&mut self.grads[l]);
        let direct = grads.iter().find(|g| g.via == Via::Direct);
        // The skips' gradients, the outermost block's first.
        let mut skips: Vec<&Grad> = grads.iter().filter(|g| g.via == Via::Skip).collect();
        skips.sort_by_key(|g| std::cmp::Reverse(g.reader));
        // A "block" whose start no branch reads (`add(f(h), g(h))` closes on `f(h)`): the
        // skip's gradient is the result's whole gradient, with nothing to add it to.
        let (direct, skips) = match direct {
            Some(direct) => (direct, &skips[..]),
            None => skips
                .split_first()
                .map(|(first, rest)| (*first, rest))
                .ok_or_else(Vec::new)?,
        };
        let mut acc = self.skip_sums(l, (direct.tensor, direct.reader), skips, variant)?;
        let mut relayed: Vec<&Grad> = grads.iter().filter(|g| g.via == Via::Relay).collect();
        relayed.sort_by_key(|g| g.reader);
        for grad in relayed {
            let call = self.graph.layers[grad.reader].call.clone();
            let item = find_item(
                self.db,
                Path::new(LOSS_MODULE),
                ItemKind::Layer,
                GRADIENT_SUM_TRAIN,
            )
            .ok_or_else(|| {
                vec![diagnostics::no_pipelined_training(
                    located(&call),
                    "gradient_sum",
                    GRADIENT_SUM_TRAIN,
                )]
            })?;
            let args = vec![acc, grad.tensor];
            let instance = push_call(self.db, &self.out, item, &call, args, &[])?;
            acc = self.push(instance, grad.reader, None);
        }
        Ok(acc)
    }

    /// `dy`, the gradient of forward layer `l`'s result from its reader `first`, plus the
    /// skips' gradients `skips` (the outermost block's first), each added by its block's end:
    /// the first at the block's fork, any other (a block inside it from the same result) on
    /// its end's region.
    fn skip_sums(
        &mut self,
        l: usize,
        (dy, first): (TensorRef, usize),
        skips: &[&Grad],
        variant: Variant<'_, 'db>,
    ) -> Result<TensorRef, Vec<Diagnostic>> {
        let mut acc = dy;
        for (k, skip) in skips.iter().enumerate() {
            let end = skip.reader;
            let item = variant(end, "_train_back")?;
            let call = self.graph.layers[end].call.clone();
            let scalars = given(self.db, item, self.optimizer);
            let args = vec![skip.tensor, acc];
            let instance = push_call(self.db, &self.out, item, &call, args, &scalars)?;
            let fork = (k == 0 && first < end).then_some((l, first));
            acc = self.push(instance, end, fork);
        }
        Ok(acc)
    }

    /// Model layer `l`'s backward layers, in `role`, fed its gradient `dy`; each input's
    /// gradient noted for its producer.
    fn model_layer(
        &mut self,
        l: usize,
        role: Role,
        dy: TensorRef,
        variant: Variant<'_, 'db>,
    ) -> Result<(), Vec<Diagnostic>> {
        let inputs: Vec<TensorRef> = self.graph.layers[l].activations().collect();
        let note = |this: &mut Self, at: TensorRef, grad: Grad| {
            if let TensorRef::Layer(p) = at {
                this.grads[p].push(grad);
            }
        };
        match role {
            Role::BlockEnd { .. } => {
                // dy flows into the branch unchanged, and to the block's start through the skip.
                let before = TensorRef::Layer(l - 1);
                for &at in &inputs {
                    let via = if at == before { Via::Direct } else { Via::Skip };
                    note(
                        self,
                        at,
                        Grad {
                            tensor: dy,
                            via,
                            reader: l,
                        },
                    );
                }
            }
            Role::Single => {
                let dx = self.own_back(l, "_train_back", dy, true, l, variant)?;
                note(self, inputs[0], Grad::direct(dx, l));
            }
            Role::Pair => {
                // Every input's gradient but the last's on the region of the keep of the next
                // input (which holds that input: `matmul_qk`'s dq needs k), the last's on the
                // layer's own (its `L_train` keeps the first).
                let names = self.input_names(l);
                for (i, &input) in inputs.iter().enumerate() {
                    let (region, last) = match inputs.get(i + 1) {
                        Some(&TensorRef::Layer(keep)) => (keep, false),
                        Some(_) => return Ok(()),
                        None => (l, true),
                    };
                    let suffix = format!("_train_back_{}", names[i]);
                    let dx = self.own_back(l, &suffix, dy, last, region, variant)?;
                    note(self, input, Grad::direct(dx, l));
                }
            }
        }
        Ok(())
    }

    /// The names of model layer `l`'s activation inputs.
    fn input_names(&self, l: usize) -> Vec<String> {
        let layer = &self.graph.layers[l];
        layer
            .args
            .iter()
            .zip(&layer.arg_names)
            .filter(|(a, _)| !matches!(a, TensorRef::Param(_)))
            .map(|(_, n)| n.clone())
            .collect()
    }

    /// Layer `l`'s backward layer `L<suffix>`, fed `dy` (and the layer's parameters when
    /// `params`), on forward layer `region`'s region; its result.
    fn own_back(
        &mut self,
        l: usize,
        suffix: &str,
        dy: TensorRef,
        params: bool,
        region: usize,
        variant: Variant<'_, 'db>,
    ) -> Result<TensorRef, Vec<Diagnostic>> {
        let graph = self.graph;
        let layer = &graph.layers[l];
        let item = variant(l, suffix)?;
        let own = layer.params().filter(|_| params);
        let args: Vec<TensorRef> = std::iter::once(dy).chain(own).collect();
        let shapes = args.iter().enumerate().map(|(i, a)| match i {
            0 => layer.output_shape.clone(),
            _ => shape_of(&self.out, *a),
        });
        let args = (args.clone(), shapes.collect());
        let mut call = values(&layer.scalars);
        call.extend(dims(layer));
        let scalars = given_back(self.db, item, self.optimizer, &call);
        let span = layer.call.clone();
        let instance = push_relabelled(self.db, &mut self.out, item, &span, args, &scalars)?;
        Ok(self.push(instance, region, None))
    }
}

/// A forward call's dimension variables (`N`), as scalars: a backward layer whose result's
/// size its inputs do not give (`matmul_qk_train_back_q`'s `dq: f32[B, N]`) takes them by name.
fn dims(layer: &LayerInstance) -> Vec<(String, Value)> {
    layer
        .dims
        .iter()
        .map(|(name, v)| (name.clone(), Value::Int(i128::from(*v))))
        .collect()
}

/// The layer of `std.loss` that adds two gradients of one result in pipelined training.
pub const GRADIENT_SUM_TRAIN: &str = "gradient_sum_train_back";

/// The place of a source span, for diagnostics.
fn located(span: &SourceSpan) -> Location {
    Location {
        file: span.file.clone(),
        span: span.span.clone(),
    }
}

/// The call of `item` with the tensors `args.0`, each seen in the shape `args.1` gives, in
/// `graph`, at `call`: an argument its producer makes in another shape (a `reshape`, §7.1) is
/// relabelled, both layers' implementations restricted to region sizes that line up.
fn push_relabelled(
    db: &dyn Db,
    graph: &mut LayerGraph,
    item: ItemId<'_>,
    call: &SourceSpan,
    (args, shapes): (Vec<TensorRef>, Vec<Vec<u64>>),
    scalars: &[(String, Value)],
) -> Result<LayerInstance, Vec<Diagnostic>> {
    let made: Vec<Vec<u64>> = args.iter().map(|a| shape_of(graph, *a)).collect();
    let mut instance = lower_call(db, graph, item, call, args.clone(), &shapes, scalars)?;
    let mut diags = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        if let (TensorRef::Layer(p), true) = (arg, made[i] != shapes[i]) {
            let pair = (&made[i][..], &shapes[i][..]);
            super::relabel::line_up(&mut graph.layers[*p], &mut instance, i, pair, &mut diags);
        }
    }
    if diags.is_empty() {
        Ok(instance)
    } else {
        Err(diags)
    }
}

/// The call of `item` with the tensors `args` in `graph`, at `call`; the
/// lowering's diagnostics when it has any.
pub(super) fn push_call(
    db: &dyn Db,
    graph: &LayerGraph,
    item: ItemId<'_>,
    call: &SourceSpan,
    args: Vec<TensorRef>,
    scalars: &[(String, Value)],
) -> Result<LayerInstance, Vec<Diagnostic>> {
    let shapes: Vec<Vec<u64>> = args.iter().map(|a| shape_of(graph, *a)).collect();
    lower_call(db, graph, item, call, args, &shapes, scalars)
}

/// [`push_call`] with the arguments seen in `shapes`.
fn lower_call(
    db: &dyn Db,
    graph: &LayerGraph,
    item: ItemId<'_>,
    call: &SourceSpan,
    args: Vec<TensorRef>,
    shapes: &[Vec<u64>],
    scalars: &[(String, Value)],
) -> Result<LayerInstance, Vec<Diagnostic>> {
    let sig = layer_signature(db, item);
    let count = graph.layers.iter().filter(|l| l.layer == sig.name).count();
    let name = format!("{}#{}", sig.name, count + 1);
    let call = Location {
        file: call.file.clone(),
        span: call.span.clone(),
    };
    let mut diags = Vec::new();
    let args = CallArgs {
        tensors: args,
        shapes,
        scalars,
    };
    match lower_instance(db, item, name, call, args, &mut diags) {
        Some(instance) if diags.is_empty() => Ok(instance),
        _ => Err(diags),
    }
}

/// The scalar inputs `item` declares, each from `settings` by name, else its default.
pub(super) fn given(
    db: &dyn Db,
    item: ItemId<'_>,
    settings: &[(String, Value)],
) -> Vec<(String, Value)> {
    layer_signature(db, item)
        .scalars
        .iter()
        .filter_map(|s| {
            let given = settings.iter().find(|(name, _)| *name == s.name);
            let value = given.map(|(_, v)| *v).or(s.default)?;
            Some((s.name.clone(), value))
        })
        .collect()
}

/// The training run's settings by the names of backward layers' scalar inputs: such a
/// scalar comes from the settings (or is its default), never from the forward call.
const SETTINGS: [&str; 9] = [
    "lr",
    "momentum",
    "adam",
    "beta1",
    "beta2",
    "eps",
    "deferred",
    "accumulate",
    "over",
];

/// [`given`] for a model layer's `L_train_back`: a scalar input that is none of the
/// [`SETTINGS`] takes the forward call's value of that name (`call`: attention's `heads`),
/// else its default.
fn given_back(
    db: &dyn Db,
    item: ItemId<'_>,
    optimizer: &[(String, Value)],
    call: &[(String, Value)],
) -> Vec<(String, Value)> {
    let own = call
        .iter()
        .filter(|(name, _)| !SETTINGS.contains(&name.as_str()))
        .cloned();
    let settings: Vec<(String, Value)> = optimizer.iter().cloned().chain(own).collect();
    given(db, item, &settings)
}

/// A forward instance's scalar inputs as the values its `L_train` (or, in streaming training,
/// a backward layer) is called with.
pub(super) fn values(scalars: &[(String, CValue)]) -> Vec<(String, Value)> {
    scalars
        .iter()
        .map(|(name, v)| {
            let value = match *v {
                CValue::Int(i) => Value::Int(i128::from(i)),
                CValue::Float(f) => Value::Float(f),
                CValue::Bool(b) => Value::Bool(b),
            };
            (name.clone(), value)
        })
        .collect()
}

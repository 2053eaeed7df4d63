//! The training graph (`docs/language.md` §11): a model's staged graph with, after the forward
//! layers, the targets staged in, the loss layer, and the backward layers in reverse order.
//!
//! The compiler knows no layer by name here either. A layer `L`'s backward is found by a
//! naming rule, in the module that defines `L`: `L_backward` gives the gradient of `L`'s
//! activation input, and `L_grad_P` the gradient of its parameter `P`. A backward layer's
//! inputs are named after what they take: one of `L`'s inputs (`x`, `w`), `L`'s result (`y`),
//! or `d` + the result's name (`dy`, the gradient flowing back into `L`). Its result is named
//! `d` + the input whose gradient it is (`dx`). A loss layer `F(p, t)` of `std.loss` gives the
//! batch's mean loss, and `F_backward(p, t) -> dp` the gradient the backward pass starts from.
//!
//! The graph runs as weight streaming runs (`docs/running.md`): one layer at a time on one
//! region, activations resident in SRAM. The loss layer and the parameter gradient layers send
//! their results out of the fabric (the loss to the host, the gradients to the weight store);
//! every other result stays resident.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use wsel_ir::graph::{CValue, LayerGraph, SourceSpan, TensorDecl, TensorRef};
use wsel_sema::ty::Value;
use wsel_sema::{Db, Diagnostic, ItemId, ItemKind, Location, check_model, layer_signature};

use super::instance::{CallArgs, lower_instance};
use super::pipelined_training::{given, values};
use super::settings;
use super::{find_item, shape_of, staged_graph};
use crate::diagnostics;

/// The `std.loss` module, which every program's file set holds
/// (`wsel_sema::load::ALWAYS_LOADED`).
pub const LOSS_MODULE: &str = "<std>/loss.wse";

/// The layer of `std.loss` that adds two gradients of one activation (at a fan-out).
pub const GRADIENT_SUM: &str = "gradient_sum";

/// The name of the training graph's targets input.
pub const TARGETS: &str = "targets";

/// A training graph and what its layers are for.
#[derive(Debug, Clone)]
pub struct TrainGraph {
    /// Staged inputs (the model's, then the targets), forward layers, loss, backward layers.
    /// `graph.output` is the loss layer.
    pub graph: LayerGraph,
    /// The index of the targets among `graph.inputs`.
    pub targets: usize,
    /// The loss layer (its result, f32[1, 1], leaves the fabric).
    pub loss: usize,
    /// The layers whose results are parameter gradients: (graph layer, model parameter).
    pub grads: Vec<(usize, usize)>,
    /// The number of forward layers (from `stage_in`s to the model's last layer).
    pub forward: usize,
    /// Forward layers run again for the backward pass (`super::recompute`): (the copy's graph
    /// layer, the forward layer it repeats), in graph order; empty when every result a
    /// backward layer reads is kept from the forward pass.
    pub rerun: Vec<(usize, usize)>,
    /// For every layer, the forward layer it runs beside (on whose rows it runs when the
    /// phases take rows of their own, `super::relayout::relaid_training`): a forward layer
    /// itself, the targets' `stage_in` and the loss layers the model's result, and every
    /// backward layer (and gradient sum) the forward layer it differentiates.
    pub beside: Vec<usize>,
}

/// The training graph of `model`, lowered as `graph` (for one batch), with the loss layer
/// `loss` of `std.loss` (`loss_at` is where the loss is named, for diagnostics). The loss is
/// the mean over `over` samples (the loss layers' scalar `over`): 0 for `graph`'s batch, the
/// whole batch's size when `graph` runs a part of it (a micro-batch, a system's share).
pub fn training_graph(
    db: &dyn Db,
    model: ItemId<'_>,
    graph: &LayerGraph,
    loss: &str,
    loss_at: Location,
    over: u64,
) -> Result<TrainGraph, Vec<Diagnostic>> {
    let Some(loss_item) = find_item(db, Path::new(LOSS_MODULE), ItemKind::Layer, loss) else {
        return Err(vec![diagnostics::unknown_loss(loss_at, loss)]);
    };
    let (mut out, mut diags) = staged_graph(db, graph).ok_or_else(Vec::new)?;
    if !diags.is_empty() {
        return Err(diags);
    }
    // Drop `stage_out`: training sends the loss and the gradients out, not the result.
    let stage_out = out.layers.pop().ok_or_else(Vec::new)?;
    let result = stage_out.args[0];
    let inputs = graph.inputs.len();
    let forward = out.layers.len();
    let result_shape = shape_of(&out, result);
    let result_call = stage_out.call.clone();
    let located = |span: &SourceSpan| Location {
        file: span.file.clone(),
        span: span.span.clone(),
    };

    // The targets: an input of the result's shape, staged in like the model's inputs.
    let targets = out.inputs.len();
    out.inputs.push(TensorDecl {
        name: TARGETS.to_string(),
        elem: wsel_ir::kernel::ScalarTy::F32,
        shape: result_shape.clone(),
        span: result_call.clone(),
    });
    let stage_in = find_item(
        db,
        Path::new(super::staging::RESIDENT),
        ItemKind::Layer,
        "stage_in",
    )
    .ok_or_else(Vec::new)?;
    let name = format!("stage_in#{}", targets + 1);
    let args = CallArgs {
        tensors: vec![TensorRef::Input(targets)],
        shapes: std::slice::from_ref(&result_shape),
        scalars: &[],
    };
    let staged_t = lower_instance(db, stage_in, name, located(&result_call), args, &mut diags)
        .ok_or_else(|| diags.clone())?;
    out.layers.push(staged_t);
    let t = TensorRef::Layer(out.layers.len() - 1);

    let mut counters: BTreeMap<String, usize> = BTreeMap::new();
    // A layer of the graph taking `tensors`, each as the shape `seen` gives it (`None`: as it
    // is made); an argument made in another shape (through a `reshape`) is relabelled.
    let mut push = |out: &mut LayerGraph,
                    item: ItemId<'_>,
                    call: &SourceSpan,
                    (tensors, seen): (Vec<TensorRef>, Vec<Option<Vec<u64>>>),
                    scalars: &[(String, Value)],
                    diags: &mut Vec<Diagnostic>|
     -> Option<usize> {
        let sig = layer_signature(db, item);
        let counter = counters.entry(sig.name.clone()).or_insert(0);
        *counter += 1;
        let name = format!("{}#{}", sig.name, counter);
        let made: Vec<Vec<u64>> = tensors.iter().map(|a| shape_of(out, *a)).collect();
        let shapes: Vec<Vec<u64>> = made
            .iter()
            .zip(seen.into_iter().chain(std::iter::repeat(None)))
            .map(|(m, s)| s.unwrap_or_else(|| m.clone()))
            .collect();
        let args = CallArgs {
            tensors: tensors.clone(),
            shapes: &shapes,
            scalars,
        };
        let mut instance = lower_instance(db, item, name, located(call), args, diags)?;
        for (i, tensor) in tensors.iter().enumerate() {
            if let (TensorRef::Layer(p), true) = (tensor, made[i] != shapes[i]) {
                let pair = (&made[i][..], &shapes[i][..]);
                super::relabel::line_up(&mut out.layers[*p], &mut instance, i, pair, diags);
            }
        }
        out.layers.push(instance);
        Some(out.layers.len() - 1)
    };

    // The loss and the gradient it starts the backward pass with.
    let loss_call = result_call.clone();
    let over = [("over".to_string(), Value::Int(i128::from(over)))];
    let loss_layer = push(
        &mut out,
        loss_item,
        &loss_call,
        (vec![result, t], Vec::new()),
        &over,
        &mut diags,
    )
    .ok_or_else(|| diags.clone())?;
    let mut grads_of: HashMap<TensorRef, Vec<TensorRef>> = HashMap::new();
    let loss_sig = layer_signature(db, loss_item);
    let loss_bw_name = format!("{loss}_backward");
    let Some(loss_bw) = find_item(db, Path::new(LOSS_MODULE), ItemKind::Layer, &loss_bw_name)
    else {
        return Err(vec![diagnostics::no_backward(
            located(&loss_call),
            loss,
            &loss_bw_name,
        )]);
    };
    let fwd_names: Vec<String> = loss_sig.inputs.iter().map(|i| i.name.clone()).collect();
    let loss_args = [result, t];
    let bw_sig = layer_signature(db, loss_bw);
    let mut tensors = Vec::new();
    for input in &bw_sig.inputs {
        match fwd_names.iter().position(|n| *n == input.name) {
            Some(k) => tensors.push(loss_args[k]),
            None => {
                return Err(vec![diagnostics::backward_input_unknown(
                    located(&loss_call),
                    &loss_bw_name,
                    &input.name,
                )]);
            }
        }
    }
    let l = push(
        &mut out,
        loss_bw,
        &loss_call,
        (tensors, Vec::new()),
        &over,
        &mut diags,
    )
    .ok_or_else(|| diags.clone())?;
    grads_of.insert(result, vec![TensorRef::Layer(l)]);

    // The backward pass, last forward layer first. Every consumer of a layer's result comes
    // after it, so when a layer is reached all the gradients of its result are known; two or
    // more (a fan-out) are added by `gradient_sum` layers first.
    let files = layer_files(db, model);
    let seen = seen_shapes(db, model, result_shape.first().copied().unwrap_or(1));
    let sum_item = find_item(db, Path::new(LOSS_MODULE), ItemKind::Layer, GRADIENT_SUM)
        .ok_or_else(Vec::new)?;
    let mut grads = Vec::new();
    let model_result = match result {
        TensorRef::Layer(r) => r,
        _ => forward.saturating_sub(1),
    };
    let mut beside: Vec<usize> = (0..forward).collect();
    beside.resize(out.layers.len(), model_result);
    for f in (inputs..forward).rev() {
        let fwd = out.layers[f].clone();
        let Some(parts) = grads_of.remove(&TensorRef::Layer(f)) else {
            continue;
        };
        let mut dy = parts[0];
        for &other in &parts[1..] {
            let first = Some(shape_of(&out, dy));
            let s = push(
                &mut out,
                sum_item,
                &fwd.call,
                (vec![dy, other], vec![None, first]),
                &[],
                &mut diags,
            )
            .ok_or_else(|| diags.clone())?;
            dy = TensorRef::Layer(s);
        }
        let file = files.get(f - inputs).cloned().unwrap_or_default();
        let call = located(&fwd.call);
        let lookup = |name: &str| find_item(db, &file, ItemKind::Layer, name);
        let dy_name = format!("d{}", fwd.output_name);
        let fwd_seen = seen.get(f - inputs).cloned().unwrap_or_default();
        let bind = |item: ItemId<'_>, bw_name: &str| -> Result<Bound, Vec<Diagnostic>> {
            let sig = layer_signature(db, item);
            let output = Some(fwd.output_shape.clone());
            let (tensors, shapes) = sig
                .inputs
                .iter()
                .map(|input| {
                    if input.name == dy_name {
                        Ok((dy, output.clone()))
                    } else if input.name == fwd.output_name {
                        Ok((TensorRef::Layer(f), output.clone()))
                    } else if let Some(k) = fwd.arg_names.iter().position(|n| *n == input.name) {
                        Ok((fwd.args[k], fwd_seen.get(k).cloned().flatten()))
                    } else {
                        Err(vec![diagnostics::backward_input_unknown(
                            call.clone(),
                            bw_name,
                            &input.name,
                        )])
                    }
                })
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .unzip();
            Ok((tensors, shapes))
        };
        // The activation inputs the layer declares (a model input among them still counts:
        // `add(x, f(x))` asks for `add_backward_b` alone).
        let activations = fwd.activations().count();
        let mut takers = Vec::new();
        for (arg, arg_name) in fwd.args.iter().zip(&fwd.arg_names) {
            match *arg {
                TensorRef::Param(p) => {
                    let grad_name = format!("{}_grad_{arg_name}", fwd.layer);
                    let Some(item) = lookup(&grad_name) else {
                        return Err(vec![diagnostics::no_gradient(
                            call.clone(),
                            &fwd.layer,
                            arg_name,
                            &grad_name,
                        )]);
                    };
                    takers.push(item);
                    let tensors = bind(item, &grad_name)?;
                    let scalars = scalars_for(db, item, &fwd.scalars);
                    let g = push(&mut out, item, &fwd.call, tensors, &scalars, &mut diags)
                        .ok_or_else(|| diags.clone())?;
                    grads.push((g, p));
                }
                // A model input (its `stage_in`) needs no gradient.
                TensorRef::Layer(j) if j >= inputs => {
                    let bw_name = backward_name(&fwd.layer, arg_name, activations);
                    let Some(item) = lookup(&bw_name) else {
                        return Err(vec![missing_backward(
                            call.clone(),
                            &fwd.layer,
                            &bw_name,
                            lookup(&format!("{}_backward", fwd.layer)).is_some(),
                        )]);
                    };
                    takers.push(item);
                    let tensors = bind(item, &bw_name)?;
                    let scalars = scalars_for(db, item, &fwd.scalars);
                    let g = push(&mut out, item, &fwd.call, tensors, &scalars, &mut diags)
                        .ok_or_else(|| diags.clone())?;
                    grads_of.entry(*arg).or_default().push(TensorRef::Layer(g));
                }
                _ => {}
            }
        }
        if let Some(item) = lookup(&fwd.layer) {
            settings::check_kept(db, item, &fwd.scalars, &takers, &call)?;
        }
        beside.resize(out.layers.len(), f);
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    out.output = TensorRef::Layer(loss_layer);
    Ok(TrainGraph {
        graph: out,
        targets,
        loss: loss_layer,
        grads,
        forward,
        rerun: Vec::new(),
        beside,
    })
}

/// The scalar inputs of the backward layer `item`: each the value the forward call gave the
/// scalar of the same name (`eps`, `heads`, `context`, `causal`), else its default.
fn scalars_for(
    db: &dyn Db,
    item: ItemId<'_>,
    forward: &[(String, CValue)],
) -> Vec<(String, Value)> {
    given(db, item, &values(forward))
}

/// The backward layer giving the gradient of `layer`'s activation input `input`: `L_backward`
/// when the layer takes one activation, `L_backward_<input>` when it takes several.
fn backward_name(layer: &str, input: &str, activations: usize) -> String {
    if activations > 1 {
        format!("{layer}_backward_{input}")
    } else {
        format!("{layer}_backward")
    }
}

/// The diagnostic for a missing backward layer: E1105 when the layer has the one-input
/// `L_backward` but takes several activations, E1102 otherwise.
fn missing_backward(call: Location, layer: &str, wanted: &str, has_single: bool) -> Diagnostic {
    if has_single {
        diagnostics::backward_per_input(call, layer, wanted)
    } else {
        diagnostics::no_backward(call, layer, wanted)
    }
}

/// A backward layer's inputs, each with the shape its forward call saw it in (`None`: as
/// made).
type Bound = (Vec<TensorRef>, Vec<Option<Vec<u64>>>);

/// The shapes each call of `model` sees its arguments in (through a `reshape`, not the
/// producer's), in graph order, the batch `batch`.
fn seen_shapes(db: &dyn Db, model: ItemId<'_>, batch: u64) -> Vec<Vec<Option<Vec<u64>>>> {
    check_model(db, model)
        .graph
        .nodes
        .iter()
        .map(|n| {
            n.arg_types
                .iter()
                .map(|ty| super::seen_shape(ty, batch))
                .collect()
        })
        .collect()
}

/// The file defining the layer of each call of `model`, in graph order.
fn layer_files(db: &dyn Db, model: ItemId<'_>) -> Vec<PathBuf> {
    check_model(db, model)
        .graph
        .nodes
        .iter()
        .map(|n| n.layer_file.clone())
        .collect()
}

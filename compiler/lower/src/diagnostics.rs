//! E05xx: what lowering finds that the checker cannot see, because it needs the concrete shapes
//! of one batch size or the arguments the mapper chose. One constructor per code, each with a
//! doc comment saying when it fires; `CODES` lists them for `crate::codes()`.

use wsel_sema::{Diagnostic, Location};

use crate::error::LowerError;

/// Every code this crate reports, with a one-line summary.
pub const CODES: &[(&str, &str)] = &[
    (
        "E0457",
        "a layer splits a reshaped tensor other than along its first axis",
    ),
    (
        "E0501",
        "cost entry has no value at the shapes of a layer call",
    ),
    (
        "E0502",
        "kernel argument has no value at the shapes of a layer call",
    ),
    (
        "E0503",
        "fixed region size has no value or is zero at the shapes of a layer call",
    ),
    (
        "E0504",
        "model input dimension other than the sample dimension is not a constant",
    ),
    (
        "E0505",
        "kernel instance cannot be lowered with the arguments chosen for it",
    ),
    (
        "E0814",
        "a switch's start position cannot be computed before the run",
    ),
    (
        "E1101",
        "training names a loss that std.loss does not define",
    ),
    (
        "E1102",
        "a layer in the training graph has no backward layer",
    ),
    ("E1103", "a layer's parameter has no gradient layer"),
    (
        "E1104",
        "a backward layer takes an input the forward layer does not have",
    ),
    (
        "E1105",
        "a layer takes several activations but has one `L_backward`, not one per input",
    ),
    (
        "E1114",
        "a layer used in pipelined training has no `L_train` or `L_train_back` layer",
    ),
    (
        "E1115",
        "pipelined training takes a chain of layers with residual blocks, and this model is not one",
    ),
    (
        "E1116",
        "a call sets a scalar input that no layer standing in for it in training takes",
    ),
];

/// E1101: the `loss` of a training run names no layer of `std.loss`.
pub fn unknown_loss(at: Location, loss: &str) -> Diagnostic {
    Diagnostic::error(
        "E1101",
        format!("`{loss}` is not a loss layer of std.loss"),
        at,
        "the loss would apply to this result",
    )
    .with_help(
        "the losses are `cross_entropy` (a probability vector against one-hot targets) and `mse`",
    )
}

/// E1102: a layer whose input needs a gradient (or a loss) has no `<layer>_backward` layer in
/// the module that defines it: it cannot be trained through.
pub fn no_backward(call: Location, layer: &str, backward: &str) -> Diagnostic {
    Diagnostic::error(
        "E1102",
        format!("`{layer}` has no backward layer, so training cannot pass gradients through it"),
        call,
        "used in training here",
    )
    .with_help(format!(
        "define a layer `{backward}` beside `{layer}` (docs/language.md §11)"
    ))
}

/// E1103: a layer called with a weight has no `<layer>_grad_<param>` layer for it.
pub fn no_gradient(call: Location, layer: &str, param: &str, grad: &str) -> Diagnostic {
    Diagnostic::error(
        "E1103",
        format!("`{layer}` has no gradient layer for its parameter `{param}`"),
        call,
        "trained here",
    )
    .with_help(format!(
        "define a layer `{grad}` beside `{layer}` (docs/language.md §11)"
    ))
}

/// E1104: a backward layer's input is named after nothing the forward call has (its inputs,
/// its result, or `d` + its result).
pub fn backward_input_unknown(call: Location, backward: &str, input: &str) -> Diagnostic {
    Diagnostic::error(
        "E1104",
        format!(
            "the backward layer `{backward}` takes `{input}`, which is neither an input of the \
             forward layer, its result, nor the gradient of its result"
        ),
        call,
        "differentiated here",
    )
}

/// E1105: a layer takes several activations and has the one-input `L_backward`, but not the
/// per-input backward layer (`L_backward_<input>`) the training graph needs for each of them.
pub fn backward_per_input(call: Location, layer: &str, wanted: &str) -> Diagnostic {
    Diagnostic::error(
        "E1105",
        format!(
            "`{layer}` takes more than one activation, so each needs its own backward layer; `{layer}_backward` gives only one gradient"
        ),
        call,
        "differentiated here",
    )
    .with_help(format!(
        "define a layer `{wanted}` beside `{layer}`, one `{layer}_backward_<input>` per activation input (docs/language.md §11)"
    ))
}

/// E0501: a cost entry of a layer overflows, is negative or divides by zero when evaluated at
/// the shapes of one call (the checker sees only the symbolic dimensions).
pub fn cost_failed(call: Location, entry: &str, reason: &str, def: Location) -> Diagnostic {
    Diagnostic::error(
        "E0501",
        format!("the cost entry `{entry}` has no value at the shapes of this call: {reason}"),
        call,
        "in this call",
    )
    .with_secondary(def, format!("`{entry}` is computed here"))
}

/// E0502: a kernel argument that does not depend on the region size overflows, divides by
/// zero or does not fit its parameter's type at the shapes of one call.
pub fn kernel_arg_failed(call: Location, param: &str, reason: &str, def: Location) -> Diagnostic {
    Diagnostic::error(
        "E0502",
        format!("the kernel argument `{param}` has no value at the shapes of this call: {reason}"),
        call,
        "in this call",
    )
    .with_secondary(def, format!("`{param}` is given here"))
}

/// E0814: a switched port's `start` is not an expression the mapper can evaluate per PE:
/// it must be built from the kernel's parameters and constants, `pe.row` and `pe.col`
/// (`region.rows` and `region.cols` are not available there: pass them as parameters).
pub fn switch_start_failed(call: Location, reason: &str, def: Location) -> Diagnostic {
    Diagnostic::error(
        "E0814",
        format!("the switch's start position cannot be computed before the run: {reason}"),
        call,
        "in this call",
    )
    .with_secondary(def, "the switched port")
    .with_help("write it from the kernel's parameters and constants, `pe.row` and `pe.col`")
}

/// E0503: a fixed region size (`on [N / 4, C]`) has no value, or is zero, at the shapes of one
/// call.
pub fn region_failed(call: Location, reason: &str, def: Location) -> Diagnostic {
    Diagnostic::error(
        "E0503",
        format!("the region size has no valid value at the shapes of this call: {reason}"),
        call,
        "in this call",
    )
    .with_secondary(def, "the region size is given here")
}

/// E0504: a model input has a symbolic dimension that is not the sample dimension; only the
/// batch size is known when the program runs, so the shape cannot be made concrete.
pub fn symbolic_input_dim(at: Location, input: &str, dim: &str) -> Diagnostic {
    Diagnostic::error(
        "E0504",
        format!("the dimension `{dim}` of model input `{input}` is not known"),
        at,
        "symbolic dimension",
    )
    .with_note("only the first (sample) dimension of a model input may be symbolic")
    .with_help("write the size as a number or a constant")
}

/// E0505: the kernel of a layer implementation cannot be lowered with the arguments the mapper
/// chose for a region size (an array length overflows, an argument is out of its parameter's
/// range, or the kernel uses a construct the kernel IR cannot express).
pub fn kernel_instance_failed(call: Location, error: &LowerError) -> Diagnostic {
    let d = Diagnostic::error(
        "E0505",
        format!("cannot build kernel `{}`: {}", error.kernel, error.message),
        call,
        "for this call",
    );
    match &error.location {
        Some(at) => d.with_secondary(at.clone(), "here"),
        None => d,
    }
}

/// E1114: a layer (or the loss) used in pipelined training has no `<layer>_train` or
/// `<layer>_train_back` layer in the module that defines it (docs/language.md §11.2).
pub fn no_pipelined_training(call: Location, layer: &str, wanted: &str) -> Diagnostic {
    Diagnostic::error(
        "E1114",
        format!("`{layer}` has no `{wanted}` layer, so it cannot be trained pipelined"),
        call,
        "used in pipelined training here",
    )
    .with_help(format!(
        "define a pipelined layer `{wanted}` beside `{layer}` (docs/language.md §11.2), or train with `--mode streaming`"
    ))
}

/// E1115: pipelined training takes layers whose branches join at layers of several inputs, with
/// residual blocks (`graph::pipelined_shape`), and this call breaks it, for the reason `why`.
pub fn not_a_chain(call: Location, layer: &str, why: &str) -> Diagnostic {
    Diagnostic::error(
        "E1115",
        format!("pipelined training takes branches that join at layers of several inputs, and residual blocks, and this call of `{layer}` breaks it: {why}"),
        call,
        "breaks the graph pipelined training takes",
    )
    .with_help("train the model with `--mode streaming`, which takes any graph (docs/language.md §11.2)".to_string())
}

/// E1116: the call sets `setting` of `layer` away from its default, and none of the layers
/// that stand in for it in training (`takers`: its backward layers, or its `L_train`) takes a
/// scalar of that name, so training would compute as if it were left at its default.
pub fn setting_dropped(
    call: Location,
    layer: &str,
    setting: &str,
    value: &str,
    takers: &[String],
) -> Diagnostic {
    let takers = takers
        .iter()
        .map(|t| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(", ");
    Diagnostic::error(
        "E1116",
        format!(
            "this call sets `{setting} = {value}`, but {takers}, which training uses for \
             `{layer}`, takes no `{setting}`: training would compute `{layer}` as if `{setting}` \
             were left at its default"
        ),
        call,
        "trained through here",
    )
    .with_help(format!(
        "give {takers} a scalar input `{setting}` and use it, or train a model that leaves \
         `{setting}` at its default"
    ))
}

/// E0457: a layer reads (or makes) a tensor that a `reshape` relabels, and every one of its
/// implementations keeps that tensor in an array (resident) or splits it other than along its
/// first feature dimension, so no region size lines its parts up with the other side's
/// (docs/language.md §7.1).
pub fn relabel_split(call: Location, layer: &str, tensor: &str) -> Diagnostic {
    Diagnostic::error(
        "E0457",
        format!(
            "`{layer}` keeps `{tensor}` in an array or splits it other than along its first \
             feature dimension, so its parts cannot line up with a reshape's other side"
        ),
        call,
        "this call's tensor is relabelled by a reshape",
    )
    .with_help("a reshape joins layers that stream the tensor through ports split along its first feature dimension only (`split [cols, _]`, no `tiles`)")
}

//! E04xx (models): layer calls, shapes, parameters and the result.

use wsel_diagnostic::{Diagnostic, Location};

/// E0401: a call in a model whose callee is not a layer.
pub fn not_a_layer(at: Location, name: &str, found: &str, def: Option<Location>) -> Diagnostic {
    let d = Diagnostic::error(
        "E0401",
        format!("`{name}` is a {found}, not a layer"),
        at,
        "expected a layer",
    )
    .with_note("models call layers; kernels run inside layer implementations");
    match def {
        Some(def) => d.with_secondary(def, format!("{found} defined here")),
        None => d,
    }
}

/// E0402: an argument's tensor type does not unify with the layer's input type (element type,
/// rank, or a dimension that conflicts with a constant or an earlier binding).
pub fn shape_mismatch(
    at: Location,
    layer: &str,
    input: &str,
    expected: &str,
    found: &str,
    param_def: Location,
    declared: &str,
) -> Diagnostic {
    Diagnostic::error(
        "E0402",
        format!("mismatched shapes in call to `{layer}`: expected `{expected}`, found `{found}`"),
        at,
        format!("this is `{found}`"),
    )
    .with_secondary(
        param_def,
        format!("`{input}` is declared as `{declared}` here"),
    )
}

/// E0402 (a model `param`): a parameter whose declared shape does not fit the call, given
/// the shapes of the activations (and of the other parameters). `shapes` is the shape the call
/// needs and the declared one; `param_def` is where the parameter is declared.
pub fn param_shape_mismatch(
    at: Location,
    layer: &str,
    param: &str,
    shapes: (&str, &str),
    param_def: Location,
) -> Diagnostic {
    let (needed, declared) = shapes;
    Diagnostic::error(
        "E0402",
        format!(
            "mismatched shapes in call to `{layer}`: parameter `{param}` is declared `{declared}`, but the call needs `{needed}`"
        ),
        at,
        format!("this is `{declared}`"),
    )
    .with_secondary(param_def, format!("`{param}` is declared here"))
    .with_note(format!(
        "the activations passed to `{layer}` (and the weights before this one) decide the shape it needs"
    ))
}

/// E0402 (element type): an argument whose shape fits the layer input but whose element type
/// differs. `elems` is the expected and the found element type.
pub fn elem_mismatch(
    at: Location,
    layer: &str,
    input: &str,
    elems: (&str, &str),
    found: &str,
    param_def: Location,
    declared: &str,
) -> Diagnostic {
    let (expected_elem, found_elem) = elems;
    Diagnostic::error(
        "E0402",
        format!(
            "mismatched element types in call to `{layer}`: expected `{expected_elem}`, found `{found_elem}`"
        ),
        at,
        format!("this is `{found}`"),
    )
    .with_secondary(
        param_def,
        format!("`{input}` is declared as `{declared}` here"),
    )
}

/// E0403: a layer input marked `param` is given something other than a model `param`.
pub fn needs_param(at: Location, layer: &str, input: &str, param_def: Location) -> Diagnostic {
    Diagnostic::error(
        "E0403",
        format!("`{input}` of `{layer}` is a weight and must be given a model `param`"),
        at,
        "not a model parameter",
    )
    .with_secondary(param_def, "declared `param` here")
}

/// E0404: a model `param` is given to a layer input that is an activation.
pub fn param_as_activation(
    at: Location,
    layer: &str,
    input: &str,
    param_def: Location,
) -> Diagnostic {
    Diagnostic::error(
        "E0404",
        format!("`{input}` of `{layer}` is an activation, but this is a model parameter"),
        at,
        "a weight tensor",
    )
    .with_secondary(param_def, "activation input declared here")
}

/// E0405: a layer call with the wrong number of arguments.
pub fn layer_arg_count(
    at: Location,
    layer: &str,
    expected: usize,
    found: usize,
    def: Option<Location>,
) -> Diagnostic {
    let d = Diagnostic::error(
        "E0405",
        format!(
            "`{layer}` takes {expected} {}, but {}",
            if expected == 1 { "tensor" } else { "tensors" },
            super::types::given(found)
        ),
        at,
        "wrong number of arguments",
    );
    match def {
        Some(def) => d.with_secondary(def, "layer defined here"),
        None => d,
    }
}

/// E0406: the type of a model's `return` differs from its declared output type.
pub fn result_mismatch(
    at: Location,
    expected: &str,
    found: &str,
    declared: Location,
) -> Diagnostic {
    Diagnostic::error(
        "E0406",
        format!("the model returns `{found}`, but declares `{expected}`"),
        at,
        format!("this is `{found}`"),
    )
    .with_secondary(declared, "declared output type")
}

/// E0407: a model without a `return`, with more than one, or with statements after it.
pub fn bad_return(at: Location, message: impl Into<String>, label: &str) -> Diagnostic {
    Diagnostic::error("E0407", message, at, label)
}

/// E0436: a named argument at a layer call that names no scalar input of the layer (a tensor
/// input is given by position, not by name).
pub fn unknown_scalar_arg(
    at: Location,
    layer: &str,
    name: &str,
    help: Option<String>,
    def: Option<Location>,
) -> Diagnostic {
    let d = Diagnostic::error(
        "E0436",
        format!("`{layer}` has no scalar input `{name}`"),
        at,
        "unknown scalar input",
    );
    let d = match help {
        Some(help) => d.with_help(help),
        None => d,
    };
    match def {
        Some(def) => d.with_secondary(def, "layer defined here"),
        None => d,
    }
}

/// E0437: a scalar input given twice at one layer call.
pub fn scalar_arg_twice(at: Location, name: &str, first: Location) -> Diagnostic {
    Diagnostic::error(
        "E0437",
        format!("scalar input `{name}` is given more than once"),
        at,
        "given again",
    )
    .with_secondary(first, "first given here")
}

/// E0438: a layer call that does not give a scalar input without a default value.
pub fn missing_scalar_args(
    at: Location,
    layer: &str,
    missing: &[String],
    def: Option<Location>,
) -> Diagnostic {
    let names: Vec<String> = missing.iter().map(|m| format!("`{m}`")).collect();
    let d = Diagnostic::error(
        "E0438",
        format!(
            "`{layer}` needs a value for {} (no default)",
            names.join(", ")
        ),
        at,
        "missing scalar input",
    )
    .with_help(format!("give it by name: `{} = ...`", missing[0]));
    match def {
        Some(def) => d.with_secondary(def, "layer defined here"),
        None => d,
    }
}

/// E0454: a `reshape` whose dimensions hold another number of features than its argument's.
pub fn reshape_count(at: Location, from: &str, to: &str) -> Diagnostic {
    Diagnostic::error(
        "E0454",
        format!(
            "`reshape` cannot make `{to}` from `{from}`: they hold different numbers of features"
        ),
        at,
        format!("`{from}` is not `{to}`"),
    )
    .with_note("a reshape relabels a sample's features in row-major order; it keeps their number")
}

/// E0455: a `reshape` of a model input or `param`, or one that is the model's result: a
/// reshape relabels a layer's result for the layer that reads it. `what` names the tensor.
pub fn reshape_not_a_result(at: Location, what: &str) -> Diagnostic {
    Diagnostic::error(
        "E0455",
        format!("`reshape` relabels a layer's result for the layer that reads it, not {what}"),
        at,
        "not a layer's result read by a layer",
    )
    .with_help("declare the model's input or result, or the parameter, with the shape wanted: its data is the same")
}

/// E0456: `reshape`'s arguments are not a tensor and its new feature dimensions (positive
/// `u32` compile-time values, no named arguments).
pub fn reshape_args(at: Location, what: &str) -> Diagnostic {
    Diagnostic::error("E0456", format!("`reshape` {what}"), at, "not a reshape").with_help(
        "write `reshape(x, 8, 16)` for `f32[B, 8, 16]`: the tensor, then its feature dimensions",
    )
}

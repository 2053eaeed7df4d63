//! E04xx (layers): signatures, cost, implementations, `run` and `bind`.

use wsel_diagnostic::{Diagnostic, Location};

/// E0408: an activation tensor (non-`param` input, layer output, model input) whose first
/// dimension is not a dimension variable, activations of one layer with different sample
/// variables, a `param` tensor using the sample variable, or a model `param` with a symbolic
/// dimension.
pub fn bad_sample_dim(at: Location, message: impl Into<String>, label: &str) -> Diagnostic {
    Diagnostic::error("E0408", message, at, label)
        .with_note("the first dimension of every activation tensor is the sample dimension, e.g. `B` in `f32[B, 64]`")
}

/// E0409: a layer without a `cost` block, or a cost block that does not have exactly the
/// entries `flops`, `weights` and `activations`.
pub fn bad_cost(at: Location, message: impl Into<String>, label: &str) -> Diagnostic {
    Diagnostic::error("E0409", message, at, label).with_note(
        "`cost { flops = ...; weights = ...; activations = ...; }` needs all three entries",
    )
}

/// E0410: two implementations of one layer for the same mode.
pub fn duplicate_mode(at: Location, mode: &str, first: Location) -> Diagnostic {
    Diagnostic::error(
        "E0410",
        format!("this layer already has a `{mode}` implementation"),
        at,
        "second implementation",
    )
    .with_secondary(first, "first one here")
}

/// E0411: an implementation block without a `run kernel(...)` statement.
pub fn missing_run(at: Location) -> Diagnostic {
    Diagnostic::error(
        "E0411",
        "this implementation does not say which kernel runs",
        at,
        "no `run` statement",
    )
    .with_help("add `run kernel_name(param = value, ...);`")
}

/// E0412: `run` names an item that is not a kernel.
pub fn run_not_kernel(at: Location, name: &str, found: &str, def: Option<Location>) -> Diagnostic {
    let d = Diagnostic::error(
        "E0412",
        format!("`{name}` is a {found}, not a kernel"),
        at,
        "expected a kernel",
    );
    match def {
        Some(def) => d.with_secondary(def, format!("{found} defined here")),
        None => d,
    }
}

/// E0413: `run k(p = ...)` where `k` has no parameter `p`.
pub fn unknown_kernel_param(
    at: Location,
    kernel: &str,
    param: &str,
    suggestion: Option<String>,
) -> Diagnostic {
    let d = Diagnostic::error(
        "E0413",
        format!("kernel `{kernel}` has no parameter `{param}`"),
        at,
        "unknown parameter",
    );
    match suggestion {
        Some(s) => d.with_help(format!("did you mean `{s}`?")),
        None => d,
    }
}

/// E0414: `run k(...)` that does not give every parameter of `k`.
pub fn missing_kernel_args(
    at: Location,
    kernel: &str,
    missing: &[String],
    def: Option<Location>,
) -> Diagnostic {
    let list: Vec<String> = missing.iter().map(|m| format!("`{m}`")).collect();
    let d = Diagnostic::error(
        "E0414",
        format!("`run {kernel}` does not give {}", list.join(", ")),
        at,
        "missing kernel arguments",
    );
    match def {
        Some(def) => d.with_secondary(def, "kernel defined here"),
        None => d,
    }
}

/// E0415: a kernel parameter given twice in one `run`.
pub fn duplicate_kernel_arg(at: Location, param: &str, first: Location) -> Diagnostic {
    Diagnostic::error(
        "E0415",
        format!("parameter `{param}` is given more than once"),
        at,
        "given again here",
    )
    .with_secondary(first, "first given here")
}

/// E0416: `bind t ...` where `t` is not an input or the output of the layer.
pub fn bind_unknown_tensor(at: Location, name: &str, suggestion: Option<String>) -> Diagnostic {
    let d = Diagnostic::error(
        "E0416",
        format!("`{name}` is not a tensor of this layer"),
        at,
        "expected an input or the output",
    );
    match suggestion {
        Some(s) => d.with_help(format!("did you mean `{s}`?")),
        None => d,
    }
}

/// E0417: `bind ... to array a` / `to port p` where the kernel has no such array or port.
pub fn bind_unknown_target(
    at: Location,
    kind: &str,
    name: &str,
    kernel: &str,
    help: Option<String>,
) -> Diagnostic {
    let d = Diagnostic::error(
        "E0417",
        format!("kernel `{kernel}` has no {kind} `{name}`"),
        at,
        format!(
            "not {} {kind} of `{kernel}`",
            if kind == "array" { "an" } else { "a" }
        ),
    );
    match help {
        Some(h) => d.with_help(h),
        None => d,
    }
}

/// E0418: a split axis other than `rows`, `cols` or `_`.
pub fn unknown_axis(at: Location, name: &str) -> Diagnostic {
    Diagnostic::error(
        "E0418",
        format!("unknown split axis `{name}`"),
        at,
        "expected `rows`, `cols` or `_`",
    )
}

/// E0419: a split with more entries than the tensor has dimensions to split (for activation
/// tensors, the dimensions after the sample dimension).
pub fn split_too_long(at: Location, tensor: &str, given: usize, rank: usize) -> Diagnostic {
    let dims = if rank == 1 { "dimension" } else { "dimensions" };
    Diagnostic::error(
        "E0419",
        format!("`{tensor}` has {rank} splittable {dims}, but the split has {given}"),
        at,
        "too many split axes",
    )
}

/// E0420: an input tensor bound to an `out` port, or the output bound to an `in` port.
pub fn bind_direction(
    at: Location,
    tensor: &str,
    port: &str,
    need: &str,
    def: Location,
) -> Diagnostic {
    let what = if need == "in" {
        "an input"
    } else {
        "the output"
    };
    Diagnostic::error(
        "E0420",
        format!("`{tensor}` is {what} of the layer, so it must be bound to an `{need}` port"),
        at,
        format!("`{port}` is not an `{need}` port"),
    )
    .with_secondary(def, "port declared here")
}

/// E0421: a tensor's element type differs from the element type of its array or port.
pub fn bind_elem_mismatch(
    at: Location,
    tensor: &str,
    tensor_elem: &str,
    target: &str,
    target_elem: &str,
) -> Diagnostic {
    Diagnostic::error(
        "E0421",
        format!("`{tensor}` has `{tensor_elem}` elements but `{target}` holds `{target_elem}`"),
        at,
        "element types differ",
    )
}

/// E0423: the layer's output uses a dimension variable that no input determines.
pub fn undetermined_output_dim(at: Location, var: &str) -> Diagnostic {
    Diagnostic::error(
        "E0423",
        format!("output dimension `{var}` does not appear in any input"),
        at,
        "cannot be inferred at a call",
    )
}

/// E0425: an implementation that binds tensors but never the layer's output, so the result
/// never leaves the region (a stub without any `bind` is not reported).
pub fn output_not_bound(at: Location, output: &str, def: Location) -> Diagnostic {
    Diagnostic::error(
        "E0425",
        format!("this implementation never binds the layer's output `{output}`"),
        at,
        format!("`{output}` is not bound"),
    )
    .with_secondary(def, "the output is declared here")
    .with_help(format!(
        "add `bind {output} to port p;` with an `out` port `p` of the kernel"
    ))
}

/// E0426: one tensor bound twice in one implementation.
pub fn bound_twice(at: Location, tensor: &str, first: Location) -> Diagnostic {
    Diagnostic::error(
        "E0426",
        format!("`{tensor}` is bound more than once in this implementation"),
        at,
        "bound again here",
    )
    .with_secondary(first, "first bound here")
    .with_help("a tensor is bound to one array or port; remove one of the `bind`s")
}

/// E0440: an activation bound to an array in an implementation that serves pipelined mode.
/// An activation in an array is resident — every sample of the batch in SRAM at once — which
/// only weight streaming does; in pipelined mode samples stream through the region.
pub fn resident_in_pipelined(at: Location, tensor: &str) -> Diagnostic {
    Diagnostic::error(
        "E0440",
        format!(
            "`{tensor}` is an activation bound to an array, but this implementation serves \
             pipelined mode"
        ),
        at,
        "a resident activation needs a `streaming` implementation",
    )
    .with_note(
        "in pipelined mode samples stream through the region one after another; only weight \
         streaming keeps a batch's activations in SRAM",
    )
    .with_help(format!(
        "bind `{tensor}` to a port here, or write a separate `streaming on [...]` implementation"
    ))
}

/// E0441: a `tiles [...]` clause whose length differs from the number of dimensions of the
/// parts it orders.
pub fn tiles_rank(at: Location, tensor: &str, given: usize, rank: usize) -> Diagnostic {
    let dims = if rank == 1 { "dimension" } else { "dimensions" };
    Diagnostic::error(
        "E0441",
        format!("the parts of `{tensor}` have {rank} {dims}, but `tiles` gives {given} counts"),
        at,
        "one tile count per dimension",
    )
}

/// E0427: a tensor bound to a bus port (`to row`, `from col`, ...): a bus carries what the
/// region's PEs send each other, it has no edge for a tensor to enter or leave by.
pub fn bind_to_bus(at: Location, port: &str, side: &str, def: Location) -> Diagnostic {
    Diagnostic::error(
        "E0427",
        format!("`{port}` is a bus port (`{side}`), which no tensor can be bound to"),
        at,
        "a bus port",
    )
    .with_secondary(def, format!("`{port}` is declared `{side}` here"))
    .with_help(
        "bind the tensor to a port on a side of the region (`north`, `south`, `east`, `west`)",
    )
}

/// E0424: a fixed region size that is zero, or a region name that repeats a dimension
/// variable or the other region name.
pub fn bad_region(at: Location, message: impl Into<String>) -> Diagnostic {
    Diagnostic::error("E0424", message, at, "invalid region size")
}

/// The note every output-dimension-expression error carries.
const DIM_EXPR_NOTE: &str = "a layer's output dimension may be an integer expression of its dimension variables and integer scalar inputs, e.g. `f32[B, heads * context]`";

/// E0442: a name in a layer's output dimension expression that is neither a dimension
/// variable of its inputs, nor a scalar input, nor a module constant.
pub fn dim_expr_unknown_name(at: Location, name: &str, help: Option<String>) -> Diagnostic {
    let d = Diagnostic::error(
        "E0442",
        format!("`{name}` in this output dimension is not a dimension of the layer's inputs, a scalar input or a constant"),
        at,
        "unknown name",
    )
    .with_note(DIM_EXPR_NOTE);
    match help {
        Some(h) => d.with_help(h),
        None => d,
    }
}

/// E0443: an output dimension expression that is not integer arithmetic (`+ - * / %` on
/// integers): a float or `bool` scalar input or literal, a comparison, a call.
pub fn dim_expr_not_integer(at: Location, what: &str) -> Diagnostic {
    Diagnostic::error(
        "E0443",
        format!("this output dimension is not an integer expression: {what}"),
        at,
        "not an integer",
    )
    .with_note(DIM_EXPR_NOTE)
}

/// E0444: an output dimension expression whose value (at a call, or on its own when it uses
/// no names) is zero, negative, above `u32::MAX`, or divides by zero.
pub fn dim_expr_not_positive(at: Location, call: Option<(&str, &str, Location)>) -> Diagnostic {
    match call {
        None => Diagnostic::error(
            "E0444",
            "this output dimension is not a positive size",
            at,
            "zero, negative or too large",
        ),
        Some((expr, value, def)) => Diagnostic::error(
            "E0444",
            format!(
                "at this call the layer's output dimension `{expr}` is {value}, not a positive size"
            ),
            at,
            "no positive output dimension",
        )
        .with_secondary(def, "the output dimension is written here"),
    }
}

/// E0445: an output dimension expression at a call that uses a dimension the call does not
/// fix (a symbolic dimension of the model).
pub fn dim_expr_unknown_at_call(at: Location, expr: &str, why: &str, def: Location) -> Diagnostic {
    Diagnostic::error(
        "E0445",
        format!("the layer's output dimension `{expr}` has no value at this call: {why}"),
        at,
        "output dimension not known",
    )
    .with_secondary(def, "the output dimension is written here")
}

/// E0446: an output dimension expression that uses the sample dimension (which is known only
/// when the model runs, and is the output's first dimension on its own).
pub fn dim_expr_uses_sample(at: Location, sample: &str) -> Diagnostic {
    Diagnostic::error(
        "E0446",
        format!("an output dimension expression cannot use the sample dimension `{sample}`"),
        at,
        "uses the sample dimension",
    )
    .with_note("the batch size is known only when the model runs; only the output's first dimension is the sample dimension")
}

//! E05xx: what lowering finds that the checker cannot see, because it needs the concrete shapes
//! of one batch size or the arguments the mapper chose. One constructor per code, each with a
//! doc comment saying when it fires; `CODES` lists them for `crate::codes()`.

use wsel_sema::{Diagnostic, Location};

use crate::error::LowerError;

/// Every code this crate reports, with a one-line summary.
pub const CODES: &[(&str, &str)] = &[
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
];

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

//! A layer's `train as` clause (docs/language.md §6.4): E0218, E0451–E0453.

use wsel_diagnostic::{Diagnostic, Location};

const CLAUSE: &str =
    "`train as` gives the layer calls pipelined training runs in the layer's place";

/// E0218: a call of the clause leads back to the declaring layer (the layer itself, or a
/// layer whose own clause leads back to it).
pub fn recursive(at: Location, layer: &str, callee: &str) -> Diagnostic {
    let message = if layer == callee {
        format!("`{layer}`'s `train as` clause calls `{layer}` itself")
    } else {
        format!(
            "`{layer}`'s `train as` clause calls `{callee}`, whose own clause leads back to `{layer}`"
        )
    };
    Diagnostic::error("E0218", message, at, "leads back to the layer").with_note(CLAUSE)
}

/// E0451: a call of the clause names no layer of the module or its imports.
pub fn not_a_layer(at: Location, name: &str) -> Diagnostic {
    Diagnostic::error(
        "E0451",
        format!("`{name}` in a `train as` clause is not a layer of this module or its imports"),
        at,
        "expected a layer",
    )
    .with_note(CLAUSE)
}

/// E0452: an argument of the clause that is not the layer's input or a call, or does not fit
/// the called layer (the count of tensors, a weight for an activation or the reverse, a
/// scalar input it does not have or lacks, a scalar of another type); or a clause that is a
/// bare input, not a call. `what` says which.
pub fn bad_argument(at: Location, what: &str) -> Diagnostic {
    Diagnostic::error("E0452", what, at, "in the `train as` clause").with_note(CLAUSE)
}

/// E0452: a clause that is one of the layer's inputs, not a call.
pub fn not_a_call(at: Location) -> Diagnostic {
    bad_argument(
        at,
        "a `train as` clause is a layer call, not one of the layer's inputs",
    )
}

/// E0453: an argument whose shape does not fit the called layer's input.
pub fn arg_mismatch(
    at: Location,
    (layer, input): (&str, &str),
    expected: &str,
    found: &str,
) -> Diagnostic {
    Diagnostic::error(
        "E0453",
        format!("`{layer}` takes `{expected}` for `{input}`, but this is `{found}`"),
        at,
        format!("`{found}`"),
    )
    .with_note(CLAUSE)
}

/// E0453: a clause whose result type is not the layer's.
pub fn result_mismatch(at: Location, layer: &str, expected: &str, found: &str) -> Diagnostic {
    Diagnostic::error(
        "E0453",
        format!("`{layer}`'s `train as` clause gives `{found}`, but `{layer}` gives `{expected}`"),
        at,
        format!("`{found}`"),
    )
    .with_note(CLAUSE)
}

//! E02xx: types and compile-time constants.

use wsel_diagnostic::{Diagnostic, Location};

/// A type or value as shown in a message: a type in backticks (`f32`), a phrase as it is
/// ("a slice of `f32`", "an expression").
pub(crate) fn code(text: &str) -> String {
    if text.contains('`') || text.starts_with("a ") || text.starts_with("an ") {
        text.to_string()
    } else {
        format!("`{text}`")
    }
}

/// E0201: an expression has a type other than the one its position needs (no implicit
/// conversions: `1` is not a float, `x: u32` is not an `i32`).
pub fn mismatched_types(at: Location, expected: &str, found: &str) -> Diagnostic {
    let d = Diagnostic::error(
        "E0201",
        format!(
            "mismatched types: expected {}, found {}",
            code(expected),
            code(found)
        ),
        at,
        format!("expected {}", code(expected)),
    );
    let (found, expected) = (found.trim_matches('`'), expected.trim_matches('`'));
    if found == "integer" && (expected == "f32" || expected == "f16") {
        d.with_help("write a float literal such as `2.0`")
    } else if matches!(found, "i32" | "u32" | "f32" | "f16") && expected != "bool" {
        d.with_help(format!("convert explicitly with `as {expected}`"))
    } else {
        d
    }
}

/// E0201 (reductions): `sum`, or `max`/`min` with one argument, given something other than
/// a numeric slice.
pub fn needs_slice(at: Location, function: &str, found: &str) -> Diagnostic {
    Diagnostic::error(
        "E0201",
        format!(
            "`{function}` reduces a numeric slice, but this is {}",
            code(found)
        ),
        at,
        "expected a slice such as `a[0..n]`",
    )
}

/// E0202: an operator is applied to operands it is not defined for, e.g. `&&` on floats or
/// `+` on booleans, or its two operands have different types.
pub fn bad_operands(at: Location, op: &str, lhs: &str, rhs: Option<&str>) -> Diagnostic {
    let message = match rhs {
        Some(rhs) => format!("cannot apply `{op}` to {} and {}", code(lhs), code(rhs)),
        None => format!("cannot apply `{op}` to {}", code(lhs)),
    };
    Diagnostic::error("E0202", message, at, "invalid operands")
}

/// E0203: evaluating a compile-time expression (or a literal) leaves the range of its type.
pub fn overflow(at: Location, ty: &str) -> Diagnostic {
    Diagnostic::error(
        "E0203",
        format!("this compile-time value does not fit in `{ty}`"),
        at,
        "overflows",
    )
}

/// E0204: a division or remainder whose divisor is a compile-time zero.
pub fn division_by_zero(at: Location) -> Diagnostic {
    Diagnostic::error("E0204", "division by zero", at, "this divisor is zero")
}

/// E0205: a position that needs a compile-time value (array length, constant, dimension,
/// cost, region size, kernel argument, storage initialiser) uses a run-time value.
pub fn not_constant(at: Location, what: &str) -> Diagnostic {
    Diagnostic::error(
        "E0205",
        format!("{what} must be known at compile time"),
        at,
        "not a compile-time value",
    )
    .with_note("compile-time values are literals, constants, kernel parameters and dimensions")
}

/// E0206: a constant index or slice bound is outside an array of constant length, or a slice
/// has `lo > hi`.
pub fn out_of_bounds(at: Location, array: &str, index: &str, len: u64) -> Diagnostic {
    Diagnostic::error(
        "E0206",
        format!("index {index} is out of bounds for `{array}` of length {len}"),
        at,
        "out of bounds",
    )
}

/// E0206 (slice bound): a constant slice bound past the end of an array of constant length.
/// `end` says which bound (`a[lo..hi]`: `hi` is the end, `lo` the start).
pub fn slice_out_of_bounds(
    at: Location,
    array: &str,
    bound: u64,
    end: bool,
    len: u64,
) -> Diagnostic {
    let which = if end { "end" } else { "start" };
    Diagnostic::error(
        "E0206",
        format!("slice {which} {bound} is past the end of `{array}`, which has length {len}"),
        at,
        "past the end",
    )
    .with_note(format!("`{array}[lo..hi]` needs `lo <= hi <= {len}`"))
}

/// E0206 (reversed slice): a slice whose constant bounds have `lo > hi`.
pub fn reversed_slice(at: Location, lo: u64, hi: u64) -> Diagnostic {
    Diagnostic::error(
        "E0206",
        format!("slice starts at {lo} but ends at {hi}"),
        at,
        "reversed slice",
    )
}

/// E0207: two slices in one statement have different constant lengths.
pub fn slice_lengths(at: Location, len: u64, other: Location, other_len: u64) -> Diagnostic {
    Diagnostic::error(
        "E0207",
        format!("slices in one statement must have the same length, found {len} and {other_len}"),
        at,
        format!("this slice has length {len}"),
    )
    .with_secondary(other, format!("this slice has length {other_len}"))
}

/// E0208: a cast to or from `bool`, or of something that is not a scalar.
pub fn invalid_cast(at: Location, from: &str, to: &str) -> Diagnostic {
    Diagnostic::error(
        "E0208",
        format!("cannot cast {} to `{to}`", code(from)),
        at,
        "invalid cast",
    )
    .with_note("casts convert between the numeric types f32, f16, i32 and u32")
}

/// E0209: a call in kernel code to something that is not a math function or reduction.
pub fn unknown_function(at: Location, name: &str, suggestion: Option<String>) -> Diagnostic {
    let d = Diagnostic::error(
        "E0209",
        format!("unknown function `{name}`"),
        at,
        "not a function",
    )
    .with_note("the functions are exp, log, sqrt, tanh, abs, max, min and sum");
    match suggestion {
        Some(s) => d.with_help(format!("did you mean `{s}`?")),
        None => d,
    }
}

/// E0210: a math function or reduction called with the wrong number of arguments.
pub fn wrong_arg_count(at: Location, name: &str, expected: &str, found: usize) -> Diagnostic {
    Diagnostic::error(
        "E0210",
        format!("`{name}` takes {expected}, but {}", given(found)),
        at,
        "wrong number of arguments",
    )
}

/// E0210 (named): a built-in function called with a named argument (only layer calls in a
/// model take named arguments: a layer's scalar inputs).
pub fn named_argument(at: Location, name: &str) -> Diagnostic {
    Diagnostic::error(
        "E0210",
        format!("`{name}` takes no named arguments"),
        at,
        "named argument",
    )
    .with_note("only a layer call in a model takes named arguments, for the layer's scalar inputs")
}

/// E0211: the left side of an assignment is not a `var`, an element or slice of an array,
/// or it names a `let`, constant, parameter or loop variable.
pub fn not_assignable(at: Location, what: &str, def: Option<Location>) -> Diagnostic {
    let help = def
        .is_some()
        .then_some("declare it with `var` to make it mutable");
    not_assignable_because(at, what, def, help)
}

/// E0211 with a help that fits what was assigned (a `let`, a parameter, a loop variable, ...).
pub fn not_assignable_because(
    at: Location,
    what: &str,
    def: Option<Location>,
    help: Option<&str>,
) -> Diagnostic {
    let d = Diagnostic::error(
        "E0211",
        format!("cannot assign to {what}"),
        at,
        "cannot be assigned",
    );
    let d = match def {
        Some(def) => d.with_secondary(def, "defined here"),
        None => d,
    };
    match help {
        Some(help) => d.with_help(help),
        None => d,
    }
}

/// "1 was given", "2 were given".
pub(crate) fn given(n: usize) -> String {
    if n == 1 {
        "1 was given".to_string()
    } else {
        format!("{n} were given")
    }
}

/// E0212: indexing or slicing something that is not an array.
pub fn not_indexable(at: Location, ty: &str) -> Diagnostic {
    Diagnostic::error(
        "E0212",
        if ty.starts_with("a ") {
            format!("cannot index into {ty}")
        } else {
            format!("cannot index into a value of type {}", code(ty))
        },
        at,
        "not an array",
    )
}

/// E0213: a vector (an expression over slices) or a whole array where a scalar is needed:
/// conditions, indices, `let`s, scalar targets, arithmetic on an unsliced array.
pub fn vector_not_allowed(at: Location, ty: &str) -> Diagnostic {
    Diagnostic::error(
        "E0213",
        format!("expected a scalar, found {}", code(ty)),
        at,
        "not a scalar",
    )
    .with_help("index the array (`a[i]`), slice it in a vector statement (`a[0..n]`) or reduce it (`sum(a[0..n])`)")
}

/// E0214: a written type that cannot appear in its position: a stream outside a port
/// declaration, a tensor in a kernel, an array as a parameter, constant or task-local,
/// a non-tensor as a layer or model tensor.
pub fn type_not_allowed(at: Location, ty: &str, position: &str) -> Diagnostic {
    Diagnostic::error(
        "E0214",
        format!("type `{ty}` is not allowed for {position}"),
        at,
        "type not allowed here",
    )
}

/// E0215: a constant's value depends on the constant itself.
pub fn const_cycle(at: Location, name: &str) -> Diagnostic {
    Diagnostic::error(
        "E0215",
        format!("constant `{name}` is defined in terms of itself"),
        at,
        "cyclic definition",
    )
}

/// E0216: an expression statement in a task; kernel expressions have no side effects.
pub fn useless_expression(at: Location) -> Diagnostic {
    Diagnostic::error(
        "E0216",
        "this expression's value is never used",
        at,
        "expression statement has no effect",
    )
    .with_help("assign it to something, or remove it")
}

/// E0217: a tensor dimension that is neither a constant expression nor a single dimension
/// variable (e.g. `f32[B, 2 * N]`).
pub fn bad_dimension(at: Location) -> Diagnostic {
    Diagnostic::error(
        "E0217",
        "a tensor dimension must be a constant expression or a dimension variable",
        at,
        "unsupported dimension",
    )
    .with_help("only a layer's output dimension may be an expression of its dimension variables and scalar inputs (`-> y: f32[B, 2 * N]`)")
}

//! E1109–E1112 and E1120: the `train` item (docs/language.md §11), and E1106/E1107 at its
//! settings.
//!
//! E1106 (learning rate) and E1107 (an optimizer setting out of range) are the codes
//! `wsel train` gives the same settings passed as flags; the driver lists them
//! (`wsel::training::CODES`), so this crate's `CODES` does not list them again.

use wsel_diagnostic::{Diagnostic, Location};

/// E1109: a `train` setting that is not one of `KEYS` (docs/language.md §11).
pub fn unknown_setting(at: Location, key: &str, suggestion: Option<String>) -> Diagnostic {
    let d = Diagnostic::error(
        "E1109",
        format!("unknown train setting `{key}`"),
        at,
        "not a training setting",
    )
    .with_note(
        "a `train` item takes `input`, `labels`, `loss`, `optimizer`, `lr`, `momentum`, `beta1`, \
         `beta2`, `eps`, `steps`, `epochs`, `batch`, `micro_batch`, `recompute`, `seed`, `shuffle`, `target`, `mode`, `out_dir`",
    );
    match suggestion {
        Some(s) => d.with_help(format!("did you mean `{s}`?")),
        None => d,
    }
}

/// E1109 (repeated): a `train` setting given twice.
pub fn repeated_setting(at: Location, key: &str, first: Location) -> Diagnostic {
    Diagnostic::error(
        "E1109",
        format!("train setting `{key}` is given more than once"),
        at,
        "given again here",
    )
    .with_secondary(first, "first given here")
}

/// E1110: a `train` setting with a value of the wrong kind (a string where a number is
/// needed, an optimizer other than `"sgd"` or `"adam"`, a step count that is not a positive
/// integer, ...).
pub fn bad_value(at: Location, key: &str, expected: &str) -> Diagnostic {
    Diagnostic::error(
        "E1110",
        format!("invalid value for `{key}`: expected {expected}"),
        at,
        "invalid value",
    )
}

/// E1120: a `recompute` setting other than `"auto"`, `"never"` or `"always"`.
pub fn bad_recompute(at: Location) -> Diagnostic {
    Diagnostic::error(
        "E1120",
        "invalid value for `recompute`: expected \"auto\", \"never\" or \"always\"",
        at,
        "not a recomputation choice",
    )
    .with_help(
        "`\"auto\"` recomputes activations that do not fit the SRAM when that is estimated faster \
         than micro-batches, `\"never\"` keeps them all (micro-batches when they do not fit), \
         `\"always\"` recomputes (docs/running.md, \"How a training step runs\")",
    )
}

/// E1111: a file with more than one `train` item.
pub fn second_train(at: Location, first: Location) -> Diagnostic {
    Diagnostic::error(
        "E1111",
        "a file may contain at most one `train` item",
        at,
        "second `train` item",
    )
    .with_secondary(first, "first `train` item")
}

/// E1112: settings that exclude each other: `steps` with `epochs`, or a setting of the other
/// optimizer (`momentum` with Adam; `beta1`, `beta2`, `eps` with SGD).
pub fn conflicting(
    at: Location,
    message: impl Into<String>,
    other: Location,
    other_label: &str,
) -> Diagnostic {
    Diagnostic::error("E1112", message, at, "conflicting setting")
        .with_secondary(other, other_label.to_string())
}

/// E1106 at a `train` item's `lr`: not a finite positive number.
pub fn learning_rate(at: Location, value: f64) -> Diagnostic {
    Diagnostic::error(
        "E1106",
        format!("the learning rate {value} is not a finite positive number"),
        at,
        "learning rate out of range",
    )
}

/// E1107 at a `train` item's optimizer setting: out of its range.
pub fn optimizer_setting(at: Location, key: &str, value: f64, range: &str) -> Diagnostic {
    Diagnostic::error(
        "E1107",
        format!("{key} = {value} is out of range: it must be {range}"),
        at,
        "out of range",
    )
}

//! E043x: the `run` configuration item.

use wsel_diagnostic::{Diagnostic, Location};

/// E0430: `run m { ... }` where `m` is not a model.
pub fn not_a_model(at: Location, name: &str, found: &str, def: Option<Location>) -> Diagnostic {
    let d = Diagnostic::error(
        "E0430",
        format!("`{name}` is a {found}, not a model"),
        at,
        "expected a model",
    );
    match def {
        Some(def) => d.with_secondary(def, format!("{found} defined here")),
        None => d,
    }
}

/// E0431: `input x = ...` where the model has no input `x`.
pub fn unknown_input(
    at: Location,
    name: &str,
    model: &str,
    suggestion: Option<String>,
) -> Diagnostic {
    let d = Diagnostic::error(
        "E0431",
        format!("model `{model}` has no input `{name}`"),
        at,
        "unknown input",
    );
    match suggestion {
        Some(s) => d.with_help(format!("did you mean `{s}`?")),
        None => d,
    }
}

/// E0432: a model input that the run configuration does not give, or gives twice.
pub fn input_count(at: Location, message: impl Into<String>, label: &str) -> Diagnostic {
    Diagnostic::error("E0432", message, at, label)
}

/// E0433: a setting other than `output`, `labels`, `target`, `mode`, `batch`, or one given
/// twice.
pub fn unknown_setting(at: Location, key: &str, suggestion: Option<String>) -> Diagnostic {
    let d = Diagnostic::error(
        "E0433",
        format!("unknown run setting `{key}`"),
        at,
        "expected `output`, `labels`, `target`, `mode`, `batch` or `systems`",
    );
    match suggestion {
        Some(s) => d.with_help(format!("did you mean `{s}`?")),
        None => d,
    }
}

/// E0433 (repeated): a setting given twice.
pub fn repeated_setting(at: Location, key: &str, first: Location) -> Diagnostic {
    Diagnostic::error(
        "E0433",
        format!("run setting `{key}` is given more than once"),
        at,
        "given again here",
    )
    .with_secondary(first, "first given here")
}

/// E0434: a setting with a value of the wrong kind: paths and `target`/`mode` are strings,
/// `mode` is `pipelined`, `streaming` or `auto`, `batch` is a positive integer.
pub fn bad_setting_value(at: Location, key: &str, expected: &str) -> Diagnostic {
    Diagnostic::error(
        "E0434",
        format!("invalid value for `{key}`: expected {expected}"),
        at,
        "invalid value",
    )
}

/// E0435: a file with more than one `run` item.
pub fn second_run(at: Location, first: Location) -> Diagnostic {
    Diagnostic::error(
        "E0435",
        "a file may contain at most one `run` item",
        at,
        "second `run` item",
    )
    .with_secondary(first, "first `run` item")
}

//! E01xx: name resolution — imports, duplicates, unresolved names, names of the wrong kind.

use wsel_diagnostic::{Diagnostic, Location};

/// E0101: an `import` names a module that is neither in the stdlib (`std.a.b`) nor a file
/// `a/b.wse` beside the importing file.
pub fn unknown_module(at: Location, module: &str, looked_for: &str) -> Diagnostic {
    Diagnostic::error(
        "E0101",
        format!("cannot find module `{module}`"),
        at,
        "module not found",
    )
    .with_note(format!("looked for `{looked_for}`"))
}

/// E0102: an imported name is not a `const`, `kernel`, `layer` or `model` defined in the
/// imported module.
pub fn unknown_import(
    at: Location,
    name: &str,
    module: &str,
    suggestion: Option<String>,
) -> Diagnostic {
    let d = Diagnostic::error(
        "E0102",
        format!("module `{module}` has no item named `{name}`"),
        at,
        "not found in the module",
    );
    match suggestion {
        Some(s) => d.with_help(format!("did you mean `{s}`?")),
        None => d,
    }
}

/// E0103: two top-level items, or an item and an imported name, or two imported names, have
/// the same name in one module.
pub fn duplicate_item(at: Location, name: &str, first: Location) -> Diagnostic {
    Diagnostic::error(
        "E0103",
        format!("the name `{name}` is defined more than once in this module"),
        at,
        "defined again here",
    )
    .with_secondary(first, "first defined here")
    .with_help("rename one of them, or import with `as` under another name")
}

/// E0104: a module imports itself, directly or through other modules.
pub fn import_cycle(at: Location, cycle: &[String]) -> Diagnostic {
    Diagnostic::error(
        "E0104",
        "this import creates an import cycle",
        at,
        "the imported module imports this one back",
    )
    .with_note(format!("the cycle is {}", cycle.join(" → ")))
}

/// E0105: a name is used that nothing in scope defines.
pub fn unresolved_name(
    at: Location,
    name: &str,
    what: &str,
    suggestion: Option<String>,
) -> Diagnostic {
    let d = Diagnostic::error(
        "E0105",
        format!("cannot find {what} `{name}` in this scope"),
        at,
        "not found in this scope",
    );
    match suggestion {
        Some(s) => d.with_help(format!("did you mean `{s}`?")),
        None => d,
    }
}

/// E0106: two parameters, members, locals, tensors or `let`s of one kernel, task, layer or
/// model have the same name (a task-local name also may not hide another local of the task).
pub fn duplicate_local(at: Location, name: &str, first: Location) -> Diagnostic {
    Diagnostic::error(
        "E0106",
        format!("the name `{name}` is defined more than once"),
        at,
        "defined again here",
    )
    .with_secondary(first, "first defined here")
}

/// E0107: a name refers to something of the wrong kind, e.g. a kernel or port used as a
/// value, or a task used as a port.
pub fn wrong_kind(
    at: Location,
    name: &str,
    found: &str,
    expected: &str,
    def: Option<Location>,
) -> Diagnostic {
    let d = Diagnostic::error(
        "E0107",
        format!("expected {expected}, found {found} `{name}`"),
        at,
        format!("this is a {found}"),
    );
    match def {
        Some(def) => d.with_secondary(def, format!("{found} defined here")),
        None => d,
    }
}

/// E0108: a field access other than `pe.row`, `pe.col`, `region.rows`, `region.cols`.
pub fn unknown_field(at: Location, base: &str, field: &str, fields: &[&str]) -> Diagnostic {
    let d = Diagnostic::error(
        "E0108",
        format!("`{base}` has no field `{field}`"),
        at,
        "unknown field",
    );
    if fields.is_empty() {
        d.with_note(
            "only `pe.row`, `pe.col`, `pe.cycle`, `region.rows` and `region.cols` have fields",
        )
    } else {
        let list: Vec<String> = fields.iter().map(|f| format!("`{base}.{f}`")).collect();
        let (last, rest) = list
            .split_last()
            .map_or(("", &[][..]), |(l, r)| (l.as_str(), r));
        if rest.is_empty() {
            d.with_help(format!("use {last}"))
        } else {
            d.with_help(format!("use {} or {last}", rest.join(", ")))
        }
    }
}

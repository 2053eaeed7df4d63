//! E03xx: kernels — tasks, ports, receives and sends.

use wsel_diagnostic::{Diagnostic, Location};

/// E0301: a kernel has no task named `main` (every kernel has exactly one; a second one is a
/// duplicate name, E0106).
pub fn missing_main(at: Location, kernel: &str) -> Diagnostic {
    Diagnostic::error(
        "E0301",
        format!("kernel `{kernel}` has no `main` task"),
        at,
        "no `task main()`",
    )
    .with_help("add `task main() { ... }`, which runs once on every PE at start")
}

/// E0302: `recv` on an `out` port, or `send` on an `in` port.
pub fn wrong_port_direction(at: Location, port: &str, op: &str, def: Location) -> Diagnostic {
    let (dir, need) = if op == "recv" {
        ("out", "in")
    } else {
        ("in", "out")
    };
    Diagnostic::error(
        "E0302",
        format!("cannot `{op}` on `{port}`, which is an `{dir}` port"),
        at,
        format!("`{op}` needs an `{need}` port"),
    )
    .with_secondary(def, format!("`{port}` declared as `{dir}` here"))
}

/// E0303: `then t` or `activate t` names something that is not a task of the same kernel.
pub fn not_a_task(at: Location, name: &str, suggestion: Option<String>) -> Diagnostic {
    let d = Diagnostic::error(
        "E0303",
        format!("`{name}` is not a task of this kernel"),
        at,
        "expected a task",
    );
    match suggestion {
        Some(s) => d.with_help(format!("did you mean `{s}`?")),
        None => d,
    }
}

/// E0304: a port side other than `north`, `south`, `east`, `west` or a bus (`row`, `col`,
/// `region`).
pub fn unknown_side(at: Location, side: &str, suggestion: Option<String>) -> Diagnostic {
    let d = Diagnostic::error(
        "E0304",
        format!("unknown side `{side}`"),
        at,
        "expected `north`, `south`, `east`, `west`, `row`, `col` or `region`",
    );
    match suggestion {
        Some(s) => d.with_help(format!("did you mean `{s}`?")),
        None => d,
    }
}

/// E0304 (bus): `multicast` on a bus port, which reaches its whole row, column or region
/// already (`multicast` is for streams entering the region's edge).
pub fn multicast_bus(at: Location, side: &str) -> Diagnostic {
    Diagnostic::error(
        "E0304",
        format!("a port `from {side}` is a bus and cannot be `multicast`"),
        at,
        "not for a bus",
    )
    .with_help(format!(
        "remove `multicast`: what a PE sends `to {side}` reaches every other PE of its {side} already"
    ))
}

/// E0450: `by k` on a bus port: a bus reaches every PE of its line already, so it has no
/// distance.
pub fn distance_on_bus(at: Location, side: &str) -> Diagnostic {
    Diagnostic::error(
        "E0450",
        format!("a port on the `{side}` bus has no distance"),
        at,
        "not for a bus",
    )
    .with_help(format!(
        "remove `by ...`: what a PE sends `to {side}` reaches every other PE of its {side} already; \
         `by` is for a stream to the PE k away on one side (`to east by k`)"
    ))
}

/// E0305: the element type of a `recv` target or `send` value differs from the port's.
pub fn port_type_mismatch(
    at: Location,
    port: &str,
    port_elem: &str,
    found: &str,
    def: Location,
) -> Diagnostic {
    Diagnostic::error(
        "E0305",
        format!("port `{port}` carries `{port_elem}`, but this is `{found}`"),
        at,
        format!("expected `{port_elem}` elements"),
    )
    .with_secondary(
        def,
        format!("`{port}` declared as `stream<{port_elem}>` here"),
    )
}

/// E0306: a `recv` target that is not an array slice, an array element or a scalar `var`.
pub fn bad_recv_target(at: Location) -> Diagnostic {
    bad_recv_into(at, "cannot receive into this", None)
}

/// E0306 for a named target: a `let`, constant, parameter or loop variable (`def` is its
/// definition), or a whole array.
pub fn bad_recv_into(at: Location, label: &str, def: Option<(Location, String)>) -> Diagnostic {
    let d = Diagnostic::error(
        "E0306",
        "`recv` needs an array slice, an array element or a scalar `var` to receive into",
        at,
        label,
    );
    match def {
        Some((def, what)) => d.with_secondary(def, what),
        None => d,
    }
}

//! E0706–E0709: router switches on a kernel's ports (`docs/language.md` §5.4, "Switched
//! ports") and the `control` statement that moves them.

use wsel_diagnostic::{Diagnostic, Location};

/// E0706: a switch with more than three positions after its base, or positions not named
/// `pos1`, `pos2`, `pos3` in that order (a router's switch has at most four positions, and
/// each one changes the one before it).
pub fn bad_position(at: Location, key: &str, expected: usize) -> Diagnostic {
    let (message, label) = if expected > 3 {
        (
            format!("a switch has at most three positions after its base; `{key}` is a fourth"),
            "one position too many",
        )
    } else {
        (
            format!("switch positions are `pos1`, `pos2`, `pos3` in order; found `{key}`"),
            "expected a position name",
        )
    };
    let help = if expected > 3 {
        "a router holds the base (position 0) and up to three more: `pos1`, `pos2`, `pos3`".into()
    } else {
        format!("each position changes the one before it; name this one `pos{expected}`")
    };
    Diagnostic::error("E0706", message, at, label).with_help(help)
}

/// E0707: `control(p, ...)` on a port that has no switch: an `in` port, or an `out` port
/// declared without `switch { ... }`.
pub fn control_without_switch(at: Location, port: &str, def: Location) -> Diagnostic {
    Diagnostic::error(
        "E0707",
        format!("`control` on `{port}`, which has no switch"),
        at,
        "a control wavelet needs a switched `out` port",
    )
    .with_secondary(def, format!("`{port}` declared here"))
    .with_help("declare the port `out p: stream<f32> to east switch { pos1: rx west; ... };`")
}

/// E0708: a switch that names what its port cannot use: a position's side other than the
/// port's, the opposite one or `ramp`; a word other than `rx`/`tx` in a position; an item
/// other than a position, `start: e` or `ring`; or a switch on a bus port.
pub fn bad_switch_word(at: Location, found: &str, expected: &str, help: &str) -> Diagnostic {
    Diagnostic::error(
        "E0708",
        format!("`{found}` cannot be used here"),
        at,
        format!("expected {expected}"),
    )
    .with_help(help.to_string())
}

/// E0815: a tensor bound to a switched port: a switched line runs inside its region (it
/// never leaves by an edge), so no tensor can enter or leave by it.
pub fn bind_to_switched(at: Location, port: &str, def: Location) -> Diagnostic {
    Diagnostic::error(
        "E0815",
        format!("`{port}` is a switched port, which no tensor can be bound to"),
        at,
        "a switched port",
    )
    .with_secondary(def, format!("`{port}` is declared with `switch` here"))
    .with_help(
        "bind the tensor to a port without a switch (`in xs: stream<f32> from west;`) and \
         pass the values on inside the region",
    )
}

/// E0709: a `control` statement's commands: none, more than the hop limit (one per router
/// from the sender's, `wsel_abi::COMMAND_HOPS`), or a word other than `adv`, `nop`, `reset`.
pub fn bad_commands(at: Location, problem: &str) -> Diagnostic {
    Diagnostic::error(
        "E0709",
        format!("invalid control commands: {problem}"),
        at,
        "not a valid control wavelet",
    )
    .with_help(format!(
        "a control wavelet carries 1 to {} commands, one per router from the sender's: \
         `adv`, `nop` or `reset`",
        wsel_abi::COMMAND_HOPS
    ))
}

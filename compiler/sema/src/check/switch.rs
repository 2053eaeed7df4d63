//! Switched ports and `control` statements (`docs/language.md` §5.4, "Switched ports"):
//! a switch's positions and start (E0706, E0708) and a control wavelet's port and commands
//! (E0707, E0709).

use wsel_syntax::ast::{self, PortDirection, ScalarType};

use crate::check::expr::{Checker, Local, LocalKind};
use crate::check::kernel::BUS_SIDES;
use crate::diagnostics::switches;

/// The words a control statement's commands may be.
pub const COMMANDS: &[&str] = &["adv", "nop", "reset"];

/// Checks the switch of port `p`, if it has one.
pub(crate) fn check_port(c: &mut Checker<'_>, p: &ast::PortDecl) {
    let Some(spec) = &p.switch else {
        return;
    };
    if BUS_SIDES.contains(&p.side.name.as_str()) {
        let help = "a bus already reaches every PE of its line; switches are for a line toward \
                    one side (`to east switch { ... }`)";
        let d = switches::bad_switch_word(
            c.loc(&spec.span),
            "switch",
            "a port to `north`, `south`, `east` or `west`",
            help,
        );
        c.report(d);
        return;
    }
    let along = "a switched port's color runs along one line: its positions receive from and \
                 forward to the port's side, the opposite side and `ramp` (this PE)";
    let sides = [
        p.side.name.as_str(),
        opposite(&p.side.name).unwrap_or(""),
        "ramp",
    ];
    for (k, pos) in spec.positions.iter().enumerate() {
        if pos.key.name != format!("pos{}", k + 1) || k >= 3 {
            let d = switches::bad_position(c.loc(&pos.key.span), &pos.key.name, k + 1);
            c.report(d);
        }
        for (set, side) in &pos.sets {
            if set.name != "rx" && set.name != "tx" {
                let d =
                    switches::bad_switch_word(c.loc(&set.span), &set.name, "`rx` or `tx`", along);
                c.report(d);
            }
            if !sides.contains(&side.name.as_str()) {
                let expected = format!("`{}`, `{}` or `ramp`", sides[0], sides[1]);
                let d = switches::bad_switch_word(c.loc(&side.span), &side.name, &expected, along);
                c.report(d);
            }
        }
    }
    for item in &spec.unknown {
        let expected = "`posK: rx D;`, `posK: tx D;`, `start: e;` or `ring;`";
        let help = "a switch lists its positions, its start and whether it is a ring";
        let d = switches::bad_switch_word(c.loc(&item.span), &item.name, expected, help);
        c.report(d);
    }
    if let Some(start) = &spec.start {
        c.expect(start, ScalarType::U32, false);
        run_time_names(c, start);
    }
}

/// Reports the names in a switch's `start` that hold run-time values (vars and locals): the
/// start position is set before the run, from parameters, constants and the PE's place.
fn run_time_names(c: &mut Checker<'_>, e: &ast::Expr) {
    match e {
        ast::Expr::Name(id) => {
            let run_time = c.lookup(&id.name).is_some_and(|b| {
                matches!(
                    b.local,
                    Local::Value {
                        kind: LocalKind::Var | LocalKind::Let | LocalKind::Loop,
                        ..
                    }
                )
            });
            if run_time {
                let expected = "parameters, constants, `pe.row` and `pe.col`";
                let help = "the start position is set before the run: it cannot read a `var` \
                            or a local";
                let d = switches::bad_switch_word(c.loc(&id.span), &id.name, expected, help);
                c.report(d);
            }
        }
        ast::Expr::Unary { operand, .. } => run_time_names(c, operand),
        ast::Expr::Binary { lhs, rhs, .. } => {
            run_time_names(c, lhs);
            run_time_names(c, rhs);
        }
        ast::Expr::Call { args, .. } => args.iter().for_each(|a| run_time_names(c, a)),
        ast::Expr::Cast { value, .. } => run_time_names(c, value),
        ast::Expr::Index { base, .. } | ast::Expr::Slice { base, .. } => run_time_names(c, base),
        _ => {}
    }
}

/// `control(port, [commands])`: `port` must be a switched `out` port, and the commands 1 to
/// `wsel_abi::COMMAND_HOPS` of `adv`, `nop`, `reset`, each repeated by a count known at
/// compile time (`nop * k`); a count of the kernel's parameters is checked when the kernel
/// is built (E0505).
pub(crate) fn control(
    c: &mut Checker<'_>,
    port: &ast::Ident,
    commands: &[ast::Command],
    at: &ast::Span,
) {
    if let Some(b) = c.lookup(&port.name).cloned() {
        let def = c.loc(&b.def);
        c.record_use(&port.span, def.clone());
        match b.local {
            Local::Port {
                direction: PortDirection::Out,
                switched: true,
                ..
            } => {}
            Local::Port { .. } => {
                let d = switches::control_without_switch(c.loc(&port.span), &port.name, def);
                c.report(d);
            }
            ref other => {
                let found = crate::check::expr::describe_local(other);
                c.wrong_kind(port, found, "a port", Some(def));
            }
        }
    } else {
        let d = crate::diagnostics::resolve::unresolved_name(
            c.loc(&port.span),
            &port.name,
            "port",
            None,
        );
        c.report(d);
    }
    let (mut least, mut known) = (0, true);
    for command in commands {
        let word = &command.word;
        if !COMMANDS.contains(&word.name.as_str()) {
            let problem = format!("`{}` is not a command", word.name);
            let d = switches::bad_commands(c.loc(&word.span), &problem);
            c.report(d);
        }
        match command_count(c, command) {
            Some(n) => least += n,
            None => known = false,
        }
    }
    let none = known && least == 0;
    if none || least > wsel_abi::COMMAND_HOPS as i128 {
        let problem = if none {
            "there are none".to_string()
        } else {
            format!(
                "{least} commands, more than {} routers",
                wsel_abi::COMMAND_HOPS
            )
        };
        let d = switches::bad_commands(c.loc(at), &problem);
        c.report(d);
    }
}

/// How many times `command` is sent: 1 without a count, its count when the checker knows
/// it, `None` when it depends on the kernel's parameters (or is not a count: E0205).
fn command_count(c: &mut Checker<'_>, command: &ast::Command) -> Option<i128> {
    let Some(count) = &command.count else {
        return Some(1);
    };
    match c
        .expect_const(count, ScalarType::U32, "a command's count")
        .value
    {
        Some(crate::ty::Value::Int(n)) => Some(n),
        _ => None,
    }
}

/// The side opposite `side` (`None` for a bus or an unknown word).
fn opposite(side: &str) -> Option<&'static str> {
    Some(match side {
        "north" => "south",
        "south" => "north",
        "east" => "west",
        "west" => "east",
        _ => return None,
    })
}

//! The hang checks' diagnostics (`E07xx`): one constant per code saying when it fires, the
//! wording of each, and [`codes`] listing them for `docs/diagnostics.md`.
//!
//! Every diagnostic about a statement points at the statement (from the kernel's
//! [`KernelSpans`](wsel_ir::kernel::KernelSpans)), with the port's declaration and the layer
//! call as secondary labels, and lists the PEs concerned: by logical row and column in the
//! layer's region, and where they are on the fabric.

use wsel_diagnostic::{Diagnostic, Location, Severity};
use wsel_ir::graph::{LayerInstance, SourceSpan};
use wsel_ir::kernel::TaskId;
use wsel_map::PlacedLayer;

use crate::reach::PortOp;
use crate::streams::side_name;
use crate::{Finding, LayerKernel, Problem};

/// A `recv` that may run on some PE where no stream can ever feed its port: the port's side
/// is the region's edge and the layer binds nothing to it, no `out` port pairs with it, the
/// neighbour never sends on the paired port, it is a multicast port with nothing bound, it
/// is a bus port that no other PE of its line sends on (or whose line is the PE alone), or
/// it is a port `by k` used off its stride, with no PE `k` away, or whose PE `k` away never
/// sends on the paired port, or it is a switched port that no PE before it on its line sends
/// on, or whose router never takes a position delivering to its ramp.
pub const E0701: &str = "E0701";
/// A `send` that may run on some PE where nothing drains its port: the port's side is the
/// region's edge and the layer binds nothing to it, no `in` port pairs with it, the
/// neighbour never receives on the paired port, it is a bus port that no other PE of its
/// line receives on (or whose line is the PE alone), or it is a port `by k` used off its
/// stride, with no PE `k` away, or whose PE `k` away never receives on the paired port, or
/// it is a switched port that no PE after it on its line receives on, or whose router never
/// takes a position receiving from its ramp.
pub const E0702: &str = "E0702";
/// (Warning.) A task other than `main` that no `then` or `activate` reachable from `main`
/// names, on any PE of any region: it never runs.
pub const E0703: &str = "E0703";
/// Two router entries for one color at one router: two streams would need different routes
/// for the same color there. The mapper never produces this; the check guards it.
pub const E0704: &str = "E0704";
/// Tasks that activate each other on every run (`activate` or `send ... then` at a task's top
/// level), reachable on some PE: once one of them runs there, the PE never stops.
pub const E0705: &str = "E0705";

/// Every hang-check code with a one-line description, in code order.
pub fn codes() -> &'static [(&'static str, &'static str)] {
    &[
        (E0701, "a receive that no stream can feed on some PE"),
        (E0702, "a send that nothing drains on some PE"),
        (E0703, "a task that nothing activates (warning)"),
        (E0704, "a color with two routes at one router"),
        (E0705, "tasks that activate each other on every run"),
    ]
}

pub(crate) fn at(span: &SourceSpan) -> Location {
    Location {
        file: span.file.clone(),
        span: span.span.clone(),
    }
}

/// How many PEs a note lists before `…`.
const LISTED: usize = 6;

/// E0701 or E0702 for one finding.
pub(crate) fn port_finding(
    finding: &Finding,
    layer: &LayerInstance,
    placed: &PlacedLayer,
    kernel: &LayerKernel<'_>,
    _layer_index: usize,
) -> Diagnostic {
    let ports = &placed.ports;
    let (code, port, recv) = match finding.op {
        PortOp::Recv(p) => (E0701, p.0 as usize, true),
        PortOp::Send(p) => (E0702, p.0 as usize, false),
    };
    let name = &ports[port].name;
    let side = ports[port].side;
    let side_s = side_name(side);
    let n: u64 = finding.pes.iter().map(|s| s.len()).sum();
    let pes_word = if n == 1 { "PE" } else { "PEs" };
    let where_ = finding
        .pes
        .iter()
        .map(|s| s.describe())
        .collect::<Vec<_>>()
        .join("; ");
    let head = if recv {
        format!(
            "`recv` on `{name}` waits forever on {n} {pes_word} of `{}`",
            layer.name
        )
    } else {
        format!(
            "`send` on `{name}` has nowhere to go on {n} {pes_word} of `{}`",
            layer.name
        )
    };
    let distance = ports[port].distance.unwrap_or(1);
    let (they_are, their_neighbours, s_verb) = match (n == 1, distance) {
        (true, 1) => ("the PE is", format!("its {side_s} neighbour"), "s"),
        (false, 1) => ("the PEs are", format!("their {side_s} neighbours"), ""),
        (true, k) => ("the PE is", format!("the PE {k} further {side_s}"), "s"),
        (false, k) => ("the PEs are", format!("the PEs {k} further {side_s}"), ""),
    };
    let partners = match distance {
        1 => "the neighbours".to_string(),
        k => format!("the PEs {k} further {side_s}"),
    };
    let opposite = side_name(side.opposite());
    let bus = ports[port].bus.map_or("", |b| b.name());
    let (why, help) = match (finding.problem, recv) {
        (Problem::BusAlone | Problem::BusSilent(_), _) => {
            bus_why(finding.problem, recv, ports, port, bus)
        }
        (Problem::NoPartner, _) if !bus.is_empty() => {
            bus_why(finding.problem, recv, ports, port, bus)
        }
        (Problem::EdgeUnbound, true) => (
            format!(
                "{they_are} on the region's {side_s} edge, and the layer binds no stream to `{name}`"
            ),
            format!(
                "run the receive only where a neighbour feeds it (test `pe.row`/`pe.col`), or bind a tensor to `{name}` in the layer"
            ),
        ),
        (Problem::EdgeUnbound, false) => (
            format!(
                "{they_are} on the region's {side_s} edge, and the layer binds nothing to `{name}`"
            ),
            format!(
                "send only where a neighbour drains the stream (test `pe.row`/`pe.col`), or bind the layer's result to `{name}`"
            ),
        ),
        (Problem::NoPartner, true) => (
            format!(
                "no `out ... to {opposite}` port pairs with `{name}`, so no neighbour can send to it"
            ),
            format!(
                "declare an `out` port `to {opposite}` for the neighbours to send on (the k-th `out ... to {opposite}` pairs with the k-th `in ... from {side_s}`)"
            ),
        ),
        (Problem::NoPartner, false) => (
            format!(
                "no `in ... from {opposite}` port pairs with `{name}`, so the neighbour's router has no route for it"
            ),
            format!(
                "declare an `in` port `from {opposite}` for the neighbours to receive on (the k-th `out ... to {side_s}` pairs with the k-th `in ... from {opposite}`)"
            ),
        ),
        (Problem::NeighbourSilent(partner), true) => (
            format!(
                "{their_neighbours} never send{s_verb} on `{}`, the port that pairs with `{name}`",
                ports[partner].name
            ),
            format!(
                "make {partners} send on the paired port, or run the receive only where they do"
            ),
        ),
        (Problem::NeighbourSilent(partner), false) => (
            format!(
                "{their_neighbours} never receive{s_verb} on `{}`, the port that pairs with `{name}`, so the wavelets wait in a router forever",
                ports[partner].name
            ),
            format!("make {partners} receive on the paired port, or send only where they do"),
        ),
        (Problem::OffStride(_) | Problem::BeyondRegion(_), _) => {
            far_why(finding.problem, recv, &ports[port], n == 1)
        }
        (Problem::SwitchedSilent(_) | Problem::SwitchNeverDelivers(_), _)
        | (Problem::SwitchNeverTakes, _) => {
            switched_why(finding.problem, recv, ports, port, n == 1)
        }
        (Problem::MulticastUnbound, _) => (
            format!("the layer binds no stream to the multicast port `{name}`"),
            format!("bind a tensor to `{name}` in the layer, or do not receive on it"),
        ),
    };
    let primary = statement_location(kernel, finding.stmt.task, finding.stmt.index, layer);
    let label = if recv {
        format!("waits forever on {where_}")
    } else {
        format!("nothing drains it on {where_}")
    };
    let mut d = Diagnostic::error(code, format!("{head}: {why}"), primary, label);
    if let Some(decl) = port_span(layer, placed, port) {
        d = d.with_secondary(at(decl), format!("`{name}` is declared here"));
    }
    d = d.with_secondary(
        at(&layer.call),
        format!(
            "`{}` runs `{}` on a {} × {} region here",
            layer.name, placed.kernel, placed.rows, placed.cols
        ),
    );
    d.with_note(pe_note(placed, &finding.pes, n))
        .with_help(help)
}

/// Why a bus operation cannot finish, and what to do: the PE is alone on its line, no port
/// pairs with the bus port, or no other PE of the line uses the paired one.
fn bus_why(
    problem: Problem,
    recv: bool,
    ports: &[wsel_map::PlacedPort],
    port: usize,
    bus: &str,
) -> (String, String) {
    let name = &ports[port].name;
    let (other_dir, other_word) = if recv { ("out", "to") } else { ("in", "from") };
    let line = if bus == "col" { "column" } else { bus };
    match problem {
        Problem::BusAlone => (
            format!(
                "the PE is alone on its {line}, so no other PE can be on the other end of `{name}`"
            ),
            format!(
                "give the layer a region with more than one PE per {line}, or test the region's size before using `{name}`"
            ),
        ),
        Problem::BusSilent(partner) => {
            let verb = if recv { "sends" } else { "receives" };
            (
                format!(
                    "no other PE of its {line} ever {verb} on `{}`, the port that pairs with `{name}`",
                    ports[partner].name
                ),
                format!(
                    "make another PE of the {line} {} on `{}`, or use `{name}` only where one does",
                    if recv { "send" } else { "receive" },
                    ports[partner].name
                ),
            )
        }
        _ => (
            format!("no `{other_dir} ... {other_word} {bus}` port pairs with `{name}`"),
            format!(
                "declare an `{other_dir}` port `{other_word} {bus}` (the k-th `out ... to {bus}` pairs with the k-th `in ... from {bus}`)"
            ),
        ),
    }
}

/// Why an operation on a switched port cannot finish, and what to do: no PE before it on its
/// line sends (after it receives) on the paired port, or its router never takes a position
/// that delivers to (takes from) its ramp.
fn switched_why(
    problem: Problem,
    recv: bool,
    ports: &[wsel_map::PlacedPort],
    port: usize,
    one: bool,
) -> (String, String) {
    let name = &ports[port].name;
    let side = ports[port].side;
    let line = match side {
        wsel_target::Dir::North | wsel_target::Dir::South => "column",
        _ => "row",
    };
    let (it, its, routers) = if one {
        ("it", "its", "its router")
    } else {
        ("them", "their", "their routers")
    };
    let (toward, from) = if recv {
        (side_name(side.opposite()), side_name(side))
    } else {
        (side_name(side), side_name(side.opposite()))
    };
    match problem {
        Problem::SwitchedSilent(partner) => {
            let other = &ports[partner].name;
            let (way, verb, op, then) = if recv {
                (from, "sends", "send", "")
            } else {
                (
                    toward,
                    "receives",
                    "receive",
                    ", so the wavelets wait in a router forever",
                )
            };
            (
                format!(
                    "no PE {way} of {it} on {its} {line} ever {verb} on `{other}`, the switched port that pairs with `{name}`{then}"
                ),
                format!(
                    "make a PE {way} of {it} {op} on `{other}`, or use `{name}` only where one does"
                ),
            )
        }
        Problem::SwitchNeverDelivers(out) => {
            let out = &ports[out].name;
            (
                format!(
                    "no position {routers} can take for `{out}` (the start, and those the control wavelets sent on `{out}` can move it to) delivers from the {from} to the ramp"
                ),
                format!(
                    "give `{out}` a position `tx ramp` after one with `rx {from}`, and send a control wavelet on `{out}` that moves {routers} there"
                ),
            )
        }
        _ => (
            format!(
                "no position {routers} can take for `{name}` (the start, and those the control wavelets sent on `{name}` can move it to) receives from the ramp, so the wavelets never leave the PE"
            ),
            format!(
                "start the router at position 0 (`rx ramp`), or send a control wavelet on `{name}` that resets or advances it there"
            ),
        ),
    }
}

/// Why an operation on a port with a distance cannot finish, and what to do: the PEs are off
/// the port's stride, or the PE that far is outside the region.
fn far_why(
    problem: Problem,
    recv: bool,
    port: &wsel_map::PlacedPort,
    one: bool,
) -> (String, String) {
    let name = &port.name;
    let (they_are, their_routers_pass) = if one {
        ("the PE is", "its router passes")
    } else {
        ("the PEs are", "their routers pass")
    };
    let side = side_name(port.side);
    let (index, axis) = match port.side {
        wsel_target::Dir::North | wsel_target::Dir::South => ("pe.row", "row"),
        _ => ("pe.col", "column"),
    };
    let (verb, op) = if recv {
        ("receive", "the receive")
    } else {
        ("send", "the send")
    };
    match problem {
        Problem::OffStride(k) => (
            format!(
                "`{name}` links the PEs {k} apart whose {axis} is a multiple of {k}, and {they_are} not among them ({their_routers_pass} the stream through)"
            ),
            format!("run {op} only where `{index} % {k} == 0`"),
        ),
        _ => {
            let k = match problem {
                Problem::BeyondRegion(k) => k,
                _ => 1,
            };
            (
                format!(
                    "the PE {k} further {side} is outside the region, and {they_are} not on its {side} edge, so no stream can {verb} there"
                ),
                format!(
                    "run {op} only where a PE {k} further {side} is in the region, or on the region's {side} edge with a tensor bound to `{name}`"
                ),
            )
        }
    }
}

/// E0703 at the task's name.
pub(crate) fn dead_task(
    kernel: &LayerKernel<'_>,
    task: usize,
    layer: &LayerInstance,
    placed: &PlacedLayer,
) -> Diagnostic {
    let name = &kernel.ir.tasks[task].name;
    let location = kernel
        .spans
        .and_then(|s| {
            s.task_name(TaskId(task as u32)).map(|span| Location {
                file: s.file.clone(),
                span,
            })
        })
        .unwrap_or_else(|| at(&layer.call));
    let mut d = Diagnostic::error(
        E0703,
        format!("task `{name}` is never activated: no `then` or `activate` that can run names it"),
        location,
        "this task never runs",
    )
    .with_secondary(
        at(&layer.call),
        format!("`{}` runs `{}` here", layer.name, placed.kernel),
    )
    .with_note(
        "a task that never runs cannot make the program wait by itself, but the work it was written for never happens",
    )
    .with_help(format!(
        "name it in an `activate {name};` or `... then {name};` that runs, or remove it"
    ));
    d.severity = Severity::Warning;
    d
}

/// E0705 at the statement that closes the cycle.
pub(crate) fn endless(
    cycle: &crate::endless::Cycle,
    pes: &[crate::classes::PeSet],
    layer: &LayerInstance,
    placed: &PlacedLayer,
    kernel: &LayerKernel<'_>,
) -> Diagnostic {
    let name = |t: TaskId| format!("`{}`", kernel.ir.tasks[t.0 as usize].name);
    let last = *cycle.tasks.last().expect("a cycle has a task");
    let head = if cycle.tasks.len() == 1 {
        format!(
            "task {} activates itself on every run: once it runs, its PE never stops",
            name(last)
        )
    } else {
        let chain: Vec<String> = cycle
            .tasks
            .iter()
            .chain(std::iter::once(&cycle.tasks[0]))
            .map(|&t| name(t))
            .collect();
        format!(
            "tasks {} activate each other on every run: once one runs, its PE never stops",
            chain.join(" → ")
        )
    };
    let primary = statement_location(kernel, last, cycle.closing.index, layer);
    let n: u64 = pes.iter().map(|s| s.len()).sum();
    Diagnostic::error(E0705, head, primary, "this activation happens on every run")
        .with_secondary(
            at(&layer.call),
            format!(
                "`{}` runs `{}` on a {} × {} region here",
                layer.name, placed.kernel, placed.rows, placed.cols
            ),
        )
        .with_note(pe_note(placed, pes, n))
        .with_help(
            "make the activation conditional (e.g. `if done < samples { activate ...; }`), so that the chain ends",
        )
}

/// Where transfer statement `index` of `task` is written, or the layer call when the spans
/// are unknown.
fn statement_location(
    kernel: &LayerKernel<'_>,
    task: TaskId,
    index: usize,
    layer: &LayerInstance,
) -> Location {
    kernel
        .spans
        .and_then(|s| {
            s.transfer(task, index).map(|span| Location {
                file: s.file.clone(),
                span,
            })
        })
        .unwrap_or_else(|| at(&layer.call))
}

/// The declaration of port `port` of the layer's implementation.
fn port_span<'a>(
    layer: &'a LayerInstance,
    placed: &PlacedLayer,
    port: usize,
) -> Option<&'a SourceSpan> {
    let imp = layer.impls.get(placed.implementation)?;
    let info = imp.ports.get(port)?;
    (info.name == placed.ports[port].name).then_some(&info.span)
}

/// `the PEs (row, column of `dense#1`) and where they are on the fabric: ...`
fn pe_note(placed: &PlacedLayer, sets: &[crate::classes::PeSet], n: u64) -> String {
    let mut listed = Vec::new();
    for set in sets {
        for (r, c) in set.first(LISTED - listed.len().min(LISTED)) {
            let pe = placed.pe(r, c);
            listed.push(format!("({r}, {c}) at ({}, {})", pe.x, pe.y));
        }
        if listed.len() >= LISTED {
            break;
        }
    }
    let more = n.saturating_sub(listed.len() as u64);
    let tail = if more > 0 {
        format!(", … and {more} more")
    } else {
        String::new()
    };
    format!(
        "the PEs, as (row, column) in `{}`'s region at (x, y) on the fabric: {}{tail}",
        placed.name,
        listed.join(", ")
    )
}

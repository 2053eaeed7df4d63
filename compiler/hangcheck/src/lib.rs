//! The static hang checks of wsel (`docs/mapping.md` §6): after mapping and before anything
//! runs, find the shapes of program that would make PEs wait forever, and report each at the
//! source line with the PEs involved.
//!
//! - **E0701** a `recv` that may run on a PE where no stream can feed its port: the port's
//!   side is the region's edge and the layer binds nothing to it; or no `out` port pairs with
//!   it; or the neighbour that would feed it never sends on the paired port; or it is a
//!   multicast port the layer binds nothing to; or it is a bus port (`from row`) and no other
//!   PE of its line may send on the paired port ([`bus`](crate::bus)); or it is a port with
//!   a distance (`from D by k`) on a PE off the port's stride, with no PE `k` away, or whose
//!   PE `k` away never sends on the paired port ([`far`](crate::far)). The receive never
//!   completes.
//! - **E0702** a `send` that may run on a PE where nothing drains its port: the port's side is
//!   the region's edge and the layer binds nothing to it; or no `in` port pairs with it; or
//!   the neighbour never receives on the paired port; or it is a bus port and no other PE of
//!   its line may receive on the paired one; or the same for a port `to D by k` as for
//!   `from D by k` above. The wavelets never leave the fabric.
//! - **E0703** (warning) a task that no `then`/`activate` reachable from `main` names, whatever
//!   the conditions around it (a kernel is specialised per layer: a branch that lowering drops
//!   for this layer's parameter values still names its tasks). A dead task cannot hang
//!   anything by itself; it is usually a misspelt or forgotten activation.
//! - **E0704** two router entries for one color at one router: two streams would need
//!   different routes for one color. The mapper never produces this; the check guards it.
//! - **E0705** tasks that activate each other on every run (`activate` or `send ... then` at
//!   a task's top level, [`endless`](crate::endless)), reachable on some PE: once one runs,
//!   the PE never stops.
//!
//! Switched ports (`switch { ... }`) are checked along their lines, following the positions
//! each router can take ([`switched`](crate::switched)): E0701 for a receive that no PE
//! before it on the line feeds, or whose router never takes a position delivering to its
//! ramp; E0702 for a send that no PE after it drains, or whose router never takes a position
//! receiving from its ramp. The order in which control wavelets and data meet a router is not
//! followed: a switch that opens too early or too late is the simulator's deadlock report.
//!
//! What "may run" means is in [`reach`](crate::reach); how the PEs of a region are grouped so
//! that the checks cost a handful of evaluations per layer instead of one per PE is in
//! [`classes`](crate::classes). The checks are exact with respect to coordinates: a statement
//! is reported on a PE only if the PE's coordinates (with the kernel's constants) allow it to
//! run there; a condition on other values is decided only where their ranges settle it
//! ([`facts`](crate::facts): loop counters, locals assigned once, SRAM scalars by what is
//! stored into them — `pe.col > k` is false on column 0 for every `u32` `k`), and otherwise
//! counts as "may go either way". A task-local assigned once from coordinates
//! (`let first = pe.col == 0;`) counts as the coordinates it names ([`inline`](crate::inline)).
//!
//! The checks read plain data: the layer graph, the placement and the kernel IR of every
//! placed layer, with the [`KernelSpans`] side table for source lines.

mod bus;
mod classes;
mod diagnostics;
mod endless;
mod eval;
mod facts;
mod far;
#[cfg(test)]
mod far_tests;
mod inline;
mod reach;
mod routes;
mod streams;
mod switched;
#[cfg(test)]
mod tests;

use wsel_diagnostic::Diagnostic;
use wsel_ir::graph::LayerGraph;
use wsel_ir::kernel::{KernelIr, KernelSpans, PortDirection, PortId};
use wsel_map::Placement;

pub use diagnostics::{E0701, E0702, E0703, E0704, E0705, codes};

use crate::classes::{Classes, PeSet, classes};
use crate::reach::{PortOp, Reach, StmtRef, reach};
use crate::streams::side_index;
use wsel_map::pairing;

/// The kernel of one placed layer: its IR and, when lowering recorded them, its spans.
#[derive(Debug, Clone, Copy)]
pub struct LayerKernel<'a> {
    pub ir: &'a KernelIr,
    pub spans: Option<&'a KernelSpans>,
}

/// Runs every static hang check. `kernels[i]` is the kernel of `placement.layers[i]` (and of
/// `graph.layers[i]`); a layer whose kernel is `None` is skipped. Diagnostics come in layer
/// order, then statement order.
pub fn check(
    graph: &LayerGraph,
    placement: &Placement,
    kernels: &[Option<LayerKernel<'_>>],
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut dead_reported = Vec::new();
    let mut endless_reported = Vec::new();
    for (l, placed) in placement.layers.iter().enumerate() {
        let Some(Some(kernel)) = kernels.get(l) else {
            continue;
        };
        let Some(layer) = graph.layers.get(l) else {
            continue;
        };
        if kernel.ir.ports.len() != placed.ports.len() {
            continue;
        }
        let analysed = inline::inline_coordinate_locals(kernel.ir);
        let loaded: Vec<&str> = layer
            .impls
            .get(placed.implementation)
            .map(|imp| {
                imp.binds
                    .iter()
                    .filter(|b| b.target == wsel_ir::graph::BindTarget::Array)
                    .map(|b| b.target_name.as_str())
                    .collect()
            })
            .unwrap_or_default();
        let facts = facts::Facts::of(&analysed, &loaded);
        let classes = classes(&analysed, &facts, placed.rows, placed.cols);
        let reaches: Vec<Reach> = classes
            .bases
            .iter()
            .map(|env| reach(&analysed, &facts, Some(env)))
            .collect();
        for finding in port_findings(&analysed, placed, &classes, &reaches) {
            out.push(diagnostics::port_finding(
                &finding, layer, placed, kernel, l,
            ));
        }
        for (cycle, pes) in endless_cycles(&analysed, &classes, &reaches) {
            let key = (
                placed.kernel_file.clone(),
                kernel.ir.tasks[cycle.tasks[0].0 as usize].name.clone(),
            );
            if !endless_reported.contains(&key) {
                endless_reported.push(key);
                out.push(diagnostics::endless(&cycle, &pes, layer, placed, kernel));
            }
        }
        // E0703 once per task, whichever layers run its kernel.
        let named = reach::named_tasks(&analysed, &facts, kernel.spans);
        for (t, alive) in named.iter().enumerate() {
            let key = (placed.kernel_file.clone(), kernel.ir.tasks[t].name.clone());
            if !alive && !dead_reported.contains(&key) {
                dead_reported.push(key);
                out.push(diagnostics::dead_task(kernel, t, layer, placed));
            }
        }
    }
    out.extend(routes::check(graph, placement));
    out
}

/// Why a port operation can never finish on some PEs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Problem {
    /// On the region's edge on the port's side, and the layer binds nothing to the port.
    EdgeUnbound,
    /// No port pairs with it (the neighbour's router has no route for its stream).
    NoPartner,
    /// The neighbour never uses the paired port (index) in a way that could match.
    NeighbourSilent(usize),
    /// A multicast port the layer binds nothing to.
    MulticastUnbound,
    /// A bus port of a PE alone on its line (a row, column or region of one PE).
    BusAlone,
    /// A bus port whose paired port (index) no other PE of the line uses in a way that could
    /// match.
    BusSilent(usize),
    /// A port with a distance `k` used on a PE whose index along its axis is not a multiple
    /// of `k` ([`far`](crate::far)).
    OffStride(u32),
    /// A port with a distance `k` used on a PE that is not on the region's edge on its side
    /// but has no PE `k` further that way.
    BeyondRegion(u32),
    /// A switched port whose paired port (index) no PE before it on its line (a receive) or
    /// after it (a send) uses in a way that could match ([`switched`](crate::switched)).
    SwitchedSilent(usize),
    /// A receive on a switched port whose router never takes a position delivering the
    /// line's wavelets (of the `out` port, index) to its ramp.
    SwitchNeverDelivers(usize),
    /// A send on a switched port whose router never takes a position receiving from its ramp.
    SwitchNeverTakes,
}

/// One reachable `recv`/`send` that cannot finish on the PEs listed.
#[derive(Debug, Clone)]
pub(crate) struct Finding {
    pub stmt: StmtRef,
    pub op: PortOp,
    pub problem: Problem,
    pub pes: Vec<PeSet>,
}

/// The E0705 cycles of one placed layer's kernel, each with the PEs where it may start.
fn endless_cycles(
    ir: &KernelIr,
    classes: &Classes,
    reaches: &[Reach],
) -> Vec<(endless::Cycle, Vec<PeSet>)> {
    let alive: Vec<bool> = (0..ir.tasks.len())
        .map(|t| reaches.iter().any(|r| r.tasks[t]))
        .collect();
    let certain: Vec<_> = ir
        .tasks
        .iter()
        .map(|task| endless::certain_activations(&task.body))
        .collect();
    endless::cycles(&certain, &alive)
        .into_iter()
        .map(|cycle| {
            let start = cycle.tasks[0].0 as usize;
            let pes = classes
                .groups
                .iter()
                .filter(|g| reaches[g.base].tasks[start])
                .map(|g| g.pes.clone())
                .collect();
            (cycle, classes::merge(pes))
        })
        .collect()
}

/// E0701 and E0702 findings of one placed layer, given its PE classes and what may run on
/// each.
fn port_findings(
    ir: &KernelIr,
    placed: &wsel_map::PlacedLayer,
    classes: &Classes,
    reaches: &[Reach],
) -> Vec<Finding> {
    let paired = pairing(&placed.ports);
    let mut findings: Vec<Finding> = Vec::new();
    for group in &classes.groups {
        for &(stmt, op) in &reaches[group.base].ops {
            let switched = match op {
                PortOp::Recv(port) => switched::switched_op(placed, &paired, port, true),
                PortOp::Send(port) => switched::switched_op(placed, &paired, port, false),
            };
            let found = match (switched, far_op(placed, &paired, op)) {
                (Some(sw), _) => switched::problems(&sw, placed, group, &classes.base_of, reaches),
                (None, Some(far)) => {
                    let size = (placed.rows, placed.cols);
                    far::problems(&far, size, group, &classes.base_of, reaches)
                }
                (None, None) => op_problem(ir, placed, &paired, classes, reaches, group, op)
                    .map(|problem| (problem, group.pes.clone()))
                    .into_iter()
                    .collect(),
            };
            for (problem, pes) in found {
                match findings
                    .iter_mut()
                    .find(|f| f.stmt == stmt && f.problem == problem)
                {
                    Some(f) => f.pes.push(pes),
                    None => findings.push(Finding {
                        stmt,
                        op,
                        problem,
                        pes: vec![pes],
                    }),
                }
            }
        }
    }
    for f in &mut findings {
        f.pes = classes::merge(std::mem::take(&mut f.pes));
    }
    findings.sort_by_key(|f| f.stmt);
    findings
}

/// What may stop `op` in `group`, if anything.
fn op_problem(
    ir: &KernelIr,
    placed: &wsel_map::PlacedLayer,
    paired: &[Option<usize>],
    classes: &Classes,
    reaches: &[Reach],
    group: &classes::Group,
    op: PortOp,
) -> Option<Problem> {
    let (PortOp::Recv(port) | PortOp::Send(port)) = op;
    let p = port.0 as usize;
    if let Some(bus) = placed.ports.get(p)?.bus {
        let recv = matches!(op, PortOp::Recv(_));
        let size = (placed.rows, placed.cols);
        return bus::bus_problem(bus, size, group, classes, reaches, paired[p], recv);
    }
    match op {
        PortOp::Recv(port) => recv_problem(ir, placed, paired, reaches, group, port),
        PortOp::Send(port) => send_problem(ir, placed, paired, reaches, group, port),
    }
}

/// `op` as an operation on a port with a distance (`by k`), if its port has one and is
/// declared in the operation's direction.
fn far_op<'a>(
    placed: &'a wsel_map::PlacedLayer,
    paired: &[Option<usize>],
    op: PortOp,
) -> Option<far::FarOp<'a>> {
    let (recv, port) = match op {
        PortOp::Recv(port) => (true, port),
        PortOp::Send(port) => (false, port),
    };
    let p = port.0 as usize;
    let placed_port = placed.ports.get(p)?;
    let distance = placed_port.distance?.max(1);
    (placed_port.input == recv).then(|| far::FarOp {
        port: placed_port,
        distance,
        partner: paired[p],
        recv,
    })
}

fn recv_problem(
    ir: &KernelIr,
    placed: &wsel_map::PlacedLayer,
    paired: &[Option<usize>],
    reaches: &[Reach],
    group: &classes::Group,
    port: PortId,
) -> Option<Problem> {
    let p = port.0 as usize;
    let placed_port = placed.ports.get(p)?;
    if ir.port(port).direction != PortDirection::In {
        return None;
    }
    if placed_port.multicast {
        return placed_port
            .bound
            .is_none()
            .then_some(Problem::MulticastUnbound);
    }
    match group.neighbours[side_index(placed_port.side)] {
        None => placed_port.bound.is_none().then_some(Problem::EdgeUnbound),
        Some(neighbour) => match paired[p] {
            None => Some(Problem::NoPartner),
            Some(partner) => (!reaches[neighbour].sends_on(PortId(partner as u32)))
                .then_some(Problem::NeighbourSilent(partner)),
        },
    }
}

fn send_problem(
    ir: &KernelIr,
    placed: &wsel_map::PlacedLayer,
    paired: &[Option<usize>],
    reaches: &[Reach],
    group: &classes::Group,
    port: PortId,
) -> Option<Problem> {
    let p = port.0 as usize;
    let placed_port = placed.ports.get(p)?;
    if ir.port(port).direction != PortDirection::Out {
        return None;
    }
    match group.neighbours[side_index(placed_port.side)] {
        None => placed_port.bound.is_none().then_some(Problem::EdgeUnbound),
        Some(neighbour) => match paired[p] {
            None => Some(Problem::NoPartner),
            Some(partner) => (!reaches[neighbour].receives_on(PortId(partner as u32)))
                .then_some(Problem::NeighbourSilent(partner)),
        },
    }
}

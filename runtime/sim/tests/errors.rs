//! Programs that are wrong give clear errors, never panics.

mod common;

use common::{route, target, threads};
use wsel_sim::{Program, SimError, TaskContext, TaskFault, simulate, task};
use wsel_target::{Coord, Dir, Port, PortSet};

fn idle() -> std::sync::Arc<dyn wsel_sim::TaskCode> {
    task(|_: &mut TaskContext<'_>| Ok(()))
}

#[test]
fn a_program_that_does_not_fit_in_sram_is_named() {
    let t = target(1, 1, 4);
    let mut p = Program::new();
    let k = p.add_kernel("big", vec![("main", idle())]);
    p.add_pe(Coord::new(1, 1), k, 8192, &[], &[0]);
    let err = simulate(&t, &p, &threads(1)).expect_err("overflow");
    assert_eq!(
        err,
        SimError::SramOverflow {
            at: Coord::new(1, 1),
            needed: 8192,
            capacity: 4096
        }
    );
    assert_eq!(
        err.to_string(),
        "SRAM overflow at PE (1, 1): the program needs 8192 bytes but the PE has 4096"
    );
}

#[test]
fn a_receive_beyond_sram_is_a_task_error() {
    let t = target(1, 1, 4);
    let mut p = Program::new();
    let k = p.add_kernel(
        "r",
        vec![(
            "main",
            task(|ctx: &mut TaskContext<'_>| ctx.recv(0, 100, 64, 0)),
        )],
    );
    p.add_pe(Coord::new(2, 0), k, 256, &[0], &[0]);
    p.add_pe(Coord::new(1, 0), k, 256, &[0], &[]);
    route(&t, &mut p, 0, Coord::new(1, 0), Coord::new(2, 0));
    let err = simulate(&t, &p, &threads(1)).expect_err("range");
    match &err {
        SimError::Task {
            at,
            fault:
                TaskFault::SramRange {
                    offset: 64,
                    len: 400,
                    size: 256,
                },
            task_name,
            ..
        } => {
            assert_eq!(*at, Coord::new(2, 0));
            assert_eq!(task_name, "main");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(
        err.to_string()
            .contains("beyond this PE's 256 bytes of SRAM"),
        "{err}"
    );
}

#[test]
fn a_route_through_a_dead_link_is_an_error() {
    let mut t = target(1, 1, 4);
    t.defects.add_dead_link(Coord::new(1, 0), Dir::East);
    let mut p = Program::new();
    let k = p.add_kernel("k", vec![("main", idle())]);
    p.add_pe(Coord::new(0, 0), k, 16, &[0], &[]);
    p.add_pe(Coord::new(3, 0), k, 16, &[0], &[]);
    // Configured by hand straight along the row, through the dead link.
    p.add_route(
        Coord::new(0, 0),
        0,
        PortSet::only(Port::Ramp),
        PortSet::only(Port::E),
    );
    p.add_route(
        Coord::new(1, 0),
        0,
        PortSet::only(Port::W),
        PortSet::only(Port::E),
    );
    p.add_route(
        Coord::new(2, 0),
        0,
        PortSet::only(Port::W),
        PortSet::only(Port::E),
    );
    p.add_route(
        Coord::new(3, 0),
        0,
        PortSet::only(Port::W),
        PortSet::only(Port::Ramp),
    );
    let err = simulate(&t, &p, &threads(1)).expect_err("dead link");
    assert!(
        matches!(err, SimError::DeadRoute { at, color: 0, .. } if at == Coord::new(1, 0)),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "route for color 0 at PE (1, 0) goes through the dead east link between PE (1, 0) and PE (2, 0)"
    );
    // The routing helper detours instead, and that program runs.
    let mut q = Program::new();
    let k = q.add_kernel("k", vec![("main", idle())]);
    q.add_pe(Coord::new(0, 0), k, 16, &[0], &[]);
    q.add_pe(Coord::new(3, 0), k, 16, &[0], &[]);
    assert_eq!(route(&t, &mut q, 0, Coord::new(0, 0), Coord::new(3, 0)), 5);
    simulate(&t, &q, &threads(1)).expect("detour runs");
}

#[test]
fn a_route_through_a_dead_pe_is_an_error() {
    let mut t = target(1, 1, 4);
    t.defects.add_dead_pe(Coord::new(2, 0));
    let mut p = Program::new();
    p.add_route(
        Coord::new(1, 0),
        0,
        PortSet::only(Port::W),
        PortSet::only(Port::E),
    );
    let err = simulate(&t, &p, &threads(1)).expect_err("dead pe");
    assert_eq!(
        err.to_string(),
        "route for color 0 at PE (1, 0) goes through the dead PE (2, 0)"
    );
}

#[test]
fn a_send_on_an_unrouted_color_is_an_error() {
    let t = target(1, 1, 4);
    let mut p = Program::new();
    let k = p.add_kernel(
        "k",
        vec![(
            "main",
            task(|ctx: &mut TaskContext<'_>| ctx.send_scalar(1, 7, None)),
        )],
    );
    p.add_pe(Coord::new(4, 4), k, 16, &[0, 5], &[0]);
    let err = simulate(&t, &p, &threads(1)).expect_err("unrouted");
    assert!(
        matches!(
            err,
            SimError::Task {
                fault: TaskFault::UnroutedSend { port: 1, color: 5 },
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "PE (4, 4), task 0 `main`, cycle 0: send on port 1 (color 5): the route for color 5 at this PE does not take wavelets from the ramp"
    );
}

#[test]
fn an_error_ignored_by_the_task_still_stops_the_run() {
    let t = target(1, 1, 4);
    let mut p = Program::new();
    let k = p.add_kernel(
        "k",
        vec![(
            "main",
            task(|ctx: &mut TaskContext<'_>| {
                let _ = ctx.send_scalar(9, 7, None);
                Ok(())
            }),
        )],
    );
    p.add_pe(Coord::new(0, 0), k, 16, &[0], &[0]);
    let err = simulate(&t, &p, &threads(1)).expect_err("unbound port");
    assert!(
        err.to_string().contains("port 9 is not bound to a color"),
        "{err}"
    );
}

#[test]
fn out_of_bounds_reported_by_task_code() {
    let t = target(1, 1, 4);
    let mut p = Program::new();
    let k = p.add_kernel(
        "k",
        vec![
            ("main", task(|ctx: &mut TaskContext<'_>| ctx.activate(1))),
            (
                "oops",
                task(|ctx: &mut TaskContext<'_>| Err(ctx.out_of_bounds(2, 10, 8))),
            ),
        ],
    );
    p.add_pe(Coord::new(3, 2), k, 16, &[], &[0]);
    let err = simulate(&t, &p, &threads(1)).expect_err("oob");
    // `main` runs at 0 for max(1, S) = 1 cycle; `oops` runs at 1.
    assert_eq!(
        err.to_string(),
        "PE (3, 2), task 1 `oops`, cycle 1: index 10 is out of bounds for array 2 of length 8"
    );
}

#[test]
fn inconsistent_routes_are_named() {
    let t = target(1, 1, 4);
    let mut p = Program::new();
    p.add_route(
        Coord::new(1, 1),
        3,
        PortSet::only(Port::W),
        PortSet::only(Port::S),
    );
    let err = simulate(&t, &p, &threads(1)).expect_err("mismatch");
    assert_eq!(
        err.to_string(),
        "route for color 3 at PE (1, 1) forwards to PE (1, 2), whose route for color 3 does not receive from its N port"
    );
    let mut q = Program::new();
    q.add_route(
        Coord::new(15, 1),
        3,
        PortSet::only(Port::W),
        PortSet::only(Port::E),
    );
    let err = simulate(&t, &q, &threads(1)).expect_err("off fabric");
    assert!(
        err.to_string()
            .contains("forwards east off the fabric, but no output is declared there"),
        "{err}"
    );
    let mut r = Program::new();
    let k = r.add_kernel("k", vec![("main", idle())]);
    r.add_pe(Coord::new(0, 0), k, 16, &[30], &[0]);
    let err = simulate(&t, &r, &threads(1)).expect_err("color");
    assert!(
        err.to_string()
            .contains("color 30, but the target has 24 colors"),
        "{err}"
    );
}

//! Programs that cannot finish are reported, within bounded time, never hang.

mod common;

use common::{target, threads};
use std::time::{Duration, Instant};
use wsel_sim::{Program, SimError, SimOptions, TaskContext, simulate, task};
use wsel_target::{Coord, Port, PortSet};

/// Two PEs on a row, each with a route to the other (color 0 eastward, color 1 westward).
fn pair(p: &mut Program) -> (Coord, Coord) {
    let (a, b) = (Coord::new(0, 0), Coord::new(1, 0));
    p.add_route(a, 0, PortSet::only(Port::Ramp), PortSet::only(Port::E));
    p.add_route(b, 0, PortSet::only(Port::W), PortSet::only(Port::Ramp));
    p.add_route(b, 1, PortSet::only(Port::Ramp), PortSet::only(Port::W));
    p.add_route(a, 1, PortSet::only(Port::E), PortSet::only(Port::Ramp));
    (a, b)
}

#[test]
fn two_pes_waiting_for_each_other_are_reported() {
    // Each PE first waits for the other's value and only then sends its own.
    let t = target(1, 1, 4);
    let mut p = Program::new();
    let k = p.add_kernel(
        "k",
        vec![
            (
                "main",
                task(|ctx: &mut TaskContext<'_>| ctx.recv(1, 1, 0, 1)),
            ),
            (
                "reply",
                task(|ctx: &mut TaskContext<'_>| ctx.send_scalar(0, 1, None)),
            ),
        ],
    );
    let (a, b) = pair(&mut p);
    p.add_pe(a, k, 16, &[0, 1], &[0]);
    p.add_pe(b, k, 16, &[1, 0], &[0]);
    let started = Instant::now();
    let err = simulate(&t, &p, &threads(2)).expect_err("deadlock");
    assert!(started.elapsed() < Duration::from_secs(5));
    let SimError::Deadlock(report) = &err else {
        panic!("unexpected {err:?}")
    };
    assert_eq!(report.waiting.len(), 2);
    assert_eq!(
        (
            report.waiting[0].at,
            report.waiting[0].color,
            report.waiting[0].missing
        ),
        (a, 1, 1)
    );
    assert_eq!(
        (
            report.waiting[1].at,
            report.waiting[1].color,
            report.waiting[1].missing
        ),
        (b, 0, 1)
    );
    let text = err.to_string();
    assert!(
        text.contains("PE (0, 0) waits on color 1 for 1 more wavelet(s) (of 1)"),
        "{text}"
    );
    assert!(
        text.contains("PE (1, 0) waits on color 0 for 1 more wavelet(s) (of 1)"),
        "{text}"
    );
}

#[test]
fn receives_queued_on_one_color_are_reported_in_the_order_they_fill() {
    // `b` posts a receive on color 3 (nothing ever comes), then four on color 0, whose
    // sender `a` sends 1 wavelet: the first takes it and still misses 1, two identical ones
    // (which the engine keeps as repeats of the first) and a larger one wait behind it. The
    // report lists b's receives by color, a color's in fill order, repeats one by one.
    let t = target(1, 1, 4);
    let mut p = Program::new();
    let ka = p.add_kernel(
        "a",
        vec![(
            "main",
            task(|ctx: &mut TaskContext<'_>| ctx.send_scalar(0, 7, None)),
        )],
    );
    let kb = p.add_kernel(
        "b",
        vec![(
            "main",
            task(|ctx: &mut TaskContext<'_>| {
                ctx.recv(1, 1, 0, 0)?;
                for _ in 0..3 {
                    ctx.recv(0, 2, 4, 0)?;
                }
                ctx.recv(0, 5, 12, 0)
            }),
        )],
    );
    let (a, b) = pair(&mut p);
    p.add_route(b, 3, PortSet::only(Port::W), PortSet::only(Port::Ramp));
    p.add_pe(a, ka, 16, &[0], &[0]);
    p.add_pe(b, kb, 32, &[0, 3], &[0]);
    let err = simulate(&t, &p, &threads(1)).expect_err("deadlock");
    let SimError::Deadlock(report) = &err else {
        panic!("unexpected {err:?}")
    };
    let waiting: Vec<_> = report
        .waiting
        .iter()
        .map(|w| (w.at, w.color, w.missing, w.requested))
        .collect();
    assert_eq!(
        waiting,
        [
            (b, 0, 1, 2),
            (b, 0, 2, 2),
            (b, 0, 2, 2),
            (b, 0, 5, 5),
            (b, 3, 1, 1)
        ]
    );
}

#[test]
fn backpressure_deadlock_names_the_stuck_sends_and_queues() {
    // Each PE sends 100 words and posts its receive only when its send has completed. With
    // queues of depth 4 neither send can complete: both stall with full queues.
    let t = target(1, 1, 4);
    let mut p = Program::new();
    let k = p.add_kernel(
        "k",
        vec![
            (
                "main",
                task(|ctx: &mut TaskContext<'_>| ctx.send(0, 0, 100, Some(1))),
            ),
            (
                "then_recv",
                task(|ctx: &mut TaskContext<'_>| ctx.recv(1, 100, 0, 2)),
            ),
            ("done", task(|_: &mut TaskContext<'_>| Ok(()))),
        ],
    );
    let (a, b) = pair(&mut p);
    p.add_pe(a, k, 400, &[0, 1], &[0]);
    p.add_pe(b, k, 400, &[1, 0], &[0]);
    let started = Instant::now();
    let err = simulate(&t, &p, &threads(1)).expect_err("deadlock");
    assert!(started.elapsed() < Duration::from_secs(5));
    let SimError::Deadlock(report) = &err else {
        panic!("unexpected {err:?}")
    };
    assert!(report.waiting.is_empty());
    assert_eq!(report.stuck_sends.len(), 2);
    // Each stream has filled the ramp queue at the sender (4) and the input queue at the
    // receiver (4): 8 wavelets out, 92 to go.
    assert_eq!(report.stuck_sends[0].remaining, 92);
    let full: Vec<_> = report
        .queued
        .iter()
        .map(|q| (q.at, q.color, q.from, q.count))
        .collect();
    assert_eq!(
        full,
        vec![
            (a, 0, Port::Ramp, 4),
            (a, 1, Port::E, 4),
            (b, 0, Port::W, 4),
            (b, 1, Port::Ramp, 4)
        ]
    );
    assert!(
        err.to_string()
            .contains("PE (0, 0) cannot send 92 more wavelet(s) on color 0"),
        "{err}"
    );
}

#[test]
fn a_runaway_program_stops_at_the_cycle_budget() {
    let t = target(1, 1, 4);
    let mut p = Program::new();
    let k = p.add_kernel(
        "spin",
        vec![("again", task(|ctx: &mut TaskContext<'_>| ctx.activate(0)))],
    );
    p.add_pe(Coord::new(5, 5), k, 0, &[], &[0]);
    let opts = SimOptions {
        max_cycles: Some(10_000),
        ..SimOptions::default()
    };
    let started = Instant::now();
    let err = simulate(&t, &p, &opts).expect_err("budget");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        err.to_string(),
        "the program was still running after the budget of 10000 cycles; PEs with work left include (5, 5)"
    );
}

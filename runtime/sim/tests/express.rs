//! Express streams — an uncontended stream simulated as one event in closed form — change
//! nothing: outputs, cycle counts, reports, SRAM and errors are identical with the shortcut
//! on and off (`SimOptions::express_streams`), on random stream programs where contention
//! often starts in the middle of a stream (which turns it back into wavelets) — also with a
//! shared ramp (`Target::ramp.shared`), where a stream's feeding PE and its receivers give the
//! ramp to the stream and anything else using it there turns it back.

mod common;

use common::random::{edge_program, program, streamy_program};
use common::{agree_express, options, route, target};
use proptest::prelude::*;
use wsel_sim::{ExpressStats, Program, TaskContext, simulate, task};
use wsel_target::{Coord, Target};

/// Runs with the shortcut on and off agree; returns how the shortcut was used.
fn check(t: &Target, p: &Program, threads: usize) -> ExpressStats {
    agree_express(t, p, &[threads])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn express_streams_change_nothing(seed in any::<u64>(), threads in 1usize..3) {
        let (t, p) = streamy_program(seed);
        check(&t, &p, threads);
        let (t, p) = program(seed);
        check(&t, &p, threads);
        let (t, p) = edge_program(seed);
        check(&t, &p, threads);
    }

    #[test]
    fn express_streams_change_nothing_with_a_shared_ramp(seed in any::<u64>(), threads in 1usize..3) {
        for (mut t, p) in [streamy_program(seed), program(seed)] {
            t.ramp.shared = true;
            check(&t, &p, threads);
        }
    }
}

#[test]
fn the_shortcut_is_taken_and_interrupted_on_random_programs() {
    let mut total = ExpressStats::default();
    for seed in 0..160 {
        let (t, p) = streamy_program(seed);
        let s = check(&t, &p, 1);
        total.started += s.started;
        total.interrupted += s.interrupted;
    }
    // Both paths are exercised: streams that run to their end in closed form, and streams
    // that something came to compete with in the middle.
    assert!(total.started > 100, "{total:?}");
    assert!(total.interrupted > 20, "{total:?}");
    assert!(total.interrupted < total.started, "{total:?}");
}

#[test]
fn with_a_shared_ramp_the_shortcut_is_still_taken_and_interrupted() {
    let (mut total, mut moved) = (ExpressStats::default(), 0);
    for seed in 0..160 {
        let (mut t, p) = streamy_program(seed);
        let cycles = |t: &Target| simulate(t, &p, &options(1, false)).map(|o| o.cycles).ok();
        let unshared = cycles(&t);
        t.ramp.shared = true;
        moved += usize::from(cycles(&t) != unshared);
        let s = check(&t, &p, 1);
        total.started += s.started;
        total.interrupted += s.interrupted;
    }
    // The rule decides the timing of some of these programs (their PEs send and receive at
    // once), and streams still run in closed form and turn back.
    assert!(
        moved > 10,
        "{moved} of 160 programs took other cycles with a shared ramp"
    );
    assert!(total.started > 50, "{total:?}");
    assert!(total.interrupted > 10, "{total:?}");
}

/// A sender at `(0, 1)` sends `n` words east over `hops` hops on color 0; if `cross` is
/// given, a second sender at `(1, 0)` sends `n` words on color 1 down and then east along
/// the same row after `cross` cycles, so the two streams share links from `(1, 1)` on.
fn row_streams(n: u32, hops: u32, cross: Option<u64>) -> (Target, Program) {
    let t = target(2, 2, 4);
    let mut p = Program::new();
    let send = p.add_kernel(
        "send",
        vec![(
            "main",
            task(move |ctx: &mut TaskContext<'_>| {
                ctx.add_cycles(u64::from(ctx.args()[0]));
                ctx.send(0, 0, n, None)
            }),
        )],
    );
    let recv = p.add_kernel(
        "recv",
        vec![
            (
                "main",
                task(move |ctx: &mut TaskContext<'_>| {
                    ctx.recv(0, n, 0, 1)?;
                    if ctx.args()[0] == 2 {
                        ctx.recv(1, n, 4 * n, 1)
                    } else {
                        Ok(())
                    }
                }),
            ),
            ("done", task(|_: &mut TaskContext<'_>| Ok(()))),
        ],
    );
    let (a, dest) = (Coord::new(0, 1), Coord::new(hops, 1));
    let i = p.add_pe(a, send, 4 * n, &[0], &[0]);
    p.pes[i].args = vec![0];
    p.pes[i].sram_init = (0..n).flat_map(|w| (100 + w).to_le_bytes()).collect();
    let streams = if cross.is_some() { 2 } else { 1 };
    let i = p.add_pe(dest, recv, 8 * n, &[0, 1], &[0]);
    p.pes[i].args = vec![streams];
    route(&t, &mut p, 0, a, dest);
    if let Some(delay) = cross {
        let b = Coord::new(1, 0);
        let i = p.add_pe(b, send, 4 * n, &[1], &[0]);
        p.pes[i].args = vec![delay as u32];
        p.pes[i].sram_init = (0..n).flat_map(|w| (500 + w).to_le_bytes()).collect();
        // Down from (1, 0) to (1, 1), then east along row 1 (dimension order goes east
        // first, so build the path by hand).
        let mut entries = vec![wsel_target::RouteEntry {
            at: b,
            rx: wsel_target::PortSet::only(wsel_target::Port::Ramp),
            tx: wsel_target::PortSet::only(wsel_target::Port::S),
        }];
        for x in 1..=hops {
            entries.push(wsel_target::RouteEntry {
                at: Coord::new(x, 1),
                rx: wsel_target::PortSet::only(if x == 1 {
                    wsel_target::Port::N
                } else {
                    wsel_target::Port::W
                }),
                tx: wsel_target::PortSet::only(if x == hops {
                    wsel_target::Port::Ramp
                } else {
                    wsel_target::Port::E
                }),
            });
        }
        p.add_route_entries(1, &entries);
    }
    (t, p)
}

#[test]
fn an_uncontended_stream_is_one_event_with_the_closed_form_timing() {
    // L = 2, S = 2, h = 6, n = 50: the last wavelet lands at t0 + n − 1 + h·L = 63 (t0 = S),
    // the receive's task is ready at 64 and runs S = 2 cycles: 66.
    let (t, p) = row_streams(50, 6, None);
    let out = simulate(&t, &p, &options(1, true)).expect("runs");
    assert_eq!(out.cycles, 2 + 50 + 6 * 2 + 2);
    assert_eq!(
        out.express,
        ExpressStats {
            started: 1,
            interrupted: 0,
            crossing: 0,
        }
    );
    assert_eq!(
        out.read_u32s(Coord::new(6, 1), 0, 50),
        Some((100..150).collect())
    );
    assert_eq!(out.report.wavelet_hops, 50 * 6);
    check(&t, &p, 1);
}

#[test]
fn contention_in_the_middle_of_a_stream_turns_it_back_into_wavelets() {
    // The second stream joins row 1 at (1, 1) while the first is under way (the first, n = 40
    // from t0 = 2 over h = 5 hops of L = 2, holds its ports until its last wavelet lands at
    // 2 + 39 + 10 = 51): from then on the two share the row's links round-robin, which the
    // closed form does not describe, so one stream is turned back into wavelets.
    for delay in [0, 5, 17, 30, 47] {
        let (t, p) = row_streams(40, 5, Some(delay));
        let one = ExpressStats {
            started: 1,
            interrupted: 1,
            crossing: 0,
        };
        assert_eq!(check(&t, &p, 1), one, "delay {delay}");
        check(&t, &p, 2);
    }
    // Late enough, the first stream is done before the second starts: both are express.
    for delay in [60, 200] {
        let (t, p) = row_streams(40, 5, Some(delay));
        let both = ExpressStats {
            started: 2,
            interrupted: 0,
            crossing: 0,
        };
        assert_eq!(check(&t, &p, 1), both, "delay {delay}");
    }
}

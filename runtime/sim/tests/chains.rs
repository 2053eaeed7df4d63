//! Streams along chains of routers in closed form (`express.rs`) change nothing: on random
//! chain programs (multicast and filtered rows fed by PEs or paced edge streams, receives
//! posted a piece at a time, crossing traffic), outputs, cycle counts, reports, SRAM and
//! errors are identical with express streams on and off and for 1 and 2 threads.

mod common;

use common::chains::chain_program;
use common::streams::row_routes;
use common::{agree_express, options};
use proptest::prelude::*;
use wsel_sim::{ExpressStats, Program, TaskContext, simulate, task};
use wsel_target::{Coord, Port, PortSet, Target};

/// Express streams on and off agree (and one and two threads); how they were used.
fn check(t: &Target, p: &Program) -> ExpressStats {
    agree_express(t, p, &[1, 2])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn chains_in_closed_form_change_nothing(seed in any::<u64>()) {
        let (t, p) = chain_program(seed);
        check(&t, &p);
    }
}

#[test]
fn chains_are_taken_and_interrupted() {
    let mut total = ExpressStats::default();
    for seed in 0..200 {
        let (t, p) = chain_program(seed);
        let s = check(&t, &p);
        total.started += s.started;
        total.interrupted += s.interrupted;
    }
    assert!(total.started > 100, "{total:?}");
    assert!(total.interrupted > 20, "{total:?}");
    assert!(total.interrupted < total.started, "{total:?}");
}

/// `pes` PEs along row 0 of a `dev` fabric (L = 1, Q = 4): PE 0 sends `m` words east in
/// `parts` sends issued back to back; every other PE takes them all (multicast) with one
/// receive, the last PE ends the chain.
fn back_to_back(pes: u32, m: u32, parts: u32) -> (Target, Program) {
    let t = common::target(1, 2, 4);
    let mut p = Program::new();
    let send = p.add_kernel(
        "send",
        vec![(
            "main",
            task(move |ctx: &mut TaskContext<'_>| {
                for i in 0..m {
                    ctx.write_u32(4 * i, 7 * i + 1)?;
                }
                for k in 0..parts {
                    let (from, to) = (k * m / parts, (k + 1) * m / parts);
                    ctx.send(0, 4 * from, to - from, None)?;
                }
                Ok(())
            }),
        )],
    );
    let recv = p.add_kernel(
        "recv",
        vec![
            (
                "main",
                task(move |ctx: &mut TaskContext<'_>| ctx.recv(0, m, 0, 1)),
            ),
            ("done", task(|_: &mut TaskContext<'_>| Ok(()))),
        ],
    );
    p.add_pe(Coord::new(0, 0), send, 4 * m, &[0], &[0]);
    for x in 1..pes {
        p.add_pe(Coord::new(x, 0), recv, 4 * m, &[0], &[0]);
    }
    row_routes(&mut p, pes - 1);
    (t, p)
}

#[test]
fn sends_back_to_back_on_one_link_are_one_stream() {
    // Three sends of 20, 20 and 20 words issued at S = 2 go out at 2 .. 61 as one stream; the
    // last PE (7 hops) gets wavelet 59 at 61 + 7 = 68, its task is ready at 69 and runs S = 2.
    let (t, p) = back_to_back(8, 60, 3);
    let stats = check(&t, &p);
    assert_eq!(
        stats,
        ExpressStats {
            started: 1,
            interrupted: 0,
            crossing: 0,
        }
    );
    let out = simulate(&t, &p, &options(1, true)).expect("runs");
    assert_eq!(out.cycles, 71);
    assert_eq!(out.report.wavelet_hops, 60 * 7);
    let want: Vec<u32> = (0..60).map(|i| 7 * i + 1).collect();
    for x in 1..8 {
        assert_eq!(out.read_u32s(Coord::new(x, 0), 0, 60), Some(want.clone()));
    }
}

/// A fan-in reduction along row 0 (L = 1, Q = 4, S = 2): PE 0 sends its `m` values east; PE
/// `k` receives the running sums from the west, adds its own (`m` cycles) and sends them on;
/// the last PE keeps the total.
fn reduction(pes: u32, m: u32) -> (Target, Program) {
    let t = common::target(1, 2, 4);
    let mut p = Program::new();
    let stage = p.add_kernel(
        "stage",
        vec![
            (
                "main",
                task(move |ctx: &mut TaskContext<'_>| {
                    let (x, _) = ctx.coords();
                    for i in 0..m {
                        ctx.write_u32(4 * i, 100 * x + i)?;
                    }
                    if x == 0 {
                        ctx.send(0, 0, m, None)
                    } else {
                        ctx.recv(1, m, 4 * m, 1)
                    }
                }),
            ),
            (
                "add",
                task(move |ctx: &mut TaskContext<'_>| {
                    let (x, _) = ctx.coords();
                    for i in 0..m {
                        let sum = ctx.read_u32(4 * i)? + ctx.read_u32(4 * (m + i))?;
                        ctx.write_u32(4 * i, sum)?;
                    }
                    ctx.add_cycles(u64::from(m));
                    if x + 1 < ctx.region_size().0 {
                        ctx.send(0, 0, m, None)?;
                    }
                    Ok(())
                }),
            ),
        ],
    );
    for x in 0..pes {
        let at = Coord::new(x, 0);
        let i = p.add_pe(
            at,
            stage,
            8 * m,
            &[(x % 2) as u8, ((x + 1) % 2) as u8],
            &[0],
        );
        p.pes[i].region = wsel_target::Rect::new(0, 0, pes, 1);
        if x + 1 < pes {
            let c = (x % 2) as u8;
            p.add_route(at, c, PortSet::only(Port::Ramp), PortSet::only(Port::E));
            p.add_route(
                Coord::new(x + 1, 0),
                c,
                PortSet::only(Port::W),
                PortSet::only(Port::Ramp),
            );
        }
    }
    (t, p)
}

#[test]
fn a_fan_in_reduction_is_one_stream_per_stage() {
    // Each stage's m = 16 sums cross one link as an express stream: 9 stages.
    let (pes, m) = (10, 16);
    let (t, p) = reduction(pes, m);
    let stats = check(&t, &p);
    assert_eq!(
        stats,
        ExpressStats {
            started: u64::from(pes - 1),
            interrupted: 0,
            crossing: 0,
        }
    );
    let out = simulate(&t, &p, &options(1, true)).expect("runs");
    let want: Vec<u32> = (0..m)
        .map(|i| (0..pes).map(|x| 100 * x + i).sum())
        .collect();
    assert_eq!(out.read_u32s(Coord::new(pes - 1, 0), 0, m), Some(want));
    // PE 0 sends at S = 2: wavelets land at PE 1 at 3 ..= 18, its `add` is ready at 19. Each
    // stage then takes S + m cycles to its send and m − 1 + L + 1 to the next `add`: 35. PE 9's
    // `add` starts at 19 + 8·35 = 299 and runs S + m = 18 cycles: the run ends at 317.
    assert_eq!(out.cycles, 317);
    assert_eq!(out.report.wavelet_hops, u64::from((pes - 1) * m));
}

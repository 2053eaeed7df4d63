//! Links that cross a boundary of the target (`wsel_target::Boundary`): exact cycle counts
//! derived by hand in the comments, and random programs on fabrics with boundaries giving
//! the same outcome with express streams on and off and on several threads.
//!
//! The rules (crate README): a link crossing a boundary takes `L + B` cycles for wavelets and
//! credits; the queue behind it holds `max(Q, 2·(L + B))` wavelets, so a stream through it
//! runs at full rate and only arrives `B` cycles later per crossing.

mod common;

use common::random::{observe, program, streamy_program};
use common::{route, target, threads};
use proptest::prelude::*;
use wsel_sim::{Program, SimOptions, TaskContext, simulate, task};
use wsel_target::{Boundary, Coord, Target};

/// The dev fabric with `L = 2`, `S = 2`, queue depth `depth` and boundaries every 4 columns
/// (before columns 3, 7, 11, 15) and every 5 rows (before rows 2, 7, 12), `extra` cycles each.
fn fabric(depth: u32, extra: u32) -> Target {
    let mut t = target(2, 2, depth);
    t.boundary = Boundary {
        columns: 4,
        rows: 5,
        first_column: 3,
        first_row: 2,
        extra_cycles: extra,
    };
    t.validate().expect("valid");
    t
}

/// A sender at `a` sends `n` words on color 0 to a receiver at `b` along the shortest path;
/// the receiver's completion task charges `c` cycles. The run's cycles and the words
/// received, the same with express streams off and on two threads.
fn stream(t: &Target, a: Coord, b: Coord, n: u32, c: u64) -> (u64, Vec<u32>) {
    let mut p = Program::new();
    let send = p.add_kernel(
        "send",
        vec![(
            "main",
            task(move |ctx: &mut TaskContext<'_>| {
                for i in 0..n {
                    ctx.write_u32(4 * i, 100 + i)?;
                }
                ctx.send(0, 0, n, None)
            }),
        )],
    );
    let recv = p.add_kernel(
        "recv",
        vec![
            (
                "main",
                task(move |ctx: &mut TaskContext<'_>| ctx.recv(0, n, 0, 1)),
            ),
            (
                "done",
                task(move |ctx: &mut TaskContext<'_>| {
                    ctx.add_cycles(c);
                    Ok(())
                }),
            ),
        ],
    );
    p.add_pe(a, send, 4 * n, &[0], &[0]);
    p.add_pe(b, recv, 4 * n, &[0], &[0]);
    route(t, &mut p, 0, a, b);
    let out = simulate(t, &p, &threads(1)).expect("runs");
    for opts in [
        SimOptions {
            express_streams: false,
            ..threads(1)
        },
        threads(2),
        threads(4),
    ] {
        let other = simulate(t, &p, &opts).expect("runs");
        assert_eq!((other.cycles, &other.report), (out.cycles, &out.report));
    }
    (out.cycles, out.read_u32s(b, 0, n).expect("sram"))
}

#[test]
fn one_wavelet_across_a_boundary() {
    // L = 2, S = 2, B = 5, c = 5. (0, 0) → (5, 0): 5 hops, the third (column 2 → 3) crosses
    // the boundary before column 3. The send is issued at S = 2; the wavelet arrives at
    // 2 + 5·L + B = 17 and is delivered then; the task is ready at 18 and runs S + c = 7
    // cycles: 25 (without the boundary, 20).
    let t = fabric(4, 5);
    assert_eq!(
        stream(&t, Coord::new(0, 0), Coord::new(5, 0), 1, 5),
        (25, vec![100])
    );
    assert_eq!(
        stream(&target(2, 2, 4), Coord::new(0, 0), Coord::new(5, 0), 1, 5).0,
        20
    );
    // Westward the same link costs the same: (5, 0) → (0, 0), 25.
    assert_eq!(stream(&t, Coord::new(5, 0), Coord::new(0, 0), 1, 5).0, 25);
}

#[test]
fn a_stream_across_boundaries_is_late_but_not_slower() {
    // L = 2, S = 2, B = 6, n = 50, c = 3, queue depth 4 = 2L. (0, 0) → (8, 0): 8 hops, two
    // crossings (before columns 3 and 7). The queues behind them hold 2·(L + B) = 16
    // wavelets, so no link throttles: wavelet i is delivered at 2 + i + 8·L + 2·B; the last
    // (i = 49) at 2 + 49 + 16 + 12 = 79; the task is ready at 80 and ends at 80 + S + c = 85.
    let t = fabric(4, 6);
    let (cycles, data) = stream(&t, Coord::new(0, 0), Coord::new(8, 0), 50, 3);
    assert_eq!(cycles, 2 + 50 + 8 * 2 + 2 * 6 + 2 + 3);
    assert_eq!(cycles, 85);
    assert_eq!(data, (100..150).collect::<Vec<u32>>());
}

#[test]
fn rows_have_boundaries_of_their_own() {
    // L = 2, S = 2, B = 3, n = 10, c = 0. (1, 0) → (1, 8): 8 hops south, crossing the
    // boundaries before rows 2 and 7. The last wavelet is delivered at 2 + 9 + 16 + 6 = 33,
    // its task is ready at 34 and runs max(1, S) = 2 cycles: 36.
    let t = fabric(4, 3);
    assert_eq!(stream(&t, Coord::new(1, 0), Coord::new(1, 8), 10, 0).0, 36);
}

#[test]
fn a_boundary_queue_is_deep_even_when_the_others_are_shallow() {
    // L = 1 and queue depth 1: an ordinary link carries one wavelet every 2L = 2 cycles. S =
    // 2, B = 4, n = 10, c = 0, (0, 0) → (4, 0), one crossing. The sender's link throttles:
    // wavelet i leaves (0, 0) at 2 + 2i; the boundary link's queue holds 2·(1 + 4) = 10, so
    // it adds B and nothing else: the last (i = 9) arrives at 2 + 18 + 4 + 4 = 28, the task
    // is ready at 29 and runs 2 cycles: 31 (27 without the boundary, 4 less).
    let mut t = fabric(1, 4);
    t.hop_latency = 1;
    assert_eq!(stream(&t, Coord::new(0, 0), Coord::new(4, 0), 10, 0).0, 31);
    t.boundary.extra_cycles = 0;
    assert_eq!(stream(&t, Coord::new(0, 0), Coord::new(4, 0), 10, 0).0, 27);
}

/// `t` with boundaries drawn from `seed`.
fn with_boundaries(mut t: Target, seed: u64) -> Target {
    t.boundary = Boundary {
        columns: 2 + (seed % 5) as u32,
        rows: (seed / 5 % 4) as u32,
        first_column: (seed / 20 % 2) as u32,
        first_row: 0,
        extra_cycles: 1 + (seed / 40 % 6) as u32,
    };
    t.validate().expect("valid");
    t
}

fn options(threads: usize, express_streams: bool) -> SimOptions {
    SimOptions {
        threads,
        express_streams,
        ..SimOptions::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Express streams go around chains that cross a boundary and change nothing; the
    /// outcome is the same on one thread and on three (links into other partitions carry
    /// the boundary's latency in their messages and credits).
    #[test]
    fn boundaries_agree_with_express_streams_and_threads(seed in any::<u64>()) {
        for (t, p) in [streamy_program(seed), program(seed)] {
            let t = with_boundaries(t, seed);
            let slow = observe(&t, &p, &options(1, false));
            prop_assert_eq!(&observe(&t, &p, &options(1, true)), &slow);
            prop_assert_eq!(&observe(&t, &p, &options(3, true)), &slow);
        }
    }
}

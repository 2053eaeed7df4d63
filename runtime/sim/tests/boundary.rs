//! Links that cross a boundary of the target (`wsel_target::Boundary`): exact cycle counts
//! derived by hand in the comments, and random programs on fabrics with boundaries giving
//! the same outcome with express streams on and off and on several threads.
//!
//! The rules (crate README): a link crossing a boundary takes `L + B` cycles for wavelets and
//! credits; the queue behind it holds `max(Q, 2·(L + B))` wavelets, so a stream through it
//! runs at full rate and only arrives `B` cycles later per crossing.

mod common;

use common::chains::chain_program;
use common::random::{program, streamy_program};
use common::streams::{multicast, point_to_point, scatter, scattered};
use common::{agree_express, run_agreeing, target};
use proptest::prelude::*;
use wsel_sim::ExpressStats;
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
/// received, the same with express streams off and on two threads (`run_agreeing`).
fn stream(t: &Target, a: Coord, b: Coord, n: u32, c: u64) -> (u64, Vec<u32>) {
    let (p, _) = point_to_point(t, a, b, n, c);
    let out = run_agreeing(t, &p);
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
    // In closed form: one express stream, on a chain crossing both.
    let (p, _) = point_to_point(&t, Coord::new(1, 0), Coord::new(1, 8), 10, 0);
    let express = ExpressStats {
        started: 1,
        interrupted: 0,
        crossing: 1,
    };
    assert_eq!(run_agreeing(&t, &p).express, express);
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

/// The cycle of PE `(x, 0)`'s first delivery in `out`'s report.
fn first_delivery(out: &wsel_sim::Outcome, x: u32) -> Option<u64> {
    let pe = out.report.pes.iter().find(|pe| (pe.x, pe.y) == (x, 0));
    pe.expect("PE in the report").waits[0].first_delivery
}

#[test]
fn a_multicast_across_boundaries_is_one_express_stream() {
    // L = 2, S = 2, B = 5, n = 20, c = 3: (0, 0) multicasts to PEs 1..8 of row 0, crossing
    // the boundaries before columns 3 and 7. The link into router x is the x-th, so wavelet i
    // reaches PE x at 2 + i + D_x, D_x = 2x + 5·(crossings before x): first deliveries at
    // 4, 6, 13, 15, 17, 19, 26, 28. PE 8's last (i = 19) at 2 + 19 + 26 = 47; its task is
    // ready at 48 and ends at 48 + S + c = 53.
    let t = fabric(4, 5);
    let out = run_agreeing(&t, &multicast(&t, 8, 20, 3));
    let firsts: Vec<Option<u64>> = (1..=8).map(|x| first_delivery(&out, x)).collect();
    let want = [4, 6, 13, 15, 17, 19, 26, 28].map(Some);
    assert_eq!(firsts, want);
    assert_eq!(out.cycles, 53);
    for x in 1..=8 {
        let got = out.read_u32s(Coord::new(x, 0), 0, 20).expect("sram");
        assert_eq!(got, (100..120).collect::<Vec<u32>>(), "PE {x}");
    }
    let express = ExpressStats {
        started: 1,
        interrupted: 0,
        crossing: 1,
    };
    assert_eq!(out.express, express);
}

#[test]
fn a_scatter_across_a_boundary_is_one_express_stream() {
    // L = 2, S = 2, B = 5: three PEs taking m = 5 of every 15 (filters), two rows (n = 30);
    // the link into router 3 crosses the boundary before column 3, so D = 2, 4, 11. The send
    // is issued at 2; wavelet i leaves router k at 2 + i + D_k. PE x's first wavelet is
    // 5(x − 1): delivered at 4, 11, 23. The last (i = 29, PE 3's) at 2 + 29 + 11 = 42; the
    // row task is ready at 43 and runs S = 2 cycles: 45. PE 3 posts its second row's receive
    // at 28 + S = 30, before wavelet 25 arrives (38): nothing interrupts the stream.
    let t = fabric(4, 5);
    let (parts, m, rows) = (3, 5, 2);
    let out = run_agreeing(&t, &scatter(parts, m, rows));
    let firsts: Vec<Option<u64>> = (1..=parts).map(|x| first_delivery(&out, x)).collect();
    assert_eq!(firsts, [4, 11, 23].map(Some));
    assert_eq!(out.cycles, 45);
    for x in 1..=parts {
        let got = out.read_u32s(Coord::new(x, 0), 0, m * rows).expect("sram");
        assert_eq!(got, scattered(parts, m, rows, x), "PE {x}");
    }
    let express = ExpressStats {
        started: 1,
        interrupted: 0,
        crossing: 1,
    };
    assert_eq!(out.express, express);
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

/// Random programs (streams, contention, and chains that multicast or scatter a stream
/// with filters) for `seed`, on boundaries drawn from it, give the same outcome with express
/// streams off and on, on one thread and on three (links into other partitions carry the
/// boundary's latency in their messages and credits); the express streams started on chains
/// that cross a boundary.
fn agree(seed: u64) -> u64 {
    let programs = [streamy_program(seed), program(seed), chain_program(seed)];
    programs
        .into_iter()
        .map(|(t, p)| agree_express(&with_boundaries(t, seed), &p, &[1, 3]).crossing)
        .sum()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Express streams on chains that cross boundaries are exact.
    #[test]
    fn boundaries_agree_with_express_streams_and_threads(seed in any::<u64>()) {
        agree(seed);
    }
}

/// The random programs do run express streams across boundaries (the closed forms add each
/// crossing link's latency), so the property above tests them.
#[test]
fn random_programs_run_express_streams_across_boundaries() {
    let crossing: Vec<u64> = (0..8).map(agree).collect();
    assert!(
        crossing.iter().filter(|&&c| c > 0).count() >= 4,
        "{crossing:?}"
    );
}

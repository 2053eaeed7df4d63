//! Exact cycle counts, each derived by hand in the comments.
//!
//! The timing rules (see the crate README): a task that starts at cycle `s` occupies its PE
//! for `S + c` cycles (task switch `S`, its own cost `c`); a runtime call made after the task
//! charged `k` cycles is issued at `s + S + k`. A send issued at `t0` injects wavelet `i` at
//! `t0 + i` (uncontended); a wavelet forwarded onto a link at `t` arrives at `t + L` and can
//! be forwarded (or delivered to a posted receive) in that same cycle. When the last wavelet
//! of a receive is delivered at `t`, its task becomes ready at `t + 1`. The run's cycle count
//! is when the last task ends.

mod common;

use common::streams::{multicast, point_to_point};
use common::{route, target, threads};
use wsel_sim::{Program, TaskContext, TaskFault, simulate, task};
use wsel_target::{Coord, Port, PortSet};

/// A sender at `(0, 0)` sends `n` words on color 0 to a receiver `hops` PEs east; the
/// receiver's completion task charges `c` cycles.
fn stream(l: u32, s: u32, depth: u32, hops: u32, n: u32, c: u64) -> (u64, Vec<u32>) {
    let t = target(l, s, depth);
    let (a, b) = (Coord::new(0, 0), Coord::new(hops, 0));
    let (p, path) = point_to_point(&t, a, b, n, c);
    assert_eq!(path, hops as usize);
    let out = simulate(&t, &p, &threads(1)).expect("runs");
    let got = out.read_u32s(b, 0, n).expect("sram");
    assert_eq!(out.report.wavelet_hops, u64::from(n * hops));
    (out.cycles, got)
}

#[test]
fn one_wavelet_across_h_hops() {
    // L = 2, S = 2, h = 5, c = 5.
    // Sender's launch task runs at 0 and issues the send after the switch: t0 = S = 2.
    // The wavelet is injected and forwarded at 2, arrives h hops later at 2 + h·L = 12 and is
    // delivered at 12 (the receive was posted at cycle S = 2). The completion task is ready at
    // 13 and runs S + c = 7 cycles: the run ends at 20.
    let (cycles, data) = stream(2, 2, 4, 5, 1, 5);
    assert_eq!(cycles, 2 + 5 * 2 + 1 + 2 + 5);
    assert_eq!(cycles, 20);
    assert_eq!(data, vec![100]);
    // The same with h = 9: 2 + 18 + 1 + 7 = 28.
    assert_eq!(stream(2, 2, 4, 9, 1, 5).0, 28);
}

#[test]
fn a_stream_of_n_over_h_hops() {
    // L = 2, S = 2, h = 6, n = 50, c = 3, queue depth 4 (= 2L, enough for full rate: a slot
    // is held from the send until its credit returns 2L cycles later).
    // t0 = S = 2; wavelet i is injected at 2 + i and delivered at 2 + i + h·L. The last
    // (i = 49) is delivered at 2 + 49 + 12 = 63; the task is ready at 64 and ends at
    // 64 + S + c = 69. In general: t0 + n + h·L + S + c.
    let (cycles, data) = stream(2, 2, 4, 6, 50, 3);
    assert_eq!(cycles, 2 + 50 + 6 * 2 + 2 + 3);
    assert_eq!(cycles, 69);
    assert_eq!(data, (100..150).collect::<Vec<u32>>());
}

#[test]
fn a_shallow_queue_halves_the_rate() {
    // L = 1, queue depth 1: a slot is free again only when its credit returns, 2L = 2 cycles
    // after the wavelet was sent, so each link carries one wavelet every 2 cycles.
    // S = 2, h = 4, n = 10, c = 0: t0 = 2; wavelet i leaves the sender at 2 + 2i and arrives
    // (every later link is free when it gets there) at 2 + 2i + 4. The last (i = 9) is
    // delivered at 24, the task is ready at 25 and runs max(1, S + c) = 2 cycles: 27.
    let (cycles, _) = stream(1, 2, 1, 4, 10, 0);
    assert_eq!(cycles, 27);
}

#[test]
fn two_streams_sharing_a_link_take_twice_as_long() {
    // L = 2, S = 2, n = 40, queue depth 4. Stream A (color 0) goes (0,1) → (1,1) → (2,1) →
    // (3,1); stream B (color 1) goes (1,2) → (1,1) → (2,1) → (3,1). Both are issued at
    // t0 = S = 2 and reach (1,1) at 2 + L = 4: from then on the links (1,1)→E and (2,1)→E
    // carry both streams, alternating (round-robin), one wavelet per cycle.
    //
    // Alone, A's last wavelet crosses (1,1)→E at 4 + (n - 1) = 43.
    // Shared, the link is busy for 2n cycles from 4: the last wavelet (B's, since A's queue
    // is served first) crosses at 4 + 2n - 1 = 83.
    // Either way it then takes 2 more hops (2L = 4) to (3,1) and is delivered; the completion
    // task is ready one cycle later and runs S = 2 cycles (c = 0).
    // Alone: 43 + 4 + 1 + 2 = 50.
    // Shared: A's last wavelet crosses at 82 and B's at 83; A's completion task is ready at
    // 82 + 4 + 1 = 87 and runs 87..89, so B's (ready at 88) runs 89..91: 91.
    // The link-bound part doubles: the shared link is busy n = 40 cycles alone, 2n = 80 shared.
    let n = 40u32;
    let run = |both: bool| {
        let t = target(2, 2, 4);
        let mut p = Program::new();
        let send = p.add_kernel(
            "send",
            vec![(
                "main",
                task(move |ctx: &mut TaskContext<'_>| ctx.send(0, 0, n, None)),
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
        let (a, b, dst) = (Coord::new(0, 1), Coord::new(1, 2), Coord::new(3, 1));
        p.add_pe(a, send, 4 * n, &[0], &[0]);
        let r = p.add_pe(dst, recv, 8 * n, &[0, 1], &[0]);
        p.pes[r].args = vec![if both { 2 } else { 1 }];
        p.add_route(a, 0, PortSet::only(Port::Ramp), PortSet::only(Port::E));
        for x in 1..3 {
            p.add_route(
                Coord::new(x, 1),
                0,
                PortSet::only(Port::W),
                PortSet::only(Port::E),
            );
        }
        p.add_route(dst, 0, PortSet::only(Port::W), PortSet::only(Port::Ramp));
        if both {
            p.add_pe(b, send, 4 * n, &[1], &[0]);
            p.add_route(b, 1, PortSet::only(Port::Ramp), PortSet::only(Port::N));
            p.add_route(
                Coord::new(1, 1),
                1,
                PortSet::only(Port::S),
                PortSet::only(Port::E),
            );
            p.add_route(
                Coord::new(2, 1),
                1,
                PortSet::only(Port::W),
                PortSet::only(Port::E),
            );
            p.add_route(dst, 1, PortSet::only(Port::W), PortSet::only(Port::Ramp));
        }
        simulate(&t, &p, &threads(1)).expect("runs")
    };
    let alone = run(false);
    let shared = run(true);
    assert_eq!(alone.cycles, 50);
    assert_eq!(shared.cycles, 91);
    let link = |o: &wsel_sim::Outcome, x: u32| {
        o.report
            .links
            .iter()
            .find(|l| l.x == x && l.y == 1 && l.dir == wsel_target::Dir::East)
            .map(|l| l.wavelets)
    };
    assert_eq!(link(&shared, 1), Some(80));
    assert_eq!(link(&alone, 1), Some(40));
}

#[test]
fn multicast_to_a_row() {
    // L = 2, S = 2, n = 20, c = 4. PE (0,0) sends on color 0; every PE (x,0), x = 1..7,
    // receives from W and forwards to E and its ramp (the last only to its ramp). A wavelet
    // leaves the queue once both ports took it, in the same cycle when both are free.
    // PE x gets wavelet i at t0 + i + x·L with t0 = S = 2. The last PE (x = 7) gets the last
    // wavelet at 2 + 19 + 14 = 35, its task is ready at 36 and ends at 36 + S + c = 42.
    let (n, k) = (20u32, 8u32);
    let t = target(2, 2, 4);
    let p = multicast(&t, k - 1, n, 4);
    let dests: Vec<Coord> = (1..k).map(|x| Coord::new(x, 0)).collect();
    let out = simulate(&t, &p, &threads(1)).expect("runs");
    assert_eq!(out.cycles, 2 + 19 + 7 * 2 + 1 + 2 + 4);
    assert_eq!(out.cycles, 42);
    for &d in &dests {
        assert_eq!(
            out.read_u32s(d, 0, n).expect("sram"),
            (100..100 + n).collect::<Vec<_>>()
        );
    }
    // Every one of the 7 links carries the stream once.
    assert_eq!(out.report.wavelet_hops, u64::from(n * (k - 1)));
}

#[test]
fn a_reduction_along_a_row() {
    // L = 2, S = 2, k = 8 PEs in row 0, PE x holds the value x + 1 at byte 0.
    // PE 0's launch charges 1 cycle and sends its value east: issued at 0 + S + 1 = 3.
    // PE x (x ≥ 1) posted recv(1 word) at launch (cycle S = 2). When the partial sum arrives
    // (issued at t, delivered at t + L), the `add` task is ready at t + L + 1, charges 1 cycle
    // for the add and sends the new partial sum at t + L + 1 + S + 1: each stage adds
    // L + 1 + S + 1 = 6 cycles. PE x's send is issued at 3 + 6x; the last PE's add task starts
    // at 3 + 6·6 + L + 1 = 42, stores the total instead of sending, and ends at 42 + S + 1 = 45.
    let k = 8u32;
    let t = target(2, 2, 4);
    let mut p = Program::new();
    let first = p.add_kernel(
        "first",
        vec![(
            "main",
            task(|ctx: &mut TaskContext<'_>| {
                ctx.add_cycles(1);
                let v = ctx.read_u32(0)?;
                ctx.send_scalar(0, v, None)
            }),
        )],
    );
    let add = |ctx: &mut TaskContext<'_>| -> Result<(), TaskFault> {
        ctx.add_cycles(1);
        let sum = f32::from_bits(ctx.read_u32(0)?) + f32::from_bits(ctx.read_u32(4)?);
        let (x, _) = ctx.coords();
        let (w, _) = ctx.region_size();
        if x + 1 == w {
            ctx.write_f32(8, sum)
        } else {
            ctx.send_scalar(0, sum.to_bits(), None)
        }
    };
    let rest = p.add_kernel(
        "rest",
        vec![
            (
                "main",
                task(|ctx: &mut TaskContext<'_>| ctx.recv(1, 1, 4, 1)),
            ),
            ("add", task(add)),
        ],
    );
    for x in 0..k {
        let at = Coord::new(x, 0);
        let i = if x == 0 {
            p.add_pe(at, first, 12, &[0], &[0])
        } else {
            p.add_pe(at, rest, 12, &[0, 1], &[0])
        };
        p.pes[i].region = wsel_target::Rect::new(0, 0, k, 1);
        p.pes[i].sram_init = ((x + 1) as f32).to_bits().to_le_bytes().to_vec();
        // Color alternates so that a PE receives on one color and sends on the other.
        let (send_c, recv_c) = if x % 2 == 0 { (0, 1) } else { (1, 0) };
        p.pes[i].ports = vec![send_c, recv_c];
        if x + 1 < k {
            p.add_route(
                at,
                send_c,
                PortSet::only(Port::Ramp),
                PortSet::only(Port::E),
            );
        }
        if x > 0 {
            p.add_route(
                at,
                recv_c,
                PortSet::only(Port::W),
                PortSet::only(Port::Ramp),
            );
        }
    }
    let out = simulate(&t, &p, &threads(1)).expect("runs");
    assert_eq!(out.cycles, 45);
    let total = out.read_f32s(Coord::new(k - 1, 0), 8, 1).expect("sram")[0];
    assert_eq!(total, (1..=k).sum::<u32>() as f32);
}

#[test]
fn a_detour_around_a_dead_pe_costs_exactly_the_extra_hops() {
    // The dead PE (3,2) sits on the straight 6-hop route from (0,2) to (6,2); the detour goes
    // around it through row 1 (or 3): 8 hops. With L = 2 the run takes exactly 2 × L = 4
    // cycles longer, and the values are the same.
    let run = |dead: bool| {
        let mut t = target(2, 2, 4);
        if dead {
            t.defects.add_dead_pe(Coord::new(3, 2));
        }
        let n = 16u32;
        let mut p = Program::new();
        let send = p.add_kernel(
            "send",
            vec![(
                "main",
                task(move |ctx: &mut TaskContext<'_>| ctx.send(0, 0, n, None)),
            )],
        );
        let recv = p.add_kernel(
            "recv",
            vec![
                (
                    "main",
                    task(move |ctx: &mut TaskContext<'_>| ctx.recv(0, n, 0, 1)),
                ),
                ("done", task(|_: &mut TaskContext<'_>| Ok(()))),
            ],
        );
        let (a, b) = (Coord::new(0, 2), Coord::new(6, 2));
        let s = p.add_pe(a, send, 4 * n, &[0], &[0]);
        p.pes[s].sram_init = (0..n).flat_map(|i| (i * i).to_le_bytes()).collect();
        p.add_pe(b, recv, 4 * n, &[0], &[0]);
        let hops = route(&t, &mut p, 0, a, b);
        let out = simulate(&t, &p, &threads(1)).expect("runs");
        (hops, out.cycles, out.read_u32s(b, 0, n).expect("sram"))
    };
    let (h0, c0, v0) = run(false);
    let (h1, c1, v1) = run(true);
    assert_eq!((h0, h1), (6, 8));
    assert_eq!(c1 - c0, 2 * 2);
    assert_eq!(v0, v1);
    // Straight: t0 = 2, last of 16 delivered at 2 + 15 + 12 = 29, ready 30, ends 32.
    assert_eq!(c0, 32);
}

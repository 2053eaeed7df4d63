//! When edge streams enter and leave the fabric (`Outcome::input_timing`, `output_timing`),
//! and weight-store phases, each derived by hand in the comments.
//!
//! The rules (see the crate README): an edge source moves at most one wavelet per cycle into
//! its edge router's input queue, paced by its bandwidth pool (`k` streams in a pool of `B`
//! bytes/cycle: one every `max(1, 4k / B)` cycles); the router forwards it in the same cycle.
//! An output takes a wavelet off the fabric in the cycle it reaches the edge router, paced by
//! the host pool. Weight streams are requested phase by phase and move
//! `weight_store.latency_cycles` after their request.

mod common;

use common::{run_agreeing, streams, target};
use wsel_sim::{
    EdgeInput, EdgeOutput, EdgeSource, Outcome, Program, StreamTiming, TaskContext, task,
};
use wsel_target::{Coord, Dir, Port, PortSet};

/// An input entering row `y` from the west on `color`, carried east to a PE at `(hops, y)`
/// that receives it.
fn input_to_pe(p: &mut Program, kernel: u32, y: u32, hops: u32, input: EdgeInput) {
    let color = input.color;
    p.inputs.push(input);
    for x in 0..hops {
        p.add_route(
            Coord::new(x, y),
            color,
            PortSet::only(Port::W),
            PortSet::only(Port::E),
        );
    }
    p.add_route(
        Coord::new(hops, y),
        color,
        PortSet::only(Port::W),
        PortSet::only(Port::Ramp),
    );
    p.add_pe(Coord::new(hops, y), kernel, 4 * 64, &[color], &[0]);
}

fn input(y: u32, color: u8, n: u32, source: EdgeSource, start: u64, phase: u32) -> EdgeInput {
    EdgeInput {
        at: Coord::new(0, y),
        side: Dir::West,
        color,
        data: (0..n).map(|i| 1000 * u32::from(color) + i).collect(),
        source,
        start,
        phase,
    }
}

fn timing(wavelets: u64, requested: u64, first: u64, last: u64) -> StreamTiming {
    StreamTiming {
        wavelets,
        requested,
        first: Some(first),
        last: Some(last),
        held_back: 0,
    }
}

#[test]
fn a_stream_the_fabric_cannot_take_is_held_back() {
    // One host stream of n = 12 at one wavelet per cycle (pool 64 B/cycle) into a PE one hop
    // east that posts its receive only after 50 cycles of work. The queues fill, the source
    // waits for room, and every wavelet that waits is held back: with a period of one cycle,
    // wavelet j is released the cycle after wavelet j - 1 entered, so the held-back cycles
    // add up to (last - first) - (n - 1), and they are not zero.
    let t = target(2, 2, 4);
    let mut p = Program::new();
    let k = p.add_kernel(
        "late",
        vec![
            (
                "main",
                task(|ctx: &mut TaskContext<'_>| {
                    ctx.add_cycles(50);
                    ctx.recv(0, 12, 0, 1)
                }),
            ),
            ("done", task(|_: &mut TaskContext<'_>| Ok(()))),
        ],
    );
    input_to_pe(&mut p, k, 0, 1, input(0, 0, 12, EdgeSource::Host, 0, 0));
    let out = run_agreeing(&t, &p);
    let timing = &out.input_timing[0];
    let (first, last) = (
        timing.first.expect("entered"),
        timing.last.expect("entered"),
    );
    assert_eq!(first, 0);
    assert!(timing.held_back > 0, "{timing:?}");
    assert_eq!(timing.held_back, (last - first) - 11, "{timing:?}");
}

#[test]
fn a_host_input_enters_one_wavelet_per_period() {
    // L = 2, S = 2. One host stream (and no output) in a pool of 2 bytes/cycle: one wavelet
    // every 4·1 / 2 = 2 cycles. Requested at start = 5, wavelet j enters (0, 0) at 5 + 2j and
    // is forwarded at once (the queue never fills): first 5, last of n = 10 at 5 + 18 = 23.
    // It reaches the receiver 3 hops east at 23 + 3L = 29, the completion task is ready at 30
    // and runs S = 2 cycles: the run ends at 32.
    let mut t = target(2, 2, 4);
    t.host_io.bandwidth_bytes_per_cycle = 2;
    let mut p = Program::new();
    let k = streams::receiver(&mut p, 10, 0);
    input_to_pe(&mut p, k, 0, 3, input(0, 0, 10, EdgeSource::Host, 5, 0));
    let out = run_agreeing(&t, &p);
    assert_eq!(out.input_timing, vec![timing(10, 5, 5, 23)]);
    assert_eq!(out.cycles, 32);
}

#[test]
fn a_paced_weight_stream_waits_for_the_store_latency() {
    // Two weight streams (one phase) share a store of 1 byte/cycle with a latency of 30: one
    // wavelet every 4·2 / 1 = 8 cycles each. Requested at start = 4, they move from
    // 4 + 30 = 34: wavelet j enters at 34 + 8j, the last of n = 5 at 34 + 32 = 66.
    let mut t = target(2, 2, 4);
    t.weight_store.bandwidth_bytes_per_cycle = 1;
    t.weight_store.latency_cycles = 30;
    let mut p = Program::new();
    let k = streams::receiver(&mut p, 5, 0);
    for y in 0..2 {
        input_to_pe(
            &mut p,
            k,
            y,
            2,
            input(y, y as u8, 5, EdgeSource::WeightStore, 4, 0),
        );
    }
    let out = run_agreeing(&t, &p);
    assert_eq!(out.input_timing, vec![timing(5, 4, 34, 66); 2]);
}

#[test]
fn weight_phases_are_served_in_order_each_with_the_whole_store() {
    // A store of 4 bytes/cycle with a latency of 10. Phase 2 has two streams of n = 6 (rows 0
    // and 1), phase 7 one (row 2); phases in between have no streams and are skipped.
    // Phase 2 (the first): requested at start = 0, moving from 10, two streams share the
    // store: one wavelet every 4·2 / 4 = 2 cycles each, entering at 10, 12, …, 20.
    // Phase 7: requested when phase 2's last wavelet has entered (e = 20), at
    // max(start, e + 1) = 21, moving from 21 + 10 = 31 with the whole store (4·1 / 4 = 1
    // cycle): entering at 31, …, 36. (Sharing with phase 2 would have paced all three at one
    // every 3 cycles.)
    // A third stream in phase 7 with start = 50 is requested at max(50, 21) = 50 and enters
    // from 60; it shares the store with the other phase-7 stream: one every 2 cycles each.
    // So the phase-7 stream of row 2 enters at 31, 33, …, 41 and that of row 3 at 60, …, 70.
    let mut t = target(2, 2, 4);
    t.weight_store.bandwidth_bytes_per_cycle = 4;
    t.weight_store.latency_cycles = 10;
    let make = |late: bool| {
        let mut p = Program::new();
        let k = streams::receiver(&mut p, 6, 0);
        for (y, phase) in [(0, 2), (1, 2), (2, 7)] {
            input_to_pe(
                &mut p,
                k,
                y,
                2,
                input(y, y as u8, 6, EdgeSource::WeightStore, 0, phase),
            );
        }
        if late {
            input_to_pe(
                &mut p,
                k,
                3,
                2,
                input(3, 3, 6, EdgeSource::WeightStore, 50, 7),
            );
        }
        p
    };
    let out = run_agreeing(&t, &make(false));
    assert_eq!(
        out.input_timing,
        vec![
            timing(6, 0, 10, 20),
            timing(6, 0, 10, 20),
            timing(6, 21, 31, 36)
        ]
    );
    let out = run_agreeing(&t, &make(true));
    assert_eq!(
        out.input_timing,
        vec![
            timing(6, 0, 10, 20),
            timing(6, 0, 10, 20),
            timing(6, 21, 31, 41),
            timing(6, 50, 60, 70)
        ]
    );
    // Host streams ignore phases: a host stream "in phase 7" moves from its start.
    let mut p = make(false);
    input_to_pe(&mut p, 0, 4, 2, input(4, 4, 6, EdgeSource::Host, 1, 7));
    let out = run_agreeing(&t, &p);
    assert_eq!(out.input_timing[3], timing(6, 1, 1, 6));
    assert_eq!(out.input_timing[2], timing(6, 21, 31, 36));
}

/// A PE at `(0, 0)` sends `n` words east to an output leaving `(7, 0)` through the east edge.
fn to_output(host_bytes_per_cycle: u32, n: u32) -> Outcome {
    let mut t = target(2, 2, 4);
    t.width = 8;
    t.host_io.bandwidth_bytes_per_cycle = host_bytes_per_cycle;
    let mut p = Program::new();
    let k = p.add_kernel(
        "send",
        vec![(
            "main",
            task(move |ctx: &mut TaskContext<'_>| ctx.send(0, 0, n, None)),
        )],
    );
    p.add_pe(Coord::new(0, 0), k, 4 * n, &[0], &[0]);
    p.add_route(
        Coord::new(0, 0),
        0,
        PortSet::only(Port::Ramp),
        PortSet::only(Port::E),
    );
    for x in 1..8 {
        p.add_route(
            Coord::new(x, 0),
            0,
            PortSet::only(Port::W),
            PortSet::only(Port::E),
        );
    }
    p.outputs.push(EdgeOutput {
        at: Coord::new(7, 0),
        side: Dir::East,
        color: 0,
    });
    run_agreeing(&t, &p)
}

#[test]
fn an_output_leaves_when_it_reaches_the_edge_at_the_host_rate() {
    // L = 2, S = 2: the send is issued at t0 = S = 2 and wavelet i leaves the sender at 2 + i,
    // reaching (7, 0) after 7 hops at 2 + i + 14 = 16 + i. With 64 bytes/cycle for the one
    // host stream the output takes one per cycle: first 16, last of n = 8 at 23; the fabric
    // is quiet from 24.
    let out = to_output(64, 8);
    assert_eq!(out.output_timing, vec![timing(8, 0, 16, 23)]);
    assert_eq!(out.cycles, 24);
    // With 1 byte/cycle the output takes one wavelet every 4 cycles; the rest wait in the
    // queues (backpressure), and the edge router always has the next one: 16, 20, …, 44.
    let out = to_output(1, 8);
    assert_eq!(out.output_timing, vec![timing(8, 0, 16, 44)]);
    assert_eq!(out.outputs[0].len(), 8);
}

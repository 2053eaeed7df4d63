//! Tensors streaming in and out through edge PEs at the target's I/O bandwidth.

mod common;

use common::{target, threads};
use wsel_sim::{EdgeInput, EdgeOutput, EdgeSource, Program, TaskContext, simulate, task};
use wsel_target::{Coord, Dir, Port, PortSet};

/// Color 0 enters row 0 from the west edge, crosses all 16 PEs and leaves through the east
/// edge, with no PE code involved.
fn pass_through(host_bytes_per_cycle: u32, n: u32) -> (u64, Vec<u32>) {
    let mut t = target(2, 2, 4);
    t.host_io.bandwidth_bytes_per_cycle = host_bytes_per_cycle;
    let mut p = Program::new();
    let data: Vec<u32> = (0..n).map(|i| 1000 + i).collect();
    p.inputs.push(EdgeInput {
        at: Coord::new(0, 0),
        side: Dir::West,
        color: 0,
        data,
        source: EdgeSource::Host,
        start: 0,
        phase: 0,
    });
    p.outputs.push(EdgeOutput {
        at: Coord::new(15, 0),
        side: Dir::East,
        color: 0,
    });
    for x in 0..16 {
        p.add_route(
            Coord::new(x, 0),
            0,
            PortSet::only(Port::W),
            PortSet::only(Port::E),
        );
    }
    let out = simulate(&t, &p, &threads(1)).expect("runs");
    (out.cycles, out.outputs[0].clone())
}

#[test]
fn a_stream_crosses_the_fabric_at_the_host_rate() {
    // Two host streams (one in, one out) share 2 bytes/cycle: 1 byte/cycle each, so one
    // wavelet every 4 cycles. Wavelet j enters (0,0) at 4j, is forwarded at once and reaches
    // (15,0) after 15 hops of L = 2 at 4j + 30, where the output (also paced every 4 cycles)
    // takes it in the same cycle. The last of n = 10 leaves at 36 + 30 = 66; the fabric is
    // quiet from 67.
    let (cycles, data) = pass_through(2, 10);
    assert_eq!(cycles, 67);
    assert_eq!(data, (1000..1010).collect::<Vec<u32>>());
    // With ample bandwidth a stream is limited by the link: one per cycle, 9 + 30 + 1 = 40.
    let (cycles, data) = pass_through(176, 10);
    assert_eq!(cycles, 40);
    assert_eq!(data.len(), 10);
}

#[test]
fn host_in_compute_host_out() {
    // The host streams 8 words into PE (0,4) through the west edge; the PE doubles them and
    // sends them back out through the west edge on color 1.
    let t = target(1, 1, 4);
    let mut p = Program::new();
    let k = p.add_kernel(
        "double",
        vec![
            (
                "main",
                task(|ctx: &mut TaskContext<'_>| ctx.recv(0, 8, 0, 1)),
            ),
            (
                "work",
                task(|ctx: &mut TaskContext<'_>| {
                    for i in 0..8 {
                        let v = ctx.read_f32(4 * i)?;
                        ctx.write_f32(4 * i, 2.0 * v)?;
                    }
                    ctx.add_cycles(8);
                    ctx.send(1, 0, 8, None)
                }),
            ),
        ],
    );
    let at = Coord::new(0, 4);
    p.add_pe(at, k, 32, &[0, 1], &[0]);
    p.add_route(at, 0, PortSet::only(Port::W), PortSet::only(Port::Ramp));
    p.add_route(at, 1, PortSet::only(Port::Ramp), PortSet::only(Port::W));
    let input: Vec<u32> = (0..8).map(|i| (i as f32 + 0.5).to_bits()).collect();
    p.inputs.push(EdgeInput {
        at,
        side: Dir::West,
        color: 0,
        data: input,
        source: EdgeSource::Host,
        start: 0,
        phase: 0,
    });
    p.outputs.push(EdgeOutput {
        at,
        side: Dir::West,
        color: 1,
    });
    let out = simulate(&t, &p, &threads(1)).expect("runs");
    let got: Vec<f32> = out.outputs[0].iter().map(|&w| f32::from_bits(w)).collect();
    assert_eq!(
        got,
        (0..8).map(|i| 2.0 * (i as f32 + 0.5)).collect::<Vec<f32>>()
    );
}

#[test]
fn weight_streams_wait_for_the_store_latency() {
    // The weight store adds its latency (100 cycles on dev) before the first wavelet: the
    // pass-through of 10 words then takes 100 cycles longer than from the host (with the
    // same per-stream rate: dev's 64 bytes/cycle make both streams link-bound).
    let mut t = target(2, 2, 4);
    t.host_io.bandwidth_bytes_per_cycle = 64;
    let mut p = Program::new();
    p.inputs.push(EdgeInput {
        at: Coord::new(0, 0),
        side: Dir::West,
        color: 0,
        data: (0..10).collect(),
        source: EdgeSource::WeightStore,
        start: 0,
        phase: 0,
    });
    p.outputs.push(EdgeOutput {
        at: Coord::new(15, 0),
        side: Dir::East,
        color: 0,
    });
    for x in 0..16 {
        p.add_route(
            Coord::new(x, 0),
            0,
            PortSet::only(Port::W),
            PortSet::only(Port::E),
        );
    }
    let out = simulate(&t, &p, &threads(1)).expect("runs");
    assert_eq!(out.cycles, 140);
    assert_eq!(out.outputs[0], (0..10).collect::<Vec<u32>>());
}

//! A bus: one color whose route at every PE of a row receives from and forwards to west, east
//! and the ramp. A wavelet never leaves by the port it arrived on, so what any PE sends
//! travels both ways along the row and reaches every other PE once; the sender does not get
//! its own wavelets back. Cycle counts are derived by hand in the comments (timing rules: the
//! crate README; `timing.rs` for the single-path case).

mod common;

use common::{run_agreeing, target};
use wsel_sim::{Program, TaskContext, task};
use wsel_target::{Coord, Port, PortSet};

const WIDTH: u32 = 4;

/// The bus route of PE `x` of a row of `WIDTH` PEs at `y = 0`.
fn bus_ports(x: u32) -> PortSet {
    let mut ports = PortSet::only(Port::Ramp);
    if x > 0 {
        ports = ports.with(Port::W);
    }
    if x + 1 < WIDTH {
        ports = ports.with(Port::E);
    }
    ports
}

/// Every PE of the row runs one kernel: the PEs in `roots` send `n` words (100, 101, ...) in
/// turn on the bus, root `k` once it has received the words of roots `0..k`; every other PE
/// receives every root's words, `n` per root, into consecutive SRAM. Gives the outcome.
fn broadcast(roots: &'static [u32], n: u32) -> wsel_sim::Outcome {
    let t = target(2, 2, 4);
    let mut p = Program::new();
    let kernel = p.add_kernel(
        "bus",
        vec![
            (
                "main",
                task(move |ctx: &mut TaskContext<'_>| step(ctx, roots, n, 0)),
            ),
            (
                "next",
                task(move |ctx: &mut TaskContext<'_>| {
                    let done = ctx.read_u32(4 * 64)? + 1;
                    ctx.write_u32(4 * 64, done)?;
                    step(ctx, roots, n, done)
                }),
            ),
        ],
    );
    for x in 0..WIDTH {
        let at = Coord::new(x, 0);
        p.add_pe(at, kernel, 4 * 65, &[0, 0], &[0]);
        p.add_route(at, 0, bus_ports(x), bus_ports(x));
    }
    run_agreeing(&t, &p)
}

/// Phase `k`: the root of phase `k` sends and moves on; the others receive its words.
fn step(
    ctx: &mut TaskContext<'_>,
    roots: &[u32],
    n: u32,
    k: u32,
) -> Result<(), wsel_sim::TaskFault> {
    let Some(&root) = roots.get(k as usize) else {
        return Ok(());
    };
    if ctx.fabric_coord().x == root {
        for i in 0..n {
            ctx.write_u32(4 * (32 + i), 100 * (k + 1) + i)?;
        }
        ctx.send(0, 4 * 32, n, None)?;
        ctx.activate(1)
    } else {
        ctx.recv(1, n, 4 * (n * k), 1)
    }
}

#[test]
fn a_send_from_an_interior_pe_reaches_every_other_pe_of_the_row() {
    // L = 2, S = 2. PE 2 sends 3 words at t0 = S = 2 (injected at 2, 3, 4), both ways: PEs 1
    // and 3 (one hop) get word i at 2 + i + L, PE 0 (two hops) at 2 + i + 2L. PE 0's last
    // word arrives at 4 + 4 = 8; its `next` task is ready at 9 and runs S = 2 cycles: the
    // run ends at 11.
    let out = broadcast(&[2], 3);
    assert_eq!(out.cycles, 11);
    for x in [0, 1, 3] {
        assert_eq!(
            out.read_u32s(Coord::new(x, 0), 0, 3).expect("sram"),
            vec![100, 101, 102],
            "PE {x}"
        );
    }
    // The root received nothing: its receive buffer is untouched.
    assert_eq!(
        out.read_u32s(Coord::new(2, 0), 0, 3).expect("sram"),
        vec![0, 0, 0]
    );
    // 3 words over 3 links (2 -> 1 -> 0, 2 -> 3).
    assert_eq!(out.report.wavelet_hops, 9);
}

#[test]
fn any_pe_can_be_the_root_in_turn() {
    // Roots 0, 3, 1: phase k's words land at words 2k.. of every PE but its root, whose slot
    // stays zero.
    const ROOTS: [u32; 3] = [0, 3, 1];
    let out = broadcast(&ROOTS, 2);
    for x in 0..WIDTH {
        let expected: Vec<u32> = (0..3u32)
            .flat_map(|k| {
                let base = 100 * (k + 1);
                if ROOTS[k as usize] == x {
                    [0, 0]
                } else {
                    [base, base + 1]
                }
            })
            .collect();
        let got = out.read_u32s(Coord::new(x, 0), 0, 6).expect("sram");
        assert_eq!(got, expected, "PE {x}");
    }
}

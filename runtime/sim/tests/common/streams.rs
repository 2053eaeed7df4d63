//! Stream programs for the tests whose cycle counts are derived by hand: a sender and a
//! receiver on a shortest path, a multicast along row 0 (every PE takes every wavelet), a
//! scatter along row 0 with ramp filters (each PE keeps its part).

use super::route;
use wsel_sim::{Program, RampFilter, TaskContext, task};
use wsel_target::{Coord, Port, PortSet, Target};

/// The sender's kernel: it writes the words `base + i` (`i < n`) to SRAM and sends them on
/// port 0 (one word as a scalar send).
pub fn sender(p: &mut Program, n: u32, base: u32) -> u32 {
    p.add_kernel(
        "send",
        vec![(
            "main",
            task(move |ctx: &mut TaskContext<'_>| {
                for i in 0..n {
                    ctx.write_u32(4 * i, base + i)?;
                }
                if n == 1 {
                    ctx.send_scalar(0, base, None)
                } else {
                    ctx.send(0, 0, n, None)
                }
            }),
        )],
    )
}

/// The receiver's kernel: one receive of `n` words on port 0 at byte 0, whose completion task
/// charges `c` cycles.
pub fn receiver(p: &mut Program, n: u32, c: u64) -> u32 {
    p.add_kernel(
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
    )
}

/// A sender at `a` sends `n` words (`100 + i`) on color 0 to a receiver at `b` along the
/// shortest path on `t`; the receiver's completion task charges `c` cycles. The program and
/// the path's hops.
pub fn point_to_point(t: &Target, a: Coord, b: Coord, n: u32, c: u64) -> (Program, usize) {
    let mut p = Program::new();
    let send = sender(&mut p, n, 100);
    let recv = receiver(&mut p, n, c);
    p.add_pe(a, send, 4 * n, &[0], &[0]);
    p.add_pe(b, recv, 4 * n, &[0], &[0]);
    let hops = route(t, &mut p, 0, a, b);
    (p, hops)
}

/// Row 0's routes from the sender at `(0, 0)` to PEs `1 ..= pes`: each takes the stream from
/// the west, delivers it to its PE and (but the last) passes it east.
pub fn row_routes(p: &mut Program, pes: u32) {
    p.add_route(
        Coord::new(0, 0),
        0,
        PortSet::only(Port::Ramp),
        PortSet::only(Port::E),
    );
    for x in 1..=pes {
        let out = if x < pes {
            PortSet::only(Port::Ramp).with(Port::E)
        } else {
            PortSet::only(Port::Ramp)
        };
        p.add_route(Coord::new(x, 0), 0, PortSet::only(Port::W), out);
    }
}

/// A sender at `(0, 0)` sends `parts · m` words east along row 0; PE `x` (1 ≤ x ≤ parts)
/// keeps the `x`-th block of `m` of every `parts · m`, repeated `rows` times: it posts one
/// receive of `m` words per row (the next from the completion task). Returns the program.
pub fn scatter(parts: u32, m: u32, rows: u32) -> Program {
    let n = parts * m * rows;
    let mut p = Program::new();
    let send = sender(&mut p, n, 1000);
    // SRAM: the received rows, then the row count at byte 4·m·rows.
    let count = 4 * m * rows;
    let recv = p.add_kernel(
        "recv",
        vec![
            (
                "main",
                task(move |ctx: &mut TaskContext<'_>| ctx.recv(0, m, 0, 1)),
            ),
            (
                "row",
                task(move |ctx: &mut TaskContext<'_>| {
                    let done = ctx.read_u32(count)? + 1;
                    ctx.write_u32(count, done)?;
                    if done < rows {
                        ctx.recv(0, m, 4 * m * done, 1)?;
                    }
                    Ok(())
                }),
            ),
        ],
    );
    p.add_pe(Coord::new(0, 0), send, 4 * n, &[0], &[0]);
    row_routes(&mut p, parts);
    for x in 1..parts {
        let filter = RampFilter {
            keep: m,
            period: (parts - x + 1) * m,
        };
        assert!(p.set_filter(Coord::new(x, 0), 0, filter));
    }
    for x in 1..=parts {
        p.add_pe(Coord::new(x, 0), recv, count + 4, &[0], &[0]);
    }
    p
}

/// A sender at `(0, 0)` multicasts `n` words (`100 + i`) east along row 0 to PEs `1 ..= pes`
/// (routes from `wsel_target::multicast_tree` on `t`); each posts one receive of all `n`,
/// whose completion task charges `c` cycles.
pub fn multicast(t: &Target, pes: u32, n: u32, c: u64) -> Program {
    let mut p = Program::new();
    let send = sender(&mut p, n, 100);
    let recv = receiver(&mut p, n, c);
    p.add_pe(Coord::new(0, 0), send, 4 * n, &[0], &[0]);
    let dests: Vec<Coord> = (1..=pes).map(|x| Coord::new(x, 0)).collect();
    for &d in &dests {
        p.add_pe(d, recv, 4 * n, &[0], &[0]);
    }
    let tree = wsel_target::multicast_tree(t, Coord::new(0, 0), &dests).expect("tree");
    p.add_route_entries(0, &tree.entries());
    p
}

/// The words PE `x` of [`scatter`]`(parts, m, rows)` receives, in order.
pub fn scattered(parts: u32, m: u32, rows: u32, x: u32) -> Vec<u32> {
    (0..rows)
        .flat_map(|r| (0..m).map(move |j| 1000 + r * parts * m + (x - 1) * m + j))
        .collect()
}

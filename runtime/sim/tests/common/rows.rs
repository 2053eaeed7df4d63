//! Streams along row 0 from a sender at `(0, 0)`: scattered with ramp filters (each PE keeps
//! its part) or multicast (every PE takes every wavelet), for tests with cycle counts derived
//! by hand.

use wsel_sim::{Program, RampFilter, TaskContext, task};
use wsel_target::{Coord, Port, PortSet};

/// The sender's kernel: it writes the words `base + i` (`i < n`) to SRAM and sends them on
/// port 0.
fn sender(p: &mut Program, n: u32, base: u32) -> u32 {
    p.add_kernel(
        "send",
        vec![(
            "main",
            task(move |ctx: &mut TaskContext<'_>| {
                for i in 0..n {
                    ctx.write_u32(4 * i, base + i)?;
                }
                ctx.send(0, 0, n, None)
            }),
        )],
    )
}

/// Row 0's routes from the sender at `(0, 0)` to PEs `1 ..= pes`: each takes the stream from
/// the west, delivers it to its PE and (but the last) passes it east.
fn row_routes(p: &mut Program, pes: u32) {
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

/// A sender at `(0, 0)` multicasts `n` words (`100 + i`) east along row 0 to PEs `1 ..= pes`;
/// each posts one receive of all `n`, whose completion task charges `c` cycles.
pub fn multicast(pes: u32, n: u32, c: u64) -> Program {
    let mut p = Program::new();
    let send = sender(&mut p, n, 100);
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
    p.add_pe(Coord::new(0, 0), send, 4 * n, &[0], &[0]);
    row_routes(&mut p, pes);
    for x in 1..=pes {
        p.add_pe(Coord::new(x, 0), recv, 4 * n, &[0], &[0]);
    }
    p
}

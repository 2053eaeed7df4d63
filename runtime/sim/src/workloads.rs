//! Ready-made programs for tests and benchmarks, built directly against the task interface.
//!
//! [`halo_exchange`]: every PE of a `width × height` region repeatedly swaps an `n`-word
//! boundary with each of its four neighbours, the classic stencil communication pattern.
//! [`phased_rows`]: weight-store streams multicast along rows, one band of rows per phase.
//! [`scatter_rows`]: weight rows scattered along rows of PEs by ramp filters.

use crate::program::{Color, Program};
use crate::task::{TaskContext, task};
use wsel_target::{Coord, Dir, Port, PortSet, Rect};

/// The color a PE at `(x, y)` sends on toward `d`. Colors alternate with the parity of the
/// coordinate along `d`, so that a PE never sends and receives on the same color:
/// east 0/1, west 2/3, south 4/5, north 6/7.
fn send_color(x: u32, y: u32, d: Dir) -> Color {
    match d {
        Dir::East => (x % 2) as Color,
        Dir::West => 2 + (x % 2) as Color,
        Dir::South => 4 + (y % 2) as Color,
        Dir::North => 6 + (y % 2) as Color,
    }
}

/// Byte offsets in each PE's SRAM: the `n`-word tile, four `n`-word halos, the count of
/// halos received in this round, the round number.
fn layout(n: u32) -> (u32, u32, u32) {
    let halo = 4 * n;
    let count = halo + 16 * n;
    (halo, count, count + 4)
}

/// SRAM bytes each PE of [`halo_exchange`] needs.
pub fn halo_exchange_sram(n: u32) -> u32 {
    layout(n).2 + 4
}

/// A halo exchange on the region of `width × height` PEs with north-west corner `origin`:
/// `rounds` rounds, `n` words per neighbour per round. PE tiles start as `x·1000 + y` in every
/// word; after each round a PE adds the sum of its halos' first words to every tile word,
/// charging `n + (7x + 3y) mod 5` cycles (so PEs drift apart). Ports are numbered as colors
/// (0..8).
pub fn halo_exchange(origin: Coord, width: u32, height: u32, n: u32, rounds: u32) -> Program {
    let mut p = Program::new();
    let (halo, count_at, round_at) = layout(n);
    let start = task(move |ctx: &mut TaskContext<'_>| {
        let (x, y) = ctx.coords();
        let (w, h) = ctx.region_size();
        for (i, d) in Dir::ALL.into_iter().enumerate() {
            let Some(nb) = d.step(Coord::new(x, y), w, h) else {
                continue;
            };
            // The neighbour toward `d` sends to us toward the opposite direction.
            let from = send_color(nb.x, nb.y, d.opposite());
            ctx.recv(u32::from(from), n, halo + 4 * n * i as u32, 1)?;
            ctx.send(u32::from(send_color(x, y, d)), 0, n, None)?;
        }
        Ok(())
    });
    let got = task(move |ctx: &mut TaskContext<'_>| {
        let (x, y) = ctx.coords();
        let (w, h) = ctx.region_size();
        let expected = Dir::ALL
            .into_iter()
            .filter(|d| d.step(Coord::new(x, y), w, h).is_some())
            .count() as u32;
        let count = ctx.read_u32(count_at)? + 1;
        if count < expected {
            return ctx.write_u32(count_at, count);
        }
        ctx.write_u32(count_at, 0)?;
        let mut sum = 0u32;
        for i in 0..4 {
            sum = sum.wrapping_add(ctx.read_u32(halo + 4 * n * i)?);
        }
        for i in 0..n {
            let v = ctx.read_u32(4 * i)?;
            ctx.write_u32(4 * i, v.wrapping_add(sum))?;
        }
        ctx.add_cycles(u64::from(n + (7 * x + 3 * y) % 5));
        let round = ctx.read_u32(round_at)? + 1;
        ctx.write_u32(round_at, round)?;
        if round < rounds {
            ctx.activate(0)
        } else {
            Ok(())
        }
    });
    let kernel = p.add_kernel("halo", vec![("start", start), ("got", got)]);
    let ports: Vec<Color> = (0..8).collect();
    let region = Rect::new(origin.x, origin.y, width, height);
    let sram = halo_exchange_sram(n);
    p.pes.reserve((width * height) as usize);
    p.routes.reserve(8 * (width * height) as usize);
    for y in 0..height {
        for x in 0..width {
            let at = Coord::new(origin.x + x, origin.y + y);
            let i = p.add_pe(at, kernel, sram, &ports, &[0]);
            p.pes[i].region = region;
            let tile = (x * 1000 + y).to_le_bytes();
            p.pes[i].sram_init = (0..n).flat_map(|_| tile).collect();
            for d in Dir::ALL {
                let Some(nb) = d.step(Coord::new(x, y), width, height) else {
                    continue;
                };
                p.add_route(
                    at,
                    send_color(x, y, d),
                    PortSet::only(Port::Ramp),
                    PortSet::only(d.port()),
                );
                let from = send_color(nb.x, nb.y, d.opposite());
                p.add_route(at, from, PortSet::only(d.port()), PortSet::only(Port::Ramp));
            }
        }
    }
    p
}

/// Streams that reach one band of rows after another, like weight-streaming layers: `phases`
/// weight-store phases, phase `p` feeding rows `p·rows .. (p + 1)·rows` from the west edge,
/// each row's `n` wavelets multicast along `width` PEs that each take them all, `piece` at a
/// time (a receive, then its task posts the next). So the activity moves down the fabric
/// phase by phase — what the partitioning must spread over the threads.
pub fn phased_rows(phases: u32, rows: u32, width: u32, n: u32, piece: u32) -> Program {
    let mut p = Program::new();
    let piece = piece.clamp(1, n.max(1));
    let got = task(move |ctx: &mut TaskContext<'_>| {
        let done = ctx.read_u32(4 * piece)? + piece;
        ctx.write_u32(4 * piece, done)?;
        ctx.add_cycles(1);
        if done < n {
            ctx.recv(0, piece.min(n - done), 0, 0)?;
        }
        Ok(())
    });
    let main = task(move |ctx: &mut TaskContext<'_>| ctx.recv(0, piece, 0, 0));
    let kernel = p.add_kernel("rows", vec![("got", got), ("main", main)]);
    for phase in 0..phases {
        for y in phase * rows..(phase + 1) * rows {
            p.inputs.push(crate::program::EdgeInput {
                at: Coord::new(0, y),
                side: Dir::West,
                color: 0,
                data: (0..n).map(|i| y * 100_000 + i).collect(),
                source: crate::program::EdgeSource::WeightStore,
                start: 0,
                phase,
            });
            for x in 0..width {
                let at = Coord::new(x, y);
                p.add_pe(at, kernel, 4 * piece + 4, &[0], &[1]);
                let rx = PortSet::only(Port::W);
                let tx = if x + 1 == width {
                    PortSet::only(Port::Ramp)
                } else {
                    PortSet::only(Port::Ramp).with(Port::E)
                };
                p.add_route(at, 0, rx, tx);
            }
        }
    }
    p
}

/// Weight rows scattered along rows of PEs, as a weight-streaming layer takes them: row `y` of
/// `rows` gets `repeats` weight rows of `width · chunk` wavelets from the weight store at its
/// west edge, and PE `x` keeps `chunk` of each (ramp filters: `keep = chunk`,
/// `period = (width − x)·chunk`), one receive per weight row. The hops grow with the square of
/// the width; in closed form the cost follows the receives (see `express.rs`).
pub fn scatter_rows(rows: u32, width: u32, chunk: u32, repeats: u32) -> Program {
    let mut p = Program::new();
    let got = task(move |ctx: &mut TaskContext<'_>| {
        let done = ctx.read_u32(4 * chunk)? + 1;
        ctx.write_u32(4 * chunk, done)?;
        ctx.add_cycles(u64::from(chunk));
        if done < repeats {
            ctx.recv(0, chunk, 0, 0)?;
        }
        Ok(())
    });
    let main = task(move |ctx: &mut TaskContext<'_>| ctx.recv(0, chunk, 0, 0));
    let kernel = p.add_kernel("scatter", vec![("got", got), ("main", main)]);
    for y in 0..rows {
        p.inputs.push(crate::program::EdgeInput {
            at: Coord::new(0, y),
            side: Dir::West,
            color: 0,
            data: (0..width * chunk * repeats).map(|i| y ^ i).collect(),
            source: crate::program::EdgeSource::WeightStore,
            start: 0,
            phase: 0,
        });
        for x in 0..width {
            let at = Coord::new(x, y);
            p.add_pe(at, kernel, 4 * chunk + 4, &[0], &[1]);
            if x + 1 == width {
                p.add_route(at, 0, PortSet::only(Port::W), PortSet::only(Port::Ramp));
            } else {
                let tx = PortSet::only(Port::Ramp).with(Port::E);
                p.add_route(at, 0, PortSet::only(Port::W), tx);
                let filter = crate::program::RampFilter {
                    keep: chunk,
                    period: (width - x) * chunk,
                };
                p.set_filter(at, 0, filter);
            }
        }
    }
    p
}

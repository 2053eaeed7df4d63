//! Random chain programs: streams along rows of PEs that multicast them (every PE takes every
//! wavelet) or scatter them with ramp filters (each PE keeps its part and passes the rest),
//! fed by a PE's send or by a paced host or weight-store stream entering at the west edge.
//! Receivers post their receives a piece at a time from their completion task, sometimes too
//! late; other streams cross the chains' links and ramps at random times. So the closed form
//! of `express.rs` starts, adopts wavelets already on a chain, and falls back in the middle.

use super::random::Rng;
use wsel_sim::{EdgeInput, EdgeSource, Program, RampFilter, TaskContext, TaskFault, task};
use wsel_target::{Coord, Dir, Port, PortSet, Target};

/// Bytes before the receive area: the received count (0), pieces posted (4), a checksum (8).
const HEAD: u32 = 16;

/// What one receiver does, as kernel arguments: [color, share, piece, delay, cost, then a
/// send: (color, words, delay, pieces, gap) or zeros]. A send goes in `pieces` sends issued
/// back to back (`gap` cycles apart).
fn receiver_args(rng: &mut Rng, color: u32, share: u32) -> Vec<u32> {
    let piece = rng.range(1, u64::from(share.max(1))) as u32;
    vec![
        color,
        share,
        piece,
        rng.range(0, 40) as u32,
        rng.range(0, 6) as u32,
        0,
        0,
        0,
    ]
}

/// A random chain program on a small `dev` fabric for `seed`.
pub fn chain_program(seed: u64) -> (Target, Program) {
    let mut rng = Rng::new(seed ^ 0xc4a1_5eed);
    let mut t = Target::dev();
    t.width = rng.range(4, 12) as u32;
    t.height = rng.range(2, 6) as u32;
    t.hop_latency = rng.range(1, 3) as u32;
    t.queue_depth = if rng.chance(80) {
        2 * t.hop_latency + rng.range(0, 2) as u32
    } else {
        rng.range(1, 4) as u32
    };
    t.task_switch_cycles = rng.range(0, 3) as u32;
    t.host_io.bandwidth_bytes_per_cycle = [2, 4, 7, 64][rng.range(0, 3) as usize];
    t.weight_store.bandwidth_bytes_per_cycle = [3, 8, 64][rng.range(0, 2) as usize];
    t.weight_store.latency_cycles = rng.range(0, 30) as u32;
    let mut p = Program::new();
    let kernel = chain_kernel(&mut p);
    let mut args: std::collections::BTreeMap<Coord, Vec<u32>> = Default::default();
    let rows = rng.range(1, u64::from(t.height).min(3)) as u32;
    for (color, y) in (0..rows).map(|c| (c, c * (t.height / rows))) {
        chain(&mut rng, &t, &mut p, &mut args, color, y);
    }
    // Crossing streams: a PE sends down a column, over some chain rows' links or into a
    // chain PE's ramp.
    for c in 0..rng.range(0, 3) as u32 {
        let color = 8 + c;
        let x = rng.range(0, u64::from(t.width) - 1) as u32;
        let to = Coord::new(x, t.height - 1);
        let from = Coord::new(x, 0);
        // Only between PEs that neither send nor receive yet.
        if from == to
            || args.get(&from).is_some_and(|a| a[6] != 0)
            || args.get(&to).is_some_and(|a| a[1] != 0)
        {
            continue;
        }
        let path = wsel_target::shortest_path(&t, from, to).expect("routable");
        p.add_route_entries(
            color as u8,
            &path.entries(Port::Ramp, PortSet::only(Port::Ramp)),
        );
        let n = rng.range(1, 12) as u32;
        let a = args.entry(from).or_insert_with(|| vec![0; 10]);
        a[5..10].copy_from_slice(&[color, n, rng.range(0, 60) as u32, 1, 0]);
        let b = args.entry(to).or_insert_with(|| vec![0; 10]);
        b[..5].copy_from_slice(&[color, n, n, rng.range(0, 30) as u32, 1]);
    }
    let ports: Vec<u8> = (0..24).collect();
    for (at, a) in args {
        let words = a[1].max(a[6]);
        let i = p.add_pe(at, kernel, HEAD + 4 * (words + 64), &ports, &[0]);
        p.pes[i].args = a;
        p.pes[i].sram_init = (0..64)
            .flat_map(|w: u32| (at.x * 1000 + at.y * 100 + w).to_le_bytes())
            .collect();
    }
    (t, p)
}

/// One chain of `color` along row `y`, with its routes, feed and receivers.
fn chain(
    rng: &mut Rng,
    t: &Target,
    p: &mut Program,
    args: &mut std::collections::BTreeMap<Coord, Vec<u32>>,
    color: u32,
    y: u32,
) {
    let x1 = t.width - 1;
    let edge = rng.chance(50);
    let x0 = if edge {
        0
    } else {
        rng.range(0, u64::from(x1) - 1) as u32
    };
    // The routers past the feed (and the edge router itself when fed from the edge): each
    // passes the stream on (0), takes every wavelet and passes it on (1), or keeps its part
    // (2, scatter chains only); the last one takes what reaches it.
    let first = if edge { x0 } else { x0 + 1 };
    let scatter = rng.chance(50);
    let kinds: Vec<u64> = (first..=x1)
        .map(|x| match () {
            _ if x == x1 => 3,
            _ if scatter => [0, 1, 2, 2, 2][rng.range(0, 4) as usize],
            _ => [0, 1, 1][rng.range(0, 2) as usize],
        })
        .collect();
    let keepers = kinds.iter().filter(|&&k| k >= 2).count() as u32;
    let (m, rows) = (rng.range(1, 6) as u32, rng.range(1, 5) as u32);
    let n = if scatter {
        keepers * m * rows
    } else {
        rng.range(1, 60) as u32
    };
    let c = color as u8;
    if edge {
        let source = if rng.chance(50) {
            EdgeSource::Host
        } else {
            EdgeSource::WeightStore
        };
        p.inputs.push(EdgeInput {
            at: Coord::new(0, y),
            side: Dir::West,
            color: c,
            data: (0..n).map(|i| color * 10_000 + i).collect(),
            source,
            start: rng.range(0, 30),
            phase: rng.range(0, 1) as u32,
        });
    } else {
        p.add_route(
            Coord::new(x0, y),
            c,
            PortSet::only(Port::Ramp),
            PortSet::only(Port::E),
        );
        let a = args.entry(Coord::new(x0, y)).or_insert_with(|| vec![0; 10]);
        let pieces = rng.range(1, 3) as u32;
        let gap = if rng.chance(70) {
            0
        } else {
            rng.range(1, 5) as u32
        };
        a[5..10].copy_from_slice(&[color, n, rng.range(0, 20) as u32, pieces, gap]);
    }
    // Keepers before the current router.
    let mut kept = 0;
    for (x, &kind) in (first..=x1).zip(&kinds) {
        let at = Coord::new(x, y);
        let tx = match kind {
            0 => PortSet::only(Port::E),
            3 => PortSet::only(Port::Ramp),
            _ => PortSet::only(Port::Ramp).with(Port::E),
        };
        p.add_route(at, c, PortSet::only(Port::W), tx);
        if kind == 0 {
            continue;
        }
        let left = keepers - kept;
        let share = match kind {
            2 => m * rows,
            _ if scatter => left * m * rows,
            _ => n,
        };
        if kind == 2 {
            // In phase nearly always; sometimes off by one (the stream stays hop by hop).
            let period = left * m + u32::from(rng.chance(5));
            p.set_filter(at, c, RampFilter { keep: m, period });
            kept += 1;
        }
        let a = args.entry(at).or_insert_with(|| vec![0; 10]);
        if a[1] == 0 {
            let r = receiver_args(rng, color, share);
            a[..5].copy_from_slice(&r[..5]);
        }
    }
}

/// The kernel every PE runs: `main` posts the first receive piece (after a delay) and sends
/// (after another); `got` counts what arrived, posts the next piece, and charges some cycles.
fn chain_kernel(p: &mut Program) -> u32 {
    let main = task(|ctx: &mut TaskContext<'_>| {
        let a = ctx.args().to_vec();
        if a[1] > 0 {
            ctx.add_cycles(u64::from(a[3]));
            post(ctx, &a, 0)?;
        }
        if a[6] > 0 {
            ctx.add_cycles(u64::from(a[7]));
            let (words, pieces) = (a[6], a[8].max(1));
            let mut from = 0;
            for k in 0..pieces {
                let size = if k + 1 == pieces {
                    words - from
                } else {
                    words / pieces
                };
                if size > 0 {
                    ctx.send(a[5], HEAD + 4 * from, size, None)?;
                }
                from += size;
                ctx.add_cycles(u64::from(a[9]));
            }
        }
        Ok(())
    });
    let got = task(|ctx: &mut TaskContext<'_>| {
        let a = ctx.args().to_vec();
        let posted = ctx.read_u32(4)?;
        let done = (posted * a[2]).min(a[1]);
        ctx.write_u32(0, done)?;
        let mut sum = 0u32;
        for w in 0..done.min(64) {
            sum = sum
                .wrapping_mul(31)
                .wrapping_add(ctx.read_u32(HEAD + 4 * w)?);
        }
        ctx.write_u32(8, sum)?;
        ctx.add_cycles(u64::from(a[4]));
        if done < a[1] {
            post(ctx, &a, posted)?;
        }
        Ok(())
    });
    p.add_kernel("chain", vec![("main", main), ("got", got)])
}

/// Post receive piece `k` of the PE's share.
fn post(ctx: &mut TaskContext<'_>, a: &[u32], k: u32) -> Result<(), TaskFault> {
    let (share, piece) = (a[1], a[2]);
    let from = k * piece;
    let size = piece.min(share - from);
    ctx.write_u32(4, k + 1)?;
    ctx.recv(a[0], size, HEAD + 4 * (from % 64), 1)
}

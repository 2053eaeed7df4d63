// Random stream programs, included by `common/mod.rs` (with `sim` = the simulator crate) so the
// same generator can also drive a differential harness against another build of the crate.
//
// A program is a handful of streams on a small fabric, each on its own color: PE to PE
// (unicast or multicast), host input to PE, PE to host output. Senders may split a stream
// into several sends and receivers into several receives, all issued by one launch task at
// random delays, so streams overlap, contend for links and ramps, and stall on full queues
// (queue depths below 2L are drawn too). Receive completion tasks read the whole SRAM, so a
// PE that looks at a receive area mid-stream sees exactly what has arrived.

use std::collections::BTreeMap;
use wsel_target::{Coord, Dir, Port, PortSet, Target, multicast_tree, shortest_path};

/// A small deterministic generator (xorshift64*), so programs depend only on the seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// What a PE's launch task does: (kind 0 = send / 1 = recv, color, words, delay before the
/// call, SRAM offset, completion task for sends (0 = none)).
type Action = (u32, u32, u32, u32, u32, u32);

/// Ranges the generator draws from.
struct Knobs {
    /// Queue depth at least `2L` (streams run at full rate).
    full_rate: bool,
    /// Delay before a PE's first send, and its first receive.
    send_delay: (u64, u64),
    recv_delay: (u64, u64),
    /// Most pieces a stream is sent in.
    send_parts: u64,
    streams: (u64, u64),
    /// Percent of streams made to enter from the west edge (host or weight store) on top of
    /// the one kind in ten that does anyway, and the percent of those from the weight store.
    inputs: Option<u64>,
    weights: u64,
}

const MIXED: Knobs = Knobs {
    full_rate: false,
    send_delay: (0, 30),
    recv_delay: (0, 60),
    send_parts: 3,
    streams: (1, 7),
    inputs: None,
    weights: 30,
};

/// Mostly uncontended streams (receives posted early, full-rate queues), with more of them
/// starting at random times so that contention often appears in the middle of one.
const STREAMY: Knobs = Knobs {
    full_rate: true,
    send_delay: (4, 60),
    recv_delay: (0, 4),
    send_parts: 1,
    streams: (2, 9),
    inputs: None,
    weights: 30,
};

/// As `MIXED`, with most streams entering from the edge, most of those from the weight store
/// in several phases.
const EDGY: Knobs = Knobs {
    inputs: Some(50),
    weights: 75,
    streams: (2, 8),
    ..MIXED
};

#[derive(Default)]
struct PeSpec {
    actions: Vec<Action>,
    /// Next free byte for receive areas.
    next: u32,
}

const SEND_AREA: u32 = 16;
const SEND_WORDS: u32 = 48;
const RECV_BASE: u32 = SEND_AREA + 4 * SEND_WORDS;

/// Split `n` into `parts` positive pieces.
fn split(rng: &mut Rng, n: u32, parts: u32) -> Vec<u32> {
    let parts = parts.clamp(1, n.max(1));
    let mut cuts: Vec<u32> = (0..parts - 1)
        .map(|_| rng.range(1, u64::from(n - 1).max(1)) as u32)
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut out = Vec::new();
    let mut prev = 0;
    for c in cuts.into_iter().chain([n]) {
        if c > prev {
            out.push(c - prev);
            prev = c;
        }
    }
    out
}

fn send_actions(rng: &mut Rng, k: &Knobs, pe: &mut PeSpec, color: u32, n: u32) {
    let mut delay = rng.range(k.send_delay.0, k.send_delay.1) as u32;
    let parts = rng.range(1, k.send_parts) as u32;
    for part in split(rng, n, parts) {
        let off = SEND_AREA + 4 * rng.range(0, u64::from(SEND_WORDS - part)) as u32;
        let then = if rng.chance(30) { 2 } else { 0 };
        pe.actions.push((0, color, part, delay, off, then));
        delay = rng.range(0, 20) as u32;
    }
}

fn recv_actions(rng: &mut Rng, k: &Knobs, pe: &mut PeSpec, color: u32, n: u32) {
    let mut delay = rng.range(k.recv_delay.0, k.recv_delay.1) as u32;
    if n >= 2 && rng.chance(25) {
        // Identical receives (equal parts into one area), which the engine keeps as repeats
        // of one; then the rest, if any, into an area of its own.
        let parts = rng.range(2, u64::from(n.min(4))) as u32;
        let (part, rest) = (n / parts, n % parts);
        let off = RECV_BASE + pe.next;
        pe.next += 4 * part;
        for _ in 0..parts {
            pe.actions.push((1, color, part, delay, off, 0));
            delay = rng.range(0, 6) as u32;
        }
        if rest > 0 {
            pe.actions.push((1, color, rest, delay, RECV_BASE + pe.next, 0));
            pe.next += 4 * rest;
        }
        return;
    }
    let parts = rng.range(1, 3) as u32;
    for part in split(rng, n, parts) {
        let off = RECV_BASE + pe.next;
        pe.next += 4 * part;
        pe.actions.push((1, color, part, delay, off, 0));
        delay = rng.range(0, 40) as u32;
    }
}

/// As [`program`], with most streams entering from the west edge, most of them weight
/// streams in up to three phases.
pub fn edge_program(seed: u64) -> (Target, sim::Program) {
    generate(seed, &EDGY)
}

/// A random target (a small `dev` fabric) and program for `seed`.
pub fn program(seed: u64) -> (Target, sim::Program) {
    generate(seed, &MIXED)
}

/// As [`program`], biased toward streams the engine can simulate in closed form, with
/// contention that often starts in the middle of one.
pub fn streamy_program(seed: u64) -> (Target, sim::Program) {
    generate(seed, &STREAMY)
}

fn generate(seed: u64, k: &Knobs) -> (Target, sim::Program) {
    let mut rng = Rng::new(seed);
    let mut t = Target::dev();
    t.width = rng.range(3, 11) as u32;
    t.height = rng.range(2, 7) as u32;
    t.hop_latency = rng.range(1, 3) as u32;
    t.queue_depth = if k.full_rate {
        2 * t.hop_latency + rng.range(0, 3) as u32
    } else {
        rng.range(1, 6) as u32
    };
    t.task_switch_cycles = rng.range(0, 3) as u32;
    t.host_io.bandwidth_bytes_per_cycle = [2, 4, 6, 64][rng.range(0, 3) as usize];
    let pick = |rng: &mut Rng| {
        Coord::new(
            rng.range(0, u64::from(t.width) - 1) as u32,
            rng.range(0, u64::from(t.height) - 1) as u32,
        )
    };
    let mut p = sim::Program::new();
    let mut pes: BTreeMap<Coord, PeSpec> = BTreeMap::new();
    let streams = rng.range(k.streams.0, k.streams.1) as u32;
    for color in 0..streams {
        let n = rng.range(1, 40) as u32;
        let mut kind = rng.range(0, 9);
        if let Some(percent) = k.inputs
            && rng.chance(percent)
        {
            kind = 7;
        }
        let from = pick(&mut rng);
        if kind <= 4 {
            // PE to PE.
            let mut to = pick(&mut rng);
            if to == from {
                to = Coord::new((from.x + 1) % t.width, from.y);
            }
            let path = shortest_path(&t, from, to).expect("routable");
            p.add_route_entries(
                color as u8,
                &path.entries(Port::Ramp, PortSet::only(Port::Ramp)),
            );
            send_actions(&mut rng, k, pes.entry(from).or_default(), color, n);
            let extra = u32::from(rng.chance(5));
            recv_actions(&mut rng, k, pes.entry(to).or_default(), color, n + extra);
        } else if kind <= 6 {
            // Multicast to two or three PEs.
            let mut dests = Vec::new();
            for _ in 0..rng.range(2, 3) {
                let d = pick(&mut rng);
                if d != from && !dests.contains(&d) {
                    dests.push(d);
                }
            }
            if dests.is_empty() {
                continue;
            }
            let tree = multicast_tree(&t, from, &dests).expect("routable");
            p.add_route_entries(color as u8, &tree.entries());
            send_actions(&mut rng, k, pes.entry(from).or_default(), color, n);
            for d in dests {
                recv_actions(&mut rng, k, pes.entry(d).or_default(), color, n);
            }
        } else if kind == 7 {
            // Host input entering on the west edge.
            let at = Coord::new(0, rng.range(0, u64::from(t.height) - 1) as u32);
            let to = pick(&mut rng);
            let path = shortest_path(&t, at, to).expect("routable");
            p.add_route_entries(
                color as u8,
                &path.entries(Port::W, PortSet::only(Port::Ramp)),
            );
            let source = if rng.chance(100 - k.weights) {
                sim::EdgeSource::Host
            } else {
                sim::EdgeSource::WeightStore
            };
            let start = rng.range(0, 20);
            // Weight streams come in up to three phases (host streams ignore the phase).
            let phase = rng.range(0, 2) as u32;
            p.inputs.push(sim::EdgeInput {
                at,
                side: Dir::West,
                color: color as u8,
                data: (0..n).map(|i| color * 1000 + i).collect(),
                source,
                start,
                phase,
            });
            recv_actions(&mut rng, k, pes.entry(to).or_default(), color, n);
        } else {
            // PE to a host output on the east edge.
            let at = Coord::new(t.width - 1, rng.range(0, u64::from(t.height) - 1) as u32);
            let path = shortest_path(&t, from, at).expect("routable");
            p.add_route_entries(
                color as u8,
                &path.entries(Port::Ramp, PortSet::only(Port::E)),
            );
            p.outputs.push(sim::EdgeOutput {
                at,
                side: Dir::East,
                color: color as u8,
            });
            send_actions(&mut rng, k, pes.entry(from).or_default(), color, n);
        }
    }
    let main = sim::task(|ctx: &mut sim::TaskContext<'_>| {
        let args = ctx.args().to_vec();
        for a in args[1..].chunks_exact(6) {
            ctx.add_cycles(u64::from(a[3]));
            if a[0] == 0 {
                ctx.send(a[1], a[4], a[2], (a[5] != 0).then_some(a[5]))?;
            } else {
                ctx.recv(a[1], a[2], a[4], 1)?;
            }
        }
        Ok(())
    });
    let got = sim::task(|ctx: &mut sim::TaskContext<'_>| {
        let count = ctx.read_u32(0)?;
        ctx.write_u32(0, count + 1)?;
        let mut sum = 0u32;
        for (i, w) in ctx.sram().chunks_exact(4).enumerate().skip(4) {
            let v = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            sum = sum.wrapping_mul(31).wrapping_add(v ^ i as u32);
        }
        ctx.write_u32(4, sum)?;
        ctx.add_cycles(u64::from(ctx.args()[0]));
        Ok(())
    });
    let sent = sim::task(|ctx: &mut sim::TaskContext<'_>| {
        let count = ctx.read_u32(8)?;
        ctx.write_u32(8, count + 1)
    });
    let kernel = p.add_kernel("gen", vec![("main", main), ("got", got), ("sent", sent)]);
    let ports: Vec<u8> = (0..24).collect();
    for (at, spec) in pes {
        let sram = RECV_BASE + spec.next;
        let i = p.add_pe(at, kernel, sram, &ports, &[0]);
        let mut args = vec![rng.range(0, 12) as u32];
        for a in &spec.actions {
            args.extend([a.0, a.1, a.2, a.3, a.4, a.5]);
        }
        p.pes[i].args = args;
        p.pes[i].sram_init = (0..RECV_BASE / 4)
            .flat_map(|w| (at.x * 100_000 + at.y * 1000 + w).to_le_bytes())
            .collect();
    }
    (t, p)
}

/// Everything observable about a run, as text (errors included), for comparisons.
pub fn observe(t: &Target, p: &sim::Program, opts: &sim::SimOptions) -> String {
    match sim::simulate(t, p, opts) {
        Err(e) => format!("error: {e:?}"),
        Ok(out) => {
            let mut s = format!(
                "cycles {}\nreport {}\noutputs {:?}\ninputs timing {:?}\noutputs timing {:?}\n",
                out.cycles,
                out.report.to_json(),
                out.outputs,
                out.input_timing,
                out.output_timing
            );
            for pe in &p.pes {
                s += &format!("sram {} {:?}\n", pe.at, out.sram(pe.at));
            }
            if let Some(trace) = out.trace.as_ref().and_then(|t| t.text()) {
                s += trace;
            }
            s
        }
    }
}

//! A ceiling for benchmark (a) of `fabric`: the 64 × 64 halo exchange (n = 32, 20 rounds)
//! hand-specialised into one dense, cycle-stepped loop, to measure what any simulator of that
//! workload can get on this machine. It is not the simulator and nothing uses it.
//!
//! The model keeps the parts of the fabric that cost per wavelet-hop: four bounded link-in
//! queues per router (depth 4), credit flow control with a one-cycle return, at most one
//! wavelet injected per PE per cycle (round-robin over the directions holding a credit), at
//! most one delivered to the PE per cycle (round-robin over the queues), and the tasks of
//! `workloads::halo_exchange` (send a snapshot of the tile to every neighbour, receive the four
//! halos, add their first words to the tile, compute for `n + (7x + 3y) mod 5` cycles). It
//! drops what the workload does not use: route tables, colors, multicast, events, sender ramp
//! queues, partitions. Its cycle count therefore differs a little from the engine's; its
//! wavelet-hops and final tiles do not, and the run checks the tiles against the engine's.
//!
//! Run with `cargo bench -p wsel-sim --bench ceiling` (`RUNS=n` runs of each, default 5;
//! `ROUNDS=n`).

mod common;

use common::{env_or, median};
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use wsel_sim::workloads::halo_exchange;
use wsel_sim::{SimOptions, simulate};
use wsel_target::{Coord, Target};

const SIDE: usize = 64;
/// Words per halo.
const N: usize = 32;
const DEPTH: u8 = 4;
/// A link-in queue slot index is taken modulo the depth.
const SLOT_MASK: u8 = DEPTH - 1;
/// Directions as indices: north, south, east, west; `d ^ 1` is the opposite of `d`.
const DIRS: usize = 4;
const NO_NEIGHBOUR: u32 = u32::MAX;
/// How many PEs ahead of the sweep to prefetch.
const PREFETCH_AHEAD: usize = 8;

#[derive(Clone, Copy, Default)]
struct LinkQueue {
    slots: [u32; DEPTH as usize],
    head: u8,
    len: u8,
}

#[derive(Clone, Copy)]
struct Pe {
    /// Directions with words of this round still to send, and the next word for each.
    sending: u8,
    sent: [u8; DIRS],
    /// The direction injected last (round-robin).
    last: u8,
    /// Directions whose halo is still being received, and the words received for each.
    receiving: u8,
    received: [u8; DIRS],
    busy_until: u64,
    /// The next round starts once the PE is no longer busy.
    start_pending: bool,
    rounds_left: u32,
}

/// A PE's SRAM: its tile, the snapshot of it being sent, and the four halos.
#[derive(Clone)]
#[repr(align(64))]
struct Sram {
    tile: [u32; N],
    outgoing: [u32; N],
    halo: [[u32; N]; DIRS],
}

struct Model {
    pes: Vec<Pe>,
    sram: Vec<Sram>,
    /// Link-in queue `node * 4 + d` holds what arrived from the neighbour toward `d`.
    queues: Vec<LinkQueue>,
    /// Credits of output link `node * 4 + d`.
    credits: Vec<u8>,
    /// The link-in queue the ramp serves first.
    ramp_rr: Vec<u8>,
    /// Per PE and direction: the neighbour's index, or `NO_NEIGHBOUR` at the region's edge.
    neighbours: Vec<[u32; DIRS]>,
}

fn neighbour(x: usize, y: usize, d: usize) -> Option<usize> {
    match d {
        0 => (y > 0).then(|| (y - 1) * SIDE + x),
        1 => (y + 1 < SIDE).then(|| (y + 1) * SIDE + x),
        2 => (x + 1 < SIDE).then(|| y * SIDE + x + 1),
        _ => (x > 0).then(|| y * SIDE + x - 1),
    }
}

/// Hint the cache to load the line at `p` (x86-64 only; elsewhere nothing).
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never faults, whatever the address.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

impl Model {
    /// The region before `rounds` (at least 1) rounds.
    fn new(rounds: u32) -> Model {
        let nodes = SIDE * SIDE;
        let neighbours: Vec<[u32; DIRS]> = (0..nodes)
            .map(|i| {
                let mut a = [NO_NEIGHBOUR; DIRS];
                for (d, slot) in a.iter_mut().enumerate() {
                    if let Some(j) = neighbour(i % SIDE, i / SIDE, d) {
                        *slot = j as u32;
                    }
                }
                a
            })
            .collect();
        let pe = Pe {
            sending: 0,
            sent: [0; DIRS],
            last: 0,
            receiving: 0,
            received: [0; DIRS],
            busy_until: 0,
            start_pending: true,
            rounds_left: rounds,
        };
        let sram = (0..nodes)
            .map(|i| Sram {
                tile: [((i % SIDE) * 1000 + i / SIDE) as u32; N],
                outgoing: [0; N],
                halo: [[0; N]; DIRS],
            })
            .collect();
        Model {
            pes: vec![pe; nodes],
            sram,
            queues: vec![LinkQueue::default(); nodes * DIRS],
            credits: vec![DEPTH; nodes * DIRS],
            ramp_rr: vec![0; nodes],
            neighbours,
        }
    }

    /// Run all rounds; returns the wavelet-hops and cycles.
    fn run(&mut self) -> (u64, u64) {
        let nodes = SIDE * SIDE;
        let (mut arrivals, mut next_arrivals) = (Vec::<(u32, u32)>::new(), Vec::new());
        let (mut credits, mut next_credits) = (Vec::<u32>::new(), Vec::new());
        let (mut hops, mut t, mut finished) = (0u64, 0u64, 0usize);
        while finished < nodes {
            for &(q, data) in &arrivals {
                let queue = &mut self.queues[q as usize];
                queue.slots[usize::from((queue.head + queue.len) & SLOT_MASK)] = data;
                queue.len += 1;
            }
            for &c in &credits {
                self.credits[c as usize] += 1;
            }
            for i in 0..nodes {
                if let (Some(pe), Some(sram)) = (
                    self.pes.get(i + PREFETCH_AHEAD),
                    self.sram.get(i + PREFETCH_AHEAD),
                ) {
                    prefetch(pe);
                    let base = std::ptr::from_ref(sram).cast::<u8>();
                    for line in 0..size_of::<Sram>() / 64 {
                        prefetch(base.wrapping_add(64 * line));
                    }
                }
                self.start_round(i, t);
                if let Some(hop) = self.inject(i, t) {
                    next_arrivals.push(hop);
                    hops += 1;
                }
                if let Some(credit) = self.deliver(i, t, &mut finished) {
                    next_credits.push(credit);
                }
            }
            arrivals.clear();
            credits.clear();
            std::mem::swap(&mut arrivals, &mut next_arrivals);
            std::mem::swap(&mut credits, &mut next_credits);
            t += 1;
        }
        (hops, t)
    }

    /// The `start` task: post the receives and the sends of the next round (once the last
    /// round's sends are out: the engine queues them behind, the model keeps one snapshot).
    fn start_round(&mut self, i: usize, t: u64) {
        let p = &mut self.pes[i];
        if !p.start_pending || p.busy_until > t || p.sending != 0 {
            return;
        }
        for d in 0..DIRS {
            if self.neighbours[i][d] != NO_NEIGHBOUR {
                p.sending |= 1 << d;
                p.sent[d] = 0;
                p.receiving |= 1 << d;
                p.received[d] = 0;
            }
        }
        p.start_pending = false;
        p.busy_until = t + 1;
        let sram = &mut self.sram[i];
        sram.outgoing = sram.tile;
    }

    /// Inject one wavelet toward the first direction after the last one that has words left
    /// and a credit; returns its arrival (link-in queue, data).
    fn inject(&mut self, i: usize, t: u64) -> Option<(u32, u32)> {
        let p = &mut self.pes[i];
        if p.sending == 0 || p.busy_until > t {
            return None;
        }
        let ready = (0..DIRS as u8)
            .map(|k| (p.last + 1 + k) % DIRS as u8)
            .find(|&d| p.sending & (1 << d) != 0 && self.credits[i * DIRS + usize::from(d)] > 0)?;
        let d = usize::from(ready);
        self.credits[i * DIRS + d] -= 1;
        let data = self.sram[i].outgoing[usize::from(p.sent[d])];
        p.sent[d] += 1;
        p.last = ready;
        if usize::from(p.sent[d]) == N {
            p.sending &= !(1 << d);
        }
        let to = self.neighbours[i][d] as usize;
        Some(((to * DIRS + (d ^ 1)) as u32, data))
    }

    /// The ramp delivers one wavelet from the first link-in queue (round-robin) that has one
    /// and a posted receive; the `got` task runs when all halos are in. Returns the credit
    /// for the upstream output link.
    fn deliver(&mut self, i: usize, t: u64, finished: &mut usize) -> Option<u32> {
        let p = &mut self.pes[i];
        let first = usize::from(self.ramp_rr[i]);
        let d = (0..DIRS)
            .map(|k| (first + k) % DIRS)
            .find(|&d| p.receiving & (1 << d) != 0 && self.queues[i * DIRS + d].len > 0)?;
        let queue = &mut self.queues[i * DIRS + d];
        let data = queue.slots[usize::from(queue.head)];
        queue.head = (queue.head + 1) & SLOT_MASK;
        queue.len -= 1;
        self.ramp_rr[i] = ((d + 1) % DIRS) as u8;
        let sram = &mut self.sram[i];
        sram.halo[d][usize::from(p.received[d])] = data;
        p.received[d] += 1;
        if usize::from(p.received[d]) == N {
            p.receiving &= !(1 << d);
            if p.receiving == 0 {
                let sum = sram.halo.iter().fold(0u32, |s, h| s.wrapping_add(h[0]));
                for w in &mut sram.tile {
                    *w = w.wrapping_add(sum);
                }
                let (x, y) = (i % SIDE, i / SIDE);
                p.busy_until = t + 1 + (N + (7 * x + 3 * y) % 5) as u64;
                p.rounds_left -= 1;
                if p.rounds_left > 0 {
                    p.start_pending = true;
                } else {
                    *finished += 1;
                }
            }
        }
        let from = self.neighbours[i][d] as usize;
        Some((from * DIRS + (d ^ 1)) as u32)
    }
}

fn main() {
    let (runs, rounds) = (
        env_or("RUNS", 5usize).max(1),
        env_or("ROUNDS", 20u32).max(1),
    );
    let program = halo_exchange(Coord::new(0, 0), SIDE as u32, SIDE as u32, N as u32, rounds);
    let (target, opts) = (Target::wse2(), SimOptions::default());
    let (mut engine_rates, mut model_rates) = (Vec::new(), Vec::new());
    let mut last = None;
    // Alternate the two, so that machine noise touches both alike.
    for _ in 0..runs {
        let start = Instant::now();
        let out = simulate(&target, &program, &opts).expect("halo exchange runs");
        engine_rates.push(out.report.wavelet_hops as f64 / start.elapsed().as_secs_f64());
        let mut model = Model::new(rounds);
        let start = Instant::now();
        let (hops, cycles) = model.run();
        model_rates.push(hops as f64 / start.elapsed().as_secs_f64());
        last = Some((out, model, hops, cycles));
    }
    let (out, model, hops, cycles) = last.expect("at least one run");
    assert_eq!(
        hops, out.report.wavelet_hops,
        "the model moves what the engine moves"
    );
    for (i, sram) in model.sram.iter().enumerate() {
        let at = Coord::new((i % SIDE) as u32, (i / SIDE) as u32);
        let tile = out.read_u32s(at, 0, N as u32).expect("a PE of the region");
        assert_eq!(tile, sram.tile, "final tile of PE {at:?}");
    }
    let (engine, ceiling) = (median(engine_rates), median(model_rates));
    println!(
        "halo {SIDE}x{SIDE}, n={N}, {rounds} rounds, 1 thread, {hops} wavelet-hops, final tiles equal; \
         engine {} cycles, median {:.1} M wavelet-hops/s; hand-specialised model {cycles} cycles, \
         median {:.1} M wavelet-hops/s; engine/model {:.2} (medians of {runs} alternating runs)",
        out.cycles,
        engine / 1e6,
        ceiling / 1e6,
        engine / ceiling
    );
}

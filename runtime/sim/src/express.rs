//! Uncontended streams as one event ("express" streams), exact for the model.
//!
//! When a PE starts a send of `n` wavelets and nothing else can touch the stream's way — the
//! PE sends nothing else, the route is a unicast path of `h` hops inside this partition to a
//! PE whose posted receives take all `n` wavelets, every queue on it is empty with all its
//! credits home, no other queue at a router on the path holds a wavelet for the port the path
//! uses there, no PE or edge source there is feeding such a queue, and `Q ≥ 2L` — then the
//! wavelet-by-wavelet simulation is known in closed form: wavelet `i` is injected and leaves
//! the sender at `t0 + i`, leaves router `k` at `t0 + i + k·L` and is delivered at
//! `t0 + i + h·L`.
//!
//! The stream then reserves those ports and costs a handful of events: the send's completion
//! (at the sender's router step of cycle `t0 + n − 1`), each receive's completion (at the
//! receiver's router step of the cycle its last wavelet lands) and a release after the last
//! delivery. Receive areas are written lazily, before any task of the receiving PE runs.
//!
//! If anything is about to compete for a reserved port — a wavelet arriving in a competing
//! queue, a new send at the sender or a competing send on the path — the stream is
//! *materialized*: the exact state it would have at that point (wavelets in queues and on
//! links, credits, counters, round-robin positions, the send's position) is rebuilt from the
//! closed form, and simulation continues wavelet by wavelet. `SimOptions::express_streams =
//! false` turns the shortcut off; `tests/express.rs` checks that both paths agree.

use crate::fabric::{EXPRESS, NONE, RAMP, SENDING, SOURCES};
use crate::partition::Partition;
use crate::pe::SendState;
use std::cmp::Reverse;

/// One router of an express stream's path.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hop {
    pub node: u32,
    /// The stream's queue at this router.
    pub queue: u32,
    /// The output port it leaves through (the ramp at the receiver).
    pub port: u8,
    /// The output channel (NONE at the receiver).
    pub och: u32,
}

/// A stream simulated in closed form.
#[derive(Debug)]
pub(crate) struct Express {
    pub alive: bool,
    /// Distinguishes the streams that reuse one slot (events name a generation).
    pub generation: u32,
    /// Cycle wavelet 0 is injected.
    pub t0: u64,
    pub send: SendState,
    /// The sender's send slot (partition index) the send came from.
    pub slot: u32,
    pub pe_a: u32,
    pub pe_b: u32,
    /// The send has completed (at `t0 + n − 1`).
    pub send_done: bool,
    /// Routers from the sender's to the receiver's.
    pub hops: Vec<Hop>,
    /// Wavelets written to the receiver so far.
    pub flushed: u32,
}

/// Event kinds: the send completes (sender's router step), a receive may complete
/// (receiver's router step), the stream ends (before the cycle's PE wakes).
pub(crate) const SEND_DONE: u8 = 0;
pub(crate) const RECV_DONE: u8 = 1;
pub(crate) const RELEASE: u8 = 2;

/// Streams shorter than this many wavelet-hops are not worth an express stream.
const MIN_WAVELET_HOPS: u64 = 2;

impl Express {
    pub(crate) fn n(&self) -> u64 {
        self.send.data.len() as u64
    }

    pub(crate) fn h(&self) -> u64 {
        self.hops.len() as u64 - 1
    }
}

impl Partition<'_> {
    /// After PE `pe` woke at cycle `t` (phase 2): materialize an express stream its new sends
    /// would compete with; if it just began a send, consider it for an express stream once
    /// every PE of the cycle has woken (a receive posted in the same cycle counts).
    pub(crate) fn express_after_wake(&mut self, pe: u32, t: u64) {
        let node = self.fab.pes[pe as usize].node;
        let x = self.fab.info[node as usize].express;
        if x != NONE && self.competes(x, pe) {
            self.hot(t).materialize(x);
        }
        if self.express_on && self.lone_send(pe).is_some() {
            self.xcandidates.push(pe);
        }
    }

    /// The send slot of PE `pe`'s only send, if it has one send and that has not begun.
    fn lone_send(&self, pe: u32) -> Option<usize> {
        let p = &self.fab.pes[pe as usize];
        if p.sending.count_ones() != 1 || !p.waiting_sends.is_empty() {
            return None;
        }
        let slot = p.send_base as usize + p.sending.trailing_zeros() as usize;
        (self.fab.sends[slot].pos == 0).then_some(slot)
    }

    /// The ramp queues of PE `pe`'s sends not finished.
    fn send_queues(&self, pe: u32) -> impl Iterator<Item = u32> + '_ {
        let p = &self.fab.pes[pe as usize];
        let slots = p.send_slots(&self.fab.sends);
        let active = slots
            .iter()
            .enumerate()
            .filter(move |(k, _)| p.sending & (1u64 << k) != 0)
            .map(|(_, s)| s.queue);
        let waiting = p
            .waiting_sends
            .iter()
            .map(move |w| self.fab.sends[p.send_slot(&self.fab.sends, w.color)].queue);
        active.chain(waiting)
    }

    /// At the end of the PE wakes of cycle `t`: start the express streams that are exact.
    pub(crate) fn express_start(&mut self, t: u64) {
        let mut candidates = std::mem::take(&mut self.xcandidates);
        for &pe in &candidates {
            self.try_express(pe, t);
        }
        candidates.clear();
        self.xcandidates = candidates;
    }

    /// Whether the sends of `pe` would compete with express stream `x` at the PE's router.
    fn competes(&self, x: u32, pe: u32) -> bool {
        let p = &self.fab.pes[pe as usize];
        if p.sending == 0 {
            return false;
        }
        let s = &self.express[x as usize];
        if s.hops[0].node == p.node {
            return true;
        }
        let reserved = self.fab.info[p.node as usize].reserved;
        self.send_queues(pe)
            .any(|q| self.fab.queues[q as usize].tx & reserved != 0)
    }

    /// Whether a router may carry an express stream out through `port`: nothing there holds
    /// or feeds a wavelet for that port (other than through `own`, the stream's queue).
    /// (Wavelets in flight toward a queue count as held: the competing arrival was written
    /// before the stream existed, so nothing would turn the stream back at its arrival.)
    fn port_free(&self, node: u32, port: u8, own: u32, sender: bool) -> bool {
        let n = &self.fab.routers[node as usize];
        let info = &self.fab.info[node as usize];
        if info.express != NONE {
            return false;
        }
        let bit = 1u8 << port;
        let queues = n.q_start..n.q_start + u32::from(n.q_len);
        if queues.clone().any(|q| {
            let queue = &self.fab.queues[q as usize];
            q != own && queue.len + queue.fly > 0 && queue.tx & bit != 0
        }) {
            return false;
        }
        if n.flags & SOURCES != 0 {
            let srcs = info.src_start..info.src_start + info.src_len;
            if srcs.into_iter().any(|s| {
                let src = &self.fab.sources[s as usize];
                src.pos < src.data.len() && self.fab.queues[src.queue as usize].tx & bit != 0
            }) {
                return false;
            }
        }
        let competing_send = !sender
            && n.pe != NONE
            && self
                .send_queues(n.pe)
                .any(|q| self.fab.queues[q as usize].tx & bit != 0);
        !competing_send
    }

    /// Whether queue `q` is empty, nothing is in flight toward it and every credit of its
    /// slots is back upstream at `t`.
    fn settled(&self, q: u32, t: u64) -> bool {
        let queue = &self.fab.queues[q as usize];
        let rings = &self.fab.rings;
        let rel = self.rel(t);
        queue.len == 0 && queue.fly == 0 && (0..rings.depth).all(|i| rings.time(queue, q, i) <= rel)
    }

    /// Start an express stream for the send PE `pe` just began at cycle `t`, if it is exact.
    fn try_express(&mut self, pe: u32, t: u64) {
        let Some(slot) = self.lone_send(pe) else {
            return;
        };
        let p = &self.fab.pes[pe as usize];
        if p.express != NONE || u64::from(self.fab.rings.depth) < 2 * self.latency {
            return;
        }
        let node_a = p.node;
        let send = &self.fab.sends[slot];
        let color = send.color;
        let n = send.data.len() as u64;
        let mut q = send.queue;
        let mut node = node_a;
        let mut hops: Vec<Hop> = Vec::new();
        loop {
            if hops.len() > self.fab.routers.len() || hops.iter().any(|h| h.node == node) {
                return;
            }
            let queue = &self.fab.queues[q as usize];
            // The sender's ramp queue returns no credits: it only has to be empty.
            let clear = if hops.is_empty() {
                queue.len == 0
            } else {
                self.settled(q, t)
            };
            if !clear || queue.sent != 0 || queue.tx.count_ones() != 1 {
                return;
            }
            let port = queue.tx.trailing_zeros() as u8;
            if !self.port_free(node, port, q, node == node_a) {
                return;
            }
            if usize::from(port) == RAMP {
                hops.push(Hop {
                    node,
                    queue: q,
                    port,
                    och: NONE,
                });
                break;
            }
            let ch = queue.out[usize::from(port)];
            let out = &self.fab.outch[ch as usize];
            if out.sink != NONE || out.dest_part != self.id {
                return;
            }
            hops.push(Hop {
                node,
                queue: q,
                port,
                och: ch,
            });
            q = out.dest_queue;
            node = self.fab.queues[q as usize].node;
        }
        let h = hops.len() as u64 - 1;
        let node_b = node;
        let pe_b = self.fab.routers[node_b as usize].pe;
        if h == 0 || pe_b == NONE || n * h < MIN_WAVELET_HOPS {
            return;
        }
        // The receiver's posted receives must take every wavelet.
        let b = &self.fab.pes[pe_b as usize];
        let mut completions = Vec::new();
        let mut taken = 0u64;
        for missing in b.recvs_on(&self.fab.recvs, color) {
            if taken == n {
                break;
            }
            let k = u64::from(missing).min(n - taken);
            taken += k;
            if u64::from(missing) == k {
                completions.push(t + taken - 1 + h * self.latency);
            }
        }
        if taken < n {
            return;
        }

        // Start it.
        self.stats.express_started += 1;
        let id = self
            .express
            .iter()
            .position(|s| !s.alive)
            .unwrap_or(self.express.len()) as u32;
        let generation = self
            .express
            .get(id as usize)
            .map_or(0, |s| s.generation.wrapping_add(1));
        let a = &mut self.fab.pes[pe as usize];
        let s = &mut self.fab.sends[slot];
        let send = SendState {
            color,
            data: std::mem::take(&mut s.data),
            then: (s.then != NONE).then_some(s.then),
            seq: s.seq,
        };
        a.sending = 0;
        a.express = id;
        self.fab.routers[node_a as usize].flags &= !SENDING;
        for hop in &hops {
            let info = &mut self.fab.info[hop.node as usize];
            info.express = id;
            info.reserved = 1 << hop.port;
            self.fab.routers[hop.node as usize].flags |= EXPRESS;
        }
        let stream = Express {
            alive: true,
            generation,
            t0: t,
            send,
            slot: slot as u32,
            pe_a: pe,
            pe_b,
            send_done: false,
            hops,
            flushed: 0,
        };
        if id as usize == self.express.len() {
            self.express.push(stream);
        } else {
            self.express[id as usize] = stream;
        }
        let last = t + n - 1 + h * self.latency;
        // A one-wavelet send completes in this cycle's step of the sender's router, which is
        // active (its PE just woke).
        if n > 1 {
            self.xevents
                .push(Reverse((t + n - 1, id, generation, SEND_DONE)));
        }
        for c in completions {
            self.xevents.push(Reverse((c, id, generation, RECV_DONE)));
        }
        self.xevents
            .push(Reverse((last + 1, id, generation, RELEASE)));
    }

    /// Express events due at cycle `t`, before the PEs wake: releases, and the routers that
    /// must step for a send or receive completion.
    pub(crate) fn express_events(&mut self, t: u64) {
        while let Some(&Reverse((when, id, generation, kind))) = self.xevents.peek() {
            if when > t {
                break;
            }
            self.xevents.pop();
            let s = &self.express[id as usize];
            if !s.alive || s.generation != generation {
                continue;
            }
            match kind {
                SEND_DONE => {
                    let node = s.hops[0].node;
                    self.activate(node);
                }
                RECV_DONE => {
                    let node = s.hops[s.hops.len() - 1].node;
                    self.activate(node);
                }
                _ => self.hot(t).materialize(id),
            }
        }
    }

    /// Before a task of PE `pe` runs at cycle `t`: write what an express stream has delivered
    /// to it so far.
    pub(crate) fn express_before_task(&mut self, pe: u32, t: u64) {
        let node = self.fab.pes[pe as usize].node;
        let x = self.fab.info[node as usize].express;
        if x != NONE && self.express[x as usize].pe_b == pe {
            self.hot(t).flush(x, t.saturating_sub(1));
        }
    }
}

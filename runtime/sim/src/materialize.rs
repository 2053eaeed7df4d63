//! The closed form of an express stream (see `express.rs`) at work: the router steps that
//! complete its send and receives, writing delivered wavelets into the receiver's SRAM, and
//! turning the stream back into wavelets — queues (present and in-flight wavelets, the credit
//! cycles of free slots), counters and round-robin positions exactly as the hop-by-hop
//! simulation would have them at that cycle.

use crate::fabric::{EXPRESS, NONE, SENDING};
use crate::pe::{Delivery, SendState};
use crate::queue::Rel;
use crate::router::Hot;
use std::cmp::Reverse;

impl Hot<'_> {
    /// The router step of an express stream's router at this cycle (after the PE's injection,
    /// before the ports are served): the sender's send completes, the receiver's wavelets land.
    pub(crate) fn express_step(&mut self, node: u32) {
        let x = self.info[node as usize].express;
        let t = self.t;
        let s = &mut self.express[x as usize];
        if s.hops[0].node == node && !s.send_done && t == s.t0 + s.n() - 1 {
            s.send_done = true;
            let then = s.send.then;
            let p = &mut self.pes[s.pe_a as usize];
            p.express = NONE;
            p.last_slot = (s.slot - p.send_base) as u8;
            if let Some(then) = then {
                p.ready.push(Reverse((t + 1, p.seq, then)));
                p.seq += 1;
                self.schedule(node, t + 1);
            }
        }
        if self.express[x as usize]
            .hops
            .last()
            .is_some_and(|h| h.node == node)
        {
            self.flush(x, t);
        }
    }

    /// Write the wavelets of stream `x` delivered up to cycle `upto` into the receiver.
    pub(crate) fn flush(&mut self, x: u32, upto: u64) {
        let s = &mut self.express[x as usize];
        let hl = s.h() * self.latency;
        let node_b = s.hops[s.hops.len() - 1].node;
        let color = s.send.color;
        let pe_b = &mut self.pes[s.pe_b as usize];
        let slot = pe_b.recv_slot(self.recvs, color);
        while u64::from(s.flushed) < s.n() && s.t0 + u64::from(s.flushed) + hl <= upto {
            let d = s.t0 + u64::from(s.flushed) + hl;
            let data = s.send.data[s.flushed as usize];
            s.flushed += 1;
            let waits = &mut self.waits[s.pe_b as usize];
            let delivery =
                crate::pe::deliver(pe_b, &mut self.recvs[slot], self.program, waits, data, d);
            if delivery == Delivery::NoReceive {
                continue;
            }
            self.stats.color_delivered[color as usize] += 1;
            if delivery == Delivery::Completed {
                let t = d + 1;
                // Inline `schedule` (the stream is borrowed).
                let t = t.max(self.floor);
                let info = &mut self.info[node_b as usize];
                if t < info.wake {
                    info.wake = t;
                    self.timers.push(t, node_b);
                }
            }
        }
    }

    /// Turn express stream `x` back into wavelets at the current cycle `t`: the state after
    /// the arrivals of `t`, before the PEs wake and the routers step.
    pub(crate) fn materialize(&mut self, x: u32) {
        let t = self.t;
        self.flush(x, t.saturating_sub(1));
        let s = &mut self.express[x as usize];
        s.alive = false;
        let (t0, n, h) = (s.t0, s.n(), s.h());
        if t <= t0 + n - 1 + h * self.latency {
            self.stats.express_interrupted += 1;
        }
        let hops = std::mem::take(&mut s.hops);
        let span = Span {
            t,
            t0,
            n,
            latency: self.latency,
        };
        let mut last_move = None;
        for (k, hop) in hops.iter().enumerate() {
            let k = k as u64;
            let info = &mut self.info[hop.node as usize];
            info.express = NONE;
            info.reserved = 0;
            let r = &mut self.routers[hop.node as usize];
            r.flags &= !EXPRESS;
            // Wavelets that left router k before t.
            let left = span.reached(k * self.latency);
            if left > 0 {
                let bit = hop.queue - r.q_start;
                r.rr[usize::from(hop.port)] = ((bit + 1) % 64) as u8;
                last_move = last_move.max(Some(t0 + left - 1 + k * self.latency));
            }
            if hop.och != NONE {
                self.outch[hop.och as usize].sent += left;
            }
            if k > 0 {
                self.rebuild_queue(x, &span, k, hop.queue, hop.node);
            }
        }
        if let Some(l) = last_move {
            self.stats.event(l);
        }
        self.return_send(x, span.injected(), hops[0].node);
    }

    /// Rebuild the queue `q` of stream `x`'s router `k` (≥ 1) at `node`: the wavelet that
    /// arrived at `t` (present), those on the link toward it (in flight), and the free slots
    /// with the credits not yet back upstream.
    fn rebuild_queue(&mut self, x: u32, span: &Span, k: u64, q: u32, node: u32) {
        let (t, t0, latency) = (span.t, span.t0, span.latency);
        let epoch = self.epoch;
        let rel = |c: u64| -> Rel { (c - epoch) as Rel };
        let depth = self.rings.depth;
        let data = &self.express[x as usize].send.data;
        // Wavelets past router k − 1 (left it before t) and not past router k (leave it at t
        // or later): i in [reached(k·L), reached((k−1)·L)).
        let (lo, hi) = (span.reached(k * latency), span.reached((k - 1) * latency));
        // Credits not back: wavelets that left router k at p in [t − L + 1, t − 1].
        let pops: Vec<u64> = (0..span.injected())
            .map(|i| t0 + i + k * latency)
            .filter(|&p| p < t && p + latency > t)
            .collect();
        let queue = &mut self.queues[q as usize];
        queue.head = 0;
        queue.len = 0;
        queue.fly = 0;
        queue.sent = 0;
        let fill = (hi - lo) as u32 + pops.len() as u32;
        debug_assert!(fill <= depth, "an express stream fits its queues (Q ≥ 2L)");
        // Credited free slots first (the oldest), then the pending ones by due cycle: set
        // every slot's cycle, then write the wavelets over the first ones.
        for i in 0..depth {
            let due = match i.checked_sub(depth - pops.len() as u32) {
                Some(j) => rel(pops[j as usize] + latency),
                None => 0,
            };
            self.rings.set_slot(queue, q, i, 0, due);
        }
        let mut arrivals = Vec::new();
        for i in lo..hi {
            let arrive = t0 + i + k * latency;
            if arrive == t {
                self.rings.push_present(queue, q, data[i as usize]);
            } else {
                self.rings
                    .push_flight(queue, q, data[i as usize], rel(arrive));
                arrivals.push(arrive);
            }
        }
        let r = &mut self.routers[node as usize];
        let bit = q - r.q_start;
        if queue.len > 0 {
            crate::router::set_want(r, queue.tx, 1u64 << bit);
            self.pending.insert(node);
        }
        if queue.fly > 0 {
            r.incoming |= 1u64 << bit;
        }
        for arrive in arrivals {
            self.wake_at(node, arrive);
        }
    }

    /// The part of stream `x`'s send not injected before `t` (its first `m` wavelets were)
    /// goes back to the sender's slot, ahead of any send issued after it.
    fn return_send(&mut self, x: u32, m: u64, node_a: u32) {
        let s = &mut self.express[x as usize];
        let (pe_a, slot) = (s.pe_a, s.slot);
        let send = std::mem::replace(
            &mut s.send,
            SendState {
                color: 0,
                data: Vec::new(),
                then: None,
                seq: 0,
            },
        );
        let n = send.data.len() as u64;
        let a = &mut self.pes[pe_a as usize];
        let k = slot - a.send_base;
        if m >= 1 {
            a.last_slot = k as u8;
        }
        a.express = NONE;
        if m >= n {
            return;
        }
        let bit = 1u64 << k;
        let sl = &mut self.sends[slot as usize];
        if a.sending & bit != 0 {
            // A send issued in this cycle took the slot: it waits behind the stream's.
            a.waiting_sends.push_front(SendState {
                color: sl.color,
                data: std::mem::take(&mut sl.data),
                then: (sl.then != NONE).then_some(sl.then),
                seq: sl.seq,
            });
        }
        sl.data = send.data;
        sl.pos = m as u32;
        sl.then = send.then.unwrap_or(NONE);
        sl.seq = send.seq;
        a.sending |= bit;
        self.routers[node_a as usize].flags |= SENDING;
        self.activate(node_a);
    }
}

/// When the wavelets of a stream (`n` of them, wavelet `i` injected at `t0 + i`) are where,
/// seen at cycle `t`.
struct Span {
    t: u64,
    t0: u64,
    n: u64,
    latency: u64,
}

impl Span {
    /// Wavelets injected in cycles `lo ..= hi`.
    fn count(&self, lo: u64, hi: u64) -> u64 {
        let (lo, hi) = (lo.max(self.t0), hi.min(self.t0 + self.n - 1));
        if hi < lo { 0 } else { hi - lo + 1 }
    }

    /// Wavelets that reached the point `c` cycles after their injection before `t`.
    fn reached(&self, c: u64) -> u64 {
        if self.t < 1 + c {
            0
        } else {
            self.count(0, self.t - 1 - c)
        }
    }

    /// Wavelets injected before `t`.
    fn injected(&self) -> u64 {
        self.t.saturating_sub(self.t0).min(self.n)
    }
}

impl Hot<'_> {
    /// A wavelet arriving at cycle `arrive` in queue `q` of `node`, whose router an express
    /// stream reserves a port of: if the queue wants that port, the stream turns back into
    /// wavelets at that cycle, before the PEs wake.
    pub(crate) fn express_arrival(&mut self, node: u32, q: u32, arrive: u64) {
        let info = &self.info[node as usize];
        if self.queues[q as usize].tx & info.reserved != 0 {
            let x = info.express;
            let generation = self.express[x as usize].generation;
            self.xevents
                .push(Reverse((arrive, x, generation, crate::express::RELEASE)));
        }
    }
}

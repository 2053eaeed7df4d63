//! The closed form of an express stream (see `express.rs`) at work: the router steps that
//! complete its send and receives, writing delivered wavelets into the receiver's SRAM, and
//! turning the stream back into wavelets — queues, links, credits, counters and round-robin
//! positions exactly as the hop-by-hop simulation would have them at that cycle.

use crate::fabric::{Delivery, EXPRESS, NONE, SENDING, SendState};
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
            let color = s.send.color;
            let then = s.send.then;
            let p = &mut self.pes[s.pe_a as usize];
            p.express = NONE;
            p.last_color = color;
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
        while u64::from(s.flushed) < s.n() && s.t0 + u64::from(s.flushed) + hl <= upto {
            let d = s.t0 + u64::from(s.flushed) + hl;
            let data = s.send.data[s.flushed as usize];
            s.flushed += 1;
            let waits = &mut self.waits[s.pe_b as usize];
            let delivery = self.pes[s.pe_b as usize].deliver(self.program, waits, color, data, d);
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
    /// the arrivals and credits of `t`, before the PEs wake and the routers step.
    pub(crate) fn materialize(&mut self, x: u32) {
        let t = self.t;
        self.flush(x, t.saturating_sub(1));
        let latency = self.latency;
        let depth = self.depth;
        let s = &mut self.express[x as usize];
        s.alive = false;
        let (t0, n, h) = (s.t0, s.n(), s.h());
        if t <= t0 + n - 1 + h * latency {
            self.stats.express_interrupted += 1;
        }
        let hops = std::mem::take(&mut s.hops);
        let color = s.send.color;
        // Wavelets injected before `t`.
        let m = t.saturating_sub(t0).min(n);
        // Injection cycles of the wavelets in a range of times, clipped to the stream.
        let count = |lo: u64, hi: u64| -> u64 {
            // #{i < n : lo <= t0 + i <= hi}
            if hi < t0 || hi < lo {
                return 0;
            }
            let lo = lo.max(t0);
            let hi = hi.min(t0 + n - 1);
            if hi < lo { 0 } else { hi - lo + 1 }
        };
        // Wavelets that reached cycle `c` cycles after their injection before `t`.
        let upto = |c: u64| -> u64 { if t < 1 + c { 0 } else { count(0, t - 1 - c) } };
        let mut last_move = None;
        for (k, hop) in hops.iter().enumerate() {
            let k = k as u64;
            let info = &mut self.info[hop.node as usize];
            info.express = NONE;
            info.reserved = 0;
            let node = &mut self.nodes[hop.node as usize];
            node.flags &= !EXPRESS;
            // Wavelets that left router k before t.
            let left = upto(k * latency);
            if left > 0 {
                let bit = hop.queue - node.q_start;
                node.rr[usize::from(hop.port)] = ((bit + 1) % 64) as u8;
                last_move = last_move.max(Some(t0 + left - 1 + k * latency));
            }
            if hop.och != NONE {
                let ch = &mut self.outch[hop.och as usize];
                ch.sent += left;
                // Credits out: left router k before t, back after t.
                let hi = t.checked_sub(1 + k * latency);
                let lo = (t + 1).saturating_sub((k + 2) * latency);
                let out = hi.map_or(0, |hi| count(lo, hi));
                ch.credits = depth - out as u32;
                // Of those, the ones the next router already forwarded are in the wheel.
                if let Some(hi) = t.checked_sub(1 + (k + 1) * latency) {
                    for a in lo.max(t0)..=hi.min(t0 + n - 1) {
                        self.wheel.credit(a + (k + 2) * latency, hop.och);
                    }
                }
            }
        }
        // Wavelets past the sender but not delivered: in a queue (arrived at t) or on a link.
        let delivered = upto(h * latency);
        let mut activate = Vec::new();
        for i in delivered..m {
            let e = t - (t0 + i);
            let k = e / latency;
            let data = self.express[x as usize].send.data[i as usize];
            if e.is_multiple_of(latency) {
                let hop = hops[k as usize];
                self.push(hop.queue, data);
                activate.push(hop.node);
            } else {
                let hop = hops[k as usize + 1];
                self.wheel
                    .arrival(t0 + i + (k + 1) * latency, hop.queue, data);
            }
        }
        for node in activate {
            self.activate(node);
        }
        if let Some(l) = last_move {
            self.stats.event(l);
        }
        // The rest of the send goes back to the sender.
        let s = &mut self.express[x as usize];
        let pe_a = s.pe_a;
        let mut send = std::mem::replace(&mut s.send, SendState::new(color, Vec::new(), None));
        let a = &mut self.pes[pe_a as usize];
        if m >= 1 {
            a.last_color = color;
        }
        a.express = NONE;
        if m < n {
            send.pos = m as u32;
            a.sends.insert(0, send);
            a.send_mask |= 1u64 << color;
            let node_a = hops[0].node;
            self.nodes[node_a as usize].flags |= SENDING;
            self.activate(node_a);
        }
    }
}

impl Hot<'_> {
    /// A wavelet arrives at cycle `t` in queue `q` of a router an express stream reserves a
    /// port of: if the queue wants that port, the stream turns back into wavelets first.
    pub(crate) fn express_arrival(&mut self, q: u32) {
        let node = self.queues[q as usize].node;
        let info = &self.info[node as usize];
        if self.queues[q as usize].tx & info.reserved != 0 {
            let x = info.express;
            self.materialize(x);
        }
    }
}

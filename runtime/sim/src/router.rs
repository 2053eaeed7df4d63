//! One router step: the PE's ramp injects at most one wavelet, edge sources inject, and each
//! output port moves at most one wavelet per cycle.
//!
//! Flow control is credit based: an output channel may send only while it holds a credit for
//! a free slot in the downstream queue; the slot's credit comes back one hop latency after
//! the downstream router forwards the wavelet. A full queue therefore stalls its upstream
//! router (backpressure), which can propagate and, in a bad program, deadlock.
//!
//! A queue's head wavelet goes to every port of its route (multicast); it leaves the queue
//! once all have taken it. Each output port serves the queues that want it round-robin, so
//! streams sharing a link share its bandwidth equally.

use crate::fabric::{Msg, NONE, RAMP, Upstream};
use crate::partition::Partition;
use std::cmp::Reverse;

impl Partition<'_> {
    /// Step the router of `node` at cycle `t`; returns whether it should stay active (it moved
    /// something and still has work).
    pub(crate) fn step_router(&mut self, node: u32, t: u64) -> bool {
        let mut moved = false;
        let pe = self.nodes[node as usize].pe;
        if pe != NONE && !self.pes[pe as usize].sends.is_empty() {
            moved |= self.inject(node, pe, t);
        }
        if self.nodes[node as usize].src_len > 0 {
            moved |= self.inject_sources(node, t);
        }
        if self.nodes[node as usize].nonempty != 0 {
            for o in 0..crate::fabric::OUTPUTS {
                moved |= self.serve(node, o, t);
            }
        }
        if !moved {
            return false;
        }
        self.stats.event(t);
        let n = &self.nodes[node as usize];
        let queued = n.nonempty != 0;
        let sending = pe != NONE && !self.pes[pe as usize].sends.is_empty();
        let sourcing = self.sources[n.src_start as usize..(n.src_start + n.src_len) as usize]
            .iter()
            .any(|s| s.pos < s.data.len());
        queued || sending || sourcing
    }

    /// The local queue of `node` for `color` fed by port `rx`.
    fn queue_for(&self, node: u32, color: u8, rx: u8) -> u32 {
        let n = &self.nodes[node as usize];
        (n.q_start..n.q_start + u32::from(n.q_len))
            .find(|&q| {
                let queue = &self.queues[q as usize];
                queue.color == color && queue.rx == rx
            })
            .unwrap_or(NONE)
    }

    /// Move one wavelet from the PE's sends into the router, round-robin over colors; within
    /// a color, sends go in issue order.
    fn inject(&mut self, node: u32, pe: u32, t: u64) -> bool {
        let depth = self.depth;
        let mut seen = 0u64;
        let mut best: Option<(u8, usize, u32)> = None;
        let mut first: Option<(u8, usize, u32)> = None;
        let last = self.pes[pe as usize].last_color;
        for i in 0..self.pes[pe as usize].sends.len() {
            let s = &self.pes[pe as usize].sends[i];
            let bit = 1u64 << s.color;
            if seen & bit != 0 {
                continue;
            }
            seen |= bit;
            let mut q = s.queue;
            if q == NONE {
                q = self.queue_for(node, s.color, RAMP as u8);
                self.pes[pe as usize].sends[i].queue = q;
            }
            let s = &self.pes[pe as usize].sends[i];
            if q == NONE || u32::from(self.queues[q as usize].len) >= depth {
                continue;
            }
            let cand = (s.color, i, q);
            if first.is_none_or(|f| s.color < f.0) {
                first = Some(cand);
            }
            if s.color > last && best.is_none_or(|b| s.color < b.0) {
                best = Some(cand);
            }
        }
        let Some((color, i, q)) = best.or(first) else {
            return false;
        };
        let p = &mut self.pes[pe as usize];
        p.last_color = color;
        let s = &mut p.sends[i];
        let data = s.data[s.pos as usize];
        s.pos += 1;
        if s.pos as usize == s.data.len() {
            let done = p.sends.remove(i);
            if let Some(then) = done.then {
                p.ready.push(Reverse((t + 1, p.seq, then)));
                p.seq += 1;
                self.schedule(node, t + 1);
            }
        }
        self.push(q, data);
        true
    }

    fn inject_sources(&mut self, node: u32, t: u64) -> bool {
        let n = &self.nodes[node as usize];
        let mut moved = false;
        for s in n.src_start..n.src_start + n.src_len {
            let src = &self.sources[s as usize];
            if src.pos >= src.data.len() {
                continue;
            }
            if !src.pacer.allows(t) {
                let when = src.pacer.ready_at();
                self.schedule(node, when);
                continue;
            }
            let q = src.queue;
            if u32::from(self.queues[q as usize].len) >= self.depth {
                continue;
            }
            let src = &mut self.sources[s as usize];
            let data = src.data[src.pos];
            src.pos += 1;
            src.pacer.moved(t);
            self.push(q, data);
            moved = true;
        }
        moved
    }

    fn push(&mut self, q: u32, data: u32) {
        let depth = self.depth as usize;
        let queue = &mut self.queues[q as usize];
        let slot = (queue.head as usize + queue.len as usize) % depth;
        self.qdata[q as usize * depth + slot] = data;
        queue.len += 1;
        let node = queue.node;
        let n = &mut self.nodes[node as usize];
        n.nonempty |= 1 << (q - n.q_start);
    }

    /// Output port `o` of `node` moves at most one wavelet: the first queue after the one
    /// served last (in queue order, wrapping around) whose head wants `o` and can go.
    fn serve(&mut self, node: u32, o: usize, t: u64) -> bool {
        let n = &self.nodes[node as usize];
        let mut want = n.cmask[o] & n.nonempty;
        if want == 0 {
            return false;
        }
        let q_start = n.q_start as usize;
        let rr = u32::from(n.rr[o]);
        let depth = self.depth as usize;
        // Queues at or after the round-robin position first, then the rest.
        let mut pass = want & (u64::MAX << rr);
        loop {
            if pass == 0 {
                if want == 0 {
                    return false;
                }
                pass = want;
            }
            let bit = pass.trailing_zeros() as usize;
            pass &= pass - 1;
            want &= !(1u64 << bit);
            let q = q_start + bit;
            let queue = &self.queues[q];
            if queue.sent & (1 << o) != 0 {
                continue;
            }
            let data = self.qdata[q * depth + queue.head as usize];
            let color = queue.color;
            if o < RAMP {
                let ch = queue.och[o] as usize;
                let out = self.outch[ch];
                if out.sink != NONE {
                    let sink = &mut self.sinks[out.sink as usize];
                    if !sink.pacer.allows(t) {
                        let when = sink.pacer.ready_at();
                        self.schedule(node, when);
                        continue;
                    }
                    sink.data.push(data);
                    sink.pacer.moved(t);
                } else {
                    if out.credits == 0 {
                        continue;
                    }
                    self.outch[ch].credits -= 1;
                    let when = t + self.latency;
                    if out.dest_part == self.id {
                        self.wheel.arrival(when, out.dest_queue, data);
                    } else {
                        self.outbox[out.dest_part as usize].push(Msg {
                            time: when,
                            index: out.dest_queue,
                            data,
                            is_credit: false,
                        });
                    }
                    self.stats.hops += 1;
                    self.stats.color_hops[color as usize] += 1;
                }
                self.stats.links[node as usize][o] += 1;
                if let Some(trace) = &mut self.trace {
                    trace.link(self.node_base + node, o as u8, t);
                }
            } else if !self.deliver(node, color, data, t) {
                continue;
            }
            let queue = &mut self.queues[q];
            queue.sent |= 1 << o;
            if queue.sent == queue.tx {
                queue.sent = 0;
                queue.head = ((queue.head as usize + 1) % depth) as u8;
                queue.len -= 1;
                if queue.len == 0 {
                    self.nodes[node as usize].nonempty &= !(1u64 << bit);
                }
                if let Upstream::Link { part, och } = queue.up {
                    let when = t + self.latency;
                    if part == self.id {
                        self.wheel.credit(when, och);
                    } else {
                        self.outbox[part as usize].push(Msg {
                            time: when,
                            index: och,
                            data: 0,
                            is_credit: true,
                        });
                    }
                }
            }
            self.nodes[node as usize].rr[o] = ((bit + 1) % 64) as u8;
            return true;
        }
    }

    /// Write a wavelet of `color` into the PE's first posted receive for that color.
    fn deliver(&mut self, node: u32, color: u8, data: u32, t: u64) -> bool {
        let pe = self.nodes[node as usize].pe;
        if pe == NONE {
            return false;
        }
        let program = self.program;
        let p = &mut self.pes[pe as usize];
        let Some(ri) = p.recvs.iter().position(|r| r.color == color) else {
            return false;
        };
        if p.sram.is_empty() {
            let prog = &program.pes[p.prog as usize];
            crate::pe_exec::materialize(&mut p.sram, prog.sram_bytes, &prog.sram_init);
        }
        let r = &mut p.recvs[ri];
        let at = r.offset as usize + 4 * r.done as usize;
        // The receive's range was checked against the SRAM size when it was posted.
        if let Some(dst) = p.sram.get_mut(at..at + 4) {
            dst.copy_from_slice(&data.to_le_bytes());
        }
        r.done += 1;
        if r.done == r.n {
            let then = r.then;
            p.recvs.remove(ri);
            p.ready.push(Reverse((t + 1, p.seq, then)));
            p.seq += 1;
            self.schedule(node, t + 1);
        }
        self.stats.color_delivered[color as usize] += 1;
        true
    }
}

//! One router step: the PE's ramp injects at most one wavelet, edge sources inject, and each
//! output port moves at most one wavelet per cycle.
//!
//! Flow control is credit based: an output channel may send only while it holds a credit for
//! a free slot in the downstream queue; the slot's credit comes back one hop latency after
//! the downstream router forwards the wavelet. A full queue therefore stalls its upstream
//! router (backpressure), which can propagate and, in a bad program, deadlock. Inside a
//! partition a credit is counted at once, without an event, when its channel holds so many
//! that neither its sends nor its wake-up can tell the difference (see `sent_head`).
//!
//! A queue's head wavelet goes to every port of its route (multicast); it leaves the queue
//! once all have taken it. Each output port serves the queues that want it round-robin, so
//! streams sharing a link share its bandwidth equally.
//!
//! The step works on a [`Hot`] view: the partition's arrays borrowed apart, so that their
//! addresses stay in registers across a whole cycle of router steps.

use crate::events::{Bucket, Due, NodeSet, Timers, Wheel};
use crate::express::Express;
use crate::fabric::{
    Delivery, EXPRESS, INLINE_SLOTS, Msg, NONE, Node, NodeInfo, OUTPUTS, OutChannel, Pe, Queue,
    RAMP, SENDING, SOURCES, Sink, Source,
};
use crate::partition::{Partition, Stats};
use crate::phases::Phases;
use crate::program::Program;
use crate::trace::TraceBuf;
use crate::waits::PeWaits;
use std::cmp::Reverse;

/// The state router steps of one cycle work on.
pub(crate) struct Hot<'a> {
    pub t: u64,
    pub(crate) depth: u32,
    qstride: u32,
    qmask: u32,
    /// The queues keep their wavelets in their records (`Queue::slots`), not in `qdata`.
    inline_slots: bool,
    pub(crate) latency: u64,
    id: u32,
    pub(crate) floor: u64,
    node_base: u32,
    pub(crate) program: &'a Program,
    pub(crate) nodes: &'a mut [Node],
    pub(crate) info: &'a mut [NodeInfo],
    pub queues: &'a mut [Queue],
    qdata: &'a mut [u32],
    pub outch: &'a mut [OutChannel],
    pub(crate) pes: &'a mut [Pe],
    sources: &'a mut [Source],
    sinks: &'a mut [Sink],
    pub(crate) wheel: &'a mut Wheel,
    pub(crate) timers: &'a mut Timers,
    outbox: &'a mut [Vec<Msg>],
    trace: Option<&'a mut TraceBuf>,
    pub(crate) stats: &'a mut Stats,
    pub(crate) express: &'a mut [Express],
    /// An express stream may be alive (else no router has the `EXPRESS` flag).
    express_alive: bool,
    pub pending: &'a mut NodeSet,
    pub(crate) waits: &'a mut [PeWaits],
    phases: &'a mut Phases,
    spare: &'a mut crate::task::SpareBuffers,
    /// Router steps apply their own arrivals (`Partition::defer`).
    pub(crate) defer: bool,
    early_credits: bool,
}

impl<'p> Partition<'p> {
    /// Borrow the partition's arrays for the router work of cycle `t`.
    pub(crate) fn hot(&mut self, t: u64) -> Hot<'_> {
        Hot {
            t,
            depth: self.depth,
            qstride: self.qstride,
            qmask: self.qmask,
            inline_slots: crate::fabric::inline_slots(self.qstride),
            latency: self.latency,
            id: self.id,
            floor: self.floor,
            node_base: self.node_base,
            program: self.program,
            nodes: &mut self.nodes,
            info: &mut self.info,
            queues: &mut self.queues,
            qdata: &mut self.qdata,
            outch: &mut self.outch,
            pes: &mut self.pes,
            sources: &mut self.sources,
            sinks: &mut self.sinks,
            wheel: &mut self.wheel,
            timers: &mut self.timers,
            outbox: &mut self.outbox,
            trace: self.trace.as_mut(),
            stats: &mut self.stats,
            express: &mut self.express,
            express_alive: !self.xevents.is_empty(),
            pending: &mut self.pending,
            waits: &mut self.waits,
            phases: &mut self.phases,
            spare: &mut self.spare,
            defer: self.defer,
            early_credits: self.early_credits,
        }
    }
}

impl Hot<'_> {
    /// Wake `node` at cycle `t` (see `Partition::schedule`).
    pub(crate) fn schedule(&mut self, node: u32, t: u64) {
        let t = t.max(self.floor);
        let n = &mut self.info[node as usize];
        if t < n.wake {
            n.wake = t;
            self.timers.push(t, node);
        }
    }

    /// Step `node`'s router in the next router pass (this cycle's before the pass, else the
    /// next cycle's).
    #[inline]
    pub(crate) fn activate(&mut self, node: u32) {
        self.pending.insert(node);
    }

    /// Step the router of `node`; returns (whether it moved anything, whether it should stay
    /// active: it moved something and still has work). Inlined into the router pass, with
    /// injection: a call costs more than it saves here (−8% instructions on the 64×64 halo).
    #[inline(always)]
    pub(crate) fn step_router(&mut self, node: u32) -> (bool, bool) {
        let mut moved = false;
        let n = &self.nodes[node as usize];
        let (pe, flags) = (n.pe, n.flags);
        if flags & SENDING != 0 {
            moved |= self.inject(node, pe, flags);
        }
        let has_sources = flags & SOURCES != 0;
        if has_sources {
            moved |= self.inject_sources(node);
        }
        if flags & EXPRESS != 0 {
            self.express_step(node);
        }
        // The ports with wanting queues, in order: serving a port changes the want masks only
        // when it moves a wavelet, and they are read again then. The link ports share one
        // copy of `serve`, the ramp has its own.
        let mut ports = self.nodes[node as usize].ports;
        debug_assert_eq!(ports, self.nodes[node as usize].want_ports());
        let mut links = ports & LINK_PORTS;
        while links != 0 {
            let o = links.trailing_zeros() as usize;
            links &= links - 1;
            if self.serve(node, o) {
                moved = true;
                ports = self.nodes[node as usize].ports;
                links = ports & LINK_PORTS & (u8::MAX << (o + 1));
            }
        }
        if ports & (1 << RAMP) != 0 && self.serve(node, RAMP) {
            moved = true;
        }
        if !moved {
            return (false, false);
        }
        let queued = self.nodes[node as usize].ports != 0;
        let sending = self.nodes[node as usize].flags & SENDING != 0;
        let sourcing = has_sources && {
            let info = &self.info[node as usize];
            self.sources[info.src_start as usize..(info.src_start + info.src_len) as usize]
                .iter()
                .any(Source::live)
        };
        (true, queued || sending || sourcing)
    }

    /// Move one wavelet from the PE's sends into the router, round-robin over colors (the
    /// first color after the one injected last, among those whose ramp queue has room);
    /// within a color, sends go in issue order.
    #[inline(always)]
    fn inject(&mut self, node: u32, pe: u32, flags: u8) -> bool {
        let n = &mut self.nodes[node as usize];
        let p = &mut self.pes[pe as usize];
        let avail = p.send_mask & !n.ramp_full;
        if avail == 0 {
            if p.send_mask == 0 {
                n.flags &= !SENDING;
            }
            return false;
        }
        let Some(color) = next_color(avail, p.last_color) else {
            return false;
        };
        let Some(i) = p.sends.iter().position(|s| s.color == color) else {
            return false;
        };
        p.last_color = color;
        let s = &mut p.sends[i];
        if s.queue == NONE {
            s.queue = (n.q_start..n.q_start + u32::from(n.q_len))
                .find(|&q| {
                    let queue = &self.queues[q as usize];
                    queue.color == color && queue.rx == RAMP as u8
                })
                .unwrap_or(NONE);
            let queue = &self.queues[s.queue as usize];
            if usize::from(queue.solo) < RAMP {
                s.solo = queue.solo;
                s.och = queue.och[usize::from(queue.solo)];
            }
        }
        let (q, solo, och) = (s.queue, s.solo, s.och);
        let data = s.data[s.pos as usize];
        s.pos += 1;
        if s.pos as usize == s.data.len() {
            let done = p.sends.remove(i);
            if !p.sends.iter().any(|s| s.color == color) {
                p.send_mask &= !(1u64 << color);
                if p.send_mask == 0 {
                    n.flags &= !SENDING;
                }
            }
            if let Some(then) = done.then {
                p.ready.push(Reverse((self.t + 1, p.seq, then)));
                p.seq += 1;
                self.schedule(node, self.t + 1);
            }
            self.spare.give(done.data);
        }
        // The ramp queue is empty and the only one that ever forwards through its port: the
        // wavelet goes straight on (what pushing it and serving the port would do, without
        // the round trip through the queue). Not with edge sources or an express stream at
        // the router, which act between injection and the ports. The queue forwards through
        // `solo` alone, so it is empty exactly when its bit is not in that port's want mask
        // (its head leaves as soon as it has gone there): the queue record is not read.
        if usize::from(solo) < RAMP && flags & (SOURCES | EXPRESS) == 0 {
            let o = usize::from(solo);
            let bit = q - self.nodes[node as usize].q_start;
            debug_assert_eq!(
                self.nodes[node as usize].want[o] & (1u64 << bit) == 0,
                self.queues[q as usize].len == 0
            );
            if self.nodes[node as usize].want[o] & (1u64 << bit) == 0
                && self.emit(node, och, o, data)
            {
                self.nodes[node as usize].rr[o] = ((bit + 1) % 64) as u8;
                return true;
            }
        }
        self.push(q, data);
        if u32::from(self.queues[q as usize].len) >= self.depth {
            self.nodes[node as usize].ramp_full |= 1u64 << color;
        }
        true
    }

    fn inject_sources(&mut self, node: u32) -> bool {
        let info = self.info[node as usize];
        let t = self.t;
        let mut moved = false;
        for s in info.src_start..info.src_start + info.src_len {
            let src = &self.sources[s as usize];
            if !src.live() {
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
            src.held_back += t.saturating_sub(src.pacer.ready_at().max(src.requested));
            src.pacer.moved(t);
            if src.first.is_none() {
                src.first = Some(t);
            }
            src.last = Some(t);
            if src.pos == src.data.len() && src.group != NONE {
                let group = src.group;
                self.weight_stream_done(group);
            }
            self.push(q, data);
            moved = true;
        }
        moved
    }

    /// The last wavelet of a weight stream of `group` entered in this cycle: with one
    /// partition, request the next phase if this completed the current one.
    #[cold]
    fn weight_stream_done(&mut self, group: u32) {
        self.phases.stream_done(group, self.t);
        if !self.phases.local {
            return;
        }
        let mut wakes = Vec::new();
        self.phases
            .advance_local(self.program, self.sources, &mut wakes);
        for (s, when) in wakes {
            let node = self.queues[self.sources[s as usize].queue as usize].node;
            self.schedule(node, when);
        }
    }

    /// Apply the arrivals and credits of this cycle that came from elsewhere than a router
    /// step (other partitions, rebuilt express streams).
    pub(crate) fn apply_other(&mut self, b: &Bucket) {
        for &(q, data) in &b.arrivals {
            let node = self.queues[q as usize].node;
            self.arrive(node, q, data);
        }
        for &och in &b.credits {
            self.credit(och);
        }
    }

    /// Apply the arrivals and credits of this cycle that router steps caused, all at once
    /// (see `Partition::cycle`).
    pub(crate) fn apply_steps(&mut self, steps: &[Due]) {
        for (i, d) in steps.iter().enumerate() {
            if let Some(ahead) = steps.get(i + 2 * crate::prefetch::ARRIVALS)
                && ahead.index & Due::CREDIT == 0
            {
                self.prefetch_queue(ahead.index);
            }
            if let Some(ahead) = steps.get(i + crate::prefetch::ARRIVALS)
                && ahead.index & Due::CREDIT == 0
            {
                self.prefetch_arrival(ahead.node, ahead.index);
            }
            if d.index & Due::CREDIT == 0 {
                self.arrive(d.node, d.index, d.data);
            } else {
                self.credit(d.index & !Due::CREDIT);
            }
        }
    }

    /// Apply the arrival or credit `d` right before its router steps.
    #[inline]
    pub(crate) fn apply_due(&mut self, d: Due) {
        if d.index & Due::CREDIT == 0 {
            debug_assert!(
                u32::from(self.queues[d.index as usize].len) < self.depth,
                "credit flow control overflowed a queue"
            );
            self.push(d.index, d.data);
        } else {
            self.outch[(d.index & !Due::CREDIT) as usize].credits += 1;
        }
    }

    /// A wavelet arrives in local queue `q` of `node` before the PEs wake and the routers step.
    #[inline(always)]
    fn arrive(&mut self, node: u32, q: u32, data: u32) {
        debug_assert!(
            u32::from(self.queues[q as usize].len) < self.depth,
            "credit flow control overflowed a queue"
        );
        debug_assert_eq!(self.queues[q as usize].node, node);
        if self.express_alive && self.nodes[node as usize].flags & EXPRESS != 0 {
            self.express_arrival(q);
        }
        self.push(q, data);
        self.activate(node);
    }

    /// A credit returns to local output channel `och` before the routers step.
    #[inline]
    fn credit(&mut self, och: u32) {
        let ch = &mut self.outch[och as usize];
        ch.credits += 1;
        // A router with credits left on this channel was not waiting for it.
        if ch.credits == 1 {
            let node = ch.node;
            self.activate(node);
        }
    }

    /// Where the next wavelet of local queue `q` goes (for prefetching): in the queue record
    /// itself when the slots are inline (`None`).
    #[inline(always)]
    pub(crate) fn qslot(&self, q: u32) -> Option<*const u32> {
        if self.inline_slots {
            return None;
        }
        let queue = &self.queues[q as usize];
        let slot = (u32::from(queue.head) + u32::from(queue.len)) & self.qmask;
        Some(
            self.qdata
                .as_ptr()
                .wrapping_add((q * self.qstride + slot) as usize),
        )
    }

    /// Slot `slot` (< `qstride`) of local queue `q`.
    #[inline(always)]
    fn slot(&mut self, q: u32, slot: u32) -> &mut u32 {
        if self.inline_slots {
            &mut self.queues[q as usize].slots[slot as usize % INLINE_SLOTS]
        } else {
            &mut self.qdata[(q * self.qstride + slot) as usize]
        }
    }

    /// The wavelet in slot `slot` (< `qstride`) of local queue `q`.
    #[inline(always)]
    fn read_slot(&self, q: u32, slot: u32) -> u32 {
        if self.inline_slots {
            self.queues[q as usize].slots[slot as usize % INLINE_SLOTS]
        } else {
            self.qdata[(q * self.qstride + slot) as usize]
        }
    }

    /// Append a wavelet to local queue `q` (the caller checked there is room).
    #[inline(always)]
    pub(crate) fn push(&mut self, q: u32, data: u32) {
        let queue = &mut self.queues[q as usize];
        let slot = (u32::from(queue.head) + u32::from(queue.len)) & self.qmask;
        let len = queue.len;
        queue.len += 1;
        let (node, tx) = (queue.node, queue.tx);
        *self.slot(q, slot) = data;
        if len == 0 {
            let n = &mut self.nodes[node as usize];
            let bit = 1u64 << (q - n.q_start);
            set_want(n, tx, bit);
        }
    }

    /// Output port `o` of `node` moves at most one wavelet: the first queue after the one
    /// served last (in queue order, wrapping around) whose head wants `o` and can go.
    #[inline(always)]
    fn serve(&mut self, node: u32, o: usize) -> bool {
        let n = &self.nodes[node as usize];
        let mut want = n.want[o];
        let q_start = n.q_start;
        let rr = u32::from(n.rr[o]);
        // Queues at or after the round-robin position first, then the rest.
        let mut pass = want & (u64::MAX << rr);
        loop {
            if pass == 0 {
                if want == 0 {
                    return false;
                }
                pass = want;
            }
            let bit = pass.trailing_zeros();
            pass &= pass - 1;
            want &= !(1u64 << bit);
            let q = q_start + bit;
            let queue = &self.queues[q as usize];
            let (head, color, ch) = (u32::from(queue.head), queue.color, queue.och[o % 4]);
            let data = self.read_slot(q, head);
            if o < RAMP {
                if !self.emit(node, ch, o, data) {
                    continue;
                }
            } else if !self.deliver(node, color, data) {
                continue;
            }
            self.sent_head(node, q, bit, o);
            return true;
        }
    }

    /// Link port `o` of `node` forwards `data` through output channel `ch` in this cycle, if
    /// it can: to a neighbour (holding a credit) or off the fabric (its pacer allowing; if it
    /// does not, the router wakes when it will).
    #[inline(always)]
    fn emit(&mut self, node: u32, ch: u32, o: usize, data: u32) -> bool {
        let t = self.t;
        let out = &mut self.outch[ch as usize];
        if out.sink != NONE {
            let sink = &mut self.sinks[out.sink as usize];
            if !sink.pacer.allows(t) {
                let when = sink.pacer.ready_at();
                self.schedule(node, when);
                return false;
            }
            sink.data.push(data);
            sink.pacer.moved(t);
            if sink.first.is_none() {
                sink.first = Some(t);
            }
            sink.last = Some(t);
            out.sent += 1;
        } else {
            if out.credits == 0 {
                return false;
            }
            out.credits -= 1;
            out.sent += 1;
            let (dest_part, dest_queue) = (out.dest_part, out.dest_queue);
            let when = t + self.latency;
            if dest_part == self.id {
                let a = Due {
                    node: out.dest_node,
                    index: dest_queue,
                    data,
                };
                self.wheel.step(when, a);
            } else {
                self.outbox[dest_part as usize].push(Msg {
                    time: when,
                    index: dest_queue,
                    data,
                    is_credit: false,
                });
            }
        }
        if let Some(trace) = &mut self.trace {
            trace.link(self.node_base + node, o as u8, t);
        }
        true
    }

    /// The head of local queue `q` (bit `bit` of its node) went to port `o`; it leaves the
    /// queue once every port of the route has taken it, and its slot's credit goes upstream.
    #[inline(always)]
    fn sent_head(&mut self, node: u32, q: u32, bit: u32, o: usize) {
        let queue = &mut self.queues[q as usize];
        let n = &mut self.nodes[node as usize];
        n.rr[o] = ((bit + 1) % 64) as u8;
        n.want[o] &= !(1u64 << bit);
        if n.want[o] == 0 {
            n.ports &= !(1 << o);
        }
        queue.sent |= 1 << o;
        if queue.sent != queue.tx {
            return;
        }
        queue.sent = 0;
        queue.head = ((u32::from(queue.head) + 1) & self.qmask) as u8;
        if queue.rx == RAMP as u8 {
            n.ramp_full &= !(1u64 << queue.color);
        }
        queue.len -= 1;
        if queue.len > 0 {
            set_want(n, queue.tx, 1u64 << bit);
        }
        let (up, part) = (queue.up_och, u32::from(queue.up_part));
        if up != NONE {
            let when = self.t + self.latency;
            if part == self.id {
                // An upstream channel holding at least 2L credits cannot run out before this
                // one is due (it spends at most one per cycle, and at most L − 1 of its
                // credits are early ones not yet due), and its return would not wake the
                // router (that happens only on 0 → 1): count it now, without an event.
                let ch = &mut self.outch[up as usize];
                if self.early_credits && u64::from(ch.credits) >= 2 * self.latency {
                    ch.credits += 1;
                    ch.early_until = when;
                    return;
                }
                let c = Due {
                    node: queue.up_node,
                    index: up | Due::CREDIT,
                    data: 0,
                };
                self.wheel.step(when, c);
            } else {
                self.outbox[part as usize].push(Msg {
                    time: when,
                    index: up,
                    data: 0,
                    is_credit: true,
                });
            }
        }
    }

    /// Write a wavelet of `color` into the PE's first posted receive for that color.
    #[inline(always)]
    fn deliver(&mut self, node: u32, color: u8, data: u32) -> bool {
        let pe = self.nodes[node as usize].pe;
        if pe == NONE {
            return false;
        }
        let t = self.t;
        let waits = &mut self.waits[pe as usize];
        match self.pes[pe as usize].deliver(self.program, waits, color, data, t) {
            Delivery::NoReceive => return false,
            Delivery::Written => {}
            Delivery::Completed => self.schedule(node, t + 1),
        }
        self.stats.color_delivered[color as usize] += 1;
        true
    }
}

/// The link ports (N, S, E, W) in a port mask.
const LINK_PORTS: u8 = 0b1111;

/// Mark queue `bit` in the want masks of the ports in `tx` (not empty).
#[inline(always)]
fn set_want(n: &mut Node, tx: u8, bit: u64) {
    n.ports |= tx;
    if tx & tx.wrapping_sub(1) == 0 {
        // One port: the common case.
        n.want[tx.trailing_zeros() as usize % OUTPUTS] |= bit;
    } else {
        for (o, w) in n.want.iter_mut().enumerate() {
            if tx & (1 << o) != 0 {
                *w |= bit;
            }
        }
    }
}

/// The color a PE's ramp injects next: the first of `avail` after `last` (round-robin).
#[inline(always)]
pub(crate) fn next_color(avail: u64, last: u8) -> Option<u8> {
    if avail == 0 {
        return None;
    }
    let last = u32::from(last);
    let above = if last >= 63 {
        0
    } else {
        avail & (u64::MAX << (last + 1))
    };
    Some(if above != 0 {
        above.trailing_zeros()
    } else {
        avail.trailing_zeros()
    } as u8)
}

//! One router step: the router absorbs the wavelets that have arrived, the PE's ramp injects
//! at most one wavelet, edge sources inject, and each output port moves at most one wavelet.
//!
//! A queue's head wavelet goes to every port of its route (multicast); it leaves the queue
//! once all have taken it. Each output port serves the queues that want it round-robin, so
//! streams sharing a link share its bandwidth equally.
//!
//! Flow control is credit based: a router forwards over a link only while it holds a credit
//! for a free slot in the downstream queue; the credit comes back one hop latency after the
//! downstream router passes the wavelet on. Inside a partition both the wavelet and the
//! credit live in the downstream queue's record (see `queue.rs`): forwarding writes the
//! wavelet there with its arrival cycle and wakes the downstream router for that cycle; a
//! router that finds no credit either wakes itself when the next one is due or marks the
//! queue, so that its next pop wakes it. Over a link into another partition the wavelet and
//! the credit go as messages, and the upstream channel counts its credits itself. A full
//! queue therefore stalls its upstream (backpressure), which can propagate and, in a bad
//! program, deadlock.
//!
//! The step works on a [`CycleState`] view: the fabric's arrays and the event sets, counters
//! and trace that each hop or delivery touches borrowed apart, so that their addresses stay in
//! registers across a whole cycle of router steps; the partition's other groups (task scratch,
//! express streams, weight phases) borrowed whole.
//!
//! A step holds its router's record in a local from start to end, and the common step (no
//! switch, filter, shared ramp, trace, edge source, express stream or boundary ring) is the
//! same code compiled without the tests for those (`RARE` false): see
//! [`CycleState::step_router`].

use crate::events::{NodeSet, Timers, Wakes};
use crate::express::Streams;
use crate::fabric::{
    CROSSING, EXPRESS, FILTERED, Filter, LINK_PORTS, LocalLink, Msg, NONE, OUTPUTS, OutChannel,
    Queue, RAMP, REMOTE_UP, Router, RouterInfo, SENDING, SOURCES, Sink, Source, UP_WAITS, head_tx,
};
use crate::partition::{Events, Fabric, Output, Partition, Stats, Tasks};
use crate::pe::{Delivery, Pe, RecvSlot, SendSlot};
use crate::phases::Phases;
use crate::program::Program;
use crate::queue::{Rel, Rings};
use crate::switches::forwarded;
use crate::trace::TraceBuf;

/// A link into another partition: where a queue's credits go (`Queue::up` with
/// `REMOTE_UP`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RemoteUp {
    pub part: u32,
    pub channel: u32,
}

/// The state router steps of one cycle work on.
pub(crate) struct CycleState<'a> {
    pub t: u64,
    /// `t` relative to the epoch (see `queue.rs`).
    pub rel: Rel,
    pub epoch: u64,
    id: u32,
    pub(crate) floor: u64,
    pub(crate) program: &'a Program,
    pub(crate) routers: &'a mut [Router],
    pub(crate) wake: &'a mut [u64],
    pub(crate) info: &'a mut [RouterInfo],
    pub queues: &'a mut [Queue],
    pub(crate) rings: &'a mut Rings,
    pub outch: &'a mut [OutChannel],
    remote_ups: &'a [RemoteUp],
    pub(crate) filters: &'a mut [Filter],
    pub(crate) switches: &'a mut crate::switches::Switches,
    /// The program has switches (`switches.on()`, kept here so that the hot paths test a
    /// register, not a field behind a pointer).
    pub(crate) switched: bool,
    /// The target's ramp is shared (`Target::ramp`, see `ramp.rs`).
    pub(crate) ramp_shared: bool,
    /// Switches, ramp filters, a shared ramp, a trace or rings deeper than a queue record
    /// holds: every router step takes the rare cases' path
    /// (see [`CycleState::step_router`]).
    rare_on: bool,
    pub(crate) pes: &'a mut [Pe],
    pub(crate) sends: &'a mut [SendSlot],
    pub(crate) recvs: &'a mut [RecvSlot],
    pub(crate) sources: &'a mut [Source],
    sinks: &'a mut [Sink],
    pub(crate) wakes: &'a mut Wakes,
    pub(crate) timers: &'a mut Timers,
    pub pending: &'a mut NodeSet,
    /// The cycle whose router pass `pending` is for: this one before the pass, the next one
    /// during it.
    pub(crate) pending_at: u64,
    outbox: &'a mut [Vec<Msg>],
    trace: Option<&'a mut TraceBuf>,
    pub(crate) stats: &'a mut Stats,
    pub(crate) tasks: &'a mut Tasks,
    pub(crate) streams: &'a mut Streams,
    phases: &'a mut Phases,
}

impl<'p> Partition<'p> {
    /// Borrow the partition's arrays for the router work of cycle `t`.
    pub(crate) fn hot(&mut self, t: u64) -> CycleState<'_> {
        let Fabric {
            routers,
            wake,
            info,
            queues,
            rings,
            outch,
            remote_ups,
            filters,
            switches,
            pes,
            sends,
            recvs,
            sources,
            sinks,
        } = &mut self.fab;
        let (setup, clock) = (&self.setup, &self.clock);
        let Events {
            wakes,
            timers,
            pending,
            ..
        } = &mut self.events;
        let Output {
            outbox,
            stats,
            trace,
            ..
        } = &mut self.out;
        let rare_on = switches.on()
            || !filters.is_empty()
            || setup.ramp_shared
            || trace.is_some()
            || !rings.all_inline();
        CycleState {
            t,
            rel: (t - clock.epoch) as Rel,
            epoch: clock.epoch,
            id: setup.id,
            floor: clock.floor,
            program: setup.program,
            routers,
            wake,
            info,
            queues,
            rings,
            outch,
            remote_ups,
            filters,
            switched: switches.on(),
            ramp_shared: setup.ramp_shared,
            rare_on,
            switches,
            pes,
            sends,
            recvs,
            sources,
            sinks,
            wakes,
            timers,
            pending,
            pending_at: t,
            outbox,
            trace: trace.as_mut(),
            stats,
            tasks: &mut self.tasks,
            streams: &mut self.streams,
            phases: &mut self.phases,
        }
    }
}

impl CycleState<'_> {
    /// Wake `node`'s PE (and step its router) at cycle `t` (see `Partition::schedule`).
    pub(crate) fn schedule(&mut self, node: u32, t: u64) {
        let t = t.max(self.floor);
        let wake = &mut self.wake[node as usize];
        if t < *wake {
            *wake = t;
            self.timers.push(t, node);
        }
    }

    /// Step `node`'s router at cycle `when` (after this one, at most a hop latency ahead).
    #[inline(always)]
    pub(crate) fn wake_at(&mut self, node: u32, when: u64) {
        if when == self.pending_at {
            self.pending.insert(node);
        } else {
            self.wakes.router(when, node);
        }
    }

    /// Step `node`'s router in the next router pass (this cycle's before the pass, else the
    /// next cycle's: see `pending_at`).
    #[inline]
    pub(crate) fn activate(&mut self, node: u32) {
        self.pending.insert(node);
    }

    /// Step the router of `node`; returns (whether it moved anything, whether it should stay
    /// active: it moved something and still has work). Inlined into the router pass, with
    /// injection: a call costs more than it saves here.
    ///
    /// The router's record is held in a local for the whole step and written back once: the
    /// step's calls take it by reference instead of indexing the router array again after
    /// each of them. Nothing else a step calls writes this router's record (a forward writes
    /// the downstream router's, never its own: a link joins two routers), except the rare
    /// calls that go through the array — the express stream's step and a control wavelet's
    /// command — around which it is written back and read again ([`CycleState::rare`]).
    ///
    /// The common step — no switch, ramp filter, shared ramp, trace or ring deeper than its
    /// record in the program, no edge source, express stream or ring behind a boundary at
    /// the router — is chosen once, and compiled without the tests for the rest (`RARE`
    /// false: see `rare_on`, [`CROSSING`]).
    #[inline(always)]
    pub(crate) fn step_router(&mut self, node: u32) -> (bool, bool) {
        let mut r = self.routers[node as usize];
        let done = if self.rare_on || r.flags & (SOURCES | EXPRESS | CROSSING) != 0 {
            self.step_held::<true>(&mut r, node)
        } else {
            self.step_held::<false>(&mut r, node)
        };
        self.routers[node as usize] = r;
        done
    }

    /// [`CycleState::step_router`] on the router's record `r`, held by the caller; with
    /// `RARE` false, the common step.
    #[inline(always)]
    fn step_held<const RARE: bool>(&mut self, r: &mut Router, node: u32) -> (bool, bool) {
        if r.incoming != 0 {
            self.absorb::<RARE>(r);
        }
        let mut moved = false;
        let flags = r.flags;
        // With a shared ramp, whether it has moved a wavelet in this cycle.
        let mut ramp_busy = false;
        if flags & SENDING != 0 {
            if RARE && self.ramp_shared && self.deliver_first(r, node) {
                (moved, ramp_busy) = (true, true);
            } else if self.inject::<RARE>(r, node) {
                (moved, ramp_busy) = (true, RARE && self.ramp_shared);
            }
        }
        let has_sources = RARE && flags & SOURCES != 0;
        if has_sources {
            moved |= self.inject_sources(r, node);
        }
        if RARE && flags & EXPRESS != 0 {
            self.rare(r, node, Self::express_step);
        }
        moved |= self.serve_ports::<RARE>(r, node, ramp_busy);
        if !moved {
            return (false, false);
        }
        let stay = r.ports != 0 || r.flags & SENDING != 0;
        let sourcing = has_sources && {
            let info = &self.info[node as usize];
            self.sources[info.src_start as usize..(info.src_start + info.src_len) as usize]
                .iter()
                .any(Source::live)
        };
        (true, stay || sourcing)
    }

    /// The ports with wanting queues, in order: serving a port changes the want masks only
    /// when it moves a wavelet, and they are read again then. The link ports share one copy
    /// of `serve`, the ramp has its own (not served when a shared ramp moved a wavelet
    /// already: `ramp_busy`). Whether a port moved a wavelet.
    #[inline(always)]
    fn serve_ports<const RARE: bool>(
        &mut self,
        r: &mut Router,
        node: u32,
        ramp_busy: bool,
    ) -> bool {
        let mut moved = false;
        let mut ports = r.ports;
        debug_assert_eq!(ports, r.want_ports());
        let mut links = ports & LINK_PORTS;
        while links != 0 {
            let o = links.trailing_zeros() as usize;
            links &= links - 1;
            if self.serve::<RARE>(r, node, o, u64::MAX) {
                moved = true;
                if RARE && self.switched {
                    self.rare(r, node, Self::control_served);
                }
                ports = r.ports;
                links = ports & LINK_PORTS & (u8::MAX << (o + 1));
            }
        }
        if !ramp_busy && ports & (1 << RAMP) != 0 && self.serve::<RARE>(r, node, RAMP, u64::MAX) {
            moved = true;
            if RARE && self.switched {
                self.rare(r, node, Self::control_served);
            }
        }
        moved
    }

    /// Call `f` for `node`, which reads and writes its router through the router array: the
    /// held record `r` is written back before and read again after.
    #[inline(always)]
    pub(crate) fn rare(&mut self, r: &mut Router, node: u32, f: fn(&mut Self, u32)) {
        self.routers[node as usize] = *r;
        f(self, node);
        *r = self.routers[node as usize];
    }

    /// Make the wavelets that have arrived at the queues of router `r` by now present.
    #[inline(always)]
    fn absorb<const RARE: bool>(&mut self, r: &mut Router) {
        let mut incoming = r.incoming;
        while incoming != 0 {
            let bit = incoming.trailing_zeros();
            incoming &= incoming - 1;
            let q = r.q_start + bit;
            let queue = &mut self.queues[q as usize];
            let was = queue.len;
            self.rings.absorb::<RARE>(queue, q, self.rel);
            if queue.fly == 0 {
                r.incoming &= !(1u64 << bit);
            }
            if was == 0 && queue.len > 0 {
                set_want(r, head_ports::<RARE>(queue, q, self.filters), 1u64 << bit);
            }
        }
    }

    /// Move one wavelet from the PE's sends into the router, round-robin over send slots
    /// (that is, over colors: the first after the one injected last, among those whose ramp
    /// queue has room); within a color, sends go in issue order. `r` is the router's record.
    #[inline(always)]
    fn inject<const RARE: bool>(&mut self, r: &mut Router, node: u32) -> bool {
        let (pe, flags, q_start) = (r.pe, r.flags, r.q_start);
        let p = &mut self.pes[pe as usize];
        let avail = p.sending & !p.full;
        if avail == 0 {
            if p.sending == 0 {
                r.flags &= !SENDING;
            }
            return false;
        }
        let k = next_bit(avail, p.last_slot);
        p.last_slot = k;
        let slot = (p.send_base + u32::from(k)) as usize;
        let s = &mut self.sends[slot];
        let (q, solo, out_channel, control, link) = (s.queue, s.solo, s.out, s.control, s.link);
        let data = s.data[s.pos as usize];
        s.pos += 1;
        if s.pos as usize == s.data.len() {
            let (buf, then) = p.finish_send(s, 1u64 << k);
            if p.sending == 0 {
                r.flags &= !SENDING;
            }
            if then != NONE {
                p.ready.push((self.t + 1, p.seq, then));
                p.seq += 1;
                self.schedule(node, self.t + 1);
            }
            self.tasks.spare.give(buf);
        }
        // The ramp queue is empty and the only one that ever forwards through its port: the
        // wavelet goes straight on (what pushing it and serving the port would do, without
        // the round trip through the queue). Not with edge sources or an express stream at
        // the router, which act between injection and the ports. The queue forwards through
        // `solo` alone, so it is empty exactly when its bit is not in that port's want mask
        // (its head leaves as soon as it has gone there): the queue record is not read.
        let bit = q - q_start;
        if usize::from(solo) < RAMP && (!RARE || flags & (SOURCES | EXPRESS) == 0) {
            let o = usize::from(solo);
            debug_assert_eq!(
                r.want[o] & (1u64 << bit) == 0,
                self.queues[q as usize].len == 0
            );
            if r.want[o] & (1u64 << bit) == 0
                && self.inject_solo::<RARE>(node, slot, link, out_channel, o, data)
            {
                r.rr[o] = ((bit + 1) % 64) as u8;
                return true;
            }
        }
        let queue = &mut self.queues[q as usize];
        self.rings.push_present::<RARE>(queue, q, data);
        if RARE && self.switched {
            self.switches.tag_tail(self.rings, queue, q, control);
        }
        if queue.len == 1 {
            set_want(r, head_ports::<RARE>(queue, q, self.filters), 1u64 << bit);
        }
        if u32::from(queue.len) >= self.rings.depth_of::<RARE>(queue) {
            self.pes[pe as usize].full |= 1u64 << k;
        }
        true
    }

    /// The injection from send slot `slot` forwards `data` straight through its solo port
    /// `o` (channel `ch`, `link` when it leads into this partition), if it can; a wavelet
    /// through `link` is counted in the slot, whose line the injection has read anyway.
    #[inline(always)]
    fn inject_solo<const RARE: bool>(
        &mut self,
        node: u32,
        slot: usize,
        link: LocalLink,
        ch: u32,
        o: usize,
        data: u32,
    ) -> bool {
        if link.queue == NONE {
            return self.emit::<RARE>(node, ch, o, data, false);
        }
        if !self.forward::<RARE>(node, link, o, data, false) {
            return false;
        }
        let s = &mut self.sends[slot];
        s.hops += 1;
        if s.hops == u32::MAX {
            self.outch[ch as usize].sent += u64::from(s.hops);
            s.hops = 0;
        }
        true
    }

    fn inject_sources(&mut self, r: &mut Router, node: u32) -> bool {
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
            let queue = &self.queues[q as usize];
            if u32::from(queue.len) >= self.rings.depth_of::<true>(queue) {
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
            let queue = &mut self.queues[q as usize];
            self.rings.push_present::<true>(queue, q, data);
            if self.switched {
                self.switches.tag_tail(self.rings, queue, q, false);
            }
            if queue.len == 1 {
                set_want(r, head_tx(queue, q, self.filters), 1u64 << (q - r.q_start));
            }
            moved = true;
            let src = &mut self.sources[s as usize];
            if self.streams.on && src.live() && src.pacer.ready_at() == t + 1 {
                // It releases again in the next cycle, while this router stays active.
                if src.xskip > 0 {
                    src.xskip -= 1;
                } else {
                    self.streams.next_sources.push(s);
                }
            }
        }
        moved
    }

    /// The last wavelet of a weight stream of `group` entered in this cycle: with one
    /// partition, request the next phase if this completed the current one.
    #[cold]
    pub(crate) fn weight_stream_done(&mut self, group: u32) {
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

    /// Output port `o` of `node` moves at most one wavelet: the first queue after the one
    /// served last (in queue order, wrapping around) among those in `allow` (a mask of local
    /// queues) whose head wants `o` and can go.
    #[inline(always)]
    pub(crate) fn serve<const RARE: bool>(
        &mut self,
        r: &mut Router,
        node: u32,
        o: usize,
        allow: u64,
    ) -> bool {
        let mut want = r.want[o] & allow;
        let q_start = r.q_start;
        let rr = u32::from(r.rr[o]);
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
            let (slot, ch) = (queue.slot, queue.out[o % 4]);
            let data = self.rings.head::<RARE>(queue, q);
            // A control wavelet goes on with its commands shifted and is never delivered.
            let control = (RARE && self.switched) && self.switches.head_is_control(queue, q);
            if o < RAMP {
                let data = if control { forwarded(data) } else { data };
                if (RARE && self.switched) && !self.switch_pace_allows(node, q, o) {
                    continue;
                }
                if !self.emit::<RARE>(node, ch, o, data, control) {
                    continue;
                }
                if RARE && self.switched {
                    self.switch_paced(node, q, o);
                }
            } else if !control && !self.deliver(r.pe, node, slot, data) {
                continue;
            }
            self.sent_head::<RARE>(r, q, bit, o);
            return true;
        }
    }

    /// Link port `o` of `node` forwards `data` (a control wavelet or not) through output
    /// channel `ch` in this cycle, if it can: to a neighbour (holding a credit) or off the
    /// fabric (its pacer allowing; if it does not, the router wakes when it will).
    #[inline(always)]
    fn emit<const RARE: bool>(
        &mut self,
        node: u32,
        ch: u32,
        o: usize,
        data: u32,
        control: bool,
    ) -> bool {
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
        } else if out.dest_part != self.id {
            if out.credits == 0 {
                return false;
            }
            out.credits -= 1;
            out.sent += 1;
            self.outbox[out.dest_part as usize].push(Msg {
                time: t + u64::from(out.latency),
                index: out.dest_queue,
                data,
                is_credit: false,
            });
        } else {
            let link = LocalLink {
                queue: out.dest_queue,
                node: out.dest_node,
                latency: out.latency,
            };
            if !self.forward::<RARE>(node, link, o, data, control) {
                return false;
            }
            self.outch[ch as usize].sent += 1;
            return true;
        }
        if RARE && let Some(trace) = &mut self.trace {
            trace.link(node, o as u8, t);
        }
        true
    }

    /// Link port `o` of `node` forwards `data` (a control wavelet or not) over `link` into a
    /// queue of this partition in this cycle, if it holds a credit (else it waits for one:
    /// see `queue.rs`). The caller counts the wavelet.
    #[inline(always)]
    fn forward<const RARE: bool>(
        &mut self,
        node: u32,
        link: LocalLink,
        o: usize,
        data: u32,
        control: bool,
    ) -> bool {
        let (dq, dn) = (link.queue, link.node);
        // A link joins two routers: the step's held record is not the one written here.
        debug_assert_ne!(dn, node);
        let queue = &mut self.queues[dq as usize];
        let arrive = self.t + u64::from(link.latency);
        let sent = self
            .rings
            .send::<RARE>(queue, dq, data, self.rel, self.rel + link.latency);
        if let Err(due) = sent {
            match due {
                Some(due) => self.wake_at(node, self.epoch + u64::from(due)),
                None => queue.bits |= UP_WAITS,
            }
            return false;
        }
        if RARE && self.switched {
            self.switches.tag_tail(self.rings, queue, dq, control);
        }
        let down = &mut self.routers[dn as usize];
        down.incoming |= 1u64 << (dq - down.q_start);
        if down.flags & EXPRESS != 0 {
            self.express_arrival(dn, dq, arrive);
        }
        self.wake_at(dn, arrive);
        if RARE && let Some(trace) = &mut self.trace {
            trace.link(node, o as u8, self.t);
        }
        true
    }

    /// The head of local queue `q` (bit `bit` of its router) went to port `o`; it leaves the
    /// queue once every port of the route has taken it, and its slot's credit goes upstream.
    #[inline(always)]
    fn sent_head<const RARE: bool>(&mut self, r: &mut Router, q: u32, bit: u32, o: usize) {
        let queue = &mut self.queues[q as usize];
        r.rr[o] = ((bit + 1) % 64) as u8;
        r.want[o] &= !(1u64 << bit);
        if r.want[o] == 0 {
            r.ports &= !(1 << o);
        }
        queue.sent |= 1 << o;
        // Every port the head goes to now has taken it (a switch may have moved in between).
        if head_ports::<RARE>(queue, q, self.filters) & !queue.sent != 0 {
            return;
        }
        queue.sent = 0;
        let latency = self.rings.up_latency::<RARE>(queue);
        let due = self.t + u64::from(latency);
        if (RARE && self.switched) && self.switches.head_is_control(queue, q) {
            // Its command applies once the port's serve is over (`control_served`).
            self.switches.left = Some((q, self.rings.head::<RARE>(queue, q)));
        }
        self.rings.pop::<RARE>(queue, q, self.rel + latency);
        if usize::from(queue.rx()) == RAMP {
            self.pes[r.pe as usize].full &= !(1u64 << queue.slot);
        }
        if RARE && queue.bits & FILTERED != 0 {
            advance_filter(self.filters, q);
        }
        if queue.len > 0 {
            set_want(r, head_ports::<RARE>(queue, q, self.filters), 1u64 << bit);
        }
        let up = queue.up;
        if up == NONE {
            return;
        }
        if up & REMOTE_UP != 0 {
            let to = self.remote_ups[(up & !REMOTE_UP) as usize];
            self.outbox[to.part as usize].push(Msg {
                time: due,
                index: to.channel,
                data: 0,
                is_credit: true,
            });
        } else if queue.bits & UP_WAITS != 0 {
            queue.bits &= !UP_WAITS;
            self.wake_at(up, due);
        }
    }

    /// Write a wavelet into receive slot `slot` of PE `pe` (at `node`).
    #[inline(always)]
    fn deliver(&mut self, pe: u32, node: u32, slot: u8, data: u32) -> bool {
        let t = self.t;
        let p = &mut self.pes[pe as usize];
        let s = &mut self.recvs[(p.recv_base + u32::from(slot)) as usize];
        let color = s.color;
        match crate::pe::deliver(p, s, self.program, data, t) {
            Delivery::NoReceive => return false,
            Delivery::Written => {}
            Delivery::Completed => self.schedule(node, t + 1),
        }
        self.stats.color_delivered[color as usize] += 1;
        true
    }
}

/// The ports the head wavelet of local queue `q` goes to (see [`head_tx`]): its route's
/// when the step needs no rare cases (`RARE` false: the program has no ramp filter or switch,
/// so no queue is [`FILTERED`]).
#[inline(always)]
fn head_ports<const RARE: bool>(queue: &Queue, q: u32, filters: &[Filter]) -> u8 {
    debug_assert!(RARE || queue.bits & FILTERED == 0);
    if RARE {
        head_tx(queue, q, filters)
    } else {
        queue.tx
    }
}

/// The head of filtered queue `q` left: the next one is one further in the filter's period.
#[cold]
fn advance_filter(filters: &mut [Filter], q: u32) {
    if let Ok(f) = filters.binary_search_by_key(&q, |f| f.queue)
        && filters[f].switch.is_none()
    {
        let f = &mut filters[f];
        f.count = (f.count + 1) % f.period;
    }
}

/// Mark queue `bit` in the want masks of the ports in `tx` (none: a switch holds it back).
#[inline(always)]
pub(crate) fn set_want(r: &mut Router, tx: u8, bit: u64) {
    r.ports |= tx;
    if tx == 0 {
        return;
    }
    if tx & tx.wrapping_sub(1) == 0 {
        // One port: the common case (a port below `OUTPUTS`; `min` rather than `%` spares
        // the bounds check for a compare).
        r.want[(tx.trailing_zeros() as usize).min(OUTPUTS - 1)] |= bit;
    } else {
        for (o, w) in r.want.iter_mut().enumerate() {
            if tx & (1 << o) != 0 {
                *w |= bit;
            }
        }
    }
}

/// The bit of `avail` (not 0) that comes first after bit `last` (round-robin; `last` is a
/// bit, or `NONE8` before the first, which counts as 63: none above it). Without branches:
/// the two shifts take every bit above `last` (none above 63).
#[inline(always)]
pub(crate) fn next_bit(avail: u64, last: u8) -> u8 {
    debug_assert!(last < 64 || last == crate::fabric::NONE8);
    let above = avail & ((u64::MAX << (last & 63)) << 1);
    if above != 0 { above } else { avail }.trailing_zeros() as u8
}

#[cfg(test)]
mod tests {
    use super::next_bit;
    use crate::fabric::NONE8;

    /// Round-robin by walking the bits one by one: the first set bit after `last`, wrapping
    /// around (from bit 0 when there is no last one).
    fn walked(avail: u64, last: u8) -> u8 {
        let start = if last == NONE8 {
            0
        } else {
            u32::from(last) + 1
        };
        (0..64)
            .map(|k| (start + k) % 64)
            .find(|&b| avail & (1u64 << b) != 0)
            .map_or(NONE8, |b| b as u8)
    }

    #[test]
    fn next_bit_takes_the_first_bit_after_the_last_one_wrapping_around() {
        let masks = [
            1,
            0b1011,
            1 << 63,
            (1 << 63) | 1,
            u64::MAX,
            0x00f0_0000_0000_0f00,
        ];
        for avail in masks {
            for last in (0..64).chain([NONE8]) {
                assert_eq!(
                    next_bit(avail, last),
                    walked(avail, last),
                    "{avail:#x} after {last}"
                );
            }
        }
    }
}

//! Starting express streams (see `express.rs`) and keeping them exact while they live: the
//! chain a feed's wavelets take and the checks that it is free, the wavelets already on it
//! (adopted only when each is exactly where the closed form puts it), the receivers' posted
//! receives, and the hooks that turn a stream back into wavelets when something competes.

use crate::express::{END, Express, FED, Feed, Hop, Period, RECV_DONE, Receiver, STARVE, Schedule};
use crate::fabric::{EXPRESS, FILTERED, LINK_PORTS, NONE, NONE8, RAMP, SENDING, SOURCES, UP_WAITS};
use crate::partition::Partition;
use crate::pe::SendState;
use crate::queue::Rings;

/// Streams of fewer wavelet-hops than this are not worth one.
const MIN_WAVELET_HOPS: u64 = 2;
/// The most releases an edge source lets pass between tries that fail (2^10).
const MAX_BACKOFF: u8 = 10;
/// What a receive's completion in closed form costs, in hops simulated one by one.
const EVENT_HOPS: u64 = 4;

/// A feed about to put wavelet `pos` (of `len`) into queue `q0` at router `node0` this cycle,
/// on the schedule `sched` (in feed indices).
struct Plan {
    q0: u32,
    node0: u32,
    pos: u64,
    len: u64,
    sched: Schedule,
    /// The feed is a PE's send (its router's other sends compete).
    send: bool,
}

/// A chain found by [`Partition::walk`]: its routers (windows in the period) and period
/// (0: no filters).
struct Chain {
    hops: Vec<Hop>,
    period: u64,
}

/// A window's open end while the period is not known yet.
const OPEN: u64 = u64::MAX;

impl Partition<'_> {
    /// After the PE wakes of cycle `t`: start the streams that are exact.
    pub(crate) fn express_start(&mut self, t: u64) {
        let sends = std::mem::take(&mut self.streams.sends);
        for &pe in &sends {
            self.start_send(pe, t);
        }
        self.streams.sends = sends;
        self.streams.sends.clear();
        let sources = std::mem::take(&mut self.streams.sources);
        for &s in &sources {
            self.start_source(s, t);
        }
        self.streams.sources = sources;
        self.streams.sources.clear();
    }

    /// The send slot of PE `pe`'s only send, if it has one send and that has not begun.
    pub(crate) fn lone_send(&self, pe: u32) -> Option<usize> {
        let p = &self.fab.pes[pe as usize];
        // One send (one bit); the sends waiting behind it, if any, on its color (they join
        // the stream back to back).
        if p.sending == 0 || p.sending & (p.sending - 1) != 0 {
            return None;
        }
        let slot = p.send_base as usize + p.sending.trailing_zeros() as usize;
        let s = &self.fab.sends[slot];
        if p.n_waiting != 0 && p.waiting_sends().iter().any(|w| w.color != s.color) {
            return None;
        }
        // A lone wavelet would need two hops to be worth a stream: not worth the look.
        (s.pos == 0 && s.data.len() >= 2).then_some(slot)
    }

    fn start_send(&mut self, pe: u32, t: u64) {
        let Some(slot) = self.lone_send(pe) else {
            return;
        };
        let p = &self.fab.pes[pe as usize];
        let s = &self.fab.sends[slot];
        if p.express != NONE {
            return;
        }
        let plan = Plan {
            q0: s.queue,
            node0: p.node,
            pos: 0,
            len: s.data.len() as u64,
            sched: Schedule::Steady { t0: t },
            send: true,
        };
        let Some((chain, first)) = self.plan_chain(&plan, t) else {
            return;
        };
        let s = &mut self.fab.sends[slot];
        let send = SendState {
            color: s.color,
            data: std::mem::take(&mut s.data),
            then: (s.then != NONE).then_some(s.then),
            seq: s.seq,
            control: s.control,
        };
        let p = &mut self.fab.pes[pe as usize];
        p.sending = 0;
        self.fab.routers[p.node as usize].flags &= !SENDING;
        let feed = Feed::Send {
            pe,
            slot: slot as u32,
            send,
            part: 0,
        };
        let x = self.launch(feed, &plan, chain, first, t);
        let p = &mut self.fab.pes[pe as usize];
        p.express = x;
        p.xslot = (slot as u32 - p.send_base) as u8;
    }

    /// Edge source `s` releases a wavelet in this cycle: try a stream from it.
    fn start_source(&mut self, s: u32, t: u64) {
        let src = &self.fab.sources[s as usize];
        let queue = &self.fab.queues[src.queue as usize];
        if !src.live() || src.pacer.ready_at() != t || queue.len != 0 {
            return;
        }
        let (next, num, den) = src.pacer.parts();
        let pos = src.pos as u64;
        let plan = Plan {
            q0: src.queue,
            node0: queue.node,
            pos,
            len: src.data.len() as u64,
            sched: Schedule::Paced {
                next0: next - u128::from(pos) * u128::from(num),
                num,
                den,
            },
            send: false,
        };
        let Some((chain, first)) = self.plan_chain(&plan, t) else {
            let src = &mut self.fab.sources[s as usize];
            src.xfail = (src.xfail + 1).min(MAX_BACKOFF);
            src.xskip = 1 << src.xfail;
            return;
        };
        let src = &mut self.fab.sources[s as usize];
        src.xfail = 0;
        src.express = true;
        // Its router steps in this cycle (the stream's first wavelet enters now).
        self.activate(plan.node0);
        self.launch(Feed::Edge { source: s }, &plan, chain, first, t);
    }

    /// Whether `plan`'s chain can run in closed form from cycle `t`: the chain, and the feed
    /// index of the oldest wavelet on it (the stream's index 0).
    fn plan_chain(&self, plan: &Plan, t: u64) -> Option<(Chain, u64)> {
        if u64::from(self.fab.rings.depth) < 2 * self.setup.latency || plan.pos >= plan.len {
            return None;
        }
        // Router switches (switches.rs): never in closed form.
        if (self.fab.switches).blocks_express(self.fab.queues[plan.q0 as usize].color()) {
            return None;
        }
        let chain = self.walk(plan.q0, plan.node0, plan.send)?;
        let h = chain.hops.len() as u64 - 1;
        if h == 0 || (plan.len - plan.pos) * h < MIN_WAVELET_HOPS {
            return None;
        }
        // Feed wavelets that entered before t − D_h are past every router.
        let first = self.out_of(plan, chain.hops[h as usize].delay, t);
        let phase = self.phase(&chain, plan, t)?;
        let per = Period {
            p: chain.period,
            phase,
        };
        if !self.adoptable(&chain, plan, per, first, t) || !self.worth(&chain, plan, per) {
            return None;
        }
        Some((chain, first))
    }

    /// Whether every receiver on `chain` has a receive posted, and the stream in closed form
    /// would cost fewer events (a receive's completion is about [`EVENT_HOPS`] hops' work)
    /// than its hops: receivers that take a stream a few wavelets at a time are cheaper hop by
    /// hop (judged by the receives posted now).
    fn worth(&self, chain: &Chain, plan: &Plan, per: Period) -> bool {
        let color = self.fab.queues[plan.q0 as usize].color();
        let n = plan.len - plan.pos;
        let hops = n * (chain.hops.len() as u64 - 1);
        let mut events = 0u64;
        for h in chain.hops.iter().filter(|h| h.ramp) {
            let pe = &self.fab.pes[self.fab.routers[h.node as usize].pe as usize];
            if pe.open_recvs & (1u64 << color) == 0 {
                return false;
            }
            let slot = &self.fab.recvs[pe.recv_slot(&self.fab.recvs, color)];
            events += per.count(h.keep, n).div_ceil(u64::from(slot.n.max(1)));
        }
        events * EVENT_HOPS <= hops
    }

    /// The chain from queue `q0` at `node0`: every router forwards the color to at most one
    /// link (and may deliver to its PE), nothing else holds or feeds a wavelet for a port it
    /// uses, no wavelet waits in its queues, and its filters fit one period.
    fn walk(&self, q0: u32, node0: u32, send: bool) -> Option<Chain> {
        let fab = &self.fab;
        let (mut q, mut node) = (q0, node0);
        let mut hops: Vec<Hop> = Vec::new();
        // The period, and the offset from which the period's wavelets reach this router.
        let (mut period, mut lo) = (0u64, 0u64);
        let mut delay = 0u64;
        loop {
            if hops.len() > fab.routers.len() || hops.iter().any(|h| h.node == node) {
                return None;
            }
            let queue = &fab.queues[q as usize];
            if queue.sent != 0 || queue.bits & UP_WAITS != 0 || queue.len != 0 {
                return None;
            }
            // Its queue must hold its credits: at least twice the latency of the link into
            // it (always so behind a boundary, see `Target::boundary_queue_depth`).
            if !hops.is_empty()
                && fab.rings.depth_of::<true>(queue) < 2 * fab.rings.up_latency::<true>(queue)
            {
                return None;
            }
            let links = queue.tx & LINK_PORTS;
            let ramp = queue.tx & (1 << RAMP) != 0;
            if links.count_ones() > 1 {
                return None;
            }
            let (keep, next_lo, filter0) = if queue.bits & FILTERED != 0 {
                let f = fab
                    .filters
                    .binary_search_by_key(&q, |f| f.queue)
                    .ok()
                    .map(|i| fab.filters[i])?;
                if period == 0 {
                    period = u64::from(f.period);
                } else if u64::from(f.period) != period - lo {
                    return None;
                }
                let hi = lo + u64::from(f.keep);
                ((lo, hi), hi, Some(f.count))
            } else if ramp {
                ((lo, OPEN), lo, None)
            } else {
                ((0, 0), lo, None)
            };
            let ports = links | if ramp { 1 << RAMP } else { 0 };
            // With a shared ramp the feeding PE's ramp is the stream's too: no delivery there.
            let feeds_ramp = hops.is_empty() && send && self.setup.ramp_shared;
            let need = ports | if feeds_ramp { 1 << RAMP } else { 0 };
            if !self.ports_free(node, need, q, hops.is_empty() && send) {
                return None;
            }
            let link = if links == 0 {
                NONE8
            } else {
                links.trailing_zeros() as u8
            };
            let out_channel = if links == 0 {
                NONE
            } else {
                queue.out[usize::from(link)]
            };
            hops.push(Hop {
                node,
                queue: q,
                delay,
                link,
                out_channel,
                ramp,
                reach: (lo, OPEN),
                keep,
                pass: if links == 0 { (0, 0) } else { (next_lo, OPEN) },
                filter0,
                receiver: NONE,
                out0: 0,
                left0: 0,
                kept0: 0,
                passed0: 0,
                credits0: Vec::new(),
            });
            if links == 0 {
                break;
            }
            let out = &fab.outch[out_channel as usize];
            if out.sink != NONE || out.dest_part != self.setup.id {
                return None;
            }
            lo = next_lo;
            delay += u64::from(out.latency);
            q = out.dest_queue;
            node = out.dest_node;
        }
        // With a period, every window ends at it (without, they are all offsets).
        let end = if period > 0 { period } else { u64::MAX };
        for hop in &mut hops {
            for w in [&mut hop.reach, &mut hop.keep, &mut hop.pass] {
                if w.1 == OPEN {
                    *w = (w.0.min(end), end);
                }
            }
        }
        Some(Chain { hops, period })
    }

    /// The phase (offset of feed wavelet 0 in the period) if every filter on `chain` is in
    /// phase with the stream at cycle `t`: the next wavelet to reach each filtered router is
    /// the one its position says.
    fn phase(&self, chain: &Chain, plan: &Plan, t: u64) -> Option<u64> {
        let p = chain.period;
        if p == 0 {
            return Some(0);
        }
        let mut phase = None;
        for hop in &chain.hops {
            let Some(count) = hop.filter0 else {
                continue;
            };
            // Feed wavelets out of router k before t.
            let u = self.out_of(plan, hop.delay, t);
            let Some(ph) = phase else {
                // The first filter: everything reaches it.
                phase = Some((u64::from(count) + p - u % p) % p);
                continue;
            };
            let per = Period { p, phase: ph };
            let next = per.nth(hop.reach, per.count(hop.reach, u));
            if u64::from(count) != (ph + next) % p - hop.reach.0 {
                return None;
            }
        }
        phase
    }

    /// Feed wavelets (below the plan's position) that left the router `delay` cycles down
    /// the chain before cycle `t`.
    fn out_of(&self, plan: &Plan, delay: u64, t: u64) -> u64 {
        t.checked_sub(1 + delay)
            .map_or(0, |c| plan.sched.count_le(c, plan.pos))
    }

    /// Whether the feed's wavelets from `first` on that are on the chain at `t` are exactly
    /// where the closed form puts them: in flight toward the router they reach next, arriving
    /// at `at(i) + k·L` (those arriving at `t` not absorbed yet), in order, nothing else.
    fn adoptable(&self, chain: &Chain, plan: &Plan, per: Period, first: u64, t: u64) -> bool {
        let fab = &self.fab;
        for (k, hop) in chain.hops.iter().enumerate().skip(1) {
            let queue = &fab.queues[hop.queue as usize];
            let lo = self.out_of(plan, hop.delay, t).max(first);
            let hi = self.out_of(plan, chain.hops[k - 1].delay, t);
            let mut j = 0u32;
            for i in (lo..hi).filter(|&i| per.contains(hop.reach, i)) {
                if j >= u32::from(queue.fly) {
                    return false;
                }
                let slot = fab.rings.pos::<true>(queue, j);
                let arrive = plan.sched.at(i) + hop.delay;
                let data = self.feed_word(plan, i);
                if fab.rings.time::<true>(queue, hop.queue, slot) != self.rel(arrive)
                    || fab.rings.data::<true>(queue, hop.queue, slot) != data
                {
                    return false;
                }
                j += 1;
            }
            if j != u32::from(queue.fly) {
                return false;
            }
        }
        true
    }

    /// Feed wavelet `i` of `plan` (a send's data, or an edge source's).
    fn feed_word(&self, plan: &Plan, i: u64) -> u32 {
        let q0 = &self.fab.queues[plan.q0 as usize];
        if plan.send {
            let p = &self.fab.pes[self.fab.routers[plan.node0 as usize].pe as usize];
            let slot = p.send_slot(&self.fab.sends, q0.color());
            self.fab.sends[slot].data[i as usize]
        } else {
            let r = &self.fab.info[plan.node0 as usize];
            let src = (r.src_start..r.src_start + r.src_len)
                .find(|&s| self.fab.sources[s as usize].queue == plan.q0);
            src.map_or(0, |s| self.fab.sources[s as usize].data[i as usize])
        }
    }

    /// Whether a router may carry a stream out through `ports`: no other stream is there, no
    /// other queue holds or expects a wavelet for those ports, and no edge source or PE send
    /// there feeds one (`sender`: the PE's sends are the stream's feed).
    fn ports_free(&self, node: u32, ports: u8, own: u32, sender: bool) -> bool {
        let fab = &self.fab;
        let r = &fab.routers[node as usize];
        let info = &fab.info[node as usize];
        if info.express != NONE {
            return false;
        }
        let queues = r.q_start..r.q_start + u32::from(r.q_len);
        if queues.clone().any(|q| {
            let queue = &fab.queues[q as usize];
            q != own && queue.len + queue.fly > 0 && queue.tx & ports != 0
        }) {
            return false;
        }
        if r.flags & SOURCES != 0 {
            let srcs = info.src_start..info.src_start + info.src_len;
            if srcs.into_iter().any(|s| {
                let src = &fab.sources[s as usize];
                src.queue != own
                    && src.pos < src.data.len()
                    && fab.queues[src.queue as usize].tx & ports != 0
            }) {
                return false;
            }
        }
        sender || r.pe == NONE || !self.sends_use(r.pe, ports)
    }

    /// Whether PE `pe`'s sends not finished could use one of `ports` at its router. With a
    /// shared ramp every send competes with a delivery through the ramp (`ramp.rs`).
    pub(crate) fn sends_use(&self, pe: u32, ports: u8) -> bool {
        let fab = &self.fab;
        let p = &fab.pes[pe as usize];
        if self.setup.ramp_shared
            && ports & (1 << RAMP) != 0
            && (p.sending != 0 || p.n_waiting != 0)
        {
            return true;
        }
        let slots = p.send_slots(&fab.sends);
        let active = slots
            .iter()
            .enumerate()
            .filter(|(k, _)| p.sending & (1u64 << k) != 0)
            .map(|(_, s)| s.queue);
        let waiting = p
            .waiting_sends()
            .iter()
            .map(|w| fab.sends[p.send_slot(&fab.sends, w.color)].queue);
        active
            .chain(waiting)
            .any(|q| fab.queues[q as usize].tx & ports != 0)
    }
}

impl Partition<'_> {
    /// Start the stream of `feed` along `chain`, adopting the feed's wavelets from `first`
    /// on; its id.
    fn launch(&mut self, feed: Feed, plan: &Plan, chain: Chain, first: u64, t: u64) -> u32 {
        let n = plan.len - first;
        let sched = match plan.sched {
            Schedule::Steady { t0 } => Schedule::Steady { t0: t0 + first },
            Schedule::Paced { next0, num, den } => Schedule::Paced {
                next0: next0 + u128::from(first) * u128::from(num),
                num,
                den,
            },
        };
        let phase = self.phase(&chain, plan, t).unwrap_or(0);
        let period = Period {
            p: chain.period,
            phase: if chain.period > 0 {
                (phase + first) % chain.period
            } else {
                0
            },
        };
        let id = self
            .streams
            .list
            .iter()
            .position(|s| !s.alive)
            .unwrap_or(self.streams.list.len()) as u32;
        let generation = self
            .streams
            .list
            .get(id as usize)
            .map_or(0, |s| s.generation.wrapping_add(1));
        let mut x = Express {
            alive: true,
            generation,
            feed,
            first,
            n,
            sched,
            period,
            hops: chain.hops,
            receivers: Vec::new(),
            end: 0,
            fed: false,
        };
        for k in 0..x.hops.len() {
            self.take_hop(&mut x, k, id, t);
        }
        x.end = (0..x.hops.len())
            .filter_map(|k| {
                let hop = &x.hops[k];
                let c = x.period.count(hop.reach, n);
                (c > 0).then(|| x.leaves(x.period.nth(hop.reach, c - 1), k))
            })
            .max()
            .unwrap_or(t);
        let last_in = x.sched.at(n - 1);
        let end = x.end;
        let receivers = x.receivers.len();
        let queues = &self.fab.queues;
        let crossing = x.hops[1..]
            .iter()
            .any(|h| Rings::crosses(&queues[h.queue as usize]));
        if id as usize == self.streams.list.len() {
            self.streams.list.push(x);
        } else {
            self.streams.list[id as usize] = x;
        }
        self.out.stats.express_started += 1;
        if crossing {
            self.out.stats.express_crossing += 1;
        }
        if last_in > t {
            self.streams.push(last_in, id, FED, 0);
        }
        self.streams.push(end + 1, id, END, 0);
        for r in 0..receivers {
            self.cover(id, r as u32, None);
        }
        id
    }

    /// Stream `x` takes router `k` of its chain at cycle `t`: the port reservation, the
    /// counters at the start, the adopted wavelets out of the queue, the receiver.
    fn take_hop(&mut self, x: &mut Express, k: usize, id: u32, t: u64) {
        let moved = x.moved(k, t);
        let epoch = self.clock.epoch;
        let fab = &mut self.fab;
        let hop = &mut x.hops[k];
        hop.out0 = moved;
        hop.left0 = x.period.count(hop.reach, moved);
        hop.kept0 = x.period.count(hop.keep, moved);
        hop.passed0 = x.period.count(hop.pass, moved);
        let queue = &mut fab.queues[hop.queue as usize];
        if k > 0 {
            let rings = &fab.rings;
            let used = u32::from(queue.len) + u32::from(queue.fly);
            hop.credits0 = (used..rings.depth_of::<true>(queue))
                .map(|j| {
                    let slot = rings.pos::<true>(queue, j);
                    epoch + u64::from(rings.time::<true>(queue, hop.queue, slot))
                })
                .filter(|&due| due > t)
                .collect();
            queue.fly = 0;
        }
        let r = &mut fab.routers[hop.node as usize];
        r.incoming &= !(1u64 << (hop.queue - r.q_start));
        r.flags |= EXPRESS;
        let info = &mut fab.info[hop.node as usize];
        info.express = id;
        info.xhop = k as u32;
        info.reserved = if hop.link == NONE8 { 0 } else { 1 << hop.link }
            | if hop.ramp { 1 << RAMP } else { 0 };
        if k == 0 && self.setup.ramp_shared && matches!(x.feed, Feed::Send { .. }) {
            // The feeding PE's ramp (see `walk`): a delivery arriving there turns it back.
            info.reserved |= 1 << RAMP;
        }
        if hop.ramp {
            let pe = r.pe;
            let slot = fab.pes[pe as usize].recv_slot(&fab.recvs, queue.color());
            fab.recvs[slot].express = id;
            fab.recvs[slot].xwords = 0;
            let flushed = x.period.count(hop.keep, moved);
            hop.receiver = x.receivers.len() as u32;
            x.receivers.push(Receiver {
                done_at: u64::MAX,
                hop: k as u32,
                pe,
                slot: slot as u32,
                window: hop.keep,
                flushed,
                covered: flushed,
                total: x.period.count(hop.keep, x.n),
            });
        }
    }

    /// Receiver `r` of stream `x`: count the wavelets its PE's posted receives take — all of
    /// them (`added` = None: the stream starts, or grew) or `added` more (the PE posted) —,
    /// schedule the check at its first wavelet without a receive and, if none is pending, its
    /// next receive's completion.
    pub(crate) fn cover(&mut self, x: u32, r: u32, added: Option<u64>) {
        let s = &self.streams.list[x as usize];
        let rc = &s.receivers[r as usize];
        let slot = &self.fab.recvs[rc.slot as usize];
        let before = rc.covered;
        let covered = match added {
            Some(n) => before + n,
            None => {
                let pe = &self.fab.pes[rc.pe as usize];
                rc.flushed
                    + pe.recvs_on(&self.fab.recvs, slot.color)
                        .map(u64::from)
                        .sum::<u64>()
            }
        }
        .min(rc.total);
        let starve = (covered < rc.total && (added.is_none() || covered != before))
            .then(|| s.delivery(r, covered));
        let done = (rc.done_at == u64::MAX)
            .then(|| s.completion(r, slot, covered))
            .flatten();
        let node = s.hops[rc.hop as usize].node;
        let rc = &mut self.streams.list[x as usize].receivers[r as usize];
        rc.covered = covered;
        if let Some(d) = done {
            rc.done_at = d;
            if d > self.clock.now {
                self.streams.push(d, x, RECV_DONE, r);
            } else {
                // Completing in this cycle: the receiver's router steps in its pass.
                self.activate(node);
            }
        }
        if let Some(d) = starve {
            self.streams.push(d, x, STARVE, r);
        }
    }

    /// PE `pe` posted receives on colors express streams feed: count them in.
    pub(crate) fn express_posted(&mut self, pe: u32) {
        let mut colors = std::mem::take(&mut self.fab.pes[pe as usize].xposted);
        while colors != 0 {
            let color = colors.trailing_zeros() as u8;
            colors &= colors - 1;
            let p = &self.fab.pes[pe as usize];
            let x = self.fab.recvs[p.recv_slot(&self.fab.recvs, color)].express;
            let Some(s) = self.streams.list.get(x as usize).filter(|s| s.alive) else {
                continue;
            };
            if let Some(r) = s.receivers.iter().position(|r| r.pe == pe) {
                let slot = s.receivers[r].slot as usize;
                let added = std::mem::take(&mut self.fab.recvs[slot].xwords);
                self.cover(x, r as u32, Some(u64::from(added)));
            }
        }
    }

    /// After PE `pe` woke at cycle `t`: turn back a stream its sends would compete with; if it
    /// just began a send, consider it for a stream once every PE of the cycle has woken.
    pub(crate) fn express_after_wake(&mut self, pe: u32, t: u64) {
        let node = self.fab.pes[pe as usize].node;
        if self.fab.routers[node as usize].flags & EXPRESS != 0 {
            let x = self.fab.info[node as usize].express;
            if self.competes(x, pe) {
                self.hot(t).materialize(x);
            }
        }
        if self.streams.on && self.lone_send(pe).is_some() {
            self.streams.sends.push(pe);
        }
    }

    /// Whether the sends of `pe` compete with stream `x` at the PE's router: it feeds the
    /// stream, or they could use a port the stream reserves there.
    fn competes(&self, x: u32, pe: u32) -> bool {
        let p = &self.fab.pes[pe as usize];
        if p.sending == 0 {
            return false;
        }
        let s = &self.streams.list[x as usize];
        if let Feed::Send { pe: a, send, .. } = &s.feed
            && *a == pe
        {
            // Sends on the stream's color wait behind it (and join it back to back); any other
            // shares the ramp.
            return p.sending != 0
                || (p.n_waiting != 0 && p.waiting_sends().iter().any(|w| w.color != send.color));
        }
        let reserved = self.fab.info[p.node as usize].reserved;
        self.sends_use(pe, reserved)
    }

    /// Before a task of PE `pe` runs at cycle `t`: write what a stream has delivered to it.
    pub(crate) fn express_before_task(&mut self, pe: u32, t: u64) {
        let node = self.fab.pes[pe as usize].node;
        // The router's flag says whether a stream reserves a port there (set and cleared with
        // `RouterInfo::express`): the router's line is in cache, the info's may not be.
        let reserved = self.fab.routers[node as usize].flags & EXPRESS != 0;
        debug_assert_eq!(reserved, self.fab.info[node as usize].express != NONE);
        if !reserved {
            return;
        }
        let x = self.fab.info[node as usize].express;
        let s = &self.streams.list[x as usize];
        if let Some(r) = s.receivers.iter().position(|r| r.pe == pe) {
            self.hot(t).flush(x, r as u32, t.saturating_sub(1));
        }
    }

    /// Stream events due at cycle `t`, before the PEs wake: the routers that must step for a
    /// feed's end or a receive's completion, and streams that turn back into wavelets.
    pub(crate) fn express_events(&mut self, t: u64) {
        let mut due = Vec::new();
        self.streams.events.take(t, &mut due);
        for (when, x, generation, kind, r) in due {
            let s = &self.streams.list[x as usize];
            if !s.alive || s.generation != generation {
                continue;
            }
            match kind {
                FED => {
                    let node = s.hops[0].node;
                    self.activate(node);
                }
                END if when != s.end + 1 => {}
                RECV_DONE => {
                    let node = s.hops[s.receivers[r as usize].hop as usize].node;
                    self.activate(node);
                }
                _ => self.hot(t).materialize(x),
            }
        }
    }

    /// Stream events due at cycle `t`, after the PEs woke: a receiver whose first wavelet
    /// without a posted receive arrives now turns its stream back into wavelets.
    pub(crate) fn express_late(&mut self, t: u64) {
        let mut due = Vec::new();
        self.streams.late.take(t, &mut due);
        for (_, x, generation, _, r) in due {
            let s = &self.streams.list[x as usize];
            if !s.alive || s.generation != generation {
                continue;
            }
            let rc = &s.receivers[r as usize];
            let due = (rc.covered < rc.total).then(|| s.delivery(r, rc.covered));
            if due == Some(t) {
                self.hot(t).materialize(x);
            }
        }
    }

    /// Node `node` woke at cycle `t`: its edge sources that release a wavelet now are
    /// candidates for streams.
    pub(crate) fn express_sources(&mut self, node: u32, t: u64) {
        let info = self.fab.info[node as usize];
        for s in info.src_start..info.src_start + info.src_len {
            let src = &mut self.fab.sources[s as usize];
            if src.live() && src.pacer.ready_at() == t {
                if src.xskip > 0 {
                    src.xskip -= 1;
                } else {
                    self.streams.sources.push(s);
                }
            }
        }
    }
}

//! The closed form of an express stream (see `express.rs`) at work: the router steps that
//! end its feed and complete its receives, writing delivered wavelets into the receivers'
//! SRAM, and turning the stream back into wavelets — queues (present and in-flight wavelets,
//! the credit cycles of free slots), counters, round-robin and filter positions, the feed's
//! position and pacer — exactly as the hop-by-hop simulation would have them at that cycle.

use crate::express::{COMPETE, FED, Feed};
use crate::fabric::{EXPRESS, NONE, NONE8, RAMP, SENDING};
use crate::pe::{Delivery, SendState};
use crate::queue::Rel;
use crate::router::CycleState;

impl CycleState<'_> {
    /// The router step of a chain router at this cycle (after the PE's injection, before the
    /// ports are served): the feed's last wavelet enters, the receivers' wavelets land.
    pub(crate) fn express_step(&mut self, node: u32) {
        let x = self.info[node as usize].express;
        let t = self.t;
        let s = &self.streams.list[x as usize];
        if s.hops[0].node == node && !s.fed && t == s.sched.at(s.n - 1) {
            self.feed_done(x);
        }
        let s = &self.streams.list[x as usize];
        let r = s.hops[self.info[node as usize].xhop as usize].receiver;
        if r == NONE {
            return;
        }
        self.flush(x, r, t);
        // Its receive due now completed: schedule the next one's completion.
        let s = &self.streams.list[x as usize];
        let rc = &s.receivers[r as usize];
        if rc.done_at <= t {
            let slot = &self.recvs[rc.slot as usize];
            let next = s.completion(r, slot, rc.covered);
            self.streams.list[x as usize].receivers[r as usize].done_at = next.unwrap_or(u64::MAX);
            if let Some(d) = next {
                self.streams.push(d, x, crate::express::RECV_DONE, r);
            }
        }
    }

    /// The last wavelet of stream `x`'s feed entered at this cycle.
    fn feed_done(&mut self, x: u32) {
        let t = self.t;
        let s = &mut self.streams.list[x as usize];
        s.fed = true;
        let (first_at, node0) = (s.sched.at(0), s.hops[0].node);
        match &s.feed {
            Feed::Send { pe, slot, send, .. } => {
                let p = &mut self.pes[*pe as usize];
                p.last_slot = (slot - p.send_base) as u8;
                if let Some(then) = send.then {
                    p.ready.push((t + 1, p.seq, then));
                    p.seq += 1;
                    self.schedule(node0, t + 1);
                }
                self.next_part(x);
            }
            &Feed::Edge { source } => {
                let from_start = s.first == 0;
                let src = &mut self.sources[source as usize];
                src.pos = src.data.len();
                src.express = false;
                if from_start && src.first.is_none() {
                    src.first = Some(first_at);
                }
                src.last = Some(t);
                let group = src.group;
                if group != NONE {
                    self.weight_stream_done(group);
                }
            }
        }
    }

    /// Stream `x`'s send ended at this cycle: the next send its PE issued on the color joins
    /// it back to back (its first wavelet enters in the next cycle), else the feed is done.
    fn next_part(&mut self, x: u32) {
        let t = self.t;
        let s = &mut self.streams.list[x as usize];
        let Feed::Send { pe, send, part, .. } = &mut s.feed else {
            return;
        };
        let p = &mut self.pes[*pe as usize];
        let Some(w) = p.take_waiting(send.color) else {
            p.express = NONE;
            p.xslot = crate::fabric::NONE8;
            return;
        };
        s.fed = false;
        *part = s.n;
        send.data.extend_from_slice(&w.data);
        (send.then, send.seq) = (w.then, w.seq);
        self.tasks.spare.give(w.data);
        s.n += send.data.len() as u64 - *part;
        let end = (0..s.hops.len())
            .filter_map(|k| {
                let hop = &s.hops[k];
                let c = s.period.count(hop.reach, s.n);
                (c > 0).then(|| s.leaves(s.period.nth(hop.reach, c - 1), k))
            })
            .max()
            .unwrap_or(t);
        s.end = end;
        let last_in = s.sched.at(s.n - 1);
        for r in &mut s.receivers {
            r.total = s.period.count(r.window, s.n);
        }
        let receivers = s.receivers.len() as u32;
        self.streams.push(last_in, x, FED, 0);
        self.streams.push(end + 1, x, crate::express::END, 0);
        self.streams.recover.extend((0..receivers).map(|r| (x, r)));
    }

    /// Feed wavelet of stream index `i` of stream `x`.
    fn word(&self, x: u32, i: u64) -> u32 {
        let s = &self.streams.list[x as usize];
        let at = (s.first + i) as usize;
        match &s.feed {
            Feed::Send { send, .. } => send.data[at],
            &Feed::Edge { source } => self.sources[source as usize].data[at],
        }
    }

    /// Write the wavelets receiver `r` of stream `x` got up to cycle `upto` into its PE.
    pub(crate) fn flush(&mut self, x: u32, r: u32, upto: u64) {
        loop {
            let s = &self.streams.list[x as usize];
            let rc = &s.receivers[r as usize];
            if rc.flushed >= rc.total {
                return;
            }
            let i = s.period.nth(rc.window, rc.flushed);
            let k = rc.hop as usize;
            let d = s.leaves(i, k);
            if d > upto {
                return;
            }
            let (pe, slot, node) = (rc.pe, rc.slot, s.hops[k].node);
            if self.flush_run(x, r, i, upto) {
                continue;
            }
            let data = self.word(x, i);
            self.streams.list[x as usize].receivers[r as usize].flushed += 1;
            let p = &mut self.pes[pe as usize];
            let rs = &mut self.recvs[slot as usize];
            let color = rs.color;
            match crate::pe::deliver(p, rs, self.program, data, d) {
                Delivery::NoReceive => continue,
                Delivery::Written => {}
                Delivery::Completed => {
                    // Inline `schedule`: the PE wakes for the receive's task.
                    let when = (d + 1).max(self.floor);
                    let wake = &mut self.wake[node as usize];
                    if when < *wake {
                        *wake = when;
                        self.timers.push(when, node);
                    }
                }
            }
            self.stats.color_delivered[color as usize] += 1;
        }
    }

    /// Write a run of receiver `r`'s wavelets from stream index `i` on at once, if more than
    /// one has arrived by `upto` into its open receive without completing it: consecutive
    /// in the stream (and in one period's window); whether it wrote any.
    fn flush_run(&mut self, x: u32, r: u32, i: u64, upto: u64) -> bool {
        let s = &self.streams.list[x as usize];
        let rc = &s.receivers[r as usize];
        let rs = &self.recvs[rc.slot as usize];
        if !rs.open || rs.n - rs.done < 3 {
            return false;
        }
        let k = rc.hop as usize;
        let arrived = s.period.count(rc.window, s.moved(k, upto + 1)) - rc.flushed;
        let in_window = if s.period.p == 0 {
            u64::MAX
        } else {
            rc.window.1 - (s.period.phase + i) % s.period.p
        };
        let run = arrived
            .min(in_window)
            .min(u64::from(rs.n - rs.done - 1))
            .min(rc.total - rc.flushed);
        if run < 2 {
            return false;
        }
        let t = s.leaves(i, k);
        let (pe, slot) = (rc.pe, rc.slot);
        let from = (s.first + i) as usize;
        let words = match &s.feed {
            Feed::Send { send, .. } => &send.data[from..from + run as usize],
            &Feed::Edge { source } => {
                &self.sources[source as usize].data[from..from + run as usize]
            }
        };
        let rs = &mut self.recvs[slot as usize];
        crate::pe::deliver_run(&mut self.pes[pe as usize], rs, self.program, words, t);
        self.stats.color_delivered[rs.color as usize] += run;
        self.streams.list[x as usize].receivers[r as usize].flushed += run;
        true
    }

    /// Turn stream `x` back into wavelets at the current cycle `t`: the state after the
    /// arrivals of `t`, before the routers step.
    pub(crate) fn materialize(&mut self, x: u32) {
        let t = self.t;
        let receivers = self.streams.list[x as usize].receivers.len() as u32;
        for r in 0..receivers {
            self.flush(x, r, t.saturating_sub(1));
            let slot = self.streams.list[x as usize].receivers[r as usize].slot;
            self.recvs[slot as usize].express = NONE;
        }
        let s = &mut self.streams.list[x as usize];
        s.alive = false;
        if t <= s.end {
            self.stats.express_interrupted += 1;
        }
        let mut last_move = None;
        for k in 0..self.streams.list[x as usize].hops.len() {
            last_move = last_move.max(self.restore_hop(x, k));
        }
        if let Some(l) = last_move {
            self.stats.event(l);
        }
        self.return_feed(x);
    }

    /// Router `k` of stream `x` back to wavelets: counters, round-robin and filter positions,
    /// its queue; the last cycle the stream moved anything there.
    fn restore_hop(&mut self, x: u32, k: usize) -> Option<u64> {
        let t = self.t;
        let s = &self.streams.list[x as usize];
        let hop = &s.hops[k];
        let moved = s.moved(k, t);
        let left = s.period.count(hop.reach, moved);
        let kept = s.period.count(hop.keep, moved);
        let passed = s.period.count(hop.pass, moved);
        let info = &mut self.info[hop.node as usize];
        info.express = NONE;
        info.xhop = NONE;
        info.reserved = 0;
        let r = &mut self.routers[hop.node as usize];
        r.flags &= !EXPRESS;
        let bit = hop.queue - r.q_start;
        if passed > hop.passed0 {
            r.rr[usize::from(hop.link)] = ((bit + 1) % 64) as u8;
            self.outch[hop.out_channel as usize].sent += passed - hop.passed0;
        }
        if kept > hop.kept0 {
            r.rr[RAMP] = ((bit + 1) % 64) as u8;
        }
        if let Some(c0) = hop.filter0
            && let Ok(f) = self.filters.binary_search_by_key(&hop.queue, |f| f.queue)
        {
            let f = &mut self.filters[f];
            f.count = ((u64::from(c0) + left - hop.left0) % u64::from(f.period)) as u32;
        }
        let last = (left > hop.left0).then(|| s.leaves(s.period.nth(hop.reach, left - 1), k));
        if k > 0 {
            self.rebuild_queue(x, k);
        }
        last
    }

    /// Rebuild the queue of stream `x`'s router `k` (≥ 1): the wavelet that arrived at `t`
    /// (present), those on the link toward it (in flight), and the free slots with the credits
    /// not yet back upstream, oldest first.
    fn rebuild_queue(&mut self, x: u32, k: usize) {
        let (t, epoch) = (self.t, self.epoch);
        let rel = |c: u64| -> Rel { (c - epoch) as Rel };
        let s = &self.streams.list[x as usize];
        let hop = &s.hops[k];
        let (q, node) = (hop.queue, hop.node);
        // The link into this queue (L + B behind a boundary), for wavelets and credits.
        let latency = u64::from(self.rings.up_latency::<true>(&self.queues[q as usize]));
        let here = |i: &u64| s.period.contains(hop.reach, *i);
        // Past router k − 1 before t, not past router k.
        let (lo, hi) = (s.moved(k, t), s.moved(k - 1, t));
        let wavelets: Vec<(u64, u64)> =
            (lo..hi).filter(here).map(|i| (i, s.leaves(i, k))).collect();
        // Out of router k in [t − ℓ + 1, t − 1]: their credits are on the way (those out
        // before the stream started are in `credits0`).
        let since = (t + 1)
            .checked_sub(latency + 1)
            .map_or(0, |c| s.moved(k, c))
            .max(hop.out0);
        let mut dues: Vec<u64> = (since..lo)
            .filter(here)
            .map(|i| s.leaves(i, k) + latency)
            .chain(hop.credits0.iter().copied())
            .filter(|&due| due > t)
            .collect();
        dues.sort_unstable();
        let data: Vec<u32> = wavelets.iter().map(|&(i, _)| self.word(x, i)).collect();
        let depth = self.rings.depth_of::<true>(&self.queues[q as usize]);
        let queue = &mut self.queues[q as usize];
        (queue.head, queue.len, queue.fly, queue.sent) = (0, 0, 0, 0);
        debug_assert!(
            wavelets.len() + dues.len() <= depth as usize,
            "an express stream fits its queues (depth ≥ 2ℓ)"
        );
        let credited = depth - dues.len() as u32;
        for j in 0..depth {
            let due = j.checked_sub(credited).map_or(0, |d| rel(dues[d as usize]));
            self.rings.set_slot(queue, q, j, 0, due);
        }
        let mut arrivals = Vec::new();
        for (&(_, arrive), &word) in wavelets.iter().zip(&data) {
            if arrive == t {
                self.rings.push_present::<true>(queue, q, word);
            } else {
                self.rings.push_flight::<true>(queue, q, word, rel(arrive));
                arrivals.push(arrive);
            }
        }
        let r = &mut self.routers[node as usize];
        let bit = 1u64 << (q - r.q_start);
        if queue.len > 0 {
            let tx = crate::fabric::head_tx(queue, q, self.filters);
            crate::router::set_want(r, tx, bit);
            self.pending.insert(node);
        }
        if queue.fly > 0 {
            r.incoming |= bit;
        }
        for arrive in arrivals {
            self.wake_at(node, arrive);
        }
    }

    /// Stream `x`'s feed takes over again: the part not entered before `t` goes back to the
    /// sender's slot (ahead of any send issued after it) or the edge source.
    fn return_feed(&mut self, x: u32) {
        let t = self.t;
        let s = &mut self.streams.list[x as usize];
        let m = t.checked_sub(1).map_or(0, |c| s.sched.count_le(c, s.n));
        let (first, n, sched, fed, node0) = (s.first, s.n, s.sched, s.fed, s.hops[0].node);
        let feed = std::mem::replace(&mut s.feed, Feed::Edge { source: NONE });
        match feed {
            Feed::Send {
                pe,
                slot,
                mut send,
                part,
            } => {
                if fed {
                    self.tasks.spare.give(send.data);
                    return;
                }
                // The current send, from its first wavelet not entered.
                send.data.drain(..part as usize);
                self.resume_send(pe, slot, send, first + m - part, node0, m > 0);
            }
            Feed::Edge { source } => {
                if fed {
                    return;
                }
                let src = &mut self.sources[source as usize];
                src.express = false;
                src.pos = (first + m) as usize;
                if let crate::express::Schedule::Paced { next0, num, .. } = sched {
                    src.pacer.set_next(next0 + u128::from(m) * u128::from(num));
                }
                if m > 0 {
                    if first == 0 && src.first.is_none() {
                        src.first = Some(sched.at(0));
                    }
                    src.last = Some(sched.at(m - 1));
                }
                let _ = n;
                let ready = src.pacer.ready_at();
                if ready <= t {
                    self.activate(node0);
                } else {
                    self.schedule(node0, ready);
                }
            }
        }
    }

    /// PE `pe`'s send taken by a stream goes back to slot `slot` from wavelet `pos` on.
    fn resume_send(
        &mut self,
        pe: u32,
        slot: u32,
        send: SendState,
        pos: u64,
        node: u32,
        moved: bool,
    ) {
        let a = &mut self.pes[pe as usize];
        let k = slot - a.send_base;
        if moved {
            a.last_slot = k as u8;
        }
        a.express = NONE;
        a.xslot = crate::fabric::NONE8;
        let bit = 1u64 << k;
        let sl = &mut self.sends[slot as usize];
        sl.data = send.data;
        sl.pos = pos as u32;
        sl.then = send.then.unwrap_or(NONE);
        sl.seq = send.seq;
        a.sending |= bit;
        self.routers[node as usize].flags |= SENDING;
        self.activate(node);
    }

    /// A wavelet arriving at cycle `arrive` in queue `q` of `node`, whose router an express
    /// stream reserves a port of: if the queue wants that port, the stream turns back into
    /// wavelets at that cycle, before the PEs wake.
    pub(crate) fn express_arrival(&mut self, node: u32, q: u32, arrive: u64) {
        let info = &self.info[node as usize];
        if self.queues[q as usize].tx & info.reserved != 0 {
            let x = info.express;
            self.streams.push(arrive, x, COMPETE, 0);
        }
    }
}

const _: () = assert!(NONE8 == u8::MAX);

//! One partition of the fabric (a band of rows) and its event loop.
//!
//! # The cycle
//!
//! Time advances only to cycles in which something happens (idle time is skipped). In a cycle
//! `t`, in this order:
//!
//! 1. wavelets due at `t` join their router queues and credits due at `t` return to their
//!    output channels (both were sent exactly one hop latency earlier);
//! 2. nodes whose timer is due wake: their PE applies runtime calls issued at `t` and, if idle,
//!    starts its next ready task;
//! 3. every active router takes one step: its PE injects at most one wavelet through the
//!    ramp, edge sources inject, and each output port (N, S, E, W, ramp) moves at most one
//!    wavelet, chosen round-robin among the queues that want it.
//!
//! A router only changes its own queues, credits and PE; everything it does to another router
//! arrives at least one cycle later. So the routers of one cycle may be stepped in any order
//! with the same result, which is what makes partitions (and threads) invisible in the
//! results.

use crate::error::SimError;
use crate::events::{Bucket, Timers, Wheel};
use crate::express::Express;
use crate::fabric::{EXPRESS, Msg, NONE, Node, NodeInfo, OutChannel, Pe, Queue, Sink, Source};
use crate::phases::Phases;
use crate::program::Program;
use crate::task::Op;
use crate::trace::TraceBuf;
use crate::waits::PeWaits;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Counters kept while running (link traffic is counted on the output channels).
#[derive(Debug)]
pub(crate) struct Stats {
    /// Wavelets delivered to PEs per color.
    pub color_delivered: Vec<u64>,
    /// The last cycle in which anything happened.
    pub last_event: Option<u64>,
    /// The latest end of any task.
    pub max_busy: u64,
    /// Express streams started, and turned back into wavelets before their end.
    pub express_started: u64,
    pub express_interrupted: u64,
}

impl Stats {
    pub(crate) fn new(colors: usize) -> Stats {
        Stats {
            color_delivered: vec![0; colors],
            last_event: None,
            max_busy: 0,
            express_started: 0,
            express_interrupted: 0,
        }
    }

    pub(crate) fn event(&mut self, t: u64) {
        if self.last_event.is_none_or(|l| l < t) {
            self.last_event = Some(t);
        }
    }
}

/// Why [`Partition::run`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// No event left.
    Quiet,
    /// The next event is at or after the end of the window.
    WindowEnd,
    /// A cycle ended with errors.
    Error,
}

/// The state of one band of rows.
pub(crate) struct Partition<'p> {
    pub id: u32,
    pub program: &'p Program,
    pub depth: u32,
    pub latency: u64,
    pub switch: u64,
    pub nodes: Vec<Node>,
    pub info: Vec<NodeInfo>,
    pub queues: Vec<Queue>,
    /// Wavelets in queues: `qstride` slots per queue (the queue depth rounded up to a power
    /// of two, so ring positions wrap with `qmask`).
    pub qdata: Vec<u32>,
    pub qstride: u32,
    pub qmask: u32,
    pub outch: Vec<OutChannel>,
    pub pes: Vec<Pe>,
    pub sources: Vec<Source>,
    pub sinks: Vec<Sink>,
    pub wheel: Wheel,
    pub timers: Timers,
    pub active: Vec<u32>,
    /// The last cycle processed (or the end of the last window, minus one).
    pub now: u64,
    /// The earliest cycle a new timer may be set for.
    pub floor: u64,
    pub bucket: Bucket,
    /// Scratch bitmap for ordering the active list.
    pub bitmap: Vec<u64>,
    /// Messages for other partitions, by destination.
    pub outbox: Vec<Vec<Msg>>,
    /// Errors of the current cycle: (cycle, global node, error).
    pub errors: Vec<(u64, u32, SimError)>,
    pub stats: Stats,
    pub trace: Option<TraceBuf>,
    /// Scratch space for a task's runtime calls.
    pub ops: Vec<Op>,
    /// Global id of the first node.
    pub node_base: u32,
    /// Express streams (uncontended streams in closed form), by id.
    pub express: Vec<Express>,
    /// Their events: (cycle, stream, generation, kind).
    pub xevents: BinaryHeap<Reverse<(u64, u32, u32, u8)>>,
    /// Whether new express streams may start.
    pub express_on: bool,
    /// PEs that began a send in this cycle.
    pub xcandidates: Vec<u32>,
    /// Receive waits, per PE.
    pub waits: Vec<PeWaits>,
    /// Weight-store phases.
    pub phases: Phases,
}

impl<'p> Partition<'p> {
    /// Wake `node` at cycle `t` (or at the earliest allowed cycle). A node keeps only its
    /// earliest timer; whatever a later timer was for is found again when the node wakes.
    pub(crate) fn schedule(&mut self, node: u32, t: u64) {
        let t = t.max(self.floor);
        let n = &mut self.info[node as usize];
        if t < n.wake {
            n.wake = t;
            self.timers.push(t, node);
        }
    }

    /// Put `node`'s router on the active list.
    pub(crate) fn activate(&mut self, node: u32) {
        let n = &mut self.nodes[node as usize];
        if !n.active {
            n.active = true;
            self.active.push(node);
        }
    }

    /// The next cycle with anything to do.
    pub(crate) fn next_time(&self) -> Option<u64> {
        let mut best = if self.active.is_empty() {
            None
        } else {
            Some(self.now + 1)
        };
        let express = self.xevents.peek().map(|Reverse((t, ..))| *t);
        for t in [self.wheel.next_after(self.now), self.timers.peek(), express]
            .into_iter()
            .flatten()
        {
            if best.is_none_or(|b| t < b) {
                best = Some(t);
            }
        }
        best
    }

    /// Process every cycle before `end`; stop early when nothing is left or a cycle fails.
    pub(crate) fn run(&mut self, end: u64) -> Stop {
        loop {
            let Some(t) = self.next_time() else {
                return Stop::Quiet;
            };
            if t >= end {
                return Stop::WindowEnd;
            }
            self.cycle(t);
            if !self.errors.is_empty() {
                return Stop::Error;
            }
        }
    }

    /// Accept messages from another partition (all due after this partition's `now`).
    pub(crate) fn ingest(&mut self, msgs: &mut Vec<Msg>) {
        for m in msgs.drain(..) {
            if m.is_credit {
                self.wheel.credit(m.time, m.index);
            } else {
                self.wheel.arrival(m.time, m.index, m.data);
            }
        }
    }

    fn cycle(&mut self, t: u64) {
        self.now = t;
        self.floor = t + 1;
        let mut bucket = std::mem::take(&mut self.bucket);
        self.wheel.take(t, &mut bucket);
        {
            let mut hot = self.hot(t);
            let arrivals = &bucket.arrivals;
            for (i, &(q, data)) in arrivals.iter().enumerate() {
                if let Some(&(ahead, _)) = arrivals.get(i + 2 * crate::prefetch::ARRIVALS) {
                    hot.prefetch_queue(ahead);
                }
                if let Some(&(ahead, _)) = arrivals.get(i + crate::prefetch::ARRIVALS) {
                    hot.prefetch_arrival(ahead);
                }
                debug_assert!(
                    u32::from(hot.queues[q as usize].len) < hot.depth(),
                    "credit flow control overflowed a queue"
                );
                let node = hot.queues[q as usize].node;
                if hot.nodes[node as usize].flags & EXPRESS != 0 {
                    hot.express_arrival(q);
                }
                hot.push(q, data);
                hot.activate(node);
            }
            for &och in &bucket.credits {
                let ch = &mut hot.outch[och as usize];
                ch.credits += 1;
                // A router with credits left on this channel was not waiting for it.
                if ch.credits == 1 {
                    let node = ch.node;
                    hot.activate(node);
                }
            }
        }
        bucket.arrivals.clear();
        bucket.credits.clear();
        self.bucket = bucket;

        if !self.xevents.is_empty() {
            self.express_events(t);
        }
        while let Some((when, node)) = self.timers.pop_due(t) {
            if self.info[node as usize].wake != when {
                continue;
            }
            self.info[node as usize].wake = u64::MAX;
            let pe = self.nodes[node as usize].pe;
            if pe != NONE {
                self.wake_pe(pe, t);
            }
            self.activate(node);
        }

        if !self.xcandidates.is_empty() {
            self.express_start(t);
        }

        let mut list = std::mem::take(&mut self.active);
        self.order_active(&mut list);
        let mut moved = false;
        {
            use crate::prefetch::{FAR, MID, NEAR};
            let mut hot = self.hot(t);
            for (i, &node) in list.iter().enumerate() {
                if let Some(&n) = list.get(i + FAR) {
                    hot.prefetch_far(n);
                }
                if let Some(&n) = list.get(i + MID) {
                    hot.prefetch_mid(n);
                }
                if let Some(&n) = list.get(i + NEAR) {
                    hot.prefetch_near(n);
                }
                hot.nodes[node as usize].active = false;
                let (m, stay) = hot.step_router(node);
                moved |= m;
                if stay {
                    hot.activate(node);
                }
            }
        }
        if moved {
            self.stats.event(t);
        }
        list.clear();
        if self.active.is_empty() {
            // Reuse the allocation.
            self.active = list;
        }
    }

    /// Put the active list in node order, so that memory is walked sequentially (the order
    /// does not change results): a bucket pass over a bitmap when many nodes are active, a
    /// sort when few are.
    fn order_active(&mut self, list: &mut Vec<u32>) {
        if list.len() * 32 < self.nodes.len() {
            list.sort_unstable();
            return;
        }
        self.bitmap.resize(self.nodes.len().div_ceil(64), 0);
        for &n in list.iter() {
            self.bitmap[n as usize / 64] |= 1 << (n % 64);
        }
        list.clear();
        for (w, word) in self.bitmap.iter_mut().enumerate() {
            let mut bits = *word;
            *word = 0;
            while bits != 0 {
                list.push((w * 64) as u32 + bits.trailing_zeros());
                bits &= bits - 1;
            }
        }
    }

    /// Record an error at cycle `t` for local `node`.
    pub(crate) fn fail(&mut self, t: u64, node: u32, e: SimError) {
        self.errors.push((t, self.node_base + node, e));
    }
}

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
use crate::fabric::{Msg, NONE, Node, OutChannel, Pe, Queue, Sink, Source};
use crate::program::Program;
use crate::task::Op;
use crate::trace::TraceBuf;

/// Counters kept while running.
#[derive(Debug)]
pub(crate) struct Stats {
    /// Wavelets sent per node and link direction (N, S, E, W), including off-fabric.
    pub links: Vec<[u64; 4]>,
    /// Link hops per color.
    pub color_hops: Vec<u64>,
    /// Wavelets delivered to PEs per color.
    pub color_delivered: Vec<u64>,
    /// Wavelet-hops between PEs.
    pub hops: u64,
    /// The last cycle in which anything happened.
    pub last_event: Option<u64>,
    /// The latest end of any task.
    pub max_busy: u64,
}

impl Stats {
    pub(crate) fn new(nodes: usize, colors: usize) -> Stats {
        Stats {
            links: vec![[0; 4]; nodes],
            color_hops: vec![0; colors],
            color_delivered: vec![0; colors],
            hops: 0,
            last_event: None,
            max_busy: 0,
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
    pub queues: Vec<Queue>,
    pub qdata: Vec<u32>,
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
}

impl<'p> Partition<'p> {
    /// Wake `node` at cycle `t` (or at the earliest allowed cycle). A node keeps only its
    /// earliest timer; whatever a later timer was for is found again when the node wakes.
    pub(crate) fn schedule(&mut self, node: u32, t: u64) {
        let t = t.max(self.floor);
        let n = &mut self.nodes[node as usize];
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
        for t in [self.wheel.next_after(self.now), self.timers.peek()]
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
        for &(q, data) in &bucket.arrivals {
            let depth = self.depth as usize;
            let queue = &mut self.queues[q as usize];
            debug_assert!(
                u32::from(queue.len) < self.depth,
                "credit flow control overflowed a queue"
            );
            let slot = (queue.head as usize + queue.len as usize) % depth;
            self.qdata[q as usize * depth + slot] = data;
            queue.len += 1;
            let node = queue.node;
            let n = &mut self.nodes[node as usize];
            n.nonempty |= 1 << (q - n.q_start);
            self.activate(node);
        }
        for &och in &bucket.credits {
            let ch = &mut self.outch[och as usize];
            ch.credits += 1;
            let node = ch.node;
            self.activate(node);
        }
        bucket.arrivals.clear();
        bucket.credits.clear();
        self.bucket = bucket;

        while let Some((when, node)) = self.timers.pop_due(t) {
            if self.nodes[node as usize].wake != when {
                continue;
            }
            self.nodes[node as usize].wake = u64::MAX;
            let pe = self.nodes[node as usize].pe;
            if pe != NONE {
                self.wake_pe(pe, t);
            }
            self.activate(node);
        }

        let mut list = std::mem::take(&mut self.active);
        self.order_active(&mut list);
        for &node in &list {
            self.nodes[node as usize].active = false;
            if self.step_router(node, t) {
                self.activate(node);
            }
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

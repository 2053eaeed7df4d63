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
//! Nothing in step 2 looks at queues or credits unless an express stream is alive or about to
//! start, so on a large fabric (`SimOptions::defer_arrivals`) the arrivals and credits that
//! router steps caused are applied in step 3 instead, each router's right before it steps: a
//! router's memory is then visited once per cycle instead of twice (the result is the same,
//! as it only changes that router's state).
//!
//! A router only changes its own queues, credits and PE; everything it does to another router
//! arrives at least one cycle later. So the routers of one cycle may be stepped in any order
//! with the same result, which is what makes partitions (and threads) invisible in the
//! results.

use crate::error::SimError;
use crate::events::{Bucket, Due, NodeSet, Timers, Wheel};
use crate::express::Express;
use crate::fabric::{Msg, NONE, Node, NodeInfo, OutChannel, Pe, Queue, Sink, Source};
use crate::phases::Phases;
use crate::prefetch::{Ahead, Distances, Large, Small};
use crate::program::Program;
use crate::router::Hot;
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
    /// Routers to step in the next router pass.
    pub pending: NodeSet,
    /// Scratch list of the routers of a pass.
    pub list: Vec<u32>,
    /// Per node: the first of its arrivals and credits due in this cycle's router pass (an
    /// index into the bucket's `steps`), or NONE; `due_next` chains the rest.
    pub due_head: Vec<u32>,
    pub due_next: Vec<u32>,
    /// The last cycle processed (or the end of the last window, minus one).
    pub now: u64,
    /// The earliest cycle a new timer may be set for.
    pub floor: u64,
    pub bucket: Bucket,
    /// Messages for other partitions, by destination.
    pub outbox: Vec<Vec<Msg>>,
    /// Errors of the current cycle: (cycle, global node, error).
    pub errors: Vec<(u64, u32, SimError)>,
    pub stats: Stats,
    pub trace: Option<TraceBuf>,
    /// Scratch space for a task's runtime calls.
    pub ops: Vec<Op>,
    /// Data buffers of finished sends, reused by new ones (see `TaskRuntime::buffer`).
    pub spare: crate::task::SpareBuffers,
    /// Global id of the first node.
    pub node_base: u32,
    /// Express streams (uncontended streams in closed form), by id.
    pub express: Vec<Express>,
    /// Their events: (cycle, stream, generation, kind).
    pub xevents: BinaryHeap<Reverse<(u64, u32, u32, u8)>>,
    /// Whether new express streams may start.
    pub express_on: bool,
    /// Whether router steps apply their own arrivals and credits (`SimOptions::defer_arrivals`).
    pub defer: bool,
    /// Whether credits may be counted before they are due (`SimOptions::early_credits`).
    pub early_credits: bool,
    /// The cycle budget (`SimOptions::max_cycles`; `u64::MAX` for none), which tasks' loops
    /// check too.
    pub max_cycles: u64,
    /// `SimOptions::livelock_tasks` (`u64::MAX` for none), and per PE the tasks it ran in a
    /// row that only activated tasks while nothing of its own was open.
    pub livelock_tasks: u64,
    pub closed_tasks: Vec<u64>,
    /// PEs that began a send in this cycle.
    pub xcandidates: Vec<u32>,
    /// Receive waits, per PE.
    pub waits: Vec<PeWaits>,
    /// Per PE, the cycle its first task started (`u64::MAX` until one has): with `busy_until`,
    /// the PE's span of work (`PeActivity::first_task_start`).
    pub first_task: Vec<u64>,
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

    /// Step `node`'s router in the next router pass.
    pub(crate) fn activate(&mut self, node: u32) {
        self.pending.insert(node);
    }

    /// The next cycle with anything to do.
    pub(crate) fn next_time(&self) -> Option<u64> {
        let mut best = if self.pending.is_empty() {
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
        // Router steps apply their own arrivals and credits (each router's memory is then
        // visited once per cycle), unless an express stream is alive: its closed form looks at
        // other routers' queues and credits before the router pass. Each router's share is
        // chained from `due_head`, through `due_next`.
        let mut deferred = self.defer && self.xevents.is_empty();
        {
            let mut hot = self.hot(t);
            hot.apply_other(&bucket);
            if !deferred {
                hot.apply_steps(&bucket.steps);
            }
        }
        if deferred {
            self.due_next.clear();
            for (i, d) in bucket.steps.iter().enumerate() {
                let head = &mut self.due_head[d.node as usize];
                self.due_next.push(*head);
                *head = i as u32;
                self.pending.insert(d.node);
            }
        }

        if !self.xevents.is_empty() {
            self.express_events(t);
        }
        while let Some((when, node)) = self.timers.pop_due(t) {
            crate::prefetch::wakes_ahead(self);
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
            if deferred {
                for d in &bucket.steps {
                    self.due_head[d.node as usize] = NONE;
                }
                self.hot(t).apply_steps(&bucket.steps);
                deferred = false;
            }
            self.express_start(t);
        }

        let mut list = std::mem::take(&mut self.list);
        self.pending.drain_into(&mut list);
        let moved = {
            let mut due_head = std::mem::take(&mut self.due_head);
            let due_next = std::mem::take(&mut self.due_next);
            let mut hot = self.hot(t);
            let dues = deferred.then_some(Dues {
                head: &mut due_head,
                next: &due_next,
                steps: &bucket.steps,
            });
            let moved = if crate::prefetch::large(&hot) {
                router_pass::<Large>(&mut hot, &list, dues)
            } else {
                router_pass::<Small>(&mut hot, &list, dues)
            };
            self.due_head = due_head;
            self.due_next = due_next;
            moved
        };
        if moved {
            self.stats.event(t);
        }
        list.clear();
        self.list = list;
        bucket.clear();
        self.bucket = bucket;
    }

    /// Record an error at cycle `t` for local `node`.
    pub(crate) fn fail(&mut self, t: u64, node: u32, e: SimError) {
        self.errors.push((t, self.node_base + node, e));
    }
}

/// A cycle's deferred arrivals and credits, chained per router (see `Partition::cycle`).
struct Dues<'a> {
    head: &'a mut [u32],
    next: &'a [u32],
    steps: &'a [Due],
}

/// Step the routers of `list` in order, prefetching ahead by `D`'s distances and applying
/// each router's deferred arrivals and credits right before its step; whether any moved a
/// wavelet.
#[inline(never)]
fn router_pass<D: Distances>(hot: &mut Hot<'_>, list: &[u32], mut dues: Option<Dues<'_>>) -> bool {
    let mut moved = false;
    let mut ahead = Ahead::<D>::start(hot, list);
    for (i, &node) in list.iter().enumerate() {
        ahead.step(hot, list, i);
        if let Some(dues) = &mut dues {
            ahead.dues(hot, list, i, dues.head, dues.next, dues.steps);
            ahead.arrival_credits(hot, list, i, dues.head, dues.next, dues.steps);
            let mut d = std::mem::replace(&mut dues.head[node as usize], NONE);
            while d != NONE {
                hot.apply_due(dues.steps[d as usize]);
                d = dues.next[d as usize];
            }
        }
        let (m, stay) = hot.step_router(node);
        moved |= m;
        if stay {
            hot.activate(node);
        }
    }
    moved
}

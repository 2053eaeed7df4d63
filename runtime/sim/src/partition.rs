//! One partition of the fabric (a set of whole rows) and its event loop.
//!
//! # The cycle
//!
//! Time advances only to cycles in which something happens (idle time is skipped). In a cycle
//! `t`, in this order:
//!
//! 1. credits due at `t` return to output channels into other partitions, and the routers due
//!    to step at `t` (a wavelet arrives for them, or a credit they wait for returns) join the
//!    pass;
//! 2. nodes whose timer is due wake: their PE applies runtime calls issued at `t` and, if idle,
//!    starts its next ready task;
//! 3. every active router takes one step: it absorbs the wavelets that have arrived, its PE
//!    injects at most one wavelet through the ramp, edge sources inject, and each output port
//!    (N, S, E, W, ramp) moves at most one wavelet, chosen round-robin among the queues that
//!    want it.
//!
//! A router only changes its own queues' present wavelets, round-robin positions and PE;
//! what it does to another router (a wavelet, a credit) takes effect at least one cycle later
//! and is written where that router reads it only from that cycle on. So the routers of one
//! cycle may be stepped in any order with the same result, which is what makes partitions
//! (and threads) invisible in the results.

use crate::error::SimError;
use crate::events::{NodeSet, Timers, WakeBucket, Wakes};
use crate::express::Streams;
use crate::fabric::{Msg, NONE, OutChannel, Queue, Router, RouterInfo, Sink, Source};
use crate::pe::{Pe, RecvSlot, SendSlot};
use crate::phases::Phases;
use crate::prefetch::{Ahead, Distances, Large, Size, Small, Tiny};
use crate::program::Program;
use crate::queue::{Rel, Rings};
use crate::router::{CycleState, RemoteUp};
use crate::task::Op;
use crate::trace::TraceBuf;

/// Counters kept while running (link traffic is counted on the output channels).
#[derive(Debug)]
pub(crate) struct Stats {
    /// Wavelets delivered to PEs per color.
    pub color_delivered: Vec<u64>,
    /// The last cycle in which anything happened.
    pub last_event: Option<u64>,
    /// The latest end of any task.
    pub max_busy: u64,
    /// Express streams started, turned back into wavelets before their end, and started on
    /// chains that cross a boundary of the target.
    pub express_started: u64,
    pub express_interrupted: u64,
    pub express_crossing: u64,
    /// How much the partition worked: router steps, PE wakes, time in its cycles.
    pub router_steps: u64,
    pub pe_wakes: u64,
    pub busy: std::time::Duration,
}

impl Stats {
    pub(crate) fn new(colors: usize) -> Stats {
        Stats {
            color_delivered: vec![0; colors],
            last_event: None,
            max_busy: 0,
            express_started: 0,
            express_interrupted: 0,
            express_crossing: 0,
            router_steps: 0,
            pe_wakes: 0,
            busy: std::time::Duration::ZERO,
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

/// The fabric state of a partition: the records router steps and PE wakes act on.
#[derive(Default)]
pub(crate) struct Fabric {
    pub routers: Vec<Router>,
    /// Per router: the cycle of its pending node timer (PE wake or paced edge stream), or
    /// u64::MAX. Dense (eight routers a line), so that the timer pass, which wakes nodes in
    /// order, and the deliveries that set timers read it without a line of their own.
    pub wake: Vec<u64>,
    pub info: Vec<RouterInfo>,
    pub queues: Vec<Queue>,
    pub rings: Rings,
    pub outch: Vec<OutChannel>,
    /// Channels in other partitions that the queues with `REMOTE_UP` return credits to.
    pub remote_ups: Vec<RemoteUp>,
    /// The state of the queues with a ramp filter, by queue.
    pub filters: Vec<crate::fabric::Filter>,
    /// Switch positions and control-wavelet tags (see `switches.rs`).
    pub switches: crate::switches::Switches,
    pub pes: Vec<Pe>,
    pub sends: Vec<SendSlot>,
    pub recvs: Vec<RecvSlot>,
    pub sources: Vec<Source>,
    pub sinks: Vec<Sink>,
}

/// What a partition is given for the whole run.
pub(crate) struct Setup<'p> {
    pub id: u32,
    pub program: &'p Program,
    pub latency: u64,
    pub switch: u64,
    /// The target's ramp carries one wavelet per cycle in or out (`Target::ramp`).
    pub ramp_shared: bool,
    /// The cycle budget (`SimOptions::max_cycles`; `u64::MAX` for none), which tasks' loops
    /// check too.
    pub max_cycles: u64,
    /// `SimOptions::livelock_tasks` (`u64::MAX` for none).
    pub livelock_tasks: u64,
    /// Per local router: its global id (row-major over the whole fabric).
    pub globals: Vec<u32>,
}

/// Where a partition is in simulated time.
pub(crate) struct Clock {
    /// The last cycle processed (or the end of the last window, minus one).
    pub now: u64,
    /// The earliest cycle a new timer may be set for.
    pub floor: u64,
    /// The cycle queue records count from (see `queue.rs`).
    pub epoch: u64,
}

/// What is due when: router wakes and credits, node timers, the routers of the next pass.
pub(crate) struct Events {
    pub wakes: Wakes,
    pub timers: Timers,
    /// Routers to step in the next router pass.
    pub pending: NodeSet,
    /// Scratch list of the routers of a pass.
    pub list: Vec<u32>,
    pub bucket: WakeBucket,
}

/// What a partition produces besides its fabric state: messages for other partitions,
/// errors, counters and its part of the trace.
pub(crate) struct Output {
    /// Messages for other partitions, by destination.
    pub outbox: Vec<Vec<Msg>>,
    /// Errors of the current cycle: (cycle, global node, error).
    pub errors: Vec<(u64, u32, SimError)>,
    pub stats: Stats,
    pub trace: Option<TraceBuf>,
}

/// The scratch space tasks use.
pub(crate) struct Tasks {
    /// Scratch space for a task's runtime calls.
    pub ops: Vec<Op>,
    /// Data buffers of finished sends, reused by new ones (see `TaskRuntime::buffer`).
    pub spare: crate::task::SpareBuffers,
}

/// The state of one partition, in groups that the cycle's work borrows apart.
pub(crate) struct Partition<'p> {
    pub setup: Setup<'p>,
    pub clock: Clock,
    pub fab: Fabric,
    pub events: Events,
    pub out: Output,
    pub tasks: Tasks,
    /// Express streams (streams along chains in closed form) and their events.
    pub streams: Streams,
    /// Weight-store phases.
    pub phases: Phases,
}

/// How far the epoch may fall behind the current cycle before it moves (see `queue.rs`).
const EPOCH_SPAN: u64 = 1 << 30;

impl<'p> Partition<'p> {
    /// Wake `node` at cycle `t` (or at the earliest allowed cycle). A node keeps only its
    /// earliest timer; whatever a later timer was for is found again when the node wakes.
    pub(crate) fn schedule(&mut self, node: u32, t: u64) {
        let t = t.max(self.clock.floor);
        let wake = &mut self.fab.wake[node as usize];
        if t < *wake {
            *wake = t;
            self.events.timers.push(t, node);
        }
    }

    /// Step `node`'s router in the next router pass.
    pub(crate) fn activate(&mut self, node: u32) {
        self.events.pending.insert(node);
    }

    /// `t` relative to the epoch.
    pub(crate) fn rel(&self, t: u64) -> Rel {
        (t - self.clock.epoch) as Rel
    }

    /// The next cycle with anything to do.
    pub(crate) fn next_time(&self) -> Option<u64> {
        let mut best = if self.events.pending.is_empty() {
            None
        } else {
            Some(self.clock.now + 1)
        };
        // Stream events are never due before the next cycle (a safety net: never a cycle twice).
        let express = self.streams.next().map(|t| {
            debug_assert!(
                t > self.clock.now,
                "a stream event for a cycle already processed"
            );
            t.max(self.clock.now + 1)
        });
        for t in [
            self.events.wakes.next_after(self.clock.now),
            self.events.timers.peek(),
            express,
        ]
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
        let started = std::time::Instant::now();
        let stop = self.run_until(end);
        self.out.stats.busy += started.elapsed();
        stop
    }

    fn run_until(&mut self, end: u64) -> Stop {
        loop {
            let Some(t) = self.next_time() else {
                return Stop::Quiet;
            };
            if t >= end {
                return Stop::WindowEnd;
            }
            self.cycle(t);
            if !self.out.errors.is_empty() {
                return Stop::Error;
            }
        }
    }

    /// Accept messages from another partition (all due after this partition's `now`).
    pub(crate) fn ingest(&mut self, msgs: &mut Vec<Msg>) {
        for m in msgs.drain(..) {
            if m.is_credit {
                self.events.wakes.credit(m.time, m.index);
            } else {
                self.arrive_remote(m.time, m.index, m.data);
            }
        }
    }

    /// A wavelet from another partition lands in local queue `q` at cycle `t`.
    fn arrive_remote(&mut self, t: u64, q: u32, data: u32) {
        let rel = self.rel(t);
        let fab = &mut self.fab;
        let queue = &mut fab.queues[q as usize];
        fab.rings.push_flight::<true>(queue, q, data, rel);
        let node = queue.node;
        let r = &mut fab.routers[node as usize];
        r.incoming |= 1u64 << (q - r.q_start);
        if r.flags & crate::fabric::EXPRESS != 0 {
            self.hot(self.clock.now).express_arrival(node, q, t);
        }
        self.events.wakes.router(t, node);
    }

    fn cycle(&mut self, t: u64) {
        self.clock.now = t;
        self.clock.floor = t + 1;
        if t - self.clock.epoch >= EPOCH_SPAN {
            let delta = (t - self.clock.epoch) as Rel;
            self.fab.rings.rebase(&mut self.fab.queues, delta);
            self.clock.epoch = t;
        }
        let mut bucket = std::mem::take(&mut self.events.bucket);
        self.events.wakes.take(t, &mut bucket);
        for &node in &bucket.routers {
            self.events.pending.insert(node);
        }
        for &out_channel in &bucket.credits {
            let ch = &mut self.fab.outch[out_channel as usize];
            ch.credits += 1;
            // A router with credits left on this channel was not waiting for it.
            if ch.credits == 1 {
                let node = ch.node;
                self.events.pending.insert(node);
            }
        }
        bucket.clear();
        self.events.bucket = bucket;

        if self.streams.busy() {
            self.express_events(t);
        }
        if !self.streams.next_sources.is_empty() {
            let next = std::mem::take(&mut self.streams.next_sources);
            self.streams.sources.extend(&next);
            self.streams.next_sources = next;
            self.streams.next_sources.clear();
        }
        while let Some((when, node)) = self.events.timers.pop_due(t) {
            crate::prefetch::wakes_ahead(self);
            if self.fab.wake[node as usize] != when {
                continue;
            }
            self.fab.wake[node as usize] = u64::MAX;
            let r = &self.fab.routers[node as usize];
            let (pe, sources) = (r.pe, r.flags & crate::fabric::SOURCES != 0);
            if pe != NONE {
                self.out.stats.pe_wakes += 1;
                self.wake_pe(pe, t);
            }
            if sources && self.streams.on {
                self.express_sources(node, t);
            }
            self.activate(node);
        }
        if !self.streams.late.is_empty() {
            self.express_late(t);
        }
        if !self.streams.sends.is_empty() || !self.streams.sources.is_empty() {
            self.express_start(t);
        }

        let mut list = std::mem::take(&mut self.events.list);
        self.events.pending.drain_into(&mut list);
        self.out.stats.router_steps += list.len() as u64;
        let moved = {
            let mut hot = self.hot(t);
            match crate::prefetch::size(&hot) {
                Size::Large => router_pass::<Large>(&mut hot, &list),
                Size::Small => router_pass::<Small>(&mut hot, &list),
                Size::Tiny => router_pass::<Tiny>(&mut hot, &list),
            }
        };
        if moved {
            self.out.stats.event(t);
        }
        list.clear();
        self.events.list = list;
        if !self.streams.recover.is_empty() {
            for (x, r) in std::mem::take(&mut self.streams.recover) {
                if self.streams.list[x as usize].alive {
                    self.cover(x, r, None);
                }
            }
        }
    }

    /// Record an error at cycle `t` for local `node`.
    pub(crate) fn fail(&mut self, t: u64, node: u32, e: SimError) {
        self.out
            .errors
            .push((t, self.setup.globals[node as usize], e));
    }
}

/// Step the routers of `list` in order, prefetching ahead by `D`'s distances; whether any
/// moved a wavelet.
#[inline(never)]
fn router_pass<D: Distances>(hot: &mut CycleState<'_>, list: &[u32]) -> bool {
    hot.pending_at = hot.t + 1;
    let mut moved = false;
    let mut ahead = Ahead::<D>::start(hot, list);
    for (i, &node) in list.iter().enumerate() {
        ahead.step(hot, list, i);
        let (m, stay) = hot.step_router(node);
        moved |= m;
        if stay {
            hot.activate(node);
        }
    }
    moved
}

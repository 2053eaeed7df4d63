//! The fabric's state inside one partition: nodes (router + optional PE), router queues,
//! output channels with their flow-control credits, PEs, edge streams. Plain data that the
//! engine modules act on, but for a PE's receives: posting one and delivering a wavelet into
//! one ([`Pe::post_recv`], [`Pe::deliver`]) keep its mask of open colors.
//!
//! Hot state is compact and flat: all queues of a partition share one buffer of wavelets, and
//! a router is touched only when something arrives, a credit returns, or its PE acts.

use crate::pacer::Pacer;
use crate::program::{Color, Program, TaskId};
use crate::waits::PeWaits;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use wsel_target::Coord;

/// "None" for u32 indices.
pub(crate) const NONE: u32 = u32::MAX;

/// Output ports in the order routers serve them: the four links, then the ramp.
pub(crate) const OUTPUTS: usize = 5;
/// Index of the ramp among outputs and in port masks.
pub(crate) const RAMP: usize = 4;

/// The most router input queues (color, receive port pairs) one router may have; the
/// router keeps them in 64-bit masks.
pub(crate) const MAX_QUEUES_PER_ROUTER: u32 = 64;

/// A router and, if the program places code there, its PE: the one cache line a router step
/// reads. Cold per-node data is in [`NodeInfo`].
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub(crate) struct Node {
    /// Per output port (N, S, E, W, ramp): local queues (bit i = queue `q_start + i`) whose
    /// head wavelet still has to go there. A queue holds wavelets exactly when it has a bit in
    /// one of these masks.
    pub want: [u64; OUTPUTS],
    /// Colors whose ramp queue is full (the PE cannot inject on them).
    pub ramp_full: u64,
    /// Local queue range.
    pub q_start: u32,
    /// Local PE index or NONE.
    pub pe: u32,
    /// Per output port: the queue bit after the one served last (round-robin).
    pub rr: [u8; OUTPUTS],
    pub q_len: u8,
    /// [`SOURCES`] | [`SENDING`].
    pub flags: u8,
    /// Bit per output port whose `want` mask is not 0 (so a step tests one byte): not 0
    /// exactly when a queue of the router holds a wavelet.
    pub ports: u8,
}

// A router step reads one cache line of its node.
const _: () = assert!(std::mem::size_of::<Node>() == 64);

/// `Node::flags`: edge sources feed this router.
pub(crate) const SOURCES: u8 = 1;
/// `Node::flags`: the PE may have sends in progress.
pub(crate) const SENDING: u8 = 2;
/// `Node::flags`: an express stream reserves a port here (see `express.rs`).
pub(crate) const EXPRESS: u8 = 4;

impl Node {
    /// The output ports whose `want` mask is not 0, computed from the masks (for checking
    /// `ports`).
    pub(crate) fn want_ports(&self) -> u8 {
        let mut ports = 0;
        for (o, w) in self.want.iter().enumerate() {
            ports |= u8::from(*w != 0) << o;
        }
        ports
    }
}

/// What a router step does not need.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NodeInfo {
    /// Cycle of the pending timer, or u64::MAX.
    pub wake: u64,
    pub at: Coord,
    /// Local range of edge sources feeding this router.
    pub src_start: u32,
    pub src_len: u32,
    /// The express stream reserving an output port here, or NONE.
    pub express: u32,
    /// The reserved port (bit mask).
    pub reserved: u8,
}

/// A router input queue: wavelets of one color that came in through one port. The wavelets
/// are in a ring of `Partition::qstride` slots: in the record itself (`slots`) when the
/// queue depth is at most [`INLINE_SLOTS`], so that a push or a pop touches one cache line,
/// else in `Partition::qdata`.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub(crate) struct Queue {
    /// Output channel per link direction (N, S, E, W) in `tx`, else NONE.
    pub och: [u32; 4],
    /// The upstream output channel (in partition `up_part`) that gets a credit back, one hop
    /// latency after a wavelet leaves; NONE for the ramp or an edge source, which look at the
    /// queue's length directly.
    pub up_och: u32,
    /// The node of `up_och` (when it is in this partition).
    pub up_node: u32,
    pub node: u32,
    pub up_part: u16,
    pub color: Color,
    /// The port the wavelets came in through (0..5).
    pub rx: u8,
    /// Ports to forward to (bit mask, ramp = bit 4).
    pub tx: u8,
    /// Ports the head wavelet has already gone to.
    pub sent: u8,
    /// The link port (0..4) this queue forwards to when it is its only port and no other
    /// queue of the router forwards there; otherwise 0xFF.
    pub solo: u8,
    pub head: u8,
    pub len: u8,
    /// The ring of wavelets when the depth is at most [`INLINE_SLOTS`].
    pub slots: [u32; INLINE_SLOTS],
}

/// Queue depths up to this keep their wavelets in the queue record.
pub(crate) const INLINE_SLOTS: usize = 4;

/// Whether queues of `qstride` slots keep their wavelets in their records.
pub(crate) fn inline_slots(qstride: u32) -> bool {
    qstride as usize <= INLINE_SLOTS
}

// A queue record is one cache line.
const _: () = assert!(std::mem::size_of::<Queue>() == 64);

/// One router output for one color: a link to a neighbour's queue, or a host output.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OutChannel {
    /// Free slots in the downstream queue as far as this router knows.
    pub credits: u32,
    /// Local queue downstream (links only), in partition `dest_part`.
    pub dest_queue: u32,
    /// Its node.
    pub dest_node: u32,
    pub dest_part: u32,
    /// Local sink index for host outputs, else NONE.
    pub sink: u32,
    /// The local node this channel leaves from.
    pub node: u32,
    /// Wavelets sent through it (the report's link and color counts come from these).
    pub sent: u64,
    /// Credits returned early (see `Hot::sent_head`) are all due by this cycle.
    pub early_until: u64,
}

/// A posted receive, and as many identical ones posted right after it on its color.
#[derive(Clone, Debug)]
pub(crate) struct RecvState {
    pub color: Color,
    /// Identical receives (same color, size, offset and task) that follow this one: std.nn's
    /// `dense_stream` posts one per region column per weight row, most of them alike.
    pub repeat: u16,
    pub n: u32,
    pub done: u32,
    pub offset: u32,
    pub then: TaskId,
}

impl RecvState {
    /// How many wavelets it and each of its repeats still take.
    fn missing(&self) -> impl Iterator<Item = u32> {
        std::iter::once(self.n - self.done).chain(std::iter::repeat_n(self.n, self.repeat.into()))
    }
}

/// A send in progress.
#[derive(Clone, Debug)]
pub(crate) struct SendState {
    pub color: Color,
    /// The router's ramp queue for `color` (NONE until first looked up).
    pub queue: u32,
    /// The output channel of that queue's solo link port (`Queue::solo`), NONE if it has
    /// none; looked up with `queue`, so injection need not read the queue record.
    pub och: u32,
    pub data: Vec<u32>,
    pub pos: u32,
    pub then: Option<TaskId>,
    /// That solo link port (0..4), else 0xFF.
    pub solo: u8,
}

impl Pe {
    /// Post receive `r` (n > 0, no repeats); whether a receive on its color was open already
    /// (then it waits behind those, as a repeat of the last if it is identical to it).
    pub(crate) fn post_recv(&mut self, r: RecvState) -> bool {
        let bit = 1u64 << r.color;
        if self.open_recvs & bit == 0 {
            self.open_recvs |= bit;
            self.recvs.push(r);
            return false;
        }
        let same = |o: &RecvState| {
            (o.color, o.n, o.offset, o.then) == (r.color, r.n, r.offset, r.then)
                && o.repeat < u16::MAX
        };
        // The receive it would follow: the last queued on its color, else the open one.
        let queued = (self.queued_colors & bit != 0)
            .then(|| self.queued_recvs.iter().rposition(|o| o.color == r.color))
            .flatten();
        let last = match queued {
            Some(at) => &mut self.queued_recvs[at],
            None => {
                self.queued_colors &= !bit;
                let at = self.recvs.iter().position(|o| o.color == r.color);
                &mut self.recvs[at.expect("the color has an open receive")]
            }
        };
        if same(last) {
            last.repeat += 1;
        } else {
            self.queued_colors |= bit;
            self.queued_recvs.push_back(r);
        }
        true
    }

    /// How many wavelets each of the PE's posted receives on `color` still takes, in the
    /// order wavelets fill them.
    pub(crate) fn recvs_on(&self, color: Color) -> impl Iterator<Item = u32> {
        let queued = self.queued_recvs.iter().filter(move |r| r.color == color);
        self.recvs
            .iter()
            .filter(move |r| r.color == color)
            .chain(queued)
            .flat_map(RecvState::missing)
    }

    /// All of the PE's posted receives, by color, each color's in the order they fill:
    /// (color, wavelets missing, wavelets requested).
    pub(crate) fn posted_recvs(&self) -> Vec<(Color, u32, u32)> {
        let mut all: Vec<&RecvState> = self.recvs.iter().chain(&self.queued_recvs).collect();
        // Stable: a color's open receive comes before its queued ones, which are in order.
        all.sort_by_key(|r| r.color);
        all.into_iter()
            .flat_map(|r| r.missing().map(|missing| (r.color, missing, r.n)))
            .collect()
    }

    /// Receive `ri` of `recvs` completed: a repeat of it, else the next one queued on its
    /// color takes its place, or the color closes. Returns the completed receive's task.
    fn complete_recv(&mut self, ri: usize, waits: &mut PeWaits, t: u64) -> TaskId {
        let r = &mut self.recvs[ri];
        let (color, then) = (r.color, r.then);
        if r.repeat > 0 {
            r.repeat -= 1;
            r.done = 0;
            return then;
        }
        let bit = 1u64 << color;
        if self.queued_colors & bit != 0 {
            // Usually at the front: a PE that queues many receives queues them on one color.
            let next = self.queued_recvs.iter().position(|r| r.color == color);
            if let Some(next) = next.and_then(|at| self.queued_recvs.remove(at)) {
                if self.queued_recvs.is_empty() {
                    self.queued_colors = 0;
                }
                self.recvs[ri] = next;
                return then;
            }
            // The last one on the color was taken before (the bit is cleared lazily).
            self.queued_colors &= !bit;
        }
        self.open_recvs &= !bit;
        waits.closed(color, t, self.busy_until);
        self.recvs.swap_remove(ri);
        then
    }

    /// Write wavelet `data` of `color`, arriving at cycle `t`, into the PE's first receive on
    /// that color (allocating the SRAM on first use); a receive it completes queues its task
    /// for `t + 1`. Both ways a wavelet reaches a PE — a router's ramp and an express stream's
    /// closed form — come here.
    #[inline(always)]
    pub(crate) fn deliver(
        &mut self,
        program: &Program,
        waits: &mut PeWaits,
        color: Color,
        data: u32,
        t: u64,
    ) -> Delivery {
        let Some(ri) = self.recvs.iter().position(|r| r.color == color) else {
            return Delivery::NoReceive;
        };
        if self.sram.is_empty() {
            let prog = &program.pes[self.prog as usize];
            crate::pe_exec::materialize(&mut self.sram, prog.sram_bytes, &prog.sram_init);
        }
        let r = &mut self.recvs[ri];
        let at = r.offset as usize + 4 * r.done as usize;
        // The receive's range was checked against the SRAM size when it was posted.
        if let Some(dst) = self.sram.get_mut(at..at + 4) {
            dst.copy_from_slice(&data.to_le_bytes());
        }
        r.done += 1;
        if self.delivered & (1u64 << color) == 0 {
            self.delivered |= 1u64 << color;
            waits.first_delivery(color, t);
        }
        if r.done < r.n {
            return Delivery::Written;
        }
        let then = self.complete_recv(ri, waits, t);
        self.ready.push(Reverse((t + 1, self.seq, then)));
        self.seq += 1;
        Delivery::Completed
    }
}

/// What [`Pe::deliver`] did with a wavelet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// No receive on its color is posted: the wavelet stays where it is.
    NoReceive,
    Written,
    /// It completed a receive, whose task is now ready: the PE must wake at `t + 1`.
    Completed,
}

impl SendState {
    /// A send of `data` on `color`, its ramp queue not looked up yet.
    pub(crate) fn new(color: Color, data: Vec<u32>, then: Option<TaskId>) -> SendState {
        SendState {
            color,
            queue: NONE,
            och: NONE,
            data,
            pos: 0,
            then,
            solo: 0xFF,
        }
    }
}

/// A runtime call whose issue time has not come yet.
#[derive(Debug)]
pub(crate) enum Pending {
    Send(SendState),
    Recv(RecvState),
}

/// A PE. The fields a router step reads come first, in the record's first two cache lines
/// (which `prefetch.rs` fetches ahead on large partitions).
#[derive(Debug)]
#[repr(C, align(64))]
pub(crate) struct Pe {
    pub sends: Vec<SendState>,
    /// The first open receive of each color (in no particular order); the rest wait in
    /// `queued_recvs`.
    pub recvs: Vec<RecvState>,
    /// Colors with a send in `sends`.
    pub send_mask: u64,
    /// Colors of which a wavelet has been delivered (see `waits.rs`).
    pub delivered: u64,
    /// Colors with a receive in `recvs` (so that a task start or a post need not walk them).
    pub open_recvs: u64,
    /// Lazily allocated: empty until first used.
    pub sram: Vec<u8>,
    pub busy_until: u64,
    pub node: u32,
    /// The express stream this PE is sending, or NONE.
    pub express: u32,
    pub seq: u32,
    /// Last color the ramp injected (round-robin among colors).
    pub last_color: u8,
    /// Activations: (ready cycle, sequence number, task), earliest first.
    pub ready: BinaryHeap<Reverse<(u64, u32, TaskId)>>,
    /// Future runtime calls, (issue cycle, sequence number) order. Calls only ever join at
    /// the back: a task starts no earlier than the last one ended, so its calls are issued no
    /// earlier than any of the last one's.
    pub pending: VecDeque<(u64, u32, Pending)>,
    /// Index into `Program::pes`.
    pub prog: u32,
    pub send_colors: u64,
    pub recv_colors: u64,
    /// Receives posted while one on their color was open, in post order: `recvs` holds the
    /// first open receive of each color only, so that a PE may post hundreds (on one color:
    /// then each completes in constant time).
    pub queued_recvs: VecDeque<RecvState>,
    /// Colors that may have a receive in `queued_recvs` (a superset: cleared when a
    /// completion finds none).
    pub queued_colors: u64,
    pub busy_cycles: u64,
    pub tasks_run: u64,
}

// Four cache lines per PE: a full wafer holds 745,500 of them.
const _: () = assert!(std::mem::size_of::<Pe>() == 256);

/// A stream from the host or weight store into an edge router.
#[derive(Debug)]
pub(crate) struct Source {
    /// Local queue it feeds.
    pub queue: u32,
    pub data: Vec<u32>,
    pub pos: usize,
    pub pacer: Pacer,
    /// Index in `Program::inputs`.
    pub input: u32,
    /// For weight streams: the index of its phase among the program's weight phases (see
    /// `phases.rs`); NONE for host streams.
    pub group: u32,
    /// Not requested yet (a weight stream of a later phase): it moves nothing.
    pub waiting: bool,
    /// The cycle it was requested.
    pub requested: u64,
    /// Cycles its first and last wavelet entered the fabric.
    pub first: Option<u64>,
    pub last: Option<u64>,
    /// Cycles released wavelets waited for room in the edge queue (`StreamTiming::held_back`).
    pub held_back: u64,
}

impl Source {
    /// Whether the source has wavelets to move once its pacer allows.
    #[inline]
    pub(crate) fn live(&self) -> bool {
        !self.waiting && self.pos < self.data.len()
    }
}

/// A stream leaving the fabric to the host.
#[derive(Debug)]
pub(crate) struct Sink {
    /// Index in `Program::outputs`.
    pub output: u32,
    pub data: Vec<u32>,
    pub pacer: Pacer,
    /// Cycles its first and last wavelet left the fabric.
    pub first: Option<u64>,
    pub last: Option<u64>,
}

/// A message to another partition, delivered at `time` (≥ one hop latency later).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Msg {
    pub time: u64,
    /// Local queue index (arrival) or local output channel index (credit) at the destination.
    pub index: u32,
    /// The wavelet (arrivals only).
    pub data: u32,
    pub is_credit: bool,
}

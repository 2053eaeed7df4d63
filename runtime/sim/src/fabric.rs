//! The fabric's state inside one partition, as plain records: routers, their input queues,
//! output channels, edge streams and cross-partition messages. The PEs are in `pe.rs`; the
//! hop mechanics that act on queues are in `queue.rs` and `router.rs`.
//!
//! The state a cycle works on is compact and contiguous in processing order: routers are numbered row-major,
//! each router's queues are a contiguous range of one-line records, and a router is touched
//! only when a wavelet arrives, a credit it waits for returns, or its PE acts.

use crate::pacer::Pacer;
use wsel_target::Coord;

/// "None" for u32 indices.
pub(crate) const NONE: u32 = u32::MAX;
/// "None" for u8 port and slot numbers.
pub(crate) const NONE8: u8 = u8::MAX;

/// Output ports in the order routers serve them: the four links, then the ramp.
pub(crate) const OUTPUTS: usize = 5;
/// Index of the ramp among outputs and in port masks.
pub(crate) const RAMP: usize = 4;
/// The link ports (N, S, E, W) in a port mask.
pub(crate) const LINK_PORTS: u8 = 0b1111;

/// The most router input queues (color, receive port pairs) one router may have; the
/// router keeps them in 64-bit masks.
pub(crate) const MAX_QUEUES_PER_ROUTER: u32 = 64;

/// A router: the one cache line a router step reads first. Cold per-router data is in
/// [`RouterInfo`].
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(crate) struct Router {
    /// Per output port (N, S, E, W, ramp): local queues (bit i = queue `q_start + i`) whose
    /// head wavelet still has to go there. A queue holds present wavelets exactly when it has
    /// a bit in one of these masks.
    pub want: [u64; OUTPUTS],
    /// Queues with wavelets in flight toward them (arrived at a later cycle than the
    /// router's last step, or still on the link): the step absorbs those that are due.
    pub incoming: u64,
    /// Local queue range.
    pub q_start: u32,
    /// Local PE index or NONE.
    pub pe: u32,
    /// Per output port: the queue bit after the one served last (round-robin).
    pub rr: [u8; OUTPUTS],
    pub q_len: u8,
    /// [`SOURCES`] | [`SENDING`] | [`EXPRESS`] | [`CROSSING`].
    pub flags: u8,
    /// Bit per output port whose `want` mask is not 0 (so a step tests one byte): not 0
    /// exactly when a queue of the router holds a present wavelet.
    pub ports: u8,
}

// A router step reads one cache line of its router.
const _: () = assert!(std::mem::size_of::<Router>() == 64);

/// `Router::flags`: edge sources feed this router.
pub(crate) const SOURCES: u8 = 1;
/// `Router::flags`: the PE has sends in progress.
pub(crate) const SENDING: u8 = 2;
/// `Router::flags`: an express stream reserves a port here (see `express.rs`).
pub(crate) const EXPRESS: u8 = 4;
/// `Router::flags`: a queue of this router, or one a link of this router writes into in this
/// partition, has its ring behind a boundary (`queue::DEEP`): set at layout, so that the
/// router's steps take the path that tests ring kinds (see `CycleState::step_router`).
pub(crate) const CROSSING: u8 = 8;

impl Router {
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
pub(crate) struct RouterInfo {
    pub at: Coord,
    /// Local range of edge sources feeding this router.
    pub src_start: u32,
    pub src_len: u32,
    /// The express stream reserving an output port here, or NONE, and this router's index
    /// in its chain.
    pub express: u32,
    pub xhop: u32,
    /// The reserved port (bit mask).
    pub reserved: u8,
}

/// A router input queue: wavelets of one color that come in through one port, in a ring of
/// `queue_depth` slots — in the record itself (`slots`, `time`) when the depth is at most
/// [`INLINE_SLOTS`], so that a push or a pop touches one cache line, else in the
/// partition's `Rings` storage (see `queue.rs`).
///
/// From `head` on, the ring holds `len` present wavelets, then `fly` wavelets in flight
/// (written by the upstream router when it forwarded them, with their arrival cycle), then
/// the free slots: each free slot holds the cycle its credit returns upstream (one hop
/// latency after the wavelet that used it left the queue), the oldest first. So the upstream
/// router reads its credits from this record (see `queue.rs`): no credit events inside a
/// partition.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub(crate) struct Queue {
    /// Wavelets (inline ring).
    pub slots: [u32; INLINE_SLOTS],
    /// Per inline slot: the arrival cycle of an in-flight wavelet, or the credit-due cycle
    /// of a free slot, relative to the partition's epoch (see `queue.rs`).
    pub time: [u32; INLINE_SLOTS],
    /// Output channel per link direction (N, S, E, W) in `tx`, else NONE.
    pub out: [u32; 4],
    /// The router.
    pub node: u32,
    /// The local router upstream (to wake when a credit it waits for returns); NONE for
    /// the ramp or an edge source; for a router in another partition, [`REMOTE_UP`] | the
    /// index of its channel in `Partition::remote_ups`.
    pub up: u32,
    pub head: u8,
    pub len: u8,
    pub fly: u8,
    /// Ports the head wavelet has already gone to.
    pub sent: u8,
    /// Ports to forward to (bit mask, ramp = bit 4).
    pub tx: u8,
    /// The color (bits 0..6, below `wsel_target::MAX_COLORS`) and where the ring is (bits
    /// 6..8: `queue::INLINE`, `EXTERNAL` or `DEEP`, set by `Rings::place`), which every ring
    /// access tests: [`Queue::color`], [`Queue::ring`].
    color_ring: u8,
    /// The PE's send slot (ramp queues) or receive slot (queues delivering to the ramp).
    pub slot: u8,
    /// The receive port (bits 0..2, [`RAMP`] for the ramp), the solo port (bits 4..6, 7 for
    /// none) and the flags [`FILTERED`] and [`UP_WAITS`].
    pub bits: u8,
}

/// Queue depths up to this keep their wavelets in the queue record.
pub(crate) const INLINE_SLOTS: usize = 4;

// A queue's color and ring kind share a byte.
const _: () = assert!(wsel_target::MAX_COLORS <= 64);

// A queue record is one cache line.
const _: () = assert!(std::mem::size_of::<Queue>() == 64);

/// `Queue::bits`: the upstream router found no credit and waits for one (the next pop wakes
/// it when the credit returns).
pub(crate) const UP_WAITS: u8 = 0x80;
/// `Queue::bits`: the route has a ramp filter or a switch (see [`Filter`]): the ports the
/// head wavelet goes to depend on its position in the stream or the switch's position.
pub(crate) const FILTERED: u8 = 0x08;
/// `Queue::up`: the upstream router is in another partition (credits go back as messages).
pub(crate) const REMOTE_UP: u32 = 1 << 31;

/// The state of a queue whose route has a ramp filter (`program::RampFilter`) or a switch
/// (`program::Switch`, then `switch` is set and the ramp filter's fields are unused).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Filter {
    /// The queue.
    pub queue: u32,
    pub keep: u32,
    pub period: u32,
    /// The head wavelet's position in the period (wavelets that left the queue, modulo the
    /// period).
    pub count: u32,
    /// The queue's switch positions (see `switches.rs`).
    pub switch: Option<crate::switches::SwitchHead>,
}

impl Filter {
    /// The ports the head wavelet of a queue forwarding to `tx` goes to.
    pub(crate) fn head_tx(&self, tx: u8) -> u8 {
        if let Some(s) = &self.switch {
            s.tx()
        } else if self.count < self.keep {
            1 << RAMP
        } else {
            tx & LINK_PORTS
        }
    }
}

/// The ports the head wavelet of local queue `qi` goes to (its route's, or what its ramp
/// filter sends it to).
#[inline(always)]
pub(crate) fn head_tx(q: &Queue, qi: u32, filters: &[Filter]) -> u8 {
    if q.bits & FILTERED == 0 {
        return q.tx;
    }
    match filters.binary_search_by_key(&qi, |f| f.queue) {
        Ok(f) => filters[f].head_tx(q.tx),
        Err(_) => q.tx,
    }
}

impl Queue {
    /// The port its wavelets come in through (0..5).
    #[inline(always)]
    pub(crate) fn rx(&self) -> u8 {
        self.bits & 0x7
    }

    /// The link port (0..4) this queue forwards to when it is its only port and no other
    /// queue of the router forwards there; otherwise [`NONE8`].
    #[inline(always)]
    pub(crate) fn solo(&self) -> u8 {
        match (self.bits >> 4) & 0x7 {
            7 => NONE8,
            s => s,
        }
    }

    /// The color of its wavelets.
    #[inline(always)]
    pub(crate) fn color(&self) -> u8 {
        self.color_ring & 0x3f
    }

    /// Where its ring is (see `queue.rs`).
    #[inline(always)]
    pub(crate) fn ring(&self) -> u8 {
        self.color_ring >> 6
    }

    pub(crate) fn set_ring(&mut self, ring: u8) {
        self.color_ring = (self.color_ring & 0x3f) | (ring << 6);
    }

    /// A queue of `color` from port `rx` to the ports `tx`, at `node`, empty (its ring not
    /// placed yet: `Rings::place`).
    pub(crate) fn new(node: u32, color: u8, rx: u8, tx: u8) -> Queue {
        debug_assert!(color < 64, "validated against the target's colors");
        Queue {
            slots: [0; INLINE_SLOTS],
            time: [0; INLINE_SLOTS],
            out: [NONE; 4],
            node,
            up: NONE,
            head: 0,
            len: 0,
            fly: 0,
            sent: 0,
            tx,
            color_ring: color,
            slot: NONE8,
            bits: rx | 0x70,
        }
    }

    /// Mark `port` (0..4) as the queue's solo port.
    pub(crate) fn set_solo(&mut self, port: u8) {
        self.bits = (self.bits & !0x70) | (port << 4);
    }
}

/// One router output for one color: a link to a neighbour's queue, or a host output.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OutChannel {
    /// Local queue downstream (links only), in partition `dest_part`.
    pub dest_queue: u32,
    /// Its router.
    pub dest_node: u32,
    pub dest_part: u32,
    /// Local sink index for host outputs, else NONE.
    pub sink: u32,
    /// Credits (links into another partition only: a local link's credits are read from the
    /// downstream queue).
    pub credits: u32,
    /// The local router this channel leaves from.
    pub node: u32,
    /// Cycles the link takes (the hop latency, more if it crosses a boundary).
    pub latency: u32,
    /// Wavelets sent through it (the report's link and color counts come from these).
    pub sent: u64,
}

/// A link into a queue of this partition, as a send slot keeps it for its solo port (see
/// `pe::SendSlot`): the injection forwards through it without reading the output channel.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LocalLink {
    /// The downstream queue, or NONE (no solo port, an edge, or another partition).
    pub queue: u32,
    /// Its router.
    pub node: u32,
    /// The link's latency.
    pub latency: u32,
}

impl LocalLink {
    pub(crate) const NONE: LocalLink = LocalLink {
        queue: NONE,
        node: NONE,
        latency: 0,
    };
}

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
    /// An express stream carries its wavelets (the router does not inject them).
    pub express: bool,
    /// Releases to let pass before the next try to start an express stream (it failed).
    pub xskip: u32,
    /// Tries that failed in a row.
    pub xfail: u8,
}

impl Source {
    /// Whether the source has wavelets to move once its pacer allows.
    #[inline]
    pub(crate) fn live(&self) -> bool {
        !self.waiting && !self.express && self.pos < self.data.len()
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

/// A message to another partition, taking effect at `time` (≥ one hop latency later).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Msg {
    pub time: u64,
    /// Local queue index (arrival) or local output channel index (credit) at the destination.
    pub index: u32,
    /// The wavelet (arrivals only).
    pub data: u32,
    pub is_credit: bool,
}

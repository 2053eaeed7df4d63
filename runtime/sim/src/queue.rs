//! The ring of one router input queue, and the flow control it carries.
//!
//! A queue of depth `Q` is a ring of exactly `Q` slots (see [`crate::fabric::Queue`]): from
//! `head` on, `len` present wavelets, then `fly` wavelets in flight, then the free slots. A
//! queue behind a link that crosses a boundary of the target has a deeper ring of its own
//! (`max(Q, 2·(L + B))`) and a longer link (`L + B`): [`Rings::depth_of`],
//! [`Rings::up_latency`].
//!
//! - **Arrivals.** A router forwarding a wavelet over a link writes it straight into the
//!   downstream queue's next slot, with its arrival cycle (the link's latency later); it counts as
//!   in flight until the downstream router's step of that cycle or later absorbs it. Nothing
//!   else looks at a queue between the two, so the wavelet is where the model says it is
//!   whichever router steps first in a cycle.
//! - **Credits.** When a wavelet leaves the queue, its slot becomes free and records the
//!   cycle its credit is back upstream (the link's latency later). Slots are used in ring order,
//!   so the free slot right after the in-flight ones is the oldest: the upstream router holds
//!   a credit exactly when that slot exists and its cycle has come — which it reads from this
//!   record, the one it writes the wavelet into. (Over a link into another partition, credits
//!   travel as messages instead; see `router.rs`.)
//!
//! Every access takes a const parameter `ANY`: false where the caller knows the ring is in
//! the queue's record (a router's common step, see `router.rs`), so that no kind is tested;
//! true everywhere else.
//!
//! Cycles are stored in 32 bits relative to the partition's epoch, which moves forward (and
//! every stored cycle with it, see [`Rings::rebase`]) before they could overflow.

use crate::fabric::{INLINE_SLOTS, NONE, Queue};

/// Where the queues' slots are: in their records for depths up to [`INLINE_SLOTS`], else in
/// arrays of `depth` slots per queue; the queues behind links that cross a boundary of the
/// target (`wsel_target::Boundary`) in arrays of their own, deeper rings.
#[derive(Debug, Default)]
pub(crate) struct Rings {
    /// The depth of every queue but the boundary queues.
    pub depth: u32,
    data: Vec<u32>,
    time: Vec<u32>,
    /// By ring kind ([`Queue::ring`]): the queue's depth and the latency of the link into
    /// it (so that neither is a branch).
    depths: [u32; 4],
    latencies: [u32; 4],
    /// Per queue, its index among the boundary queues, or [`NONE`]; empty while there is
    /// none. Read only for a queue whose record says [`DEEP`].
    crossing: Vec<u32>,
    /// The number of queues.
    queues: usize,
    /// The boundary queues' slots.
    deep: Deep,
}

/// The rings of the queues behind links that cross a boundary.
#[derive(Debug, Default)]
struct Deep {
    data: Vec<u32>,
    time: Vec<u32>,
}

/// [`Queue::ring`]: the ring is in the queue's record…
pub(crate) const INLINE: u8 = 0;
/// …in the arrays of the queues deeper than [`INLINE_SLOTS`]…
pub(crate) const EXTERNAL: u8 = 1;
/// …or in the boundary queues' arrays.
pub(crate) const DEEP: u8 = 2;

/// A cycle relative to the epoch ([`Rings::rebase`] keeps them below 2^31).
pub(crate) type Rel = u32;

impl Rings {
    /// Rings of `depth` slots for `queues` queues behind links of `latency` cycles; a queue
    /// placed behind a boundary ([`Rings::place`]) has `boundary.0` slots and a link of `boundary.1`.
    pub(crate) fn new(depth: u32, latency: u32, boundary: (u32, u32), queues: usize) -> Rings {
        let external = if Rings::inline(depth) {
            0
        } else {
            queues * depth as usize
        };
        Rings {
            depth,
            data: vec![0; external],
            time: vec![0; external],
            depths: [depth, depth, boundary.0, 0],
            latencies: [latency, latency, boundary.1, 0],
            crossing: Vec::new(),
            queues,
            deep: Deep::default(),
        }
    }

    /// Whether every ring not behind a boundary is in its queue's record.
    pub(crate) fn all_inline(&self) -> bool {
        Rings::inline(self.depth)
    }

    /// Whether rings of `depth` slots fit in the queues' records.
    fn inline(depth: u32) -> bool {
        depth as usize <= INLINE_SLOTS
    }

    /// Place queue `qi`'s ring (`q`, not yet in the partition's array): in its record or
    /// the arrays of the ordinary queues, or, behind a link that crosses a boundary, in a
    /// deep ring of its own. The kind is kept in the record ([`Queue::ring`]), which every
    /// access reads anyway.
    pub(crate) fn place(&mut self, q: &mut Queue, qi: u32, crosses: bool) {
        if !crosses {
            q.set_ring(if Rings::inline(self.depth) {
                INLINE
            } else {
                EXTERNAL
            });
            return;
        }
        q.set_ring(DEEP);
        if self.crossing.is_empty() {
            self.crossing = vec![NONE; self.queues];
        }
        let depth = self.depths[usize::from(DEEP)] as usize;
        self.crossing[qi as usize] = (self.deep.data.len() / depth) as u32;
        let slots = self.deep.data.len() + depth;
        self.deep.data.resize(slots, 0);
        self.deep.time.resize(slots, 0);
    }

    /// Whether queue `q` is behind a link that crosses a boundary.
    #[inline(always)]
    pub(crate) fn crosses(q: &Queue) -> bool {
        q.ring() == DEEP
    }

    /// The depth of queue `q`.
    #[inline(always)]
    pub(crate) fn depth_of<const ANY: bool>(&self, q: &Queue) -> u32 {
        self.depths[usize::from(kind::<ANY>(q))]
    }

    /// The latency of the link into queue `q`: its credits go back upstream this many
    /// cycles after a wavelet leaves it.
    #[inline(always)]
    pub(crate) fn up_latency<const ANY: bool>(&self, q: &Queue) -> u32 {
        self.latencies[usize::from(kind::<ANY>(q))]
    }

    /// Ring position `k` places after the head of queue `q`.
    #[inline(always)]
    pub(crate) fn pos<const ANY: bool>(&self, q: &Queue, k: u32) -> u32 {
        let depth = self.depth_of::<ANY>(q);
        let p = u32::from(q.head) + k;
        if p >= depth { p - depth } else { p }
    }

    /// Where slot `i` of queue `qi` (`q`) is: one test of the record's ring kind for the
    /// common inline ring, the boundary index read only for a deep one.
    #[inline(always)]
    fn slot<const ANY: bool>(&self, q: &Queue, qi: u32, i: u32) -> Slot {
        match kind::<ANY>(q) {
            INLINE => Slot::Inline(i as usize % INLINE_SLOTS),
            EXTERNAL => Slot::External((qi * self.depth + i) as usize),
            _ => Slot::Deep((self.crossing[qi as usize] * self.depth_of::<ANY>(q) + i) as usize),
        }
    }

    /// The wavelet in slot `i` of queue `qi`.
    #[inline(always)]
    pub(crate) fn data<const ANY: bool>(&self, q: &Queue, qi: u32, i: u32) -> u32 {
        match self.slot::<ANY>(q, qi, i) {
            Slot::Inline(i) => q.slots[i],
            Slot::External(e) => self.data[e],
            Slot::Deep(e) => self.deep.data[e],
        }
    }

    /// The cycle in slot `i` of queue `qi`.
    #[inline(always)]
    pub(crate) fn time<const ANY: bool>(&self, q: &Queue, qi: u32, i: u32) -> Rel {
        match self.slot::<ANY>(q, qi, i) {
            Slot::Inline(i) => q.time[i],
            Slot::External(e) => self.time[e],
            Slot::Deep(e) => self.deep.time[e],
        }
    }

    #[inline(always)]
    fn set_data<const ANY: bool>(&mut self, q: &mut Queue, qi: u32, i: u32, data: u32) {
        match self.slot::<ANY>(q, qi, i) {
            Slot::Inline(i) => q.slots[i] = data,
            Slot::External(e) => self.data[e] = data,
            Slot::Deep(e) => self.deep.data[e] = data,
        }
    }

    #[inline(always)]
    fn set_time<const ANY: bool>(&mut self, q: &mut Queue, qi: u32, i: u32, time: Rel) {
        match self.slot::<ANY>(q, qi, i) {
            Slot::Inline(i) => q.time[i] = time,
            Slot::External(e) => self.time[e] = time,
            Slot::Deep(e) => self.deep.time[e] = time,
        }
    }

    /// Set slot `i` of queue `qi` (rebuilding a queue, see `materialize.rs`).
    pub(crate) fn set_slot(&mut self, q: &mut Queue, qi: u32, i: u32, data: u32, time: Rel) {
        self.set_data::<true>(q, qi, i, data);
        self.set_time::<true>(q, qi, i, time);
    }

    /// The head wavelet of queue `qi` (present).
    #[inline(always)]
    pub(crate) fn head<const ANY: bool>(&self, q: &Queue, qi: u32) -> u32 {
        self.data::<ANY>(q, qi, u32::from(q.head))
    }

    /// A wavelet forwarded to queue `qi` at `now`, arriving at cycle `arrive`, if the
    /// upstream router holds a credit; if not, the cycle it gets one back, if a free slot's
    /// credit is on its way (`Err(None)`: the queue is full). The credit is the slot the
    /// wavelet takes, so its position is found once.
    #[inline(always)]
    pub(crate) fn send<const ANY: bool>(
        &mut self,
        q: &mut Queue,
        qi: u32,
        data: u32,
        now: Rel,
        arrive: Rel,
    ) -> Result<(), Option<Rel>> {
        let used = u32::from(q.len) + u32::from(q.fly);
        if used >= self.depth_of::<ANY>(q) {
            return Err(None);
        }
        let i = self.pos::<ANY>(q, used);
        let due = self.time::<ANY>(q, qi, i);
        if due > now {
            return Err(Some(due));
        }
        self.fly_into::<ANY>(q, qi, i, data, arrive);
        Ok(())
    }

    /// A wavelet forwarded to queue `qi` arriving at cycle `arrive` (the upstream router held
    /// a credit).
    #[inline(always)]
    pub(crate) fn push_flight<const ANY: bool>(
        &mut self,
        q: &mut Queue,
        qi: u32,
        data: u32,
        arrive: Rel,
    ) {
        let i = self.pos::<ANY>(q, u32::from(q.len) + u32::from(q.fly));
        self.fly_into::<ANY>(q, qi, i, data, arrive);
    }

    /// Slot `i` of queue `qi`, its first free one, takes a wavelet in flight until `arrive`.
    #[inline(always)]
    fn fly_into<const ANY: bool>(
        &mut self,
        q: &mut Queue,
        qi: u32,
        i: u32,
        data: u32,
        arrive: Rel,
    ) {
        self.set_data::<ANY>(q, qi, i, data);
        self.set_time::<ANY>(q, qi, i, arrive);
        q.fly += 1;
    }

    /// A wavelet entering queue `qi` from the PE's ramp or an edge source (there is room): it
    /// is present at once.
    #[inline(always)]
    pub(crate) fn push_present<const ANY: bool>(&mut self, q: &mut Queue, qi: u32, data: u32) {
        debug_assert_eq!(q.fly, 0, "ramp and edge queues have nothing in flight");
        let i = self.pos::<ANY>(q, u32::from(q.len));
        self.set_data::<ANY>(q, qi, i, data);
        q.len += 1;
    }

    /// Make the in-flight wavelets of queue `qi` that have arrived by `now` present.
    #[inline(always)]
    pub(crate) fn absorb<const ANY: bool>(&self, q: &mut Queue, qi: u32, now: Rel) {
        while q.fly > 0 && self.time::<ANY>(q, qi, self.pos::<ANY>(q, u32::from(q.len))) <= now {
            q.len += 1;
            q.fly -= 1;
        }
    }

    /// The head wavelet of queue `qi` leaves; its slot's credit is back upstream at `due`.
    #[inline(always)]
    pub(crate) fn pop<const ANY: bool>(&mut self, q: &mut Queue, qi: u32, due: Rel) {
        let head = u32::from(q.head);
        self.set_time::<ANY>(q, qi, head, due);
        q.head = self.pos::<ANY>(q, 1) as u8;
        q.len -= 1;
    }

    /// Move the epoch forward by `delta` cycles: every stored cycle moves back by as much
    /// (cycles already past become 0, which is still past).
    pub(crate) fn rebase(&mut self, queues: &mut [Queue], delta: u32) {
        for q in queues.iter_mut() {
            for t in &mut q.time {
                *t = t.saturating_sub(delta);
            }
        }
        for t in self.time.iter_mut().chain(&mut self.deep.time) {
            *t = t.saturating_sub(delta);
        }
    }
}

/// The ring kind of queue `q` (its record's, [`Queue::ring`]), or [`INLINE`] when the caller
/// knows it is (`ANY` false: a router step without rings behind a boundary, see
/// `fabric::CROSSING`, in a partition whose queues are not deeper than [`INLINE_SLOTS`]).
#[inline(always)]
fn kind<const ANY: bool>(q: &Queue) -> u8 {
    debug_assert!(ANY || q.ring() == INLINE);
    if ANY { q.ring() } else { INLINE }
}

/// Where a slot of a ring is (see [`Rings::slot`]).
#[derive(Clone, Copy)]
enum Slot {
    /// In the queue's record.
    Inline(usize),
    /// In the rings of the queues deeper than [`INLINE_SLOTS`].
    External(usize),
    /// In the rings of the boundary queues.
    Deep(usize),
}

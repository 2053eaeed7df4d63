//! The ring of one router input queue, and the flow control it carries.
//!
//! A queue of depth `Q` is a ring of exactly `Q` slots (see [`crate::fabric::Queue`]): from
//! `head` on, `len` present wavelets, then `fly` wavelets in flight, then the free slots.
//!
//! - **Arrivals.** A router forwarding a wavelet over a link writes it straight into the
//!   downstream queue's next slot, with its arrival cycle (one hop latency later); it counts as
//!   in flight until the downstream router's step of that cycle or later absorbs it. Nothing
//!   else looks at a queue between the two, so the wavelet is where the model says it is
//!   whichever router steps first in a cycle.
//! - **Credits.** When a wavelet leaves the queue, its slot becomes free and records the
//!   cycle its credit is back upstream (one hop latency later). Slots are used in ring order,
//!   so the free slot right after the in-flight ones is the oldest: the upstream router holds
//!   a credit exactly when that slot exists and its cycle has come — which it reads from this
//!   record, the one it writes the wavelet into. (Over a link into another partition, credits
//!   travel as messages instead; see `router.rs`.)
//!
//! Cycles are stored in 32 bits relative to the partition's epoch, which moves forward (and
//! every stored cycle with it, see [`Rings::rebase`]) before they could overflow.

use crate::fabric::{INLINE_SLOTS, Queue};

/// Where the queues' slots are: in their records for depths up to [`INLINE_SLOTS`], else in
/// arrays of `depth` slots per queue.
#[derive(Debug, Default)]
pub(crate) struct Rings {
    pub depth: u32,
    inline: bool,
    data: Vec<u32>,
    time: Vec<u32>,
}

/// A cycle relative to the epoch ([`Rings::rebase`] keeps them below 2^31).
pub(crate) type Rel = u32;

impl Rings {
    /// Rings of `depth` slots for `queues` queues.
    pub(crate) fn new(depth: u32, queues: usize) -> Rings {
        let inline = depth as usize <= INLINE_SLOTS;
        let external = if inline { 0 } else { queues * depth as usize };
        Rings {
            depth,
            inline,
            data: vec![0; external],
            time: vec![0; external],
        }
    }

    /// Ring position `k` places after `head`.
    #[inline(always)]
    pub(crate) fn pos(&self, head: u8, k: u32) -> u32 {
        let p = u32::from(head) + k;
        if p >= self.depth { p - self.depth } else { p }
    }

    #[inline(always)]
    fn ext(&self, qi: u32, i: u32) -> usize {
        (qi * self.depth + i) as usize
    }

    /// The wavelet in slot `i` of queue `qi`.
    #[inline(always)]
    pub(crate) fn data(&self, q: &Queue, qi: u32, i: u32) -> u32 {
        if self.inline {
            q.slots[i as usize % INLINE_SLOTS]
        } else {
            self.data[self.ext(qi, i)]
        }
    }

    /// The cycle in slot `i` of queue `qi`.
    #[inline(always)]
    pub(crate) fn time(&self, q: &Queue, qi: u32, i: u32) -> Rel {
        if self.inline {
            q.time[i as usize % INLINE_SLOTS]
        } else {
            self.time[self.ext(qi, i)]
        }
    }

    #[inline(always)]
    fn set_data(&mut self, q: &mut Queue, qi: u32, i: u32, data: u32) {
        if self.inline {
            q.slots[i as usize % INLINE_SLOTS] = data;
        } else {
            let e = self.ext(qi, i);
            self.data[e] = data;
        }
    }

    #[inline(always)]
    fn set_time(&mut self, q: &mut Queue, qi: u32, i: u32, time: Rel) {
        if self.inline {
            q.time[i as usize % INLINE_SLOTS] = time;
        } else {
            let e = self.ext(qi, i);
            self.time[e] = time;
        }
    }

    /// Set slot `i` of queue `qi` (rebuilding a queue, see `materialize.rs`).
    pub(crate) fn set_slot(&mut self, q: &mut Queue, qi: u32, i: u32, data: u32, time: Rel) {
        self.set_data(q, qi, i, data);
        self.set_time(q, qi, i, time);
    }

    /// The head wavelet of queue `qi` (present).
    #[inline(always)]
    pub(crate) fn head(&self, q: &Queue, qi: u32) -> u32 {
        self.data(q, qi, u32::from(q.head))
    }

    /// Whether the upstream router of queue `qi` holds a credit at `now`; if not, the cycle
    /// it gets one back, if a free slot's credit is on its way (`Err(None)`: the queue is
    /// full).
    #[inline(always)]
    pub(crate) fn credit(&self, q: &Queue, qi: u32, now: Rel) -> Result<(), Option<Rel>> {
        let used = u32::from(q.len) + u32::from(q.fly);
        if used >= self.depth {
            return Err(None);
        }
        let due = self.time(q, qi, self.pos(q.head, used));
        if due <= now { Ok(()) } else { Err(Some(due)) }
    }

    /// A wavelet forwarded to queue `qi` arriving at cycle `arrive` (the upstream router held
    /// a credit).
    #[inline(always)]
    pub(crate) fn push_flight(&mut self, q: &mut Queue, qi: u32, data: u32, arrive: Rel) {
        let i = self.pos(q.head, u32::from(q.len) + u32::from(q.fly));
        self.set_data(q, qi, i, data);
        self.set_time(q, qi, i, arrive);
        q.fly += 1;
    }

    /// A wavelet entering queue `qi` from the PE's ramp or an edge source (there is room): it
    /// is present at once.
    #[inline(always)]
    pub(crate) fn push_present(&mut self, q: &mut Queue, qi: u32, data: u32) {
        debug_assert_eq!(q.fly, 0, "ramp and edge queues have nothing in flight");
        let i = self.pos(q.head, u32::from(q.len));
        self.set_data(q, qi, i, data);
        q.len += 1;
    }

    /// Make the in-flight wavelets of queue `qi` that have arrived by `now` present.
    #[inline(always)]
    pub(crate) fn absorb(&self, q: &mut Queue, qi: u32, now: Rel) {
        while q.fly > 0 && self.time(q, qi, self.pos(q.head, u32::from(q.len))) <= now {
            q.len += 1;
            q.fly -= 1;
        }
    }

    /// The head wavelet of queue `qi` leaves; its slot's credit is back upstream at `due`.
    #[inline(always)]
    pub(crate) fn pop(&mut self, q: &mut Queue, qi: u32, due: Rel) {
        let head = u32::from(q.head);
        self.set_time(q, qi, head, due);
        q.head = self.pos(q.head, 1) as u8;
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
        for t in &mut self.time {
            *t = t.saturating_sub(delta);
        }
    }
}

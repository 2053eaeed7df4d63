//! Pending events of one partition: a ring of per-cycle buckets for wavelet arrivals and
//! credit returns (which always land exactly one hop latency ahead), and a heap of node
//! timers (task activations, delayed runtime calls, paced edge streams).
//!
//! Within one cycle the order in which buckets are drained does not matter: each arrival goes
//! to a different queue (one wavelet per link per cycle) and credits add up.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Arrivals and credits due in one cycle.
#[derive(Default, Debug)]
pub(crate) struct Bucket {
    /// (local queue, wavelet).
    pub arrivals: Vec<(u32, u32)>,
    /// Local output channels getting one credit back.
    pub credits: Vec<u32>,
}

/// The ring of buckets; bucket `t & mask` holds events of cycle `t`, for `t` in
/// `(now, now + latency]` (the ring has a power-of-two length above the latency).
#[derive(Debug)]
pub(crate) struct Wheel {
    buckets: Vec<Bucket>,
    mask: u64,
    pending: usize,
}

impl Wheel {
    pub(crate) fn new(latency: u64) -> Wheel {
        let len = (latency + 1).next_power_of_two();
        Wheel {
            buckets: (0..len).map(|_| Bucket::default()).collect(),
            mask: len - 1,
            pending: 0,
        }
    }

    #[inline]
    fn slot(&self, t: u64) -> usize {
        (t & self.mask) as usize
    }

    #[inline]
    pub(crate) fn arrival(&mut self, t: u64, queue: u32, data: u32) {
        let s = self.slot(t);
        self.buckets[s].arrivals.push((queue, data));
        self.pending += 1;
    }

    #[inline]
    pub(crate) fn credit(&mut self, t: u64, och: u32) {
        let s = self.slot(t);
        self.buckets[s].credits.push(och);
        self.pending += 1;
    }

    /// Take the bucket of cycle `t` (leaving an empty one with the same capacity behind).
    pub(crate) fn take(&mut self, t: u64, into: &mut Bucket) {
        let s = self.slot(t);
        std::mem::swap(&mut self.buckets[s], into);
        self.pending -= into.arrivals.len() + into.credits.len();
    }

    /// The earliest cycle after `now` with events, if any.
    pub(crate) fn next_after(&self, now: u64) -> Option<u64> {
        if self.pending == 0 {
            return None;
        }
        (1..=self.buckets.len() as u64).map(|d| now + d).find(|&t| {
            let b = &self.buckets[self.slot(t)];
            !b.arrivals.is_empty() || !b.credits.is_empty()
        })
    }
}

/// Node timers, earliest first, ties by node index. Stale entries are skipped by the caller.
#[derive(Default, Debug)]
pub(crate) struct Timers {
    heap: BinaryHeap<Reverse<(u64, u32)>>,
}

impl Timers {
    pub(crate) fn push(&mut self, t: u64, node: u32) {
        self.heap.push(Reverse((t, node)));
    }

    pub(crate) fn peek(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((t, _))| *t)
    }

    /// Pop the next entry due at or before `t`.
    pub(crate) fn pop_due(&mut self, t: u64) -> Option<(u64, u32)> {
        match self.heap.peek() {
            Some(Reverse((when, _))) if *when <= t => self.heap.pop().map(|Reverse(e)| e),
            _ => None,
        }
    }
}

//! Pending events of one partition: the set of routers to step in the next cycle, a ring of
//! per-cycle buckets for routers to step and remote credits at most one hop latency ahead
//! (wavelets and credits themselves are in the queues, see `queue.rs`), and node timers (task
//! activations, delayed runtime calls, paced edge streams: a calendar of per-cycle buckets for
//! the next cycles, a heap beyond).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What is due at one future cycle: routers to step (a wavelet arrives for them, or a credit
/// they wait for returns) and credits coming back over links from other partitions.
#[derive(Default, Debug)]
pub(crate) struct WakeBucket {
    /// Routers to step.
    pub routers: Vec<u32>,
    /// Local output channels into other partitions getting one credit back.
    pub credits: Vec<u32>,
}

impl WakeBucket {
    fn len(&self) -> usize {
        self.routers.len() + self.credits.len()
    }

    /// Empty both lists, keeping the allocations.
    pub(crate) fn clear(&mut self) {
        self.routers.clear();
        self.credits.clear();
    }
}

/// The ring of buckets; bucket `t & mask` holds what is due at cycle `t`, for `t` in
/// `(now, now + latency]` (everything a cycle causes lands at most one hop latency later;
/// the ring has a power-of-two length above the latency).
#[derive(Debug)]
pub(crate) struct Wakes {
    buckets: Vec<WakeBucket>,
    mask: u64,
    pending: usize,
}

impl Wakes {
    pub(crate) fn new(latency: u64) -> Wakes {
        let len = (latency + 1).next_power_of_two();
        Wakes {
            buckets: (0..len).map(|_| WakeBucket::default()).collect(),
            mask: len - 1,
            pending: 0,
        }
    }

    #[inline]
    fn slot(&self, t: u64) -> usize {
        (t & self.mask) as usize
    }

    /// Step router `node` at cycle `t`.
    #[inline]
    pub(crate) fn router(&mut self, t: u64, node: u32) {
        let s = self.slot(t);
        self.buckets[s].routers.push(node);
        self.pending += 1;
    }

    /// A credit for local output channel `out_channel` at cycle `t`.
    #[inline]
    pub(crate) fn credit(&mut self, t: u64, out_channel: u32) {
        let s = self.slot(t);
        self.buckets[s].credits.push(out_channel);
        self.pending += 1;
    }

    /// Take the bucket of cycle `t` (leaving an empty one with the same capacity behind).
    pub(crate) fn take(&mut self, t: u64, into: &mut WakeBucket) {
        let s = self.slot(t);
        std::mem::swap(&mut self.buckets[s], into);
        self.pending -= into.len();
    }

    /// The earliest cycle after `now` with something due, if any.
    pub(crate) fn next_after(&self, now: u64) -> Option<u64> {
        if self.pending == 0 {
            return None;
        }
        (1..=self.buckets.len() as u64)
            .map(|d| now + d)
            .find(|&t| self.buckets[self.slot(t)].len() > 0)
    }
}

/// Entries keyed by cycle, taken a cycle at a time (those of one cycle in the order they
/// were pushed): a bucket per cycle for the next [`SPAN`] cycles, found through a bitmap, and
/// an ordered map beyond.
#[derive(Debug)]
pub(crate) struct Calendar<T> {
    buckets: Vec<Vec<T>>,
    /// Bit per bucket that holds entries.
    occupied: [u64; (SPAN / 64) as usize],
    /// Buckets hold the cycles `base .. base + SPAN`.
    base: u64,
    far: std::collections::BTreeMap<u64, Vec<T>>,
    len: usize,
}

/// Cycles a [`Calendar`] keeps in buckets.
const SPAN: u64 = 1024;

impl<T> Default for Calendar<T> {
    fn default() -> Self {
        Calendar {
            buckets: (0..SPAN).map(|_| Vec::new()).collect(),
            occupied: [0; (SPAN / 64) as usize],
            base: 0,
            far: Default::default(),
            len: 0,
        }
    }
}

impl<T> Calendar<T> {
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Add `e` at cycle `t` (not before the last cycle taken).
    pub(crate) fn push(&mut self, t: u64, e: T) {
        debug_assert!(t >= self.base, "an entry for a cycle already taken");
        if t < self.base + SPAN {
            let s = (t % SPAN) as usize;
            self.buckets[s].push(e);
            self.occupied[s / 64] |= 1 << (s % 64);
        } else {
            self.far.entry(t).or_default().push(e);
        }
        self.len += 1;
    }

    /// The earliest cycle with entries.
    pub(crate) fn next(&self) -> Option<u64> {
        let start = self.base % SPAN;
        let words = self.occupied.len() as u64;
        let near = (0..=words).find_map(|k| {
            // Bits from `start` on, word by word around the ring.
            let w = ((start / 64 + k) % words) as usize;
            let mut bits = self.occupied[w];
            if k == 0 {
                bits &= u64::MAX << (start % 64);
            } else if k == words {
                bits &= !(u64::MAX << (start % 64));
            }
            (bits != 0).then(|| {
                let s = w as u64 * 64 + u64::from(bits.trailing_zeros());
                self.base + (s + SPAN - start) % SPAN
            })
        });
        let far = self.far.keys().next().copied();
        match (near, far) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Move every entry of cycle `t` (the earliest there is, or later) to `out`.
    pub(crate) fn take(&mut self, t: u64, out: &mut Vec<T>) {
        if t > self.base {
            self.base = t;
            while let Some(entry) = self.far.first_entry() {
                if *entry.key() >= self.base + SPAN {
                    break;
                }
                let (at, es) = entry.remove_entry();
                let s = (at % SPAN) as usize;
                self.occupied[s / 64] |= 1 << (s % 64);
                self.buckets[s].extend(es);
            }
        }
        let s = (t % SPAN) as usize;
        if self.occupied[s / 64] & (1 << (s % 64)) != 0 {
            self.occupied[s / 64] &= !(1 << (s % 64));
            self.len -= self.buckets[s].len();
            out.append(&mut self.buckets[s]);
        }
    }
}

/// Cycles ahead of the calendar's start that [`Timers`] keeps in per-cycle buckets.
const CALENDAR: u64 = 256;

/// Node timers, popped earliest first, ties by node index. Stale entries are skipped by the
/// caller. Timers for the cycles `[base, base + CALENDAR)` are kept in a bucket per cycle, any
/// other in a heap; popping merges the two. The bucket of the cycle being popped is put in
/// node order through a [`NodeSet`] (a bitmap walk instead of a sort), which also drops
/// duplicate entries: a node's second timer for the same cycle would be stale anyway, as
/// nothing can set a timer for the cycle being processed.
#[derive(Debug)]
pub(crate) struct Timers {
    /// Bucket `t % CALENDAR`: nodes of the timers of cycle `t`.
    buckets: Vec<Vec<u32>>,
    base: u64,
    /// Entries in `buckets`.
    near: usize,
    /// The cycle whose timers `current[next..]` are, in node order, or u64::MAX.
    ordered: u64,
    current: Vec<u32>,
    next: usize,
    /// Scratch set that puts a bucket in node order.
    order: NodeSet,
    far: BinaryHeap<Reverse<(u64, u32)>>,
}

impl Timers {
    /// Timers for nodes `0..nodes`.
    pub(crate) fn new(nodes: usize) -> Timers {
        Timers {
            buckets: (0..CALENDAR).map(|_| Vec::new()).collect(),
            base: 0,
            near: 0,
            ordered: u64::MAX,
            current: Vec::new(),
            next: 0,
            order: NodeSet::new(nodes),
            far: BinaryHeap::new(),
        }
    }

    pub(crate) fn push(&mut self, t: u64, node: u32) {
        if t >= self.base && t - self.base < CALENDAR {
            self.buckets[(t % CALENDAR) as usize].push(node);
            self.near += 1;
        } else {
            self.far.push(Reverse((t, node)));
        }
    }

    /// The first cycle with a bucket entry.
    fn first_near(&self) -> Option<u64> {
        if self.next < self.current.len() {
            return Some(self.ordered);
        }
        if self.near == 0 {
            return None;
        }
        (self.base..self.base + CALENDAR)
            .find(|&c| !self.buckets[(c % CALENDAR) as usize].is_empty())
    }

    pub(crate) fn peek(&self) -> Option<u64> {
        let far = self.far.peek().map(|Reverse((t, _))| *t);
        match (self.first_near(), far) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Put the timers of cycle `c` (those still in its bucket and those not yet popped from
    /// `current`) in node order in `current`.
    fn order(&mut self, c: u64) {
        let bucket = &mut self.buckets[(c % CALENDAR) as usize];
        self.near -= bucket.len();
        for node in bucket.drain(..).chain(self.current.drain(self.next..)) {
            self.order.insert(node);
        }
        self.current.clear();
        self.order.drain_into(&mut self.current);
        self.next = 0;
        self.ordered = c;
    }

    /// The node of the timer `k` places after the next one to pop in the cycle being popped,
    /// if known (for prefetching; it may be stale or beyond `t`).
    #[inline]
    pub(crate) fn ahead(&self, k: usize) -> Option<u32> {
        self.current.get(self.next + k).copied()
    }

    /// Pop the next entry due at or before `t`.
    pub(crate) fn pop_due(&mut self, t: u64) -> Option<(u64, u32)> {
        if self.next == self.current.len() {
            // Move the calendar's start up to `t`, over empty buckets only.
            if self.near == 0 {
                self.base = self.base.max(t);
            } else {
                while self.base < t && self.buckets[(self.base % CALENDAR) as usize].is_empty() {
                    self.base += 1;
                }
            }
        }
        let c = self.base;
        if c <= t && !self.buckets[(c % CALENDAR) as usize].is_empty() {
            if self.ordered != c {
                self.current.clear();
                self.next = 0;
            }
            self.order(c);
        }
        let near =
            (self.next < self.current.len()).then(|| (self.ordered, self.current[self.next]));
        let far = self
            .far
            .peek()
            .map(|Reverse(e)| *e)
            .filter(|&(when, _)| when <= t);
        match (near, far) {
            (Some(a), Some(b)) if b < a => self.far.pop().map(|Reverse(e)| e),
            (Some(a), _) => {
                self.next += 1;
                Some(a)
            }
            (None, Some(_)) => self.far.pop().map(|Reverse(e)| e),
            (None, None) => None,
        }
    }
}

/// A set of local nodes, iterated in node order: a bitmap with a summary bit per word, so
/// that sparse sets on a large fabric cost little to walk.
#[derive(Debug, Default)]
pub(crate) struct NodeSet {
    words: Vec<u64>,
    /// Bit per word of `words`: the word is not zero.
    summary: Vec<u64>,
}

impl NodeSet {
    pub(crate) fn new(nodes: usize) -> NodeSet {
        let words = nodes.div_ceil(64);
        NodeSet {
            words: vec![0; words],
            summary: vec![0; words.div_ceil(64)],
        }
    }

    /// Add `node`.
    #[inline]
    pub(crate) fn insert(&mut self, node: u32) {
        let (w, b) = (node as usize / 64, node % 64);
        let word = &mut self.words[w];
        if *word == 0 {
            self.summary[w / 64] |= 1 << (w % 64);
        }
        *word |= 1 << b;
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.summary.iter().all(|&s| s == 0)
    }

    /// Move the nodes, in order, to the end of `list`.
    pub(crate) fn drain_into(&mut self, list: &mut Vec<u32>) {
        for (s, sum) in self.summary.iter_mut().enumerate() {
            let mut words = std::mem::take(sum);
            while words != 0 {
                let w = s * 64 + words.trailing_zeros() as usize;
                words &= words - 1;
                let mut bits = std::mem::take(&mut self.words[w]);
                while bits != 0 {
                    list.push((w * 64) as u32 + bits.trailing_zeros());
                    bits &= bits - 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calendar_gives_each_cycle_its_entries_in_push_order() {
        let mut c = Calendar::default();
        let mut seed = 7u64;
        let mut rand = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut want: std::collections::BTreeMap<u64, Vec<u32>> = Default::default();
        let mut now = 0u64;
        let mut k = 0u32;
        for _ in 0..5_000 {
            for _ in 0..rand(3) {
                let t = now + 1 + if rand(10) == 0 { rand(5_000) } else { rand(40) };
                c.push(t, k);
                want.entry(t).or_default().push(k);
                k += 1;
            }
            assert_eq!(c.next(), want.keys().next().copied());
            let Some(t) = c.next() else { continue };
            let mut got = Vec::new();
            c.take(t, &mut got);
            assert_eq!(Some(got), want.remove(&t));
            now = t;
        }
    }

    #[test]
    fn timers_pop_in_the_order_of_a_heap() {
        // Random pushes (into the calendar and beyond it) and pops, against a heap. Repeated
        // (cycle, node) entries may come out once or several times (the caller skips stale
        // ones either way), so repeats are dropped on both sides.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rand = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut timers = Timers::new(50);
        let mut heap = BinaryHeap::new();
        let mut now = 0u64;
        let (mut got, mut want) = (None, None);
        for _ in 0..20_000 {
            for _ in 0..rand(4) {
                let ahead = match rand(10) {
                    0 => 300 + rand(2_000),
                    1 => 200 + rand(100),
                    _ => 1 + rand(40),
                };
                let node = rand(50) as u32;
                timers.push(now + ahead, node);
                heap.push(Reverse((now + ahead, node)));
            }
            assert_eq!(timers.peek(), heap.peek().map(|Reverse((t, _))| *t));
            let Some(t) = timers.peek() else { continue };
            now = t;
            loop {
                let next_want = loop {
                    match heap.peek() {
                        Some(Reverse(e)) if e.0 <= now => {
                            let e = *e;
                            heap.pop();
                            if want != Some(e) {
                                break Some(e);
                            }
                        }
                        _ => break None,
                    }
                };
                let next_got = loop {
                    match timers.pop_due(now) {
                        Some(e) if got == Some(e) => {}
                        other => break other,
                    }
                };
                assert_eq!(next_got, next_want);
                if next_want.is_none() {
                    break;
                }
                (got, want) = (next_got, next_want);
                // Timers set while a cycle's are popped are for later cycles.
                if rand(3) == 0 {
                    let (t, n) = (now + 1 + rand(300), rand(50) as u32);
                    timers.push(t, n);
                    heap.push(Reverse((t, n)));
                }
            }
        }
    }

    #[test]
    fn a_node_set_drains_in_order_without_duplicates() {
        let mut s = NodeSet::new(10_000);
        for n in [9_999, 5, 4_100, 5, 64, 0, 4_096] {
            s.insert(n);
        }
        let mut list = Vec::new();
        s.drain_into(&mut list);
        assert_eq!(list, vec![0, 5, 64, 4_096, 4_100, 9_999]);
        assert!(s.is_empty());
        s.drain_into(&mut list);
        assert_eq!(list.len(), 6);
    }
}

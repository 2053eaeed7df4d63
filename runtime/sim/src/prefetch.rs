//! Software prefetching for the router steps of a cycle, and for the PE wakes before them.
//!
//! A large fabric's per-cycle state does not fit in the caches, and a router step chases
//! pointers (router → PE → its sends → the send's data; PE → its receives → SRAM) whose
//! targets the hardware prefetcher cannot guess. The active list is sorted, so the routers a
//! few steps ahead are known: a pipeline ([`Ahead`]) reads each router's PE index far ahead
//! (on large partitions also fetching the router record before that and the PE record
//! there), fetches the PE's send and receive arrays and the queue the ramp serves closer, and
//! the data words and SRAM lines the step will touch just before it (on large partitions also
//! the channel its early credit updates), looking each router's PE up once; the stages and
//! their distances are the constants of a [`Distances`] type. Phase 1 likewise fetches the
//! queue, router and slot of arrivals ahead, and the timer pass the records of the PEs it is
//! about to wake ([`wakes_ahead`]). The distances are long because a wse2-size fabric misses
//! all the way to memory. Prefetches are hints only: they never change results.

use crate::fabric::NONE;
use crate::router::Hot;
use std::marker::PhantomData;

/// Steps ahead of the current router for each stage of [`Ahead`] (constants, so that the
/// router pass is compiled once for each set).
pub(crate) trait Distances {
    /// The router record alone (its PE index is read at `FAR`); none if `NODE ≤ FAR`.
    const NODE: usize;
    const FAR: usize;
    const MID: usize;
    const NEAR: usize;
    /// At `NEAR`, also the upstream output channels that the queues served next will return
    /// credits to.
    const CREDITS: bool;
    /// At `FAR`, also the PE record (else only its index is read there).
    const PE_LINES: bool;
}

/// On a large partition, far enough ahead to cover misses to memory…
pub(crate) struct Large;

impl Distances for Large {
    const NODE: usize = 80;
    const FAR: usize = 40;
    const MID: usize = 20;
    const NEAR: usize = 6;
    const CREDITS: bool = true;
    const PE_LINES: bool = true;
}

/// …and on a small one, whose state stays in the outer caches, near enough that the fetched
/// lines are still in the first-level cache when the step comes (40 routers ahead is about
/// the whole L1 at ≈ 12 lines per step). Measured on the 64×64 halo, the same run takes twice
/// as long without the near stage and 20% longer without the middle one; fetching the PE
/// records at the far stage made no difference, so that stage only reads their indices.
pub(crate) struct Small;

impl Distances for Small {
    const NODE: usize = 0;
    const FAR: usize = 10;
    const MID: usize = 5;
    const NEAR: usize = 2;
    const CREDITS: bool = false;
    const PE_LINES: bool = false;
}

/// Partitions with at least this many routers are large.
const LARGE_ROUTERS: usize = crate::SimOptions::DEFER_MIN_ROUTERS;

/// Whether the partition `hot` works on takes the [`Large`] distances.
pub(crate) fn large(hot: &Hot<'_>) -> bool {
    hot.nodes.len() >= LARGE_ROUTERS
}

#[inline(always)]
pub(crate) fn fetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults, whatever the address.
    #[allow(unused_unsafe)]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Fetch the cache lines `items` spans, at most `MAX` of them (straight-line code without
/// branches per line: this runs for every router step; a line is fetched twice rather than
/// testing for the end).
#[inline(always)]
pub(crate) fn fetch_lines<T, const MAX: usize>(items: &[T]) {
    let bytes = std::mem::size_of_val(items);
    if bytes == 0 {
        return;
    }
    let start = items.as_ptr().cast::<u8>();
    let first = start as usize & !63;
    let last = (start as usize + bytes - 1) & !63;
    for k in 0..MAX {
        let line = (first + 64 * k).min(last);
        fetch(start.wrapping_add(line.wrapping_sub(start as usize)));
    }
}

/// The stages of prefetching ahead of a pass over the routers of `list`, carrying each
/// router's PE index from the far stage to the later ones (so that it is looked up once).
pub(crate) struct Ahead<D> {
    /// `pes[i % 64]`: the PE of `list[i]` (NONE if none), for `i` up to `far` ahead.
    pes: [u32; 64],
    d: PhantomData<D>,
}

impl<D: Distances> Ahead<D> {
    /// Before the pass: the PEs of the first routers, and their records (with `PE_LINES`).
    #[inline(always)]
    pub(crate) fn start(hot: &Hot<'_>, list: &[u32]) -> Ahead<D> {
        let mut ahead = Ahead {
            pes: [NONE; 64],
            d: PhantomData,
        };
        for &node in list.iter().take(D::NODE).skip(D::FAR) {
            fetch(std::ptr::from_ref(&hot.nodes[node as usize]));
        }
        for (i, &node) in list.iter().take(D::FAR).enumerate() {
            ahead.pes[i] = hot.nodes[node as usize].pe;
            if D::PE_LINES {
                hot.prefetch_pe(ahead.pes[i]);
            }
        }
        ahead
    }

    /// Before the step of `list[i]`: the stages for the routers `node`, `far`, `mid` and `near`
    /// ahead.
    #[inline(always)]
    pub(crate) fn step(&mut self, hot: &Hot<'_>, list: &[u32], i: usize) {
        if D::NODE > D::FAR
            && let Some(&node) = list.get(i + D::NODE)
        {
            fetch(std::ptr::from_ref(&hot.nodes[node as usize]));
        }
        if let Some(&node) = list.get(i + D::FAR) {
            let pe = hot.nodes[node as usize].pe;
            self.pes[(i + D::FAR) % 64] = pe;
            if D::PE_LINES {
                hot.prefetch_pe(pe);
            }
        }
        if let Some(&node) = list.get(i + D::MID) {
            hot.prefetch_arrays(self.pes[(i + D::MID) % 64]);
            hot.prefetch_served(node);
        }
        if let Some(&node) = list.get(i + D::NEAR) {
            hot.prefetch_words(node, self.pes[(i + D::NEAR) % 64]);
            if D::CREDITS {
                hot.prefetch_credit(hot.served(node));
            }
        }
    }

    /// With deferred arrivals, before the step of `list[i]`: the queue records and output
    /// channels that the arrivals and credits of the router `mid` ahead go to (`due_head` and
    /// `due_next` chain them, as in `Partition::cycle`).
    #[inline(always)]
    pub(crate) fn dues(
        &self,
        hot: &Hot<'_>,
        list: &[u32],
        i: usize,
        due_head: &[u32],
        due_next: &[u32],
        steps: &[crate::events::Due],
    ) {
        let Some(&node) = list.get(i + D::MID) else {
            return;
        };
        let mut d = due_head[node as usize];
        while let Some(due) = steps.get(d as usize) {
            if due.index & crate::events::Due::CREDIT == 0 {
                hot.prefetch_queue(due.index);
            } else if let Some(ch) = hot
                .outch
                .get((due.index & !crate::events::Due::CREDIT) as usize)
            {
                fetch(std::ptr::from_ref(ch));
            }
            d = due_next[d as usize];
        }
    }

    /// With deferred arrivals and `D::CREDITS`, before the step of `list[i]`: the upstream
    /// channels that the arrivals of the router `near` ahead will return credits to (their
    /// queue records came at `mid`).
    #[inline(always)]
    pub(crate) fn arrival_credits(
        &self,
        hot: &Hot<'_>,
        list: &[u32],
        i: usize,
        due_head: &[u32],
        due_next: &[u32],
        steps: &[crate::events::Due],
    ) {
        if !D::CREDITS {
            return;
        }
        let Some(&node) = list.get(i + D::NEAR) else {
            return;
        };
        let mut d = due_head[node as usize];
        while let Some(due) = steps.get(d as usize) {
            if due.index & crate::events::Due::CREDIT == 0 {
                hot.prefetch_credit(due.index);
            }
            d = due_next[d as usize];
        }
    }
}

/// While a cycle's timers wake their PEs (in node order, each wake reading the router's
/// timer, its PE record, the PE's queues of delayed calls and ready tasks and its wait
/// records, for a task start its program record, for a receive posted behind an open one the
/// last receive queued): the router records and timers of the wakes 8 ahead, the PE records
/// (all four lines, and wait record headers) of those 4 ahead, and what those records point
/// to 2 ahead.
#[inline(always)]
pub(crate) fn wakes_ahead(p: &crate::partition::Partition<'_>) {
    if let Some(node) = p.timers.ahead(8) {
        fetch(std::ptr::from_ref(&p.nodes[node as usize]));
        fetch(std::ptr::from_ref(&p.info[node as usize]));
    }
    let pe_of = |k: usize| {
        let node = p.timers.ahead(k)?;
        let pe = p.nodes[node as usize].pe as usize;
        Some((p.pes.get(pe)?, &p.waits[pe]))
    };
    if let Some((pe, waits)) = pe_of(4) {
        let pe = std::ptr::from_ref(pe);
        fetch(pe);
        fetch(pe.cast::<u8>().wrapping_add(64));
        fetch(pe.cast::<u8>().wrapping_add(128));
        fetch(pe.cast::<u8>().wrapping_add(192));
        fetch(std::ptr::from_ref(waits));
    }
    if let Some((pe, waits)) = pe_of(2) {
        if let Some(call) = pe.pending.front() {
            fetch(std::ptr::from_ref(call));
            // A receive posted behind an open one looks at the last one queued.
            if let Some(last) = pe.queued_recvs.back() {
                fetch(std::ptr::from_ref(last));
            }
        }
        if let Some(task) = pe.ready.peek() {
            fetch(std::ptr::from_ref(task));
            // A task will start: its PE's program record.
            if let Some(prog) = p.program.pes.get(pe.prog as usize) {
                fetch_lines::<_, 3>(std::slice::from_ref(prog));
            }
        }
        waits.prefetch();
    }
}

const _: () = assert!(Large::FAR < 64 && Large::MID < Large::FAR && Large::NEAR < Large::MID);
const _: () = assert!(Small::FAR < 64 && Small::MID < Small::FAR && Small::NEAR < Small::MID);

/// Arrivals ahead of the current one (phase 1): the queue record at twice this distance,
/// its router's record and wavelet slot at this distance.
pub(crate) const ARRIVALS: usize = 8;

impl Hot<'_> {
    /// The record of local queue `q`.
    #[inline(always)]
    pub(crate) fn prefetch_queue(&self, q: u32) {
        fetch(std::ptr::from_ref(&self.queues[q as usize]));
    }

    /// The router `node` of local queue `q` and the slot its next wavelet goes to.
    #[inline(always)]
    pub(crate) fn prefetch_arrival(&self, node: u32, q: u32) {
        fetch(std::ptr::from_ref(&self.nodes[node as usize]));
        if let Some(slot) = self.qslot(q) {
            fetch(slot);
        }
    }

    /// Stage 2: the record of the queue that the ramp port of router `node` tries first: with
    /// inline slots (`Queue::slots`) the one line holds the wavelet and everything popping
    /// it reads and writes. Nothing else the step reads shares that line.
    #[inline(always)]
    fn prefetch_served(&self, node: u32) {
        if let Some(queue) = self.queues.get(self.served(node) as usize) {
            fetch(std::ptr::from_ref(queue));
        }
    }

    /// Stage 3: the upstream output channel that local queue `q` (NONE: none) returns a
    /// credit to when its head leaves (its record was fetched at stage 2).
    #[inline(always)]
    fn prefetch_credit(&self, q: u32) {
        if let Some(queue) = self.queues.get(q as usize)
            && let Some(ch) = self.outch.get(queue.up_och as usize)
        {
            fetch(std::ptr::from_ref(ch));
        }
    }

    /// The queue the ramp port of router `node` tries first, or NONE.
    #[inline(always)]
    fn served(&self, node: u32) -> u32 {
        let n = &self.nodes[node as usize];
        let want = n.want[crate::fabric::RAMP];
        if want == 0 {
            return NONE;
        }
        let after = want & (u64::MAX << n.rr[crate::fabric::RAMP]);
        n.q_start + if after != 0 { after } else { want }.trailing_zeros()
    }

    /// Stage 1: the record of PE `pe` (NONE: none).
    #[inline(always)]
    fn prefetch_pe(&self, pe: u32) {
        if let Some(p) = self.pes.get(pe as usize) {
            let p = std::ptr::from_ref(p);
            fetch(p);
            fetch(p.cast::<u8>().wrapping_add(64));
        }
    }

    /// Stage 2: the arrays of sends and receives of PE `pe` (NONE: none).
    #[inline(always)]
    fn prefetch_arrays(&self, pe: u32) {
        if let Some(p) = self.pes.get(pe as usize) {
            // Every line of the two arrays (a few entries each).
            fetch_lines::<_, 4>(p.sends.as_slice());
            fetch_lines::<_, 2>(p.recvs.as_slice());
        }
    }

    /// Stage 3: the next data word of the send router `node`'s PE `pe` (NONE: none) injects
    /// next and the next SRAM word of each of its receives.
    #[inline(always)]
    fn prefetch_words(&self, node: u32, pe: u32) {
        let Some(p) = self.pes.get(pe as usize) else {
            return;
        };
        let n = &self.nodes[node as usize];
        // Only the send the ramp serves next (see `Hot::inject`).
        if let Some(color) = crate::router::next_color(p.send_mask & !n.ramp_full, p.last_color)
            && let Some(s) = p.sends.iter().find(|s| s.color == color)
        {
            fetch(s.data.as_ptr().wrapping_add(s.pos as usize));
        }
        // Only when a wavelet may be delivered: one wants the ramp, or the router's
        // arrivals are applied right before its step.
        if n.want[crate::fabric::RAMP] != 0 || self.defer {
            for r in p.recvs.iter().take(4) {
                let at = r.offset as usize + 4 * r.done as usize;
                fetch(p.sram.as_ptr().wrapping_add(at));
            }
        }
    }
}

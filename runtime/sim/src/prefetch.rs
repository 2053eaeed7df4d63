//! Software prefetching for the router steps of a cycle.
//!
//! A large fabric's per-cycle state does not fit in the caches, and a router step chases
//! pointers (router → PE → its sends → the send's data; PE → its receives → SRAM) whose
//! targets the hardware prefetcher cannot guess. The active list is sorted, so the routers a
//! few steps ahead are known: a three-stage pipeline fetches the PE record far ahead, its
//! send and receive arrays closer, and the data words and SRAM lines the step will touch just
//! before it; phase 1 likewise fetches the queue, router and slot of arrivals ahead. The
//! distances are long because a wse2-size fabric misses all the way to memory. Prefetches are
//! hints only: they never change results.

use crate::fabric::NONE;
use crate::router::Hot;

/// Steps ahead of the current router for each stage.
pub(crate) const FAR: usize = 40;
pub(crate) const MID: usize = 20;
pub(crate) const NEAR: usize = 6;

#[inline(always)]
fn fetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults, whatever the address.
    #[allow(unused_unsafe)]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Fetch the cache lines `items` spans, at most `max` of them (straight-line code: this runs
/// for every router step).
#[inline(always)]
fn fetch_lines<T>(items: &[T], max: usize) {
    let start = items.as_ptr().cast::<u8>();
    let end = start as usize + std::mem::size_of_val(items);
    let mut line = start as usize & !63;
    let mut k = 0;
    while line < end && k < max {
        fetch(start.wrapping_add(line.wrapping_sub(start as usize)));
        line += 64;
        k += 1;
    }
}

/// Arrivals ahead of the current one (phase 1): the queue record at twice this distance,
/// its router's record and wavelet slot at this distance.
pub(crate) const ARRIVALS: usize = 8;

impl Hot<'_> {
    /// The record of local queue `q`.
    #[inline(always)]
    pub(crate) fn prefetch_queue(&self, q: u32) {
        fetch(std::ptr::from_ref(&self.queues[q as usize]));
    }

    /// The router of local queue `q` and the slot its next wavelet goes to.
    #[inline(always)]
    pub(crate) fn prefetch_arrival(&self, q: u32) {
        let queue = &self.queues[q as usize];
        fetch(std::ptr::from_ref(&self.nodes[queue.node as usize]));
        fetch(self.qslot(q));
    }

    /// Stage 1: the PE record of `node`.
    #[inline(always)]
    pub(crate) fn prefetch_far(&self, node: u32) {
        let pe = self.nodes[node as usize].pe;
        if pe != NONE {
            let p = std::ptr::from_ref(&self.pes[pe as usize]);
            fetch(p);
            fetch(p.cast::<u8>().wrapping_add(64));
        }
    }

    /// Stage 2: the arrays of sends and receives of `node`'s PE.
    #[inline(always)]
    pub(crate) fn prefetch_mid(&self, node: u32) {
        let pe = self.nodes[node as usize].pe;
        if pe != NONE {
            let p = &self.pes[pe as usize];
            // Every line of the two arrays (a few entries each).
            fetch_lines(p.sends.as_slice(), 4);
            fetch_lines(p.recvs.as_slice(), 2);
        }
    }

    /// Stage 3: the next data word of the send injected next and the next SRAM word of each
    /// receive.
    #[inline(always)]
    pub(crate) fn prefetch_near(&self, node: u32) {
        let pe = self.nodes[node as usize].pe;
        if pe != NONE {
            let p = &self.pes[pe as usize];
            // Only the send the ramp serves next (see `Hot::inject`).
            let ramp_full = self.nodes[node as usize].ramp_full;
            if let Some(color) = crate::router::next_color(p.send_mask & !ramp_full, p.last_color)
                && let Some(s) = p.sends.iter().find(|s| s.color == color)
            {
                fetch(s.data.as_ptr().wrapping_add(s.pos as usize));
            }
            // Only when a wavelet may be delivered: one wants the ramp, or the router's
            // arrivals are applied right before its step.
            if self.nodes[node as usize].want[crate::fabric::RAMP] != 0 || self.defer {
                for r in p.recvs.iter().take(4) {
                    let at = r.offset as usize + 4 * r.done as usize;
                    fetch(p.sram.as_ptr().wrapping_add(at));
                }
            }
        }
    }
}

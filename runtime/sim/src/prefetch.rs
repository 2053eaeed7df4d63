//! Software prefetching for the router steps of a cycle, and for the PE wakes before them.
//!
//! A large fabric's per-cycle state does not fit in the caches, and a router step chases
//! pointers (router → PE → its send slot → the send's data; queue → its receive slot → SRAM)
//! whose targets the hardware prefetcher cannot guess. The active list is sorted, so the
//! routers a few steps ahead are known: a pipeline ([`Ahead`]) reads each router's PE index
//! far ahead (on large partitions also fetching the router record before that and the PE
//! record there), fetches the PE's send and receive slots and the queue the ramp serves
//! closer, the data word the injection will send (also the downstream queue and router it
//! will write, earlier than the SRAM line; not the output channel, whose link the send slot
//! carries: see `SendSlot::link`) and the SRAM
//! line a delivery will write just before the step, looking each router's PE up once; the
//! stages and their distances are the constants of a [`Distances`] type. The timer pass
//! likewise fetches the records of the PEs it is about to wake ([`wakes_ahead`]).
//! The distances are long because a wse2-size fabric misses all the way to memory; a tiny
//! partition, whose state stays in the caches, prefetches nothing ([`Tiny`]).
//! Prefetches are hints only: they never change results.

use crate::fabric::NONE;
use crate::router::CycleState;
use std::marker::PhantomData;

/// Steps ahead of the current router for each stage of [`Ahead`] (constants, so that the
/// router pass is compiled once for each set).
pub(crate) trait Distances {
    /// Whether to prefetch at all (the stages below are ignored when not).
    const ON: bool = true;
    /// The router record alone (its PE index is read at `FAR`); none if `NODE ≤ FAR`.
    const NODE: usize;
    const FAR: usize;
    const MID: usize;
    /// The data word the PE's send injects next (with `DOWNSTREAM`, also the queue and
    /// router it goes to); at most `MID`, at least `NEAR`.
    const SEND: usize;
    const NEAR: usize;
    /// At `SEND`, also the downstream queue the injection will write.
    const DOWNSTREAM: bool;
    /// At `NEAR`, also the output channels the queues with arrivals forward to.
    const CHANNELS: bool;
    /// At `FAR`, also the PE record (else only its index is read there).
    const PE_LINES: bool;
}

/// On a large partition, far enough ahead to cover misses to memory…
pub(crate) struct Large;

impl Distances for Large {
    const NODE: usize = 80;
    const FAR: usize = 40;
    const MID: usize = 20;
    const SEND: usize = 12;
    const NEAR: usize = 6;
    const DOWNSTREAM: bool = true;
    const CHANNELS: bool = true;
    const PE_LINES: bool = true;
}

/// …and on a small one, whose state stays in the outer caches, near enough that the fetched
/// lines are still in the first-level cache when the step comes (40 routers ahead is about
/// the whole L1 at ≈ 12 lines per step). Measured on the 64×64 halo, the same run takes twice
/// as long without the near stage and 20% longer without the middle one; fetching the PE
/// records at the far stage made no difference, so that stage only reads their indices. The
/// near stage is 3 routers ahead, not 2, since a send's data word became the step's largest
/// stall (64×64 halo: −6% CPU time in 4 of 4 pairs; 4 ahead was slower again).
pub(crate) struct Small;

impl Distances for Small {
    const NODE: usize = 0;
    const FAR: usize = 10;
    const MID: usize = 5;
    const SEND: usize = 3;
    const NEAR: usize = 3;
    const DOWNSTREAM: bool = true;
    const CHANNELS: bool = false;
    const PE_LINES: bool = false;
}

/// …and on a tiny one (fewer than [`TINY_ROUTERS`] routers: a streamed layer's phase of a few
/// hundred PEs) none at all: its whole state stays in the caches from one cycle to the next,
/// so the pipeline's work, some 140 instructions a router step, is all cost
/// (`examples/mlp_streaming` on wse2, 256 routers a phase: 17% fewer instructions for the
/// whole job and less CPU time in 3 of 3 pairs; BENCHMARKS.md, session 30).
pub(crate) struct Tiny;

impl Distances for Tiny {
    const ON: bool = false;
    const NODE: usize = 0;
    const FAR: usize = 0;
    const MID: usize = 0;
    const SEND: usize = 0;
    const NEAR: usize = 0;
    const DOWNSTREAM: bool = false;
    const CHANNELS: bool = false;
    const PE_LINES: bool = false;
}

/// Partitions with at least this many routers are large.
const LARGE_ROUTERS: usize = 16_384;
/// Partitions with fewer routers than this are tiny.
const TINY_ROUTERS: usize = 1_024;

/// A partition's size class: which [`Distances`] its router passes take.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Size {
    Tiny,
    Small,
    Large,
}

/// Tests only: the size class every partition takes (0: by its routers; else 1 + the class,
/// in the order of [`Size`]), so that one program runs through each set of distances.
#[cfg(test)]
static FORCED: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// The size class of the partition `hot` works on.
pub(crate) fn size(hot: &CycleState<'_>) -> Size {
    #[cfg(test)]
    match FORCED.load(std::sync::atomic::Ordering::Relaxed) {
        1 => return Size::Tiny,
        2 => return Size::Small,
        3 => return Size::Large,
        _ => {}
    }
    let n = hot.routers.len();
    if n >= LARGE_ROUTERS {
        Size::Large
    } else if n >= TINY_ROUTERS {
        Size::Small
    } else {
        Size::Tiny
    }
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

/// Fetch records `start`, `start + 1`, … of `all`, `n` of them but at most `MAX`, each a
/// line (a PE's send or receive slots): no bounds check and no clamping per line, as a
/// prefetch never faults and the PE's record says how many there are.
#[inline(always)]
pub(crate) fn fetch_run<T, const MAX: usize>(all: &[T], start: u32, n: u8) {
    const { assert!(std::mem::size_of::<T>() == 64) };
    let first = all.as_ptr().wrapping_add(start as usize);
    for k in 0..usize::from(n).min(MAX) {
        fetch(first.wrapping_add(k));
    }
}

/// The stages of prefetching ahead of a pass over the routers of `list`, carrying each
/// router's PE index from the far stage to the later ones (so that it is looked up once).
pub(crate) struct Ahead<D> {
    /// `pes[i % 64]`: the PE of `list[i]` (NONE if none), for `i` up to `far` ahead.
    pes: [u32; 64],
    /// `served[i % 64]`: the queue the ramp of `list[i]` tries first (NONE if none), guessed
    /// at the middle stage and read again at the near one (a guess either way: see
    /// [`CycleState::served`]).
    served: [u32; 64],
    d: PhantomData<D>,
}

impl<D: Distances> Ahead<D> {
    /// Before the pass: the PEs of the first routers, and their records (with `PE_LINES`).
    #[inline(always)]
    pub(crate) fn start(hot: &CycleState<'_>, list: &[u32]) -> Ahead<D> {
        let mut ahead = Ahead {
            pes: [NONE; 64],
            served: [NONE; 64],
            d: PhantomData,
        };
        if !D::ON {
            return ahead;
        }
        for &node in list.iter().take(D::NODE).skip(D::FAR) {
            fetch(std::ptr::from_ref(&hot.routers[node as usize]));
        }
        for (i, &node) in list.iter().take(D::FAR).enumerate() {
            if i < D::MID {
                ahead.served[i] = served(&hot.routers[node as usize]);
            }
            ahead.pes[i] = hot.routers[node as usize].pe;
            if D::PE_LINES {
                hot.prefetch_pe(ahead.pes[i]);
            }
        }
        ahead
    }

    /// Before the step of `list[i]`: the stages for the routers `node`, `far`, `mid` and `near`
    /// ahead.
    #[inline(always)]
    pub(crate) fn step(&mut self, hot: &CycleState<'_>, list: &[u32], i: usize) {
        if !D::ON {
            return;
        }
        if D::NODE > D::FAR
            && let Some(&node) = list.get(i + D::NODE)
        {
            fetch(std::ptr::from_ref(&hot.routers[node as usize]));
        }
        if let Some(&node) = list.get(i + D::FAR) {
            let pe = hot.routers[node as usize].pe;
            self.pes[(i + D::FAR) % 64] = pe;
            if D::PE_LINES {
                hot.prefetch_pe(pe);
            }
        }
        if let Some(&node) = list.get(i + D::MID) {
            hot.prefetch_arrays(self.pes[(i + D::MID) % 64]);
            self.served[(i + D::MID) % 64] = hot.prefetch_queues(node);
        }
        if i + D::SEND < list.len() {
            hot.prefetch_send(self.pes[(i + D::SEND) % 64], D::DOWNSTREAM);
        }
        if let Some(&node) = list.get(i + D::NEAR) {
            let k = (i + D::NEAR) % 64;
            hot.prefetch_sram(self.served[k], self.pes[k]);
            if D::CHANNELS {
                hot.prefetch_channels(node);
            }
        }
    }
}

/// The stages of [`wakes_ahead`], in wakes ahead of the current one. Eight wakes apart: at
/// four apart (session 19), heat's profile showed the wake stalling on the lines the stage
/// before had fetched (the router's PE index, the PE record's SRAM and delayed-call words):
/// a wake that only carries out a delayed call is shorter than a miss to memory.
const WAKE_ROUTER: usize = 32;
const WAKE_PE: usize = 24;
const WAKE_LINKS: usize = 16;
const WAKE_ARGS: usize = 8;

/// While a cycle's timers wake their PEs (in node order), in four stages, each reading only
/// what an earlier stage fetched: the router records and timer cycles of the wakes
/// [`WAKE_ROUTER`] ahead; the PE records of those [`WAKE_PE`] ahead (the four lines of a wake
/// and a task start: activations, delayed calls, busy time, the color masks a task's runtime
/// calls check, the livelock count; not the rarely used fifth, see `Pe`); [`WAKE_LINKS`]
/// ahead, what those records point to — the first
/// four delayed calls (or, before a task with none left, the buffer's first lines, which the
/// task's calls are written to), the record of the far activations' heap and the last queued
/// receive if there are any (a receive posted behind an open one looks at it), the send and
/// receive slots, the program record a task start reads and the two ends of the PE's SRAM;
/// [`WAKE_ARGS`] ahead, the earliest far activation (heat's PEs put one activation in eight
/// there) and the argument words and port table the program record points to (a task's code
/// reads them). Most wakes of a busy cycle
/// only carry out a delayed call or two, so the stages are far apart.
#[inline(always)]
pub(crate) fn wakes_ahead(p: &crate::partition::Partition<'_>) {
    if let Some(node) = p.events.timers.ahead(WAKE_ROUTER) {
        fetch(std::ptr::from_ref(&p.fab.routers[node as usize]));
        fetch(std::ptr::from_ref(&p.fab.wake[node as usize]));
    }
    let pe_of = |k: usize| {
        let node = p.events.timers.ahead(k)?;
        let pe = p.fab.routers[node as usize].pe as usize;
        p.fab.pes.get(pe)
    };
    let program = |pe: &crate::pe::Pe| p.setup.program.pes.get(pe.prog as usize);
    if let Some(pe) = pe_of(WAKE_PE) {
        fetch_lines::<_, { crate::pe::WAKE_LINES }>(std::slice::from_ref(pe));
    }
    if let Some(pe) = pe_of(WAKE_LINKS) {
        if !pe.pending.is_empty() {
            // A wake carries out the calls due, often several (a line each).
            for call in pe.pending.iter().take(4) {
                fetch(std::ptr::from_ref(call));
            }
            if pe.queued_colors != 0
                && let Some(last) = pe.queued_recvs.back()
            {
                fetch(std::ptr::from_ref(last));
            }
        }
        pe.ready.prefetch_heap();
        if !pe.ready.is_empty() {
            if pe.pending.is_empty() {
                // The task's delayed calls go to the buffer's start (see `apply_due`), a
                // line each: written by the task, not only read.
                let start = pe.pending.as_slices().0.as_ptr();
                for k in 0..pe.pending.capacity().min(8) {
                    fetch(start.wrapping_add(k));
                }
            }
            if let Some(prog) = program(pe) {
                fetch_lines::<_, 3>(std::slice::from_ref(prog));
            }
            // A kernel's SRAM is laid out in declaration order, usually arrays first and
            // scalars (counters, flags) last: a task most often touches both ends.
            if let (Some(first), Some(last)) = (pe.sram.first(), pe.sram.last()) {
                fetch(std::ptr::from_ref(first));
                fetch(std::ptr::from_ref(last));
            }
        }
        fetch_run::<_, 6>(&p.fab.recvs, pe.recv_base, pe.n_recvs);
        fetch_run::<_, 6>(&p.fab.sends, pe.send_base, pe.n_sends);
    }
    if let Some(pe) = pe_of(WAKE_ARGS)
        && !pe.ready.is_empty()
    {
        pe.ready.prefetch_far();
        if let Some(prog) = program(pe) {
            fetch(prog.args.as_ptr());
            fetch(prog.ports.as_ptr());
        }
    }
}

const _: () = assert!(Large::FAR < 64 && Large::MID < Large::FAR && Large::NEAR < Large::MID);
const _: () = assert!(Small::FAR < 64 && Small::MID < Small::FAR && Small::NEAR < Small::MID);
const _: () = assert!(Large::NEAR <= Large::SEND && Large::SEND <= Large::MID);
const _: () = assert!(Small::NEAR <= Small::SEND && Small::SEND <= Small::MID);

impl CycleState<'_> {
    /// Stage 2, from one read of router `node`'s record: its queues with arrivals to absorb;
    /// the record of the queue that its ramp port tries first: the one line holds the
    /// wavelet and everything popping it reads and writes (its ring's kind too, so that only
    /// a deep ring behind a boundary reads the boundary index); and the router's timer
    /// cycle, which a delivery that completes a receive reads. Returns that queue (NONE:
    /// none). The addresses are not bounds checked: a prefetch never faults, and the
    /// router's queues are in the array by construction.
    #[inline(always)]
    fn prefetch_queues(&self, node: u32) -> u32 {
        let r = &self.routers[node as usize];
        fetch(self.wake.as_ptr().wrapping_add(node as usize));
        let queues = self.queues.as_ptr().wrapping_add(r.q_start as usize);
        let mut incoming = r.incoming;
        while incoming != 0 {
            fetch(queues.wrapping_add(incoming.trailing_zeros() as usize));
            incoming &= incoming - 1;
        }
        let q = served(r);
        if q != NONE {
            fetch(self.queues.as_ptr().wrapping_add(q as usize));
        }
        q
    }

    /// Stage 1: the first four lines of PE `pe`'s record (NONE: none): what injecting and
    /// delivering read, the activations a completed send or receive adds to, the busy time
    /// and waiting-send count a completion reads, and the queued-receive colors a completed
    /// receive checks (see `Pe`; on heat 512 × 512 that one load missing to memory was 98%
    /// of `Pe::complete_recv`'s samples and 6–7% of the run's, BENCHMARKS.md, session 25).
    #[inline(always)]
    fn prefetch_pe(&self, pe: u32) {
        if let Some(p) = self.pes.get(pe as usize) {
            fetch_lines::<_, 4>(std::slice::from_ref(p));
        }
    }

    /// Stage 3: the output channels the queues with arrivals at router `node` forward to (their
    /// records came at stage 2).
    #[inline(always)]
    fn prefetch_channels(&self, node: u32) {
        let r = &self.routers[node as usize];
        let mut incoming = r.incoming;
        while incoming != 0 {
            let q = r.q_start + incoming.trailing_zeros();
            incoming &= incoming - 1;
            if let Some(queue) = self.queues.get(q as usize) {
                let mut links = queue.tx & crate::fabric::LINK_PORTS;
                while links != 0 {
                    let d = links.trailing_zeros() as usize;
                    links &= links - 1;
                    if let Some(ch) = self.outch.get(queue.out[d] as usize) {
                        fetch(std::ptr::from_ref(ch));
                    }
                }
            }
        }
    }

    /// Stage 2: the send and receive slots of PE `pe` (NONE: none): up to six lines each (a
    /// slot is one line), so that a PE sending and receiving on up to six colors (a halo
    /// exchange: four of each) has all of them in cache when its step comes.
    #[inline(always)]
    fn prefetch_arrays(&self, pe: u32) {
        if let Some(p) = self.pes.get(pe as usize) {
            fetch_run::<_, 6>(self.sends, p.send_base, p.n_sends);
            fetch_run::<_, 6>(self.recvs, p.recv_base, p.n_recvs);
        }
    }

    /// Stage 3: the next data word the send of PE `pe` (NONE: none) injects
    /// (with `downstream`, also the queue and router it goes to when they are in this
    /// partition).
    #[inline(always)]
    fn prefetch_send(&self, pe: u32, downstream: bool) {
        let Some(p) = self.pes.get(pe as usize) else {
            return;
        };
        let avail = p.sending & !p.full;
        if avail != 0 {
            let k = crate::router::next_bit(avail, p.last_slot);
            if let Some(s) = self.sends.get((p.send_base + u32::from(k)) as usize) {
                fetch(s.data.as_ptr().wrapping_add(s.pos as usize));
                if downstream && s.link.queue != NONE {
                    // Not bounds checked: a prefetch never faults (the link is in this
                    // partition, so both are in the arrays).
                    fetch(self.queues.as_ptr().wrapping_add(s.link.queue as usize));
                    fetch(self.routers.as_ptr().wrapping_add(s.link.node as usize));
                }
            }
        }
    }

    /// Stage 4: the SRAM word that queue `q` (the one its router's ramp serves first, as
    /// guessed at stage 2; NONE: none) would write into PE `pe` (NONE: none).
    #[inline(always)]
    fn prefetch_sram(&self, q: u32, pe: u32) {
        let Some(p) = self.pes.get(pe as usize) else {
            return;
        };
        if let Some(q) = self.queues.get(q as usize)
            && let Some(r) = self.recvs.get((p.recv_base + u32::from(q.slot)) as usize)
        {
            let at = r.offset as usize + 4 * r.done as usize;
            fetch(p.sram.as_ptr().wrapping_add(at));
        }
    }
}

/// The queue the ramp port of router `r` tries first, or NONE (a guess: queues with arrivals
/// not yet absorbed count as wanting the ramp).
#[inline(always)]
fn served(r: &crate::fabric::Router) -> u32 {
    let want = r.want[crate::fabric::RAMP] | r.incoming;
    if want == 0 {
        return NONE;
    }
    let after = want & (u64::MAX << r.rr[crate::fabric::RAMP]);
    r.q_start + if after != 0 { after } else { want }.trailing_zeros()
}

#[cfg(test)]
mod tests {
    use super::FORCED;
    use crate::engine::{Outcome, SimOptions, simulate};
    use crate::workloads::halo_exchange;
    use std::sync::atomic::Ordering;
    use wsel_target::{Coord, Target};

    /// A 12 × 12 halo exchange on dev (uneven task costs, so PEs drift apart) through the
    /// router passes of size class `class` (see [`FORCED`]).
    fn halo(class: u8) -> Outcome {
        FORCED.store(class, Ordering::Relaxed);
        let p = halo_exchange(Coord::new(0, 0), 12, 12, 8, 4);
        let outcome = simulate(&Target::dev(), &p, &SimOptions::default());
        FORCED.store(0, Ordering::Relaxed);
        outcome.expect("runs")
    }

    /// Prefetches are hints: no set of distances, none at all included, changes a result.
    /// Every other test of this crate runs on a fabric small enough to be tiny (no
    /// prefetching), so this one keeps the small and large pipelines' code covered.
    #[test]
    fn every_set_of_distances_gives_the_same_outcome() {
        let tiny = halo(1);
        assert!(tiny.report.wavelet_hops > 0);
        for class in [2, 3] {
            let other = halo(class);
            assert_eq!(other.cycles, tiny.cycles, "class {class}");
            assert_eq!(other.report, tiny.report, "class {class}");
            for y in 0..12 {
                for x in 0..12 {
                    let c = Coord::new(x, y);
                    assert_eq!(other.sram(c), tiny.sram(c), "SRAM of PE {c}, class {class}");
                }
            }
        }
    }
}

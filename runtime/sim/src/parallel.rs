//! Running partitions on worker threads with conservative synchronisation.
//!
//! Every effect one partition has on another (a wavelet arriving, a credit returning) lands
//! exactly one hop latency `L` after it was caused. So all partitions can simulate the window
//! of cycles `[T, T + L)` independently, where `T` is the earliest pending event anywhere;
//! then they swap messages and agree on the next `T`. Idle stretches are skipped globally.
//! With several weight-store phases the partitions also swap their phase progress after every
//! window (see `phases.rs`), and windows are at most the store's latency + 1 cycles long.

use crate::fabric::Msg;
use crate::partition::{Partition, Stop};
use crate::phases::Progress;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// A barrier that spins briefly, then yields (threads may outnumber cores).
struct SpinBarrier {
    n: usize,
    count: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    fn new(n: usize) -> SpinBarrier {
        SpinBarrier {
            n,
            count: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
        }
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::AcqRel);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            if spins < 64 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

struct Shared {
    parts: usize,
    /// mail[src * parts + dst].
    mail: Vec<Mutex<Vec<Msg>>>,
    /// Per partition: its weight-phase progress, per group (see `phases.rs`).
    progress: Vec<Mutex<Vec<Progress>>>,
    /// Cycles per window.
    window: u64,
    next: Vec<AtomicU64>,
    failed: AtomicBool,
    barrier: SpinBarrier,
}

/// With one partition, how many cycles it simulates between updates of the progress figure.
const PROGRESS_STRIDE: u64 = 16;

/// Run all partitions until the fabric is quiet, a partition fails, or the next event is at
/// or after `limit` (the cycle budget); publish how far they got to `progress`.
pub(crate) fn run(
    parts: &mut [Partition<'_>],
    limit: u64,
    progress: Option<&crate::progress::Progress>,
) {
    if let [part] = parts {
        // Windows one after the other simulate exactly what one window to `limit` would.
        while let Some(t) = part.next_time()
            && t < limit
        {
            let end = t.saturating_add(PROGRESS_STRIDE).min(limit);
            if part.run(end) != Stop::WindowEnd {
                return;
            }
            if let Some(trace) = &mut part.out.trace {
                trace.advance(end);
            }
            if let Some(progress) = progress {
                progress.reached(end);
            }
        }
        return;
    }
    let n = parts.len();
    // A weight phase completed in one window is requested in all partitions after it, so it
    // must not start moving before the next window: windows of at most latency + 1 cycles.
    let latency = parts[0].setup.latency;
    let window = if parts[0].phases.streams.len() > 1 {
        latency.min(parts[0].phases.latency + 1)
    } else {
        latency
    };
    let shared = Shared {
        parts: n,
        mail: (0..n * n).map(|_| Mutex::new(Vec::new())).collect(),
        progress: (0..n).map(|_| Mutex::new(Vec::new())).collect(),
        window,
        next: (0..n).map(|_| AtomicU64::new(u64::MAX)).collect(),
        failed: AtomicBool::new(false),
        barrier: SpinBarrier::new(n),
    };
    std::thread::scope(|s| {
        for (i, part) in parts.iter_mut().enumerate() {
            let shared = &shared;
            let progress = progress.filter(|_| i == 0);
            s.spawn(move || worker(i, part, shared, limit, progress));
        }
    });
}

/// Partition `i`'s thread; the first also publishes the progress.
fn worker(
    i: usize,
    part: &mut Partition<'_>,
    shared: &Shared,
    limit: u64,
    progress: Option<&crate::progress::Progress>,
) {
    let mut inbox = Vec::new();
    loop {
        for src in 0..shared.parts {
            if let Ok(mut m) = shared.mail[src * shared.parts + i].lock() {
                std::mem::swap(&mut *m, &mut inbox);
            }
            part.ingest(&mut inbox);
        }
        if part.phases.pending() {
            advance_phases(part, shared);
        }
        let next = part.next_time().unwrap_or(u64::MAX);
        shared.next[i].store(next, Ordering::Release);
        if !part.out.errors.is_empty() {
            shared.failed.store(true, Ordering::Release);
        }
        shared.barrier.wait();
        let t = shared
            .next
            .iter()
            .map(|a| a.load(Ordering::Acquire))
            .min()
            .unwrap_or(u64::MAX);
        if shared.failed.load(Ordering::Acquire) || t == u64::MAX || t >= limit {
            return;
        }
        let end = t.saturating_add(shared.window).min(limit);
        if part.run(end) != Stop::Error && part.clock.now < end - 1 {
            part.clock.now = end - 1;
        }
        if let Some(trace) = &mut part.out.trace {
            trace.advance(end);
        }
        if let Some(progress) = progress {
            progress.reached(end);
        }
        for dst in 0..shared.parts {
            if !part.out.outbox[dst].is_empty()
                && let Ok(mut m) = shared.mail[i * shared.parts + dst].lock()
            {
                m.append(&mut part.out.outbox[dst]);
            }
        }
        if part.phases.pending()
            && let Ok(mut m) = shared.progress[i].lock()
        {
            m.clear();
            m.extend(
                part.phases
                    .done
                    .iter()
                    .copied()
                    .zip(part.phases.last.iter().copied()),
            );
        }
        shared.barrier.wait();
    }
}

/// Request the weight phases whose predecessors all partitions have completed (every
/// partition computes the same from the same progress).
fn advance_phases(part: &mut Partition<'_>, shared: &Shared) {
    let groups = part.phases.streams.len();
    let mut total: Vec<Progress> = vec![(0, None); groups];
    for p in &shared.progress {
        if let Ok(m) = p.lock() {
            for (t, &(done, last)) in total.iter_mut().zip(m.iter()) {
                t.0 += done;
                t.1 = t.1.max(last);
            }
        }
    }
    let mut wakes = Vec::new();
    part.phases.advance(
        &|g| total[g],
        part.setup.program,
        &mut part.fab.sources,
        &mut wakes,
    );
    for (s, when) in wakes {
        let node = part.fab.queues[part.fab.sources[s as usize].queue as usize].node;
        part.schedule(node, when);
    }
}

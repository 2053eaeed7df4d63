//! Running partitions on worker threads with conservative synchronisation.
//!
//! Every effect one partition has on another (a wavelet arriving, a credit returning) lands
//! exactly one hop latency `L` after it was caused. So all partitions can simulate the window
//! of cycles `[T, T + L)` independently, where `T` is the earliest pending event anywhere;
//! then they swap messages and agree on the next `T`. Idle stretches are skipped globally.

use crate::fabric::Msg;
use crate::partition::{Partition, Stop};
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
    next: Vec<AtomicU64>,
    failed: AtomicBool,
    barrier: SpinBarrier,
}

/// Run all partitions until the fabric is quiet, a partition fails, or the next event is at
/// or after `limit` (the cycle budget).
pub(crate) fn run(parts: &mut [Partition<'_>], limit: u64) {
    if parts.len() == 1 {
        parts[0].run(limit);
        return;
    }
    let n = parts.len();
    let shared = Shared {
        parts: n,
        mail: (0..n * n).map(|_| Mutex::new(Vec::new())).collect(),
        next: (0..n).map(|_| AtomicU64::new(u64::MAX)).collect(),
        failed: AtomicBool::new(false),
        barrier: SpinBarrier::new(n),
    };
    std::thread::scope(|s| {
        for (i, part) in parts.iter_mut().enumerate() {
            let shared = &shared;
            s.spawn(move || worker(i, part, shared, limit));
        }
    });
}

fn worker(i: usize, part: &mut Partition<'_>, shared: &Shared, limit: u64) {
    let mut inbox = Vec::new();
    loop {
        for src in 0..shared.parts {
            if let Ok(mut m) = shared.mail[src * shared.parts + i].lock() {
                std::mem::swap(&mut *m, &mut inbox);
            }
            part.ingest(&mut inbox);
        }
        let next = part.next_time().unwrap_or(u64::MAX);
        shared.next[i].store(next, Ordering::Release);
        if !part.errors.is_empty() {
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
        let end = t.saturating_add(part.latency).min(limit);
        if part.run(end) != Stop::Error && part.now < end - 1 {
            part.now = end - 1;
        }
        for dst in 0..shared.parts {
            if !part.outbox[dst].is_empty()
                && let Ok(mut m) = shared.mail[i * shared.parts + dst].lock()
            {
                m.append(&mut part.outbox[dst]);
            }
        }
        shared.barrier.wait();
    }
}

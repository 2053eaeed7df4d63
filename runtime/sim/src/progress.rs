//! How far a running simulation has got, for a progress display on another thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A handle on the cycle up to which a run has simulated everything, updated as the run goes
/// ([`crate::SimOptions::progress`]). Clones share the figure. Reading it never changes a
/// result.
#[derive(Clone, Debug, Default)]
pub struct Progress(Arc<AtomicU64>);

impl Progress {
    /// A handle at cycle 0.
    pub fn new() -> Progress {
        Progress::default()
    }

    /// Every cycle before this one has been simulated.
    pub fn cycle(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    pub(crate) fn reached(&self, cycle: u64) {
        self.0.store(cycle, Ordering::Relaxed);
    }
}

/// Two handles are equal when they share the figure.
impl PartialEq for Progress {
    fn eq(&self, other: &Progress) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Progress {}

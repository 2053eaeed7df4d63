//! Dry-run measurements kept across mappings, for a caller that maps the same models again
//! and again (the language server, after every edit): keyed by everything a measurement
//! reads — the kernel IR at both batches, its ports' sides, the region size, the cost model
//! and the task-switch cycles — so a kept figure is the one a new dry run would give, whatever was edited since.

use std::collections::BTreeMap;
use std::sync::Mutex;

use wsel_ir::cost::CostModel;
use wsel_ir::kernel::KernelIr;

use crate::chain_flow::NearSides;
use crate::kernel_work::Measured;

/// How many measurements a [`MeasuredWork`] keeps before it starts afresh.
const CAPACITY: usize = 4096;

/// The BLAKE3 digest of a measurement's inputs.
pub(crate) type Key = [u8; 32];

/// Measurements by the digest of their inputs (`None`: the dry run gave no figure).
pub struct MeasuredWork {
    entries: Mutex<BTreeMap<Key, Option<Measured>>>,
}

impl MeasuredWork {
    pub const fn new() -> Self {
        MeasuredWork {
            entries: Mutex::new(BTreeMap::new()),
        }
    }

    /// The digest of a measurement's inputs; `None` if they do not serialise.
    pub(crate) fn key(
        irs: &[KernelIr; 2],
        near: &NearSides,
        rows: u32,
        cols: u32,
        cost: &CostModel,
        switch_cycles: u64,
    ) -> Option<Key> {
        let sides: Vec<(&[u32], &[u32])> = near.iter().map(|a| a.ports()).collect();
        let inputs = (irs, sides, rows, cols, cost, switch_cycles);
        let bytes = postcard::to_stdvec(&inputs).ok()?;
        Some(*blake3::hash(&bytes).as_bytes())
    }

    pub(crate) fn get(&self, key: &Key) -> Option<Option<Measured>> {
        self.lock().get(key).cloned()
    }

    /// Forgets every measurement.
    pub fn clear(&self) {
        self.lock().clear();
    }

    pub(crate) fn insert(&self, key: Key, work: Option<Measured>) {
        let mut entries = self.lock();
        if entries.len() >= CAPACITY {
            entries.clear();
        }
        entries.insert(key, work);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<Key, Option<Measured>>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Default for MeasuredWork {
    fn default() -> Self {
        MeasuredWork::new()
    }
}

//! The run report: totals, per-PE busy and idle cycles (with the idle cycles spent waiting for
//! data, per color), per-link wavelet counts and per-color traffic, serialisable to JSON; and
//! the timing of each edge stream.

use serde::Serialize;
use wsel_target::Dir;

/// One PE's activity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PeActivity {
    /// Column.
    pub x: u32,
    /// Row.
    pub y: u32,
    /// Cycles spent running tasks (including task switches).
    pub busy_cycles: u64,
    /// The rest of the run.
    pub idle_cycles: u64,
    /// Tasks run.
    pub tasks: u64,
    /// The cycle its first task started; `None` when it ran none.
    pub first_task_start: Option<u64>,
    /// The cycle its last task ended (switch included); `None` when it ran none.
    pub last_task_end: Option<u64>,
    /// Idle cycles spent waiting for data, per color the PE posted receives on (sorted by
    /// color).
    pub waits: Vec<ColorWait>,
}

/// Idle cycles one PE spent waiting for wavelets of one color: cycles in which the PE ran no
/// task and had a posted receive on the color that was not yet complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ColorWait {
    /// The color.
    pub color: u8,
    /// The cycle the first wavelet of this color was written to the PE's SRAM.
    pub first_delivery: Option<u64>,
    /// Waiting cycles before `first_delivery` (the initial fill).
    pub before_first: u64,
    /// Waiting cycles from `first_delivery` on (stalls once the data has started arriving).
    pub after_first: u64,
}

/// When one edge stream moved: for an input, the cycles its wavelets were taken into the edge
/// router's input queue; for an output, the cycles they were forwarded off the fabric.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StreamTiming {
    /// Wavelets that entered (input) or left (output) the fabric.
    pub wavelets: u64,
    /// The cycle the stream was requested: for a host input its `start`; for a weight-store
    /// input the cycle its phase was requested (the store's latency comes after it); 0 for
    /// an output.
    pub requested: u64,
    /// The cycle the first wavelet entered or left the fabric.
    pub first: Option<u64>,
    /// The cycle the last wavelet entered or left the fabric.
    pub last: Option<u64>,
    /// Inputs: cycles, summed over its wavelets, that a wavelet the store (or host) had
    /// released waited for room in the edge router's queue — 0 when the fabric always took
    /// the stream as fast as it came. Outputs: 0.
    pub held_back: u64,
}

/// Traffic over one link direction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LinkTraffic {
    /// Column of the sending PE.
    pub x: u32,
    /// Row of the sending PE.
    pub y: u32,
    /// Direction of the link (off the fabric at an edge: host output).
    pub dir: Dir,
    /// Wavelets sent.
    pub wavelets: u64,
}

/// Traffic of one color.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ColorTraffic {
    /// The color.
    pub color: u8,
    /// Link hops made by wavelets of this color.
    pub hops: u64,
    /// Wavelets of this color delivered to PEs.
    pub delivered: u64,
}

/// What a run did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// Target name.
    pub target: String,
    /// Cycles until the fabric was quiet (see the crate documentation).
    pub cycles: u64,
    /// `cycles` at the target's clock.
    pub seconds: f64,
    /// Wavelet-hops between PEs.
    pub wavelet_hops: u64,
    /// Wavelets delivered into PE SRAM.
    pub wavelets_delivered: u64,
    /// Tasks run.
    pub tasks_run: u64,
    /// PEs that run code, row-major.
    pub pes: Vec<PeActivity>,
    /// Links that carried traffic, row-major.
    pub links: Vec<LinkTraffic>,
    /// Colors that carried traffic.
    pub colors: Vec<ColorTraffic>,
}

impl Report {
    /// The report as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The span of the program's work in the vendor SDK's timing convention: the latest
    /// `last_task_end` minus the earliest `first_task_start` over all PEs (every PE's tasks
    /// between its first start and its last end, in the CSL examples' `max end − min start`
    /// sense); `None` when no task ran.
    pub fn task_span(&self) -> Option<(u64, u64)> {
        let start = self.pes.iter().filter_map(|p| p.first_task_start).min()?;
        let end = self.pes.iter().filter_map(|p| p.last_task_end).max()?;
        Some((start, end))
    }

    /// Mean fraction of cycles the PEs were busy.
    pub fn utilisation(&self) -> f64 {
        if self.pes.is_empty() || self.cycles == 0 {
            return 0.0;
        }
        let busy: u64 = self.pes.iter().map(|p| p.busy_cycles).sum();
        busy as f64 / (self.pes.len() as f64 * self.cycles as f64)
    }
}

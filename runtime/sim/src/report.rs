//! The run report: totals, per-PE busy and idle cycles, per-link wavelet counts and per-color
//! traffic, serialisable to JSON.

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

    /// Mean fraction of cycles the PEs were busy.
    pub fn utilisation(&self) -> f64 {
        if self.pes.is_empty() || self.cycles == 0 {
            return 0.0;
        }
        let busy: u64 = self.pes.iter().map(|p| p.busy_cycles).sum();
        busy as f64 / (self.pes.len() as f64 * self.cycles as f64)
    }
}

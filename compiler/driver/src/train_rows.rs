//! What a streamed training step's report says of per-layer rows (`docs/running.md`, "How a
//! training step runs"): every phase's layer and rows, the columns they share, and the
//! step's estimated cycles against the one region's the mapper compared them with
//! (`wsel_map::map_training`).

use serde::Serialize;
use wsel_ir::graph::LayerGraph;
use wsel_map::Placement;

use crate::run_report::OneRegion;

/// A streamed step whose phases run on rows of their own.
#[derive(Debug, Clone, Serialize)]
pub struct PerLayerRows {
    /// Every phase in order: its layer and its rows (relayouts among them).
    pub phases: Vec<PhaseRows>,
    /// The columns every phase shares.
    pub cols: u32,
    /// The step's estimated cycles on these rows.
    pub estimated_cycles: u64,
    /// The one region the plan was compared with, and its estimate.
    pub one_region: OneRegion,
}

/// One phase's layer and rows.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseRows {
    pub layer: String,
    pub rows: u32,
}

impl PerLayerRows {
    /// The rows of `placement` (of `graph`) when it was chosen over one region; `None` for a
    /// step on one region.
    pub fn of(graph: &LayerGraph, placement: &Placement) -> Option<PerLayerRows> {
        let (rows, cols, estimated_cycles) = placement.one_region?;
        let phases = placement
            .layers
            .iter()
            .enumerate()
            .map(|(p, placed)| PhaseRows {
                layer: graph.layers[placement.instance(p)].name.clone(),
                rows: placed.rows,
            })
            .collect();
        Some(PerLayerRows {
            phases,
            cols: placement.layers.first().map_or(0, |l| l.cols),
            estimated_cycles: placement.estimated_cycles,
            one_region: OneRegion {
                rows,
                cols,
                estimated_cycles,
            },
        })
    }

    /// The summary's line: the rows of the phases that are not relayouts, and both estimates.
    pub fn line(&self) -> String {
        let shown: Vec<String> = self
            .phases
            .iter()
            .filter(|p| !p.layer.starts_with("relayout#"))
            .map(|p| format!("{} {}", p.layer, p.rows))
            .collect();
        let relayouts = self.phases.len() - shown.len();
        format!(
            "  per-layer rows of {} columns: {} ({relayouts} relayouts); estimated {} cycles a pass against {} on one region of {}×{}\n",
            self.cols,
            shown.join(", "),
            wsel_map::report::group(self.estimated_cycles),
            wsel_map::report::group(self.one_region.estimated_cycles),
            self.one_region.rows,
            self.one_region.cols
        )
    }
}

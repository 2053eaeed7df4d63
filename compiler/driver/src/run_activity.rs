//! What each layer's PEs did during a run, summed up from the simulator's per-PE records so
//! that the report stays small on any fabric: tasks, busy cycles (least, mean, most),
//! utilisation, and per color the layer's PEs received on, the cycles they waited before the
//! first wavelet (the fill) and after it (stalls).

use std::collections::BTreeMap;

use serde::Serialize;
use wsel_map::{ColorRule, PlacedLayer, Placement};

use crate::run_timing::LayerPes;

/// One layer's activity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayerActivity {
    /// Tasks its PEs ran.
    pub tasks: u64,
    /// Busy cycles per PE (running tasks, task switches included).
    pub busy_cycles: Spread,
    /// Its PEs' busy cycles over their cycles: the sum of busy cycles over PEs × run cycles.
    pub utilisation: f64,
    /// Per color its PEs posted receives on, by color.
    pub waits: Vec<LayerWait>,
}

/// Cycles a layer's PEs waited for one color: cycles in which a PE ran no task and had a posted
/// receive on the color that was not complete (`wsel_sim::ColorWait`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayerWait {
    pub color: u8,
    /// The layer's `in` port with this color, if one has it.
    pub port: Option<String>,
    /// PEs that posted receives on the color; the figures below are over them.
    pub pes: u64,
    /// Waits before the color's first wavelet reached the PE.
    pub fill_cycles: Spread,
    /// Waits from the first wavelet on: stalls once the data has started arriving.
    pub stall_cycles: Spread,
}

/// The least, mean and most of a figure over PEs (0 over none).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub min: u64,
    pub mean: f64,
    pub max: u64,
}

impl Spread {
    fn of(values: &[u64]) -> Spread {
        let sum: u64 = values.iter().sum();
        Spread {
            min: values.iter().copied().min().unwrap_or(0),
            mean: if values.is_empty() {
                0.0
            } else {
                sum as f64 / values.len() as f64
            },
            max: values.iter().copied().max().unwrap_or(0),
        }
    }
}

/// Every placed layer's activity in a run of `cycles` cycles, from its PEs' records `pes`
/// (`run_timing::layer_pes`).
pub fn layer_activity(
    placement: &Placement,
    pes: &[LayerPes<'_>],
    cycles: u64,
) -> Vec<LayerActivity> {
    placement
        .layers
        .iter()
        .zip(pes)
        .map(|(layer, region)| activity(layer, region, cycles))
        .collect()
}

/// The activity of `layer` in a run (or phase) of `cycles` cycles, from its PEs' records.
pub fn activity(layer: &PlacedLayer, region: &LayerPes<'_>, cycles: u64) -> LayerActivity {
    let busy: Vec<u64> = region.pes.iter().map(|pe| pe.busy_cycles).collect();
    let pe_cycles = region.pes.len() as u64 * cycles;
    let mut waits: BTreeMap<u8, (Vec<u64>, Vec<u64>)> = BTreeMap::new();
    for wait in region.pes.iter().flat_map(|pe| &pe.waits) {
        let (fill, stall) = waits.entry(wait.color).or_default();
        fill.push(wait.before_first);
        stall.push(wait.after_first);
    }
    LayerActivity {
        tasks: region.pes.iter().map(|pe| pe.tasks).sum(),
        busy_cycles: Spread::of(&busy),
        utilisation: if pe_cycles > 0 {
            busy.iter().sum::<u64>() as f64 / pe_cycles as f64
        } else {
            0.0
        },
        waits: waits
            .into_iter()
            .map(|(color, (fill, stall))| LayerWait {
                color,
                port: in_port(layer, color),
                pes: fill.len() as u64,
                fill_cycles: Spread::of(&fill),
                stall_cycles: Spread::of(&stall),
            })
            .collect(),
    }
}

/// The name of `layer`'s `in` port that uses `color` on some PE.
fn in_port(layer: &PlacedLayer, color: u8) -> Option<String> {
    layer
        .ports
        .iter()
        .filter(|p| p.input)
        .find(|p| match p.colors {
            ColorRule::Fixed { color: c } => c == color,
            ColorRule::Alternating { even, odd, .. } => even == color || odd == color,
        })
        .map(|p| p.name.clone())
}

#[cfg(test)]
mod tests {
    use super::Spread;

    #[test]
    fn spreads_are_least_mean_and_most() {
        assert_eq!(
            Spread::of(&[4, 1, 7]),
            Spread {
                min: 1,
                mean: 4.0,
                max: 7
            }
        );
        assert_eq!(
            Spread::of(&[]),
            Spread {
                min: 0,
                mean: 0.0,
                max: 0
            }
        );
    }
}

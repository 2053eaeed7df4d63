//! Timing figures of a run that the simulator's per-stream timing and receive waits give:
//! the pipeline's fill and drain latency, and per layer in weight-streaming mode the compute,
//! weight-load and stall cycles and the store bandwidth that would remove the stalls.
//!
//! Nothing here is estimated: every figure is read from the simulation of the run.

use serde::Serialize;
use std::collections::HashMap;
use wsel_map::Placement;

use wsel_sim::{EdgeSource, Outcome, PeActivity, Program, Report, StreamTiming};

/// How long the first result took to appear, and how long the last took after the last input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Latency {
    /// From the first input wavelet entering the fabric to the first result wavelet leaving it.
    pub fill_cycles: u64,
    /// From the last input wavelet entering the fabric to the last result wavelet leaving it.
    pub drain_cycles: u64,
}

/// The fill and drain latency of a run, when it had host inputs and produced outputs.
pub fn latency(program: &Program, outcome: &Outcome) -> Option<Latency> {
    let host_inputs = program
        .inputs
        .iter()
        .zip(&outcome.input_timing)
        .filter(|(input, _)| input.source == EdgeSource::Host)
        .map(|(_, timing)| timing);
    let (first_in, last_in) = span(host_inputs)?;
    let (first_out, last_out) = span(outcome.output_timing.iter())?;
    Some(Latency {
        fill_cycles: first_out.saturating_sub(first_in),
        drain_cycles: last_out.saturating_sub(last_in),
    })
}

/// One layer's weight streaming, as simulated.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WeightStreaming {
    /// Bytes of weights streamed from the store into the layer.
    pub weight_bytes: u64,
    /// The busiest PE of the layer's busy cycles.
    pub compute_cycles: u64,
    /// From the first to the last of the layer's weight wavelets entering the fabric.
    pub load_cycles: u64,
    /// The cycles every PE of the layer sat idle waiting for weights once they had begun to
    /// arrive: the least such wait over the layer's PEs. (A PE whose chunk comes late in a
    /// weight row also waits, at the start, for the chunks of the PEs before it; that is part
    /// of the fill, like the wait for the first weights, and the least wait leaves it out.)
    pub stall_cycles: u64,
    /// The most cycles by which one of the layer's weight streams entered later than the
    /// store released it, because the fabric had no room (see `StreamTiming::held_back`).
    pub held_back_cycles: u64,
    /// What the stalls wait for: the store, when the layer would use its weights faster than
    /// the store delivers them, or else the fabric (it carries the weights to the PEs slower
    /// than the store offers them); `None` without stalls.
    pub stalled_by: Option<StallCause>,
    /// The store bandwidth at which the weights arrive as fast as the layer uses them: the
    /// weight bytes over the load time without the stalls. `None` when the stalls are the
    /// fabric's, which no store bandwidth removes.
    pub stall_free_bytes_per_cycle: Option<f64>,
}

/// What a layer's weight stalls wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StallCause {
    /// The store's bandwidth: the fabric took every weight as soon as the store released it.
    Store,
    /// The fabric: the store's weights waited for room at the edge.
    Fabric,
}

impl StallCause {
    pub fn name(self) -> &'static str {
        match self {
            StallCause::Store => "store",
            StallCause::Fabric => "fabric",
        }
    }
}

/// The simulated PEs of one placed layer, and the busy cycles of its busiest PE.
pub struct LayerPes<'a> {
    pub pes: Vec<&'a PeActivity>,
    pub busiest: u64,
}

/// The simulator's PE records grouped by the placed layer whose region holds them, in one
/// pass over the PEs.
pub fn layer_pes<'a>(placement: &Placement, report: &'a Report) -> Vec<LayerPes<'a>> {
    let mut owner = HashMap::new();
    for (l, layer) in placement.layers.iter().enumerate() {
        let r = layer.rect;
        for y in r.y..r.y + r.height {
            for x in r.x..r.x + r.width {
                owner.insert((x, y), l);
            }
        }
    }
    let mut layers: Vec<LayerPes<'a>> = placement
        .layers
        .iter()
        .map(|_| LayerPes {
            pes: Vec::new(),
            busiest: 0,
        })
        .collect();
    for pe in &report.pes {
        if let Some(&l) = owner.get(&(pe.x, pe.y)) {
            layers[l].busiest = layers[l].busiest.max(pe.busy_cycles);
            layers[l].pes.push(pe);
        }
    }
    layers
}

/// For each placed layer that streams weights from the store, its figures; `None` for the
/// others. `program` is the simulated program, whose inputs correspond one to one with
/// `placement.inputs`; `pes` the layers' PEs ([`layer_pes`]); `store_bytes_per_cycle` the
/// weight store's bandwidth.
pub fn weight_streaming(
    placement: &Placement,
    program: &Program,
    outcome: &Outcome,
    pes: &[LayerPes<'_>],
    store_bytes_per_cycle: u32,
) -> Vec<Option<WeightStreaming>> {
    let mut streams: Vec<Vec<usize>> = vec![Vec::new(); placement.layers.len()];
    for (i, point) in placement.inputs.iter().enumerate() {
        if point.source == wsel_map::EdgeSource::WeightStore {
            streams[point.layer].push(i);
        }
    }
    streams
        .iter()
        .zip(pes)
        .map(|(streams, layer)| {
            let streams: Vec<WeightStream<'_>> = streams
                .iter()
                .map(|&i| WeightStream {
                    color: placement.inputs[i].color,
                    bytes: 4 * program.inputs[i].data.len() as u64,
                    timing: &outcome.input_timing[i],
                })
                .collect();
            layer_weights(&streams, layer, store_bytes_per_cycle)
        })
        .collect()
}

/// One weight stream of a layer, as simulated.
pub struct WeightStream<'a> {
    pub color: u8,
    pub bytes: u64,
    pub timing: &'a StreamTiming,
}

/// The weight-streaming figures of one layer from its weight streams and its PEs; `None`
/// when it has no weight stream that moved.
pub fn layer_weights(
    streams: &[WeightStream<'_>],
    layer: &LayerPes<'_>,
    store_bytes_per_cycle: u32,
) -> Option<WeightStreaming> {
    if streams.is_empty() {
        return None;
    }
    let weight_bytes = streams.iter().map(|s| s.bytes).sum();
    let (first, last) = span(streams.iter().map(|s| s.timing))?;
    let load_cycles = last - first + 1;
    let stall_cycles = layer
        .pes
        .iter()
        .map(|pe| {
            pe.waits
                .iter()
                .filter(|w| streams.iter().any(|s| s.color == w.color))
                .map(|w| w.after_first)
                .sum::<u64>()
        })
        .min()
        .unwrap_or(0);
    let held_back_cycles = streams
        .iter()
        .map(|s| s.timing.held_back)
        .max()
        .unwrap_or(0);
    let unstalled = load_cycles.saturating_sub(stall_cycles).max(1);
    let stall_free = weight_bytes as f64 / unstalled as f64;
    let stalled_by = match stall_cycles {
        0 => None,
        _ if stall_free > f64::from(store_bytes_per_cycle) => Some(StallCause::Store),
        _ => Some(StallCause::Fabric),
    };
    Some(WeightStreaming {
        weight_bytes,
        compute_cycles: layer.busiest,
        load_cycles,
        stall_cycles,
        held_back_cycles,
        stalled_by,
        stall_free_bytes_per_cycle: (stalled_by != Some(StallCause::Fabric)).then_some(stall_free),
    })
}

/// The earliest first and the latest last wavelet of some streams, if any moved.
pub fn span<'a>(timings: impl Iterator<Item = &'a StreamTiming>) -> Option<(u64, u64)> {
    timings.fold(None, |acc, t| match (acc, t.first, t.last) {
        (None, Some(f), Some(l)) => Some((f, l)),
        (Some((f0, l0)), Some(f), Some(l)) => Some((f0.min(f), l0.max(l))),
        (acc, _, _) => acc,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wsel_sim::{EdgeInput, EdgeOutput, SimOptions, simulate};
    use wsel_target::{Coord, Dir, Port, PortSet, Target};

    #[test]
    fn fill_and_drain_of_a_stream_across_a_row() {
        // dev: 16 columns, hop latency L = 2, host pool 64 B/cycle (both streams move one
        // wavelet per cycle). n = 10 wavelets enter router (0, 0) from the west at cycles
        // 0..=9 and are forwarded east at once; each crosses 15 links to router (15, 0),
        // arriving 15·L = 30 cycles later, where the output takes it off the east edge in the
        // same cycle. First out 30, last out 39: fill = 30 - 0, drain = 39 - 9 = 30.
        let target = Target::dev();
        let mut program = Program::new();
        for x in 0..16 {
            program.add_route(
                Coord::new(x, 0),
                0,
                PortSet::only(Port::W),
                PortSet::only(Port::E),
            );
        }
        program.inputs.push(EdgeInput {
            at: Coord::new(0, 0),
            side: Dir::West,
            color: 0,
            data: (0..10).collect(),
            source: EdgeSource::Host,
            start: 0,
            phase: 0,
        });
        program.outputs.push(EdgeOutput {
            at: Coord::new(15, 0),
            side: Dir::East,
            color: 0,
        });
        let outcome = simulate(&target, &program, &SimOptions::default()).expect("runs");
        assert_eq!(outcome.outputs[0], (0..10).collect::<Vec<u32>>());
        assert_eq!(
            latency(&program, &outcome),
            Some(Latency {
                fill_cycles: 30,
                drain_cycles: 30
            })
        );
    }
}

//! The report of a weight-streaming run (`docs/running.md`, "Weight streaming"): the same
//! table and totals as a pipelined run's, built from the phases' simulations, and a table of
//! the phases — when each started, how long it ran, when its weights came in.

use std::fmt::Write;

use serde::Serialize;

use wsel_map::report::group;

use crate::run_report::{Accuracy, LayerRow, OneRegion, RunContext, RunReport};
use crate::run_timing::{Latency, WeightStreaming};
use crate::streamed::{StoreBytes, StreamedRun};

/// One phase of a weight-streaming run.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseRow {
    /// The layer the phase ran.
    pub layer: String,
    /// The micro-batch it ran for (0 when the batch runs whole).
    pub micro_batch: u32,
    /// The cycle the phase started (its layer's code and routes loaded).
    pub start_cycle: u64,
    /// Cycles until it went quiet.
    pub cycles: u64,
    /// The first and last cycle, counted from the phase's start, a weight entered the fabric.
    pub weights_in: Option<(u64, u64)>,
    /// Its region's logical rows and columns (per-layer rows: `docs/running.md`).
    pub rows: u32,
    pub cols: u32,
}

/// The weight streaming of two micro-batches of one layer as one: bytes, cycles and stalls
/// added, the cause and the stall-free bandwidth of the first.
fn add_weights(a: WeightStreaming, b: WeightStreaming) -> WeightStreaming {
    WeightStreaming {
        weight_bytes: a.weight_bytes + b.weight_bytes,
        compute_cycles: a.compute_cycles + b.compute_cycles,
        load_cycles: a.load_cycles + b.load_cycles,
        stall_cycles: a.stall_cycles + b.stall_cycles,
        held_back_cycles: a.held_back_cycles.max(b.held_back_cycles),
        ..a
    }
}

/// A batch run in micro-batches, one after another.
#[derive(Debug, Clone, Serialize)]
pub struct MicroBatches {
    pub count: u32,
    /// Samples per micro-batch.
    pub samples: u64,
    /// Why: the whole batch's working set that does not fit.
    pub reason: String,
    /// The store traffic of re-streaming the weights for each micro-batch against parking
    /// the waiting micro-batches' activations in the store.
    pub traffic: Option<wsel_map::MicroTraffic>,
    /// What the run moved between the fabric and the store, as simulated.
    pub store: StoreBytes,
}

impl MicroBatches {
    fn layer_major(&self) -> bool {
        self.traffic.as_ref().is_some_and(|t| t.layer_major)
    }
}

impl RunReport {
    /// The report of a weight-streaming run.
    pub fn streamed(context: &RunContext<'_>, run: &StreamedRun) -> RunReport {
        let placement = context.placement;
        let target = context.target;
        let batch = placement.batch.max(1);
        // One row per layer: its first phase, its busy cycles and weights summed over every
        // micro-batch.
        let layers: Vec<LayerRow> = first_of_each(&run.phases, |p| p.layer)
            .map(|first| {
                let layer = &placement.layers[first.layer];
                let all = run.phases.iter().filter(|p| p.layer == first.layer);
                let busiest: u64 = all.clone().map(|p| p.busiest).sum();
                let weights = all.filter_map(|p| p.weights).reduce(add_weights);
                LayerRow {
                    name: layer.name.clone(),
                    kernel: layer.kernel.clone(),
                    origin: (layer.rect.x, layer.rect.y),
                    rows: layer.rows,
                    cols: layer.cols,
                    pes: layer.pe_count(),
                    sram_bytes_per_pe: layer.sram_bytes,
                    sram_bytes_available: target.sram_bytes,
                    estimated_cycles_per_sample: layer.estimate.cycles,
                    // The estimate is of one micro-batch's phase.
                    estimated_work_per_sample: layer
                        .estimate
                        .work_per_sample(placement.samples_per_copy.max(1)),
                    simulated_cycles_per_sample: busiest as f64 / batch as f64,
                    weights,
                    activity: first.activity.clone(),
                }
            })
            .collect();
        let bottleneck = run
            .phases
            .iter()
            .max_by_key(|p| p.cycles)
            .map(|p| placement.layers[p.layer].name.clone());
        let seconds = target.seconds(run.cycles);
        let latency = match (run.first_in, run.first_out, run.last_in, run.last_out) {
            (Some(first_in), Some(first_out), Some(last_in), Some(last_out)) => Some(Latency {
                fill_cycles: first_out.saturating_sub(first_in),
                drain_cycles: last_out.saturating_sub(last_in),
            }),
            _ => None,
        };
        RunReport {
            file: context.file.to_path_buf(),
            model: context.graph.model.clone(),
            target: target.name.clone(),
            fabric: (target.width, target.height),
            clock_hz: target.clock_hz as f64,
            mode: "streaming",
            mode_reason: context.decision.reason.clone(),
            backend: context.backend.name(),
            batch,
            layers,
            cycles: run.cycles,
            estimated_cycles: placement.estimated_cycles,
            estimated_fill_cycles: 0,
            seconds,
            samples_per_second: if seconds > 0.0 {
                batch as f64 / seconds
            } else {
                0.0
            },
            utilisation: run.report.utilisation(),
            bottleneck,
            latency,
            task_span: None,
            weight_store_bytes_per_cycle: target.weight_store.bandwidth_bytes_per_cycle,
            weight_store_latency_cycles: target.weight_store.latency_cycles,
            wall_seconds: context.wall.as_secs_f64(),
            wavelet_hops: run.report.wavelet_hops,
            output: context.output.map(std::path::Path::to_path_buf),
            output_shape: context.result.shape.clone(),
            accuracy: context
                .accuracy
                .clone()
                .map(|(labels, (correct, total))| Accuracy {
                    labels,
                    correct,
                    total,
                }),
            phases: run
                .phases
                .iter()
                .map(|p| PhaseRow {
                    layer: placement.layers[p.layer].name.clone(),
                    micro_batch: p.micro,
                    start_cycle: p.start,
                    cycles: p.cycles,
                    weights_in: p.weights_in,
                    rows: placement.layers[p.layer].rows,
                    cols: placement.layers[p.layer].cols,
                })
                .collect(),
            micro_batches: (placement.micro_batches > 1).then(|| MicroBatches {
                count: placement.micro_batches,
                samples: placement.samples_per_copy,
                reason: placement.micro_batch_reason.clone(),
                traffic: placement.micro_traffic.clone(),
                store: run.store,
            }),
            one_region: placement.one_region.map(|(rows, cols, cycles)| OneRegion {
                rows,
                cols,
                estimated_cycles: cycles,
            }),
        }
    }

    /// The phases of a weight-streaming run, one line each; nothing in pipelined mode.
    pub(crate) fn phase_table(&self, out: &mut String) {
        if self.phases.is_empty() {
            return;
        }
        let one = self.phases.iter().all(|p| p.rows == self.phases[0].rows);
        let on = match one {
            true => "on the region above",
            false => "each on its rows of the columns above, relayouts moving the activations",
        };
        match &self.micro_batches {
            Some(m) if m.layer_major() => {
                let _ = writeln!(
                    out,
                    "\n  {} micro-batches of {} samples, layer-major: each layer over every \
                     micro-batch before the next ({} samples at once do not fit: {}); one layer \
                     at a time {on}:",
                    m.count,
                    group(m.samples),
                    group(self.batch),
                    m.reason,
                );
                m.store_lines(out);
            }
            Some(m) => {
                let _ = writeln!(
                    out,
                    "\n  {} micro-batches of {} samples, one after another, each streaming every \
                     layer's weights again ({} samples at once do not fit: {}); {} phases each, \
                     one layer at a time {on}:",
                    m.count,
                    group(m.samples),
                    group(self.batch),
                    m.reason,
                    self.phases.len() / m.count.max(1) as usize
                );
                m.store_lines(out);
            }
            None => {
                let _ = writeln!(
                    out,
                    "\n  {} phases, one layer at a time {on}:",
                    self.phases.len()
                );
            }
        }
        if let Some(one) = &self.one_region {
            let _ = writeln!(
                out,
                "  per-layer rows: estimated {} cycles, against {} with every phase on one \
                 region of {} × {}.",
                group(self.estimated_cycles),
                group(one.estimated_cycles),
                one.rows,
                one.cols
            );
        }
        let _ = writeln!(
            out,
            "  {:<12} {:>12} {:>12} {:>22}",
            "phase", "start cyc", "cycles", "weights in (from start)"
        );
        for p in first_of_each(&self.phases, |p| p.layer.clone()) {
            let weights = p.weights_in.map_or("—".to_string(), |(first, last)| {
                format!("{} .. {}", group(first), group(last))
            });
            let _ = writeln!(
                out,
                "  {:<12} {:>12} {:>12} {:>22}",
                p.layer,
                group(p.start_cycle),
                group(p.cycles),
                weights
            );
        }
        if self
            .micro_batches
            .as_ref()
            .is_some_and(MicroBatches::layer_major)
        {
            let _ = writeln!(
                out,
                "  … each layer's first phase; the other micro-batches' run between them (every \
                 phase in the JSON report)"
            );
        } else if let (Some(m), Some(second)) = (
            &self.micro_batches,
            self.phases.iter().find(|p| p.micro_batch == 1),
        ) {
            let _ = writeln!(
                out,
                "  … and the same for micro-batches 2 to {}, from cycle {} (every phase in the JSON report)",
                m.count,
                group(second.start_cycle)
            );
        }
    }
}

impl MicroBatches {
    /// The traffic line and what the run moved with the store.
    fn store_lines(&self, out: &mut String) {
        if let Some(traffic) = &self.traffic {
            let _ = writeln!(out, "  store traffic: {}.", traffic.sentence());
        }
        let _ = writeln!(
            out,
            "  store, as simulated: {} B of weights streamed in; {} B of activations parked out, \
             {} B back in.",
            group(self.store.weights),
            group(self.store.parked_out),
            group(self.store.parked_in)
        );
    }
}

/// The first of `items` for each key, in order.
fn first_of_each<T, K: PartialEq>(items: &[T], key: impl Fn(&T) -> K) -> impl Iterator<Item = &T> {
    items
        .iter()
        .enumerate()
        .filter(move |(i, item)| !items[..*i].iter().any(|before| key(before) == key(item)))
        .map(|(_, item)| item)
}

//! Process 0's end of a cluster run: the systems' results put together in sample order, the
//! cluster's report (per-system cycles, the broadcast per layer, the step, the scaling
//! against one system and what limits it) as a table and as JSON, and the files written.

use std::fmt::Write as _;

use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};
use wsel_map::report::group;

use super::Prepared;
use super::summary::{Failure, LayerLoad, RankPayload, SystemSummary};
use crate::atomic::Outputs;
use crate::cli::RunArgs;
use crate::run_errors::E0804;
use crate::run_report::accuracy;
use crate::status::Status;
use crate::tensor::{Tensor, encode_npy};

/// The version of the cluster report's layout.
pub const CLUSTER_SCHEMA: u32 = 1;

/// The cluster's report. The figures that follow from the cycles (seconds, samples per
/// second, the baseline's rate, the speed-up and the scaling efficiency) are methods, and the
/// JSON gives them under their names, so they cannot disagree with the cycles.
#[derive(Debug, Clone)]
pub struct ClusterReport {
    pub file: String,
    pub model: String,
    pub target: String,
    /// The target's clock, which turns cycles into seconds.
    pub clock_hz: u64,
    pub mode: &'static str,
    pub systems: u32,
    pub batch: u64,
    pub tree: Tree,
    /// What every system's weight store is in streaming mode: the tree's feed.
    pub feed: Option<Feed>,
    /// The slowest system's cycles: the step's.
    pub step_cycles: u64,
    /// The one-system run of the whole batch (with several systems).
    pub baseline_cycles: Option<u64>,
    pub layers: Vec<LayerRow>,
    pub limit: Option<Limit>,
    pub per_system: Vec<SystemRow>,
    pub output: String,
    pub output_shape: Vec<u64>,
    pub accuracy: Option<(u64, u64)>,
    pub wall_seconds: f64,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Tree {
    pub fan_out: u32,
    pub depth: u32,
    pub link_bytes_per_cycle: u32,
    pub link_latency_cycles: u32,
    pub switch_latency_cycles: u32,
    pub reduce_bytes_per_cycle: u32,
    pub packet_bytes: u32,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Feed {
    pub first_byte_cycles: u64,
    pub bytes_per_cycle: u32,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Baseline {
    pub cycles: u64,
    pub samples_per_second: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct LayerRow {
    pub layer: String,
    /// Bytes broadcast per pass over the layers (per micro-batch).
    pub weight_bytes: u64,
    /// The tree's event model: from the store's request to the last byte at every system.
    pub broadcast_cycles: u64,
    /// Gradients summed on the way back: none in inference.
    pub reduce_cycles: Option<u64>,
    /// The slowest system's figures (every micro-batch added).
    pub load_cycles: u64,
    pub compute_cycles: u64,
    pub stall_cycles: u64,
    pub stalled_by: Option<String>,
    pub stall_free_bytes_per_cycle: Option<f64>,
}

/// What stops linear scaling at this number of systems: the layers that wait for their
/// weights from the feed, and the feed bandwidth that would remove the waits.
#[derive(Debug, Clone, Serialize)]
pub struct Limit {
    /// `"broadcast"` when the tree's links are the narrower part of the feed, else `"store"`.
    pub by: &'static str,
    pub layers: Vec<String>,
    pub bytes_per_cycle: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct SystemRow {
    pub system: u32,
    pub first_sample: u64,
    pub samples: u64,
    pub cycles: u64,
    pub wait_cycles: u64,
    pub wavelet_hops: u64,
}

impl ClusterReport {
    /// The step's time.
    pub fn seconds(&self) -> f64 {
        self.step_cycles as f64 / self.clock_hz as f64
    }

    /// The batch's samples per second at the step's time.
    pub fn samples_per_second(&self) -> f64 {
        self.rate(self.step_cycles)
    }

    /// The one-system run of the whole batch, with its rate.
    pub fn baseline(&self) -> Option<Baseline> {
        self.baseline_cycles.map(|cycles| Baseline {
            cycles,
            samples_per_second: self.rate(cycles),
        })
    }

    /// The baseline's cycles over the step's.
    pub fn speedup(&self) -> Option<f64> {
        self.baseline_cycles
            .map(|b| b as f64 / self.step_cycles.max(1) as f64)
    }

    /// The speed-up per system.
    pub fn efficiency(&self) -> Option<f64> {
        self.speedup().map(|s| s / f64::from(self.systems))
    }

    /// Samples per second of the batch in `cycles`.
    fn rate(&self, cycles: u64) -> f64 {
        let seconds = cycles as f64 / self.clock_hz as f64;
        self.batch as f64 / seconds.max(f64::MIN_POSITIVE)
    }
}

impl Serialize for ClusterReport {
    /// The report's fields and its derived figures, in the order of the JSON layout.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("ClusterReport", 21)?;
        out.serialize_field("file", &self.file)?;
        out.serialize_field("model", &self.model)?;
        out.serialize_field("target", &self.target)?;
        out.serialize_field("mode", &self.mode)?;
        out.serialize_field("systems", &self.systems)?;
        out.serialize_field("batch", &self.batch)?;
        out.serialize_field("tree", &self.tree)?;
        out.serialize_field("feed", &self.feed)?;
        out.serialize_field("step_cycles", &self.step_cycles)?;
        out.serialize_field("seconds", &self.seconds())?;
        out.serialize_field("samples_per_second", &self.samples_per_second())?;
        out.serialize_field("baseline", &self.baseline())?;
        out.serialize_field("speedup", &self.speedup())?;
        out.serialize_field("efficiency", &self.efficiency())?;
        out.serialize_field("layers", &self.layers)?;
        out.serialize_field("limit", &self.limit)?;
        out.serialize_field("per_system", &self.per_system)?;
        out.serialize_field("output", &self.output)?;
        out.serialize_field("output_shape", &self.output_shape)?;
        out.serialize_field("accuracy", &self.accuracy)?;
        out.serialize_field("wall_seconds", &self.wall_seconds)?;
        out.end()
    }
}

#[derive(Serialize)]
struct Json<'a> {
    schema: u32,
    cluster: &'a ClusterReport,
}

/// Puts the processes' payloads together, writes the outputs and prints the table (process
/// 0 only); the exit status.
pub fn finish(
    args: &RunArgs,
    prepared: &Prepared,
    payloads: Vec<RankPayload>,
    ranks: usize,
) -> Status {
    let mut systems: Vec<(usize, SystemSummary)> = Vec::new();
    let mut failures: Vec<(usize, Failure)> = Vec::new();
    let mut baseline = None;
    for (rank, payload) in payloads.into_iter().enumerate() {
        for outcome in payload.systems.into_iter().chain(payload.baseline) {
            match outcome {
                Ok(s) if s.system == u32::MAX => baseline = Some(s),
                Ok(s) => systems.push((rank, s)),
                Err(f) => failures.push((rank, f)),
            }
        }
    }
    // The first real failure, by system; a system stopped by another's failure last.
    failures.sort_by_key(|(_, f)| (f.aborted, f.system));
    if let Some((rank, failure)) = failures.first() {
        return failure.print(*rank, ranks);
    }
    systems.sort_by_key(|(_, s)| s.system);
    if systems.len() != prepared.systems as usize || (prepared.systems > 1 && baseline.is_none()) {
        eprintln!("error: the results of some systems did not reach process 0");
        return Status::Failure;
    }
    let systems: Vec<SystemSummary> = systems.into_iter().map(|(_, s)| s).collect();
    let whole = &prepared.whole;
    let result = result_of(&systems, whole.batch);
    let output = args
        .output
        .clone()
        .or(whole.config.as_ref().and_then(|c| c.output.clone()))
        .unwrap_or_else(|| {
            args.model
                .file
                .parent()
                .unwrap_or(std::path::Path::new("."))
                .join("out")
                .join(format!("{}.npy", whole.graph.model))
        });
    let report = ClusterReport::new(
        args,
        prepared,
        &systems,
        baseline.as_ref(),
        &result,
        &output,
    );
    let mut outputs = Outputs::default();
    match encode_npy(&result) {
        Ok(bytes) => outputs.add(&output, bytes),
        Err(e) => {
            eprintln!("error[{}]: {e}", e.code());
            return Status::Failure;
        }
    }
    if let Some(path) = &args.report {
        let json = Json {
            schema: CLUSTER_SCHEMA,
            cluster: &report,
        };
        let written = outputs.add_written(path, |out| {
            serde_json::to_writer_pretty(out, &json).map_err(std::io::Error::from)
        });
        if let Err(failed) = written {
            eprintln!(
                "error[{E0804}]: cannot write `{}`: {}",
                failed.path.display(),
                failed.error
            );
            return Status::Failure;
        }
    }
    if let Err(failed) = outputs.commit() {
        eprintln!(
            "error[{E0804}]: cannot write `{}`: {}",
            failed.path.display(),
            failed.error
        );
        return Status::Failure;
    }
    crate::stdout::print_then(&report.table(), Status::Success)
}

/// The systems' results, one after another: the whole batch's.
fn result_of(systems: &[SystemSummary], batch: u64) -> Tensor {
    let first = &systems[0];
    let mut shape = first.shape.clone();
    if let Some(samples) = shape.first_mut() {
        *samples = batch;
    }
    Tensor {
        elem: first.elem,
        shape,
        words: systems
            .iter()
            .flat_map(|s| s.words.iter().copied())
            .collect(),
    }
}

impl ClusterReport {
    fn new(
        args: &RunArgs,
        prepared: &Prepared,
        systems: &[SystemSummary],
        baseline: Option<&SystemSummary>,
        result: &Tensor,
        output: &std::path::Path,
    ) -> ClusterReport {
        let whole = &prepared.whole;
        let target = &whole.target;
        let swarm = target.swarm;
        let step_cycles = systems.iter().map(|s| s.cycles).max().unwrap_or(0);
        let layers = layer_rows(prepared, systems);
        let limit = limit_of(prepared, &layers);
        let accuracy = prepared
            .labels
            .as_ref()
            .map(|(labels, _)| accuracy(result, labels));
        ClusterReport {
            file: args.model.file.display().to_string(),
            model: whole.graph.model.clone(),
            target: target.name.clone(),
            clock_hz: target.clock_hz,
            mode: match whole.decision.mode {
                wsel_ir::graph::Mode::Pipelined => "pipelined",
                wsel_ir::graph::Mode::Streaming => "streaming",
            },
            systems: prepared.systems,
            batch: whole.batch,
            tree: Tree {
                fan_out: swarm.fan_out,
                depth: prepared.tree.depth,
                link_bytes_per_cycle: swarm.link_bytes_per_cycle,
                link_latency_cycles: swarm.link_latency_cycles,
                switch_latency_cycles: swarm.switch_latency_cycles,
                reduce_bytes_per_cycle: swarm.reduce_bytes_per_cycle,
                packet_bytes: swarm.packet_bytes,
            },
            feed: prepared.feed.map(|(first, rate)| Feed {
                first_byte_cycles: first,
                bytes_per_cycle: rate,
            }),
            step_cycles,
            baseline_cycles: baseline.map(|b| b.cycles),
            layers,
            limit,
            per_system: systems
                .iter()
                .map(|s| SystemRow {
                    system: s.system,
                    first_sample: s.first_sample,
                    samples: s.samples,
                    cycles: s.cycles,
                    wait_cycles: s.wait_cycles,
                    wavelet_hops: s.wavelet_hops,
                })
                .collect(),
            output: output.display().to_string(),
            output_shape: result.shape.clone(),
            accuracy,
            wall_seconds: prepared.started.elapsed().as_secs_f64(),
        }
    }

    /// The table `wsel run --systems N` prints.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} · model {} · target {} · {} systems in data parallel · {} mode · batch {}",
            self.file, self.model, self.target, self.systems, self.mode, self.batch
        );
        let t = &self.tree;
        let _ = writeln!(
            out,
            "broadcast/reduce tree: fan-out {}, depth {}, links {} B/cycle and {} cycles, switches {} cycles, packets of {} B",
            t.fan_out,
            t.depth,
            t.link_bytes_per_cycle,
            t.link_latency_cycles,
            t.switch_latency_cycles,
            t.packet_bytes
        );
        match &self.feed {
            Some(f) => {
                let _ = writeln!(
                    out,
                    "every system's weights arrive from the tree: first byte after {} cycles, then {} B/cycle",
                    group(f.first_byte_cycles),
                    f.bytes_per_cycle
                );
            }
            None if self.systems > 1 => {
                let _ = writeln!(
                    out,
                    "independent replicas: weights resident in every system's SRAM, nothing crosses the tree in inference"
                );
            }
            None => {}
        }
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "  {:>6} {:>12} {:>14} {:>12} {:>14}",
            "system", "samples", "cycles", "waited", "wavelet-hops"
        );
        for s in &self.per_system {
            let _ = writeln!(
                out,
                "  {:>6} {:>12} {:>14} {:>12} {:>14}",
                s.system,
                format!("{}..{}", s.first_sample, s.first_sample + s.samples),
                group(s.cycles),
                group(s.wait_cycles),
                group(s.wavelet_hops)
            );
        }
        if !self.layers.is_empty() {
            let _ = writeln!(out);
            let _ = writeln!(
                out,
                "  {:<12} {:>12} {:>14} {:>10} {:>12} {:>12} {:>10} {:>10} {:>16}",
                "layer",
                "weights",
                "broadcast cyc",
                "reduce",
                "compute cyc",
                "load cyc",
                "stall cyc",
                "stalled by",
                "stall-free B/cyc"
            );
            for l in &self.layers {
                let _ = writeln!(
                    out,
                    "  {:<12} {:>12} {:>14} {:>10} {:>12} {:>12} {:>10} {:>10} {:>16}",
                    l.layer,
                    format!("{} B", group(l.weight_bytes)),
                    group(l.broadcast_cycles),
                    l.reduce_cycles.map_or("—".to_string(), group),
                    group(l.compute_cycles),
                    group(l.load_cycles),
                    group(l.stall_cycles),
                    l.stalled_by.as_deref().unwrap_or("—"),
                    l.stall_free_bytes_per_cycle
                        .map_or("—".to_string(), |b| format!("{b:.1}"))
                );
            }
            let _ = writeln!(
                out,
                "  (the slowest system's figures; reduce: no gradients in inference)"
            );
        }
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "  step {} cycles = {:.1} µs · {:.0} samples/s",
            group(self.step_cycles),
            self.seconds() * 1e6,
            self.samples_per_second()
        );
        if let (Some(b), Some(speedup), Some(eff)) =
            (self.baseline(), self.speedup(), self.efficiency())
        {
            let _ = writeln!(
                out,
                "  one system on the whole batch: {} cycles · {:.0} samples/s · speed-up {:.2} on {} systems · scaling efficiency {:.1}%",
                group(b.cycles),
                b.samples_per_second,
                speedup,
                self.systems,
                100.0 * eff
            );
        }
        match &self.limit {
            Some(limit) => {
                let what = match limit.by {
                    "broadcast" => "the broadcast tree's links",
                    _ => "the weight store",
                };
                let _ = writeln!(
                    out,
                    "  scaling is limited by {what}: {} wait for weights; a feed of {:.1} B/cycle would remove the waits",
                    limit.layers.join(", "),
                    limit.bytes_per_cycle
                );
            }
            None if self.feed.is_some() => {
                let _ = writeln!(
                    out,
                    "  no layer waits on the broadcast: its bandwidth does not limit scaling at {} systems",
                    self.systems
                );
            }
            None => {}
        }
        let _ = writeln!(
            out,
            "  simulated in {:.2} s of wall time",
            self.wall_seconds
        );
        let _ = writeln!(out, "  output: {} {:?}", self.output, self.output_shape);
        if let Some((correct, total)) = self.accuracy {
            let _ = writeln!(
                out,
                "  accuracy: {:.2}% ({correct}/{total})",
                100.0 * correct as f64 / total.max(1) as f64
            );
        }
        out
    }
}

/// Per layer streamed from the store: the tree's broadcast of its weights (event model) and
/// the slowest system's load, compute and stalls.
fn layer_rows(prepared: &Prepared, systems: &[SystemSummary]) -> Vec<LayerRow> {
    let Some(first) = systems.first() else {
        return Vec::new();
    };
    let target = &prepared.whole.target;
    let store = target.weight_store;
    first
        .layers
        .iter()
        .enumerate()
        .map(|(i, layer)| {
            let on = |s: &SystemSummary| s.layers.get(i).cloned();
            let loads: Vec<LayerLoad> = systems.iter().filter_map(on).collect();
            let worst = loads
                .iter()
                .max_by_key(|l| (l.stall_cycles, l.load_cycles))
                .unwrap_or(layer);
            let passes = u64::from(first.micro_batches.max(1));
            let bytes = layer.weight_bytes / passes;
            let broadcast = if prepared.systems > 1 && prepared.feed.is_some() {
                wsel_swarm::broadcast(
                    &prepared.tree,
                    &target.swarm,
                    store.bandwidth_bytes_per_cycle,
                    store.latency_cycles,
                    bytes,
                )
                .cycles()
            } else {
                u64::from(store.latency_cycles)
                    + bytes.div_ceil(u64::from(store.bandwidth_bytes_per_cycle.max(1)))
            };
            LayerRow {
                layer: layer.layer.clone(),
                weight_bytes: bytes,
                broadcast_cycles: broadcast,
                reduce_cycles: None,
                load_cycles: loads.iter().map(|l| l.load_cycles).max().unwrap_or(0),
                compute_cycles: loads.iter().map(|l| l.compute_cycles).max().unwrap_or(0),
                stall_cycles: worst.stall_cycles,
                stalled_by: worst.stalled_by.clone(),
                stall_free_bytes_per_cycle: loads
                    .iter()
                    .filter_map(|l| l.stall_free_bytes_per_cycle)
                    .reduce(f64::max),
            }
        })
        .collect()
}

/// The layers whose stalls the feed's bandwidth causes (`stalled by store`: the weights came
/// no faster than the feed gave them), and the bandwidth that removes them.
fn limit_of(prepared: &Prepared, layers: &[LayerRow]) -> Option<Limit> {
    let (_, rate) = prepared.feed?;
    let waiting: Vec<&LayerRow> = layers
        .iter()
        .filter(|l| l.stalled_by.as_deref() == Some("store"))
        .collect();
    if waiting.is_empty() {
        return None;
    }
    let needed = waiting
        .iter()
        .filter_map(|l| l.stall_free_bytes_per_cycle)
        .fold(f64::from(rate), f64::max);
    let target = &prepared.whole.target;
    let by = if target.swarm.link_bytes_per_cycle < target.weight_store.bandwidth_bytes_per_cycle {
        "broadcast"
    } else {
        "store"
    };
    Some(Limit {
        by,
        layers: waiting.iter().map(|l| l.layer.clone()).collect(),
        bytes_per_cycle: needed,
    })
}

//! The report of `wsel run`: a table people read at a glance, and the same data as JSON —
//! versioned ([`REPORT_SCHEMA`]), with per-layer figures always and per-PE and per-link detail
//! on request, so that it stays small on any fabric. `docs/running.md` documents every field.
//!
//! Every cycle figure comes from the simulation (the per-PE busy cycles of the simulator's
//! report, grouped by region); the mapper's analytic estimate is printed beside it with the
//! gap, so users learn when to trust the quick estimate.

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use wsel_codegen::Backend;
use wsel_ir::graph::{LayerGraph, Mode};
use wsel_map::Placement;
use wsel_sim::{Outcome, Program};
use wsel_target::Target;

use wsel_map::report::group;

use crate::pipeline::ModeDecision;
use crate::run_activity::{LayerActivity, layer_activity};
use crate::run_timing::{
    Latency, StallCause, WeightStreaming, latency, layer_pes, weight_streaming,
};
use crate::streamed_report::{MicroBatches, PhaseRow};
use crate::tensor::Tensor;

/// The version of the JSON report's layout (its `schema` field), raised whenever a field
/// changes meaning, is renamed or is removed.
pub const REPORT_SCHEMA: u32 = 1;

/// Everything the report says, serialisable.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub file: PathBuf,
    pub model: String,
    pub target: String,
    pub fabric: (u32, u32),
    pub clock_hz: f64,
    pub mode: &'static str,
    pub mode_reason: String,
    pub backend: &'static str,
    pub batch: u64,
    pub layers: Vec<LayerRow>,
    pub cycles: u64,
    /// The mapper's estimate of `cycles` (`docs/mapping.md` §5), and the fill in it.
    pub estimated_cycles: u64,
    pub estimated_fill_cycles: u64,
    pub seconds: f64,
    pub samples_per_second: f64,
    pub utilisation: f64,
    pub bottleneck: Option<String>,
    /// Fill and drain latency, when the run had host inputs and outputs.
    pub latency: Option<Latency>,
    /// The span of the PEs' work, `max end − min start` over all PEs (the CSL examples'
    /// timing convention); `None` in streaming mode or when no task ran.
    pub task_span: Option<TaskSpan>,
    /// The weight store's bandwidth and latency (the figures streaming mode runs against).
    pub weight_store_bytes_per_cycle: u32,
    pub weight_store_latency_cycles: u32,
    pub wall_seconds: f64,
    pub wavelet_hops: u64,
    /// The result file; `None` when the result stayed in memory (the Python package).
    pub output: Option<PathBuf>,
    pub output_shape: Vec<u64>,
    pub accuracy: Option<Accuracy>,
    /// The phases of a weight-streaming run, in order (empty in pipelined mode).
    pub phases: Vec<PhaseRow>,
    /// Weight streaming in micro-batches, when the batch does not fit at once.
    pub micro_batches: Option<MicroBatches>,
    /// Weight streaming on per-layer rows: the one region the phases would otherwise share and
    /// its estimated cycles (`wsel_map::Placement::one_region`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub one_region: Option<OneRegion>,
}

/// The one region a streamed run with per-layer rows was compared with.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct OneRegion {
    pub rows: u32,
    pub cols: u32,
    pub estimated_cycles: u64,
}

/// When the PEs worked: the earliest cycle any PE started a task, the latest cycle any PE
/// ended one, and the difference (`cycles`).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct TaskSpan {
    pub first_start: u64,
    pub last_end: u64,
    pub cycles: u64,
}

impl TaskSpan {
    fn of(report: &wsel_sim::Report) -> Option<TaskSpan> {
        let (first_start, last_end) = report.task_span()?;
        Some(TaskSpan {
            first_start,
            last_end,
            cycles: last_end - first_start,
        })
    }
}

/// One layer of the report.
#[derive(Debug, Clone, Serialize)]
pub struct LayerRow {
    pub name: String,
    pub kernel: String,
    /// Physical origin on the fabric, and the logical region size.
    pub origin: (u32, u32),
    pub rows: u32,
    pub cols: u32,
    pub pes: u64,
    pub sram_bytes_per_pe: u64,
    pub sram_bytes_available: u32,
    /// The mapper's estimate of the stage's period, cycles per sample: its inputs, work and
    /// chain wait (`docs/mapping.md` §5).
    pub estimated_cycles_per_sample: u64,
    /// Its task-work term: the busiest PE's busy cycles per sample, from dry runs of the
    /// kernel (`docs/mapping.md` §5); comparable with `simulated_cycles_per_sample`.
    pub estimated_work_per_sample: f64,
    /// The busiest PE of the region's busy cycles, divided by the batch.
    pub simulated_cycles_per_sample: f64,
    /// Weight streaming figures, for a layer whose weights come from the weight store.
    pub weights: Option<WeightStreaming>,
    /// What its PEs did.
    pub activity: LayerActivity,
}

/// How often the result's argmax matched the labels.
#[derive(Debug, Clone, Serialize)]
pub struct Accuracy {
    pub labels: PathBuf,
    pub correct: u64,
    pub total: u64,
}

/// What a report says about a run besides its simulation: the program, where it ran, how
/// long the simulation took and what it produced.
pub struct RunContext<'a> {
    pub file: &'a Path,
    pub graph: &'a LayerGraph,
    pub placement: &'a Placement,
    pub decision: &'a ModeDecision,
    pub target: &'a Target,
    pub backend: Backend,
    pub wall: Duration,
    /// The result file, if the result was written to one.
    pub output: Option<&'a Path>,
    pub result: &'a Tensor,
    pub accuracy: Option<(PathBuf, (u64, u64))>,
}

impl RunReport {
    /// The report of a run simulated as one program (`program`, which gave `outcome`).
    pub fn new(context: &RunContext<'_>, program: &Program, outcome: &Outcome) -> RunReport {
        let RunContext {
            file,
            graph,
            placement,
            decision,
            target,
            backend,
            wall,
            output,
            result,
            ..
        } = *context;
        let accuracy = context.accuracy.clone();
        // With copies of the pipeline (`docs/mapping.md` §5), each region runs its copy's share
        // of the batch.
        let batch = placement.batch.max(1);
        let per_region = placement.samples_per_copy.max(1);
        let pes = layer_pes(placement, &outcome.report);
        let streamed = weight_streaming(
            placement,
            program,
            outcome,
            &pes,
            target.weight_store.bandwidth_bytes_per_cycle,
        );
        let activity = layer_activity(placement, &pes, outcome.cycles);
        let layers = placement
            .layers
            .iter()
            .zip(pes.iter().zip(streamed))
            .zip(activity)
            .enumerate()
            .map(|(i, ((layer, (region, weights)), activity))| LayerRow {
                name: wsel_map::report::label(placement, i),
                kernel: layer.kernel.clone(),
                origin: (layer.rect.x, layer.rect.y),
                rows: layer.rows,
                cols: layer.cols,
                pes: layer.pe_count(),
                sram_bytes_per_pe: layer.sram_bytes,
                sram_bytes_available: target.sram_bytes,
                estimated_cycles_per_sample: layer.estimate.cycles,
                estimated_work_per_sample: layer.estimate.work_per_sample(per_region),
                simulated_cycles_per_sample: region.busiest as f64 / per_region as f64,
                weights,
                activity,
            })
            .collect::<Vec<_>>();
        let bottleneck = layers
            .iter()
            .max_by(|a, b| {
                a.simulated_cycles_per_sample
                    .total_cmp(&b.simulated_cycles_per_sample)
            })
            .map(|l| l.name.clone());
        let seconds = target.seconds(outcome.cycles);
        RunReport {
            file: file.to_path_buf(),
            model: graph.model.clone(),
            target: target.name.clone(),
            fabric: (target.width, target.height),
            clock_hz: target.clock_hz as f64,
            mode: match decision.mode {
                Mode::Pipelined => "pipelined",
                Mode::Streaming => "streaming",
            },
            mode_reason: decision.reason.clone(),
            backend: backend.name(),
            batch,
            layers,
            cycles: outcome.cycles,
            estimated_cycles: placement.estimated_cycles,
            estimated_fill_cycles: placement.estimated_fill_cycles,
            seconds,
            samples_per_second: if seconds > 0.0 {
                batch as f64 / seconds
            } else {
                0.0
            },
            utilisation: outcome.report.utilisation(),
            bottleneck,
            latency: latency(program, outcome),
            task_span: TaskSpan::of(&outcome.report),
            weight_store_bytes_per_cycle: target.weight_store.bandwidth_bytes_per_cycle,
            weight_store_latency_cycles: target.weight_store.latency_cycles,
            wall_seconds: wall.as_secs_f64(),
            wavelet_hops: outcome.report.wavelet_hops,
            output: output.map(Path::to_path_buf),
            output_shape: result.shape.clone(),
            accuracy: accuracy.map(|(labels, (correct, total))| Accuracy {
                labels,
                correct,
                total,
            }),
            phases: Vec::new(),
            micro_batches: None,
            one_region: None,
        }
    }

    /// The table printed on standard output.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} · model {} · target {} ({}×{} PEs) · {} mode ({}) · backend {} · batch {}",
            self.file.display(),
            self.model,
            self.target,
            self.fabric.0,
            self.fabric.1,
            self.mode,
            self.mode_reason,
            self.backend,
            self.batch
        );
        let _ = writeln!(out);
        let name_col = self.name_width();
        let _ = writeln!(
            out,
            "  {:<name_col$} {:<16} {:>10} {:>7} {:>6} {:>15} {:>11} {:>11} {:>7} {:>11}",
            "layer",
            "kernel",
            "at",
            "region",
            "PEs",
            "SRAM/PE",
            "est busy/s",
            "sim busy/s",
            "gap",
            "est stage/s"
        );
        for l in &self.layers {
            let _ = writeln!(
                out,
                "  {:<name_col$} {:<16} {:>10} {:>7} {:>6} {:>15} {:>11.1} {:>11.1} {:>7} {:>11}",
                l.name,
                l.kernel,
                format!("({},{})", l.origin.0, l.origin.1),
                format!("{}×{}", l.rows, l.cols),
                l.pes,
                format!("{}/{} B", l.sram_bytes_per_pe, l.sram_bytes_available),
                l.estimated_work_per_sample,
                l.simulated_cycles_per_sample,
                gap(l.estimated_work_per_sample, l.simulated_cycles_per_sample),
                l.estimated_cycles_per_sample
            );
        }
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "  {} cycles = {:.1} µs at {:.0} MHz · {} samples/s · utilisation {:.1}%{}",
            group(self.cycles),
            self.seconds * 1e6,
            self.clock_hz / 1e6,
            group(self.samples_per_second.round() as u64),
            self.utilisation * 100.0,
            self.bottleneck
                .as_ref()
                .map_or(String::new(), |b| format!(" · bottleneck {b}"))
        );
        let _ = writeln!(
            out,
            "  estimated {} cycles{} · simulated {} (gap {})",
            group(self.estimated_cycles),
            if self.phases.is_empty() && self.estimated_fill_cycles > 0 {
                format!(" (fill {})", group(self.estimated_fill_cycles))
            } else {
                String::new()
            },
            group(self.cycles),
            gap(self.estimated_cycles as f64, self.cycles as f64)
        );
        if let Some(latency) = &self.latency {
            let _ = writeln!(
                out,
                "  fill {} cycles (first input in → first result out) · drain {} cycles (last input in → last result out)",
                group(latency.fill_cycles),
                group(latency.drain_cycles)
            );
        }
        self.phase_table(&mut out);
        self.weight_table(&mut out);
        let _ = writeln!(
            out,
            "  simulated {} wavelet-hops in {:.2} s of wall time",
            group(self.wavelet_hops),
            self.wall_seconds
        );
        let dims: Vec<String> = self.output_shape.iter().map(u64::to_string).collect();
        let place = self
            .output
            .as_ref()
            .map_or_else(|| "in memory".to_string(), |p| p.display().to_string());
        let _ = writeln!(out, "  output: {place} [{}]", dims.join(", "));
        if let Some(a) = &self.accuracy {
            let _ = writeln!(
                out,
                "  accuracy: {:.2}% ({}/{}) against {}",
                100.0 * a.correct as f64 / a.total.max(1) as f64,
                a.correct,
                a.total,
                a.labels.display()
            );
        }
        out
    }

    /// The width of the tables' layer column: the longest name (with copies, `copy 12 ·
    /// dense#1`), at least 12.
    fn name_width(&self) -> usize {
        let longest = self.layers.iter().map(|l| l.name.chars().count()).max();
        longest.unwrap_or(0).max(12)
    }

    /// Per layer whose weights stream from the store: compute, load and stall cycles and the
    /// bandwidth that would remove the stalls. Nothing when no layer streams weights.
    fn weight_table(&self, out: &mut String) {
        if self.layers.iter().all(|l| l.weights.is_none()) {
            return;
        }
        let name_col = self.name_width();
        let _ = writeln!(
            out,
            "\n  weights stream from the store at {} B/cycle, {} cycles latency:",
            self.weight_store_bytes_per_cycle,
            group(u64::from(self.weight_store_latency_cycles))
        );
        let _ = writeln!(
            out,
            "  {:<name_col$} {:>12} {:>12} {:>12} {:>12} {:>10} {:>17}",
            "layer",
            "weights",
            "compute cyc",
            "load cyc",
            "stall cyc",
            "stalled by",
            "stall-free B/cyc"
        );
        for l in &self.layers {
            if let Some(w) = &l.weights {
                let _ = writeln!(
                    out,
                    "  {:<name_col$} {:>12} {:>12} {:>12} {:>12} {:>10} {:>17}",
                    l.name,
                    format!("{} B", group(w.weight_bytes)),
                    group(w.compute_cycles),
                    group(w.load_cycles),
                    group(w.stall_cycles),
                    w.stalled_by.map_or("—", StallCause::name),
                    w.stall_free_bytes_per_cycle
                        .map_or("—".to_string(), |b| format!("{b:.1}"))
                );
            }
        }
        let _ = writeln!(out);
    }

    /// Write the report as JSON to `out`: the run's figures, and the simulation's; with
    /// `detail`, every PE's and every link's activity too.
    pub fn write_json(
        &self,
        simulation: &wsel_sim::Report,
        detail: bool,
        out: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        let json = Json {
            schema: REPORT_SCHEMA,
            run: self,
            simulation: Simulation {
                wavelets_delivered: simulation.wavelets_delivered,
                tasks_run: simulation.tasks_run,
                colors: &simulation.colors,
                pes: detail.then_some(&simulation.pes[..]),
                links: detail.then_some(&simulation.links[..]),
            },
        };
        serde_json::to_writer_pretty(out, &json).map_err(std::io::Error::from)
    }
}

/// The JSON report.
#[derive(Serialize)]
struct Json<'a> {
    schema: u32,
    run: &'a RunReport,
    simulation: Simulation<'a>,
}

/// The simulator's figures the run's do not already give.
#[derive(Serialize)]
struct Simulation<'a> {
    wavelets_delivered: u64,
    tasks_run: u64,
    colors: &'a [wsel_sim::ColorTraffic],
    #[serde(skip_serializing_if = "Option::is_none")]
    pes: Option<&'a [wsel_sim::PeActivity]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    links: Option<&'a [wsel_sim::LinkTraffic]>,
}

/// How far `estimate` is off `simulated`, in whole percent (`+12%`); `—` without a simulated
/// figure.
fn gap(estimate: f64, simulated: f64) -> String {
    if simulated > 0.0 {
        let percent = (estimate / simulated - 1.0) * 100.0;
        // Rounded first, and `+ 0.0` turns a negative zero into `+0%`.
        format!("{:+.0}%", percent.round() + 0.0)
    } else {
        "—".to_string()
    }
}

/// `(correct, total)`: how many samples' argmax over the result's last dimension equals the
/// label.
pub fn accuracy(result: &Tensor, labels: &[i64]) -> (u64, u64) {
    let per_sample = result.sample_len().max(1);
    let values = result.to_f32();
    let mut correct = 0;
    for (sample, label) in values.chunks(per_sample).zip(labels) {
        let argmax = sample
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(i, _)| i as i64);
        correct += u64::from(argmax == Some(*label));
    }
    (correct, labels.len() as u64)
}

//! A weight-streaming run on the simulated fabric (`docs/running.md`, "Weight streaming"):
//! the placement's phases, one after another, each simulated as a program of its own on the
//! region they share.
//!
//! Phase `k` starts when phase `k − 1` has gone quiet and the fabric has taken the next
//! layer's code and routes (`target.reconfigure_cycles`). Its layer finds its resident inputs
//! in SRAM as the phases before left them (`crate::resident`), and its weights stream from
//! the store, which fetched them while the phase before ran: the store's latency counts from
//! the start of the phase before (`Program::weight_store_warm`). A run's cycles are the sum of
//! the phases' cycles and the reconfigurations between them.

use std::collections::BTreeMap;

use wsel_ir::graph::{LayerGraph, TensorRef};
use wsel_map::Placement;
use wsel_sim::{
    ColorTraffic, LinkTraffic, Outcome, PeActivity, Program, Report, SimError, SimOptions, simulate,
};
use wsel_target::Target;

use crate::assemble::{Assembled, HostData, OutputPart, Scope, assemble_scope};
use crate::held::HeldWeights;
use crate::pipeline::Compiled;
use crate::resident::Resident;
use crate::run_timing::{LayerPes, WeightStream, WeightStreaming, layer_weights, span};
use crate::run_trace::{PhasePart, TraceFile};
use crate::tensor::Tensor;

/// What one phase did, in the fabric's time.
#[derive(Debug, Clone)]
pub struct PhaseRecord {
    /// The placed layer the phase ran.
    pub layer: usize,
    /// The micro-batch it ran for (0 when the batch runs whole).
    pub micro: u32,
    /// The cycle the phase started (after the reconfiguration before it).
    pub start: u64,
    /// The cycles until it went quiet.
    pub cycles: u64,
    /// Busy cycles of its busiest PE.
    pub busiest: u64,
    /// The first and last cycle (from `start`) its weights entered the fabric.
    pub weights_in: Option<(u64, u64)>,
    /// Its weight streaming figures, when it streamed weights.
    pub weights: Option<WeightStreaming>,
    /// What its PEs did in the phase.
    pub activity: crate::run_activity::LayerActivity,
}

/// A whole weight-streaming run.
pub struct StreamedRun {
    pub phases: Vec<PhaseRecord>,
    /// Cycles of the whole run: every phase and the reconfigurations between them.
    pub cycles: u64,
    /// The phases' simulation reports added up (per-PE busy cycles summed over the phases).
    pub report: Report,
    /// The edge outputs of the phases that send the result to the host, and what part of
    /// the result each carries.
    pub outputs: Vec<Vec<u32>>,
    pub output_parts: Vec<OutputPart>,
    /// Bytes the store streamed and took: weights, parked activations out and back in.
    pub store: StoreBytes,
    /// The cycles the first host input entered and the last result wavelet left.
    pub first_in: Option<u64>,
    pub last_in: Option<u64>,
    pub first_out: Option<u64>,
    pub last_out: Option<u64>,
}

/// What a streamed run moved between the fabric and the weight store, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct StoreBytes {
    /// Weights (and biases) streamed into the fabric.
    pub weights: u64,
    /// Activations parked: sent out of the fabric to the store.
    pub parked_out: u64,
    /// Parked activations streamed back in.
    pub parked_in: u64,
}

/// Why a phase failed: its simulator error, and the phase.
pub struct PhaseFailure {
    pub phase: u32,
    pub error: PhaseError,
}

pub enum PhaseError {
    Assemble(String),
    /// Another system of the cluster failed (`crate::cluster`): this one stopped with it.
    Aborted,
    Simulate(SimError),
    /// The phase's part of the trace could not be set up or spliced.
    Trace(std::io::Error),
}

/// Runs every phase of a weight-streaming placement, for each micro-batch in turn; with
/// `trace`, each phase writes its part of the trace, and the parts are spliced into it at the
/// end.
pub fn run(
    graph: &LayerGraph,
    placement: &Placement,
    compiled: &Compiled,
    data: &HostData<'_>,
    target: &Target,
    options: &SimOptions,
    trace: Option<&TraceFile>,
) -> Result<StreamedRun, PhaseFailure> {
    let program = Streamed {
        graph,
        placement,
        compiled,
        target,
    };
    run_gated(program, data, options, trace, &mut |cycles| Some(cycles))
}

/// A cluster's gate between the phases of one of its systems (`crate::cluster`): given the
/// cycles this system's phase took, the cycles the cluster's slowest system took for it (the
/// next layer's weights are broadcast to every system at once), or `None` when another
/// system failed and this one must stop.
pub type PhaseGate<'g> = dyn FnMut(u64) -> Option<u64> + 'g;

/// [`run`] for one system of a cluster: after every phase the system waits at `gate` for the
/// cluster's slowest system, so its next phase starts when the cluster's does.
pub fn run_gated(
    program: Streamed<'_>,
    data: &HostData<'_>,
    options: &SimOptions,
    trace: Option<&TraceFile>,
    gate: &mut PhaseGate<'_>,
) -> Result<StreamedRun, PhaseFailure> {
    let Streamed {
        placement, target, ..
    } = program;
    let mut runner = Runner {
        gate,
        program,
        options,
        trace,
        run: StreamedRun {
            phases: Vec::new(),
            cycles: 0,
            report: ReportSum::default().report(target, 0),
            outputs: Vec::new(),
            output_parts: Vec::new(),
            store: StoreBytes::default(),
            first_in: None,
            last_in: None,
            first_out: None,
            last_out: None,
        },
        sum: ReportSum::default(),
        parts: Vec::new(),
        processes: 0,
        warm: u64::from(target.weight_store.latency_cycles),
        started: false,
    };
    let size = placement.samples_per_copy.max(1) as usize;
    let layer_major = placement
        .micro_traffic
        .as_ref()
        .is_some_and(|t| t.layer_major);
    if layer_major {
        crate::streamed_layer::run(&mut runner, data, size)?;
        return runner.finish();
    }
    for micro in 0..placement.micro_batches.max(1) {
        let inputs = micro_batch(data.inputs, micro as usize, size);
        let data = HostData {
            inputs: &inputs,
            params: data.params,
        };
        runner.pass(&data, micro)?;
    }
    runner.finish()
}

/// What a streamed run runs: the staged graph (lowered for a micro-batch), its placement and
/// code, on a target.
#[derive(Clone, Copy)]
pub struct Streamed<'a> {
    pub graph: &'a LayerGraph,
    pub placement: &'a Placement,
    pub compiled: &'a Compiled,
    pub target: &'a Target,
}

/// A streamed run in progress.
pub(crate) struct Runner<'a, 'g> {
    gate: &'a mut PhaseGate<'g>,
    program: Streamed<'a>,
    options: &'a SimOptions,
    trace: Option<&'a TraceFile>,
    run: StreamedRun,
    sum: ReportSum,
    /// The phases' parts of the trace, and the trace processes they number so far.
    parts: Vec<PhasePart>,
    processes: u32,
    /// Cycles of the store's latency past when the next phase starts.
    warm: u64,
    /// Whether a phase has run (every later one starts after a reconfiguration).
    started: bool,
}

/// One micro-batch's state on the fabric: its resident results, and how many layers still
/// take each.
pub(crate) struct MicroState {
    pub resident: Resident,
    consumers: Vec<usize>,
}

impl MicroState {
    pub fn new(graph: &LayerGraph) -> MicroState {
        MicroState {
            resident: Resident::new(),
            consumers: consumer_counts(graph),
        }
    }

    /// Phase `phase` has run (or been skipped): the results its layers took and nothing
    /// needs any more leave SRAM.
    pub fn after(&mut self, graph: &LayerGraph, placement: &Placement, phase: u32) {
        for l in (0..placement.layers.len()).filter(|&l| placement.layers[l].phase == phase) {
            for arg in &graph.layers[placement.instance(l)].args {
                if let TensorRef::Layer(p) = *arg {
                    self.consumers[p] -= 1;
                    if self.consumers[p] == 0 {
                        self.resident.release(p);
                    }
                }
            }
        }
    }
}

/// What a phase does beside simulating its layer (layer-major order, `crate::streamed_layer`).
#[derive(Default)]
pub(crate) struct PhaseWork<'w> {
    /// Weights held since the layer's first micro-batch: loaded, nothing streamed.
    pub held: Option<&'w HeldWeights>,
    /// Keep the layer's held weights at the end of the phase.
    pub keep: bool,
    /// Parked streams, by part, that feed the phase's edge inputs from the store.
    pub unpark: Option<&'w BTreeMap<u32, Vec<u32>>>,
    /// The phase parks: its edge outputs go to the store, not to the result.
    pub park: bool,
}

/// What a phase left: its cycles, the weights it holds, the streams it parked (by part).
pub(crate) struct PhaseDone {
    pub cycles: u64,
    pub kept: Option<HeldWeights>,
    pub parked: BTreeMap<u32, Vec<u32>>,
}

impl<'a> Runner<'a, '_> {
    /// What the run runs.
    pub fn program(&self) -> Streamed<'a> {
        self.program
    }

    /// Every phase, in order, for micro-batch `micro` (whose inputs `data` holds).
    fn pass(&mut self, data: &HostData<'_>, micro: u32) -> Result<(), PhaseFailure> {
        let mut state = MicroState::new(self.program.graph);
        for phase in 0..self.program.placement.phases {
            self.step(phase, micro, data, &mut state, PhaseWork::default())?;
        }
        Ok(())
    }

    /// Runs phase `phase` for micro-batch `micro` after a reconfiguration (but the first),
    /// waits at the gate, and lets go of what nothing needs any more.
    pub fn step(
        &mut self,
        phase: u32,
        micro: u32,
        data: &HostData<'_>,
        state: &mut MicroState,
        work: PhaseWork<'_>,
    ) -> Result<PhaseDone, PhaseFailure> {
        let gap = u64::from(self.program.target.reconfigure_cycles);
        if self.started {
            self.run.cycles += gap;
        }
        self.started = true;
        let done = self.phase(phase, micro, data, &mut state.resident, work)?;
        // In a cluster the next phase starts when the slowest system's phase has ended.
        let cycles = (self.gate)(done.cycles).ok_or(PhaseFailure {
            phase,
            error: PhaseError::Aborted,
        })?;
        self.run.cycles += cycles.saturating_sub(done.cycles);
        state.after(self.program.graph, self.program.placement, phase);
        // The phase ended at `self.run.cycles`; the next starts after a reconfiguration.
        self.warm = cycles + gap;
        Ok(done)
    }

    /// Simulates one phase, keeps what it leaves resident and records it.
    fn phase(
        &mut self,
        phase: u32,
        micro: u32,
        data: &HostData<'_>,
        resident: &mut Resident,
        work: PhaseWork<'_>,
    ) -> Result<PhaseDone, PhaseFailure> {
        let Streamed {
            graph,
            placement,
            compiled,
            target,
        } = self.program;
        let fail = |error| PhaseFailure { phase, error };
        let start = self.run.cycles;
        let part = match self.trace {
            Some(t) => t
                .phase(placement, phase, start, self.processes, target)
                .map_err(|e| fail(PhaseError::Trace(e)))?,
            None => None,
        };
        if let Some(part) = &part {
            let others = usize::from(part.options.others.is_some());
            self.processes += (part.options.groups.len() + others) as u32;
        }
        let options = SimOptions {
            trace: part.as_ref().map(|p| p.options.clone()),
            ..self.options.clone()
        };
        self.parts.extend(part);
        let latency = u64::from(target.weight_store.latency_cycles);
        let scope = Scope::Phase {
            phase,
            resident,
            warm: self.warm.min(latency),
        };
        let mut assembled = assemble_scope(graph, placement, compiled, data, scope)
            .map_err(|e| fail(PhaseError::Assemble(e)))?;
        for part in &mut assembled.output_parts {
            (part.copy, part.copies) = (micro, placement.micro_batches.max(1));
        }
        if let Some(held) = work.held {
            held.load(&mut assembled.program)
                .map_err(|e| fail(PhaseError::Assemble(e)))?;
        }
        if let Some(streams) = work.unpark {
            self.run.store.parked_in +=
                crate::streamed_layer::feed(&mut assembled.program, placement, phase, streams)
                    .map_err(|e| fail(PhaseError::Assemble(e)))?;
        }
        let outcome = simulate(target, &assembled.program, &options)
            .map_err(|e| fail(PhaseError::Simulate(e)))?;
        let mut kept = None;
        for (l, placed) in placement.layers.iter().enumerate() {
            if placed.phase != phase {
                continue;
            }
            let instance = placement.instance(l);
            let ir = &compiled.irs[compiled.layer_kernel[l]];
            let sram = |at| outcome.sram(at).map(|b| b.into_owned());
            resident
                .keep(instance, &graph.layers[instance], placed, ir, &sram)
                .map_err(|e| fail(PhaseError::Assemble(e)))?;
            if work.keep {
                let pes = (0..placed.rows).flat_map(|r| (0..placed.cols).map(move |c| (r, c)));
                let pes = pes.map(|(r, c)| placed.pe(r, c));
                kept = Some(
                    HeldWeights::keep(ir, pes, &sram).map_err(|e| fail(PhaseError::Assemble(e)))?,
                );
            }
            let weighted = graph.layers[instance]
                .args
                .iter()
                .any(|a| matches!(a, TensorRef::Param(_)));
            let record = record(placement, &assembled, &outcome, l, start, target, weighted);
            if let Some(w) = &record.weights {
                self.run.store.weights += w.weight_bytes;
            }
            self.run.phases.push(PhaseRecord { micro, ..record });
        }
        self.sum.add(&outcome.report);
        let cycles = outcome.cycles;
        let mut parked = BTreeMap::new();
        if work.park {
            for (part, words) in assembled.output_parts.iter().zip(&outcome.outputs) {
                self.run.store.parked_out += 4 * words.len() as u64;
                parked.insert(part.part, words.clone());
            }
        }
        absorb(&mut self.run, &assembled, outcome, start, !work.park);
        Ok(PhaseDone {
            cycles,
            kept,
            parked,
        })
    }

    /// The run, its report added up and its trace spliced.
    fn finish(mut self) -> Result<StreamedRun, PhaseFailure> {
        let target = self.program.target;
        self.run.report = std::mem::take(&mut self.sum).report(target, self.run.cycles);
        if let Some(trace) = self.trace {
            trace.splice(&self.parts).map_err(|e| PhaseFailure {
                phase: self.program.placement.phases.saturating_sub(1),
                error: PhaseError::Trace(e),
            })?;
        }
        Ok(self.run)
    }
}

/// Micro-batch `micro` (of `size` samples) of each input.
pub(crate) fn micro_batch(inputs: &[Tensor], micro: usize, size: usize) -> Vec<Tensor> {
    inputs
        .iter()
        .map(|t| {
            let len = t.sample_len().max(1) * size;
            let mut shape = t.shape.clone();
            if let Some(first) = shape.first_mut() {
                *first = size as u64;
            }
            Tensor {
                elem: t.elem,
                shape,
                words: t.words[micro * len..(micro + 1) * len].to_vec(),
            }
        })
        .collect()
}

/// How many layers take each layer's result (the result of the last counts once more, for
/// the host).
fn consumer_counts(graph: &LayerGraph) -> Vec<usize> {
    let mut counts = vec![0usize; graph.layers.len()];
    for layer in &graph.layers {
        for arg in &layer.args {
            if let TensorRef::Layer(p) = *arg {
                counts[p] += 1;
            }
        }
    }
    if let TensorRef::Layer(p) = graph.output {
        counts[p] += 1;
    }
    counts
}

/// The record of placed layer `l`, which ran in the phase that started at `start`.
fn record(
    placement: &Placement,
    assembled: &Assembled,
    outcome: &Outcome,
    l: usize,
    start: u64,
    target: &Target,
    weighted: bool,
) -> PhaseRecord {
    let rect = placement.layers[l].rect;
    let pes: Vec<_> = outcome
        .report
        .pes
        .iter()
        .filter(|pe| rect.contains(wsel_target::Coord::new(pe.x, pe.y)))
        .collect();
    let busiest = pes.iter().map(|p| p.busy_cycles).max().unwrap_or(0);
    let layer_pes = LayerPes { pes, busiest };
    let streams: Vec<WeightStream<'_>> = assembled
        .program
        .inputs
        .iter()
        .zip(&outcome.input_timing)
        .filter(|(input, _)| weighted && input.source == wsel_sim::EdgeSource::WeightStore)
        .map(|(input, timing)| WeightStream {
            color: input.color,
            bytes: 4 * input.data.len() as u64,
            timing,
        })
        .collect();
    PhaseRecord {
        layer: l,
        micro: 0,
        start,
        cycles: outcome.cycles,
        busiest,
        weights_in: span(streams.iter().map(|s| s.timing)),
        weights: layer_weights(
            &streams,
            &layer_pes,
            target.weight_store.bandwidth_bytes_per_cycle,
        ),
        activity: crate::run_activity::activity(&placement.layers[l], &layer_pes, outcome.cycles),
    }
}

/// Adds a finished phase to the run: its cycles, its report, its host traffic and, when they
/// are the `result`'s, its outputs.
fn absorb(
    run: &mut StreamedRun,
    assembled: &Assembled,
    outcome: Outcome,
    start: u64,
    result: bool,
) {
    run.cycles = start + outcome.cycles;
    let hosts = host_span(&assembled.program, &outcome);
    if let Some((first, last)) = hosts {
        run.first_in = run.first_in.or(Some(start + first));
        run.last_in = Some(start + last);
    }
    if !result {
        return;
    }
    if let Some((first, last)) = span(outcome.output_timing.iter()) {
        run.first_out = run.first_out.or(Some(start + first));
        run.last_out = Some(start + last);
    }
    if !assembled.output_parts.is_empty() {
        run.outputs.extend(outcome.outputs);
        run.output_parts
            .extend(assembled.output_parts.iter().cloned());
    }
}

/// The first and last cycle a host input of `program` entered the fabric.
fn host_span(program: &Program, outcome: &Outcome) -> Option<(u64, u64)> {
    span(
        program
            .inputs
            .iter()
            .zip(&outcome.input_timing)
            .filter(|(i, _)| i.source == wsel_sim::EdgeSource::Host)
            .map(|(_, t)| t),
    )
}

/// The phases' simulation reports added up: totals summed; per PE its busy cycles, tasks and
/// waits per color; per link and per color their traffic.
#[derive(Default)]
struct ReportSum {
    wavelet_hops: u64,
    wavelets_delivered: u64,
    tasks_run: u64,
    pes: BTreeMap<(u32, u32), PeActivity>,
    links: BTreeMap<(u32, u32, u8), LinkTraffic>,
    colors: BTreeMap<u8, ColorTraffic>,
}

impl ReportSum {
    fn add(&mut self, phase: &Report) {
        self.wavelet_hops += phase.wavelet_hops;
        self.wavelets_delivered += phase.wavelets_delivered;
        self.tasks_run += phase.tasks_run;
        for pe in &phase.pes {
            let sum = self.pes.entry((pe.y, pe.x)).or_insert_with(|| PeActivity {
                busy_cycles: 0,
                tasks: 0,
                waits: Vec::new(),
                // Each phase counts cycles from its own start: no span across phases.
                first_task_start: None,
                last_task_end: None,
                ..pe.clone()
            });
            sum.busy_cycles += pe.busy_cycles;
            sum.tasks += pe.tasks;
            for wait in &pe.waits {
                match sum.waits.iter_mut().find(|w| w.color == wait.color) {
                    Some(w) => {
                        w.before_first += wait.before_first;
                        w.after_first += wait.after_first;
                    }
                    None => sum.waits.push(*wait),
                }
            }
        }
        for link in &phase.links {
            self.links
                .entry((link.y, link.x, link.dir as u8))
                .and_modify(|l| l.wavelets += link.wavelets)
                .or_insert_with(|| link.clone());
        }
        for color in &phase.colors {
            self.colors
                .entry(color.color)
                .and_modify(|c| {
                    c.hops += color.hops;
                    c.delivered += color.delivered;
                })
                .or_insert_with(|| color.clone());
        }
    }

    /// The whole run's report, `cycles` long.
    fn report(self, target: &Target, cycles: u64) -> Report {
        let pes = self
            .pes
            .into_values()
            .map(|mut pe| {
                pe.idle_cycles = cycles.saturating_sub(pe.busy_cycles);
                pe.waits.sort_by_key(|w| w.color);
                pe
            })
            .collect();
        Report {
            target: target.name.clone(),
            cycles,
            seconds: target.seconds(cycles),
            wavelet_hops: self.wavelet_hops,
            wavelets_delivered: self.wavelets_delivered,
            tasks_run: self.tasks_run,
            pes,
            links: self.links.into_values().collect(),
            colors: self.colors.into_values().collect(),
        }
    }
}

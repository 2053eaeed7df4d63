//! A run as a library call, shared by `wsel run` and the Python package: simulate a built
//! program with its data (whole, or phase after phase for weight streaming), gather the result
//! tensor, and make the report. Nothing here prints or writes files; the caller decides where
//! the result, the report and the trace go.

use std::path::Path;
use std::time::Duration;

use wsel_map::Placement;
use wsel_sema::Diagnostic;
use wsel_sim::{SimError, SimOptions};

use crate::assemble::{Assembled, HostData, assemble, collect_result};
use crate::built::{BuildFailure, BuildRequest, Built};
use crate::pipeline::{BuildError, Compiled};
use crate::render::SourceTexts;
use crate::run_errors::{E0804, E0806, E0808, describe_phase};
use crate::run_report::{RunContext, RunReport};
use crate::run_trace::TraceFile;
use crate::streamed::{PhaseError, PhaseFailure, StreamedRun};
use crate::tensor::Tensor;
use crate::threads::Threads;

/// A finished simulation and what it produced.
pub struct Simulation {
    pub simulated: Simulated,
    /// The model's result, gathered from the fabric's output streams.
    pub result: Tensor,
    /// The host's time for the simulation.
    pub wall: Duration,
}

/// How the program ran: as one whole program (pipelined), or a weight-streaming run's
/// phases.
pub enum Simulated {
    Whole(Box<(Assembled, wsel_sim::Outcome)>),
    Streamed(Box<StreamedRun>),
}

/// The simulator's options for a run with `threads` worker threads (at most one per core; at
/// most one per `wsel_sim::PES_PER_THREAD` programmed PEs unless exact) and a budget of
/// `max_cycles`, with livelock detection.
pub fn sim_options(threads: Threads, max_cycles: u64) -> SimOptions {
    SimOptions {
        threads: simulator_threads(threads),
        exact_threads: threads.exact,
        max_cycles: Some(max_cycles),
        livelock_tasks: Some(livelock_tasks(max_cycles)),
        ..SimOptions::default()
    }
}

/// How many tasks in a row a PE may run that only activate tasks while nothing of its own is
/// open on the fabric, before the run stops as a livelock: a thousandth of the cycle budget,
/// at least 1,000. Such a PE cannot be reached by any wavelet, so only its own state decides
/// whether it ever stops; the simulator spends about 100 ns per task, so the default budget's
/// million tasks stop it within a fraction of a second instead of the tens of seconds its
/// billion cycles of short tasks take.
fn livelock_tasks(max_cycles: u64) -> u64 {
    (max_cycles / 1000).max(1000)
}

/// The worker threads to simulate with: `asked`, but at least one and at most the cores
/// available. The simulator's threads meet at a barrier every few cycles, so a thread without
/// a core of its own stalls all the others (on 2 cores, `--threads 64` ran 15 times slower
/// than `--threads 2`, and `--threads 1000` did not finish).
fn simulator_threads(asked: Threads) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = asked.count.clamp(1, cores);
    if threads < asked.count {
        let most = if asked.exact { "" } else { "at most " };
        eprintln!(
            "note: simulating with {most}{threads} threads, one per core (`--threads {asked}`)"
        );
    }
    threads
}

/// Simulates `built` with its inputs and `params` (in the graph's parameter order),
/// recording into `trace` when given.
pub fn simulate(
    built: &Built,
    params: &[Tensor],
    options: &SimOptions,
    trace: Option<&TraceFile>,
) -> Result<Simulation, BuildError> {
    let system = System {
        target: &built.target,
        inputs: &built.inputs,
    };
    simulate_system(built, system, params, options, trace, &mut |cycles| {
        Some(cycles)
    })
}

/// What one system of a cluster (`crate::cluster`) runs `built` with: its target (whose
/// weight store is the broadcast fabric's feed) and its share of the inputs.
#[derive(Clone, Copy)]
pub struct System<'a> {
    pub target: &'a wsel_target::Target,
    pub inputs: &'a [Tensor],
}

/// [`simulate`] as one system of a cluster: on `system`'s target and inputs, waiting at
/// `gate` between the phases of weight streaming.
pub fn simulate_system(
    built: &Built,
    system: System<'_>,
    params: &[Tensor],
    options: &SimOptions,
    trace: Option<&TraceFile>,
    gate: &mut crate::streamed::PhaseGate<'_>,
) -> Result<Simulation, BuildError> {
    let Built {
        graph,
        placement,
        compiled,
        ..
    } = built;
    let System { target, inputs } = system;
    let data = HostData { inputs, params };
    let options = &SimOptions {
        trace: trace.map(|file| file.options.clone()),
        ..options.clone()
    };
    let started = std::time::Instant::now();
    let simulated = if placement.phases > 1 {
        let program = crate::streamed::Streamed {
            graph,
            placement,
            compiled,
            target,
        };
        let run = crate::streamed::run_gated(program, &data, options, trace, gate)
            .map_err(|f| phase_failure(f, trace, placement, compiled))?;
        Simulated::Streamed(Box::new(run))
    } else {
        let assembled = assemble(graph, placement, compiled, &data).map_err(BuildError::Message)?;
        let outcome = wsel_sim::simulate(target, &assembled.program, options)
            .map_err(|e| sim_error(e, trace, placement, compiled, None))?;
        Simulated::Whole(Box::new((assembled, outcome)))
    };
    let wall = started.elapsed();
    let (parts, streams) = match &simulated {
        Simulated::Whole(whole) => (&whole.0.output_parts, &whole.1.outputs),
        Simulated::Streamed(run) => (&run.output_parts, &run.outputs),
    };
    let result = collect_result(graph, parts, streams).map_err(|why| BuildError::Run {
        code: E0808,
        message: format!("the result does not fit the output: {why}"),
    })?;
    Ok(Simulation {
        simulated,
        result,
        wall,
    })
}

/// What the report says besides the simulation: the source file as the user named it, the
/// result file (`None` when the result stays in memory) and the accuracy against labels.
pub struct ReportFacts<'a> {
    pub file: &'a Path,
    pub output: Option<&'a Path>,
    pub accuracy: Option<(std::path::PathBuf, (u64, u64))>,
}

impl Simulation {
    /// The run's report, and the simulator's own report (for the JSON's `simulation`).
    pub fn report(&self, built: &Built, facts: ReportFacts<'_>) -> (RunReport, &wsel_sim::Report) {
        let context = RunContext {
            file: facts.file,
            graph: &built.graph,
            placement: &built.placement,
            decision: &built.decision,
            target: &built.target,
            backend: built.backend,
            wall: self.wall,
            output: facts.output,
            result: &self.result,
            accuracy: facts.accuracy,
        };
        match &self.simulated {
            Simulated::Whole(whole) => {
                let (assembled, outcome) = &**whole;
                let report = RunReport::new(&context, &assembled.program, outcome);
                (report, &outcome.report)
            }
            Simulated::Streamed(run) => (RunReport::streamed(&context, run), &run.report),
        }
    }
}

/// A failed phase of a weight-streaming run as a run error.
pub(crate) fn phase_failure(
    failure: PhaseFailure,
    trace: Option<&TraceFile>,
    placement: &Placement,
    compiled: &Compiled,
) -> BuildError {
    match failure.error {
        // What the phase before left on the fabric does not match the phase's kernel.
        PhaseError::Assemble(text) => BuildError::Run {
            code: E0806,
            message: format!(
                "phase {} (`{}`) cannot be set up on the fabric: {text}",
                failure.phase,
                phase_layer(placement, failure.phase)
            ),
        },
        PhaseError::Aborted => BuildError::Message("another system of the cluster failed".into()),
        PhaseError::Trace(e) => BuildError::Run {
            code: E0804,
            message: format!(
                "cannot write `{}`: {e}",
                trace.map_or(Path::new("trace"), TraceFile::path).display()
            ),
        },
        PhaseError::Simulate(e) => sim_error(e, trace, placement, compiled, Some(failure.phase)),
    }
}

/// The name of the layer phase `phase` runs.
fn phase_layer(placement: &Placement, phase: u32) -> &str {
    placement
        .layers
        .iter()
        .find(|l| l.phase == phase)
        .map_or("?", |l| l.name.as_str())
}

/// A failed simulation (of the whole program, or of one phase of weight streaming): the
/// program's failure (E0806), or the trace's write error (E0804).
fn sim_error(
    error: SimError,
    trace: Option<&TraceFile>,
    placement: &Placement,
    compiled: &Compiled,
    phase: Option<u32>,
) -> BuildError {
    match (error, trace) {
        (SimError::TraceWrite { message }, Some(trace)) => BuildError::Run {
            code: E0804,
            message: format!("cannot write `{}`: {message}", trace.path().display()),
        },
        (error, _) => BuildError::Run {
            code: E0806,
            message: describe_phase(&error, placement, compiled, phase),
        },
    }
}

/// A run whose data stays in memory (the Python package): its result, its report as JSON
/// (`docs/running.md`), and the warnings of building and reading it, one line each.
pub struct MemoryRun {
    pub result: Tensor,
    pub report_json: String,
    pub warnings: Vec<String>,
}

/// Builds the program `request` names (afresh: no build artifact, whose key is the `wsel`
/// binary's), simulates it with its inputs and with `params` given by name (the others are
/// read from their files), and reports in memory.
pub fn run_in_memory(
    request: &BuildRequest<'_>,
    params: &[(String, wsel_data::Array)],
    options: &SimOptions,
) -> Result<MemoryRun, BuildFailure> {
    let built = crate::built::fresh(request)?;
    let failure = |error| BuildFailure {
        sources: Some(built.sources.clone()),
        error,
    };
    let params = crate::inputs::read_params(&built.graph, params).map_err(failure)?;
    let simulation = simulate(&built, &params, options, None).map_err(failure)?;
    let facts = ReportFacts {
        file: request.file,
        output: None,
        accuracy: None,
    };
    let (report, simulation_report) = simulation.report(&built, facts);
    let mut json = Vec::new();
    report
        .write_json(simulation_report, false, &mut json)
        .map_err(|e| failure(BuildError::Message(format!("cannot write the report: {e}"))))?;
    let mut warnings = built.data_warnings.clone();
    warnings.extend(
        built
            .warnings
            .iter()
            .map(|d| format!("[{}] {}", d.code, d.message)),
    );
    Ok(MemoryRun {
        result: simulation.result,
        report_json: String::from_utf8_lossy(&json).into_owned(),
        warnings,
    })
}

/// Every diagnostic of the program at `path` (`text`: its source, when in memory): the
/// checker's and its `param` files', in source order — what `wsel check` reports. `Err` when
/// the file cannot be read.
pub fn check(
    path: &Path,
    text: Option<&str>,
) -> Result<(Vec<Diagnostic>, SourceTexts), std::io::Error> {
    let mut db = wsel_sema::Database::default();
    let mut read = crate::source::reader(path, text);
    let file = wsel_sema::load_program(&mut db, path, &mut read)?;
    let diagnostics = crate::pipeline::all_diagnostics(&db, file);
    Ok((diagnostics, crate::source::source_texts(&db)))
}

//! `wsel run`: build the program (check, lower, map, compile, run the static hang checks — or
//! reuse the build artifact of an unchanged program, `crate::cache`), load the data,
//! simulate, write the result and print the report. Each step's failure is a clear message (or
//! diagnostics) and exit status 1. Data files (labels included) are read before the simulation;
//! the result, report, trace and picture are written only after a successful run, all or none
//! (`crate::atomic`), and the report table is printed last.

use std::path::{Path, PathBuf};

use wsel_map::Placement;
use wsel_sim::{SimError, SimOptions};

use crate::assemble::{HostData, assemble, collect_result};
use crate::atomic::Outputs;
use crate::built::{BuildRequest, Built};
use crate::cache::{CacheUse, Write};
use crate::cli::RunArgs;
use crate::inputs::read_params;
use crate::pipeline::{BuildError, Compiled, report_build_failure};
use crate::run_errors::{E0804, E0806, E0807, E0808, describe_phase};
use crate::run_report::{RunReport, accuracy};
use crate::run_trace::{TraceFile, TraceFileError, TraceRequest};
use crate::status::Status;
use crate::stdout::StdoutError;
use crate::tensor::{encode_npy, read_labels};

pub fn run(args: &RunArgs) -> Status {
    let color = args.color.use_color_on_stderr();
    // Before the build, which may take long: flags that cannot be read.
    let trace = match crate::run_trace::request(args) {
        Ok(trace) => trace,
        Err(message) => return report_build_failure(None, run_error(E0807, message), color),
    };
    let mut built = match build(args, color) {
        Ok(built) => built,
        Err(failure) => return failure.report(color),
    };
    let sources = std::mem::take(&mut built.sources);
    match execute(built, args, trace.as_ref()) {
        Ok(()) => Status::Success,
        Err(error) => report_build_failure(Some(&sources), error, color),
    }
}

/// The program built for this run: reused from the build artifact when it is valid, else
/// built afresh (and the artifact written, unless `--no-cache`).
fn build(args: &RunArgs, color: bool) -> Result<Built, crate::built::BuildFailure> {
    let request = BuildRequest {
        inputs: &args.inputs,
        read_inputs: true,
        hang_checks: !args.no_hang_checks,
        ..BuildRequest::new(&args.model, args.backend)
    };
    let path = args
        .artifact
        .clone()
        .unwrap_or_else(|| crate::cache::default_path(&args.model.file));
    let cache = (!args.no_cache).then_some(CacheUse {
        path: &path,
        read: true,
        write: Write::BestEffort,
    });
    crate::cache::obtain(&request, cache, color)
}

fn execute(built: Built, args: &RunArgs, trace: Option<&TraceRequest>) -> Result<(), BuildError> {
    let Built {
        config,
        graph,
        placement,
        decision,
        compiled,
        target,
        backend,
        batch,
        inputs,
        ..
    } = built;
    // Every input is read and checked before the simulation, so that bad data costs no run.
    let params = read_params(&graph)?;
    let labels = match args
        .labels
        .clone()
        .or(config.as_ref().and_then(|c| c.labels.clone()))
    {
        Some(path) => Some((read_labels(&path, batch).map_err(tensor_error)?, path)),
        None => None,
    };
    let trace = trace
        .map(|request| trace_file(request, &placement, &target))
        .transpose()?;
    let data = HostData {
        inputs: &inputs,
        params: &params,
    };
    let program = Program {
        graph: &graph,
        placement: &placement,
        compiled: &compiled,
        target: &target,
    };
    let started = std::time::Instant::now();
    let simulated = simulate(program, &data, args, trace.as_ref())?;
    let wall = started.elapsed();

    let (parts, streams) = match &simulated {
        Simulated::Whole(whole) => (&whole.0.output_parts, &whole.1.outputs),
        Simulated::Streamed(run) => (&run.output_parts, &run.outputs),
    };
    let result = collect_result(&graph, parts, streams)
        .map_err(|why| run_error(E0808, format!("the result does not fit the output: {why}")))?;
    let output_path = args
        .output
        .clone()
        .or(config.as_ref().and_then(|c| c.output.clone()))
        .unwrap_or_else(|| default_output(&args.model.file, &graph.model));
    let accuracy = labels.map(|(labels, path)| (path, accuracy(&result, &labels)));
    let context = crate::run_report::RunContext {
        file: &args.model.file,
        graph: &graph,
        placement: &placement,
        decision: &decision,
        target: &target,
        backend,
        wall,
        output: &output_path,
        result: &result,
        accuracy,
    };
    let (report, simulation) = match &simulated {
        Simulated::Whole(whole) => {
            let (assembled, outcome) = &**whole;
            let report = RunReport::new(&context, &assembled.program, outcome);
            (report, &outcome.report)
        }
        Simulated::Streamed(run) => (RunReport::streamed(&context, run), &run.report),
    };
    // Everything is computed: write every file or none, then print the report.
    let mut outputs = Outputs::default();
    outputs.add(&output_path, encode_npy(&result).map_err(tensor_error)?);
    if let Some(path) = &args.map {
        let svg = wsel_map::svg::render(&placement, wsel_map::svg::SvgOptions::default());
        outputs.add(path, svg.into_bytes());
    }
    if let Some(path) = &args.timeline {
        outputs.add(path, crate::timeline::render(&report).into_bytes());
    }
    if let Some(path) = &args.report {
        outputs
            .add_written(path, |out| {
                report.write_json(simulation, args.report_detail, out)
            })
            .map_err(write_failure)?;
    }
    if let Some(trace) = trace {
        let (path, temp) = trace.into_staged();
        outputs.add_staged(&path, temp);
    }
    outputs.commit().map_err(write_failure)?;
    let mut table = report.table();
    if let Some(note) = &decision.sizes_note {
        table.push_str(&format!("  note: {note}\n"));
    }
    match crate::stdout::print(&table) {
        Ok(()) | Err(StdoutError::Closed) => Ok(()),
        Err(StdoutError::Failed(error)) => Err(run_error(E0804, crate::stdout::message(&error))),
    }
}

/// What a run simulates: the placed program and its code, on a target.
#[derive(Clone, Copy)]
struct Program<'a> {
    graph: &'a wsel_ir::graph::LayerGraph,
    placement: &'a Placement,
    compiled: &'a Compiled,
    target: &'a wsel_target::Target,
}

/// Simulates the program — whole, or phase by phase in weight streaming — with the run's
/// options, showing progress on a terminal.
fn simulate(
    program: Program<'_>,
    data: &HostData<'_>,
    args: &RunArgs,
    trace: Option<&TraceFile>,
) -> Result<Simulated, BuildError> {
    let Program {
        graph,
        placement,
        compiled,
        target,
    } = program;
    let progress = wsel_sim::Progress::new();
    let options = SimOptions {
        threads: simulator_threads(args.threads),
        max_cycles: Some(args.max_cycles),
        livelock_tasks: Some(livelock_tasks(args.max_cycles)),
        trace: trace.map(|t| t.options.clone()),
        progress: Some(progress.clone()),
        ..SimOptions::default()
    };
    let status = || {
        format!(
            "simulating · cycle {} (budget {})",
            wsel_map::report::group(progress.cycle()),
            wsel_map::report::group(args.max_cycles)
        )
    };
    if placement.phases > 1 {
        let run = crate::progress::with_spinner(&status, || {
            crate::streamed::run(graph, placement, compiled, data, target, &options, trace)
        })
        .map_err(|f| phase_failure(f, trace, placement, compiled))?;
        return Ok(Simulated::Streamed(Box::new(run)));
    }
    let assembled = assemble(graph, placement, compiled, data).map_err(message)?;
    let outcome = crate::progress::with_spinner(&status, || {
        wsel_sim::simulate(target, &assembled.program, &options)
    })
    .map_err(|e| sim_error(e, trace, placement, compiled, None))?;
    Ok(Simulated::Whole(Box::new((assembled, outcome))))
}

fn write_failure(failed: crate::atomic::WriteFailure) -> BuildError {
    cannot_write(&failed.path, failed.error)
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

/// The worker threads to simulate with: `--threads`, but at least one and at most the cores
/// available. The simulator's threads meet at a barrier every few cycles, so a thread without
/// a core of its own stalls all the others (on 2 cores, `--threads 64` ran 15 times slower
/// than `--threads 2`, and `--threads 1000` did not finish).
fn simulator_threads(asked: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = asked.clamp(1, cores);
    if threads < asked {
        eprintln!("note: simulating with {threads} threads, one per core (`--threads {asked}`)");
    }
    threads
}

/// A finished simulation: the whole program's (pipelined), or a weight-streaming run's
/// phases.
enum Simulated {
    Whole(Box<(crate::assemble::Assembled, wsel_sim::Outcome)>),
    Streamed(Box<crate::streamed::StreamedRun>),
}

/// A failed phase of a weight-streaming run as a run error.
fn phase_failure(
    failure: crate::streamed::PhaseFailure,
    trace: Option<&TraceFile>,
    placement: &Placement,
    compiled: &Compiled,
) -> BuildError {
    match failure.error {
        crate::streamed::PhaseError::Assemble(text) => message(text),
        crate::streamed::PhaseError::Trace(e) => {
            cannot_write(trace.map_or(Path::new("trace"), TraceFile::path), e)
        }
        crate::streamed::PhaseError::Simulate(e) => {
            sim_error(e, trace, placement, compiled, Some(failure.phase))
        }
    }
}

/// The trace's options and temporary file, for the placed program.
fn trace_file(
    request: &TraceRequest,
    placement: &Placement,
    target: &wsel_target::Target,
) -> Result<TraceFile, BuildError> {
    TraceFile::new(request, placement, target).map_err(|e| match e {
        TraceFileError::Flag(message) => run_error(E0807, message),
        TraceFileError::Create(e) => cannot_write(&request.path, e),
    })
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
        (SimError::TraceWrite { message }, Some(trace)) => run_error(
            E0804,
            format!("cannot write `{}`: {message}", trace.path().display()),
        ),
        (error, _) => run_error(E0806, describe_phase(&error, placement, compiled, phase)),
    }
}

fn default_output(file: &Path, model: &str) -> PathBuf {
    file.parent()
        .unwrap_or(Path::new("."))
        .join("out")
        .join(format!("{model}.npy"))
}

fn cannot_write(path: &Path, error: std::io::Error) -> BuildError {
    run_error(E0804, format!("cannot write `{}`: {error}", path.display()))
}

fn run_error(code: &'static str, message: String) -> BuildError {
    BuildError::Run { code, message }
}

fn tensor_error(error: crate::tensor::TensorError) -> BuildError {
    run_error(error.code(), error.to_string())
}

fn message(text: String) -> BuildError {
    BuildError::Message(text)
}

//! `wsel run`: build the program (check, lower, map, compile, run the static hang checks — or
//! reuse the build artifact of an unchanged program, `crate::cache`), load the data,
//! simulate, write the result and print the report. Each step's failure is a clear message (or
//! diagnostics) and exit status 1; the result file is written only after a successful run,
//! atomically.

use std::path::{Path, PathBuf};

use wsel_map::Placement;
use wsel_sim::{SimError, SimOptions};

use crate::assemble::{HostData, assemble, collect_result};
use crate::built::{BuildRequest, Built};
use crate::cache::{CacheUse, Write};
use crate::cli::RunArgs;
use crate::inputs::read_params;
use crate::pipeline::{BuildError, Compiled, report_build_failure};
use crate::run_errors::{E0804, E0806, E0807, describe_phase};
use crate::run_report::{RunReport, accuracy};
use crate::run_trace::{TraceFile, TraceFileError, TraceRequest};
use crate::status::Status;
use crate::tensor::{read_labels, write_npy_atomic};

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
    let params = read_params(&graph)?;
    let trace = trace
        .map(|request| trace_file(request, &placement, &target))
        .transpose()?;
    if let Some(path) = &args.map {
        let svg = wsel_map::svg::render(&placement, wsel_map::svg::SvgOptions::default());
        write_text(path, &svg)?;
    }

    let data = HostData {
        inputs: &inputs,
        params: &params,
    };
    let progress = wsel_sim::Progress::new();
    let options = SimOptions {
        threads: args.threads.max(1),
        max_cycles: Some(args.max_cycles),
        trace: trace.as_ref().map(|t| t.options.clone()),
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
    let started = std::time::Instant::now();
    let simulated = if placement.phases > 1 {
        let run = crate::progress::with_spinner(&status, || {
            let traced = trace.as_ref();
            crate::streamed::run(
                &graph, &placement, &compiled, &data, &target, &options, traced,
            )
        })
        .map_err(|f| phase_failure(f, trace.as_ref(), &placement, &compiled))?;
        Simulated::Streamed(Box::new(run))
    } else {
        let assembled = assemble(&graph, &placement, &compiled, &data).map_err(message)?;
        let outcome = crate::progress::with_spinner(&status, || {
            wsel_sim::simulate(&target, &assembled.program, &options)
        })
        .map_err(|e| sim_error(e, trace.as_ref(), &placement, &compiled, None))?;
        Simulated::Whole(Box::new((assembled, outcome)))
    };
    let wall = started.elapsed();

    let (parts, streams) = match &simulated {
        Simulated::Whole(whole) => (&whole.0.output_parts, &whole.1.outputs),
        Simulated::Streamed(run) => (&run.output_parts, &run.outputs),
    };
    let result = collect_result(&graph, parts, streams).map_err(message)?;
    let output_path = args
        .output
        .clone()
        .or(config.as_ref().and_then(|c| c.output.clone()))
        .unwrap_or_else(|| default_output(&args.model.file, &graph.model));
    write_npy_atomic(&output_path, &result).map_err(tensor_error)?;

    let labels_path = args
        .labels
        .clone()
        .or(config.as_ref().and_then(|c| c.labels.clone()));
    let accuracy = match &labels_path {
        Some(path) => {
            let labels = read_labels(path, batch).map_err(tensor_error)?;
            Some((path.clone(), accuracy(&result, &labels)))
        }
        None => None,
    };
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
    print!("{}", report.table());
    if let Some(path) = &args.timeline {
        write_text(path, &crate::timeline::render(&report))?;
    }
    if let Some(path) = &args.report {
        crate::atomic::write_atomic_with(path, |out| {
            report.write_json(simulation, args.report_detail, out)
        })
        .map_err(|e| cannot_write(path, e))?;
    }
    if let Some(trace) = trace {
        let path = trace.path().to_path_buf();
        trace.keep().map_err(|e| cannot_write(&path, e))?;
    }
    Ok(())
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

/// Writes a text file atomically.
fn write_text(path: &Path, text: &str) -> Result<(), BuildError> {
    crate::atomic::write_atomic(path, text.as_bytes()).map_err(|e| cannot_write(path, e))
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

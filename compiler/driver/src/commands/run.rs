//! `wsel run`: build the program (check, lower, map, compile, run the static hang checks — or
//! reuse the build artifact of an unchanged program, `crate::cache`), load the data,
//! simulate, write the result and print the report. Each step's failure is a clear message (or
//! diagnostics) and exit status 1. Data files (labels included) are read before the simulation;
//! the result, report, trace and picture are written only after a successful run, all or none
//! (`crate::atomic`), and the report table is printed last.

use std::path::{Path, PathBuf};

use wsel_sim::SimOptions;

use crate::assemble::{HostData, assemble, collect_result};
use crate::atomic::Outputs;
use crate::built::{BuildRequest, Built};
use crate::cache::{CacheUse, Write};
use crate::cli::RunArgs;
use crate::inputs::read_params;
use crate::pipeline::{BuildError, report_build_failure};
use crate::run_errors::{E0804, E0806, E0807, describe};
use crate::run_report::{RunReport, accuracy};
use crate::status::Status;
use crate::stdout::StdoutError;
use crate::tensor::{encode_npy, read_labels};

pub fn run(args: &RunArgs) -> Status {
    let color = args.color.use_color_on_stderr();
    let mut built = match build(args, color) {
        Ok(built) => built,
        Err(failure) => return failure.report(color),
    };
    let sources = std::mem::take(&mut built.sources);
    match execute(built, args) {
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

fn execute(built: Built, args: &RunArgs) -> Result<(), BuildError> {
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
    let data = HostData {
        inputs: &inputs,
        params: &params,
    };
    let assembled = assemble(&graph, &placement, &compiled, &data).map_err(message)?;
    let started = std::time::Instant::now();
    let outcome = simulate(&target, &assembled.program, args)
        .map_err(|e| run_error(E0806, describe(&e, &placement, &compiled)))?;
    let wall = started.elapsed();

    let result = collect_result(&graph, &assembled.output_parts, &outcome.outputs)
        .map_err(|why| run_error(E0807, format!("the result does not fit the output: {why}")))?;
    let output_path = args
        .output
        .clone()
        .or(config.as_ref().and_then(|c| c.output.clone()))
        .unwrap_or_else(|| default_output(&args.model.file, &graph.model));
    let accuracy = labels.map(|(labels, path)| (path, accuracy(&result, &labels)));
    let report = RunReport::new(
        &args.model.file,
        &graph,
        &placement,
        &decision,
        &target,
        backend,
        &assembled.program,
        &outcome,
        wall,
        &output_path,
        &result,
        accuracy,
    );
    // Everything is computed: write every file or none, then print the report.
    let mut outputs = Outputs::default();
    outputs.add(&output_path, encode_npy(&result).map_err(tensor_error)?);
    if let Some(path) = &args.map {
        let svg = wsel_map::svg::render(&placement, wsel_map::svg::SvgOptions::default());
        outputs.add(path, svg.into_bytes());
    }
    if let Some(path) = &args.report {
        outputs.add(path, report.to_json(&outcome.report).into_bytes());
    }
    if let (Some(path), Some(trace)) = (&args.trace, &outcome.trace) {
        outputs.add(path, trace.json().to_string().into_bytes());
    }
    outputs.commit().map_err(|failed| {
        run_error(
            E0804,
            format!("cannot write `{}`: {}", failed.path.display(), failed.error),
        )
    })?;
    let mut table = report.table();
    if let Some(note) = &decision.sizes_note {
        table.push_str(&format!("  note: {note}\n"));
    }
    match crate::stdout::print(&table) {
        Ok(()) | Err(StdoutError::Closed) => Ok(()),
        Err(StdoutError::Failed(error)) => Err(run_error(E0804, crate::stdout::message(&error))),
    }
}

/// Simulates `program` with the run's options, showing progress on a terminal.
fn simulate(
    target: &wsel_target::Target,
    program: &wsel_sim::Program,
    args: &RunArgs,
) -> Result<wsel_sim::Outcome, wsel_sim::SimError> {
    let progress = wsel_sim::Progress::new();
    let options = SimOptions {
        threads: simulator_threads(args.threads),
        max_cycles: Some(args.max_cycles),
        livelock_tasks: Some(livelock_tasks(args.max_cycles)),
        trace: args.trace.is_some(),
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
    crate::progress::with_spinner(&status, || wsel_sim::simulate(target, program, &options))
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

fn default_output(file: &Path, model: &str) -> PathBuf {
    file.parent()
        .unwrap_or(Path::new("."))
        .join("out")
        .join(format!("{model}.npy"))
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

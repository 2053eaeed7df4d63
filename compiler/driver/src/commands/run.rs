//! `wsel run`: build the program (check, lower, map, compile, run the static hang checks — or
//! reuse the build artifact of an unchanged program, `crate::cache`), load the data,
//! simulate, write the result and print the report. Each step's failure is a clear message (or
//! diagnostics) and exit status 1. Data files (labels included) are read before the simulation;
//! the result, report, trace and picture are written only after a successful run, all or none
//! (`crate::atomic`), and the report table is printed last.

use std::path::{Path, PathBuf};

use wsel_map::Placement;
use wsel_sim::SimOptions;

use crate::atomic::Outputs;
use crate::built::{BuildRequest, Built};
use crate::cache::{CacheUse, Write};
use crate::cli::RunArgs;
use crate::inputs::read_params;
use crate::pipeline::{BuildError, report_build_failure};
use crate::run_errors::{E0804, E0807};
use crate::run_report::accuracy;
use crate::run_trace::{TraceFile, TraceFileError, TraceRequest};
use crate::session::ReportFacts;
use crate::status::Status;
use crate::stdout::StdoutError;
use crate::tensor::{encode_npy, read_labels};

pub fn run(args: &RunArgs) -> Status {
    if crate::cluster::wanted(args) {
        return crate::cluster::run(args);
    }
    let color = args.color.use_color_on_stderr();
    // Before the build, which may take long: flags that cannot be read.
    let trace = match crate::run_trace::request(args) {
        Ok(trace) => trace,
        Err(message) => return report_build_failure(None, run_error(E0807, message), color),
    };
    let inputs = match crate::inputs::parse_input_flags(&args.inputs) {
        Ok(inputs) => inputs,
        Err(error) => return report_build_failure(None, error, color),
    };
    let mut built = match build(args, &inputs, color) {
        Ok(built) => built,
        Err(failure) => return failure.report(color),
    };
    if built.config.as_ref().is_some_and(|c| c.systems.is_some()) && args.systems.is_none() {
        // The `run` item asks for a cluster (`systems = N;`).
        return crate::cluster::run(args);
    }
    let sources = std::mem::take(&mut built.sources);
    match execute(built, args, trace.as_ref()) {
        Ok(()) => Status::Success,
        Err(error) => report_build_failure(Some(&sources), error, color),
    }
}

/// The program built for this run: reused from the build artifact when it is valid, else
/// built afresh (and the artifact written, unless `--no-cache`).
fn build(
    args: &RunArgs,
    inputs: &[crate::inputs::NamedInput],
    color: bool,
) -> Result<Built, crate::built::BuildFailure> {
    let request = BuildRequest {
        inputs,
        read_inputs: true,
        hang_checks: !args.no_hang_checks,
        ..BuildRequest::new(&args.model, args.backend)
    };
    let path = args
        .artifact
        .clone()
        .unwrap_or_else(|| crate::cache::default_path(&request));
    let cache = (!args.no_cache).then_some(CacheUse {
        path: &path,
        read: true,
        write: Write::BestEffort,
        prune: args.artifact.is_none(),
    });
    crate::cache::obtain(&request, cache, color)
}

fn execute(built: Built, args: &RunArgs, trace: Option<&TraceRequest>) -> Result<(), BuildError> {
    for warning in &built.data_warnings {
        eprintln!("warning: {warning}");
    }
    // Every input is read and checked before the simulation, so that bad data costs no run.
    let params = read_params(&built.graph, &[])?;
    let config = built.config.as_ref();
    let labels = match args
        .labels
        .clone()
        .or(config.and_then(|c| c.labels.clone()))
    {
        Some(path) => Some((read_labels(&path, built.batch).map_err(tensor_error)?, path)),
        None => None,
    };
    let trace = trace
        .map(|request| trace_file(request, &built.placement, &built.target))
        .transpose()?;
    let progress = wsel_sim::Progress::new();
    let options = SimOptions {
        progress: Some(progress.clone()),
        ..crate::session::sim_options(args.threads, args.max_cycles)
    };
    let status = || {
        format!(
            "simulating · cycle {} (budget {})",
            wsel_map::report::group(progress.cycle()),
            wsel_map::report::group(args.max_cycles)
        )
    };
    let simulation = crate::progress::with_spinner(&status, || {
        crate::session::simulate(&built, &params, &options, trace.as_ref())
    })?;
    let output_path = args
        .output
        .clone()
        .or(config.and_then(|c| c.output.clone()))
        .unwrap_or_else(|| default_output(&args.model.file, &built.graph.model));
    let facts = ReportFacts {
        file: &args.model.file,
        output: Some(&output_path),
        accuracy: labels.map(|(labels, path)| (path, accuracy(&simulation.result, &labels))),
    };
    let (report, simulation_report) = simulation.report(&built, facts);
    // Everything is computed: write every file or none, then print the report.
    let mut outputs = Outputs::default();
    outputs.add(
        &output_path,
        encode_npy(&simulation.result).map_err(tensor_error)?,
    );
    if let Some(path) = &args.map {
        let svg = wsel_map::svg::render(&built.placement, wsel_map::svg::SvgOptions::default());
        outputs.add(path, picture(path, svg)?);
    }
    if let Some(path) = &args.heatmap {
        let svg = crate::heatmap::render(&built.placement, simulation_report);
        outputs.add(path, picture(path, svg)?);
    }
    if let Some(path) = &args.timeline {
        outputs.add(path, crate::timeline::render(&report).into_bytes());
    }
    if let Some(path) = &args.report {
        outputs
            .add_written(path, |out| {
                report.write_json(simulation_report, args.report_detail, out)
            })
            .map_err(write_failure)?;
    }
    if let Some(trace) = trace {
        let (path, temp) = trace.into_staged();
        outputs.add_staged(&path, temp);
    }
    outputs.commit().map_err(write_failure)?;
    let mut table = report.table();
    if let Some(note) = &built.decision.sizes_note {
        table.push_str(&format!("  note: {note}\n"));
    }
    match crate::stdout::print(&table) {
        Ok(()) | Err(StdoutError::Closed) => Ok(()),
        Err(StdoutError::Failed(error)) => Err(run_error(E0804, crate::stdout::message(&error))),
    }
}

/// The bytes of picture `svg` for `path`: PNG or SVG, by the path's extension.
fn picture(path: &Path, svg: String) -> Result<Vec<u8>, BuildError> {
    crate::png::picture(path, svg)
        .map_err(|e| run_error(E0804, format!("cannot write `{}`: {e}", path.display())))
}

fn write_failure(failed: crate::atomic::WriteFailure) -> BuildError {
    cannot_write(&failed.path, failed.error)
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

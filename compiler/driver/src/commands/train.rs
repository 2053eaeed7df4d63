//! `wsel train`: the flags over the library call (`crate::train_session`, which checks the
//! settings, builds, maps and compiles the training graph and runs every step on the
//! fabric), the per-step table printed as the steps end, then the accuracy on test data and
//! the outputs (trained weights, loss.csv, loss.svg), written after the last step, all or
//! none, never over the model's parameter files unless asked.

use std::path::{Path, PathBuf};

use wsel_ir::graph::LayerGraph;
use wsel_target::Target;

use crate::atomic::Outputs;
use crate::built::BuildRequest;
use crate::cli::{ModeArg, TrainArgs};
use crate::inputs::{InputData, NamedInput, parse_input_flags, read_inputs};
use crate::pipeline::{
    BuildError, Loaded, load_and_check, report_build_error, report_build_failure,
};
use crate::run_errors::E0804;
use crate::status::Status;
use crate::tensor::{encode_npy, read_labels};
use crate::train_outputs::{csv, svg, table_header, table_line};
use crate::train_session::{Program, Setup, TrainReport, TrainRequest, Trained, run_steps, setup};
use crate::train_settings::{TrainOverrides, out_dir};
use crate::training::{Store, f32_tensor};

pub fn run(args: &TrainArgs) -> Status {
    let color = args.color.use_color_on_stderr();
    if crate::cluster::train::wanted(args) {
        return crate::cluster::train::run(args);
    }
    let loaded = match load_and_check(&args.file) {
        Ok(loaded) => loaded,
        Err(failure) => return report_build_error(failure.db.as_ref(), failure.error, color),
    };
    let config = wsel_lower::lower_run_config(&loaded.db, loaded.file);
    if config.is_some_and(|c| c.systems.is_some()) {
        // The `run` item asks for a cluster (`systems = N;`).
        return crate::cluster::train::run(args);
    }
    let sources = crate::source::source_texts(&loaded.db);
    match train(&loaded, args) {
        Ok(()) => Status::Success,
        Err(error) => report_build_failure(Some(&sources), error, color),
    }
}

/// The library's request for `wsel train`'s flags: data from files, settings from flags.
pub(crate) fn request(args: &TrainArgs) -> Result<TrainRequest<'_>, BuildError> {
    Ok(TrainRequest {
        file: &args.file,
        text: None,
        inputs: parse_input_flags(&args.inputs)?,
        labels: args.labels.clone().map(InputData::File),
        params: Vec::new(),
        settings: TrainOverrides::of_args(args),
    })
}

pub(crate) fn train(loaded: &Loaded, args: &TrainArgs) -> Result<(), BuildError> {
    let request = request(args)?;
    let item = wsel_lower::lower_train_config(&loaded.db, loaded.file);
    if crate::train_settings::pipelined(&request.settings, item.as_ref()) {
        return train_pipelined(loaded, args, &request);
    }
    let setup = setup(loaded, &request)?;
    for warning in &setup.warnings {
        eprintln!("warning: {warning}");
    }
    let options = crate::session::sim_options(args.threads, args.max_cycles);
    if !args.quiet {
        print!("{}", table_header());
    }
    let (batch, target) = (setup.settings.batch, &setup.program.target);
    let trained = run_steps(&setup, &options, &mut |record| {
        if !args.quiet {
            print!("{}", table_line(record, batch, target));
        }
    })?;
    finish(args, &setup, &setup.program, &trained)
}

/// Pipelined training (`crate::train_pipelined`): the table as the steps end, the accuracy on
/// test data, the outputs and a summary.
fn train_pipelined(
    loaded: &Loaded,
    args: &TrainArgs,
    request: &TrainRequest<'_>,
) -> Result<(), BuildError> {
    let options = crate::session::sim_options(args.threads, args.max_cycles);
    let run = crate::train_pipelined::prepare(loaded, request)?;
    let trained = pipelined_steps(args, &run, |on_step| {
        crate::train_pipelined::run_steps(&run, &options, on_step)
    })?;
    finish_pipelined(args, &run, &trained, "")
}

/// The warnings, then the table as `steps` ends each step of `run`'s training.
pub(crate) fn pipelined_steps<T>(
    args: &TrainArgs,
    run: &crate::train_pipelined::Pipelined<'_>,
    steps: impl FnOnce(&mut dyn FnMut(&crate::training::StepRecord)) -> Result<T, BuildError>,
) -> Result<T, BuildError> {
    for warning in &run.data.warnings {
        eprintln!("warning: {warning}");
    }
    if !args.quiet {
        print!("{}", table_header());
    }
    let (batch, target) = (run.data.settings.batch, &run.target);
    steps(&mut |record| {
        if !args.quiet {
            print!("{}", table_line(record, batch, target));
        }
    })
}

/// After pipelined training's last step: the accuracy on test data, the outputs, the summary
/// (`cluster`: a cluster's lines).
pub(crate) fn finish_pipelined(
    args: &TrainArgs,
    run: &crate::train_pipelined::Pipelined<'_>,
    trained: &Trained,
    cluster: &str,
) -> Result<(), BuildError> {
    let (batch, target) = (run.data.settings.batch, &run.target);
    let accuracy = match &args.test_labels {
        Some(labels) => Some(test_accuracy(
            args,
            &run.data.graph,
            &trained.store,
            labels,
        )?),
        None => None,
    };
    let dir = out_dir(args, run.data.item_out_dir.as_ref());
    let report = crate::train_pipelined::report(&args.file, run, trained);
    write_outputs(args, &dir, &run.data.graph, trained, target, &report)?;
    let micro = match report.micro_batch {
        m if m == batch => String::new(),
        m => format!(" in micro-batches of {m}"),
    };
    println!(
        "  {} steps of {batch} samples{micro} on {}, pipelined: every layer on its own region, forward and backward on the same PEs, weights updated in SRAM",
        trained.steps.len(),
        report.target
    );
    println!("  regions: {}", crate::train_pipelined::regions(run));
    println!(
        "  SRAM per PE: at most {} B of {} B for a layer's training kernels, of which at most {} B of weights (the rest: kept activations, optimizer state, gradient sums, buffers)",
        wsel_map::report::group(report.kept_bytes_per_pe),
        wsel_map::report::group(report.sram_bytes_per_pe),
        wsel_map::report::group(crate::train_pipelined::weight_bytes_per_pe(run))
    );
    print!("{cluster}");
    print!("{}", outcome_lines(&report, trained, accuracy));
    Ok(())
}

/// After the last step: the accuracy on test data, the output files and the summary of
/// `program` (what one system ran).
pub(crate) fn finish(
    args: &TrainArgs,
    setup: &Setup,
    program: &Program,
    trained: &Trained,
) -> Result<(), BuildError> {
    // Accuracy on test data, with the trained weights, by inference on the fabric.
    let accuracy = match &args.test_labels {
        Some(labels) => Some(test_accuracy(args, &setup.graph, &trained.store, labels)?),
        None => None,
    };
    let dir = out_dir(args, setup.item_out_dir.as_ref());
    let report = TrainReport::new(&args.file, setup, program, trained);
    write_outputs(args, &dir, &setup.graph, trained, &program.target, &report)?;
    print_summary(&report, trained, accuracy);
    Ok(())
}

/// The accuracy of the trained model on the test data: inference on the fabric with the
/// trained weights handed over in memory.
fn test_accuracy(
    args: &TrainArgs,
    graph: &LayerGraph,
    store: &Store,
    labels: &Path,
) -> Result<(u64, u64), BuildError> {
    let inputs: Vec<NamedInput> = parse_input_flags(&args.test_inputs)?;
    let params: Vec<(String, wsel_data::Array)> = graph
        .params
        .iter()
        .zip(&store.params)
        .map(|(p, w)| {
            (
                p.tensor.name.clone(),
                wsel_data::Array {
                    dtype: "float32".into(),
                    shape: p.tensor.shape.clone(),
                    values: wsel_data::array::Values::F32(w.clone()),
                },
            )
        })
        .collect();
    let names: Vec<String> = params.iter().map(|(n, _)| n.clone()).collect();
    // Every test sample, in one batch.
    let (test_data, _) = read_inputs(graph, None, &inputs)?;
    let batch = test_data.first().map(|t| t.shape[0]);
    let request = BuildRequest {
        file: &args.file,
        text: None,
        target: args.target.as_deref(),
        mode: Some(ModeArg::Auto),
        batch,
        backend: args.backend,
        copies: wsel_map::Copies::Auto,
        micro_order: Some(wsel_map::MicroOrder::Micro),
        one_region: false,
        fuse: true,
        inputs: &inputs,
        read_inputs: true,
        params_in_memory: &names,
        hang_checks: true,
    };
    let options = crate::session::sim_options(args.threads, args.max_cycles);
    let run = crate::session::run_in_memory(&request, &params, &options)
        .map_err(|failure| failure.error)?;
    let samples = run.result.shape[0];
    let labels = read_labels(labels, samples).map_err(|e| BuildError::Run {
        code: e.code(),
        message: e.to_string(),
    })?;
    Ok(crate::run_report::accuracy(&run.result, &labels))
}

/// The output folder's files: every trained parameter, loss.csv, loss.svg; all or none.
fn write_outputs(
    args: &TrainArgs,
    dir: &Path,
    graph: &LayerGraph,
    trained: &Trained,
    target: &Target,
    report: &TrainReport,
) -> Result<(), BuildError> {
    let mut outputs = Outputs::default();
    for (p, w) in graph.params.iter().zip(&trained.store.params) {
        let path = dir.join(format!("{}.npy", p.tensor.name));
        if !args.overwrite_params && same_file(&path, &p.path) {
            return Err(BuildError::Run {
                code: E0804,
                message: format!(
                    "the trained `{}` would overwrite its input `{}`: choose another `--out`, or pass `--overwrite-params`",
                    p.tensor.name,
                    p.path.display()
                ),
            });
        }
        let tensor = f32_tensor(p.tensor.shape.clone(), w);
        let bytes = encode_npy(&tensor).map_err(|e| BuildError::Run {
            code: E0804,
            message: e.to_string(),
        })?;
        outputs.add(&path, bytes);
    }
    outputs.add(
        &dir.join("loss.csv"),
        csv(&trained.steps, report.batch, target).into_bytes(),
    );
    let json = serde_json::to_vec_pretty(report).map_err(|e| BuildError::Run {
        code: E0804,
        message: e.to_string(),
    })?;
    outputs.add(&dir.join("report.json"), json);
    let title = format!("{} · loss per step", graph.model);
    outputs.add(
        &dir.join("loss.svg"),
        svg(&trained.steps, &title).into_bytes(),
    );
    outputs.commit().map_err(|failed| BuildError::Run {
        code: E0804,
        message: format!("cannot write `{}`: {}", failed.path.display(), failed.error),
    })?;
    println!(
        "  trained weights, loss.csv, loss.svg and report.json written to {}",
        dir.display()
    );
    Ok(())
}

/// Whether two paths name one file (compared after resolving both, where they exist).
fn same_file(a: &Path, b: &Path) -> bool {
    let resolve = |p: &Path| -> PathBuf {
        std::fs::canonicalize(p).unwrap_or_else(|_| {
            let parent = p.parent().and_then(|d| std::fs::canonicalize(d).ok());
            match (parent, p.file_name()) {
                (Some(dir), Some(name)) => dir.join(name),
                _ => p.to_path_buf(),
            }
        })
    };
    resolve(a) == resolve(b)
}

/// The summary after the table: the run's shape, the activations kept for the backward pass,
/// the loss from the first step to the last, the time, and the accuracy on test data.
fn print_summary(report: &TrainReport, trained: &Trained, accuracy: Option<(u64, u64)>) {
    let (batch, micro) = (report.batch, report.micro_batch);
    let parts = batch / micro.max(1);
    let split = if parts > 1 {
        format!(" in {parts} micro-batches of {micro} (gradients accumulated in the store)")
    } else {
        String::new()
    };
    let mut out = String::new();
    out.push_str(&format!(
        "  {} steps of {batch} samples{split} on {} ({} phases a pass, one layer at a time on {}×{} PEs, weights streamed in twice, gradients out to the store)\n",
        trained.steps.len(),
        report.target,
        report.phases,
        report.region.0,
        report.region.1
    ));
    let (kept, sram) = (report.kept_bytes_per_pe, report.sram_bytes_per_pe);
    out.push_str(&format!(
        "  activations kept in SRAM from the forward pass for the backward pass: {} B per PE of {} B; with a phase's own working set at most {} B (`{}`), checked by the mapper\n",
        wsel_map::report::group(kept),
        wsel_map::report::group(sram),
        wsel_map::report::group(report.kept.peak_bytes_per_pe),
        report.kept.peak_phase
    ));
    out.push_str(&kept_plan_line(report));
    if let Some(rows) = &report.per_layer {
        out.push_str(&rows.line());
    }
    out.push_str(&outcome_lines(report, trained, accuracy));
    print!("{out}");
}

/// The summary's line on recomputation: the forward layers run again and their cycles, or
/// why the batch runs in micro-batches; nothing when every activation is kept whole.
fn kept_plan_line(report: &TrainReport) -> String {
    let plan = &report.kept.plan;
    if !plan.recomputed.is_empty() {
        return format!(
            "  recomputed for the backward pass: {} ({} phases a pass, every {} kept), {} cycles over the steps: {}\n",
            plan.recomputed.join(", "),
            plan.recomputed.len(),
            ordinal(plan.checkpoint_every),
            wsel_map::report::group(report.kept.recompute_cycles),
            plan.reason
        );
    }
    if report.micro_batch < report.batch {
        return format!("  micro-batches: {}\n", plan.reason);
    }
    String::new()
}

/// `k`-th in words: "2nd", "3rd", "4th".
fn ordinal(k: usize) -> String {
    let suffix = match (k % 10, k % 100) {
        (1, n) if n != 11 => "st",
        (2, n) if n != 12 => "nd",
        (3, n) if n != 13 => "rd",
        _ => "th",
    };
    format!("{k}{suffix}")
}

/// The summary's last lines, in both modes: the loss from the first step to the last, the
/// time, and the accuracy on test data.
fn outcome_lines(report: &TrainReport, trained: &Trained, accuracy: Option<(u64, u64)>) -> String {
    let mut out = String::new();
    if let (Some(first), Some(last)) = (trained.steps.first(), trained.steps.last()) {
        out.push_str(&format!("  loss {:.6} → {:.6}\n", first.loss, last.loss));
    }
    out.push_str(&format!(
        "  {} cycles = {:.3} ms at {} MHz · {:.0} training samples/s · wall {:.2} s\n",
        wsel_map::report::group(report.cycles),
        report.seconds * 1e3,
        report.clock_hz / 1_000_000,
        report.samples_per_second,
        report.wall_seconds
    ));
    if let Some((correct, of)) = accuracy {
        out.push_str(&format!(
            "  accuracy after training: {correct}/{of} = {:.1}% (test data, inference on the fabric)\n",
            100.0 * correct as f64 / of.max(1) as f64
        ));
    }
    out
}

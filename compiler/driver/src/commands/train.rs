//! `wsel train`: check the settings, build the training graph (`wsel_lower::training_graph`),
//! map it for weight streaming, compile it, then run the steps (`crate::training`): every
//! step simulated on the fabric, the store's optimizer after it. Outputs (trained weights,
//! loss.csv, loss.svg) are written after the last step, all or none, never over the model's
//! parameter files unless asked.

use std::path::{Path, PathBuf};

use wsel_ir::graph::{LayerGraph, Mode, TensorRef};
use wsel_lower::TrainGraph;
use wsel_map::diagnostics::E0612;
use wsel_map::{MapOptions, Placement};
use wsel_sema::Location;
use wsel_target::Target;

use crate::atomic::Outputs;
use crate::built::BuildRequest;
use crate::cli::{BackendArg, ModeArg, TrainArgs};
use crate::inputs::{NamedInput, parse_input_flags, read_inputs, read_params};
use crate::pipeline::{
    BuildError, Compiled, Loaded, choose_backend, choose_target, compile_layers, hang_checks,
    load_and_check, pick_model, report_build_error, report_build_failure,
};
use crate::run_errors::{E0804, E0805};
use crate::status::Status;
use crate::tensor::{Tensor, encode_npy, read_labels, read_npy};
use crate::train_outputs::{csv, samples_per_second, svg, table_header, table_line};
use crate::train_settings::{self, LossChoice};
use crate::training::{
    E1108, GradientSink, Settings, StepRecord, Store, batch_order, check_settings, f32_tensor,
    gather_rows, one_hot, simulate_step, update_cycles,
};
use wsel_estimate::cost_model;

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

/// A training graph mapped and compiled.
pub(crate) struct Program {
    pub train: TrainGraph,
    pub placement: Placement,
    pub compiled: Compiled,
    pub target: Target,
}

fn train(loaded: &Loaded, args: &TrainArgs) -> Result<(), BuildError> {
    let setup = setup(loaded, args)?;
    let trained = run_steps(
        &setup.program,
        &setup.graph,
        &setup.data,
        &setup.targets,
        setup.params.clone(),
        &setup.settings,
        args,
    )?;
    finish(args, &setup, &setup.program, &trained)
}

/// What a training run needs before its first step: the model lowered for the batch, the
/// training data and targets, the training graph built, the initial parameters, the settings.
pub(crate) struct Setup {
    pub graph: LayerGraph,
    pub data: Vec<Tensor>,
    pub targets: Tensor,
    pub program: Program,
    pub params: Vec<Tensor>,
    pub settings: Settings,
    /// Where the trained weights, loss.csv and loss.svg go.
    pub out_dir: PathBuf,
}

/// Reads the data and the settings, checks them, and builds the training graph for the batch.
pub(crate) fn setup(loaded: &Loaded, args: &TrainArgs) -> Result<Setup, BuildError> {
    let db = &loaded.db;
    let item = wsel_lower::lower_train_config(db, loaded.file);
    let item = item.as_ref();
    if train_settings::pipelined(args, item) {
        let message = "pipelined training is not built yet: `wsel train` runs one layer at a time \
                       as weight streaming does (`--mode streaming`)";
        return Err(BuildError::Message(message.into()));
    }
    let run_config = wsel_lower::lower_run_config(db, loaded.file);
    let config = train_settings::data_config(item, run_config.as_ref());
    let model = pick_model(db, loaded.file, config).map_err(BuildError::Message)?;

    // The data: the model's inputs and the labels, all of the training set.
    let (shape_graph, _) = wsel_lower::layer_graph(db, model, 1);
    let overrides = parse_input_flags(&args.inputs)?;
    let (data, warnings) = read_inputs(&shape_graph, config, &overrides)?;
    for warning in &warnings {
        eprintln!("warning: {warning}");
    }
    let samples = data.first().map_or(0, |t| t.shape[0]);
    let batch = args.batch.or(config.and_then(|c| c.batch)).unwrap_or(32);
    if batch == 0 || batch > samples {
        return Err(BuildError::Run {
            code: E0805,
            message: format!(
                "a batch of {batch} samples does not fit the training data, which has {samples}"
            ),
        });
    }
    let settings = train_settings::settings(args, item, batch, samples / batch);
    check_settings(&settings)?;

    let (graph, diagnostics) = wsel_lower::layer_graph(db, model, batch);
    if !diagnostics.is_empty() {
        return Err(BuildError::Diagnostics(diagnostics));
    }
    let labels_path = args
        .labels
        .clone()
        .or(config.and_then(|c| c.labels.clone()))
        .ok_or_else(|| BuildError::Run {
            code: E1108,
            message: "no labels to train against: pass `--labels PATH` or add `labels = \"...\";` to the `train` item".into(),
        })?;
    let result_shape = match graph.output {
        TensorRef::Layer(l) => graph.layers[l].output_shape.clone(),
        TensorRef::Input(i) => graph.inputs[i].shape.clone(),
        TensorRef::Param(p) => graph.params[p].tensor.shape.clone(),
    };
    let loss = train_settings::loss(args, item);
    let chosen = args.micro_batch.is_some() || item.and_then(|t| t.micro_batch).is_some();
    let (program, settings) = build_fitting(loaded, model, &loss, settings, chosen, args, config)?;
    let targets = read_targets(&labels_path, &result_shape, &loss.name, samples)?;
    let params = read_params(&graph, &[])?;
    Ok(Setup {
        graph,
        data,
        targets,
        program,
        params,
        settings,
        out_dir: train_settings::out_dir(args, item),
    })
}

/// The training graph of the file's model lowered for `batch` samples, mapped and compiled:
/// what one system of a cluster runs on its share of the batch (`crate::cluster::train`).
pub(crate) fn program_for(
    loaded: &Loaded,
    args: &TrainArgs,
    batch: u64,
) -> Result<Program, BuildError> {
    let db = &loaded.db;
    let item = wsel_lower::lower_train_config(db, loaded.file);
    let item = item.as_ref();
    let run_config = wsel_lower::lower_run_config(db, loaded.file);
    let config = train_settings::data_config(item, run_config.as_ref());
    let model = pick_model(db, loaded.file, config).map_err(BuildError::Message)?;
    let loss = train_settings::loss(args, item);
    let settings = Settings {
        batch,
        micro_batch: batch,
        ..train_settings::settings(args, item, batch, 1)
    };
    let (program, _) = build_fitting(loaded, model, &loss, settings, true, args, config)?;
    Ok(program)
}

/// After the last step: the accuracy on test data, the output files and the summary of
/// `program` (what one system ran).
pub(crate) fn finish(
    args: &TrainArgs,
    setup: &Setup,
    program: &Program,
    trained: &Trained,
) -> Result<(), BuildError> {
    let batch = setup.settings.batch;
    // Accuracy on test data, with the trained weights, by inference on the fabric.
    let accuracy = match &args.test_labels {
        Some(labels) => Some(test_accuracy(args, &setup.graph, &trained.store, labels)?),
        None => None,
    };
    write_outputs(
        args,
        &setup.out_dir,
        &setup.graph,
        trained,
        &program.target,
        batch,
    )?;
    print_summary(trained, program, &setup.settings, accuracy);
    Ok(())
}

/// The training graph of `model` (lowered as `graph`) with the chosen loss; an unknown loss
/// is reported at the item's `loss` setting, else at the model's last call.
fn training_graph(
    loaded: &Loaded,
    model: wsel_sema::ItemId<'_>,
    graph: &LayerGraph,
    loss: &LossChoice,
) -> Result<TrainGraph, BuildError> {
    let loss_at = loss.at.clone().unwrap_or_else(|| {
        graph.layers.last().map_or_else(
            || Location {
                file: loaded.file.path(&loaded.db).clone(),
                span: 0..0,
            },
            |l| Location {
                file: l.call.file.clone(),
                span: l.call.span.clone(),
            },
        )
    });
    wsel_lower::training_graph(&loaded.db, model, graph, &loss.name, loss_at)
        .map_err(BuildError::Diagnostics)
}

/// The training graph at the settings' micro-batch, mapped for weight streaming and compiled.
/// When a layer's working set does not fit the SRAM at that micro-batch (E0612), a micro-batch
/// that was not `chosen` becomes the largest divisor of the batch that maps, and a note says
/// so; when none maps, or the micro-batch was chosen, the first E0612 stands.
fn build_fitting(
    loaded: &Loaded,
    model: wsel_sema::ItemId<'_>,
    loss: &LossChoice,
    mut settings: Settings,
    chosen: bool,
    args: &TrainArgs,
    config: Option<&wsel_lower::RunConfig>,
) -> Result<(Program, Settings), BuildError> {
    let target = choose_target(args.target.as_deref(), config)?;
    let asked = settings.micro_batch;
    let mut first_failure = None;
    loop {
        let micro = settings.micro_batch;
        let (graph, diagnostics) = wsel_lower::layer_graph(&loaded.db, model, micro);
        if !diagnostics.is_empty() {
            return Err(BuildError::Diagnostics(diagnostics));
        }
        let train = training_graph(loaded, model, &graph, loss)?;
        let options = MapOptions::default();
        let mapped = wsel_map::map(&train.graph, &target, Mode::Streaming, &options);
        if let Some(placement) = mapped.placement {
            if micro != asked {
                eprintln!(
                    "note: a batch of {asked} samples does not fit the fabric's SRAM for training: running micro-batches of {micro}, the largest divisor of the batch that fits"
                );
            }
            let program = build(loaded, train, placement, target, args)?;
            return Ok((program, settings));
        }
        let too_big = mapped.diagnostics.iter().any(|d| d.code == E0612);
        let failure = first_failure.get_or_insert(mapped.diagnostics);
        let smaller = (1..micro).rev().find(|d| settings.batch.is_multiple_of(*d));
        match smaller {
            Some(next) if too_big && !chosen => settings.micro_batch = next,
            _ => return Err(BuildError::Diagnostics(std::mem::take(failure))),
        }
    }
}

/// The training graph placed for weight streaming, compiled, with the static hang checks.
fn build(
    loaded: &Loaded,
    train: TrainGraph,
    placement: Placement,
    target: Target,
    args: &TrainArgs,
) -> Result<Program, BuildError> {
    let db = &loaded.db;
    let backend = choose_backend(match args.backend {
        BackendArg::Cranelift => BackendArg::Cranelift,
        other => other,
    })
    .map_err(BuildError::Message)?;
    let compiled = compile_layers(db, &train.graph, &placement, backend, &cost_model(&target))?;
    let hangs = hang_checks(db, &train.graph, &placement);
    if hangs
        .iter()
        .any(|d| d.severity == wsel_sema::Severity::Error)
    {
        return Err(BuildError::Diagnostics(hangs));
    }
    Ok(Program {
        train,
        placement,
        compiled,
        target,
    })
}

/// The targets for every training sample: one-hot classes for `cross_entropy`, the values
/// themselves (shaped like the model's result) for any other loss.
fn read_targets(
    path: &Path,
    shape: &[u64],
    loss: &str,
    samples: u64,
) -> Result<Tensor, BuildError> {
    let label_error = |e: crate::tensor::TensorError| BuildError::Run {
        code: E1108,
        message: e.to_string(),
    };
    if loss == "cross_entropy" {
        let classes = shape.get(1).copied().unwrap_or(1);
        if shape.len() != 2 {
            return Err(BuildError::Run {
                code: E1108,
                message: format!(
                    "cross_entropy needs the model's result to be f32[B, classes], not {shape:?}"
                ),
            });
        }
        let labels = read_labels(path, samples).map_err(label_error)?;
        if labels.len() as u64 != samples {
            return Err(BuildError::Run {
                code: E1108,
                message: format!(
                    "`{}` holds {} labels, but the training data has {samples} samples",
                    path.display(),
                    labels.len()
                ),
            });
        }
        one_hot(&labels, classes, &format!("`{}`", path.display()))
    } else {
        let mut expected: Vec<Option<u64>> = shape.iter().map(|d| Some(*d)).collect();
        expected[0] = Some(samples);
        read_npy(path, wsel_ir::kernel::ScalarTy::F32, &expected).map_err(label_error)
    }
}

/// What the steps left: their records and the store with the trained weights.
pub(crate) struct Trained {
    pub steps: Vec<StepRecord>,
    pub store: Store,
    pub wall: std::time::Duration,
}

fn run_steps(
    program: &Program,
    graph: &LayerGraph,
    data: &[Tensor],
    targets: &Tensor,
    params: Vec<Tensor>,
    settings: &Settings,
    args: &TrainArgs,
) -> Result<Trained, BuildError> {
    let Program {
        train,
        placement,
        compiled,
        target,
    } = program;
    let shapes: Vec<Vec<u64>> = params.iter().map(|p| p.shape.clone()).collect();
    let mut store = Store::new(params.iter().map(Tensor::to_f32).collect());
    let samples = targets.shape[0];
    let order = batch_order(
        samples,
        settings.batch,
        settings.steps,
        settings.seed,
        settings.shuffle,
    );
    let options = crate::session::sim_options(args.threads, args.max_cycles);
    let started = std::time::Instant::now();
    let mut steps = Vec::new();
    if !args.quiet {
        print!("{}", table_header());
    }
    for (k, rows) in order.iter().enumerate() {
        let weights: Vec<Tensor> = store
            .params
            .iter()
            .zip(&shapes)
            .map(|(w, shape)| f32_tensor(shape.clone(), w))
            .collect();
        let mut sink = GradientSink::new(store.params.len());
        let mut record = StepRecord::default();
        // The batch's micro-batches, one after the other with the same weights.
        for part in rows.chunks(settings.micro_batch as usize) {
            let mut inputs: Vec<Tensor> = data.iter().map(|t| gather_rows(t, part)).collect();
            inputs.push(gather_rows(targets, part));
            let (outputs, micro) = simulate_step(
                train, placement, compiled, target, &inputs, &weights, &options,
            )?;
            for (param, grad) in &outputs.grads {
                sink.add(*param, grad);
            }
            record.add(&micro);
        }
        let parts = settings.batch / settings.micro_batch;
        sink.scale(1.0 / parts as f32);
        record.loss /= parts as f32;
        if !record.loss.is_finite() {
            return Err(BuildError::Run {
                code: crate::run_errors::E0806,
                message: format!(
                    "the loss is {} at step {} of `{}`: lower the learning rate",
                    record.loss,
                    k + 1,
                    graph.model
                ),
            });
        }
        let elements = store.apply(settings.optimizer, settings.lr, &sink);
        record.step = k as u64 + 1;
        record.update_cycles = update_cycles(target, sink.bytes_in, elements);
        record.gradient_bytes = sink.bytes_in;
        record.cycles += record.update_cycles;
        if !args.quiet {
            print!("{}", table_line(&record, settings.batch, target));
        }
        steps.push(record);
    }
    Ok(Trained {
        steps,
        store,
        wall: started.elapsed(),
    })
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
    batch: u64,
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
        csv(&trained.steps, batch, target).into_bytes(),
    );
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
        "  trained weights, loss.csv and loss.svg written to {}",
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

/// Bytes per PE of the activations the forward pass leaves resident for the backward pass:
/// every result produced up to the loss and read after it (all of them are resident at once
/// when the loss runs). Samples are split over the region's columns, features over its rows.
fn kept_bytes(train: &TrainGraph, placement: &Placement) -> u64 {
    let graph = &train.graph;
    let (rows, cols) = placement.layers.first().map_or((1, 1), |l| {
        (u64::from(l.rows.max(1)), u64::from(l.cols.max(1)))
    });
    let samples = graph.batch.div_ceil(cols);
    (0..=train.loss.min(graph.layers.len().saturating_sub(1)))
        .filter(|&i| {
            graph.layers[train.loss + 1..]
                .iter()
                .any(|l| l.args.contains(&TensorRef::Layer(i)))
        })
        .map(|i| {
            let features: u64 = graph.layers[i].output_shape.iter().skip(1).product();
            4 * samples * features.div_ceil(rows)
        })
        .sum()
}

fn print_summary(
    trained: &Trained,
    program: &Program,
    settings: &Settings,
    accuracy: Option<(u64, u64)>,
) {
    let batch = settings.batch;
    let target = &program.target;
    let total: u64 = trained.steps.iter().map(|s| s.cycles).sum();
    let samples = batch * trained.steps.len() as u64;
    let phases = program.placement.phases;
    let region = program
        .placement
        .layers
        .first()
        .map_or((0, 0), |l| (l.rows, l.cols));
    let parts = batch / settings.micro_batch.max(1);
    let split = if parts > 1 {
        format!(
            " in {parts} micro-batches of {} (gradients accumulated in the store)",
            settings.micro_batch
        )
    } else {
        String::new()
    };
    let mut out = String::new();
    out.push_str(&format!(
        "  {} steps of {batch} samples{split} on {} ({} phases a pass, one layer at a time on {}×{} PEs, weights streamed in twice, gradients out to the store)\n",
        trained.steps.len(),
        target.name,
        phases,
        region.0,
        region.1
    ));
    let kept = kept_bytes(&program.train, &program.placement);
    out.push_str(&format!(
        "  activations kept in SRAM from the forward pass for the backward pass: {} B per PE of {} B ({})\n",
        wsel_map::report::group(kept),
        wsel_map::report::group(u64::from(target.sram_bytes)),
        if kept <= u64::from(target.sram_bytes) {
            "within a PE's SRAM; nothing is recomputed; each phase's own working set is checked by the mapper"
        } else {
            "more than a PE holds: recomputing them is not built, so real hardware could not run this"
        }
    ));
    if let (Some(first), Some(last)) = (trained.steps.first(), trained.steps.last()) {
        out.push_str(&format!("  loss {:.6} → {:.6}\n", first.loss, last.loss));
    }
    out.push_str(&format!(
        "  {} cycles = {:.3} ms at {} MHz · {:.0} training samples/s · wall {:.2} s\n",
        wsel_map::report::group(total),
        target.seconds(total) * 1e3,
        target.clock_hz / 1_000_000,
        samples_per_second(target, samples, total),
        trained.wall.as_secs_f64()
    ));
    if let Some((correct, of)) = accuracy {
        out.push_str(&format!(
            "  accuracy after training: {correct}/{of} = {:.1}% (test data, inference on the fabric)\n",
            100.0 * correct as f64 / of.max(1) as f64
        ));
    }
    print!("{out}");
}

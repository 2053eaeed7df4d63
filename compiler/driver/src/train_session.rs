//! Training as a library call, shared by `wsel train` (`commands::train`, which adds the
//! flags, the files and the printed table) and the Python package (`wsel.train`): the
//! settings checked, the training graph built, mapped for weight streaming and compiled, every
//! step simulated on the fabric with the store's optimizer after it. The data comes from files
//! or from arrays in memory; nothing here prints or writes files, and a failed run gives no
//! weights at all.

use std::path::{Path, PathBuf};

use serde::Serialize;
use wsel_data::Array;
use wsel_data::convert::{Float64, labels, to_tensor};
use wsel_data::npz::DataRef;
use wsel_ir::graph::{LayerGraph, Mode, TensorRef};
use wsel_lower::RecomputeChoice;
use wsel_lower::TrainGraph;
use wsel_map::diagnostics::{E0624, batch_too_big};
use wsel_map::{MapOptions, Placement};
use wsel_sema::Location;
use wsel_sim::SimOptions;
use wsel_target::Target;

use crate::built::BuildFailure;
use crate::inputs::{InputData, NamedInput, read_inputs, read_params};
use crate::pipeline::{
    BuildError, Compiled, Loaded, choose_backend, choose_target, compile_layers, hang_checks,
    pick_model,
};
use crate::run_errors::E0805;
use crate::tensor::{Tensor, TensorError};
use crate::train_outputs::samples_per_second;
use crate::train_recompute::{self, KeptPlan, KeptReport};
use crate::train_settings::{self, LossChoice, TrainOverrides};
use crate::training::{
    E1108, GradientSink, Settings, StepRecord, Store, check_loss, check_settings, f32_tensor,
    gather_rows, one_hot, simulate_step, update_cycles,
};
use wsel_estimate::cost_model;

/// What to train: the program (a file, or source text named by `file`), data overriding the
/// `train` item's (model inputs and labels from files or memory, initial parameters from
/// memory; the others are read from their files) and the settings over the item's.
pub struct TrainRequest<'a> {
    pub file: &'a Path,
    pub text: Option<&'a str>,
    pub inputs: Vec<NamedInput>,
    pub labels: Option<InputData>,
    pub params: Vec<(String, Array)>,
    pub settings: TrainOverrides,
}

/// A finished training run: the trained weights by parameter name (in the model's order),
/// each step's record, the report and the warnings of reading the data.
pub struct TrainOutcome {
    pub weights: Vec<(String, Tensor)>,
    pub steps: Vec<StepRecord>,
    pub report: TrainReport,
    pub warnings: Vec<String>,
}

impl TrainOutcome {
    /// The batch's mean loss at every step, before the step's update.
    pub fn losses(&self) -> Vec<f32> {
        self.steps.iter().map(|s| s.loss).collect()
    }
}

/// Trains the program `request` names, on one system or on the cluster its settings (else
/// the `run` item) ask for, and gives the trained weights in memory.
pub fn train(request: &TrainRequest<'_>) -> Result<TrainOutcome, BuildFailure> {
    let loaded = crate::built::load(request.file, request.text)?;
    let failure = |error| BuildFailure {
        sources: Some(crate::source::source_texts(&loaded.db)),
        error,
    };
    let config = wsel_lower::lower_run_config(&loaded.db, loaded.file);
    let cluster = request.settings.systems.is_some() || config.is_some_and(|c| c.systems.is_some());
    let options =
        crate::session::sim_options(request.settings.threads, request.settings.max_cycles);
    let item = wsel_lower::lower_train_config(&loaded.db, loaded.file);
    if train_settings::pipelined(&request.settings, item.as_ref()) {
        // Pipelined replicas (`crate::cluster::pipelined`); one system is the ordinary run.
        return if crate::cluster::pipelined::systems_asked(&loaded, request) != 1 {
            crate::cluster::pipelined::train(&loaded, request, &options).map_err(failure)
        } else {
            crate::train_pipelined::train(&loaded, request, &options).map_err(failure)
        };
    }
    if cluster {
        return train_on_cluster(&loaded, request).map_err(failure);
    }
    let setup = setup(&loaded, request).map_err(failure)?;
    let trained = run_steps(&setup, &options, &mut |_| {}).map_err(failure)?;
    Ok(outcome(request.file, &setup, &setup.program, trained))
}

/// [`train`] on a cluster of systems in this process (`crate::cluster::train`).
fn train_on_cluster(
    loaded: &Loaded,
    request: &TrainRequest<'_>,
) -> Result<TrainOutcome, BuildError> {
    let prepared = crate::cluster::train::prepare_request(loaded, request)?;
    let local = crate::cluster::comm::Local;
    match crate::cluster::train::train(true, &local, &prepared) {
        Ok(Some((trained, _))) => Ok(outcome(
            request.file,
            &prepared.setup,
            prepared.system_program(),
            trained,
        )),
        Err(Some((_, failure))) => Err(failure.into_error()),
        Ok(None) | Err(None) => Err(BuildError::Message(
            "the cluster's steps ended without a result".into(),
        )),
    }
}

/// The outcome of `trained`, run as `program` (what one system ran) with `setup`'s settings.
fn outcome(file: &Path, setup: &Setup, program: &Program, trained: Trained) -> TrainOutcome {
    let report = TrainReport::new(file, setup, program, &trained);
    TrainOutcome::new(&setup.graph, trained, report, setup.warnings.clone())
}

impl TrainOutcome {
    /// The outcome of `trained` (the model lowered as `graph`) with its report and warnings.
    pub(crate) fn new(
        graph: &LayerGraph,
        trained: Trained,
        report: TrainReport,
        warnings: Vec<String>,
    ) -> TrainOutcome {
        let weights = graph
            .params
            .iter()
            .zip(&trained.store.params)
            .map(|(p, w)| (p.tensor.name.clone(), f32_tensor(p.tensor.shape.clone(), w)))
            .collect();
        TrainOutcome {
            weights,
            steps: trained.steps,
            report,
            warnings,
        }
    }
}

/// A training graph mapped and compiled.
pub(crate) struct Program {
    pub train: TrainGraph,
    pub placement: Placement,
    pub compiled: Compiled,
    pub target: Target,
    /// What it does about the activations its backward pass reads.
    pub kept: KeptPlan,
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
    /// The `train` item's `out_dir`, where `wsel train` writes unless `--out` is given.
    pub item_out_dir: Option<PathBuf>,
    /// One line for each input converted from float64.
    pub warnings: Vec<String>,
}

/// What a training run reads before it builds anything: the model, its graph for the batch,
/// the data, targets and initial parameters, the checked settings and the loss.
pub(crate) struct TrainData<'db> {
    pub model: wsel_sema::ItemId<'db>,
    pub graph: LayerGraph,
    pub data: Vec<Tensor>,
    /// The labels, read (with the parameters) by [`TrainData::targets_and_params`] once the
    /// training graph is built, so that its errors come first.
    pub labels: InputData,
    pub settings: Settings,
    pub loss: LossChoice,
    /// Whether the micro-batch was asked for (else a smaller one may be chosen to fit).
    pub micro_chosen: bool,
    pub item_out_dir: Option<PathBuf>,
    pub warnings: Vec<String>,
}

/// Reads the data and the settings, checks them, and builds the training graph for the batch.
/// Pipelined training has its own (`crate::train_pipelined`, `crate::cluster::pipelined`).
pub(crate) fn setup(loaded: &Loaded, request: &TrainRequest<'_>) -> Result<Setup, BuildError> {
    let item = wsel_lower::lower_train_config(&loaded.db, loaded.file);
    if train_settings::pipelined(&request.settings, item.as_ref()) {
        let message = "pipelined training is set up by `train_pipelined`, not here";
        return Err(BuildError::Message(message.into()));
    }
    let read = read_data(loaded, request)?;
    let run_config = wsel_lower::lower_run_config(&loaded.db, loaded.file);
    let config = train_settings::data_config(item.as_ref(), run_config.as_ref());
    let asked = read.settings.micro_batch;
    let fit = Fit {
        whole: read.settings.batch,
        chosen: read.micro_chosen,
    };
    let (program, settings) = build_fitting(
        loaded,
        read.model,
        &read.loss,
        read.settings.clone(),
        fit,
        &request.settings,
        config,
    )?;
    let (targets, params) = read.targets_and_params(request)?;
    let mut warnings = read.warnings;
    if settings.micro_batch != asked {
        warnings.push(format!(
            "a batch of {asked} samples does not fit the fabric's SRAM for training: running micro-batches of {}, the largest divisor of the batch that fits",
            settings.micro_batch
        ));
    }
    Ok(Setup {
        graph: read.graph,
        data: read.data,
        targets,
        program,
        params,
        settings,
        item_out_dir: read.item_out_dir,
        warnings,
    })
}

impl TrainData<'_> {
    /// The targets of every training sample (from the labels) and the initial parameters
    /// (`request`'s in memory, else the model's files).
    pub(crate) fn targets_and_params(
        &self,
        request: &TrainRequest<'_>,
    ) -> Result<(Tensor, Vec<Tensor>), BuildError> {
        let graph = &self.graph;
        let result_shape = match graph.output {
            TensorRef::Layer(l) => graph.layers[l].output_shape.clone(),
            TensorRef::Input(i) => graph.inputs[i].shape.clone(),
            TensorRef::Param(p) => graph.params[p].tensor.shape.clone(),
        };
        let samples = self.data.first().map_or(0, |t| t.shape[0]);
        let targets = read_targets(self.labels.clone(), &result_shape, &self.loss.name, samples)?;
        let params = read_params(graph, &request.params)?;
        Ok((targets, params))
    }
}

/// Reads the model, the data and the labels' source, and checks the settings.
pub(crate) fn read_data<'db>(
    loaded: &'db Loaded,
    request: &TrainRequest<'_>,
) -> Result<TrainData<'db>, BuildError> {
    let db = &loaded.db;
    let overrides = &request.settings;
    let item = wsel_lower::lower_train_config(db, loaded.file);
    let item = item.as_ref();
    let run_config = wsel_lower::lower_run_config(db, loaded.file);
    let config = train_settings::data_config(item, run_config.as_ref());
    let model = pick_model(db, loaded.file, config)?;

    // The data: the model's inputs and the labels, all of the training set.
    let (shape_graph, _) = wsel_lower::layer_graph(db, model, 1);
    let (data, warnings) = read_inputs(&shape_graph, config, &request.inputs)?;
    let samples = data.first().map_or(0, |t| t.shape[0]);
    let batch = overrides
        .batch
        .or(config.and_then(|c| c.batch))
        .unwrap_or(32);
    if batch == 0 || batch > samples {
        return Err(BuildError::Run {
            code: E0805,
            message: format!(
                "a batch of {batch} samples does not fit the training data, which has {samples}"
            ),
        });
    }
    let settings = train_settings::settings(overrides, item, batch, samples / batch);
    check_settings(&settings)?;

    let (graph, diagnostics) = wsel_lower::layer_graph(db, model, batch);
    if !diagnostics.is_empty() {
        return Err(BuildError::Diagnostics(diagnostics));
    }
    let labels = request
        .labels
        .clone()
        .or(config.and_then(|c| c.labels.clone()).map(InputData::File))
        .ok_or_else(|| BuildError::Run {
            code: E1108,
            message: "no labels to train against: pass `--labels PATH` or add `labels = \"...\";` to the `train` item".into(),
        })?;
    let loss = train_settings::loss(overrides, item);
    let micro_chosen =
        overrides.micro_batch.is_some() || item.and_then(|t| t.micro_batch).is_some();
    Ok(TrainData {
        model,
        graph,
        data,
        labels,
        settings,
        loss,
        micro_chosen,
        item_out_dir: item.and_then(|t| t.out_dir.clone()),
        warnings,
    })
}

/// The training graph of the file's model lowered for `batch` samples — a part of a batch of
/// `whole`, the samples its loss is the mean over — mapped and compiled: what one system of
/// a cluster runs on its share of the batch (`crate::cluster::train`).
pub(crate) fn program_for(
    loaded: &Loaded,
    overrides: &TrainOverrides,
    batch: u64,
    whole: u64,
) -> Result<Program, BuildError> {
    let db = &loaded.db;
    let item = wsel_lower::lower_train_config(db, loaded.file);
    let item = item.as_ref();
    let run_config = wsel_lower::lower_run_config(db, loaded.file);
    let config = train_settings::data_config(item, run_config.as_ref());
    let model = pick_model(db, loaded.file, config)?;
    let loss = train_settings::loss(overrides, item);
    let settings = Settings {
        batch,
        micro_batch: batch,
        ..train_settings::settings(overrides, item, batch, 1)
    };
    let fit = Fit {
        whole,
        chosen: true,
    };
    let (program, _) = build_fitting(loaded, model, &loss, settings, fit, overrides, config)?;
    Ok(program)
}

/// The training graph of `model` (lowered as `graph`) with the chosen loss, its mean taken
/// over `whole` samples; an unknown loss is reported at the item's `loss` setting, else at
/// the model's last call.
fn training_graph(
    loaded: &Loaded,
    model: wsel_sema::ItemId<'_>,
    graph: &LayerGraph,
    loss: &LossChoice,
    whole: u64,
) -> Result<TrainGraph, BuildError> {
    let loss_at = loss_location(loaded, graph, loss);
    wsel_lower::training_graph(&loaded.db, model, graph, &loss.name, loss_at, whole)
        .map_err(BuildError::Diagnostics)
}

/// Where the loss is named for diagnostics: the item's `loss` setting, else the model's last
/// call.
pub(crate) fn loss_location(loaded: &Loaded, graph: &LayerGraph, loss: &LossChoice) -> Location {
    loss.at.clone().unwrap_or_else(|| {
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
    })
}

/// How [`build_fitting`] sizes the graph: the samples of the loss's mean, and whether the
/// settings' micro-batch was chosen by the user (and so must not shrink).
#[derive(Clone, Copy)]
struct Fit {
    whole: u64,
    chosen: bool,
}

/// The training graph at the settings' micro-batch, mapped for weight streaming and compiled.
/// When it does not fit the SRAM — a phase's working set (E0612) or a phase beside the
/// activations kept for later phases (E0624) — the backward pass recomputes activations
/// (`crate::train_recompute`, not with `recompute = "never"`, and only for E0624), or a
/// micro-batch that was not chosen becomes the largest divisor of the batch that maps; with
/// both possible, `"auto"` takes the one with the fewer estimated cycles a step and
/// `"always"` recomputes. When neither maps, the first failure stands.
fn build_fitting(
    loaded: &Loaded,
    model: wsel_sema::ItemId<'_>,
    loss: &LossChoice,
    settings: Settings,
    fit: Fit,
    overrides: &TrainOverrides,
    config: Option<&wsel_lower::RunConfig>,
) -> Result<(Program, Settings), BuildError> {
    let target = choose_target(overrides.target.as_deref(), config)?;
    let item = wsel_lower::lower_train_config(&loaded.db, loaded.file);
    let choice = train_settings::recompute(overrides, item.as_ref());
    // The training graph at a micro-batch and its mapping (on per-layer rows, relaid, when
    // they pay), and the graph before any relayout (recomputation plans from it).
    let mapped_at =
        |micro: u64| -> Result<(TrainGraph, wsel_map::MapResult, TrainGraph), BuildError> {
            let (graph, diagnostics) = wsel_lower::layer_graph(&loaded.db, model, micro);
            if !diagnostics.is_empty() {
                return Err(BuildError::Diagnostics(diagnostics));
            }
            let train = training_graph(loaded, model, &graph, loss, fit.whole)?;
            let (run, mapped) = match overrides.one_region {
                true => (train.clone(), one_region(&train.graph, &target)),
                false => map_training(&loaded.db, model, &train, &target),
            };
            Ok((run, mapped, train))
        };
    let attempt = |micro: u64| mapped_at(micro).map(|(run, mapped, _)| (run, mapped));
    let (run, mapped, train) = mapped_at(settings.micro_batch)?;
    let failure = mapped.diagnostics;
    let kept_failed = failure.iter().any(|d| d.code == E0624);
    let plain = mapped.placement.map(|p| (run, p));
    if plain.is_none() && !failure.iter().any(|d| batch_too_big(d.code)) {
        return Err(BuildError::Diagnostics(failure));
    }
    let recomputing = match choice {
        RecomputeChoice::Always => true,
        RecomputeChoice::Auto => kept_failed,
        RecomputeChoice::Never => false,
    };
    let recomputed = recomputing
        .then(|| {
            // Recomputation runs on one region (its copies are not relaid).
            train_recompute::plan(&train, &mut |g| one_region(&g.graph, &target).placement)
        })
        .flatten();
    let micro = match (&plain, &recomputed) {
        (None, r) if !fit.chosen && (choice != RecomputeChoice::Always || r.is_none()) => {
            micro_fit(&settings, &mut |m| attempt(m))?
        }
        _ => None,
    };
    let why = micro_reason(kept_failed, choice);
    let chosen = choose(plain, recomputed, micro, &settings, &target, why)
        .ok_or(BuildError::Diagnostics(failure))?;
    let program = build(
        loaded,
        chosen.train,
        chosen.placement,
        target,
        overrides,
        chosen.kept,
    )?;
    Ok((program, chosen.settings))
}

/// `train` mapped for weight streaming (`wsel_map::map_training`), with the graph the
/// placement runs: relaid (`wsel_lower::relaid_training`) when its phases take rows of their
/// own, else `train` itself on one region.
fn map_training(
    db: &wsel_sema::Database,
    model: wsel_sema::ItemId<'_>,
    train: &TrainGraph,
    target: &Target,
) -> (TrainGraph, wsel_map::MapResult) {
    let relaid = |rows: &[u32]| wsel_lower::relaid_training(db, train, rows);
    let parts = wsel_map::TrainParts {
        forward: train.forward,
        targets: train.targets,
        beside: &train.beside,
    };
    // The phases' work measured by dry runs (the one region is chosen as before, without).
    let work = wsel_estimate::kernel_work::KernelDryRuns::new(db, model, target);
    let options = MapOptions {
        work: Some(&work),
        ..MapOptions::default()
    };
    let graph_of = |rows: &[u32]| relaid(rows).map(|(t, r)| (t.graph, r));
    let mapped = wsel_map::map_training(&train.graph, parts, &graph_of, target, &options);
    match mapped.rows.as_deref().map(relaid) {
        None => (train.clone(), mapped.result),
        Some(Some((relaid, _))) => (relaid, mapped.result),
        // The graph the mapper placed cannot be built again: the one region runs.
        Some(None) => (train.clone(), one_region(&train.graph, target)),
    }
}

/// A training graph mapped for weight streaming with every phase on one region.
fn one_region(graph: &LayerGraph, target: &Target) -> wsel_map::MapResult {
    wsel_map::map(graph, target, Mode::Streaming, &MapOptions::default())
}

/// Why a run takes micro-batches when recomputing was not tried or did not fit: `kept_failed`
/// when the whole batch failed beside its kept activations (E0624), else its own working set.
fn micro_reason(kept_failed: bool, choice: RecomputeChoice) -> &'static str {
    match (kept_failed, choice) {
        (false, _) => {
            "a phase's own working set does not fit the SRAM at the whole batch (E0612), which recomputing does not shrink"
        }
        (true, RecomputeChoice::Never) => {
            "the kept activations do not fit the SRAM, and recomputing is off (`recompute = \"never\"`)"
        }
        (true, _) => "the kept activations do not fit the SRAM, and no recomputing plan fits",
    }
}

/// The largest micro-batch below `settings`' that divides the batch and whose training graph
/// `attempt` maps, with its graph and placement; `None` when none maps.
fn micro_fit(
    settings: &Settings,
    attempt: &mut dyn FnMut(u64) -> Result<(TrainGraph, wsel_map::MapResult), BuildError>,
) -> Result<Option<(u64, TrainGraph, Placement)>, BuildError> {
    let sizes = (1..settings.micro_batch).rev();
    for micro in sizes.filter(|d| settings.batch.is_multiple_of(*d)) {
        let (train, mapped) = attempt(micro)?;
        if let Some(placement) = mapped.placement {
            return Ok(Some((micro, train, placement)));
        }
    }
    Ok(None)
}

/// The way a training run takes, mapped, before it is compiled.
struct Chosen {
    train: TrainGraph,
    placement: Placement,
    settings: Settings,
    kept: KeptPlan,
}

/// Of the graphs that map — every activation kept (`plain`), some recomputed, a smaller
/// micro-batch — the one to run: `plain` when it is there but recomputation was asked for
/// always, else the one of the other two with the fewer estimated cycles a step.
fn choose(
    plain: Option<(TrainGraph, Placement)>,
    recomputed: Option<train_recompute::Recomputing>,
    micro: Option<(u64, TrainGraph, Placement)>,
    settings: &Settings,
    target: &Target,
    why_micro: &str,
) -> Option<Chosen> {
    let passes = |m: u64| settings.batch / m.max(1);
    let micro_cycles = micro.as_ref().map(|(m, _, p)| {
        p.estimated_cycles * passes(*m) + u64::from(target.reconfigure_cycles) * (passes(*m) - 1)
    });
    let recompute_cycles = recomputed.as_ref().map(|r| r.placement.estimated_cycles);
    if let Some(r) = recomputed
        && micro_cycles.is_none_or(|m| r.placement.estimated_cycles <= m)
    {
        let reason = match (&plain, micro_cycles) {
            (Some(_), _) => "recomputation asked for (`recompute = \"always\"`)".to_string(),
            (None, Some(m)) => format!(
                "the kept activations do not fit the SRAM; recomputing is estimated at {} cycles a step, micro-batches at {}",
                r.placement.estimated_cycles, m
            ),
            (None, None) => {
                "the kept activations do not fit the SRAM, and no smaller micro-batch was allowed or fits".to_string()
            }
        };
        let kept = KeptPlan {
            recomputed: train_recompute::recomputed_names(&r.train),
            checkpoint_every: r.every,
            copy_per_reader: r.fresh,
            estimated_cycles: r.placement.estimated_cycles,
            alternative_cycles: micro_cycles,
            reason,
        };
        return Some(Chosen {
            train: r.train,
            placement: r.placement,
            settings: settings.clone(),
            kept,
        });
    }
    if let Some((train, placement)) = plain {
        let asked = settings.micro_batch < settings.batch;
        let reason = if asked {
            format!(
                "micro-batches of {} asked for; at that size every activation the backward pass reads is kept: they fit the SRAM",
                settings.micro_batch
            )
        } else {
            "every activation the backward pass reads is kept: they fit the SRAM".into()
        };
        let kept = KeptPlan {
            estimated_cycles: placement.estimated_cycles,
            reason,
            ..KeptPlan::default()
        };
        return Some(Chosen {
            train,
            placement,
            settings: settings.clone(),
            kept,
        });
    }
    let (m, train, placement) = micro?;
    let reason = match recompute_cycles {
        Some(r) => format!(
            "the batch does not fit the SRAM; micro-batches are estimated at {} cycles a step, recomputing at {r}",
            micro_cycles.unwrap_or(0)
        ),
        None => why_micro.to_string(),
    };
    let kept = KeptPlan {
        estimated_cycles: micro_cycles.unwrap_or(0),
        alternative_cycles: recompute_cycles,
        reason,
        ..KeptPlan::default()
    };
    Some(Chosen {
        train,
        placement,
        settings: Settings {
            micro_batch: m,
            ..settings.clone()
        },
        kept,
    })
}

/// The training graph placed for weight streaming, compiled, with the static hang checks.
fn build(
    loaded: &Loaded,
    train: TrainGraph,
    placement: Placement,
    target: Target,
    overrides: &TrainOverrides,
    kept: KeptPlan,
) -> Result<Program, BuildError> {
    let backend = choose_backend(overrides.backend).map_err(BuildError::Message)?;
    let compiled = compile_checked(loaded, &train.graph, &placement, backend, &target)?;
    Ok(Program {
        train,
        placement,
        compiled,
        target,
        kept,
    })
}

/// The kernels of `graph` placed as `placement` compiled for `backend`, once the static hang
/// checks find no error.
pub(crate) fn compile_checked(
    loaded: &Loaded,
    graph: &LayerGraph,
    placement: &Placement,
    backend: wsel_codegen::Backend,
    target: &Target,
) -> Result<Compiled, BuildError> {
    let db = &loaded.db;
    let compiled = compile_layers(db, graph, placement, backend, &cost_model(target))?;
    let hangs = hang_checks(db, graph, placement);
    if hangs
        .iter()
        .any(|d| d.severity == wsel_sema::Severity::Error)
    {
        return Err(BuildError::Diagnostics(hangs));
    }
    Ok(compiled)
}

/// The targets for every training sample: one-hot classes for `cross_entropy`, the values
/// themselves (shaped like the model's result) for any other loss.
fn read_targets(
    labels_data: InputData,
    shape: &[u64],
    loss: &str,
    samples: u64,
) -> Result<Tensor, BuildError> {
    let label_error = |e: TensorError| BuildError::Run {
        code: E1108,
        message: e.to_string(),
    };
    // The labels' name in messages: the file's path, or `labels` for an array in memory.
    let (array, name) = match labels_data {
        InputData::File(path) => {
            let data = DataRef { path, member: None };
            let array = data.array().map_err(|reason| {
                label_error(TensorError::Read {
                    file: data.to_string(),
                    reason,
                })
            })?;
            (array, data.path.display().to_string())
        }
        InputData::Array(array) => (array, "labels".to_string()),
    };
    let file = format!("`{name}`");
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
        let labels = labels(array, samples, &file).map_err(label_error)?;
        if labels.len() as u64 != samples {
            return Err(BuildError::Run {
                code: E1108,
                message: format!(
                    "{file} holds {} labels, but the training data has {samples} samples",
                    labels.len()
                ),
            });
        }
        one_hot(&labels, classes, &file)
    } else {
        let mut expected: Vec<Option<u64>> = shape.iter().map(|d| Some(*d)).collect();
        expected[0] = Some(samples);
        let elem = wsel_ir::kernel::ScalarTy::F32;
        to_tensor(array, elem, &expected, Float64::Refuse, &file)
            .map(|c| c.tensor)
            .map_err(label_error)
    }
}

/// What the steps left: their records and the store with the trained weights.
pub(crate) struct Trained {
    pub steps: Vec<StepRecord>,
    pub store: Store,
    pub wall: std::time::Duration,
}

/// Every step of `setup` on one system; `on_step` sees each step's record as it ends.
pub(crate) fn run_steps(
    setup: &Setup,
    options: &SimOptions,
    on_step: &mut dyn FnMut(&StepRecord),
) -> Result<Trained, BuildError> {
    let Setup {
        graph,
        data,
        targets,
        program,
        params,
        settings,
        ..
    } = setup;
    let Program {
        train,
        placement,
        compiled,
        target,
        ..
    } = program;
    let shapes: Vec<Vec<u64>> = params.iter().map(|p| p.shape.clone()).collect();
    let mut store = Store::new(params.iter().map(Tensor::to_f32).collect());
    let samples = targets.shape[0];
    let order = settings.batch_order(samples);
    let started = std::time::Instant::now();
    let mut steps = Vec::new();
    for (k, rows) in order.iter().enumerate() {
        let weights: Vec<Tensor> = store
            .params
            .iter()
            .zip(&shapes)
            .map(|(w, shape)| f32_tensor(shape.clone(), w))
            .collect();
        let mut sink = GradientSink::new(store.params.len());
        let mut record = StepRecord::default();
        // The batch's micro-batches, one after the other with the same weights. Each one's
        // loss layer takes the mean over the whole batch (`over`), so their losses and
        // gradients add up to the batch's.
        for part in rows.chunks(settings.micro_batch as usize) {
            let mut inputs: Vec<Tensor> = data.iter().map(|t| gather_rows(t, part)).collect();
            inputs.push(gather_rows(targets, part));
            let (outputs, micro) = simulate_step(
                train, placement, compiled, target, &inputs, &weights, options,
            )?;
            for (param, grad) in &outputs.grads {
                sink.add(*param, grad);
            }
            record.add(&micro);
        }
        check_loss(record.loss, k + 1, &graph.model)?;
        let elements = store.apply(settings.optimizer, settings.lr, &sink);
        record.step = k as u64 + 1;
        record.update_cycles = update_cycles(target, sink.bytes_in, elements);
        record.gradient_bytes = sink.bytes_in;
        record.cycles += record.update_cycles;
        on_step(&record);
        steps.push(record);
    }
    Ok(Trained {
        steps,
        store,
        wall: started.elapsed(),
    })
}

/// The training run's report: the machine and the settings, the totals `wsel train` prints
/// after the steps and the per-step table (`docs/running.md`, "Training").
#[derive(Debug, Clone, Serialize)]
pub struct TrainReport {
    pub file: String,
    pub model: String,
    pub target: String,
    pub clock_hz: u64,
    pub batch: u64,
    pub micro_batch: u64,
    /// Weight-streaming phases of one pass, and the region every layer runs on (rows, cols).
    pub phases: u32,
    pub region: (u32, u32),
    /// Bytes per PE of the activations kept from the forward pass for the backward pass
    /// (all of them are resident when the loss runs), against a PE's SRAM.
    pub kept_bytes_per_pe: u64,
    pub sram_bytes_per_pe: u64,
    /// The kept activations beside every phase, and what the run does about them (streaming
    /// mode; empty in pipelined mode).
    pub kept: KeptReport,
    /// The phases' rows when the step runs on per-layer rows (streaming mode), else `None`.
    pub per_layer: Option<crate::train_rows::PerLayerRows>,
    pub cycles: u64,
    pub seconds: f64,
    pub samples_per_second: f64,
    /// The host's time for the steps.
    pub wall_seconds: f64,
    pub steps: Vec<StepRow>,
}

/// One step of the report's table: the step's record and its training samples per second.
#[derive(Debug, Clone, Serialize)]
pub struct StepRow {
    #[serde(flatten)]
    pub record: StepRecord,
    pub samples_per_second: f64,
}

impl TrainReport {
    /// The report of `trained`, run as `program` (what one system ran) with `setup`'s settings.
    pub(crate) fn new(
        file: &Path,
        setup: &Setup,
        program: &Program,
        trained: &Trained,
    ) -> TrainReport {
        let batch = setup.settings.batch;
        let target = &program.target;
        let cycles: u64 = trained.steps.iter().map(|s| s.cycles).sum();
        let samples = batch * trained.steps.len() as u64;
        let first = program.placement.layers.first();
        let graph = &program.train.graph;
        let peak = wsel_map::kept_fit::phases(graph, &program.placement)
            .into_iter()
            .max_by_key(|p| (p.total(), std::cmp::Reverse(p.layer)));
        let steps = trained
            .steps
            .iter()
            .map(|s| StepRow {
                record: s.clone(),
                samples_per_second: samples_per_second(target, batch, s.cycles),
            })
            .collect();
        TrainReport {
            file: file.display().to_string(),
            model: setup.graph.model.clone(),
            target: target.name.clone(),
            clock_hz: target.clock_hz,
            batch,
            micro_batch: setup.settings.micro_batch,
            phases: program.placement.phases,
            region: first.map_or((0, 0), |l| (l.rows, l.cols)),
            kept_bytes_per_pe: kept_bytes(&program.train, &program.placement),
            sram_bytes_per_pe: u64::from(target.sram_bytes),
            kept: KeptReport {
                peak_bytes_per_pe: peak.as_ref().map_or(0, |p| p.total()),
                peak_phase: peak.map_or_else(String::new, |p| graph.layers[p.layer].name.clone()),
                plan: program.kept.clone(),
                recompute_cycles: trained.steps.iter().map(|s| s.recompute_cycles).sum(),
            },
            per_layer: crate::train_rows::PerLayerRows::of(graph, &program.placement),
            cycles,
            seconds: target.seconds(cycles),
            samples_per_second: samples_per_second(target, samples, cycles),
            wall_seconds: trained.wall.as_secs_f64(),
            steps,
        }
    }
}

/// Bytes per PE of the activations the forward pass leaves resident for the backward pass:
/// every result produced up to the loss and read after it (all of them are resident at once
/// when the loss runs), each block on its own layer's region (`wsel_map::kept_fit`).
fn kept_bytes(train: &TrainGraph, placement: &Placement) -> u64 {
    let graph = &train.graph;
    let last = train.loss.min(graph.layers.len().saturating_sub(1));
    (0..=last)
        .filter(|&i| {
            graph.layers[train.loss + 1..]
                .iter()
                .any(|l| l.args.contains(&TensorRef::Layer(i)))
        })
        .filter_map(|i| {
            let placed = (0..placement.layers.len()).find(|&p| placement.instance(p) == i)?;
            Some(wsel_map::kept_fit::result_block_bytes(
                graph, placement, i, placed,
            ))
        })
        .sum()
}

//! Pipelined training (`docs/running.md`, "Training"; `docs/language.md` §11.2): every layer
//! resident on its own region, all regions on the fabric at once, weights updated in SRAM by
//! the optimizer running on the PEs.
//!
//! A step runs two pipelined programs on one placement (`wsel_lower::pipelined_training_graphs`):
//! the forward program (the model's `L_train` layers and the loss's `F_train`; the batch's
//! mean loss comes out) and the backward program (`F_train_back`, then every `L_train_back`
//! from the last layer to the first, each pinned to its forward layer's region, dx flowing back
//! region to region; each applies the optimizer to its tile after the batch). Between programs
//! the fabric's SRAM is carried per PE by array name ([`crate::carry`]); the host's weights are
//! loaded once, before the first step, and the trained weights are read from the final SRAM.
//! Weight-version rule: one batch at a time — step k + 1's forward reads step k's update.
//!
//! A cluster's replica ([`ReplicaShare`], `crate::cluster::pipelined`) builds the programs for
//! its share, defers the backward's update (the gradients stay in SRAM) and has more
//! programs: the drains that stream the gradients out and the fill that takes the cluster's
//! sums in and updates (`crate::cluster::replica`).

use wsel_diagnostic::Location;
use wsel_ir::graph::{BindTarget, LayerGraph, Mode};
use wsel_lower::PipelinedTrain;
use wsel_map::{MapOptions, Orientation, Placement, Seat};
use wsel_sema::ty::Value;
use wsel_sim::SimOptions;
use wsel_target::{Rect, Target};

use crate::assemble::{HostData, assemble, collect_result};
use crate::carry::Carry;
use crate::cluster::replica::ReplicaSides;
use crate::pipeline::{BuildError, Compiled, Loaded, choose_backend, choose_target};
use crate::run_errors::{E0806, E0811, E0817};
use crate::tensor::Tensor;
use crate::train_micro;
use crate::train_session::{
    TrainData, TrainOutcome, TrainReport, TrainRequest, Trained, compile_checked, loss_location,
    read_data,
};
use crate::train_settings;
use crate::training::{Optimizer, StepRecord, Store, check_loss, gather_rows};

/// The array in which a backward kernel keeps its update's first and last cycle
/// (`docs/language.md` §11.2).
pub(crate) const UPDATE_SPAN: &str = "span";

/// One of the two programs, placed and compiled.
pub(crate) struct Side {
    pub graph: LayerGraph,
    pub placement: Placement,
    pub compiled: Compiled,
}

/// Pipelined training, ready to run: the data and settings, both programs, the target.
pub(crate) struct Pipelined<'db> {
    pub data: TrainData<'db>,
    /// Every training sample's targets, and the initial parameters.
    pub targets: Tensor,
    pub params: Vec<Tensor>,
    pub forward: Side,
    /// The backward program: with micro-batches, the last micro-batch's (it updates).
    pub backward: Side,
    /// Micro-batches: the backward programs of the micro-batches before the last.
    pub micro: Option<train_micro::Partial>,
    /// A cluster's replica: the programs that take its gradients out and the sums in.
    pub replica: Option<ReplicaSides>,
    pub target: Target,
}

/// What a cluster's replica changes in the programs (`crate::train_replicas`): they are
/// built for its share's `samples`, its loss's mean is over the whole `batch`, its backward
/// keeps the gradients (`deferred`) and a third program applies the update.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReplicaShare {
    pub samples: u64,
    pub batch: u64,
    pub systems: u32,
}

/// Reads the data and the settings, builds the two programs, maps the forward program and
/// the backward program on its regions, and compiles both.
pub(crate) fn prepare<'db>(
    loaded: &'db Loaded,
    request: &TrainRequest<'_>,
) -> Result<Pipelined<'db>, BuildError> {
    prepare_share(loaded, request, None)
}

/// [`prepare`], for a cluster's replica running `share` when given.
pub(crate) fn prepare_share<'db>(
    loaded: &'db Loaded,
    request: &TrainRequest<'_>,
    share: Option<ReplicaShare>,
) -> Result<Pipelined<'db>, BuildError> {
    let mut data = read_data(loaded, request)?;
    let batch = data.settings.batch;
    if share.is_some() && data.settings.micro_batch != batch {
        return Err(BuildError::Run {
            code: E0811,
            message: format!(
                "micro-batches of {} were asked for, and pipelined replicas take their whole share of the batch at once: micro-batches are for one system",
                data.settings.micro_batch
            ),
        });
    }
    let mut optimizer = optimizer_settings(&data.settings);
    if let Some(share) = share {
        optimizer.push(("over".into(), Value::Int(i128::from(share.batch))));
        optimizer.push(("deferred".into(), Value::Bool(true)));
    }
    let item = wsel_lower::lower_train_config(&loaded.db, loaded.file);
    let run_config = wsel_lower::lower_run_config(&loaded.db, loaded.file);
    let config = train_settings::data_config(item.as_ref(), run_config.as_ref());
    let target = choose_target(request.settings.target.as_deref(), config)?;
    let builder = Builder {
        loaded,
        data: &data,
        loss_at: loss_location(loaded, &data.graph, &data.loss),
        target: &target,
        backend: choose_backend(request.settings.backend).map_err(BuildError::Message)?,
    };
    let fitted = fit_forward(&builder, &optimizer, share)?;
    let (graph, settings, graphs, forward) = fitted.value;
    let micro = (share.is_none() && fitted.samples < batch).then_some(fitted.samples);
    let split = micro
        .filter(|_| !data.micro_chosen)
        .map(|m| train_micro::why_split(batch, m, fitted.first_failure.as_ref()));
    if share.is_some() {
        check_deferred(&graphs.backward)?;
    }
    let regions = regions_of(&graphs, &forward);
    let pinned = MapOptions {
        regions: Some(&regions),
        ..MapOptions::default()
    };
    let (backward, micro) = backward_sides(&builder, &graph, &settings, graphs, &pinned, micro)?;
    let replica = match share {
        Some(share) => Some(replica_sides(
            &builder, &optimizer, share, &graph, &forward, &pinned,
        )?),
        None => None,
    };
    let (targets, params) = data.targets_and_params(request)?;
    data.warnings.extend(split);
    Ok(Pipelined {
        data,
        targets,
        params,
        forward,
        backward,
        micro,
        replica,
        target,
    })
}

/// What building the programs of a pipelined training run needs.
struct Builder<'a, 'db> {
    loaded: &'db Loaded,
    data: &'a TrainData<'db>,
    loss_at: Location,
    target: &'a Target,
    backend: wsel_codegen::Backend,
}

impl Builder<'_, '_> {
    /// The model's graph for `samples` samples, relayed.
    fn lowered(&self, samples: u64) -> Result<LayerGraph, BuildError> {
        let model = self.data.model;
        let (graph, diagnostics) = wsel_lower::layer_graph(&self.loaded.db, model, samples);
        if diagnostics.is_empty() {
            self.relayed(&graph)
        } else {
            Err(BuildError::Diagnostics(diagnostics))
        }
    }

    /// `graph` with a relay before a layer's second reading of a result (`add(h, h)`): in
    /// training the relay is the block's branch (`relay_train`, `relay_train_back`).
    fn relayed(&self, graph: &LayerGraph) -> Result<LayerGraph, BuildError> {
        crate::pipeline::relay(&self.loaded.db, graph).map_err(BuildError::Diagnostics)
    }

    /// The forward and backward graphs of `graph`, the run's `settings` given to its layers.
    fn training(
        &self,
        graph: &LayerGraph,
        settings: &[(String, Value)],
    ) -> Result<PipelinedTrain, BuildError> {
        let (data, loss) = (self.data, &self.data.loss.name);
        let at = self.loss_at.clone();
        wsel_lower::pipelined_training_graphs(
            &self.loaded.db,
            data.model,
            graph,
            loss,
            at,
            settings,
        )
        .map_err(BuildError::Diagnostics)
    }

    /// `graph` mapped with `options` and compiled.
    fn side(&self, graph: LayerGraph, options: &MapOptions) -> Result<Side, BuildError> {
        let mapped = wsel_map::map(&graph, self.target, Mode::Pipelined, options);
        let placement = mapped
            .placement
            .ok_or(BuildError::Diagnostics(mapped.diagnostics))?;
        let compiled = compile_checked(self.loaded, &graph, &placement, self.backend, self.target)?;
        Ok(Side {
            graph,
            placement,
            compiled,
        })
    }
}

/// The model's graph, the settings, the training graphs and the placed forward program for the
/// first micro-batch size that maps ([`train_micro::fit`]): the batch, else its largest
/// divisor that fits, or the size asked for; a replica's share.
fn fit_forward(
    builder: &Builder<'_, '_>,
    optimizer: &[(String, Value)],
    share: Option<ReplicaShare>,
) -> Result<train_micro::Fitted<Forward>, BuildError> {
    let data = builder.data;
    let batch = data.settings.batch;
    let sizes = match share {
        Some(share) => vec![share.samples],
        None if data.micro_chosen => vec![data.settings.micro_batch],
        None => train_micro::sizes(batch),
    };
    train_micro::fit(&sizes, |samples| {
        let graph = match share {
            None if samples == batch => builder.relayed(&data.graph)?,
            _ => builder.lowered(samples)?,
        };
        let mut settings = optimizer.to_vec();
        if share.is_none() && samples < batch {
            settings.push(("over".into(), Value::Int(i128::from(batch))));
        }
        let graphs = builder.training(&graph, &settings)?;
        let seats = seats(&graphs);
        let options = MapOptions {
            companion: Some(wsel_map::Companion {
                graph: &graphs.backward,
                seats: &seats,
            }),
            ..MapOptions::default()
        };
        let forward = builder.side(graphs.forward.clone(), &options)?;
        Ok((graph, settings, graphs, forward))
    })
}

/// The run's settings, by the names of the training layers' scalar inputs.
type Settings = Vec<(String, Value)>;

/// What [`fit_forward`] builds: the model's graph, the settings, the training graphs and the
/// placed forward program.
type Forward = (LayerGraph, Settings, PipelinedTrain, Side);

/// Where every backward layer of `graphs` runs: on its forward layer's region, a residual
/// block's sum at the block's fork when the placement leaves room (`wsel_map::Seat`).
fn seats(graphs: &PipelinedTrain) -> Vec<Seat> {
    graphs
        .region_of
        .iter()
        .zip(&graphs.fork_of)
        .map(|(&otherwise, fork)| match *fork {
            Some((from, to)) => Seat::Fork {
                from,
                to,
                otherwise,
            },
            None => Seat::On(otherwise),
        })
        .collect()
}

/// The region and orientation of every backward layer of `graphs` on the `forward` placement.
fn regions_of(graphs: &PipelinedTrain, forward: &Side) -> Vec<(Rect, Orientation)> {
    let placed: Vec<(Rect, Orientation)> = forward
        .placement
        .layers
        .iter()
        .map(|l| (l.rect, l.orientation))
        .collect();
    wsel_map::seat_regions(&seats(graphs), &placed).unwrap_or_default()
}

/// The backward program, placed as `pinned`; with micro-batches of `micro` samples, the last
/// micro-batch's and the others' ([`train_micro::Partial`]).
fn backward_sides(
    builder: &Builder<'_, '_>,
    graph: &LayerGraph,
    settings: &[(String, Value)],
    graphs: PipelinedTrain,
    pinned: &MapOptions,
    micro: Option<u64>,
) -> Result<(Side, Option<train_micro::Partial>), BuildError> {
    let Some(samples) = micro else {
        return Ok((builder.side(graphs.backward, pinned)?, None));
    };
    train_micro::check_scalars(&graphs.backward)?;
    let backward_with = |flags: &[&str]| -> Result<Side, BuildError> {
        let mut settings = settings.to_vec();
        settings.extend(flags.iter().map(|f| (f.to_string(), Value::Bool(true))));
        builder.side(builder.training(graph, &settings)?.backward, pinned)
    };
    let partial = train_micro::Partial {
        samples,
        first: backward_with(&train_micro::FIRST)?,
        middle: backward_with(&train_micro::MIDDLE)?,
    };
    Ok((backward_with(&train_micro::LAST)?, Some(partial)))
}

/// A replica's drain and fill programs (`crate::cluster::replica`).
fn replica_sides(
    builder: &Builder<'_, '_>,
    optimizer: &[(String, Value)],
    share: ReplicaShare,
    graph: &LayerGraph,
    forward: &Side,
    pinned: &MapOptions,
) -> Result<ReplicaSides, BuildError> {
    let update = builder.training(&builder.lowered(0)?, optimizer)?;
    // The model layer of every backward layer's region (a relay's or keep's: its reader's).
    let stands_for: Vec<usize> = update
        .region_of
        .iter()
        .map(|&l| update.model_of[l])
        .collect();
    let graphs = wsel_lower::replica_graphs(
        &builder.loaded.db,
        builder.data.model,
        graph,
        &update.backward,
        &stands_for,
        optimizer,
    );
    let target = builder.target;
    let tree = wsel_swarm::Tree::new(share.systems, target.swarm.fan_out);
    let fed = crate::cluster::feed_target(target, &tree).0;
    let side = |graph, options: &MapOptions| builder.side(graph, options);
    crate::cluster::replica::build(graphs, fed, forward, pinned, &side)
}

/// E0817 unless every backward layer that updates parameters can leave its update to the
/// cluster's sum: declares the scalar input `deferred` (`docs/language.md` §11.2). One that
/// cannot would update its replica with its share's gradient alone.
fn check_deferred(backward: &LayerGraph) -> Result<(), BuildError> {
    train_micro::require_scalar(backward, "deferred", E0817, |layer| {
        let message = format!(
            "`{layer}` cannot wait for the cluster's sum of the gradients: it has no scalar input `deferred`"
        );
        let help = "give it `deferred: bool = false` (docs/language.md §11.2): when true, keep the gradient of array `a` in `ga` and update only when run for no samples; or train on one system";
        (
            message,
            "trained by pipelined replicas here",
            help.to_string(),
        )
    })
}

/// The optimizer's settings, by the names of the backward layers' scalar inputs
/// (`docs/language.md` §11.2): `lr`, and `momentum` for SGD or `adam = true`, `beta1`, `beta2`
/// and `eps` for Adam.
fn optimizer_settings(settings: &crate::training::Settings) -> Vec<(String, Value)> {
    let float = |name: &str, v: f32| (name.to_string(), Value::Float(f64::from(v)));
    let mut out = vec![float("lr", settings.lr)];
    match settings.optimizer {
        Optimizer::Sgd { momentum } => out.push(float("momentum", momentum)),
        Optimizer::Adam { beta1, beta2, eps } => out.extend([
            ("adam".to_string(), Value::Bool(true)),
            float("beta1", beta1),
            float("beta2", beta2),
            float("eps", eps),
        ]),
    }
    out
}

/// Every step: the forward program, then the backward program, the SRAM carried between
/// them; `on_step` sees each step's record as it ends. The trained weights are read from the
/// final SRAM.
pub(crate) fn run_steps(
    run: &Pipelined<'_>,
    options: &SimOptions,
    on_step: &mut dyn FnMut(&StepRecord),
) -> Result<Trained, BuildError> {
    let data = &run.data;
    let settings = &data.settings;
    let samples = run.targets.shape[0];
    let order = settings.batch_order(samples);
    let started = std::time::Instant::now();
    let mut carry = Carry::new();
    let mut steps = Vec::new();
    for (k, rows) in order.iter().enumerate() {
        let mut record = forward_backward(run, &mut carry, rows, k, options)?;
        check_loss(record.loss, k + 1, &data.graph.model)?;
        record.update_cycles = carry.longest_span(&run.backward.placement, UPDATE_SPAN);
        on_step(&record);
        steps.push(record);
    }
    Ok(Trained {
        steps,
        store: Store::new(weights(run, &carry)?),
        wall: started.elapsed(),
    })
}

/// Step `k`'s forward and backward programs on the samples `rows` (with micro-batches, on
/// each block of them in turn), the SRAM carried in `carry`: its record, the update's cycles
/// left to the caller.
pub(crate) fn forward_backward(
    run: &Pipelined<'_>,
    carry: &mut Carry,
    rows: &[u64],
    k: usize,
    options: &SimOptions,
) -> Result<StepRecord, BuildError> {
    let Some(partial) = &run.micro else {
        let record = pass(run, &run.backward, carry, rows, k > 0, options)?;
        return Ok(StepRecord {
            step: k as u64 + 1,
            ..record
        });
    };
    let blocks: Vec<&[u64]> = rows.chunks(partial.samples as usize).collect();
    let mut record: Option<StepRecord> = None;
    for (i, block) in blocks.iter().enumerate() {
        let last = i + 1 == blocks.len();
        let backward = if last {
            &run.backward
        } else {
            partial.backward(i)
        };
        // Only the first step's first program follows no other on the fabric.
        let switched = k > 0 || i > 0;
        let part = pass(run, backward, carry, block, switched, options)?;
        match record.as_mut() {
            Some(step) => step.add(&part),
            None => record = Some(part),
        }
    }
    let mut record = record.ok_or_else(|| BuildError::Message("a step of no samples".into()))?;
    record.step = k as u64 + 1;
    Ok(record)
}

/// The forward program and then `backward` on the samples `rows`, as a step's record
/// (numbered by the caller); the forward after a switch of the fabric from another program
/// when `switched`.
fn pass(
    run: &Pipelined<'_>,
    backward: &Side,
    carry: &mut Carry,
    rows: &[u64],
    switched: bool,
    options: &SimOptions,
) -> Result<StepRecord, BuildError> {
    let x: Vec<Tensor> = run.data.data.iter().map(|t| gather_rows(t, rows)).collect();
    let t = gather_rows(&run.targets, rows);
    let forward_inputs: Vec<Tensor> = x.into_iter().chain([t.clone()]).collect();
    // The fabric takes the other program's code and routes before each program but the
    // first (`target.reconfigure_cycles`), as between weight streaming's phases.
    let switch = u64::from(run.target.reconfigure_cycles);
    let host = |inputs| HostData {
        inputs,
        params: &run.params,
    };
    let (loss, forward) = simulate(
        &run.target,
        &run.forward,
        &host(&forward_inputs),
        carry,
        options,
    )?;
    let forward_cycles = forward + if switched { switch } else { 0 };
    let t = [t];
    let (_, backward) = simulate(&run.target, backward, &host(&t), carry, options)?;
    let backward_cycles = backward + switch;
    Ok(StepRecord {
        step: 0,
        loss: f32::from_bits(loss.words.first().copied().unwrap_or(0)),
        forward_cycles,
        loss_cycles: 0,
        backward_cycles,
        update_cycles: 0,
        stall_cycles: 0,
        recompute_cycles: 0,
        // Without a cluster the update runs at the end of the backward program: its cycles
        // are in it.
        cycles: forward_cycles + backward_cycles,
        gradient_bytes: 0,
    })
}

/// The weights in `carry`, per parameter.
pub(crate) fn weights(run: &Pipelined<'_>, carry: &Carry) -> Result<Vec<Vec<f32>>, BuildError> {
    (0..run.data.graph.params.len())
        .map(|p| {
            let words = carry
                .param(&run.forward.graph, &run.forward.placement, p)
                .map_err(BuildError::Message)?;
            Ok(words.into_iter().map(f32::from_bits).collect())
        })
        .collect()
}

/// Runs one program on `target` with the host's tensors `host`, its SRAM loaded from `carry`
/// (the host's weights before the first step) and kept in it after; its result and its cycles.
pub(crate) fn simulate(
    target: &Target,
    side: &Side,
    host: &HostData<'_>,
    carry: &mut Carry,
    options: &SimOptions,
) -> Result<(Tensor, u64), BuildError> {
    let mut assembled = assemble(&side.graph, &side.placement, &side.compiled, host)
        .map_err(BuildError::Message)?;
    carry.load(&side.placement, &side.compiled, &mut assembled.program);
    let outcome =
        wsel_sim::simulate(target, &assembled.program, options).map_err(|e| BuildError::Run {
            code: E0806,
            message: format!("pipelined training failed on the fabric: {e}"),
        })?;
    let sram = |at| outcome.sram(at).map(|b| b.into_owned());
    carry
        .keep(&side.placement, &side.compiled, &sram)
        .map_err(BuildError::Message)?;
    let result = collect_result(&side.graph, &assembled.output_parts, &outcome.outputs)
        .map_err(BuildError::Message)?;
    Ok((result, outcome.cycles))
}

/// [`crate::train_session::train`] in pipelined mode.
pub(crate) fn train(
    loaded: &Loaded,
    request: &TrainRequest<'_>,
    options: &SimOptions,
) -> Result<TrainOutcome, BuildError> {
    let run = prepare(loaded, request)?;
    let trained = run_steps(&run, options, &mut |_| {})?;
    let report = report(request.file, &run, &trained);
    let warnings = run.data.warnings.clone();
    Ok(TrainOutcome::new(
        &run.data.graph,
        trained,
        report,
        warnings,
    ))
}

/// The most SRAM bytes any PE of the forward program gives to weights: its kernel's arrays
/// bound to parameters.
pub(crate) fn weight_bytes_per_pe(run: &Pipelined<'_>) -> u64 {
    let side = &run.forward;
    side.placement
        .layers
        .iter()
        .enumerate()
        .map(|(l, placed)| {
            let ir = &side.compiled.irs[side.compiled.layer_kernel[l]];
            let layer = &side.graph.layers[side.placement.instance(l)];
            let imp = &layer.impls[placed.implementation];
            imp.binds
                .iter()
                .filter(|b| b.target == BindTarget::Array)
                .filter(|b| !crate::assemble::is_activation(layer, &b.tensor))
                .filter_map(|b| ir.arrays.iter().find(|a| a.name == b.target_name))
                .map(|a| 4 * u64::from(a.len))
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0)
}

/// Every region of the forward program (the backward's are the same), as `layernorm_train#1
/// 1 × 8` in placement order: what the summary prints after "regions:".
pub(crate) fn regions(run: &Pipelined<'_>) -> String {
    let shown: Vec<String> = run
        .forward
        .placement
        .layers
        .iter()
        .map(|l| format!("{} {} × {}", l.name, l.rows, l.cols))
        .collect();
    shown.join(", ")
}

/// The report of a pipelined run: one "phase" (every layer at once), the largest region, and
/// the SRAM carried per PE (weights, kept activations, optimizer state) at its largest.
pub(crate) fn report(
    file: &std::path::Path,
    run: &Pipelined<'_>,
    trained: &Trained,
) -> TrainReport {
    let target = &run.target;
    let batch = run.data.settings.batch;
    let cycles: u64 = trained.steps.iter().map(|s| s.cycles).sum();
    let samples = batch * trained.steps.len() as u64;
    let per_second = crate::train_outputs::samples_per_second;
    let largest = run
        .forward
        .placement
        .layers
        .iter()
        .max_by_key(|l| u64::from(l.rows) * u64::from(l.cols));
    let sram_used = run
        .forward
        .placement
        .layers
        .iter()
        .chain(&run.backward.placement.layers)
        .map(|l| l.sram_bytes)
        .max()
        .unwrap_or(0);
    TrainReport {
        file: file.display().to_string(),
        model: run.data.graph.model.clone(),
        target: target.name.clone(),
        clock_hz: target.clock_hz,
        batch,
        micro_batch: run.micro.as_ref().map_or(batch, |m| m.samples),
        phases: 1,
        region: largest.map_or((0, 0), |l| (l.rows, l.cols)),
        kept_bytes_per_pe: sram_used,
        sram_bytes_per_pe: u64::from(target.sram_bytes),
        kept: Default::default(),
        per_layer: None,
        cycles,
        seconds: target.seconds(cycles),
        samples_per_second: per_second(target, samples, cycles),
        wall_seconds: trained.wall.as_secs_f64(),
        steps: trained
            .steps
            .iter()
            .map(|s| crate::train_session::StepRow {
                record: s.clone(),
                samples_per_second: per_second(target, batch, s.cycles),
            })
            .collect(),
    }
}

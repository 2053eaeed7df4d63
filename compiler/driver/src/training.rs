//! Training on the simulated fabric (`wsel train`, `docs/running.md` "Training").
//!
//! A training step runs the training graph (`wsel_lower::training_graph`: the model's forward
//! layers, the loss, the backward layers in reverse) as weight streaming runs a model: one
//! layer at a time on one region, the batch's activations resident in SRAM, every layer's
//! weights streamed from the store — for the backward pass a second time. The loss and the
//! parameter gradients leave the fabric through the region's edge: the loss to the host, the
//! gradients to the weight store. The store sums what arrives for each parameter
//! ([`GradientSink`], the seam where a cluster's systems would add theirs) and applies the
//! optimizer ([`Store::apply`]); its time is the store's own (`weight_store` figures of the
//! target), added after the step's fabric time. Weight-version rule: step k + 1's forward
//! pass reads the weights step k's update wrote; one batch is on the fabric at a time.

use wsel_ir::graph::{LayerGraph, TensorRef};
use wsel_lower::TrainGraph;
use wsel_map::Placement;
use wsel_sim::SimOptions;
use wsel_target::Target;

use crate::assemble::{HostData, OutputPart, collect_param_result};
use crate::pipeline::{BuildError, Compiled};
use crate::streamed::StreamedRun;
use crate::tensor::Tensor;

/// The learning rate is not a finite positive number.
pub const E1106: &str = "E1106";
/// An optimizer setting is out of its range (momentum or a beta outside [0, 1), a
/// non-positive epsilon), or the run would take no step.
pub const E1107: &str = "E1107";
/// The labels do not fit the model: another shape than the model's result needs, a class
/// outside 0 .. classes, or another number of samples than the inputs.
pub const E1108: &str = "E1108";

/// The micro-batch is not a positive divisor of the batch.
pub const E1113: &str = "E1113";

/// Every code of `wsel train`'s settings and data, with a one-line summary.
pub const CODES: &[(&str, &str)] = &[
    (E1106, "the learning rate is not a finite positive number"),
    (E1107, "an optimizer setting is out of range"),
    (E1108, "the labels do not fit the model"),
    (E1113, "the micro-batch does not divide the batch"),
];

/// The optimizer the weight store applies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Optimizer {
    /// v = momentum · v + g; w -= lr · v (momentum 0: plain SGD).
    Sgd { momentum: f32 },
    /// Adam (Kingma & Ba), bias-corrected: m = b1·m + (1−b1)·g, v = b2·v + (1−b2)·g²,
    /// w -= lr · m̂ / (√v̂ + eps).
    Adam { beta1: f32, beta2: f32, eps: f32 },
}

/// What a training run does.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub optimizer: Optimizer,
    pub lr: f32,
    pub steps: u64,
    pub batch: u64,
    /// Samples per micro-batch: `batch` runs as `batch / micro_batch` forward and backward
    /// passes whose gradients the store accumulates before the one update.
    pub micro_batch: u64,
    pub seed: u64,
    pub shuffle: bool,
}

impl Settings {
    /// The samples of every step's batch out of `samples` ([`batch_order`] with these
    /// settings).
    pub fn batch_order(&self, samples: u64) -> Vec<Vec<u64>> {
        batch_order(samples, self.batch, self.steps, self.seed, self.shuffle)
    }
}

/// Checks the learning rate and the optimizer's settings (E1106, E1107).
pub fn check_settings(settings: &Settings) -> Result<(), BuildError> {
    let lr = settings.lr;
    if !lr.is_finite() || lr <= 0.0 {
        return Err(run_error(
            E1106,
            format!("the learning rate {lr} is not a finite positive number"),
        ));
    }
    let unit = |name: &str, v: f32| {
        if (0.0..1.0).contains(&v) {
            Ok(())
        } else {
            Err(run_error(
                E1107,
                format!("{name} = {v} is out of range: it must be at least 0 and below 1"),
            ))
        }
    };
    match settings.optimizer {
        Optimizer::Sgd { momentum } => unit("momentum", momentum)?,
        Optimizer::Adam { beta1, beta2, eps } => {
            unit("beta1", beta1)?;
            unit("beta2", beta2)?;
            if !eps.is_finite() || eps <= 0.0 {
                return Err(run_error(
                    E1107,
                    format!("eps = {eps} is out of range: it must be a finite positive number"),
                ));
            }
        }
    }
    let (batch, micro) = (settings.batch, settings.micro_batch);
    if micro == 0 || !batch.is_multiple_of(micro) {
        return Err(run_error(
            E1113,
            format!(
                "a micro-batch of {micro} samples does not divide the batch of {batch}: the micro-batches of a step must be equal"
            ),
        ));
    }
    if settings.steps == 0 {
        return Err(run_error(E1107, "the run would take no step: give `--steps` or `--epochs` of at least 1 (and at least one full batch of data)".into()));
    }
    Ok(())
}

/// Stops the run when a step's loss is not finite (E0806): training has diverged.
pub fn check_loss(loss: f32, step: usize, model: &str) -> Result<(), BuildError> {
    if loss.is_finite() {
        return Ok(());
    }
    Err(run_error(
        crate::run_errors::E0806,
        format!("the loss is {loss} at step {step} of `{model}`: lower the learning rate"),
    ))
}

/// The samples of every step's batch: per epoch a permutation of the samples (Fisher–Yates
/// driven by SplitMix64 from `seed`; the identity without shuffling), cut into batches in
/// order, the last incomplete batch of an epoch dropped. `tests/reference/train.py` draws the
/// same order.
pub fn batch_order(
    samples: u64,
    batch: u64,
    steps: u64,
    seed: u64,
    shuffle: bool,
) -> Vec<Vec<u64>> {
    let per_epoch = samples / batch.max(1);
    let mut rng = seed;
    let mut order = Vec::new();
    let mut perm: Vec<u64> = Vec::new();
    for step in 0..steps {
        let k = step % per_epoch.max(1);
        if k == 0 {
            perm = (0..samples).collect();
            if shuffle {
                for i in (1..perm.len()).rev() {
                    let j = (splitmix64(&mut rng) % (i as u64 + 1)) as usize;
                    perm.swap(i, j);
                }
            }
        }
        let start = (k * batch) as usize;
        order.push(perm[start..start + batch as usize].to_vec());
    }
    order
}

/// SplitMix64 (Steele, Lea & Flood): the next value of the generator whose state is `state`.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The rows `rows` of `tensor` (samples first) as a tensor.
pub fn gather_rows(tensor: &Tensor, rows: &[u64]) -> Tensor {
    let len = tensor.sample_len().max(1);
    let mut words = Vec::with_capacity(rows.len() * len);
    for &r in rows {
        let at = r as usize * len;
        words.extend_from_slice(&tensor.words[at..at + len]);
    }
    let mut shape = tensor.shape.clone();
    shape[0] = rows.len() as u64;
    Tensor {
        elem: tensor.elem,
        shape,
        words,
    }
}

/// One-hot targets of `classes` columns for integer labels (E1108 for a label out of range).
pub fn one_hot(labels: &[i64], classes: u64, file: &str) -> Result<Tensor, BuildError> {
    let mut values = vec![0.0f32; labels.len() * classes as usize];
    for (i, &label) in labels.iter().enumerate() {
        if label < 0 || label as u64 >= classes {
            return Err(run_error(
                E1108,
                format!(
                    "{file}: label {label} of sample {i} is not a class of the model's result, which has {classes} (0 .. {})",
                    classes - 1
                ),
            ));
        }
        values[i * classes as usize + label as usize] = 1.0;
    }
    Ok(f32_tensor(vec![labels.len() as u64, classes], &values))
}

/// An f32 tensor of `shape` holding `values`.
pub fn f32_tensor(shape: Vec<u64>, values: &[f32]) -> Tensor {
    Tensor {
        elem: wsel_ir::kernel::ScalarTy::F32,
        shape,
        words: values.iter().map(|v| v.to_bits()).collect(),
    }
}

/// The gradients arriving at the weight store in one step, summed per parameter. Each
/// gradient stream that leaves the fabric is added to its parameter's sum; with one system
/// every parameter gets one stream, in a cluster (issue #22) one per system.
pub struct GradientSink {
    sums: Vec<Option<Vec<f32>>>,
    /// Bytes that entered the store.
    pub bytes_in: u64,
}

impl GradientSink {
    pub fn new(params: usize) -> GradientSink {
        GradientSink {
            sums: vec![None; params],
            bytes_in: 0,
        }
    }

    /// Adds one gradient stream of parameter `param`.
    pub fn add(&mut self, param: usize, grad: &[f32]) {
        self.bytes_in += 4 * grad.len() as u64;
        match &mut self.sums[param] {
            Some(sum) => sum.iter_mut().zip(grad).for_each(|(s, g)| *s += g),
            none => *none = Some(grad.to_vec()),
        }
    }
}

/// The weight store: the parameters, the optimizer's state, and its update.
pub struct Store {
    pub params: Vec<Vec<f32>>,
    first: Vec<Vec<f32>>,
    second: Vec<Vec<f32>>,
    steps: i32,
}

impl Store {
    pub fn new(params: Vec<Vec<f32>>) -> Store {
        let zeros: Vec<Vec<f32>> = params.iter().map(|p| vec![0.0; p.len()]).collect();
        Store {
            first: zeros.clone(),
            second: zeros,
            params,
            steps: 0,
        }
    }

    /// Applies one optimizer step with the summed gradients (a parameter without a gradient
    /// is left as it is); the elements updated.
    pub fn apply(&mut self, optimizer: Optimizer, lr: f32, sink: &GradientSink) -> u64 {
        self.steps += 1;
        let mut elements = 0;
        for (p, grad) in sink.sums.iter().enumerate() {
            let Some(g) = grad else { continue };
            elements += g.len() as u64;
            let (w, m, v) = (&mut self.params[p], &mut self.first[p], &mut self.second[p]);
            match optimizer {
                Optimizer::Sgd { momentum } => {
                    for i in 0..w.len() {
                        m[i] = momentum * m[i] + g[i];
                        w[i] -= lr * m[i];
                    }
                }
                Optimizer::Adam { beta1, beta2, eps } => {
                    let c1 = 1.0 - beta1.powi(self.steps);
                    let c2 = 1.0 - beta2.powi(self.steps);
                    for i in 0..w.len() {
                        m[i] = beta1 * m[i] + (1.0 - beta1) * g[i];
                        v[i] = beta2 * v[i] + (1.0 - beta2) * g[i] * g[i];
                        let mhat = m[i] / c1;
                        let vhat = v[i] / c2;
                        w[i] -= lr * mhat / (vhat.sqrt() + eps);
                    }
                }
            }
        }
        elements
    }
}

/// The store's cycles for one update: the gradients entering it at its inbound bandwidth, or
/// its optimizer going over the elements, whichever takes longer (they overlap).
pub fn update_cycles(target: &Target, bytes_in: u64, elements: u64) -> u64 {
    let store = &target.weight_store;
    let inbound = bytes_in.div_ceil(u64::from(store.gradient_bandwidth_bytes_per_cycle.max(1)));
    let apply = elements.div_ceil(u64::from(store.update_elements_per_cycle.max(1)));
    inbound.max(apply)
}

/// What one step did, in the fabric's and the store's time.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct StepRecord {
    pub step: u64,
    /// The batch's mean loss, as the loss layer computed it on the fabric.
    pub loss: f32,
    /// Cycles of the forward phases (with the inputs staged in), of the loss and of the
    /// backward phases, each with the reconfiguration before it.
    pub forward_cycles: u64,
    pub loss_cycles: u64,
    pub backward_cycles: u64,
    /// The store's update after the step.
    pub update_cycles: u64,
    /// Cycles the layers' PEs waited for streamed weights (`docs/running.md`).
    pub stall_cycles: u64,
    /// Of the backward cycles, those of the forward phases run again for the backward pass
    /// (recomputation, `crate::train_recompute`), each with the reconfiguration before it.
    #[serde(default)]
    pub recompute_cycles: u64,
    /// The whole step: fabric and update.
    pub cycles: u64,
    /// Gradient bytes that entered the store.
    pub gradient_bytes: u64,
}

impl StepRecord {
    /// Adds the fabric's part of a micro-batch's pass to this step: its loss (its samples'
    /// part of the batch's mean) and its cycles, which follow the micro-batches before it.
    pub fn add(&mut self, micro: &StepRecord) {
        self.loss += micro.loss;
        self.forward_cycles += micro.forward_cycles;
        self.loss_cycles += micro.loss_cycles;
        self.backward_cycles += micro.backward_cycles;
        self.stall_cycles += micro.stall_cycles;
        self.recompute_cycles += micro.recompute_cycles;
        self.cycles += micro.cycles;
    }
}

/// The phase kind of graph layer `instance` of a training graph (a forward layer run again
/// for the backward pass runs among the backward phases, and counts as one).
enum Part {
    Forward,
    Loss,
    Backward,
}

fn part(graph: &TrainGraph, instance: usize) -> Part {
    if instance < graph.forward {
        Part::Forward
    } else if instance <= graph.loss {
        Part::Loss
    } else {
        Part::Backward
    }
}

/// The results of one simulated step, by graph layer: the loss and the gradients.
pub struct StepOutputs {
    pub loss: f32,
    /// (model parameter, gradient).
    pub grads: Vec<(usize, Vec<f32>)>,
    /// Per gradient, the cycle its phase ended: when the whole gradient had left the fabric
    /// (a cluster's reduction starts from it).
    pub ready: Vec<u64>,
    /// What each phase of the step did (filled by [`simulate_step`]).
    pub phases: Vec<crate::streamed::PhaseRecord>,
}

/// Splits the edge outputs of a streamed step by the layer that sent them and reads the loss
/// and the gradients. Phases ran in order and each phase's outputs are the placement's, in
/// placement order.
pub fn step_outputs(
    graph: &TrainGraph,
    placement: &Placement,
    run: &StreamedRun,
) -> Result<StepOutputs, BuildError> {
    let mut owners = Vec::new();
    for phase in 0..placement.phases {
        for point in &placement.outputs {
            if placement.layers[point.layer].phase == phase {
                owners.push(placement.instance(point.layer));
            }
        }
    }
    if owners.len() != run.outputs.len() {
        return Err(BuildError::Message(format!(
            "the step sent {} streams out of the fabric, {} expected",
            run.outputs.len(),
            owners.len()
        )));
    }
    let result_of = |instance: usize| -> Result<Vec<f32>, BuildError> {
        let (parts, streams): (Vec<OutputPart>, Vec<Vec<u32>>) = owners
            .iter()
            .zip(run.output_parts.iter().zip(&run.outputs))
            .filter(|(o, _)| **o == instance)
            .map(|(_, (p, s))| (p.clone(), s.clone()))
            .unzip();
        let single = LayerGraph {
            output: TensorRef::Layer(instance),
            ..graph.graph.clone()
        };
        collect_param_result(&single, &parts, &streams)
            .map(|t| t.to_f32())
            .map_err(|why| {
                BuildError::Message(format!(
                    "`{}` sent out another amount of data than its result holds: {why}",
                    graph.graph.layers[instance].name
                ))
            })
    };
    let loss = result_of(graph.loss)?.first().copied().unwrap_or(f32::NAN);
    let grads = graph
        .grads
        .iter()
        .map(|&(layer, param)| Ok((param, result_of(layer)?)))
        .collect::<Result<_, BuildError>>()?;
    let ready = graph
        .grads
        .iter()
        .map(|&(layer, _)| {
            run.phases
                .iter()
                .filter(|p| placement.instance(p.layer) == layer)
                .map(|p| p.start + p.cycles)
                .max()
                .unwrap_or(run.cycles)
        })
        .collect();
    Ok(StepOutputs {
        loss,
        grads,
        ready,
        phases: Vec::new(),
    })
}

/// Simulates one step with `inputs` (the model's, then the targets) and the store's current
/// weights; what the fabric sent out and how long each part took.
pub fn simulate_step(
    graph: &TrainGraph,
    placement: &Placement,
    compiled: &Compiled,
    target: &Target,
    inputs: &[Tensor],
    params: &[Tensor],
    options: &SimOptions,
) -> Result<(StepOutputs, StepRecord), BuildError> {
    let program = crate::streamed::Streamed {
        graph: &graph.graph,
        placement,
        compiled,
        target,
    };
    let mut alone = |cycles| Some(cycles);
    simulate_step_gated(graph, program, inputs, params, options, &mut alone)
}

/// [`simulate_step`] of `program` (the training graph `graph`, placed and compiled) on one
/// system of a cluster, waiting at `gate` between phases for the slowest system
/// (`crate::cluster::train`).
pub fn simulate_step_gated(
    graph: &TrainGraph,
    program: crate::streamed::Streamed<'_>,
    inputs: &[Tensor],
    params: &[Tensor],
    options: &SimOptions,
    gate: &mut crate::streamed::PhaseGate<'_>,
) -> Result<(StepOutputs, StepRecord), BuildError> {
    let crate::streamed::Streamed {
        placement,
        compiled,
        ..
    } = program;
    let data = HostData { inputs, params };
    let run = crate::streamed::run_gated(program, &data, options, None, gate)
        .map_err(|f| crate::session::phase_failure(f, None, placement, compiled))?;
    let mut outputs = step_outputs(graph, placement, &run)?;
    let mut record = StepRecord {
        step: 0,
        loss: outputs.loss,
        forward_cycles: 0,
        loss_cycles: 0,
        backward_cycles: 0,
        update_cycles: 0,
        stall_cycles: 0,
        recompute_cycles: 0,
        cycles: run.cycles,
        gradient_bytes: 0,
    };
    let mut previous_end = 0;
    for phase in &run.phases {
        // A phase's share: from the end of the phase before (its reconfiguration) to its end.
        let end = phase.start + phase.cycles;
        let share = end - previous_end;
        previous_end = end;
        let instance = placement.instance(phase.layer);
        match part(graph, instance) {
            Part::Forward => record.forward_cycles += share,
            Part::Loss => record.loss_cycles += share,
            Part::Backward => record.backward_cycles += share,
        }
        if graph.rerun.iter().any(|&(copy, _)| copy == instance) {
            record.recompute_cycles += share;
        }
        if let Some(w) = &phase.weights {
            record.stall_cycles += w.stall_cycles;
        }
    }
    outputs.phases = run.phases;
    Ok((outputs, record))
}

fn run_error(code: &'static str, message: String) -> BuildError {
    BuildError::Run { code, message }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_order_is_a_permutation_per_epoch() {
        let order = batch_order(10, 3, 6, 5, true);
        assert_eq!(order.len(), 6);
        let mut epoch: Vec<u64> = order[..3].concat();
        epoch.sort_unstable();
        assert_eq!(epoch.len(), 9);
        epoch.dedup();
        assert_eq!(epoch.len(), 9, "no sample twice in an epoch");
        assert_ne!(order[0], vec![0, 1, 2], "shuffled");
        assert_eq!(
            batch_order(10, 3, 2, 5, false),
            vec![vec![0, 1, 2], vec![3, 4, 5]]
        );
    }

    #[test]
    fn splitmix64_matches_its_published_first_value() {
        // SplitMix64 from state 0: the first output is 0xE220A8397B1DCDAF.
        let mut state = 0;
        assert_eq!(splitmix64(&mut state), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn sgd_and_adam_update_as_written() {
        let mut sink = GradientSink::new(1);
        sink.add(0, &[1.0, -2.0]);
        let mut store = Store::new(vec![vec![0.5, 0.5]]);
        store.apply(Optimizer::Sgd { momentum: 0.9 }, 0.1, &sink);
        store.apply(Optimizer::Sgd { momentum: 0.9 }, 0.1, &sink);
        // v1 = g, v2 = 1.9 g: w = 0.5 - 0.1 (g + 1.9 g).
        assert!((store.params[0][0] - (0.5 - 0.29)).abs() < 1e-6);
        assert!((store.params[0][1] - (0.5 + 0.58)).abs() < 1e-6);
        let mut adam = Store::new(vec![vec![0.0]]);
        let mut one = GradientSink::new(1);
        one.add(0, &[3.0]);
        adam.apply(
            Optimizer::Adam {
                beta1: 0.9,
                beta2: 0.999,
                eps: 1e-8,
            },
            0.01,
            &one,
        );
        // The first bias-corrected Adam step moves by lr · sign(g).
        assert!((adam.params[0][0] + 0.01).abs() < 1e-6);
    }

    #[test]
    fn settings_out_of_range_are_coded_errors() {
        let ok = Settings {
            optimizer: Optimizer::Sgd { momentum: 0.9 },
            lr: 0.1,
            steps: 1,
            batch: 4,
            micro_batch: 2,
            seed: 0,
            shuffle: true,
        };
        assert!(check_settings(&ok).is_ok());
        let code = |s: Settings| match check_settings(&s) {
            Err(BuildError::Run { code, .. }) => code,
            _ => "ok",
        };
        assert_eq!(
            code(Settings {
                lr: f32::NAN,
                ..ok.clone()
            }),
            E1106
        );
        assert_eq!(
            code(Settings {
                lr: 0.0,
                ..ok.clone()
            }),
            E1106
        );
        let momentum = Settings {
            optimizer: Optimizer::Sgd { momentum: 1.0 },
            ..ok.clone()
        };
        assert_eq!(code(momentum), E1107);
        let adam = Optimizer::Adam {
            beta1: 0.9,
            beta2: 0.999,
            eps: 0.0,
        };
        assert_eq!(
            code(Settings {
                optimizer: adam,
                ..ok.clone()
            }),
            E1107
        );
        assert_eq!(
            code(Settings {
                micro_batch: 3,
                ..ok.clone()
            }),
            E1113
        );
        assert_eq!(code(Settings { steps: 0, ..ok }), E1107);
    }
}

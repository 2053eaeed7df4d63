//! One training step of a cluster: this process's systems simulate the step on their shares
//! with the phase barrier between them ([`simulate_mine`]), and process 0 sums their
//! gradients through the broadcast/reduce tree and applies the optimizer ([`combine`]).

use serde::{Deserialize, Serialize};
use wsel_sim::SimOptions;

use super::comm::Comm;
use super::gate;
use super::summary::Failure;
use super::train::Prepared;
use crate::pipeline::BuildError;
use crate::run_timing::StallCause;
use crate::tensor::Tensor;
use crate::training::{
    GradientSink, StepOutputs, StepRecord, Store, gather_rows, simulate_step, simulate_step_gated,
    update_cycles,
};

/// What one system's step gave: its loss and gradients as they left its fabric, and its
/// figures.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SystemStep {
    pub system: u32,
    /// Its share's part of the batch's mean loss, as its loss layer computed it.
    pub loss: f32,
    /// (model parameter, gradient: its share's part of the batch's), in the order they left.
    pub grads: Vec<(usize, Vec<f32>)>,
    /// Per gradient, the cycle (on the cluster's clock) its phase ended.
    pub ready: Vec<u64>,
    /// Its fabric's cycles for the step, on the cluster's clock, and of those the cycles it
    /// waited at the ends of phases for slower systems.
    pub cycles: u64,
    pub waited: u64,
    pub forward_cycles: u64,
    pub loss_cycles: u64,
    pub backward_cycles: u64,
    pub stall_cycles: u64,
    /// Every phase that streamed weights, in order.
    pub phases: Vec<PhaseLoad>,
}

/// A phase's weights on one system: what the tree's feed delivered and how the PEs waited.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PhaseLoad {
    pub layer: String,
    pub weight_bytes: u64,
    pub stall_cycles: u64,
    /// Whether its stalls were the feed's (the tree or the store behind it).
    pub by_feed: bool,
    pub stall_free_bytes_per_cycle: Option<f64>,
}

/// What one process sends process 0 after a step.
#[derive(Serialize, Deserialize)]
pub struct StepPayload {
    pub systems: Vec<Result<SystemStep, Failure>>,
    /// The one-system step of the whole batch (first step, last process): its cycles.
    pub baseline: Option<Result<u64, Failure>>,
}

/// What process 0 knows of a step beyond its record: the reduction's figures.
#[derive(Clone, Debug)]
pub struct StepFigures {
    pub systems: Vec<SystemStep>,
    /// Per gradient: the parameter, its bytes, and the cycles from the end of its phase
    /// (the latest system's) to the sum's last byte at the store.
    pub reduced: Vec<(usize, u64, u64)>,
    /// The slowest fabric's cycles and when the last sum reached the store.
    pub fabric_cycles: u64,
    pub summed_at: u64,
    /// How the sums' arrival after the fabric's end splits into latency and bandwidth
    /// (`None` with one system: no tree).
    pub tail: Option<super::train_report::Tail>,
    pub baseline: Option<u64>,
}

/// Simulates step `rows` (the global batch's samples) on this process's systems with the
/// store's `weights`, and, when `baseline`, the whole batch on one system beside them.
pub fn simulate_mine(
    prepared: &Prepared,
    comm: &dyn Comm,
    rows: &[u64],
    weights: &[Tensor],
    baseline: bool,
) -> StepPayload {
    let mine = super::split::systems_of_rank(prepared.systems, comm.size(), comm.rank());
    let (barrier, participants) = gate::barrier(mine.len());
    let options = &prepared.options;
    std::thread::scope(|scope| {
        let handles: Vec<_> = mine
            .clone()
            .zip(participants)
            .map(|(s, p)| scope.spawn(move || run_system(prepared, s, p, rows, weights, options)))
            .collect();
        let base = baseline.then(|| scope.spawn(move || run_baseline(prepared, rows, weights)));
        gate::coordinate(barrier, comm);
        let systems = handles
            .into_iter()
            .zip(mine)
            .map(|(h, s)| h.join().unwrap_or_else(|_| Err(Failure::panicked(s))))
            .collect();
        let baseline = base.map(|h| {
            h.join()
                .unwrap_or_else(|_| Err(Failure::panicked(u32::MAX)))
        });
        StepPayload { systems, baseline }
    })
}

/// The inputs of `rows`: the model's, then the targets.
fn inputs_of(prepared: &Prepared, rows: &[u64]) -> Vec<Tensor> {
    let setup = &prepared.setup;
    let mut inputs: Vec<Tensor> = setup.data.iter().map(|t| gather_rows(t, rows)).collect();
    inputs.push(gather_rows(&setup.targets, rows));
    inputs
}

/// System `s`'s step on its share of `rows`, waiting at the barrier between phases.
fn run_system(
    prepared: &Prepared,
    s: u32,
    mut participant: gate::Participant,
    rows: &[u64],
    weights: &[Tensor],
    options: &SimOptions,
) -> Result<SystemStep, Failure> {
    let share = &prepared.shares[s as usize];
    let mine = &rows[share.start as usize..share.end as usize];
    let inputs = inputs_of(prepared, mine);
    let program = prepared.program_of(s);
    let streamed = crate::streamed::Streamed {
        graph: &program.train.graph,
        placement: &program.placement,
        compiled: &program.compiled,
        target: &program.target,
    };
    let mut waited = 0u64;
    let mut gate = |cycles: u64| {
        let slowest = participant.step(cycles)?;
        waited += slowest - cycles;
        Some(slowest)
    };
    let step = simulate_step_gated(
        &program.train,
        streamed,
        &inputs,
        weights,
        options,
        &mut gate,
    );
    let (outputs, record) = match step {
        Ok(step) => step,
        Err(error) => {
            let aborted = matches!(&error, BuildError::Message(m) if m == super::ABORTED);
            participant.finish(false);
            return Err(Failure::system(s, &prepared.sources, error, aborted));
        }
    };
    participant.finish(true);
    Ok(system_step(s, prepared, outputs, &record, waited))
}

fn system_step(
    system: u32,
    prepared: &Prepared,
    outputs: StepOutputs,
    record: &StepRecord,
    waited: u64,
) -> SystemStep {
    let program = prepared.program_of(system);
    let phases = outputs
        .phases
        .iter()
        .filter_map(|p| {
            let w = p.weights.as_ref()?;
            let layer = &program.train.graph.layers[program.placement.instance(p.layer)];
            Some(PhaseLoad {
                layer: layer.name.clone(),
                weight_bytes: w.weight_bytes,
                stall_cycles: w.stall_cycles,
                by_feed: w.stalled_by == Some(StallCause::Store),
                stall_free_bytes_per_cycle: w.stall_free_bytes_per_cycle,
            })
        })
        .collect();
    SystemStep {
        system,
        loss: outputs.loss,
        grads: outputs.grads,
        ready: outputs.ready,
        cycles: record.cycles,
        waited,
        forward_cycles: record.forward_cycles,
        loss_cycles: record.loss_cycles,
        backward_cycles: record.backward_cycles,
        stall_cycles: record.stall_cycles,
        phases,
    }
}

/// The whole batch's step on one system, as `wsel train` runs it: its cycles, the store's
/// update included.
fn run_baseline(prepared: &Prepared, rows: &[u64], weights: &[Tensor]) -> Result<u64, Failure> {
    let program = &prepared.setup.program;
    let inputs = inputs_of(prepared, rows);
    let (outputs, record) = simulate_step(
        &program.train,
        &program.placement,
        &program.compiled,
        &program.target,
        &inputs,
        weights,
        &prepared.options,
    )
    .map_err(|e| Failure::system(u32::MAX, &prepared.sources, e, false))?;
    let elements: u64 = outputs.grads.iter().map(|(_, g)| g.len() as u64).sum();
    Ok(record.cycles + update_cycles(&program.target, 4 * elements, elements))
}

/// Process 0's part of a step: the systems' payloads in system order, their gradients summed
/// through the tree (with one system: straight into the store, as `wsel train` does), the
/// sum — the batch's gradient — applied by the store's optimizer. `Err`: the failure to
/// print, and its process.
pub fn combine(
    prepared: &Prepared,
    store: &mut Store,
    payloads: Vec<StepPayload>,
) -> Result<(StepRecord, StepFigures), (usize, Failure)> {
    let (systems, baseline) = collect(prepared, payloads)?;
    let settings = &prepared.setup.settings;
    let fabric_cycles = systems.iter().map(|s| s.cycles).max().unwrap_or(0);
    let mut sink = GradientSink::new(store.params.len());
    let (reduced, summed_at, tail) = if systems.len() == 1 {
        for (param, grad) in &systems[0].grads {
            sink.add(*param, grad);
        }
        (Vec::new(), fabric_cycles, None)
    } else {
        let reduction = super::train_report::Reduction::of(prepared, &systems);
        for (param, sum) in &reduction.sums {
            sink.add(*param, sum);
        }
        let tail = reduction.tail(prepared, fabric_cycles);
        (reduction.figures, reduction.summed_at, Some(tail))
    };
    let loss = systems.iter().map(|s| s.loss).sum::<f32>();
    if !loss.is_finite() {
        let message = format!(
            "the loss is {loss} in this step of `{}`: lower the learning rate",
            prepared.setup.graph.model
        );
        let error = BuildError::Run {
            code: crate::run_errors::E0806,
            message,
        };
        return Err((0, Failure::new(None, Some(&prepared.sources), error)));
    }
    let elements = store.apply(settings.optimizer, settings.lr, &sink);
    let update = update_cycles(&prepared.setup.program.target, sink.bytes_in, elements);
    let most = |f: fn(&SystemStep) -> u64| systems.iter().map(f).max().unwrap_or(0);
    let record = StepRecord {
        step: 0,
        loss,
        forward_cycles: most(|s| s.forward_cycles),
        loss_cycles: most(|s| s.loss_cycles),
        backward_cycles: most(|s| s.backward_cycles),
        update_cycles: update,
        stall_cycles: most(|s| s.stall_cycles),
        recompute_cycles: 0,
        cycles: fabric_cycles.max(summed_at) + update,
        gradient_bytes: sink.bytes_in,
    };
    let figures = StepFigures {
        systems,
        reduced,
        fabric_cycles,
        summed_at,
        tail,
        baseline,
    };
    Ok((record, figures))
}

/// The systems' steps in system order and the baseline's cycles, or the first real failure
/// (a system stopped by another's failure last).
type Collected = (Vec<SystemStep>, Option<u64>);

fn collect(prepared: &Prepared, payloads: Vec<StepPayload>) -> Result<Collected, (usize, Failure)> {
    let mut systems = Vec::new();
    let mut failures = Vec::new();
    let mut baseline = None;
    for (rank, payload) in payloads.into_iter().enumerate() {
        for outcome in payload.systems {
            match outcome {
                Ok(s) => systems.push(s),
                Err(f) => failures.push((rank, f)),
            }
        }
        match payload.baseline {
            Some(Ok(cycles)) => baseline = Some(cycles),
            Some(Err(f)) => failures.push((rank, f)),
            None => {}
        }
    }
    failures.sort_by_key(|(_, f)| (f.aborted, f.system));
    if let Some(first) = failures.into_iter().next() {
        return Err(first);
    }
    systems.sort_by_key(|s| s.system);
    if systems.len() != prepared.systems as usize {
        let lost = Failure::message(0, "the steps of some systems did not reach process 0");
        return Err((0, lost));
    }
    Ok((systems, baseline))
}

//! The steps of pipelined replicas (`super::pipelined`) over the processes of a cluster:
//! each process simulates its block of replicas (`split::systems_of_rank`), each on a thread,
//! and keeps their SRAM from step to step. A step: every process's replicas run forward,
//! backward and the drains (`super::replica`); their losses and the gradients the drains
//! brought out of their fabrics go to process 0 (a gather, in replica order), which sums them
//! through the tree; the sums and the allreduce's timing come back to every process (a
//! broadcast), whose replicas run their fill programs; their cycles go to
//! process 0, which writes the step's record, and tells every process to go on or stop.
//! After the last step process 0 gathers every replica's weights and checks they are one.
//! Process 0 alone prints; the bytes are the same for any number of processes.

use std::ops::Range;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use wsel_sim::SimOptions;

use super::comm::Comm;
use super::pipelined::{Allreduce, Replicas, allreduce};
use super::replica::{drain, fill_and_update};
use super::summary::Failure;
use crate::carry::Carry;
use crate::pipeline::BuildError;
use crate::train_pipelined::{Pipelined, forward_backward, weights};
use crate::train_session::Trained;
use crate::training::{StepRecord, Store, check_loss};

/// What every step gave (process 0), or why they stopped: the failure to print and the
/// process it came from at process 0, `None` at the others.
pub(crate) type Steps = Result<Option<(Trained, Vec<Allreduce>)>, Stopped>;

/// Why the steps stopped: the failure and its process at process 0, `None` at the others.
type Stopped = Option<(usize, Failure)>;

/// A replica's forward, backward and drains: its record, the drains' cycles and the
/// gradient per parameter they brought out.
#[derive(Serialize, Deserialize)]
pub(super) struct Pass {
    pub record: StepRecord,
    pub drain: u64,
    pub gradients: Vec<Vec<f32>>,
}

/// Every step on every replica of this process; `on_step` (at process 0) sees each step's
/// record as it ends. The trained weights are replica 0's; a failure if any replica's differ.
pub(crate) fn run_steps(
    reps: &Replicas<'_>,
    comm: &dyn Comm,
    options: &SimOptions,
    on_step: &mut dyn FnMut(&StepRecord, &Allreduce),
) -> Steps {
    let settings = &reps.whole.data.settings;
    let order = settings.batch_order(reps.whole.targets.shape[0]);
    let systems = reps.shares.len() as u32;
    let mine = super::split::systems_of_rank(systems, comm.size(), comm.rank());
    let started = std::time::Instant::now();
    let mut carries: Vec<Carry> = mine.clone().map(|_| Carry::new()).collect();
    let (mut steps, mut figures) = (Vec::new(), Vec::new());
    for (k, rows) in order.iter().enumerate() {
        let step = step(reps, comm, &mine, &mut carries, rows, k, options)?;
        if let Some((record, allreduce)) = step {
            on_step(&record, &allreduce);
            steps.push(record);
            figures.push(allreduce);
        }
    }
    let kept = each_replica(reps, &mine, &mut carries, |_, run, carry| {
        weights(run, carry)
    });
    let Some(all) = gather(reps, comm, kept) else {
        return Ok(None);
    };
    let all = all?;
    let params = all.first().cloned().unwrap_or_default();
    if let Some(s) = all.iter().position(|w| *w != params) {
        let text = format!("replica {s}'s weights differ from replica 0's after training");
        return Err(Some((0, Failure::message(s as u32, &text))));
    }
    let trained = Trained {
        steps,
        store: Store::new(params),
        wall: started.elapsed(),
    };
    Ok(Some((trained, figures)))
}

/// Step `k` (the batch's samples `rows`) on this process's replicas `mine` (SRAM in
/// `carries`): its record and allreduce at process 0, `None` at the others.
fn step(
    reps: &Replicas<'_>,
    comm: &dyn Comm,
    mine: &Range<u32>,
    carries: &mut [Carry],
    rows: &[u64],
    k: usize,
    options: &SimOptions,
) -> Result<Option<(StepRecord, Allreduce)>, Stopped> {
    let passes = each_replica(reps, mine, carries, |s, run, carry| {
        let share = &reps.shares[s];
        let rows = &rows[share.start as usize..share.end as usize];
        let record = forward_backward(run, carry, rows, k, options)?;
        let (gradients, drain) = drain(run, carry, options)?;
        Ok(Pass {
            record,
            drain,
            gradients,
        })
    });
    let passes: Option<Result<Vec<Pass>, _>> = gather(reps, comm, passes);
    let (passes, failure) = split(passes);
    let reduced = passes.as_ref().map(|p| allreduce(reps, p));
    let Some((sums, mut allreduce)) = share(comm, reduced) else {
        return Err(failure);
    };
    let updates = each_replica(reps, mine, carries, |_, run, carry| {
        fill_and_update(run, carry, &sums, options)
    });
    let (updates, failure) = split(gather(reps, comm, updates));
    let record = match (passes, updates) {
        (Some(passes), Some(updates)) => {
            allreduce.update = updates.iter().map(|u| u.0).max().unwrap_or(0);
            let record = record(k, &passes, &updates, &allreduce);
            let model = &reps.whole.data.graph.model;
            match check_loss(record.loss, k + 1, model) {
                Ok(()) => Ok(Some((record, allreduce))),
                Err(error) => Err(Some((0, Failure::new(None, Some(&reps.sources), error)))),
            }
        }
        _ => Err(failure),
    };
    let go = share(comm, record.as_ref().ok().map(|_| ()));
    match (go, record) {
        (Some(()), Ok(record)) => Ok(record),
        (Some(()), Err(_)) => Ok(None),
        (None, record) => Err(record.err().flatten()),
    }
}

/// Step `k`'s record from every replica's pass and update (cycles and span).
fn record(k: usize, passes: &[Pass], updates: &[(u64, u64)], a: &Allreduce) -> StepRecord {
    let most = |f: fn(&StepRecord) -> u64| passes.iter().map(|p| f(&p.record)).max().unwrap_or(0);
    StepRecord {
        step: k as u64 + 1,
        loss: passes.iter().map(|p| p.record.loss).sum(),
        forward_cycles: most(|r| r.forward_cycles),
        loss_cycles: 0,
        backward_cycles: most(|r| r.backward_cycles),
        update_cycles: updates.iter().map(|u| u.1).max().unwrap_or(0),
        stall_cycles: 0,
        recompute_cycles: 0,
        cycles: a.summed + a.update,
        gradient_bytes: a.bytes,
    }
}

/// `f` on every replica of `mine` (its index, programs and SRAM), each on a thread; the
/// results in replica order.
fn each_replica<T: Send>(
    reps: &Replicas<'_>,
    mine: &Range<u32>,
    carries: &mut [Carry],
    f: impl Fn(usize, &Pipelined<'_>, &mut Carry) -> Result<T, BuildError> + Sync,
) -> Vec<Result<T, Failure>> {
    std::thread::scope(|scope| {
        let f = &f;
        let handles: Vec<_> = mine
            .clone()
            .zip(carries.iter_mut())
            .map(|(s, carry)| {
                let s = s as usize;
                scope.spawn(move || f(s, reps.run_of(s), carry))
            })
            .collect();
        handles
            .into_iter()
            .zip(mine.clone())
            .map(|(h, s)| match h.join() {
                Ok(result) => result.map_err(|e| Failure::system(s, &reps.sources, e, false)),
                Err(_) => Err(Failure::panicked(s)),
            })
            .collect()
    })
}

/// Every process's `results` at process 0, in replica order, or the first failure and its
/// process; `None` at the other processes.
fn gather<T: Serialize + DeserializeOwned>(
    reps: &Replicas<'_>,
    comm: &dyn Comm,
    results: Vec<Result<T, Failure>>,
) -> Option<Result<Vec<T>, (usize, Failure)>> {
    let bytes = postcard::to_allocvec(&results).unwrap_or_default();
    let gathered = comm.gather(&bytes)?;
    Some(decode(reps, &gathered))
}

/// The processes' results, as [`gather`] gives them.
fn decode<T: DeserializeOwned>(
    reps: &Replicas<'_>,
    gathered: &[Vec<u8>],
) -> Result<Vec<T>, (usize, Failure)> {
    let mut all = Vec::new();
    for (rank, bytes) in gathered.iter().enumerate() {
        let results: Vec<Result<T, Failure>> = postcard::from_bytes(bytes).map_err(|_| {
            let text = "a process's replicas could not be read by process 0";
            (rank, Failure::message(0, text))
        })?;
        for result in results {
            all.push(result.map_err(|f| (rank, f))?);
        }
    }
    if all.len() != reps.shares.len() {
        let lost = "the results of some replicas did not reach process 0";
        return Err((0, Failure::message(0, lost)));
    }
    Ok(all)
}

/// A gather's results, or its failure, apart (both `None` at processes other than 0).
fn split<T>(
    gathered: Option<Result<T, (usize, Failure)>>,
) -> (Option<T>, Option<(usize, Failure)>) {
    match gathered {
        Some(Ok(value)) => (Some(value), None),
        Some(Err(failure)) => (None, Some(failure)),
        None => (None, None),
    }
}

/// Process 0's `value` at every process (`None`: stop).
fn share<T: Serialize + DeserializeOwned>(comm: &dyn Comm, value: Option<T>) -> Option<T> {
    let mut bytes = postcard::to_allocvec(&value).unwrap_or_default();
    comm.broadcast(&mut bytes);
    postcard::from_bytes::<Option<T>>(&bytes).ok().flatten()
}

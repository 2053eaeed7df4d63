//! `wsel train --mode pipelined --systems N`: pipelined replicas (`docs/running.md`,
//! "Pipelined training on a cluster").
//!
//! Every system is a replica of the one-system pipelined training (`crate::train_pipelined`):
//! every layer resident on its region, its weights and optimizer state in its own SRAM. A
//! step's batch is cut into shares as for weight streaming (`split::shares`); each replica's
//! programs are built for its share, its loss's mean taken over the whole batch (`over`), so
//! its gradients are its share's part of the batch's. A step on a replica runs: the forward;
//! the backward with the update deferred (`deferred`: the gradients stay in SRAM, in `gw`,
//! `gbias`); the drains, which stream every parameter's gradient out of the fabric; and, once
//! the sums are at the store, the fill program, which takes them in and updates
//! (`super::replica`). Between programs the driver carries each replica's SRAM.
//!
//! The allreduce. The gradients the drains brought out of a replica's fabric leave for the
//! tree when its last drain ends (`wsel_swarm::reduce_all`: every parameter's gradient, in
//! parameter order, on the same links, summed by the switches in the tree's fixed order) into
//! the store. From the store the sums come down the tree into every replica's fill program:
//! its weight store is the tree's feed (`super::feed_target`, exact for the tree's event
//! model), so the broadcast and the sums' way into the regions are one simulation. A step's
//! cycles: when the slowest replica's drains end, the tree's tail after it, the slowest fill
//! program. Every replica applies the same optimizer to the same sum, so they stay identical
//! (checked after the last step).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::Range;

use serde::{Deserialize, Serialize};
use wsel_sim::SimOptions;
use wsel_swarm::{Stream, Tree, reduce_all};

use super::comm::{Comm, Local};
use super::pipelined_steps::Pass;
use crate::carry::Carry;
use crate::cli::TrainArgs;
use crate::pipeline::{BuildError, Loaded, load_and_check, report_build_failure};
use crate::render::SourceTexts;
use crate::status::Status;
use crate::train_pipelined::{Pipelined, ReplicaShare, forward_backward, prepare, prepare_share};
use crate::train_session::{TrainOutcome, TrainRequest, Trained};
use crate::training::StepRecord;

/// The replicas' programs, ready to run.
pub(crate) struct Replicas<'db> {
    /// One system on the whole batch, as `wsel train --mode pipelined` runs it: the outputs'
    /// graph and the baseline of the scaling efficiency.
    pub whole: Pipelined<'db>,
    /// Per share size, a replica's programs.
    per_share: BTreeMap<u64, Pipelined<'db>>,
    pub shares: Vec<Range<u64>>,
    pub tree: Tree,
    pub sources: SourceTexts,
}

impl Replicas<'_> {
    pub(super) fn run_of(&self, s: usize) -> &Pipelined<'_> {
        let share = &self.shares[s];
        &self.per_share[&(share.end - share.start)]
    }
}

/// A step's allreduce, on the cluster's clock (the step starts at 0).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Allreduce {
    /// The gradients' bytes (every parameter's, from one replica).
    pub bytes: u64,
    /// The slowest replica's forward and backward programs, and its drains.
    pub forward_backward: u64,
    pub drain: u64,
    /// When the last replica's last gradient left its fabric (its drains' end).
    pub ready: u64,
    /// When the last sum reached the store.
    pub summed: u64,
    /// The slowest fill program, the sums down the tree and into the fabric and the update
    /// (the fabric's switch to it included).
    pub update: u64,
}

/// Builds the replicas of a cluster of `systems` systems (at least 2) for `request`.
pub(crate) fn prepare_replicas<'db>(
    loaded: &'db Loaded,
    request: &TrainRequest<'_>,
    systems: u32,
) -> Result<Replicas<'db>, BuildError> {
    let whole = prepare(loaded, request)?;
    let batch = whole.data.settings.batch;
    super::train::check_systems(systems, batch)?;
    let shares = super::split::shares(batch, systems);
    let mut per_share = BTreeMap::new();
    for share in &shares {
        let samples = share.end - share.start;
        if let std::collections::btree_map::Entry::Vacant(entry) = per_share.entry(samples) {
            let replica = ReplicaShare {
                samples,
                batch,
                systems,
            };
            entry.insert(prepare_share(loaded, request, Some(replica))?);
        }
    }
    let tree = Tree::new(systems, whole.target.swarm.fan_out);
    Ok(Replicas {
        whole,
        per_share,
        shares,
        tree,
        sources: crate::source::source_texts(&loaded.db),
    })
}

/// The replicas' gradients, as their drains brought them out of their fabrics, summed through
/// the tree into the store — each replica's from the cycle its drains ended: the sums and the
/// timing (the fill's left to the caller).
pub(super) fn allreduce(reps: &Replicas<'_>, passes: &[Pass]) -> (Vec<Vec<f32>>, Allreduce) {
    let target = &reps.whole.target;
    let params = passes.first().map_or(0, |p| p.gradients.len());
    let values: Vec<Vec<Vec<f32>>> = (0..params)
        .map(|p| passes.iter().map(|s| s.gradients[p].clone()).collect())
        .collect();
    let ready: Vec<u64> = passes.iter().map(|p| p.record.cycles + p.drain).collect();
    let streams: Vec<Stream<'_>> = values
        .iter()
        .map(|values| Stream {
            values,
            ready: &ready,
        })
        .collect();
    let reduced = reduce_all(&reps.tree, &target.swarm, &streams);
    let summed = reduced.iter().map(|r| r.cycles()).max().unwrap_or(0);
    let bytes: u64 = reduced.iter().map(|r| 4 * r.values.len() as u64).sum();
    let most = |f: fn(&Pass) -> u64| passes.iter().map(f).max().unwrap_or(0);
    let allreduce = Allreduce {
        bytes,
        forward_backward: most(|p| p.record.cycles),
        drain: most(|p| p.drain),
        ready: ready.iter().copied().max().unwrap_or(0),
        summed,
        update: 0,
    };
    (reduced.into_iter().map(|r| r.values).collect(), allreduce)
}

/// `wsel train --systems N` when it trains pipelined (`--mode pipelined`, else the `train`
/// item's mode): the replicas, trained and reported as `wsel train` does; `None` when it
/// trains by weight streaming (or the file does not load: that path reports it).
pub(crate) fn run_if_pipelined(args: &TrainArgs, comm: &dyn Comm) -> Option<Status> {
    let loaded = load_and_check(&args.file).ok()?;
    let request = crate::commands::train::request(args).ok()?;
    let item = wsel_lower::lower_train_config(&loaded.db, loaded.file);
    if !crate::train_settings::pipelined(&request.settings, item.as_ref()) {
        return None;
    }
    let systems = systems_asked(&loaded, &request);
    let sources = crate::source::source_texts(&loaded.db);
    let color = args.color.use_color_on_stderr();
    let result = if systems == 1 && comm.size() == 1 {
        // One system is the ordinary pipelined training.
        crate::commands::train::train(&loaded, args)
    } else {
        match train_replicas(args, &loaded, &request, comm, systems) {
            Ok(status) => return Some(status),
            Err(error) => Err(error),
        }
    };
    Some(match result {
        Ok(()) => Status::Success,
        Err(_) if comm.rank() > 0 => Status::Failure,
        Err(error) => report_build_failure(Some(&sources), error, color),
    })
}

/// The systems `request` asks for: `--systems`, else the `run` item's `systems`, else 1.
pub(crate) fn systems_asked(loaded: &Loaded, request: &TrainRequest<'_>) -> u32 {
    let config = wsel_lower::lower_run_config(&loaded.db, loaded.file);
    (request.settings.systems)
        .or(config.and_then(|c| c.systems))
        .unwrap_or(1)
}

/// [`crate::train_session::train`] of pipelined replicas, all in this process: the trained
/// weights (replica 0's) and the report of one replica's programs with the cluster's steps.
pub(crate) fn train(
    loaded: &Loaded,
    request: &TrainRequest<'_>,
    options: &SimOptions,
) -> Result<TrainOutcome, BuildError> {
    let reps = prepare_replicas(loaded, request, systems_asked(loaded, request))?;
    let steps = super::pipelined_steps::run_steps(&reps, &Local, options, &mut |_, _| {});
    match steps {
        Ok(Some((trained, _))) => {
            let report = crate::train_pipelined::report(request.file, &reps.whole, &trained);
            let warnings = reps.whole.data.warnings.clone();
            Ok(TrainOutcome::new(
                &reps.whole.data.graph,
                trained,
                report,
                warnings,
            ))
        }
        Err(Some((_, failure))) => Err(failure.into_error()),
        Ok(None) | Err(None) => Err(BuildError::Message(
            "the replicas' steps ended without a result".into(),
        )),
    }
}

/// The replicas of `systems` systems trained by every process of `comm` (a build error is
/// every process's alike; process 0 reports it), the table, outputs and summary written by
/// process 0.
fn train_replicas(
    args: &TrainArgs,
    loaded: &Loaded,
    request: &TrainRequest<'_>,
    comm: &dyn Comm,
    systems: u32,
) -> Result<Status, BuildError> {
    let reps = prepare_replicas(loaded, request, systems)?;
    let options = crate::session::sim_options(args.threads, args.max_cycles);
    let root = comm.rank() == 0;
    let table = |steps: &mut dyn FnMut(&StepRecord)| {
        super::pipelined_steps::run_steps(&reps, comm, &options, &mut |r, _| steps(r))
    };
    let steps = if root {
        crate::commands::train::pipelined_steps(args, &reps.whole, |on_step| Ok(table(on_step)))?
    } else {
        table(&mut |_| {})
    };
    match steps {
        Ok(Some((trained, figures))) => {
            let lines = summary(&reps, &trained, &figures, &options)?;
            crate::commands::train::finish_pipelined(args, &reps.whole, &trained, &lines)?;
            Ok(Status::Success)
        }
        Ok(None) => Ok(Status::Success),
        Err(Some((rank, failure))) => Ok(failure.print(rank, comm.size())),
        Err(None) => Ok(Status::Failure),
    }
}

/// The cluster's lines of the summary: the shares, the allreduce of a step (every step's
/// timing is the same: it does not depend on values) and the scaling against one system on
/// the whole batch, whose first step is simulated here.
pub(crate) fn summary(
    reps: &Replicas<'_>,
    trained: &Trained,
    figures: &[Allreduce],
    options: &SimOptions,
) -> Result<String, BuildError> {
    let (Some(step), Some(a)) = (trained.steps.first(), figures.first()) else {
        return Ok(String::new());
    };
    let whole = &reps.whole;
    let target = &whole.target;
    let rows = whole.data.settings.batch_order(whole.targets.shape[0]);
    let first = rows.first().map_or(&[][..], Vec::as_slice);
    let base = forward_backward(whole, &mut Carry::new(), first, 0, options)?.cycles;
    let n = reps.shares.len();
    let group = wsel_map::report::group;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  cluster: {n} replicas ({} samples each), each with its weights and optimizer state in its own SRAM; gradients streamed out of each fabric, summed through the tree (fan-out {}, {} B/cycle links) and streamed back in before the update",
        super::split::share_sizes(&reps.shares),
        reps.tree.fan_out,
        target.swarm.link_bytes_per_cycle,
    );
    let (first, rate) = super::feed_target(target, &reps.tree).1.unwrap_or((
        u64::from(target.weight_store.latency_cycles),
        target.weight_store.bandwidth_bytes_per_cycle,
    ));
    let _ = writeln!(
        out,
        "  a step: forward and backward {} cycles · {} B of gradients out of each replica's fabric in {} cycles, the last leaving at {} · summed at the store at cycle {} (+{}) · down the tree (first byte after {} cycles, {} B/cycle), into the fabric and the update {} · step {} cycles",
        group(a.forward_backward),
        group(a.bytes),
        group(a.drain),
        group(a.ready),
        group(a.summed),
        group(a.summed - a.ready),
        group(first),
        rate,
        group(a.update),
        group(step.cycles),
    );
    let speedup = base as f64 / step.cycles.max(1) as f64;
    let rate = |cycles: u64| {
        crate::train_outputs::samples_per_second(target, whole.data.settings.batch, cycles)
    };
    let _ = writeln!(
        out,
        "  one system on the whole batch: {} cycles a step · {:.0} training samples/s · speed-up {speedup:.2} on {n} systems · scaling efficiency {:.1}%",
        group(base),
        rate(base),
        100.0 * speedup / n as f64
    );
    Ok(out)
}

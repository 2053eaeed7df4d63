//! `wsel run --systems N`: a cluster of N simulated systems in data parallel (DESIGN.md §5,
//! `docs/running.md`, "The cluster").
//!
//! Every system is a whole fabric running the same program on its share of the batch
//! (`split::shares`: consecutive blocks, the first `batch mod N` one sample longer). In
//! weight streaming the store's weights reach every system through the broadcast/reduce
//! fabric (`wsel_swarm`): a system's weight store is the tree's feed — its first byte after
//! the store's latency and the tree's links and switches, then `min(store, link)` bytes per
//! cycle, exact for the tree's event model — and every system starts a phase when the
//! slowest has finished the one before (`gate`), since one broadcast serves them all. In
//! pipelined mode the systems are independent replicas.
//!
//! The systems are spread over the processes of an MPI job (`comm`; `mpirun -np K`), each
//! process simulating its block of systems on threads of its own; process 0 gathers the
//! systems' results and figures and writes the result, the report and the table. Nothing
//! depends on how the systems are spread: the same bytes come out for any K. A failure on
//! any process reaches process 0, which prints it once; every process then exits.
//!
//! Training (`wsel train --systems N`, `train`) runs the same systems step after step; their
//! gradients are summed through the tree on the way back to the store (`wsel_swarm`).

pub mod comm;
pub mod gate;
pub(crate) mod pipelined;
mod pipelined_steps;
pub(crate) mod replica;
pub mod report;
pub mod split;
pub mod summary;
pub mod train;
mod train_report;
mod train_steps;

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::PathBuf;

use wsel_ir::graph::Mode;
use wsel_sim::SimOptions;
use wsel_target::Target;

use crate::built::{BuildRequest, Built};
use crate::cli::RunArgs;
use crate::inputs::read_params;
use crate::pipeline::BuildError;
use crate::run_errors::{E0809, E0810};
use crate::session::{ReportFacts, System};
use crate::status::Status;
use crate::tensor::{Tensor, read_labels};

use comm::Comm;
use summary::{Failure, RankPayload, SystemSummary};

/// Whether `wsel run` runs as a cluster: `--systems` given, or started by an MPI launcher
/// with several processes (which then simulate one system unless told more).
pub fn wanted(args: &RunArgs) -> bool {
    args.systems.is_some() || comm::launched_size().is_some_and(|size| size > 1)
}

/// `wsel run` for a cluster.
pub fn run(args: &RunArgs) -> Status {
    let comm = match open() {
        Ok(comm) => comm,
        Err(status) => return status,
    };
    let comm = &*comm;
    let prepared = prepare(args, comm);
    if let Some(status) = agree(comm, prepared.as_ref().err()) {
        return status;
    }
    let Ok(prepared) = prepared else {
        return Status::Failure;
    };
    let payload = simulate_mine(args, comm, &prepared);
    let bytes = postcard::to_allocvec(&payload).unwrap_or_default();
    let Some(gathered) = comm.gather(&bytes) else {
        return if payload.ok {
            Status::Success
        } else {
            Status::Failure
        };
    };
    let payloads: Vec<RankPayload> = gathered
        .iter()
        .map(|b| postcard::from_bytes(b).unwrap_or_else(|_| RankPayload::unreadable()))
        .collect();
    report::finish(args, &prepared, payloads, comm.size())
}

/// The processes of this cluster run, or the status to exit with (E0810, printed).
fn open() -> Result<Box<dyn Comm>, Status> {
    comm::open().map_err(|message| {
        eprintln!("error[{E0810}]: {message}");
        Status::Failure
    })
}

/// What every process knows before simulating: the program built for the whole batch (the
/// one-system run the scaling is measured against), its parameters and labels, the split,
/// and the programs built for the shares of this process's systems.
pub struct Prepared {
    pub whole: Built,
    pub params: Vec<Tensor>,
    pub labels: Option<(Vec<i64>, PathBuf)>,
    pub systems: u32,
    pub shares: Vec<Range<u64>>,
    /// Built for each share size this process's systems need, with the system target.
    pub per_share: BTreeMap<u64, (Built, Target)>,
    /// The tree and the feed its systems get (`None` with one system, or pipelined).
    pub tree: wsel_swarm::Tree,
    pub feed: Option<(u64, u32)>,
    /// When this process started the run (the report's wall time).
    pub started: std::time::Instant,
}

fn prepare(args: &RunArgs, comm: &dyn Comm) -> Result<Prepared, Failure> {
    let started = std::time::Instant::now();
    let fail =
        |sources: Option<&crate::render::SourceTexts>, error| Failure::new(None, sources, error);
    let setting = |message: String| {
        fail(
            None,
            BuildError::Run {
                code: E0809,
                message,
            },
        )
    };
    if args.systems == Some(0) {
        return Err(setting(
            "`--systems 0`: a cluster needs at least one system".into(),
        ));
    }
    if let Some(flag) = unsupported_flag(args) {
        return Err(setting(format!(
            "`{flag}` does not work with `--systems` yet: run one system to trace or draw it"
        )));
    }
    let inputs = crate::inputs::parse_input_flags(&args.inputs).map_err(|e| fail(None, e))?;
    let request = BuildRequest {
        inputs: &inputs,
        read_inputs: true,
        hang_checks: !args.no_hang_checks,
        ..BuildRequest::new(&args.model, args.backend)
    };
    let whole = crate::built::fresh(&request).map_err(|f| fail(f.sources.as_ref(), f.error))?;
    let sources = whole.sources.clone();
    let in_sources = |e| fail(Some(&sources), e);
    // `--systems`, else the `run` item's `systems`.
    let systems = args
        .systems
        .or(whole.config.as_ref().and_then(|c| c.systems))
        .unwrap_or(1);
    if u64::from(systems) > whole.batch {
        return Err(setting(format!(
            "{systems} systems but a batch of {} samples: every system needs at least one",
            whole.batch
        )));
    }
    let params = read_params(&whole.graph, &[]).map_err(in_sources)?;
    let labels = match args
        .labels
        .clone()
        .or(whole.config.as_ref().and_then(|c| c.labels.clone()))
    {
        Some(path) => Some((
            read_labels(&path, whole.batch).map_err(|e| {
                in_sources(BuildError::Run {
                    code: e.code(),
                    message: e.to_string(),
                })
            })?,
            path,
        )),
        None => None,
    };
    let shares = split::shares(whole.batch, systems);
    let mine = split::systems_of_rank(systems, comm.size(), comm.rank());
    let tree = wsel_swarm::Tree::new(systems, whole.target.swarm.fan_out);
    let mut per_share = BTreeMap::new();
    let mut feed = None;
    for s in mine {
        let share = &shares[s as usize];
        let samples = share.end - share.start;
        if per_share.contains_key(&samples) {
            continue;
        }
        let request = BuildRequest {
            inputs: &[],
            batch: Some(samples),
            read_inputs: false,
            hang_checks: !args.no_hang_checks,
            ..BuildRequest::new(&args.model, args.backend)
        };
        let built = crate::built::fresh(&request).map_err(|f| fail(f.sources.as_ref(), f.error))?;
        let (target, system_feed) = system_target(&built, &tree);
        feed = feed.or(system_feed);
        per_share.insert(samples, (built, target));
    }
    Ok(Prepared {
        whole,
        params,
        labels,
        systems,
        shares,
        per_share,
        tree,
        feed,
        started,
    })
}

/// A flag a cluster run does not support yet.
fn unsupported_flag(args: &RunArgs) -> Option<&'static str> {
    [
        (args.trace.is_some(), "--trace"),
        (args.map.is_some(), "--map"),
        (args.timeline.is_some(), "--timeline"),
        (args.report_detail, "--report-detail"),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag))
}

/// The target one system of the cluster runs on: in weight streaming with more than one
/// system, its weight store is the broadcast fabric's feed ([`feed_target`]).
fn system_target(built: &Built, tree: &wsel_swarm::Tree) -> (Target, Option<(u64, u32)>) {
    if built.decision.mode != Mode::Streaming {
        return (built.target.clone(), None);
    }
    feed_target(&built.target, tree)
}

/// `target` as one system of `tree` sees it in weight streaming: with more than one system,
/// its weight store is the tree's feed (first byte, rate), exact for the tree's event model
/// (`wsel_swarm::Feed::closed_form`); the feed, or `None` with one system.
pub fn feed_target(target: &Target, tree: &wsel_swarm::Tree) -> (Target, Option<(u64, u32)>) {
    let mut target = target.clone();
    if tree.systems < 2 {
        return (target, None);
    }
    let store = target.weight_store;
    let (first, rate) = wsel_swarm::Feed::closed_form(
        tree,
        &target.swarm,
        store.bandwidth_bytes_per_cycle,
        store.latency_cycles,
    );
    target.weight_store.bandwidth_bytes_per_cycle = rate;
    target.weight_store.latency_cycles = u32::try_from(first).unwrap_or(u32::MAX);
    (target, Some((first, rate)))
}

/// Whether any process failed; if so process 0 prints the first failure (by rank) and every
/// process gets the status to exit with. Every process calls it.
fn agree(comm: &dyn Comm, local: Option<&Failure>) -> Option<Status> {
    let failed = comm.max_all(&[u64::from(local.is_some())]);
    if failed.first().copied().unwrap_or(0) == 0 {
        return None;
    }
    let bytes = local
        .map(|f| postcard::to_allocvec(f).unwrap_or_default())
        .unwrap_or_default();
    let Some(all) = comm.gather(&bytes) else {
        return Some(Status::Failure);
    };
    let first = all
        .iter()
        .enumerate()
        .find_map(|(rank, b)| Some((rank, postcard::from_bytes::<Failure>(b).ok()?)));
    match first {
        Some((rank, failure)) => Some(failure.print(rank, comm.size())),
        None => Some(Status::Failure),
    }
}

/// Simulates this process's systems (and the one-system run, on the last process) on
/// threads, with the phase barrier on this thread; what they gave, for process 0.
fn simulate_mine(args: &RunArgs, comm: &dyn Comm, prepared: &Prepared) -> RankPayload {
    let mine = split::systems_of_rank(prepared.systems, comm.size(), comm.rank());
    let baseline = prepared.systems > 1 && comm.rank() == split::baseline_rank(comm.size());
    // The one-system run is not part of the barrier: it runs alone, beside the systems.
    let (barrier, participants) = gate::barrier(mine.len());
    let options = crate::session::sim_options(args.threads, args.max_cycles);
    let mut participants = participants.into_iter();
    let (ok, systems, base) = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for s in mine.clone() {
            let Some(participant) = participants.next() else {
                break;
            };
            let options = &options;
            handles.push(scope.spawn(move || run_system(args, prepared, s, participant, options)));
        }
        let base = baseline.then(|| {
            let options = &options;
            scope.spawn(move || run_baseline(args, prepared, options))
        });
        let ok = gate::coordinate(barrier, comm);
        let systems: Vec<_> = handles
            .into_iter()
            .zip(mine.clone())
            .map(|(h, s)| h.join().unwrap_or_else(|_| Err(Failure::panicked(s))))
            .collect();
        let base = base.map(|h| {
            h.join()
                .unwrap_or_else(|_| Err(Failure::panicked(u32::MAX)))
        });
        (ok, systems, base)
    });
    RankPayload {
        ok,
        systems,
        baseline: base,
    }
}

/// Simulates system `s` on its share, waiting at the barrier between phases.
fn run_system(
    args: &RunArgs,
    prepared: &Prepared,
    s: u32,
    mut participant: gate::Participant,
    options: &SimOptions,
) -> Result<SystemSummary, Failure> {
    let share = prepared.shares[s as usize].clone();
    let samples = share.end - share.start;
    let Some((built, target)) = prepared.per_share.get(&samples) else {
        participant.finish(false);
        return Err(Failure::message(
            s,
            "no program was built for this system's share",
        ));
    };
    let inputs: Vec<Tensor> = prepared
        .whole
        .inputs
        .iter()
        .map(|t| samples_of(t, &share))
        .collect();
    let system = System {
        target,
        inputs: &inputs,
    };
    let mut waited = 0u64;
    let simulation = crate::session::simulate_system(
        built,
        system,
        &prepared.params,
        options,
        None,
        &mut |cycles| {
            let slowest = participant.step(cycles)?;
            waited += slowest - cycles;
            Some(slowest)
        },
    );
    let simulation = match simulation {
        Ok(simulation) => simulation,
        Err(error) => {
            let aborted = matches!(&error, BuildError::Message(m) if m == ABORTED);
            participant.finish(false);
            return Err(Failure::system(s, &built.sources, error, aborted));
        }
    };
    participant.finish(true);
    let facts = ReportFacts {
        file: &args.model.file,
        output: None,
        accuracy: None,
    };
    let (report, simulation_report) = simulation.report(built, facts);
    Ok(SystemSummary::new(
        s,
        share.start,
        &report,
        simulation_report,
        waited,
        &simulation.result,
    ))
}

/// The message a system that stopped because another failed ends with.
const ABORTED: &str = "another system of the cluster failed";

/// The one-system run of the whole batch, for the scaling efficiency.
fn run_baseline(
    args: &RunArgs,
    prepared: &Prepared,
    options: &SimOptions,
) -> Result<SystemSummary, Failure> {
    let built = &prepared.whole;
    let result = crate::session::simulate(built, &prepared.params, options, None);
    let simulation = result.map_err(|e| Failure::system(u32::MAX, &built.sources, e, false))?;
    let facts = ReportFacts {
        file: &args.model.file,
        output: None,
        accuracy: None,
    };
    let (report, simulation_report) = simulation.report(built, facts);
    Ok(SystemSummary::new(
        u32::MAX,
        0,
        &report,
        simulation_report,
        0,
        &simulation.result,
    ))
}

/// The samples `range` of a batched tensor.
fn samples_of(tensor: &Tensor, range: &Range<u64>) -> Tensor {
    let len = tensor.sample_len().max(1);
    let (a, b) = (range.start as usize * len, range.end as usize * len);
    let mut shape = tensor.shape.clone();
    if let Some(first) = shape.first_mut() {
        *first = range.end - range.start;
    }
    Tensor {
        elem: tensor.elem,
        shape,
        words: tensor.words[a..b].to_vec(),
    }
}

//! `wsel train --systems N`: data-parallel training on a cluster of N systems (DESIGN.md §5,
//! `docs/running.md`, "Training on a cluster").
//!
//! Every step's global batch is cut into N shares, in order (`split::shares`: the first
//! `batch mod N` one sample longer). System `s` runs the training step on share `s` with the
//! store's current weights, which reach it through the broadcast tree (its weight store is
//! the tree's feed, as for `wsel run --systems`), every system starting each phase with the
//! slowest (`gate`). A system's loss layer takes the mean over the whole batch (its scalar
//! `over`), so its loss and gradients are its share's part of the batch's, whatever the
//! share's size. Each system's gradients leave its fabric as their phases end; the tree sums
//! them on the way up (`wsel_swarm::reduce_all`: every gradient in the order the phases sent
//! it, on the same links, in the tree's fixed order) into the batch's gradient, and the store
//! applies the optimizer. The step ends when
//! the fabric is done and the last sum has reached the store, plus the store's update; the
//! next step's forward pass streams the weights that update wrote. One system is the
//! ordinary `wsel train`, cycle for cycle.
//!
//! Across processes (`mpirun -np K`) each process simulates its block of systems; after a
//! step their losses and gradients go to process 0 (a gather, put in system order), which
//! sums them, applies the optimizer and broadcasts the new weights to every process, or the
//! word to stop. Process 0 alone prints and writes; the bytes are the same for any K.

use std::collections::BTreeMap;
use std::ops::Range;

use wsel_sim::SimOptions;
use wsel_swarm::Tree;

use super::comm::{self, Comm};
use super::summary::Failure;
use super::train_steps::{StepFigures, StepPayload, combine, simulate_mine};
use crate::cli::TrainArgs;
use crate::commands::train::{finish, request};
use crate::pipeline::{BuildError, Loaded, load_and_check};
use crate::render::SourceTexts;
use crate::run_errors::E0811;
use crate::status::Status;
use crate::train_outputs::{table_header, table_line};
use crate::train_session::{Program, Setup, TrainRequest, Trained, program_for, setup};
use crate::training::{Store, f32_tensor};

/// Whether `wsel train` trains on a cluster: `--systems` given, or started by an MPI launcher
/// with several processes.
pub fn wanted(args: &TrainArgs) -> bool {
    args.systems.is_some() || comm::launched_size().is_some_and(|size| size > 1)
}

/// What every process knows before the first step.
pub(crate) struct Prepared {
    pub setup: Setup,
    pub sources: SourceTexts,
    pub systems: u32,
    /// Each system's samples of a step's batch (positions in it).
    pub shares: Vec<Range<u64>>,
    /// The training graph built for each share size, on the system's target (the tree's feed
    /// as its weight store); empty with one system, which runs `setup.program`.
    per_share: BTreeMap<u64, Program>,
    pub tree: Tree,
    pub feed: Option<(u64, u32)>,
    pub options: SimOptions,
}

impl Prepared {
    /// What system `s` runs.
    pub fn program_of(&self, s: u32) -> &Program {
        let share = &self.shares[s as usize];
        self.per_share
            .get(&(share.end - share.start))
            .unwrap_or(&self.setup.program)
    }

    /// What the first system runs (one of the largest shares): the program the outputs and
    /// the report describe.
    pub fn system_program(&self) -> &Program {
        self.program_of(0)
    }
}

/// `wsel train` on a cluster.
pub fn run(args: &TrainArgs) -> Status {
    let comm = match super::open() {
        Ok(comm) => comm,
        Err(status) => return status,
    };
    let comm = &*comm;
    if let Some(status) = super::pipelined::run_if_pipelined(args, comm) {
        return status;
    }
    let prepared = prepare(args);
    if let Some(status) = super::agree(comm, prepared.as_ref().err()) {
        return status;
    }
    let Ok(prepared) = prepared else {
        return Status::Failure;
    };
    match train(args.quiet, comm, &prepared) {
        Ok(None) => Status::Success,
        Ok(Some((trained, first))) => {
            let program = prepared.system_program();
            if let Err(error) = finish(args, &prepared.setup, program, &trained) {
                return Failure::new(None, Some(&prepared.sources), error).print(0, 1);
            }
            let lines = super::train_report::summary(&prepared, &trained.steps, &first);
            crate::stdout::print_then(&lines, Status::Success)
        }
        Err(Some((rank, failure))) => failure.print(rank, comm.size()),
        Err(None) => Status::Failure,
    }
}

fn prepare(args: &TrainArgs) -> Result<Prepared, Failure> {
    let loaded = load_and_check(&args.file).map_err(|f| {
        let sources = f.db.as_ref().map(crate::source::source_texts);
        Failure::new(None, sources.as_ref(), f.error)
    })?;
    let sources = crate::source::source_texts(&loaded.db);
    let prepared = request(args).and_then(|request| prepare_request(&loaded, &request));
    let prepared = prepared.map_err(|error| Failure::new(None, Some(&sources), error))?;
    for warning in &prepared.setup.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(prepared)
}

/// What every process knows before the first step of training `request`'s program, loaded
/// as `loaded`, on the cluster its settings (else the `run` item) ask for.
pub(crate) fn prepare_request(
    loaded: &Loaded,
    request: &TrainRequest<'_>,
) -> Result<Prepared, BuildError> {
    let sources = crate::source::source_texts(&loaded.db);
    let setup = setup(loaded, request)?;
    let overrides = &request.settings;
    // `--systems`, else the `run` item's `systems`.
    let config = wsel_lower::lower_run_config(&loaded.db, loaded.file);
    let systems = overrides
        .systems
        .or(config.and_then(|c| c.systems))
        .unwrap_or(1);
    let batch = setup.settings.batch;
    let micro = setup.settings.micro_batch;
    if micro != batch {
        return Err(BuildError::Run {
            code: E0811,
            message: format!(
                "a step of {batch} samples runs in micro-batches of {micro} here, and training on a cluster runs each system's share in one pass: use a batch whose share fits the fabric"
            ),
        });
    }
    check_systems(systems, batch)?;
    let shares = super::split::shares(batch, systems);
    let tree = Tree::new(systems, setup.program.target.swarm.fan_out);
    let mut per_share = BTreeMap::new();
    let mut feed = None;
    for share in shares.iter().filter(|_| systems > 1) {
        let samples = share.end - share.start;
        if per_share.contains_key(&samples) {
            continue;
        }
        let mut program = program_for(loaded, overrides, samples, batch)?;
        let (target, system_feed) = super::feed_target(&program.target, &tree);
        program.target = target;
        feed = feed.or(system_feed);
        per_share.insert(samples, program);
    }
    Ok(Prepared {
        options: crate::session::sim_options(overrides.threads, overrides.max_cycles),
        setup,
        sources,
        systems,
        shares,
        per_share,
        tree,
        feed,
    })
}

/// E0811 unless every one of `systems` systems (at least one) gets a sample of a batch of
/// `batch`.
pub(crate) fn check_systems(systems: u32, batch: u64) -> Result<(), BuildError> {
    if systems != 0 && u64::from(systems) <= batch {
        return Ok(());
    }
    let message = if systems == 0 {
        "`--systems 0`: a cluster needs at least one system".to_string()
    } else {
        format!(
            "a batch of {batch} samples leaves some of {systems} systems without a sample: use at most {batch} systems or a larger batch"
        )
    };
    Err(BuildError::Run {
        code: E0811,
        message,
    })
}

/// The first step's figures, kept for the summary.
type Finished = (Trained, StepFigures);
/// Why the steps stopped: the failure process 0 prints and the process it came from; `None`
/// at the other processes.
type Stopped = Option<(usize, Failure)>;

/// Every step, on every process: `Ok(Some(..))` at process 0, `Ok(None)` at the others.
pub(crate) fn train(
    quiet: bool,
    comm: &dyn Comm,
    prepared: &Prepared,
) -> Result<Option<Finished>, Stopped> {
    let setup = &prepared.setup;
    let settings = &setup.settings;
    let shapes: Vec<Vec<u64>> = setup.params.iter().map(|p| p.shape.clone()).collect();
    let mut params: Vec<Vec<f32>> = setup.params.iter().map(|p| p.to_f32()).collect();
    let root = comm.rank() == 0;
    let mut store = root.then(|| Store::new(params.clone()));
    let order = settings.batch_order(setup.targets.shape[0]);
    let baseline_rank = super::split::baseline_rank(comm.size());
    let started = std::time::Instant::now();
    let (mut steps, mut first) = (Vec::new(), None);
    if root && !quiet {
        print!("{}", table_header());
    }
    for (k, rows) in order.iter().enumerate() {
        let weights: Vec<_> = params
            .iter()
            .zip(&shapes)
            .map(|(w, shape)| f32_tensor(shape.clone(), w))
            .collect();
        let baseline = k == 0 && prepared.systems > 1 && comm.rank() == baseline_rank;
        let payload = simulate_mine(prepared, comm, rows, &weights, baseline);
        let gathered = comm.gather(&postcard::to_allocvec(&payload).unwrap_or_default());
        let mut failure = None;
        if let (Some(gathered), Some(store)) = (gathered, store.as_mut()) {
            let payloads = gathered
                .iter()
                .map(|b| postcard::from_bytes(b).unwrap_or_else(|_| unreadable()))
                .collect();
            match combine(prepared, store, payloads) {
                Ok((mut record, figures)) => {
                    record.step = k as u64 + 1;
                    if !quiet {
                        print!(
                            "{}",
                            table_line(&record, settings.batch, &setup.program.target)
                        );
                    }
                    steps.push(record);
                    first = first.or(Some(figures));
                }
                Err(stopped) => failure = Some(stopped),
            }
        }
        let next = match (&store, &failure) {
            (Some(store), None) => Some(store.params.clone()),
            _ => None,
        };
        let mut bytes = postcard::to_allocvec(&next).unwrap_or_default();
        comm.broadcast(&mut bytes);
        match postcard::from_bytes::<Option<Vec<Vec<f32>>>>(&bytes) {
            Ok(Some(next)) => params = next,
            _ => return Err(failure),
        }
    }
    let (Some(store), Some(first)) = (store, first) else {
        return Ok(None);
    };
    let trained = Trained {
        steps,
        store,
        wall: started.elapsed(),
    };
    Ok(Some((trained, first)))
}

/// What stands for a payload process 0 cannot decode.
fn unreadable() -> StepPayload {
    StepPayload {
        systems: vec![Err(Failure::message(
            0,
            "a process's step could not be read by process 0",
        ))],
        baseline: None,
    }
}

//! The front door: [`simulate`] validates a program against a target, runs it on as many
//! threads as pay for its size ([`SimOptions::threads_for`]) and returns an [`Outcome`]
//! (cycles, report, host outputs, final SRAM, optional trace) or a [`SimError`] (including
//! deadlocks and an exhausted cycle budget).

use crate::error::{DeadlockReport, QueuedWavelets, SimError, StuckSend, WaitingRecv};
use crate::fabric::NONE;
use crate::layout::build;
use crate::partition::Partition;
use crate::program::Program;
use crate::report::{Report, StreamTiming};
use crate::trace::{Trace, TraceOptions, Tracer};
use std::borrow::Cow;
use wsel_target::{Coord, Port, Target};

/// How to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimOptions {
    /// Worker threads at most (the fabric is split into that many partitions of interleaved
    /// row blocks balanced by work, `bands.rs`): one per [`PES_PER_THREAD`] PEs with a
    /// program, at least one, unless `exact_threads`. Results do not depend on it.
    pub threads: usize,
    /// Run on exactly `threads` threads, however small the program (determinism tests,
    /// benchmarks).
    pub exact_threads: bool,
    /// Stop with [`SimError::CycleBudget`] if anything is still happening at this cycle.
    pub max_cycles: Option<u64>,
    /// Stop with [`TaskFault::Livelock`](crate::TaskFault::Livelock) a PE that runs this many
    /// tasks in a row that only activate tasks while it has no receive or send open: nothing
    /// on the fabric can reach it, so only its own state decides whether it ever stops.
    pub livelock_tasks: Option<u64>,
    /// Record a Chrome/Perfetto trace: what, named how, written where.
    pub trace: Option<TraceOptions>,
    /// Simulate uncontended streams as one event where that is exact (results are identical
    /// either way; off = every wavelet hop by hop). Not used while tracing.
    pub express_streams: bool,
    /// Where to publish how far the run has got (for a progress display), if anywhere.
    pub progress: Option<crate::Progress>,
}

impl Default for SimOptions {
    fn default() -> SimOptions {
        SimOptions {
            threads: 1,
            exact_threads: false,
            max_cycles: None,
            livelock_tasks: None,
            trace: None,
            express_streams: true,
            progress: None,
        }
    }
}

/// PEs with a program per worker thread: below it a second thread costs CPU time and gains no
/// wall time. Measured on 2 quiet cores (BENCHMARKS.md, "A thread count by job size"): a
/// streamed phase of 256 PEs took 1.8 times the CPU on 2 threads and no less wall time; heat
/// with 4,096 to 16,384 PEs 1.0–1.14 times the CPU and 0.6–0.9 times the wall time.
pub const PES_PER_THREAD: usize = 4_096;

impl SimOptions {
    /// The worker threads a program with `pes` PEs running code is simulated on: `threads`
    /// if `exact_threads`, else one per [`PES_PER_THREAD`] of them, at most `threads`, at
    /// least one.
    pub fn threads_for(&self, pes: usize) -> usize {
        let most = self.threads.max(1);
        if self.exact_threads {
            most
        } else {
            most.min(pes / PES_PER_THREAD).max(1)
        }
    }
}

/// The final SRAM of one PE.
#[derive(Clone, Debug)]
pub(crate) struct FinalSram {
    pub(crate) at: Coord,
    /// Empty if the PE never used its SRAM.
    pub(crate) bytes: Vec<u8>,
    pub(crate) size: u32,
    pub(crate) init: Vec<u8>,
}

/// A finished run.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Cycles until the fabric was quiet.
    pub cycles: u64,
    /// Activity and traffic.
    pub report: Report,
    /// Wavelets collected by each of `Program::outputs`, in arrival order.
    pub outputs: Vec<Vec<u32>>,
    /// When each of `Program::inputs` entered the fabric (same order).
    pub input_timing: Vec<StreamTiming>,
    /// When each of `Program::outputs` left the fabric (same order).
    pub output_timing: Vec<StreamTiming>,
    /// The trace, if asked for.
    pub trace: Option<Trace>,
    /// How the engine ran (not part of the results: it depends on
    /// [`SimOptions::express_streams`] and on the number of threads).
    pub express: ExpressStats,
    /// How much each partition (worker thread) worked, in partition order (not part of the
    /// results either).
    pub loads: Vec<PartitionLoad>,
    pub(crate) srams: Vec<FinalSram>,
}

/// How much one partition of the fabric (one worker thread) worked in a run: what
/// `bands.rs` balances.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartitionLoad {
    /// Routers (coordinates with a PE program or a route) it holds.
    pub routers: usize,
    /// Router steps and PE wake-ups it simulated.
    pub router_steps: u64,
    pub pe_wakes: u64,
    /// Time its thread spent simulating its cycles (not waiting for the others).
    pub busy: std::time::Duration,
}

/// Uncontended streams the engine simulated as one event (see the crate README).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExpressStats {
    /// Express streams started.
    pub started: u64,
    /// Of those, the ones something came to compete with before their end, so that they
    /// were turned back into wavelets and finished hop by hop.
    pub interrupted: u64,
    /// Of those, the ones on chains that cross a boundary of the target (their closed forms
    /// add each crossing link's latency).
    pub crossing: u64,
}

impl Outcome {
    /// The final SRAM of the PE at `at` (`None` if no program ran there).
    pub fn sram(&self, at: Coord) -> Option<Cow<'_, [u8]>> {
        let i = self.srams.binary_search_by_key(&at, |s| s.at).ok()?;
        let s = &self.srams[i];
        if s.bytes.len() == s.size as usize {
            return Some(Cow::Borrowed(&s.bytes));
        }
        let mut bytes = Vec::new();
        crate::pe_exec::materialize(&mut bytes, s.size, &s.init);
        Some(Cow::Owned(bytes))
    }

    /// `n` words of the PE's final SRAM from byte `offset` (`None` if out of range or no
    /// program ran there).
    pub fn read_u32s(&self, at: Coord, offset: u32, n: u32) -> Option<Vec<u32>> {
        let sram = self.sram(at)?;
        let start = offset as usize;
        let bytes = sram.get(start..start + 4 * n as usize)?;
        Some(crate::task::words(bytes))
    }

    /// As [`Outcome::read_u32s`], as f32.
    pub fn read_f32s(&self, at: Coord, offset: u32, n: u32) -> Option<Vec<f32>> {
        self.read_u32s(at, offset, n)
            .map(|w| w.into_iter().map(f32::from_bits).collect())
    }
}

/// Run `program` on `target`.
pub fn simulate(
    target: &Target,
    program: &Program,
    options: &SimOptions,
) -> Result<Outcome, SimError> {
    let mut parts = build(target, program, options.threads_for(program.pes.len()))?;
    let limit = options.max_cycles.unwrap_or(u64::MAX);
    let tracer = match &options.trace {
        Some(trace) => Some(Tracer::start(trace, target, program, parts.len())?),
        None => None,
    };
    for p in &mut parts {
        if let Some(tracer) = &tracer {
            let routers = p.fab.info.iter().map(|info| info.at);
            p.out.trace = Some(tracer.recorder(p.setup.id, routers));
        }
        p.streams.on = options.express_streams && tracer.is_none();
        p.setup.max_cycles = limit;
        p.setup.livelock_tasks = options.livelock_tasks.unwrap_or(u64::MAX);
    }
    crate::parallel::run(&mut parts, limit, options.progress.as_ref());
    // The partitions' recorders are closed (or dropped, on failure) by then.
    let outcome = conclude(target, program, parts, limit);
    let trace = tracer.map(Tracer::finish).transpose();
    let mut outcome = outcome?;
    outcome.trace = trace?;
    Ok(outcome)
}

/// The run's outcome, or its first error, deadlock or exhausted budget.
fn conclude(
    target: &Target,
    program: &Program,
    mut parts: Vec<Partition<'_>>,
    limit: u64,
) -> Result<Outcome, SimError> {
    // The first error by (cycle, node), whatever the partitioning.
    if let Some((_, _, e)) = parts
        .iter_mut()
        .flat_map(|p| p.out.errors.drain(..))
        .min_by_key(|(t, node, _)| (*t, *node))
    {
        return Err(e);
    }
    if parts.iter().any(|p| p.next_time().is_some()) {
        let mut busy: Vec<Coord> = parts
            .iter()
            .flat_map(|p| {
                p.fab
                    .pes
                    .iter()
                    .filter(|pe| pe.has_work())
                    .map(|pe| p.fab.info[pe.node as usize].at)
            })
            .collect();
        busy.sort_unstable();
        busy.truncate(8);
        return Err(SimError::CycleBudget {
            max_cycles: limit,
            busy,
        });
    }
    let last = parts.iter().filter_map(|p| p.out.stats.last_event).max();
    let report = deadlock_report(&parts, last.unwrap_or(0));
    if !(report.waiting.is_empty() && report.stuck_sends.is_empty() && report.queued.is_empty()) {
        return Err(SimError::Deadlock(Box::new(report)));
    }
    let max_busy = parts
        .iter()
        .map(|p| p.out.stats.max_busy)
        .max()
        .unwrap_or(0);
    let cycles = last.map_or(0, |l| l + 1).max(max_busy);
    Ok(crate::finish::finish(target, program, parts, cycles))
}

fn deadlock_report(parts: &[Partition<'_>], cycle: u64) -> DeadlockReport {
    let mut r = DeadlockReport {
        cycle,
        ..DeadlockReport::default()
    };
    for p in parts {
        let fab = &p.fab;
        for (router, info) in fab.routers.iter().zip(&fab.info) {
            if router.pe != NONE {
                let pe = &fab.pes[router.pe as usize];
                for (color, missing, requested) in pe.posted_recvs(&fab.recvs) {
                    r.waiting.push(WaitingRecv {
                        at: info.at,
                        color,
                        missing,
                        requested,
                    });
                }
                for (color, remaining) in pe.unfinished_sends(&fab.sends) {
                    r.stuck_sends.push(StuckSend {
                        at: info.at,
                        color,
                        remaining,
                    });
                }
            }
            let queues =
                router.q_start as usize..(router.q_start + u32::from(router.q_len)) as usize;
            for (qi, q) in fab.queues[queues.clone()].iter().enumerate() {
                let count = u32::from(q.len) + u32::from(q.fly);
                if count > 0 {
                    let tx = crate::fabric::head_tx(q, (queues.start + qi) as u32, &fab.filters);
                    let blocked_on = Port::ALL
                        .into_iter()
                        .filter(|port| {
                            tx & (1 << port.index()) != 0 && q.sent & (1 << port.index()) == 0
                        })
                        .collect();
                    r.queued.push(QueuedWavelets {
                        at: info.at,
                        color: q.color(),
                        from: Port::from_index(q.rx() as usize).unwrap_or(Port::Ramp),
                        count,
                        blocked_on,
                    });
                }
            }
        }
    }
    // Partitions hold interleaved blocks of rows: the report lists PEs and routers row-major
    // (each one's entries in the order found).
    r.waiting.sort_by_key(|w| w.at);
    r.stuck_sends.sort_by_key(|s| s.at);
    r.queued.sort_by_key(|q| q.at);
    r
}

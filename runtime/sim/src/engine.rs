//! The front door: [`simulate`] validates a program against a target, runs it on the chosen
//! number of threads and returns an [`Outcome`] (cycles, report, host outputs, final SRAM,
//! optional trace) or a [`SimError`] (including deadlocks and an exhausted cycle budget).

use crate::error::{DeadlockReport, QueuedWavelets, SimError, StuckSend, WaitingRecv};
use crate::fabric::NONE;
use crate::layout::build;
use crate::partition::Partition;
use crate::program::Program;
use crate::report::{ColorTraffic, LinkTraffic, PeActivity, Report, StreamTiming};
use crate::trace::{Trace, TraceOptions, Tracer};
use std::borrow::Cow;
use wsel_target::{Coord, Dir, Port, Target};

/// How to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimOptions {
    /// Worker threads (the fabric is split into that many bands of rows). Results do not
    /// depend on it.
    pub threads: usize,
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
    /// Apply the wavelet arrivals and credits that router steps caused right before their
    /// router's next step (`Some(true)`: each router's memory is visited once per cycle,
    /// which pays off when the fabric's state does not fit in the caches), or in a pass of
    /// their own before the PEs wake (`Some(false)`: fewer instructions). `None` (the
    /// default) decides by size: deferred for partitions of at least
    /// [`SimOptions::DEFER_MIN_ROUTERS`] routers. Results are identical either way.
    pub defer_arrivals: Option<bool>,
    /// Count a credit returning inside a partition at once, without an event, when its
    /// channel holds at least twice the hop latency in credits (it can then neither run out
    /// nor need waking before the credit is due). Results are identical either way; off = an
    /// event for every credit.
    pub early_credits: bool,
    /// Where to publish how far the run has got (for a progress display), if anywhere.
    pub progress: Option<crate::Progress>,
}

impl SimOptions {
    /// Partitions with at least this many routers defer arrivals by default (see
    /// [`SimOptions::defer_arrivals`]).
    pub const DEFER_MIN_ROUTERS: usize = 16_384;
}

impl Default for SimOptions {
    fn default() -> SimOptions {
        SimOptions {
            threads: 1,
            max_cycles: None,
            livelock_tasks: None,
            trace: None,
            express_streams: true,
            defer_arrivals: None,
            early_credits: true,
            progress: None,
        }
    }
}

/// The final SRAM of one PE.
#[derive(Clone, Debug)]
struct FinalSram {
    at: Coord,
    /// Empty if the PE never used its SRAM.
    bytes: Vec<u8>,
    size: u32,
    init: Vec<u8>,
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
    srams: Vec<FinalSram>,
}

/// Uncontended streams the engine simulated as one event (see the crate README).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExpressStats {
    /// Express streams started.
    pub started: u64,
    /// Of those, the ones something came to compete with before their end, so that they
    /// were turned back into wavelets and finished hop by hop.
    pub interrupted: u64,
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
    let mut parts = build(target, program, options.threads.max(1))?;
    let limit = options.max_cycles.unwrap_or(u64::MAX);
    let tracer = match &options.trace {
        Some(trace) => Some(Tracer::start(trace, target, program, parts.len())?),
        None => None,
    };
    for p in &mut parts {
        if let Some(tracer) = &tracer {
            let nodes = p.info.iter().map(|info| info.at);
            p.trace = Some(tracer.recorder(p.id, p.node_base, nodes));
        }
        p.express_on = options.express_streams && tracer.is_none();
        p.defer = options
            .defer_arrivals
            .unwrap_or(p.nodes.len() >= SimOptions::DEFER_MIN_ROUTERS);
        p.early_credits = options.early_credits;
        p.max_cycles = limit;
        p.livelock_tasks = options.livelock_tasks.unwrap_or(u64::MAX);
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
        .flat_map(|p| p.errors.drain(..))
        .min_by_key(|(t, node, _)| (*t, *node))
    {
        return Err(e);
    }
    if parts.iter().any(|p| p.next_time().is_some()) {
        let busy: Vec<Coord> = parts
            .iter()
            .flat_map(|p| {
                p.pes
                    .iter()
                    .filter(|pe| has_work(pe))
                    .map(|pe| p.info[pe.node as usize].at)
            })
            .take(8)
            .collect();
        return Err(SimError::CycleBudget {
            max_cycles: limit,
            busy,
        });
    }
    let last = parts.iter().filter_map(|p| p.stats.last_event).max();
    let report = deadlock_report(&parts, last.unwrap_or(0));
    if !(report.waiting.is_empty() && report.stuck_sends.is_empty() && report.queued.is_empty()) {
        return Err(SimError::Deadlock(Box::new(report)));
    }
    let max_busy = parts.iter().map(|p| p.stats.max_busy).max().unwrap_or(0);
    let cycles = last.map_or(0, |l| l + 1).max(max_busy);
    Ok(finish(target, program, parts, cycles))
}

fn has_work(pe: &crate::fabric::Pe) -> bool {
    !pe.ready.is_empty()
        || !pe.pending.is_empty()
        || !pe.recvs.is_empty()
        || !pe.sends.is_empty()
        || pe.express != NONE
}

fn deadlock_report(parts: &[Partition<'_>], cycle: u64) -> DeadlockReport {
    let mut r = DeadlockReport {
        cycle,
        ..DeadlockReport::default()
    };
    for p in parts {
        for (node, info) in p.nodes.iter().zip(&p.info) {
            if node.pe != NONE {
                let pe = &p.pes[node.pe as usize];
                for (color, missing, requested) in pe.posted_recvs() {
                    r.waiting.push(WaitingRecv {
                        at: info.at,
                        color,
                        missing,
                        requested,
                    });
                }
                for s in &pe.sends {
                    r.stuck_sends.push(StuckSend {
                        at: info.at,
                        color: s.color,
                        remaining: s.data.len() as u32 - s.pos,
                    });
                }
            }
            for q in
                &p.queues[node.q_start as usize..(node.q_start + u32::from(node.q_len)) as usize]
            {
                if q.len > 0 {
                    let blocked_on = Port::ALL
                        .into_iter()
                        .filter(|port| {
                            q.tx & (1 << port.index()) != 0 && q.sent & (1 << port.index()) == 0
                        })
                        .collect();
                    r.queued.push(QueuedWavelets {
                        at: info.at,
                        color: q.color,
                        from: Port::from_index(q.rx as usize).unwrap_or(Port::Ramp),
                        count: u32::from(q.len),
                        blocked_on,
                    });
                }
            }
        }
    }
    r
}

fn finish(target: &Target, program: &Program, parts: Vec<Partition<'_>>, cycles: u64) -> Outcome {
    let express = ExpressStats {
        started: parts.iter().map(|p| p.stats.express_started).sum(),
        interrupted: parts.iter().map(|p| p.stats.express_interrupted).sum(),
    };
    let mut report = Report {
        target: target.name.clone(),
        cycles,
        seconds: target.seconds(cycles),
        wavelet_hops: 0,
        wavelets_delivered: 0,
        tasks_run: 0,
        pes: Vec::new(),
        links: Vec::new(),
        colors: Vec::new(),
    };
    let mut color_hops = vec![0u64; target.colors as usize];
    let mut color_delivered = vec![0u64; target.colors as usize];
    let mut outputs: Vec<Vec<u32>> = vec![Vec::new(); program.outputs.len()];
    let mut output_timing = vec![StreamTiming::default(); program.outputs.len()];
    let mut input_timing: Vec<StreamTiming> = program
        .inputs
        .iter()
        .map(|i| StreamTiming {
            requested: i.start,
            ..StreamTiming::default()
        })
        .collect();
    let mut srams = Vec::new();
    for mut p in parts {
        // Link traffic from the output channels: each belongs to one node, direction and
        // color (found through the queues that forward to it).
        let mut links = vec![[0u64; 4]; p.nodes.len()];
        let mut seen = vec![false; p.outch.len()];
        for q in &p.queues {
            for (d, &ch) in q.och.iter().enumerate() {
                if ch == NONE || std::mem::replace(&mut seen[ch as usize], true) {
                    continue;
                }
                let out = &p.outch[ch as usize];
                links[q.node as usize][d] += out.sent;
                if out.sink == NONE {
                    report.wavelet_hops += out.sent;
                    color_hops[q.color as usize] += out.sent;
                }
            }
        }
        for (c, d) in p.stats.color_delivered.iter().enumerate() {
            color_delivered[c] += d;
        }
        for (i, (node, info)) in p.nodes.iter().zip(&p.info).enumerate() {
            for d in Dir::ALL {
                let w = links[i][d.index()];
                if w > 0 {
                    report.links.push(LinkTraffic {
                        x: info.at.x,
                        y: info.at.y,
                        dir: d,
                        wavelets: w,
                    });
                }
            }
            if node.pe != NONE {
                let pe = &mut p.pes[node.pe as usize];
                report.tasks_run += pe.tasks_run;
                report.pes.push(PeActivity {
                    x: info.at.x,
                    y: info.at.y,
                    busy_cycles: pe.busy_cycles,
                    idle_cycles: cycles.saturating_sub(pe.busy_cycles),
                    tasks: pe.tasks_run,
                    first_task_start: Some(p.first_task[node.pe as usize])
                        .filter(|&t| t != u64::MAX),
                    last_task_end: (pe.tasks_run > 0).then_some(pe.busy_until),
                    waits: p.waits[node.pe as usize].report(),
                });
                let prog = &program.pes[pe.prog as usize];
                let init = if pe.sram.is_empty() {
                    prog.sram_init.clone()
                } else {
                    Vec::new()
                };
                srams.push(FinalSram {
                    at: info.at,
                    bytes: std::mem::take(&mut pe.sram),
                    size: prog.sram_bytes,
                    init,
                });
            }
        }
        for s in p.sinks.drain(..) {
            if let Some(timing) = output_timing.get_mut(s.output as usize) {
                *timing = StreamTiming {
                    wavelets: s.data.len() as u64,
                    requested: 0,
                    first: s.first,
                    last: s.last,
                    held_back: 0,
                };
            }
            if let Some(o) = outputs.get_mut(s.output as usize) {
                *o = s.data;
            }
        }
        for s in &p.sources {
            if let Some(timing) = input_timing.get_mut(s.input as usize) {
                *timing = StreamTiming {
                    wavelets: s.pos as u64,
                    requested: s.requested,
                    first: s.first,
                    last: s.last,
                    held_back: s.held_back,
                };
            }
        }
        if let Some(t) = p.trace.take() {
            t.close();
        }
    }
    report.wavelets_delivered = color_delivered.iter().sum();
    for (c, (&hops, &delivered)) in color_hops.iter().zip(&color_delivered).enumerate() {
        if hops > 0 || delivered > 0 {
            report.colors.push(ColorTraffic {
                color: c as u8,
                hops,
                delivered,
            });
        }
    }
    Outcome {
        cycles,
        report,
        outputs,
        input_timing,
        output_timing,
        trace: None,
        express,
        srams,
    }
}

//! The front door: [`simulate`] validates a program against a target, runs it on the chosen
//! number of threads and returns an [`Outcome`] (cycles, report, host outputs, final SRAM,
//! optional trace) or a [`SimError`] (including deadlocks and an exhausted cycle budget).

use crate::error::{DeadlockReport, QueuedWavelets, SimError, StuckSend, WaitingRecv};
use crate::fabric::NONE;
use crate::layout::build;
use crate::partition::Partition;
use crate::program::Program;
use crate::report::{ColorTraffic, LinkTraffic, PeActivity, Report, StreamTiming};
use crate::trace::{Trace, TraceBuf};
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
    /// Record a Chrome/Perfetto trace.
    pub trace: bool,
    /// Width, in cycles, of the windows link counters are summed over in the trace.
    pub trace_window: u64,
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
            max_cycles: None,
            trace: false,
            trace_window: 64,
            express_streams: true,
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
    for p in &mut parts {
        if options.trace {
            p.trace = Some(TraceBuf::new(options.trace_window));
        }
        p.streams.on = options.express_streams && !options.trace;
        p.max_cycles = limit;
    }
    crate::parallel::run(&mut parts, limit, options.progress.as_ref());

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
                p.fab
                    .pes
                    .iter()
                    .filter(|pe| pe.has_work())
                    .map(|pe| p.fab.info[pe.node as usize].at)
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
                        color: q.color,
                        from: Port::from_index(q.rx() as usize).unwrap_or(Port::Ramp),
                        count,
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
    let mut traces = Vec::new();
    let mut coords = Vec::new();
    for mut p in parts {
        // Link traffic from the output channels: each belongs to one node, direction and
        // color (found through the queues that forward to it).
        let fab = &mut p.fab;
        let mut links = vec![[0u64; 4]; fab.routers.len()];
        let mut seen = vec![false; fab.outch.len()];
        for q in &fab.queues {
            for (d, &ch) in q.out.iter().enumerate() {
                if ch == NONE || std::mem::replace(&mut seen[ch as usize], true) {
                    continue;
                }
                let out = &fab.outch[ch as usize];
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
        for (i, (router, info)) in fab.routers.iter().zip(&fab.info).enumerate() {
            coords.push(info.at);
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
            if router.pe != NONE {
                let pe = &mut fab.pes[router.pe as usize];
                report.tasks_run += pe.tasks_run;
                report.pes.push(PeActivity {
                    x: info.at.x,
                    y: info.at.y,
                    busy_cycles: pe.busy_cycles,
                    idle_cycles: cycles.saturating_sub(pe.busy_cycles),
                    tasks: pe.tasks_run,
                    waits: pe
                        .recv_slots(&fab.recvs)
                        .iter()
                        .filter_map(|s| s.wait.report(s.color))
                        .collect(),
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
        for s in fab.sinks.drain(..) {
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
        for s in &fab.sources {
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
            traces.push(t);
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
    let trace = (!traces.is_empty()).then(|| {
        let pe_of = |node: u32| coords[node as usize];
        let name = |node: u32, task: u32| {
            let at = coords[node as usize];
            program
                .pes
                .iter()
                .find(|p| p.at == at)
                .and_then(|p| program.kernels.get(p.kernel as usize))
                .and_then(|k| k.tasks.get(task as usize))
                .map_or_else(|| format!("task {task}"), |t| t.name.clone())
        };
        crate::trace::build(traces, pe_of, name, target.clock_hz)
    });
    Outcome {
        cycles,
        report,
        outputs,
        input_timing,
        output_timing,
        trace,
        express,
        srams,
    }
}

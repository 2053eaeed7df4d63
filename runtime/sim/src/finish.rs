//! Assembling a finished run's [`Outcome`] from its partitions: the report (totals, per-PE
//! activity with receive waits, per-link and per-color traffic, all row-major whatever the
//! partitioning), host outputs and edge-stream timing and final SRAM; the partitions' trace
//! recorders are closed on the way.

use crate::engine::{ExpressStats, FinalSram, Outcome, PartitionLoad};
use crate::fabric::NONE;
use crate::partition::Partition;
use crate::program::Program;
use crate::report::{ColorTraffic, LinkTraffic, PeActivity, Report, StreamTiming};
use wsel_target::{Dir, Target};

/// What the partitions contribute, gathered before it is put in fabric order.
struct Gathered {
    report: Report,
    color_hops: Vec<u64>,
    color_delivered: Vec<u64>,
    outputs: Vec<Vec<u32>>,
    output_timing: Vec<StreamTiming>,
    input_timing: Vec<StreamTiming>,
    /// (global router, entry) lists.
    pes: Vec<(u32, PeActivity, FinalSram)>,
    links: Vec<(u32, LinkTraffic)>,
}

/// The outcome of a run that ended quiet at `cycles`.
pub(crate) fn finish(
    target: &Target,
    program: &Program,
    parts: Vec<Partition<'_>>,
    cycles: u64,
) -> Outcome {
    let express = ExpressStats {
        started: parts.iter().map(|p| p.out.stats.express_started).sum(),
        interrupted: parts.iter().map(|p| p.out.stats.express_interrupted).sum(),
        crossing: parts.iter().map(|p| p.out.stats.express_crossing).sum(),
    };
    let loads = parts
        .iter()
        .map(|p| PartitionLoad {
            routers: p.setup.globals.len(),
            router_steps: p.out.stats.router_steps,
            pe_wakes: p.out.stats.pe_wakes,
            busy: p.out.stats.busy,
        })
        .collect();
    let mut g = Gathered::new(target, program, cycles);
    for p in parts {
        g.partition(p, program, cycles);
    }
    let mut outcome = g.into_outcome(express);
    outcome.loads = loads;
    outcome
}

impl Gathered {
    fn new(target: &Target, program: &Program, cycles: u64) -> Gathered {
        let colors = target.colors as usize;
        Gathered {
            report: Report {
                target: target.name.clone(),
                cycles,
                seconds: target.seconds(cycles),
                wavelet_hops: 0,
                wavelets_delivered: 0,
                tasks_run: 0,
                pes: Vec::new(),
                links: Vec::new(),
                colors: Vec::new(),
            },
            color_hops: vec![0; colors],
            color_delivered: vec![0; colors],
            outputs: vec![Vec::new(); program.outputs.len()],
            output_timing: vec![StreamTiming::default(); program.outputs.len()],
            input_timing: program
                .inputs
                .iter()
                .map(|i| StreamTiming {
                    requested: i.start,
                    ..StreamTiming::default()
                })
                .collect(),
            pes: Vec::new(),
            links: Vec::new(),
        }
    }

    /// Take what partition `p` holds.
    fn partition(&mut self, mut p: Partition<'_>, program: &Program, cycles: u64) {
        self.traffic(&p);
        for (c, d) in p.out.stats.color_delivered.iter().enumerate() {
            self.color_delivered[c] += d;
        }
        let fab = &mut p.fab;
        for (i, (router, info)) in fab.routers.iter().zip(&fab.info).enumerate() {
            let global = p.setup.globals[i];
            if router.pe == NONE {
                continue;
            }
            let pe = &mut fab.pes[router.pe as usize];
            self.report.tasks_run += pe.tasks_run;
            let activity = PeActivity {
                x: info.at.x,
                y: info.at.y,
                busy_cycles: pe.busy_cycles,
                idle_cycles: cycles.saturating_sub(pe.busy_cycles),
                tasks: pe.tasks_run,
                first_task_start: Some(pe.first).filter(|&t| t != u64::MAX),
                last_task_end: (pe.tasks_run > 0).then_some(pe.busy_until),
                waits: pe
                    .recv_slots(&fab.recvs)
                    .iter()
                    .filter_map(|s| s.wait.report(s.color))
                    .collect(),
            };
            let prog = &program.pes[pe.prog as usize];
            let init = if pe.sram.is_empty() {
                prog.sram_init.clone()
            } else {
                Vec::new()
            };
            let sram = FinalSram {
                at: info.at,
                bytes: std::mem::take(&mut pe.sram),
                size: prog.sram_bytes,
                init,
            };
            self.pes.push((global, activity, sram));
        }
        self.streams(&mut p);
        if let Some(t) = p.out.trace.take() {
            t.close();
        }
    }

    /// Link traffic from partition `p`'s output channels: each belongs to one router,
    /// direction and color (found through the queues that forward to it).
    fn traffic(&mut self, p: &Partition<'_>) {
        let fab = &p.fab;
        let mut links = vec![[0u64; 4]; fab.routers.len()];
        let mut seen = vec![false; fab.outch.len()];
        // What the send slots counted of their solo links (see `SendSlot::hops`).
        let mut solo = vec![0u64; fab.outch.len()];
        for s in &fab.sends {
            if s.hops > 0 {
                solo[s.out as usize] += u64::from(s.hops);
            }
        }
        for q in &fab.queues {
            for (d, &ch) in q.out.iter().enumerate() {
                if ch == NONE || std::mem::replace(&mut seen[ch as usize], true) {
                    continue;
                }
                let out = &fab.outch[ch as usize];
                let sent = out.sent + solo[ch as usize];
                links[q.node as usize][d] += sent;
                if out.sink == NONE {
                    self.report.wavelet_hops += sent;
                    self.color_hops[q.color() as usize] += sent;
                }
            }
        }
        for (i, info) in fab.info.iter().enumerate() {
            for d in Dir::ALL {
                let wavelets = links[i][d.index()];
                if wavelets > 0 {
                    let link = LinkTraffic {
                        x: info.at.x,
                        y: info.at.y,
                        dir: d,
                        wavelets,
                    };
                    self.links.push((p.setup.globals[i], link));
                }
            }
        }
    }

    /// Partition `p`'s edge streams: outputs and their timing.
    fn streams(&mut self, p: &mut Partition<'_>) {
        for s in p.fab.sinks.drain(..) {
            if let Some(timing) = self.output_timing.get_mut(s.output as usize) {
                *timing = StreamTiming {
                    wavelets: s.data.len() as u64,
                    requested: 0,
                    first: s.first,
                    last: s.last,
                    held_back: 0,
                };
            }
            if let Some(o) = self.outputs.get_mut(s.output as usize) {
                *o = s.data;
            }
        }
        for s in &p.fab.sources {
            if let Some(timing) = self.input_timing.get_mut(s.input as usize) {
                *timing = StreamTiming {
                    wavelets: s.pos as u64,
                    requested: s.requested,
                    first: s.first,
                    last: s.last,
                    held_back: s.held_back,
                };
            }
        }
    }

    /// The outcome, everything in fabric order.
    fn into_outcome(mut self, express: ExpressStats) -> Outcome {
        let mut report = self.report;
        report.wavelets_delivered = self.color_delivered.iter().sum();
        for (c, (&hops, &delivered)) in self
            .color_hops
            .iter()
            .zip(&self.color_delivered)
            .enumerate()
        {
            if hops > 0 || delivered > 0 {
                report.colors.push(ColorTraffic {
                    color: c as u8,
                    hops,
                    delivered,
                });
            }
        }
        // Stable: a router's links stay in N, S, E, W order.
        self.links.sort_by_key(|&(g, _)| g);
        report.links = self.links.into_iter().map(|(_, l)| l).collect();
        self.pes.sort_by_key(|&(g, ..)| g);
        let mut srams = Vec::with_capacity(self.pes.len());
        for (_, activity, sram) in self.pes {
            report.pes.push(activity);
            srams.push(sram);
        }
        Outcome {
            cycles: report.cycles,
            report,
            outputs: self.outputs,
            input_timing: self.input_timing,
            output_timing: self.output_timing,
            trace: None,
            express,
            loads: Vec::new(),
            srams,
        }
    }
}

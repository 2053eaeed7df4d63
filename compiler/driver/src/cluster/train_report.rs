//! The gradients' way back through the tree in a cluster's training step ([`Reduction`]),
//! and the cluster's part of `wsel train`'s summary ([`summary`]): per-system cycles, the
//! broadcast per phase and the reduction per gradient, the step, the scaling against one
//! system on the whole batch, and the bandwidths that would restore linear scaling.

use std::fmt::Write as _;

use wsel_map::report::group;
use wsel_swarm::{Stream, reduce_all};
use wsel_target::Swarm;

use super::split::share_sizes;
use super::train::Prepared;
use super::train_steps::{StepFigures, SystemStep};
use crate::training::StepRecord;

/// The systems' gradients summed through the tree, in the order their phases sent them.
pub struct Reduction {
    /// (parameter, the sum at the store) per gradient.
    pub sums: Vec<(usize, Vec<f32>)>,
    /// (parameter, bytes, cycles from the latest system's phase end to the sum's last byte
    /// at the store) per gradient.
    pub figures: Vec<(usize, u64, u64)>,
    /// When the last sum's last byte reached the store.
    pub summed_at: u64,
    values: Vec<Vec<Vec<f32>>>,
    ready: Vec<Vec<u64>>,
}

impl Reduction {
    /// Sums every gradient of `systems` (in system order) through the tree of `prepared`.
    pub fn of(prepared: &Prepared, systems: &[SystemStep]) -> Reduction {
        let grads = systems.first().map_or(0, |s| s.grads.len());
        let values: Vec<Vec<Vec<f32>>> = (0..grads)
            .map(|g| systems.iter().map(|s| s.grads[g].1.clone()).collect())
            .collect();
        let ready: Vec<Vec<u64>> = (0..grads)
            .map(|g| systems.iter().map(|s| s.ready[g]).collect())
            .collect();
        let swarm = prepared.setup.program.target.swarm;
        let results = reduce_all(&prepared.tree, &swarm, &streams(&values, &ready));
        let figures = results
            .iter()
            .enumerate()
            .map(|(g, r)| {
                let from = ready[g].iter().copied().max().unwrap_or(0);
                let bytes = 4 * r.values.len() as u64;
                (
                    systems[0].grads[g].0,
                    bytes,
                    r.cycles().saturating_sub(from),
                )
            })
            .collect();
        Reduction {
            summed_at: results.iter().map(|r| r.cycles()).max().unwrap_or(0),
            sums: results
                .into_iter()
                .enumerate()
                .map(|(g, r)| (systems[0].grads[g].0, r.values))
                .collect(),
            figures,
            values,
            ready,
        }
    }

    /// How the sums' arrival after the fabric's end splits: the part the tree's latency
    /// alone causes (the sums' arrival with unbounded link bandwidth), and the least link
    /// bandwidth (the switches summing as fast) that leaves only that part, found by
    /// bisection on the tree's event model (`None` when the links already do).
    pub fn tail(&self, prepared: &Prepared, fabric_cycles: u64) -> Tail {
        let swarm = prepared.setup.program.target.swarm;
        let end = |rate: u32| {
            let faster = Swarm {
                link_bytes_per_cycle: rate,
                reduce_bytes_per_cycle: rate,
                ..swarm
            };
            let streams = streams(&self.values, &self.ready);
            let results = reduce_all(&prepared.tree, &faster, &streams);
            results.iter().map(|r| r.cycles()).max().unwrap_or(0)
        };
        const UNBOUNDED: u32 = 1 << 24;
        let floor = end(UNBOUNDED).max(fabric_cycles);
        let latency_cycles = floor - fabric_cycles;
        if self.summed_at <= floor {
            return Tail {
                latency_cycles,
                rate: None,
            };
        }
        let (mut low, mut high) = (swarm.link_bytes_per_cycle.max(1), UNBOUNDED);
        while high - low > 1 {
            let mid = low + (high - low) / 2;
            if end(mid) <= floor {
                high = mid;
            } else {
                low = mid;
            }
        }
        Tail {
            latency_cycles,
            rate: Some(high),
        }
    }
}

/// The reduction's arrival after the fabric's end: the cycles the tree's latency alone
/// causes, and the link bandwidth that would leave only those.
#[derive(Clone, Copy, Debug)]
pub struct Tail {
    pub latency_cycles: u64,
    pub rate: Option<u32>,
}

fn streams<'a>(values: &'a [Vec<Vec<f32>>], ready: &'a [Vec<u64>]) -> Vec<Stream<'a>> {
    values
        .iter()
        .zip(ready)
        .map(|(values, ready)| Stream { values, ready })
        .collect()
}

/// The cluster's lines of the summary, from every step's records and the first step's
/// figures (every step of a run takes the same cycles: timing does not depend on values).
pub fn summary(prepared: &Prepared, steps: &[StepRecord], first: &StepFigures) -> String {
    let mut out = String::new();
    let target = &prepared.setup.program.target;
    let n = prepared.systems;
    let t = &target.swarm;
    let _ = writeln!(
        out,
        "\n  cluster: {n} system{} in data parallel, {} samples each of every step's {} · tree fan-out {}, depth {}, links {} B/cycle and {} cycles, switches {} cycles, sums at {} B/cycle, packets of {} B",
        if n == 1 { "" } else { "s" },
        share_sizes(&prepared.shares),
        prepared.setup.settings.batch,
        t.fan_out,
        prepared.tree.depth,
        t.link_bytes_per_cycle,
        t.link_latency_cycles,
        t.switch_latency_cycles,
        t.reduce_bytes_per_cycle,
        t.packet_bytes
    );
    if let Some((first_byte, rate)) = prepared.feed {
        let _ = writeln!(
            out,
            "  every system's weights arrive from the tree: first byte after {} cycles, then {rate} B/cycle",
            group(first_byte)
        );
    }
    system_lines(&mut out, first);
    if n > 1 {
        phase_lines(&mut out, prepared, first);
        gradient_lines(&mut out, prepared, first);
    }
    step_lines(&mut out, prepared, steps, first);
    out
}

fn system_lines(out: &mut String, first: &StepFigures) {
    let _ = writeln!(
        out,
        "\n  {:>6} {:>14} {:>10}   (step 1, on the cluster's clock)",
        "system", "fabric cyc", "waited"
    );
    for s in &first.systems {
        let _ = writeln!(
            out,
            "  {:>6} {:>14} {:>10}",
            s.system,
            group(s.cycles),
            group(s.waited)
        );
    }
}

/// Per phase that streamed weights: the tree's broadcast (event model) and the slowest
/// system's stalls.
fn phase_lines(out: &mut String, prepared: &Prepared, first: &StepFigures) {
    let store = prepared.setup.program.target.weight_store;
    let swarm = prepared.setup.program.target.swarm;
    let _ = writeln!(
        out,
        "\n  {:<22} {:>10} {:>14} {:>10} {:>17}",
        "phase", "weights", "broadcast cyc", "stall cyc", "stall-free B/cyc"
    );
    let Some(system) = first.systems.first() else {
        return;
    };
    for (i, phase) in system.phases.iter().enumerate() {
        let on_all = first.systems.iter().filter_map(|s| s.phases.get(i));
        let stall = on_all.clone().map(|p| p.stall_cycles).max().unwrap_or(0);
        let free = on_all
            .filter_map(|p| p.stall_free_bytes_per_cycle)
            .reduce(f64::max);
        let broadcast = wsel_swarm::broadcast(
            &prepared.tree,
            &swarm,
            store.bandwidth_bytes_per_cycle,
            store.latency_cycles,
            phase.weight_bytes,
        );
        let _ = writeln!(
            out,
            "  {:<22} {:>10} {:>14} {:>10} {:>17}",
            phase.layer,
            format!("{} B", group(phase.weight_bytes)),
            group(broadcast.cycles()),
            group(stall),
            free.map_or("—".into(), |b| format!("{b:.1}"))
        );
    }
}

/// Per gradient: its bytes and the reduction's cycles from its phase's end to the store.
fn gradient_lines(out: &mut String, prepared: &Prepared, first: &StepFigures) {
    let _ = writeln!(
        out,
        "\n  {:<22} {:>10} {:>14}   (from the end of its phase to its sum's last byte at the store)",
        "gradient", "bytes", "reduce cyc"
    );
    for &(param, bytes, cycles) in &first.reduced {
        let name = prepared
            .setup
            .graph
            .params
            .get(param)
            .map_or("?", |p| p.tensor.name.as_str());
        let _ = writeln!(
            out,
            "  {:<22} {:>10} {:>14}",
            name,
            format!("{} B", group(bytes)),
            group(cycles)
        );
    }
}

fn step_lines(out: &mut String, prepared: &Prepared, steps: &[StepRecord], first: &StepFigures) {
    let target = &prepared.setup.program.target;
    let batch = prepared.setup.settings.batch;
    let Some(step) = steps.first() else {
        return;
    };
    let rate = |cycles: u64| batch as f64 / target.seconds(cycles.max(1));
    let _ = writeln!(
        out,
        "\n  step 1: fabric {} cycles, last gradient sum at the store at {}, update {}: {} cycles = {:.1} µs · {:.0} training samples/s",
        group(first.fabric_cycles),
        group(first.summed_at),
        group(step.update_cycles),
        group(step.cycles),
        target.seconds(step.cycles) * 1e6,
        rate(step.cycles)
    );
    if let Some(base) = first.baseline {
        let speedup = base as f64 / step.cycles.max(1) as f64;
        let _ = writeln!(
            out,
            "  one system on the whole batch: {} cycles a step · {:.0} training samples/s · speed-up {speedup:.2} on {} systems · scaling efficiency {:.1}%",
            group(base),
            rate(base),
            prepared.systems,
            100.0 * speedup / f64::from(prepared.systems)
        );
    }
    limit_lines(out, prepared, first);
}

/// What stops linear scaling: phases waiting for the tree's feed, and a reduction that ends
/// after the fabric; with the bandwidth that removes each.
fn limit_lines(out: &mut String, prepared: &Prepared, first: &StepFigures) {
    let Some(system) = first.systems.first() else {
        return;
    };
    let waiting: Vec<usize> = (0..system.phases.len())
        .filter(|&i| first.systems.iter().any(|s| s.phases[i].by_feed))
        .collect();
    if let Some((_, rate)) = prepared.feed.filter(|_| !waiting.is_empty()) {
        let needed = waiting
            .iter()
            .flat_map(|&i| first.systems.iter().map(move |s| &s.phases[i]))
            .filter_map(|p| p.stall_free_bytes_per_cycle)
            .fold(f64::from(rate), f64::max);
        let names: Vec<&str> = waiting
            .iter()
            .map(|&i| system.phases[i].layer.as_str())
            .collect();
        let _ = writeln!(
            out,
            "  the broadcast limits scaling: phases waiting for the tree's feed: {}; a feed of {needed:.1} B/cycle would remove the waits",
            names.join(", ")
        );
    } else if prepared.feed.is_some() {
        let _ = writeln!(out, "  no phase waits on the broadcast");
    }
    let late = first.summed_at.saturating_sub(first.fabric_cycles);
    if prepared.systems < 2 {
        return;
    }
    let Some(tail) = first.tail else {
        return;
    };
    let _ = match (late, tail.rate) {
        (0, _) => writeln!(
            out,
            "  the gradients' sums reach the store before the fabric is done: the reduction does not limit scaling"
        ),
        (late, None) => writeln!(
            out,
            "  the last gradient sum reaches the store {} cycles after the fabric is done, all of them the tree's latency (its links and switches): no bandwidth shortens it",
            group(late)
        ),
        (late, Some(rate)) => writeln!(
            out,
            "  the reduction limits scaling: the last gradient sum reaches the store {} cycles after the fabric is done, {} of them the tree's latency, {} its bandwidth; links (and sums) of {rate} B/cycle would leave only the latency",
            group(late),
            group(tail.latency_cycles),
            group(late - tail.latency_cycles)
        ),
    };
}

//! Helpers shared by the simulator's integration tests: small targets and route builders.
#![allow(dead_code)]

use wsel_sim::{Color, ExpressStats, Outcome, Program, SimOptions, simulate};
use wsel_target::{Coord, Port, PortSet, Target, shortest_path};

/// The dev target with the given hop latency, task-switch cost and queue depth.
pub fn target(latency: u32, switch: u32, depth: u32) -> Target {
    let mut t = Target::dev();
    t.hop_latency = latency;
    t.task_switch_cycles = switch;
    t.queue_depth = depth;
    t
}

/// Route `color` along the shortest path from `from` to `to`: from's ramp to to's ramp.
pub fn route(t: &Target, p: &mut Program, color: Color, from: Coord, to: Coord) -> usize {
    let path = shortest_path(t, from, to).expect("routable");
    p.add_route_entries(color, &path.entries(Port::Ramp, PortSet::only(Port::Ramp)));
    path.hops()
}

/// Options with exactly `threads` threads.
pub fn threads(n: usize) -> SimOptions {
    SimOptions {
        threads: n,
        exact_threads: true,
        ..SimOptions::default()
    }
}

/// Options with exactly `threads` threads.and express streams on or off.
pub fn options(threads: usize, express_streams: bool) -> SimOptions {
    SimOptions {
        threads,
        exact_threads: true,
        express_streams,
        ..SimOptions::default()
    }
}

/// Runs `p` with express streams off on `threads[0]` threads and on with each of `threads`,
/// checks that every outcome (report, SRAM, outputs, errors: [`random::observe`]) is the
/// same and returns how express streams were used on `threads[0]` threads.
pub fn agree_express(t: &Target, p: &Program, threads: &[usize]) -> ExpressStats {
    let slow = random::observe(t, p, &options(threads[0], false));
    for &n in threads {
        let fast = random::observe(t, p, &options(n, true));
        assert_eq!(
            fast, slow,
            "express streams on {n} threads changed the outcome"
        );
    }
    simulate(t, p, &options(threads[0], true)).map_or(ExpressStats::default(), |o| o.express)
}

/// Runs `p` with express streams on (one thread), off, and on two threads, checks that the
/// three agree (report, cycles, edge-stream timing) and returns the outcome.
pub fn run_agreeing(t: &Target, p: &Program) -> Outcome {
    let out = simulate(t, p, &threads(1)).expect("runs");
    for opts in [
        SimOptions {
            express_streams: false,
            ..threads(1)
        },
        threads(2),
    ] {
        let other = simulate(t, p, &opts).expect("runs");
        assert_eq!(other.report, out.report);
        assert_eq!(other.cycles, out.cycles);
        assert_eq!(other.input_timing, out.input_timing);
        assert_eq!(other.output_timing, out.output_timing);
    }
    out
}

pub mod chains;
pub mod streams;

/// Random stream programs (see `random_body.rs`).
pub mod random {
    use wsel_sim as sim;
    include!("random_body.rs");
}

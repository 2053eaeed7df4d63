//! Helpers shared by the simulator's integration tests: small targets and route builders.
#![allow(dead_code)]

use wsel_sim::{Color, Program, SimOptions};
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

/// Options with `threads` threads.
pub fn threads(n: usize) -> SimOptions {
    SimOptions {
        threads: n,
        ..SimOptions::default()
    }
}

/// Random stream programs (see `random_body.rs`).
pub mod random {
    use wsel_sim as sim;
    include!("random_body.rs");
}

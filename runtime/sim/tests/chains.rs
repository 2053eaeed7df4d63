//! Streams along chains of routers in closed form (`express.rs`) change nothing: on random
//! chain programs (multicast and filtered rows fed by PEs or paced edge streams, receives
//! posted a piece at a time, crossing traffic), outputs, cycle counts, reports, SRAM and
//! errors are identical with express streams on and off and for 1 and 2 threads.

mod common;

use common::chains::chain_program;
use common::random::observe;
use proptest::prelude::*;
use wsel_sim::{ExpressStats, Program, SimOptions, simulate};
use wsel_target::Target;

fn options(threads: usize, express_streams: bool) -> SimOptions {
    SimOptions {
        threads,
        express_streams,
        ..SimOptions::default()
    }
}

/// Express streams on and off agree (and one and two threads); how they were used.
fn check(t: &Target, p: &Program) -> ExpressStats {
    let slow = observe(t, p, &options(1, false));
    assert_eq!(
        observe(t, p, &options(1, true)),
        slow,
        "express streams changed the outcome"
    );
    assert_eq!(
        observe(t, p, &options(2, true)),
        slow,
        "two threads changed the outcome"
    );
    simulate(t, p, &options(1, true)).map_or(ExpressStats::default(), |o| o.express)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn chains_in_closed_form_change_nothing(seed in any::<u64>()) {
        let (t, p) = chain_program(seed);
        check(&t, &p);
    }
}

#[test]
fn chains_are_taken_and_interrupted() {
    let mut total = ExpressStats::default();
    for seed in 0..200 {
        let (t, p) = chain_program(seed);
        let s = check(&t, &p);
        total.started += s.started;
        total.interrupted += s.interrupted;
    }
    assert!(total.started > 100, "{total:?}");
    assert!(total.interrupted > 20, "{total:?}");
    assert!(total.interrupted < total.started, "{total:?}");
}

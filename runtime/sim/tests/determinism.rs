//! Identical outputs, cycle counts, reports (with receive waits), edge-stream timing and traces
//! for 1, 2, 3, 4 and 8 worker threads.

mod common;

use common::random::observe;
use common::target;
use wsel_sim::workloads::halo_exchange;
use wsel_sim::{
    EdgeInput, EdgeOutput, EdgeSource, Outcome, SimOptions, TraceOptions, TraceOut, simulate,
};
use wsel_target::{Coord, Dir, Port, PortSet};

/// A 12 × 12 halo exchange (4 rounds, uneven task costs) plus a host stream crossing the
/// fabric on row 5 through the exchange's traffic.
fn run(threads: usize, latency: u32) -> Outcome {
    run_on(&common::threads(threads), latency)
}

/// [`run`] with `threads` as `options` says.
fn run_on(options: &SimOptions, latency: u32) -> Outcome {
    let mut t = target(latency, 3, 4);
    (t.width, t.height) = (12, 12);
    let mut p = halo_exchange(Coord::new(0, 0), 12, 12, 8, 4);
    // Color 9 crosses row 5 from the west edge to the east edge, sharing the east links.
    let data: Vec<u32> = (0..200).map(|i| i * 3 + 1).collect();
    p.inputs.push(EdgeInput {
        at: Coord::new(0, 5),
        side: Dir::West,
        color: 9,
        data,
        source: EdgeSource::Host,
        start: 7,
        phase: 0,
    });
    p.outputs.push(EdgeOutput {
        at: Coord::new(11, 5),
        side: Dir::East,
        color: 9,
    });
    for x in 0..12 {
        p.add_route(
            Coord::new(x, 5),
            9,
            PortSet::only(Port::W),
            PortSet::only(Port::E),
        );
    }
    // Weight streams in two phases on colors 10 and 11, crossing rows 1 and 10 (in different
    // partitions with several threads): phase 1 is requested when phase 0 has entered.
    for (row, color, phase) in [(1, 10, 0), (10, 11, 0), (2, 12, 1), (9, 13, 1)] {
        p.inputs.push(EdgeInput {
            at: Coord::new(0, row),
            side: Dir::West,
            color,
            data: (0..60 + 10 * phase).map(|i| i ^ u32::from(color)).collect(),
            source: EdgeSource::WeightStore,
            start: 3,
            phase,
        });
        p.outputs.push(EdgeOutput {
            at: Coord::new(11, row),
            side: Dir::East,
            color,
        });
        for x in 0..12 {
            p.add_route(
                Coord::new(x, row),
                color,
                PortSet::only(Port::W),
                PortSet::only(Port::E),
            );
        }
    }
    let opts = SimOptions {
        trace: Some(TraceOptions {
            window: 16,
            ..TraceOptions::new(TraceOut::Memory)
        }),
        ..options.clone()
    };
    simulate(&t, &p, &opts).expect("runs")
}

fn assert_same(a: &Outcome, b: &Outcome) {
    assert_eq!(a.cycles, b.cycles);
    assert_eq!(a.report, b.report);
    assert_eq!(a.outputs, b.outputs);
    assert_eq!(a.input_timing, b.input_timing);
    assert_eq!(a.output_timing, b.output_timing);
    assert_eq!(a.trace, b.trace);
    for y in 0..12 {
        for x in 0..12 {
            let c = Coord::new(x, y);
            assert_eq!(a.sram(c), b.sram(c), "SRAM of PE {c}");
        }
    }
}

#[test]
fn one_two_and_four_threads_agree_exactly() {
    for latency in [1, 3] {
        let one = run(1, latency);
        assert!(one.report.wavelet_hops > 10_000, "a nontrivial run");
        assert_eq!(
            one.outputs[0],
            (0..200).map(|i| i * 3 + 1).collect::<Vec<u32>>()
        );
        // The waits and the phases are exercised.
        assert!(one.report.pes.iter().any(|p| p.waits.len() == 4));
        let phase1 = one.input_timing[1].last.expect("phase 0 entered");
        assert_eq!(
            one.input_timing[3].requested,
            phase1.max(one.input_timing[2].last.expect("phase 0 entered")) + 1
        );
        for threads in [2, 3, 4, 8] {
            assert_same(&one, &run(threads, latency));
        }
    }
}

#[test]
fn random_stream_programs_agree_across_threads() {
    // Host and weight streams (in up to three phases), unicast and multicast PE streams.
    let mut phased = 0;
    for seed in 0..80 {
        let (t, p) = common::random::edge_program(seed);
        let one = observe(&t, &p, &common::threads(1));
        let mut phases: Vec<u32> = p
            .inputs
            .iter()
            .filter(|i| i.source == EdgeSource::WeightStore)
            .map(|i| i.phase)
            .collect();
        phases.sort_unstable();
        phases.dedup();
        if phases.len() > 1 && !one.starts_with("error") {
            phased += 1;
        }
        for threads in [2, 3, 4, 8] {
            assert_eq!(
                one,
                observe(&t, &p, &common::threads(threads)),
                "seed {seed}, {threads} threads"
            );
        }
    }
    assert!(phased >= 3, "{phased} runs with several weight phases");
}

#[test]
fn progress_is_published_and_changes_nothing() {
    let t = target(1, 3, 4);
    let p = halo_exchange(Coord::new(0, 0), 8, 8, 16, 40);
    for threads in [1, 2] {
        let plain = SimOptions {
            threads,
            exact_threads: true,
            ..SimOptions::default()
        };
        let progress = wsel_sim::Progress::new();
        let watched = SimOptions {
            progress: Some(progress.clone()),
            ..plain.clone()
        };
        let a = simulate(&t, &p, &plain).expect("runs");
        let b = simulate(&t, &p, &watched).expect("runs");
        assert_same(&a, &b);
        // Long enough for the one-thread run to publish between windows of 16 cycles.
        assert!(a.cycles > 32, "{} cycles", a.cycles);
        assert!(
            progress.cycle() > 0 && progress.cycle() <= a.cycles + 1,
            "{threads} threads: progress {} of {} cycles",
            progress.cycle(),
            a.cycles
        );
    }
}

#[test]
fn random_stream_programs_trace_alike_across_threads() {
    // The traces (which turn express streams off) of the random stream programs, with link
    // windows short enough that counters straddle the partitions' windows.
    let mut traced = 0;
    for seed in 0..30 {
        let (t, p) = common::random::edge_program(seed);
        let opts = |threads| SimOptions {
            trace: Some(TraceOptions {
                window: 5,
                ..TraceOptions::new(TraceOut::Memory)
            }),
            ..common::threads(threads)
        };
        let one = observe(&t, &p, &opts(1));
        traced += usize::from(one.contains("\"ph\":\"C\""));
        for threads in [2, 3, 8] {
            assert_eq!(
                one,
                observe(&t, &p, &opts(threads)),
                "seed {seed}, {threads} threads"
            );
        }
    }
    assert!(traced >= 20, "{traced} runs with link counters");
}

#[test]
fn threads_are_an_upper_bound_of_one_per_4k_programmed_pes() {
    // Written out from the rule: floor(pes / 4,096), at most `threads`, at least 1.
    let most = |threads| SimOptions {
        threads,
        ..SimOptions::default()
    };
    assert_eq!(wsel_sim::PES_PER_THREAD, 4_096);
    for (threads, pes, used) in [
        (2, 0, 1),
        (2, 256, 1),
        (2, 4_096, 1),
        (2, 8_191, 1),
        (2, 8_192, 2),
        (2, 850_000, 2),
        (8, 24_576, 6),
        (0, 850_000, 1),
    ] {
        assert_eq!(
            most(threads).threads_for(pes),
            used,
            "{threads} threads, {pes} PEs"
        );
    }
    let exact = SimOptions {
        exact_threads: true,
        ..most(3)
    };
    assert_eq!(exact.threads_for(0), 3);
}

#[test]
fn a_small_program_runs_on_one_thread_unless_exact() {
    // The 12 x 12 halo: 144 programmed PEs, far below 4,096, so `threads: 4` runs one
    // partition and `exact_threads` four.
    let bounded = run_on(
        &SimOptions {
            threads: 4,
            ..SimOptions::default()
        },
        2,
    );
    let exact = run(4, 2);
    assert_eq!(bounded.loads.len(), 1);
    assert_eq!(exact.loads.len(), 4);
    assert_same(&bounded, &exact);
}

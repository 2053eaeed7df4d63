//! The JSON report and the Chrome/Perfetto trace.

mod common;

use common::target;
use serde_json::Value;
use wsel_sim::workloads::halo_exchange;
use wsel_sim::{SimOptions, TraceOptions, TraceOut, simulate};
use wsel_target::Coord;

#[test]
fn report_counts_busy_idle_links_and_colors() {
    let t = target(1, 2, 4);
    let p = halo_exchange(Coord::new(2, 2), 4, 3, 5, 2);
    let out = simulate(&t, &p, &SimOptions::default()).expect("runs");
    let r = &out.report;
    assert_eq!(r.pes.len(), 12);
    for pe in &r.pes {
        assert_eq!(pe.busy_cycles + pe.idle_cycles, r.cycles);
        // `start` and four (or fewer) `got` per round.
        assert!(pe.tasks >= 2 * 3);
    }
    // Neighbour pairs: 3 rows × 3 + 4 columns × 2 = 17, both ways, 5 words, 2 rounds.
    assert_eq!(r.wavelet_hops, 17 * 2 * 5 * 2);
    assert_eq!(
        r.links.iter().map(|l| l.wavelets).sum::<u64>(),
        r.wavelet_hops
    );
    assert_eq!(r.colors.iter().map(|c| c.hops).sum::<u64>(), r.wavelet_hops);
    assert_eq!(r.wavelets_delivered, r.wavelet_hops);
    let json: Value = serde_json::from_str(&r.to_json()).expect("report is JSON");
    assert_eq!(json["cycles"], r.cycles);
    assert_eq!(json["links"][0]["dir"], "south");
    assert!(r.utilisation() > 0.0 && r.utilisation() < 1.0);
}

/// Every PE's span of work, and the run's (`Report::task_span`, the CSL examples' max end −
/// min start): every PE starts at 0 (its `start` task), works at least its busy cycles
/// between its first start and its last end, and ends within the run.
#[test]
fn report_gives_each_pes_first_start_and_last_end() {
    let t = target(1, 2, 4);
    let p = halo_exchange(Coord::new(2, 2), 4, 3, 5, 2);
    let out = simulate(&t, &p, &SimOptions::default()).expect("runs");
    let r = &out.report;
    for pe in &r.pes {
        let (start, end) = (pe.first_task_start, pe.last_task_end);
        assert_eq!(start, Some(0));
        let end = end.expect("a PE that ran tasks has an end");
        assert!(end >= pe.busy_cycles && end <= r.cycles, "{pe:?}");
    }
    let last = r.pes.iter().filter_map(|p| p.last_task_end).max();
    assert_eq!(r.task_span(), last.map(|l| (0, l)));
    let json: Value = serde_json::from_str(&r.to_json()).expect("report is JSON");
    assert_eq!(json["pes"][0]["first_task_start"], 0);
}

#[test]
fn trace_has_task_slices_tracks_and_link_counters() {
    let t = target(1, 2, 4);
    let p = halo_exchange(Coord::new(0, 0), 3, 2, 4, 1);
    let out = simulate(
        &t,
        &p,
        &SimOptions {
            trace: Some(TraceOptions {
                window: 8,
                ..TraceOptions::new(TraceOut::Memory)
            }),
            ..SimOptions::default()
        },
    )
    .expect("runs");
    let trace = out.trace.as_ref().and_then(|t| t.text()).expect("trace");
    let json: Value = serde_json::from_str(trace).expect("trace is JSON");
    let events = json["traceEvents"].as_array().expect("events");
    let slices: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(slices.len() as u64, out.report.tasks_run);
    for s in &slices {
        assert!(s["ts"].is_u64() && s["dur"].as_u64().is_some_and(|d| d > 0));
        assert!(s["name"] == "start" || s["name"] == "got");
    }
    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    assert_eq!(names.len(), 6);
    assert!(names.contains(&"PE (2, 1)"));
    let counted: u64 = events
        .iter()
        .filter(|e| e["ph"] == "C")
        .filter_map(|e| e["args"]["wavelets"].as_u64())
        .sum();
    assert_eq!(counted, out.report.wavelet_hops);
    // Off by default: no trace, nothing recorded.
    assert!(
        simulate(&t, &p, &SimOptions::default())
            .expect("runs")
            .trace
            .is_none()
    );
}

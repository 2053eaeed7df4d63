//! The Chrome/Perfetto trace: processes per group and tracks named by the PE's position in its
//! region; the region and cycle filters, checked against the unfiltered trace of the same run;
//! the file destination and its write errors.

mod common;

use common::target;
use serde_json::Value;
use std::collections::HashMap;
use wsel_sim::workloads::halo_exchange;
use wsel_sim::{
    Outcome, Program, SimError, SimOptions, TraceGroup, TraceOptions, TraceOut, simulate, task,
};
use wsel_target::{Coord, Rect, Target};

fn traced(t: &Target, p: &Program, trace: TraceOptions) -> Result<Outcome, SimError> {
    let options = SimOptions {
        trace: Some(trace),
        ..SimOptions::default()
    };
    simulate(t, p, &options)
}

fn events(out: &Outcome) -> Vec<Value> {
    let text = out.trace.as_ref().and_then(|t| t.text()).expect("a trace");
    let json: Value = serde_json::from_str(text).expect("the trace is JSON");
    json["traceEvents"].as_array().expect("traceEvents").clone()
}

/// The `args.name` of the metadata events called `what`, by (pid, tid).
fn names(events: &[Value], what: &str) -> HashMap<(u64, u64), String> {
    events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == what)
        .map(|e| {
            let key = (
                e["pid"].as_u64().expect("pid"),
                e["tid"].as_u64().unwrap_or(0),
            );
            (key, e["args"]["name"].as_str().expect("a name").to_string())
        })
        .collect()
}

/// PEs that each run two tasks: in a 3 × 2 region at (1, 1), a transposed 2 × 3 region at
/// (5, 0), and alone at (10, 10).
fn regions_program() -> Program {
    let mut p = Program::new();
    let work = |extra: u64| {
        task(move |ctx| {
            ctx.add_cycles(extra + u64::from(ctx.fabric_coord().x));
            Ok(())
        })
    };
    let k = p.add_kernel("k", vec![("first", work(2)), ("second", work(5))]);
    let alpha = Rect::new(1, 1, 3, 2);
    let beta = Rect::new(5, 0, 2, 3);
    for (region, transposed) in [(alpha, false), (beta, true)] {
        for y in region.y..region.y + region.height {
            for x in region.x..region.x + region.width {
                let i = p.add_pe(Coord::new(x, y), k, 64, &[], &[0, 1]);
                p.pes[i].region = region;
                p.pes[i].transposed = transposed;
            }
        }
    }
    p.add_pe(Coord::new(10, 10), k, 64, &[], &[0, 1]);
    p
}

#[test]
fn groups_are_processes_and_tracks_are_named_by_position_in_the_region() {
    let t = target(1, 2, 4);
    let p = regions_program();
    let options = TraceOptions {
        groups: vec![
            TraceGroup {
                name: "alpha".to_string(),
                region: Rect::new(1, 1, 3, 2),
            },
            TraceGroup {
                name: "beta".to_string(),
                region: Rect::new(5, 0, 2, 3),
            },
        ],
        others: Some("rest".to_string()),
        ..TraceOptions::new(TraceOut::Memory)
    };
    let out = traced(&t, &p, options).expect("runs");
    let events = events(&out);
    let processes = names(&events, "process_name");
    let expected: HashMap<(u64, u64), String> = [(1, "alpha"), (2, "beta"), (3, "rest")]
        .into_iter()
        .map(|(pid, name)| ((pid, 0), name.to_string()))
        .collect();
    assert_eq!(processes, expected);
    // Rows and columns as the tasks see them: alpha's row r is physical row 1 + r; beta is
    // transposed, so its rows run along physical columns.
    let mut expected = HashMap::new();
    for pe in &p.pes {
        let (x, y) = (pe.at.x, pe.at.y);
        let name = match (x, y) {
            (1..=3, 1..=2) => format!("alpha · PE ({}, {})", y - 1, x - 1),
            (5..=6, 0..=2) => format!("beta · PE ({}, {})", x - 5, y),
            _ => format!("PE ({x}, {y})"),
        };
        expected.insert(name, 2);
    }
    let tracks = names(&events, "thread_name");
    let mut slices_per_track: HashMap<String, u64> = HashMap::new();
    for (i, e) in events.iter().enumerate().filter(|(_, e)| e["ph"] == "X") {
        let key = (
            e["pid"].as_u64().expect("pid"),
            e["tid"].as_u64().expect("tid"),
        );
        let track = tracks.get(&key).expect("every slice's track is named");
        *slices_per_track.entry(track.clone()).or_default() += 1;
        // Named before its first slice.
        assert!(
            events[..i]
                .iter()
                .any(|m| m["name"] == "thread_name" && m["tid"] == e["tid"]),
            "{track}"
        );
        assert!(e["name"] == "first" || e["name"] == "second");
    }
    assert_eq!(slices_per_track.len(), expected.len());
    assert_eq!(
        slices_per_track,
        expected.into_iter().map(|(k, v)| (k, v as u64)).collect()
    );
}

#[test]
fn pes_in_no_group_are_left_out_without_a_process_for_them() {
    let t = target(1, 2, 4);
    let p = regions_program();
    let options = TraceOptions {
        groups: vec![TraceGroup {
            name: "beta".to_string(),
            region: Rect::new(5, 0, 2, 3),
        }],
        others: None,
        ..TraceOptions::new(TraceOut::Memory)
    };
    let out = traced(&t, &p, options).expect("runs");
    let events = events(&out);
    let tracks = names(&events, "thread_name");
    assert_eq!(tracks.len(), 6);
    assert!(tracks.values().all(|n| n.starts_with("beta · PE (")));
    assert_eq!(events.iter().filter(|e| e["ph"] == "X").count(), 12);
}

/// Slices as (pid, tid, name, ts, dur) and nonzero counters as (name, ts, wavelets).
fn contents(events: &[Value]) -> (Vec<String>, Vec<String>) {
    let slices = events
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| {
            format!(
                "{} {} {} {} {}",
                e["pid"], e["tid"], e["name"], e["ts"], e["dur"]
            )
        })
        .collect();
    let counters = events
        .iter()
        .filter(|e| e["ph"] == "C" && e["args"]["wavelets"] != 0)
        .map(|e| format!("{} {} {}", e["name"], e["ts"], e["args"]["wavelets"]))
        .collect();
    (slices, counters)
}

#[test]
fn region_and_cycle_filters_keep_exactly_the_events_inside() {
    let t = target(1, 2, 4);
    let p = halo_exchange(Coord::new(0, 0), 6, 5, 3, 3);
    // Link counters per cycle, so that the filtered ones can be read off the full trace.
    let full = traced(
        &t,
        &p,
        TraceOptions {
            window: 1,
            ..TraceOptions::new(TraceOut::Memory)
        },
    )
    .expect("runs");
    let (cycles, region) = (20..60, Rect::new(1, 1, 3, 2));
    let filtered = traced(
        &t,
        &p,
        TraceOptions {
            window: 1,
            cycles: Some(cycles.clone()),
            region: Some(region),
            ..TraceOptions::new(TraceOut::Memory)
        },
    )
    .expect("runs");
    let full_events = events(&full);
    let tracks = names(&full_events, "thread_name");
    let pe_of = |name: &str| -> Coord {
        let inner = name.trim_start_matches("PE (").trim_end_matches(')');
        let (x, y) = inner.split_once(", ").expect("PE (x, y)");
        Coord::new(x.parse().expect("x"), y.parse().expect("y"))
    };
    let inside: Vec<Value> = full_events
        .iter()
        .filter(|e| match e["ph"].as_str() {
            Some("X") => {
                let key = (
                    e["pid"].as_u64().expect("pid"),
                    e["tid"].as_u64().expect("tid"),
                );
                let (ts, dur) = (
                    e["ts"].as_u64().expect("ts"),
                    e["dur"].as_u64().expect("dur"),
                );
                region.contains(pe_of(&tracks[&key])) && ts < cycles.end && ts + dur > cycles.start
            }
            Some("C") => {
                let name = e["name"]
                    .as_str()
                    .expect("name")
                    .trim_start_matches("link ");
                let (pe, _dir) = name.rsplit_once(' ').expect("link (x, y) D");
                region.contains(pe_of(&format!("PE {pe}")))
                    && cycles.contains(&e["ts"].as_u64().expect("ts"))
            }
            _ => false,
        })
        .cloned()
        .collect();
    let filtered_events = events(&filtered);
    let (slices, counters) = contents(&filtered_events);
    assert_eq!((slices.clone(), counters.clone()), contents(&inside));
    assert!(
        slices.len() > 20 && counters.len() > 20,
        "a nontrivial window"
    );
    // In time order.
    let times: Vec<u64> = filtered_events
        .iter()
        .filter_map(|e| e["ts"].as_u64())
        .collect();
    assert!(times.is_sorted());
}

#[test]
fn a_trace_file_holds_what_memory_holds() {
    let t = target(1, 2, 4);
    let p = halo_exchange(Coord::new(0, 0), 4, 4, 3, 2);
    let dir = std::env::temp_dir().join(format!("wsel-sim-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("t.json");
    let in_memory = traced(&t, &p, TraceOptions::new(TraceOut::Memory)).expect("runs");
    let in_file = traced(&t, &p, TraceOptions::new(TraceOut::File(path.clone()))).expect("runs");
    let text = std::fs::read_to_string(&path).expect("the file");
    let _ = std::fs::remove_dir_all(&dir);
    let memory = in_memory.trace.as_ref().expect("trace");
    assert_eq!(Some(text.as_str()), memory.text());
    let file = in_file.trace.as_ref().expect("trace");
    assert_eq!(file.text(), None);
    assert_eq!(file.events(), memory.events());
    assert_eq!(memory.events() as usize, events(&in_memory).len());
}

#[test]
fn write_errors_are_reported() {
    let t = target(1, 2, 4);
    let p = halo_exchange(Coord::new(0, 0), 4, 4, 3, 2);
    let to = |path: &str| TraceOptions::new(TraceOut::File(path.into()));
    // Cannot be created.
    let missing = traced(&t, &p, to("/nonexistent-wsel-dir/t.json"));
    assert!(
        matches!(&missing, Err(SimError::TraceWrite { message }) if message.contains("No such file")),
        "{missing:?}"
    );
    // Created, but every write fails (Linux's full device).
    if std::path::Path::new("/dev/full").exists() {
        let full = traced(&t, &p, to("/dev/full"));
        assert!(
            matches!(&full, Err(SimError::TraceWrite { message }) if message.contains("No space")),
            "{full:?}"
        );
    }
}

//! `wsel run --trace` and `--report` on real examples: a filtered trace is Chrome trace-event
//! JSON with one process per chosen layer and one track per PE of it, named by layer and
//! position; trace flags that name nothing fail with E0807 and leave no file; the trace and
//! the report come out byte for byte the same for 1, 2, 3 and 8 threads.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wsel-trace-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// `wsel run examples/digits/main.wse` on 16 samples, writing into `dir`.
fn digits(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(repo_root())
        .args([
            "run",
            "examples/digits/main.wse",
            "--batch",
            "16",
            "--no-cache",
        ])
        .args(["--color", "never", "--output"])
        .arg(dir.join("probs.npy"))
        .args(args)
        .output()
        .expect("wsel runs")
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("the file");
    serde_json::from_str(&text).expect("JSON")
}

/// The `args.name` of the metadata events called `what`, by (pid, tid).
fn names(events: &[Value], what: &str) -> BTreeMap<(u64, u64), String> {
    events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == what)
        .map(|e| {
            let key = (
                e["pid"].as_u64().expect("pid"),
                e["tid"].as_u64().unwrap_or(0),
            );
            (key, e["args"]["name"].as_str().expect("name").to_string())
        })
        .collect()
}

#[test]
fn a_filtered_trace_has_a_process_per_layer_and_a_track_per_pe() {
    let dir = temp_dir("filtered");
    let (trace, report) = (dir.join("t.json"), dir.join("r.json"));
    let output = digits(
        &dir,
        &[
            "--trace",
            trace.to_str().expect("utf-8"),
            "--trace-layers",
            "dense#1,relu#1",
            "--trace-cycles",
            "300..1500",
            "--report",
            report.to_str().expect("utf-8"),
        ],
    );
    assert!(output.status.success(), "{output:?}");
    let file = json(&trace);
    let events = file["traceEvents"].as_array().expect("traceEvents");
    assert_eq!(file["otherData"]["link_counter_window_cycles"], 64);

    // One process per chosen layer, and a track for every PE of its region, named by its
    // row and column there; the regions' sizes come from the report.
    let processes: BTreeSet<String> = names(events, "process_name").into_values().collect();
    assert_eq!(
        processes,
        BTreeSet::from(["dense#1".into(), "relu#1".into()])
    );
    let mut expected = BTreeSet::new();
    for layer in json(&report)["run"]["layers"].as_array().expect("layers") {
        let name = layer["name"].as_str().expect("name");
        if name == "dense#1" || name == "relu#1" {
            for r in 0..layer["rows"].as_u64().expect("rows") {
                for c in 0..layer["cols"].as_u64().expect("cols") {
                    expected.insert(format!("{name} · PE ({r}, {c})"));
                }
            }
        }
    }
    let tracks = names(events, "thread_name");
    assert_eq!(tracks.values().cloned().collect::<BTreeSet<_>>(), expected);
    assert_eq!(tracks.len(), 32 + 8);

    // Task slices on named tracks, named by task, overlapping the cycles asked for.
    let mut sliced = BTreeSet::new();
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let key = (
            e["pid"].as_u64().expect("pid"),
            e["tid"].as_u64().expect("tid"),
        );
        sliced.insert(tracks.get(&key).expect("a named track").clone());
        let (ts, dur) = (
            e["ts"].as_u64().expect("ts"),
            e["dur"].as_u64().expect("dur"),
        );
        assert!(ts < 1500 && ts + dur > 300, "{e}");
        assert!(e["name"].as_str().is_some_and(|n| !n.is_empty()));
    }
    assert_eq!(sliced, expected, "every PE ran tasks in the window");
    let counters = events.iter().filter(|e| e["ph"] == "C").count();
    assert!(counters > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn trace_flags_that_name_nothing_fail_and_leave_no_file() {
    let dir = temp_dir("flags");
    let trace = dir.join("t.json");
    let trace_arg = trace.to_str().expect("utf-8");
    for (flags, message) in [
        (
            ["--trace-layers", "dense#9"],
            "`--trace-layers`: the model has no layer `dense#9`; its layers are dense#1, relu#1, dense#2, relu#2, dense#3, softmax#1",
        ),
        (
            ["--trace-region", "0,0,16,3"],
            "`--trace-region 0,0,16,3` reaches beyond the fabric of dev (16×16 PEs: columns 0 to 15, rows 0 to 15)",
        ),
        (
            ["--trace-region", "3,0,1,3"],
            "`--trace-region 3,0,1,3`: expected four numbers x0,y0,x1,y1 with x0 <= x1 and y0 <= y1",
        ),
        (
            ["--trace-cycles", "100..100"],
            "`--trace-cycles 100..100`: the range is empty",
        ),
    ] {
        let output = digits(&dir, &[&["--trace", trace_arg][..], &flags].concat());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{flags:?}: {stderr}");
        assert!(
            stderr.contains(&format!("error[E0807]: {message}")),
            "{flags:?}: {stderr}"
        );
        let left: Vec<_> = std::fs::read_dir(&dir).expect("dir").collect();
        assert!(left.is_empty(), "{flags:?} left {left:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The report with its one figure that is not a result of the simulation, the wall time,
/// blanked.
fn without_wall_time(report: &str) -> String {
    report
        .lines()
        .map(
            |line| match line.trim_start().starts_with("\"wall_seconds\":") {
                true => "    \"wall_seconds\": -",
                false => line,
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn trace_and_report_are_the_same_bytes_for_any_thread_count() {
    let dir = temp_dir("threads");
    let mut first: Option<(Vec<u8>, String)> = None;
    // dev has 16 rows: 8 threads make bands of two.
    for threads in ["1", "2", "3", "8"] {
        let (trace, report) = (dir.join("t.json"), dir.join("r.json"));
        let output = digits(
            &dir,
            &[
                "--threads",
                threads,
                "--trace",
                trace.to_str().expect("utf-8"),
                "--report",
                report.to_str().expect("utf-8"),
            ],
        );
        assert!(output.status.success(), "{output:?}");
        let trace = std::fs::read(&trace).expect("trace");
        let report = std::fs::read_to_string(&report).expect("report");
        assert!(report.contains("\"wall_seconds\":"));
        let now = (trace, without_wall_time(&report));
        match &first {
            None => first = Some(now),
            Some(one) => assert!(*one == now, "{threads} threads differ from one"),
        }
    }
    let (trace, _) = first.expect("runs");
    assert!(trace.len() > 100_000, "a trace of {} bytes", trace.len());
    let _ = std::fs::remove_dir_all(&dir);
}

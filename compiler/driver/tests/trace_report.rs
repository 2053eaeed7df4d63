//! `wsel run --trace` and `--report` on real examples: a filtered trace is Chrome trace-event
//! JSON with one process per chosen layer and one track per PE of it, named by layer and
//! position; trace flags that name nothing fail with E0807 and leave no file; the trace and
//! the report come out byte for byte the same for 1, 2, 3 and 8 threads; the report's
//! per-layer figures are what its per-PE detail adds up to, and the default report stays
//! small on wse2.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

mod support;
use support::{repo_root, temp_dir};

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
    assert_eq!(tracks.len(), expected.len());

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
    // dev has 16 rows: 8 threads make bands of two. `=N`: exactly N, as the small example
    // would run on one thread otherwise (at most one per core still).
    for threads in ["1", "=2", "=3", "=8"] {
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
                "--report-detail",
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
}

/// `wsel map FILE --format json`'s placement, with the settings the runs here use.
fn placement(args: &[&str]) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(repo_root())
        .args(["map", "examples/digits/main.wse", "--format", "json"])
        .args(args)
        .output()
        .expect("wsel runs");
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).expect("placement JSON")
}

fn u64s(values: &[&Value], field: &str) -> Vec<u64> {
    values
        .iter()
        .map(|v| v[field].as_u64().expect(field))
        .collect()
}

/// Whether two floats agree but for parsing: serde_json reads decimal text to within an ulp.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

/// Checks that `spread` is `{min, mean, max}` of `values`.
fn assert_spread(spread: &Value, values: &[u64], what: &str) {
    let mean = values.iter().sum::<u64>() as f64 / values.len() as f64;
    assert_eq!(
        spread["min"].as_u64(),
        values.iter().min().copied(),
        "{what}"
    );
    assert_eq!(
        spread["max"].as_u64(),
        values.iter().max().copied(),
        "{what}"
    );
    assert!(
        spread["mean"].as_f64().is_some_and(|m| close(m, mean)),
        "{what}: {spread} against a mean of {mean}"
    );
}

#[test]
fn per_layer_figures_add_up_the_per_pe_detail() {
    let dir = temp_dir("layers");
    let report = dir.join("r.json");
    let output = digits(
        &dir,
        &[
            "--report",
            report.to_str().expect("utf-8"),
            "--report-detail",
        ],
    );
    assert!(output.status.success(), "{output:?}");
    let report = json(&report);
    assert_eq!(report["schema"], 1);
    let cycles = report["run"]["cycles"].as_u64().expect("cycles");
    let pes = report["simulation"]["pes"].as_array().expect("detail: pes");
    assert!(
        !report["simulation"]["links"]
            .as_array()
            .expect("links")
            .is_empty()
    );
    let placed = placement(&["--batch", "16"]);
    let layers = report["run"]["layers"].as_array().expect("layers");
    // digits' six layers in six stages: on `dev` at 16 samples the mapping with every layer
    // apart is estimated faster than the fused one (docs/mapping.md §4, "Fusion").
    assert_eq!(layers.len(), 6);
    for (layer, placed) in layers
        .iter()
        .zip(placed["layers"].as_array().expect("layers"))
    {
        let rect = &placed["rect"];
        let (x, y) = (
            rect["x"].as_u64().expect("x"),
            rect["y"].as_u64().expect("y"),
        );
        let (w, h) = (
            rect["width"].as_u64().expect("w"),
            rect["height"].as_u64().expect("h"),
        );
        let mine: Vec<&Value> = pes
            .iter()
            .filter(|pe| {
                let (px, py) = (pe["x"].as_u64().expect("x"), pe["y"].as_u64().expect("y"));
                (x..x + w).contains(&px) && (y..y + h).contains(&py)
            })
            .collect();
        assert_eq!(mine.len() as u64, layer["pes"].as_u64().expect("pes"));
        let activity = &layer["activity"];
        let name = layer["name"].as_str().expect("name");
        let busy = u64s(&mine, "busy_cycles");
        assert_spread(&activity["busy_cycles"], &busy, name);
        assert_eq!(
            activity["tasks"].as_u64(),
            Some(u64s(&mine, "tasks").iter().sum())
        );
        let utilisation = busy.iter().sum::<u64>() as f64 / (busy.len() as u64 * cycles) as f64;
        assert!(
            activity["utilisation"]
                .as_f64()
                .is_some_and(|u| close(u, utilisation)),
            "{name}: {activity}"
        );
        // Per color, over the PEs that waited on it.
        let mut colors: BTreeMap<u64, Vec<&Value>> = BTreeMap::new();
        for wait in mine
            .iter()
            .flat_map(|pe| pe["waits"].as_array().expect("waits"))
        {
            colors
                .entry(wait["color"].as_u64().expect("color"))
                .or_default()
                .push(wait);
        }
        let inputs: Vec<&str> = placed["ports"]
            .as_array()
            .expect("ports")
            .iter()
            .filter(|p| p["input"] == true)
            .map(|p| p["name"].as_str().expect("name"))
            .collect();
        let waits = activity["waits"].as_array().expect("waits");
        assert_eq!(waits.len(), colors.len(), "{name}");
        for (wait, (color, all)) in waits.iter().zip(&colors) {
            assert_eq!(wait["color"].as_u64(), Some(*color));
            assert_eq!(wait["pes"].as_u64(), Some(all.len() as u64));
            assert_spread(&wait["fill_cycles"], &u64s(all, "before_first"), name);
            assert_spread(&wait["stall_cycles"], &u64s(all, "after_first"), name);
            assert!(inputs.contains(&wait["port"].as_str().expect("an in port")));
        }
    }
}

#[test]
fn the_default_report_on_wse2_is_small_and_per_layer() {
    // Mapping and simulating every example on wse2 takes minutes in a debug build, so this
    // runs the two cheapest. digits is also the one with the largest default report: the
    // report grows with layers (here 60 copies of 6 layers), not with PEs, and no other
    // example has more than a few layers. BENCHMARKS.md lists all examples' sizes.
    let dir = temp_dir("wse2");
    for example in ["rowsum", "digits"] {
        let report = dir.join(format!("{example}.json"));
        let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
            .current_dir(repo_root())
            .args(["run", &format!("examples/{example}/main.wse")])
            .args(["--target", "wse2", "--no-cache", "--output"])
            .arg(dir.join(format!("{example}.npy")))
            .arg("--report")
            .arg(&report)
            .output()
            .expect("wsel runs");
        assert!(output.status.success(), "{output:?}");
        let bytes = std::fs::metadata(&report).expect("report").len();
        assert!(bytes < 1 << 20, "{example}: {bytes} bytes");
        let report = json(&report);
        assert_eq!(report["schema"], 1);
        assert!(report["simulation"].get("pes").is_none());
        assert!(report["simulation"].get("links").is_none());
        let layers = report["run"]["layers"].as_array().expect("layers");
        assert!(
            layers
                .iter()
                .all(|l| l["activity"]["busy_cycles"]["max"].is_u64())
        );
        assert_columns_aligned(&String::from_utf8_lossy(&output.stdout), layers.len());
    }
}

/// The table's rows start their kernel where the header's `kernel` starts, however long the
/// layers' names (`copy 59 · softmax#1`).
fn assert_columns_aligned(table: &str, layers: usize) {
    let lines: Vec<&str> = table.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.trim_start().starts_with("layer "))
        .expect("a header");
    // The header is ASCII: its byte offsets are character offsets.
    let column = lines[header].find(" kernel").expect("a kernel column") + 1;
    for row in &lines[header + 1..header + 1 + layers] {
        let chars: Vec<char> = row.chars().collect();
        assert!(
            chars[column - 1] == ' ' && chars[column] != ' ',
            "misaligned:\n{}\n{row}",
            lines[header]
        );
    }
}

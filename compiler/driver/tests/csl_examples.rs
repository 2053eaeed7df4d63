//! The ports of the public csl-examples suite (`examples/csl/`, its README has the table):
//! every program runs with `wsel run`, its result passes the vendor's own check against a
//! NumPy reference (`examples/csl/csl.py check NAME RESULT REPORT`, the vendor's tolerance;
//! bandwidth-test's MB/s against the target's I/O model from the report), and its
//! cycle figure — the report's `run.task_span.cycles`, max end − min start of the PEs'
//! tasks, the vendor's timing convention — is the one the README's table gives.
//!
//! Every program runs at the vendor's problem size unless the README's table says otherwise;
//! each takes well under a second of simulation.

use std::process::Command;

mod support;
use support::{repo_root, temp_dir};

/// The README table's rows: program name → simulated cycles.
fn table_cycles() -> Vec<(String, u64)> {
    let readme = std::fs::read_to_string(repo_root().join("examples/csl/README.md"))
        .expect("examples/csl/README.md");
    let mut rows = Vec::new();
    for line in readme.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | [name](name/) | size | check | cycles | lines |
        if cells.len() < 6 || !cells[1].starts_with('[') {
            continue;
        }
        let name = cells[1]
            .trim_start_matches('[')
            .split(']')
            .next()
            .unwrap_or_default()
            .to_string();
        // "10,737" or "10,737 (107.4 per element)": the first number.
        let first = cells[4].split_whitespace().next().unwrap_or_default();
        let cycles = first.replace(',', "").parse::<u64>();
        if let Ok(cycles) = cycles {
            rows.push((name, cycles));
        }
    }
    rows
}

/// The program a table row names: `examples/csl/NAME/main.wse`, or for `FOLDER/FILE` (a
/// folder with several programs, like fft-1d-2d's inverse and 2D runs) `FOLDER/FILE.wse`.
fn program_file(name: &str) -> String {
    if name.contains('/') {
        format!("examples/csl/{name}.wse")
    } else {
        format!("examples/csl/{name}/main.wse")
    }
}

/// Runs the program of a table row, checks its result with the vendor's check and returns
/// the task span's cycles.
fn run_and_check(name: &str) -> Result<u64, String> {
    let dir = temp_dir(&name.replace('/', "-"));
    let out = dir.join("result.npy");
    let report = dir.join("report.json");
    let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(repo_root())
        .args(["run", "--color", "never"])
        .arg(program_file(name))
        .arg("--output")
        .arg(&out)
        .arg("--report")
        .arg(&report)
        .output()
        .expect("wsel runs");
    if !output.status.success() {
        return Err(format!(
            "wsel run failed:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let check = Command::new("python3")
        .current_dir(repo_root())
        .arg("examples/csl/csl.py")
        .args(["check", name])
        .arg(&out)
        .arg(&report)
        .output()
        .expect("python3 runs (CI installs requirements.txt)");
    if !check.status.success() {
        return Err(format!(
            "the NumPy check failed:\n{}{}",
            String::from_utf8_lossy(&check.stdout),
            String::from_utf8_lossy(&check.stderr)
        ));
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("the report"))
            .expect("JSON report");
    let span = &json["run"]["task_span"];
    let cycles = span["cycles"].as_u64().ok_or("no run.task_span.cycles")?;
    let (first, last) = (span["first_start"].as_u64(), span["last_end"].as_u64());
    if first.zip(last).map(|(f, l)| l - f) != Some(cycles) {
        return Err(format!("task_span is inconsistent: {span}"));
    }
    Ok(cycles)
}

#[test]
fn every_ported_csl_example_passes_its_check_with_the_tables_cycles() {
    let rows = table_cycles();
    assert!(rows.len() >= 10, "the README's table: {rows:?}");
    let mut failures = Vec::new();
    for (name, expected) in &rows {
        match run_and_check(name) {
            Ok(cycles) if cycles == *expected => {}
            Ok(cycles) => failures.push(format!(
                "{name}: {cycles} simulated cycles, the README's table says {expected}"
            )),
            Err(why) => failures.push(format!("{name}: {why}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every program folder under `examples/csl/` is in the table (so none escapes the test).
#[test]
fn every_csl_example_folder_is_in_the_table() {
    let rows = table_cycles();
    let mut folders: Vec<String> = std::fs::read_dir(repo_root().join("examples/csl"))
        .expect("examples/csl")
        .flatten()
        .filter(|e| e.path().join("main.wse").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    for folder in folders {
        assert!(
            rows.iter().any(|(name, _)| *name == folder),
            "examples/csl/{folder} is not in the README's table"
        );
    }
}

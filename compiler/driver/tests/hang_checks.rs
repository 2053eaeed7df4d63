//! The static hang checks, end to end: every `tests/hang/<code>-<what>.wse` is run twice with
//! the real `wsel` binary on a small input written here.
//!
//! 1. `wsel run`: its colour-free standard error and exit status must match
//!    `tests/hang/<name>.stderr` and report the code in the file's name.
//! 2. `wsel run --no-hang-checks`: the same program on the simulator, to show that what the
//!    check reports is a real hang. Its output must match `tests/hang/<name>.unchecked.stderr`
//!    and show what the file's `// unchecked:` line says: `deadlock` (the simulator's deadlock
//!    report, naming the waiting PEs or the router queues holding wavelets), `unrouted-recv`
//!    or `unrouted-send` (the simulator stops at a receive or send on a color with no route
//!    at that PE: on hardware, a receive that never completes or a send that never leaves;
//!    the mapper routes a neighbour port without partner only across the region's edge),
//!    `budget` (the program never ends: the cycle
//!    budget, a small one here, stops it), `livelock` (a PE keeps activating its own tasks
//!    with nothing open on the fabric: the simulator's livelock limit stops it), or `runs` (a
//!    warning-level check: the run succeeds).
//!
//! A missing expectation is written and the test fails so it gets reviewed;
//! `UPDATE_EXPECT=1 cargo test` rewrites them.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

mod support;
use support::{repo_root, temp_dir};

fn hang_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(repo_root().join("tests/hang"))
        .expect("tests/hang exists")
        .map(|entry| entry.expect("readable dir entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "wse"))
        .collect();
    files.sort();
    files
}

/// A minimal `.npy` writer: a little-endian f32 array of `shape`.
fn write_npy(path: &Path, shape: &[usize], values: &[f32]) {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape_text = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape_text}, }}");
    // Magic (6) + version (2) + header length (2) + header, padded to 64 with a newline.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for v in values {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    fs::write(path, bytes).expect("write .npy");
}

/// Runs `wsel run` on one program (by its path relative to the repository, so the output is
/// the same on every machine), with or without the hang checks.
fn run(relative: &Path, checks: bool) -> (String, Option<i32>) {
    let stem = relative.file_stem().expect("name").to_string_lossy();
    let dir = temp_dir(&format!("{stem}-{checks}"));
    let input = dir.join("x.npy");
    let values: Vec<f32> = (0..8).map(|i| i as f32).collect();
    write_npy(&input, &[1, 8], &values);
    let mut command = Command::new(env!("CARGO_BIN_EXE_wsel"));
    command
        .current_dir(repo_root())
        // No build artifact: the expected output is the build's own, whatever earlier runs left.
        .args(["run", "--no-cache", "--color", "never", "--input"])
        .arg(format!("x={}", input.display()))
        .arg("--output")
        .arg(dir.join("y.npy"))
        .arg(relative);
    if !checks {
        // A small budget: a program that never ends stops within a second.
        command.args(["--no-hang-checks", "--max-cycles", "100000"]);
    }
    let output = command.output().expect("wsel runs");
    let status = output.status.code();
    let shown = status.map_or("signal".to_string(), |c| c.to_string());
    (
        format!(
            "{}\n[exit status: {shown}]\n",
            String::from_utf8_lossy(&output.stderr).trim_end()
        ),
        status,
    )
}

/// Compares `observed` with the file at `expected_path`, writing it when missing or when
/// `UPDATE_EXPECT` is set; returns a failure message.
fn compare(expected_path: &Path, observed: &str) -> Option<String> {
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    match fs::read_to_string(expected_path) {
        Ok(expected) if expected == observed => None,
        Ok(_) if update => {
            fs::write(expected_path, observed).expect("write expectation");
            None
        }
        Ok(expected) => Some(format!(
            "{}: output differs\n--- expected\n{expected}\n--- observed\n{observed}",
            expected_path.display()
        )),
        Err(_) => {
            fs::write(expected_path, observed).expect("write expectation");
            (!update).then(|| {
                format!(
                    "{}: no expectation yet; wrote it, review it and run again",
                    expected_path.display()
                )
            })
        }
    }
}

/// What the program's `// unchecked: ...` line promises.
fn unchecked_kind(file: &Path) -> String {
    let text = fs::read_to_string(file).expect("readable program");
    text.lines()
        .find_map(|l| l.strip_prefix("// unchecked: "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("{}: no `// unchecked:` line", file.display()))
        .to_string()
}

#[test]
fn hang_checks_report_each_program_and_the_simulator_confirms_the_hang() {
    let files = hang_files();
    assert!(!files.is_empty());
    let mut failures = Vec::new();
    for file in files {
        let relative = file
            .strip_prefix(repo_root())
            .expect("under the repository")
            .to_path_buf();
        let name = file
            .file_stem()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let code = name.split('-').next().expect("a code prefix").to_string();
        let kind = unchecked_kind(&file);

        let (checked, status) = run(&relative, true);
        failures.extend(compare(&file.with_extension("stderr"), &checked));
        if !checked.contains(&format!("[{code}]")) {
            failures.push(format!(
                "{name}: `wsel run` does not report {code}:\n{checked}"
            ));
        }
        let expected_status = if kind == "runs" { 0 } else { 1 };
        if status != Some(expected_status) {
            failures.push(format!("{name}: `wsel run` exits with {status:?}"));
        }

        let (unchecked, status) = run(&relative, false);
        failures.extend(compare(
            &file.with_extension("unchecked.stderr"),
            &unchecked,
        ));
        if unchecked.contains(&format!("[{code}]")) {
            failures.push(format!("{name}: --no-hang-checks still reports {code}"));
        }
        let shows = match kind.as_str() {
            "deadlock" => {
                unchecked.contains("deadlock at cycle")
                    && (unchecked.contains("waits on color") || unchecked.contains("router ("))
            }
            "unrouted-recv" => unchecked.contains("does not deliver to the ramp"),
            "unrouted-send" => unchecked.contains("does not take wavelets from the ramp"),
            "budget" => unchecked.contains("after the budget of") || unchecked.contains("ran out"),
            "livelock" => unchecked.contains("tasks in a row that only activate tasks"),
            "runs" => status == Some(0),
            other => panic!("{name}: unknown `// unchecked: {other}`"),
        };
        if !shows || (kind != "runs" && status != Some(1)) {
            failures.push(format!(
                "{name}: without the checks the run should show `{kind}` (exit {status:?}):\n{unchecked}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_hang_code_but_the_mappers_own_has_a_program() {
    let names: Vec<String> = hang_files()
        .iter()
        .map(|f| f.file_name().expect("name").to_string_lossy().into_owned())
        .collect();
    // E0704 (two routes for one color at a router) cannot be written as a program: only a
    // faulty mapper produces it. wsel-hangcheck's unit tests build such placements by hand.
    let missing: Vec<&str> = wsel_hangcheck::codes()
        .iter()
        .map(|(code, _)| *code)
        .filter(|code| *code != wsel_hangcheck::E0704)
        .filter(|code| !names.iter().any(|n| n.starts_with(code)))
        .collect();
    assert!(
        missing.is_empty(),
        "hang codes without a program: {missing:?}"
    );
}

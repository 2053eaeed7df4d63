//! The `wsel` command under hostile conditions, one test per finding of the fuzzing pass of
//! issue #25: absurd flags, output paths that are devices or symlinks, bad data after a
//! successful simulation, a reader that closes the pipe. Every run here has a deadline, so a
//! hang fails the test instead of stalling the suite (a guard, not a measurement).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// How long any `wsel` run here may take before it counts as hung.
const DEADLINE: Duration = Duration::from_secs(120);

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn wsel() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_wsel"));
    command.current_dir(repo_root());
    command
}

/// Collects `child`'s output until the deadline; kills it and fails the test past it.
fn finish(child: Child, what: &str) -> Output {
    let pid = child.id();
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(child.wait_with_output()));
    match result.recv_timeout(DEADLINE) {
        Ok(output) => output.expect("wsel output"),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("`{what}` still running after {DEADLINE:?}");
        }
    }
}

/// Runs `wsel args...` to the end (within the deadline).
fn run(args: &[&str]) -> Output {
    let child = wsel()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("wsel starts");
    finish(child, &args.join(" "))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A fresh scratch folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wsel-robust-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

#[test]
fn a_thousand_threads_are_capped_at_the_cores() {
    // On 61cd1ce `--threads 1000` never finished: the simulator's threads meet at a barrier
    // every few cycles, and on 2 cores almost all of them wait for a core.
    let dir = scratch("threads");
    let out = dir.join("z.npy");
    let out = out.to_str().expect("utf-8 path");
    let output = run(&[
        "run",
        "--no-cache",
        "examples/axpy/main.wse",
        "--threads",
        "1000",
        "--output",
        out,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("note: simulating with")
            && stderr(&output).contains("one per core (`--threads 1000`)"),
        "{}",
        stderr(&output)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_long_misspelt_name_is_reported_without_a_suggestion() {
    // On 61cd1ce the suggestion compared the two 20,000-character names at the product of
    // their lengths: 14.7 s and 3.2 GB for one diagnostic.
    let dir = scratch("long-name");
    let name = "a".repeat(20_000);
    let file = dir.join("long.wse");
    std::fs::write(
        &file,
        format!("const {name}: u32 = 1;\nconst B: u32 = {name}b;\n"),
    )
    .expect("write source");
    let output = run(&["check", "--color", "never", file.to_str().expect("utf-8")]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stderr(&output);
    assert!(text.contains("[E0105] Error"), "{text}");
    assert!(!text.contains("did you mean"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

//! The `wsel` command under hostile conditions, one test per finding of the fuzzing pass of
//! issue #25: absurd flags, output paths that are devices or symlinks, bad data after a
//! successful simulation, a reader that closes the pipe. Every run here has a deadline, so a
//! hang fails the test instead of stalling the suite (a guard, not a measurement).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use wsel::tensor::Tensor;
use wsel_ir::kernel::ScalarTy;

mod support;
use support::{repo_root, temp_dir};

/// How long any `wsel` run here may take before it counts as hung.
const DEADLINE: Duration = Duration::from_secs(120);

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

#[test]
fn a_thousand_threads_are_capped_at_the_cores() {
    // On 61cd1ce `--threads 1000` never finished: the simulator's threads meet at a barrier
    // every few cycles, and on 2 cores almost all of them wait for a core.
    let dir = temp_dir("threads");
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
}

#[test]
fn a_long_misspelt_name_is_reported_without_a_suggestion() {
    // On 61cd1ce the suggestion compared the two 20,000-character names at the product of
    // their lengths: 14.7 s and 3.2 GB for one diagnostic.
    let dir = temp_dir("long-name");
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
}

#[test]
fn a_long_operator_chain_is_a_syntax_error_not_a_stack_overflow() {
    // Found by fuzzing (seed 2): `wsel check` overflowed its stack (SIGABRT) walking a chain
    // of 2,000 `*`s, a tree 2,000 deep, which the 4,096-token statement limit let through.
    let dir = temp_dir("operator-chain");
    let file = dir.join("chain.wse");
    let chain = " * COL".repeat(2_000);
    std::fs::write(
        &file,
        format!("const ROWS: u32 = 2;\nconst COL: u32 = 3;\nconst AREA: u32 = ROWS{chain};\n"),
    )
    .expect("write source");
    let output = run(&["check", "--color", "never", file.to_str().expect("utf-8")]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stderr(&output);
    assert!(text.contains("[E0007] Error"), "{text}");
    assert!(text.contains("nested more than 256 deep"), "{text}");
}

/// A `.npy` file of `words` with element type `elem` and shape `shape`.
fn write_npy(path: &Path, elem: ScalarTy, shape: &[u64], words: Vec<u32>) {
    let tensor = Tensor {
        elem,
        shape: shape.to_vec(),
        words,
    };
    wsel::tensor::write_npy_atomic(path, &tensor).expect("write .npy");
}

#[test]
fn a_run_with_bad_labels_writes_nothing() {
    // On 61cd1ce the labels were read after the result had been written: 24 of the fuzzing
    // pass's bad-labels runs failed with E0801-E0803 and left the output behind.
    let dir = temp_dir("labels");
    write_npy(&dir.join("float.npy"), ScalarTy::F32, &[8], vec![0; 8]);
    write_npy(&dir.join("short.npy"), ScalarTy::I32, &[3], vec![1, 2, 3]);
    let cases = [
        ("missing.npy", "E0801"),
        ("float.npy", "E0802"),
        ("short.npy", "E0803"),
    ];
    for (labels, code) in cases {
        let path = |name: &str| dir.join(name).to_str().expect("utf-8").to_string();
        let output = run(&[
            "run",
            "--no-cache",
            "--color",
            "never",
            "examples/axpy/main.wse",
            "--labels",
            &path(labels),
            "--output",
            &path("z.npy"),
            "--report",
            &path("r.json"),
            "--trace",
            &path("t.json"),
            "--map",
            &path("m.svg"),
        ]);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{labels}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).starts_with(&format!("error[{code}]")),
            "{labels}: {}",
            stderr(&output)
        );
        for written in ["z.npy", "r.json", "t.json", "m.svg"] {
            assert!(
                !dir.join(written).exists(),
                "{labels}: {written} was written"
            );
        }
    }
}

/// A character device that fails every write like `/dev/full`: a node of its own in `dir`
/// when this process may create one (as root), so that a failing test cannot replace the
/// system's; else `/dev/full` itself.
fn full_device(dir: &Path) -> PathBuf {
    let node = dir.join("full");
    let made = Command::new("mknod")
        .arg(&node)
        .args(["c", "1", "7"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if made {
        node
    } else {
        PathBuf::from("/dev/full")
    }
}

#[test]
fn a_full_device_is_a_write_error_and_stays_a_device() {
    // On 61cd1ce `--output /dev/full` and `--report /dev/full` exited 0: the result went to a
    // temporary file renamed over the device node, which became a regular file.
    use std::os::unix::fs::FileTypeExt;
    let dir = temp_dir("full");
    let full = full_device(&dir);
    let full = full.to_str().expect("utf-8");
    let out = dir.join("z.npy");
    let out = out.to_str().expect("utf-8");
    let cases: [&[&str]; 2] = [&["--output", full], &["--output", out, "--report", full]];
    for flags in cases {
        let mut args = vec![
            "run",
            "--no-cache",
            "--color",
            "never",
            "examples/axpy/main.wse",
        ];
        args.extend(flags);
        let output = run(&args);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains("error[E0804]: cannot write")
                && stderr(&output).contains("No space left on device"),
            "{args:?}: {}",
            stderr(&output)
        );
        let kind = std::fs::metadata(full).expect("the device").file_type();
        assert!(kind.is_char_device(), "{full} is no longer a device");
        assert!(
            !dir.join("z.npy").exists(),
            "{args:?}: the result was written"
        );
    }
}

#[test]
fn an_output_symlink_is_written_through() {
    // On 61cd1ce the temporary file was renamed over the link, which became a regular file.
    let dir = temp_dir("symlink");
    std::fs::create_dir_all(dir.join("results")).expect("folder");
    std::os::unix::fs::symlink("results/z.npy", dir.join("latest.npy")).expect("symlink");
    let link = dir.join("latest.npy");
    let output = run(&[
        "run",
        "--no-cache",
        "examples/axpy/main.wse",
        "--output",
        link.to_str().expect("utf-8"),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let meta = std::fs::symlink_metadata(&link).expect("the link");
    assert!(meta.file_type().is_symlink(), "the link was replaced");
    let written = std::fs::read(dir.join("results/z.npy")).expect("written through the link");
    assert!(written.starts_with(b"\x93NUMPY"), "not a .npy file");
}

/// Starts `wsel args...` with its standard output a pipe that is already closed, as when
/// `| head -1` has taken its line, and returns how it ended.
fn run_into_closed_pipe(args: &[&str]) -> Output {
    let mut child = wsel()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("wsel starts");
    drop(child.stdout.take());
    finish(child, &args.join(" "))
}

#[test]
fn a_closed_standard_output_ends_quietly() {
    // On 61cd1ce `wsel map … | head -1` panicked: "failed printing to stdout: Broken pipe".
    let cases: [&[&str]; 3] = [
        &["map", "examples/digits/main.wse"],
        &["map", "examples/digits/main.wse", "--format", "json"],
        &["check", "--format", "json", "examples/digits/main.wse"],
    ];
    for args in cases {
        let output = run_into_closed_pipe(args);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            stderr(&output)
        );
        assert_eq!(stderr(&output), "", "{args:?}");
    }
}

/// An LSP message with its header.
fn lsp_frame(body: &str) -> String {
    format!("Content-Length: {}\r\n\r\n{body}", body.len())
}

/// Runs `wsel lsp`, sends `messages` and keeps its standard input open, as editors do.
fn lsp_session(messages: &[&str]) -> Output {
    use std::io::Write;
    let mut child = wsel()
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("wsel lsp starts");
    let mut stdin = child.stdin.take().expect("stdin");
    for body in messages {
        stdin
            .write_all(lsp_frame(body).as_bytes())
            .expect("send a message");
    }
    stdin.flush().expect("flush");
    let output = finish(child, "wsel lsp");
    drop(stdin);
    output
}

#[test]
fn the_language_server_exits_on_exit() {
    // On 61cd1ce the server ignored `exit` and ran until its input closed.
    let initialize =
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#;
    let initialized = r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
    let shutdown = r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#;
    let exit = r#"{"jsonrpc":"2.0","method":"exit"}"#;
    let clean = lsp_session(&[initialize, initialized, shutdown, exit]);
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
    let answers = String::from_utf8_lossy(&clean.stdout);
    assert!(
        answers.contains(r#""id":2"#),
        "shutdown answered: {answers}"
    );
    // Without `shutdown` first, the specification asks for exit code 1.
    let abrupt = lsp_session(&[initialize, initialized, exit]);
    assert_eq!(abrupt.status.code(), Some(1), "{}", stderr(&abrupt));
}

/// A one-PE layer whose `poll` task activates itself four billion times after the PE has
/// received and sent its sample: nothing on the fabric can reach it any more. The activation
/// is conditional, so the static check E0705 (a cycle of unconditional activations) does not
/// see it.
const SPINNER: &str = r#"
kernel spinner(n: u32) {
    var v: [f32; n];
    var polls: u32 = 0;
    in  xs: stream<f32> from north;
    out ys: stream<f32> to south;
    task main() { recv(xs, v[0..n]) then got; }
    task got() {
        send(ys, v[0..n]);
        activate poll;
    }
    task poll() {
        polls += 1;
        if polls < 4000000000 {
            activate poll;
        }
    }
}

layer spun(x: f32[B, N]) -> y: f32[B, N] {
    cost { flops = N; weights = 0; activations = 8 * N; }
    pipelined, streaming on [1, 1] {
        run spinner(n = N);
        bind x to port xs;
        bind y to port ys;
    }
}

model m(x: f32[B, 4]) -> f32[B, 4] {
    return spun(x);
}
"#;

#[test]
fn a_task_activating_itself_is_stopped_as_a_livelock() {
    // On 61cd1ce only the cycle budget stopped it: 48 s for the default billion cycles.
    // Here the budget is 10 million cycles, so the livelock limit is 10,000 tasks (on
    // 61cd1ce: the budget, after about 2 million tasks).
    let dir = temp_dir("livelock");
    std::fs::write(dir.join("main.wse"), SPINNER).expect("write program");
    write_npy(&dir.join("x.npy"), ScalarTy::F32, &[1, 4], vec![0; 4]);
    let text = |name: &str| dir.join(name).to_str().expect("utf-8").to_string();
    let output = run(&[
        "run",
        "--no-cache",
        "--color",
        "never",
        &text("main.wse"),
        "--input",
        &format!("x={}", text("x.npy")),
        "--output",
        &text("y.npy"),
        "--max-cycles",
        "10000000",
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let expected = "error[E0806]: the program failed on the fabric: the PE ran 10000 tasks in a \
                    row that only activate tasks, with no receive or send of its own open";
    assert!(stderr(&output).starts_with(expected), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("task `poll`"),
        "{}",
        stderr(&output)
    );
    assert!(!dir.join("y.npy").exists());
}

/// The `dev` target with the PEs at `dead` dead, written to `dir`; its path.
fn dev_with_dead_pes(dir: &Path, name: &str, dead: &[(u32, u32)]) -> String {
    let mut target = wsel_target::Target::dev();
    target.name = name.to_string();
    for &(x, y) in dead {
        target.defects.add_dead_pe(wsel_target::Coord::new(x, y));
    }
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, target.to_toml_string()).expect("write target");
    path.to_str().expect("utf-8").to_string()
}

/// Runs examples/digits on `target`, unfused; its standard output and result bytes.
fn digits_on(dir: &Path, target: &str) -> (String, Vec<u8>) {
    let out = dir.join("probs.npy");
    let output = run(&[
        "run",
        "--no-cache",
        "examples/digits/main.wse",
        "--target",
        target,
        // Every layer a region of its own, as when these defects were chosen: fused, digits
        // has two regions fewer and keeps its sizes around the dead column below.
        "--no-fuse",
        "--output",
        out.to_str().expect("utf-8"),
    ]);
    assert!(output.status.success(), "{target}: {}", stderr(&output));
    let bytes = std::fs::read(&out).expect("the result");
    (String::from_utf8_lossy(&output.stdout).into_owned(), bytes)
}

#[test]
fn defects_move_regions_without_changing_results_or_say_so() {
    // Found by fuzzing 61cd1ce: with 5% of `dev`'s PEs dead (13 at random), digits chose other
    // region sizes, so other tile shapes and sums in another order: its probabilities differed
    // by up to 1.1e-6, and nothing said so.
    let dir = temp_dir("defects");
    let (_, clean) = digits_on(&dir, "dev");
    // A dead corner, away from where digits maps and routes: the defect-free sizes are kept
    // and the result is bit for bit the same.
    let corner: Vec<(u32, u32)> = (13..16).flat_map(|x| (0..3).map(move |y| (x, y))).collect();
    let (report, bytes) = digits_on(&dir, &dev_with_dead_pes(&dir, "kept", &corner));
    assert!(bytes == clean, "same sizes, same numbers");
    assert!(!report.contains("note:"), "{report}");
    // A dead column leaves no row of ten live PEs: the softmax's 1 × 10 region cannot be
    // kept, and the report says so.
    let column: Vec<(u32, u32)> = (0..16).map(|y| (7, y)).collect();
    let (report, _) = digits_on(&dir, &dev_with_dead_pes(&dir, "moved", &column));
    assert!(
        report.contains(
            "note: the region sizes chosen on the same fabric without defects could not be placed"
        ) && report.contains("softmax#1 1 × 10 → ")
            && report.contains("results may differ"),
        "{report}"
    );
}

#[test]
fn a_deeply_nested_npy_header_is_refused_at_once() {
    // Found by fuzzing: npyz parses a `.npy` header in time exponential in its bracket
    // nesting (12 levels 7.5 s, 14 a minute); on 61cd1ce this 16-deep header ran past the
    // deadline.
    let dir = temp_dir("npy-header");
    let header = format!(
        "{}'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), }}",
        "{".repeat(16)
    );
    let header = format!("{header:<126}\n");
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(&[0; 16]);
    let file = dir.join("x.npy");
    std::fs::write(&file, bytes).expect("write .npy");
    let output = run(&[
        "run",
        "--no-cache",
        "--color",
        "never",
        "tests/ui/E0801-input-file-missing.wse",
        "--input",
        &format!("x={}", file.display()),
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("error[E0801]")
            && stderr(&output).contains("its header nests brackets more than 6 deep"),
        "{}",
        stderr(&output)
    );
}

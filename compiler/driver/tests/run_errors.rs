//! Run-time errors stop `wsel run` with a message naming the layer, PE, task, array, index and
//! bound — never a host crash, never a partial output file. Three shapes of out-of-range
//! access: a constant index, a loop running past the end, a slice whose end is too far; and a
//! task that never ends, stopped by the cycle budget.

mod support;

use std::path::Path;
use std::process::Command;
use support::{Scratch, temp_dir};

use wsel::tensor::{Tensor, write_npy_atomic};
use wsel_ir::kernel::ScalarTy;

/// A one-PE layer whose `step` task runs `statement` after receiving `x[0..n]`.
fn program(statement: &str) -> String {
    format!(
        r#"
kernel poke(n: u32) {{
    var x: [f32; n];
    var y: [f32; n];
    in  xs: stream<f32> from north;
    out ys: stream<f32> to south;
    task main() {{ recv(xs, x[0..n]) then step; }}
    task step() {{
        {statement}
        send(ys, y[0..n]);
    }}
}}

layer poke_layer(x: f32[B, N]) -> y: f32[B, N] {{
    cost {{ flops = N; weights = 0; activations = 8 * N; }}
    pipelined, streaming on [1, 1] {{
        run poke(n = N);
        bind x to port xs;
        bind y to port ys;
    }}
}}

model m(x: f32[B, 4]) -> f32[B, 4] {{
    return poke_layer(x);
}}

run m {{
    input x = "x.npy";
    output = "out/y.npy";
}}
"#
    )
}

fn setup(name: &str, statement: &str) -> Scratch {
    let dir = temp_dir(name);
    std::fs::write(dir.join("main.wse"), program(statement)).expect("write program");
    let x = Tensor {
        elem: ScalarTy::F32,
        shape: vec![1, 4],
        words: [1.0f32, 2.0, 3.0, 4.0]
            .iter()
            .map(|v| v.to_bits())
            .collect(),
    };
    write_npy_atomic(&dir.join("x.npy"), &x).expect("write x");
    dir
}

fn run_failing(dir: &Path, backend: &str, extra: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
        // `--no-cache`: the error alone on standard error, without a note about the artifact
        // of the other backend's run.
        .args([
            "run",
            "--no-cache",
            "--color",
            "never",
            "--backend",
            backend,
        ])
        .args(extra)
        .arg(dir.join("main.wse"))
        .output()
        .expect("wsel runs");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(!dir.join("out/y.npy").exists(), "no output after an error");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn check(name: &str, statement: &str, expected: &str) {
    check_with(name, statement, &[], expected);
}

fn check_with(name: &str, statement: &str, extra: &[&str], expected: &str) {
    let dir = setup(name, statement);
    for backend in ["cranelift", "interp"] {
        let stderr = run_failing(&dir, backend, extra);
        assert!(stderr.contains(expected), "{backend}: {stderr}");
        assert!(stderr.starts_with("error[E0806]"), "{backend}: {stderr}");
        assert!(
            stderr.contains("layer `poke_layer#1` (kernel `poke`)")
                && stderr.contains("task `step`"),
            "{backend}: {stderr}"
        );
    }
}

#[test]
fn a_constant_index_past_the_end() {
    // `n` is a kernel parameter, so the front end cannot see that `y[n]` is out of range.
    check(
        "const",
        "y[n] = 1.0;",
        "index 4 is out of bounds for array `y` of length 4",
    );
}

#[test]
fn a_loop_running_past_the_end() {
    check(
        "loop",
        "for i in 0..n + 1 { y[i] = 2.0; }",
        "index 4 is out of bounds for array `y` of length 4",
    );
}

#[test]
fn a_slice_ending_past_the_end() {
    // The slice y[1..5] of an array of 4: the first element past the end, 4, is reported.
    check(
        "slice",
        "y[1..n + 1] = x[0..n];",
        "index 4 is out of bounds for array `y` of length 4",
    );
}

#[test]
fn integer_division_by_zero_is_named() {
    check(
        "div",
        "var z: u32 = n - 4; y[0] = (n / z) as f32;",
        "integer division by zero (dividend 4)",
    );
}

#[test]
fn an_endless_loop_stops_at_the_cycle_budget() {
    // The loop never ends (`n` is 4); its iterations check the budget, so the run stops
    // instead of hanging, on the compiled code and the interpreter alike.
    check_with(
        "endless",
        "while n > 0 { y[0] += 1.0; }",
        &["--max-cycles", "100000"],
        "the task was still running when the budget of 100000 cycles ran out: an endless loop? (`--max-cycles` raises the budget)",
    );
}

#[test]
fn slices_of_different_lengths_at_run_time() {
    // `m` is a task-local, so the front end cannot compare the lengths. On 61cd1ce the
    // statement read past the operand slice (a run succeeded with its wrong result, or
    // reported "index 8 is out of bounds" when the operand's array ended first).
    check(
        "lengths",
        "var m: u32 = n - 1; y[0..n] = 2.0 * x[0..m];",
        "a slice of 3 elements is used in a vector statement whose slice assigned has 4 elements",
    );
}

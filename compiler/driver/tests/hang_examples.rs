//! No false alarms: the static hang checks pass every example and every standard-library
//! layer, in both execution modes and at several batch sizes, with `wsel map` (which runs the
//! checks on the placement it prints). A false positive would block a correct program, so
//! this test covers every kernel the toolchain ships.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

mod support;
use support::{repo_root, temp_dir};

/// Runs `wsel map` with `args`; returns its exit code and standard error.
fn map(file: &Path, args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(repo_root())
        .args(["map", "--color", "never"])
        .arg(file)
        .args(args)
        .output()
        .expect("wsel runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Maps `file` in every mode and at `batches`, failing on any hang-check diagnostic; the
/// `auto` mode at the file's own batch must map. Returns the failures.
fn check_file(file: &Path, batches: &[&str]) -> Vec<String> {
    let mut failures = Vec::new();
    let (status, stderr) = map(file, &[]);
    if status != Some(0) {
        failures.push(format!("{}: `wsel map` fails:\n{stderr}", file.display()));
    }
    for mode in ["pipelined", "streaming", "auto"] {
        for batch in batches {
            let (_, stderr) = map(file, &["--mode", mode, "--batch", batch]);
            // A mode may not map (SRAM, colors); it must never fail a hang check.
            if stderr.contains("[E07") {
                failures.push(format!(
                    "{} --mode {mode} --batch {batch}: a hang check fires:\n{stderr}",
                    file.display()
                ));
            }
        }
    }
    failures
}

#[test]
fn every_example_passes_the_hang_checks() {
    let mut examples: Vec<PathBuf> = fs::read_dir(repo_root().join("examples"))
        .expect("examples folder")
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("main.wse"))
        .filter(|p| p.exists())
        .collect();
    examples.sort();
    assert!(examples.len() >= 8, "{examples:?}");
    let mut failures = Vec::new();
    for example in examples {
        let relative = example
            .strip_prefix(repo_root())
            .expect("under the repository")
            .to_path_buf();
        failures.extend(check_file(&relative, &["1", "3"]));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// One model per standard-library layer (and the `copies8` layer that the library's comments
/// give for `row_broadcast`), shaped so that the regions have several rows and columns.
const STD_PROGRAMS: &[(&str, &str)] = &[
    (
        "nn",
        "import std.nn.{dense, relu, softmax};
model mlp(x: f32[B, 64]) -> f32[B, 10] {
    param w1: f32[64, 32];
    param b1: f32[32];
    param w2: f32[32, 10];
    param b2: f32[10];
    return softmax(dense(relu(dense(x, w1, b1)), w2, b2));
}",
    ),
    (
        "wide_softmax",
        "import std.nn.{softmax};
model m(x: f32[B, 96]) -> f32[B, 96] { return softmax(x); }",
    ),
    (
        "reduce",
        "import std.collectives.{reduce_sum};
model m(x: f32[B, 8, 16]) -> f32[B, 16] { return reduce_sum(x); }",
    ),
    (
        "allreduce",
        "import std.collectives.{allreduce_sum};
model m(x: f32[B, 8, 16]) -> f32[B, 8, 16] { return allreduce_sum(x); }",
    ),
    (
        "broadcast_add",
        "import std.collectives.{broadcast_add};
model m(x: f32[B, 8, 16], v: f32[B, 16]) -> f32[B, 8, 16] { return broadcast_add(x, v); }",
    ),
    (
        "copies",
        "import std.collectives.{row_broadcast};
layer copies8(x: f32[B, N]) -> y: f32[B, 8, N] {
    cost { flops = 0; weights = 0; activations = 4 * (N + 8 * N); }
    pipelined, streaming on [1, C] where 8 % C == 0 {
        run row_broadcast(p = 8 / C, n = N, samples = B);
        bind x to port xs;
        bind y to port ys split [cols, _];
    }
}
model m(x: f32[B, 16]) -> f32[B, 8, 16] { return copies8(x); }",
    ),
    (
        "jacobi",
        "import std.stencil.{jacobi};
model m(x: f32[B, 16, 16]) -> f32[B, 16, 16] { return jacobi(x); }",
    ),
    (
        "transformer_elementwise",
        "import std.nn.{gelu, add, layernorm};
model m(x: f32[B, 37]) -> f32[B, 37] {
    param g: f32[37];
    param b: f32[37];
    return layernorm(add(x, gelu(x)), g, b, eps = 0.001);
}",
    ),
    // Context 1 (one row of positions, one for attention), so that every batch of the test
    // has whole sequences.
    (
        "embedding",
        "import std.nn.{embedding};
model m(ids: f32[B, 1]) -> f32[B, 19] {
    param table: f32[13, 19];
    param pos: f32[1, 19];
    return embedding(ids, table, pos);
}",
    ),
    (
        "attention",
        "import std.nn.{attention};
model m(q: f32[B, 24], k: f32[B, 24], v: f32[B, 24]) -> f32[B, 24] {
    return attention(q, k, v, heads = 4, context = 1);
}",
    ),
    (
        "attention_full",
        "import std.nn.{attention};
model m(q: f32[B, 24], k: f32[B, 24], v: f32[B, 24]) -> f32[B, 24] {
    return attention(q, k, v, heads = 2, context = 1, causal = false);
}",
    ),
];

#[test]
fn every_standard_library_layer_passes_the_hang_checks() {
    let dir = temp_dir("std");
    let mut failures = Vec::new();
    for (name, text) in STD_PROGRAMS {
        let file = dir.join(format!("{name}.wse"));
        fs::write(&file, text).expect("write program");
        failures.extend(check_file(&file, &["1", "2", "5"]));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Attention whose streamed sequences span several columns (context 8 over batches of one to
/// four sequences), causal and full, with whole heads per row and a head over several rows:
/// the spanning tasks pass the checks, and the tasks only whole sequences per column run are
/// not reported as never activated (E0703), nor the spanning ones when those run.
#[test]
fn attention_over_columns_passes_the_hang_checks() {
    let dir = temp_dir("span");
    let mut failures = Vec::new();
    for causal in ["true", "false"] {
        let file = dir.join(format!("span_{causal}.wse"));
        let text = format!(
            "import std.nn.{{attention}};
model m(q: f32[B, 8], k: f32[B, 8], v: f32[B, 8]) -> f32[B, 8] {{
    return attention(q, k, v, heads = 2, context = 8, causal = {causal});
}}

run m {{
    input q = \"q.npy\";
    input k = \"k.npy\";
    input v = \"v.npy\";
    batch = 16;
}}"
        );
        fs::write(&file, text).expect("write program");
        failures.extend(check_file(&file, &["8", "16", "32"]));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Attention's three backward layers on the forward's regions, causal and full: context 8
/// over batches of one to four sequences (a sequence over several columns, a head over
/// several rows; both passes, keys and values going one way, then queries the other), and
/// context 17 (whole sequences per column, a head over several rows, queries in chunks) pass
/// the checks.
#[test]
fn attention_backward_over_columns_passes_the_hang_checks() {
    let dir = temp_dir("spanbw");
    let mut failures = Vec::new();
    let shapes: [(u32, u32, &[&str]); 2] = [(8, 8, &["8", "16", "32"]), (24, 17, &["17", "34"])];
    for (n, context, batches) in shapes {
        for which in ["q", "k", "v"] {
            for causal in ["true", "false"] {
                let file = dir.join(format!("span_{n}_{which}_{causal}.wse"));
                let text = format!(
                    "import std.nn.{{attention_backward_{which}}};
model m(q: f32[B, {n}], k: f32[B, {n}], v: f32[B, {n}], dy: f32[B, {n}]) -> f32[B, {n}] {{
    return attention_backward_{which}(q, k, v, dy, heads = 2, context = {context}, causal = {causal});
}}

run m {{
    input q = \"q.npy\";
    input k = \"k.npy\";
    input v = \"v.npy\";
    input dy = \"dy.npy\";
    batch = {batch};
}}",
                    batch = batches[0]
                );
                fs::write(&file, text).expect("write program");
                failures.extend(check_file(&file, batches));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The synchronous-slide port (`examples/fidelity/synchronous_slide.wse`: two switched lines
/// whose routers start at three different positions and are advanced by control wavelets)
/// passes the switched ports' checks at every width of the CS-2's file: every receive has a
/// sender before it on its row and a router that can reach its delivering position, every
/// send a receiver after it and a router that takes from the ramp.
#[test]
fn the_synchronous_slide_passes_the_hang_checks() {
    let dir = temp_dir("slide");
    let port = repo_root().join("examples/fidelity/synchronous_slide.wse");
    fs::copy(&port, dir.join("synchronous_slide.wse")).expect("copy the port");
    let mut failures = Vec::new();
    for width in (8..=32).step_by(4) {
        let file = dir.join(format!("slide_{width}.wse"));
        let text = format!(
            "import synchronous_slide.{{synchronous_slide}};
model m(x: f32[B, {width}]) -> f32[B, {width}] {{
    return synchronous_slide(x, n = 11);
}}"
        );
        fs::write(&file, text).expect("write program");
        let (status, stderr) = map(&file, &["--target", "wse2", "--batch", "1"]);
        if status != Some(0) || stderr.contains("[E07") {
            failures.push(format!("W = {width}: {stderr}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

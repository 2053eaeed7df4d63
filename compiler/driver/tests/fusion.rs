//! Fusion in pipelined inference (issue #23, `docs/mapping.md` §4, "Fusion"), proven by
//! execution: a `relu` or `gelu` that alone reads a `dense`'s result runs in the dense's
//! region, one stage fewer each, with results within 1e-6 of `--no-fuse` and 1e-5 of a
//! float64 NumPy reference (`tests/reference/fusion.py`); a dense whose result another
//! layer reads too keeps its own stage.

use std::path::Path;

mod support;
use support::{off_reference, read_f32, reference_data, wsel_ok};

/// `relu(dense)`, then `gelu(dense)`, then a plain `dense` as the model's result.
const CHAIN: &str = "    let h1 = relu(dense(x, w1, b1));\n    \
                     let h2 = gelu(dense(h1, w2, b2));\n    return dense(h2, w3, b3);\n";

/// A dense whose result both `relu` and `add` read.
const SKIP: &str = "    let h = dense(x, w1, b1);\n    return add(relu(h), h);\n";

/// The program of a model with `layers` dense layers over 16 features.
fn program(layers: usize, body: &str) -> String {
    let mut src =
        "import std.nn.{dense, relu, gelu, add};\n\nmodel m(x: f32[B, 16]) -> f32[B, 16] {\n"
            .to_string();
    for i in 1..=layers {
        src += &format!("    param w{i}: f32[16, 16] from \"w{i}.npy\";\n");
        src += &format!("    param b{i}: f32[16] from \"b{i}.npy\";\n");
    }
    src + body + "}\n"
}

/// A scratch folder with `name`'s data and reference (`tests/reference/fusion.py`) and its
/// program as `m.wse`.
fn prepare(name: &str, layers: usize, body: &str) -> support::Scratch {
    let dir = reference_data("fusion.py", name);
    std::fs::write(dir.join("m.wse"), program(layers, body)).expect("write the model");
    dir
}

/// The names of the placed layers of `wsel map` on `target` (with `extra` flags), in order.
fn stages(dir: &Path, target: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["map", "m.wse", "--mode", "pipelined", "--target", target];
    args.extend(["--copies", "1", "--format", "json"]);
    args.extend(extra);
    let json: serde_json::Value =
        serde_json::from_slice(&wsel_ok(dir, &args).stdout).expect("the placement as JSON");
    json["layers"]
        .as_array()
        .expect("placed layers")
        .iter()
        .map(|l| l["name"].as_str().expect("a name").to_string())
        .collect()
}

/// Runs the model pipelined on `target` (with `extra` flags) into `out`: the result's values.
fn run(dir: &Path, target: &str, out: &str, extra: &[&str]) -> Vec<f32> {
    let mut args = vec!["run", "m.wse", "--no-cache", "--mode", "pipelined"];
    args.extend(["--target", target, "--input", "x=x.npy", "--output", out]);
    args.extend(extra);
    wsel_ok(dir, &args);
    read_f32(&dir.join(out))
}

/// On `dev` and `wse2` the chain maps as three stages (two fused), five with `--no-fuse`; its
/// result is the unfused one to 1e-6 (bit for bit where the sizes agree) and within 1e-5 of
/// the reference (three layers of 16 float32 products and gelu's float32 tanh: ~1e-6).
#[test]
fn a_relu_or_gelu_that_alone_reads_a_dense_runs_in_its_region() {
    let dir = prepare("chain", 3, CHAIN);
    for target in ["dev", "wse2"] {
        let fused = stages(&dir, target, &[]);
        assert_eq!(
            fused,
            ["dense#1+relu#1", "dense#2+gelu#1", "dense#3"],
            "{target}"
        );
        let apart = stages(&dir, target, &["--no-fuse"]);
        assert_eq!(apart.len(), 5, "{target}: {apart:?}");
        let y = run(&dir, target, "fused.npy", &[]);
        let y_apart = run(&dir, target, "apart.npy", &["--no-fuse"]);
        // The fused dense may take other rows than apart (its relu's columns no longer
        // constrain it), and its column sums then add in another order: a few ulps.
        for (a, b) in y.iter().zip(&y_apart) {
            assert!(
                (a - b).abs() <= 1e-6 * b.abs().max(1.0),
                "{target}: {a} vs {b}"
            );
        }
        for got in [&y, &y_apart] {
            let e = off_reference(&dir, got);
            assert!(e <= 1e-5, "{target}: {e}");
        }
    }
}

/// A dense whose result `add` reads beside `relu` keeps its stage, and so does the relu.
#[test]
fn a_dense_whose_result_another_layer_also_reads_is_not_fused() {
    let dir = prepare("skip", 1, SKIP);
    assert_eq!(stages(&dir, "dev", &[]), ["dense#1", "relu#1", "add#1"]);
    let e = off_reference(&dir, &run(&dir, "dev", "y.npy", &[]));
    assert!(e <= 1e-5, "{e}");
}

//! A layer's result read by several layers in pipelined mode (issues #21 and #23,
//! `docs/mapping.md` §4, "Fan-out"), proven by execution: a residual block after a relu
//! (`add(h, dense(h))`, whose skip starts at a layer's result, not at the model's input), one
//! tensor on both of `add`'s ports (`add(h, h)`, fed through a relay), and chains of two
//! blocks, each run pipelined on `dev` and on `wse2` against a float64 NumPy reference
//! (`tests/reference/fan_out.py`). Before the fix, every one of them failed to map (E0603).

use std::path::Path;

mod support;
use support::{off_reference, read_f32, reference_data, wsel_ok};

/// The models of `tests/reference/fan_out.py`: name, number of dense layers, body.
const MODELS: [(&str, usize, &str); 4] = [
    (
        "block",
        2,
        "    let h = relu(dense(x, w1, b1));\n    return add(h, dense(h, w2, b2));\n",
    ),
    (
        "twice",
        1,
        "    let h = relu(dense(x, w1, b1));\n    return add(h, h);\n",
    ),
    (
        "two_blocks",
        4,
        "    let h1 = relu(dense(x, w1, b1));\n    let s = add(h1, dense(h1, w2, b2));\n    \
         let h2 = relu(dense(s, w3, b3));\n    return add(h2, dense(h2, w4, b4));\n",
    ),
    (
        "mixed",
        3,
        "    let h1 = relu(dense(x, w1, b1));\n    let s = add(h1, dense(h1, w2, b2));\n    \
         let h2 = relu(dense(s, w3, b3));\n    return add(h2, h2);\n",
    ),
];

/// The program of a model with `layers` dense layers over 16 features.
fn program(layers: usize, body: &str) -> String {
    let mut src =
        "import std.nn.{dense, relu, add};\n\nmodel m(x: f32[B, 16]) -> f32[B, 16] {\n".to_string();
    for i in 1..=layers {
        src += &format!("    param w{i}: f32[16, 16] from \"w{i}.npy\";\n");
        src += &format!("    param b{i}: f32[16] from \"b{i}.npy\";\n");
    }
    src + body + "}\n"
}

/// Runs `model` pipelined on `target`: the report, and the largest difference from the
/// reference relative to max(1, |reference|).
fn run(dir: &Path, target: &str) -> (String, f64) {
    let out = format!("y-{target}.npy");
    let args = [
        "run",
        "m.wse",
        "--no-cache",
        "--mode",
        "pipelined",
        "--target",
        target,
        "--input",
        "x=x.npy",
        "--output",
        &out,
    ];
    let report = String::from_utf8_lossy(&wsel_ok(dir, &args).stdout).into_owned();
    (report, off_reference(dir, &read_f32(&dir.join(&out))))
}

/// Every model maps and runs pipelined on `dev` and `wse2`, its result within 1e-5 of the
/// float64 reference (relative to max(1, |y|)): each output is a sum of 16 float32 products
/// per dense layer through at most four layers, ~1e-6 at most (measured: 4.3e-7 on
/// `two_blocks`). `add(h, h)` gets a relay (`relay#1` in the report); the others do not.
#[test]
fn results_read_by_several_layers_run_pipelined_like_numpy() {
    for (name, layers, body) in MODELS {
        let dir = reference_data("fan_out.py", name);
        std::fs::write(dir.join("m.wse"), program(layers, body)).expect("write the model");
        for target in ["dev", "wse2"] {
            let (report, error) = run(&dir, target);
            assert!(error <= 1e-5, "{name} on {target}: {error}\n{report}");
            let relays = name == "twice" || name == "mixed";
            assert_eq!(report.contains("relay#1"), relays, "{name}: {report}");
        }
    }
}

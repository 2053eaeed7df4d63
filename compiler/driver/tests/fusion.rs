//! Fusion in pipelined inference (issue #23, `docs/mapping.md` §4, "Fusion"), proven by
//! execution: a `relu` or `gelu` that alone reads a `dense`'s result runs in the dense's
//! region, one stage fewer each, with results within 1e-5 of a float64 NumPy reference
//! (`tests/reference/fusion.py`) and bit for bit `--no-fuse`'s where the dense has the same
//! rows; a dense whose result another layer reads too keeps its own stage; the fused and the
//! unfused mapping, the one estimated faster is kept; and a fused graph that does not place
//! maps unfused.

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

/// The placed layers of `wsel map --format json` on `target` (with `extra` flags), in order.
fn placed(dir: &Path, target: &str, extra: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec!["map", "m.wse", "--mode", "pipelined", "--target", target];
    args.extend(["--copies", "1", "--format", "json"]);
    args.extend(extra);
    let json: serde_json::Value =
        serde_json::from_slice(&wsel_ok(dir, &args).stdout).expect("the placement as JSON");
    json["layers"].as_array().expect("placed layers").clone()
}

/// The names of the placed layers (see [`placed`]).
fn stages(dir: &Path, target: &str, extra: &[&str]) -> Vec<String> {
    let layers = placed(dir, target, extra);
    let name = |l: &serde_json::Value| l["name"].as_str().expect("a name").to_string();
    layers.iter().map(name).collect()
}

/// The logical rows of the placed layers (see [`placed`]).
fn rows(dir: &Path, target: &str, extra: &[&str]) -> Vec<u64> {
    let layers = placed(dir, target, extra);
    layers
        .iter()
        .map(|l| l["rows"].as_u64().expect("rows"))
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
/// result is within 1e-5 of the reference (three layers of 16 float32 products and gelu's
/// float32 tanh: ~1e-6) and within 1e-6 of the unfused one, relative: the search gives the
/// fused denses other rows than apart, where the relu's and gelu's columns constrained them
/// (rows of dense#1, #2, #3 fused / apart at this commit: dev 3, 9, 8 / 6, 8, 9; wse2 4, 16,
/// 16 / 16, 16, 16), so their column sums add in another order — a few ulps (bit for bit on
/// the same rows: the next test).
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

/// A program of `relu(lin(x, w1, b1))` over 16 features: `lin` is std.nn's pipelined `dense`
/// and `lin_relu` its twin, each on regions whose size satisfies its `where`.
fn pair_program(lin_where: &str, twin_where: &str) -> String {
    let layer = |name: &str, conditions: &str, act: u32| {
        format!(
            "layer {name}(x: f32[B, N], param w: f32[N, M], param b: f32[M]) -> y: f32[B, M] {{
    cost {{ flops = 2 * N * M + M; weights = 4 * (N * M + M); activations = 4 * (N + M); }}
    pipelined on [R, C] where {conditions} {{
        run dense_tile(n = part_len(N, R, 0), m = part_len(M, C, 0), samples = B,
            n_total = N, m_total = M, act = {act});
        bind w to array w split [rows, cols];
        bind b to array bias split [cols];
        bind x to port xs split [rows];
        bind y to port ysum split [cols];
    }}
}}\n\n"
        )
    };
    "import std.nn.{dense_tile, relu};\n\n".to_string()
        + &layer("lin", lin_where, 0)
        + &layer("lin_relu", twin_where, 1)
        + "model m(x: f32[B, 16]) -> f32[B, 16] {
    param w1: f32[16, 16] from \"w1.npy\";
    param b1: f32[16] from \"b1.npy\";
    return relu(lin(x, w1, b1));
}\n"
}

/// A dense's sums depend on its rows only (each row of PEs adds its part of every column's
/// sum to the part from the row above; columns split the outputs): with `lin` and its twin
/// held to 4 rows, the fused result is the unfused one bit for bit, on `dev` and `wse2`, and
/// within 1e-5 of the reference.
#[test]
fn on_the_same_rows_the_fused_result_is_the_unfused_one_bit_for_bit() {
    let dir = reference_data("fusion.py", "pair");
    let held = "R == 4, C <= M";
    std::fs::write(dir.join("m.wse"), pair_program(held, held)).expect("write the model");
    for target in ["dev", "wse2"] {
        assert_eq!(stages(&dir, target, &[]), ["lin#1+relu#1"], "{target}");
        assert_eq!(rows(&dir, target, &[]), [4], "{target}");
        assert_eq!(rows(&dir, target, &["--no-fuse"])[0], 4, "{target}");
        let y = run(&dir, target, "fused.npy", &[]);
        let y_apart = run(&dir, target, "apart.npy", &["--no-fuse"]);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&y), bits(&y_apart), "{target}");
        let e = off_reference(&dir, &y);
        assert!(e <= 1e-5, "{target}: {e}");
    }
}

/// Where the fused graph does not place but the unfused one does, pipelined mode maps the
/// latter (as `--no-fuse` would) and says so, instead of failing where every layer apart
/// maps; the result is the reference's.
#[test]
fn a_fused_graph_that_does_not_place_maps_unfused() {
    let dir = reference_data("fusion.py", "pair");
    // The twin asks for more columns than it has outputs: no region can hold it.
    let program = pair_program("R <= N, C <= M", "R <= N, C > M");
    std::fs::write(dir.join("m.wse"), program).expect("write the model");
    assert_eq!(stages(&dir, "dev", &[]), ["lin#1", "relu#1"]);
    let args = ["map", "m.wse", "--target", "dev"];
    let table = String::from_utf8_lossy(&wsel_ok(&dir, &args).stdout).into_owned();
    assert!(
        table.contains("the fused stages did not place") && table.contains("--no-fuse"),
        "{table}"
    );
    let e = off_reference(&dir, &run(&dir, "dev", "y.npy", &[]));
    assert!(e <= 1e-5, "{e}");
}

/// The table of `wsel map m.wse --target dev` (mode auto, copies auto): its mode line says
/// which of the fused and unfused mappings was kept, and why.
fn map_table(dir: &Path) -> String {
    let args = ["map", "m.wse", "--target", "dev"];
    String::from_utf8_lossy(&wsel_ok(dir, &args).stdout).into_owned()
}

/// With the twin held to one PE (16 × 16 multiply-adds a sample there) and `lin` free to
/// spread over the fabric, the fused stage is the slower bottleneck: the model maps apart, as
/// `--no-fuse` would, the mode's reason gives both estimates, and the result is the
/// reference's. (Before the choice by the estimate, the fused graph, which places, was kept.)
#[test]
fn where_apart_is_estimated_faster_every_layer_keeps_its_stage() {
    let dir = reference_data("fusion.py", "pair");
    let program = pair_program("R <= N, C <= M", "R == 1, C == 1");
    std::fs::write(dir.join("m.wse"), program).expect("write the model");
    assert_eq!(stages(&dir, "dev", &[]), ["lin#1", "relu#1"]);
    let table = map_table(&dir);
    assert!(
        table.contains("every layer apart as with --no-fuse: 2 stages, ")
            && table.contains("against fused 1 stage, "),
        "{table}"
    );
    let e = off_reference(&dir, &run(&dir, "dev", "y.npy", &[]));
    assert!(e <= 1e-5, "{e}");
}

/// With `lin` and its twin held to the same 4 rows, the fused stage costs what `lin` costs
/// and saves the relu's stage: the fused mapping is kept, and the mode's reason says it was
/// estimated no slower than the one apart (139 cycles against 148 on `dev` at this commit;
/// with both free the sizes the search gives them differ, and apart wins there, 226 against
/// 280).
#[test]
fn where_fused_is_estimated_no_slower_it_is_kept() {
    let dir = reference_data("fusion.py", "pair");
    let held = "R == 4, C <= M";
    std::fs::write(dir.join("m.wse"), pair_program(held, held)).expect("write the model");
    assert_eq!(stages(&dir, "dev", &[]), ["lin#1+relu#1"]);
    let table = map_table(&dir);
    assert!(
        table.contains("fused: 1 stage, ") && table.contains("against apart 2 stages, "),
        "{table}"
    );
}

//! std.nn's transformer layers (`stdlib/nn.wse`, "Transformer layers") end to end on `dev`:
//! each layer alone in a model, run with `wsel run` in pipelined and in streaming mode,
//! against its NumPy reference (`tests/reference/layers.py`, written independently of the
//! kernels), on shapes chosen so that the mapper's regions split the features unevenly
//! (prime widths) and, for attention, several sequences per batch.
//!
//! Tolerance: 1e-5 of the reference's largest magnitude. Both sides compute in float32; they
//! differ in summation order (per-PE partial sums, layernorm's Chan merge of per-column
//! means, attention's dot products of dh ≤ 8 terms and its normalisation after the weighted
//! sum instead of before) and in the last ulp or two of `exp` and `tanh`: a few float32 ulps
//! of values of order 1 (observed: below 1e-6). A wrong mask, head, position or sequence
//! boundary moves values by order 1 and fails.

use std::path::Path;
use std::process::Command;

use wsel::tensor::{Tensor, read_npy, write_npy_atomic};
use wsel_ir::kernel::ScalarTy;

const TOLERANCE: f32 = 1e-5;

mod support;
use support::{Scratch, repo_root, temp_dir};

/// Deterministic values in [-1, 1) (a 64-bit LCG's top bits).
struct Values(u64);

impl Values {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 11) as f64 / (1u64 << 52) as f64 - 1.0) as f32
    }
}

/// Writes `name.npy` in `dir`: `shape`, values from `values` times `scale` plus `offset`, or
/// whole numbers below `ids` when given.
fn write(dir: &Path, name: &str, shape: &[u64], values: &mut Values, scale: f32, ids: Option<u32>) {
    let len: u64 = shape.iter().product();
    let words = (0..len)
        .map(|_| {
            let v = values.next();
            match ids {
                Some(n) => (((v + 1.0) * 0.5 * n as f32) as u32).min(n - 1) as f32,
                None => v * scale,
            }
            .to_bits()
        })
        .collect();
    let tensor = Tensor {
        elem: ScalarTy::F32,
        shape: shape.to_vec(),
        words,
    };
    write_npy_atomic(&dir.join(format!("{name}.npy")), &tensor).expect("write .npy");
}

fn read(path: &Path) -> Vec<f32> {
    read_npy(path, ScalarTy::F32, &[None; 2])
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .to_f32()
}

/// One layer test: a model calling the layer once, its inputs written to a fresh folder.
#[derive(Clone)]
struct Case {
    name: &'static str,
    layer: &'static str,
    /// The model's inputs (name, features), all `f32[B, features]`.
    inputs: Vec<(&'static str, u64)>,
    /// The model's params (name, shape), declared in this order.
    params: Vec<(&'static str, Vec<u64>)>,
    /// The call's arguments after the tensors (`heads = 4, context = 5`).
    scalars: &'static str,
    /// The same for the NumPy reference (`heads=4 context=5`).
    reference_args: &'static [&'static str],
    out_features: u64,
    batch: u64,
    /// Token ids below this for an input called `ids`.
    vocab: u32,
    /// A model of several layers instead of one call: its import list and its body (`layer`
    /// then names the reference only).
    model: Option<(&'static str, &'static str)>,
}

impl Case {
    fn source(&self) -> String {
        let inputs: Vec<String> = self
            .inputs
            .iter()
            .map(|(n, f)| format!("{n}: f32[B, {f}]"))
            .collect();
        let params: String = self
            .params
            .iter()
            .map(|(n, s)| {
                let dims: Vec<String> = s.iter().map(u64::to_string).collect();
                format!(
                    "    param {n}: f32[{}] from \"{n}.npy\";\n",
                    dims.join(", ")
                )
            })
            .collect();
        let mut args: Vec<String> = self.inputs.iter().map(|(n, _)| n.to_string()).collect();
        args.extend(self.params.iter().map(|(n, _)| n.to_string()));
        if !self.scalars.is_empty() {
            args.push(self.scalars.to_string());
        }
        let run_inputs: String = self
            .inputs
            .iter()
            .map(|(n, _)| format!("    input {n} = \"{n}.npy\";\n"))
            .collect();
        let (imports, body) = match self.model {
            Some((imports, body)) => (imports.to_string(), body.to_string()),
            None => (
                self.layer.to_string(),
                format!("    return {}({});\n", self.layer, args.join(", ")),
            ),
        };
        format!(
            "import std.nn.{{{imports}}};\n\nmodel m({inputs}) -> f32[B, {out}] {{\n{params}\
             {body}}}\n\nrun m {{\n{run_inputs}    target = \"dev\";\n}}\n",
            inputs = inputs.join(", "),
            out = self.out_features,
        )
    }

    /// Writes the model and its data; returns the folder.
    fn write(&self, seed: u64) -> Scratch {
        let dir = temp_dir(self.name);
        let mut values = Values(seed);
        for (name, features) in &self.inputs {
            let ids = (*name == "ids").then_some(self.vocab);
            write(&dir, name, &[self.batch, *features], &mut values, 2.0, ids);
        }
        for (name, shape) in &self.params {
            write(&dir, name, shape, &mut values, 1.0, None);
        }
        std::fs::write(dir.join("m.wse"), self.source()).expect("model");
        dir
    }

    /// Runs the layer in both modes and checks both against NumPy.
    fn check(&self, seed: u64) {
        self.check_with(seed, |_, _| {});
    }

    /// `check`, handing each mode's report (`wsel run`'s stdout) to `inspect` as well.
    fn check_with(&self, seed: u64, inspect: impl Fn(&str, &str)) {
        self.check_in(seed, &["pipelined", "streaming"], inspect);
    }

    /// Runs the layer in weight-streaming mode alone (a backward layer has no pipelined
    /// implementation) and checks it against NumPy.
    fn check_streaming(&self, seed: u64) {
        self.check_in(seed, &["streaming"], |_, _| {});
    }

    /// `check_streaming`, handing the run's report to `inspect` as well.
    fn check_streaming_with(&self, seed: u64, inspect: impl Fn(&str, &str)) {
        self.check_in(seed, &["streaming"], inspect);
    }

    /// Runs `m.wse` in `dir` in `mode`: its result and its report (`wsel run`'s stdout).
    fn run(&self, dir: &Path, mode: &str) -> (Vec<f32>, String) {
        let out = dir.join(format!("{mode}.npy"));
        let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
            .current_dir(dir)
            .args([
                "run", "m.wse", "--color", "never", "--mode", mode, "--output",
            ])
            .arg(&out)
            .output()
            .expect("wsel runs");
        assert!(
            output.status.success(),
            "{} ({mode}): wsel run failed:\n{}{}",
            self.name,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        (
            read(&out),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    }

    /// Runs the layer in each of `modes` and checks it against NumPy.
    fn check_in(&self, seed: u64, modes: &[&str], inspect: impl Fn(&str, &str)) {
        let dir = self.write(seed);
        let status = Command::new("python3")
            .arg(repo_root().join("tests/reference/layers.py"))
            .arg(self.layer)
            .arg(&dir)
            .args(self.reference_args)
            .status()
            .expect("python3 runs (CI installs requirements.txt)");
        assert!(
            status.success(),
            "{}: tests/reference/layers.py failed",
            self.name
        );
        let reference = read(&dir.join("ref.npy"));
        assert_eq!(reference.len() as u64, self.batch * self.out_features);
        let scale = reference
            .iter()
            .fold(0f32, |m, v| m.max(v.abs()))
            .max(1e-30);
        for &mode in modes {
            let (result, report) = self.run(&dir, mode);
            inspect(mode, &report);
            assert_eq!(result.len(), reference.len(), "{} ({mode})", self.name);
            for (i, (a, b)) in result.iter().zip(&reference).enumerate() {
                let err = (a - b).abs() / scale;
                assert!(
                    err <= TOLERANCE,
                    "{} ({mode}): element {i} (sample {}, feature {}) is {a}, NumPy says {b} \
                     (error {err:e} of the largest value {scale})",
                    self.name,
                    i as u64 / self.out_features,
                    i as u64 % self.out_features,
                );
            }
        }
    }
}

fn elementwise(
    name: &'static str,
    layer: &'static str,
    inputs: &[&'static str],
    n: u64,
    batch: u64,
) -> Case {
    same_width(name, layer, inputs, n, batch, "", &[])
}

/// A layer whose activation inputs and result are all `n` wide.
fn same_width(
    name: &'static str,
    layer: &'static str,
    inputs: &[&'static str],
    n: u64,
    batch: u64,
    scalars: &'static str,
    reference_args: &'static [&'static str],
) -> Case {
    Case {
        name,
        layer,
        inputs: inputs.iter().map(|i| (*i, n)).collect(),
        params: Vec::new(),
        scalars,
        reference_args,
        out_features: n,
        batch,
        vocab: 0,
        model: None,
    }
}

#[test]
fn gelu_matches_numpy() {
    elementwise("gelu37", "gelu", &["x"], 37, 6).check(1);
    elementwise("gelu8", "gelu", &["x"], 8, 3).check(2);
}

#[test]
fn add_matches_numpy() {
    elementwise("add29", "add", &["a", "b"], 29, 5).check(3);
    elementwise("add16", "add", &["a", "b"], 16, 4).check(4);
}

fn layernorm(
    name: &'static str,
    n: u64,
    batch: u64,
    scalars: &'static str,
    reference_args: &'static [&'static str],
) -> Case {
    Case {
        params: vec![("g", vec![n]), ("b", vec![n])],
        ..same_width(name, "layernorm", &["x"], n, batch, scalars, reference_args)
    }
}

#[test]
fn layernorm_matches_numpy() {
    layernorm("ln37", 37, 6, "", &[]).check(5);
    layernorm("ln24", 24, 4, "eps = 0.25", &["eps=0.25"]).check(6);
}

#[test]
fn embedding_matches_numpy() {
    let case = |name, v: u64, d: u64, t: u64, batch: u64| Case {
        name,
        layer: "embedding",
        inputs: vec![("ids", 1)],
        params: vec![("table", vec![v, d]), ("pos", vec![t, d])],
        scalars: "",
        reference_args: &[],
        out_features: d,
        batch,
        vocab: v as u32,
        model: None,
    };
    case("emb19", 13, 19, 4, 12).check(7);
    // Whole sequences: 2 of context 3.
    case("emb8", 5, 8, 3, 6).check(8);
}

fn attention(
    name: &'static str,
    n: u64,
    batch: u64,
    scalars: &'static str,
    reference_args: &'static [&'static str],
) -> Case {
    same_width(
        name,
        "attention",
        &["q", "k", "v"],
        n,
        batch,
        scalars,
        reference_args,
    )
}

#[test]
fn causal_attention_matches_numpy() {
    attention(
        "att24",
        24,
        10,
        "heads = 4, context = 5",
        &["heads=4", "context=5"],
    )
    .check(9);
    attention(
        "att12",
        12,
        9,
        "heads = 3, context = 3",
        &["heads=3", "context=3"],
    )
    .check(10);
}

#[test]
fn full_attention_matches_numpy() {
    attention(
        "attfull",
        16,
        8,
        "heads = 2, context = 4, causal = false",
        &["heads=2", "context=4", "causal=0"],
    )
    .check(11);
}

/// `attention_qkv` (q, k and v packed per head in one input; pipelined only) against NumPy:
/// causal with two heads of 4 features, and not causal with three heads of 4.
#[test]
fn packed_attention_matches_numpy() {
    let case = |name, n: u64, batch, scalars, reference_args| Case {
        inputs: vec![("x", 3 * n)],
        ..same_width(
            name,
            "attention_qkv",
            &[],
            n,
            batch,
            scalars,
            reference_args,
        )
    };
    let causal = case(
        "attqkv8",
        8,
        8,
        "heads = 2, context = 4",
        &["heads=2", "context=4"],
    );
    causal.check_in(41, &["pipelined"], |_, _| {});
    let full = case(
        "attqkv12",
        12,
        9,
        "heads = 3, context = 3, causal = false",
        &["heads=3", "context=3", "causal=0"],
    );
    full.check_in(42, &["pipelined"], |_, _| {});
}

/// A layer of two or three activation inputs of `widths` features (`p` and `v`, `q` and `k`,
/// `x`), `out` features out, checked in weight streaming (its only mode so far).
fn sequence_layer(
    name: &'static str,
    layer: &'static str,
    inputs: &[(&'static str, u64)],
    (out, batch): (u64, u64),
    scalars: &'static str,
    reference_args: &'static [&'static str],
) -> Case {
    Case {
        inputs: inputs.to_vec(),
        out_features: out,
        ..same_width(name, layer, &[], 0, batch, scalars, reference_args)
    }
}

/// `matmul_qk`: every token's scaled scores against its sequence's tokens, per head, into
/// `heads · context` features (an output dimension expression). Ragged: a context of 5 (three
/// sequences), heads of 3 features; and one sequence per column of a wider region.
#[test]
fn matmul_qk_matches_numpy() {
    let qk = |name, n, heads_context: (u64, u64), batch, scalars, args| {
        let (heads, context) = heads_context;
        sequence_layer(
            name,
            "matmul_qk",
            &[("q", n), ("k", n)],
            (heads * context, batch),
            scalars,
            args,
        )
    };
    qk(
        "mmqk12",
        12,
        (4, 5),
        15,
        "heads = 4, context = 5, scale = 0.5",
        &["heads=4", "context=5", "scale=0.5"],
    )
    .check(31);
    qk(
        "mmqk8",
        8,
        (2, 4),
        16,
        "heads = 2, context = 4",
        &["heads=2", "context=4"],
    )
    .check(32);
}

/// `matmul_pv`: each head's probabilities (here arbitrary values: the layer does not assume
/// they sum to 1) times its sequence's values.
#[test]
fn matmul_pv_matches_numpy() {
    sequence_layer(
        "mmpv12",
        "matmul_pv",
        &[("p", 20), ("v", 12)],
        (12, 15),
        "heads = 4, context = 5",
        &["heads=4", "context=5"],
    )
    .check(33);
    sequence_layer(
        "mmpv6",
        "matmul_pv",
        &[("p", 9), ("v", 6)],
        (6, 9),
        "heads = 3, context = 3",
        &["heads=3", "context=3"],
    )
    .check(34);
}

/// `softmax` with `context`: each row in groups normalised on their own, causally masked (the
/// default) or not. Groups of 4 over 28 features and of 5 over 45, which the mapper's rows (3
/// and 4, checked) split unevenly, so that a row holds part of a group and the groups' pairs
/// are merged down the column; one sequence per column or less, so that a token's position
/// comes from its column's first sample. The plain softmax is the same kernel with one group:
/// the examples' tests pin it (digits, mlp_streaming).
#[test]
fn grouped_softmax_matches_numpy() {
    let rows_cut = |mode: &str, report: &str| {
        let (rows, _) = region_size(report, "softmax#1");
        assert!(
            mode == "pipelined" || rows > 1,
            "softmax on {rows} row: no group spans rows"
        );
    };
    let softmax = |name, n, batch, scalars, args| {
        sequence_layer(name, "softmax", &[("x", n)], (n, batch), scalars, args)
    };
    softmax("smc28", 28, 8, "context = 4", &["context=4"]).check_with(35, rows_cut);
    softmax(
        "smfull45",
        45,
        10,
        "context = 5, causal = false",
        &["context=5", "causal=0"],
    )
    .check_with(36, rows_cut);
}

/// Composed attention where a column cannot hold a sequence: 64 tokens of 32 features in
/// sequences of 16 on `dev` (E0612 while the matmuls took whole sequences per column). The
/// matmuls' regions must spread a sequence over several columns, their blocks of keys and
/// values passing along each row, and each of the two heads over several rows (both
/// checked; the mapper takes 8 rows, a head over 4).
#[test]
fn composed_attention_spans_columns() {
    let case = composed_attention(
        "attspan",
        (32, 64, 16),
        "heads = 2, context = 16",
        &["heads=2", "context=16"],
        "0.25",
    );
    case.check_streaming_with(45, |_, report| {
        for layer in ["matmul_qk#1", "matmul_pv#1"] {
            spans_columns(report, layer, 16, 64);
            assert_head_over_rows(report, layer, 2, true, (16, 64));
        }
    });
}

/// The matmuls' input gradients (training's backward layers, weight streaming only) against
/// NumPy's einsum in float64: 4 heads of 3 features over contexts of 5 (three sequences),
/// scaled; 2 heads of 4 over contexts of 4 (four sequences). Each maps a sequence over
/// several columns (checked), so its blocks pass along them.
#[test]
fn matmul_gradients_match_numpy() {
    let grad = |name, layer, inputs: &[(&'static str, u64)], out, batch, scalars, args| {
        sequence_layer(name, layer, inputs, (out, batch), scalars, args)
    };
    let qk5 = "heads = 4, context = 5, scale = 0.5";
    let qk5_args: &[&str] = &["heads=4", "context=5", "scale=0.5"];
    let pv4 = "heads = 2, context = 4";
    let pv4_args: &[&str] = &["heads=2", "context=4"];
    let cases = [
        (
            grad(
                "mmdq",
                "matmul_qk_backward_q",
                &[("k", 12), ("ds", 20)],
                12,
                15,
                qk5,
                qk5_args,
            ),
            5,
        ),
        (
            grad(
                "mmdk",
                "matmul_qk_backward_k",
                &[("q", 12), ("ds", 20)],
                12,
                15,
                qk5,
                qk5_args,
            ),
            5,
        ),
        (
            grad(
                "mmdp",
                "matmul_pv_backward_p",
                &[("v", 8), ("dy", 8)],
                8,
                16,
                pv4,
                pv4_args,
            ),
            4,
        ),
        (
            grad(
                "mmdv",
                "matmul_pv_backward_v",
                &[("p", 8), ("dy", 8)],
                8,
                16,
                pv4,
                pv4_args,
            ),
            4,
        ),
    ];
    for (seed, (case, context)) in (37..).zip(cases) {
        let (layer, batch) = (case.layer, case.batch);
        case.check_streaming_with(seed, |_, report| {
            spans_columns(report, &format!("{layer}#1"), context, batch)
        });
    }
}

/// Asserts that `layer`'s region puts a sequence of `context` tokens over several columns.
fn spans_columns(report: &str, layer: &str, context: u64, batch: u64) {
    let (_, cols) = region_size(report, layer);
    assert!(
        cols * context > batch,
        "{layer} on {cols} columns: whole sequences per column"
    );
}

/// The grouped softmax's backward: per group of `context` features, y · (dy − Σ dy · y), with
/// groups of 5 over 45 features cut unevenly by the region's rows (checked), so that a
/// group's sums are merged down the column. The data's y are not probabilities (the layer
/// does not assume they are).
#[test]
fn grouped_softmax_backward_matches_numpy() {
    let case = sequence_layer(
        "smbwctx",
        "softmax_backward",
        &[("y", 45), ("dy", 45)],
        (45, 23),
        "context = 5",
        &["context=5"],
    );
    case.check_streaming_with(44, |_, report| {
        let (rows, _) = region_size(report, "softmax_backward#1");
        assert!(
            rows > 1,
            "softmax_backward on {rows} row: no group spans rows"
        );
    });
}

/// Attention composed from the three layers: `scalars` (`heads = .., context = ..`) given to
/// both matmuls, `context` to the softmax, scale 1/√dh as a literal.
fn composed_attention(
    name: &'static str,
    (n, batch, context): (u64, u64, u64),
    scalars: &'static str,
    reference_args: &'static [&'static str],
    scale: &'static str,
) -> Case {
    let body = format!(
        "    let s = matmul_qk(q, k, {scalars}, scale = {scale});\n\
         \x20   let p = softmax(s, context = {context});\n\
         \x20   return matmul_pv(p, v, {scalars});\n"
    );
    Case {
        model: Some(("matmul_qk, matmul_pv, softmax", body.leak())),
        ..attention(name, n, batch, scalars, reference_args)
    }
}

/// Composed attention on the fabric against NumPy's attention, and against the fused
/// `attention` layer on the same data: a context of 5 with heads of 3 features, and two heads
/// of 8.
#[test]
fn composed_attention_matches_numpy_and_fused_attention() {
    let cases = [
        composed_attention(
            "attcomp12",
            (12, 15, 5),
            "heads = 4, context = 5",
            &["heads=4", "context=5"],
            "0.57735026",
        ),
        composed_attention(
            "attcomp16",
            (16, 8, 4),
            "heads = 2, context = 4",
            &["heads=2", "context=4"],
            "0.35355339",
        ),
    ];
    for (seed, composed) in (37..).zip(cases) {
        composed.check(seed);
        assert_matches_fused(&composed, seed);
    }
}

/// Runs `composed` (attention composed from its pieces) and the fused `attention` on the same
/// data in both modes and asserts that they agree within `TOLERANCE`.
fn assert_matches_fused(composed: &Case, seed: u64) {
    let fused = Case {
        model: None,
        ..composed.clone()
    };
    let dir = composed.write(seed);
    for mode in ["pipelined", "streaming"] {
        std::fs::write(dir.join("m.wse"), composed.source()).expect("model");
        let (a, _) = composed.run(&dir, mode);
        std::fs::write(dir.join("m.wse"), fused.source()).expect("model");
        let (b, _) = fused.run(&dir, mode);
        let largest = b.iter().fold(0f32, |m, v| m.max(v.abs())).max(1e-30);
        for (j, (x, y)) in a.iter().zip(&b).enumerate() {
            assert!(
                (x - y).abs() / largest <= TOLERANCE,
                "{} ({mode}): element {j}: composed {x}, fused attention {y}",
                composed.name
            );
        }
    }
}

/// Asserts that the streamed `layer` in `report` spreads each of its `heads` heads over
/// several rows (a head over `rows / heads` of them), with a column holding whole sequences
/// (`spans` false) or a block of one sequence's positions (true).
fn assert_head_over_rows(
    report: &str,
    layer: &str,
    heads: u64,
    spans: bool,
    (context, batch): (u64, u64),
) {
    let (rows, cols) = region_size(report, layer);
    assert!(
        rows > heads && rows % heads == 0,
        "{layer} on {rows} rows: {heads} heads not each over several rows"
    );
    assert_eq!(
        cols * context > batch,
        spans,
        "{layer} on {cols} columns: a sequence of {context} (batch {batch}) should span columns: {spans}"
    );
}

/// Shapes on which the streamed matmuls spread a head over several rows on `dev`: (tag,
/// features, heads, context, batch, a sequence over columns). One and two heads over 2, 3
/// and 4 rows, columns holding whole sequences or a block of one (3 positions of a context
/// of 12, 1 of 8), contexts of 4, 6, 8 and 12.
const HEAD_OVER_ROWS: [(&str, u64, u64, u64, u64, bool); 6] = [
    ("h1r4", 64, 1, 4, 64, false),
    ("h1r2", 64, 1, 6, 96, false),
    ("h2r4", 32, 2, 4, 64, false),
    ("h1span", 32, 1, 8, 8, true),
    ("h2span", 48, 2, 12, 48, true),
    ("h1r3span", 48, 1, 6, 48, true),
];

/// A matmul-shaped layer of two activations: its inputs, each named with whether it is a
/// score row (`heads · context` features) or a token's features, the same for its result,
/// and whether it takes a scale (0.5 here).
struct Matmul {
    layer: &'static str,
    inputs: [(&'static str, bool); 2],
    scores_out: bool,
    scaled: bool,
}

/// Runs `mm` on every shape of `HEAD_OVER_ROWS` in `modes` against NumPy, checking that the
/// streamed region spreads each head over several rows.
fn check_head_over_rows(mm: &Matmul, modes: &[&str], first_seed: u64) {
    for (seed, (tag, n, heads, context, batch, spans)) in (first_seed..).zip(HEAD_OVER_ROWS) {
        let width = |scores: bool| if scores { heads * context } else { n };
        let scale = if mm.scaled { ", scale = 0.5" } else { "" };
        let scalars: &'static str = format!("heads = {heads}, context = {context}{scale}").leak();
        let mut args: Vec<&'static str> = vec![
            format!("heads={heads}").leak(),
            format!("context={context}").leak(),
        ];
        if mm.scaled {
            args.push("scale=0.5");
        }
        let inputs: Vec<_> = mm.inputs.iter().map(|&(i, s)| (i, width(s))).collect();
        let case = sequence_layer(
            format!("{}{tag}", mm.layer).leak(),
            mm.layer,
            &inputs,
            (width(mm.scores_out), batch),
            scalars,
            args.leak(),
        );
        let layer = format!("{}#1", mm.layer);
        case.check_in(seed, modes, |mode, report| {
            if mode == "streaming" {
                assert_head_over_rows(report, &layer, heads, spans, (context, batch));
            }
        });
    }
}

/// The streamed matmuls with a head over `g = R / heads` rows (`HEAD_OVER_ROWS`): matmul_qk's
/// rows add their partial dot products down the head's rows and send the totals back up,
/// each keeping its `context / g` keys of `s`; matmul_pv's rows gather the head's
/// probabilities the same way (each adding its slice, zeros elsewhere) and weigh their own
/// `dh / g` features of v. Pipelined mode runs its own kernel (whole heads per column) on the
/// same data. This fails if the sum down the column is skipped: a row would keep the dot
/// product of its `dh / g` features only (matmul_qk), or weigh v by its own keys'
/// probabilities only (matmul_pv), each off by order 1.
#[test]
fn matmuls_with_a_head_over_rows_match_numpy() {
    let modes = ["pipelined", "streaming"];
    let qk = Matmul {
        layer: "matmul_qk",
        inputs: [("q", false), ("k", false)],
        scores_out: true,
        scaled: true,
    };
    let pv = Matmul {
        layer: "matmul_pv",
        inputs: [("p", true), ("v", false)],
        scores_out: false,
        scaled: false,
    };
    check_head_over_rows(&qk, &modes, 60);
    check_head_over_rows(&pv, &modes, 70);
}

/// The matmuls' input gradients with a head over several rows (`HEAD_OVER_ROWS`, weight
/// streaming only): dP as matmul_qk's scores (summed down the head's rows), dQ as matmul_pv's
/// sums and dK, dV as their transpose (each row gathering the head's ds or p first, then
/// working on its own features).
#[test]
fn matmul_gradients_with_a_head_over_rows_match_numpy() {
    let grads = [
        (
            "matmul_qk_backward_q",
            [("k", false), ("ds", true)],
            false,
            true,
        ),
        (
            "matmul_qk_backward_k",
            [("q", false), ("ds", true)],
            false,
            true,
        ),
        (
            "matmul_pv_backward_p",
            [("v", false), ("dy", false)],
            true,
            false,
        ),
        (
            "matmul_pv_backward_v",
            [("p", true), ("dy", false)],
            false,
            false,
        ),
    ];
    for (first_seed, (layer, inputs, scores_out, scaled)) in (80..).step_by(10).zip(grads) {
        let mm = Matmul {
            layer,
            inputs,
            scores_out,
            scaled,
        };
        check_head_over_rows(&mm, &["streaming"], first_seed);
    }
}

/// `matmul_qk → softmax(context) → matmul_pv` equal to the fused `attention` (and NumPy's)
/// where the matmuls spread a head over several rows: one head of 64 features over 4 rows,
/// two of 16 over 4 (checked in the streamed report).
#[test]
fn composed_attention_with_a_head_over_rows_matches_fused_attention() {
    let cases = [
        (
            composed_attention(
                "attcomprows1",
                (64, 64, 4),
                "heads = 1, context = 4",
                &["heads=1", "context=4"],
                "0.125",
            ),
            1,
        ),
        (
            composed_attention(
                "attcomprows2",
                (32, 64, 4),
                "heads = 2, context = 4",
                &["heads=2", "context=4"],
                "0.25",
            ),
            2,
        ),
    ];
    for (seed, (composed, heads)) in (70..).zip(cases) {
        composed.check_with(seed, |mode, report| {
            if mode == "streaming" {
                for layer in ["matmul_qk#1", "matmul_pv#1"] {
                    assert_head_over_rows(report, layer, heads, false, (4, 64));
                }
            }
        });
        assert_matches_fused(&composed, seed);
    }
}

/// The rows and columns of `layer`'s region in a `wsel run` report ("attention#1 … 8×1 …").
fn region_size(report: &str, layer: &str) -> (u64, u64) {
    let line = report
        .lines()
        .find(|l| l.split_whitespace().any(|w| w == layer))
        .unwrap_or_else(|| panic!("no {layer} in the report:\n{report}"));
    let size = line
        .split_whitespace()
        .find_map(|w| w.split_once('×'))
        .unwrap_or_else(|| panic!("no region size in {line:?}"));
    let number = |s: &str| {
        s.parse()
            .unwrap_or_else(|e| panic!("region size {s:?} in {line:?}: {e}"))
    };
    (number(size.0), number(size.1))
}

/// Attention spread over more PEs per head than one: pipelined, a sequence's keys dealt over
/// the rows of a column (merged down it); streamed, every head over several rows (partial
/// scores summed down them) — checked against NumPy, and each run's region checked to be
/// spread that way. Ragged shapes: contexts that the rows do not divide (17 and 13 over 4), and
/// a context of 41 whose queries the streamed kernel takes in blocks of 6 (the last of 5). The
/// contexts are prime, so on `dev`'s 16 columns a streamed sequence cannot span columns here
/// (`attention_over_columns_matches_numpy` does that).
#[test]
fn attention_spread_over_rows_matches_numpy() {
    let spread = |heads: u64| {
        move |mode: &str, report: &str| {
            let (rows, _) = region_size(report, "attention#1");
            let least = if mode == "pipelined" { 2 } else { 2 * heads };
            assert!(
                rows >= least,
                "{mode}: attention on {rows} rows, not spread (at least {least})"
            );
        }
    };
    attention(
        "attrows24",
        24,
        34,
        "heads = 2, context = 17",
        &["heads=2", "context=17"],
    )
    .check_with(13, spread(2));
    attention(
        "attrows40",
        40,
        26,
        "heads = 2, context = 13, causal = false",
        &["heads=2", "context=13", "causal=0"],
    )
    .check_with(14, spread(2));
    attention(
        "attrows8",
        8,
        41,
        "heads = 2, context = 41",
        &["heads=2", "context=41"],
    )
    .check_with(15, spread(2));
}

/// A streamed sequence over several columns (each column a block of its positions, keys and
/// values passed along the row): causal and full with whole heads per row, and a head over
/// two rows (its partial scores summed down the column) — checked against NumPy, and the
/// streamed region checked to have more columns than the batch has sequences.
#[test]
fn attention_over_columns_matches_numpy() {
    let over_columns = |sequences: u64, least_rows: u64| {
        move |mode: &str, report: &str| {
            let (rows, cols) = region_size(report, "attention#1");
            assert!(
                mode == "pipelined" || (cols > sequences && rows >= least_rows),
                "{mode}: attention on {rows} × {cols} PEs for {sequences} sequences \
                 (at least {least_rows} rows)"
            );
        }
    };
    attention(
        "attcols",
        8,
        16,
        "heads = 2, context = 16",
        &["heads=2", "context=16"],
    )
    .check_with(16, over_columns(1, 1));
    attention(
        "attcolsfull",
        8,
        16,
        "heads = 2, context = 16, causal = false",
        &["heads=2", "context=16", "causal=0"],
    )
    .check_with(17, over_columns(1, 1));
    attention(
        "attcols4",
        8,
        64,
        "heads = 2, context = 16",
        &["heads=2", "context=16"],
    )
    .check_with(18, over_columns(4, 4));
}

/// A result read by several layers, pipelined as well as streamed: `h` feeds `layernorm` and
/// the residual `add` (the consumer placed beside `h`'s producer passes each part on to the
/// other), and `a` feeds three `dense` layers; 13 features split unevenly over the regions.
#[test]
fn results_read_by_several_layers_match_numpy() {
    let n = 13;
    let params: Vec<(&'static str, Vec<u64>)> = [
        ("w0", vec![n, n]),
        ("b0", vec![n]),
        ("g", vec![n]),
        ("b", vec![n]),
        ("wq", vec![n, n]),
        ("bq", vec![n]),
        ("wk", vec![n, n]),
        ("bk", vec![n]),
        ("wv", vec![n, n]),
        ("bv", vec![n]),
    ]
    .into();
    Case {
        name: "fanout",
        layer: "fanout",
        inputs: vec![("x", n)],
        params,
        scalars: "",
        reference_args: &[],
        out_features: n,
        batch: 5,
        vocab: 0,
        model: Some((
            "dense, layernorm, add",
            "    let h = dense(x, w0, b0);\n    let a = layernorm(h, g, b);\n    \
             let s = add(add(dense(a, wq, bq), dense(a, wk, bk)), dense(a, wv, bv));\n    \
             return add(h, s);\n",
        )),
    }
    .check(12);
}

// ---------------------------------------------------------------------------------------
// Backward layers (training, docs/language.md §11), called alone from a model and run in
// weight-streaming mode against tests/reference/transformer_train.py's hand-written,
// finite-difference-checked gradients (float64). Their sums have at most 37 terms of values
// of order 1, so the float32 side's error is again a few ulps of the largest value, within
// the same 1e-5; a wrong sign, term or head moves values by order 1.
// ---------------------------------------------------------------------------------------

#[test]
fn gelu_backward_matches_numpy() {
    elementwise("gelubw37", "gelu_backward", &["x", "dy"], 37, 6).check_streaming(21);
    elementwise("gelubw8", "gelu_backward", &["x", "dy"], 8, 3).check_streaming(22);
}

#[test]
fn layernorm_backward_matches_numpy() {
    let case = |name, n: u64, batch, scalars, reference_args: &'static [&'static str]| Case {
        params: vec![("g", vec![n])],
        ..same_width(
            name,
            "layernorm_backward",
            &["x", "dy"],
            n,
            batch,
            scalars,
            reference_args,
        )
    };
    case("lnbw37", 37, 6, "", &[]).check_streaming(23);
    case("lnbw24", 24, 5, "eps = 0.25", &["eps=0.25"]).check_streaming(24);
}

/// Attention's three backward layers, in the order of `which` (dq, dk, dv).
const ATTENTION_BACKWARD: [&str; 3] = [
    "attention_backward_q",
    "attention_backward_k",
    "attention_backward_v",
];

/// A case of one of attention's backward layers: q, k, v and dy all `n` wide.
fn attention_backward(
    name: &'static str,
    layer: &'static str,
    n: u64,
    batch: u64,
    scalars: &'static str,
    reference_args: &'static [&'static str],
) -> Case {
    let inputs = &["q", "k", "v", "dy"];
    same_width(name, layer, inputs, n, batch, scalars, reference_args)
}

#[test]
fn attention_backward_matches_numpy() {
    for (which, layer) in ATTENTION_BACKWARD.into_iter().enumerate() {
        let seed = 25 + 2 * which as u64;
        let causal = &["heads=3", "context=5"];
        attention_backward("attbw15", layer, 15, 10, "heads = 3, context = 5", causal)
            .check_streaming(seed);
        let full = &["heads=2", "context=4", "causal=0"];
        let scalars = "heads = 2, context = 4, causal = false";
        attention_backward("attbw8", layer, 8, 12, scalars, full).check_streaming(seed + 1);
    }
}

/// Attention's backward on the forward's regions: a sequence over several columns (blocks of
/// keys and values, then of queries with their softmax statistics, passed along them) and a
/// head over several rows (partial dot products summed down the column and sent back up).
/// Four sequences of 16 over 4 columns each with a head over 2 rows, causal and full, and
/// ragged shapes: heads of 5 features (prime) with sequences of 6 over 6 columns, and 3 heads
/// of 5 with sequences of 5 (prime) over 5 columns; and sequences of 17 (prime), which cannot
/// span `dev`'s columns, whole per column with a head over several rows and the queries
/// taken in chunks. Each region is checked to spread so.
#[test]
fn attention_backward_over_columns_matches_numpy() {
    // name, width, batch, the call's scalars, the reference's, the batch's sequences, the
    // least rows of the region, whether its sequences span columns.
    type Spread = (
        &'static str,
        u64,
        u64,
        &'static str,
        &'static [&'static str],
        u64,
        u64,
        bool,
    );
    let cases: [Spread; 5] = [
        (
            "attbwcols4",
            8,
            64,
            "heads = 2, context = 16",
            &["heads=2", "context=16"],
            4,
            4,
            true,
        ),
        (
            "attbwcols4full",
            8,
            64,
            "heads = 2, context = 16, causal = false",
            &["heads=2", "context=16", "causal=0"],
            4,
            4,
            true,
        ),
        (
            "attbwcols10",
            10,
            12,
            "heads = 2, context = 6",
            &["heads=2", "context=6"],
            2,
            1,
            true,
        ),
        (
            "attbwcols15",
            15,
            10,
            "heads = 3, context = 5, causal = false",
            &["heads=3", "context=5", "causal=0"],
            2,
            1,
            true,
        ),
        (
            "attbwrows24",
            24,
            34,
            "heads = 2, context = 17",
            &["heads=2", "context=17"],
            2,
            4,
            false,
        ),
    ];
    for (which, layer) in ATTENTION_BACKWARD.into_iter().enumerate() {
        for (k, (name, n, batch, scalars, reference, sequences, least_rows, spans)) in
            cases.into_iter().enumerate()
        {
            let spread = move |_: &str, report: &str| {
                let (rows, cols) = region_size(report, &format!("{layer}#1"));
                assert!(
                    (cols > sequences) == spans && rows >= least_rows,
                    "{name}: {layer} on {rows} × {cols} PEs for {sequences} sequences (at least \
                     {least_rows} rows; spanning columns: {spans})"
                );
            };
            attention_backward(name, layer, n, batch, scalars, reference)
                .check_streaming_with(41 + 5 * which as u64 + k as u64, spread);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Backward layers over several rows (#21): features too many for one PE's 4 KiB on `dev`
// (prime counts, so that no number of rows divides them), so the mapper splits them over the
// rows and the per-sample sums go down the columns, and 23 samples (no number of `dev`'s 16
// columns but one divides them); checked against NumPy as above, and each run's region
// checked to have more than one row.
// ---------------------------------------------------------------------------------------

/// Checks `case` in weight-streaming mode and that `layer#1` ran on more than one row.
fn check_over_rows(case: Case, seed: u64) {
    let name = case.name;
    case.check_in(seed, &["streaming"], |_, report| {
        let (rows, cols) = region_size(report, &format!("{}#1", case.layer));
        eprintln!("{name}: {rows} x {cols}");
        assert!(rows > 1, "{name}: on {rows} row(s), not split over rows");
    });
}

#[test]
fn softmax_backward_over_rows_matches_numpy() {
    check_over_rows(
        elementwise("smbwrows", "softmax_backward", &["y", "dy"], 523, 23),
        41,
    );
}

#[test]
fn layernorm_backward_over_rows_matches_numpy() {
    let case = Case {
        params: vec![("g", vec![521])],
        ..same_width(
            "lnbwrows",
            "layernorm_backward",
            &["x", "dy"],
            521,
            23,
            "eps = 0.25",
            &["eps=0.25"],
        )
    };
    check_over_rows(case, 42);
}

#[test]
fn dense_backward_over_rows_matches_numpy() {
    let case = Case {
        name: "densebwrows",
        layer: "dense_backward",
        inputs: vec![("dy", 317)],
        params: vec![("w", vec![293, 317])],
        scalars: "",
        reference_args: &[],
        out_features: 293,
        batch: 23,
        vocab: 0,
        model: None,
    };
    check_over_rows(case, 43);
}

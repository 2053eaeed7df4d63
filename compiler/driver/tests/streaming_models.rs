//! Weight streaming with models that do not fit the fabric and with a batch bigger than any
//! one region's worth: `wsel run --mode streaming` on `dev` (16 × 16 PEs, 4 KiB each: 1 MiB
//! of SRAM in all), against an independent reference computed here in f64, and against the
//! pipelined run of the same model.
//!
//! Tolerances, all on probabilities (softmax outputs, at most 1):
//! - against the f64 reference, 2e-4: a dense output sums n products in float32 in the
//!   fabric's order; any order is within γₙ·Σ|xᵢwᵢⱼ| ≈ n·2⁻²⁴·Σ|xᵢwᵢⱼ| of the exact sum, which
//!   for n = 2048 and the scaled random data here (Σ|xᵢwᵢⱼ| about 1) is 1.2e-4; softmax passes
//!   a logit error on to the probabilities at most unchanged.
//! - streaming against pipelined, 1e-5 of the largest value: both compute in float32 and
//!   differ only in summation order, with fan-ins of at most 100 (observed: about 1e-6).

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;
use wsel::tensor::read_npy;
use wsel_ir::kernel::ScalarTy;

mod support;
use support::{repo_root, temp_dir, write_f32_npy};

/// Deterministic values in [-1, 1) (a 64-bit LCG's top bits).
struct Values(u64);

impl Values {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    fn matrix(&mut self, len: usize, scale: f64) -> Vec<f32> {
        (0..len).map(|_| (self.next() * scale) as f32).collect()
    }
}

fn read(path: &Path) -> Vec<f32> {
    read_npy(path, ScalarTy::F32, &[None; 2])
        .expect("result .npy")
        .to_f32()
}

/// An MLP `widths[0] → … → widths[last]`, relu between the dense layers and softmax at the
/// end, with random weights scaled by 1/sqrt(fan-in) and `batch` random inputs, written to
/// `dir` with its `.wse`; returns the inputs and weights.
struct Mlp {
    widths: Vec<usize>,
    batch: usize,
    x: Vec<f32>,
    layers: Vec<(Vec<f32>, Vec<f32>)>,
}

impl Mlp {
    fn new(dir: &Path, widths: &[usize], batch: usize, seed: u64) -> Mlp {
        let mut values = Values(seed);
        let x = values.matrix(batch * widths[0], 1.0);
        write_f32_npy(
            dir.join("x.npy").as_path(),
            &[batch as u64, widths[0] as u64],
            &x,
        );
        let mut layers = Vec::new();
        let mut params = String::new();
        let mut body = String::from("x");
        for (i, pair) in widths.windows(2).enumerate() {
            let (n, m) = (pair[0], pair[1]);
            let w = values.matrix(n * m, 1.0 / (n as f64).sqrt());
            let b = values.matrix(m, 0.1);
            write_f32_npy(&dir.join(format!("w{i}.npy")), &[n as u64, m as u64], &w);
            write_f32_npy(&dir.join(format!("b{i}.npy")), &[m as u64], &b);
            params += &format!(
                "    param w{i}: f32[{n}, {m}] from \"w{i}.npy\";\n    param b{i}: f32[{m}] from \"b{i}.npy\";\n"
            );
            body = format!("dense({body}, w{i}, b{i})");
            if i + 2 < widths.len() {
                body = format!("relu({body})");
            }
            layers.push((w, b));
        }
        let (inputs, outputs) = (widths[0], widths[widths.len() - 1]);
        let source = format!(
            "import std.nn.{{dense, relu, softmax}};\n\nmodel mlp(x: f32[B, {inputs}]) -> f32[B, {outputs}] {{\n{params}    return softmax({body});\n}}\n"
        );
        std::fs::write(dir.join("mlp.wse"), source).expect("model");
        Mlp {
            widths: widths.to_vec(),
            batch,
            x,
            layers,
        }
    }

    /// The model's probabilities, in f64.
    fn reference(&self) -> Vec<f64> {
        let mut h: Vec<f64> = self.x.iter().map(|&v| f64::from(v)).collect();
        for (i, (w, b)) in self.layers.iter().enumerate() {
            let (n, m) = (self.widths[i], self.widths[i + 1]);
            let mut out = vec![0.0; self.batch * m];
            for s in 0..self.batch {
                for j in 0..m {
                    let dot: f64 = (0..n).map(|k| h[s * n + k] * f64::from(w[k * m + j])).sum();
                    let y = dot + f64::from(b[j]);
                    out[s * m + j] = if i + 1 < self.layers.len() {
                        y.max(0.0)
                    } else {
                        y
                    };
                }
            }
            h = out;
        }
        let m = self.widths[self.widths.len() - 1];
        for sample in h.chunks_mut(m) {
            let top = sample.iter().copied().fold(f64::MIN, f64::max);
            let sum: f64 = sample.iter().map(|v| (v - top).exp()).sum();
            for v in sample.iter_mut() {
                *v = (*v - top).exp() / sum;
            }
        }
        h
    }
}

fn wsel(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(dir)
        .args(args)
        .args(["--color", "never", "--no-cache"])
        .output()
        .expect("wsel runs")
}

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let output = wsel(dir, args);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "wsel {args:?} failed:\n{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn largest_difference(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn a_model_sixteen_times_the_fabric_streams_and_matches_the_reference() {
    let dir = temp_dir("big");
    // 64 → 2048 → 2048 → 10: 16.6 MiB of weights on `dev`'s 1 MiB of SRAM.
    let mlp = Mlp::new(&dir, &[64, 2048, 2048, 10], 2, 7);
    let weight_bytes: usize = mlp
        .layers
        .iter()
        .map(|(w, b)| 4 * (w.len() + b.len()))
        .sum();
    let fabric_sram = 16 * 16 * 4096;
    assert!(weight_bytes >= 16 * fabric_sram, "{weight_bytes} bytes");

    let table = run_ok(
        &dir,
        &[
            "run",
            "mlp.wse",
            "--input",
            "x=x.npy",
            "--output",
            "y.npy",
            "--report",
            "r.json",
            "--timeline",
            "t.svg",
        ],
    );
    assert!(
        table.contains("streaming mode (the weights, 17,399,848 bytes, do not all fit"),
        "auto picks streaming and says why: {table}"
    );
    let y = read(&dir.join("y.npy"));
    let reference = mlp.reference();
    let worst = y
        .iter()
        .zip(&reference)
        .map(|(a, b)| (f64::from(*a) - b).abs())
        .fold(0.0, f64::max);
    assert!(worst < 2e-4, "largest difference to the reference {worst}");

    // The report: 8 phases (staged in and out) on one region, each dense layer's weights from
    // the store with its stalls.
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).expect("report"))
            .expect("json");
    let run = &report["run"];
    assert_eq!(run["mode"], "streaming");
    let phases = run["phases"].as_array().expect("phases");
    let names: Vec<&str> = phases.iter().filter_map(|p| p["layer"].as_str()).collect();
    assert_eq!(
        names,
        [
            "stage_in#1",
            "dense#1",
            "relu#1",
            "dense#2",
            "relu#2",
            "dense#3",
            "softmax#1",
            "stage_out#1"
        ]
    );
    let layers = run["layers"].as_array().expect("layers");
    let region = |l: &Value| (l["origin"].clone(), l["rows"].clone(), l["cols"].clone());
    assert!(layers.iter().all(|l| region(l) == region(&layers[0])));
    let streamed: Vec<&Value> = layers.iter().filter(|l| !l["weights"].is_null()).collect();
    assert_eq!(streamed.len(), 3);
    let streamed_bytes: u64 = streamed
        .iter()
        .map(|l| l["weights"]["weight_bytes"].as_u64().expect("bytes"))
        .sum();
    assert_eq!(streamed_bytes, weight_bytes as u64);
    // Phases one after another: each starts after the one before has ended.
    for pair in phases.windows(2) {
        let end = pair[0]["start_cycle"].as_u64().expect("start")
            + pair[0]["cycles"].as_u64().expect("cycles");
        assert!(pair[1]["start_cycle"].as_u64().expect("start") > end);
    }
    let svg = std::fs::read_to_string(dir.join("t.svg")).expect("timeline");
    assert!(svg.contains("dense#2") && svg.contains("<svg"), "{svg}");
}

#[test]
fn digits_sized_classifiers_stream_as_they_run_pipelined() {
    // The classifier of the issue (64 → 100 → 50 → 10, 450 images, random weights here) and
    // examples/digits at its full batch of 360.
    let dir = temp_dir("digits");
    Mlp::new(&dir, &[64, 100, 50, 10], 450, 11);
    let mine = ["mlp.wse", "--input", "x=x.npy"];
    let digits = repo_root().join("examples/digits/main.wse");
    let digits = digits.to_str().expect("utf-8 path");
    for (name, model) in [("450", &mine[..]), ("digits", &[digits][..])] {
        let mut results = Vec::new();
        for mode in ["pipelined", "streaming"] {
            let out = format!("{name}-{mode}.npy");
            let mut args = vec!["run"];
            args.extend_from_slice(model);
            args.extend(["--mode", mode, "--output", &out]);
            run_ok(&dir, &args);
            results.push(read(&dir.join(&out)));
        }
        let largest = results[0].iter().copied().fold(0.0, f32::max);
        let difference = largest_difference(&results[0], &results[1]);
        assert!(
            difference <= 1e-5 * largest,
            "{name}: streaming differs from pipelined by {difference}"
        );
    }
}

#[test]
fn a_batch_too_big_for_the_fabric_runs_in_micro_batches() {
    let dir = temp_dir("micro");
    // 256 samples of 64 → 256 → 10 on dev: at once, a PE would hold 16 samples' activations
    // and partial sums (over 4 KiB); in micro-batches of 128 they fit. Micro-batch-major
    // order, asked for (`auto` would run layer-major).
    let mlp = Mlp::new(&dir, &[64, 256, 10], 256, 13);
    let table = run_ok(
        &dir,
        &[
            "run",
            "mlp.wse",
            "--input",
            "x=x.npy",
            "--output",
            "y.npy",
            "--mode",
            "streaming",
            "--micro-order",
            "micro",
            "--report",
            "r.json",
        ],
    );
    assert!(table.contains("2 micro-batches of 128 samples"), "{table}");
    // Re-streaming: the weights, 4 B × (64·256 + 256 + 256·10 + 10) = 76,840 B, once more.
    // Parking instead: relu#1's 128 × 256 result (131,072 B) of one micro-batch out and in.
    assert!(
        table.contains(
            "add 76,840 B from the store; parking the waiting micro-batches' activations there \
             instead would move 262,144 B (131,072 B at once), but micro-batch-major order was \
             asked for"
        ),
        "{table}"
    );
    let y = read(&dir.join("y.npy"));
    let worst = y
        .iter()
        .zip(&mlp.reference())
        .map(|(a, b)| (f64::from(*a) - b).abs())
        .fold(0.0, f64::max);
    assert!(worst < 2e-4, "largest difference to the reference {worst}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).expect("report"))
            .expect("json");
    let micro = &report["run"]["micro_batches"];
    assert_eq!(
        (micro["count"].as_u64(), micro["samples"].as_u64()),
        (Some(2), Some(128))
    );
    assert!(
        micro["reason"]
            .as_str()
            .is_some_and(|r| r.contains("bytes of SRAM per PE")),
        "{micro}"
    );
    let traffic = &micro["traffic"];
    assert_eq!(
        (
            traffic["weight_bytes"].as_u64(),
            traffic["restream_bytes"].as_u64(),
            traffic["park_bytes"].as_u64(),
            traffic["parked_peak_bytes"].as_u64()
        ),
        (Some(76_840), Some(76_840), Some(262_144), Some(131_072))
    );
    // Every phase once per micro-batch, in order.
    let phases = report["run"]["phases"].as_array().expect("phases");
    let micro_of: Vec<u64> = phases
        .iter()
        .filter_map(|p| p["micro_batch"].as_u64())
        .collect();
    assert_eq!(micro_of, [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]);
}

#[test]
fn a_model_larger_than_the_fabric_runs_layer_major_by_default_and_says_what_the_other_order_costs()
{
    let dir = temp_dir("unheld");
    // 64 → 2048 → 2048 → 10 at batch 64 on dev: 4 micro-batches of 16.
    Mlp::new(&dir, &[64, 2048, 2048, 10], 64, 5);
    let map = ["map", "mlp.wse", "--batch", "64", "--target", "dev"];
    let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(&dir)
        .args(map)
        .args(["--mode", "streaming", "--color", "never"])
        .output()
        .expect("wsel map runs");
    let table = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{table}");
    // Weights 4 B × (64·2048 + 2048 + 2048·2048 + 2048 + 2048·10 + 10) = 17,399,848 B, three
    // times more in micro-batch-major order. Held, dense#1 fits in 2 chunks of its outputs and
    // dense#2 in 64 (its row's 128 × 32 weights a chunk, shared over 16 columns), so
    // layer-major order maps and `auto` runs it (DESIGN §5), parking at each chunk's boundary
    // its input and the result so far (16 × 2,048 × 4 B = 131,072 B each; dense#1's input
    // 4,096 B): 135,168 + 131,072 + 63 × 262,144 + 131,072 = 16,912,384 B a micro-batch, out
    // and in for 3 (101,474,304 B; 3 × 262,144 B at once). The report names the cost of the
    // other order: more cycles by the estimate, but every weight once.
    assert_says(
        &table,
        &[
            "micro-batches: 4 of 16 samples, layer-major: each layer over every micro-batch \
             before the next",
            "each weight streams once (17,399,848 B), and parking the waiting micro-batches' \
             activations in the store moves 101,474,304 B (786,432 B at once) — the default \
             order; micro-batch-major order (`--micro-order micro`) would stream 52,199,544 B \
             of weights again; estimated 10,801,561 cycles layer-major against 3,038,108 \
             micro-batch-major",
        ],
    );
}

#[test]
fn a_model_sixteen_times_the_fabric_maps_layer_major_in_chunks_each_weight_once() {
    let dir = temp_dir("big-layer-major");
    // The 64 → 2048 → 2048 → 10 model of the first test, 32 samples on dev: 2 micro-batches
    // of 16. Layer-major, dense#1 runs in 2 chunks and dense#2 in 64 (a chunk's 128 × 32
    // weights of a row, 16 blocks of 8 weight rows × 2 outputs shared over 16 columns: one a
    // PE, two to receive into and the mark, 193 words), each weight from the store once.
    // The run itself (5,392,836 cycles, 17,399,848 B of weights streamed in, within 3e-8 of
    // NumPy) takes minutes of a debug build: BENCHMARKS.md, not here. Parking: 16,912,384 B
    // a micro-batch (above), out and back in for one.
    Mlp::new(&dir, &[64, 2048, 2048, 10], 32, 9);
    let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(&dir)
        .args([
            "map",
            "mlp.wse",
            "--target",
            "dev",
            "--mode",
            "streaming",
            "--batch",
            "32",
        ])
        .args(["--micro-order", "layer", "--color", "never"])
        .output()
        .expect("wsel map runs");
    let table = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{table}");
    assert_says(
        &table,
        &[
            "layer-major order runs, in 2 micro-batches (`dense#1` in 2 chunks of its outputs, \
             `dense#2` in 64 chunks of its outputs, too big to hold whole",
            "each weight streams once (17,399,848 B), and parking the waiting micro-batches' \
             activations in the store moves 33,824,768 B (262,144 B at once) — asked for",
            "dense#2.64   dense_resident",
        ],
    );
}

/// The NumPy reference of `mlp` (`tests/reference/mlp.py`), computed in float32.
fn numpy_reference(dir: &Path, mlp: &Mlp) -> Vec<f32> {
    let status = Command::new("python3")
        .arg(repo_root().join("tests/reference/mlp.py"))
        .arg(dir)
        .arg(mlp.layers.len().to_string())
        .arg(dir.join("reference.npy"))
        .status()
        .expect("python3 runs (CI installs requirements.txt)");
    assert!(status.success(), "the NumPy reference script failed");
    read(&dir.join("reference.npy"))
}

/// `y` within 1e-5 of the NumPy reference of `mlp` (float32 sums in another order).
fn assert_matches_numpy(dir: &Path, mlp: &Mlp, y: &[f32]) {
    let difference = largest_difference(y, &numpy_reference(dir, mlp));
    assert!(difference < 1e-5, "{difference}");
}

/// Asserts that the report `table` says each of `lines`.
fn assert_says(table: &str, lines: &[&str]) {
    for line in lines {
        assert!(table.contains(line), "{line}\n{table}");
    }
}

/// Asserts that `layer` ran `count` phases in the report `run` and took weights from the
/// store in its first only (layer-major order: the others apply the held weights).
fn assert_weights_in_first_phase_only(run: &Value, layer: &str, count: usize) {
    let phases = run["run"]["phases"].as_array().expect("phases");
    let own: Vec<&Value> = phases.iter().filter(|p| p["layer"] == layer).collect();
    assert_eq!(own.len(), count, "{own:?}");
    assert!(!own[0]["weights_in"].is_null(), "{}", own[0]);
    assert!(
        own[1..].iter().all(|p| p["weights_in"].is_null()),
        "{own:?}"
    );
}

/// The run report's JSON.
fn report(dir: &Path, name: &str) -> Value {
    let text = std::fs::read_to_string(dir.join(name)).expect("report");
    serde_json::from_str(&text).expect("json")
}

/// `wsel run` of the `Mlp` in `dir` in streaming mode with `--micro-order order`, the result
/// in `out` and the JSON report in `report`; the table.
fn run_streamed(dir: &Path, order: &str, out: &str, report: &str) -> String {
    let args = [
        "run",
        "mlp.wse",
        "--input",
        "x=x.npy",
        "--output",
        out,
        "--mode",
        "streaming",
        "--micro-order",
        order,
        "--report",
        report,
    ];
    run_ok(dir, &args)
}

fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

#[test]
fn a_wide_first_layer_streams_each_weight_once_layer_major_by_default_micro_batch_major_faster() {
    let dir = temp_dir("layer-major");
    // 1,024 samples of 768 → 4 → 4 on dev. Weights: 4 B × (768·4 + 4 + 4·4 + 4) = 12,384 B.
    // At once the batch does not fit (stage_in#1 would hold 64 samples of 48 features per
    // PE); micro-batch-major order runs 4 micro-batches of 256 and streams the weights 3 more
    // times: 37,152 B. Layer-major holds dense#1's weights shared over the row's 16 columns:
    // its row's 4 blocks of 48 weights (one a chunk), at most one a PE in a slot of 48 words,
    // two slots to receive into and the mark, 145 words (held whole, 48 × 4 + 1 = 193 words
    // fitted only at 128 samples), so it runs in the same 4 micro-batches of 256; it parks
    // relu#1's 256 × 4 result (4,096 B) of 3 micro-batches out and back in before dense#2:
    // 2 × 3 × 4,096 = 24,576 B, fewer.
    let mlp = Mlp::new(&dir, &[768, 4, 4], 1024, 17);
    // `auto` runs it (DESIGN §5), and shows both orders' estimates: 240,196 cycles
    // layer-major (the mapper's figures: each weight from the store once, each park and
    // unpark for 3 of the 4 micro-batches, their 4,096 B at 64 B a cycle within the unparks'
    // estimates) against 223,484 micro-batch-major.
    let table = run_streamed(&dir, "auto", "y.npy", "r.json");
    assert_says(
        &table,
        &[
            "4 micro-batches of 256 samples, layer-major: each layer over every micro-batch",
            "layer-major order runs, in 4 micro-batches: each weight streams once (12,384 B), \
             and parking the waiting micro-batches' activations in the store moves 24,576 B \
             (12,288 B at once) — the default order; micro-batch-major order (`--micro-order \
             micro`) would stream 37,152 B of weights again; estimated 240,196 cycles \
             layer-major against 223,484 micro-batch-major",
        ],
    );
    // As simulated: one pass of the weights; the 3 parked micro-batches' 1,024 words out of
    // the west edge and back in.
    assert!(
        table.contains(
            "store, as simulated: 12,384 B of weights streamed in; 12,288 B of activations \
             parked out, 12,288 B back in."
        ),
        "{table}"
    );
    let layer_run = report(&dir, "r.json");
    let micro = &layer_run["run"]["micro_batches"];
    assert_eq!(micro["store"]["weights"].as_u64(), Some(12_384), "{micro}");
    assert_eq!(micro["traffic"]["layer_major"].as_bool(), Some(true));
    let y = read(&dir.join("y.npy"));
    // Against NumPy in float32: sums of 768 products in another order, then softmax.
    assert_matches_numpy(&dir, &mlp, &y);

    // Micro-batch-major order, asked for: no phase waits for the store (dense#1's 12,304 B
    // take 193 cycles at 64 B a cycle, its work for 256 samples tens of thousands), so
    // streaming the weights again costs no time, while layer-major's park and unpark phases,
    // and its later micro-batches' weights passed along the rows, do. Every sample computed
    // the same way (the tiles do not depend on the micro-batch's size), so the same bits;
    // the weights streamed 4 times.
    let table = run_streamed(&dir, "micro", "y_micro.npy", "r_micro.json");
    assert!(
        table.contains(
            "would move 24,576 B (12,288 B at once), but micro-batch-major order was asked \
             for: micro-batch-major order runs"
        ),
        "{table}"
    );
    assert!(
        table.contains("4 micro-batches of 256 samples, one after another"),
        "{table}"
    );
    assert!(table.contains("49,536 B of weights streamed"), "{table}");
    let micro_run = report(&dir, "r_micro.json");
    let micro = &micro_run["run"]["micro_batches"];
    assert_eq!(
        micro["store"]["weights"].as_u64(),
        Some(4 * 12_384),
        "{micro}"
    );
    assert!(same_bits(&y, &read(&dir.join("y_micro.npy"))));
    // The fabric agrees with the estimate's ranking: micro-batch-major order is the faster.
    let cycles = |r: &Value| r["run"]["cycles"].as_u64().expect("cycles");
    assert!(
        cycles(&micro_run) < cycles(&layer_run),
        "{} {}",
        cycles(&micro_run),
        cycles(&layer_run)
    );
}

#[test]
fn layer_major_order_on_request_runs_where_it_does_not_pay() {
    let dir = temp_dir("layer-forced");
    // 1,024 samples of 64 → 64 → 10: 2 micro-batches of 512. Parking relu#1's 512 × 64
    // result (131,072 B) out and in moves 262,144 B, more than the 19,240 B of weights
    // streamed again; asked for (as `auto` would), layer-major holds
    // dense#1's 4 × 64 weights of its row shared over its 16 columns (its 16 blocks of 4 × 4
    // weights, one a PE) and runs in the same 2 micro-batches.
    let mlp = Mlp::new(&dir, &[64, 64, 10], 1024, 23);
    let table = run_streamed(&dir, "layer", "y.npy", "r.json");
    assert!(
        table.contains(
            "layer-major order runs, in 2 micro-batches: each weight streams once (19,240 B), \
             and parking the waiting micro-batches' activations in the store moves 262,144 B \
             (131,072 B at once) — asked for; estimated 191,794 cycles layer-major against \
             179,276 micro-batch-major"
        ),
        "{table}"
    );
    assert!(
        table.contains("19,240 B of weights streamed in; 131,072 B of activations parked out"),
        "{table}"
    );
    let y = read(&dir.join("y.npy"));
    assert!(largest_difference(&y, &numpy_reference(&dir, &mlp)) < 1e-5);
    // The estimates (the mapper's figures) agree with the bytes: layer-major's park and
    // unpark phases (one of the 2 micro-batches parked, its unpark at least 131,072 B at
    // 64 B a cycle, 2,048 cycles) take time that streaming again does not.
    // Micro-batch-major order, asked for, computes the same bits.
    let table = run_streamed(&dir, "micro", "y_micro.npy", "r_micro.json");
    assert!(
        table.contains(
            "add 19,240 B from the store; parking the waiting micro-batches' activations there \
             instead would move 262,144 B (131,072 B at once), but micro-batch-major order was \
             asked for: micro-batch-major order runs"
        ),
        "{table}"
    );
    assert!(same_bits(&y, &read(&dir.join("y_micro.npy"))));
}

#[test]
fn a_phase_that_does_not_fit_beside_held_weights_keeps_micro_batch_major_order() {
    // tests/ui/E0619-*.wse: 37 samples of 4800 → 2 on dev, micro-batches of one sample on one
    // column. Held, dense#1's row of 300 × 2 weights, its mark and its bias take
    // 4 B × (601 + 1) = 2,408 B per PE; stage_in#1 beside them takes 4 B × (300 + 300) for a
    // sample's block and a row's buffer: 4,808 B > 4,096. `auto` keeps micro-batch-major order
    // and says why; `layer` is E0619 (the UI test).
    let model = repo_root().join("tests/ui/E0619-phase-beside-held-weights.wse");
    let model = model.to_str().expect("utf-8 path");
    let args = [
        "map",
        model,
        "--mode",
        "streaming",
        "--batch",
        "37",
        "--micro-order",
        "auto",
    ];
    let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .args(args)
        .args(["--color", "never"])
        .output()
        .expect("wsel runs");
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{table}");
    assert!(
        table.contains(
            "held between micro-batches the weights do not fit: in layer-major order `dense#1` \
             holds 2408 bytes of weights per PE between micro-batches, and phase 0 \
             (`stage_in#1`), which runs beside them, needs 2400 bytes of its own: 4808 bytes \
             per PE at best (16 × 1 PEs, micro-batches of 1 sample), the target has 4096: \
             micro-batch-major order runs"
        ),
        "{table}"
    );
}

#[test]
fn the_run_items_micro_order_runs_as_the_flag_does_and_the_flag_overrides_it() {
    let dir = temp_dir("micro-order-item");
    // The model of `layer_major_order_on_request_runs_where_it_does_not_pay`, its item asking
    // for layer-major order (`auto` would run it too).
    Mlp::new(&dir, &[64, 64, 10], 1024, 23);
    let mut source = std::fs::read_to_string(dir.join("mlp.wse")).expect("model");
    source += "\nrun mlp {\n    input x = \"x.npy\";\n    mode = \"streaming\";\n    micro_order = \"layer\";\n}\n";
    std::fs::write(dir.join("mlp.wse"), source).expect("model");
    let by_item = run_ok(&dir, &["run", "mlp.wse", "--output", "y_item.npy"]);
    let by_flag = run_streamed(&dir, "layer", "y_flag.npy", "r_flag.json");
    assert!(
        by_item.contains("layer-major order runs, in 2 micro-batches"),
        "{by_item}"
    );
    // Every line of the report but the output's name and the simulator's wall time is the
    // same, cycles included, and so are the results' bits.
    let lines = |table: &str| -> Vec<String> {
        table
            .lines()
            .filter(|l| !l.contains("of wall time") && !l.starts_with("  output:"))
            .map(str::to_string)
            .collect()
    };
    let (item_lines, flag_lines) = (lines(&by_item), lines(&by_flag));
    assert_eq!(item_lines.len(), flag_lines.len(), "{by_item}\n{by_flag}");
    for (a, b) in item_lines.iter().zip(&flag_lines) {
        assert_eq!(a, b);
    }
    let y = read(&dir.join("y_item.npy"));
    assert!(same_bits(&y, &read(&dir.join("y_flag.npy"))));

    // `--micro-order micro` overrides the item.
    let args = [
        "run",
        "mlp.wse",
        "--output",
        "y_micro.npy",
        "--micro-order",
        "micro",
    ];
    let overridden = run_ok(&dir, &args);
    assert!(
        overridden.contains("micro-batch-major order runs"),
        "{overridden}"
    );
}

#[test]
fn a_wide_layer_holds_a_share_of_its_rows_weights_per_column_and_streams_each_once() {
    let dir = temp_dir("held-share");
    // 256 samples of 64 → 1024 → 10 on dev. Weights: 4 B × (64·1024 + 1024 + 1024·10 + 10)
    // = 307,240 B. At once the batch does not fit; micro-batch-major order takes 8 of 32.
    // Held whole, each PE would keep its row's 4 × 1024 weights, 16,388 B with the mark
    // (E0618 before: more than a PE's 4,096 B at any size). dense_held shares the row's
    // blocks out over the 16 columns: 16 chunks of 64 outputs × 2 blocks of k = 2 weight
    // rows, 32 blocks of 128 words, 2 a PE (256 words), two blocks to receive into (256) and
    // the mark: 2,052 B, which fit beside 2 samples a column (dense#1's 3,932 B in all). So
    // layer-major runs in the same 8 micro-batches of 32, each weight from the store once,
    // and parks relu#1's 32 × 1024 result (131,072 B) of 7 micro-batches out and back in.
    let mlp = Mlp::new(&dir, &[64, 1024, 10], 256, 31);
    let table = run_streamed(&dir, "layer", "y.npy", "r.json");
    assert_says(
        &table,
        &[
            "8 micro-batches of 32 samples, layer-major: each layer over every micro-batch",
            "layer-major order runs, in 8 micro-batches: each weight streams once (307,240 B), \
             and parking the waiting micro-batches' activations in the store moves 1,835,008 B \
             (917,504 B at once) — asked for",
            // Counted by the simulator, wavelet by wavelet: one pass of the weights.
            "store, as simulated: 307,240 B of weights streamed in; 917,504 B of activations \
             parked out, 917,504 B back in.",
        ],
    );
    let run = report(&dir, "r.json");
    // dense#1's later micro-batches take their blocks from the row's PEs, not the store.
    assert_weights_in_first_phase_only(&run, "dense#1", 8);
    assert_weights_in_first_phase_only(&run, "dense#2", 8);
    let y = read(&dir.join("y.npy"));
    assert_matches_numpy(&dir, &mlp, &y);
    // Micro-batch-major order: the same 8 micro-batches, each streaming every weight again,
    // and the same bits (a block applied from the share or from the row computes the same).
    let table = run_streamed(&dir, "micro", "y_micro.npy", "r_micro.json");
    assert!(
        table.contains("8 micro-batches of 32 samples, one after another"),
        "{table}"
    );
    let micro = report(&dir, "r_micro.json");
    let store = &micro["run"]["micro_batches"]["store"];
    assert_eq!(store["weights"].as_u64(), Some(8 * 307_240), "{store}");
    assert!(same_bits(&y, &read(&dir.join("y_micro.npy"))));
}

/// The `Mlp` `64 → hidden → 10` in `dir` with a layernorm after its first dense layer:
/// softmax(dense(relu(layernorm(dense(x, w0, b0), g0, s0)), w1, b1)), the gain and shift
/// random (g0 near 1) in `g0.npy` and `s0.npy` (`tests/reference/mlp.py` reads them).
fn normed_mlp(dir: &Path, hidden: usize, batch: usize, seed: u64) -> Mlp {
    let mlp = Mlp::new(dir, &[64, hidden, 10], batch, seed);
    let mut values = Values(seed + 1);
    let g: Vec<f32> = values.matrix(hidden, 0.5).iter().map(|v| v + 1.0).collect();
    write_f32_npy(&dir.join("g0.npy"), &[hidden as u64], &g);
    write_f32_npy(
        &dir.join("s0.npy"),
        &[hidden as u64],
        &values.matrix(hidden, 0.1),
    );
    let source = format!(
        "import std.nn.{{dense, layernorm, relu, softmax}};\n\n\
         model mlp(x: f32[B, 64]) -> f32[B, 10] {{\n\
         \x20   param w0: f32[64, {hidden}] from \"w0.npy\";\n\
         \x20   param b0: f32[{hidden}] from \"b0.npy\";\n\
         \x20   param g0: f32[{hidden}] from \"g0.npy\";\n\
         \x20   param s0: f32[{hidden}] from \"s0.npy\";\n\
         \x20   param w1: f32[{hidden}, 10] from \"w1.npy\";\n\
         \x20   param b1: f32[10] from \"b1.npy\";\n\
         \x20   return softmax(dense(relu(layernorm(dense(x, w0, b0), g0, s0)), w1, b1));\n}}\n"
    );
    std::fs::write(dir.join("mlp.wse"), source).expect("model");
    mlp
}

#[test]
fn a_layernorm_holds_its_gain_and_shift_layer_major_and_each_weight_streams_once() {
    let dir = temp_dir("layer-major-layernorm");
    // 1,024 samples of 64 → 128 dense, layernorm, relu, 128 → 10 dense, softmax on dev.
    // Weights: 4 B × (64·128 + 128) = 33,280 B for dense#1, 4 B × (128 + 128) = 1,024 B for
    // layernorm#1's g and b, 4 B × (128·10 + 10) = 5,160 B for dense#2: 39,464 B. The batch
    // does not fit at once. Layer-major runs `layernorm_held` in layernorm's place (before
    // it existed this command was E0618: layernorm#1 had no streaming implementation that
    // holds its weights), each row keeping its 8 features' g and b, so each weight streams
    // once, in 4 micro-batches of 256, as micro-batch-major order (dense#1 holds its row's
    // 4 × 128 weights shared over the 16 columns; held whole, 256 samples did not fit).
    let mlp = normed_mlp(&dir, 128, 1024, 29);
    let table = run_streamed(&dir, "layer", "y.npy", "r.json");
    assert_says(
        &table,
        &[
            "4 micro-batches of 256 samples, layer-major: each layer over every micro-batch",
            "layer-major order runs, in 4 micro-batches: each weight streams once (39,464 B)",
            "store, as simulated: 39,464 B of weights streamed in;",
        ],
    );
    let run = report(&dir, "r.json");
    assert_eq!(
        run["run"]["micro_batches"]["store"]["weights"].as_u64(),
        Some(39_464)
    );
    // layernorm#1's g and b enter the fabric in its first phase only; its 3 others take none.
    assert_weights_in_first_phase_only(&run, "layernorm#1", 4);

    // Against NumPy in float32 (`tests/reference/mlp.py`, its layernorm `forward.py`'s):
    // 1e-5 bounds the float32 sums' other order, as above (by hand, on this model with other
    // random data: 9e-8).
    let y = read(&dir.join("y.npy"));
    assert_matches_numpy(&dir, &mlp, &y);
    // Micro-batch-major order: 4 micro-batches of 256, every weight streamed 4 times, and
    // the same bits (every layer's tiles compute a sample the same way at any micro-batch).
    let table = run_streamed(&dir, "micro", "y_micro.npy", "r_micro.json");
    assert!(
        table.contains("4 micro-batches of 256 samples, one after another"),
        "{table}"
    );
    let micro = report(&dir, "r_micro.json");
    let store = &micro["run"]["micro_batches"]["store"];
    assert_eq!(store["weights"].as_u64(), Some(4 * 39_464), "{store}");
    assert!(same_bits(&y, &read(&dir.join("y_micro.npy"))));
}

/// A token model in `dir` (as `mlp.wse`, its ids `x.npy`): softmax(dense(embedding(x, table,
/// pos), w0, b0)) with a vocabulary of 16, a context of 8, 256 features and 10 outputs, and
/// `batch` random ids; returns its probabilities computed here in f64.
fn embedding_model(dir: &Path, batch: usize, seed: u64) -> Vec<f64> {
    let (vocab, context, d, m) = (16, 8, 256, 10);
    let mut values = Values(seed);
    let ids: Vec<f32> = (0..batch)
        .map(|_| ((values.next() + 1.0) * 8.0).floor().min(15.0) as f32)
        .collect();
    let table = values.matrix(vocab * d, 1.0);
    let pos = values.matrix(context * d, 0.5);
    let w = values.matrix(d * m, 1.0 / 16.0);
    let b = values.matrix(m, 0.1);
    let npy = |name: &str, shape: &[u64], v: &[f32]| write_f32_npy(&dir.join(name), shape, v);
    npy("x.npy", &[batch as u64, 1], &ids);
    npy("table.npy", &[vocab as u64, d as u64], &table);
    npy("pos.npy", &[context as u64, d as u64], &pos);
    npy("w0.npy", &[d as u64, m as u64], &w);
    npy("b0.npy", &[m as u64], &b);
    let source = "import std.nn.{dense, embedding, softmax};\n\n\
         model emb(x: f32[B, 1]) -> f32[B, 10] {\n\
         \x20   param table: f32[16, 256] from \"table.npy\";\n\
         \x20   param pos: f32[8, 256] from \"pos.npy\";\n\
         \x20   param w0: f32[256, 10] from \"w0.npy\";\n\
         \x20   param b0: f32[10] from \"b0.npy\";\n\
         \x20   return softmax(dense(embedding(x, table, pos), w0, b0));\n}\n";
    std::fs::write(dir.join("mlp.wse"), source).expect("model");
    let mut out = Vec::new();
    for (s, &id) in ids.iter().enumerate() {
        let (t, p) = (id as usize * d, (s % context) * d);
        let h: Vec<f64> = (0..d)
            .map(|f| f64::from(table[t + f]) + f64::from(pos[p + f]))
            .collect();
        let z: Vec<f64> = (0..m)
            .map(|j| (0..d).map(|f| h[f] * f64::from(w[f * m + j])).sum::<f64>() + f64::from(b[j]))
            .collect();
        let top = z.iter().copied().fold(f64::MIN, f64::max);
        let sum: f64 = z.iter().map(|v| (v - top).exp()).sum();
        out.extend(z.iter().map(|v| (v - top).exp() / sum));
    }
    out
}

#[test]
fn an_embedding_holds_its_table_layer_major_and_each_weight_streams_once() {
    let dir = temp_dir("layer-major-embedding");
    // 1,024 tokens (sequences of 8) through a 16 × 256 table, 8 × 256 positions, 256 → 10
    // dense and softmax on dev. Weights: 4 B × 16·256 = 16,384 B of table, 4 B × 8·256 =
    // 8,192 B of positions, 4 B × (256·10 + 10) = 10,280 B of dense: 34,856 B. The batch
    // does not fit at once (embedding#1 needs 4,432 B per PE). Layer-major runs
    // `embedding_held` in embedding's place (before it existed this command was E0618:
    // embedding#1 had no streaming implementation that holds its weights), each PE keeping
    // its row's 16 features of all 24 rows (385 words with the mark), in 2 micro-batches of
    // 512: each weight streams once.
    let reference = embedding_model(&dir, 1024, 31);
    let table = run_streamed(&dir, "layer", "y.npy", "r.json");
    assert_says(
        &table,
        &[
            "2 micro-batches of 512 samples, layer-major: each layer over every micro-batch",
            "layer-major order runs, in 2 micro-batches: each weight streams once (34,856 B)",
            "store, as simulated: 34,856 B of weights streamed in;",
        ],
    );
    assert_weights_in_first_phase_only(&report(&dir, "r.json"), "embedding#1", 2);
    // Against the f64 reference: 2e-4, as the top of this file says (a dense sum of 256
    // products in float32, then softmax).
    let y = read(&dir.join("y.npy"));
    let worst = y
        .iter()
        .zip(&reference)
        .map(|(&a, &r)| (f64::from(a) - r).abs())
        .fold(0.0, f64::max);
    assert!(worst < 2e-4, "{worst}");
    // Micro-batch-major order: the same 2 micro-batches, every weight streamed twice, and
    // the same bits.
    let table = run_streamed(&dir, "micro", "y_micro.npy", "r_micro.json");
    assert!(table.contains("69,712 B of weights streamed in"), "{table}");
    assert!(same_bits(&y, &read(&dir.join("y_micro.npy"))));
}

#[test]
fn a_layer_too_big_to_hold_runs_layer_major_in_chunks_and_streams_each_weight_once() {
    let dir = temp_dir("layer-major-chunks");
    // 256 samples of 64 → 2048 → 10 on dev. Weights: 4 B × (64·2048 + 2048 + 2048·10 + 10)
    // = 614,440 B. Micro-batches of 16 (one sample a column on 16 × 16). Held whole, dense#1
    // needs 5,196 B a PE (tests/ui/E0618-*.wse; E0618 before chunks). In 2 chunks of its
    // outputs, the every-other columns of w0 and b0 from 0 and from 1, a chunk holds a PE's
    // share of its row's 64 × 1,024 weights — 2 blocks of 2 weight rows × 64 outputs, two to
    // receive into and the mark, 513 words — beside its input (4 words), the whole layer's
    // result (128, written every other word) and its accumulator, partial sums and bias (64
    // each): 3,404 B with the kernel's scalars. Each chunk runs over all 16 micro-batches,
    // each weight from the store once. Parking: before dense#1.2 the input (16 × 64 × 4 B)
    // and the result so far (16 × 2,048 × 4 B), 135,168 B a micro-batch; before dense#2
    // relu#1's 131,072 B; out and in for 15 of 16: 2 × 15 × 266,240 = 7,987,200 B.
    let mlp = Mlp::new(&dir, &[64, 2048, 10], 256, 41);
    let table = run_streamed(&dir, "layer", "y.npy", "r.json");
    assert_says(
        &table,
        &[
            "16 micro-batches of 16 samples, layer-major: each layer over every micro-batch",
            "layer-major order runs, in 16 micro-batches (`dense#1` in 2 chunks of its outputs, \
             too big to hold whole: each chunk's weights held over every micro-batch before the \
             next chunk's stream in, its input parked and unparked once a chunk): each weight \
             streams once (614,440 B), and parking the waiting micro-batches' activations in the \
             store moves 7,987,200 B (2,027,520 B at once) — asked for",
            // Counted by the simulator, wavelet by wavelet: one pass of the weights, and the
            // chunks' extra parking.
            "store, as simulated: 614,440 B of weights streamed in; 3,993,600 B of activations \
             parked out, 3,993,600 B back in.",
            "dense#1.1    dense_resident",
        ],
    );
    let run = report(&dir, "r.json");
    for layer in ["dense#1.1", "dense#1.2", "dense#2"] {
        assert_weights_in_first_phase_only(&run, layer, 16);
    }
    let chunks = &run["run"]["micro_batches"]["traffic"]["chunks"];
    assert_eq!(
        chunks,
        &serde_json::json!([{"layer": "dense#1", "count": 2}])
    );
    let dense = run["run"]["layers"].as_array().expect("layers");
    let chunk = dense
        .iter()
        .find(|l| l["name"] == "dense#1.1")
        .expect("chunk");
    assert_eq!(chunk["sram_bytes_per_pe"].as_u64(), Some(3_404), "{chunk}");
    let y = read(&dir.join("y.npy"));
    assert_matches_numpy(&dir, &mlp, &y);
    // Micro-batch-major order: the same 16 micro-batches, each streaming every weight again,
    // and the same bits: every output's sum runs in the same order (its row's partial sum
    // over the row's features, then down the column to the row that keeps it, on the same
    // 16 rows), whichever chunk computes it.
    let table = run_streamed(&dir, "micro", "y_micro.npy", "r_micro.json");
    assert!(
        table.contains("store, as simulated: 9,831,040 B of weights streamed in"),
        "{table}"
    );
    assert!(same_bits(&y, &read(&dir.join("y_micro.npy"))));
}

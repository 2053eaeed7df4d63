//! Streamed training on per-layer rows (`docs/running.md`, "How a training step runs"): the
//! forward phases of a chain on the rows the mapper's programme gives them, every backward
//! layer on the rows of the forward layer it differentiates (where the activations it reads
//! were kept), and relayout phases (`std.resident`'s `relayout`) moving a forward input down
//! and a gradient back up where the rows change.
//!
//! The model: 512 → 4 → 4 (a relu between, softmax after, the mean cross-entropy) on `dev`,
//! batch 8, three SGD steps with momentum, on 32 samples of its own with 4 classes. The wide
//! layer pays for rows (its 512 features split over them), the narrow one does not. The run
//! must match `tests/reference/train.py` (float64, the same batch order) on every loss within
//! 1e-5 relative and every weight within 1e-5 absolute: a relayout copies words and moves no
//! arithmetic, so the only difference is float32 rounding, as in tests/training.rs (each
//! dense sums at most 512 products of values below 1 in magnitude; measured: weights within
//! 1.8e-8, losses within 1e-7 relative). Its phases' rows come from report.json (dense#1
//! and its weight gradient on 12 rows, the tail and its backward on 1, when measured), every
//! backward layer on its forward layer's rows, and every step's simulated cycles are below
//! the same steps run with `--one-region` (every phase on one region, which must match the
//! reference too): measured 29,843 cycles a step against 34,115.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod support;
use serde_json::Value;
use support::transformer::wsel_train_file;
use support::{Scratch, lcg_values, matches_mlp_reference, repo_root, temp_dir, write_f32_npy};

/// The model's widths, its input first.
const WIDTHS: [u64; 3] = [512, 4, 4];

/// Training samples in the data.
const SAMPLES: u64 = 32;

/// Writes `labels` as a little-endian int32 `.npy` file of one dimension.
fn write_labels(path: &Path, labels: &[i32]) {
    let dict = format!(
        "{{'descr': '<i4', 'fortran_order': False, 'shape': ({},), }}",
        labels.len()
    );
    // Magic, version, header length, then the header padded so the data starts at 64.
    let pad = 64 - (10 + dict.len() + 1) % 64;
    let header = format!("{dict}{}\n", " ".repeat(pad % 64));
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    for l in labels {
        bytes.extend(l.to_le_bytes());
    }
    std::fs::write(path, bytes).expect("write labels");
}

/// Writes the data (x_train.npy, y_train.npy), the initial weights (layer i's scaled by
/// 1/sqrt(fan-in), biases in [-0.5, 0.5)) and the model with its `train` item into `dir`;
/// the model file's path.
fn write_model(dir: &Path) -> PathBuf {
    let x = lcg_values((SAMPLES * WIDTHS[0]) as usize, 1, -0.5);
    write_f32_npy(&dir.join("x_train.npy"), &[SAMPLES, WIDTHS[0]], &x);
    let labels: Vec<i32> = lcg_values(SAMPLES as usize, 7, 0.0)
        .iter()
        .map(|v| (v * 4.0) as i32)
        .collect();
    write_labels(&dir.join("y_train.npy"), &labels);
    let mut params = String::new();
    for k in 1..WIDTHS.len() {
        let (n, m) = (WIDTHS[k - 1], WIDTHS[k]);
        let scale = 1.0 / (n as f32).sqrt();
        let w: Vec<f32> = lcg_values((n * m) as usize, 10 + k as u64, -0.5)
            .iter()
            .map(|v| v * scale)
            .collect();
        write_f32_npy(&dir.join(format!("w{k}.npy")), &[n, m], &w);
        let b = lcg_values(m as usize, 20 + k as u64, -0.5);
        write_f32_npy(&dir.join(format!("b{k}.npy")), &[m], &b);
        params += &format!("    param w{k}: f32[{n}, {m}] from \"w{k}.npy\";\n");
        params += &format!("    param b{k}: f32[{m}] from \"b{k}.npy\";\n");
    }
    let source = format!(
        "import std.nn.{{dense, relu, softmax}};\n\nmodel mlp(x: f32[B, 512]) -> f32[B, 4] {{\n{params}    \
         return softmax(dense(relu(dense(x, w1, b1)), w2, b2));\n}}\n\n\
         train mlp {{\n    input x = \"{x}\";\n    labels = \"{y}\";\n    optimizer = \"sgd\";\n    \
         momentum = 0.9;\n    lr = 0.05;\n    steps = 3;\n    batch = 8;\n    seed = 1;\n    \
         target = \"dev\";\n}}\n",
        x = dir.join("x_train.npy").display(),
        y = dir.join("y_train.npy").display(),
    );
    let file = dir.join("mlp.wse");
    std::fs::write(&file, source).expect("write the model");
    file
}

/// `wsel train FILE --out OUT` with `args`, which must succeed.
fn train(file: &Path, out: &Path, args: &[&str]) -> String {
    let run: Output = wsel_train_file(file, out, args);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    String::from_utf8_lossy(&run.stdout).into_owned()
}

/// The reference trainer's losses and weights for the model in `dir` (3 SGD steps of 8,
/// momentum 0.9, lr 0.05, seed 1, on `dir`'s data), written into `out`.
fn reference(dir: &Path, out: &Path) {
    let status = Command::new("python3")
        .current_dir(repo_root())
        .arg("tests/reference/train.py")
        .arg(out)
        .args(["--optimizer", "sgd", "--lr", "0.05", "--steps", "3"])
        .args(["--batch", "8", "--seed", "1", "--layers", "2", "--init"])
        .arg(dir)
        .arg("--data")
        .arg(dir)
        .status()
        .expect("python3 runs (pip install -r requirements.txt)");
    assert!(status.success(), "the reference trainer failed");
}

/// Every step's simulated cycles (loss.csv's `cycles` column).
fn step_cycles(out: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(out.join("loss.csv")).expect("loss.csv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let at = header.iter().position(|h| *h == "cycles").expect("cycles");
    lines
        .map(|l| {
            l.split(',')
                .nth(at)
                .expect("a cycles cell")
                .parse()
                .expect("a number")
        })
        .collect()
}

/// The report the run wrote (report.json in its output folder).
fn report(out: &Path) -> Value {
    let text = std::fs::read_to_string(out.join("report.json")).expect("report.json");
    serde_json::from_str(&text).expect("JSON report")
}

/// The rows of the phase running `layer` in `per_layer`'s phases.
fn rows_of(per_layer: &Value, layer: &str) -> u64 {
    per_layer["phases"]
        .as_array()
        .expect("phases")
        .iter()
        .find(|p| p["layer"] == layer)
        .and_then(|p| p["rows"].as_u64())
        .unwrap_or_else(|| panic!("no phase {layer}: {per_layer}"))
}

/// A scratch folder named `name` with the model (its path) and the reference's training
/// (the folder it is in).
fn model_and_reference(name: &str) -> (Scratch, PathBuf, PathBuf) {
    let dir = temp_dir(name);
    let file = write_model(&dir);
    let theirs = dir.join("reference");
    reference(&dir, &theirs);
    (dir, file, theirs)
}

/// Trains `file` into `out` with `args`; the report's `per_layer`, which must be there.
fn per_layer_run(file: &Path, out: &Path, args: &[&str]) -> Value {
    let stdout = train(file, out, args);
    let per_layer = report(out)["per_layer"].clone();
    assert!(per_layer.is_object(), "one region: {stdout}");
    assert!(stdout.contains("per-layer rows of"), "{stdout}");
    per_layer
}

#[test]
fn a_wide_then_narrow_mlp_trains_on_per_layer_rows_like_numpy() {
    let (dir, file, theirs) = model_and_reference("train-regions");
    let out = dir.join("out");
    let per_layer = &per_layer_run(&file, &out, &[]);
    // The wide layer on more rows than the narrow one; every backward layer on the rows of
    // the forward layer it differentiates (the backward layers are numbered last layer
    // first: dense_grad_w#1 is dense#2's), the loss on the model result's.
    let rows = |layer: &str| rows_of(per_layer, layer);
    let (wide, narrow) = (rows("dense#1"), rows("dense#2"));
    assert!(wide > narrow, "dense#1 on {wide} rows, dense#2 on {narrow}");
    for (forward, backward) in [
        ("dense#1", "dense_grad_w#2"),
        ("dense#1", "dense_grad_b#2"),
        ("relu#1", "relu_backward#1"),
        ("dense#2", "dense_backward#1"),
        ("dense#2", "dense_grad_w#1"),
        ("dense#2", "dense_grad_b#1"),
        ("softmax#1", "softmax_backward#1"),
        ("softmax#1", "cross_entropy#1"),
        ("softmax#1", "cross_entropy_backward#1"),
    ] {
        assert_eq!(rows(backward), rows(forward), "{backward}: {per_layer}");
    }
    // A relayout down in the forward pass and one back up in the backward pass, each on the
    // larger of its two row counts.
    let relayouts: Vec<&Value> = per_layer["phases"]
        .as_array()
        .expect("phases")
        .iter()
        .filter(|p| {
            p["layer"]
                .as_str()
                .is_some_and(|l| l.starts_with("relayout#"))
        })
        .collect();
    assert_eq!(relayouts.len(), 2, "{per_layer}");
    for relayout in relayouts {
        assert_eq!(relayout["rows"], wide, "{per_layer}");
    }
    let estimated = per_layer["estimated_cycles"].as_u64().expect("estimate");
    let one_estimate = per_layer["one_region"]["estimated_cycles"].as_u64();
    assert!(
        one_estimate.is_some_and(|one| estimated < one),
        "{per_layer}"
    );
    let worst = matches_mlp_reference(&out, &theirs, 2);
    assert!(worst > 0.0, "float32 against float64 differs somewhere");

    // The same steps on one region: the reference's numbers too, and every step slower.
    let one = dir.join("one");
    train(&file, &one, &["--one-region"]);
    assert!(report(&one)["per_layer"].is_null());
    matches_mlp_reference(&one, &theirs, 2);
    let (rows, region) = (step_cycles(&out), step_cycles(&one));
    assert_eq!(rows.len(), 3);
    for (step, (a, b)) in rows.iter().zip(&region).enumerate() {
        assert!(
            a < b,
            "step {}: {a} cycles on per-layer rows, {b} on one region",
            step + 1
        );
    }
}

/// Micro-batches keep per-layer rows: each pass of 4 samples is mapped the same way, and the
/// store's sum of the two passes' gradients is the batch's, so the run still matches the
/// reference trained with batches of 8 (measured: weights within 1.8e-8).
#[test]
fn micro_batches_train_on_per_layer_rows_like_numpy() {
    let (dir, file, theirs) = model_and_reference("train-regions-micro");
    let out = dir.join("out");
    let per_layer = &per_layer_run(&file, &out, &["--micro-batch", "4"]);
    assert_eq!(per_layer["cols"], 4, "{per_layer}");
    assert!(rows_of(per_layer, "dense#1") > rows_of(per_layer, "dense#2"));
    matches_mlp_reference(&out, &theirs, 2);
}

//! std.nn's softmax, end to end, against a reference computed here: rows of several lengths,
//! which the mapper spreads over different numbers of columns (one PE alone, or a chain east
//! and back west), and batches that fill `softmax_row`'s slots of samples in flight, leave the
//! last round part-full, or hold a single sample (`stdlib/nn.wse`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use wsel::tensor::{Tensor, write_npy_atomic};
use wsel_ir::kernel::ScalarTy;

/// (row length N, batch B). 17 is prime and wider than `dev`: one PE takes the whole row.
const CASES: [(u64, u64); 6] = [(7, 1), (10, 37), (12, 5), (17, 37), (48, 37), (96, 5)];

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wsel-softmax-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Inputs spread over a wide range (so that subtracting each row's max matters), different in
/// every row.
fn input(i: u64) -> f32 {
    ((i * 37 + 11) % 29) as f32 * 1.5 - 20.0
}

/// Softmax of every row of `x`, in f64.
fn reference(x: &[f32], n: usize) -> Vec<f64> {
    x.chunks(n)
        .flat_map(|row| {
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
            let exps: Vec<f64> = row.iter().map(|&v| (v as f64 - max).exp()).collect();
            let sum: f64 = exps.iter().sum();
            exps.into_iter().map(move |e| e / sum)
        })
        .collect()
}

/// Runs softmax over a `batch × n` input on `dev`; the output and the columns of the layer's
/// region.
fn run(dir: &Path, n: u64, batch: u64) -> (Vec<f32>, u64) {
    let model = format!(
        "import std.nn.{{softmax}};\n\nmodel probs(x: f32[B, {n}]) -> f32[B, {n}] {{\n    return softmax(x);\n}}\n"
    );
    let source = dir.join(format!("softmax-{n}-{batch}.wse"));
    std::fs::write(&source, model).expect("model");
    let x = dir.join(format!("x-{n}-{batch}.npy"));
    let tensor = Tensor {
        elem: ScalarTy::F32,
        shape: vec![batch, n],
        words: (0..batch * n).map(|i| input(i).to_bits()).collect(),
    };
    write_npy_atomic(&x, &tensor).expect("write .npy");
    let y = dir.join(format!("y-{n}-{batch}.npy"));
    let report = dir.join(format!("report-{n}-{batch}.json"));
    let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(dir)
        .arg("run")
        .arg(&source)
        .args([
            "--no-cache",
            "--color",
            "never",
            "--batch",
            &batch.to_string(),
        ])
        .arg("--input")
        .arg(format!("x={}", x.display()))
        .arg("--output")
        .arg(&y)
        .arg("--report")
        .arg(&report)
        .output()
        .expect("wsel runs");
    assert!(
        output.status.success(),
        "softmax N = {n}, B = {batch} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let bytes = std::fs::read(&y).expect("output");
    let result: Vec<f32> = npyz::NpyFile::new(&bytes[..])
        .expect("an .npy file")
        .into_vec()
        .expect("f32 values");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("report")).expect("json");
    let cols = report["run"]["layers"][0]["cols"]
        .as_u64()
        .expect("the layer's columns");
    (result, cols)
}

#[test]
fn softmax_matches_the_reference_on_every_row_length_and_batch() {
    let dir = temp_dir();
    let mut columns = BTreeSet::new();
    for (n, batch) in CASES {
        let (got, cols) = run(&dir, n, batch);
        columns.insert(cols);
        let x: Vec<f32> = (0..batch * n).map(input).collect();
        let want = reference(&x, n as usize);
        assert_eq!(got.len(), want.len(), "N = {n}, B = {batch}: output size");
        for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g as f64 - w).abs() <= 1e-6 + 1e-4 * w,
                "N = {n}, B = {batch} on {cols} columns: y[{}, {}] = {g}, expected {w}",
                i as u64 / n,
                i as u64 % n
            );
        }
    }
    // One PE alone and chains of several lengths.
    assert!(
        columns.len() >= 3 && columns.contains(&1),
        "columns used: {columns:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

//! The standard library's layers that keep several samples in flight — std.nn's softmax and
//! std.collectives' allreduce_sum — end to end, against references computed here: rows of
//! several widths (the mapper spreads a row over one PE or a chain of them), batches that fill
//! the kernels' slots, leave the last round part-full, or hold a single sample, and vectors
//! long enough to get a single slot (`stdlib/nn.wse`, `stdlib/collectives.wse`).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use wsel::tensor::{Tensor, write_npy_atomic};
use wsel_ir::kernel::ScalarTy;

mod support;
use support::temp_dir;

/// Runs the one-layer model `model` (whose input `x` has `shape`, batch first) on `dev` with
/// one copy, `x[i] = input(i)`; the output and the columns of the layer's region.
fn run(
    dir: &Path,
    name: &str,
    model: &str,
    shape: &[u64],
    input: fn(u64) -> f32,
) -> (Vec<f32>, u64) {
    let source = dir.join(format!("{name}.wse"));
    std::fs::write(&source, model).expect("model");
    let x = dir.join(format!("x-{name}.npy"));
    let len: u64 = shape.iter().product();
    let tensor = Tensor {
        elem: ScalarTy::F32,
        shape: shape.to_vec(),
        words: (0..len).map(|i| input(i).to_bits()).collect(),
    };
    write_npy_atomic(&x, &tensor).expect("write .npy");
    let y = dir.join(format!("y-{name}.npy"));
    let report = dir.join(format!("report-{name}.json"));
    let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(dir)
        .arg("run")
        .arg(&source)
        .args(["--no-cache", "--color", "never", "--copies", "1"])
        .args(["--batch", &shape[0].to_string()])
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
        "{name} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let bytes = std::fs::read(&y).expect("output");
    let result: Vec<f32> = npyz::NpyFile::new(&bytes[..])
        .expect("an .npy file")
        .into_vec()
        .expect("f32 values");
    assert_eq!(result.len() as u64, len, "{name}: output size");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("report")).expect("json");
    let cols = report["run"]["layers"][0]["cols"]
        .as_u64()
        .expect("the layer's columns");
    (result, cols)
}

/// Inputs spread over a wide range (so that subtracting each row's max matters), different in
/// every row.
fn softmax_input(i: u64) -> f32 {
    ((i * 37 + 11) % 29) as f32 * 1.5 - 20.0
}

/// Softmax of every row of `x`, in f64.
fn softmax_reference(x: &[f32], n: usize) -> Vec<f64> {
    x.chunks(n)
        .flat_map(|row| {
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
            let exps: Vec<f64> = row.iter().map(|&v| (v as f64 - max).exp()).collect();
            let sum: f64 = exps.iter().sum();
            exps.into_iter().map(move |e| e / sum)
        })
        .collect()
}

#[test]
fn softmax_matches_the_reference_on_every_row_length_and_batch() {
    // (row length N, batch B). 17 is prime and wider than `dev`: one PE takes the whole row.
    let cases = [(7, 1), (10, 37), (12, 5), (17, 37), (48, 37), (96, 5)];
    let dir = temp_dir("softmax");
    let mut columns = BTreeSet::new();
    for (n, batch) in cases {
        let model = format!(
            "import std.nn.{{softmax}};\n\nmodel probs(x: f32[B, {n}]) -> f32[B, {n}] {{\n    return softmax(x);\n}}\n"
        );
        let name = format!("softmax-{n}-{batch}");
        let (got, cols) = run(&dir, &name, &model, &[batch, n], softmax_input);
        columns.insert(cols);
        let x: Vec<f32> = (0..batch * n).map(softmax_input).collect();
        let want = softmax_reference(&x, n as usize);
        for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g as f64 - w).abs() <= 1e-6 + 1e-4 * w,
                "{name} on {cols} columns: y[{}, {}] = {g}, expected {w}",
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
}

fn allreduce_input(i: u64) -> f32 {
    ((i * 13 + 5) % 23) as f32 * 0.25 - 2.0
}

#[test]
fn allreduce_matches_the_reference_on_every_shape_and_batch() {
    // (parts P, elements per part N, batch B); 300 elements get a single slot, and one part
    // is summed by one PE alone.
    let cases = [
        (8, 64, 16),
        (4, 8, 1),
        (6, 5, 7),
        (2, 300, 3),
        (16, 16, 20),
        (1, 40, 2),
    ];
    let dir = temp_dir("allreduce");
    let mut columns = BTreeSet::new();
    for (parts, n, batch) in cases {
        let model = format!(
            "import std.collectives.{{allreduce_sum}};\n\nmodel total(x: f32[B, {parts}, {n}]) -> f32[B, {parts}, {n}] {{\n    return allreduce_sum(x);\n}}\n"
        );
        let name = format!("allreduce-{parts}-{n}-{batch}");
        let (got, cols) = run(&dir, &name, &model, &[batch, parts, n], allreduce_input);
        columns.insert(cols);
        for s in 0..batch {
            for j in 0..n {
                let want: f64 = (0..parts)
                    .map(|k| f64::from(allreduce_input((s * parts + k) * n + j)))
                    .sum();
                for k in 0..parts {
                    let g = f64::from(got[((s * parts + k) * n + j) as usize]);
                    assert!(
                        (g - want).abs() <= 1e-4 * (1.0 + want.abs()),
                        "{name} on {cols} columns: y[{s}, {k}, {j}] = {g}, expected {want}"
                    );
                }
            }
        }
    }
    // Chains of several lengths, and one PE alone.
    assert!(
        columns.len() >= 3 && columns.contains(&1),
        "columns used: {columns:?}"
    );
}

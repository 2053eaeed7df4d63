//! std.collectives' allreduce_sum, end to end, against a reference computed here: rows of
//! several widths and vector lengths, batches that fill `row_allreduce`'s slots of samples in
//! flight, leave the last round part-full, or hold a single sample, and a vector long enough
//! to get a single slot (`stdlib/collectives.wse`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use wsel::tensor::{Tensor, write_npy_atomic};
use wsel_ir::kernel::ScalarTy;

/// (parts P, elements per part N, batch B).
const CASES: [(u64, u64, u64); 5] = [(8, 64, 16), (4, 8, 1), (6, 5, 7), (2, 300, 3), (16, 16, 20)];

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wsel-allreduce-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn input(i: u64) -> f32 {
    ((i * 13 + 5) % 23) as f32 * 0.25 - 2.0
}

/// Runs allreduce_sum over a `batch × parts × n` input on `dev`; the output and the columns of
/// the layer's region.
fn run(dir: &Path, parts: u64, n: u64, batch: u64) -> (Vec<f32>, u64) {
    let name = format!("{parts}-{n}-{batch}");
    let model = format!(
        "import std.collectives.{{allreduce_sum}};\n\nmodel total(x: f32[B, {parts}, {n}]) -> f32[B, {parts}, {n}] {{\n    return allreduce_sum(x);\n}}\n"
    );
    let source = dir.join(format!("allreduce-{name}.wse"));
    std::fs::write(&source, model).expect("model");
    let x = dir.join(format!("x-{name}.npy"));
    let tensor = Tensor {
        elem: ScalarTy::F32,
        shape: vec![batch, parts, n],
        words: (0..batch * parts * n).map(|i| input(i).to_bits()).collect(),
    };
    write_npy_atomic(&x, &tensor).expect("write .npy");
    let y = dir.join(format!("y-{name}.npy"));
    let report = dir.join(format!("report-{name}.json"));
    let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(dir)
        .arg("run")
        .arg(&source)
        .args(["--no-cache", "--color", "never", "--copies", "1"])
        .args(["--batch", &batch.to_string()])
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
        "allreduce P = {parts}, N = {n}, B = {batch} failed:\n{}{}",
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
fn allreduce_matches_the_reference_on_every_shape_and_batch() {
    let dir = temp_dir();
    let mut columns = BTreeSet::new();
    for (parts, n, batch) in CASES {
        let (got, cols) = run(&dir, parts, n, batch);
        columns.insert(cols);
        assert_eq!(got.len() as u64, batch * parts * n, "output size");
        for s in 0..batch {
            for j in 0..n {
                let want: f64 = (0..parts)
                    .map(|k| f64::from(input((s * parts + k) * n + j)))
                    .sum();
                for k in 0..parts {
                    let g = f64::from(got[((s * parts + k) * n + j) as usize]);
                    assert!(
                        (g - want).abs() <= 1e-4 * (1.0 + want.abs()),
                        "P = {parts}, N = {n}, B = {batch} on {cols} columns: y[{s}, {k}, {j}] = {g}, expected {want}"
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
    let _ = std::fs::remove_dir_all(&dir);
}

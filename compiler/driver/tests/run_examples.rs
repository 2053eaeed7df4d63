//! `wsel run` end to end on the examples, compared with independent references: NumPy forward
//! passes (`tests/reference/forward.py`) and scikit-learn's own predictions for `digits`.
//!
//! Tolerances: the fabric computes in float32 like the NumPy reference, but sums in a
//! different order (partial sums per PE, reduced down a column), so values agree to a few
//! float32 ulps of the largest magnitude, not bit for bit: 1e-5 relative to the result's
//! largest absolute value.

use std::path::Path;
use std::process::{Command, Output};

use wsel::tensor::{Tensor, read_npy};
use wsel_ir::kernel::ScalarTy;

mod support;
use support::{repo_root, temp_dir};

fn wsel_run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(repo_root())
        .arg("run")
        .args(["--color", "never"])
        .args(args)
        .output()
        .expect("wsel runs")
}

fn run_ok(args: &[&str]) -> String {
    let output = wsel_run(args);
    assert!(
        output.status.success(),
        "wsel run {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The NumPy reference of `model` for the first `batch` samples.
fn numpy_reference(model: &str, batch: u64, dir: &Path) -> Tensor {
    let out = dir.join(format!("{model}-reference.npy"));
    let status = Command::new("python3")
        .arg(repo_root().join("tests/reference/forward.py"))
        .args([model, out.to_str().expect("utf-8 path"), &batch.to_string()])
        .status()
        .expect("python3 runs (CI installs requirements.txt)");
    assert!(status.success(), "the NumPy reference script failed");
    read_npy(&out, ScalarTy::F32, &[None, None]).expect("reference result")
}

fn assert_close(result: &Tensor, reference: &Tensor) {
    assert_eq!(result.shape, reference.shape);
    let (r, e) = (result.to_f32(), reference.to_f32());
    let scale = e.iter().fold(0f32, |m, v| m.max(v.abs())).max(1e-30);
    for (i, (a, b)) in r.iter().zip(&e).enumerate() {
        assert!(
            (a - b).abs() <= 1e-5 * scale,
            "element {i}: wsel {a}, NumPy {b} (scale {scale})"
        );
    }
}

fn output_of(path: &Path) -> Tensor {
    read_npy(path, ScalarTy::F32, &[None, None]).expect("wsel wrote its result")
}

#[test]
fn gemv_matches_numpy_with_every_backend() {
    let dir = temp_dir("gemv");
    let reference = numpy_reference("gemv", 8, &dir);
    for backend in ["cranelift", "interp"] {
        let out = dir.join(format!("y-{backend}.npy"));
        run_ok(&[
            "examples/gemv/main.wse",
            "--backend",
            backend,
            "--output",
            out.to_str().expect("utf-8"),
        ]);
        assert_close(&output_of(&out), &reference);
    }
}

#[test]
fn digits_predicts_exactly_scikit_learns_classes() {
    let dir = temp_dir("digits");
    let out = dir.join("probs.npy");
    let stdout = run_ok(&[
        "examples/digits/main.wse",
        "--output",
        out.to_str().expect("utf-8"),
    ]);
    let probs = output_of(&out);
    assert_eq!(probs.shape, vec![360, 10]);
    let expected = read_npy(
        &repo_root().join("examples/digits/data/sklearn_pred.npy"),
        ScalarTy::I32,
        &[Some(360)],
    )
    .expect("sklearn predictions");
    let values = probs.to_f32();
    for (sample, row) in values.chunks(10).enumerate() {
        let argmax = row
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(i, _)| i as u32);
        assert_eq!(argmax, Some(expected.words[sample]), "sample {sample}");
    }
    assert_close(&probs, &numpy_reference("digits", 360, &dir));
    assert!(stdout.contains("accuracy: 98.33% (354/360)"), "{stdout}");
    assert!(stdout.contains("pipelined mode"), "{stdout}");
}

#[test]
fn the_interpreter_and_cranelift_agree_bit_for_bit_with_identical_cycles() {
    let dir = temp_dir("backends");
    let mut results = Vec::new();
    for backend in ["cranelift", "interp"] {
        let out = dir.join(format!("p-{backend}.npy"));
        let report = dir.join(format!("r-{backend}.json"));
        run_ok(&[
            "examples/digits/main.wse",
            "--batch",
            "24",
            "--backend",
            backend,
            "--output",
            out.to_str().expect("utf-8"),
            "--report",
            report.to_str().expect("utf-8"),
        ]);
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).expect("report")).expect("json");
        results.push((
            output_of(&out).words,
            json["run"]["cycles"].as_u64().expect("cycles"),
        ));
    }
    assert_eq!(results[0], results[1]);
}

#[test]
fn missing_input_file_is_a_clear_error_and_writes_nothing() {
    let dir = temp_dir("missing");
    let out = dir.join("y.npy");
    let output = wsel_run(&[
        "examples/gemv/main.wse",
        "--input",
        "x=does/not/exist.npy",
        "--output",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot read `does/not/exist.npy`"),
        "{stderr}"
    );
    assert!(!out.exists());
}

#[test]
fn wrong_dtype_and_wrong_shape_name_the_tensor_and_both_types() {
    let dir = temp_dir("badinput");
    let out = dir.join("y.npy");
    // Integers of the right shape: the dtype is wrong.
    let ints = dir.join("ints.npy");
    let tensor = Tensor {
        elem: ScalarTy::I32,
        shape: vec![4, 256],
        words: vec![7; 4 * 256],
    };
    wsel::tensor::write_npy_atomic(&ints, &tensor).expect("write ints");
    let wrong_dtype = wsel_run(&[
        "examples/gemv/main.wse",
        "--input",
        &format!("x={}", ints.display()),
        "--output",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(wrong_dtype.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&wrong_dtype.stderr);
    assert!(
        stderr.contains("holds `int32` values, but `f32` values are needed"),
        "{stderr}"
    );
    assert!(stderr.contains("for `x`"), "{stderr}");
    assert!(stderr.starts_with("error[E0802]"), "{stderr}");
    // The digits test images have 64 features per sample, gemv needs 256.
    let wrong_shape = wsel_run(&[
        "examples/gemv/main.wse",
        "--input",
        "x=examples/digits/data/x_test.npy",
        "--output",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(wrong_shape.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&wrong_shape.stderr);
    assert!(
        stderr.contains("has shape [360, 64], but shape [B, 256] is needed"),
        "{stderr}"
    );
    assert!(!out.exists());
}

#[test]
fn an_unwritable_output_path_fails_cleanly() {
    let dir = temp_dir("unwritable");
    let blocker = dir.join("a-file");
    std::fs::write(&blocker, b"not a folder").expect("write");
    let out = blocker.join("y.npy");
    let output = wsel_run(&[
        "examples/gemv/main.wse",
        "--no-cache",
        "--output",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot write"), "{stderr}");
    assert!(stderr.starts_with("error[E0804]"), "{stderr}");
    assert_eq!(
        std::fs::read(&blocker).expect("still there"),
        b"not a folder"
    );
}

//! `examples/transformer`, the GPT-style decoder trained by its `train.py` (PyTorch, run once),
//! against what PyTorch saved: on the held-out batch (4 sequences of 64 characters) the
//! fabric's logits, in weight-streaming and in pipelined mode, equal the NumPy forward of
//! `tests/reference/forward.py` (written independently of wsel and of PyTorch) and PyTorch's
//! own logits within the tolerance below, and their argmax is PyTorch's on every one of the
//! 256 tokens (streamed; pipelined, the first sequence's 64 in the suite, all 256 in
//! BENCHMARKS.md), and streamed on `dev` too, where a sequence's attention spans columns;
//! greedy generation on the fabric (`generate.py`, one `wsel run` per character)
//! gives PyTorch's text.
//!
//! Tolerance: 2e-5 of the largest logit (about 5e-4 here). The fabric, NumPy and PyTorch all
//! compute in float32 and differ only in summation order: a dot product of n terms in any
//! order is within n·2⁻²⁴·Σ|xᵢwᵢ| of exact, 3.1e-5·Σ|xᵢwᵢ| for the widest layer (n = 512),
//! and with the model's activations of order 1 and weights of order 0.1 the 13 dense layers,
//! 5 layernorms and 2 attentions stay far below it (observed: 1.0e-6 against NumPy, 9.5e-7
//! against PyTorch). 5e-4 is a thirtieth of the smallest gap between PyTorch's two largest
//! logits on the batch (1.7e-2), so logits within it have PyTorch's argmax.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use wsel::tensor::read_npy;
use wsel_ir::kernel::ScalarTy;

const TOLERANCE: f32 = 2e-5;

mod support;
use support::{repo_root, temp_dir};

fn wsel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(repo_root())
        .args(args)
        .args(["--color", "never"])
        .output()
        .expect("wsel runs")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn read(path: &Path, rank: usize) -> Vec<f32> {
    read_npy(path, ScalarTy::F32, &vec![None; rank])
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .to_f32()
}

fn data(name: &str) -> PathBuf {
    repo_root().join("examples/transformer/data").join(name)
}

/// The largest difference relative to `reference`'s largest magnitude.
fn relative_error(result: &[f32], reference: &[f32]) -> f32 {
    assert_eq!(result.len(), reference.len());
    let scale = reference.iter().fold(0f32, |m, v| m.max(v.abs()));
    result
        .iter()
        .zip(reference)
        .map(|(a, b)| (a - b).abs() / scale)
        .fold(
            0f32,
            |m, e| if e.is_nan() { f32::INFINITY } else { m.max(e) },
        )
}

fn argmax(row: &[f32]) -> usize {
    let mut best = 0;
    for (i, v) in row.iter().enumerate() {
        if *v > row[best] {
            best = i;
        }
    }
    best
}

#[test]
fn held_out_logits_match_numpy_and_pytorch() {
    let dir = temp_dir("logits");
    let reference = dir.join("numpy.npy");
    let status = Command::new("python3")
        .arg(repo_root().join("tests/reference/forward.py"))
        .arg("transformer")
        .arg(&reference)
        .status()
        .expect("python3 runs (CI installs requirements.txt)");
    assert!(
        status.success(),
        "tests/reference/forward.py transformer failed"
    );
    let numpy = read(&reference, 2);
    let torch = read(&data("torch_logits.npy"), 2);
    let predicted = read_npy(&data("torch_pred.npy"), ScalarTy::I32, &[None])
        .expect("torch_pred.npy")
        .words;
    let vocab = 60;
    // Streamed on wse2, the whole batch; pipelined, its first sequence (the whole batch's
    // mapping takes minutes of a debug build; its figures are in BENCHMARKS.md); streamed on
    // `dev`'s 4 KiB PEs, two sequences in micro-batches of one, each sequence's attention
    // spread over the columns.
    for (mode, target, tokens) in [
        ("streaming", "wse2", 256),
        ("pipelined", "wse2", 64),
        ("streaming", "dev", 128),
    ] {
        let out = dir.join(format!("{mode}-{target}.npy"));
        let batch = tokens.to_string();
        let run = wsel(&[
            "run",
            "examples/transformer/main.wse",
            "--mode",
            mode,
            "--target",
            target,
            "--batch",
            &batch,
            "--output",
            out.to_str().expect("utf-8"),
        ]);
        assert!(
            run.status.success(),
            "wsel run ({mode} on {target}) failed:\n{}",
            text(&run)
        );
        let printed = text(&run);
        assert!(
            printed.contains(&format!(
                "accuracy: 100.00% ({tokens}/{tokens}) against \
                 examples/transformer/data/torch_pred.npy"
            )),
            "the {mode} run on {target} should print full top-1 agreement with PyTorch:\n{printed}"
        );
        let logits = read(&out, 2);
        assert_eq!(logits.len(), tokens * vocab);
        let err = relative_error(&logits, &numpy[..tokens * vocab]);
        assert!(
            err <= TOLERANCE,
            "{mode} on {target}: logits differ from NumPy by {err:e} of the largest"
        );
        let err = relative_error(&logits, &torch[..tokens * vocab]);
        assert!(
            err <= TOLERANCE,
            "{mode} on {target}: logits differ from PyTorch by {err:e} of the largest"
        );
        for (t, row) in logits.chunks(vocab).enumerate() {
            assert_eq!(
                argmax(row) as u32,
                predicted[t],
                "{mode} on {target}, token {t}: the fabric's top-1 differs from PyTorch's"
            );
        }
    }
}

/// The first characters of the greedy generation, each a run on the fabric, are PyTorch's
/// (`generate.py --check`; the whole 50 are in BENCHMARKS.md, a run of minutes).
#[test]
fn greedy_generation_matches_pytorch() {
    let output = Command::new("python3")
        .arg(repo_root().join("examples/transformer/generate.py"))
        .args([
            "--steps",
            "2",
            "--check",
            "--wsel",
            env!("CARGO_BIN_EXE_wsel"),
        ])
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "generate.py failed:\n{}",
        text(&output)
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("equal to PyTorch's greedy generation"),
        "{}",
        text(&output)
    );
}

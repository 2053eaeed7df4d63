//! The model's result whose nearest exit from the fabric is the PE right beside its
//! producer's region.
//!
//! `wsel run examples/digits/main.wse --mode streaming --batch 100` (and 99) places the last
//! phase's region so that the PE beside its output edge sits on the fabric's corner: the
//! result turns off the fabric at that PE, one hop from its producer. These runs used to
//! fail with E0603; they must run and agree with the NumPy forward pass.

use std::path::Path;
use std::process::Command;

use wsel::tensor::read_npy;
use wsel_ir::kernel::ScalarTy;

mod support;
use support::{repo_root, temp_dir};

fn npy(path: &Path) -> Vec<f32> {
    read_npy(path, ScalarTy::F32, &[None, None])
        .expect("a [B, 10] result")
        .to_f32()
}

#[test]
fn a_result_that_leaves_the_fabric_beside_its_producer_is_routed() {
    let dir = temp_dir("batches");
    for batch in ["99", "100"] {
        let out = dir.join(format!("y{batch}.npy"));
        let reference = dir.join(format!("ref{batch}.npy"));
        let run = Command::new(env!("CARGO_BIN_EXE_wsel"))
            .current_dir(repo_root())
            .args(["run", "examples/digits/main.wse", "--color", "never"])
            .args(["--no-cache", "--mode", "streaming", "--batch", batch])
            .arg("--output")
            .arg(&out)
            .output()
            .expect("wsel runs");
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let status = Command::new("python3")
            .arg(repo_root().join("tests/reference/forward.py"))
            .arg("digits")
            .arg(&reference)
            .arg(batch)
            .status()
            .expect("python3 runs (CI installs requirements.txt)");
        assert!(status.success(), "the NumPy reference script failed");
        let (got, want) = (npy(&out), npy(&reference));
        assert_eq!(got.len(), want.len(), "batch {batch}");
        for (i, (a, b)) in got.iter().zip(&want).enumerate() {
            assert!(
                (a - b).abs() <= 1e-5,
                "batch {batch}, element {i}: {a} vs {b}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

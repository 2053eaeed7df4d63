//! The model's result leaving the fabric from the PE right beside its producer's region.
//!
//! `wsel run examples/digits/main.wse --mode streaming --batch 100` (and 99) placed the last
//! phase's region so that the PE beside its output edge sits on the fabric's corner; the
//! result's nearest exit was that PE itself, and the router took the exit for a consumer
//! region beside the producer and refused it with E0603 ("it feeds 1 layers, and the first
//! sits right beside the producer"). The exit is a goal like any other. The streamed result
//! must now be the pipelined one.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The float32 values of a .npy file.
fn read_f32(path: &Path) -> Vec<f32> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = npyz::NpyFile::new(&bytes[..]).expect("an .npy file");
    npy.into_vec().expect("f32 values")
}

fn run_digits(mode: &str, out: &Path) {
    let run = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(repo_root())
        .args([
            "run",
            "examples/digits/main.wse",
            "--color",
            "never",
            "--no-cache",
        ])
        .args(["--mode", mode, "--batch", "100", "--output"])
        .arg(out)
        .output()
        .expect("wsel runs");
    assert!(
        run.status.success(),
        "{mode}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn a_result_whose_exit_is_the_pe_beside_its_producer_is_routed() {
    let dir = std::env::temp_dir().join(format!("wsel-result-exit-{}", std::process::id()));
    let (streamed, pipelined) = (dir.join("streamed.npy"), dir.join("pipelined.npy"));
    run_digits("streaming", &streamed);
    run_digits("pipelined", &pipelined);
    let (a, b) = (read_f32(&streamed), read_f32(&pipelined));
    assert_eq!(a.len(), 100 * 10);
    let gap = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max);
    assert!(
        gap <= 1e-6,
        "streamed and pipelined results differ by {gap}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

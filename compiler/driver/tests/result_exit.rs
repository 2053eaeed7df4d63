//! The model's result whose nearest exit from the fabric is the PE right beside its
//! producer's region: diagnosed as what it is.
//!
//! `wsel run examples/digits/main.wse --mode streaming --batch 100` (and 99) places the last
//! phase's region so that the PE beside its output edge sits on the fabric's corner. The
//! router cannot turn a part off the fabric at that PE yet, and used to say "it feeds 1
//! layers, and the first sits right beside the producer" — there is no such layer. (Letting
//! it route there changes the placements the mapper picks for other programs, digits
//! pipelined at batch 1 among them, so that is left for the routing work.)

use std::process::Command;

mod support;
use support::repo_root;

#[test]
fn a_result_whose_exit_is_the_pe_beside_its_producer_is_diagnosed() {
    let out = std::env::temp_dir().join(format!("wsel-result-exit-{}.npy", std::process::id()));
    let run = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(repo_root())
        .args([
            "run",
            "examples/digits/main.wse",
            "--color",
            "never",
            "--no-cache",
        ])
        .args(["--mode", "streaming", "--batch", "100", "--output"])
        .arg(&out)
        .output()
        .expect("wsel runs");
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("E0603")
            && stderr.contains("nearest exit from the fabric is the PE right beside")
            && !stderr.contains("layers, and the first sits right beside"),
        "{stderr}"
    );
    assert!(!out.exists(), "no result after a mapping error");
}

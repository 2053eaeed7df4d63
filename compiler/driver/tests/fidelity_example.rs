//! `examples/fidelity`: the `sliding-window-rpc` port runs on `wse2` and on its fitted
//! variant `cs2-launch.toml` for two small rows, each edge PE receiving the other edge's
//! values (the program checks them and reports −1 otherwise) and the PEs between reporting 0,
//! as they run nothing. The sweep against the CS-2 figures is `examples/fidelity/sweep.py`.
//!
//! The launch model shows in the figures: without it every PE starts at cycle 0 and the row
//! is symmetric, so the left and right PEs measure within a cycle of each other; with the
//! fitted launch the left PE starts first and waits for the right one, so its figure exceeds
//! the right PE's by the launch's skew across the row, `floor(1.2 · (W − 1))`, within `n`
//! cycles: the middle's ramp then takes the two sides' `n` values one side after the other
//! instead of alternating, which moves each side's turn by up to `n` cycles.

use std::path::{Path, PathBuf};
use std::process::Command;

mod support;
use support::repo_root;

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wsel-fidelity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// The figures of every PE of a row of `width` PEs moving `n` values, on `target`.
fn figures(dir: &Path, target: &str, width: u64, n: u32) -> Vec<f32> {
    let example = repo_root().join("examples/fidelity");
    std::fs::copy(
        example.join("sliding_window_rpc.wse"),
        dir.join("sliding_window_rpc.wse"),
    )
    .expect("copy the port");
    let model = format!(
        "import sliding_window_rpc.{{sliding_window_rpc}};\n\
         model m(x: f32[B, {width}]) -> f32[B, {width}] {{\n    \
         return sliding_window_rpc(x, n = {n});\n}}\n"
    );
    std::fs::write(dir.join("m.wse"), model).expect("model");
    let tensor = wsel::tensor::Tensor {
        elem: wsel_ir::kernel::ScalarTy::F32,
        shape: vec![1, width],
        words: vec![0; width as usize],
    };
    wsel::tensor::write_npy_atomic(&dir.join("x.npy"), &tensor).expect("x.npy");
    let target = if target.ends_with(".toml") {
        example.join(target).display().to_string()
    } else {
        target.to_string()
    };
    let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(dir)
        .args(["run", "m.wse", "--target", &target, "--copies", "1"])
        .args(["--no-cache", "--input", "x=x.npy", "--output", "y.npy"])
        .args(["--color", "never"])
        .output()
        .expect("wsel runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let bytes = std::fs::read(dir.join("y.npy")).expect("output");
    npyz::NpyFile::new(&bytes[..])
        .expect("an .npy file")
        .into_vec()
        .expect("f32 values")
}

#[test]
fn the_sliding_window_port_swaps_the_edges_values_and_times_itself() {
    let dir = temp_dir();
    for (width, n) in [(3_u64, 3_u32), (21, 5)] {
        let half = (width as usize - 1) / 2;
        let flat = figures(&dir, "wse2", width, n);
        let launched = figures(&dir, "cs2-launch.toml", width, n);
        for f in [&flat, &launched] {
            let ends = [f[0], f[half], f[width as usize - 1]];
            assert!(ends.iter().all(|&c| c > 0.0), "W = {width}: {f:?}");
            let between = (1..width as usize - 1).filter(|&c| c != half);
            assert!(
                between.map(|c| f[c]).all(|c| c == 0.0),
                "W = {width}: {f:?}"
            );
        }
        let (left, right) = (flat[0], flat[width as usize - 1]);
        assert!((left - right).abs() <= 1.0, "W = {width}: {flat:?}");
        let skew = (1.2 * (width - 1) as f32).floor();
        let (left, right) = (launched[0], launched[width as usize - 1]);
        assert!(
            left - right >= skew - n as f32 && left - right <= skew + n as f32,
            "W = {width}: {launched:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

//! The launch model and `pe.cycle` end to end (`runtime/sim/README.md`, "Machine model and
//! timing"; `docs/language.md` §5.2): on a target like `dev` (S = 2) whose launch takes 1.5
//! cycles per column, every PE of a 1 × 5 row reads its clock in the first statement of
//! `main` and sends the reading out of the region's south edge.
//!
//! Hand-derived: the launch reaches the PE `c` columns east of the row's first at
//! `floor(1.5·c)` = 0, 1, 3, 4, 6, and `main` starts there (the PE is idle). The statement
//! `t[0] = pe.cycle as f32` costs 2 before the read (the store 1 and the cast 1; the clock is
//! free, `wsel_ir::cost`), so the reading is `floor(1.5·c) + S + 2`. The same program on a
//! target without `[launch]` reads `S + 2` on every PE. Every backend reads the same.

mod support;

use std::path::Path;
use std::process::Command;
use support::temp_dir;

const SOURCE: &str = r#"
kernel clock_row() {
    var t: [f32; 1];
    var x: [f32; 1];
    in  xs: stream<f32> from north;
    out ys: stream<f32> to south;
    task main() {
        t[0] = pe.cycle as f32;
        recv(xs, x[0..1]) then emit;
    }
    task emit() { send(ys, t[0..1]); }
}

layer clocks(x: f32[B, W]) -> y: f32[B, W] {
    cost { flops = 0; weights = 0; activations = 8 * W; }
    pipelined on [1, C] where C == W {
        run clock_row();
        bind x to port xs split [cols];
        bind y to port ys split [cols];
    }
}

model m(x: f32[B, 5]) -> f32[B, 5] {
    return clocks(x);
}
"#;

/// `dev`'s figures, with a launch of `launch` cycles per column when given.
fn target(launch: Option<f64>) -> String {
    let mut t = String::from(
        "name = \"dev-launch\"\nwidth = 16\nheight = 16\nsram_bytes = 4096\nsram_banks = 2\n\
         colors = 24\nqueue_depth = 4\nhop_latency = 2\nlink_bytes_per_cycle = 4\n\
         task_switch_cycles = 2\nreconfigure_cycles = 100\nclock_hz = 850000000\n\
         [fp32]\nadd = 2\nmul = 1\nfma = 1\n[fp16]\nadd = 4\nmul = 4\nfma = 4\n\
         [weight_store]\ncapacity_bytes = 1073741824\nbandwidth_bytes_per_cycle = 64\n\
         latency_cycles = 100\n[host_io]\nbandwidth_bytes_per_cycle = 64\n",
    );
    if let Some(c) = launch {
        t.push_str(&format!("[launch]\ncycles_per_column = {c}\n"));
    }
    t
}

/// The five readings of one run.
fn readings(dir: &Path, target: &str, backend: &str) -> Vec<f32> {
    let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(dir)
        .args(["run", "clock.wse", "--target", target, "--backend", backend])
        .args(["--copies", "1", "--no-cache", "--input", "x=x.npy"])
        .args(["--output", "y.npy", "--color", "never"])
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
fn programs_start_as_the_launch_reaches_them_and_read_their_clock() {
    let dir = temp_dir("launch");
    std::fs::write(dir.join("clock.wse"), SOURCE).expect("source");
    std::fs::write(dir.join("launch.toml"), target(Some(1.5))).expect("target");
    std::fs::write(dir.join("flat.toml"), target(None)).expect("target");
    let tensor = wsel::tensor::Tensor {
        elem: wsel_ir::kernel::ScalarTy::F32,
        shape: vec![1, 5],
        words: vec![0; 5],
    };
    wsel::tensor::write_npy_atomic(&dir.join("x.npy"), &tensor).expect("x.npy");
    const S: f32 = 2.0;
    let launched: Vec<f32> = [0.0, 1.0, 3.0, 4.0, 6.0]
        .iter()
        .map(|l| l + S + 2.0)
        .collect();
    for backend in ["interp", "cranelift"] {
        assert_eq!(
            readings(&dir, "launch.toml", backend),
            launched,
            "{backend}"
        );
        assert_eq!(
            readings(&dir, "flat.toml", backend),
            vec![S + 2.0; 5],
            "{backend}"
        );
    }
}

//! Pass-through routes (`out p: stream<T> to east by k`, `docs/language.md` §5.4) end to end
//! on `dev` (S = 2 task-switch cycles, L = 2 cycles per hop): a row of 7 PEs where PE 0 sends
//! its input to PE 3 and PE 3 sends it, doubled, to PE 6, the routers of PEs 1, 2, 4 and 5
//! passing the streams on. PE 6 emits the result at the region's east edge on `ys`, a
//! neighbour port without partner, which only the last column sends on (the case that once
//! failed at load with E0806).
//!
//! Hand-derived timing, from the trace: PE 0's `go` (activated once its input is in) starts at `s`; its send (the task's first
//! statement, issue cost 1, `wsel_ir::cost`) is issued at `s + S + 1`; the n-th wavelet is
//! injected `n − 1` cycles later and crosses 3 hops (`3·L`), so PE 3's receive completes at
//! `s + S + 1 + n − 1 + 3L` and its `got` is ready (and, the PE idle, starts) one cycle later:
//! `got(3) − go(0) = S + n + 3L + 1`. PE 3's `got` doubles the values (one vector statement,
//! n cycles at dev's one f32 multiply per cycle) and tests `pe.col + 1 == region.cols` (the
//! `if` 1, the add 1, the comparison 1; coordinates are free) before its send (1), so
//! `got(6) − got(3) = S + n + 3 + 1 + n + 3L`. Every PE takes the multicast input
//! (`main`, `arrived`); only PE 0 runs `go`, only PEs 3 and 6 `got`.

use std::path::Path;
use std::process::Command;

mod support;
use support::{starts, temp_dir};

const S: u64 = 2;
const L: u64 = 2;

const SOURCE: &str = r#"
kernel relay(n: u32) {
    var x: [f32; n];
    in  xs:   stream<f32> from west multicast;
    out far:  stream<f32> to east by 3;
    in  near: stream<f32> from west by 3;
    out ys:   stream<f32> to east;

    task main() {
        recv(xs, x[0..n]) then arrived;
        if pe.col > 0 && pe.col % 3 == 0 {
            recv(near, x[0..n]) then got;
        }
    }
    task arrived() { if pe.col == 0 { activate go; } }
    task go() { send(far, x[0..n]); }
    task got() {
        x[0..n] = 2.0 * x[0..n];
        if pe.col + 1 == region.cols { send(ys, x[0..n]); } else { send(far, x[0..n]); }
    }
}

layer relay_row(x: f32[B, N]) -> y: f32[B, N] {
    cost { flops = N; weights = 0; activations = 8 * N; }
    pipelined on [1, 7] {
        run relay(n = N);
        bind x to port xs;
        bind y to port ys;
    }
}

model m(x: f32[B, 5]) -> f32[B, 5] {
    return relay_row(x);
}
"#;

fn wsel(dir: &Path, args: &[&str]) -> std::process::Output {
    let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(dir)
        .args(args)
        .args(["--color", "never"])
        .output()
        .expect("wsel runs");
    assert!(
        output.status.success(),
        "wsel {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

#[test]
fn a_stream_passes_through_the_routers_between() {
    let dir = temp_dir("relay");
    let n: u64 = 5;
    std::fs::write(dir.join("relay.wse"), SOURCE).expect("source");
    let x: Vec<f32> = (0..n).map(|i| i as f32 + 0.5).collect();
    let tensor = wsel::tensor::Tensor {
        elem: wsel_ir::kernel::ScalarTy::F32,
        shape: vec![1, n],
        words: x.iter().map(|v| v.to_bits()).collect(),
    };
    wsel::tensor::write_npy_atomic(&dir.join("x.npy"), &tensor).expect("x.npy");
    wsel(
        &dir,
        &[
            "run",
            "relay.wse",
            "--target",
            "dev",
            "--copies",
            "1",
            "--no-cache",
            "--input",
            "x=x.npy",
            "--output",
            "y.npy",
            "--trace",
            "t.json",
        ],
    );
    let bytes = std::fs::read(dir.join("y.npy")).expect("output");
    let y: Vec<f32> = npyz::NpyFile::new(&bytes[..])
        .expect("an .npy file")
        .into_vec()
        .expect("f32 values");
    let expected: Vec<f32> = x.iter().map(|v| 4.0 * v).collect();
    assert_eq!(y, expected);

    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("t.json")).expect("trace"))
            .expect("json");
    let go = starts(&trace, "go");
    let got = starts(&trace, "got");
    assert_eq!(go.iter().map(|g| g.0).collect::<Vec<_>>(), [0]);
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [3, 6]);
    assert_eq!(got[0].1 - go[0].1, S + n + 3 * L + 1);
    assert_eq!(got[1].1 - got[0].1, S + n + 3 + 1 + n + 3 * L);
    // The multicast input reaches every PE (each runs `main` and `arrived`); the streams on
    // `far` run no task on the PEs between.
    assert_eq!(starts(&trace, "main").len(), 7);
    assert_eq!(starts(&trace, "arrived").len(), 7);
}

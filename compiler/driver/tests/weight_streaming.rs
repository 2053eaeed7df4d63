//! Weight-streaming mode against the store's bandwidth: one std.nn dense layer run with
//! `--mode streaming` on `dev` targets whose weight store delivers from far below to far above
//! the layer's analytic threshold.
//!
//! The threshold is computed here, independently of the run report's stall figures: the
//! layer's weight bytes ((N·M + M)·4 with the bias, from the shapes) over its compute cycles, the cycles the
//! busiest PE spends in the tasks that take in and apply weight rows, summed from the
//! run's Perfetto trace. Below the threshold the weights arrive slower than they are used and
//! the report must show stalls from the store, growing as the bandwidth falls; at and above
//! it, none from the store — only the fill of a PE's first weight block and the small waits
//! the fabric has with any store (a row's multicast waiting for its slowest PE), measured
//! with an unlimited store.

mod support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::temp_dir;

use serde_json::Value;
use wsel::tensor::{Tensor, write_npy_atomic};
use wsel_ir::kernel::ScalarTy;
use wsel_target::Target;

const N: u64 = 256;
const M: u64 = 65;
const BATCH: u64 = 32;

const MODEL: &str = r#"
import std.nn.{dense};

model one(x: f32[B, 256]) -> f32[B, 65] {
    param w: f32[256, 65] from "w.npy";
    param b: f32[65] from "b.npy";
    return dense(x, w, b);
}
"#;

fn write_f32(path: &Path, shape: &[u64], f: impl Fn(u64) -> f32) {
    let len: u64 = shape.iter().product();
    let tensor = Tensor {
        elem: ScalarTy::F32,
        shape: shape.to_vec(),
        words: (0..len).map(|i| f(i).to_bits()).collect(),
    };
    write_npy_atomic(path, &tensor).expect("write .npy");
}

/// The model and its data.
fn setup(dir: &Path) {
    std::fs::write(dir.join("one.wse"), MODEL).expect("model");
    write_f32(&dir.join("x.npy"), &[BATCH, N], |i| {
        ((i % 7) as f32 - 3.0) / 4.0
    });
    write_f32(&dir.join("w.npy"), &[N, M], |i| {
        ((i % 5) as f32 - 2.0) / 8.0
    });
    write_f32(&dir.join("b.npy"), &[M], |i| i as f32 / 16.0);
}

/// SRAM per PE that fits the layer on the whole 16 × 16 `dev` fabric and on no smaller
/// region: `dense_resident` there needs 1,004 bytes (2 samples × (16 + 4 × 5) + 2 × 16 × 5 + 5
/// words of arrays, 14 scalars), on 15 rows 1,100 and on 15 columns 1,148. The mapper gives a
/// store-bound phase the fewest rows that keep up with the store; pinning the region keeps
/// the kernel's work the same at every bandwidth, so only the store changes.
const SRAM_BYTES: u32 = 1024;

/// A `dev` target whose store delivers `bandwidth` bytes per cycle, with [`SRAM_BYTES`].
fn target_file(dir: &Path, bandwidth: u32) -> PathBuf {
    let mut target = Target::dev();
    target.name = format!("dev-store-{bandwidth}");
    target.weight_store.bandwidth_bytes_per_cycle = bandwidth;
    target.sram_bytes = SRAM_BYTES;
    let path = dir.join(format!("store-{bandwidth}.toml"));
    std::fs::write(&path, toml::to_string(&target).expect("target as TOML")).expect("target");
    path
}

/// Runs the model streaming at `bandwidth`; returns the layer's report entry and, when
/// `trace` is asked for, the trace's events.
fn run(dir: &Path, bandwidth: u32, trace: bool) -> (Value, Vec<Value>) {
    let target = target_file(dir, bandwidth);
    let report = dir.join(format!("report-{bandwidth}.json"));
    let trace_path = dir.join(format!("trace-{bandwidth}.json"));
    let mut command = Command::new(env!("CARGO_BIN_EXE_wsel"));
    command
        .current_dir(dir)
        .args(["run", "one.wse", "--mode", "streaming", "--color", "never"])
        .args(["--input", "x=x.npy", "--output", "y.npy"])
        .arg("--target")
        .arg(&target)
        .arg("--report")
        .arg(&report);
    if trace {
        command.arg("--trace").arg(&trace_path);
    }
    let output = command.output().expect("wsel runs");
    assert!(
        output.status.success(),
        "wsel run failed at {bandwidth} B/cycle:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("report")).expect("json");
    let layer = report["run"]["layers"]
        .as_array()
        .expect("layers")
        .iter()
        .find(|l| !l["weights"].is_null())
        .expect("a layer streams weights")
        .clone();
    if !trace {
        return (layer, Vec::new());
    }
    let trace: Value =
        serde_json::from_str(&std::fs::read_to_string(&trace_path).expect("trace")).expect("json");
    let events = match trace {
        Value::Array(events) => events,
        Value::Object(mut o) => o
            .remove("traceEvents")
            .and_then(|e| e.as_array().cloned())
            .expect("traceEvents"),
        _ => panic!("unexpected trace shape"),
    };
    (layer, events)
}

/// The tasks of std.nn's `dense_resident` that take in and apply weight blocks.
const WEIGHT_TASKS: [&str; 3] = ["post_next", "arrived", "apply"];

/// The busiest PE's cycles in the weight-consuming tasks, from the trace's task slices.
fn weight_compute_cycles(events: &[Value]) -> u64 {
    let mut per_pe: HashMap<(u64, u64), u64> = HashMap::new();
    for e in events {
        let name = e["name"].as_str().unwrap_or_default();
        if e["ph"] == "X" && WEIGHT_TASKS.contains(&name) {
            let pe = (
                e["pid"].as_u64().expect("pid"),
                e["tid"].as_u64().expect("tid"),
            );
            *per_pe.entry(pe).or_default() += e["dur"].as_u64().expect("dur");
        }
    }
    per_pe
        .into_values()
        .max()
        .expect("weight tasks in the trace")
}

fn stall(layer: &Value) -> u64 {
    layer["weights"]["stall_cycles"]
        .as_u64()
        .expect("stall_cycles")
}

#[test]
fn stalls_vanish_at_the_analytic_bandwidth_threshold_and_grow_below_it() {
    let dir = temp_dir("weight-streaming");
    setup(&dir);

    // Compute-bound reference run: the store is as fast as the links allow.
    let (layer, events) = run(&dir, 4096, true);
    let compute = weight_compute_cycles(&events);
    // The weights and the bias both stream from the store.
    let weight_bytes = (N * M + M) * 4;
    assert_eq!(
        layer["weights"]["weight_bytes"].as_u64(),
        Some(weight_bytes)
    );
    // With an unlimited store, what waits remain are the fabric's own: a PE's first weight
    // block filling after its first wavelet, a row's multicast waiting for its slowest PE.
    let baseline = stall(&layer);
    assert_ne!(layer["weights"]["stalled_by"], "store", "{layer}");
    assert!(
        baseline * 20 < compute,
        "the fabric's own waits ({baseline}) are small beside the work ({compute})"
    );
    let threshold = weight_bytes as f64 / compute as f64;

    // At and above the threshold (rounded up to whole bytes per cycle): no stalls from the
    // store. What waits remain are the fill of a PE's first weight block — at most 256 words
    // of weights and a bias block, streaming into its row at the row's share of the store —
    // on top of the fabric's own.
    let at = threshold.ceil() as u32;
    let rows = layer["rows"].as_u64().expect("rows");
    let block = 256 + M.div_ceil(rows);
    for bandwidth in [at, at + 1, 2 * at, 4 * at] {
        let (layer, _) = run(&dir, bandwidth, false);
        let fill = (block * 4 * rows).div_ceil(u64::from(bandwidth));
        assert!(
            layer["weights"]["stalled_by"] != "store" && stall(&layer) <= baseline + fill,
            "store stalls at {bandwidth} B/cycle (threshold {threshold:.2}, first-block fill \
             {fill}, the fabric's own {baseline}): {layer}"
        );
    }

    // Below it: stalls, more the slower the store.
    let mut previous = baseline;
    for fraction in [0.8, 0.5, 0.25] {
        let bandwidth = ((threshold * fraction).floor() as u32).max(1);
        let (layer, _) = run(&dir, bandwidth, false);
        let stalled = stall(&layer);
        assert!(
            stalled > previous,
            "stalls at {bandwidth} B/cycle should exceed {previous} (threshold {threshold:.2}): {layer}"
        );
        // The report's stall-free bandwidth is the threshold seen from the run.
        assert_eq!(layer["weights"]["stalled_by"], "store", "{layer}");
        let needed = layer["weights"]["stall_free_bytes_per_cycle"]
            .as_f64()
            .expect("a store stall has a stall-free bandwidth");
        assert!(
            (needed / threshold - 1.0).abs() < 0.2,
            "report says {needed:.2} B/cycle removes the stalls, the threshold is {threshold:.2}"
        );
        previous = stalled;
    }
}

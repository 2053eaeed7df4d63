//! `wsel run --systems N` against independent references: the cluster's result is the
//! one-system result on the whole batch, bit for bit, for even and uneven splits, in both
//! modes; one system is the ordinary run, cycle for cycle; the tree's feed is the
//! hand-derived one; the bandwidth the report says would restore scaling does; failures stop
//! every system with one error.

mod support;

use std::path::Path;
use std::process::{Command, Output};
use support::{Scratch, temp_dir};

use serde_json::Value;
use wsel::tensor::{Tensor, write_npy_atomic};
use wsel_ir::kernel::ScalarTy;
use wsel_target::Target;

/// Two dense layers, `features → hidden → 10`.
fn model(features: u64, hidden: u64) -> String {
    format!(
        r#"
import std.nn.{{dense, relu}};

model m(x: f32[B, {features}]) -> f32[B, 10] {{
    param w1: f32[{features}, {hidden}] from "w1.npy";
    param b1: f32[{hidden}] from "b1.npy";
    param w2: f32[{hidden}, 10] from "w2.npy";
    param b2: f32[10] from "b2.npy";
    return dense(relu(dense(x, w1, b1)), w2, b2);
}}
"#
    )
}

fn write_f32(path: &Path, shape: &[u64], f: impl Fn(u64) -> f32) {
    let len: u64 = shape.iter().product();
    let tensor = Tensor {
        elem: ScalarTy::F32,
        shape: shape.to_vec(),
        words: (0..len).map(|i| f(i).to_bits()).collect(),
    };
    write_npy_atomic(path, &tensor).expect("write .npy");
}

/// The small model (64 → 24 → 10) and a batch of 12.
fn setup(name: &str) -> Scratch {
    setup_model(name, 64, 24, 12)
}

fn setup_model(name: &str, features: u64, hidden: u64, batch: u64) -> Scratch {
    let dir = temp_dir(name);
    std::fs::write(dir.join("m.wse"), model(features, hidden)).expect("model");
    write_f32(&dir.join("x.npy"), &[batch, features], |i| {
        ((i % 11) as f32 - 5.0) / 8.0
    });
    write_f32(&dir.join("w1.npy"), &[features, hidden], |i| {
        ((i % 13) as f32 - 6.0) / 32.0
    });
    write_f32(&dir.join("b1.npy"), &[hidden], |i| (i % 3) as f32 / 10.0);
    write_f32(&dir.join("w2.npy"), &[hidden, 10], |i| {
        ((i % 7) as f32 - 3.0) / 16.0
    });
    write_f32(&dir.join("b2.npy"), &[10], |i| i as f32 / 20.0);
    dir
}

/// Runs `wsel run m.wse` in `dir` with `args`, `--input x=x.npy`, the result in `out` and
/// the report in `out.json`.
fn run(dir: &Path, out: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(dir)
        .args([
            "run",
            "m.wse",
            "--no-cache",
            "--input",
            "x=x.npy",
            "--output",
        ])
        .arg(format!("{out}.npy"))
        .arg("--report")
        .arg(format!("{out}.json"))
        .args(args)
        .env_remove("OMPI_COMM_WORLD_SIZE")
        .env_remove("PMI_SIZE")
        .output()
        .expect("wsel runs")
}

fn ok(output: Output) -> Output {
    assert!(
        output.status.success(),
        "wsel failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn report(dir: &Path, out: &str) -> Value {
    let text = std::fs::read_to_string(dir.join(format!("{out}.json"))).expect("report");
    serde_json::from_str(&text).expect("json")
}

fn bytes(dir: &Path, out: &str) -> Vec<u8> {
    std::fs::read(dir.join(format!("{out}.npy"))).expect("result")
}

#[test]
fn a_cluster_gives_the_one_system_result_for_even_and_uneven_splits() {
    let dir = setup("equal");
    for mode in ["streaming", "pipelined"] {
        ok(run(&dir, &format!("one-{mode}"), &["--mode", mode]));
        let one = bytes(&dir, &format!("one-{mode}"));
        // 12 samples: 2 × 6, 5 × (3, 3, 2, 2, 2).
        for systems in ["2", "5"] {
            let out = format!("{mode}-{systems}");
            ok(run(&dir, &out, &["--mode", mode, "--systems", systems]));
            assert_eq!(bytes(&dir, &out), one, "{mode} on {systems} systems");
            let r = &report(&dir, &out)["cluster"];
            let shares: Vec<u64> = r["per_system"]
                .as_array()
                .expect("systems")
                .iter()
                .map(|s| s["samples"].as_u64().expect("samples"))
                .collect();
            let expected: Vec<u64> = if systems == "2" {
                vec![6, 6]
            } else {
                vec![3, 3, 2, 2, 2]
            };
            assert_eq!(shares, expected);
            // The scaling figures: the one-system run's cycles over the step's.
            let step = r["step_cycles"].as_u64().expect("step") as f64;
            let base = r["baseline"]["cycles"].as_u64().expect("baseline") as f64;
            let n: f64 = systems.parse().expect("n");
            let efficiency = r["efficiency"].as_f64().expect("efficiency");
            assert!((efficiency - base / step / n).abs() < 1e-12);
        }
    }
}

#[test]
fn one_system_is_the_ordinary_run_cycle_for_cycle() {
    let dir = setup("one");
    ok(run(&dir, "plain", &["--mode", "streaming"]));
    ok(run(
        &dir,
        "cluster",
        &["--mode", "streaming", "--systems", "1"],
    ));
    assert_eq!(bytes(&dir, "plain"), bytes(&dir, "cluster"));
    let plain = report(&dir, "plain");
    let cluster = report(&dir, "cluster");
    assert_eq!(
        plain["run"]["cycles"].as_u64(),
        cluster["cluster"]["step_cycles"].as_u64()
    );
    assert!(cluster["cluster"]["feed"].is_null());
    assert!(cluster["cluster"]["baseline"].is_null());
}

/// `dev`'s tree: fan-out 2, links of 20 cycles and 16 B/cycle, switches of 10 cycles, under a
/// store of 64 B/cycle and 100 cycles. Two systems hang under the root (2 links, 1 switch):
/// the first byte after 100 + 2·20 + 10 = 150 cycles; three systems need a second level
/// (3 links, 2 switches): 100 + 60 + 20 = 180. Either way 16 B/cycle, the links' rate.
#[test]
fn every_system_gets_the_feed_derived_by_hand_and_starts_each_phase_with_the_others() {
    let dir = setup("feed");
    for (systems, first) in [("2", 150), ("3", 180)] {
        let out = format!("feed-{systems}");
        ok(run(
            &dir,
            &out,
            &["--mode", "streaming", "--systems", systems],
        ));
        let r = &report(&dir, &out)["cluster"];
        assert_eq!(r["feed"]["first_byte_cycles"].as_u64(), Some(first));
        assert_eq!(r["feed"]["bytes_per_cycle"].as_u64(), Some(16));
        assert_eq!(
            r["tree"]["depth"].as_u64(),
            Some(if systems == "2" { 1 } else { 2 })
        );
        // Phases start together: every system ends on the same cycle, the step.
        let step = r["step_cycles"].as_u64();
        for s in r["per_system"].as_array().expect("systems") {
            assert_eq!(s["cycles"].as_u64(), step);
        }
        for layer in r["layers"].as_array().expect("layers") {
            assert!(layer["broadcast_cycles"].as_u64().expect("broadcast") > 0);
            assert!(layer["reduce_cycles"].is_null());
        }
    }
}

/// The dev tree's 16 B/cycle links starve a 256 × 256 layer on 2 systems of 4 samples
/// (its PEs would take about 19 B/cycle); the report names the feed bandwidth that would
/// remove the waits. A target whose links and store give that much removes them, and the
/// cluster gets faster.
#[test]
fn the_bandwidth_the_report_names_restores_the_scaling() {
    let dir = setup_model("limit", 256, 256, 8);
    ok(run(
        &dir,
        "narrow",
        &["--mode", "streaming", "--systems", "2"],
    ));
    let narrow = report(&dir, "narrow");
    let limit = &narrow["cluster"]["limit"];
    assert_eq!(limit["by"].as_str(), Some("broadcast"), "{narrow:#}");
    let needed = limit["bytes_per_cycle"].as_f64().expect("bandwidth").ceil() as u32;
    assert!(needed > 16);
    let mut target = Target::dev();
    target.swarm.link_bytes_per_cycle = needed;
    target.swarm.reduce_bytes_per_cycle = needed;
    target.weight_store.bandwidth_bytes_per_cycle =
        target.weight_store.bandwidth_bytes_per_cycle.max(needed);
    std::fs::write(dir.join("wide.toml"), target.to_toml_string()).expect("target");
    ok(run(
        &dir,
        "wide",
        &[
            "--mode",
            "streaming",
            "--systems",
            "2",
            "--target",
            "wide.toml",
        ],
    ));
    let wide = report(&dir, "wide");
    assert!(wide["cluster"]["limit"].is_null(), "{wide:#}");
    for layer in wide["cluster"]["layers"].as_array().expect("layers") {
        assert_ne!(layer["stalled_by"].as_str(), Some("store"), "{layer:#}");
    }
    let step = |r: &Value| r["cluster"]["step_cycles"].as_u64().expect("step");
    assert!(step(&wide) < step(&narrow));
    assert_eq!(bytes(&dir, "wide"), bytes(&dir, "narrow"));
}

#[test]
fn a_failing_system_stops_the_cluster_with_one_error() {
    let dir = setup("fail");
    let output = run(
        &dir,
        "fail",
        &[
            "--mode",
            "streaming",
            "--systems",
            "3",
            "--max-cycles",
            "300",
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("error[E0806]").count(), 1, "{stderr}");
    assert!(stderr.contains("note: in system 0"), "{stderr}");
    assert!(!dir.join("fail.npy").exists() && !dir.join("fail.json").exists());
}

#[test]
fn more_systems_than_samples_is_an_error() {
    let dir = setup("many");
    let output = run(&dir, "many", &["--systems", "13"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("error[E0809]: 13 systems but a batch of 12"),
        "{stderr}"
    );
}

/// E0810: a `wsel` without MPI started by an MPI launcher with several processes stops
/// instead of letting every process simulate (and write) the whole cluster.
#[cfg(not(feature = "mpi"))]
#[test]
fn a_wsel_without_mpi_under_an_mpi_launcher_stops() {
    let dir = setup("nompi");
    let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(&dir)
        .args(["run", "m.wse", "--input", "x=x.npy", "--systems", "2"])
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .output()
        .expect("wsel runs");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("error[E0810]"), "{stderr}");
}

/// `systems = 3;` in the `run` item runs the cluster as `--systems 3` does, and the flag
/// overrides it; a flag a cluster cannot honour is refused for the item's cluster too.
#[test]
fn the_run_item_asks_for_systems_and_the_flag_overrides_it() {
    let dir = setup("run-item");
    let text = std::fs::read_to_string(dir.join("m.wse")).expect("model");
    let item =
        "run m {\n    input x = \"x.npy\";\n    mode = \"streaming\";\n    systems = 3;\n}\n";
    std::fs::write(dir.join("m.wse"), format!("{text}{item}")).expect("model");
    ok(run(&dir, "item", &[]));
    assert_eq!(report(&dir, "item")["cluster"]["systems"], 3);
    ok(run(&dir, "flag", &["--systems", "2"]));
    assert_eq!(report(&dir, "flag")["cluster"]["systems"], 2);
    assert_eq!(bytes(&dir, "item"), bytes(&dir, "flag"));
    let traced = run(&dir, "traced", &["--trace", "t.json"]);
    assert_eq!(traced.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&traced.stderr);
    assert!(
        stderr.contains("error[E0809]") && stderr.contains("--trace"),
        "{stderr}"
    );
}

//! Copies of the pipeline for data parallelism (`docs/mapping.md` §5), end to end: a model
//! run in several copies gives exactly the result of one copy in fewer simulated cycles, a
//! fabric with room for one copy runs one, and copies that cannot be placed are E0610.

use std::path::Path;
use std::process::{Command, Output};

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

fn success(args: &[&str]) -> String {
    let output = wsel(args);
    assert!(
        output.status.success(),
        "wsel {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Runs `file` with `--copies copies`; the result file's bytes and the simulated cycles.
fn run(file: &str, target: &str, copies: &str, dir: &Path) -> (Vec<u8>, u64) {
    let output = dir.join(format!("out-{copies}.npy"));
    let report = dir.join(format!("report-{copies}.json"));
    success(&[
        "run",
        file,
        "--target",
        target,
        "--copies",
        copies,
        "--no-cache",
        "--output",
        output.to_str().expect("utf-8 path"),
        "--report",
        report.to_str().expect("utf-8 path"),
    ]);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("report")).expect("json");
    let cycles = json["run"]["cycles"]
        .as_u64()
        .expect("cycles in the report");
    (std::fs::read(&output).expect("result file"), cycles)
}

/// The placement `wsel map` chooses, as JSON.
fn placement(file: &str, target: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["map", file, "--target", target, "--format", "json"];
    args.extend_from_slice(extra);
    serde_json::from_str(&success(&args)).expect("placement json")
}

#[test]
fn copies_give_the_same_result_in_fewer_cycles() {
    let dir = temp_dir("allreduce");
    let file = "examples/allreduce/main.wse";
    let (one, one_cycles) = run(file, "dev", "1", &dir);
    let (two, two_cycles) = run(file, "dev", "2", &dir);
    assert_eq!(one, two, "two copies changed the result");
    assert!(
        two_cycles < one_cycles,
        "two copies took {two_cycles} cycles, one {one_cycles}"
    );
    // The mapper's own choice on dev replicates too, runs faster than one copy, and runs as
    // that many copies asked for.
    let chosen = placement(file, "dev", &[])["copies"]
        .as_u64()
        .expect("copies");
    assert!(chosen >= 2, "auto chose {chosen} copies");
    let (auto, auto_cycles) = run(file, "dev", "auto", &dir);
    assert_eq!(auto, one, "auto copies changed the result");
    assert!(
        auto_cycles < one_cycles,
        "{chosen} copies took {auto_cycles} cycles, one {one_cycles}"
    );
    let asked = run(file, "dev", &chosen.to_string(), &dir);
    assert_eq!((auto, auto_cycles), asked);
}

#[test]
fn digits_in_copies_on_wse2_classify_as_in_one() {
    let dir = temp_dir("digits");
    let file = "examples/digits/main.wse";
    let (one, one_cycles) = run(file, "wse2", "1", &dir);
    let (three, three_cycles) = run(file, "wse2", "3", &dir);
    assert_eq!(one, three, "three copies changed the probabilities");
    assert!(three_cycles < one_cycles, "{three_cycles} vs {one_cycles}");
}

#[test]
fn one_copy_where_no_second_fits() {
    // digits on dev uses 105 of 256 PEs, in a shape that leaves no room for a second copy.
    let file = "examples/digits/main.wse";
    let p = placement(file, "dev", &[]);
    assert_eq!(p["copies"], 1);
    assert_eq!(p["batch"], 360);
    let output = wsel(&["map", file, "--copies", "2"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("E0610"), "{stderr}");
    assert!(stderr.contains("only 1 fit"), "{stderr}");
}

#[test]
fn copies_show_in_the_map_table() {
    let table = success(&["map", "examples/allreduce/main.wse", "--copies", "2"]);
    assert!(
        table.contains("batch 16 in 2 copies of 8 samples"),
        "{table}"
    );
    assert!(table.contains("copy 1 · allreduce_sum#1"), "{table}");
    let p = placement("examples/allreduce/main.wse", "dev", &["--copies", "2"]);
    assert_eq!(p["samples_per_copy"], 8);
    let layers = p["layers"].as_array().expect("layers");
    let copies: Vec<u64> = layers
        .iter()
        .map(|l| l["copy"].as_u64().unwrap_or(9))
        .collect();
    assert_eq!(copies, [0, 0, 1, 1]);
}

#[test]
fn a_copy_count_must_divide_the_batch() {
    let output = wsel(&["map", "examples/allreduce/main.wse", "--copies", "3"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("E0610") && stderr.contains("batch of 16"),
        "{stderr}"
    );
}

#[test]
fn an_artifact_built_for_other_copies_is_not_reused() {
    let dir = temp_dir("artifact");
    let artifact = dir.join("allreduce.wselb");
    let artifact = artifact.to_str().expect("utf-8 path");
    let file = "examples/allreduce/main.wse";
    success(&["build", file, "-o", artifact]);
    let result = dir.join("out.npy");
    let output = wsel(&[
        "run",
        file,
        "--artifact",
        artifact,
        "--copies",
        "1",
        "--output",
        result.to_str().expect("utf-8 path"),
    ]);
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("copies changed (auto → 1)"), "{stderr}");
}

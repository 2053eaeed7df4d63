//! Snapshots of `wsel map` for every example on the `dev` and `wse2` targets: the placement
//! table (or the diagnostics when a model does not map), with the exit status. A missing
//! snapshot is written on first run; `UPDATE_EXPECT=1` rewrites them all.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn examples() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(repo().join("examples"))
        .expect("examples folder")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("main.wse").exists())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}

/// `wsel map` on an example, as the snapshot text.
fn map_output(example: &str, target: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(repo())
        .args([
            "map",
            &format!("examples/{example}/main.wse"),
            "--target",
            target,
            "--color",
            "never",
        ])
        .output()
        .expect("wsel runs");
    let mut text = format!("$ wsel map examples/{example}/main.wse --target {target}\n");
    text.push_str(&format!(
        "exit status: {}\n\n",
        out.status.code().unwrap_or(-1)
    ));
    text.push_str(&String::from_utf8_lossy(&out.stdout));
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !stderr.is_empty() {
        text.push_str("--- stderr\n");
        text.push_str(&stderr);
    }
    text
}

fn check(example: &str, target: &str, failures: &mut Vec<String>) {
    let actual = map_output(example, target);
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/map_snapshots")
        .join(format!("{example}.{target}.txt"));
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    match std::fs::read_to_string(&path) {
        Ok(expected) if expected == actual => {}
        Ok(_) if !update => failures.push(format!(
            "{}: the output changed (UPDATE_EXPECT=1 to accept):\n{actual}",
            path.display()
        )),
        _ => std::fs::write(&path, &actual).expect("write snapshot"),
    }
}

#[test]
fn every_example_maps_as_recorded_on_dev_and_wse2() {
    let mut failures = Vec::new();
    for example in examples() {
        for target in ["dev", "wse2"] {
            check(&example, target, &mut failures);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

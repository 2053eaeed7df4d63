//! `wsel build --emit graph --emit ir` for every example: the layer graph and the kernel IR of
//! every distinct kernel instance the mapper chose, pinned as files in `tests/build_emit/`.
//! A missing file is written and the test fails so it gets reviewed; `UPDATE_EXPECT=1`
//! rewrites them all. Each is built for the `run` item's batch, else 1 (passed explicitly:
//! without `--batch`, `wsel build` counts the samples in the input files, as `wsel run` does).

use std::path::Path;
use std::process::Command;

mod support;
use support::repo_root;

/// The batch the example's `run` item names, else 1.
fn run_item_batch(main: &Path) -> u64 {
    let Ok(loaded) = wsel::pipeline::load_and_check(main) else {
        panic!("{} does not check", main.display());
    };
    wsel_lower::lower_run_config(&loaded.db, loaded.file)
        .and_then(|config| config.batch)
        .unwrap_or(1)
}

#[test]
fn every_example_builds_and_its_ir_is_pinned() {
    let root = repo_root();
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut examples: Vec<String> = std::fs::read_dir(root.join("examples"))
        .expect("examples folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| root.join("examples").join(name).join("main.wse").exists())
        .collect();
    examples.sort();
    let mut failures = Vec::new();
    for name in examples {
        let main = format!("examples/{name}/main.wse");
        let batch = run_item_batch(&root.join(&main)).to_string();
        let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
            .current_dir(&root)
            .args([
                "build", "--color", "never", "--emit", "graph", "--emit", "ir", "--batch",
            ])
            .arg(&batch)
            .arg(&main)
            .output()
            .expect("wsel runs");
        assert!(
            output.status.success(),
            "{name} does not build:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let observed = String::from_utf8_lossy(&output.stdout).into_owned();
        let expected_path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/build_emit")
            .join(format!("{name}.txt"));
        match std::fs::read_to_string(&expected_path) {
            Ok(expected) if expected == observed => {}
            _ if update => std::fs::write(&expected_path, &observed).expect("write expectation"),
            Ok(_) => failures.push(format!(
                "{name}: the IR changed (UPDATE_EXPECT=1 to accept)"
            )),
            Err(_) => {
                std::fs::write(&expected_path, &observed).expect("write expectation");
                failures.push(format!(
                    "{name}: no expectation yet; wrote it, review and rerun"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

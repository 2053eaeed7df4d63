//! Every example and every standard-library module checks clean with `wsel check`.

use std::path::{Path, PathBuf};
use std::process::Command;

mod support;
use support::repo_root;

fn wse_files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "wse") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

#[test]
fn examples_and_stdlib_check_clean() {
    let root = repo_root();
    let mut files = wse_files_under(&root.join("examples"));
    files.extend(wse_files_under(&root.join("stdlib")));
    assert!(
        files.len() >= 7,
        "expected the examples and stdlib, found {files:?}"
    );
    for file in files {
        let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
            .args(["check", "--color", "never"])
            .arg(&file)
            .output()
            .expect("wsel runs");
        assert!(
            output.status.success(),
            "{} does not check clean:\n{}",
            file.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

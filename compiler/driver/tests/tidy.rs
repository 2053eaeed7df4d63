//! Repository tidiness: every Rust source file starts with a `//!` line saying what it owns
//! (files spliced into a module with `include!` cannot carry inner doc comments and are
//! exempt, as long as they start with a comment).

use std::path::{Path, PathBuf};

mod support;
use support::repo_root;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && name != ".git" && name != "node_modules" {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_rust_file_says_what_it_owns() {
    let root = repo_root();
    let mut files = Vec::new();
    for top in ["compiler", "runtime", "lsp", "stdlib", "fuzz"] {
        rust_files(&root.join(top), &mut files);
    }
    assert!(files.len() > 50, "found only {} Rust files", files.len());
    let texts: Vec<(PathBuf, String)> = files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).expect("readable source");
            (f, text)
        })
        .collect();
    let included = |path: &Path| {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let needle = format!("include!(\"{}\")", name.unwrap_or_default());
        texts.iter().any(|(_, text)| text.contains(&needle))
    };
    let offenders: Vec<String> = texts
        .iter()
        .filter(|(path, text)| {
            let first = text.lines().next().unwrap_or("");
            !(first.starts_with("//!") || (included(path) && first.starts_with("//")))
        })
        .map(|(path, _)| {
            path.strip_prefix(&root)
                .unwrap_or(path)
                .display()
                .to_string()
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "these files do not start with a `//!` line saying what they own: {offenders:?}"
    );
}

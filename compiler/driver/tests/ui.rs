//! UI tests: every `tests/ui/*.wse` is run through the real `wsel` binary and its rendered,
//! colour-free standard error and exit status are compared with `tests/ui/<name>.stderr`.
//!
//! By default a file is checked (`wsel check`). A first line `// wsel: COMMAND ARGS...` runs
//! another command instead, with the file as its last argument: `// wsel: map --target
//! tests/ui/data/dead.toml`, `// wsel: run --input x=tests/ui/data/x.npy` (paths are relative
//! to the repository root, where the command runs; `run` never reads or writes the build
//! artifact).
//!
//! A missing expectation file is written and the test fails so it gets reviewed;
//! `UPDATE_EXPECT=1 cargo test` rewrites all of them. File names start with the diagnostic
//! code they exercise (`E0201-...wse`); a test checks that every code of every crate has one
//! here or among the hang checks' programs (`tests/hang`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

mod support;
use support::repo_root;

fn ui_files() -> Vec<PathBuf> {
    wse_files(&repo_root().join("tests/ui"))
}

fn wse_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .expect("the folder exists")
        .map(|entry| entry.expect("readable dir entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "wse"))
        .collect();
    files.sort();
    files
}

/// The command line a UI file asks for: its `// wsel: COMMAND ARGS...` first line, else
/// `check`.
fn command_of(file: &Path) -> Vec<String> {
    let text = fs::read_to_string(file).expect("readable ui file");
    let directive = text
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("// wsel:"));
    let mut words: Vec<String> = directive
        .unwrap_or("check")
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let extra: &[&str] = match words.first().map(String::as_str) {
        Some("run") => &["--color", "never", "--no-cache"],
        _ => &["--color", "never"],
    };
    words.splice(1..1, extra.iter().map(|w| w.to_string()));
    words
}

/// Runs `wsel` as the UI file asks on it (by its path relative to the repo root, so the
/// output is the same on every machine) and returns the text to compare.
fn observed_output(relative: &Path) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(repo_root())
        .args(command_of(&repo_root().join(relative)))
        .arg(relative)
        .output()
        .expect("wsel runs");
    let status = output
        .status
        .code()
        .map_or("signal".to_string(), |c| c.to_string());
    format!(
        "{}\n[exit status: {status}]\n",
        String::from_utf8_lossy(&output.stderr).trim_end()
    )
}

#[test]
fn ui_outputs_match_expectations() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    for file in ui_files() {
        let relative = file
            .strip_prefix(repo_root())
            .expect("ui file under repo root")
            .to_path_buf();
        let observed = observed_output(&relative);
        let expected_path = file.with_extension("stderr");
        match fs::read_to_string(&expected_path) {
            Ok(expected) if expected == observed => {}
            Ok(_) if update => fs::write(&expected_path, &observed).expect("write expectation"),
            Ok(expected) => failures.push(format!(
                "{}: output differs\n--- expected\n{expected}\n--- observed\n{observed}",
                relative.display()
            )),
            Err(_) => {
                fs::write(&expected_path, &observed).expect("write expectation");
                if !update {
                    failures.push(format!(
                        "{}: no expectation yet; wrote {}, review it and run again",
                        relative.display(),
                        expected_path.display()
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_ui_file_fails_with_the_code_in_its_name() {
    for file in ui_files() {
        let name = file
            .file_stem()
            .expect("file name")
            .to_string_lossy()
            .into_owned();
        let code = name.split('-').next().expect("a code prefix");
        let expected = fs::read_to_string(file.with_extension("stderr")).unwrap_or_default();
        assert!(
            expected.contains(&format!("[{code}]")),
            "{name}: its expected output does not report {code}"
        );
    }
}

/// Codes no source file can trigger, with where they are tested instead (a file that must
/// name the code).
const UNREACHABLE_FROM_SOURCE: &[(&str, &str)] = &[
    (
        // Two router entries for one color: the mapper gives such streams different colors,
        // so only hand-built placements reach it.
        "E0704",
        "compiler/hangcheck/src/tests.rs",
    ),
    (
        // An MPI launcher's environment, which a UI file's command line cannot set.
        "E0810",
        "compiler/driver/tests/cluster.rs",
    ),
];

/// Every diagnostic code of every crate, collected from the crates' own lists.
fn every_code() -> Vec<&'static str> {
    let lists: [&[(&'static str, &'static str)]; 6] = [
        wsel_lower::codes(),
        wsel_map::codes(),
        wsel_hangcheck::codes(),
        wsel::run_errors::CODES,
        wsel_target::CODES,
        wsel::training::CODES,
    ];
    let mut codes: Vec<&str> = wsel_sema::all_codes().into_iter().map(|(c, _)| c).collect();
    codes.extend(lists.iter().flat_map(|list| list.iter().map(|(c, _)| *c)));
    codes
}

#[test]
fn every_diagnostic_code_has_a_ui_test() {
    let codes = every_code();
    assert!(codes.len() >= 95, "only {} codes found", codes.len());
    // The hang checks' programs (tests/hang, compiler/driver/tests/hang_checks.rs) are
    // rendered UI files of `wsel run` too.
    let hang = wse_files(&repo_root().join("tests/hang"));
    let rendered: Vec<String> = ui_files()
        .iter()
        .chain(&hang)
        .filter(|f| f.with_extension("stderr").exists())
        .map(|f| f.file_name().expect("name").to_string_lossy().into_owned())
        .collect();
    let missing: Vec<&str> = codes
        .iter()
        .copied()
        .filter(|code| !rendered.iter().any(|n| n.starts_with(&format!("{code}-"))))
        .filter(|code| !UNREACHABLE_FROM_SOURCE.iter().any(|(c, _)| c == code))
        .collect();
    assert!(missing.is_empty(), "codes without a UI test: {missing:?}");
    for (code, file) in UNREACHABLE_FROM_SOURCE {
        let text = fs::read_to_string(repo_root().join(file)).expect("the exempt code's test");
        assert!(text.contains(code), "{file} does not test {code}");
    }
}

#[test]
fn every_diagnostic_code_is_documented() {
    let docs = fs::read_to_string(repo_root().join("docs/diagnostics.md")).expect("docs");
    let undocumented: Vec<&str> = every_code()
        .into_iter()
        .filter(|code| !docs.contains(&format!("| {code} |")))
        .collect();
    assert!(
        undocumented.is_empty(),
        "codes not in docs/diagnostics.md: {undocumented:?}"
    );
}

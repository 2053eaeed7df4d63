//! `wsel check` exit statuses and JSON output: 0 when clean, 1 on errors, 2 when a file cannot
//! be read (missing, not UTF-8) — a sentence, never a panic.

use std::path::Path;
use std::process::{Command, Output};

mod support;
use support::temp_dir;

fn check(args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wsel"))
        .args(["check", "--color", "never"])
        .args(args)
        .arg(file)
        .output()
        .expect("wsel runs")
}

#[test]
fn a_missing_file_exits_2_with_a_sentence() {
    let output = check(&[], Path::new("no/such/file.wse"));
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("error: cannot read `no/such/file.wse`"),
        "{stderr}"
    );
}

#[test]
fn a_file_that_is_not_utf8_exits_2() {
    let dir = temp_dir("utf8");
    let file = dir.join("bad.wse");
    std::fs::write(&file, b"kernel k() { \xff\xfe }").expect("write");
    let output = check(&[], &file);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("not valid UTF-8 (first bad byte at offset 13)"),
        "{stderr}"
    );
}

#[test]
fn errors_exit_1_and_json_lists_them_with_positions() {
    let dir = temp_dir("json");
    let file = dir.join("bad.wse");
    std::fs::write(&file, "const A: u32 = 1.5;\n").expect("write");
    let output = check(&["--format", "json"], &file);
    assert_eq!(output.status.code(), Some(1));
    let json: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("JSON on standard output");
    let first = &json[0];
    assert_eq!(first["code"], "E0201");
    assert_eq!(first["severity"], "error");
    assert_eq!(first["primary"]["line"], 1);
    assert_eq!(first["primary"]["column"], 16);
}

#[test]
fn a_clean_file_exits_0() {
    let dir = temp_dir("clean");
    let file = dir.join("ok.wse");
    std::fs::write(&file, "const A: u32 = 1;\n").expect("write");
    let output = check(&[], &file);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
}

//! Tests: incrementality. Edits replay on one database and the execution log shows which
//! queries re-ran.

use std::path::Path;

use salsa::plumbing::AsId;

use super::*;
use crate::{item_index, set_file};

const SRC: &str = "kernel b() {
    var y: [f32; 4];
    out ys: stream<f32> to south;
    // a comment
    task main() { send(ys, y[0..4]); }
}

layer l(x: f32[B, N]) -> y: f32[B, N] {
    cost { flops = N; weights = 0; activations = 4 * N; }
    pipelined on [1, 1] { run b(); bind y to port ys; }
}

kernel a() {
    var x: f32;
    task main() { x = 1.0; }
}
";

/// The log entries of `query` for `item`, e.g. `check_kernel(Id(801))`.
fn ran(log: &[String], query: &str, item: salsa::Id) -> bool {
    let entry = format!("{query}({item:?})");
    log.iter().any(|l| l == &entry)
}

fn queries(log: &[String]) -> Vec<String> {
    let mut names: Vec<String> = log
        .iter()
        .map(|l| l.split('(').next().unwrap_or_default().to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn editing_one_kernel_re_runs_only_its_check() {
    let (mut db, root, _) = load(&[("main.wse", SRC)]);
    db.enable_log();
    assert!(
        diagnostics(&db, root).is_empty(),
        "{:?}",
        diagnostics(&db, root)
    );
    let log = db.take_log();
    let ids: Vec<salsa::Id> = item_index(&db, root).iter().map(|i| i.as_id()).collect();
    let (b, l, a) = (ids[0], ids[1], ids[2]);
    assert!(ran(&log, "check_kernel", a) && ran(&log, "check_kernel", b));
    assert!(ran(&log, "check_layer", l) && ran(&log, "kernel_signature", b));

    // Nothing changed: nothing runs.
    let _ = diagnostics(&db, root);
    assert!(db.take_log().is_empty());

    // Edit the body of kernel `a` (the last item): only `a`'s check re-runs, plus the cheap
    // per-file queries (parse, the item index, every item's syntax, the names of the import
    // lists, the file check).
    let edited = SRC.replace("x = 1.0;", "x = 2.0 * x + 1.0;");
    set_file(&mut db, Path::new("main.wse"), edited.clone());
    assert!(diagnostics(&db, root).is_empty());
    let log = db.take_log();
    assert!(ran(&log, "check_kernel", a));
    assert!(!ran(&log, "check_kernel", b), "{log:?}");
    assert!(!ran(&log, "check_layer", l), "{log:?}");
    assert!(!ran(&log, "kernel_signature", b), "{log:?}");
    expect_test::expect![[r#"
        [
            "check_file",
            "check_imports",
            "check_kernel",
            "file_imports",
            "import_uses",
            "item_ast",
            "item_ast",
            "item_ast",
            "item_index",
            "parse",
        ]
    "#]]
    .assert_debug_eq(&queries(&log));

    // The same-length comment edit inside `b` changes no syntax tree: every item's syntax is
    // equal and backdated, so no check re-runs at all.
    let commented = edited.replace("// a comment", "// b comment");
    set_file(&mut db, Path::new("main.wse"), commented.clone());
    let _ = diagnostics(&db, root);
    let log = db.take_log();
    assert!(
        !log.iter()
            .any(|l| l.starts_with("check_kernel") || l.starts_with("check_layer")),
        "{log:?}"
    );

    // A whitespace edit inside `a` (the last item) moves only `a`'s spans: `a` re-runs (its
    // diagnostics' spans must move with it), `b` and `l` do not. An edit that moves the text
    // of later items re-runs their checks too, because spans are absolute byte offsets.
    let spaced = commented.replace("x = 2.0", "x  =  2.0");
    set_file(&mut db, Path::new("main.wse"), spaced);
    let _ = diagnostics(&db, root);
    let log = db.take_log();
    assert!(ran(&log, "check_kernel", a));
    assert!(
        !ran(&log, "check_kernel", b) && !ran(&log, "check_layer", l),
        "{log:?}"
    );
}

#[test]
fn diagnostics_follow_edits() {
    let (mut db, root, _) = load(&[("main.wse", SRC)]);
    let broken = SRC.replace("x = 1.0;", "x = 1;");
    set_file(&mut db, Path::new("main.wse"), broken);
    let codes: Vec<&str> = diagnostics(&db, root).iter().map(|d| d.code).collect();
    assert_eq!(codes, ["E0201"]);
    set_file(&mut db, Path::new("main.wse"), SRC.to_string());
    assert!(diagnostics(&db, root).is_empty());
}

#[test]
fn a_missing_import_appears_when_the_file_is_added() {
    let (mut db, root, _) = load(&[("main.wse", "import lib.{K};\nconst X: u32 = K;\n")]);
    let codes: Vec<&str> = diagnostics(&db, root).iter().map(|d| d.code).collect();
    // The use of `K` is not reported again: the failed import defines it with the error type.
    assert_eq!(codes, ["E0101"]);
    set_file(
        &mut db,
        Path::new("lib.wse"),
        "const K: u32 = 3;\n".to_string(),
    );
    assert!(diagnostics(&db, root).is_empty());
}

//! Test helpers: load in-memory files into a database, check, and print diagnostics compactly
//! (code, `file:line:col`, the source text under the primary label, message, labels, help).

mod consteval;
mod incremental;
mod kernels;
mod layers;
mod models;
mod resolve;
mod runs;
mod train_as;
mod trains;
mod types;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::{Database, Diagnostic, SourceFile, diagnostics, load_program};

/// A database loaded with `files` (path, text); the first is the root.
pub fn load(files: &[(&str, &str)]) -> (Database, SourceFile, BTreeMap<PathBuf, String>) {
    let mut db = Database::default();
    let map: BTreeMap<PathBuf, String> = files
        .iter()
        .map(|(p, t)| (PathBuf::from(p), t.to_string()))
        .collect();
    let texts = map.clone();
    let mut read = move |p: &Path| {
        texts
            .get(p)
            .cloned()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"))
    };
    let root = load_program(&mut db, Path::new(files[0].0), &mut read).expect("root file loads");
    (db, root, map)
}

/// Checks `files` and renders every diagnostic.
pub fn check_files(files: &[(&str, &str)]) -> String {
    let (db, root, texts) = load(files);
    render_all(&diagnostics(&db, root), &texts)
}

/// Checks one file `main.wse`.
pub fn check(src: &str) -> String {
    check_files(&[("main.wse", src)])
}

pub fn render_all(diags: &[Diagnostic], texts: &BTreeMap<PathBuf, String>) -> String {
    let mut out = String::new();
    for d in diags {
        out.push_str(&render(d, texts));
    }
    out
}

fn position(
    texts: &BTreeMap<PathBuf, String>,
    file: &Path,
    offset: usize,
) -> (String, usize, usize) {
    let text = texts
        .get(file)
        .cloned()
        .or_else(|| crate::load::stdlib_source(file).map(str::to_string))
        .unwrap_or_default();
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
    (text, line, col)
}

fn snippet(texts: &BTreeMap<PathBuf, String>, loc: &crate::Location) -> String {
    let (text, line, col) = position(texts, &loc.file, loc.span.start);
    let s = text.get(loc.span.clone()).unwrap_or("?");
    let s: String = s.chars().take(40).collect();
    format!(
        "{}:{line}:{col} `{}`",
        loc.file.display(),
        s.replace('\n', " ")
    )
}

pub fn render(d: &Diagnostic, texts: &BTreeMap<PathBuf, String>) -> String {
    let mut out = format!(
        "{} {}: {}\n    [{}]\n",
        d.code,
        snippet(texts, &d.primary.location),
        d.message,
        d.primary.message
    );
    for s in &d.secondary {
        out.push_str(&format!(
            "    + {}: {}\n",
            snippet(texts, &s.location),
            s.message
        ));
    }
    for n in &d.notes {
        out.push_str(&format!("    note: {n}\n"));
    }
    if let Some(h) = &d.help {
        out.push_str(&format!("    help: {h}\n"));
    }
    out
}

/// A small but complete program: a kernel, a layer using it, a model and a run item.
pub const DIGITS: &str = r#"
kernel gemv_tile(n: u32, m: u32) {
    var w: [f32; n * m];
    var bias: [f32; m];
    var x: [f32; n];
    var y: [f32; m] = 0.0;
    in xs: stream<f32> from west multicast;
    out ys: stream<f32> to south;
    task main() { recv(xs, x[0..n]) then step; }
    task step() {
        for j in 0..m {
            var acc: f32 = 0.0;
            for i in 0..n { acc += x[i] * w[i * m + j]; }
            y[j] = acc + bias[j];
        }
        send(ys, y[0..m]) then main;
    }
}

layer dense(x: f32[B, N], param w: f32[N, M], param b: f32[M]) -> y: f32[B, M] {
    cost {
        flops = 2 * N * M;
        weights = 4 * (N * M + M);
        activations = 4 * (N + M);
    }
    pipelined on [1, 1] {
        run gemv_tile(n = N, m = M);
        bind w to array w;
        bind b to array bias;
        bind x to port xs;
        bind y to port ys;
    }
}

model digits(x: f32[B, 64]) -> f32[B, 10] {
    param w1: f32[64, 32];
    param b1: f32[32];
    param w2: f32[32, 10];
    param b2: f32[10];
    let h = dense(x, w1, b1);
    return dense(h, w2, b2);
}

run digits {
    input x = "x.npy";
    output = "out.npy";
    mode = "auto";
    batch = 8;
}
"#;

#[test]
fn the_digits_program_is_clean() {
    expect_test::expect![[""]].assert_eq(&check(DIGITS));
}

#[test]
fn every_code_has_a_test() {
    // Every code of this crate appears at the start of a rendered diagnostic in some snapshot.
    let sources = [
        include_str!("kernels.rs"),
        include_str!("layers.rs"),
        include_str!("models.rs"),
        include_str!("resolve.rs"),
        include_str!("runs.rs"),
        include_str!("trains.rs"),
        include_str!("train_as.rs"),
        include_str!("types.rs"),
    ]
    .concat();
    let missing: Vec<&str> = crate::diagnostics::CODES
        .iter()
        .map(|(c, _)| *c)
        .filter(|c| !sources.contains(&format!("{c} ")))
        .collect();
    assert!(missing.is_empty(), "codes without a test: {missing:?}");
}

#[test]
fn the_stdlib_checks_clean() {
    let mut out = String::new();
    for module in wsel_stdlib::module_paths() {
        let src = format!("import std.{module}.{{}};\n");
        let (db, root, _) = load(&[("main.wse", &src)]);
        let path = PathBuf::from(format!("<std>/{}.wse", module.replace('.', "/")));
        let file = crate::db::lookup_file(&db, &path).expect("stdlib module loaded");
        let _ = root;
        out.push_str(&render_all(
            &crate::file_diagnostics(&db, file),
            &BTreeMap::new(),
        ));
    }
    expect_test::expect![[""]].assert_eq(&out);
}

/// A build checks the program without the stdlib's own modules (`program_diagnostics`): with
/// every module imported and an error in the program, it reports what `diagnostics` does.
#[test]
fn program_diagnostics_leave_out_only_the_clean_stdlib() {
    let imports: String = wsel_stdlib::module_paths()
        .map(|module| format!("import std.{module}.{{}};\n"))
        .collect();
    let src = format!("{imports}const X: u32 = true;\n");
    let (db, root, _) = load(&[("main.wse", &src)]);
    let all = crate::diagnostics(&db, root);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(crate::program_diagnostics(&db, root), all);
}

#[test]
fn the_reference_example_checks_against_the_stdlib() {
    let src = "import std.nn.{dense, relu, softmax};

model digits(x: f32[B, 64]) -> f32[B, 10] {
    param w1: f32[64, 32];
    param b1: f32[32];
    param w2: f32[32, 10];
    param b2: f32[10];
    let h = relu(dense(x, w1, b1));
    return softmax(dense(h, w2, b2));
}
";
    let (db, root, texts) = load(&[("main.wse", src)]);
    expect_test::expect![[""]].assert_eq(&render_all(&diagnostics(&db, root), &texts));
    let analysis = crate::check_file(&db, root);
    let calls: Vec<String> = analysis
        .calls
        .iter()
        .map(|c| format!("{} -> {}", c.layer, c.result))
        .collect();
    assert_eq!(
        calls,
        [
            "dense -> f32[B, 32]",
            "relu -> f32[B, 32]",
            "dense -> f32[B, 10]",
            "softmax -> f32[B, 10]"
        ]
    );
    // Go to definition of `dense` lands in the stdlib.
    let at = src.find("dense(x").expect("call");
    let def = analysis.definition_at(at).expect("dense resolves");
    assert_eq!(def.file, PathBuf::from("<std>/nn.wse"));
}

#[test]
fn every_code_is_documented() {
    let doc = include_str!("../../../../docs/diagnostics.md");
    let missing: Vec<&str> = crate::all_codes()
        .iter()
        .map(|(c, _)| *c)
        .filter(|c| !doc.contains(&format!("| {c} |")))
        .collect();
    assert!(
        missing.is_empty(),
        "codes missing from docs/diagnostics.md: {missing:?}"
    );
}

//! Test support: load programs (in-memory files or the repository's examples) into a database,
//! insist that they check cleanly, and find items by name.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use wsel_ir::graph::CValue;
use wsel_ir::kernel::KernelIr;
use wsel_lower::lower_kernel;
use wsel_sema::{Database, ItemId, ItemKind, SourceFile, diagnostics, load_program, module_scope};

/// A database loaded with `files` (path, text); the first is the root. Panics if the program
/// has diagnostics.
pub fn load(files: &[(&str, &str)]) -> (Database, SourceFile) {
    let mut db = Database::default();
    let map: BTreeMap<PathBuf, String> = files
        .iter()
        .map(|(p, t)| (PathBuf::from(p), t.to_string()))
        .collect();
    let mut read = move |p: &Path| {
        map.get(p)
            .cloned()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"))
    };
    let root = load_program(&mut db, Path::new(files[0].0), &mut read).expect("root loads");
    assert_clean(&db, root);
    (db, root)
}

/// A database with one file `main.wse`.
pub fn load_one(src: &str) -> (Database, SourceFile) {
    load(&[("main.wse", src)])
}

/// The repository's folder.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The example `examples/<name>/main.wse`, loaded under that relative path (files it imports
/// are read from the repository too).
pub fn load_example(name: &str) -> (Database, SourceFile) {
    let mut db = Database::default();
    let root = PathBuf::from(format!("examples/{name}/main.wse"));
    let mut read = |p: &Path| std::fs::read_to_string(repo().join(p));
    let file = load_program(&mut db, &root, &mut read).expect("example loads");
    assert_clean(&db, file);
    (db, file)
}

/// Every example's name.
pub fn examples() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(repo().join("examples"))
        .expect("examples folder")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("main.wse").exists())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}

pub fn assert_clean(db: &Database, file: SourceFile) {
    let diags = diagnostics(db, file);
    assert!(diags.is_empty(), "the program has diagnostics: {diags:#?}");
}

/// The item of `kind` named `name` visible in `file`.
pub fn item<'db>(db: &'db Database, file: SourceFile, kind: ItemKind, name: &str) -> ItemId<'db> {
    module_scope(db, file)
        .get(name)
        .filter(|i| i.kind(db) == kind)
        .unwrap_or_else(|| panic!("no {kind:?} `{name}`"))
}

/// Lowers kernel `name` of `file` with integer arguments, panicking on an error, and checks
/// the result with the code generators' IR checker.
pub fn lower(db: &Database, file: SourceFile, name: &str, args: &[(&str, i64)]) -> KernelIr {
    let args: Vec<(String, CValue)> = args
        .iter()
        .map(|(n, v)| (n.to_string(), CValue::Int(*v)))
        .collect();
    lower_with(db, file, name, &args)
}

pub fn lower_with(
    db: &Database,
    file: SourceFile,
    name: &str,
    args: &[(String, CValue)],
) -> KernelIr {
    let kernel = item(db, file, ItemKind::Kernel, name);
    let ir = lower_kernel(db, kernel, args).unwrap_or_else(|e| panic!("{e}"));
    wsel_codegen::check::check_kernel(&ir).unwrap_or_else(|e| panic!("{}: {e}", ir.name));
    ir
}

//! Semantic analysis of .wse programs: the salsa database, name resolution, type checking and
//! diagnostics.
//!
//! Pipeline: [`load_program`] fills the database's file set from a root file; [`check_file`]
//! runs the per-item checks ([`check_const`], [`check_kernel`], [`check_layer`],
//! [`check_model`], [`check_run`]) which accumulate diagnostics; [`diagnostics`] collects
//! them for a file and the files it imports. Queries return plain data ([`analysis`]) for the
//! language server and for lowering. [`consteval`] holds the rules of compile-time
//! evaluation, which the checker and lowering both apply.

pub mod analysis;
pub mod builtins;
pub mod check;
pub mod consteval;
pub mod db;
pub mod diagnostics;
pub mod items;
pub mod load;
pub mod syntax;
pub mod ty;

use std::collections::BTreeSet;

pub use check::check_file;
pub use check::consts::{check_const, const_value};
pub use check::kernel::{check_kernel, kernel_signature};
pub use check::layer::{check_layer, layer_signature};
pub use check::model::{ModelCheck, check_model};
pub use check::run::check_run;
pub use check::train_as::{TrainArg, TrainAs, TrainCall, TrainScalar, check_train_as, train_as};
pub use db::{Database, Db, FileSet, Reported, SourceFile};
pub use items::{ItemId, ItemKind, item_ast, item_index, module_scope};
pub use load::{load_program, set_file};
pub use syntax::parse;
pub use wsel_diagnostic::{Diagnostic, Label, Location, Severity};

/// The folder name under which stdlib modules appear: `std.nn` is `<std>/nn.wse`.
pub const STD_PREFIX: &str = "<std>";

/// The diagnostics of `file` followed by those of every file it imports (directly or not),
/// without duplicates, sorted by file (`file` first, then the others by path) and then by
/// span. Call it from outside tracked functions (the CLI, the language server, tests).
pub fn diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    diagnostics_of(db, file, true)
}

/// [`diagnostics`] without those of the embedded stdlib's own modules, which check clean
/// (`the_stdlib_checks_clean`) and import nothing of the program's: the same diagnostics for
/// less work, what a build needs. The items of the stdlib that the program uses are still
/// checked where it uses them; the others (most of `std.nn`) are not checked at all.
pub fn program_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    diagnostics_of(db, file, false)
}

fn diagnostics_of(db: &dyn Db, file: SourceFile, with_stdlib: bool) -> Vec<Diagnostic> {
    let mut files = vec![file];
    let mut seen: BTreeSet<std::path::PathBuf> = BTreeSet::new();
    seen.insert(file.path(db).clone());
    let mut i = 0;
    while i < files.len() {
        for import in items::file_imports(db, files[i]) {
            if let Some(target) = items::resolve_module(db, files[i], &import.path)
                && seen.insert(target.path(db).clone())
            {
                files.push(target);
            }
        }
        i += 1;
    }
    let mut out: Vec<Diagnostic> = Vec::new();
    // Sets, not `out.contains` (here and in `file_diagnostics`): a file with tens of
    // thousands of diagnostics made that quadratic (found by fuzzing: a minute for 61 KB).
    let mut seen_diagnostics: std::collections::HashSet<Diagnostic> = Default::default();
    let checked = files
        .into_iter()
        .filter(|f| with_stdlib || !f.path(db).starts_with(STD_PREFIX));
    for f in checked {
        for d in file_diagnostics(db, f) {
            if seen_diagnostics.insert(d.clone()) {
                out.push(d);
            }
        }
    }
    let root = file.path(db).clone();
    out.sort_by(|a, b| {
        let key = |d: &Diagnostic| {
            (
                d.primary.location.file != root,
                d.primary.location.file.clone(),
                d.primary.location.span.start,
                d.primary.location.span.end,
                d.code,
            )
        };
        key(a).cmp(&key(b))
    });
    out
}

/// The diagnostics whose primary location is in `file` itself, sorted by span, without
/// duplicates (what a language server publishes for one document).
pub fn file_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    let path = file.path(db);
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut seen: std::collections::HashSet<&Diagnostic> = Default::default();
    for Reported(d) in check_file::accumulated::<Reported>(db, file) {
        if &d.primary.location.file == path && seen.insert(d) {
            out.push(d.clone());
        }
    }
    out.sort_by_key(|d| {
        (
            d.primary.location.span.start,
            d.primary.location.span.end,
            d.code,
        )
    });
    out
}

/// Every diagnostic code (the parser's E0001–E0007 and this crate's) with a one-line summary,
/// in code order. `docs/diagnostics.md` documents each one.
pub fn all_codes() -> Vec<(&'static str, &'static str)> {
    let mut codes: Vec<(&'static str, &'static str)> = wsel_syntax::codes().to_vec();
    codes.extend_from_slice(diagnostics::CODES);
    codes
}

#[cfg(test)]
mod tests;

//! The checks: one tracked query per item kind, and `check_file` that runs them all for a
//! file and collects their results.

pub mod config;
pub mod consts;
pub mod dim_expr;
pub mod expr;
pub mod imports;
pub mod kernel;
pub mod layer;
pub mod model;
pub mod run;
pub mod switch;
pub mod train;
pub mod train_as;

use crate::analysis::FileAnalysis;
use crate::db::{Db, SourceFile};
use crate::items::{ItemKind, item_index};
use crate::syntax::parse;

/// Checks every item of `file` (and its imports and top-level names). Diagnostics are
/// accumulated; read them with [`crate::diagnostics`]. The result gathers the name uses of
/// the import lists and the per-item analyses for the language server.
#[salsa::tracked(returns(ref))]
pub fn check_file(db: &dyn Db, file: SourceFile) -> FileAnalysis {
    let _ = parse(db, file);
    imports::check_imports(db, file);
    let mut out = FileAnalysis {
        file: file.path(db).clone(),
        uses: imports::import_uses(db, file).clone(),
        ..FileAnalysis::default()
    };
    for &item in item_index(db, file) {
        let analysis = match item.kind(db) {
            ItemKind::Const => consts::check_const(db, item),
            ItemKind::Kernel => kernel::check_kernel(db, item),
            ItemKind::Layer => layer::check_layer(db, item),
            ItemKind::Model => &model::check_model(db, item).analysis,
            ItemKind::Run => run::check_run(db, item),
            ItemKind::Train => train::check_train(db, item),
        };
        out.uses.extend(analysis.uses.iter().cloned());
        out.types.extend(analysis.types.iter().cloned());
        out.calls.extend(analysis.calls.iter().cloned());
        out.declared.extend(analysis.declared.iter().cloned());
    }
    out
}

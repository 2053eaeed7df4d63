//! Go to definition and find references, as locations (a file path and a byte span).
//! Definitions in the stdlib are `<std>/...` paths; the server turns them into files.

use wsel_diagnostic::Location;

use crate::context::{FileCtx, target_at};

/// Where the name at `offset` is defined.
pub fn definition(ctx: &FileCtx<'_>, offset: usize) -> Option<Location> {
    target_at(ctx, offset)
}

/// Every place the name at `offset` is used, in every file of the program (import lists
/// included), and its declaration when `include_declaration`. Sorted by file and span.
pub fn references(ctx: &FileCtx<'_>, offset: usize, include_declaration: bool) -> Vec<Location> {
    let Some(target) = target_at(ctx, offset) else {
        return Vec::new();
    };
    let db = ctx.db;
    let mut out: Vec<Location> = Vec::new();
    let files: Vec<wsel_sema::SourceFile> = match wsel_sema::FileSet::try_get(db) {
        Some(set) => set.files(db).values().copied().collect(),
        None => vec![ctx.file],
    };
    for file in files {
        let other = FileCtx::new(db, file);
        for u in &other.analysis.uses {
            if u.def == target {
                out.push(other.loc(&u.span));
            }
        }
    }
    if include_declaration && target.span.start < target.span.end {
        out.push(target);
    }
    out.sort_by(|a, b| {
        (&a.file, a.span.start, a.span.end).cmp(&(&b.file, b.span.start, b.span.end))
    });
    out.dedup();
    out
}

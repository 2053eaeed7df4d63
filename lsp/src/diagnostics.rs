//! The diagnostics the server publishes for a document: the front end's for the file itself,
//! and those of the `param` files its models name (`wsel-data`, read from the disk at every
//! refresh), in source order.

use wsel_sema::{Db, Diagnostic, SourceFile};

/// Every diagnostic of `file` to publish, sorted by position.
pub fn document_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    let mut found = wsel_sema::file_diagnostics(db, file);
    found.extend(wsel_data::param_diagnostics(db, file, &|_| false));
    found.sort_by_key(|d| d.primary.location.span.start);
    found
}

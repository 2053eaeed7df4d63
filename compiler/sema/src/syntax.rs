//! The `parse` query: wraps `wsel_syntax::parse` and turns its syntax errors into diagnostics.

use salsa::Accumulator;
use wsel_syntax::ast;

use crate::db::{Db, Reported, SourceFile};
use crate::diagnostic::{Diagnostic, Location};

/// The syntax tree of `file`. Syntax errors (E0001–E0007) are reported here.
#[salsa::tracked(returns(ref))]
pub fn parse(db: &dyn Db, file: SourceFile) -> ast::Module {
    let parsed = wsel_syntax::parse(file.text(db));
    for error in parsed.errors {
        Reported(syntax_diagnostic(file.path(db), error)).accumulate(db);
    }
    parsed.module
}

/// The diagnostic for one syntax error of the file at `path`.
pub fn syntax_diagnostic(path: &std::path::Path, error: wsel_syntax::SyntaxError) -> Diagnostic {
    let location = Location {
        file: path.to_path_buf(),
        span: error.span,
    };
    let mut diagnostic = Diagnostic::error(error.code, error.message, location, error.label);
    if let Some(help) = error.help {
        diagnostic = diagnostic.with_help(help);
    }
    match error.expected.as_slice() {
        [] => diagnostic,
        [one] => diagnostic.with_note(format!("expected {one}")),
        many => diagnostic.with_note(format!("expected one of {}", many.join(", "))),
    }
}

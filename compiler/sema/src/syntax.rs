//! The `parse` query: wraps `wsel_syntax::parse` and turns its syntax errors into diagnostics;
//! small facts about the syntax tree that several crates read (`written_span`).

use salsa::Accumulator;
use wsel_syntax::ast;

use crate::db::{Db, Reported, SourceFile};
use wsel_diagnostic::{Diagnostic, Location};

/// The syntax tree of `file`. Syntax errors (E0001–E0007) are reported here.
#[salsa::tracked(returns(ref))]
pub fn parse(db: &dyn Db, file: SourceFile) -> ast::Module {
    let parsed = wsel_syntax::parse(file.text(db));
    for error in parsed.errors {
        Reported(syntax_diagnostic(file.path(db), error)).accumulate(db);
    }
    parsed.module
}

/// Where a written type is (`f32[B, 64]`, `[f32; n]`, ...), for labels and hovers.
pub fn written_span(ty: &ast::Type) -> ast::Span {
    match ty {
        ast::Type::Scalar(_, s)
        | ast::Type::Array { span: s, .. }
        | ast::Type::Stream(_, s)
        | ast::Type::Tensor { span: s, .. }
        | ast::Type::Error(s) => s.clone(),
    }
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

/// Where the text of `file` stops being readable inside an item, if it does: the end of the
/// last token when a `{` is never closed (an unterminated `/*` comment swallows the rest of the
/// file, closing braces included). An item that reaches this point was cut short, so what it lacks (a `main` task, a `return`, a `cost` block, ...)
/// may be in the part that was lost; those "missing" errors are not reported for it.
#[salsa::tracked(returns(copy))]
pub fn syntax_cut(db: &dyn Db, file: SourceFile) -> Option<usize> {
    use wsel_syntax::{LexErrorKind, Token};
    let mut depth: usize = 0;
    let mut end = 0;
    for (token, span) in wsel_syntax::lex(file.text(db)) {
        if token == Token::Error(LexErrorKind::UnterminatedBlockComment) {
            break;
        }
        if token.is_trivia() {
            continue;
        }
        end = span.end;
        match token {
            Token::LBrace => depth += 1,
            Token::RBrace => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    (depth > 0).then_some(end)
}

/// Whether the item spanning `span` in `file` was cut short (see [`syntax_cut`]).
pub fn is_cut_short(db: &dyn Db, file: SourceFile, span: &ast::Span) -> bool {
    syntax_cut(db, file).is_some_and(|cut| span.end >= cut)
}

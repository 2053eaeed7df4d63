//! What every analysis needs about one file: its text, syntax tree, checked analysis and
//! declarations, and the answer to "what does the name at this offset refer to" (a name use
//! recorded by the checker, import lists included, or a declaration's own name).

use std::path::Path;

use wsel_diagnostic::Location;
use wsel_sema::Db;
use wsel_sema::analysis::FileAnalysis;
use wsel_sema::{SourceFile, db::lookup_file};
use wsel_syntax::ast::{self, Span};

use crate::defs::{Def, def_name_at, def_named_at, file_defs};

/// One file of the database, with everything the analyses read.
pub struct FileCtx<'db> {
    pub db: &'db dyn Db,
    pub file: SourceFile,
    pub text: &'db str,
    pub module: &'db ast::Module,
    pub analysis: &'db FileAnalysis,
    pub defs: Vec<Def>,
}

impl<'db> FileCtx<'db> {
    pub fn new(db: &'db dyn Db, file: SourceFile) -> Self {
        let module = wsel_sema::parse(db, file);
        let analysis = wsel_sema::check_file(db, file);
        FileCtx {
            db,
            file,
            text: file.text(db),
            module,
            analysis,
            defs: file_defs(module, &analysis.declared),
        }
    }

    /// The context of the file at `path`, if the database has it.
    pub fn of_path(db: &'db dyn Db, path: &Path) -> Option<Self> {
        lookup_file(db, path).map(|file| FileCtx::new(db, file))
    }

    pub fn path(&self) -> &'db Path {
        self.file.path(self.db)
    }

    pub fn loc(&self, span: &Span) -> Location {
        Location {
            file: self.path().to_path_buf(),
            span: span.clone(),
        }
    }
}

/// The definition the name at byte `offset` refers to: a use's definition (import lists
/// included: sema records their names as uses) or the declaration whose name is at
/// `offset`. The offset may sit just after the name (where the cursor is after typing it).
pub fn target_at(ctx: &FileCtx<'_>, offset: usize) -> Option<Location> {
    let before = offset.checked_sub(1);
    ctx.analysis
        .definition_at(offset)
        .or_else(|| before.and_then(|b| ctx.analysis.definition_at(b)))
        .cloned()
        .or_else(|| def_name_at(&ctx.defs, offset).map(|d| ctx.loc(&d.name_span)))
}

/// The declaration at `location` and the context of its file.
pub fn def_at_location<'db>(db: &'db dyn Db, location: &Location) -> Option<(FileCtx<'db>, Def)> {
    let ctx = FileCtx::of_path(db, &location.file)?;
    let def = def_named_at(&ctx.defs, &location.span)?.clone();
    Some((ctx, def))
}

/// The identifier token at `offset` (or ending at it), with its span.
pub fn ident_at(text: &str, offset: usize) -> Option<(String, Span)> {
    let tokens = wsel_syntax::lex(text);
    let at = |inclusive: bool| {
        tokens.iter().find(|(t, s)| {
            matches!(t, wsel_syntax::Token::Ident(_))
                && s.start <= offset
                && (offset < s.end || (inclusive && offset == s.end))
        })
    };
    let (token, span) = at(false).or_else(|| at(true))?;
    match token {
        wsel_syntax::Token::Ident(name) => Some((name.clone(), span.clone())),
        _ => None,
    }
}

/// The module path shown for a file in hovers: `std.nn` for `<std>/nn.wse`, else the file
/// name.
pub fn module_label(path: &Path) -> String {
    match path.strip_prefix(wsel_sema::STD_PREFIX) {
        Ok(rest) => {
            let dotted: Vec<String> = rest
                .with_extension("")
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            format!("std.{}", dotted.join("."))
        }
        Err(_) => path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    }
}

/// `text` with every run of whitespace (line breaks included) replaced by one space.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

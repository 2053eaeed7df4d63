//! The renderer-neutral diagnostic: what every phase reports (the front end, the mapper, the
//! hang checks), and what the CLI (ariadne, JSON) and the language server render. It knows
//! nothing about terminals, LSP or the salsa database.

use std::ops::Range;
use std::path::PathBuf;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
}

/// A place in a source file: the file's path as given to the compiler (stdlib files are
/// named `<std>/nn.wse`) and a byte range.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Location {
    pub file: PathBuf,
    pub span: Range<usize>,
}

/// A label pointing at source, with a short message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Label {
    pub location: Location,
    pub message: String,
}

/// One diagnostic. `code` is stable (`E0001`…) and listed in `docs/diagnostics.md`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    pub code: &'static str,
    pub severity: Severity,
    /// One sentence a user understands, without a trailing period.
    pub message: String,
    /// Where the problem is; its message says what is wrong there.
    pub primary: Label,
    /// Other places that explain the problem (a definition, the other shape, ...).
    pub secondary: Vec<Label>,
    /// Extra facts (`note: ...`).
    pub notes: Vec<String>,
    /// A suggestion how to fix it (`help: ...`).
    pub help: Option<String>,
}

impl Diagnostic {
    /// An error with a primary label; add the rest with the builder methods.
    pub fn error(
        code: &'static str,
        message: impl Into<String>,
        location: Location,
        label: impl Into<String>,
    ) -> Self {
        Diagnostic {
            code,
            severity: Severity::Error,
            message: message.into(),
            primary: Label {
                location,
                message: label.into(),
            },
            secondary: Vec::new(),
            notes: Vec::new(),
            help: None,
        }
    }

    pub fn with_secondary(mut self, location: Location, message: impl Into<String>) -> Self {
        self.secondary.push(Label {
            location,
            message: message.into(),
        });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

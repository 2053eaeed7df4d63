//! The server's state: the one `wsel_sema::Database`, the open documents, and the mapping
//! between LSP URIs and the database's paths (stdlib modules, which the database names
//! `<std>/nn.wse`, are materialised as read-only files so editors can open them).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use tower_lsp::lsp_types::{self as lsp, Url};
use wsel_sema::{Database, Db, Severity, db::lookup_file};

use crate::line_index::LineIndex;

/// An open document: the path it has in the database and the editor's text and version.
#[derive(Debug, Clone)]
pub struct Document {
    pub path: PathBuf,
    pub text: String,
    pub version: i32,
}

/// Everything the server changes; behind one mutex in the server.
pub struct Workspace {
    pub db: Database,
    pub docs: BTreeMap<Url, Document>,
    /// Bumped by every edit; diagnostics computed for an older revision are dropped.
    pub revision: u64,
    /// The diagnostics last published per document, to skip re-sending equal ones.
    pub published: HashMap<Url, Vec<lsp::Diagnostic>>,
    pub paths: PathMap,
}

impl Workspace {
    pub fn new(paths: PathMap) -> Self {
        Workspace {
            db: Database::default(),
            docs: BTreeMap::new(),
            revision: 0,
            published: HashMap::new(),
            paths,
        }
    }

    /// Puts the document's text into the database and loads the files it imports (open
    /// documents from their buffers, other files from disk, the stdlib from the binary).
    pub fn load(&mut self, uri: &Url) {
        let Some(doc) = self.docs.get(uri) else {
            return;
        };
        let root = doc.path.clone();
        let docs = &self.docs;
        let mut read = |path: &Path| -> std::io::Result<String> {
            match docs.values().find(|d| d.path == path) {
                Some(d) => Ok(d.text.clone()),
                None => std::fs::read_to_string(path),
            }
        };
        // The root is an open document, so reading it cannot fail.
        let _ = wsel_sema::load_program(&mut self.db, &root, &mut read);
        self.revision += 1;
    }

    /// The conversion context for analyses run on a snapshot.
    pub fn converter(&self) -> Converter {
        Converter {
            paths: self.paths.clone(),
            open: self
                .docs
                .iter()
                .map(|(uri, d)| (d.path.clone(), uri.clone()))
                .collect(),
        }
    }
}

/// Where stdlib modules are materialised, and the URI ↔ path rules.
#[derive(Debug, Clone)]
pub struct PathMap {
    pub stdlib_dir: PathBuf,
}

impl PathMap {
    /// Writes every stdlib module below `stdlib_dir` (read-only; rewritten atomically only
    /// when its content differs).
    pub fn new(stdlib_dir: PathBuf) -> Self {
        let map = PathMap { stdlib_dir };
        for module in wsel_stdlib::module_paths() {
            let _ = map.materialise(module);
        }
        map
    }

    /// The default place: a folder in the temporary directory named after the stdlib's
    /// content, so servers of different versions never fight over it.
    pub fn default_stdlib_dir() -> PathBuf {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for module in wsel_stdlib::module_paths() {
            let segments: Vec<&str> = module.split('.').collect();
            let text = wsel_stdlib::source(&segments).unwrap_or("");
            for b in module.bytes().chain(text.bytes()) {
                hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
        std::env::temp_dir().join(format!("wsel-stdlib-{hash:016x}"))
    }

    fn materialise(&self, dotted: &str) -> std::io::Result<PathBuf> {
        let segments: Vec<&str> = dotted.split('.').collect();
        let text = wsel_stdlib::source(&segments)
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such module"))?;
        let mut path = self.stdlib_dir.clone();
        for s in &segments {
            path.push(s);
        }
        path.set_extension("wse");
        if std::fs::read_to_string(&path).is_ok_and(|t| t == text) {
            return Ok(path);
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let temp = path.with_extension(format!("wse.{}.tmp", std::process::id()));
        std::fs::write(&temp, text)?;
        let mut perms = std::fs::metadata(&temp)?.permissions();
        perms.set_readonly(true);
        std::fs::set_permissions(&temp, perms)?;
        std::fs::rename(&temp, &path)?;
        Ok(path)
    }

    /// The database path of a document: `<std>/nn.wse` for a materialised stdlib file, the
    /// file path for other `file:` URIs, the URI itself otherwise.
    pub fn uri_to_path(&self, uri: &Url) -> PathBuf {
        match uri.to_file_path() {
            Ok(path) => match path.strip_prefix(&self.stdlib_dir) {
                Ok(rest) => Path::new(wsel_sema::STD_PREFIX).join(rest),
                Err(_) => path,
            },
            Err(()) => PathBuf::from(uri.as_str()),
        }
    }
}

/// Turns database paths and spans into LSP locations, on a snapshot (no lock held).
#[derive(Debug, Clone)]
pub struct Converter {
    paths: PathMap,
    /// Open documents by database path (for URIs that are not `file:` URIs).
    open: HashMap<PathBuf, Url>,
}

impl Converter {
    pub fn path_to_uri(&self, path: &Path) -> Option<Url> {
        if let Some(uri) = self.open.get(path) {
            return Some(uri.clone());
        }
        if let Ok(rest) = path.strip_prefix(wsel_sema::STD_PREFIX) {
            let dotted: Vec<String> = rest
                .with_extension("")
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            let file = self.paths.materialise(&dotted.join(".")).ok()?;
            return Url::from_file_path(file).ok();
        }
        Url::from_file_path(path).ok()
    }

    /// The LSP location of a span in any file of the database.
    pub fn location(&self, db: &dyn Db, location: &wsel_sema::Location) -> Option<lsp::Location> {
        let file = lookup_file(db, &location.file)?;
        let index = LineIndex::new(file.text(db));
        Some(lsp::Location {
            uri: self.path_to_uri(&location.file)?,
            range: index.range(&location.span),
        })
    }

    /// A diagnostic of `wsel check` as an LSP diagnostic of the document with `index`: the
    /// same code and message (its first line), notes and help on the following lines, the
    /// secondary labels as related information.
    pub fn diagnostic(
        &self,
        db: &dyn Db,
        index: &LineIndex<'_>,
        d: &wsel_sema::Diagnostic,
    ) -> lsp::Diagnostic {
        let mut message = d.message.clone();
        for note in &d.notes {
            message.push_str(&format!("\nnote: {note}"));
        }
        if let Some(help) = &d.help {
            message.push_str(&format!("\nhelp: {help}"));
        }
        let related: Vec<lsp::DiagnosticRelatedInformation> = d
            .secondary
            .iter()
            .filter_map(|label| {
                Some(lsp::DiagnosticRelatedInformation {
                    location: self.location(db, &label.location)?,
                    message: label.message.clone(),
                })
            })
            .collect();
        lsp::Diagnostic {
            range: index.range(&d.primary.location.span),
            severity: Some(match d.severity {
                Severity::Error => lsp::DiagnosticSeverity::ERROR,
                Severity::Warning => lsp::DiagnosticSeverity::WARNING,
            }),
            code: Some(lsp::NumberOrString::String(d.code.to_string())),
            source: Some("wsel".to_string()),
            message,
            related_information: (!related.is_empty()).then_some(related),
            ..lsp::Diagnostic::default()
        }
    }
}

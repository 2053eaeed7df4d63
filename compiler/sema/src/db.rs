//! The salsa database: the inputs (source files and the set of files of a program), the `Db`
//! trait every query takes, and the concrete `Database` with an optional log of executed
//! queries for incrementality tests.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use wsel_diagnostic::Diagnostic;

/// One `.wse` file: its path as given to the compiler (stdlib files are `<std>/nn.wse`) and
/// its text. The text is the only thing an editor changes.
#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub path: PathBuf,
    #[returns(ref)]
    pub text: String,
}

/// The files known to the compiler, by path. There is one per database (a salsa singleton);
/// `load_program` and a language server fill it. Import resolution looks files up here, so
/// adding a file that an import names re-runs exactly the queries that looked for it.
#[salsa::input(singleton, debug)]
pub struct FileSet {
    #[returns(ref)]
    pub files: BTreeMap<PathBuf, SourceFile>,
}

/// A diagnostic reported by a query. Read them with [`crate::diagnostics`], never from inside a
/// tracked function.
#[salsa::accumulator]
#[derive(Debug, Clone)]
pub struct Reported(pub Diagnostic);

/// The database trait every query of this crate takes.
#[salsa::db]
pub trait Db: salsa::Database {}

#[salsa::db]
impl Db for Database {}

/// The concrete database used by the CLI, the language server and tests.
///
/// Cloning is cheap and shares the storage (and the log); a clone must be dropped before an
/// input is set on another handle.
#[salsa::db]
#[derive(Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
    /// `Some` while logging is enabled: the queries that executed, formatted on reading.
    log: Arc<Mutex<Option<Vec<salsa::DatabaseKeyIndex>>>>,
}

#[salsa::db]
impl salsa::Database for Database {}

impl Default for Database {
    fn default() -> Self {
        let log: Arc<Mutex<Option<Vec<salsa::DatabaseKeyIndex>>>> = Arc::default();
        let sink = Arc::clone(&log);
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind {
                // Cheap when logging is off: one uncontended lock and a check for `None`.
                if let Ok(mut guard) = sink.lock()
                    && let Some(entries) = guard.as_mut()
                {
                    entries.push(database_key);
                }
            }
        })));
        Database { storage, log }
    }
}

impl Database {
    /// Starts recording the queries that execute (a no-op when already recording).
    pub fn enable_log(&self) {
        if let Ok(mut guard) = self.log.lock()
            && guard.is_none()
        {
            *guard = Some(Vec::new());
        }
    }

    /// The queries executed since the last call, as `name(Id(..))`, in execution order.
    pub fn take_log(&self) -> Vec<String> {
        let keys = match self.log.lock() {
            Ok(mut guard) => guard.as_mut().map(std::mem::take).unwrap_or_default(),
            Err(_) => Vec::new(),
        };
        // Query names are only known with the database attached.
        salsa::Database::attach(self, |_| keys.iter().map(|k| format!("{k:?}")).collect())
    }
}

/// The file at `path`, if the file set has it (the set is created by `set_file` and
/// `load_program`; queries only read it).
pub fn lookup_file(db: &dyn Db, path: &std::path::Path) -> Option<SourceFile> {
    FileSet::try_get(db)?.files(db).get(path).copied()
}

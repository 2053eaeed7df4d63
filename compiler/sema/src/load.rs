//! Loading a program: the non-tracked loop that fills the file set from a root file, following
//! imports to a fixed point, reading files through a caller-supplied function (the CLI reads
//! the disk, a language server its open buffers) and the stdlib from `wsel_stdlib`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use salsa::Setter;

use crate::STD_PREFIX;
use crate::db::{Database, FileSet, SourceFile};
use crate::items::{file_imports, import_target_path};

/// Adds `path` with `text` to the file set, or updates its text if it is already there.
/// Setting an equal text is a no-op, so unchanged files keep all their memoized results.
pub fn set_file(db: &mut Database, path: &Path, text: String) -> SourceFile {
    let set = match FileSet::try_get(db) {
        Some(set) => set,
        None => FileSet::new(db, BTreeMap::new()),
    };
    if let Some(file) = set.files(db).get(path).copied() {
        if file.text(db) != &text {
            file.set_text(db).to(text);
        }
        return file;
    }
    let file = SourceFile::new(db, path.to_path_buf(), text);
    let mut files = set.files(db).clone();
    files.insert(path.to_path_buf(), file);
    set.set_files(db).to(files);
    file
}

/// Stdlib modules in every program's file set, imported or not.
pub const ALWAYS_LOADED: &[&str] = &["resident", "loss"];

/// The source of a stdlib pseudo-path such as `<std>/nn.wse`, if it names a stdlib module.
pub fn stdlib_source(path: &Path) -> Option<&'static str> {
    let rest = path.strip_prefix(STD_PREFIX).ok()?;
    let dotted = rest.with_extension("");
    let segments: Vec<&str> = dotted.iter().filter_map(|s| s.to_str()).collect();
    wsel_stdlib::source(&segments)
}

/// Loads the program rooted at `root`: reads it, parses it, reads every file it imports that
/// the file set does not have yet, and repeats until nothing new is imported. Files under
/// `<std>/` come from the embedded stdlib. A file that cannot be read is simply left out;
/// the import that names it is then reported as an unknown module (E0101).
///
/// Returns the root file, or the IO error of reading the root itself. Files already in the
/// set are re-read, so calling this again after edits on disk updates changed texts.
pub fn load_program(
    db: &mut Database,
    root: &Path,
    read: &mut dyn FnMut(&Path) -> std::io::Result<String>,
) -> std::io::Result<SourceFile> {
    let text = read_source(root, read)?;
    let root_file = set_file(db, root, text);
    let mut visited: BTreeSet<PathBuf> = BTreeSet::new();
    let mut pending = vec![root_file];
    // Weight streaming stages a model's inputs and result with `std.resident`'s layers, which
    // no program imports itself.
    for module in ALWAYS_LOADED {
        let path = Path::new(STD_PREFIX).join(format!("{module}.wse"));
        if let Ok(text) = read_source(&path, read) {
            pending.push(set_file(db, &path, text));
        }
    }
    while let Some(file) = pending.pop() {
        if !visited.insert(file.path(db).clone()) {
            continue;
        }
        let importing = file.path(db).clone();
        let targets: Vec<PathBuf> = file_imports(db, file)
            .iter()
            .map(|import| import_target_path(&importing, &import.path))
            .collect();
        for target in targets {
            if visited.contains(&target) {
                continue;
            }
            if let Ok(text) = read_source(&target, read) {
                pending.push(set_file(db, &target, text));
            }
        }
    }
    Ok(root_file)
}

fn read_source(
    path: &Path,
    read: &mut dyn FnMut(&Path) -> std::io::Result<String>,
) -> std::io::Result<String> {
    if path.starts_with(STD_PREFIX) {
        return stdlib_source(path).map(str::to_string).ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::NotFound, "no such stdlib module")
        });
    }
    read(path)
}

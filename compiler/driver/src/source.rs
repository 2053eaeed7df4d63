//! Reading `.wse` sources from disk (or one from memory), and collecting every loaded file's text for rendering.

use std::io;
use std::path::Path;

use wsel_sema::Database;

use crate::render::SourceTexts;

/// Reads a source file, turning "not UTF-8" into a sentence a user understands.
pub fn read_source(path: &Path) -> io::Result<String> {
    let bytes = std::fs::read(path)?;
    String::from_utf8(bytes).map_err(|error| {
        let at = error.utf8_error().valid_up_to();
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("the file is not valid UTF-8 (first bad byte at offset {at})"),
        )
    })
}

/// Reads sources from disk, except `root`'s when its `text` is given (a program in memory;
/// its imports are read beside it).
pub fn reader<'a>(
    root: &'a Path,
    text: Option<&'a str>,
) -> impl FnMut(&Path) -> io::Result<String> + 'a {
    move |path: &Path| match text {
        Some(text) if path == root => Ok(text.to_string()),
        _ => read_source(path),
    }
}

/// The text of every file in the database, by path.
pub fn source_texts(db: &Database) -> SourceTexts {
    let Some(set) = wsel_sema::FileSet::try_get(db) else {
        return SourceTexts::new();
    };
    set.files(db)
        .iter()
        .map(|(path, file)| (path.clone(), file.text(db).clone()))
        .collect()
}

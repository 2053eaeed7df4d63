//! Writing output files atomically: a temporary file in the same folder, renamed into place
//! only when complete, so an error never leaves half a file. Missing parent folders are created.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use tempfile::NamedTempFile;

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, |out| out.write_all(bytes))
}

/// Writes to `path` atomically what `write` writes into the buffered writer it is given.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let temp = temp_beside(path)?;
    let mut out = BufWriter::new(temp.as_file());
    write(&mut out)?;
    out.flush()?;
    drop(out);
    temp.persist(path).map(drop).map_err(|e| e.error)
}

/// A new temporary file in `path`'s folder (created if missing), removed when dropped unless
/// persisted to `path`. Its permissions are those of a new file (read and write for all, less
/// the umask), not the private ones temporary files get by default.
pub fn temp_beside(path: &Path) -> io::Result<NamedTempFile> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other("the path names no file"))?;
    let prefix = format!(".{}.", name.to_string_lossy());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    builder.tempfile_in(parent)
}

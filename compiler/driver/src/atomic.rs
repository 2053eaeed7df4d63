//! Writing output files all or nothing. [`Outputs`] collects every file a command writes and
//! writes them only once everything is computed: each regular file is first written to a
//! temporary file in its folder and renamed into place only when every file's bytes were
//! written, so an error never leaves half a file, nor some files of a run without the others.
//! A file too large to hold in memory (a trace) is written into its temporary file as it is
//! produced ([`temp_beside`]) and handed over staged ([`Outputs::add_staged`]).
//!
//! A path that is a symlink is written through: the file it points to is replaced, the link
//! stays. A path that exists but is not a regular file (a device such as `/dev/stdout` or
//! `/dev/full`, a named pipe) cannot be replaced atomically and is written in place, after the
//! temporary files and before any rename, so that its write error still leaves no file behind.
//! Missing parent folders of regular files are created.

use std::fs::{self, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

/// Writes `bytes` to `path` atomically (a set of one [`Outputs`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut outputs = Outputs::default();
    outputs.add(path, bytes.to_vec());
    outputs.commit().map_err(|failed| failed.error)
}

/// Files to write together.
#[derive(Debug, Default)]
pub struct Outputs {
    files: Vec<(PathBuf, Content)>,
}

/// What a file of [`Outputs`] holds.
#[derive(Debug)]
enum Content {
    Bytes(Vec<u8>),
    /// Written already, into a temporary file beside the destination.
    Staged(NamedTempFile),
}

/// The file that could not be written, and why.
#[derive(Debug)]
pub struct WriteFailure {
    pub path: PathBuf,
    pub error: io::Error,
}

impl Outputs {
    /// Adds a file to write, as given on the command line.
    pub fn add(&mut self, path: &Path, bytes: Vec<u8>) {
        self.files.push((path.to_path_buf(), Content::Bytes(bytes)));
    }

    /// Adds a file written already into `temp` (made by [`temp_beside`] for `path`).
    pub fn add_staged(&mut self, path: &Path, temp: NamedTempFile) {
        self.files.push((path.to_path_buf(), Content::Staged(temp)));
    }

    /// Adds a file whose content `write` writes now, into a temporary file beside `path`.
    pub fn add_written(
        &mut self,
        path: &Path,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), WriteFailure> {
        let fail = |error| WriteFailure {
            path: path.to_path_buf(),
            error,
        };
        let temp = temp_beside(path).map_err(fail)?;
        let mut out = BufWriter::new(temp.as_file());
        write(&mut out).map_err(fail)?;
        out.flush().map_err(fail)?;
        drop(out);
        self.add_staged(path, temp);
        Ok(())
    }

    /// Writes every file, or none: on an error, no regular file has been created or changed
    /// (a device written in place may have taken some bytes). Temporary files not renamed
    /// are removed.
    pub fn commit(self) -> Result<(), WriteFailure> {
        let mut staged = Vec::new();
        let mut in_place = Vec::new();
        for (path, content) in self.files {
            let fail = |error| WriteFailure {
                path: path.clone(),
                error,
            };
            match destination(&path).map_err(fail)? {
                Destination::InPlace => in_place.push((path, content)),
                Destination::Replace(real) => {
                    let temp = match content {
                        Content::Staged(temp) => temp,
                        Content::Bytes(bytes) => write_new(&real, &bytes).map_err(fail)?,
                    };
                    keep_permissions(temp.path(), &real).map_err(fail)?;
                    staged.push((temp, real));
                }
            }
        }
        for (path, content) in in_place {
            write_in_place(&path, content).map_err(|error| WriteFailure { path, error })?;
        }
        for (temp, real) in staged {
            temp.persist(&real).map_err(|e| WriteFailure {
                path: real.clone(),
                error: e.error,
            })?;
        }
        Ok(())
    }
}

/// A new temporary file beside the file `path` stands for (symlinks followed; the folder
/// created if missing; in the system's temporary folder for a device or pipe), removed when dropped unless persisted. Its permissions are those of a
/// new file (read and write for all, less the umask), not the private ones temporary files
/// get by default.
pub fn temp_beside(path: &Path) -> io::Result<NamedTempFile> {
    let real = match destination(path)? {
        Destination::Replace(real) => real,
        // A device or pipe is copied from the temporary file: it may be anywhere.
        Destination::InPlace => return NamedTempFile::new(),
    };
    let parent = real
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(parent)?;
    let name = real.file_name().unwrap_or_default().to_string_lossy();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    builder.tempfile_in(parent)
}

/// How a path is written.
enum Destination {
    /// An existing file that is not a regular file: write into it.
    InPlace,
    /// A regular file (existing or not), by its real path (symlinks resolved): replace it.
    Replace(PathBuf),
}

fn destination(path: &Path) -> io::Result<Destination> {
    if path.file_name().is_none() {
        return Err(io::Error::other("the path names no file"));
    }
    match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(io::Error::other("it is a folder")),
        Ok(meta) if !meta.is_file() => Ok(Destination::InPlace),
        Ok(_) => fs::canonicalize(path).map(Destination::Replace),
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            Ok(Destination::Replace(link_target(path)))
        }
        Err(error) => Err(error),
    }
}

/// Where a path that does not exist yet will be: the target of a dangling symlink (followed
/// link by link), else the path itself.
fn link_target(path: &Path) -> PathBuf {
    let mut path = path.to_path_buf();
    for _ in 0..40 {
        match fs::read_link(&path) {
            Ok(target) => {
                path = match path.parent() {
                    Some(parent) => parent.join(target),
                    None => target,
                }
            }
            Err(_) => break,
        }
    }
    path
}

/// A temporary file beside `real` holding `bytes`.
fn write_new(real: &Path, bytes: &[u8]) -> io::Result<NamedTempFile> {
    let mut temp = temp_beside(real)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    Ok(temp)
}

/// Gives `temp` the permissions of the file it will replace, if there is one.
fn keep_permissions(temp: &Path, replaces: &Path) -> io::Result<()> {
    match fs::metadata(replaces) {
        Ok(meta) => fs::set_permissions(temp, meta.permissions()),
        Err(_) => Ok(()),
    }
}

fn write_in_place(path: &Path, content: Content) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).open(path)?;
    match content {
        Content::Bytes(bytes) => file.write_all(&bytes)?,
        Content::Staged(temp) => {
            io::copy(&mut temp.reopen()?, &mut file)?;
        }
    }
    file.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> tempfile::TempDir {
        let prefix = format!("wsel-atomic-{name}-");
        let dir = tempfile::Builder::new().prefix(&prefix).tempdir();
        dir.expect("scratch folder")
    }

    #[test]
    fn a_failing_file_leaves_every_file_unwritten() {
        let scratch = scratch("all-or-nothing");
        let dir = scratch.path();
        fs::write(dir.join("old.txt"), "old").expect("old file");
        let mut outputs = Outputs::default();
        outputs.add(&dir.join("old.txt"), b"new".to_vec());
        outputs.add(&dir.join("a/b.txt"), b"b".to_vec());
        // A folder where a file should go.
        fs::create_dir_all(dir.join("taken")).expect("folder");
        outputs.add(&dir.join("taken"), b"x".to_vec());
        let failure = outputs.commit().expect_err("a folder is not a file");
        assert_eq!(failure.path, dir.join("taken"));
        assert_eq!(fs::read_to_string(dir.join("old.txt")).expect("old"), "old");
        assert!(!dir.join("a/b.txt").exists());
        let left: Vec<_> = fs::read_dir(dir.join("a")).expect("a").collect();
        assert!(left.is_empty(), "temporary files left: {left:?}");
    }

    #[test]
    fn a_symlink_is_written_through() {
        let scratch = scratch("symlink");
        let dir = scratch.path();
        fs::write(dir.join("real.txt"), "old").expect("real");
        std::os::unix::fs::symlink("real.txt", dir.join("link.txt")).expect("link");
        std::os::unix::fs::symlink("fresh.txt", dir.join("dangling.txt")).expect("link");
        write_atomic(&dir.join("link.txt"), b"new").expect("write");
        write_atomic(&dir.join("dangling.txt"), b"fresh").expect("write");
        assert!(
            fs::symlink_metadata(dir.join("link.txt"))
                .expect("link")
                .is_symlink()
        );
        assert_eq!(
            fs::read_to_string(dir.join("real.txt")).expect("real"),
            "new"
        );
        assert!(
            fs::symlink_metadata(dir.join("dangling.txt"))
                .expect("link")
                .is_symlink()
        );
        assert_eq!(
            fs::read_to_string(dir.join("fresh.txt")).expect("fresh"),
            "fresh"
        );
    }

    #[test]
    fn a_device_is_written_in_place_and_its_error_reported() {
        write_atomic(Path::new("/dev/null"), b"discarded").expect("/dev/null takes anything");
        let error = write_atomic(Path::new("/dev/full"), b"x").expect_err("/dev/full is full");
        assert_eq!(error.raw_os_error(), Some(28), "ENOSPC: {error}");
        let meta = fs::metadata("/dev/full").expect("/dev/full");
        assert!(!meta.is_file(), "/dev/full is still a device");
    }
}

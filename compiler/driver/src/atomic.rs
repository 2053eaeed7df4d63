//! Writing output files all or nothing. [`Outputs`] collects every file a command writes and
//! writes them only once everything is computed: each regular file goes to a temporary file in
//! its folder, renamed into place only when every file's bytes were written, so an error never
//! leaves half a file, nor some files of a run without the others.
//!
//! A path that is a symlink is written through: the file it points to is replaced, the link
//! stays. A path that exists but is not a regular file (a device such as `/dev/stdout` or
//! `/dev/full`, a named pipe) cannot be replaced atomically and is written in place, after the
//! temporary files and before any rename, so that its write error still leaves no file behind.
//! Missing parent folders of regular files are created.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically (a set of one [`Outputs`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut outputs = Outputs::default();
    outputs.add(path, bytes.to_vec());
    outputs.commit().map_err(|failed| failed.error)
}

/// Files to write together.
#[derive(Debug, Default)]
pub struct Outputs {
    files: Vec<(PathBuf, Vec<u8>)>,
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
        self.files.push((path.to_path_buf(), bytes));
    }

    /// Writes every file, or none: on an error, no regular file has been created or changed
    /// (a device written in place may have taken some bytes).
    pub fn commit(self) -> Result<(), WriteFailure> {
        let mut staged = Vec::new();
        let result = self.write_all(&mut staged);
        for (temp, _) in staged {
            let _ = fs::remove_file(temp);
        }
        result
    }

    /// Writes the temporary files (recording each in `staged` as (temporary, real path)),
    /// then the files written in place, then renames the temporary files into place (taking
    /// each out of `staged` once renamed).
    fn write_all(&self, staged: &mut Vec<(PathBuf, PathBuf)>) -> Result<(), WriteFailure> {
        let mut in_place = Vec::new();
        for (index, (path, bytes)) in self.files.iter().enumerate() {
            let fail = |error| WriteFailure {
                path: path.clone(),
                error,
            };
            match destination(path).map_err(fail)? {
                Destination::InPlace => in_place.push((path, bytes)),
                Destination::Replace(real) => {
                    let temp = temp_beside(&real, index).map_err(fail)?;
                    staged.push((temp.clone(), real.clone()));
                    write_new(&temp, bytes, &real).map_err(fail)?;
                }
            }
        }
        for (path, bytes) in in_place {
            write_in_place(path, bytes).map_err(|error| WriteFailure {
                path: path.clone(),
                error,
            })?;
        }
        while let Some((temp, real)) = staged.first() {
            fs::rename(temp, real).map_err(|error| WriteFailure {
                path: real.clone(),
                error,
            })?;
            staged.remove(0);
        }
        Ok(())
    }
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

/// A temporary name in `real`'s folder (created if missing) for the `index`-th file.
fn temp_beside(real: &Path, index: usize) -> io::Result<PathBuf> {
    let parent = real
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(parent)?;
    let name = real.file_name().unwrap_or_default().to_string_lossy();
    Ok(parent.join(format!(".{name}.{}-{index}.tmp", std::process::id())))
}

/// Writes a new file with `bytes`, with the permissions of the file it will replace.
fn write_new(temp: &Path, bytes: &[u8], replaces: &Path) -> io::Result<()> {
    let mut file = File::create(temp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    if let Ok(meta) = fs::metadata(replaces) {
        fs::set_permissions(temp, meta.permissions())?;
    }
    Ok(())
}

fn write_in_place(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).open(path)?;
    file.write_all(bytes)?;
    file.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("wsel-atomic-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("scratch");
        dir
    }

    #[test]
    fn a_failing_file_leaves_every_file_unwritten() {
        let dir = scratch("all-or-nothing");
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
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_symlink_is_written_through() {
        let dir = scratch("symlink");
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
        let _ = fs::remove_dir_all(&dir);
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

//! Where a tensor's data lives: a `.npy` file, or the array of the tensor's name in a `.npz`
//! archive (`np.savez`, stored or deflated), opened for its header or its values.

use std::fmt;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use crate::array::{Array, Header, read_array, read_header};

/// A data file, and the array in it when it is an `.npz` archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataRef {
    pub path: PathBuf,
    /// The array's name inside an `.npz` archive (`None` for a `.npy` file).
    pub member: Option<String>,
}

impl DataRef {
    /// The data of tensor `name` at `path`: the file itself, or for an `.npz` archive the
    /// array called `name` in it.
    pub fn new(path: &Path, name: &str) -> DataRef {
        let archive = path.extension().is_some_and(|e| e == "npz");
        DataRef {
            path: path.to_path_buf(),
            member: archive.then(|| name.to_string()),
        }
    }

    /// Reads only the header (dtype and shape).
    pub fn header(&self) -> Result<Header, String> {
        self.with_reader(|r| read_header(r))
    }

    /// Reads the array.
    pub fn array(&self) -> Result<Array, String> {
        self.with_reader(|r| read_array(r))
    }

    fn with_reader<T>(
        &self,
        read: impl Fn(&mut dyn Read) -> Result<T, String>,
    ) -> Result<T, String> {
        let file = File::open(&self.path).map_err(|e| e.to_string())?;
        let mut reader = BufReader::new(file);
        let Some(member) = &self.member else {
            return read(&mut reader);
        };
        let mut archive =
            zip::ZipArchive::new(reader).map_err(|e| format!("not a NumPy .npz archive ({e})"))?;
        let entry = format!("{member}.npy");
        if archive.index_for_name(&entry).is_none() {
            let names: Vec<String> = archive
                .file_names()
                .filter_map(|n| Some(format!("`{}`", n.ok()?.strip_suffix(".npy")?)))
                .collect();
            return Err(format!(
                "the archive has no array `{member}` (it has {})",
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            ));
        }
        let mut file = archive.by_name(&entry).map_err(|e| e.to_string())?;
        read(&mut file)
    }
}

impl fmt::Display for DataRef {
    /// `data/x.npy`, or `data/p.npz` (array `w1`) — inside backticks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`", self.path.display())?;
        match &self.member {
            Some(member) => write!(f, " (array `{member}`)"),
            None => Ok(()),
        }
    }
}

//! Host tensors and their `.npy` files: reading with dtype and shape checks, writing
//! atomically (a temporary file renamed into place, so an error never leaves half a file).
//!
//! A [`Tensor`] holds 32-bit words, the unit the fabric moves: `f32` as IEEE bits, `f16` as
//! the `f32` bits of its value, `i32`/`u32` as themselves.

use std::fmt;
use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::{Path, PathBuf};

use npyz::WriterBuilder;
use wsel_ir::kernel::ScalarTy;

/// A dense row-major tensor of 32-bit words.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    pub elem: ScalarTy,
    pub shape: Vec<u64>,
    pub words: Vec<u32>,
}

impl Tensor {
    /// Elements per sample: the product of every dimension after the first.
    pub fn sample_len(&self) -> usize {
        self.shape.iter().skip(1).product::<u64>() as usize
    }

    /// The values as `f32` (for `f32`/`f16` tensors), e.g. to compare with a reference.
    pub fn to_f32(&self) -> Vec<f32> {
        self.words.iter().map(|w| f32::from_bits(*w)).collect()
    }
}

/// Why a tensor file could not be used. The message names the file and, for mismatches, both
/// the expected and the found type or shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TensorError {
    Read {
        path: PathBuf,
        reason: String,
    },
    Dtype {
        path: PathBuf,
        expected: String,
        found: String,
    },
    Shape {
        path: PathBuf,
        expected: String,
        found: String,
    },
    Write {
        path: PathBuf,
        reason: String,
    },
}

impl TensorError {
    /// The stable code of this error (`crate::run_errors`).
    pub fn code(&self) -> &'static str {
        match self {
            TensorError::Read { .. } => crate::run_errors::E0801,
            TensorError::Dtype { .. } => crate::run_errors::E0802,
            TensorError::Shape { .. } => crate::run_errors::E0803,
            TensorError::Write { .. } => crate::run_errors::E0804,
        }
    }
}

impl fmt::Display for TensorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TensorError::Read { path, reason } => {
                write!(f, "cannot read `{}`: {reason}", path.display())
            }
            TensorError::Dtype {
                path,
                expected,
                found,
            } => write!(
                f,
                "`{}` holds `{found}` values, but `{expected}` values are needed",
                path.display()
            ),
            TensorError::Shape {
                path,
                expected,
                found,
            } => write!(
                f,
                "`{}` has shape {found}, but shape {expected} is needed",
                path.display()
            ),
            TensorError::Write { path, reason } => {
                write!(f, "cannot write `{}`: {reason}", path.display())
            }
        }
    }
}

/// The shape a file must have: each dimension fixed, or free (the batch, when not yet known).
pub type ExpectedShape = [Option<u64>];

/// Reads `path` as a tensor of `elem` whose shape matches `expected`.
pub fn read_npy(
    path: &Path,
    elem: ScalarTy,
    expected: &ExpectedShape,
) -> Result<Tensor, TensorError> {
    let read_error = |reason: String| TensorError::Read {
        path: path.to_path_buf(),
        reason,
    };
    let npy = open_npy(path).map_err(read_error)?;
    if npy.order() == npyz::Order::Fortran {
        return Err(read_error(
            "the array is stored in Fortran order; save it with `np.ascontiguousarray`".into(),
        ));
    }
    let shape = npy.shape().to_vec();
    let found_dtype = dtype_code(&npy.dtype());
    let shape_ok = shape.len() == expected.len()
        && shape
            .iter()
            .zip(expected)
            .all(|(s, e)| e.is_none_or(|e| e == *s));
    if !shape_ok {
        return Err(TensorError::Shape {
            path: path.to_path_buf(),
            expected: shape_text_expected(expected),
            found: shape_text(&shape),
        });
    }
    let dtype_error = || TensorError::Dtype {
        path: path.to_path_buf(),
        expected: elem.name().to_string(),
        found: numpy_name(&found_dtype),
    };
    let words: Vec<u32> = match (elem, found_dtype.as_str()) {
        (ScalarTy::F32, "<f4") => read_vec::<f32>(npy, path)?
            .into_iter()
            .map(f32::to_bits)
            .collect(),
        (ScalarTy::F16, "<f2") => read_vec::<half::f16>(npy, path)?
            .into_iter()
            .map(|h| h.to_f32().to_bits())
            .collect(),
        (ScalarTy::I32, "<i4") => read_vec::<i32>(npy, path)?
            .into_iter()
            .map(|v| v as u32)
            .collect(),
        (ScalarTy::U32, "<u4") => read_vec::<u32>(npy, path)?,
        _ => return Err(dtype_error()),
    };
    Ok(Tensor { elem, shape, words })
}

/// Reads the first `samples` class labels of a file: any integer dtype, one dimension, at
/// least `samples` long.
pub fn read_labels(path: &Path, samples: u64) -> Result<Vec<i64>, TensorError> {
    let read_error = |reason: String| TensorError::Read {
        path: path.to_path_buf(),
        reason,
    };
    let npy = open_npy(path).map_err(read_error)?;
    let shape = npy.shape().to_vec();
    if shape.len() != 1 || shape[0] < samples {
        return Err(TensorError::Shape {
            path: path.to_path_buf(),
            expected: format!("[{samples}] (one label per sample)"),
            found: shape_text(&shape),
        });
    }
    let dtype = dtype_code(&npy.dtype());
    let mut labels: Vec<i64> = match dtype.as_str() {
        "<i4" => read_vec::<i32>(npy, path)?
            .into_iter()
            .map(i64::from)
            .collect(),
        "<i8" => read_vec::<i64>(npy, path)?,
        "<u4" => read_vec::<u32>(npy, path)?
            .into_iter()
            .map(i64::from)
            .collect(),
        _ => {
            return Err(TensorError::Dtype {
                path: path.to_path_buf(),
                expected: "integer labels".into(),
                found: numpy_name(&dtype),
            });
        }
    };
    labels.truncate(samples as usize);
    Ok(labels)
}

/// Writes `tensor` to `path` as `.npy`, atomically (see [`crate::atomic`]).
pub fn write_npy_atomic(path: &Path, tensor: &Tensor) -> Result<(), TensorError> {
    let bytes = encode_npy(tensor)?;
    crate::atomic::write_atomic(path, &bytes).map_err(|error| TensorError::Write {
        path: path.to_path_buf(),
        reason: error.to_string(),
    })
}

/// The bytes of `tensor` as a `.npy` file.
pub fn encode_npy(tensor: &Tensor) -> Result<Vec<u8>, TensorError> {
    let mut bytes = Vec::new();
    npy_bytes(&mut bytes, tensor).map_err(|error| TensorError::Write {
        path: PathBuf::from("(in memory)"),
        reason: error.to_string(),
    })?;
    Ok(bytes)
}

fn npy_bytes(out: &mut Vec<u8>, tensor: &Tensor) -> std::io::Result<()> {
    match tensor.elem {
        ScalarTy::F32 | ScalarTy::F16 => {
            let mut w = npyz::WriteOptions::<f32>::new()
                .shape(&tensor.shape)
                .default_dtype()
                .writer(out)
                .begin_nd()?;
            w.extend(tensor.words.iter().map(|b| f32::from_bits(*b)))?;
            w.finish()
        }
        ScalarTy::I32 | ScalarTy::Bool => {
            let mut w = npyz::WriteOptions::<i32>::new()
                .shape(&tensor.shape)
                .default_dtype()
                .writer(out)
                .begin_nd()?;
            w.extend(tensor.words.iter().map(|b| *b as i32))?;
            w.finish()
        }
        ScalarTy::U32 => {
            let mut w = npyz::WriteOptions::<u32>::new()
                .shape(&tensor.shape)
                .default_dtype()
                .writer(out)
                .begin_nd()?;
            w.extend(tensor.words.iter().copied())?;
            w.finish()
        }
    }
}

/// The deepest nesting of `{`, `[` and `(` accepted in a `.npy` header. NumPy writes one
/// dict with a shape tuple (structured dtypes nest a few levels more); npyz's header parser
/// takes time exponential in the nesting (found by fuzzing: 12 levels 7.5 s, 14 levels a
/// minute), so deeper headers are refused before it sees them.
const MAX_HEADER_NESTING: usize = 6;

/// The longest `.npy` header accepted, in bytes (NumPy writes under a hundred or so).
const MAX_HEADER_BYTES: usize = 1 << 16;

/// Opens `path` as a `.npy` file, after checking that its header is one npyz parses quickly.
fn open_npy(path: &Path) -> Result<npyz::NpyFile<BufReader<File>>, String> {
    let mut file = File::open(path).map_err(|e| e.to_string())?;
    check_header(&mut file)?;
    file.rewind().map_err(|e| e.to_string())?;
    npyz::NpyFile::new(BufReader::new(file)).map_err(|e| format!("not a NumPy .npy file ({e})"))
}

/// Reads the magic, version and header of a `.npy` file and checks the header's size and
/// nesting (see [`MAX_HEADER_NESTING`]); anything else is left to npyz.
fn check_header(file: &mut File) -> Result<(), String> {
    let malformed = |why: &str| format!("not a NumPy .npy file ({why})");
    let mut start = [0u8; 8];
    if file.read_exact(&mut start).is_err() || &start[..6] != b"\x93NUMPY" {
        return Err(malformed("it does not start with the .npy magic string"));
    }
    let len = if start[6] == 1 {
        let mut b = [0u8; 2];
        file.read_exact(&mut b)
            .map_err(|e| malformed(&e.to_string()))?;
        usize::from(u16::from_le_bytes(b))
    } else {
        let mut b = [0u8; 4];
        file.read_exact(&mut b)
            .map_err(|e| malformed(&e.to_string()))?;
        u32::from_le_bytes(b) as usize
    };
    if len > MAX_HEADER_BYTES {
        return Err(malformed(&format!("its header claims {len} bytes")));
    }
    let mut header = vec![0u8; len];
    file.read_exact(&mut header)
        .map_err(|e| malformed(&e.to_string()))?;
    let mut depth = 0usize;
    for b in &header {
        match b {
            b'{' | b'[' | b'(' => depth += 1,
            b'}' | b']' | b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > MAX_HEADER_NESTING {
            return Err(malformed(&format!(
                "its header nests brackets more than {MAX_HEADER_NESTING} deep"
            )));
        }
    }
    Ok(())
}

fn read_vec<T: npyz::Deserialize>(
    npy: npyz::NpyFile<BufReader<File>>,
    path: &Path,
) -> Result<Vec<T>, TensorError> {
    npy.into_vec::<T>().map_err(|e| TensorError::Read {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// The dtype's type code such as `<f4` (npyz gives it as a Python literal, `'<f4'`).
fn dtype_code(dtype: &npyz::DType) -> String {
    dtype.descr().trim_matches('\'').to_string()
}

/// A NumPy-style name for a dtype descriptor, e.g. `<f8` → `float64`.
fn numpy_name(descr: &str) -> String {
    let name = match descr.trim_start_matches(['<', '>', '|', '=']) {
        "f2" => "float16",
        "f4" => "float32",
        "f8" => "float64",
        "i1" => "int8",
        "i2" => "int16",
        "i4" => "int32",
        "i8" => "int64",
        "u1" => "uint8",
        "u2" => "uint16",
        "u4" => "uint32",
        "u8" => "uint64",
        "b1" => "bool",
        other => return format!("dtype `{other}`"),
    };
    if descr.starts_with('>') {
        format!("big-endian {name}")
    } else {
        name.to_string()
    }
}

fn shape_text(shape: &[u64]) -> String {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    format!("[{}]", dims.join(", "))
}

fn shape_text_expected(shape: &ExpectedShape) -> String {
    let dims: Vec<String> = shape
        .iter()
        .map(|d| d.map_or("B".to_string(), |d| d.to_string()))
        .collect();
    format!("[{}]", dims.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("wsel-tensor-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    #[test]
    fn round_trips_f32_and_checks_shape_and_dtype() {
        let dir = temp_dir("roundtrip");
        let path = dir.join("sub/x.npy");
        let tensor = Tensor {
            elem: ScalarTy::F32,
            shape: vec![2, 3],
            words: [1.0f32, 2.0, 3.0, -4.5, 0.0, 7.25]
                .iter()
                .map(|v| v.to_bits())
                .collect(),
        };
        write_npy_atomic(&path, &tensor).expect("write");
        assert_eq!(
            read_npy(&path, ScalarTy::F32, &[None, Some(3)]),
            Ok(tensor.clone())
        );
        assert_eq!(
            read_npy(&path, ScalarTy::F32, &[None, Some(4)]).map_err(|e| e.to_string()),
            Err(format!(
                "`{}` has shape [2, 3], but shape [B, 4] is needed",
                path.display()
            ))
        );
        assert_eq!(
            read_npy(&path, ScalarTy::I32, &[None, Some(3)]).map_err(|e| e.to_string()),
            Err(format!(
                "`{}` holds `float32` values, but `i32` values are needed",
                path.display()
            ))
        );
        let leftovers: Vec<_> = std::fs::read_dir(dir.join("sub")).expect("dir").collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
    }

    #[test]
    fn missing_and_garbage_files_are_clear_errors() {
        let dir = temp_dir("bad");
        let missing = read_npy(&dir.join("nope.npy"), ScalarTy::F32, &[None]);
        assert!(matches!(missing, Err(TensorError::Read { .. })));
        let garbage = dir.join("garbage.npy");
        std::fs::write(&garbage, b"not numpy at all").expect("write");
        let error = read_npy(&garbage, ScalarTy::F32, &[None]).expect_err("garbage");
        assert!(
            error.to_string().contains("not a NumPy .npy file"),
            "{error}"
        );
    }

    #[test]
    fn unwritable_output_leaves_nothing() {
        let dir = temp_dir("unwritable");
        let blocker = dir.join("file");
        std::fs::write(&blocker, b"x").expect("write");
        let tensor = Tensor {
            elem: ScalarTy::F32,
            shape: vec![1],
            words: vec![0],
        };
        let error = write_npy_atomic(&blocker.join("out.npy"), &tensor)
            .expect_err("a file is not a folder");
        assert!(matches!(error, TensorError::Write { .. }));
    }

    #[test]
    fn reads_files_numpy_wrote() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/digits/data");
        let x = read_npy(&data.join("x_test.npy"), ScalarTy::F32, &[None, Some(64)]).expect("x");
        assert_eq!(x.shape, vec![360, 64]);
        assert!(x.to_f32().iter().all(|v| (0.0..=1.0).contains(v)));
        let labels = read_labels(&data.join("y_test.npy"), 360).expect("labels");
        assert!(labels.iter().all(|l| (0..10).contains(l)));
        let wrong = read_npy(&data.join("y_test.npy"), ScalarTy::F32, &[None]).expect_err("ints");
        assert!(
            wrong.to_string().contains("holds `int32` values"),
            "{wrong}"
        );
    }
}

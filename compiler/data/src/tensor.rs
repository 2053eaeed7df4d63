//! Host tensors in the fabric's unit, the 32-bit word, and why a data file could not be used.
//!
//! A [`Tensor`] holds `f32` as IEEE bits, `f16` as the `f32` bits of its value, `i32`/`u32`
//! as themselves. [`npy_bytes`] encodes one as a `.npy` file.

use std::fmt;

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

/// Why a data file (or an array given in memory) could not be used, or a file not written.
/// `file` is how the message names it, in backticks: `` `data/x.npy` ``, `` `p.npz` (array
/// `w1`) ``, `` the array given for `x` ``.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TensorError {
    Read {
        file: String,
        reason: String,
    },
    Dtype {
        file: String,
        expected: String,
        found: String,
    },
    Shape {
        file: String,
        expected: String,
        found: String,
        /// The found shape is the expected one reversed.
        transposed: bool,
    },
    Write {
        file: String,
        reason: String,
    },
}

impl TensorError {
    /// The stable code of this error (E0801–E0804).
    pub fn code(&self) -> &'static str {
        match self {
            TensorError::Read { .. } => crate::E0801,
            TensorError::Dtype { .. } => crate::E0802,
            TensorError::Shape { .. } => crate::E0803,
            TensorError::Write { .. } => "E0804",
        }
    }
}

impl fmt::Display for TensorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TensorError::Read { file, reason } => write!(f, "cannot read {file}: {reason}"),
            TensorError::Dtype {
                file,
                expected,
                found,
            } => write!(
                f,
                "{file} holds `{found}` values, but `{expected}` values are needed"
            ),
            TensorError::Shape {
                file,
                expected,
                found,
                transposed,
            } => {
                write!(
                    f,
                    "{file} has shape {found}, but shape {expected} is needed"
                )?;
                if *transposed {
                    write!(f, "; it looks transposed: its `.T` has the needed shape")?;
                }
                Ok(())
            }
            TensorError::Write { file, reason } => write!(f, "cannot write {file}: {reason}"),
        }
    }
}

/// `tensor` encoded as a `.npy` file: `float32` for `f32`/`f16`, `int32` for `i32`/`bool`,
/// `uint32` for `u32`.
pub fn npy_bytes(tensor: &Tensor) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    match tensor.elem {
        ScalarTy::F32 | ScalarTy::F16 => {
            let mut w = npyz::WriteOptions::<f32>::new()
                .shape(&tensor.shape)
                .default_dtype()
                .writer(&mut out)
                .begin_nd()?;
            w.extend(tensor.words.iter().map(|b| f32::from_bits(*b)))?;
            w.finish()?;
        }
        ScalarTy::I32 | ScalarTy::Bool => {
            let mut w = npyz::WriteOptions::<i32>::new()
                .shape(&tensor.shape)
                .default_dtype()
                .writer(&mut out)
                .begin_nd()?;
            w.extend(tensor.words.iter().map(|b| *b as i32))?;
            w.finish()?;
        }
        ScalarTy::U32 => {
            let mut w = npyz::WriteOptions::<u32>::new()
                .shape(&tensor.shape)
                .default_dtype()
                .writer(&mut out)
                .begin_nd()?;
            w.extend(tensor.words.iter().copied())?;
            w.finish()?;
        }
    }
    Ok(out)
}

/// A shape as `[2, 3]`.
pub fn shape_text(shape: &[u64]) -> String {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    format!("[{}]", dims.join(", "))
}

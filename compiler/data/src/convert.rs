//! An array as a tensor of the type a program declares: the shape must match (the batch
//! dimension may be free), the dtype must be the declared one — except that `float64` data
//! for an `f32` activation is converted, and said so; class labels may be of any integer
//! width.

use std::path::Path;

use wsel_ir::kernel::ScalarTy;

use crate::array::{Array, Values};
use crate::npz::DataRef;
use crate::tensor::{Tensor, TensorError, shape_text};

/// The shape data must have: each dimension fixed, or free (the batch, when not yet known).
pub type ExpectedShape = [Option<u64>];

/// A tensor made from an array, and the dtype it was converted from, if it was.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    pub tensor: Tensor,
    /// `Some("float64")` when float64 values were rounded to `f32`.
    pub converted_from: Option<String>,
}

/// Whether `float64` values may stand for an `f32` tensor (rounded, and reported).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Float64 {
    Convert,
    Refuse,
}

/// Reads the data at `data` as a tensor of `elem` shaped `expected`.
pub fn read_tensor(
    data: &DataRef,
    elem: ScalarTy,
    expected: &ExpectedShape,
    float64: Float64,
) -> Result<Converted, TensorError> {
    let file = data.to_string();
    let array = data.array().map_err(|reason| TensorError::Read {
        file: file.clone(),
        reason,
    })?;
    to_tensor(array, elem, expected, float64, &file)
}

/// Reads the `.npy` file `path` as a tensor of exactly `elem`, shaped `expected`.
pub fn read_npy(
    path: &Path,
    elem: ScalarTy,
    expected: &ExpectedShape,
) -> Result<Tensor, TensorError> {
    let data = DataRef {
        path: path.to_path_buf(),
        member: None,
    };
    read_tensor(&data, elem, expected, Float64::Refuse).map(|c| c.tensor)
}

/// `array` as a tensor of `elem` shaped `expected`; `file` names it in errors.
pub fn to_tensor(
    array: Array,
    elem: ScalarTy,
    expected: &ExpectedShape,
    float64: Float64,
    file: &str,
) -> Result<Converted, TensorError> {
    let shape_ok = array.shape.len() == expected.len()
        && array
            .shape
            .iter()
            .zip(expected)
            .all(|(s, e)| e.is_none_or(|e| e == *s));
    if !shape_ok {
        let declared: Option<Vec<u64>> = expected.iter().copied().collect();
        return Err(TensorError::Shape {
            file: file.to_string(),
            expected: expected_text(expected),
            found: shape_text(&array.shape),
            transposed: declared.is_some_and(|d| is_transposed(&array.shape, &d)),
        });
    }
    let mut converted_from = None;
    let words: Vec<u32> = match (elem, array.values) {
        (ScalarTy::F32, Values::F32(v)) => v.into_iter().map(f32::to_bits).collect(),
        (ScalarTy::F32, Values::F64(v)) if float64 == Float64::Convert => {
            converted_from = Some(array.dtype.clone());
            v.into_iter().map(|x| (x as f32).to_bits()).collect()
        }
        (ScalarTy::F16, Values::F16(v)) => v.into_iter().map(|h| h.to_f32().to_bits()).collect(),
        (ScalarTy::I32, Values::Int(v)) if array.dtype == "int32" => {
            v.into_iter().map(|x| x as i32 as u32).collect()
        }
        (ScalarTy::U32, Values::Int(v)) if array.dtype == "uint32" => {
            v.into_iter().map(|x| x as u32).collect()
        }
        _ => {
            return Err(TensorError::Dtype {
                file: file.to_string(),
                expected: elem.name().to_string(),
                found: array.dtype,
            });
        }
    };
    let tensor = Tensor {
        elem,
        shape: array.shape,
        words,
    };
    Ok(Converted {
        tensor,
        converted_from,
    })
}

/// The first `samples` class labels of `array`: any integer dtype, one dimension, at least
/// `samples` long.
pub fn labels(array: Array, samples: u64, file: &str) -> Result<Vec<i64>, TensorError> {
    if array.shape.len() != 1 || array.shape[0] < samples {
        return Err(TensorError::Shape {
            file: file.to_string(),
            expected: format!("[{samples}] (one label per sample)"),
            found: shape_text(&array.shape),
            transposed: false,
        });
    }
    match array.values {
        Values::Int(mut v) => {
            v.truncate(samples as usize);
            Ok(v)
        }
        _ => Err(TensorError::Dtype {
            file: file.to_string(),
            expected: "integer labels".into(),
            found: array.dtype,
        }),
    }
}

/// Reads the first `samples` class labels of the `.npy` file `path` ([`labels`]).
pub fn read_labels(path: &Path, samples: u64) -> Result<Vec<i64>, TensorError> {
    let data = DataRef {
        path: path.to_path_buf(),
        member: None,
    };
    let file = data.to_string();
    let array = data.array().map_err(|reason| TensorError::Read {
        file: file.clone(),
        reason,
    })?;
    labels(array, samples, &file)
}

/// Whether `found` is the `declared` shape reversed (and not the same): data saved in the
/// other layout, such as PyTorch's `[out, in]` weights for a `[in, out]` parameter.
pub fn is_transposed(found: &[u64], declared: &[u64]) -> bool {
    found.iter().rev().eq(declared) && found != declared
}

/// NumPy's name of the dtype data for a tensor of `elem` must have.
pub fn numpy_dtype(elem: ScalarTy) -> &'static str {
    match elem {
        ScalarTy::F32 => "float32",
        ScalarTy::F16 => "float16",
        ScalarTy::I32 => "int32",
        ScalarTy::U32 => "uint32",
        ScalarTy::Bool => "bool",
    }
}

/// `expected` as `[B, 64]` (a free dimension is the batch).
fn expected_text(shape: &ExpectedShape) -> String {
    let dims: Vec<String> = shape
        .iter()
        .map(|d| d.map_or("B".to_string(), |d| d.to_string()))
        .collect();
    format!("[{}]", dims.join(", "))
}

//! NumPy arrays to `wsel-data` arrays (any float or integer dtype; `wsel-data` decides what a
//! tensor accepts, as it does for files) and result tensors back to NumPy arrays.

use std::collections::HashMap;

use numpy::{Element, PyArray1, PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use wsel::inputs::{InputData, NamedInput};
use wsel_data::{Array, Tensor, Values};
use wsel_ir::kernel::ScalarTy;

/// Model inputs given in memory, by name.
pub fn named_inputs(
    arrays: HashMap<String, Bound<'_, PyUntypedArray>>,
) -> PyResult<Vec<NamedInput>> {
    named_arrays(arrays).map(|named| {
        named
            .into_iter()
            .map(|(name, array)| NamedInput {
                name,
                data: InputData::Array(array),
            })
            .collect()
    })
}

/// Arrays by name, sorted by name (so errors come in a fixed order).
pub fn named_arrays(
    arrays: HashMap<String, Bound<'_, PyUntypedArray>>,
) -> PyResult<Vec<(String, Array)>> {
    let mut named: Vec<(String, Array)> = arrays
        .into_iter()
        .map(|(name, array)| to_array(&array).map(|a| (name, a)))
        .collect::<PyResult<_>>()?;
    named.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(named)
}

/// One NumPy array as a `wsel-data` array, its values in row-major order whatever its
/// strides.
pub fn to_array(array: &Bound<'_, PyUntypedArray>) -> PyResult<Array> {
    // NumPy's type code, such as `<f4` (`str(dtype)` would be `float32`).
    let dtype: String = array.dtype().getattr("str")?.extract()?;
    let name = wsel_data::array::dtype_name(&dtype);
    let shape: Vec<u64> = array.shape().iter().map(|&d| d as u64).collect();
    let values = match dtype.trim_start_matches(['<', '>', '|', '=']) {
        "f2" => Values::F16(values::<half::f16>(array)?),
        "f4" => Values::F32(values::<f32>(array)?),
        "f8" => Values::F64(values::<f64>(array)?),
        "i1" => ints::<i8>(array)?,
        "i2" => ints::<i16>(array)?,
        "i4" => ints::<i32>(array)?,
        "i8" => ints::<i64>(array)?,
        "u1" => ints::<u8>(array)?,
        "u2" => ints::<u16>(array)?,
        "u4" => ints::<u32>(array)?,
        _ => {
            return Err(PyTypeError::new_err(format!(
                "arrays of {name} cannot be given to wsel: use float32 (or an integer dtype for integer tensors)"
            )));
        }
    };
    Ok(Array {
        dtype: name,
        shape,
        values,
    })
}

fn values<T: Element + Copy>(array: &Bound<'_, PyUntypedArray>) -> PyResult<Vec<T>> {
    let typed = array.cast::<PyArrayDyn<T>>()?;
    let readonly = typed.try_readonly()?;
    Ok(readonly.as_array().iter().copied().collect())
}

fn ints<T: Element + Copy + Into<i64>>(array: &Bound<'_, PyUntypedArray>) -> PyResult<Values> {
    Ok(Values::Int(
        values::<T>(array)?.into_iter().map(Into::into).collect(),
    ))
}

/// A result tensor as a NumPy array: float32 for `f32`/`f16`, int32 for `i32`/`bool`,
/// uint32 for `u32`.
pub fn tensor_to_numpy<'py>(py: Python<'py>, tensor: &Tensor) -> PyResult<Bound<'py, PyAny>> {
    let shape: Vec<usize> = tensor.shape.iter().map(|&d| d as usize).collect();
    let flat = match tensor.elem {
        ScalarTy::F32 | ScalarTy::F16 => PyArray1::from_vec(py, tensor.to_f32()).into_any(),
        ScalarTy::I32 | ScalarTy::Bool => {
            let values: Vec<i32> = tensor.words.iter().map(|&w| w as i32).collect();
            PyArray1::from_vec(py, values).into_any()
        }
        ScalarTy::U32 => PyArray1::from_vec(py, tensor.words.clone()).into_any(),
    };
    flat.call_method1("reshape", (shape,))
}

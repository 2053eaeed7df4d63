//! The graph's constants (initializers) as float32 matrices and vectors.

use std::collections::HashMap;

use crate::errors::{E1001, ImportError};
use crate::proto::TensorProto;
use crate::proto::tensor_proto::{DataLocation, DataType};

/// A float32 constant of the graph: its shape and row-major values.
#[derive(Debug, Clone, PartialEq)]
pub struct Constant {
    pub shape: Vec<u64>,
    pub values: Vec<f32>,
}

impl Constant {
    /// The transpose of a matrix.
    pub fn transposed(&self) -> Constant {
        let (rows, cols) = (self.shape[0] as usize, self.shape[1] as usize);
        let mut values = vec![0.0; rows * cols];
        for r in 0..rows {
            for c in 0..cols {
                values[c * rows + r] = self.values[r * cols + c];
            }
        }
        Constant {
            shape: vec![self.shape[1], self.shape[0]],
            values,
        }
    }

    /// Every value multiplied by `factor` (Gemm's `alpha` and `beta`).
    pub fn scaled(mut self, factor: f32) -> Constant {
        if factor != 1.0 {
            self.values.iter_mut().for_each(|v| *v *= factor);
        }
        self
    }
}

/// Every initializer of the graph, by name.
pub fn constants(initializers: &[TensorProto]) -> Result<HashMap<String, Constant>, ImportError> {
    initializers
        .iter()
        .map(|t| Ok((t.name().to_string(), constant(t)?)))
        .collect()
}

fn constant(tensor: &TensorProto) -> Result<Constant, ImportError> {
    let name = tensor.name();
    if tensor.data_location() == DataLocation::External {
        return Err(ImportError::new(
            E1001,
            format!(
                "the weight `{name}` is stored outside the model file (external data): save the model with its weights inside"
            ),
        ));
    }
    if tensor.data_type() != DataType::Float as i32 {
        return Err(ImportError::new(
            E1001,
            format!(
                "the weight `{name}` holds {:?} values; wsel imports float32 weights",
                DataType::try_from(tensor.data_type()).unwrap_or(DataType::Undefined)
            ),
        ));
    }
    let shape: Vec<u64> = tensor.dims.iter().map(|&d| d.max(0) as u64).collect();
    let values: Vec<f32> = if tensor.raw_data().is_empty() {
        tensor.float_data.clone()
    } else {
        tensor
            .raw_data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    };
    let count: u64 = shape.iter().product();
    if values.len() as u64 != count {
        return Err(ImportError::new(
            E1001,
            format!(
                "the weight `{name}` has {} values for its shape {shape:?}",
                values.len()
            ),
        ));
    }
    Ok(Constant { shape, values })
}

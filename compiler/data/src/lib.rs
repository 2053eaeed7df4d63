//! NumPy data for wsel: arrays read from `.npy` files and `.npz` archives (or handed over in
//! memory, as the Python package does), checked and converted against the tensor a program
//! declares, written back as `.npy`; and the diagnostics of a model's `param` files at their
//! `param` lines, for `wsel check` and the language server.
//!
//! Everything here reads data, never runs anything: the language server may use it.

pub mod array;
pub mod convert;
pub mod npz;
pub mod params;
pub mod tensor;

pub use array::{Array, Header, Values};
pub use convert::{
    Converted, ExpectedShape, Float64, labels, numpy_dtype, read_labels, read_npy, read_tensor,
    to_tensor,
};
pub use npz::DataRef;
pub use params::param_diagnostics;
pub use tensor::{Tensor, TensorError, npy_bytes};

/// A data file (model input, parameter, labels) cannot be read: missing, not NumPy, or an
/// `.npz` archive without the array named.
pub const E0801: &str = "E0801";
/// A data file holds values of another dtype than the tensor declares.
pub const E0802: &str = "E0802";
/// A data file has another shape than the tensor declares.
pub const E0803: &str = "E0803";

//! The errors of `wsel import`, with stable codes (`docs/diagnostics.md`, E10xx).

use std::fmt;

/// E1001: the file is not an ONNX model (not a `ModelProto`, or without a graph), or a
/// weight cannot be read (a data type other than float32, data stored outside the file).
pub const E1001: &str = "E1001";
/// E1002: a node whose operator std.nn has no layer for yet (`Gelu`, `LayerNormalization`,
/// a residual `Add` of two tensors, anything but `Gemm`, `MatMul`, `Add` of a bias, `Relu`,
/// `Softmax`); the message names the node.
pub const E1002: &str = "E1002";
/// E1003: a graph whose shape the importer cannot map onto std.nn: not exactly one input
/// and one output, an input that is not `[batch, features]` float32, a weight that is not a
/// constant of the model, a transposed input (`transA`), a softmax over another axis than
/// the last, shapes that do not chain.
pub const E1003: &str = "E1003";

/// Every code of `wsel import`, with a one-line summary.
pub const CODES: &[(&str, &str)] = &[
    (E1001, "not an ONNX model, or an unreadable weight"),
    (E1002, "an operator std.nn has no layer for"),
    (E1003, "a graph shape the importer cannot map"),
];

/// Why an ONNX model could not be imported: a stable code and one sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    pub code: &'static str,
    pub message: String,
}

impl ImportError {
    pub fn new(code: &'static str, message: impl Into<String>) -> ImportError {
        ImportError {
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error[{}]: {}", self.code, self.message)
    }
}

//! The one error type of code generation: a message naming what could not be compiled.

use std::fmt;

/// Why a kernel could not be compiled. Code generation never panics on bad input; it returns
/// one of these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodegenError {
    message: String,
}

impl CodegenError {
    pub fn new(message: impl Into<String>) -> Self {
        CodegenError {
            message: message.into(),
        }
    }

    /// The error's text, e.g. `kernel axpy, task step: store of f32 into u32 array y`.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for CodegenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CodegenError {}

//! `LowerError`: why one kernel instance could not be lowered with the arguments it was given
//! (a missing or out-of-range argument, an array length that overflows, a construct the kernel
//! IR cannot express). The driver turns it into an E0505 diagnostic at the layer call.

use std::fmt;

use wsel_sema::{Diagnostic, Location};

/// A kernel instance that cannot be lowered.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LowerError {
    /// The kernel instance, e.g. `dense_tile<n=4,m=2,samples=3>`.
    pub kernel: String,
    /// One sentence, without a trailing period.
    pub message: String,
    /// The source text at fault, when there is one.
    pub location: Option<Location>,
}

impl LowerError {
    pub(crate) fn new(
        kernel: &str,
        message: impl Into<String>,
        location: Option<Location>,
    ) -> Self {
        LowerError {
            kernel: kernel.to_string(),
            message: message.into(),
            location,
        }
    }

    /// The E0505 diagnostic for this error, reported at the layer call `call` that
    /// instantiated the kernel.
    pub fn to_diagnostic(&self, call: Location) -> Diagnostic {
        crate::diagnostics::kernel_instance_failed(call, self)
    }
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel instance `{}`: {}", self.kernel, self.message)
    }
}

impl std::error::Error for LowerError {}

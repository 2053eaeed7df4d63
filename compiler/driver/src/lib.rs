//! The `wsel` driver: the command line, rendering of diagnostics, and the wiring from the
//! compiler's phases to the runtime. It is the only crate that owns IO and exit codes.

pub mod cli;
pub mod commands;
pub mod json;
pub mod parts;
pub mod render;
pub mod source;
pub mod status;
pub mod tensor;

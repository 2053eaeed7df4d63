//! The `wsel` driver: the command line, rendering of diagnostics, and the wiring from the
//! compiler's phases to the runtime. It is the only crate that owns IO and exit codes.

pub mod assemble;
pub mod atomic;
pub mod built;
pub mod cache;
pub mod cli;
pub mod cluster;
pub mod commands;
pub mod defects;
pub mod heatmap;
pub mod inputs;
pub mod json;
pub mod onnx_import;
pub mod parts;
pub mod pipeline;
pub mod png;
pub mod progress;
pub mod render;
pub mod resident;
pub mod run_activity;
pub mod run_errors;
pub mod run_report;
pub mod run_timing;
pub mod run_trace;
pub mod session;
pub mod source;
pub mod status;
pub mod stdout;
pub mod streamed;
pub mod streamed_report;
pub mod tensor;
pub mod timeline;
pub mod train_outputs;
pub mod train_session;
pub mod train_settings;
pub mod training;

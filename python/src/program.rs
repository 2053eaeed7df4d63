//! What a call names: the program (a file, or source text with the folder its paths resolve
//! against) and the build settings, as the Python half passes them.

use std::path::PathBuf;

use pyo3::prelude::*;
use wsel::built::BuildRequest;
use wsel::cli::{BackendArg, ModeArg};
use wsel_map::Copies;

/// The program: `path` is its file, or for source text the name diagnostics give it (in the
/// folder its imports and data paths resolve against).
#[derive(FromPyObject)]
pub struct SourceArg {
    #[pyo3(item)]
    pub path: PathBuf,
    #[pyo3(item)]
    pub text: Option<String>,
}

/// The build settings; `None` takes the `run` item's, then the default.
#[derive(FromPyObject)]
pub struct Settings {
    #[pyo3(item)]
    target: Option<String>,
    #[pyo3(item, from_py_with = mode_arg)]
    mode: Option<ModeArg>,
    #[pyo3(item)]
    batch: Option<u64>,
    #[pyo3(item, from_py_with = backend_arg)]
    backend: BackendArg,
    #[pyo3(item, from_py_with = copies_arg)]
    copies: Copies,
    #[pyo3(item, from_py_with = micro_order_arg)]
    micro_order: Option<wsel_map::MicroOrder>,
}

impl Settings {
    /// The build request for `program` with these settings (no data read, hang checks on).
    pub fn request<'a>(&'a self, program: &'a SourceArg) -> BuildRequest<'a> {
        BuildRequest {
            file: &program.path,
            text: program.text.as_deref(),
            target: self.target.as_deref(),
            mode: self.mode,
            batch: self.batch,
            backend: self.backend,
            copies: self.copies,
            micro_order: self.micro_order,
            one_region: false,
            fuse: true,
            inputs: &[],
            read_inputs: false,
            params_in_memory: &[],
            hang_checks: true,
        }
    }
}

pub fn mode_arg(value: &Bound<'_, PyAny>) -> PyResult<Option<ModeArg>> {
    let Some(name) = value.extract::<Option<String>>()? else {
        return Ok(None);
    };
    match name.as_str() {
        "pipelined" => Ok(Some(ModeArg::Pipelined)),
        "streaming" => Ok(Some(ModeArg::Streaming)),
        "auto" => Ok(Some(ModeArg::Auto)),
        other => Err(invalid("mode", other, "'pipelined', 'streaming' or 'auto'")),
    }
}

fn micro_order_arg(value: &Bound<'_, PyAny>) -> PyResult<Option<wsel_map::MicroOrder>> {
    let Some(name) = value.extract::<Option<String>>()? else {
        return Ok(None);
    };
    match name.as_str() {
        "auto" => Ok(Some(wsel_map::MicroOrder::Auto)),
        "micro" => Ok(Some(wsel_map::MicroOrder::Micro)),
        "layer" => Ok(Some(wsel_map::MicroOrder::Layer)),
        other => Err(invalid("micro_order", other, "'auto', 'micro' or 'layer'")),
    }
}

pub fn backend_arg(value: &Bound<'_, PyAny>) -> PyResult<BackendArg> {
    match value.extract::<String>()?.as_str() {
        "cranelift" => Ok(BackendArg::Cranelift),
        "interp" => Ok(BackendArg::Interp),
        "llvm" => Ok(BackendArg::Llvm),
        other => Err(invalid("backend", other, "'cranelift', 'interp' or 'llvm'")),
    }
}

fn copies_arg(value: &Bound<'_, PyAny>) -> PyResult<Copies> {
    let text = match value.extract::<Option<u32>>() {
        Ok(Some(n)) => n.to_string(),
        Ok(None) => "auto".to_string(),
        Err(_) => value.extract::<String>()?,
    };
    text.parse::<Copies>()
        .map_err(|e| invalid("copies", &text, &e.to_string()))
}

pub fn invalid(what: &str, value: &str, expected: &str) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(format!("{what} `{value}`: expected {expected}"))
}

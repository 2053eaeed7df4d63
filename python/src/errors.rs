//! Failures as Python exceptions: `WselError` carries the stable code, the message, the source
//! span (file, byte range, line and column) and every diagnostic, so a notebook can show
//! where a `.wse` program is wrong.

use pyo3::prelude::*;
use wsel::built::BuildFailure;
use wsel::pipeline::BuildError;

pyo3::create_exception!(
    _wsel,
    WselError,
    pyo3::exceptions::PyException,
    "A wsel program could not be built or run: `code` (such as 'E0402', None for problems \
     outside the program), `message`, `span` (a dict with file, start, end, line, column, or \
     None) and `diagnostics` (every diagnostic, as `wsel check --format json` gives them)."
);

/// A failed build or run as a `WselError`.
pub fn failure_to_py(py: Python<'_>, failure: BuildFailure) -> PyErr {
    let sources = failure.sources.unwrap_or_default();
    match failure.error {
        BuildError::Diagnostics(diagnostics) => {
            let json = wsel::json::diagnostics_to_json(&diagnostics, &sources);
            let rendered = wsel::render::render_diagnostics(&diagnostics, &sources, false);
            let first_error = diagnostics
                .iter()
                .position(|d| d.severity == wsel_sema::Severity::Error)
                .unwrap_or(0);
            match with_diagnostics(py, rendered.trim_end(), &json, first_error) {
                Ok(error) => error,
                Err(error) => error,
            }
        }
        BuildError::Run { code, message } => coded(py, Some(code), &message),
        BuildError::Message(message) => coded(py, None, &message),
    }
}

/// A failure outside the program (an unreadable file, an unknown target) as a `WselError`.
pub fn message_to_py(message: &str) -> PyErr {
    Python::attach(|py| coded(py, None, message))
}

/// An error with a code (or none) and a message, without a source span.
fn coded(py: Python<'_>, code: Option<&str>, message: &str) -> PyErr {
    let text = match code {
        Some(code) => format!("error[{code}]: {message}"),
        None => format!("error: {message}"),
    };
    let error = WselError::new_err(text);
    let value = error.value(py);
    let set = || -> PyResult<()> {
        value.setattr("code", code)?;
        value.setattr("message", message)?;
        value.setattr("span", py.None())?;
        value.setattr("diagnostics", pyo3::types::PyList::empty(py))?;
        Ok(())
    };
    match set() {
        Ok(()) => error,
        Err(e) => e,
    }
}

/// An error for the program's diagnostics: code, message and span are those of diagnostic
/// `first` (the first error).
fn with_diagnostics(py: Python<'_>, rendered: &str, json: &str, first: usize) -> PyResult<PyErr> {
    let diagnostics = py.import("json")?.call_method1("loads", (json,))?;
    let first = diagnostics.get_item(first)?;
    let error = WselError::new_err(rendered.to_string());
    let value = error.value(py);
    value.setattr("code", first.get_item("code")?)?;
    value.setattr("message", first.get_item("message")?)?;
    value.setattr("span", first.get_item("primary")?)?;
    value.setattr("diagnostics", diagnostics)?;
    Ok(error)
}

//! `wsel._wsel`, the native half of the Python package: builds, maps, checks and runs `.wse`
//! programs through the driver's library API (`wsel::session`), with NumPy arrays in and out.
//! The Python half (`python/wsel/__init__.py`) gives it its documented interface; this module
//! only converts between Python and Rust values. Training (`wsel.train`) will join here when
//! the compiler can train.

mod arrays;
mod errors;
mod program;

use std::collections::HashMap;

use numpy::PyUntypedArray;
use pyo3::prelude::*;

use crate::errors::{WselError, failure_to_py, message_to_py};
use crate::program::{Settings, SourceArg};

/// Builds and simulates a program with in-memory inputs and parameters. Returns the result
/// array, the report as JSON and the warnings.
#[pyfunction]
#[pyo3(signature = (program, inputs, params, settings, threads, max_cycles))]
fn run<'py>(
    py: Python<'py>,
    program: SourceArg,
    inputs: HashMap<String, Bound<'py, PyUntypedArray>>,
    params: HashMap<String, Bound<'py, PyUntypedArray>>,
    settings: Settings,
    threads: usize,
    max_cycles: u64,
) -> PyResult<(Bound<'py, PyAny>, String, Vec<String>)> {
    let inputs = arrays::named_inputs(inputs)?;
    let params = arrays::named_arrays(params)?;
    let in_memory: Vec<String> = params.iter().map(|(n, _)| n.clone()).collect();
    let options = wsel::session::sim_options(threads, max_cycles);
    let outcome = py.detach(|| {
        let mut request = settings.request(&program);
        request.inputs = &inputs;
        request.read_inputs = true;
        request.params_in_memory = &in_memory;
        wsel::session::run_in_memory(&request, &params, &options)
    });
    let run = outcome.map_err(|f| failure_to_py(py, f))?;
    let result = arrays::tensor_to_numpy(py, &run.result)?;
    Ok((result, run.report_json, run.warnings))
}

/// Builds and maps a program. Returns the placement table, its SVG picture and the placement
/// as JSON.
#[pyfunction]
#[pyo3(signature = (program, settings, routes))]
fn map(
    py: Python<'_>,
    program: SourceArg,
    settings: Settings,
    routes: bool,
) -> PyResult<(String, String, String)> {
    let built = py
        .detach(|| wsel::built::fresh(&settings.request(&program)))
        .map_err(|f| failure_to_py(py, f))?;
    let placement = &built.placement;
    let svg = wsel_map::svg::render(placement, wsel_map::svg::SvgOptions { routes });
    let json = serde_json::to_string(placement)
        .map_err(|e| message_to_py(&format!("cannot serialise the placement: {e}")))?;
    Ok((wsel_map::report::render(placement), svg, json))
}

/// Checks a program. Returns its diagnostics as JSON (`wsel check --format json`) and their
/// rendering for people.
#[pyfunction]
fn check(py: Python<'_>, program: SourceArg) -> PyResult<(String, String)> {
    let (diagnostics, sources) = py
        .detach(|| wsel::session::check(&program.path, program.text.as_deref()))
        .map_err(|e| message_to_py(&format!("cannot read `{}`: {e}", program.path.display())))?;
    Ok((
        wsel::json::diagnostics_to_json(&diagnostics, &sources),
        wsel::render::render_diagnostics(&diagnostics, &sources, false),
    ))
}

/// Translates an ONNX model into a program at `output` with its weights beside it.
#[pyfunction]
fn import_onnx(
    py: Python<'_>,
    model: std::path::PathBuf,
    output: std::path::PathBuf,
) -> PyResult<()> {
    py.detach(|| wsel::onnx_import::import_file(&model, &output))
        .map(|_| ())
        .map_err(|error| {
            let failure = wsel::built::BuildFailure {
                sources: None,
                error,
            };
            failure_to_py(py, failure)
        })
}

#[pymodule]
fn _wsel(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(map, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(import_onnx, m)?)?;
    m.add("WselError", m.py().get_type::<WselError>())?;
    Ok(())
}

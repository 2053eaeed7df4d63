//! `wsel._wsel`, the native half of the Python package: builds, maps, checks, runs and trains
//! `.wse` programs through the driver's library API (`wsel::session`,
//! `wsel::train_session`), with NumPy arrays in and out.
//! The Python half (`python/wsel/__init__.py`) gives it its documented interface; this module
//! only converts between Python and Rust values.

mod arrays;
mod errors;
mod program;
mod training;

use std::collections::HashMap;

use numpy::PyUntypedArray;
use pyo3::prelude::*;

use crate::errors::{WselError, failure_to_py, message_to_py};
use crate::program::{Settings, SourceArg};
use crate::training::TrainSettings;

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
    let options = wsel::session::sim_options(wsel::threads::Threads::at_most(threads), max_cycles);
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

/// Trains a program's model on the simulated fabric (`wsel::train_session`) with in-memory
/// inputs, labels and initial parameters. Returns the trained weights by name (in the model's
/// order), the loss of every step, the report as JSON and the warnings.
#[pyfunction]
#[pyo3(signature = (program, inputs, labels, params, settings))]
fn train<'py>(
    py: Python<'py>,
    program: SourceArg,
    inputs: HashMap<String, Bound<'py, PyUntypedArray>>,
    labels: Option<Bound<'py, PyUntypedArray>>,
    params: HashMap<String, Bound<'py, PyUntypedArray>>,
    settings: TrainSettings,
) -> PyResult<TrainReturn<'py>> {
    let request = wsel::train_session::TrainRequest {
        file: &program.path,
        text: program.text.as_deref(),
        inputs: arrays::named_inputs(inputs)?,
        labels: labels
            .map(|l| arrays::to_array(&l).map(wsel::inputs::InputData::Array))
            .transpose()?,
        params: arrays::named_arrays(params)?,
        settings: settings.overrides(),
    };
    let outcome = py
        .detach(|| wsel::train_session::train(&request))
        .map_err(|f| failure_to_py(py, f))?;
    let weights = outcome
        .weights
        .iter()
        .map(|(name, w)| Ok((name.clone(), arrays::tensor_to_numpy(py, w)?)))
        .collect::<PyResult<_>>()?;
    let losses = numpy::PyArray1::from_vec(py, outcome.losses()).into_any();
    let report = serde_json::to_string(&outcome.report)
        .map_err(|e| message_to_py(&format!("cannot serialise the report: {e}")))?;
    Ok((weights, losses, report, outcome.warnings))
}

/// What `train` gives the Python half: weights by name, losses, report JSON, warnings.
type TrainReturn<'py> = (
    Vec<(String, Bound<'py, PyAny>)>,
    Bound<'py, PyAny>,
    String,
    Vec<String>,
);

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
    m.add_function(wrap_pyfunction!(train, m)?)?;
    m.add_function(wrap_pyfunction!(map, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(import_onnx, m)?)?;
    m.add("WselError", m.py().get_type::<WselError>())?;
    Ok(())
}

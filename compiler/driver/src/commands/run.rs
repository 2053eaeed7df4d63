//! `wsel run`: check, lower, map, compile, run the static hang checks, load the data, simulate,
//! write the result and print the report. Each step's failure is a clear message (or
//! diagnostics) and exit status 1; the result file is written only after a successful run,
//! atomically.

use std::path::{Path, PathBuf};

use wsel_ir::graph::{LayerGraph, TensorDecl};
use wsel_lower::RunConfig;
use wsel_sema::Database;
use wsel_sim::SimOptions;

use crate::assemble::{HostData, assemble, collect_result};
use crate::cli::RunArgs;
use crate::pipeline::{
    BuildError, choose_backend, choose_mode, choose_target, compile_layers, cost_model,
    hang_checks, load_and_check, map_graph, pick_model, report_build_error,
};
use crate::render::eprint_diagnostics;
use crate::run_errors::{E0804, E0805, E0806, describe};
use crate::run_report::{RunReport, accuracy};
use crate::status::Status;
use crate::tensor::{Tensor, read_labels, read_npy, write_npy_atomic};

pub fn run(args: &RunArgs) -> Status {
    let color = args.color.use_color_on_stderr();
    let loaded = match load_and_check(&args.file) {
        Ok(loaded) => loaded,
        Err(failure) => return report_build_error(failure.db.as_ref(), failure.error, color),
    };
    let db = &loaded.db;
    match execute(db, loaded.file, args) {
        Ok(()) => Status::Success,
        Err(error) => report_build_error(Some(db), error, color),
    }
}

fn execute(db: &Database, file: wsel_sema::SourceFile, args: &RunArgs) -> Result<(), BuildError> {
    let config = wsel_lower::lower_run_config(db, file);
    let model = pick_model(db, file, config.as_ref()).map_err(message)?;

    // The per-sample shapes of the inputs do not depend on the batch; read the data first
    // to learn it.
    let (shape_graph, _) = wsel_lower::layer_graph(db, model, 1);
    let inputs = read_inputs(&shape_graph, config.as_ref(), args)?;
    let available = inputs.first().map_or(1, |t| t.shape[0]);
    let batch = args
        .batch
        .or(config.as_ref().and_then(|c| c.batch))
        .unwrap_or(available);
    if batch == 0 || batch > available {
        return Err(run_error(
            E0805,
            format!("batch {batch} asked for, but the input files hold {available} samples"),
        ));
    }
    let inputs: Vec<Tensor> = inputs
        .into_iter()
        .map(|t| first_samples(t, batch))
        .collect();

    let (graph, diagnostics) = wsel_lower::layer_graph(db, model, batch);
    if !diagnostics.is_empty() {
        return Err(BuildError::Diagnostics(diagnostics));
    }
    let params = read_params(&graph)?;
    let target = choose_target(args.target.as_deref(), config.as_ref()).map_err(message)?;
    let request = choose_mode(args.mode, config.as_ref());
    let (placement, decision) = map_graph(&graph, &target, request)?;
    if let Some(path) = &args.map {
        let svg = wsel_map::svg::render(&placement, wsel_map::svg::SvgOptions::default());
        write_text(path, &svg)?;
    }

    let backend = choose_backend(args.backend).map_err(message)?;
    let cost = cost_model(&target);
    let compiled = compile_layers(db, &placement, backend, &cost)?;
    if !args.no_hang_checks {
        let found = hang_checks(db, &graph, &placement);
        if found
            .iter()
            .any(|d| d.severity == wsel_sema::Severity::Error)
        {
            return Err(BuildError::Diagnostics(found));
        }
        if !found.is_empty() {
            let sources = crate::source::source_texts(db);
            eprint_diagnostics(&found, &sources, args.color.use_color_on_stderr());
        }
    }
    let data = HostData {
        inputs: &inputs,
        params: &params,
    };
    let assembled = assemble(&graph, &placement, &compiled, &data).map_err(message)?;
    let options = SimOptions {
        threads: args.threads.max(1),
        max_cycles: args.max_cycles,
        trace: args.trace.is_some(),
        ..SimOptions::default()
    };
    let started = std::time::Instant::now();
    let outcome = crate::progress::with_spinner("simulating", || {
        wsel_sim::simulate(&target, &assembled.program, &options)
    })
    .map_err(|e| run_error(E0806, describe(&e, &placement, &compiled)))?;
    let wall = started.elapsed();

    let result =
        collect_result(&graph, &assembled.output_parts, &outcome.outputs).map_err(message)?;
    let output_path = args
        .output
        .clone()
        .or(config.as_ref().and_then(|c| c.output.clone()))
        .unwrap_or_else(|| default_output(&args.file, &graph.model));
    write_npy_atomic(&output_path, &result).map_err(tensor_error)?;

    let labels_path = args
        .labels
        .clone()
        .or(config.as_ref().and_then(|c| c.labels.clone()));
    let accuracy = match &labels_path {
        Some(path) => {
            let labels = read_labels(path, batch).map_err(tensor_error)?;
            Some((path.clone(), accuracy(&result, &labels)))
        }
        None => None,
    };
    let report = RunReport::new(
        &args.file,
        &graph,
        &placement,
        &decision,
        &target,
        backend,
        &outcome,
        wall,
        &output_path,
        &result,
        accuracy,
    );
    print!("{}", report.table());
    if let Some(path) = &args.report {
        write_text(path, &report.to_json(&outcome.report))?;
    }
    if let (Some(path), Some(trace)) = (&args.trace, &outcome.trace) {
        write_text(path, &trace.json().to_string())?;
    }
    Ok(())
}

/// Reads every model input from `--input NAME=PATH` or the `run` item, checking its dtype and
/// per-sample shape; all inputs must hold the same number of samples.
fn read_inputs(
    graph: &LayerGraph,
    config: Option<&RunConfig>,
    args: &RunArgs,
) -> Result<Vec<Tensor>, BuildError> {
    let mut overrides = Vec::new();
    for text in &args.inputs {
        let (name, path) = text
            .split_once('=')
            .ok_or_else(|| run_error(E0805, format!("`--input {text}`: write it as NAME=PATH")))?;
        if !graph.inputs.iter().any(|i| i.name == name) {
            return Err(run_error(E0805, format!("the model has no input `{name}`")));
        }
        overrides.push((name.to_string(), PathBuf::from(path)));
    }
    let mut tensors = Vec::new();
    for input in &graph.inputs {
        let path = overrides
            .iter()
            .chain(config.map_or(&[][..], |c| c.inputs.as_slice()))
            .find(|(name, _)| *name == input.name)
            .map(|(_, path)| path.clone())
            .ok_or_else(|| {
                run_error(E0805, format!(
                    "no data for the model input `{}`: add `input {} = \"file.npy\";` to the `run` item or pass `--input {}=PATH`",
                    input.name, input.name, input.name
                ))
            })?;
        tensors.push(read_tensor(input, &path, true)?);
    }
    if let Some(first) = tensors.first() {
        for (tensor, input) in tensors.iter().zip(&graph.inputs).skip(1) {
            if tensor.shape[0] != first.shape[0] {
                return Err(run_error(
                    E0805,
                    format!(
                        "input `{}` holds {} samples, but `{}` holds {}",
                        input.name, tensor.shape[0], graph.inputs[0].name, first.shape[0]
                    ),
                ));
            }
        }
    }
    Ok(tensors)
}

/// Reads every parameter from its `.npy` file, with its exact declared shape.
fn read_params(graph: &LayerGraph) -> Result<Vec<Tensor>, BuildError> {
    graph
        .params
        .iter()
        .map(|p| read_tensor(&p.tensor, &p.path, false))
        .collect()
}

fn read_tensor(decl: &TensorDecl, path: &Path, batched: bool) -> Result<Tensor, BuildError> {
    let expected: Vec<Option<u64>> = decl
        .shape
        .iter()
        .enumerate()
        .map(|(i, d)| if batched && i == 0 { None } else { Some(*d) })
        .collect();
    read_npy(path, decl.elem, &expected).map_err(|e| {
        run_error(
            e.code(),
            format!("{e} (for `{}`, declared `{}`)", decl.name, type_text(decl)),
        )
    })
}

fn type_text(decl: &TensorDecl) -> String {
    let dims: Vec<String> = decl
        .shape
        .iter()
        .enumerate()
        .map(|(i, d)| {
            if i == 0 && decl.shape.len() > 1 {
                "B".into()
            } else {
                d.to_string()
            }
        })
        .collect();
    format!("{}[{}]", decl.elem.name(), dims.join(", "))
}

fn first_samples(mut tensor: Tensor, batch: u64) -> Tensor {
    let keep = tensor.sample_len() * batch as usize;
    tensor.words.truncate(keep);
    tensor.shape[0] = batch;
    tensor
}

fn default_output(file: &Path, model: &str) -> PathBuf {
    file.parent()
        .unwrap_or(Path::new("."))
        .join("out")
        .join(format!("{model}.npy"))
}

/// Writes a text file atomically.
fn write_text(path: &Path, text: &str) -> Result<(), BuildError> {
    crate::atomic::write_atomic(path, text.as_bytes())
        .map_err(|e| run_error(E0804, format!("cannot write `{}`: {e}", path.display())))
}

fn run_error(code: &'static str, message: String) -> BuildError {
    BuildError::Run { code, message }
}

fn tensor_error(error: crate::tensor::TensorError) -> BuildError {
    run_error(error.code(), error.to_string())
}

fn message(text: String) -> BuildError {
    BuildError::Message(text)
}

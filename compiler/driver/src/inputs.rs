//! The data a run streams through: model inputs from `--input NAME=PATH` or the `run` item,
//! parameters from their `.npy` files, each checked against its declared dtype and shape; and
//! the batch, which defaults to the number of samples in the input files.
//!
//! Reading the data needs only the layer graph's declarations, never the program's source, so
//! a run that reuses a build artifact reads it exactly as a fresh build does.

use std::path::{Path, PathBuf};

use wsel_ir::graph::{LayerGraph, TensorDecl};
use wsel_lower::RunConfig;

use crate::pipeline::BuildError;
use crate::run_errors::E0805;
use crate::tensor::{Tensor, read_npy};

/// The batch and the model inputs cut to it.
pub struct BatchInputs {
    pub batch: u64,
    /// Every model input holding exactly `batch` samples; empty when the data was not needed.
    pub inputs: Vec<Tensor>,
}

/// The batch for `graph` (any batch size: only its input declarations are used), and the
/// inputs when `read` is set: `--batch`, else the `run` item's batch, else every sample of the
/// input files. Without `read`, a given batch needs no data, and a model whose inputs have no
/// data named is built for batch 1.
pub fn batch_and_inputs(
    graph: &LayerGraph,
    config: Option<&RunConfig>,
    batch_flag: Option<u64>,
    overrides: &[String],
    read: bool,
) -> Result<BatchInputs, BuildError> {
    let fixed = batch_flag.or(config.and_then(|c| c.batch));
    if !read {
        if let Some(batch) = fixed {
            return Ok(BatchInputs {
                batch,
                inputs: Vec::new(),
            });
        }
        let named = |name: &str| {
            overrides.iter().any(|o| o.split('=').next() == Some(name))
                || config.is_some_and(|c| c.inputs.iter().any(|(n, _)| n == name))
        };
        if !graph.inputs.iter().all(|i| named(&i.name)) {
            return Ok(BatchInputs {
                batch: 1,
                inputs: Vec::new(),
            });
        }
    }
    let inputs = read_inputs(graph, config, overrides)?;
    let available = inputs.first().map_or(1, |t| t.shape[0]);
    let batch = fixed.unwrap_or(available);
    if batch == 0 || batch > available {
        return Err(run_error(
            E0805,
            format!("batch {batch} asked for, but the input files hold {available} samples"),
        ));
    }
    let inputs = inputs
        .into_iter()
        .map(|t| first_samples(t, batch))
        .collect();
    Ok(BatchInputs { batch, inputs })
}

/// Reads every model input from `--input NAME=PATH` or the `run` item, checking its dtype and
/// per-sample shape; all inputs must hold the same number of samples.
pub fn read_inputs(
    graph: &LayerGraph,
    config: Option<&RunConfig>,
    overrides: &[String],
) -> Result<Vec<Tensor>, BuildError> {
    let mut named = Vec::new();
    for text in overrides {
        let (name, path) = text
            .split_once('=')
            .ok_or_else(|| run_error(E0805, format!("`--input {text}`: write it as NAME=PATH")))?;
        if !graph.inputs.iter().any(|i| i.name == name) {
            return Err(run_error(E0805, format!("the model has no input `{name}`")));
        }
        named.push((name.to_string(), PathBuf::from(path)));
    }
    let mut tensors = Vec::new();
    for input in &graph.inputs {
        let path = named
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
pub fn read_params(graph: &LayerGraph) -> Result<Vec<Tensor>, BuildError> {
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

fn run_error(code: &'static str, message: String) -> BuildError {
    BuildError::Run { code, message }
}

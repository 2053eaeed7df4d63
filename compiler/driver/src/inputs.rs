//! The data a run streams through: model inputs from `--input NAME=PATH`, the `run` item or
//! arrays handed over in memory (the Python package), parameters from their files or from
//! memory, each checked against its declared dtype and shape (`wsel-data`; an `.npz` archive
//! gives the array of the tensor's name, float64 inputs are rounded to f32 with a warning);
//! and the batch, which defaults to the number of samples in the inputs.
//!
//! Reading the data needs only the layer graph's declarations, never the program's source, so
//! a run that reuses a build artifact reads it exactly as a fresh build does.

use std::path::PathBuf;

use wsel_ir::graph::{LayerGraph, ParamColumns, TensorDecl};
use wsel_lower::RunConfig;

use wsel_data::convert::Float64;
use wsel_data::{Array, DataRef, Tensor, TensorError};

use crate::pipeline::BuildError;
use crate::run_errors::E0805;

/// A model input's data, named by the input.
#[derive(Debug, Clone)]
pub struct NamedInput {
    pub name: String,
    pub data: InputData,
}

/// Where a model input's (or a parameter's) data comes from.
#[derive(Debug, Clone)]
pub enum InputData {
    /// A `.npy` file, or an `.npz` archive holding an array of the tensor's name.
    File(PathBuf),
    /// An array handed over in memory.
    Array(Array),
}

/// `--input NAME=PATH` flags as named inputs.
pub fn parse_input_flags(flags: &[String]) -> Result<Vec<NamedInput>, BuildError> {
    flags
        .iter()
        .map(|text| {
            let (name, path) = text.split_once('=').ok_or_else(|| {
                run_error(E0805, format!("`--input {text}`: write it as NAME=PATH"))
            })?;
            Ok(NamedInput {
                name: name.to_string(),
                data: InputData::File(PathBuf::from(path)),
            })
        })
        .collect()
}

/// The batch and the model inputs cut to it.
pub struct BatchInputs {
    pub batch: u64,
    /// Every model input holding exactly `batch` samples; empty when the data was not needed.
    pub inputs: Vec<Tensor>,
    /// One line for each input that was converted (float64 data rounded to f32).
    pub warnings: Vec<String>,
}

/// The batch for `graph` (any batch size: only its input declarations are used), and the
/// inputs when `read` is set: `--batch`, else the `run` item's batch, else every sample of the
/// input files. Without `read`, a given batch needs no data, and a model whose inputs have no
/// data named is built for batch 1.
pub fn batch_and_inputs(
    graph: &LayerGraph,
    config: Option<&RunConfig>,
    batch_flag: Option<u64>,
    overrides: &[NamedInput],
    read: bool,
) -> Result<BatchInputs, BuildError> {
    let fixed = batch_flag.or(config.and_then(|c| c.batch));
    if !read {
        if let Some(batch) = fixed {
            return Ok(BatchInputs {
                batch,
                inputs: Vec::new(),
                warnings: Vec::new(),
            });
        }
        let named = |name: &str| {
            overrides.iter().any(|o| o.name == name)
                || config.is_some_and(|c| c.inputs.iter().any(|(n, _)| n == name))
        };
        if !graph.inputs.iter().all(|i| named(&i.name)) {
            return Ok(BatchInputs {
                batch: 1,
                inputs: Vec::new(),
                warnings: Vec::new(),
            });
        }
    }
    let (inputs, warnings) = read_inputs(graph, config, overrides)?;
    let available = inputs.first().map_or(1, |t| t.shape[0]);
    let batch = fixed.unwrap_or(available);
    if batch == 0 || batch > available {
        return Err(run_error(
            E0805,
            format!("batch {batch} asked for, but the inputs hold {available} samples"),
        ));
    }
    let inputs = inputs
        .into_iter()
        .map(|t| first_samples(t, batch))
        .collect();
    Ok(BatchInputs {
        batch,
        inputs,
        warnings,
    })
}

/// Reads every model input from `overrides` (`--input`, or arrays in memory) or the `run`
/// item, checking its dtype and per-sample shape; all inputs must hold the same number of
/// samples. Also gives a warning for each input converted from float64.
pub fn read_inputs(
    graph: &LayerGraph,
    config: Option<&RunConfig>,
    overrides: &[NamedInput],
) -> Result<(Vec<Tensor>, Vec<String>), BuildError> {
    if let Some(unknown) = overrides
        .iter()
        .find(|o| !graph.inputs.iter().any(|i| i.name == o.name))
    {
        return Err(run_error(
            E0805,
            format!("the model has no input `{}`", unknown.name),
        ));
    }
    let mut tensors = Vec::new();
    let mut warnings = Vec::new();
    for input in &graph.inputs {
        let from_config = || {
            let (_, path) = config?
                .inputs
                .iter()
                .find(|(name, _)| *name == input.name)?;
            Some(InputData::File(path.clone()))
        };
        let data = overrides
            .iter()
            .find(|o| o.name == input.name)
            .map(|o| o.data.clone())
            .or_else(from_config)
            .ok_or_else(|| {
                run_error(E0805, format!(
                    "no data for the model input `{}`: add `input {} = \"file.npy\";` to the `run` item or pass `--input {}=PATH`",
                    input.name, input.name, input.name
                ))
            })?;
        let (tensor, warning) = read_tensor(input, data, true)?;
        tensors.extend(Some(tensor));
        warnings.extend(warning);
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
    Ok((tensors, warnings))
}

/// Every parameter with its exact declared shape: from `given` (arrays in memory, by name),
/// else from its file.
pub fn read_params(
    graph: &LayerGraph,
    given: &[(String, Array)],
) -> Result<Vec<Tensor>, BuildError> {
    graph
        .params
        .iter()
        .map(|p| {
            let name = p.columns.as_ref().map_or(&p.tensor.name, |c| &c.of);
            let data = match given.iter().find(|(given, _)| given == name) {
                Some((_, array)) => InputData::Array(array.clone()),
                None => InputData::File(p.path.clone()),
            };
            let Some(columns) = &p.columns else {
                return read_tensor(&p.tensor, data, false).map(|(tensor, _)| tensor);
            };
            let whole = TensorDecl {
                name: name.clone(),
                shape: columns.whole.clone(),
                ..p.tensor.clone()
            };
            let (tensor, _) = read_tensor(&whole, data, false)?;
            Ok(take_columns(&tensor, columns))
        })
        .collect()
}

/// The `columns` of `whole`'s last dimension (a chunk's weights, `ParamColumns`).
fn take_columns(whole: &Tensor, columns: &ParamColumns) -> Tensor {
    let width = whole.shape.last().copied().unwrap_or(1).max(1) as usize;
    let (first, step) = (columns.first as usize, columns.step.max(1) as usize);
    let words: Vec<u32> = whole
        .words
        .chunks(width)
        .flat_map(|row| row.iter().skip(first).step_by(step).copied())
        .collect();
    let mut shape = whole.shape.clone();
    if let Some(last) = shape.last_mut() {
        *last = columns.taken(width as u64);
    }
    Tensor {
        elem: whole.elem,
        shape,
        words,
    }
}

/// Reads one tensor: an activation (`batched`: any number of samples, float64 converted with
/// a warning) or a parameter (exactly as declared).
fn read_tensor(
    decl: &TensorDecl,
    data: InputData,
    batched: bool,
) -> Result<(Tensor, Option<String>), BuildError> {
    let expected: Vec<Option<u64>> = decl
        .shape
        .iter()
        .enumerate()
        .map(|(i, d)| if batched && i == 0 { None } else { Some(*d) })
        .collect();
    let float64 = if batched {
        Float64::Convert
    } else {
        Float64::Refuse
    };
    let read = match data {
        InputData::File(path) => wsel_data::read_tensor(
            &DataRef::new(&path, &decl.name),
            decl.elem,
            &expected,
            float64,
        ),
        InputData::Array(array) => {
            let what = format!("the array given for `{}`", decl.name);
            wsel_data::to_tensor(array, decl.elem, &expected, float64, &what)
        }
    };
    let converted = read.map_err(|e| data_error(&e, decl, batched))?;
    let warning = converted.converted_from.map(|dtype| {
        format!(
            "the data for `{}` holds {dtype} values: rounded to {} (save {} data to skip this)",
            decl.name,
            decl.elem.name(),
            wsel_data::numpy_dtype(decl.elem)
        )
    });
    Ok((converted.tensor, warning))
}

/// A data error, with the tensor it was for and its declared type.
fn data_error(error: &TensorError, decl: &TensorDecl, batched: bool) -> BuildError {
    let message = format!(
        "{error} (for `{}`, declared `{}`)",
        decl.name,
        type_text(decl, batched)
    );
    run_error(error.code(), message)
}

/// The declared type: an activation's first dimension is its sample dimension (`B`).
fn type_text(decl: &TensorDecl, batched: bool) -> String {
    let dims: Vec<String> = decl
        .shape
        .iter()
        .enumerate()
        .map(|(i, d)| {
            if batched && i == 0 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use wsel_ir::kernel::ScalarTy;

    #[test]
    fn a_chunk_takes_every_kth_column_of_the_last_dimension_from_its_own() {
        // A 2 × 6 weight, columns 1 and 4 (chunk 1 of 3); a bias of 6, elements 1 and 4.
        let whole = Tensor {
            elem: ScalarTy::F32,
            shape: vec![2, 6],
            words: (0..12).collect(),
        };
        let columns = ParamColumns {
            of: "w".into(),
            whole: vec![2, 6],
            first: 1,
            step: 3,
        };
        let chunk = take_columns(&whole, &columns);
        assert_eq!((chunk.shape, chunk.words), (vec![2, 2], vec![1, 4, 7, 10]));
        let bias = Tensor {
            shape: vec![6],
            words: (0..6).collect(),
            ..whole
        };
        let chunk = take_columns(&bias, &columns);
        assert_eq!((chunk.shape, chunk.words), (vec![2], vec![1, 4]));
    }
}

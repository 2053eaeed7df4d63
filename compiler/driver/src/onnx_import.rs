//! The files of `wsel import` (and `wsel.import_onnx`): reads an ONNX model, translates it
//! (`wsel-onnx`) and writes the program and its weights, each atomically: the weights as
//! `.npy` files in `<program stem>_weights/` beside the program.

use std::path::{Path, PathBuf};

use crate::pipeline::BuildError;
use crate::run_errors::E0804;

/// What an import wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub program: PathBuf,
    pub weights_dir: PathBuf,
    pub weights: usize,
}

/// Imports the ONNX model at `model` as the program `output`.
pub fn import_file(model: &Path, output: &Path) -> Result<Written, BuildError> {
    let bytes = std::fs::read(model).map_err(|e| BuildError::Run {
        code: wsel_onnx::E1001,
        message: format!("cannot read `{}`: {e}", model.display()),
    })?;
    let stem = |p: &Path| {
        p.file_stem()
            .map_or_else(|| "model".to_string(), |s| s.to_string_lossy().into_owned())
    };
    let weights_name = format!("{}_weights", stem(output));
    let names = wsel_onnx::Names {
        model: &stem(model),
        weights_dir: &weights_name,
    };
    let imported = wsel_onnx::import(&bytes, &names).map_err(|e| BuildError::Run {
        code: e.code,
        message: e.message,
    })?;
    let weights_dir = output.parent().unwrap_or(Path::new("")).join(&weights_name);
    for (file, tensor) in &imported.weights {
        crate::tensor::write_npy_atomic(&weights_dir.join(file), tensor).map_err(|e| {
            BuildError::Run {
                code: E0804,
                message: e.to_string(),
            }
        })?;
    }
    crate::atomic::write_atomic(output, imported.program.as_bytes()).map_err(|e| {
        BuildError::Run {
            code: E0804,
            message: format!("cannot write `{}`: {e}", output.display()),
        }
    })?;
    Ok(Written {
        program: output.to_path_buf(),
        weights_dir,
        weights: imported.weights.len(),
    })
}

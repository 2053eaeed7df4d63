//! Host tensors and their `.npy` files: reading with dtype and shape checks (`wsel-data`),
//! writing atomically (a temporary file renamed into place, so an error never leaves half a
//! file).

use std::path::Path;

pub use wsel_data::{Tensor, TensorError, read_labels, read_npy};

/// Writes `tensor` to `path` as `.npy`, atomically (see [`crate::atomic`]).
pub fn write_npy_atomic(path: &Path, tensor: &Tensor) -> Result<(), TensorError> {
    let bytes = encode_npy(tensor)?;
    crate::atomic::write_atomic(path, &bytes).map_err(|error| TensorError::Write {
        file: format!("`{}`", path.display()),
        reason: error.to_string(),
    })
}

/// The bytes of `tensor` as a `.npy` file.
pub fn encode_npy(tensor: &Tensor) -> Result<Vec<u8>, TensorError> {
    wsel_data::npy_bytes(tensor).map_err(|error| TensorError::Write {
        file: "the result".to_string(),
        reason: error.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wsel_ir::kernel::ScalarTy;

    fn temp_dir(name: &str) -> tempfile::TempDir {
        let prefix = format!("wsel-tensor-{name}-");
        let dir = tempfile::Builder::new().prefix(&prefix).tempdir();
        dir.expect("scratch folder")
    }

    #[test]
    fn round_trips_f32_and_checks_shape_and_dtype() {
        let scratch = temp_dir("roundtrip");
        let dir = scratch.path();
        let path = dir.join("sub/x.npy");
        let tensor = Tensor {
            elem: ScalarTy::F32,
            shape: vec![2, 3],
            words: [1.0f32, 2.0, 3.0, -4.5, 0.0, 7.25]
                .iter()
                .map(|v| v.to_bits())
                .collect(),
        };
        write_npy_atomic(&path, &tensor).expect("write");
        assert_eq!(
            read_npy(&path, ScalarTy::F32, &[None, Some(3)]),
            Ok(tensor.clone())
        );
        assert_eq!(
            read_npy(&path, ScalarTy::F32, &[None, Some(4)]).map_err(|e| e.to_string()),
            Err(format!(
                "`{}` has shape [2, 3], but shape [B, 4] is needed",
                path.display()
            ))
        );
        assert_eq!(
            read_npy(&path, ScalarTy::I32, &[None, Some(3)]).map_err(|e| e.to_string()),
            Err(format!(
                "`{}` holds `float32` values, but `i32` values are needed",
                path.display()
            ))
        );
        let leftovers: Vec<_> = std::fs::read_dir(dir.join("sub")).expect("dir").collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
    }

    #[test]
    fn missing_and_garbage_files_are_clear_errors() {
        let scratch = temp_dir("bad");
        let dir = scratch.path();
        let missing = read_npy(&dir.join("nope.npy"), ScalarTy::F32, &[None]);
        assert!(matches!(missing, Err(TensorError::Read { .. })));
        let garbage = dir.join("garbage.npy");
        std::fs::write(&garbage, b"not numpy at all").expect("write");
        let error = read_npy(&garbage, ScalarTy::F32, &[None]).expect_err("garbage");
        assert!(
            error.to_string().contains("not a NumPy .npy file"),
            "{error}"
        );
    }

    #[test]
    fn unwritable_output_leaves_nothing() {
        let scratch = temp_dir("unwritable");
        let dir = scratch.path();
        let blocker = dir.join("file");
        std::fs::write(&blocker, b"x").expect("write");
        let tensor = Tensor {
            elem: ScalarTy::F32,
            shape: vec![1],
            words: vec![0],
        };
        let error = write_npy_atomic(&blocker.join("out.npy"), &tensor)
            .expect_err("a file is not a folder");
        assert!(matches!(error, TensorError::Write { .. }));
    }

    #[test]
    fn reads_files_numpy_wrote() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/digits/data");
        let x = read_npy(&data.join("x_test.npy"), ScalarTy::F32, &[None, Some(64)]).expect("x");
        assert_eq!(x.shape, vec![360, 64]);
        assert!(x.to_f32().iter().all(|v| (0.0..=1.0).contains(v)));
        let labels = read_labels(&data.join("y_test.npy"), 360).expect("labels");
        assert!(labels.iter().all(|l| (0..10).contains(l)));
        let wrong = read_npy(&data.join("y_test.npy"), ScalarTy::F32, &[None]).expect_err("ints");
        assert!(
            wrong.to_string().contains("holds `int32` values"),
            "{wrong}"
        );
    }
}

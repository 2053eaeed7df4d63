//! Harness shared by the driver's integration tests (`mod support;` in each): the
//! repository's root, fresh scratch folders and `.npy` inputs. Each test binary compiles this module on its
//! own and uses only part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository's root, where `examples/`, `stdlib/` and `tests/` are.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// An empty scratch folder of this test binary's, `wsel-<test>-<name>-<process id>` under the
/// system's temporary folder (anything left there by an earlier run is removed first).
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "wsel-{}-{name}-{}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Writes `values` as an f32 `.npy` file of `shape` (an input a test generated).
pub fn write_f32_npy(path: &Path, shape: &[u64], values: &[f32]) {
    let tensor = wsel::tensor::Tensor {
        elem: wsel_ir::kernel::ScalarTy::F32,
        shape: shape.to_vec(),
        words: values.iter().map(|v| v.to_bits()).collect(),
    };
    wsel::tensor::write_npy_atomic(path, &tensor).expect("write .npy");
}

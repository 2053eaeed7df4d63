//! `wsel import`: an ONNX graph as a `.wse` model over std.nn's layers, and its weights as
//! tensors for `.npy` files beside it. Reads the protobuf with prost (the schema vendored in
//! `proto/`); writes nothing itself: the driver owns the files.
//!
//! Mapped: `Gemm` and `MatMul` (with the `Add` of a constant bias that follows it) → `dense`,
//! `Relu` → `relu`, `Softmax` over the last axis → `softmax`, `Gelu` with
//! `approximate = "tanh"` → `gelu`, `LayerNormalization` over the last axis → `layernorm`,
//! the `Add` of two values (a residual) → `add`. Every other operator — the exact (erf)
//! `Gelu` among them — is error E1002 naming the node, until std.nn grows the layer.

mod errors;
mod program;
mod translate;
mod weights;

/// The ONNX protobuf schema (`proto/onnx.proto`) as Rust types.
#[allow(clippy::all, missing_docs)]
pub mod proto {
    include!(concat!(env!("OUT_DIR"), "/onnx.rs"));
}

pub use errors::{CODES, E1001, E1002, E1003, ImportError};
pub use program::Imported;

/// Names the translation cannot take from the graph itself.
#[derive(Debug, Clone)]
pub struct Names<'a> {
    /// The model's name when the graph has none (the file's stem).
    pub model: &'a str,
    /// The folder of the weight files, as the program's `param ... from "..."` writes it
    /// (relative to the program's folder).
    pub weights_dir: &'a str,
}

/// Translates the ONNX model `bytes` (a serialised `ModelProto`).
pub fn import(bytes: &[u8], names: &Names<'_>) -> Result<Imported, ImportError> {
    use prost::Message;
    let model = proto::ModelProto::decode(bytes)
        .map_err(|e| ImportError::new(E1001, format!("not an ONNX model (protobuf: {e})")))?;
    let graph = model
        .graph
        .ok_or_else(|| ImportError::new(E1001, "the ONNX model has no graph"))?;
    let layers = translate::translate(&graph)?;
    Ok(program::write(&graph, &layers, names))
}

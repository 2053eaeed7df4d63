//! Compiles the vendored `proto/onnx.proto` into Rust types (prost) with protox, a pure-Rust
//! protobuf compiler: no `protoc` needed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/onnx.proto");
    let descriptors = protox::compile(["proto/onnx.proto"], ["proto"])?;
    prost_build::Config::new().compile_fds(descriptors)?;
    Ok(())
}

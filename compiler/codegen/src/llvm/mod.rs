//! The LLVM backend (inkwell 0.11 on LLVM 16), behind the `llvm` feature.

//! Compiled kernels as plain data, so that a build can be saved and reused without compiling
//! again: [`CompiledKernel::to_artifact`] and [`CompiledKernel::from_artifact`].
//!
//! What is kept depends on the backend:
//!
//! - **Cranelift**: the machine code of every task with its relocations (calls to the host
//!   functions of [`crate::host`] and Cranelift's libcalls, by symbol name), and the host it
//!   was compiled for (target triple and every ISA flag). Loading defines the bytes in a new
//!   JIT module (`Module::define_function_bytes`), which resolves the relocations against this
//!   process's addresses; nothing is compiled. Code compiled for another CPU is refused.
//! - **Interpreter**: nothing beyond the kernel IR, which the caller keeps anyway.
//! - **LLVM**: nothing. MCJIT offers no clean way to reload its code without an object-file
//!   linker, so the kernel is compiled afresh from its IR on load
//!   ([`KernelArtifact::reuses_code`] says so).
//!
//! An artifact is plain data with serde derives; the caller picks the encoding and must make
//! sure the bytes it decodes are the bytes it wrote (the driver keeps a checksum), since machine
//! code is executed as it is. Loading still checks everything it can without running the code:
//! the kernel's name, tasks and SRAM plan against the IR, the host, every relocation's kind,
//! target and offset, and each function's alignment.

use serde::{Deserialize, Serialize};
use wsel_ir::cost::CostModel;
use wsel_ir::kernel::KernelIr;

use crate::{Backend, Code, CodegenError, CompiledKernel, Interpreter};

/// A compiled kernel instance as plain, serialisable data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelArtifact {
    name: String,
    /// The backend's name (a name rather than [`Backend`], so that a build without the `llvm`
    /// feature can still read an artifact made with it, and say why it cannot use it).
    backend: String,
    task_names: Vec<String>,
    sram_words: u32,
    code: SavedCode,
}

/// The code part of an artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum SavedCode {
    /// The interpreter walks the IR: nothing to keep.
    Interpreted,
    /// Not kept (LLVM, or Cranelift code with a relocation this module cannot save): compiled
    /// afresh from the IR when loaded.
    Recompile,
    /// Cranelift machine code.
    Machine(MachineCode),
}

/// The machine code of every task of a kernel, for one host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MachineCode {
    /// The target triple and every flag the code was compiled with (shared and ISA-specific);
    /// code is only loaded on a host that gives the same string.
    pub(crate) host: String,
    /// One function per task, in task order.
    pub(crate) functions: Vec<FunctionCode>,
}

/// One task's function: its bytes as Cranelift emitted them, before relocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FunctionCode {
    pub(crate) alignment: u64,
    pub(crate) bytes: Vec<u8>,
    pub(crate) relocs: Vec<Relocation>,
}

/// A place in a function's bytes that the loader patches with an address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Relocation {
    pub(crate) offset: u32,
    /// The relocation kind's name (`cranelift_codegen::binemit::Reloc`'s `Debug` form).
    pub(crate) kind: String,
    pub(crate) target: RelocTarget,
    pub(crate) addend: i64,
}

/// What a relocation points at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum RelocTarget {
    /// A function of the module by its symbol: a host function (`wsel_expf`, ...).
    Symbol(String),
    /// A Cranelift libcall by its name (`FloorF32`, ...).
    LibCall(String),
    /// An offset into the function itself.
    ThisFunction(u32),
}

impl KernelArtifact {
    /// The backend the kernel was compiled with, by name (`cranelift`, `interp`, `llvm`).
    pub fn backend_name(&self) -> &str {
        &self.backend
    }

    /// Whether loading reuses the saved code (Cranelift machine code, or the interpreter,
    /// which needs none), rather than compiling the kernel afresh (LLVM).
    pub fn reuses_code(&self) -> bool {
        !matches!(self.code, SavedCode::Recompile)
    }
}

impl CompiledKernel {
    /// The kernel as plain data to save. Loading it back with [`CompiledKernel::from_artifact`]
    /// gives a kernel with bit-identical results and identical cycle counts.
    pub fn to_artifact(&self) -> KernelArtifact {
        let code = match &self.code {
            Code::Interp(_) => SavedCode::Interpreted,
            Code::Native(native) => match &native.saved {
                Some(machine) => SavedCode::Machine(machine.clone()),
                None => SavedCode::Recompile,
            },
        };
        KernelArtifact {
            name: self.name.clone(),
            backend: self.backend.name().to_string(),
            task_names: self.task_names.clone(),
            sram_words: self.sram_words,
            code,
        }
    }

    /// Loads a kernel saved with [`CompiledKernel::to_artifact`]. `kernel` and `cost` must be
    /// the IR and the cost model it was compiled from (the interpreter runs the IR; LLVM
    /// compiles it again); the artifact is checked against the IR, and machine code against
    /// this host.
    pub fn from_artifact(
        artifact: &KernelArtifact,
        kernel: &KernelIr,
        cost: &CostModel,
    ) -> Result<CompiledKernel, CodegenError> {
        let backend = Backend::ALL
            .iter()
            .copied()
            .find(|b| b.name() == artifact.backend)
            .ok_or_else(|| {
                CodegenError::new(format!(
                    "the artifact was compiled with the {} backend, which this build does not have",
                    artifact.backend
                ))
            })?;
        let task_names: Vec<&str> = kernel.tasks.iter().map(|t| t.name.as_str()).collect();
        if artifact.name != kernel.name
            || artifact.task_names != task_names
            || artifact.sram_words != kernel.sram_words()
        {
            return Err(CodegenError::new(format!(
                "the saved code of `{}` does not belong to the kernel IR `{}`",
                artifact.name, kernel.name
            )));
        }
        crate::check::check_kernel(kernel)?;
        let code = match (&artifact.code, backend) {
            (SavedCode::Interpreted, Backend::Interp) => {
                Code::Interp(Interpreter::new(kernel, cost))
            }
            (SavedCode::Machine(machine), Backend::Cranelift) => {
                if machine.functions.len() != kernel.tasks.len() {
                    return Err(CodegenError::new(format!(
                        "the saved code of `{}` has {} functions for {} tasks",
                        kernel.name,
                        machine.functions.len(),
                        kernel.tasks.len()
                    )));
                }
                Code::Native(crate::cranelift::load(machine, &kernel.name)?)
            }
            (SavedCode::Recompile, backend) if backend != Backend::Interp => {
                return crate::compile(kernel, backend, cost);
            }
            _ => {
                return Err(CodegenError::new(format!(
                    "the saved code of `{}` does not fit the {} backend",
                    kernel.name, artifact.backend
                )));
            }
        };
        Ok(CompiledKernel {
            name: kernel.name.clone(),
            backend,
            task_names: artifact.task_names.clone(),
            sram_words: artifact.sram_words,
            code,
        })
    }
}

//! Per-PE code for wsel kernels: one function per task of a kernel instance, produced by a
//! reference interpreter, a Cranelift JIT, or (with the `llvm` feature) an LLVM JIT.
//!
//! Every backend implements the semantics of `wsel_ir::kernel` bit for bit, charges the cycles
//! of `wsel_ir::cost` exactly, and talks to the runtime only through the C ABI of `wsel_abi`:
//! a compiled task is a [`TaskFn`] taking the activation's [`TaskCtx`]. PEs running the same
//! kernel instance share the machine code; per-PE values (coordinates, region size) are read
//! from the context.
//!
//! What the IR leaves open is fixed in [`semantics`] (NaN canonicalisation, `f16` rounding,
//! short-circuit `&&`/`||`, ...) and [`faults`] (how errors without a dedicated ABI call are
//! reported).

pub mod artifact;
pub mod check;
mod cranelift;
pub mod dry_run;
pub mod dry_trace;
mod error;
pub mod faults;
pub mod host;
mod interp;
#[cfg(feature = "llvm")]
mod llvm;
mod prepared;
pub mod semantics;

use std::fmt;

pub use artifact::KernelArtifact;
pub use error::CodegenError;
pub use interp::Interpreter;
use wsel_abi::{TaskCtx, TaskFn};
use wsel_ir::cost::CostModel;
use wsel_ir::kernel::{KernelIr, TaskId};

/// The code generators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The reference interpreter: no machine code, the IR is walked on every activation.
    Interp,
    /// Cranelift JIT.
    Cranelift,
    /// LLVM 16 JIT (MCJIT through inkwell).
    #[cfg(feature = "llvm")]
    Llvm,
}

impl Backend {
    /// Every backend this build has.
    pub const ALL: &'static [Backend] = &[
        Backend::Interp,
        Backend::Cranelift,
        #[cfg(feature = "llvm")]
        Backend::Llvm,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Backend::Interp => "interp",
            Backend::Cranelift => "cranelift",
            #[cfg(feature = "llvm")]
            Backend::Llvm => "llvm",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Compiles every task of `kernel` with `backend`, charging cycles per `cost`.
pub fn compile(
    kernel: &KernelIr,
    backend: Backend,
    cost: &CostModel,
) -> Result<CompiledKernel, CodegenError> {
    check::check_kernel(kernel)?;
    let code = match backend {
        Backend::Interp => Code::Interp(Interpreter::new(kernel, cost)),
        Backend::Cranelift => Code::Native(cranelift::compile(
            kernel,
            cost,
            cranelift::Optimise::Speed,
        )?),
        #[cfg(feature = "llvm")]
        Backend::Llvm => Code::Native(llvm::compile(kernel, cost)?),
    };
    Ok(CompiledKernel::new(kernel, backend, code))
}

/// The code of one kernel instance: one entry per task.
pub struct CompiledKernel {
    name: String,
    backend: Backend,
    task_names: Vec<String>,
    sram_words: u32,
    code: Code,
}

enum Code {
    Interp(Interpreter),
    Native(NativeCode),
}

/// Machine code owned by a JIT, with the entry point of every task.
pub(crate) struct NativeCode {
    pub(crate) tasks: Vec<TaskFn>,
    /// The machine code as data for the build artifact, when the backend can save it.
    pub(crate) saved: Option<artifact::MachineCode>,
    /// Keeps the machine code alive (and frees it on drop).
    pub(crate) _owner: Box<dyn Send + Sync>,
}

impl CompiledKernel {
    fn new(kernel: &KernelIr, backend: Backend, code: Code) -> CompiledKernel {
        CompiledKernel {
            name: kernel.name.clone(),
            backend,
            task_names: kernel.tasks.iter().map(|task| task.name.clone()).collect(),
            sram_words: kernel.sram_words(),
            code,
        }
    }

    /// The kernel instance's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub fn task_count(&self) -> usize {
        self.task_names.len()
    }

    pub fn task_name(&self, task: TaskId) -> Option<&str> {
        self.task_names.get(task.0 as usize).map(String::as_str)
    }

    /// SRAM words the kernel's arrays occupy; `TaskCtx::sram_len` must be at least four times
    /// this, or every task stops with [`faults::FAULT_SRAM_TOO_SMALL`].
    pub fn sram_words(&self) -> u32 {
        self.sram_words
    }

    /// The native entry point of `task`, for the runtime to call directly; `None` under the
    /// interpreter (use [`CompiledKernel::run`]) or for a task the kernel does not have. The
    /// pointer is valid as long as `self` lives.
    pub fn task_fn(&self, task: TaskId) -> Option<TaskFn> {
        match &self.code {
            Code::Interp(_) => None,
            Code::Native(native) => native.tasks.get(task.0 as usize).copied(),
        }
    }

    /// The interpreter, when this kernel was compiled with [`Backend::Interp`].
    pub fn interpreter(&self) -> Option<&Interpreter> {
        match &self.code {
            Code::Interp(interp) => Some(interp),
            Code::Native(_) => None,
        }
    }

    /// Runs one activation of `task` with any backend; returns the task's status
    /// ([`wsel_abi::STATUS_OK`] or nonzero), or [`wsel_abi::STATUS_ERROR`] for a task the
    /// kernel does not have.
    ///
    /// # Safety
    ///
    /// `ctx` must point to a [`TaskCtx`] that upholds the invariants of `wsel_abi` for the
    /// whole call.
    pub unsafe fn run(&self, task: TaskId, ctx: *mut TaskCtx) -> u32 {
        if task.0 as usize >= self.task_count() {
            return wsel_abi::STATUS_ERROR;
        }
        match &self.code {
            // SAFETY: the caller upholds the context's invariants; `task` exists.
            Code::Interp(interp) => unsafe { interp.run(task, ctx) },
            Code::Native(native) => {
                let entry = native.tasks[task.0 as usize];
                // SAFETY: `entry` was compiled for this ABI and its code lives as long as
                // `self`; the caller upholds the context's invariants.
                unsafe { entry(ctx) }
            }
        }
    }
}

impl fmt::Debug for CompiledKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledKernel")
            .field("name", &self.name)
            .field("backend", &self.backend)
            .field("tasks", &self.task_names)
            .finish()
    }
}

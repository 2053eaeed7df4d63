//! The LLVM backend (inkwell 0.11 on LLVM 16, behind the `llvm` feature): one LLVM module and
//! MCJIT execution engine per kernel instance, one native [`TaskFn`] per task.
//!
//! The structure mirrors the Cranelift backend: [`function::Gen`] builds one task's function
//! with one method per construct (statements in `stmt`, expressions in `expr`, scalar
//! operations in `ops`, checks, faults, cycles and runtime calls in `function`). The module is
//! optimised with LLVM's `default<O2>` pipeline before it is handed to the JIT.

mod expr;
mod function;
mod ops;
mod stmt;

use std::sync::{Mutex, MutexGuard, PoisonError};

use inkwell::OptimizationLevel;
use inkwell::builder::BuilderError;
use inkwell::context::Context;
use inkwell::execution_engine::ExecutionEngine;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, InitializationConfig, RelocMode, Target, TargetMachine};
use wsel_abi::TaskFn;
use wsel_ir::cost::CostModel;
use wsel_ir::kernel::KernelIr;

use crate::host::HostFn;
use crate::{CodegenError, NativeCode};

impl From<BuilderError> for CodegenError {
    fn from(error: BuilderError) -> Self {
        CodegenError::new(format!("llvm: building IR: {error}"))
    }
}

/// Serialises the parts of LLVM with process-wide state (target registration, engine
/// creation and disposal), so kernels may be compiled and dropped from several threads.
static LLVM: Mutex<()> = Mutex::new(());

fn llvm_lock() -> MutexGuard<'static, ()> {
    // A panic while holding the lock leaves no LLVM state half-updated that matters here.
    LLVM.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Compiles every task of a checked `kernel` to native code.
pub(crate) fn compile(kernel: &KernelIr, cost: &CostModel) -> Result<NativeCode, CodegenError> {
    let _guard = llvm_lock();
    let context = Box::new(Context::create());
    // SAFETY: the context is boxed (its address never changes) and owned by the returned
    // `LlvmCode`, which drops the engine and module that borrow it before the box itself.
    let context_ref: &'static Context = unsafe { &*(context.as_ref() as *const Context) };
    let module = context_ref.create_module(&kernel.name);
    let machine = target_machine()?;
    module.set_triple(&TargetMachine::get_default_triple());
    module.set_data_layout(&machine.get_target_data().get_data_layout());

    let names = (0..kernel.tasks.len())
        .map(|index| {
            let name = format!("wsel_task_{index}");
            function::Gen::new(context_ref, &module, kernel, index, cost, &name)?.translate()?;
            Ok(name)
        })
        .collect::<Result<Vec<_>, CodegenError>>()?;
    module
        .verify()
        .map_err(|e| CodegenError::new(format!("llvm: invalid IR for {}: {e}", kernel.name)))?;
    module
        .run_passes("default<O2>", &machine, PassBuilderOptions::create())
        .map_err(|e| CodegenError::new(format!("llvm: optimizing {}: {e}", kernel.name)))?;

    let engine = module
        .create_jit_execution_engine(OptimizationLevel::Aggressive)
        .map_err(|e| CodegenError::new(format!("llvm: creating the JIT: {e}")))?;
    for host in HostFn::ALL {
        // Declarations the optimiser removed need no mapping.
        if let Some(declaration) = module.get_function(host.symbol()) {
            engine.add_global_mapping(&declaration, host.address() as usize);
        }
    }
    let tasks = names
        .iter()
        .map(|name| {
            let address = engine
                .get_function_address(name)
                .map_err(|e| CodegenError::new(format!("llvm: finding {name} in the JIT: {e}")))?;
            // SAFETY: the function was defined with the `TaskFn` signature (`i32 (ptr)`, the
            // C calling convention) and the engine has compiled it.
            Ok(unsafe { std::mem::transmute::<usize, TaskFn>(address) })
        })
        .collect::<Result<Vec<_>, CodegenError>>()?;
    Ok(NativeCode {
        tasks,
        // MCJIT's code cannot be reloaded without a linker; the artifact recompiles it.
        saved: None,
        _owner: Box::new(LlvmCode {
            engine: Some(engine),
            module: Some(module),
            context: Some(context),
        }),
    })
}

/// The host's target machine, for the optimisation pipeline's cost models.
fn target_machine() -> Result<TargetMachine, CodegenError> {
    Target::initialize_native(&InitializationConfig::default())
        .map_err(|e| CodegenError::new(format!("llvm: native target: {e}")))?;
    let triple = TargetMachine::get_default_triple();
    let target = Target::from_triple(&triple)
        .map_err(|e| CodegenError::new(format!("llvm: target {triple}: {e}")))?;
    target
        .create_target_machine(
            &triple,
            "generic",
            "",
            OptimizationLevel::Aggressive,
            RelocMode::Default,
            CodeModel::JITDefault,
        )
        .ok_or_else(|| CodegenError::new(format!("llvm: no target machine for {triple}")))
}

/// Owns the JIT engine (and the code it holds), the module and their context; drops them in
/// that order, under the LLVM lock.
struct LlvmCode {
    engine: Option<ExecutionEngine<'static>>,
    module: Option<Module<'static>>,
    context: Option<Box<Context>>,
}

impl Drop for LlvmCode {
    fn drop(&mut self) {
        // The engine owns the module's code; both borrow the context, which goes last.
        let _guard = llvm_lock();
        self.engine.take();
        self.module.take();
        self.context.take();
    }
}

// SAFETY: after construction nothing calls into LLVM through `LlvmCode` until it is dropped;
// the compiled code is immutable and callable from any thread, and dropping the engine,
// module and context together on another thread is sound (LLVM contexts are not tied to a
// thread, only to single-threaded use, which exclusive ownership gives).
unsafe impl Send for LlvmCode {}
// SAFETY: no method is ever called through a shared reference.
unsafe impl Sync for LlvmCode {}

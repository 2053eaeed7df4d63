//! The Cranelift backend: one JIT module per kernel instance, one native [`TaskFn`] per task.
//!
//! [`JitCompiler`] owns the module and the host-function imports; a [`Translator`] builds one
//! task's function with one `translate_*`-style method per construct (statements in `stmt`,
//! expressions in `expr`, scalar operations in `ops`, bounds checks, faults, cycles and runtime
//! calls in `function`). `saved` keeps the machine code for the build artifact and loads it
//! back without compiling.

mod expr;
mod function;
mod ops;
mod saved;
mod simd;
mod stmt;

use cranelift_codegen::ir::{AbiParam, Signature, types};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module, default_libcall_names};
use wsel_abi::TaskFn;
use wsel_ir::cost::CostModel;
use wsel_ir::kernel::KernelIr;

use crate::artifact::FunctionCode;
use crate::host::HostFn;
use crate::{CodegenError, NativeCode};
use function::Translator;

/// How hard Cranelift works on the code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Optimise {
    /// For the fabric: the code runs for every activation of every PE.
    Speed,
    /// For a dry run (`crate::dry_run`): the code runs a few times, so compiling quickly
    /// matters more.
    CompileTime,
}

impl Optimise {
    /// Cranelift's `opt_level` and `regalloc_algorithm`. A dry run's code gets the single-pass
    /// register allocator: the backtracking one was about half of compiling it, and a dry run's
    /// cycles are counted by the code itself, whatever registers it uses (BENCHMARKS.md, "Outside
    /// the hops").
    fn settings(self) -> [(&'static str, &'static str); 2] {
        match self {
            Optimise::Speed => [
                ("opt_level", "speed"),
                ("regalloc_algorithm", "backtracking"),
            ],
            Optimise::CompileTime => [("opt_level", "none"), ("regalloc_algorithm", "single_pass")],
        }
    }
}

/// Compiles every task of a checked `kernel` to native code.
pub(crate) fn compile(
    kernel: &KernelIr,
    cost: &CostModel,
    optimise: Optimise,
) -> Result<NativeCode, CodegenError> {
    let mut compiler = JitCompiler::new(optimise)?;
    let mut ids = Vec::with_capacity(kernel.tasks.len());
    let mut functions = Some(Vec::with_capacity(kernel.tasks.len()));
    for index in 0..kernel.tasks.len() {
        let (id, function) = compiler.translate_task(kernel, index, cost)?;
        ids.push(id);
        // One function that cannot be saved makes the whole kernel unsaveable.
        functions = functions.zip(function).map(|(mut all, f)| {
            all.push(f);
            all
        });
    }
    let saved = functions.map(|functions| crate::artifact::MachineCode {
        host: compiler.host(),
        functions,
    });
    compiler.finish(ids, saved, &kernel.name)
}

/// Loads machine code saved by [`compile`] into a new JIT module, without compiling.
pub(crate) fn load(
    code: &crate::artifact::MachineCode,
    kernel_name: &str,
) -> Result<NativeCode, CodegenError> {
    saved::load(code, kernel_name)
}

/// Whether Cranelift checks every function it compiles: in debug builds (the tests) only. A
/// release build's CPU time went 3% into the verifier on examples/mlp_streaming (BENCHMARKS.md,
/// "Fixed costs of a streamed run"); the machine code is the same either way.
const VERIFY: &str = if cfg!(debug_assertions) {
    "true"
} else {
    "false"
};

/// Owns a finalized JIT module and frees its code when dropped.
struct JitMemory(Option<JITModule>);

// SAFETY: after finalization the module is never used through `&self`; it is only dropped,
// which frees its memory on whatever thread drops it. Its code is immutable and callable from
// any thread.
unsafe impl Send for JitMemory {}
// SAFETY: as above: no method of the module is called while it is shared.
unsafe impl Sync for JitMemory {}

impl Drop for JitMemory {
    fn drop(&mut self) {
        if let Some(module) = self.0.take() {
            // SAFETY: the owner (a `CompiledKernel`) is being dropped, so none of the task
            // function pointers it handed out may be called any more (their validity is tied
            // to its lifetime).
            unsafe { module.free_memory() };
        }
    }
}

/// One JIT module being filled with a kernel's task functions.
struct JitCompiler {
    module: JITModule,
    host: Vec<(HostFn, FuncId)>,
    builder_context: FunctionBuilderContext,
}

impl JitCompiler {
    /// A compiler with `optimise`'s settings.
    fn new(optimise: Optimise) -> Result<Self, CodegenError> {
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            CodegenError::new(format!("cranelift: {what}: {e}"))
        };
        let mut flags = settings::builder();
        let fixed = [
            ("use_colocated_libcalls", "false"),
            ("is_pic", "false"),
            ("enable_verifier", VERIFY),
        ];
        for (name, value) in fixed.into_iter().chain(optimise.settings()) {
            flags
                .set(name, value)
                .map_err(|e| fail("setting a flag", &e))?;
        }
        let isa = cranelift_native::builder()
            .map_err(|e| fail("host machine", &e))?
            .finish(settings::Flags::new(flags))
            .map_err(|e| fail("target", &e))?;
        let mut builder = JITBuilder::with_isa(isa, default_libcall_names());
        for host in HostFn::ALL {
            builder.symbol(host.symbol(), host.address());
        }
        let mut module = JITModule::new(builder);
        let mut host = Vec::new();
        for func in HostFn::ALL {
            let mut sig = module.make_signature();
            sig.params
                .extend((0..func.arity()).map(|_| AbiParam::new(types::F32)));
            sig.returns.push(AbiParam::new(types::F32));
            let id = module
                .declare_function(func.symbol(), Linkage::Import, &sig)
                .map_err(|e| fail("declaring a host function", &e))?;
            host.push((func, id));
        }
        Ok(JitCompiler {
            module,
            host,
            builder_context: FunctionBuilderContext::new(),
        })
    }

    /// Translates task `index` of `kernel` into a new function of the module; also returns
    /// its machine code for saving, unless it has a relocation that cannot be saved.
    fn translate_task(
        &mut self,
        kernel: &KernelIr,
        index: usize,
        cost: &CostModel,
    ) -> Result<(FuncId, Option<FunctionCode>), CodegenError> {
        let task = &kernel.tasks[index];
        let mut context = self.module.make_context();
        context.func.signature = self.task_signature();
        let builder = FunctionBuilder::new(&mut context.func, &mut self.builder_context);
        let host = self
            .host
            .iter()
            .map(|&(func, id)| (func, self.module.declare_func_in_func(id, builder.func)))
            .collect();
        let pointer = self.module.target_config().pointer_type();
        let translator = Translator::new(builder, kernel, task, cost, pointer, host);
        translator.translate_body(self.module.target_config())?;
        let id = self.declare_task(index)?;
        self.module.define_function(id, &mut context).map_err(|e| {
            CodegenError::new(format!(
                "cranelift: compiling task {} of {}: {e:?}",
                task.name, kernel.name
            ))
        })?;
        let function = context
            .compiled_code()
            .and_then(|code| saved::function_code(&self.module, &context.func, code));
        self.module.clear_context(&mut context);
        Ok((id, function))
    }

    /// Declares the function of task `index`.
    fn declare_task(&mut self, index: usize) -> Result<FuncId, CodegenError> {
        let name = format!("wsel_task_{index}");
        let signature = self.task_signature();
        self.module
            .declare_function(&name, Linkage::Local, &signature)
            .map_err(|e| CodegenError::new(format!("cranelift: declaring {name}: {e}")))
    }

    /// Finalizes the module and hands out the task functions `ids` (in task order).
    fn finish(
        mut self,
        ids: Vec<FuncId>,
        saved: Option<crate::artifact::MachineCode>,
        kernel_name: &str,
    ) -> Result<NativeCode, CodegenError> {
        self.module
            .finalize_definitions()
            .map_err(|e| CodegenError::new(format!("cranelift: finalizing {kernel_name}: {e}")))?;
        let tasks = ids
            .into_iter()
            .map(|id| {
                let code = self.module.get_finalized_function(id);
                // SAFETY: the function was defined with the `TaskFn` signature (one pointer
                // argument, one i32 result, the host's C calling convention) and is finalized.
                unsafe { std::mem::transmute::<*const u8, TaskFn>(code) }
            })
            .collect();
        Ok(NativeCode {
            tasks,
            saved,
            _owner: Box::new(JitMemory(Some(self.module))),
        })
    }

    /// The host the module compiles for: the target triple and every shared and ISA-specific
    /// flag, as text. Saved code is only loaded where this is the same. The verifier's flag
    /// is left out: it does not change the code, and debug and release builds differ in it.
    fn host(&self) -> String {
        let isa = self.module.isa();
        let isa_flags: Vec<String> = isa.isa_flags().iter().map(ToString::to_string).collect();
        let shared: String = isa
            .flags()
            .to_string()
            .lines()
            .filter(|line| !line.starts_with("enable_verifier "))
            .flat_map(|line| [line, "\n"])
            .collect();
        format!("{} | {} | {}", isa.triple(), shared, isa_flags.join(" "))
    }

    /// `TaskFn`: `extern "C" fn(*mut TaskCtx) -> u32`.
    fn task_signature(&self) -> Signature {
        let mut sig = self.module.make_signature();
        sig.params
            .push(AbiParam::new(self.module.target_config().pointer_type()));
        sig.returns.push(AbiParam::new(types::I32));
        sig
    }
}

//! Cranelift machine code kept for the build artifact, and loaded back without compiling.
//!
//! Saving happens right after `Module::define_function` compiled a task: the function's bytes
//! (`CompiledCode::code_buffer`), its alignment and its relocations, with every relocation
//! target turned into a name that means the same in another process (a host function's
//! symbol, a libcall's name, an offset into the function). Loading declares the same host
//! imports and task functions in a fresh JIT module, defines each function from its bytes
//! (`Module::define_function_bytes`) and finalizes: the JIT patches the relocations with this
//! process's addresses, exactly as it does for code it compiled itself.

use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::ir::{ExternalName, Function, LibCall};
use cranelift_codegen::{CompiledCode, FinalizedRelocTarget};
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, FuncOrDataId, Module, ModuleReloc, ModuleRelocTarget};

use super::{JitCompiler, Optimise};
use crate::artifact::{FunctionCode, MachineCode, RelocTarget, Relocation};
use crate::{CodegenError, NativeCode};

/// The relocation kinds the JIT applies (`cranelift-jit`'s `CompiledBlob`), by name.
const KINDS: &[Reloc] = &[
    Reloc::Abs4,
    Reloc::Abs8,
    Reloc::X86PCRel4,
    Reloc::X86CallPCRel4,
    Reloc::X86CallPLTRel4,
    Reloc::X86GOTPCRel4,
    Reloc::S390xPCRel32Dbl,
    Reloc::S390xPLTRel32Dbl,
    Reloc::Arm64Call,
    Reloc::Aarch64AdrGotPage21,
    Reloc::Aarch64Ld64GotLo12Nc,
    Reloc::Aarch64AdrPrelPgHi21,
    Reloc::Aarch64AddAbsLo12Nc,
    Reloc::RiscvCallPlt,
    Reloc::RiscvPCRelHi20,
    Reloc::RiscvPCRelLo12I,
];

/// The largest function alignment a saved function may ask for.
const MAX_ALIGNMENT: u64 = 4096;

/// The saveable form of a function `module` has just compiled from `func`; `None` when a
/// relocation has no process-independent name (the kernel is then compiled afresh on load).
pub(super) fn function_code(
    module: &JITModule,
    func: &Function,
    code: &CompiledCode,
) -> Option<FunctionCode> {
    let relocs = code
        .buffer
        .relocs()
        .iter()
        .map(|reloc| {
            let target = match &reloc.target {
                FinalizedRelocTarget::ExternalName(ExternalName::User(reference)) => {
                    let name = &func.params.user_named_funcs()[*reference];
                    if name.namespace != 0 {
                        return None;
                    }
                    let decl = module
                        .declarations()
                        .get_function_decl(FuncId::from_u32(name.index));
                    RelocTarget::Symbol(decl.name.clone()?)
                }
                FinalizedRelocTarget::ExternalName(ExternalName::LibCall(libcall)) => {
                    RelocTarget::LibCall(libcall.to_string())
                }
                FinalizedRelocTarget::Func(offset) => RelocTarget::ThisFunction(*offset),
                FinalizedRelocTarget::ExternalName(_) => return None,
            };
            let kind = format!("{:?}", reloc.kind);
            KINDS
                .iter()
                .any(|k| format!("{k:?}") == kind)
                .then_some(Relocation {
                    offset: reloc.offset,
                    kind,
                    target,
                    addend: reloc.addend,
                })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(FunctionCode {
        alignment: u64::from(code.buffer.alignment),
        bytes: code.code_buffer().to_vec(),
        relocs,
    })
}

/// Loads `code` into a new JIT module and returns the task entry points.
pub(super) fn load(code: &MachineCode, kernel_name: &str) -> Result<NativeCode, CodegenError> {
    let fail = |what: String| CodegenError::new(format!("saved code of `{kernel_name}`: {what}"));
    let mut compiler = JitCompiler::new(Optimise::Speed)?;
    let host = compiler.host();
    if code.host != host {
        return Err(fail(host_difference(&code.host, &host)));
    }
    let ids = (0..code.functions.len())
        .map(|index| compiler.declare_task(index))
        .collect::<Result<Vec<_>, _>>()?;
    for (index, (&id, function)) in ids.iter().zip(&code.functions).enumerate() {
        if !function.alignment.is_power_of_two() || function.alignment > MAX_ALIGNMENT {
            return Err(fail(format!(
                "function {index} asks for alignment {}",
                function.alignment
            )));
        }
        let relocs = function
            .relocs
            .iter()
            .map(|reloc| module_reloc(&compiler.module, reloc, id, function.bytes.len()))
            .collect::<Result<Vec<_>, String>>()
            .map_err(|why| fail(format!("function {index}: {why}")))?;
        compiler
            .module
            .define_function_bytes(id, function.alignment, &function.bytes, &relocs)
            .map_err(|e| fail(format!("defining function {index}: {e}")))?;
    }
    compiler.finish(ids, Some(code.clone()), kernel_name)
}

/// A saved relocation as the JIT module's relocation, after checking that its kind is one the
/// JIT applies, its target exists, and the bytes it patches lie inside the function.
fn module_reloc(
    module: &JITModule,
    reloc: &Relocation,
    this: FuncId,
    len: usize,
) -> Result<ModuleReloc, String> {
    let kind = KINDS
        .iter()
        .copied()
        .find(|k| format!("{k:?}") == reloc.kind)
        .ok_or_else(|| format!("unknown relocation kind `{}`", reloc.kind))?;
    let width = if kind == Reloc::Abs8 { 8 } else { 4 };
    if reloc.offset as usize + width > len {
        return Err(format!(
            "a relocation at offset {} lies outside the function's {len} bytes",
            reloc.offset
        ));
    }
    let name = match &reloc.target {
        RelocTarget::Symbol(symbol) => match module.get_name(symbol) {
            Some(FuncOrDataId::Func(id)) => ModuleRelocTarget::user(0, id.as_u32()),
            _ => return Err(format!("unknown symbol `{symbol}`")),
        },
        RelocTarget::LibCall(name) => ModuleRelocTarget::LibCall(
            name.parse::<LibCall>()
                .map_err(|()| format!("unknown libcall `{name}`"))?,
        ),
        RelocTarget::ThisFunction(offset) => {
            if *offset as usize > len {
                return Err(format!("an offset {offset} outside the function"));
            }
            ModuleRelocTarget::FunctionOffset(this, *offset)
        }
    };
    Ok(ModuleReloc {
        offset: reloc.offset,
        kind,
        name,
        addend: reloc.addend,
    })
}

/// Why code compiled for host `saved` does not run here, in a few words: another target
/// triple, or the first flag that differs.
fn host_difference(saved: &str, here: &str) -> String {
    let triple = |host: &str| host.split(" | ").next().unwrap_or_default().to_string();
    if triple(saved) != triple(here) {
        return format!(
            "compiled for {}, this host is {}",
            triple(saved),
            triple(here)
        );
    }
    let flags: Vec<&str> = here.split_whitespace().collect();
    match saved.split_whitespace().find(|flag| !flags.contains(flag)) {
        Some(flag) => format!("compiled for a CPU with `{flag}`, which this host differs in"),
        None => "compiled for another CPU".to_string(),
    }
}

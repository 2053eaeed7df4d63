//! The state of one task function under construction, and the machinery every construct
//! shares: the prologue, cycle charging, bounds checks, fault reports and runtime calls.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    AbiParam, Block, BlockArg, FuncRef, InstBuilder, MemFlagsData, SigRef, Signature, Type, Value,
    types,
};
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_frontend::{FunctionBuilder, Variable};
use wsel_abi as abi;
use wsel_ir::cost::CostModel;
use wsel_ir::kernel::{ArrayId, Expr, KernelIr, ScalarTy, Task};

use crate::CodegenError;
use crate::check::expr_ty;
use crate::faults::FAULT_SRAM_TOO_SMALL;
use crate::host::HostFn;
use wsel_ir::cost::LengthCost;

pub(super) type Tr<T = ()> = Result<T, CodegenError>;

/// Signatures of the runtime calls, imported into the function.
pub(super) struct RuntimeSigs {
    pub(super) send: SigRef,
    pub(super) send_scalar: SigRef,
    pub(super) recv: SigRef,
    pub(super) activate: SigRef,
    pub(super) out_of_bounds: SigRef,
}

pub(super) struct Translator<'a, 'f> {
    pub(super) b: FunctionBuilder<'f>,
    pub(super) kernel: &'a KernelIr,
    pub(super) task: &'a Task,
    pub(super) cost: &'a CostModel,
    pub(super) pointer: Type,
    host: Vec<(HostFn, FuncRef)>,
    sigs: RuntimeSigs,
    /// The `*mut TaskCtx` argument.
    pub(super) ctx: Value,
    /// `ctx.sram`, loaded once.
    pub(super) sram: Value,
    /// The activation's cycle count, kept in a register and stored before runtime calls.
    cycles: Variable,
    pub(super) locals: Vec<Variable>,
    /// Reports an error through `out_of_bounds` and returns; params `(array: i32, index: i64,
    /// bound: i64)`.
    fault: Block,
    /// Returns the nonzero status of a runtime call; param `(status: i32)`.
    fail: Block,
    /// `ctx.cycle_limit`, loaded once: a loop iteration past it stops the activation.
    cycle_limit: Value,
}

impl<'a, 'f> Translator<'a, 'f> {
    pub(super) fn new(
        mut b: FunctionBuilder<'f>,
        kernel: &'a KernelIr,
        task: &'a Task,
        cost: &'a CostModel,
        pointer: Type,
        host: Vec<(HostFn, FuncRef)>,
    ) -> Self {
        let call_conv = b.func.signature.call_conv;
        let mut sig = |params: &[Type]| {
            let mut sig = Signature::new(call_conv);
            sig.params.push(AbiParam::new(pointer));
            sig.params
                .extend(params.iter().map(|&ty| AbiParam::new(ty)));
            sig.returns.push(AbiParam::new(types::I32));
            b.import_signature(sig)
        };
        let i32 = types::I32;
        let sigs = RuntimeSigs {
            send: sig(&[i32, i32, i32, i32]),
            send_scalar: sig(&[i32, i32, i32]),
            recv: sig(&[i32, i32, i32, i32]),
            activate: sig(&[i32]),
            out_of_bounds: sig(&[i32, types::I64, types::I64]),
        };
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        let ctx = b.block_params(entry)[0];
        let sram = b
            .ins()
            .load(pointer, MemFlagsData::trusted(), ctx, abi::CTX_SRAM as i32);
        let start_cycles = b.ins().load(
            types::I64,
            MemFlagsData::trusted(),
            ctx,
            abi::CTX_CYCLES as i32,
        );
        let cycles = b.declare_var(types::I64);
        b.def_var(cycles, start_cycles);
        let cycle_limit = b.ins().load(
            types::I64,
            MemFlagsData::trusted(),
            ctx,
            abi::CTX_CYCLE_LIMIT as i32,
        );
        let locals = task
            .locals
            .iter()
            .map(|local| {
                let var = b.declare_var(clif_ty(local.ty));
                let zero = if local.ty.is_float() {
                    b.ins().f32const(0.0)
                } else {
                    b.ins().iconst(types::I32, 0)
                };
                b.def_var(var, zero);
                var
            })
            .collect();
        let fault = b.create_block();
        b.set_cold_block(fault);
        for ty in [types::I32, types::I64, types::I64] {
            b.append_block_param(fault, ty);
        }
        let fail = b.create_block();
        b.set_cold_block(fail);
        b.append_block_param(fail, types::I32);
        Translator {
            b,
            kernel,
            task,
            cost,
            pointer,
            host,
            sigs,
            ctx,
            sram,
            cycles,
            locals,
            fault,
            fail,
            cycle_limit,
        }
    }

    /// Translates the whole task body, then the shared exit blocks, and finishes the function.
    pub(super) fn translate_body(mut self, config: TargetFrontendConfig) -> Tr {
        self.check_sram();
        self.stmts(&self.task.body)?;
        self.return_ok();
        self.translate_fault_block();
        self.translate_fail_block();
        self.b.seal_all_blocks();
        self.b.finalize(config);
        Ok(())
    }

    /// Stops the task unless SRAM holds every array (see `faults::FAULT_SRAM_TOO_SMALL`).
    fn check_sram(&mut self) {
        let needed = self.kernel.sram_words();
        if needed == 0 {
            return;
        }
        let bytes = self.b.ins().load(
            types::I32,
            MemFlagsData::trusted(),
            self.ctx,
            abi::CTX_SRAM_LEN as i32,
        );
        let words = self.b.ins().ushr_imm_u(bytes, 2);
        let words = self.b.ins().uextend(types::I64, words);
        let ok =
            self.b
                .ins()
                .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, words, i64::from(needed));
        let needed = self.b.ins().iconst(types::I64, i64::from(needed));
        let array = self.iconst32(FAULT_SRAM_TOO_SMALL);
        self.branch_or_fault(ok, [array, needed, words]);
    }

    /// Continues in a new block when `ok` is nonzero, else jumps to the fault report with
    /// `(array, index, bound)`.
    pub(super) fn branch_or_fault(&mut self, ok: Value, report: [Value; 3]) {
        let next = self.b.create_block();
        let args = report.map(BlockArg::Value);
        self.b.ins().brif(ok, next, &[], self.fault, &args);
        self.b.switch_to_block(next);
    }

    fn translate_fault_block(&mut self) {
        self.b.switch_to_block(self.fault);
        let params = self.b.block_params(self.fault).to_vec();
        let mut args = vec![self.ctx];
        args.extend(params);
        let status =
            self.runtime_call_raw(abi::CALLS_OUT_OF_BOUNDS, self.sigs.out_of_bounds, &args);
        // A runtime that wrongly answers STATUS_OK still stops the task.
        let is_ok = self.b.ins().icmp_imm_s(IntCC::Equal, status, 0);
        let fallback = self.iconst32(abi::STATUS_OUT_OF_BOUNDS);
        let status = self.b.ins().select(is_ok, fallback, status);
        self.b.ins().return_(&[status]);
    }

    fn translate_fail_block(&mut self) {
        self.b.switch_to_block(self.fail);
        let status = self.b.block_params(self.fail)[0];
        self.b.ins().return_(&[status]);
    }

    /// Stores the cycle count and returns `STATUS_OK`; later code goes to a fresh block
    /// (unreachable unless a branch targets it).
    pub(super) fn return_ok(&mut self) {
        self.flush_cycles();
        let ok = self.iconst32(abi::STATUS_OK);
        self.b.ins().return_(&[ok]);
        let rest = self.b.create_block();
        self.b.switch_to_block(rest);
    }

    /// Adds a compile-time number of cycles.
    pub(super) fn charge(&mut self, cycles: u64) {
        if cycles == 0 {
            return;
        }
        let now = self.b.use_var(self.cycles);
        let next = self.b.ins().iadd_imm_s(now, cycles as i64);
        self.b.def_var(self.cycles, next);
    }

    /// Charges one loop iteration, and stops the activation with `STATUS_CYCLE_LIMIT` once it
    /// is past `ctx.cycle_limit`.
    pub(super) fn charge_iteration(&mut self) {
        self.charge(wsel_ir::cost::loop_iteration_cycles());
        let now = self.b.use_var(self.cycles);
        let over = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThan, now, self.cycle_limit);
        let status = self.iconst32(abi::STATUS_CYCLE_LIMIT);
        let next = self.b.create_block();
        self.b
            .ins()
            .brif(over, self.fail, &[BlockArg::Value(status)], next, &[]);
        self.b.switch_to_block(next);
    }

    /// Adds the cycles `plan` gives for the run-time length `len` (an i64 in `0..2^32`).
    pub(super) fn charge_len(&mut self, plan: &LengthCost, len: Value) {
        if plan.is_zero() {
            return;
        }
        let mut total = self.b.ins().imul_imm_s(len, plan.per_element as i64);
        for &(count, rate) in &plan.terms {
            let scaled = self.b.ins().imul_imm_s(len, count as i64);
            let rounded = self.b.ins().iadd_imm_s(scaled, (rate - 1) as i64);
            let term = if rate.is_power_of_two() {
                self.b
                    .ins()
                    .ushr_imm_u(rounded, i64::from(rate.trailing_zeros()))
            } else {
                let rate = self.b.ins().iconst(types::I64, rate as i64);
                self.b.ins().udiv(rounded, rate)
            };
            total = self.b.ins().iadd(total, term);
        }
        let now = self.b.use_var(self.cycles);
        let next = self.b.ins().iadd(now, total);
        self.b.def_var(self.cycles, next);
    }

    /// `pe.cycle`: the context's clock plus the cycles charged so far, low 32 bits.
    pub(super) fn clock(&mut self) -> Value {
        let clock = self.b.ins().load(
            types::I64,
            MemFlagsData::trusted(),
            self.ctx,
            abi::CTX_CLOCK as i32,
        );
        let now = self.b.use_var(self.cycles);
        let sum = self.b.ins().iadd(clock, now);
        self.b.ins().ireduce(types::I32, sum)
    }

    fn flush_cycles(&mut self) {
        let now = self.b.use_var(self.cycles);
        self.b.ins().store(
            MemFlagsData::trusted(),
            now,
            self.ctx,
            abi::CTX_CYCLES as i32,
        );
    }

    /// Calls the runtime (`offset` into `RuntimeCalls`) with the cycle count stored first;
    /// returns from the task with the call's status if it is nonzero, and reloads the cycle
    /// count otherwise.
    pub(super) fn runtime_call(
        &mut self,
        offset: usize,
        sig: fn(&RuntimeSigs) -> SigRef,
        args: &[Value],
    ) {
        let mut all = vec![self.ctx];
        all.extend_from_slice(args);
        let sig = sig(&self.sigs);
        let status = self.runtime_call_raw(offset, sig, &all);
        let next = self.b.create_block();
        self.b
            .ins()
            .brif(status, self.fail, &[BlockArg::Value(status)], next, &[]);
        self.b.switch_to_block(next);
        let cycles = self.b.ins().load(
            types::I64,
            MemFlagsData::trusted(),
            self.ctx,
            abi::CTX_CYCLES as i32,
        );
        self.b.def_var(self.cycles, cycles);
    }

    fn runtime_call_raw(&mut self, offset: usize, sig: SigRef, args: &[Value]) -> Value {
        self.flush_cycles();
        let calls = self.b.ins().load(
            self.pointer,
            MemFlagsData::trusted(),
            self.ctx,
            abi::CTX_CALLS as i32,
        );
        let callee = self
            .b
            .ins()
            .load(self.pointer, MemFlagsData::trusted(), calls, offset as i32);
        let call = self.b.ins().call_indirect(sig, callee, args);
        self.b.inst_results(call)[0]
    }

    /// Calls a host function with `f32` arguments.
    pub(super) fn call_host(&mut self, func: HostFn, args: &[Value]) -> Value {
        let callee = self
            .host
            .iter()
            .find(|&&(f, _)| f == func)
            .map(|&(_, callee)| callee);
        // Every host function is imported in `new`; the fallback keeps this total.
        let Some(callee) = callee else {
            return args[0];
        };
        let call = self.b.ins().call(callee, args);
        self.b.inst_results(call)[0]
    }

    /// Evaluates an index or length expression and widens it to i64 per its type.
    pub(super) fn index(&mut self, expr: &Expr) -> Tr<Value> {
        let ty = expr_ty(self.kernel, self.task, expr);
        let value = self.expr(expr)?;
        Ok(self.widen(ty, value))
    }

    pub(super) fn widen(&mut self, ty: ScalarTy, value: Value) -> Value {
        match ty {
            ScalarTy::I32 => self.b.ins().sextend(types::I64, value),
            _ => self.b.ins().uextend(types::I64, value),
        }
    }

    /// Checks `index` (i64) against `array`'s length; gives the element's address.
    pub(super) fn element_address(&mut self, array: ArrayId, index: Value) -> Value {
        let info = self.kernel.array(array);
        let len = i64::from(info.len);
        let ok = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, index, len);
        let id = self.iconst32(array.0);
        let bound = self.b.ins().iconst(types::I64, len);
        self.branch_or_fault(ok, [id, index, bound]);
        self.slice_base(array, index)
    }

    /// Checks `array[start .. start + len]` (i64 values) per `faults::slice_fault_index`.
    pub(super) fn check_slice(&mut self, array: ArrayId, start: Value, len: Value) {
        let alen = i64::from(self.kernel.array(array).len);
        let end = self.b.ins().iadd(start, len);
        let start_ok = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedLessThanOrEqual, start, alen);
        let len_ok = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedLessThanOrEqual, len, alen);
        let end_ok = self
            .b
            .ins()
            .icmp_imm_s(IntCC::SignedLessThanOrEqual, end, alen);
        let ok = self.b.ins().band(start_ok, len_ok);
        let ok = self.b.ins().band(ok, end_ok);
        let next = self.b.create_block();
        let bad = self.b.create_block();
        self.b.set_cold_block(bad);
        self.b.ins().brif(ok, next, &[], bad, &[]);
        // The reported index: start if negative, start + len if len is negative, else the
        // first element past the end.
        self.b.switch_to_block(bad);
        let bound = self.b.ins().iconst(types::I64, alen);
        let past_end = self.b.ins().smax(start, bound);
        let len_negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, len, 0);
        let index = self.b.ins().select(len_negative, end, past_end);
        let start_negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, start, 0);
        let index = self.b.ins().select(start_negative, start, index);
        let id = self.iconst32(array.0);
        self.b
            .ins()
            .jump(self.fault, &[id, index, bound].map(BlockArg::Value));
        self.b.switch_to_block(next);
    }

    /// The address of element `start` (an i64 already checked) of `array`.
    pub(super) fn slice_base(&mut self, array: ArrayId, start: Value) -> Value {
        let offset = i64::from(self.kernel.array(array).offset_words);
        let word = self.b.ins().iadd_imm_s(start, offset);
        let byte = self.b.ins().ishl_imm_u(word, 2);
        let byte = self.pointer_from_i64(byte);
        self.b.ins().iadd(self.sram, byte)
    }

    /// The SRAM byte offset of element `start` of `array`, as the i32 runtime calls take.
    pub(super) fn sram_offset(&mut self, array: ArrayId, start: Value) -> Value {
        let offset = i64::from(self.kernel.array(array).offset_words);
        let word = self.b.ins().iadd_imm_s(start, offset);
        let byte = self.b.ins().ishl_imm_u(word, 2);
        self.b.ins().ireduce(types::I32, byte)
    }

    /// `base + i * 4` for an i64 element number `i`.
    pub(super) fn element_at(&mut self, base: Value, i: Value) -> Value {
        let byte = self.b.ins().ishl_imm_u(i, 2);
        let byte = self.pointer_from_i64(byte);
        self.b.ins().iadd(base, byte)
    }

    fn pointer_from_i64(&mut self, value: Value) -> Value {
        if self.pointer == types::I64 {
            value
        } else {
            self.b.ins().ireduce(self.pointer, value)
        }
    }

    pub(super) fn iconst32(&mut self, value: u32) -> Value {
        self.b.ins().iconst(types::I32, i64::from(value))
    }

    /// Jumps to the fault report with `(array, index, bound)` and continues in a fresh,
    /// unreachable block.
    pub(super) fn fault_now(&mut self, report: [Value; 3]) {
        self.b.ins().jump(self.fault, &report.map(BlockArg::Value));
        let rest = self.b.create_block();
        self.b.switch_to_block(rest);
    }
}

/// The Cranelift type holding a value of `ty`.
pub(super) fn clif_ty(ty: ScalarTy) -> Type {
    if ty.is_float() {
        types::F32
    } else {
        types::I32
    }
}

//! The state of one task function under construction in LLVM IR, and the machinery every
//! construct shares: the prologue, cycle charging, bounds checks, fault reports and runtime
//! calls.

use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::types::{
    BasicMetadataTypeEnum, BasicType, BasicTypeEnum, FloatType, FunctionType, IntType, PointerType,
};
use inkwell::values::{
    BasicMetadataValueEnum, BasicValueEnum, FunctionValue, IntValue, PhiValue, PointerValue,
};
use inkwell::{AddressSpace, IntPredicate};
use wsel_abi as abi;
use wsel_ir::cost::CostModel;
use wsel_ir::kernel::{ArrayId, Expr, KernelIr, ScalarTy, Task};

use crate::CodegenError;
use crate::check::expr_ty;
use crate::faults::FAULT_SRAM_TOO_SMALL;
use crate::host::HostFn;
use wsel_ir::cost::LengthCost;

pub(super) type Tr<T = ()> = Result<T, CodegenError>;

/// The LLVM types the translation uses.
#[derive(Clone, Copy)]
pub(super) struct Types<'ctx> {
    pub(super) i8: IntType<'ctx>,
    pub(super) i32: IntType<'ctx>,
    pub(super) i64: IntType<'ctx>,
    pub(super) f32: FloatType<'ctx>,
    pub(super) ptr: PointerType<'ctx>,
}

/// A shared exit block and the phis carrying its arguments.
struct Exit<'ctx, const N: usize> {
    block: BasicBlock<'ctx>,
    phis: [PhiValue<'ctx>; N],
}

pub(super) struct Gen<'a, 'ctx> {
    pub(super) context: &'ctx Context,
    pub(super) module: &'a Module<'ctx>,
    pub(super) b: Builder<'ctx>,
    pub(super) function: FunctionValue<'ctx>,
    pub(super) kernel: &'a KernelIr,
    pub(super) task: &'a Task,
    pub(super) cost: &'a CostModel,
    pub(super) t: Types<'ctx>,
    /// The `*mut TaskCtx` argument.
    pub(super) ctx: PointerValue<'ctx>,
    /// `ctx.sram`, loaded once.
    pub(super) sram: PointerValue<'ctx>,
    /// The cycle count (an i64 stack slot promoted to a register by the optimiser).
    cycles: PointerValue<'ctx>,
    /// `ctx.cycle_limit`, loaded once: a loop iteration past it stops the activation.
    cycle_limit: IntValue<'ctx>,
    /// Each local's stack slot and type.
    pub(super) locals: Vec<(PointerValue<'ctx>, BasicTypeEnum<'ctx>)>,
    /// Reports `(array: i32, index: i64, bound: i64)` through `out_of_bounds` and returns.
    fault: Exit<'ctx, 3>,
    /// Returns the nonzero status of a runtime call.
    fail: Exit<'ctx, 1>,
}

impl<'a, 'ctx> Gen<'a, 'ctx> {
    pub(super) fn new(
        context: &'ctx Context,
        module: &'a Module<'ctx>,
        kernel: &'a KernelIr,
        index: usize,
        cost: &'a CostModel,
        name: &str,
    ) -> Tr<Self> {
        let t = Types {
            i8: context.i8_type(),
            i32: context.i32_type(),
            i64: context.i64_type(),
            f32: context.f32_type(),
            ptr: context.ptr_type(AddressSpace::default()),
        };
        let task = &kernel.tasks[index];
        let function = module.add_function(name, t.i32.fn_type(&[t.ptr.into()], false), None);
        let b = context.create_builder();
        let entry = context.append_basic_block(function, "entry");
        b.position_at_end(entry);
        let ctx = function
            .get_nth_param(0)
            .ok_or_else(|| CodegenError::new("llvm: task function without its parameter"))?
            .into_pointer_value();
        let cycles = b.build_alloca(t.i64, "cycles")?;
        let locals = task
            .locals
            .iter()
            .map(|local| {
                let ty = llvm_ty(t, local.ty);
                let slot = b.build_alloca(ty, &local.name)?;
                b.build_store(slot, ty.const_zero())?;
                Ok((slot, ty))
            })
            .collect::<Result<Vec<_>, CodegenError>>()?;

        let fault_block = context.append_basic_block(function, "fault");
        b.position_at_end(fault_block);
        let fault = Exit {
            block: fault_block,
            phis: [
                b.build_phi(t.i32, "array")?,
                b.build_phi(t.i64, "index")?,
                b.build_phi(t.i64, "bound")?,
            ],
        };
        let fail_block = context.append_basic_block(function, "fail");
        b.position_at_end(fail_block);
        let fail = Exit {
            block: fail_block,
            phis: [b.build_phi(t.i32, "status")?],
        };

        b.position_at_end(entry);
        let mut this = Gen {
            context,
            module,
            b,
            function,
            kernel,
            task,
            cost,
            t,
            ctx,
            sram: ctx,
            cycles,
            cycle_limit: t.i64.const_zero(),
            locals,
            fault,
            fail,
        };
        this.sram = this
            .ctx_field(abi::CTX_SRAM, t.ptr.into())?
            .into_pointer_value();
        let start = this.ctx_field(abi::CTX_CYCLES, t.i64.into())?;
        this.b.build_store(cycles, start)?;
        this.cycle_limit = this
            .ctx_field(abi::CTX_CYCLE_LIMIT, t.i64.into())?
            .into_int_value();
        Ok(this)
    }

    /// Translates the whole task body, then the shared exit blocks.
    pub(super) fn translate(mut self) -> Tr {
        self.check_sram()?;
        self.stmts(&self.task.body)?;
        self.return_ok()?;
        self.translate_fault_block()?;
        self.translate_fail_block()?;
        // Blocks left open after a `return` are unreachable.
        for block in self.function.get_basic_blocks() {
            if block.get_terminator().is_none() {
                self.b.position_at_end(block);
                self.b.build_unreachable()?;
            }
        }
        Ok(())
    }

    /// Stops the task unless SRAM holds every array (see `faults::FAULT_SRAM_TOO_SMALL`).
    fn check_sram(&mut self) -> Tr {
        let needed = self.kernel.sram_words();
        if needed == 0 {
            return Ok(());
        }
        let bytes = self
            .ctx_field(abi::CTX_SRAM_LEN, self.t.i32.into())?
            .into_int_value();
        let words =
            self.b
                .build_right_shift(bytes, self.t.i32.const_int(2, false), false, "words")?;
        let words = self.b.build_int_z_extend(words, self.t.i64, "")?;
        let needed = self.i64(i64::from(needed));
        let ok = self
            .b
            .build_int_compare(IntPredicate::UGE, words, needed, "")?;
        let array = self.i32(FAULT_SRAM_TOO_SMALL);
        self.branch_or_fault(ok, [array, needed, words])
    }

    /// Continues in a new block when `ok` (an i1) holds, else reports `(array, index, bound)`.
    pub(super) fn branch_or_fault(
        &mut self,
        ok: IntValue<'ctx>,
        report: [IntValue<'ctx>; 3],
    ) -> Tr {
        let next = self.block("ok");
        self.add_fault_incoming(report)?;
        self.b
            .build_conditional_branch(ok, next, self.fault.block)?;
        self.b.position_at_end(next);
        Ok(())
    }

    /// Jumps to the fault report now and continues in a fresh, unreachable block.
    pub(super) fn fault_now(&mut self, report: [IntValue<'ctx>; 3]) -> Tr {
        self.add_fault_incoming(report)?;
        self.b.build_unconditional_branch(self.fault.block)?;
        let rest = self.block("after_fault");
        self.b.position_at_end(rest);
        Ok(())
    }

    fn add_fault_incoming(&mut self, report: [IntValue<'ctx>; 3]) -> Tr {
        let here = self.current_block()?;
        for (phi, value) in self.fault.phis.iter().zip(report) {
            phi.add_incoming(&[(&value, here)]);
        }
        Ok(())
    }

    fn translate_fault_block(&mut self) -> Tr {
        self.b.position_at_end(self.fault.block);
        let [array, index, bound] = self
            .fault
            .phis
            .map(|phi| phi.as_basic_value().into_int_value());
        let status = self.runtime_call_raw(
            abi::CALLS_OUT_OF_BOUNDS,
            &[self.t.i32.into(), self.t.i64.into(), self.t.i64.into()],
            &[array.into(), index.into(), bound.into()],
        )?;
        // A runtime that wrongly answers STATUS_OK still stops the task.
        let is_ok = self
            .b
            .build_int_compare(IntPredicate::EQ, status, self.i32(0), "")?;
        let fallback = self.i32(abi::STATUS_OUT_OF_BOUNDS);
        let status = self.b.build_select(is_ok, fallback, status, "")?;
        self.b.build_return(Some(&status))?;
        Ok(())
    }

    fn translate_fail_block(&mut self) -> Tr {
        self.b.position_at_end(self.fail.block);
        let status = self.fail.phis[0].as_basic_value();
        self.b.build_return(Some(&status))?;
        Ok(())
    }

    /// Stores the cycle count and returns `STATUS_OK`; later code goes to a fresh block.
    pub(super) fn return_ok(&mut self) -> Tr {
        self.flush_cycles()?;
        self.b.build_return(Some(&self.i32(abi::STATUS_OK)))?;
        let rest = self.block("after_return");
        self.b.position_at_end(rest);
        Ok(())
    }

    /// Adds a compile-time number of cycles.
    pub(super) fn charge(&mut self, cycles: u64) -> Tr {
        if cycles == 0 {
            return Ok(());
        }
        let now = self
            .b
            .build_load(self.t.i64, self.cycles, "")?
            .into_int_value();
        let next = self
            .b
            .build_int_add(now, self.t.i64.const_int(cycles, false), "")?;
        self.b.build_store(self.cycles, next)?;
        Ok(())
    }

    /// Charges one loop iteration, and stops the activation with `STATUS_CYCLE_LIMIT` once it
    /// is past `ctx.cycle_limit`.
    pub(super) fn charge_iteration(&mut self) -> Tr {
        self.charge(wsel_ir::cost::loop_iteration_cycles())?;
        let now = self
            .b
            .build_load(self.t.i64, self.cycles, "")?
            .into_int_value();
        let over =
            self.b
                .build_int_compare(IntPredicate::UGT, now, self.cycle_limit, "over_limit")?;
        let status = self.i32(abi::STATUS_CYCLE_LIMIT);
        self.fail_if(over, status, "within_limit")
    }

    /// Returns `status` from the task when `failed` (an i1) holds, else continues in a new
    /// block named `next`.
    fn fail_if(&mut self, failed: IntValue<'ctx>, status: IntValue<'ctx>, next: &str) -> Tr {
        let next = self.block(next);
        let here = self.current_block()?;
        self.fail.phis[0].add_incoming(&[(&status, here)]);
        self.b
            .build_conditional_branch(failed, self.fail.block, next)?;
        self.b.position_at_end(next);
        Ok(())
    }

    /// Adds the cycles `plan` gives for the run-time length `len` (an i64 in `0..2^32`).
    pub(super) fn charge_len(&mut self, plan: &LengthCost, len: IntValue<'ctx>) -> Tr {
        if plan.is_zero() {
            return Ok(());
        }
        let per = self.t.i64.const_int(plan.per_element, false);
        let mut total = self.b.build_int_mul(len, per, "")?;
        for &(count, rate) in &plan.terms {
            let scaled = self
                .b
                .build_int_mul(len, self.t.i64.const_int(count, false), "")?;
            let rounded =
                self.b
                    .build_int_add(scaled, self.t.i64.const_int(rate - 1, false), "")?;
            let term =
                self.b
                    .build_int_unsigned_div(rounded, self.t.i64.const_int(rate, false), "")?;
            total = self.b.build_int_add(total, term, "")?;
        }
        let now = self
            .b
            .build_load(self.t.i64, self.cycles, "")?
            .into_int_value();
        let next = self.b.build_int_add(now, total, "")?;
        self.b.build_store(self.cycles, next)?;
        Ok(())
    }

    /// `pe.cycle`: the context's clock plus the cycles charged so far, low 32 bits.
    pub(super) fn clock(&mut self) -> Tr<BasicValueEnum<'ctx>> {
        let clock = self.ctx_field(abi::CTX_CLOCK, self.t.i64.into())?;
        let now = self.b.build_load(self.t.i64, self.cycles, "")?;
        let sum = self
            .b
            .build_int_add(clock.into_int_value(), now.into_int_value(), "")?;
        Ok(self.b.build_int_truncate(sum, self.t.i32, "")?.into())
    }

    fn flush_cycles(&mut self) -> Tr {
        let now = self.b.build_load(self.t.i64, self.cycles, "")?;
        let field = self.ctx_address(abi::CTX_CYCLES)?;
        self.b.build_store(field, now)?;
        Ok(())
    }

    /// Calls the runtime (`offset` into `RuntimeCalls`) with the cycle count stored first;
    /// returns from the task with the call's status if nonzero, else reloads the cycle count.
    pub(super) fn runtime_call(
        &mut self,
        offset: usize,
        params: &[BasicMetadataTypeEnum<'ctx>],
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> Tr {
        let status = self.runtime_call_raw(offset, params, args)?;
        let failed = self
            .b
            .build_int_compare(IntPredicate::NE, status, self.i32(0), "")?;
        self.fail_if(failed, status, "call_ok")?;
        let cycles = self.ctx_field(abi::CTX_CYCLES, self.t.i64.into())?;
        self.b.build_store(self.cycles, cycles)?;
        Ok(())
    }

    fn runtime_call_raw(
        &mut self,
        offset: usize,
        params: &[BasicMetadataTypeEnum<'ctx>],
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> Tr<IntValue<'ctx>> {
        self.flush_cycles()?;
        let calls = self
            .ctx_field(abi::CTX_CALLS, self.t.ptr.into())?
            .into_pointer_value();
        let slot = self.byte_offset(calls, self.i64(offset as i64))?;
        let callee = self
            .b
            .build_load(self.t.ptr, slot, "callee")?
            .into_pointer_value();
        let mut all_params = vec![self.t.ptr.into()];
        all_params.extend_from_slice(params);
        let fn_type: FunctionType<'ctx> = self.t.i32.fn_type(&all_params, false);
        let mut all_args = vec![self.ctx.into()];
        all_args.extend_from_slice(args);
        let call = self
            .b
            .build_indirect_call(fn_type, callee, &all_args, "status")?;
        call.try_as_basic_value()
            .basic()
            .map(BasicValueEnum::into_int_value)
            .ok_or_else(|| CodegenError::new("llvm: runtime call without a result"))
    }

    /// Calls a host function with `f32` arguments.
    pub(super) fn call_host(
        &mut self,
        func: HostFn,
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> Tr<BasicValueEnum<'ctx>> {
        let declaration = match self.module.get_function(func.symbol()) {
            Some(declaration) => declaration,
            None => {
                let params: Vec<BasicMetadataTypeEnum> =
                    (0..func.arity()).map(|_| self.t.f32.into()).collect();
                self.module.add_function(
                    func.symbol(),
                    self.t.f32.fn_type(&params, false),
                    Some(Linkage::External),
                )
            }
        };
        let call = self.b.build_call(declaration, args, "")?;
        call.try_as_basic_value()
            .basic()
            .ok_or_else(|| CodegenError::new("llvm: host call without a result"))
    }

    /// Calls an overloaded LLVM intrinsic.
    pub(super) fn intrinsic(
        &mut self,
        name: &str,
        types: &[BasicTypeEnum<'ctx>],
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> Tr<BasicValueEnum<'ctx>> {
        let declaration = inkwell::intrinsics::Intrinsic::find(name)
            .and_then(|intrinsic| intrinsic.get_declaration(self.module, types))
            .ok_or_else(|| CodegenError::new(format!("llvm: no intrinsic {name}")))?;
        let call = self.b.build_call(declaration, args, "")?;
        call.try_as_basic_value()
            .basic()
            .ok_or_else(|| CodegenError::new(format!("llvm: {name} without a result")))
    }

    /// Evaluates an index or length expression and widens it to i64 per its type.
    pub(super) fn index(&mut self, expr: &Expr) -> Tr<IntValue<'ctx>> {
        let ty = expr_ty(self.kernel, self.task, expr);
        let value = self.expr(expr)?.into_int_value();
        self.widen(ty, value)
    }

    pub(super) fn widen(&mut self, ty: ScalarTy, value: IntValue<'ctx>) -> Tr<IntValue<'ctx>> {
        Ok(match ty {
            ScalarTy::I32 => self.b.build_int_s_extend(value, self.t.i64, "")?,
            _ => self.b.build_int_z_extend(value, self.t.i64, "")?,
        })
    }

    /// Checks `index` (i64) against `array`'s length; gives the element's address.
    pub(super) fn element_address(
        &mut self,
        array: ArrayId,
        index: IntValue<'ctx>,
    ) -> Tr<PointerValue<'ctx>> {
        let len = self.i64(i64::from(self.kernel.array(array).len));
        let ok = self
            .b
            .build_int_compare(IntPredicate::ULT, index, len, "in_range")?;
        let id = self.i32(array.0);
        self.branch_or_fault(ok, [id, index, len])?;
        self.slice_base(array, index)
    }

    /// Checks `array[start .. start + len]` (i64 values) per `faults::slice_fault_index`.
    pub(super) fn check_slice(
        &mut self,
        array: ArrayId,
        start: IntValue<'ctx>,
        len: IntValue<'ctx>,
    ) -> Tr {
        let alen = self.i64(i64::from(self.kernel.array(array).len));
        let end = self.b.build_int_add(start, len, "end")?;
        let start_ok = self
            .b
            .build_int_compare(IntPredicate::ULE, start, alen, "")?;
        let len_ok = self.b.build_int_compare(IntPredicate::ULE, len, alen, "")?;
        let end_ok = self.b.build_int_compare(IntPredicate::SLE, end, alen, "")?;
        let ok = self.b.build_and(start_ok, len_ok, "")?;
        let ok = self.b.build_and(ok, end_ok, "")?;
        let next = self.block("slice_ok");
        let bad = self.block("slice_bad");
        self.b.build_conditional_branch(ok, next, bad)?;
        // The reported index: start if negative, start + len if len is negative, else the
        // first element past the end.
        self.b.position_at_end(bad);
        let zero = self.i64(0);
        let start_above = self
            .b
            .build_int_compare(IntPredicate::SGT, start, alen, "")?;
        let past_end = self
            .b
            .build_select(start_above, start, alen, "")?
            .into_int_value();
        let len_negative = self.b.build_int_compare(IntPredicate::SLT, len, zero, "")?;
        let index = self
            .b
            .build_select(len_negative, end, past_end, "")?
            .into_int_value();
        let start_negative = self
            .b
            .build_int_compare(IntPredicate::SLT, start, zero, "")?;
        let index = self
            .b
            .build_select(start_negative, start, index, "")?
            .into_int_value();
        let id = self.i32(array.0);
        self.add_fault_incoming([id, index, alen])?;
        self.b.build_unconditional_branch(self.fault.block)?;
        self.b.position_at_end(next);
        Ok(())
    }

    /// The address of element `start` (an i64 already checked) of `array`.
    pub(super) fn slice_base(
        &mut self,
        array: ArrayId,
        start: IntValue<'ctx>,
    ) -> Tr<PointerValue<'ctx>> {
        let offset = self.i64(i64::from(self.kernel.array(array).offset_words));
        let word = self.b.build_int_add(start, offset, "")?;
        let byte = self.b.build_int_mul(word, self.i64(4), "")?;
        self.byte_offset(self.sram, byte)
    }

    /// The SRAM byte offset of element `start` of `array`, as the i32 runtime calls take.
    pub(super) fn sram_offset(
        &mut self,
        array: ArrayId,
        start: IntValue<'ctx>,
    ) -> Tr<IntValue<'ctx>> {
        let offset = self.i64(i64::from(self.kernel.array(array).offset_words));
        let word = self.b.build_int_add(start, offset, "")?;
        let byte = self.b.build_int_mul(word, self.i64(4), "")?;
        Ok(self.b.build_int_truncate(byte, self.t.i32, "")?)
    }

    /// `base + i * 4` for an i64 element number `i`.
    pub(super) fn element_at(
        &mut self,
        base: PointerValue<'ctx>,
        i: IntValue<'ctx>,
    ) -> Tr<PointerValue<'ctx>> {
        let byte = self.b.build_int_mul(i, self.i64(4), "")?;
        self.byte_offset(base, byte)
    }

    fn byte_offset(
        &mut self,
        base: PointerValue<'ctx>,
        bytes: IntValue<'ctx>,
    ) -> Tr<PointerValue<'ctx>> {
        // SAFETY: a GEP over i8 only computes an address (no `inbounds`, so no assumption is
        // made about it); every dereference of the result is preceded by a bounds check.
        Ok(unsafe { self.b.build_gep(self.t.i8, base, &[bytes], "")? })
    }

    fn ctx_address(&mut self, offset: usize) -> Tr<PointerValue<'ctx>> {
        let offset = self.i64(offset as i64);
        self.byte_offset(self.ctx, offset)
    }

    /// Loads the context field at byte `offset`.
    pub(super) fn ctx_field(
        &mut self,
        offset: usize,
        ty: BasicTypeEnum<'ctx>,
    ) -> Tr<BasicValueEnum<'ctx>> {
        let address = self.ctx_address(offset)?;
        Ok(self.b.build_load(ty, address, "")?)
    }

    pub(super) fn block(&self, name: &str) -> BasicBlock<'ctx> {
        self.context.append_basic_block(self.function, name)
    }

    pub(super) fn current_block(&self) -> Tr<BasicBlock<'ctx>> {
        self.b
            .get_insert_block()
            .ok_or_else(|| CodegenError::new("llvm: builder not positioned"))
    }

    pub(super) fn i32(&self, value: u32) -> IntValue<'ctx> {
        self.t.i32.const_int(u64::from(value), false)
    }

    pub(super) fn i64(&self, value: i64) -> IntValue<'ctx> {
        self.t.i64.const_int(value as u64, true)
    }

    /// An i1 as the 0/1 i32 the IR's `bool` is.
    pub(super) fn bool_value(&mut self, flag: IntValue<'ctx>) -> Tr<BasicValueEnum<'ctx>> {
        Ok(self.b.build_int_z_extend(flag, self.t.i32, "")?.into())
    }

    /// A 0/1 (or any nonzero) i32 as an i1 condition.
    pub(super) fn truth(&mut self, value: BasicValueEnum<'ctx>) -> Tr<IntValue<'ctx>> {
        Ok(self
            .b
            .build_int_compare(IntPredicate::NE, value.into_int_value(), self.i32(0), "")?)
    }

    pub(super) fn llvm_ty(&self, ty: ScalarTy) -> BasicTypeEnum<'ctx> {
        llvm_ty(self.t, ty)
    }
}

/// The LLVM type holding a value of `ty`.
fn llvm_ty(t: Types<'_>, ty: ScalarTy) -> BasicTypeEnum<'_> {
    if ty.is_float() {
        t.f32.as_basic_type_enum()
    } else {
        t.i32.as_basic_type_enum()
    }
}

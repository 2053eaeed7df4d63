//! Statement translation to LLVM IR: one method per statement kind. Each statement first
//! charges its fixed cycles (`wsel_ir::cost::stmt_fixed_cycles`), exactly as the interpreter
//! does.

use inkwell::IntPredicate;
use inkwell::values::{BasicValueEnum, IntValue};
use wsel_abi as abi;
use wsel_ir::cost;
use wsel_ir::kernel::{AssignOp, Expr, LocalId, PortId, ScalarTy, Slice, Stmt, TaskId, VExpr};

use super::function::{Gen, Tr};
use crate::faults::FAULT_SLICE_LENGTH;

impl<'ctx> Gen<'_, 'ctx> {
    pub(super) fn stmts(&mut self, stmts: &[Stmt]) -> Tr {
        stmts.iter().try_for_each(|stmt| self.stmt(stmt))
    }

    fn stmt(&mut self, stmt: &Stmt) -> Tr {
        self.charge(cost::stmt_fixed_cycles(stmt, self.cost))?;
        match stmt {
            Stmt::SetLocal { local, value } => {
                let value = self.expr(value)?;
                let (slot, _) = self.locals[local.0 as usize];
                self.b.build_store(slot, value)?;
            }
            Stmt::Store {
                array,
                index,
                op,
                value,
            } => {
                let index = self.index(index)?;
                let value = self.expr(value)?;
                let address = self.element_address(*array, index)?;
                let elem = self.kernel.array(*array).elem;
                let stored = if *op == AssignOp::Set {
                    value
                } else {
                    let old = self.load(elem, address)?;
                    self.combine(*op, elem, old, value)?
                };
                self.b.build_store(address, stored)?;
            }
            Stmt::Vector { dst, op, value } => self.translate_vector(dst, *op, value)?,
            Stmt::For {
                local,
                lo,
                hi,
                body,
            } => self.translate_for(*local, lo, hi, body)?,
            Stmt::While { cond, body } => self.translate_while(cond, body)?,
            Stmt::If {
                cond,
                then_body,
                else_body,
            } => {
                let cond = self.expr(cond)?;
                let cond = self.truth(cond)?;
                let then_block = self.block("then");
                let else_block = self.block("else");
                let merge = self.block("merge");
                self.b
                    .build_conditional_branch(cond, then_block, else_block)?;
                self.b.position_at_end(then_block);
                self.stmts(then_body)?;
                self.b.build_unconditional_branch(merge)?;
                self.b.position_at_end(else_block);
                self.stmts(else_body)?;
                self.b.build_unconditional_branch(merge)?;
                self.b.position_at_end(merge);
            }
            Stmt::SendSlice { port, src, then } => {
                let (offset, len) = self.transfer(src)?;
                let i32t = self.t.i32.into();
                let args = [
                    self.i32(port.0).into(),
                    offset.into(),
                    len.into(),
                    self.task_or_none(*then).into(),
                ];
                self.runtime_call(abi::CALLS_SEND, &[i32t; 4], &args)?;
            }
            Stmt::SendScalar { port, value, then } => {
                let value = self.expr(value)?;
                let bits = self.bits(value)?;
                let i32t = self.t.i32.into();
                let args = [
                    self.i32(port.0).into(),
                    bits.into(),
                    self.task_or_none(*then).into(),
                ];
                self.runtime_call(abi::CALLS_SEND_SCALAR, &[i32t; 3], &args)?;
            }
            Stmt::Recv { port, dst, then } => self.translate_recv(*port, dst, *then)?,
            Stmt::Control { port, commands } => {
                let (port, payload) = crate::semantics::control_call(*port, commands);
                let i32t = self.t.i32.into();
                let args = [
                    self.i32(port).into(),
                    self.i32(payload).into(),
                    self.task_or_none(None).into(),
                ];
                self.runtime_call(abi::CALLS_SEND_SCALAR, &[i32t; 3], &args)?;
            }
            Stmt::Activate(task) => {
                let i32t = self.t.i32.into();
                let args = [self.i32(task.0).into()];
                self.runtime_call(abi::CALLS_ACTIVATE, &[i32t], &args)?;
            }
            Stmt::Return => self.return_ok()?,
            Stmt::CheckLength { len, expected } => {
                let len = self.index(len)?;
                let expected = self.index(expected)?;
                let ok =
                    self.b
                        .build_int_compare(IntPredicate::EQ, len, expected, "same_length")?;
                let id = self.i32(FAULT_SLICE_LENGTH);
                self.branch_or_fault(ok, [id, len, expected])?;
            }
        }
        Ok(())
    }

    /// `for local in lo..hi`: a hidden counter runs from `lo` while below `hi` (evaluated
    /// once); the local takes the counter's value at the start of every iteration.
    fn translate_for(&mut self, local: LocalId, lo: &Expr, hi: &Expr, body: &[Stmt]) -> Tr {
        let ty = self.task.locals[local.0 as usize].ty;
        let lo = self.expr(lo)?;
        let hi = self.expr(hi)?.into_int_value();
        let counter = self.b.build_alloca(self.t.i32, "counter")?;
        self.b.build_store(counter, lo)?;
        let header = self.block("for_header");
        let body_block = self.block("for_body");
        let exit = self.block("for_exit");
        self.b.build_unconditional_branch(header)?;

        self.b.position_at_end(header);
        let current = self.b.build_load(self.t.i32, counter, "")?.into_int_value();
        let predicate = if ty == ScalarTy::I32 {
            IntPredicate::SLT
        } else {
            IntPredicate::ULT
        };
        let more = self.b.build_int_compare(predicate, current, hi, "")?;
        self.b.build_conditional_branch(more, body_block, exit)?;

        self.b.position_at_end(body_block);
        self.charge_iteration()?;
        let (slot, _) = self.locals[local.0 as usize];
        self.b.build_store(slot, current)?;
        self.stmts(body)?;
        let current = self.b.build_load(self.t.i32, counter, "")?.into_int_value();
        let next = self.b.build_int_add(current, self.i32(1), "")?;
        self.b.build_store(counter, next)?;
        self.b.build_unconditional_branch(header)?;

        self.b.position_at_end(exit);
        Ok(())
    }

    /// `while cond`: the condition's cycles are charged at every test, including the last.
    fn translate_while(&mut self, cond: &Expr, body: &[Stmt]) -> Tr {
        let header = self.block("while_header");
        let body_block = self.block("while_body");
        let exit = self.block("while_exit");
        self.b.build_unconditional_branch(header)?;

        self.b.position_at_end(header);
        self.charge(cost::expr_cycles(cond, self.cost))?;
        let more = self.expr(cond)?;
        let more = self.truth(more)?;
        self.b.build_conditional_branch(more, body_block, exit)?;

        self.b.position_at_end(body_block);
        self.charge_iteration()?;
        self.stmts(body)?;
        self.b.build_unconditional_branch(header)?;

        self.b.position_at_end(exit);
        Ok(())
    }

    /// `dst op= value`: scalar parts, then every slice checked (destination first), then the
    /// per-length cycles, then the element loop in increasing index.
    fn translate_vector(&mut self, dst: &Slice, op: AssignOp, value: &VExpr) -> Tr {
        let start = self.index(&dst.start)?;
        let len = self.index(&dst.len)?;
        let prepared = self.prepare(value)?;
        self.check_slice(dst.array, start, len)?;
        self.check_sources(&prepared, len)?;
        let elem = self.kernel.array(dst.array).elem;
        let plan = wsel_ir::cost::vector_length_cost(op, value, elem, self.cost);
        self.charge_len(&plan, len)?;
        let base = self.slice_base(dst.array, start)?;

        let i = self.b.build_alloca(self.t.i64, "i")?;
        self.b.build_store(i, self.i64(0))?;
        let header = self.block("vector_header");
        let body = self.block("vector_body");
        let exit = self.block("vector_exit");
        self.b.build_unconditional_branch(header)?;

        self.b.position_at_end(header);
        let current = self.b.build_load(self.t.i64, i, "")?.into_int_value();
        let more = self
            .b
            .build_int_compare(IntPredicate::SLT, current, len, "")?;
        self.b.build_conditional_branch(more, body, exit)?;

        self.b.position_at_end(body);
        let new = self.element(&prepared, current)?;
        let address = self.element_at(base, current)?;
        let stored = if op == AssignOp::Set {
            new
        } else {
            let old = self.load(elem, address)?;
            self.combine(op, elem, old, new)?
        };
        self.b.build_store(address, stored)?;
        let next = self.b.build_int_add(current, self.i64(1), "")?;
        self.b.build_store(i, next)?;
        self.b.build_unconditional_branch(header)?;

        self.b.position_at_end(exit);
        Ok(())
    }

    fn translate_recv(&mut self, port: PortId, dst: &Slice, then: TaskId) -> Tr {
        let (offset, len) = self.transfer(dst)?;
        let i32t = self.t.i32.into();
        let args = [
            self.i32(port.0).into(),
            len.into(),
            offset.into(),
            self.i32(then.0).into(),
        ];
        self.runtime_call(abi::CALLS_RECV, &[i32t; 4], &args)
    }

    /// Evaluates and checks a send's or receive's slice; gives its SRAM byte offset and length
    /// as i32 values.
    fn transfer(&mut self, slice: &Slice) -> Tr<(IntValue<'ctx>, IntValue<'ctx>)> {
        let start = self.index(&slice.start)?;
        let len = self.index(&slice.len)?;
        self.check_slice(slice.array, start, len)?;
        let plan = wsel_ir::cost::transfer_length_cost();
        self.charge_len(&plan, len)?;
        let offset = self.sram_offset(slice.array, start)?;
        let len = self.b.build_int_truncate(len, self.t.i32, "")?;
        Ok((offset, len))
    }

    /// The 32-bit pattern of a scalar value, for sending.
    fn bits(&mut self, value: BasicValueEnum<'ctx>) -> Tr<IntValue<'ctx>> {
        Ok(match value {
            BasicValueEnum::FloatValue(float) => self
                .b
                .build_bit_cast(float, self.t.i32, "")?
                .into_int_value(),
            other => other.into_int_value(),
        })
    }

    fn task_or_none(&self, task: Option<TaskId>) -> IntValue<'ctx> {
        self.i32(task.map_or(abi::NO_TASK, |task| task.0))
    }
}

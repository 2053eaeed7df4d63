//! Statement translation: one method per statement kind. Each statement first charges its
//! fixed cycles (`wsel_ir::cost::stmt_fixed_cycles`), exactly as the interpreter does.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{BlockArg, InstBuilder, MemFlagsData, Value, types};
use wsel_abi as abi;
use wsel_ir::cost;
use wsel_ir::kernel::{AssignOp, Expr, LocalId, PortId, ScalarTy, Slice, Stmt, TaskId, VExpr};

use super::function::{RuntimeSigs, Tr, Translator, clif_ty};
use super::simd;
use crate::faults::FAULT_SLICE_LENGTH;

impl Translator<'_, '_> {
    pub(super) fn stmts(&mut self, stmts: &[Stmt]) -> Tr {
        stmts.iter().try_for_each(|stmt| self.stmt(stmt))
    }

    fn stmt(&mut self, stmt: &Stmt) -> Tr {
        self.charge(cost::stmt_fixed_cycles(stmt, self.cost));
        match stmt {
            Stmt::SetLocal { local, value } => {
                let value = self.expr(value)?;
                self.b.def_var(self.locals[local.0 as usize], value);
            }
            Stmt::Store {
                array,
                index,
                op,
                value,
            } => {
                let index = self.index(index)?;
                let value = self.expr(value)?;
                let address = self.element_address(*array, index);
                let elem = self.kernel.array(*array).elem;
                let stored = if *op == AssignOp::Set {
                    value
                } else {
                    let old = self.load(elem, address);
                    self.combine(*op, elem, old, value)
                };
                self.b
                    .ins()
                    .store(MemFlagsData::trusted(), stored, address, 0);
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
                let then_block = self.b.create_block();
                let else_block = self.b.create_block();
                let merge = self.b.create_block();
                self.b.ins().brif(cond, then_block, &[], else_block, &[]);
                self.b.switch_to_block(then_block);
                self.stmts(then_body)?;
                self.b.ins().jump(merge, &[]);
                self.b.switch_to_block(else_block);
                self.stmts(else_body)?;
                self.b.ins().jump(merge, &[]);
                self.b.switch_to_block(merge);
            }
            Stmt::SendSlice { port, src, then } => {
                let (offset, len) = self.transfer(src)?;
                let port = self.iconst32(port.0);
                let then = self.task_or_none(*then);
                self.runtime_call(abi::CALLS_SEND, sig_send, &[port, offset, len, then]);
            }
            Stmt::SendScalar { port, value, then } => {
                let value = self.expr(value)?;
                let bits = self.bits(value);
                let port = self.iconst32(port.0);
                let then = self.task_or_none(*then);
                self.runtime_call(abi::CALLS_SEND_SCALAR, sig_send_scalar, &[port, bits, then]);
            }
            Stmt::Recv { port, dst, then } => self.translate_recv(*port, dst, *then)?,
            Stmt::Control { port, commands } => {
                let (port, payload) = crate::semantics::control_call(*port, commands);
                let port = self.iconst32(port);
                let payload = self.iconst32(payload);
                let then = self.task_or_none(None);
                self.runtime_call(
                    abi::CALLS_SEND_SCALAR,
                    sig_send_scalar,
                    &[port, payload, then],
                );
            }
            Stmt::Activate(task) => {
                let task = self.iconst32(task.0);
                self.runtime_call(abi::CALLS_ACTIVATE, sig_activate, &[task]);
            }
            Stmt::Return => self.return_ok(),
            Stmt::CheckLength { len, expected } => {
                let len = self.index(len)?;
                let expected = self.index(expected)?;
                let ok = self.b.ins().icmp(IntCC::Equal, len, expected);
                let id = self.iconst32(FAULT_SLICE_LENGTH);
                self.branch_or_fault(ok, [id, len, expected]);
            }
        }
        Ok(())
    }

    /// `for local in lo..hi`: a hidden counter runs from `lo` while below `hi` (evaluated
    /// once); the local takes the counter's value at the start of every iteration.
    fn translate_for(&mut self, local: LocalId, lo: &Expr, hi: &Expr, body: &[Stmt]) -> Tr {
        let ty = self.task.locals[local.0 as usize].ty;
        let lo = self.expr(lo)?;
        let hi = self.expr(hi)?;
        let counter = self.b.declare_var(types::I32);
        self.b.def_var(counter, lo);
        let header = self.b.create_block();
        let body_block = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(header, &[]);

        self.b.switch_to_block(header);
        let current = self.b.use_var(counter);
        let cc = if ty == ScalarTy::I32 {
            IntCC::SignedLessThan
        } else {
            IntCC::UnsignedLessThan
        };
        let more = self.b.ins().icmp(cc, current, hi);
        self.b.ins().brif(more, body_block, &[], exit, &[]);

        self.b.switch_to_block(body_block);
        self.charge_iteration();
        self.b.def_var(self.locals[local.0 as usize], current);
        self.stmts(body)?;
        let current = self.b.use_var(counter);
        let next = self.b.ins().iadd_imm_s(current, 1);
        self.b.def_var(counter, next);
        self.b.ins().jump(header, &[]);

        self.b.switch_to_block(exit);
        Ok(())
    }

    /// `while cond`: the condition's cycles are charged at every test, including the last.
    fn translate_while(&mut self, cond: &Expr, body: &[Stmt]) -> Tr {
        let header = self.b.create_block();
        let body_block = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(header, &[]);

        self.b.switch_to_block(header);
        self.charge(cost::expr_cycles(cond, self.cost));
        let more = self.expr(cond)?;
        self.b.ins().brif(more, body_block, &[], exit, &[]);

        self.b.switch_to_block(body_block);
        self.charge_iteration();
        self.stmts(body)?;
        self.b.ins().jump(header, &[]);

        self.b.switch_to_block(exit);
        Ok(())
    }

    /// `dst op= value`: scalar parts, then every slice checked (destination first), then the
    /// per-length cycles, then the element loop in increasing index.
    fn translate_vector(&mut self, dst: &Slice, op: AssignOp, value: &VExpr) -> Tr {
        let start = self.index(&dst.start)?;
        let len = self.index(&dst.len)?;
        let prepared = self.prepare(value)?;
        self.check_slice(dst.array, start, len);
        self.check_sources(&prepared, len);
        let elem = self.kernel.array(dst.array).elem;
        let plan = wsel_ir::cost::vector_length_cost(op, value, elem, self.cost);
        self.charge_len(&plan, len);
        let base = self.slice_base(dst.array, start);
        let first = if simd::eligible(elem, &prepared) {
            self.translate_vector_lanes(dst.array, start, len, op, &prepared, base)
        } else {
            self.b.ins().iconst(types::I64, 0)
        };

        // for i in first..len, tested at the bottom.
        let body = self.b.create_block();
        let exit = self.b.create_block();
        let i = self.b.append_block_param(body, types::I64);
        let any = self.b.ins().icmp(IntCC::SignedLessThan, first, len);
        self.b
            .ins()
            .brif(any, body, &[BlockArg::Value(first)], exit, &[]);

        self.b.switch_to_block(body);
        // A compound assignment canonicalises its own result, so the value may stay raw.
        let raw = op != AssignOp::Set;
        let new = self.element(&prepared, i, raw)?;
        let address = self.element_at(base, i);
        let stored = if op == AssignOp::Set {
            new
        } else {
            let old = self.load(elem, address);
            self.combine(op, elem, old, new)
        };
        self.b
            .ins()
            .store(MemFlagsData::trusted(), stored, address, 0);
        let next = self.b.ins().iadd_imm_s(i, 1);
        let more = self.b.ins().icmp(IntCC::SignedLessThan, next, len);
        self.b
            .ins()
            .brif(more, body, &[BlockArg::Value(next)], exit, &[]);

        self.b.switch_to_block(exit);
        Ok(())
    }

    fn translate_recv(&mut self, port: PortId, dst: &Slice, then: TaskId) -> Tr {
        let (offset, len) = self.transfer(dst)?;
        let port = self.iconst32(port.0);
        let then = self.iconst32(then.0);
        self.runtime_call(abi::CALLS_RECV, sig_recv, &[port, len, offset, then]);
        Ok(())
    }

    /// Evaluates and checks a send's or receive's slice; gives its SRAM byte offset and length
    /// as i32 values.
    fn transfer(&mut self, slice: &Slice) -> Tr<(Value, Value)> {
        let start = self.index(&slice.start)?;
        let len = self.index(&slice.len)?;
        self.check_slice(slice.array, start, len);
        let plan = wsel_ir::cost::transfer_length_cost();
        self.charge_len(&plan, len);
        let offset = self.sram_offset(slice.array, start);
        let len = self.b.ins().ireduce(types::I32, len);
        Ok((offset, len))
    }

    /// The 32-bit pattern of a scalar value, for sending.
    fn bits(&mut self, value: Value) -> Value {
        if self.b.func.dfg.value_type(value) == clif_ty(ScalarTy::F32) {
            self.b.ins().bitcast(types::I32, MemFlagsData::new(), value)
        } else {
            value
        }
    }

    fn task_or_none(&mut self, task: Option<TaskId>) -> Value {
        self.iconst32(task.map_or(abi::NO_TASK, |task| task.0))
    }
}

fn sig_send(sigs: &RuntimeSigs) -> cranelift_codegen::ir::SigRef {
    sigs.send
}

fn sig_send_scalar(sigs: &RuntimeSigs) -> cranelift_codegen::ir::SigRef {
    sigs.send_scalar
}

fn sig_recv(sigs: &RuntimeSigs) -> cranelift_codegen::ir::SigRef {
    sigs.recv
}

fn sig_activate(sigs: &RuntimeSigs) -> cranelift_codegen::ir::SigRef {
    sigs.activate
}

//! Statement execution for the interpreter: one method per statement kind, each charging the
//! statement's fixed cycles before it runs and its per-length cycles once its slices are
//! checked.

use wsel_ir::cost;
use wsel_ir::kernel::{AssignOp, BinaryOp, ScalarTy, Slice, Stmt, TaskId, VExpr};

use super::costs::{BlockCosts, StmtCosts};
use super::expr::Prepared;
use super::frame::{Frame, Halt, Step};
use crate::check::expr_ty;
use crate::faults::FAULT_SLICE_LENGTH;
use crate::semantics;

impl Frame<'_> {
    /// Runs `stmts`, whose fixed cycles `costs` holds.
    pub(super) fn exec_block(&mut self, stmts: &[Stmt], costs: &BlockCosts) -> Step {
        stmts
            .iter()
            .zip(&costs.0)
            .try_for_each(|(stmt, costs)| self.exec(stmt, costs))
    }

    fn exec(&mut self, stmt: &Stmt, costs: &StmtCosts) -> Step {
        self.charge(costs.fixed);
        match stmt {
            Stmt::SetLocal { local, value } => {
                self.locals[local.0 as usize] = self.eval(value)?;
                Ok(())
            }
            Stmt::Store {
                array,
                index,
                op,
                value,
            } => {
                let index = self.eval_index(index)?;
                let value = self.eval(value)?;
                let word = self.element(*array, index)?;
                let elem = self.kernel.array(*array).elem;
                let new = semantics::combine(*op, elem, self.read(word), value)
                    .map_err(|fault| self.div_by_zero(fault))?;
                self.write(word, new);
                Ok(())
            }
            Stmt::Vector { dst, op, value } => self.exec_vector(dst, *op, value),
            Stmt::CheckLength { len, expected } => {
                let len = self.eval_index(len)?;
                let expected = self.eval_index(expected)?;
                if len == expected {
                    Ok(())
                } else {
                    Err(self.report(FAULT_SLICE_LENGTH, len, expected as u64))
                }
            }
            Stmt::For {
                local,
                lo,
                hi,
                body,
            } => {
                let ty = self.task.locals[local.0 as usize].ty;
                let lo = self.eval(lo)?;
                let hi = self.eval(hi)?;
                let mut counter = lo;
                while less_than(ty, counter, hi) {
                    self.charge_iteration()?;
                    self.locals[local.0 as usize] = counter;
                    self.exec_block(body, &costs.bodies[0])?;
                    counter = counter.wrapping_add(1);
                }
                Ok(())
            }
            Stmt::While { cond, body } => loop {
                self.charge(costs.cond);
                if self.eval(cond)? == 0 {
                    return Ok(());
                }
                self.charge_iteration()?;
                self.exec_block(body, &costs.bodies[0])?;
            },
            Stmt::If {
                cond,
                then_body,
                else_body,
            } => {
                if self.eval(cond)? != 0 {
                    self.exec_block(then_body, &costs.bodies[0])
                } else {
                    self.exec_block(else_body, &costs.bodies[1])
                }
            }
            Stmt::SendSlice { port, src, then } => {
                let (offset, len) = self.transfer(src)?;
                let then = task_or_none(*then);
                self.runtime(|ctx, calls| {
                    // SAFETY: the runtime's table is valid; `ctx` is passed through unchanged.
                    unsafe { (calls.send)(ctx, port.0, offset, len, then) }
                })
            }
            Stmt::SendScalar { port, value, then } => {
                let value = self.eval(value)?;
                let then = task_or_none(*then);
                self.runtime(|ctx, calls| {
                    // SAFETY: as above.
                    unsafe { (calls.send_scalar)(ctx, port.0, value, then) }
                })
            }
            Stmt::Recv { port, dst, then } => {
                let (offset, len) = self.transfer(dst)?;
                self.runtime(|ctx, calls| {
                    // SAFETY: as above.
                    unsafe { (calls.recv)(ctx, port.0, len, offset, then.0) }
                })
            }
            Stmt::Control { port, commands } => {
                let (port, payload) = crate::semantics::control_call(*port, commands);
                self.runtime(|ctx, calls| {
                    // SAFETY: as above.
                    unsafe { (calls.send_scalar)(ctx, port, payload, wsel_abi::NO_TASK) }
                })
            }
            Stmt::Activate(task) => self.runtime(|ctx, calls| {
                // SAFETY: as above.
                unsafe { (calls.activate)(ctx, task.0) }
            }),
            Stmt::Return => Err(Halt::Return),
        }
    }

    /// `dst op= value`: bounds first (the destination, then each source slice in order),
    /// then the elements in increasing index.
    fn exec_vector(&mut self, dst: &Slice, op: AssignOp, value: &VExpr) -> Step {
        let start = self.eval_index(&dst.start)?;
        let len = self.eval_index(&dst.len)?;
        let prepared = self.prepare(value)?;
        let base = self.slice(dst.array, start, len)?;
        self.check_sources(&prepared, len)?;
        let elem = self.kernel.array(dst.array).elem;
        self.charge(cost::vector_cycles(op, value, elem, len as u64, self.cost));
        if let Some(scaled) = ScalarBySlice::of(&prepared) {
            return self.exec_scaled(base, op, elem, scaled, len as usize);
        }
        for i in 0..len as usize {
            let new = self.eval_element(&prepared, i)?;
            let new = semantics::combine(op, elem, self.read(base + i), new)
                .map_err(|fault| self.div_by_zero(fault))?;
            self.write(base + i, new);
        }
        Ok(())
    }

    /// [`Frame::exec_vector`]'s element loop for a value of one scalar and one slice (a
    /// dense layer's `acc[..] += x * w[..]`): the same operations on the same elements in the
    /// same order, without walking the prepared tree at every element.
    fn exec_scaled(
        &mut self,
        base: usize,
        op: AssignOp,
        elem: ScalarTy,
        scaled: ScalarBySlice,
        len: usize,
    ) -> Step {
        let ScalarBySlice {
            op: by,
            ty,
            value,
            source,
        } = scaled;
        for i in 0..len {
            let new = semantics::binary(by, ty, value, self.read(source + i))
                .map_err(|fault| self.div_by_zero(fault))?;
            let new = semantics::combine(op, elem, self.read(base + i), new)
                .map_err(|fault| self.div_by_zero(fault))?;
            self.write(base + i, new);
        }
        Ok(())
    }

    fn check_sources(&mut self, prepared: &Prepared, len: i64) -> Step {
        prepared.try_for_each_source(&mut |array, start| self.slice(array, start, len).map(|_| ()))
    }

    /// Evaluates and checks a send's or receive's slice; gives its byte offset and length.
    fn transfer(&mut self, slice: &Slice) -> Step<(u32, u32)> {
        let start = self.eval_index(&slice.start)?;
        let len = self.eval_index(&slice.len)?;
        let word = self.slice(slice.array, start, len)?;
        self.charge(cost::transfer_issue_cycles(len as u64));
        Ok(((word * 4) as u32, len as u32))
    }

    /// Evaluates an index or length expression, widened per its type.
    pub(super) fn eval_index(&mut self, expr: &wsel_ir::kernel::Expr) -> Step<i64> {
        let ty = expr_ty(self.kernel, self.task, expr);
        Ok(semantics::widen(ty, self.eval(expr)?))
    }
}

/// A prepared vector value `value op source[i]`: a scalar, then a slice's elements.
struct ScalarBySlice {
    op: BinaryOp,
    ty: ScalarTy,
    value: u32,
    /// The SRAM word of the slice's element 0 (checked).
    source: usize,
}

impl ScalarBySlice {
    /// `prepared` in this form, unless the scalar alone decides it (`false && ..`), as
    /// [`Frame::eval_element`] would not read the slice then.
    fn of(prepared: &Prepared) -> Option<ScalarBySlice> {
        let Prepared::Binary { op, ty, lhs, rhs } = prepared else {
            return None;
        };
        match (&**lhs, &**rhs) {
            (Prepared::Value(value), Prepared::Elem { base, .. })
                if super::expr::short_circuit(*op, *ty, *value).is_none() =>
            {
                Some(ScalarBySlice {
                    op: *op,
                    ty: *ty,
                    value: *value,
                    source: *base,
                })
            }
            _ => None,
        }
    }
}

fn less_than(ty: ScalarTy, a: u32, b: u32) -> bool {
    match ty {
        ScalarTy::I32 => (a as i32) < (b as i32),
        _ => a < b,
    }
}

fn task_or_none(task: Option<TaskId>) -> u32 {
    task.map_or(wsel_abi::NO_TASK, |task| task.0)
}

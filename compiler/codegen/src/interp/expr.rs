//! Expression evaluation for the interpreter: scalar expressions, and the element-wise
//! expressions of vector statements (whose scalar parts are evaluated once, up front).

use wsel_ir::cost;
use wsel_ir::kernel::{ArrayId, BinaryOp, Expr, ScalarTy, VExpr};

use super::frame::{Frame, Halt, Step};
use crate::prepared::PrepareLeaves;
use crate::semantics;

/// A vector statement's value with its scalar parts evaluated: values, slice starts and the
/// SRAM word of each slice's element 0.
pub(super) type Prepared = crate::prepared::Prepared<u32, i64, usize>;

impl Frame<'_> {
    pub(super) fn eval(&mut self, expr: &Expr) -> Step<u32> {
        match expr {
            Expr::Const(c) => Ok(semantics::constant(c.ty, c.bits)),
            Expr::Local(local) => Ok(self.locals[local.0 as usize]),
            Expr::Coord(coord) => Ok(self.coord(*coord)),
            Expr::Load { array, index } => {
                let index = self.eval_index(index)?;
                let word = self.element(*array, index)?;
                Ok(self.read(word))
            }
            Expr::Unary { op, ty, operand } => {
                let a = self.eval(operand)?;
                Ok(semantics::unary(*op, *ty, a))
            }
            Expr::Binary { op, ty, lhs, rhs } => {
                let a = self.eval(lhs)?;
                if let Some(value) = short_circuit(*op, *ty, a) {
                    return Ok(value);
                }
                let b = self.eval(rhs)?;
                semantics::binary(*op, *ty, a, b).map_err(|fault| self.div_by_zero(fault))
            }
            Expr::Cast { from, to, value } => {
                let a = self.eval(value)?;
                Ok(semantics::cast(*from, *to, a))
            }
            Expr::Math { func, ty, arg } => {
                let a = self.eval(arg)?;
                Ok(semantics::math(*func, *ty, a))
            }
            Expr::Reduce { op, ty, src } => {
                let start = self.eval_index(&src.start)?;
                let len = self.eval_index(&src.len)?;
                let base = self.slice(src.array, start, len)?;
                self.charge(cost::reduce_cycles(*ty, len as u64, self.cost));
                if len == 0 {
                    return Ok(semantics::reduce_empty(*op, *ty));
                }
                let fold = semantics::reduce_op(*op);
                let mut acc = self.read(base);
                for i in 1..len as usize {
                    let x = self.read(base + i);
                    acc = semantics::binary(fold, *ty, acc, x)
                        .map_err(|fault| self.div_by_zero(fault))?;
                }
                Ok(acc)
            }
            Expr::Select {
                cond,
                on_true,
                on_false,
                ..
            } => {
                let c = self.eval(cond)?;
                let a = self.eval(on_true)?;
                let b = self.eval(on_false)?;
                Ok(semantics::select(c, a, b))
            }
        }
    }
    pub(super) fn prepare(&mut self, value: &VExpr) -> Step<Prepared> {
        crate::prepared::prepare(self, value)
    }

    /// The value of element `i`; every slice in `prepared` has been checked.
    pub(super) fn eval_element(&mut self, prepared: &Prepared, i: usize) -> Step<u32> {
        match prepared {
            Prepared::Value(bits) => Ok(*bits),
            Prepared::Elem { base, .. } => Ok(self.read(base + i)),
            Prepared::Unary { op, ty, operand } => {
                let a = self.eval_element(operand, i)?;
                Ok(semantics::unary(*op, *ty, a))
            }
            Prepared::Binary { op, ty, lhs, rhs } => {
                let a = self.eval_element(lhs, i)?;
                if let Some(value) = short_circuit(*op, *ty, a) {
                    return Ok(value);
                }
                let b = self.eval_element(rhs, i)?;
                semantics::binary(*op, *ty, a, b).map_err(|fault| self.div_by_zero(fault))
            }
            Prepared::Cast { from, to, value } => {
                let a = self.eval_element(value, i)?;
                Ok(semantics::cast(*from, *to, a))
            }
            Prepared::Math { func, ty, arg } => {
                let a = self.eval_element(arg, i)?;
                Ok(semantics::math(*func, *ty, a))
            }
            Prepared::Select {
                cond,
                on_true,
                on_false,
                ..
            } => {
                let c = self.eval_element(cond, i)?;
                let a = self.eval_element(on_true, i)?;
                let b = self.eval_element(on_false, i)?;
                Ok(semantics::select(c, a, b))
            }
        }
    }
}

/// The value of `a && b` or `a || b` on `bool` when `a` alone decides it.
pub(super) fn short_circuit(op: BinaryOp, ty: ScalarTy, a: u32) -> Option<u32> {
    match (op, ty, a) {
        (BinaryOp::And, ScalarTy::Bool, 0) => Some(0),
        (BinaryOp::Or, ScalarTy::Bool, 1) => Some(1),
        _ => None,
    }
}

impl PrepareLeaves for Frame<'_> {
    type Value = u32;
    type Start = i64;
    type Base = usize;
    type Error = Halt;

    fn scalar(&mut self, expr: &Expr) -> Step<u32> {
        self.eval(expr)
    }

    fn elem(&mut self, array: ArrayId, start: &Expr) -> Step<(i64, usize)> {
        let start = self.eval_index(start)?;
        let info = self.kernel.array(array);
        Ok((start, (i64::from(info.offset_words) + start) as usize))
    }
}

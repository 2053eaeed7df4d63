//! Expression evaluation for the interpreter: scalar expressions, and the element-wise
//! expressions of vector statements (whose scalar parts are evaluated once, up front).

use wsel_ir::cost;
use wsel_ir::kernel::{ArrayId, BinaryOp, Expr, MathFn, ScalarTy, UnaryOp, VExpr};

use super::frame::{Frame, Step};
use crate::semantics;

/// A vector statement's value with its scalar parts evaluated: what is left to compute per
/// element.
pub(super) enum Prepared {
    Value(u32),
    Elem {
        array: ArrayId,
        start: i64,
        /// The SRAM word of element 0 (valid once the slice is checked).
        base: usize,
    },
    Unary {
        op: UnaryOp,
        ty: ScalarTy,
        operand: Box<Prepared>,
    },
    Binary {
        op: BinaryOp,
        ty: ScalarTy,
        lhs: Box<Prepared>,
        rhs: Box<Prepared>,
    },
    Cast {
        from: ScalarTy,
        to: ScalarTy,
        value: Box<Prepared>,
    },
    Math {
        func: MathFn,
        ty: ScalarTy,
        arg: Box<Prepared>,
    },
}

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
        }
    }

    /// Evaluates the scalar parts of `value` in order (left to right, outside in).
    pub(super) fn prepare(&mut self, value: &VExpr) -> Step<Prepared> {
        Ok(match value {
            VExpr::Scalar(expr) => Prepared::Value(self.eval(expr)?),
            VExpr::Elem { array, start } => {
                let start = self.eval_index(start)?;
                let info = self.kernel.array(*array);
                Prepared::Elem {
                    array: *array,
                    start,
                    base: (i64::from(info.offset_words) + start) as usize,
                }
            }
            VExpr::Unary { op, ty, operand } => Prepared::Unary {
                op: *op,
                ty: *ty,
                operand: Box::new(self.prepare(operand)?),
            },
            VExpr::Binary { op, ty, lhs, rhs } => {
                let lhs = Box::new(self.prepare(lhs)?);
                let rhs = Box::new(self.prepare(rhs)?);
                Prepared::Binary {
                    op: *op,
                    ty: *ty,
                    lhs,
                    rhs,
                }
            }
            VExpr::Cast { from, to, value } => Prepared::Cast {
                from: *from,
                to: *to,
                value: Box::new(self.prepare(value)?),
            },
            VExpr::Math { func, ty, arg } => Prepared::Math {
                func: *func,
                ty: *ty,
                arg: Box::new(self.prepare(arg)?),
            },
        })
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
        }
    }
}

/// The value of `a && b` or `a || b` on `bool` when `a` alone decides it.
fn short_circuit(op: BinaryOp, ty: ScalarTy, a: u32) -> Option<u32> {
    match (op, ty, a) {
        (BinaryOp::And, ScalarTy::Bool, 0) => Some(0),
        (BinaryOp::Or, ScalarTy::Bool, 1) => Some(1),
        _ => None,
    }
}

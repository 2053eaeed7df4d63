//! The cycle cost of executing kernel IR, defined once for every backend.
//!
//! A task's cost is the sum, over every statement it executes, of that statement's *fixed*
//! cost (known at compile time, [`stmt_fixed_cycles`]) and, for statements that touch a
//! slice, a *per-length* cost computed from the slice length at run time
//! ([`vector_cycles`], [`reduce_cycles`], [`transfer_issue_cycles`], each defined through a
//! [`LengthCost`] that compiled code evaluates). The interpreter, the Cranelift backend and
//! the LLVM backend all charge exactly these numbers, so their cycle counts are identical.
//!
//! The model, per PE:
//! - scalar work costs one cycle per operation node (load, arithmetic, compare, cast, store,
//!   local assignment); a math function costs [`CostModel::math_cycles`];
//! - a loop costs one cycle per iteration for its counter and test, plus its body;
//! - a vector statement streams its elements through the PE's SIMD units at the target's
//!   throughput: `ceil(len × ops / rate)` cycles per class of operation, where `dst += s * x`
//!   (and `-=`) is one fused multiply-add per element;
//! - a reduction is a vector add (or min/max) over the slice;
//! - `select` costs one cycle as a scalar operation and, element-wise, one add-class
//!   operation per element (a blend), like a comparison;
//! - issuing a send or a receive costs one cycle; the wavelets' movement is timed by the
//!   fabric, not here.

use serde::{Deserialize, Serialize};

use crate::kernel::{AssignOp, BinaryOp, Expr, ScalarTy, Stmt, UnaryOp, VExpr};

/// Per-PE throughputs, from the target description (elements per cycle).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CostModel {
    pub f32_add_per_cycle: u32,
    pub f32_mul_per_cycle: u32,
    pub f32_fma_per_cycle: u32,
    pub f16_add_per_cycle: u32,
    pub f16_mul_per_cycle: u32,
    pub f16_fma_per_cycle: u32,
    /// Cycles of one scalar or per-element math function (exp, log, sqrt, tanh) or division.
    pub math_cycles: u32,
}

impl CostModel {
    /// The WSE-2 throughputs (fp16 add/mul/fma 4 per cycle, fp32 add 2, fp32 fma 1; fp32 mul
    /// is taken equal to add), with 8 cycles per math function.
    pub const WSE2_LIKE: CostModel = CostModel {
        f32_add_per_cycle: 2,
        f32_mul_per_cycle: 2,
        f32_fma_per_cycle: 1,
        f16_add_per_cycle: 4,
        f16_mul_per_cycle: 4,
        f16_fma_per_cycle: 4,
        math_cycles: 8,
    };

    fn rate(&self, class: OpClass, ty: ScalarTy) -> u64 {
        let rate = match (class, ty) {
            (OpClass::Add, ScalarTy::F16) => self.f16_add_per_cycle,
            (OpClass::Mul, ScalarTy::F16) => self.f16_mul_per_cycle,
            (OpClass::Fma, ScalarTy::F16) => self.f16_fma_per_cycle,
            (OpClass::Mul, _) => self.f32_mul_per_cycle,
            (OpClass::Fma, _) => self.f32_fma_per_cycle,
            // Integer and f32 add-class work share the f32 add rate.
            (OpClass::Add, _) => self.f32_add_per_cycle,
        };
        u64::from(rate.max(1))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OpClass {
    Add,
    Mul,
    Fma,
}

/// The fixed cycles charged each time `stmt` executes, excluding nested statement bodies and
/// excluding the per-length part of vector statements, reductions and transfers.
pub fn stmt_fixed_cycles(stmt: &Stmt, model: &CostModel) -> u64 {
    match stmt {
        Stmt::SetLocal { value, .. } => 1 + expr_cycles(value, model),
        Stmt::Store {
            index, op, value, ..
        } => {
            let combine = u64::from(*op != AssignOp::Set);
            1 + combine + expr_cycles(index, model) + expr_cycles(value, model)
        }
        Stmt::Vector { dst, value, .. } => {
            expr_cycles(&dst.start, model)
                + expr_cycles(&dst.len, model)
                + vexpr_scalar_cycles(value, model)
        }
        // The bounds are evaluated once; each iteration's cost is `loop_iteration_cycles`.
        Stmt::For { lo, hi, .. } => 1 + expr_cycles(lo, model) + expr_cycles(hi, model),
        Stmt::While { .. } => 0,
        Stmt::If { cond, .. } => 1 + expr_cycles(cond, model),
        Stmt::SendSlice { src, .. } => {
            1 + expr_cycles(&src.start, model) + expr_cycles(&src.len, model)
        }
        Stmt::SendScalar { value, .. } => 1 + expr_cycles(value, model),
        Stmt::Recv { dst, .. } => 1 + expr_cycles(&dst.start, model) + expr_cycles(&dst.len, model),
        Stmt::Activate(_) | Stmt::Control { .. } | Stmt::Return => 1,
        Stmt::CheckLength { .. } => 0,
    }
}

/// Cycles charged per iteration of a loop for its counter and test (a `while` loop charges
/// its condition's cost on every test, including the last, failing one).
pub fn loop_iteration_cycles() -> u64 {
    1
}

/// Cycles of evaluating a scalar expression once.
pub fn expr_cycles(expr: &Expr, model: &CostModel) -> u64 {
    match expr {
        Expr::Const(_) | Expr::Local(_) | Expr::Coord(_) => 0,
        Expr::Load { index, .. } => 1 + expr_cycles(index, model),
        Expr::Unary { operand, .. } => 1 + expr_cycles(operand, model),
        Expr::Binary { op, lhs, rhs, .. } => {
            let own = if *op == BinaryOp::Div || *op == BinaryOp::Rem {
                u64::from(model.math_cycles)
            } else {
                1
            };
            own + expr_cycles(lhs, model) + expr_cycles(rhs, model)
        }
        Expr::Cast { value, .. } => 1 + expr_cycles(value, model),
        Expr::Math { arg, .. } => u64::from(model.math_cycles) + expr_cycles(arg, model),
        // The slice bounds; the fold itself is `reduce_cycles`.
        Expr::Reduce { src, .. } => expr_cycles(&src.start, model) + expr_cycles(&src.len, model),
        Expr::Select {
            cond,
            on_true,
            on_false,
            ..
        } => {
            1 + expr_cycles(cond, model)
                + expr_cycles(on_true, model)
                + expr_cycles(on_false, model)
        }
    }
}

/// Cycles as a function of a length known only at run time:
/// `Σ ceil(len × count / rate) + len × per_element`. Compiled code evaluates it cheaply; the
/// `*_cycles` functions below are defined through it, so both agree by construction.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LengthCost {
    /// `(count, rate)` pairs, `count >= 1`, `rate >= 1`.
    pub terms: Vec<(u64, u64)>,
    pub per_element: u64,
}

impl LengthCost {
    /// The cycles for `len` elements.
    pub fn eval(&self, len: u64) -> u64 {
        self.terms
            .iter()
            .map(|&(count, rate)| (len * count).div_ceil(rate))
            .sum::<u64>()
            + len * self.per_element
    }

    pub fn is_zero(&self) -> bool {
        self.terms.is_empty() && self.per_element == 0
    }
}

/// The per-length cycles of a vector statement `dst op= value` over `len` elements of `ty`.
pub fn vector_cycles(
    op: AssignOp,
    value: &VExpr,
    ty: ScalarTy,
    len: u64,
    model: &CostModel,
) -> u64 {
    vector_length_cost(op, value, ty, model).eval(len)
}

/// The per-length cost of a vector statement `dst op= value` over elements of `ty`.
pub fn vector_length_cost(
    op: AssignOp,
    value: &VExpr,
    ty: ScalarTy,
    model: &CostModel,
) -> LengthCost {
    let mut counts = ElementOps::default();
    let fused = match (op, value) {
        // dst += a * b and dst -= a * b: one fused multiply-add per element.
        (
            AssignOp::Add | AssignOp::Sub,
            VExpr::Binary {
                op: BinaryOp::Mul,
                lhs,
                rhs,
                ..
            },
        ) => {
            counts.fma += 1;
            counts.count(lhs);
            counts.count(rhs);
            true
        }
        _ => false,
    };
    if !fused {
        counts.count(value);
        match op {
            AssignOp::Set => counts.add += u64::from(counts.is_empty()), // a plain copy is a move
            AssignOp::Add | AssignOp::Sub => counts.add += 1,
            AssignOp::Mul => counts.mul += 1,
            AssignOp::Div => counts.heavy += 1,
        }
    }
    counts.length_cost(ty, model)
}

/// The per-length cycles of folding `len` elements of `ty` with a reduction.
pub fn reduce_cycles(ty: ScalarTy, len: u64, model: &CostModel) -> u64 {
    reduce_length_cost(ty, model).eval(len)
}

/// The per-length cost of a reduction over elements of `ty`: a vector add.
pub fn reduce_length_cost(ty: ScalarTy, model: &CostModel) -> LengthCost {
    LengthCost {
        terms: vec![(1, model.rate(OpClass::Add, ty))],
        per_element: 0,
    }
}

/// The per-length cycles of issuing a send or receive of `len` wavelets: none — issuing costs
/// its fixed cycle, and the fabric times the wavelets themselves.
pub fn transfer_issue_cycles(len: u64) -> u64 {
    transfer_length_cost().eval(len)
}

/// The per-length cost of issuing a transfer (zero; see [`transfer_issue_cycles`]).
pub fn transfer_length_cost() -> LengthCost {
    LengthCost::default()
}

/// Operation counts per element of a vector expression, by class.
#[derive(Debug, Default)]
struct ElementOps {
    add: u64,
    mul: u64,
    fma: u64,
    heavy: u64,
}

impl ElementOps {
    fn is_empty(&self) -> bool {
        self.add == 0 && self.mul == 0 && self.fma == 0 && self.heavy == 0
    }

    fn count(&mut self, value: &VExpr) {
        match value {
            VExpr::Scalar(_) | VExpr::Elem { .. } => {}
            VExpr::Unary { op, operand, .. } => {
                match op {
                    UnaryOp::Neg | UnaryOp::Not => self.add += 1,
                }
                self.count(operand);
            }
            VExpr::Binary { op, lhs, rhs, .. } => {
                match op {
                    BinaryOp::Mul => self.mul += 1,
                    BinaryOp::Div | BinaryOp::Rem => self.heavy += 1,
                    _ => self.add += 1,
                }
                self.count(lhs);
                self.count(rhs);
            }
            VExpr::Cast { value, .. } => {
                self.add += 1;
                self.count(value);
            }
            VExpr::Math { arg, .. } => {
                self.heavy += 1;
                self.count(arg);
            }
            VExpr::Select {
                cond,
                on_true,
                on_false,
                ..
            } => {
                self.add += 1;
                self.count(cond);
                self.count(on_true);
                self.count(on_false);
            }
        }
    }

    fn length_cost(&self, ty: ScalarTy, model: &CostModel) -> LengthCost {
        let terms = [
            (self.add, OpClass::Add),
            (self.mul, OpClass::Mul),
            (self.fma, OpClass::Fma),
        ]
        .into_iter()
        .filter(|(count, _)| *count > 0)
        .map(|(count, class)| (count, model.rate(class, ty)))
        .collect();
        LengthCost {
            terms,
            per_element: self.heavy * u64::from(model.math_cycles),
        }
    }
}

/// The cycles of the scalar parts of a vector expression, evaluated once before the loop.
fn vexpr_scalar_cycles(value: &VExpr, model: &CostModel) -> u64 {
    match value {
        VExpr::Scalar(expr) => expr_cycles(expr, model),
        VExpr::Elem { start, .. } => expr_cycles(start, model),
        VExpr::Unary { operand, .. } => vexpr_scalar_cycles(operand, model),
        VExpr::Binary { lhs, rhs, .. } => {
            vexpr_scalar_cycles(lhs, model) + vexpr_scalar_cycles(rhs, model)
        }
        VExpr::Cast { value, .. } => vexpr_scalar_cycles(value, model),
        VExpr::Math { arg, .. } => vexpr_scalar_cycles(arg, model),
        VExpr::Select {
            cond,
            on_true,
            on_false,
            ..
        } => {
            vexpr_scalar_cycles(cond, model)
                + vexpr_scalar_cycles(on_true, model)
                + vexpr_scalar_cycles(on_false, model)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{ArrayId, Const};

    fn elem(array: u32) -> VExpr {
        VExpr::Elem {
            array: ArrayId(array),
            start: Expr::Const(Const::u32(0)),
        }
    }

    #[test]
    fn axpy_is_one_fma_per_element() {
        // y[0..n] += a * x[0..n] with n = 10 on WSE-2 rates: fp32 fma 1/cycle -> 10 cycles.
        let value = VExpr::Binary {
            op: BinaryOp::Mul,
            ty: ScalarTy::F32,
            lhs: Box::new(VExpr::Scalar(Expr::Const(Const::f32(2.0)))),
            rhs: Box::new(elem(0)),
        };
        let model = CostModel::WSE2_LIKE;
        assert_eq!(
            vector_cycles(AssignOp::Add, &value, ScalarTy::F32, 10, &model),
            10
        );
        // In f16 the fma rate is 4/cycle -> ceil(10 / 4) = 3 cycles.
        assert_eq!(
            vector_cycles(AssignOp::Add, &value, ScalarTy::F16, 10, &model),
            3
        );
    }

    #[test]
    fn copy_and_add_use_the_add_rate() {
        let model = CostModel::WSE2_LIKE;
        // y[0..n] = x[0..n]: one move per element at 2/cycle -> ceil(7 / 2) = 4.
        assert_eq!(
            vector_cycles(AssignOp::Set, &elem(0), ScalarTy::F32, 7, &model),
            4
        );
        // y[0..n] += x[0..n]: one add per element -> 4.
        assert_eq!(
            vector_cycles(AssignOp::Add, &elem(0), ScalarTy::F32, 7, &model),
            4
        );
        // y[0..n] = exp(x[0..n]): 8 cycles per element -> 56.
        let exp = VExpr::Math {
            func: crate::kernel::MathFn::Exp,
            ty: ScalarTy::F32,
            arg: Box::new(elem(0)),
        };
        assert_eq!(
            vector_cycles(AssignOp::Set, &exp, ScalarTy::F32, 7, &model),
            56
        );
    }

    #[test]
    fn a_masked_select_is_a_compare_and_a_blend_per_element() {
        // y[0..n] = select(x[0..n] > 0.0, x[0..n], 0.0) with n = 7: two add-class operations
        // per element (the comparison, the blend) at 2/cycle -> ceil(14 / 2) = 7 cycles.
        let value = VExpr::Select {
            ty: ScalarTy::F32,
            cond: Box::new(VExpr::Binary {
                op: BinaryOp::Gt,
                ty: ScalarTy::F32,
                lhs: Box::new(elem(0)),
                rhs: Box::new(VExpr::Scalar(Expr::Const(Const::f32(0.0)))),
            }),
            on_true: Box::new(elem(0)),
            on_false: Box::new(VExpr::Scalar(Expr::Const(Const::f32(0.0)))),
        };
        let model = CostModel::WSE2_LIKE;
        assert_eq!(
            vector_cycles(AssignOp::Set, &value, ScalarTy::F32, 7, &model),
            7
        );
        // As a scalar: one cycle for the select and one for the comparison.
        let scalar = Expr::Select {
            ty: ScalarTy::F32,
            cond: Box::new(Expr::Binary {
                op: BinaryOp::Gt,
                ty: ScalarTy::F32,
                lhs: Box::new(Expr::Const(Const::f32(1.0))),
                rhs: Box::new(Expr::Const(Const::f32(0.0))),
            }),
            on_true: Box::new(Expr::Const(Const::f32(1.0))),
            on_false: Box::new(Expr::Const(Const::f32(0.0))),
        };
        assert_eq!(expr_cycles(&scalar, &model), 2);
    }

    #[test]
    fn reductions_run_at_the_add_rate() {
        assert_eq!(reduce_cycles(ScalarTy::F32, 9, &CostModel::WSE2_LIKE), 5);
        assert_eq!(reduce_cycles(ScalarTy::F32, 0, &CostModel::WSE2_LIKE), 0);
    }
}

//! The run-time part of `wsel_ir::cost` in a form compiled code evaluates cheaply.
//!
//! `wsel_ir::cost` defines the per-length cycles of vector statements, reductions and
//! transfers as functions of the length known only at run time. The interpreter calls those
//! functions directly; the JIT backends instead evaluate a [`LengthCost`]: a sum of
//! `ceil(len × count / rate)` terms plus `len × per_element`, derived here from the same rules.
//! Every plan is checked against the `wsel_ir::cost` function it stands for before it is used
//! (at many lengths), so a change of the cost rules that this module does not follow is a
//! [`CodegenError`], never a silent difference in cycles.

use wsel_ir::cost::{self, CostModel};
use wsel_ir::kernel::{AssignOp, BinaryOp, ScalarTy, VExpr};

use crate::CodegenError;

/// Cycles as a function of a run-time length `len`:
/// `Σ ceil(len × count / rate) + len × per_element`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LengthCost {
    /// `(count, rate)` pairs, `rate >= 1`, `count >= 1`.
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

/// The plan for [`cost::vector_cycles`] of `dst op= value` with elements of `ty`.
pub fn vector_plan(
    op: AssignOp,
    value: &VExpr,
    ty: ScalarTy,
    model: &CostModel,
) -> Result<LengthCost, CodegenError> {
    let mut counts = Counts::default();
    let fused = match (op, value) {
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
            AssignOp::Set => counts.add += u64::from(counts.is_empty()),
            AssignOp::Add | AssignOp::Sub => counts.add += 1,
            AssignOp::Mul => counts.mul += 1,
            AssignOp::Div => counts.heavy += 1,
        }
    }
    let plan = counts.plan(ty, model);
    verify(&plan, "vector statement", |len| {
        cost::vector_cycles(op, value, ty, len, model)
    })?;
    Ok(plan)
}

/// The plan for [`cost::reduce_cycles`] over elements of `ty`.
pub fn reduce_plan(ty: ScalarTy, model: &CostModel) -> Result<LengthCost, CodegenError> {
    let plan = LengthCost {
        terms: vec![(1, rate(Class::Add, ty, model))],
        per_element: 0,
    };
    verify(&plan, "reduction", |len| {
        cost::reduce_cycles(ty, len, model)
    })?;
    Ok(plan)
}

/// The plan for [`cost::transfer_issue_cycles`].
pub fn transfer_plan() -> Result<LengthCost, CodegenError> {
    let plan = LengthCost::default();
    verify(&plan, "transfer", cost::transfer_issue_cycles)?;
    Ok(plan)
}

/// Lengths at which plans are compared with the cost rules: every length up to a few rates,
/// then a spread of larger ones.
fn probe_lengths() -> impl Iterator<Item = u64> {
    (0..=67).chain([
        100,
        127,
        128,
        129,
        255,
        1000,
        1023,
        4096,
        65_535,
        1 << 20,
        1 << 32,
    ])
}

fn verify(plan: &LengthCost, what: &str, rule: impl Fn(u64) -> u64) -> Result<(), CodegenError> {
    match probe_lengths().find(|&len| plan.eval(len) != rule(len)) {
        None => Ok(()),
        Some(len) => Err(CodegenError::new(format!(
            "internal: the compiled cost of a {what} of length {len} ({}) disagrees with \
             wsel_ir::cost ({}); codegen's cost plan needs updating",
            plan.eval(len),
            rule(len)
        ))),
    }
}

#[derive(Debug, Clone, Copy)]
enum Class {
    Add,
    Mul,
    Fma,
}

fn rate(class: Class, ty: ScalarTy, model: &CostModel) -> u64 {
    let rate = match (class, ty) {
        (Class::Add, ScalarTy::F16) => model.f16_add_per_cycle,
        (Class::Mul, ScalarTy::F16) => model.f16_mul_per_cycle,
        (Class::Fma, ScalarTy::F16) => model.f16_fma_per_cycle,
        (Class::Mul, _) => model.f32_mul_per_cycle,
        (Class::Fma, _) => model.f32_fma_per_cycle,
        (Class::Add, _) => model.f32_add_per_cycle,
    };
    u64::from(rate.max(1))
}

#[derive(Debug, Default)]
struct Counts {
    add: u64,
    mul: u64,
    fma: u64,
    heavy: u64,
}

impl Counts {
    fn is_empty(&self) -> bool {
        self.add == 0 && self.mul == 0 && self.fma == 0 && self.heavy == 0
    }

    fn count(&mut self, value: &VExpr) {
        match value {
            VExpr::Scalar(_) | VExpr::Elem { .. } => {}
            VExpr::Unary { operand, .. } => {
                self.add += 1;
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
        }
    }

    fn plan(&self, ty: ScalarTy, model: &CostModel) -> LengthCost {
        let mut plan = LengthCost {
            terms: Vec::new(),
            per_element: self.heavy * u64::from(model.math_cycles),
        };
        for (count, class) in [
            (self.add, Class::Add),
            (self.mul, Class::Mul),
            (self.fma, Class::Fma),
        ] {
            match (count, rate(class, ty, model)) {
                (0, _) => {}
                // ceil(len × count / 1) is a plain product.
                (count, 1) => plan.per_element += count,
                (count, rate) => plan.terms.push((count, rate)),
            }
        }
        plan
    }
}

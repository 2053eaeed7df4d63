//! Whether two lengths of one vector statement — an operand slice's and the assigned slice's —
//! always have the same value, so that no run-time check ([`Stmt::CheckLength`]) is needed.
//!
//! Both are integer expressions evaluated at the same moment. Each is read as a linear form,
//! a constant plus a sum of terms with coefficients, in the 32-bit wrapping arithmetic the
//! kernel IR computes in (additions, subtractions and multiplications by constants; anything
//! else is a term, compared structurally). Slices written around a common offset, as stencils
//! do (`u[c - w + j0 .. c - w + j1]` and `un[c + j0 .. c + j1]`), then have equal forms.
//!
//! [`Stmt::CheckLength`]: wsel_ir::kernel::Stmt::CheckLength

use wsel_ir::kernel::{BinaryOp, Expr, ScalarTy};

/// Whether `a` and `b` have the same value whenever they are evaluated together.
pub(super) fn always_equal(a: &Expr, b: &Expr) -> bool {
    if a == b {
        return true;
    }
    match (int_type(a), int_type(b)) {
        (Some(ta), Some(tb)) if ta == tb => {
            let mut difference = Linear::default();
            difference.add(a, 1);
            difference.add(b, 1u32.wrapping_neg());
            difference.is_zero()
        }
        _ => false,
    }
}

/// The integer type of an expression whose type the IR states.
fn int_type(expr: &Expr) -> Option<ScalarTy> {
    let ty = match expr {
        Expr::Const(c) => c.ty,
        Expr::Binary { ty, .. } => *ty,
        _ => return None,
    };
    matches!(ty, ScalarTy::I32 | ScalarTy::U32).then_some(ty)
}

/// `constant + Σ coefficient · term`, modulo 2³².
#[derive(Default)]
struct Linear {
    constant: u32,
    terms: Vec<(Expr, u32)>,
}

impl Linear {
    /// Adds `k · expr`.
    fn add(&mut self, expr: &Expr, k: u32) {
        match expr {
            Expr::Const(c) => self.constant = self.constant.wrapping_add(k.wrapping_mul(c.bits)),
            Expr::Binary {
                op,
                ty: ScalarTy::I32 | ScalarTy::U32,
                lhs,
                rhs,
            } => match (op, &**lhs, &**rhs) {
                (BinaryOp::Add, _, _) => {
                    self.add(lhs, k);
                    self.add(rhs, k);
                }
                (BinaryOp::Sub, _, _) => {
                    self.add(lhs, k);
                    self.add(rhs, k.wrapping_neg());
                }
                (BinaryOp::Mul, term, Expr::Const(c)) | (BinaryOp::Mul, Expr::Const(c), term) => {
                    self.add(term, k.wrapping_mul(c.bits));
                }
                _ => self.add_term(expr, k),
            },
            _ => self.add_term(expr, k),
        }
    }

    fn add_term(&mut self, term: &Expr, k: u32) {
        match self.terms.iter_mut().find(|(t, _)| t == term) {
            Some((_, coefficient)) => *coefficient = coefficient.wrapping_add(k),
            None => self.terms.push((term.clone(), k)),
        }
    }

    fn is_zero(&self) -> bool {
        self.constant == 0 && self.terms.iter().all(|(_, k)| *k == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wsel_ir::kernel::{Const, LocalId};

    fn local(n: u32) -> Expr {
        Expr::Local(LocalId(n))
    }

    fn c(v: u32) -> Expr {
        Expr::Const(Const::u32(v))
    }

    fn bin(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
        Expr::Binary {
            op,
            ty: ScalarTy::U32,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        }
    }

    fn add(a: Expr, b: Expr) -> Expr {
        bin(BinaryOp::Add, a, b)
    }

    fn sub(a: Expr, b: Expr) -> Expr {
        bin(BinaryOp::Sub, a, b)
    }

    #[test]
    fn a_common_offset_cancels() {
        // (c - 6 + j1) - (c - 6 + j0) against (c + j1) - (c + j0), as in std.stencil.
        let shifted = |d: Expr| {
            sub(
                add(sub(local(7), d.clone()), local(5)),
                add(sub(local(7), d), local(4)),
            )
        };
        let plain = sub(add(local(7), local(5)), add(local(7), local(4)));
        assert!(always_equal(&shifted(c(6)), &plain));
        assert!(always_equal(
            &bin(BinaryOp::Mul, c(2), local(1)),
            &add(local(1), local(1))
        ));
    }

    #[test]
    fn different_lengths_are_not_equal() {
        assert!(!always_equal(&sub(local(1), c(1)), &local(1)));
        assert!(!always_equal(&local(1), &local(2)));
        // Division is a term of its own: n / 2 * 2 is not n.
        let halved = bin(BinaryOp::Div, local(1), c(2));
        assert!(!always_equal(
            &bin(BinaryOp::Mul, halved, c(2)),
            &add(local(1), c(0))
        ));
    }
}

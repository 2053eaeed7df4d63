//! Constant folding of IR expressions with the IR's run-time semantics: integer operations
//! wrap, integer division or remainder by zero is left to run time (it must stop the run),
//! and float arithmetic is left alone except negation (an exact sign flip). Casts between
//! integers and from integers or `f32` to `f32` and integers are folded with Rust `as`
//! semantics, as the IR defines them. Integer identities (`x + 0`, `x * 1`, ...) drop the
//! constant operand.

use wsel_ir::kernel::{BinaryOp, Const, Expr, ScalarTy, UnaryOp};

/// `op operand`, folded when the operand is a constant.
pub(super) fn unary(op: UnaryOp, ty: ScalarTy, operand: Expr) -> Expr {
    if let Expr::Const(c) = &operand {
        let bits = match (op, ty) {
            (UnaryOp::Neg, ScalarTy::I32) => Some((c.bits as i32).wrapping_neg() as u32),
            (UnaryOp::Neg, ScalarTy::U32) => Some(c.bits.wrapping_neg()),
            (UnaryOp::Neg, ScalarTy::F32 | ScalarTy::F16) if !f32::from_bits(c.bits).is_nan() => {
                Some(c.bits ^ 0x8000_0000)
            }
            (UnaryOp::Not, ScalarTy::Bool) => Some(u32::from(c.bits == 0)),
            _ => None,
        };
        if let Some(bits) = bits {
            return Expr::Const(Const { ty, bits });
        }
    }
    Expr::Unary {
        op,
        ty,
        operand: Box::new(operand),
    }
}

/// `lhs op rhs` with operands of type `ty`, folded when both are constants, when a constant
/// left operand decides `&&` or `||` on `bool` (the right one is then not evaluated at run
/// time either), or when an integer identity applies.
pub(super) fn binary(op: BinaryOp, ty: ScalarTy, lhs: Expr, rhs: Expr) -> Expr {
    if let (Expr::Const(a), Expr::Const(b)) = (&lhs, &rhs)
        && let Some(c) = fold_consts(op, ty, *a, *b)
    {
        return Expr::Const(c);
    }
    if ty == ScalarTy::Bool
        && let Expr::Const(a) = &lhs
    {
        match (op, a.bits != 0) {
            (BinaryOp::And, false) | (BinaryOp::Or, true) => return lhs,
            (BinaryOp::And, true) | (BinaryOp::Or, false) => return rhs,
            _ => {}
        }
    }
    if matches!(ty, ScalarTy::I32 | ScalarTy::U32) {
        let is = |e: &Expr, v: u32| matches!(e, Expr::Const(c) if c.bits == v);
        match op {
            BinaryOp::Add if is(&rhs, 0) => return lhs,
            BinaryOp::Add if is(&lhs, 0) => return rhs,
            BinaryOp::Sub if is(&rhs, 0) => return lhs,
            BinaryOp::Mul | BinaryOp::Div if is(&rhs, 1) => return lhs,
            BinaryOp::Mul if is(&lhs, 1) => return rhs,
            _ => {}
        }
    }
    Expr::Binary {
        op,
        ty,
        lhs: Box::new(lhs),
        rhs: Box::new(rhs),
    }
}

/// `value as to`, folded for constants where the result is exact to compute here.
pub(super) fn cast(from: ScalarTy, to: ScalarTy, value: Expr) -> Expr {
    if from == to {
        return value;
    }
    if let Expr::Const(c) = &value {
        let bits = match (from, to) {
            (ScalarTy::I32 | ScalarTy::U32, ScalarTy::I32 | ScalarTy::U32) => Some(c.bits),
            (ScalarTy::I32, ScalarTy::F32) => Some((c.bits as i32 as f32).to_bits()),
            (ScalarTy::U32, ScalarTy::F32) => Some((c.bits as f32).to_bits()),
            (ScalarTy::F32, ScalarTy::I32) => Some(f32::from_bits(c.bits) as i32 as u32),
            (ScalarTy::F32, ScalarTy::U32) => Some(f32::from_bits(c.bits) as u32),
            _ => None,
        };
        if let Some(bits) = bits {
            return Expr::Const(Const { ty: to, bits });
        }
    }
    Expr::Cast {
        from,
        to,
        value: Box::new(value),
    }
}

fn fold_consts(op: BinaryOp, ty: ScalarTy, a: Const, b: Const) -> Option<Const> {
    let bool_const = |v: bool| Some(Const::bool(v));
    match ty {
        ScalarTy::I32 => {
            let (x, y) = (a.bits as i32, b.bits as i32);
            let int = |v: i32| Some(Const::i32(v));
            match op {
                BinaryOp::Add => int(x.wrapping_add(y)),
                BinaryOp::Sub => int(x.wrapping_sub(y)),
                BinaryOp::Mul => int(x.wrapping_mul(y)),
                BinaryOp::Div if y != 0 => int(x.wrapping_div(y)),
                BinaryOp::Rem if y != 0 => int(x.wrapping_rem(y)),
                BinaryOp::Div | BinaryOp::Rem => None,
                BinaryOp::Min => int(x.min(y)),
                BinaryOp::Max => int(x.max(y)),
                BinaryOp::Eq => bool_const(x == y),
                BinaryOp::Ne => bool_const(x != y),
                BinaryOp::Lt => bool_const(x < y),
                BinaryOp::Le => bool_const(x <= y),
                BinaryOp::Gt => bool_const(x > y),
                BinaryOp::Ge => bool_const(x >= y),
                BinaryOp::And => int(x & y),
                BinaryOp::Or => int(x | y),
            }
        }
        ScalarTy::U32 => {
            let (x, y) = (a.bits, b.bits);
            let int = |v: u32| Some(Const::u32(v));
            match op {
                BinaryOp::Add => int(x.wrapping_add(y)),
                BinaryOp::Sub => int(x.wrapping_sub(y)),
                BinaryOp::Mul => int(x.wrapping_mul(y)),
                BinaryOp::Div if y != 0 => int(x / y),
                BinaryOp::Rem if y != 0 => int(x % y),
                BinaryOp::Div | BinaryOp::Rem => None,
                BinaryOp::Min => int(x.min(y)),
                BinaryOp::Max => int(x.max(y)),
                BinaryOp::Eq => bool_const(x == y),
                BinaryOp::Ne => bool_const(x != y),
                BinaryOp::Lt => bool_const(x < y),
                BinaryOp::Le => bool_const(x <= y),
                BinaryOp::Gt => bool_const(x > y),
                BinaryOp::Ge => bool_const(x >= y),
                BinaryOp::And => int(x & y),
                BinaryOp::Or => int(x | y),
            }
        }
        ScalarTy::Bool => {
            let (x, y) = (a.bits != 0, b.bits != 0);
            match op {
                BinaryOp::And => bool_const(x && y),
                BinaryOp::Or => bool_const(x || y),
                BinaryOp::Eq => bool_const(x == y),
                BinaryOp::Ne => bool_const(x != y),
                _ => None,
            }
        }
        ScalarTy::F32 | ScalarTy::F16 => None,
    }
}

/// The value of a boolean constant expression.
pub(super) fn as_bool(expr: &Expr) -> Option<bool> {
    match expr {
        Expr::Const(c) if c.ty == ScalarTy::Bool => Some(c.bits != 0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_folding_wraps_and_leaves_division_by_zero() {
        let c = |v: u32| Expr::Const(Const::u32(v));
        assert_eq!(
            binary(BinaryOp::Sub, ScalarTy::U32, c(0), c(1)),
            c(u32::MAX)
        );
        let by_zero = binary(BinaryOp::Div, ScalarTy::U32, c(4), c(0));
        assert!(matches!(by_zero, Expr::Binary { .. }));
        let min = Expr::Const(Const::i32(i32::MIN));
        let minus_one = Expr::Const(Const::i32(-1));
        assert_eq!(
            binary(BinaryOp::Div, ScalarTy::I32, min.clone(), minus_one),
            min
        );
    }

    #[test]
    fn float_arithmetic_is_not_folded_but_negation_is() {
        let one = Expr::Const(Const::f32(1.0));
        let sum = binary(BinaryOp::Add, ScalarTy::F32, one.clone(), one.clone());
        assert!(matches!(sum, Expr::Binary { .. }));
        assert_eq!(
            unary(UnaryOp::Neg, ScalarTy::F32, one),
            Expr::Const(Const::f32(-1.0))
        );
    }
}

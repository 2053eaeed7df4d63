//! The meaning of every scalar operation of the kernel IR on 32-bit values, written once.
//!
//! The interpreter evaluates through these functions; the Cranelift and LLVM backends emit
//! instruction sequences that compute the same bits (the differential tests hold them to it).
//! Values are 32-bit patterns: binary32 for `f32` and `f16`, two's complement for `i32`, plain
//! for `u32`, 0 or 1 for `bool`. Beyond what `wsel_ir::kernel` fixes, these choices make results
//! bit-identical:
//!
//! - a float operation whose result is NaN yields the canonical NaN [`CANONICAL_NAN`]; negation
//!   and `abs` of an `f32` only flip or clear the sign bit;
//! - an `f16` result is rounded to binary16 (ties to even) with [`round_f16`], including the
//!   result of negation, `abs`, `min`/`max` and of an `f16` constant;
//! - casts: float to `bool` is `x != 0.0` (true for NaN), integer to `bool` is `x != 0`, a cast
//!   to `f16` goes through binary32;
//! - `abs` of an `i32` wraps (`i32::MIN` stays `i32::MIN`); of a `u32` it is the identity;
//! - `&&` and `||` on `bool` evaluate their right operand only when needed (the evaluators do
//!   that; [`binary`] itself is the operation on two values); on integers they are bitwise;
//! - the reduction of an empty slice gives 0 for `sum`, the smallest value (−∞ for floats) for
//!   `max` and the largest (+∞) for `min`.

use wsel_ir::kernel::{AssignOp, BinaryOp, MathFn, PortId, ReduceOp, ScalarTy, SwitchCmd, UnaryOp};

use crate::host;

/// The `send_scalar` arguments of a control statement: the port marked
/// [`wsel_abi::CONTROL_PORT`] and the payload carrying `commands`.
pub fn control_call(port: PortId, commands: &[SwitchCmd]) -> (u32, u32) {
    let payload = wsel_abi::control_payload(commands.iter().map(|&c| c as u32));
    (port.0 | wsel_abi::CONTROL_PORT, payload)
}

/// The one NaN float operations produce: positive, quiet, zero payload.
pub const CANONICAL_NAN: u32 = 0x7FC0_0000;

const SIGN: u32 = 0x8000_0000;

/// An integer division or remainder by zero; `dividend` widened as in
/// [`crate::faults::FAULT_DIV_BY_ZERO`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DivByZero {
    pub dividend: i64,
}

/// `x`, or the canonical NaN if `x` is any NaN.
pub fn canonicalize(x: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(CANONICAL_NAN)
    } else {
        x
    }
}

/// Rounds `x` to the nearest binary16 value (ties to even; overflow to ±∞) and widens it back
/// to binary32; NaN becomes the canonical NaN.
pub fn round_f16(x: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(CANONICAL_NAN)
    } else {
        half::f16::from_f32(x).to_f32()
    }
}

/// The final step of every float arithmetic operation of type `ty`.
pub fn finish(ty: ScalarTy, x: f32) -> f32 {
    match ty {
        ScalarTy::F16 => round_f16(x),
        _ => canonicalize(x),
    }
}

/// IEEE 754-2019 `minimum`: NaN if either is NaN, and `-0.0 < +0.0`.
pub fn float_min(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::from_bits(CANONICAL_NAN)
    } else if a < b {
        a
    } else if b < a {
        b
    } else {
        // Equal: the same value, or zeros of which a negative one wins.
        f32::from_bits(a.to_bits() | b.to_bits())
    }
}

/// IEEE 754-2019 `maximum`: NaN if either is NaN, and `-0.0 < +0.0`.
pub fn float_max(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::from_bits(CANONICAL_NAN)
    } else if a > b {
        a
    } else if b > a {
        b
    } else {
        f32::from_bits(a.to_bits() & b.to_bits())
    }
}

/// A value of type `ty` widened to 64 bits: sign-extended for `i32`, zero-extended otherwise.
/// Indices, slice bounds and reported dividends use this.
pub fn widen(ty: ScalarTy, bits: u32) -> i64 {
    match ty {
        ScalarTy::I32 => i64::from(bits as i32),
        _ => i64::from(bits),
    }
}

/// The bits of a constant as the program sees them (`f16` constants rounded).
pub fn constant(ty: ScalarTy, bits: u32) -> u32 {
    match ty {
        ScalarTy::F16 => round_f16(f32::from_bits(bits)).to_bits(),
        _ => bits,
    }
}

/// `op a` on type `ty`.
pub fn unary(op: UnaryOp, ty: ScalarTy, a: u32) -> u32 {
    match (op, ty) {
        (UnaryOp::Neg, ScalarTy::F32) => a ^ SIGN,
        (UnaryOp::Neg, ScalarTy::F16) => round_f16(f32::from_bits(a ^ SIGN)).to_bits(),
        (UnaryOp::Neg, _) => a.wrapping_neg(),
        (UnaryOp::Not, ScalarTy::Bool) => a ^ 1,
        (UnaryOp::Not, _) => !a,
    }
}

/// `a op b` with both operands of type `ty` (for `&&`/`||` on `bool`: both already evaluated).
pub fn binary(op: BinaryOp, ty: ScalarTy, a: u32, b: u32) -> Result<u32, DivByZero> {
    Ok(match ty {
        ScalarTy::F32 | ScalarTy::F16 => float_binary(op, ty, f32::from_bits(a), f32::from_bits(b)),
        ScalarTy::I32 => return signed_binary(op, a as i32, b as i32),
        ScalarTy::U32 | ScalarTy::Bool => return unsigned_binary(op, a, b),
    })
}

/// `old op= value` for an assignment of type `ty`.
pub fn combine(op: AssignOp, ty: ScalarTy, old: u32, value: u32) -> Result<u32, DivByZero> {
    let op = match op {
        AssignOp::Set => return Ok(value),
        AssignOp::Add => BinaryOp::Add,
        AssignOp::Sub => BinaryOp::Sub,
        AssignOp::Mul => BinaryOp::Mul,
        AssignOp::Div => BinaryOp::Div,
    };
    binary(op, ty, old, value)
}

/// `select(cond, on_true, on_false)` on already evaluated operands: the chosen value's bits.
pub fn select(cond: u32, on_true: u32, on_false: u32) -> u32 {
    if cond != 0 { on_true } else { on_false }
}

/// `value as to`, with `value` of type `from`.
pub fn cast(from: ScalarTy, to: ScalarTy, value: u32) -> u32 {
    use ScalarTy::*;
    let float = f32::from_bits(value);
    match (from, to) {
        _ if from == to => value,
        (F16, F32) => value,
        (F32, F16) => round_f16(float).to_bits(),
        (F32 | F16, I32) => (float as i32) as u32,
        (F32 | F16, U32) => float as u32,
        (F32 | F16, Bool) => u32::from(float != 0.0),
        (I32, F32) => ((value as i32) as f32).to_bits(),
        (I32, F16) => round_f16((value as i32) as f32).to_bits(),
        (U32 | Bool, F32) => (value as f32).to_bits(),
        (U32 | Bool, F16) => round_f16(value as f32).to_bits(),
        (I32 | U32, Bool) => u32::from(value != 0),
        // i32 <-> u32 reinterpret; bool -> integer is 0 or 1.
        (I32 | U32 | Bool, I32 | U32) => value,
        // `from == to`, handled above.
        (F32, F32) | (F16, F16) | (Bool, Bool) => value,
    }
}

/// `func(a)` on type `ty`.
pub fn math(func: MathFn, ty: ScalarTy, a: u32) -> u32 {
    let x = f32::from_bits(a);
    match (func, ty) {
        (MathFn::Abs, ScalarTy::F32) => a & !SIGN,
        (MathFn::Abs, ScalarTy::I32) => (a as i32).wrapping_abs() as u32,
        (MathFn::Abs, ScalarTy::U32 | ScalarTy::Bool) => a,
        (MathFn::Abs, _) => round_f16(f32::from_bits(a & !SIGN)).to_bits(),
        (MathFn::Exp, _) => finish(ty, host::wsel_expf(x)).to_bits(),
        (MathFn::Log, _) => finish(ty, host::wsel_logf(x)).to_bits(),
        (MathFn::Tanh, _) => finish(ty, host::wsel_tanhf(x)).to_bits(),
        (MathFn::Sqrt, _) => finish(ty, x.sqrt()).to_bits(),
    }
}

/// The value of a reduction of an empty slice.
pub fn reduce_empty(op: ReduceOp, ty: ScalarTy) -> u32 {
    match (op, ty) {
        (ReduceOp::Sum, _) => 0,
        (ReduceOp::Max, ScalarTy::F32 | ScalarTy::F16) => f32::NEG_INFINITY.to_bits(),
        (ReduceOp::Min, ScalarTy::F32 | ScalarTy::F16) => f32::INFINITY.to_bits(),
        (ReduceOp::Max, ScalarTy::I32) => i32::MIN as u32,
        (ReduceOp::Min, ScalarTy::I32) => i32::MAX as u32,
        (ReduceOp::Max, _) => 0,
        (ReduceOp::Min, _) => u32::MAX,
    }
}

/// The binary operation a reduction folds with.
pub fn reduce_op(op: ReduceOp) -> BinaryOp {
    match op {
        ReduceOp::Sum => BinaryOp::Add,
        ReduceOp::Max => BinaryOp::Max,
        ReduceOp::Min => BinaryOp::Min,
    }
}

fn float_binary(op: BinaryOp, ty: ScalarTy, a: f32, b: f32) -> u32 {
    let result = match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
        BinaryOp::Div => a / b,
        BinaryOp::Rem => host::wsel_fmodf(a, b),
        BinaryOp::Min => float_min(a, b),
        BinaryOp::Max => float_max(a, b),
        BinaryOp::Eq => return u32::from(a == b),
        BinaryOp::Ne => return u32::from(a != b),
        BinaryOp::Lt => return u32::from(a < b),
        BinaryOp::Le => return u32::from(a <= b),
        BinaryOp::Gt => return u32::from(a > b),
        BinaryOp::Ge => return u32::from(a >= b),
        // Rejected by the checker; bitwise on the patterns keeps this total.
        BinaryOp::And => return a.to_bits() & b.to_bits(),
        BinaryOp::Or => return a.to_bits() | b.to_bits(),
    };
    finish(ty, result).to_bits()
}

fn signed_binary(op: BinaryOp, a: i32, b: i32) -> Result<u32, DivByZero> {
    let zero = || DivByZero {
        dividend: i64::from(a),
    };
    Ok(match op {
        BinaryOp::Add => a.wrapping_add(b) as u32,
        BinaryOp::Sub => a.wrapping_sub(b) as u32,
        BinaryOp::Mul => a.wrapping_mul(b) as u32,
        BinaryOp::Div => {
            if b == 0 {
                return Err(zero());
            }
            a.wrapping_div(b) as u32
        }
        BinaryOp::Rem => {
            if b == 0 {
                return Err(zero());
            }
            a.wrapping_rem(b) as u32
        }
        BinaryOp::Min => a.min(b) as u32,
        BinaryOp::Max => a.max(b) as u32,
        BinaryOp::Eq => u32::from(a == b),
        BinaryOp::Ne => u32::from(a != b),
        BinaryOp::Lt => u32::from(a < b),
        BinaryOp::Le => u32::from(a <= b),
        BinaryOp::Gt => u32::from(a > b),
        BinaryOp::Ge => u32::from(a >= b),
        BinaryOp::And => (a & b) as u32,
        BinaryOp::Or => (a | b) as u32,
    })
}

fn unsigned_binary(op: BinaryOp, a: u32, b: u32) -> Result<u32, DivByZero> {
    let zero = || DivByZero {
        dividend: i64::from(a),
    };
    Ok(match op {
        BinaryOp::Add => a.wrapping_add(b),
        BinaryOp::Sub => a.wrapping_sub(b),
        BinaryOp::Mul => a.wrapping_mul(b),
        BinaryOp::Div => a.checked_div(b).ok_or_else(zero)?,
        BinaryOp::Rem => a.checked_rem(b).ok_or_else(zero)?,
        BinaryOp::Min => a.min(b),
        BinaryOp::Max => a.max(b),
        BinaryOp::Eq => u32::from(a == b),
        BinaryOp::Ne => u32::from(a != b),
        BinaryOp::Lt => u32::from(a < b),
        BinaryOp::Le => u32::from(a <= b),
        BinaryOp::Gt => u32::from(a > b),
        BinaryOp::Ge => u32::from(a >= b),
        BinaryOp::And => a & b,
        BinaryOp::Or => a | b,
    })
}

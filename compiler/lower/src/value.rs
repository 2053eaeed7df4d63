//! Compile-time values as lowering uses them: the hashable argument values that key kernel
//! instances, conversions between the front end's `Value`, the layer graph's `CValue` and IR
//! constants, and the scalar type mapping.

use std::fmt;

use wsel_ir::graph::CValue;
use wsel_ir::kernel::{Const, ScalarTy};
use wsel_sema::ty::Value;
use wsel_syntax::ast::ScalarType;

/// A kernel argument as it keys a kernel instance: a `CValue` with floats held as bits, so it
/// can be hashed and interned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ArgValue {
    Int(i64),
    /// The bits of an `f64`.
    Float(u64),
    Bool(bool),
}

impl From<CValue> for ArgValue {
    fn from(value: CValue) -> Self {
        match value {
            CValue::Int(v) => ArgValue::Int(v),
            CValue::Float(v) => ArgValue::Float(v.to_bits()),
            CValue::Bool(v) => ArgValue::Bool(v),
        }
    }
}

impl ArgValue {
    pub fn to_value(self) -> Value {
        match self {
            ArgValue::Int(v) => Value::Int(i128::from(v)),
            ArgValue::Float(bits) => Value::Float(f64::from_bits(bits)),
            ArgValue::Bool(v) => Value::Bool(v),
        }
    }
}

impl fmt::Display for ArgValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to_value())
    }
}

/// The IR type of a front-end scalar type.
pub fn scalar_ty(ty: ScalarType) -> ScalarTy {
    match ty {
        ScalarType::F32 => ScalarTy::F32,
        ScalarType::F16 => ScalarTy::F16,
        ScalarType::I32 => ScalarTy::I32,
        ScalarType::U32 => ScalarTy::U32,
        ScalarType::Bool => ScalarTy::Bool,
    }
}

pub fn is_int(ty: ScalarTy) -> bool {
    matches!(ty, ScalarTy::I32 | ScalarTy::U32)
}

/// The range of an integer type.
pub fn int_range(ty: ScalarTy) -> (i128, i128) {
    match ty {
        ScalarTy::I32 => (i128::from(i32::MIN), i128::from(i32::MAX)),
        _ => (0, i128::from(u32::MAX)),
    }
}

/// The IR constant of compile-time value `value` as type `ty`: integers must fit, floats are
/// rounded to `ty` (to binary16 for `f16`, held as binary32). `None` when the value has
/// another kind or does not fit.
pub fn to_const(value: Value, ty: ScalarTy) -> Option<Const> {
    let bits = match (value, ty) {
        (Value::Float(v), ScalarTy::F32) => (v as f32).to_bits(),
        (Value::Float(v), ScalarTy::F16) => f16_nearest(v).to_f32().to_bits(),
        (Value::Int(v), ScalarTy::I32 | ScalarTy::U32) => {
            let (lo, hi) = int_range(ty);
            if v < lo || v > hi {
                return None;
            }
            if ty == ScalarTy::I32 {
                i32::try_from(v).ok()? as u32
            } else {
                u32::try_from(v).ok()?
            }
        }
        (Value::Bool(v), ScalarTy::Bool) => u32::from(v),
        _ => return None,
    };
    Some(Const { ty, bits })
}

/// The zero of `ty` (the initial value of storage without an initialiser).
pub fn zero(ty: ScalarTy) -> Const {
    Const { ty, bits: 0 }
}

/// The compile-time value of an IR constant (the inverse of [`to_const`]).
pub fn const_value(c: Const) -> Value {
    match c.ty {
        ScalarTy::F32 | ScalarTy::F16 => Value::Float(f64::from(f32::from_bits(c.bits))),
        ScalarTy::I32 => Value::Int(i128::from(c.bits as i32)),
        ScalarTy::U32 => Value::Int(i128::from(c.bits)),
        ScalarTy::Bool => Value::Bool(c.bits != 0),
    }
}

/// A `CValue` for a compile-time value, if it fits.
pub fn to_cvalue(value: Value) -> Option<CValue> {
    Some(match value {
        Value::Int(v) => CValue::Int(i64::try_from(v).ok()?),
        Value::Float(v) => CValue::Float(v),
        Value::Bool(v) => CValue::Bool(v),
    })
}

/// The element type of a task-body expression while literals are still untyped, in IR types:
/// a known scalar type, or an integer or float literal whose type the context has not fixed
/// (as `wsel_sema::consteval::Elem` is for compile-time expressions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElemTy {
    Known(ScalarTy),
    IntLit,
    FloatLit,
}

impl ElemTy {
    /// The concrete type: literals take `want` when it is of their kind, else `i32`/`f32`.
    pub fn resolve(self, want: Option<ScalarTy>) -> ScalarTy {
        match self {
            ElemTy::Known(t) => t,
            ElemTy::IntLit => want.filter(|t| is_int(*t)).unwrap_or(ScalarTy::I32),
            ElemTy::FloatLit => want.filter(|t| t.is_float()).unwrap_or(ScalarTy::F32),
        }
    }

    pub fn known(self) -> Option<ScalarTy> {
        match self {
            ElemTy::Known(t) => Some(t),
            _ => None,
        }
    }

    /// The common type of two operands (a known type wins over a literal).
    pub fn unify(self, other: ElemTy) -> ElemTy {
        match (self, other) {
            (ElemTy::Known(_), _) => self,
            (_, ElemTy::Known(_)) => other,
            _ => self,
        }
    }

    /// The type of a literal `ty` in a context wanting `hint`.
    pub fn literal(int: bool, hint: Option<ScalarTy>) -> ElemTy {
        match hint {
            Some(t) if int && is_int(t) => ElemTy::Known(t),
            Some(t) if !int && t.is_float() => ElemTy::Known(t),
            _ if int => ElemTy::IntLit,
            _ => ElemTy::FloatLit,
        }
    }
}

/// `v` rounded to the nearest f16 (ties to even), once. `half`'s f64 conversions round through
/// f32 (or truncate) depending on the host, which can round twice; rounding to f32 *to odd*
/// first keeps the information the second rounding needs (f32 has more than two extra bits),
/// so the f32 → f16 step then rounds as a direct conversion would, on every host.
fn f16_nearest(v: f64) -> half::f16 {
    let mut f = v as f32;
    if f.is_finite() && f64::from(f) != v && f.to_bits() & 1 == 0 {
        f = if f64::from(f) > v {
            f.next_down()
        } else {
            f.next_up()
        };
    }
    half::f16::from_f32(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_constants_round_once_from_f64() {
        // Just above the midpoint between 1 and the next f16 (1 + 2^-10): rounds up. Going
        // through f32 first would drop the 2^-40 and land exactly on the midpoint, which
        // rounds to even (1.0).
        let v = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        let c = to_const(Value::Float(v), ScalarTy::F16).expect("a float constant");
        assert_eq!(f32::from_bits(c.bits), 1.0 + 2f32.powi(-10));
        // Exact midpoints still round to even, and exact values stay.
        for (v, expected) in [(1.0 + 2f64.powi(-11), 1.0), (1.5, 1.5), (-0.25, -0.25)] {
            let c = to_const(Value::Float(v), ScalarTy::F16).expect("a float constant");
            assert_eq!(f32::from_bits(c.bits), expected, "{v}");
        }
    }
}

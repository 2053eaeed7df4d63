//! Scalar operations on Cranelift values, computing exactly the bits `crate::semantics`
//! defines: NaN canonicalisation, `f16` rounding, wrapping and checked integer division,
//! saturating casts.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::Ieee32;
use cranelift_codegen::ir::{BlockArg, InstBuilder, Value, types};
use wsel_ir::kernel::{AssignOp, BinaryOp, MathFn, ScalarTy, UnaryOp};

use super::function::{Tr, Translator};
use crate::faults::FAULT_DIV_BY_ZERO;
use crate::host::HostFn;
use crate::semantics::{self, CANONICAL_NAN};

impl Translator<'_, '_> {
    /// A constant of type `ty` with binary32 or integer bits `bits`.
    pub(super) fn constant(&mut self, ty: ScalarTy, bits: u32) -> Value {
        let bits = semantics::constant(ty, bits);
        if ty.is_float() {
            self.b.ins().f32const(Ieee32::with_bits(bits))
        } else {
            self.iconst32(bits)
        }
    }

    /// The last step of every float arithmetic operation: round `f16`, canonicalise NaN.
    pub(super) fn finish(&mut self, ty: ScalarTy, x: Value) -> Value {
        match ty {
            ScalarTy::F16 => self.call_host(HostFn::RoundF16, &[x]),
            _ => {
                let nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
                let canonical = self.b.ins().f32const(Ieee32::with_bits(CANONICAL_NAN));
                self.b.ins().select(nan, canonical, x)
            }
        }
    }

    pub(super) fn unary(&mut self, op: UnaryOp, ty: ScalarTy, a: Value) -> Value {
        match (op, ty) {
            (UnaryOp::Neg, ScalarTy::F32) => self.b.ins().fneg(a),
            (UnaryOp::Neg, ScalarTy::F16) => {
                let negated = self.b.ins().fneg(a);
                self.finish(ty, negated)
            }
            (UnaryOp::Neg, _) => self.b.ins().ineg(a),
            (UnaryOp::Not, ScalarTy::Bool) => self.b.ins().bxor_imm_u(a, 1),
            (UnaryOp::Not, ScalarTy::I32 | ScalarTy::U32) => self.b.ins().bnot(a),
            // Rejected by the checker.
            (UnaryOp::Not, _) => a,
        }
    }

    /// `a op b` where `b` is computed by `rhs` only when `&&`/`||` on `bool` need it.
    pub(super) fn binary_lazy(
        &mut self,
        op: BinaryOp,
        ty: ScalarTy,
        a: Value,
        rhs: impl FnOnce(&mut Self) -> Tr<Value>,
    ) -> Tr<Value> {
        if ty != ScalarTy::Bool || !matches!(op, BinaryOp::And | BinaryOp::Or) {
            let b = rhs(self)?;
            return Ok(self.binary(op, ty, a, b));
        }
        let eval_rhs = self.b.create_block();
        let done = self.b.create_block();
        let result = self.b.append_block_param(done, types::I32);
        if op == BinaryOp::And {
            // false && _ is false.
            self.b
                .ins()
                .brif(a, eval_rhs, &[], done, &[BlockArg::Value(a)]);
        } else {
            // true || _ is true.
            let is_true = self.b.ins().icmp_imm_s(IntCC::Equal, a, 1);
            self.b
                .ins()
                .brif(is_true, done, &[BlockArg::Value(a)], eval_rhs, &[]);
        }
        self.b.switch_to_block(eval_rhs);
        let b = rhs(self)?;
        let both = self.binary(op, ty, a, b);
        self.b.ins().jump(done, &[BlockArg::Value(both)]);
        self.b.switch_to_block(done);
        Ok(result)
    }

    /// `a op b` with both operands evaluated.
    pub(super) fn binary(&mut self, op: BinaryOp, ty: ScalarTy, a: Value, b: Value) -> Value {
        self.binary_raw(op, ty, a, b, false)
    }

    /// `a op b`; with `raw`, an `f32` result is left uncanonicalised (see `raw_ok`).
    pub(super) fn binary_raw(
        &mut self,
        op: BinaryOp,
        ty: ScalarTy,
        a: Value,
        b: Value,
        raw: bool,
    ) -> Value {
        if ty.is_float() {
            self.float_binary(op, ty, a, b, raw)
        } else {
            self.int_binary(op, ty, a, b)
        }
    }

    /// `old op= value`.
    pub(super) fn combine(
        &mut self,
        op: AssignOp,
        ty: ScalarTy,
        old: Value,
        value: Value,
    ) -> Value {
        let op = match op {
            AssignOp::Set => return value,
            AssignOp::Add => BinaryOp::Add,
            AssignOp::Sub => BinaryOp::Sub,
            AssignOp::Mul => BinaryOp::Mul,
            AssignOp::Div => BinaryOp::Div,
        };
        self.binary(op, ty, old, value)
    }

    pub(super) fn cast(&mut self, from: ScalarTy, to: ScalarTy, value: Value) -> Value {
        use ScalarTy::*;
        let ins = self.b.ins();
        match (from, to) {
            _ if from == to => value,
            (F16, F32) => value,
            (F32, F16) => self.finish(F16, value),
            (F32 | F16, I32) => ins.fcvt_to_sint_sat(types::I32, value),
            (F32 | F16, U32) => ins.fcvt_to_uint_sat(types::I32, value),
            (F32 | F16, Bool) => {
                let zero = ins.f32const(0.0);
                let nonzero = self.b.ins().fcmp(FloatCC::NotEqual, value, zero);
                self.b.ins().uextend(types::I32, nonzero)
            }
            (I32, F32 | F16) => {
                let float = ins.fcvt_from_sint(types::F32, value);
                self.finish_conversion(to, float)
            }
            (U32 | Bool, F32 | F16) => {
                let float = ins.fcvt_from_uint(types::F32, value);
                self.finish_conversion(to, float)
            }
            (I32 | U32, Bool) => {
                let nonzero = ins.icmp_imm_s(IntCC::NotEqual, value, 0);
                self.b.ins().uextend(types::I32, nonzero)
            }
            (I32 | U32 | Bool, I32 | U32) => value,
            (F32, F32) | (F16, F16) | (Bool, Bool) => value,
        }
    }

    pub(super) fn math(&mut self, func: MathFn, ty: ScalarTy, a: Value) -> Value {
        self.math_raw(func, ty, a, false)
    }

    /// `func(a)`; with `raw`, an `f32` result is left uncanonicalised (see `raw_ok`).
    pub(super) fn math_raw(&mut self, func: MathFn, ty: ScalarTy, a: Value, raw: bool) -> Value {
        match (func, ty) {
            (MathFn::Abs, ScalarTy::F32) => self.b.ins().fabs(a),
            (MathFn::Abs, ScalarTy::F16) => {
                let abs = self.b.ins().fabs(a);
                self.finish(ty, abs)
            }
            (MathFn::Abs, ScalarTy::I32) => self.b.ins().iabs(a),
            (MathFn::Abs, _) => a,
            (MathFn::Sqrt, _) => {
                let root = self.b.ins().sqrt(a);
                self.finish_unless_raw(ty, root, raw)
            }
            (MathFn::Exp, _) => self.host_math(HostFn::Exp, ty, a, raw),
            (MathFn::Log, _) => self.host_math(HostFn::Log, ty, a, raw),
            (MathFn::Tanh, _) => self.host_math(HostFn::Tanh, ty, a, raw),
        }
    }

    fn host_math(&mut self, func: HostFn, ty: ScalarTy, a: Value, raw: bool) -> Value {
        let result = self.call_host(func, &[a]);
        self.finish_unless_raw(ty, result, raw)
    }

    /// [`Self::finish`], except that a raw `f32` result may stay a non-canonical NaN.
    fn finish_unless_raw(&mut self, ty: ScalarTy, x: Value, raw: bool) -> Value {
        if raw && ty == ScalarTy::F32 {
            x
        } else {
            self.finish(ty, x)
        }
    }

    /// An integer converted to a float: exact in binary32 terms, only `f16` needs rounding.
    fn finish_conversion(&mut self, to: ScalarTy, float: Value) -> Value {
        if to == ScalarTy::F16 {
            self.finish(to, float)
        } else {
            float
        }
    }

    fn float_binary(&mut self, op: BinaryOp, ty: ScalarTy, a: Value, b: Value, raw: bool) -> Value {
        let compare = |cc| Some(cc);
        let cc = match op {
            BinaryOp::Eq => compare(FloatCC::Equal),
            BinaryOp::Ne => compare(FloatCC::NotEqual),
            BinaryOp::Lt => compare(FloatCC::LessThan),
            BinaryOp::Le => compare(FloatCC::LessThanOrEqual),
            BinaryOp::Gt => compare(FloatCC::GreaterThan),
            BinaryOp::Ge => compare(FloatCC::GreaterThanOrEqual),
            _ => None,
        };
        if let Some(cc) = cc {
            let flag = self.b.ins().fcmp(cc, a, b);
            return self.b.ins().uextend(types::I32, flag);
        }
        let ins = self.b.ins();
        let result = match op {
            BinaryOp::Add => ins.fadd(a, b),
            BinaryOp::Sub => ins.fsub(a, b),
            BinaryOp::Mul => ins.fmul(a, b),
            BinaryOp::Div => ins.fdiv(a, b),
            BinaryOp::Min => ins.fmin(a, b),
            BinaryOp::Max => ins.fmax(a, b),
            BinaryOp::Rem => self.call_host(HostFn::Fmod, &[a, b]),
            // Rejected by the checker.
            _ => return a,
        };
        self.finish_unless_raw(ty, result, raw)
    }

    fn int_binary(&mut self, op: BinaryOp, ty: ScalarTy, a: Value, b: Value) -> Value {
        let signed = ty == ScalarTy::I32;
        let cc = |s, u| Some(if signed { s } else { u });
        let compare = match op {
            BinaryOp::Eq => Some(IntCC::Equal),
            BinaryOp::Ne => Some(IntCC::NotEqual),
            BinaryOp::Lt => cc(IntCC::SignedLessThan, IntCC::UnsignedLessThan),
            BinaryOp::Le => cc(IntCC::SignedLessThanOrEqual, IntCC::UnsignedLessThanOrEqual),
            BinaryOp::Gt => cc(IntCC::SignedGreaterThan, IntCC::UnsignedGreaterThan),
            BinaryOp::Ge => cc(
                IntCC::SignedGreaterThanOrEqual,
                IntCC::UnsignedGreaterThanOrEqual,
            ),
            _ => None,
        };
        if let Some(cc) = compare {
            let flag = self.b.ins().icmp(cc, a, b);
            return self.b.ins().uextend(types::I32, flag);
        }
        let ins = self.b.ins();
        match op {
            BinaryOp::Add => ins.iadd(a, b),
            BinaryOp::Sub => ins.isub(a, b),
            BinaryOp::Mul => ins.imul(a, b),
            BinaryOp::Min if signed => ins.smin(a, b),
            BinaryOp::Min => ins.umin(a, b),
            BinaryOp::Max if signed => ins.smax(a, b),
            BinaryOp::Max => ins.umax(a, b),
            BinaryOp::And => ins.band(a, b),
            BinaryOp::Or => ins.bor(a, b),
            BinaryOp::Div | BinaryOp::Rem => self.int_divide(op, ty, a, b),
            // Comparisons are handled above.
            _ => a,
        }
    }

    /// Integer `/` or `%`: division by zero stops the task; `i32::MIN / -1` wraps.
    fn int_divide(&mut self, op: BinaryOp, ty: ScalarTy, a: Value, b: Value) -> Value {
        let is_zero = self.b.ins().icmp_imm_s(IntCC::Equal, b, 0);
        let zero = self.b.create_block();
        self.b.set_cold_block(zero);
        let divide = self.b.create_block();
        self.b.ins().brif(is_zero, zero, &[], divide, &[]);
        self.b.switch_to_block(zero);
        let array = self.iconst32(FAULT_DIV_BY_ZERO);
        let dividend = self.widen(ty, a);
        let bound = self.b.ins().iconst(types::I64, 0);
        self.fault_now([array, dividend, bound]);
        self.b.switch_to_block(divide);
        if ty != ScalarTy::I32 {
            return match op {
                BinaryOp::Div => self.b.ins().udiv(a, b),
                _ => self.b.ins().urem(a, b),
            };
        }
        // The machine traps on i32::MIN / -1; divide by 1 instead and negate (x % -1 == x % 1
        // == 0).
        let minus_one = self.b.ins().iconst(types::I32, i64::from(u32::MAX));
        let is_minus_one = self.b.ins().icmp(IntCC::Equal, b, minus_one);
        let one = self.b.ins().iconst(types::I32, 1);
        let divisor = self.b.ins().select(is_minus_one, one, b);
        match op {
            BinaryOp::Div => {
                let quotient = self.b.ins().sdiv(a, divisor);
                let negated = self.b.ins().ineg(a);
                self.b.ins().select(is_minus_one, negated, quotient)
            }
            _ => self.b.ins().srem(a, divisor),
        }
    }
}

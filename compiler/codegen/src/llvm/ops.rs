//! Scalar operations in LLVM IR, computing exactly the bits `crate::semantics` defines: NaN
//! canonicalisation, `f16` rounding, wrapping and checked integer division, saturating casts.
//! Nothing here carries fast-math flags, so LLVM keeps IEEE semantics (and never fuses a
//! multiply with an add).

use inkwell::values::{BasicValueEnum, FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};
use wsel_ir::kernel::{AssignOp, BinaryOp, MathFn, ScalarTy, UnaryOp};

use super::function::{Gen, Tr};
use crate::faults::FAULT_DIV_BY_ZERO;
use crate::host::HostFn;
use crate::semantics::{self, CANONICAL_NAN};

type V<'ctx> = BasicValueEnum<'ctx>;

impl<'ctx> Gen<'_, 'ctx> {
    /// A constant of type `ty` with binary32 or integer bits `bits`.
    pub(super) fn constant(&mut self, ty: ScalarTy, bits: u32) -> Tr<V<'ctx>> {
        let bits = semantics::constant(ty, bits);
        if ty.is_float() {
            Ok(self.float_bits(bits)?.into())
        } else {
            Ok(self.i32(bits).into())
        }
    }

    /// The float with exactly these bits (through an integer, so NaN payloads survive).
    fn float_bits(&mut self, bits: u32) -> Tr<FloatValue<'ctx>> {
        Ok(self
            .b
            .build_bit_cast(self.i32(bits), self.t.f32, "")?
            .into_float_value())
    }

    /// The last step of every float arithmetic operation: round `f16`, canonicalise NaN.
    pub(super) fn finish(&mut self, ty: ScalarTy, x: FloatValue<'ctx>) -> Tr<V<'ctx>> {
        match ty {
            ScalarTy::F16 => self.call_host(HostFn::RoundF16, &[x.into()]),
            _ => {
                let nan = self.b.build_float_compare(FloatPredicate::UNO, x, x, "")?;
                let canonical = self.float_bits(CANONICAL_NAN)?;
                Ok(self.b.build_select(nan, canonical, x, "")?)
            }
        }
    }

    pub(super) fn unary(&mut self, op: UnaryOp, ty: ScalarTy, a: V<'ctx>) -> Tr<V<'ctx>> {
        Ok(match (op, ty) {
            (UnaryOp::Neg, ScalarTy::F32) => {
                self.b.build_float_neg(a.into_float_value(), "")?.into()
            }
            (UnaryOp::Neg, ScalarTy::F16) => {
                let negated = self.b.build_float_neg(a.into_float_value(), "")?;
                self.finish(ty, negated)?
            }
            (UnaryOp::Neg, _) => self.b.build_int_neg(a.into_int_value(), "")?.into(),
            (UnaryOp::Not, ScalarTy::Bool) => self
                .b
                .build_xor(a.into_int_value(), self.i32(1), "")?
                .into(),
            (UnaryOp::Not, ScalarTy::I32 | ScalarTy::U32) => {
                self.b.build_not(a.into_int_value(), "")?.into()
            }
            // Rejected by the checker.
            (UnaryOp::Not, _) => a,
        })
    }

    /// `a op b` where `b` is computed by `rhs` only when `&&`/`||` on `bool` need it.
    pub(super) fn binary_lazy(
        &mut self,
        op: BinaryOp,
        ty: ScalarTy,
        a: V<'ctx>,
        rhs: impl FnOnce(&mut Self) -> Tr<V<'ctx>>,
    ) -> Tr<V<'ctx>> {
        if ty != ScalarTy::Bool || !matches!(op, BinaryOp::And | BinaryOp::Or) {
            let b = rhs(self)?;
            return self.binary(op, ty, a, b);
        }
        let eval_rhs = self.block("rhs");
        let done = self.block("logic_done");
        let here = self.current_block()?;
        let a_int = a.into_int_value();
        if op == BinaryOp::And {
            // false && _ is false.
            let is_true = self.truth(a)?;
            self.b.build_conditional_branch(is_true, eval_rhs, done)?;
        } else {
            // true || _ is true.
            let is_true = self
                .b
                .build_int_compare(IntPredicate::EQ, a_int, self.i32(1), "")?;
            self.b.build_conditional_branch(is_true, done, eval_rhs)?;
        }
        self.b.position_at_end(eval_rhs);
        let b = rhs(self)?;
        let both = self.binary(op, ty, a, b)?;
        let rhs_end = self.current_block()?;
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(done);
        let phi = self.b.build_phi(self.t.i32, "logic")?;
        phi.add_incoming(&[(&a_int, here), (&both, rhs_end)]);
        Ok(phi.as_basic_value())
    }

    /// `a op b` with both operands evaluated.
    pub(super) fn binary(
        &mut self,
        op: BinaryOp,
        ty: ScalarTy,
        a: V<'ctx>,
        b: V<'ctx>,
    ) -> Tr<V<'ctx>> {
        if ty.is_float() {
            self.float_binary(op, ty, a.into_float_value(), b.into_float_value())
        } else {
            self.int_binary(op, ty, a.into_int_value(), b.into_int_value())
        }
    }

    /// `old op= value`.
    pub(super) fn combine(
        &mut self,
        op: AssignOp,
        ty: ScalarTy,
        old: V<'ctx>,
        value: V<'ctx>,
    ) -> Tr<V<'ctx>> {
        let op = match op {
            AssignOp::Set => return Ok(value),
            AssignOp::Add => BinaryOp::Add,
            AssignOp::Sub => BinaryOp::Sub,
            AssignOp::Mul => BinaryOp::Mul,
            AssignOp::Div => BinaryOp::Div,
        };
        self.binary(op, ty, old, value)
    }

    pub(super) fn cast(&mut self, from: ScalarTy, to: ScalarTy, value: V<'ctx>) -> Tr<V<'ctx>> {
        use ScalarTy::*;
        let (i32t, f32t) = (self.t.i32, self.t.f32);
        Ok(match (from, to) {
            _ if from == to => value,
            (F16, F32) => value,
            (F32, F16) => self.finish(F16, value.into_float_value())?,
            (F32 | F16, I32) => self.intrinsic(
                "llvm.fptosi.sat",
                &[i32t.into(), f32t.into()],
                &[value.into()],
            )?,
            (F32 | F16, U32) => self.intrinsic(
                "llvm.fptoui.sat",
                &[i32t.into(), f32t.into()],
                &[value.into()],
            )?,
            (F32 | F16, Bool) => {
                let zero = f32t.const_zero();
                let nonzero = self.b.build_float_compare(
                    FloatPredicate::UNE,
                    value.into_float_value(),
                    zero,
                    "",
                )?;
                self.bool_value(nonzero)?
            }
            (I32, F32 | F16) => {
                let float = self
                    .b
                    .build_signed_int_to_float(value.into_int_value(), f32t, "")?;
                self.finish_conversion(to, float)?
            }
            (U32 | Bool, F32 | F16) => {
                let float = self
                    .b
                    .build_unsigned_int_to_float(value.into_int_value(), f32t, "")?;
                self.finish_conversion(to, float)?
            }
            (I32 | U32, Bool) => {
                let nonzero = self.truth(value)?;
                self.bool_value(nonzero)?
            }
            (I32 | U32 | Bool, I32 | U32) => value,
            (F32, F32) | (F16, F16) | (Bool, Bool) => value,
        })
    }

    pub(super) fn math(&mut self, func: MathFn, ty: ScalarTy, a: V<'ctx>) -> Tr<V<'ctx>> {
        let f32t = self.t.f32.into();
        Ok(match (func, ty) {
            (MathFn::Abs, ScalarTy::F32) => self.intrinsic("llvm.fabs", &[f32t], &[a.into()])?,
            (MathFn::Abs, ScalarTy::F16) => {
                let abs = self.intrinsic("llvm.fabs", &[f32t], &[a.into()])?;
                self.finish(ty, abs.into_float_value())?
            }
            (MathFn::Abs, ScalarTy::I32) => {
                // Wrapping: |i32::MIN| is i32::MIN.
                let x = a.into_int_value();
                let negative = self
                    .b
                    .build_int_compare(IntPredicate::SLT, x, self.i32(0), "")?;
                let negated = self.b.build_int_neg(x, "")?;
                self.b.build_select(negative, negated, x, "")?
            }
            (MathFn::Abs, _) => a,
            (MathFn::Sqrt, _) => {
                let root = self.intrinsic("llvm.sqrt", &[f32t], &[a.into()])?;
                self.finish(ty, root.into_float_value())?
            }
            (MathFn::Exp, _) => self.host_math(HostFn::Exp, ty, a)?,
            (MathFn::Log, _) => self.host_math(HostFn::Log, ty, a)?,
            (MathFn::Tanh, _) => self.host_math(HostFn::Tanh, ty, a)?,
        })
    }

    fn host_math(&mut self, func: HostFn, ty: ScalarTy, a: V<'ctx>) -> Tr<V<'ctx>> {
        let result = self.call_host(func, &[a.into()])?;
        self.finish(ty, result.into_float_value())
    }

    /// An integer converted to a float: exact in binary32 terms, only `f16` needs rounding.
    fn finish_conversion(&mut self, to: ScalarTy, float: FloatValue<'ctx>) -> Tr<V<'ctx>> {
        if to == ScalarTy::F16 {
            self.finish(to, float)
        } else {
            Ok(float.into())
        }
    }

    fn float_binary(
        &mut self,
        op: BinaryOp,
        ty: ScalarTy,
        a: FloatValue<'ctx>,
        b: FloatValue<'ctx>,
    ) -> Tr<V<'ctx>> {
        let predicate = match op {
            BinaryOp::Eq => Some(FloatPredicate::OEQ),
            BinaryOp::Ne => Some(FloatPredicate::UNE),
            BinaryOp::Lt => Some(FloatPredicate::OLT),
            BinaryOp::Le => Some(FloatPredicate::OLE),
            BinaryOp::Gt => Some(FloatPredicate::OGT),
            BinaryOp::Ge => Some(FloatPredicate::OGE),
            _ => None,
        };
        if let Some(predicate) = predicate {
            let flag = self.b.build_float_compare(predicate, a, b, "")?;
            return self.bool_value(flag);
        }
        let raw = match op {
            BinaryOp::Add => self.b.build_float_add(a, b, "")?,
            BinaryOp::Sub => self.b.build_float_sub(a, b, "")?,
            BinaryOp::Mul => self.b.build_float_mul(a, b, "")?,
            BinaryOp::Div => self.b.build_float_div(a, b, "")?,
            BinaryOp::Min => self.float_min_max(a, b, true)?,
            BinaryOp::Max => self.float_min_max(a, b, false)?,
            BinaryOp::Rem => self
                .call_host(HostFn::Fmod, &[a.into(), b.into()])?
                .into_float_value(),
            // Rejected by the checker.
            _ => return Ok(a.into()),
        };
        self.finish(ty, raw)
    }

    /// IEEE 754-2019 minimum/maximum as `semantics::float_min`/`float_max` spell it out.
    fn float_min_max(
        &mut self,
        a: FloatValue<'ctx>,
        b: FloatValue<'ctx>,
        min: bool,
    ) -> Tr<FloatValue<'ctx>> {
        let nan = self.b.build_float_compare(FloatPredicate::UNO, a, b, "")?;
        let before = if min {
            FloatPredicate::OLT
        } else {
            FloatPredicate::OGT
        };
        let a_first = self.b.build_float_compare(before, a, b, "")?;
        let b_first = self.b.build_float_compare(before, b, a, "")?;
        let a_bits = self.b.build_bit_cast(a, self.t.i32, "")?.into_int_value();
        let b_bits = self.b.build_bit_cast(b, self.t.i32, "")?.into_int_value();
        // Equal operands: the same value, or zeros of which -0 wins a min and +0 a max.
        let equal_bits = if min {
            self.b.build_or(a_bits, b_bits, "")?
        } else {
            self.b.build_and(a_bits, b_bits, "")?
        };
        let equal = self
            .b
            .build_bit_cast(equal_bits, self.t.f32, "")?
            .into_float_value();
        let pick = self.b.build_select(b_first, b, equal, "")?;
        let pick = self.b.build_select(a_first, a.into(), pick, "")?;
        let canonical = self.float_bits(CANONICAL_NAN)?;
        Ok(self
            .b
            .build_select(nan, canonical.into(), pick, "")?
            .into_float_value())
    }

    fn int_binary(
        &mut self,
        op: BinaryOp,
        ty: ScalarTy,
        a: IntValue<'ctx>,
        b: IntValue<'ctx>,
    ) -> Tr<V<'ctx>> {
        let signed = ty == ScalarTy::I32;
        let pick = |s, u| Some(if signed { s } else { u });
        let predicate = match op {
            BinaryOp::Eq => Some(IntPredicate::EQ),
            BinaryOp::Ne => Some(IntPredicate::NE),
            BinaryOp::Lt => pick(IntPredicate::SLT, IntPredicate::ULT),
            BinaryOp::Le => pick(IntPredicate::SLE, IntPredicate::ULE),
            BinaryOp::Gt => pick(IntPredicate::SGT, IntPredicate::UGT),
            BinaryOp::Ge => pick(IntPredicate::SGE, IntPredicate::UGE),
            _ => None,
        };
        if let Some(predicate) = predicate {
            let flag = self.b.build_int_compare(predicate, a, b, "")?;
            return self.bool_value(flag);
        }
        Ok(match op {
            BinaryOp::Add => self.b.build_int_add(a, b, "")?.into(),
            BinaryOp::Sub => self.b.build_int_sub(a, b, "")?.into(),
            BinaryOp::Mul => self.b.build_int_mul(a, b, "")?.into(),
            BinaryOp::And => self.b.build_and(a, b, "")?.into(),
            BinaryOp::Or => self.b.build_or(a, b, "")?.into(),
            BinaryOp::Min | BinaryOp::Max => {
                let less = if signed {
                    IntPredicate::SLT
                } else {
                    IntPredicate::ULT
                };
                let a_less = self.b.build_int_compare(less, a, b, "")?;
                let (first, second) = if op == BinaryOp::Min { (a, b) } else { (b, a) };
                self.b.build_select(a_less, first, second, "")?
            }
            BinaryOp::Div | BinaryOp::Rem => self.int_divide(op, ty, a, b)?.into(),
            // Comparisons are handled above.
            _ => a.into(),
        })
    }

    /// Integer `/` or `%`: division by zero stops the task; `i32::MIN / -1` wraps.
    fn int_divide(
        &mut self,
        op: BinaryOp,
        ty: ScalarTy,
        a: IntValue<'ctx>,
        b: IntValue<'ctx>,
    ) -> Tr<IntValue<'ctx>> {
        let is_zero = self
            .b
            .build_int_compare(IntPredicate::EQ, b, self.i32(0), "")?;
        let zero = self.block("div_zero");
        let divide = self.block("divide");
        self.b.build_conditional_branch(is_zero, zero, divide)?;
        self.b.position_at_end(zero);
        let array = self.i32(FAULT_DIV_BY_ZERO);
        let dividend = self.widen(ty, a)?;
        let bound = self.i64(0);
        self.fault_now([array, dividend, bound])?;
        self.b.build_unreachable()?;
        self.b.position_at_end(divide);
        if ty != ScalarTy::I32 {
            return Ok(match op {
                BinaryOp::Div => self.b.build_int_unsigned_div(a, b, "")?,
                _ => self.b.build_int_unsigned_rem(a, b, "")?,
            });
        }
        // i32::MIN / -1 is undefined in LLVM: divide by 1 instead and negate (x % -1 == x % 1
        // == 0).
        let is_minus_one = self
            .b
            .build_int_compare(IntPredicate::EQ, b, self.i32(u32::MAX), "")?;
        let divisor = self
            .b
            .build_select(is_minus_one, self.i32(1), b, "")?
            .into_int_value();
        Ok(match op {
            BinaryOp::Div => {
                let quotient = self.b.build_int_signed_div(a, divisor, "")?;
                let negated = self.b.build_int_neg(a, "")?;
                self.b
                    .build_select(is_minus_one, negated, quotient, "")?
                    .into_int_value()
            }
            _ => self.b.build_int_signed_rem(a, divisor, "")?,
        })
    }
}

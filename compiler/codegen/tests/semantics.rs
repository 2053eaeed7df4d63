//! The shared scalar semantics, checked directly.

use wsel_codegen::semantics::{self, CANONICAL_NAN};
use wsel_ir::kernel::{BinaryOp, MathFn, ScalarTy, UnaryOp};

#[test]
fn min_and_max_propagate_nan_and_order_signed_zeros() {
    let (neg, pos) = (-0.0f32, 0.0f32);
    assert_eq!(semantics::float_min(pos, neg).to_bits(), neg.to_bits());
    assert_eq!(semantics::float_min(neg, pos).to_bits(), neg.to_bits());
    assert_eq!(semantics::float_max(neg, pos).to_bits(), pos.to_bits());
    assert_eq!(semantics::float_max(pos, neg).to_bits(), pos.to_bits());
    let odd_nan = f32::from_bits(0xFFC0_1234);
    assert_eq!(semantics::float_min(1.0, odd_nan).to_bits(), CANONICAL_NAN);
    assert_eq!(semantics::float_max(odd_nan, 1.0).to_bits(), CANONICAL_NAN);
    assert_eq!(semantics::float_min(-1.0, 2.0), -1.0);
}

#[test]
fn f16_rounding_is_round_to_nearest_even() {
    // Every binary16 value survives.
    for bits in 0..=u16::MAX {
        let value = half::f16::from_bits(bits).to_f32();
        if value.is_nan() {
            assert_eq!(semantics::round_f16(value).to_bits(), CANONICAL_NAN);
        } else {
            assert_eq!(semantics::round_f16(value).to_bits(), value.to_bits());
        }
    }
    // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties to even gives 1.
    assert_eq!(semantics::round_f16(1.0 + 2f32.powi(-11)), 1.0);
    // 1 + 3 × 2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: even is 1 + 2^-9.
    assert_eq!(
        semantics::round_f16(1.0 + 3.0 * 2f32.powi(-11)),
        1.0 + 2f32.powi(-9)
    );
    assert_eq!(semantics::round_f16(65_519.0), 65_504.0);
    assert_eq!(semantics::round_f16(65_520.0), f32::INFINITY);
    assert_eq!(semantics::round_f16(-1.0e-9).to_bits(), (-0.0f32).to_bits());
}

#[test]
fn float_results_are_canonical_nans_and_sign_ops_are_bitwise() {
    let inf = f32::INFINITY.to_bits();
    let sub = semantics::binary(BinaryOp::Sub, ScalarTy::F32, inf, inf).expect("no fault");
    assert_eq!(sub, CANONICAL_NAN);
    let odd_nan = 0x7F80_0001;
    assert_eq!(
        semantics::unary(UnaryOp::Neg, ScalarTy::F32, odd_nan),
        odd_nan ^ 0x8000_0000
    );
    assert_eq!(
        semantics::math(MathFn::Abs, ScalarTy::F32, 0xFFC0_0001),
        0x7FC0_0001
    );
    assert_eq!(
        semantics::math(MathFn::Sqrt, ScalarTy::F32, (-4.0f32).to_bits()),
        CANONICAL_NAN
    );
}

#[test]
fn integer_division_faults_only_on_zero() {
    let min = i32::MIN as u32;
    let minus_one = (-1i32) as u32;
    assert_eq!(
        semantics::binary(BinaryOp::Div, ScalarTy::I32, min, minus_one),
        Ok(min)
    );
    assert_eq!(
        semantics::binary(BinaryOp::Rem, ScalarTy::I32, min, minus_one),
        Ok(0)
    );
    let fault = semantics::binary(BinaryOp::Div, ScalarTy::I32, (-5i32) as u32, 0);
    assert_eq!(fault.map_err(|f| f.dividend), Err(-5));
    let fault = semantics::binary(BinaryOp::Rem, ScalarTy::U32, u32::MAX, 0);
    assert_eq!(fault.map_err(|f| f.dividend), Err(i64::from(u32::MAX)));
}

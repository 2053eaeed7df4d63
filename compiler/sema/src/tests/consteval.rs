//! Tests: the shared compile-time evaluator (`crate::consteval`) on whole expressions, as
//! lowering uses it once parameters are known, and the checker's reports of the same rules.

use std::collections::BTreeMap;

use expect_test::expect;
use wsel_syntax::ast::{self, BinaryOp, ScalarType};

use super::check;
use crate::consteval::{ConstNames, EvalError, eval_as, fold};
use crate::ty::{Value, scalar_name};

/// Compile-time names for a test: `n: u32` and `k: i32` with the given values.
struct Names(BTreeMap<&'static str, (Value, ScalarType)>);

impl ConstNames for Names {
    fn const_name(&self, name: &str) -> Option<(Value, ScalarType)> {
        self.0.get(name).copied()
    }
}

fn names(n: i128) -> Names {
    Names(BTreeMap::from([
        ("n", (Value::Int(n), ScalarType::U32)),
        ("k", (Value::Int(-3), ScalarType::I32)),
    ]))
}

/// The expression `text`, parsed as a constant's initialiser.
fn parse_expr(text: &str) -> ast::Expr {
    let parsed = wsel_syntax::parse(&format!("const X: u32 = {text};"));
    assert!(parsed.errors.is_empty(), "{text}: {:?}", parsed.errors);
    match parsed.module.items.into_iter().next() {
        Some(ast::Item::Const(decl)) => decl.value,
        other => panic!("{text}: not a constant: {other:?}"),
    }
}

/// Each case `(ty, n, text)` evaluated as a `ty` value with `n` bound to `n`, one line each:
/// the value, or the error as lowering prints it.
fn eval_all(cases: &[(ScalarType, i128, &str)]) -> String {
    let mut out = String::new();
    for (ty, n, text) in cases {
        let result = match eval_as(&names(*n), &parse_expr(text), *ty) {
            Ok(value) => value.to_string(),
            Err(e) => format!("error: {e}"),
        };
        out.push_str(&format!(
            "{} {text} (n = {n}): {result}\n",
            scalar_name(*ty)
        ));
    }
    out
}

use ScalarType::{Bool, F16, F32, I32, U32};

#[test]
fn whole_expressions_evaluate_by_the_checker_rules() {
    expect![[r#"
        u32 n * n / n (n = 60000): 60000
        u32 n * n / n (n = 70000): error: the value 4900000000 does not fit u32
        u32 n - n - 1 + 1 (n = 5): error: the value -1 does not fit u32
        u32 1 - 2 + n (n = 5): error: the value -1 does not fit u32
        i32 k * 2 - 1 (n = 0): -7
        u32 (2147483647 + 1) as u32 (n = 0): 2147483648
        i32 (2147483647 + 1) as i32 (n = 0): error: the value 2147483648 does not fit i32
        u32 (9223372036854775807 * 2) as u32 (n = 0): error: the value 18446744073709551614 does not fit u32
        u32 (9223372036854775807 * 4) as u32 (n = 0): error: the value 36893488147419103228 does not fit i64
        f32 16777216.0 + 1.0 - 16777216.0 (n = 0): 1.0
        f16 2048.0 + 1.0 - 2048.0 (n = 0): 1.0
        f32 0.1 * 1.0 (n = 0): 0.1
        f32 n as f32 / 4.0 (n = 6): 1.5
        i32 -2.7 as i32 (n = 0): -2
        u32 max(n, 7) - min(n, 7) (n = 3): 4
        i32 max(k, -5) (n = 0): -3
        f32 max(0.5, 0.25) (n = 0): 0.5
        bool n >= 3 && !(k > 0) || false (n = 3): true
        bool true != (1.0 < 0.5) (n = 0): true
        u32 n / (n - n) (n = 4): error: division by zero
        u32 n % 0 (n = 4): error: division by zero
        f32 1.0 / 0.0 (n = 4): error: division by zero
        u32 m + 1 (n = 4): error: `m` is not a compile-time value
        u32 pe.row (n = 4): error: this expression is not a compile-time value
        f32 2 (n = 4): error: expected a f32 value, found i32
        u32 n == 1 (n = 4): error: expected a u32 value, found bool
        f32 1.0 % 2.0 (n = 4): error: invalid operands
        bool -true (n = 4): error: invalid operand
    "#]]
    .assert_eq(&eval_all(&[
        // Every intermediate integer result must fit its type: 60000 * 60000 fits u32,
        // 70000 * 70000 does not, although the quotient would. Literals take `n`'s type, so
        // `1 - 2` is a u32 subtraction even before `n` is seen.
        (U32, 60_000, "n * n / n"),
        (U32, 70_000, "n * n / n"),
        (U32, 5, "n - n - 1 + 1"),
        (U32, 5, "1 - 2 + n"),
        (I32, 0, "k * 2 - 1"),
        // Without a context literals are wide (the operand of a cast is exact, then checked
        // as the cast's type), but an untyped integer must still fit i64 or u64.
        (U32, 0, "(2147483647 + 1) as u32"),
        (I32, 0, "(2147483647 + 1) as i32"),
        (U32, 0, "(9223372036854775807 * 2) as u32"),
        (U32, 0, "(9223372036854775807 * 4) as u32"),
        // Float arithmetic is f64, not rounded until stored: in f32 16777216 + 1 rounds back
        // to 16777216, in f16 2048 + 1 to 2048; 0.1 stays the f64 0.1.
        (F32, 0, "16777216.0 + 1.0 - 16777216.0"),
        (F16, 0, "2048.0 + 1.0 - 2048.0"),
        (F32, 0, "0.1 * 1.0"),
        (F32, 6, "n as f32 / 4.0"),
        (I32, 0, "-2.7 as i32"),
        // Comparisons, `min`, `max` and logic.
        (U32, 3, "max(n, 7) - min(n, 7)"),
        (I32, 0, "max(k, -5)"),
        (F32, 0, "max(0.5, 0.25)"),
        (Bool, 3, "n >= 3 && !(k > 0) || false"),
        (Bool, 0, "true != (1.0 < 0.5)"),
        // What has no value, in lowering's words.
        (U32, 4, "n / (n - n)"),
        (U32, 4, "n % 0"),
        (F32, 4, "1.0 / 0.0"),
        (U32, 4, "m + 1"),
        (U32, 4, "pe.row"),
        (F32, 4, "2"),
        (U32, 4, "n == 1"),
        (F32, 4, "1.0 % 2.0"),
        (Bool, 4, "-true"),
    ]));
}

#[test]
fn nan_compares_false_and_i128_overflow_is_an_error() {
    let nan = Value::Float(f64::NAN);
    assert_eq!(
        fold(BinaryOp::Lt, nan, Value::Float(1.0)),
        Ok(Value::Bool(false))
    );
    assert_eq!(fold(BinaryOp::Ne, nan, nan), Ok(Value::Bool(true)));
    assert_eq!(
        fold(BinaryOp::Add, Value::Int(i128::MAX), Value::Int(1)),
        Err(EvalError::Overflow)
    );
}

#[test]
fn the_checker_reports_an_intermediate_overflow_where_it_happens() {
    expect![[r#"
        E0203 main.wse:1:16 `4294967295 * 2`: this compile-time value does not fit in `u32`
            [overflows]
        E0203 main.wse:2:17 `-2147483647 - 2`: this compile-time value does not fit in `i32`
            [overflows]
        E0204 main.wse:3:22 `0.0`: division by zero
            [this divisor is zero]
    "#]]
    .assert_eq(&check(
        "const A: u32 = 4294967295 * 2 / 2;\nconst B: i32 = (-2147483647 - 2) + 1;\nconst C: f32 = 1.0 / 0.0;\n",
    ));
}

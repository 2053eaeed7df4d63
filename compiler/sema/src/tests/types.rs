//! Tests: types and compile-time constants (E02xx).

use expect_test::expect;

use super::*;

fn task(body: &str) -> String {
    check(&format!(
        "kernel k(n: u32) {{\n    var a: [f32; 8];\n    var b: [f32; 4];\n    var u: u32;\n    var f: f32;\n    task main() {{ {body} }}\n}}\n"
    ))
}

#[test]
fn e0201_mismatched_types() {
    expect![[r#"
        E0201 main.wse:6:23 `2`: mismatched types: expected `f32`, found `integer`
            [expected `f32`]
            help: write a float literal such as `2.0`
        E0201 main.wse:6:30 `f`: mismatched types: expected `u32`, found `f32`
            [expected `u32`]
            help: convert explicitly with `as u32`
        E0201 main.wse:6:57 `true`: mismatched types: expected `u32`, found `bool`
            [expected `u32`]
    "#]]
    .assert_eq(&task("f = 2; u = f; f = 1.5 + u as f32; u = true;"));
}

#[test]
fn literals_take_the_type_the_context_needs() {
    expect![[""]].assert_eq(&task(
        "u = 2 + u * 3; f = 2.0 * f; let i = 5; let g = 0.5; let c: bool = u < 3;",
    ));
}

#[test]
fn e0202_bad_operands() {
    expect![[r#"
        E0202 main.wse:6:23 `f % 2.0`: cannot apply `%` to `f32` and `f32`
            [invalid operands]
        E0202 main.wse:6:46 `true + false`: cannot apply `+` to `bool` and `bool`
            [invalid operands]
        E0202 main.wse:6:68 `-u`: cannot apply `-` to `u32`
            [invalid operands]
    "#]]
    .assert_eq(&task(
        "f = f % 2.0; let t: bool = true + false; let z = -u;",
    ));
}

#[test]
fn e0203_overflow_and_e0204_division_by_zero() {
    let out = check(
        "const A: u32 = 4294967295 + 1;\nconst B: i32 = 7 / (3 - 3);\nconst C: u32 = 0 - 1;\nconst D: i32 = 2147483648;\n",
    );
    expect![[r#"
        E0203 main.wse:1:16 `4294967295 + 1`: this compile-time value does not fit in `u32`
            [overflows]
        E0204 main.wse:2:21 `3 - 3`: division by zero
            [this divisor is zero]
        E0203 main.wse:3:16 `0 - 1`: this compile-time value does not fit in `u32`
            [overflows]
        E0203 main.wse:4:16 `2147483648`: this compile-time value does not fit in `i32`
            [overflows]
    "#]]
    .assert_eq(&out);
}

#[test]
fn constants_evaluate_across_items() {
    let (db, root, _) = load(&[(
        "main.wse",
        "const A: u32 = B * 2 + min(3, 7);\nconst B: u32 = 10 / 3;\n",
    )]);
    let items = crate::item_index(&db, root);
    let info = crate::const_value(&db, items[0]);
    assert_eq!(info.value, Some(crate::ty::Value::Int(9)));
    assert!(crate::diagnostics(&db, root).is_empty());
}

#[test]
fn e0205_not_constant() {
    expect![[r#"
        E0205 main.wse:2:18 `pe.row`: an array length must be known at compile time
            [not a compile-time value]
            note: compile-time values are literals, constants, kernel parameters and dimensions
    "#]]
    .assert_eq(&check(
        "kernel k() {\n    var a: [f32; pe.row];\n    task main() {}\n}\n",
    ));
}

#[test]
fn e0206_out_of_bounds() {
    expect![[r#"
        E0206 main.wse:6:21 `8`: index 8 is out of bounds for `a` of length 8
            [out of bounds]
        E0206 main.wse:6:36 `9`: slice end 9 is past the end of `a`, which has length 8
            [past the end]
            note: `a[lo..hi]` needs `lo <= hi <= 8`
        E0206 main.wse:6:46 `b[3..1]`: slice starts at 3 but ends at 1
            [reversed slice]
    "#]]
    .assert_eq(&task(
        "a[8] = 1.0; a[2..9] = 0.0; b[3..1] = 0.0; a[n] = 1.0;",
    ));
}

#[test]
fn e0207_slice_lengths_differ() {
    expect![[r#"
        E0207 main.wse:6:65 `b[0..4]`: slices in one statement must have the same length, found 4 and 3
            [this slice has length 4]
            + main.wse:6:48 `a[0..3]`: this slice has length 3
    "#]]
    .assert_eq(&task("a[0..4] = b[0..4] + a[4..8]; a[0..3] += 2.0 * b[0..4];"));
}

#[test]
fn vector_statements_broadcast_scalars() {
    expect![[""]].assert_eq(&task(
        "a[0..4] = 2.0 * b[0..4] + f; a[0..n] = exp(a[0..n] - max(a[0..n])); f = sum(b[0..4]); b[0..4] = max(b[0..4], 0.0);",
    ));
}

#[test]
fn e0208_invalid_cast() {
    expect![[r#"
        E0208 main.wse:6:23 `true as u32`: cannot cast `bool` to `u32`
            [invalid cast]
            note: casts convert between the numeric types f32, f16, i32 and u32
    "#]]
    .assert_eq(&task("u = true as u32;"));
}

#[test]
fn e0209_unknown_function_and_e0210_arity() {
    expect![[r#"
        E0209 main.wse:6:23 `expp`: unknown function `expp`
            [not a function]
            note: the functions are exp, log, sqrt, tanh, abs, max, min and sum
            help: did you mean `exp`?
        E0210 main.wse:6:36 `exp(f, f)`: `exp` takes 1 argument, but 2 were given
            [wrong number of arguments]
        E0201 main.wse:6:55 `f`: `sum` reduces a numeric slice, but this is `f32`
            [expected a slice such as `a[0..n]`]
    "#]]
    .assert_eq(&task("f = expp(f); f = exp(f, f); f = sum(f);"));
}

#[test]
fn e0211_not_assignable() {
    let out = check(
        "const C: u32 = 1;\nkernel k(n: u32) {\n    var u: u32;\n    task main() { let l: u32 = 1; l = 2; n = 3; C = 4; for i in 0..n { i = 1; } }\n}\n",
    );
    expect![[r#"
        E0211 main.wse:4:35 `l`: cannot assign to `let` binding `l`
            [cannot be assigned]
            + main.wse:4:23 `l`: defined here
            help: declare it with `var` to make it mutable
        E0211 main.wse:4:42 `n`: cannot assign to parameter `n`
            [cannot be assigned]
            + main.wse:2:10 `n`: defined here
            help: a kernel parameter is fixed by the layer that runs the kernel; copy it into a `var` to change the copy
        E0211 main.wse:4:49 `C`: cannot assign to constant `C`
            [cannot be assigned]
            + main.wse:1:7 `C`: defined here
            help: a constant never changes; declare a `var` to hold a value that does
        E0211 main.wse:4:72 `i`: cannot assign to loop variable `i`
            [cannot be assigned]
            + main.wse:4:60 `i`: defined here
            help: the loop sets its variable on every iteration; to step it yourself, use a `var` and a `while` loop
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0212_not_indexable() {
    expect![[r#"
        E0212 main.wse:6:23 `u`: cannot index into a value of type `u32`
            [not an array]
    "#]]
    .assert_eq(&task("f = u[0];"));
}

#[test]
fn e0213_vector_where_scalar_needed() {
    expect![[r#"
        E0213 main.wse:6:23 `a[0..2]`: expected a scalar, found a slice of `f32` of length 2
            [not a scalar]
            help: index the array (`a[i]`), slice it in a vector statement (`a[0..n]`) or reduce it (`sum(a[0..n])`)
        E0213 main.wse:6:35 `a[0..2] == b[0..2]`: expected a scalar, found a slice of `bool` of length 2
            [not a scalar]
            help: index the array (`a[i]`), slice it in a vector statement (`a[0..n]`) or reduce it (`sum(a[0..n])`)
        E0213 main.wse:6:62 `a`: expected a scalar, found `[f32; 8]`
            [not a scalar]
            help: index the array (`a[i]`), slice it in a vector statement (`a[0..n]`) or reduce it (`sum(a[0..n])`)
    "#]]
    .assert_eq(&task("f = a[0..2]; if a[0..2] == b[0..2] { } f = a + 1.0;"));
}

#[test]
fn select_needs_a_bool_condition_two_values_of_one_type_and_three_arguments() {
    expect![""].assert_eq(&task(
        "a[0..4] = select(a[0..4] > b[0..4], a[0..4], 0.0); f = select(f > 1.0, 1.0, f);",
    ));
    expect![[r#"
        E0201 main.wse:6:36 `b[0..4]`: mismatched types: expected `bool`, found a slice of `f32` of length 4
            [expected `bool`]
        E0202 main.wse:6:64 `select(f > 1.0, u, f)`: cannot apply `select` to `u32` and `f32`
            [invalid operands]
        E0210 main.wse:6:91 `select(true, f)`: `select` takes 3 arguments, but 2 were given
            [wrong number of arguments]
    "#]]
    .assert_eq(&task(
        "a[0..4] = select(b[0..4], a[0..4], 0.0); f = select(f > 1.0, u, f); f = select(true, f);",
    ));
}

#[test]
fn part_len_and_part_start_are_u32_and_fold_at_compile_time() {
    expect![""].assert_eq(&check(
        "const A: u32 = part_len(17, 5, 0) + part_start(17, 5, 4);
kernel k(n: u32) {
    var a: [f32; part_len(n, 3, 0)];
    task main() { let s = part_start(n, region.cols, pe.col); a[0] = s as f32; }
}
",
    ));
    let consts = check(
        "const A: u32 = part_len(17, 5, 0) + part_start(17, 5, 4);\nconst B: u32 = 32 - A;\n",
    );
    // 4 + 14 = 18: B is 14, no overflow.
    expect![""].assert_eq(&consts);
    expect![[r#"
        E0204 main.wse:1:29 `0`: division by zero
            [this divisor is zero]
        E0201 main.wse:2:27 `1.0`: mismatched types: expected `u32`, found `float`
            [expected `u32`]
        E0210 main.wse:3:16 `part_len(1, 2)`: `part_len` takes 3 arguments, but 2 were given
            [wrong number of arguments]
        E0203 main.wse:4:16 `3 - part_len(17, 5, 0)`: this compile-time value does not fit in `u32`
            [overflows]
    "#]]
    .assert_eq(&check(
        "const A: u32 = part_len(17, 0, 0);\nconst B: u32 = part_start(1.0, 2, 0);\nconst C: u32 = part_len(1, 2);\nconst D: u32 = 3 - part_len(17, 5, 0);\n",
    ));
}

#[test]
fn e0214_type_not_allowed() {
    let out = check(
        "const S: stream<f32> = 1;\nkernel k(p: [f32; 2]) {\n    var s: stream<f32>;\n    in q: f32 from west;\n    task main() { var t: [f32; 2]; }\n}\n",
    );
    expect![[r#"
        E0214 main.wse:1:10 `stream<f32>`: type `stream<f32>` is not allowed for a constant
            [type not allowed here]
        E0214 main.wse:2:13 `[f32; 2]`: type `[f32; 2]` is not allowed for a kernel parameter
            [type not allowed here]
        E0214 main.wse:3:12 `stream<f32>`: type `stream<f32>` is not allowed for a kernel variable
            [type not allowed here]
        E0214 main.wse:4:11 `f32`: type `f32` is not allowed for a port
            [type not allowed here]
            help: ports carry scalars: `stream<f32>`
        E0214 main.wse:5:26 `[f32; 2]`: type `[f32; 2]` is not allowed for a task-local variable
            [type not allowed here]
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0215_constant_cycle() {
    expect![[r#"
        E0215 main.wse:1:7 `A`: constant `A` is defined in terms of itself
            [cyclic definition]
            note: the cycle is `A` → `B` → `A`
    "#]]
    .assert_eq(&check("const A: u32 = B + 1;\nconst B: u32 = A;\n"));
}

#[test]
fn e0216_expression_statement() {
    expect![[r#"
        E0216 main.wse:6:19 `exp(f)`: this expression's value is never used
            [expression statement has no effect]
            help: assign it to something, or remove it
    "#]]
    .assert_eq(&task("exp(f);"));
}

#[test]
fn e0217_bad_dimension() {
    let out = check("model m(x: f32[B, N], y: f32[B, 2 * N]) -> f32[B, N] {\n    return x;\n}\n");
    expect![[r#"
        E0217 main.wse:1:33 `2 * N`: a tensor dimension must be a constant expression or a dimension variable
            [unsupported dimension]
            help: only a layer's output dimension may be an expression of its dimension variables and scalar inputs (`-> y: f32[B, 2 * N]`)
    "#]]
    .assert_eq(&out);
}

//! Tricky cases of kernel lowering, each as a small kernel and the readable IR it lowers to.

mod common;

use expect_test::{Expect, expect};
use wsel_ir::graph::CValue;
use wsel_ir::print::print_kernel;
use wsel_lower::lower_kernel;
use wsel_sema::ItemKind;

/// Lowers kernel `k` of `src` with `args` and compares its printed IR.
fn check(src: &str, args: &[(&str, i64)], expected: Expect) {
    let (db, file) = common::load_one(src);
    expected.assert_eq(&print_kernel(&common::lower(&db, file, "k", args)));
}

/// The lowering error of kernel `k` of `src` with `args`.
fn error(src: &str, args: &[(&str, CValue)]) -> String {
    let (db, file) = common::load_one(src);
    let kernel = common::item(&db, file, ItemKind::Kernel, "k");
    let args: Vec<(String, CValue)> = args.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    match lower_kernel(&db, kernel, &args) {
        Ok(ir) => panic!("expected an error, got\n{}", print_kernel(&ir)),
        Err(e) => {
            let at = e
                .location
                .as_ref()
                .map(|l| format!(" at {}..{}", l.span.start, l.span.end))
                .unwrap_or_default();
            format!("{e}{at}")
        }
    }
}

#[test]
fn scalars_broadcast_in_vector_statements() {
    check(
        r"
kernel k(n: u32) {
    var x: [f32; n];
    var y: [f32; n] = 1.5;
    task main() {
        let a = x[0] * 2.0;
        y[0..n] = a * x[0..n] + 1.0;
        y[1..n] -= max(y[0..n - 1], 0.0) / sum(x[0..n]);
        y[0..n] = -x[0..n];
    }
}
",
        &[("n", 4)],
        expect![[r#"
            kernel k<n=4> (entry: main) {
                sram x: [f32; 4] @ word 0 = 0.0
                sram y: [f32; 4] @ word 4 = 1.5
                task main() {
                    a%0 = mul.f32(x[0u], 2.0);
                    y[0u +: 4u] = add.f32(mul.f32(a%0, x[0u + i]), 1.0);
                    y[1u +: 3u] -= div.f32(max.f32(y[0u + i], 0.0), sum.f32(x[0u +: 4u]));
                    y[0u +: 4u] = neg.f32(x[0u + i]);
                }
            }
        "#]],
    );
}

#[test]
fn receives_into_scalars_elements_and_slices() {
    check(
        r"
kernel k(n: u32) {
    var a: [i32; n];
    var s: i32;
    in p: stream<i32> from west;
    out q: stream<i32> to east;
    task main() {
        recv(p, s) then got;
        recv(p, a[2]) then got;
        recv(p, a[1..n]) then got;
    }
    task got() {
        send(q, s * 2);
        send(q, a[0]);
        send(q, a[0..2]) then main;
        send(q, 7);
    }
}
",
        &[("n", 4)],
        expect![[r#"
            kernel k<n=4> (entry: main) {
                sram a: [i32; 4] @ word 0 = 0i
                sram s: [i32; 1] @ word 4 = 0i
                in p: stream<i32>
                out q: stream<i32>
                task main() {
                    recv(p, s[0u +: 1u]) then got;
                    recv(p, a[2u +: 1u]) then got;
                    recv(p, a[1u +: 3u]) then got;
                }
                task got() {
                    send(q, mul.i32(s[0u], 2i));
                    send(q, a[0u]);
                    send(q, a[0u +: 2u]) then main;
                    send(q, 7i);
                }
            }
        "#]],
    );
}

#[test]
fn else_if_chains_nest_and_constant_conditions_fold() {
    check(
        r"
kernel k(n: u32) {
    var a: [u32; 3];
    task main() {
        if pe.col == 0 {
            a[0] = 1;
        } else if pe.col == region.cols - 1 {
            a[1] = 2;
        } else {
            a[2] = 3;
        }
        if n > 2 { a[0] += n; } else { a[0] = 0; }
        while n < 2 { a[1] = 9; }
    }
}
",
        &[("n", 4)],
        expect![[r#"
            kernel k<n=4> (entry: main) {
                sram a: [u32; 3] @ word 0 = 0u
                task main() {
                    if eq.u32(pe.col, 0u) {
                        a[0u] = 1u;
                    } else {
                        if eq.u32(pe.col, sub.u32(region.cols, 1u)) {
                            a[1u] = 2u;
                        } else {
                            a[2u] = 3u;
                        }
                    }
                    a[0u] += 4u;
                }
            }
        "#]],
    );
}

#[test]
fn nested_loops_take_the_type_of_their_bounds() {
    check(
        r"
kernel k(n: u32) {
    var a: [f32; n * n];
    var count: i32 = 0;
    task main() {
        for i in 0..n {
            for j in i..n {
                a[i * n + j] = 1.0;
            }
        }
        for t in 0..3 {
            count += t;
        }
        var m: u32 = 0;
        while m < n {
            m += 1;
        }
    }
}
",
        &[("n", 3)],
        expect![[r#"
            kernel k<n=3> (entry: main) {
                sram a: [f32; 9] @ word 0 = 0.0
                sram count: [i32; 1] @ word 9 = 0i
                task main() {
                    for i%0 in 0u..3u {
                        for j%1 in i%0..3u {
                            a[add.u32(mul.u32(i%0, 3u), j%1)] = 1.0;
                        }
                    }
                    for t%2 in 0i..3i {
                        count[0u] += t%2;
                    }
                    m%3 = 0u;
                    while lt.u32(m%3, 3u) {
                        m%3 = add.u32(m%3, 1u);
                    }
                }
            }
        "#]],
    );
}

#[test]
fn casts_convert_and_fold_on_constants() {
    check(
        r"
kernel k(n: u32) {
    var f: [f32; 2];
    var u: [u32; 2];
    task main() {
        let x = (pe.row as f32) * 0.5;
        f[0] = x + (n as f32);
        u[0] = f[1] as u32;
        u[1] = (7.9 as i32) as u32;
        f[0..2] = (u[0..2] as f32) * 2.0;
    }
}
",
        &[("n", 3)],
        expect![[r#"
            kernel k<n=3> (entry: main) {
                sram f: [f32; 2] @ word 0 = 0.0
                sram u: [u32; 2] @ word 2 = 0u
                task main() {
                    x%0 = mul.f32((pe.row as f32 from u32), 0.5);
                    f[0u] = add.f32(x%0, 3.0);
                    u[0u] = (f[1u] as u32 from f32);
                    u[1u] = 7u;
                    f[0u +: 2u] = mul.f32((u[0u + i] as f32 from u32), 2.0);
                }
            }
        "#]],
    );
}

#[test]
fn f16_values_are_rounded_and_typed() {
    check(
        r"
const SCALE: f16 = 0.1;
kernel k(n: u32) {
    var h: [f16; n] = 0.1;
    var s: f16;
    task main() {
        h[0..n] += SCALE * h[0..n];
        s = sum(h[0..n]) + 1.0;
        s = max(s, -h[0]);
        h[0] = exp(s);
    }
}
",
        &[("n", 2)],
        expect![[r#"
            kernel k<n=2> (entry: main) {
                sram h: [f16; 2] @ word 0 = 0.099975586
                sram s: [f16; 1] @ word 2 = 0.0
                task main() {
                    h[0u +: 2u] += mul.f16(0.099975586, h[0u + i]);
                    s[0u] = add.f16(sum.f16(h[0u +: 2u]), 1.0);
                    s[0u] = max.f16(s[0u], neg.f16(h[0u]));
                    h[0u] = exp.f16(s[0u]);
                }
            }
        "#]],
    );
}

#[test]
fn constants_are_exact_and_rounded_when_stored() {
    // Compile-time arithmetic is f64 (in f32, 16777216 + 1 rounds back to 16777216; in f16,
    // 2048 + 1 rounds back to 2048) and exact for integers; a value is rounded to its type
    // only when it is stored.
    let src = r"
kernel k(n: u32) {
    const c: f32 = 16777216.0 + 1.0 - 16777216.0;
    var a: f32 = c + 0.1;
    var h: f16 = 2048.0 + 1.0 - 2048.0 + 0.1;
    var w: [u32; n * n / n] = n * n / n - 1;
    task main() { }
}
";
    check(
        src,
        &[("n", 60_000)],
        expect![[r#"
            kernel k<n=60000> (entry: main) {
                sram a: [f32; 1] @ word 0 = 1.1
                sram h: [f16; 1] @ word 1 = 1.0996094
                sram w: [u32; 60000] @ word 2 = 59999u
                task main() {
                }
            }
        "#]],
    );
    // 70000 * 70000 does not fit u32, although 70000 * 70000 / 70000 would.
    expect!["kernel instance `k<n=70000>`: array length: the value 4900000000 does not fit u32 at 159..168"]
        .assert_eq(&error(src, &[("n", CValue::Int(70_000))]));
}

#[test]
fn literals_default_and_locals_update() {
    check(
        r"
kernel k() {
    var a: [i32; 2];
    task main() {
        let z = 1 + 2;
        var i: u32 = 0;
        i += 1;
        i = min(i, 7);
        a[0] = z * -1;
        a[1] = abs(a[0]);
        if z > 2 && !(i == 0) { return; }
        activate main;
    }
}
",
        &[],
        expect![[r#"
            kernel k (entry: main) {
                sram a: [i32; 2] @ word 0 = 0i
                task main() {
                    z%0 = 3i;
                    i%1 = 0u;
                    i%1 = add.u32(i%1, 1u);
                    i%1 = min.u32(i%1, 7u);
                    a[0u] = mul.i32(z%0, -1i);
                    a[1u] = abs.i32(a[0u]);
                    if and.bool(gt.i32(z%0, 2i), not.bool(eq.u32(i%1, 0u))) {
                        return;
                    }
                    activate main;
                }
            }
        "#]],
    );
}

#[test]
fn slice_lengths_of_mixed_index_types() {
    check(
        r"
kernel k(n: u32) {
    var a: [f32; n];
    var b: [f32; n];
    task main() {
        let lo: i32 = 1;
        let hi: u32 = 3;
        a[lo..hi] = b[0..2];
        let k: u32 = 1;
        a[k * 2 .. k * 2 + 2] = b[k..k + 2];
        a[k..n] = 0.0;
    }
}
",
        &[("n", 4)],
        expect![[r#"
            kernel k<n=4> (entry: main) {
                sram a: [f32; 4] @ word 0 = 0.0
                sram b: [f32; 4] @ word 4 = 0.0
                task main() {
                    lo%0 = 1i;
                    hi%1 = 3u;
                    check_length(2u, sub.u32(hi%1, (lo%0 as u32 from i32)));
                    a[lo%0 +: sub.u32(hi%1, (lo%0 as u32 from i32))] = b[0u + i];
                    k%2 = 1u;
                    a[mul.u32(k%2, 2u) +: 2u] = b[k%2 + i];
                    a[k%2 +: sub.u32(4u, k%2)] = 0.0;
                }
            }
        "#]],
    );
}

#[test]
fn locals_may_hide_members_in_their_block_only() {
    check(
        r"
kernel k() {
    var x: [u32; 1];
    var y: u32;
    task main() {
        if pe.row == 0 {
            let y: u32 = 5;
            x[0] = y;
        }
        x[0] = y;
    }
}
",
        &[],
        expect![[r#"
            kernel k (entry: main) {
                sram x: [u32; 1] @ word 0 = 0u
                sram y: [u32; 1] @ word 1 = 0u
                task main() {
                    if eq.u32(pe.row, 0u) {
                        y%0 = 5u;
                        x[0u] = y%0;
                    }
                    x[0u] = y[0u];
                }
            }
        "#]],
    );
}

#[test]
fn arguments_are_checked_against_the_parameters() {
    let src = "kernel k(n: u32, s: f32) { var a: [f32; n * 2]; task main() { } }";
    let int = CValue::Int;
    expect![[r#"kernel instance `k`: no argument for parameter `s` at 17..18"#]]
        .assert_eq(&error(src, &[("n", int(1))]));
    expect![[
        r#"kernel instance `k`: the argument -1 does not fit parameter `n` of type u32 at 9..10"#
    ]]
    .assert_eq(&error(src, &[("n", int(-1)), ("s", CValue::Float(1.0))]));
    expect![[r#"kernel instance `k<n=1,s=1.0>`: kernel `k` has no parameter `m` at 7..8"#]]
        .assert_eq(&error(
            src,
            &[("n", int(1)), ("s", CValue::Float(1.0)), ("m", int(2))],
        ));
    expect!["kernel instance `k<n=3000000000,s=1.0>`: array length: the value 6000000000 does not fit u32 at 40..45"]
        .assert_eq(&error(src, &[("n", int(3_000_000_000)), ("s", CValue::Float(1.0))]));
}

#[test]
fn constructs_the_kernel_ir_cannot_express_are_errors() {
    let recv_local = "kernel k() { in p: stream<f32> from west; task main() { var v: f32 = 0.0; recv(p, v) then main; } }";
    expect![[r#"kernel instance `k`: `v` is a task-local variable; a receive completes after the task ends, so it must write SRAM (declare it as a kernel `var`) at 82..83"#]]
        .assert_eq(&error(recv_local, &[]));
    let reduce_expr =
        "kernel k() { var a: [f32; 4]; var s: f32; task main() { s = sum(a[0..4] * a[0..4]); } }";
    expect!["kernel instance `k`: the kernel IR reduces a plain slice only; compute this expression into an array first at 64..81"]
        .assert_eq(&error(reduce_expr, &[]));
}

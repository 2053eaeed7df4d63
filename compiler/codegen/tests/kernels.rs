//! Hand-built kernels covering every statement and expression kind, each run under every
//! backend with bit-identical SRAM, identical runtime-call traces and identical cycles; and
//! checked against values worked out by hand.

mod common;

use common::build::*;
use common::{Event, Setup, fill, run_everywhere};
use wsel_abi::NO_TASK;
use wsel_ir::kernel::AssignOp::{Add, Div, Mul, Set, Sub};
use wsel_ir::kernel::BinaryOp as B;
use wsel_ir::kernel::PortDirection::{In, Out};
use wsel_ir::kernel::{Coord, KernelIr, MathFn, ReduceOp, Stmt, TaskId, UnaryOp};

fn f32s(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}

fn words(kernel: &KernelIr, sram: &[u32], array: u32) -> Vec<u32> {
    let a = &kernel.arrays[array as usize];
    sram[a.offset_words as usize..(a.offset_words + a.len) as usize].to_vec()
}

fn floats(kernel: &KernelIr, sram: &[u32], array: u32) -> Vec<f32> {
    words(kernel, sram, array)
        .into_iter()
        .map(f32::from_bits)
        .collect()
}

/// `main`: recv x then `step`; `step`: y[0..n] += 2 * x[0..n]; send y.
fn axpy(n: u32) -> KernelIr {
    kernel(
        "axpy",
        arrays(&[("x", F32, n), ("y", F32, n)]),
        vec![port("xs", In, F32), port("ys", Out, F32)],
        vec![
            task(
                "main",
                &[],
                vec![Stmt::Recv {
                    port: wsel_ir::kernel::PortId(0),
                    dst: slice(0, u32c(0), u32c(n)),
                    then: TaskId(1),
                }],
            ),
            task(
                "step",
                &[],
                vec![
                    vector(
                        slice(1, u32c(0), u32c(n)),
                        Add,
                        vbin(B::Mul, F32, scalar(f32c(2.0)), elem(0, u32c(0))),
                    ),
                    Stmt::SendSlice {
                        port: wsel_ir::kernel::PortId(1),
                        src: slice(1, u32c(0), u32c(n)),
                        then: None,
                    },
                ],
            ),
        ],
    )
}

#[test]
fn axpy_receives_then_computes_and_sends() {
    let k = axpy(5);
    let main = run_everywhere(&k, &Setup::entry(&k));
    assert_eq!(main.status, 0);
    // Recv: 1 fixed cycle, issued at cycle 1 (after its own cost).
    assert_eq!(
        main.events,
        vec![Event::Recv {
            port: 0,
            n: 5,
            offset: 0,
            then: 1,
            cycles: 1
        }]
    );
    assert_eq!(main.cycles, 1);

    let mut setup = Setup::entry(&k).task(1);
    fill(&k, &mut setup.sram, 0, &f32s(&[1.0, 2.0, 3.0, 4.0, 0.5]));
    fill(
        &k,
        &mut setup.sram,
        1,
        &f32s(&[10.0, 10.0, 10.0, 10.0, 10.0]),
    );
    let step = run_everywhere(&k, &setup);
    assert_eq!(floats(&k, &step.sram, 1), [12.0, 14.0, 16.0, 18.0, 11.0]);
    // The vector FMA: 5 elements at 1 fp32 fma per cycle = 5; the send's issue = 1.
    let sent = f32s(&[12.0, 14.0, 16.0, 18.0, 11.0]);
    assert_eq!(
        step.events,
        vec![Event::Send {
            port: 1,
            offset: 20,
            data: sent,
            then: NO_TASK,
            cycles: 6
        }]
    );
    assert_eq!(step.cycles, 6);
}

/// A scalar then a slice under a non-commutative operation, on floats and integers (the
/// interpreter's scalar-by-slice loop): `d[0..4] -= 10 - x[0..4]`, `q[0..4] = 12 / v[0..4]`.
#[test]
fn a_scalar_then_a_slice_keeps_its_operand_order() {
    let k = kernel(
        "scaled",
        arrays(&[("x", F32, 4), ("d", F32, 4), ("v", I32, 4), ("q", I32, 4)]),
        vec![],
        vec![task(
            "main",
            &[],
            vec![
                vector(
                    slice(1, u32c(0), u32c(4)),
                    Sub,
                    vbin(B::Sub, F32, scalar(f32c(10.0)), elem(0, u32c(0))),
                ),
                vector(
                    slice(3, u32c(0), u32c(4)),
                    Set,
                    vbin(B::Div, I32, scalar(i32c(12)), elem(2, u32c(0))),
                ),
            ],
        )],
    );
    let mut setup = Setup::entry(&k);
    fill(&k, &mut setup.sram, 0, &f32s(&[1.0, 2.5, 4.0, -6.0]));
    fill(&k, &mut setup.sram, 1, &f32s(&[100.0, 100.0, 0.0, 1.0]));
    fill(&k, &mut setup.sram, 2, &[3, (-4i32) as u32, 5, 12]);
    let out = run_everywhere(&k, &setup);
    assert_eq!(out.status, 0);
    // d - (10 - x): 100 - 9, 100 - 7.5, 0 - 6, 1 - 16.
    assert_eq!(floats(&k, &out.sram, 1), [91.0, 92.5, -6.0, -15.0]);
    let q: Vec<i32> = words(&k, &out.sram, 3).iter().map(|&w| w as i32).collect();
    assert_eq!(q, [4, -3, 2, 1]);
}

#[test]
fn dot_product_with_reductions() {
    // p[0..n] = x[0..n] * w[0..n]; out[0] = sum(p); out[1] = max(x); out[2] = min(x);
    // out[3] = sum of an empty slice.
    let n = 7;
    let k = kernel(
        "dot",
        arrays(&[("x", F32, n), ("w", F32, n), ("p", F32, n), ("out", F32, 4)]),
        vec![],
        vec![task(
            "main",
            &[("acc", F32)],
            vec![
                vector(
                    slice(2, u32c(0), u32c(n)),
                    Set,
                    vbin(B::Mul, F32, elem(0, u32c(0)), elem(1, u32c(0))),
                ),
                set(0, reduce(ReduceOp::Sum, F32, slice(2, u32c(0), u32c(n)))),
                store(3, u32c(0), Set, local(0)),
                store(
                    3,
                    u32c(1),
                    Set,
                    reduce(ReduceOp::Max, F32, slice(0, u32c(0), u32c(n))),
                ),
                store(
                    3,
                    u32c(2),
                    Set,
                    reduce(ReduceOp::Min, F32, slice(0, u32c(0), u32c(n))),
                ),
                store(
                    3,
                    u32c(3),
                    Set,
                    reduce(ReduceOp::Sum, F32, slice(0, u32c(3), u32c(0))),
                ),
            ],
        )],
    );
    let mut setup = Setup::entry(&k);
    fill(
        &k,
        &mut setup.sram,
        0,
        &f32s(&[1.0, -2.0, 3.0, 0.5, -0.0, 8.0, 2.0]),
    );
    fill(
        &k,
        &mut setup.sram,
        1,
        &f32s(&[2.0, 2.0, 2.0, 2.0, 2.0, 0.25, -1.0]),
    );
    let out = run_everywhere(&k, &setup);
    assert_eq!(out.status, 0);
    let expected_sum = 2.0 - 4.0 + 6.0 + 1.0 + -0.0 + 2.0 - 2.0;
    assert_eq!(floats(&k, &out.sram, 3), [expected_sum, 8.0, -2.0, 0.0]);
    // vector mul: ceil(7/2)=4; set acc: 1 + sum (ceil(7/2)=4); store acc: 1; stores with
    // reductions: (1 + 4) twice; empty sum: 1 + 0.
    assert_eq!(out.cycles, 4 + 1 + 4 + 1 + 5 + 5 + 1);
}

#[test]
fn loops_and_branches() {
    // for i in 0..n { if x[i] > 0 { y[i] = x[i] } else { y[i] = x[i] * -0.5 } }
    // j = 0; while j < 3 { z[j] += 1.0; j = j + 1 }
    // for i in -2..1 (i32) { s += i }  ; store s
    // if pe.col == 1 { return } ; z[3] = 99 (skipped on PE x=1)
    let n = 6;
    let k = kernel(
        "branches",
        arrays(&[("x", F32, n), ("y", F32, n), ("z", F32, 4), ("s", I32, 1)]),
        vec![],
        vec![task(
            "main",
            &[("i", U32), ("j", U32), ("k", I32), ("s", I32)],
            vec![
                for_(
                    0,
                    u32c(0),
                    u32c(n),
                    vec![if_(
                        bin(B::Gt, F32, load(0, local(0)), f32c(0.0)),
                        vec![store(1, local(0), Set, load(0, local(0)))],
                        vec![store(
                            1,
                            local(0),
                            Set,
                            bin(B::Mul, F32, load(0, local(0)), f32c(-0.5)),
                        )],
                    )],
                ),
                set(1, u32c(0)),
                while_(
                    bin(B::Lt, U32, local(1), u32c(3)),
                    vec![
                        store(2, local(1), Add, f32c(1.0)),
                        set(1, bin(B::Add, U32, local(1), u32c(1))),
                    ],
                ),
                set(3, i32c(0)),
                for_(
                    2,
                    i32c(-2),
                    i32c(1),
                    vec![set(3, bin(B::Add, I32, local(3), local(2)))],
                ),
                store(3, u32c(0), Set, local(3)),
                if_(
                    bin(B::Eq, U32, coord(Coord::PeCol), u32c(1)),
                    vec![Stmt::Return],
                    vec![],
                ),
                store(2, u32c(3), Set, f32c(99.0)),
            ],
        )],
    );
    let mut setup = Setup::entry(&k);
    fill(
        &k,
        &mut setup.sram,
        0,
        &f32s(&[1.0, -2.0, 0.0, -0.0, 4.0, f32::NAN]),
    );
    let out = run_everywhere(&k, &setup);
    assert_eq!(out.status, 0);
    let y = floats(&k, &out.sram, 1);
    assert_eq!(&y[..5], &[1.0, 1.0, -0.0, 0.0, 4.0]);
    assert_eq!(y[5].to_bits(), wsel_codegen::semantics::CANONICAL_NAN);
    assert_eq!(floats(&k, &out.sram, 2), [1.0, 1.0, 1.0, 0.0]);
    assert_eq!(words(&k, &out.sram, 3), [(-3i32) as u32]);

    // On another PE the last store runs.
    let mut other = setup.clone();
    other.pe.x = 0;
    let out = run_everywhere(&k, &other);
    assert_eq!(floats(&k, &out.sram, 2), [1.0, 1.0, 1.0, 99.0]);
}

#[test]
fn softmax_like() {
    // m = max(x); e = exp(x - m); s = sum(e); e /= s; also log, sqrt, tanh, abs element-wise.
    let n = 6;
    let k = kernel(
        "softmax",
        arrays(&[("x", F32, n), ("e", F32, n), ("aux", F32, n)]),
        vec![],
        vec![task(
            "main",
            &[("m", F32), ("s", F32)],
            vec![
                set(0, reduce(ReduceOp::Max, F32, slice(0, u32c(0), u32c(n)))),
                vector(
                    slice(1, u32c(0), u32c(n)),
                    Set,
                    vmath(
                        MathFn::Exp,
                        F32,
                        vbin(B::Sub, F32, elem(0, u32c(0)), scalar(local(0))),
                    ),
                ),
                set(1, reduce(ReduceOp::Sum, F32, slice(1, u32c(0), u32c(n)))),
                vector(slice(1, u32c(0), u32c(n)), Div, scalar(local(1))),
                vector(
                    slice(2, u32c(0), u32c(n)),
                    Set,
                    vbin(
                        B::Add,
                        F32,
                        vmath(MathFn::Log, F32, vmath(MathFn::Abs, F32, elem(0, u32c(0)))),
                        vbin(
                            B::Max,
                            F32,
                            vmath(MathFn::Sqrt, F32, elem(0, u32c(0))),
                            vmath(MathFn::Tanh, F32, elem(0, u32c(0))),
                        ),
                    ),
                ),
            ],
        )],
    );
    let mut setup = Setup::entry(&k);
    let x = [0.5, -1.0, 2.0, 3.0, -0.0, 1.5];
    fill(&k, &mut setup.sram, 0, &f32s(&x));
    let out = run_everywhere(&k, &setup);
    assert_eq!(out.status, 0);
    let e = floats(&k, &out.sram, 1);
    let total: f32 = e.iter().sum();
    assert!((total - 1.0).abs() < 1e-5, "{e:?}");
    assert!(e[3] > e[2] && e[2] > e[5]);
    let aux = floats(&k, &out.sram, 2);
    // x = -1: log(1) + max(sqrt(-1) = NaN, ..) = NaN, canonical.
    assert_eq!(aux[1].to_bits(), wsel_codegen::semantics::CANONICAL_NAN);
    // x = -0: log(0) = -inf.
    assert_eq!(aux[4], f32::NEG_INFINITY);
}

#[test]
fn integer_arithmetic_wraps() {
    let k = kernel(
        "ints",
        arrays(&[("i", I32, 16), ("u", U32, 10), ("b", Bool, 6)]),
        vec![],
        vec![task(
            "main",
            &[],
            vec![
                store(0, u32c(0), Set, bin(B::Add, I32, i32c(i32::MAX), i32c(1))),
                store(0, u32c(1), Set, bin(B::Div, I32, i32c(i32::MIN), i32c(-1))),
                store(0, u32c(2), Set, bin(B::Rem, I32, i32c(i32::MIN), i32c(-1))),
                store(0, u32c(3), Set, bin(B::Div, I32, i32c(-7), i32c(2))),
                store(0, u32c(4), Set, bin(B::Rem, I32, i32c(-7), i32c(2))),
                store(
                    0,
                    u32c(5),
                    Set,
                    bin(B::Mul, I32, i32c(65_537), i32c(65_537)),
                ),
                store(0, u32c(6), Set, un(UnaryOp::Neg, I32, i32c(i32::MIN))),
                store(0, u32c(7), Set, bin(B::Min, I32, i32c(-3), i32c(2))),
                store(0, u32c(8), Set, bin(B::Max, I32, i32c(-3), i32c(2))),
                store(0, u32c(9), Set, un(UnaryOp::Not, I32, i32c(5))),
                store(0, u32c(10), Set, bin(B::And, I32, i32c(12), i32c(10))),
                store(0, u32c(11), Set, bin(B::Or, I32, i32c(12), i32c(10))),
                store(0, u32c(12), Set, math(MathFn::Abs, I32, i32c(i32::MIN))),
                store(0, u32c(13), Set, math(MathFn::Abs, I32, i32c(-9))),
                store(0, u32c(14), Set, bin(B::Sub, I32, i32c(i32::MIN), i32c(1))),
                store(0, u32c(15), Mul, i32c(3)),
                store(1, u32c(0), Set, bin(B::Sub, U32, u32c(0), u32c(1))),
                store(1, u32c(1), Set, bin(B::Div, U32, u32c(u32::MAX), u32c(16))),
                store(1, u32c(2), Set, bin(B::Rem, U32, u32c(u32::MAX), u32c(16))),
                store(1, u32c(3), Set, bin(B::Min, U32, u32c(u32::MAX), u32c(1))),
                store(1, u32c(4), Set, bin(B::Max, U32, u32c(u32::MAX), u32c(1))),
                store(
                    1,
                    u32c(5),
                    Set,
                    bin(B::Mul, U32, u32c(0x1_0001), u32c(0xFFFF)),
                ),
                store(1, u32c(6), Add, u32c(u32::MAX)),
                store(1, u32c(7), Div, u32c(3)),
                store(1, u32c(8), Sub, u32c(1)),
                store(1, u32c(9), Set, un(UnaryOp::Neg, U32, u32c(1))),
                store(2, u32c(0), Set, bin(B::Lt, I32, i32c(-1), i32c(0))),
                store(2, u32c(1), Set, bin(B::Lt, U32, u32c(u32::MAX), u32c(0))),
                store(
                    2,
                    u32c(2),
                    Set,
                    bin(
                        B::And,
                        Bool,
                        boolc(true),
                        un(UnaryOp::Not, Bool, boolc(false)),
                    ),
                ),
                store(
                    2,
                    u32c(3),
                    Set,
                    bin(B::Or, Bool, boolc(false), boolc(false)),
                ),
                store(2, u32c(4), Set, bin(B::Ge, U32, u32c(3), u32c(3))),
                store(2, u32c(5), Set, bin(B::Ne, Bool, boolc(true), boolc(false))),
            ],
        )],
    );
    let mut setup = Setup::entry(&k);
    fill(
        &k,
        &mut setup.sram,
        0,
        &[0; 15].into_iter().chain([7u32]).collect::<Vec<_>>(),
    );
    fill(&k, &mut setup.sram, 1, &[0, 0, 0, 0, 0, 0, 5, 100, 0]);
    let out = run_everywhere(&k, &setup);
    assert_eq!(out.status, 0);
    let i: Vec<i32> = words(&k, &out.sram, 0)
        .into_iter()
        .map(|w| w as i32)
        .collect();
    assert_eq!(
        i,
        [
            i32::MIN,
            i32::MIN,
            0,
            -3,
            -1,
            65_537i32.wrapping_mul(65_537),
            i32::MIN,
            -3,
            2,
            !5,
            8,
            14,
            i32::MIN,
            9,
            i32::MAX,
            21
        ]
    );
    assert_eq!(
        words(&k, &out.sram, 1),
        [
            u32::MAX,
            u32::MAX / 16,
            15,
            1,
            u32::MAX,
            0x1_0001u32.wrapping_mul(0xFFFF),
            4,
            33,
            u32::MAX,
            u32::MAX
        ]
    );
    assert_eq!(words(&k, &out.sram, 2), [1, 0, 1, 0, 1, 1]);
}

#[test]
fn casts_saturate_and_round() {
    let specials = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        3.0e9,
        -3.0e9,
        -1.5,
        2.7,
        -0.0,
        65_520.0,
        1.0e-8,
    ];
    let n = specials.len() as u32;
    let targets = [I32, U32, Bool, F16, F32];
    let mut body = Vec::new();
    for (t, &to) in targets.iter().enumerate() {
        body.push(vector(
            slice(1 + t as u32, u32c(0), u32c(n)),
            Set,
            vcast(F32, to, elem(0, u32c(0))),
        ));
    }
    // Integer sources: i32 -> f32/f16/u32/bool, u32 -> f32/i32, bool -> f32/i32.
    let ints = [i32::MIN, -1, 0, 1, 16_777_217, i32::MAX, 2049, -65_520];
    let m = ints.len() as u32;
    let int_targets = [F32, F16, U32, Bool];
    for (t, &to) in int_targets.iter().enumerate() {
        body.push(vector(
            slice(7 + t as u32, u32c(0), u32c(m)),
            Set,
            vcast(I32, to, elem(6, u32c(0))),
        ));
    }
    body.push(vector(
        slice(11, u32c(0), u32c(m)),
        Set,
        vcast(U32, F32, vcast(I32, U32, elem(6, u32c(0)))),
    ));
    body.push(vector(
        slice(12, u32c(0), u32c(m)),
        Set,
        vcast(Bool, I32, vcast(I32, Bool, elem(6, u32c(0)))),
    ));
    let k = kernel(
        "casts",
        arrays(&[
            ("src", F32, n),
            ("to_i32", I32, n),
            ("to_u32", U32, n),
            ("to_bool", Bool, n),
            ("to_f16", F16, n),
            ("to_f32", F32, n),
            ("ints", I32, m),
            ("i_f32", F32, m),
            ("i_f16", F16, m),
            ("i_u32", U32, m),
            ("i_bool", Bool, m),
            ("u_f32", F32, m),
            ("b_i32", I32, m),
        ]),
        vec![],
        vec![task("main", &[], body)],
    );
    let mut setup = Setup::entry(&k);
    fill(&k, &mut setup.sram, 0, &f32s(&specials));
    fill(&k, &mut setup.sram, 6, &ints.map(|i| i as u32));
    let out = run_everywhere(&k, &setup);
    assert_eq!(out.status, 0);
    let as_i32: Vec<i32> = words(&k, &out.sram, 1)
        .into_iter()
        .map(|w| w as i32)
        .collect();
    assert_eq!(
        as_i32,
        [
            0,
            i32::MAX,
            i32::MIN,
            i32::MAX,
            i32::MIN,
            -1,
            2,
            0,
            65_520,
            0
        ]
    );
    assert_eq!(
        words(&k, &out.sram, 2),
        [0, u32::MAX, 0, 3_000_000_000, 0, 0, 2, 0, 65_520, 0]
    );
    assert_eq!(words(&k, &out.sram, 3), [1, 1, 1, 1, 1, 1, 1, 0, 1, 1]);
    let f16 = floats(&k, &out.sram, 4);
    assert_eq!(f16[0].to_bits(), wsel_codegen::semantics::CANONICAL_NAN);
    assert_eq!(&f16[1..3], &[f32::INFINITY, f32::NEG_INFINITY]);
    // 65520 rounds up to infinity in binary16; 2.7 rounds to 2.69921875; 1e-8 flushes to 0.
    assert_eq!(f16[8], f32::INFINITY);
    assert_eq!(f16[6], 2.699_218_8);
    assert_eq!(f16[9], 0.0);
    let i_f16 = floats(&k, &out.sram, 8);
    // 2049 is not representable in binary16: ties to even gives 2048.
    assert_eq!(i_f16[6], 2048.0);
    assert_eq!(i_f16[7], f32::NEG_INFINITY);
    assert_eq!(words(&k, &out.sram, 10), [1, 1, 0, 1, 1, 1, 1, 1]);
    assert_eq!(words(&k, &out.sram, 12), [1, 1, 0, 1, 1, 1, 1, 1]);
}

#[test]
fn f16_rounds_after_every_operation() {
    // h = 1/3 in f16 arithmetic; v[0..4] = v * h + 1 (rounded each step); sum in f16.
    let k = kernel(
        "half",
        arrays(&[("v", F16, 4), ("out", F16, 3)]),
        vec![],
        vec![task(
            "main",
            &[("h", F16)],
            vec![
                set(0, bin(B::Div, F16, f16c(1.0), f16c(3.0))),
                vector(
                    slice(0, u32c(0), u32c(4)),
                    Set,
                    vbin(
                        B::Add,
                        F16,
                        vbin(B::Mul, F16, elem(0, u32c(0)), scalar(local(0))),
                        scalar(f16c(1.0)),
                    ),
                ),
                store(
                    1,
                    u32c(0),
                    Set,
                    reduce(ReduceOp::Sum, F16, slice(0, u32c(0), u32c(4))),
                ),
                store(1, u32c(1), Set, local(0)),
                store(1, u32c(2), Set, bin(B::Mul, F16, f16c(300.0), f16c(300.0))),
            ],
        )],
    );
    let mut setup = Setup::entry(&k);
    fill(&k, &mut setup.sram, 0, &f32s(&[3.0, 1.0, 1000.0, -6.0]));
    let out = run_everywhere(&k, &setup);
    assert_eq!(out.status, 0);
    let third = half::f16::from_f32(1.0 / 3.0).to_f32();
    let out_words = floats(&k, &out.sram, 1);
    assert_eq!(out_words[1], third);
    // 300 * 300 = 90000 overflows binary16.
    assert_eq!(out_words[2], f32::INFINITY);
    let v = floats(&k, &out.sram, 0);
    for (x, y) in [3.0f32, 1.0, 1000.0, -6.0].iter().zip(&v) {
        let product = half::f16::from_f32(x * third).to_f32();
        let expected = half::f16::from_f32(product + 1.0).to_f32();
        assert_eq!(*y, expected);
    }
}

#[test]
fn communication_and_coordinates() {
    // send_scalar(out0, pe.row * 100 + pe.col) then task 1; send slice a[1..3] on out1;
    // activate task 2; recv 2 words into a[2..4] from in0 then task 1;
    // a[0] = region rows * region cols.
    let k = kernel(
        "comm",
        arrays(&[("pad", U32, 3), ("a", U32, 4)]),
        vec![
            port("out0", Out, U32),
            port("out1", Out, U32),
            port("in0", In, U32),
        ],
        vec![
            task(
                "main",
                &[],
                vec![
                    Stmt::SendScalar {
                        port: wsel_ir::kernel::PortId(0),
                        value: bin(
                            B::Add,
                            U32,
                            bin(B::Mul, U32, coord(Coord::PeRow), u32c(100)),
                            coord(Coord::PeCol),
                        ),
                        then: Some(TaskId(1)),
                    },
                    Stmt::SendSlice {
                        port: wsel_ir::kernel::PortId(1),
                        src: slice(1, u32c(1), u32c(2)),
                        then: None,
                    },
                    Stmt::Activate(TaskId(2)),
                    Stmt::Recv {
                        port: wsel_ir::kernel::PortId(2),
                        dst: slice(1, u32c(2), u32c(2)),
                        then: TaskId(1),
                    },
                    store(
                        1,
                        u32c(0),
                        Set,
                        bin(
                            B::Mul,
                            U32,
                            coord(Coord::RegionRows),
                            coord(Coord::RegionCols),
                        ),
                    ),
                ],
            ),
            task("one", &[], vec![]),
            task("two", &[], vec![]),
        ],
    );
    let mut setup = Setup::entry(&k);
    fill(&k, &mut setup.sram, 1, &[0, 11, 22, 33]);
    let out = run_everywhere(&k, &setup);
    assert_eq!(out.status, 0);
    assert_eq!(
        out.events,
        vec![
            Event::SendScalar {
                port: 0,
                value: 201,
                then: 1,
                cycles: 3
            },
            Event::Send {
                port: 1,
                offset: 16,
                data: vec![11, 22],
                then: NO_TASK,
                cycles: 4
            },
            Event::Activate { task: 2, cycles: 5 },
            Event::Recv {
                port: 2,
                n: 2,
                offset: 20,
                then: 1,
                cycles: 6
            },
        ]
    );
    assert_eq!(words(&k, &out.sram, 1), [12, 11, 22, 33]);
    assert_eq!(out.cycles, 8);
}

#[test]
fn a_control_statement_sends_one_control_wavelet() {
    // control(out0, [adv, nop, reset]): one send_scalar call on port 0 | CONTROL_PORT with the
    // payload 1 | 0 << 2 | 2 << 4 = 33 (two bits per router, the sender's own lowest) and no
    // completion task, issued after the statement's one cycle.
    use wsel_ir::kernel::SwitchCmd::{Adv, Nop, Reset};
    let k = kernel(
        "ctrl",
        arrays(&[("pad", U32, 1)]),
        vec![port("out0", Out, U32)],
        vec![task(
            "main",
            &[],
            vec![Stmt::Control {
                port: wsel_ir::kernel::PortId(0),
                commands: vec![Adv, Nop, Reset],
            }],
        )],
    );
    let out = run_everywhere(&k, &Setup::entry(&k));
    assert_eq!(out.status, 0);
    assert_eq!(
        out.events,
        vec![Event::SendScalar {
            port: wsel_abi::CONTROL_PORT,
            value: 33,
            then: NO_TASK,
            cycles: 1
        }]
    );
}

#[test]
fn a_failing_runtime_call_stops_the_task_with_its_status() {
    let k = kernel(
        "fail",
        arrays(&[("a", U32, 2)]),
        vec![],
        vec![task(
            "main",
            &[],
            vec![
                store(0, u32c(0), Set, u32c(1)),
                Stmt::Activate(TaskId(0)),
                Stmt::Activate(TaskId(0)),
                store(0, u32c(1), Set, u32c(2)),
            ],
        )],
    );
    let mut setup = Setup::entry(&k);
    setup.fail_call = Some((1, 77));
    let out = run_everywhere(&k, &setup);
    assert_eq!(out.status, 77);
    assert_eq!(words(&k, &out.sram, 0), [1, 0]);
    assert_eq!(out.events.len(), 2);
}

#[test]
fn loops_stop_once_past_the_cycle_limit() {
    // main: while true { a[0] += 1 }  — endless; counted: for i in 0..n { a[0] += 1 }.
    let endless = kernel(
        "endless",
        arrays(&[("a", U32, 1)]),
        vec![],
        vec![task(
            "main",
            &[],
            vec![while_(boolc(true), vec![store(0, u32c(0), Add, u32c(1))])],
        )],
    );
    let counted = |n: u32| {
        kernel(
            "counted",
            arrays(&[("a", U32, 1)]),
            vec![],
            vec![task(
                "main",
                &[("i", U32)],
                vec![for_(
                    0,
                    u32c(0),
                    u32c(n),
                    vec![store(0, u32c(0), Add, u32c(1))],
                )],
            )],
        )
    };
    // Without a limit a loop runs to its end; the difference of 10 and 20 iterations is the
    // cost of one.
    let ten = run_everywhere(&counted(10), &Setup::entry(&counted(10)));
    let twenty = run_everywhere(&counted(20), &Setup::entry(&counted(20)));
    assert_eq!((ten.status, twenty.status), (0, 0));
    let per_iteration = (twenty.cycles - ten.cycles) / 10;
    assert!(per_iteration > 0);

    // The endless loop stops at the first iteration past the limit, the same one on every
    // backend: it did `limit / per_iteration` iterations, give or take one.
    let mut setup = Setup::entry(&endless);
    setup.cycle_limit = 10_000;
    let out = run_everywhere(&endless, &setup);
    assert_eq!(out.status, wsel_abi::STATUS_CYCLE_LIMIT);
    let done = u64::from(words(&endless, &out.sram, 0)[0]);
    assert!(
        done.abs_diff(10_000 / per_iteration) <= 1,
        "{done} iterations for a limit of 10,000 cycles at {per_iteration} per iteration"
    );

    // A limit at or above what a bounded loop costs never stops it.
    let mut setup = Setup::entry(&counted(10));
    setup.cycle_limit = ten.cycles;
    assert_eq!(run_everywhere(&counted(10), &setup).status, 0);
}

#[test]
fn integer_division_by_zero_is_reported() {
    let k = kernel(
        "div0",
        arrays(&[("a", I32, 3)]),
        vec![],
        vec![task(
            "main",
            &[("z", I32)],
            vec![
                set(0, i32c(0)),
                store(0, u32c(0), Set, i32c(5)),
                store(0, u32c(1), Set, bin(B::Rem, I32, i32c(-9), local(0))),
                store(0, u32c(2), Set, i32c(7)),
            ],
        )],
    );
    let out = run_everywhere(&k, &Setup::entry(&k));
    assert_eq!(out.status, wsel_abi::STATUS_OUT_OF_BOUNDS);
    assert_eq!(
        out.events,
        vec![Event::OutOfBounds {
            array: wsel_codegen::faults::FAULT_DIV_BY_ZERO,
            index: (-9i64) as u64,
            bound: 0,
            cycles: 1 + 1 + 8 + 1
        }]
    );
    assert_eq!(words(&k, &out.sram, 0), [5, 0, 0]);
}

#[test]
fn short_circuit_skips_the_right_operand() {
    // if i < 2 && a[i] > 0 — with i = 5, a[i] would be out of range.
    let k = kernel(
        "guard",
        arrays(&[("a", I32, 2), ("r", Bool, 2)]),
        vec![],
        vec![task(
            "main",
            &[("i", U32)],
            vec![
                set(0, u32c(5)),
                store(
                    1,
                    u32c(0),
                    Set,
                    bin(
                        B::And,
                        Bool,
                        bin(B::Lt, U32, local(0), u32c(2)),
                        bin(B::Gt, I32, load(0, local(0)), i32c(0)),
                    ),
                ),
                store(
                    1,
                    u32c(1),
                    Set,
                    bin(
                        B::Or,
                        Bool,
                        bin(B::Ge, U32, local(0), u32c(2)),
                        bin(B::Gt, I32, load(0, local(0)), i32c(0)),
                    ),
                ),
            ],
        )],
    );
    let out = run_everywhere(&k, &Setup::entry(&k));
    assert_eq!(out.status, 0);
    assert_eq!(words(&k, &out.sram, 1), [0, 1]);
}

#[test]
fn sram_smaller_than_the_plan_is_reported_before_anything_runs() {
    let k = axpy(4);
    let mut setup = Setup::entry(&k).task(1);
    setup.sram.truncate(6);
    let out = run_everywhere(&k, &setup);
    assert_ne!(out.status, 0);
    assert_eq!(
        out.events,
        vec![Event::OutOfBounds {
            array: wsel_codegen::faults::FAULT_SRAM_TOO_SMALL,
            index: 8,
            bound: 6,
            cycles: 0
        }]
    );
}

#[test]
fn ill_typed_kernels_are_errors_not_panics() {
    let k = kernel(
        "bad",
        arrays(&[("a", F32, 2)]),
        vec![],
        vec![task("main", &[], vec![store(0, u32c(0), Set, i32c(1))])],
    );
    for &backend in wsel_codegen::Backend::ALL {
        let err = wsel_codegen::compile(&k, backend, &wsel_ir::cost::CostModel::WSE2_LIKE)
            .expect_err("ill-typed");
        assert!(err.message().contains("stored value of type i32"), "{err}");
    }
    let k = kernel(
        "bad_array",
        arrays(&[("a", F32, 2)]),
        vec![],
        vec![task("main", &[], vec![store(3, u32c(0), Set, f32c(1.0))])],
    );
    let err = wsel_codegen::compile(
        &k,
        wsel_codegen::Backend::Cranelift,
        &wsel_ir::cost::CostModel::WSE2_LIKE,
    )
    .expect_err("bad array");
    assert!(err.message().contains("array 3 does not exist"), "{err}");
}

#[test]
fn native_backends_expose_task_function_pointers() {
    let k = axpy(4);
    for &backend in wsel_codegen::Backend::ALL {
        let compiled = wsel_codegen::compile(&k, backend, &wsel_ir::cost::CostModel::WSE2_LIKE)
            .expect("compiles");
        assert_eq!(compiled.task_count(), 2);
        assert_eq!(compiled.task_name(TaskId(1)), Some("step"));
        let native = compiled.task_fn(TaskId(0)).is_some();
        assert_eq!(native, backend != wsel_codegen::Backend::Interp);
    }
}

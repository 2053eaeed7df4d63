//! Property test: randomly generated well-typed kernels (bounded loops, every expression and
//! statement kind, NaN-producing and faulting operations included) give bit-identical SRAM,
//! identical runtime-call traces, statuses and cycles under every backend.
//!
//! The number of cases defaults to 96; `PROPTEST_CASES` raises it.

mod common;

use std::collections::HashMap;

use common::build::*;
use common::{Setup, run_everywhere_with};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::Union;
use wsel_codegen::dry_run::{DryRunLimits, DryRunner, PePlace};
use wsel_ir::cost::CostModel;
use wsel_ir::kernel::{
    AssignOp, BinaryOp, Expr, KernelIr, MathFn, PortDirection, PortId, ReduceOp, ScalarTy, Stmt,
    TaskId, UnaryOp, VExpr,
};

const TYS: [ScalarTy; 5] = [F32, F16, I32, U32, Bool];
const LEN: u32 = 8;
/// The `while` counter: never assigned by generated statements, so every loop ends.
const WHILE_COUNTER: u32 = 10;
const LOOP_U32: u32 = 8;
const LOOP_I32: u32 = 9;

fn arrays_of(ty: ScalarTy) -> Vec<u32> {
    match ty {
        F32 => vec![0, 1],
        F16 => vec![2],
        I32 => vec![3],
        U32 => vec![4],
        Bool => vec![5],
    }
}

/// Locals generated statements may assign.
fn assignable(ty: ScalarTy) -> Vec<u32> {
    match ty {
        F32 => vec![0, 1],
        F16 => vec![2],
        I32 => vec![3, 4],
        U32 => vec![5, 6],
        Bool => vec![7],
    }
}

fn readable(ty: ScalarTy) -> Vec<u32> {
    let mut locals = assignable(ty);
    match ty {
        I32 => locals.push(LOOP_I32),
        U32 => locals.extend([LOOP_U32, WHILE_COUNTER]),
        _ => {}
    }
    locals
}

fn float_bits() -> BoxedStrategy<u32> {
    prop_oneof![
        3 => select(vec![
            0.0f32, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, -2.5, 1.0e-3, 65_504.0, 65_520.0, 1.0e30,
            -1.0e30, 1.0e-40, 88.7, -104.0, f32::INFINITY, f32::NEG_INFINITY, f32::MAX, f32::MIN,
            f32::MIN_POSITIVE,
        ])
        .prop_map(f32::to_bits),
        1 => select(vec![0x7FC0_0000u32, 0xFFC0_0000, 0x7F80_0001, 0xFFBF_FFFF, 0x7FC1_2345]),
        2 => (-100.0f32..100.0).prop_map(f32::to_bits),
        1 => any::<u32>(),
    ]
    .boxed()
}

fn int_bits() -> BoxedStrategy<u32> {
    prop_oneof![
        3 => select(vec![0u32, 1, 2, 3, 7, 8, 16, u32::MAX, 0x8000_0000, 0x7FFF_FFFF, 0xFFFF_FFF9]),
        2 => 0u32..20,
        1 => any::<u32>(),
    ]
    .boxed()
}

fn constant(ty: ScalarTy) -> BoxedStrategy<Expr> {
    let bits = match ty {
        F32 | F16 => float_bits(),
        I32 | U32 => int_bits(),
        Bool => (0u32..2).boxed(),
    };
    bits.prop_map(move |bits| Expr::Const(wsel_ir::kernel::Const { ty, bits }))
        .boxed()
}

/// Indices: mostly in range, sometimes one past the end or negative.
fn index() -> BoxedStrategy<Expr> {
    prop_oneof![
        8 => (0..LEN).prop_map(u32c),
        3 => Just(local(LOOP_U32)),
        2 => Just(local(LOOP_I32)),
        2 => Just(bin(BinaryOp::Rem, U32, local(5), u32c(LEN))),
        1 => (-1i32..=LEN as i32 + 1).prop_map(i32c),
    ]
    .boxed()
}

fn arith_ops(ty: ScalarTy) -> BoxedStrategy<BinaryOp> {
    use BinaryOp::*;
    match ty {
        F32 | F16 => select(vec![Add, Sub, Mul, Div, Rem, Min, Max]).boxed(),
        I32 | U32 => prop_oneof![
            6 => select(vec![Add, Sub, Mul, Min, Max, And, Or]),
            1 => select(vec![Div, Rem]),
        ]
        .boxed(),
        Bool => select(vec![And, Or, Min, Max]).boxed(),
    }
}

fn comparisons() -> BoxedStrategy<BinaryOp> {
    use BinaryOp::*;
    select(vec![Eq, Ne, Lt, Le, Gt, Ge]).boxed()
}

fn unary_ops(ty: ScalarTy) -> Vec<UnaryOp> {
    match ty {
        F32 | F16 => vec![UnaryOp::Neg],
        I32 | U32 => vec![UnaryOp::Neg, UnaryOp::Not],
        Bool => vec![UnaryOp::Not],
    }
}

fn math_fns(ty: ScalarTy) -> Vec<MathFn> {
    match ty {
        F32 | F16 => vec![
            MathFn::Exp,
            MathFn::Log,
            MathFn::Sqrt,
            MathFn::Tanh,
            MathFn::Abs,
        ],
        I32 | U32 => vec![MathFn::Abs],
        Bool => vec![],
    }
}

/// Expression strategies by type and depth, built once.
struct Exprs {
    by: HashMap<(usize, u32), BoxedStrategy<Expr>>,
}

const MAX_DEPTH: u32 = 2;

impl Exprs {
    fn new() -> Self {
        let mut exprs = Exprs { by: HashMap::new() };
        for depth in 0..=MAX_DEPTH {
            for (t, &ty) in TYS.iter().enumerate() {
                let strategy = exprs.build(ty, depth);
                exprs.by.insert((t, depth), strategy);
            }
        }
        exprs
    }

    fn get(&self, ty: ScalarTy, depth: u32) -> BoxedStrategy<Expr> {
        let t = TYS.iter().position(|&x| x == ty).unwrap_or(0);
        self.by[&(t, depth)].clone()
    }

    fn build(&self, ty: ScalarTy, depth: u32) -> BoxedStrategy<Expr> {
        let mut leaves: Vec<(u32, BoxedStrategy<Expr>)> = vec![
            (3, constant(ty)),
            (3, select(readable(ty)).prop_map(local).boxed()),
            (
                2,
                (select(arrays_of(ty)), index())
                    .prop_map(|(a, i)| load(a, i))
                    .boxed(),
            ),
        ];
        if ty == U32 {
            use wsel_ir::kernel::Coord::*;
            leaves.push((
                1,
                select(vec![PeRow, PeCol, RegionRows, RegionCols])
                    .prop_map(coord)
                    .boxed(),
            ));
        }
        if depth == 0 {
            return Union::new_weighted(leaves).boxed();
        }
        let sub = |t: ScalarTy| self.get(t, depth - 1);
        let mut options = leaves;
        options.push((
            2,
            (select(unary_ops(ty)), sub(ty))
                .prop_map(move |(op, a)| un(op, ty, a))
                .boxed(),
        ));
        options.push((
            5,
            (arith_ops(ty), sub(ty), sub(ty))
                .prop_map(move |(op, a, b)| bin(op, ty, a, b))
                .boxed(),
        ));
        if ty == Bool {
            for t in TYS {
                options.push((
                    2,
                    (comparisons(), sub(t), sub(t))
                        .prop_map(move |(op, a, b)| bin(op, t, a, b))
                        .boxed(),
                ));
            }
        }
        for from in TYS {
            options.push((1, sub(from).prop_map(move |a| cast(from, ty, a)).boxed()));
        }
        options.push((
            1,
            (sub(Bool), sub(ty), sub(ty))
                .prop_map(move |(c, a, b)| sel(ty, c, a, b))
                .boxed(),
        ));
        let fns = math_fns(ty);
        if !fns.is_empty() {
            options.push((
                2,
                (select(fns), sub(ty))
                    .prop_map(move |(f, a)| math(f, ty, a))
                    .boxed(),
            ));
        }
        if ty != Bool {
            options.push((
                1,
                (
                    select(vec![ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min]),
                    select(arrays_of(ty)),
                    0..=LEN,
                    0..=LEN,
                    prop::bool::weighted(0.95),
                )
                    .prop_map(move |(op, a, start, len, clip)| {
                        let len = if clip { len.min(LEN - start) } else { len };
                        reduce(op, ty, slice(a, u32c(start), u32c(len)))
                    })
                    .boxed(),
            ));
        }
        Union::new_weighted(options).boxed()
    }

    fn vexpr(&self, ty: ScalarTy, depth: u32) -> BoxedStrategy<VExpr> {
        let start = prop_oneof![12 => 0..=4u32, 1 => 5..=LEN].prop_map(u32c);
        let mut options: Vec<(u32, BoxedStrategy<VExpr>)> = vec![
            (2, self.get(ty, 1).prop_map(VExpr::Scalar).boxed()),
            (
                3,
                (select(arrays_of(ty)), start)
                    .prop_map(|(a, s)| elem(a, s))
                    .boxed(),
            ),
        ];
        if depth == 0 {
            return Union::new_weighted(options).boxed();
        }
        let sub = |t: ScalarTy| self.vexpr(t, depth - 1);
        options.push((
            1,
            (select(unary_ops(ty)), sub(ty))
                .prop_map(move |(op, a)| vun(op, ty, a))
                .boxed(),
        ));
        options.push((
            4,
            (arith_ops(ty), sub(ty), sub(ty))
                .prop_map(move |(op, a, b)| vbin(op, ty, a, b))
                .boxed(),
        ));
        if ty == Bool {
            for t in [F32, I32, U32] {
                options.push((
                    1,
                    (comparisons(), sub(t), sub(t))
                        .prop_map(move |(op, a, b)| vbin(op, t, a, b))
                        .boxed(),
                ));
            }
        }
        for from in [F32, F16, I32, U32] {
            options.push((1, sub(from).prop_map(move |a| vcast(from, ty, a)).boxed()));
        }
        options.push((
            1,
            (sub(Bool), sub(ty), sub(ty))
                .prop_map(move |(c, a, b)| vsel(ty, c, a, b))
                .boxed(),
        ));
        let fns = math_fns(ty);
        if !fns.is_empty() {
            options.push((
                1,
                (select(fns), sub(ty))
                    .prop_map(move |(f, a)| vmath(f, ty, a))
                    .boxed(),
            ));
        }
        Union::new_weighted(options).boxed()
    }

    /// Statement groups (a `while` comes with its counter's reset and increment).
    fn stmts(&self, depth: u32) -> BoxedStrategy<Vec<Stmt>> {
        let count = if depth == 0 { 1..8usize } else { 0..3usize };
        prop::collection::vec(self.stmt(depth), count)
            .prop_map(|groups| groups.into_iter().flatten().collect())
            .boxed()
    }

    fn stmt(&self, depth: u32) -> BoxedStrategy<Vec<Stmt>> {
        let mut options: Vec<(u32, BoxedStrategy<Vec<Stmt>>)> = Vec::new();
        for ty in TYS {
            options.push((
                3,
                (select(assignable(ty)), self.get(ty, 2))
                    .prop_map(|(l, e)| vec![set(l, e)])
                    .boxed(),
            ));
            let ops = if ty == Bool {
                vec![AssignOp::Set]
            } else {
                vec![
                    AssignOp::Set,
                    AssignOp::Add,
                    AssignOp::Sub,
                    AssignOp::Mul,
                    AssignOp::Div,
                ]
            };
            options.push((
                2,
                (
                    select(arrays_of(ty)),
                    index(),
                    select(ops.clone()),
                    self.get(ty, 2),
                )
                    .prop_map(|(a, i, op, e)| vec![store(a, i, op, e)])
                    .boxed(),
            ));
            options.push((
                2,
                (
                    select(arrays_of(ty)),
                    0..=4u32,
                    0..=4u32,
                    select(ops),
                    self.vexpr(ty, 2),
                )
                    .prop_map(|(a, s, n, op, v)| vec![vector(slice(a, u32c(s), u32c(n)), op, v)])
                    .boxed(),
            ));
        }
        options.push((
            1,
            (self.get(U32, 1), prop::option::of(Just(TaskId(1))))
                .prop_map(|(value, then)| {
                    vec![Stmt::SendScalar {
                        port: PortId(0),
                        value,
                        then,
                    }]
                })
                .boxed(),
        ));
        options.push((
            1,
            (select(vec![0u32, 3, 4]), 0..=4u32, 0..=4u32)
                .prop_map(|(a, s, n)| {
                    vec![Stmt::SendSlice {
                        port: PortId(1),
                        src: slice(a, u32c(s), u32c(n)),
                        then: None,
                    }]
                })
                .boxed(),
        ));
        options.push((
            1,
            (select(vec![1u32, 4]), 0..=4u32, 0..=4u32)
                .prop_map(|(a, s, n)| {
                    vec![Stmt::Recv {
                        port: PortId(2),
                        dst: slice(a, u32c(s), u32c(n)),
                        then: TaskId(1),
                    }]
                })
                .boxed(),
        ));
        options.push((1, Just(vec![Stmt::Activate(TaskId(1))]).boxed()));
        options.push((
            1,
            (0..3u32, -1..3i32)
                .prop_map(|(len, expected)| {
                    vec![Stmt::CheckLength {
                        len: u32c(len),
                        expected: i32c(expected),
                    }]
                })
                .boxed(),
        ));
        if depth > 0 {
            options.push((1, Just(vec![Stmt::Return]).boxed()));
        }
        if depth < 2 {
            let body = self.stmts(depth + 1);
            options.push((
                2,
                (0..2u32, 0..5u32, body.clone())
                    .prop_map(|(lo, hi, body)| vec![for_(LOOP_U32, u32c(lo), u32c(hi), body)])
                    .boxed(),
            ));
            options.push((
                1,
                (-1..2i32, 0..4i32, body.clone())
                    .prop_map(|(lo, hi, body)| vec![for_(LOOP_I32, i32c(lo), i32c(hi), body)])
                    .boxed(),
            ));
            options.push((
                2,
                (self.get(Bool, 2), body.clone(), body.clone())
                    .prop_map(|(c, t, e)| vec![if_(c, t, e)])
                    .boxed(),
            ));
        }
        if depth == 0 {
            // Only at the top, so that no loop resets an enclosing while's counter.
            options.push((
                1,
                (0..4u32, self.stmts(1))
                    .prop_map(|(k, mut body)| {
                        body.push(set(
                            WHILE_COUNTER,
                            bin(BinaryOp::Add, U32, local(WHILE_COUNTER), u32c(1)),
                        ));
                        vec![
                            set(WHILE_COUNTER, u32c(0)),
                            while_(bin(BinaryOp::Lt, U32, local(WHILE_COUNTER), u32c(k)), body),
                        ]
                    })
                    .boxed(),
            ));
        }
        Union::new_weighted(options).boxed()
    }
}

fn make_kernel(body: Vec<Stmt>) -> KernelIr {
    kernel(
        "random",
        arrays(&[
            ("f0", F32, LEN),
            ("f1", F32, LEN),
            ("h", F16, LEN),
            ("i", I32, LEN),
            ("u", U32, LEN),
            ("b", Bool, LEN),
        ]),
        vec![
            port("out_scalar", PortDirection::Out, U32),
            port("out_slice", PortDirection::Out, U32),
            port("in", PortDirection::In, U32),
        ],
        vec![
            task(
                "main",
                &[
                    ("f0", F32),
                    ("f1", F32),
                    ("h", F16),
                    ("i0", I32),
                    ("i1", I32),
                    ("u0", U32),
                    ("u1", U32),
                    ("b", Bool),
                    ("lu", U32),
                    ("li", I32),
                    ("w", U32),
                ],
                body,
            ),
            task("next", &[], vec![]),
        ],
    )
}

fn cost_models() -> Vec<CostModel> {
    vec![
        CostModel::WSE2_LIKE,
        CostModel {
            f32_add_per_cycle: 4,
            f32_mul_per_cycle: 4,
            f32_fma_per_cycle: 2,
            f16_add_per_cycle: 8,
            f16_mul_per_cycle: 8,
            f16_fma_per_cycle: 8,
            math_cycles: 12,
        },
        CostModel {
            f32_add_per_cycle: 3,
            f32_mul_per_cycle: 5,
            f32_fma_per_cycle: 0,
            f16_add_per_cycle: 6,
            f16_mul_per_cycle: 7,
            f16_fma_per_cycle: 3,
            math_cycles: 1,
        },
    ]
}

fn sram() -> BoxedStrategy<Vec<u32>> {
    let floats = prop::collection::vec(float_bits(), (3 * LEN) as usize);
    let ints = prop::collection::vec(int_bits(), (2 * LEN) as usize);
    let bools = prop::collection::vec(0u32..2, LEN as usize);
    (floats, ints, bools)
        .prop_map(|(f, i, b)| f.into_iter().chain(i).chain(b).collect())
        .boxed()
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(96)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn random_kernels_agree_across_backends(
        body in Exprs::new().stmts(0),
        sram in sram(),
        model in select(cost_models()),
        (x, y) in (0u32..4, 0u32..3),
    ) {
        let k = make_kernel(body);
        let mut setup = Setup::entry(&k);
        setup.sram = sram;
        setup.pe.x = x;
        setup.pe.y = y;
        run_everywhere_with(&k, &setup, &model);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// A dry run (the mapper's measure of a kernel's work) compiles with settings of its own
    /// (single-pass register allocation): on random kernels, compiled from the start, it
    /// counts what the interpreter counts.
    #[test]
    fn random_kernels_dry_run_alike_compiled_and_interpreted(
        body in Exprs::new().stmts(0),
        model in select(cost_models()),
        (x, y) in (0u32..4, 0u32..3),
    ) {
        let k = make_kernel(body);
        let place = PePlace { x, y, width: 4, height: 3 };
        let run = |interpreted_work| {
            let limits = DryRunLimits { interpreted_work, ..DryRunLimits::default() };
            DryRunner::new(&k, &model, limits).and_then(|runner| runner.run(4, place)).ok()
        };
        prop_assert_eq!(run(0), run(u64::MAX));
    }
}

/// `f32` element expressions of the kinds the Cranelift four-lane path handles.
fn lane_vexpr(depth: u32) -> BoxedStrategy<VExpr> {
    let leaf = prop_oneof![
        2 => (0u32..2, 0u32..=12).prop_map(|(a, s)| elem(a, u32c(s))),
        1 => float_bits().prop_map(|bits| scalar(Expr::Const(wsel_ir::kernel::Const { ty: F32, bits }))),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    let sub = lane_vexpr(depth - 1);
    prop_oneof![
        2 => leaf,
        3 => (
            select(vec![BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Min, BinaryOp::Max]),
            sub.clone(),
            sub.clone(),
        )
            .prop_map(|(op, a, b)| vbin(op, F32, a, b)),
        1 => sub.clone().prop_map(|a| vun(UnaryOp::Neg, F32, a)),
        1 => (select(vec![MathFn::Sqrt, MathFn::Abs]), sub).prop_map(|(f, a)| vmath(f, F32, a)),
    ]
    .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// Long `f32` vector statements, often with the destination overlapping a source at a
    /// small offset (which in-order semantics makes a recurrence).
    #[test]
    fn overlapping_f32_vector_statements_agree(
        stmts in prop::collection::vec(
            (
                0u32..2,
                0u32..=12,
                0u32..=12,
                select(vec![AssignOp::Set, AssignOp::Add, AssignOp::Sub, AssignOp::Mul, AssignOp::Div]),
                lane_vexpr(2),
            ),
            1..4,
        ),
        words in prop::collection::vec(float_bits(), 48),
    ) {
        let body = stmts
            .into_iter()
            .map(|(a, start, len, op, value)| vector(slice(a, u32c(start), u32c(len)), op, value))
            .collect();
        let k = kernel(
            "lanes",
            arrays(&[("a", F32, 24), ("b", F32, 24)]),
            vec![],
            vec![task("main", &[], body)],
        );
        let mut setup = Setup::entry(&k);
        setup.sram = words;
        run_everywhere_with(&k, &setup, &CostModel::WSE2_LIKE);
    }
}

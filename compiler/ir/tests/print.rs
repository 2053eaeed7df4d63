//! Snapshot of the readable IR for a hand-built axpy kernel.

use expect_test::expect;
use wsel_ir::kernel::*;
use wsel_ir::print::print_kernel;

fn axpy() -> KernelIr {
    let n = Expr::Const(Const::u32(4));
    let zero = Expr::Const(Const::u32(0));
    KernelIr {
        name: "axpy_row<n=4,alpha=2>".into(),
        arrays: vec![
            Array {
                name: "x".into(),
                elem: ScalarTy::F32,
                len: 4,
                offset_words: 0,
                init: Const::f32(0.0),
            },
            Array {
                name: "y".into(),
                elem: ScalarTy::F32,
                len: 4,
                offset_words: 4,
                init: Const::f32(0.0),
            },
        ],
        ports: vec![
            Port {
                name: "xs".into(),
                direction: PortDirection::In,
                elem: ScalarTy::F32,
            },
            Port {
                name: "ys".into(),
                direction: PortDirection::Out,
                elem: ScalarTy::F32,
            },
        ],
        tasks: vec![
            Task {
                name: "main".into(),
                locals: vec![],
                body: vec![Stmt::Recv {
                    port: PortId(0),
                    dst: Slice {
                        array: ArrayId(0),
                        start: zero.clone(),
                        len: n.clone(),
                    },
                    then: TaskId(1),
                }],
            },
            Task {
                name: "step".into(),
                locals: vec![Local {
                    name: "k".into(),
                    ty: ScalarTy::U32,
                }],
                body: vec![
                    Stmt::Vector {
                        dst: Slice {
                            array: ArrayId(1),
                            start: zero.clone(),
                            len: n.clone(),
                        },
                        op: AssignOp::Add,
                        value: VExpr::Binary {
                            op: BinaryOp::Mul,
                            ty: ScalarTy::F32,
                            lhs: Box::new(VExpr::Scalar(Expr::Const(Const::f32(2.0)))),
                            rhs: Box::new(VExpr::Elem {
                                array: ArrayId(0),
                                start: zero.clone(),
                            }),
                        },
                    },
                    Stmt::For {
                        local: LocalId(0),
                        lo: zero.clone(),
                        hi: n.clone(),
                        body: vec![Stmt::SendScalar {
                            port: PortId(1),
                            value: Expr::Load {
                                array: ArrayId(1),
                                index: Box::new(Expr::Local(LocalId(0))),
                            },
                            then: None,
                        }],
                    },
                ],
            },
        ],
        entry: TaskId(0),
    }
}

#[test]
fn axpy_prints_readably() {
    expect![[r#"
        kernel axpy_row<n=4,alpha=2> (entry: main) {
            sram x: [f32; 4] @ word 0 = 0.0
            sram y: [f32; 4] @ word 4 = 0.0
            in xs: stream<f32>
            out ys: stream<f32>
            task main() {
                recv(xs, x[0u +: 4u]) then step;
            }
            task step() {
                y[0u +: 4u] += mul.f32(2.0, x[0u + i]);
                for k%0 in 0u..4u {
                    send(ys, y[k%0]);
                }
            }
        }
    "#]]
    .assert_eq(&print_kernel(&axpy()));
}

#[test]
fn sram_words_covers_every_array() {
    assert_eq!(axpy().sram_words(), 8);
}

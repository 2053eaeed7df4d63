//! The shape of the AST: operator precedence, and `{:#?}` snapshots of representative items.

use expect_test::{Expect, expect};
use wsel_syntax::ast::{BinaryOp, Expr, Item, UnaryOp};
use wsel_syntax::parse;

/// Parses `const X: u32 = <expr>;` and prints the expression as an S-expression.
fn sexpr(expr: &str) -> String {
    let src = format!("const X: u32 = {expr};");
    let parsed = parse(&src);
    assert!(parsed.errors.is_empty(), "{expr}: {:#?}", parsed.errors);
    match &parsed.module.items[..] {
        [Item::Const(c)] => show(&c.value),
        other => panic!("{other:#?}"),
    }
}

fn show(e: &Expr) -> String {
    match e {
        Expr::Int(v, _) => v.to_string(),
        Expr::Float(v, _) => format!("{v:?}"),
        Expr::Bool(v, _) => v.to_string(),
        Expr::Str(s, _) => format!("{s:?}"),
        Expr::Name(id) => id.name.clone(),
        Expr::Field { base, field, .. } => format!("(. {} {})", show(base), field.name),
        Expr::Unary { op, operand, .. } => {
            let op = match op {
                UnaryOp::Neg => "neg",
                UnaryOp::Not => "!",
            };
            format!("({op} {})", show(operand))
        }
        Expr::Binary { op, lhs, rhs, .. } => {
            let op = match op {
                BinaryOp::Add => "+",
                BinaryOp::Sub => "-",
                BinaryOp::Mul => "*",
                BinaryOp::Div => "/",
                BinaryOp::Rem => "%",
                BinaryOp::Eq => "==",
                BinaryOp::Ne => "!=",
                BinaryOp::Lt => "<",
                BinaryOp::Le => "<=",
                BinaryOp::Gt => ">",
                BinaryOp::Ge => ">=",
                BinaryOp::And => "&&",
                BinaryOp::Or => "||",
            };
            format!("({op} {} {})", show(lhs), show(rhs))
        }
        Expr::Cast { value, ty, .. } => format!("(as {} {ty:?})", show(value)),
        Expr::Index { base, index, .. } => format!("(index {} {})", show(base), show(index)),
        Expr::Slice { base, lo, hi, .. } => {
            format!("(slice {} {} {})", show(base), show(lo), show(hi))
        }
        Expr::Call { callee, args, .. } => {
            let args: Vec<String> = args.iter().map(show).collect();
            format!("(call {} {})", callee.name, args.join(" "))
        }
        Expr::Error(_) => "<error>".to_string(),
    }
}

#[test]
fn precedence() {
    let cases = [
        ("a || b && c", "(|| a (&& b c))"),
        ("a && b || c", "(|| (&& a b) c)"),
        ("a == b && c < d", "(&& (== a b) (< c d))"),
        ("a + b * c", "(+ a (* b c))"),
        ("a - b - c", "(- (- a b) c)"),
        ("a * b % c", "(% (* a b) c)"),
        ("a * b as f32", "(* a (as b F32))"),
        ("-a as f32", "(as (neg a) F32)"),
        ("x as u32 as f32", "(as (as x U32) F32)"),
        ("!a[i]", "(! (index a i))"),
        ("-x[0..n].len", "(neg (. (slice x 0 n) len))"),
        ("pe.row == 0", "(== (. pe row) 0)"),
        ("max(h[0..n], 0.0)", "(call max (slice h 0 n) 0.0)"),
        ("(a + b) * c", "(* (+ a b) c)"),
        ("n + m <= 2 * k", "(<= (+ n m) (* 2 k))"),
        ("0x2A + 1_000 + 2e8", "(+ (+ 42 1000) 200000000.0)"),
        ("true || false", "(|| true false)"),
    ];
    for (src, want) in cases {
        assert_eq!(sexpr(src), want, "{src}");
    }
}

#[test]
fn comparisons_do_not_chain() {
    let parsed = parse("const X: bool = a < b < c;");
    assert_eq!(parsed.errors.len(), 1, "{:#?}", parsed.errors);
    assert_eq!(parsed.errors[0].code, "E0002");
}

/// `train as e` between a layer's result and its body: the clause's calls, its span from
/// `train` to the end of the expression; a layer without one has none.
#[test]
fn a_layer_train_as_clause() {
    let src =
        "layer attention(q: f32[B, N], k: f32[B, N], v: f32[B, N], heads: u32) -> y: f32[B, N]
    train as attention_qkv(pack_qkv(q, k, v, heads = heads), heads = heads) {
    cost { flops = N; weights = 0; activations = N; }
}
layer relu(x: f32[B, N]) -> y: f32[B, N] { cost { flops = N; weights = 0; activations = N; } }";
    let parsed = parse(src);
    assert!(parsed.errors.is_empty(), "{:#?}", parsed.errors);
    let [Item::Layer(fused), Item::Layer(relu)] = &parsed.module.items[..] else {
        panic!("{:#?}", parsed.module.items);
    };
    let clause = fused.train_as.as_ref().expect("a clause");
    assert_eq!(
        show(&clause.value),
        "(call attention_qkv (call pack_qkv q k v))"
    );
    assert_eq!(
        &src[clause.span.clone()],
        "train as attention_qkv(pack_qkv(q, k, v, heads = heads), heads = heads)"
    );
    let Expr::Call { named, .. } = &clause.value else {
        panic!("{:#?}", clause.value);
    };
    assert_eq!(named.len(), 1);
    assert!(relu.train_as.is_none());
    // `train` without `as` and an expression is a syntax error.
    let broken = parse(
        "layer r(x: f32[B, N]) -> y: f32[B, N] train { cost { flops = N; weights = 0; activations = N; } }",
    );
    assert!(!broken.errors.is_empty());
}

fn check(src: &str, expect: Expect) {
    let parsed = parse(src);
    assert!(parsed.errors.is_empty(), "{:#?}", parsed.errors);
    expect.assert_eq(&format!("{:#?}", parsed.module));
}

#[test]
fn kernel_snapshot() {
    check(
        r#"/// Doubles a stream.
kernel double(n: u32) {
    var x: [f32; n];
    in xs: stream<f32> from west multicast;
    out ys: stream<f32> to east;
    task main() {
        recv(xs, x[0..n]) then go;
    }
    task go() {
        if pe.col == 0 { x[0] *= 2.0; } else if n > 1 { return; }
        send(ys, x[0..n]);
    }
}
"#,
        expect![[r#"
            Module {
                items: [
                    Kernel(
                        Kernel {
                            doc: Some(
                                "Doubles a stream.",
                            ),
                            name: Ident {
                                name: "double",
                                span: 29..35,
                            },
                            params: [
                                Param {
                                    is_param: false,
                                    name: Ident {
                                        name: "n",
                                        span: 36..37,
                                    },
                                    ty: Scalar(
                                        U32,
                                        39..42,
                                    ),
                                    default: None,
                                    span: 36..42,
                                },
                            ],
                            members: [
                                Var(
                                    VarDecl {
                                        name: Ident {
                                            name: "x",
                                            span: 54..55,
                                        },
                                        ty: Array {
                                            elem: F32,
                                            len: Name(
                                                Ident {
                                                    name: "n",
                                                    span: 63..64,
                                                },
                                            ),
                                            span: 57..65,
                                        },
                                        init: None,
                                        span: 50..66,
                                    },
                                ),
                                Port(
                                    PortDecl {
                                        direction: In,
                                        name: Ident {
                                            name: "xs",
                                            span: 74..76,
                                        },
                                        ty: Stream(
                                            F32,
                                            78..89,
                                        ),
                                        side: Ident {
                                            name: "west",
                                            span: 95..99,
                                        },
                                        multicast: true,
                                        distance: None,
                                        switch: None,
                                        span: 71..110,
                                    },
                                ),
                                Port(
                                    PortDecl {
                                        direction: Out,
                                        name: Ident {
                                            name: "ys",
                                            span: 119..121,
                                        },
                                        ty: Stream(
                                            F32,
                                            123..134,
                                        ),
                                        side: Ident {
                                            name: "east",
                                            span: 138..142,
                                        },
                                        multicast: false,
                                        distance: None,
                                        switch: None,
                                        span: 115..143,
                                    },
                                ),
                                Task(
                                    Task {
                                        name: Ident {
                                            name: "main",
                                            span: 153..157,
                                        },
                                        body: Block {
                                            stmts: [
                                                Recv {
                                                    port: Ident {
                                                        name: "xs",
                                                        span: 175..177,
                                                    },
                                                    target: Slice {
                                                        base: Name(
                                                            Ident {
                                                                name: "x",
                                                                span: 179..180,
                                                            },
                                                        ),
                                                        lo: Int(
                                                            0,
                                                            181..182,
                                                        ),
                                                        hi: Name(
                                                            Ident {
                                                                name: "n",
                                                                span: 184..185,
                                                            },
                                                        ),
                                                        span: 179..186,
                                                    },
                                                    then: Ident {
                                                        name: "go",
                                                        span: 193..195,
                                                    },
                                                    span: 170..196,
                                                },
                                            ],
                                            span: 160..202,
                                        },
                                        span: 148..202,
                                    },
                                ),
                                Task(
                                    Task {
                                        name: Ident {
                                            name: "go",
                                            span: 212..214,
                                        },
                                        body: Block {
                                            stmts: [
                                                If {
                                                    cond: Binary {
                                                        op: Eq,
                                                        lhs: Field {
                                                            base: Name(
                                                                Ident {
                                                                    name: "pe",
                                                                    span: 230..232,
                                                                },
                                                            ),
                                                            field: Ident {
                                                                name: "col",
                                                                span: 233..236,
                                                            },
                                                            span: 230..236,
                                                        },
                                                        rhs: Int(
                                                            0,
                                                            240..241,
                                                        ),
                                                        span: 230..241,
                                                    },
                                                    then_block: Block {
                                                        stmts: [
                                                            Assign {
                                                                place: Index {
                                                                    base: Name(
                                                                        Ident {
                                                                            name: "x",
                                                                            span: 244..245,
                                                                        },
                                                                    ),
                                                                    index: Int(
                                                                        0,
                                                                        246..247,
                                                                    ),
                                                                    span: 244..248,
                                                                },
                                                                op: Mul,
                                                                value: Float(
                                                                    2.0,
                                                                    252..255,
                                                                ),
                                                                span: 244..256,
                                                            },
                                                        ],
                                                        span: 242..258,
                                                    },
                                                    else_block: Some(
                                                        Block {
                                                            stmts: [
                                                                If {
                                                                    cond: Binary {
                                                                        op: Gt,
                                                                        lhs: Name(
                                                                            Ident {
                                                                                name: "n",
                                                                                span: 267..268,
                                                                            },
                                                                        ),
                                                                        rhs: Int(
                                                                            1,
                                                                            271..272,
                                                                        ),
                                                                        span: 267..272,
                                                                    },
                                                                    then_block: Block {
                                                                        stmts: [
                                                                            Return(
                                                                                275..282,
                                                                            ),
                                                                        ],
                                                                        span: 273..284,
                                                                    },
                                                                    else_block: None,
                                                                    span: 264..284,
                                                                },
                                                            ],
                                                            span: 264..284,
                                                        },
                                                    ),
                                                    span: 227..284,
                                                },
                                                Send {
                                                    port: Ident {
                                                        name: "ys",
                                                        span: 298..300,
                                                    },
                                                    value: Slice {
                                                        base: Name(
                                                            Ident {
                                                                name: "x",
                                                                span: 302..303,
                                                            },
                                                        ),
                                                        lo: Int(
                                                            0,
                                                            304..305,
                                                        ),
                                                        hi: Name(
                                                            Ident {
                                                                name: "n",
                                                                span: 307..308,
                                                            },
                                                        ),
                                                        span: 302..309,
                                                    },
                                                    then: None,
                                                    span: 293..311,
                                                },
                                            ],
                                            span: 217..317,
                                        },
                                        span: 207..317,
                                    },
                                ),
                            ],
                            span: 22..319,
                        },
                    ),
                ],
            }"#]],
    );
}

#[test]
fn layer_snapshot() {
    check(
        r#"layer scale(x: f32[B, N], param s: f32[N]) -> y: f32[B, N] {
    cost { flops = N; weights = 4 * N; activations = 8 * N; }
    pipelined, streaming on [1, C] where N % C == 0 {
        run scale_tile(n = N / C);
        bind s to array s split [cols];
        bind x to port xs split [_, cols];
    }
}
"#,
        expect![[r#"
            Module {
                items: [
                    Layer(
                        Layer {
                            doc: None,
                            name: Ident {
                                name: "scale",
                                span: 6..11,
                            },
                            inputs: [
                                Param {
                                    is_param: false,
                                    name: Ident {
                                        name: "x",
                                        span: 12..13,
                                    },
                                    ty: Tensor {
                                        elem: F32,
                                        dims: [
                                            Name(
                                                Ident {
                                                    name: "B",
                                                    span: 19..20,
                                                },
                                            ),
                                            Name(
                                                Ident {
                                                    name: "N",
                                                    span: 22..23,
                                                },
                                            ),
                                        ],
                                        span: 15..24,
                                    },
                                    default: None,
                                    span: 12..24,
                                },
                                Param {
                                    is_param: true,
                                    name: Ident {
                                        name: "s",
                                        span: 32..33,
                                    },
                                    ty: Tensor {
                                        elem: F32,
                                        dims: [
                                            Name(
                                                Ident {
                                                    name: "N",
                                                    span: 39..40,
                                                },
                                            ),
                                        ],
                                        span: 35..41,
                                    },
                                    default: None,
                                    span: 26..41,
                                },
                            ],
                            output: Ident {
                                name: "y",
                                span: 46..47,
                            },
                            output_ty: Tensor {
                                elem: F32,
                                dims: [
                                    Name(
                                        Ident {
                                            name: "B",
                                            span: 53..54,
                                        },
                                    ),
                                    Name(
                                        Ident {
                                            name: "N",
                                            span: 56..57,
                                        },
                                    ),
                                ],
                                span: 49..58,
                            },
                            output_is_param: false,
                            train_as: None,
                            cost: Some(
                                Cost {
                                    entries: [
                                        (
                                            Ident {
                                                name: "flops",
                                                span: 72..77,
                                            },
                                            Name(
                                                Ident {
                                                    name: "N",
                                                    span: 80..81,
                                                },
                                            ),
                                        ),
                                        (
                                            Ident {
                                                name: "weights",
                                                span: 83..90,
                                            },
                                            Binary {
                                                op: Mul,
                                                lhs: Int(
                                                    4,
                                                    93..94,
                                                ),
                                                rhs: Name(
                                                    Ident {
                                                        name: "N",
                                                        span: 97..98,
                                                    },
                                                ),
                                                span: 93..98,
                                            },
                                        ),
                                        (
                                            Ident {
                                                name: "activations",
                                                span: 100..111,
                                            },
                                            Binary {
                                                op: Mul,
                                                lhs: Int(
                                                    8,
                                                    114..115,
                                                ),
                                                rhs: Name(
                                                    Ident {
                                                        name: "N",
                                                        span: 118..119,
                                                    },
                                                ),
                                                span: 114..119,
                                            },
                                        ),
                                    ],
                                    span: 65..122,
                                },
                            ),
                            impls: [
                                LayerImpl {
                                    modes: [
                                        (
                                            Pipelined,
                                            127..136,
                                        ),
                                        (
                                            Streaming,
                                            138..147,
                                        ),
                                    ],
                                    rows: Int(
                                        1,
                                        152..153,
                                    ),
                                    cols: Name(
                                        Ident {
                                            name: "C",
                                            span: 155..156,
                                        },
                                    ),
                                    conditions: [
                                        Binary {
                                            op: Eq,
                                            lhs: Binary {
                                                op: Rem,
                                                lhs: Name(
                                                    Ident {
                                                        name: "N",
                                                        span: 164..165,
                                                    },
                                                ),
                                                rhs: Name(
                                                    Ident {
                                                        name: "C",
                                                        span: 168..169,
                                                    },
                                                ),
                                                span: 164..169,
                                            },
                                            rhs: Int(
                                                0,
                                                173..174,
                                            ),
                                            span: 164..174,
                                        },
                                    ],
                                    run: Some(
                                        RunKernel {
                                            kernel: Ident {
                                                name: "scale_tile",
                                                span: 189..199,
                                            },
                                            args: [
                                                (
                                                    Ident {
                                                        name: "n",
                                                        span: 200..201,
                                                    },
                                                    Binary {
                                                        op: Div,
                                                        lhs: Name(
                                                            Ident {
                                                                name: "N",
                                                                span: 204..205,
                                                            },
                                                        ),
                                                        rhs: Name(
                                                            Ident {
                                                                name: "C",
                                                                span: 208..209,
                                                            },
                                                        ),
                                                        span: 204..209,
                                                    },
                                                ),
                                            ],
                                            span: 185..211,
                                        },
                                    ),
                                    binds: [
                                        Bind {
                                            tensor: Ident {
                                                name: "s",
                                                span: 225..226,
                                            },
                                            kind: Array,
                                            target: Ident {
                                                name: "s",
                                                span: 236..237,
                                            },
                                            split: Some(
                                                [
                                                    Cols(
                                                        245..249,
                                                    ),
                                                ],
                                            ),
                                            tiles: None,
                                            span: 220..251,
                                        },
                                        Bind {
                                            tensor: Ident {
                                                name: "x",
                                                span: 265..266,
                                            },
                                            kind: Port,
                                            target: Ident {
                                                name: "xs",
                                                span: 275..277,
                                            },
                                            split: Some(
                                                [
                                                    Whole(
                                                        285..286,
                                                    ),
                                                    Cols(
                                                        288..292,
                                                    ),
                                                ],
                                            ),
                                            tiles: None,
                                            span: 260..294,
                                        },
                                    ],
                                    span: 127..300,
                                },
                            ],
                            span: 0..302,
                        },
                    ),
                ],
            }"#]],
    );
}

#[test]
fn model_and_run_snapshot() {
    check(
        r#"import std.nn.{relu as r};
model m(x: f32[B, 4]) -> f32[B, 4] {
    param w: f32[4] from "w.npy";
    let h = r(x);
    return h;
}
run m { input x = "x.npy"; batch = 8; }
"#,
        expect![[r#"
            Module {
                items: [
                    Import(
                        Import {
                            path: [
                                Ident {
                                    name: "std",
                                    span: 7..10,
                                },
                                Ident {
                                    name: "nn",
                                    span: 11..13,
                                },
                            ],
                            names: [
                                ImportName {
                                    name: Ident {
                                        name: "relu",
                                        span: 15..19,
                                    },
                                    alias: Some(
                                        Ident {
                                            name: "r",
                                            span: 23..24,
                                        },
                                    ),
                                },
                            ],
                            span: 0..26,
                        },
                    ),
                    Model(
                        Model {
                            doc: None,
                            name: Ident {
                                name: "m",
                                span: 33..34,
                            },
                            inputs: [
                                Param {
                                    is_param: false,
                                    name: Ident {
                                        name: "x",
                                        span: 35..36,
                                    },
                                    ty: Tensor {
                                        elem: F32,
                                        dims: [
                                            Name(
                                                Ident {
                                                    name: "B",
                                                    span: 42..43,
                                                },
                                            ),
                                            Int(
                                                4,
                                                45..46,
                                            ),
                                        ],
                                        span: 38..47,
                                    },
                                    default: None,
                                    span: 35..47,
                                },
                            ],
                            output_ty: Tensor {
                                elem: F32,
                                dims: [
                                    Name(
                                        Ident {
                                            name: "B",
                                            span: 56..57,
                                        },
                                    ),
                                    Int(
                                        4,
                                        59..60,
                                    ),
                                ],
                                span: 52..61,
                            },
                            body: [
                                Param {
                                    name: Ident {
                                        name: "w",
                                        span: 74..75,
                                    },
                                    ty: Tensor {
                                        elem: F32,
                                        dims: [
                                            Int(
                                                4,
                                                81..82,
                                            ),
                                        ],
                                        span: 77..83,
                                    },
                                    path: Some(
                                        (
                                            "w.npy",
                                            89..96,
                                        ),
                                    ),
                                    span: 68..97,
                                },
                                Let {
                                    name: Ident {
                                        name: "h",
                                        span: 106..107,
                                    },
                                    value: Call {
                                        callee: Ident {
                                            name: "r",
                                            span: 110..111,
                                        },
                                        args: [
                                            Name(
                                                Ident {
                                                    name: "x",
                                                    span: 112..113,
                                                },
                                            ),
                                        ],
                                        named: [],
                                        span: 110..114,
                                    },
                                    span: 102..115,
                                },
                                Return {
                                    value: Name(
                                        Ident {
                                            name: "h",
                                            span: 127..128,
                                        },
                                    ),
                                    span: 120..129,
                                },
                            ],
                            span: 27..131,
                        },
                    ),
                    Run(
                        RunConfig {
                            model: Ident {
                                name: "m",
                                span: 136..137,
                            },
                            settings: [
                                Input {
                                    name: Ident {
                                        name: "x",
                                        span: 146..147,
                                    },
                                    path: "x.npy",
                                    span: 140..158,
                                },
                                Key {
                                    key: Ident {
                                        name: "batch",
                                        span: 159..164,
                                    },
                                    value: Int(
                                        8,
                                        167..168,
                                    ),
                                    span: 159..169,
                                },
                            ],
                            span: 132..171,
                        },
                    ),
                ],
            }"#]],
    );
}

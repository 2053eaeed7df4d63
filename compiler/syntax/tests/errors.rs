//! Syntax errors: one test per code, error recovery across items and statements, limits.

use expect_test::{Expect, expect};
use wsel_syntax::ast::{Expr, Item, KernelMember, Stmt, Type, VarDecl};
use wsel_syntax::{Parsed, codes, parse};

/// One line per error: `code start..end: message [label]`.
fn render(parsed: &Parsed) -> String {
    parsed
        .errors
        .iter()
        .map(|e| {
            format!(
                "{} {}..{}: {} [{}]\n",
                e.code, e.span.start, e.span.end, e.message, e.label
            )
        })
        .collect()
}

fn check(src: &str, expect: Expect) -> Parsed {
    let parsed = parse(src);
    expect.assert_eq(&render(&parsed));
    parsed
}

fn item_kinds(parsed: &Parsed) -> Vec<&'static str> {
    parsed
        .module
        .items
        .iter()
        .map(|i| match i {
            Item::Import(_) => "import",
            Item::Const(_) => "const",
            Item::Kernel(_) => "kernel",
            Item::Layer(_) => "layer",
            Item::Model(_) => "model",
            Item::Run(_) => "run",
            Item::Train(_) => "train",
            Item::Error(_) => "error",
        })
        .collect()
}

#[test]
fn e0001_invalid_character() {
    let parsed = check(
        "const A: u32 = 1 @ 2;\nconst B: u32 = 3;\n$$ const C: u32 = 4;",
        expect![[r#"
            E0001 17..18: invalid character `@` [this character starts no token]
            E0001 40..42: invalid characters `$$` [these characters start no token]
        "#]],
    );
    // `A` broke after its name: it stays, with the error type. `$$` is not a declaration.
    assert_eq!(item_kinds(&parsed), ["const", "const", "error", "const"]);
}

#[test]
fn e0002_unexpected_token() {
    check(
        "kernel k() {\n    task main() { recv(xs, x) step; }\n}\n",
        expect![[r#"
            E0002 43..47: expected `then`, found identifier `step` [unexpected identifier `step`]
        "#]],
    );
}

#[test]
fn e0002_contextual_words() {
    check(
        r#"kernel k() { in xs: stream<f32> from west multicats; }
layer l(x: f32[B]) -> y: f32[B] {
    cost { flops = 1; weights = 0; activations = 1; }
    pipelined on [1, 1] { run k(); bind x to arr xs; }
}
run m { inptu x = "x.npy"; }
"#,
        expect![[r#"
            E0002 42..51: expected one of `multicast`, `switch`, or `;`, found identifier `multicats` [an input port ends with `multicast`, `switch` or `;`]
            E0002 188..191: expected `array` or `port`, found identifier `arr` [a tensor binds to an `array` or a `port`]
            E0002 208..213: expected `input` or `=`, found identifier `inptu` [a setting is `input NAME = "path";` or `key = value;`]
        "#]],
    );
}

#[test]
fn e0003_unexpected_end_of_file() {
    let parsed = check(
        "const A: u32 = 1;\nkernel k() {\n    task main() {\n        let x = 1;\n",
        expect![[r#"
            E0003 67..67: unexpected end of file: 2 `}` are missing [the file ends here]
        "#]],
    );
    // The unfinished kernel keeps what was written so far.
    let Item::Kernel(k) = &parsed.module.items[1] else {
        panic!("{:#?}", parsed.module)
    };
    let KernelMember::Task(t) = &k.members[0] else {
        panic!("{k:#?}")
    };
    assert!(matches!(t.body.stmts[..], [Stmt::Let { .. }]));

    check(
        "const A: u32 = 1 +",
        expect![[r#"
        E0003 18..18: unexpected end of file: expected an expression [the file ends here]
    "#]],
    );
    check(
        "import std.nn.{dense",
        expect![[r#"
        E0003 20..20: unexpected end of file: a `}` is missing [the file ends here]
    "#]],
    );
}

#[test]
fn e0004_string_literals() {
    check(
        "run m {\n    output = \"out/p.npy;\n    labels = \"a\\qb\";\n}\n",
        expect![[r#"
            E0004 21..32: unterminated string literal [this string has no closing `"` on its line]
            E0004 48..50: unknown escape `\q` in string literal [the escapes are `\"`, `\\`, `\n` and `\t`]
        "#]],
    );
}

#[test]
fn e0005_unterminated_block_comment() {
    check(
        "const A: u32 = 1;\n/* never closed\nconst B: u32 = 2;\n",
        expect![[r#"
        E0005 18..20: unterminated block comment [this comment has no closing `*/`]
    "#]],
    );
    check(
        "kernel k() { /* open",
        expect![[r#"
        E0005 13..15: unterminated block comment [this comment has no closing `*/`]
    "#]],
    );
}

#[test]
fn e0006_malformed_numbers() {
    let parsed = check(
        "const A: f32 = 1e;\nconst B: u32 = 99999999999999999999;\nconst C: u32 = 12ab + 1;\n",
        expect![[r#"
            E0006 15..17: malformed number literal `1e` [not a valid integer or float literal]
            E0006 34..54: integer literal `99999999999999999999` is too large [integers must fit in 64 bits]
            E0006 71..75: malformed number literal `12ab` [not a valid integer or float literal]
        "#]],
    );
    // The constants are still there, with an error expression for the bad literal.
    assert_eq!(item_kinds(&parsed), ["const", "const", "const"]);
}

#[test]
fn e0007_structural() {
    check(
        r#"layer l(x: f32[B]) -> y: f32[B] {
    pipelined on [1, 1] { run a(); run b(); }
}
"#,
        expect![[r#"
            E0007 69..77: a layer implementation runs exactly one kernel: a second `run` [second `run`]
        "#]],
    );
}

#[test]
fn three_independent_errors_are_all_reported() {
    let src = r#"import std.nn.{dense, relu};

const GOOD: u32 = 4;

kernel k(n: u32) {
    var x: [f32; n];
    var y: [f32 n];
    task main() {
        let a = 1 2;
        x[0] = a;
    }
}

model m(x: f32[B, 4]) -> f32[B, 4] {
    param w: f32[4, 4];
    let h = dense(x w, w);
    return h;
}

const ALSO_GOOD: u32 = GOOD * 2;
"#;
    let parsed = check(
        src,
        expect![[r#"
            E0002 108..109: expected `;`, found identifier `n` [unexpected identifier `n`]
            E0002 148..149: expected `;` or an operator, found number `2` [unexpected number `2`]
            E0002 259..260: expected one of `(`, `)`, `,`, `=`, or an operator, found identifier `w` [unexpected identifier `w`]
        "#]],
    );
    assert_eq!(
        item_kinds(&parsed),
        ["import", "const", "kernel", "model", "const"]
    );
    let Item::Kernel(k) = &parsed.module.items[2] else {
        panic!()
    };
    assert!(matches!(
        k.members[..],
        [
            KernelMember::Var(_),
            KernelMember::Var(VarDecl {
                ty: Type::Error(_),
                ..
            }),
            KernelMember::Task(_)
        ]
    ));
    let KernelMember::Task(t) = &k.members[2] else {
        panic!()
    };
    assert!(matches!(
        t.body.stmts[..],
        [
            Stmt::Let {
                ty: Some(Type::Error(_)),
                ..
            },
            Stmt::Assign { .. }
        ]
    ));
}

#[test]
fn missing_semicolon_before_closing_brace() {
    let parsed = check(
        "kernel k() {\n    task main() { activate go }\n    task go() { return; }\n}\n",
        expect![[r#"
            E0002 43..44: expected `;`, found `}` [unexpected `}`]
        "#]],
    );
    let Item::Kernel(k) = &parsed.module.items[0] else {
        panic!()
    };
    assert_eq!(k.members.len(), 2, "{k:#?}");
}

#[test]
fn missing_closing_brace_in_the_middle() {
    let parsed = check(
        "kernel k() {\n    task a() {\n        let x = 1;\n    task b() { return; }\n}\nconst C: u32 = 1;\n",
        expect![[r#"
            E0002 51..55: expected `}` or a statement, found `task` [unexpected `task`]
            E0003 91..91: unexpected end of file: a `}` is missing [the file ends here]
        "#]],
    );
    assert!(item_kinds(&parsed).contains(&"const"));
}

#[test]
fn garbage_between_items() {
    let parsed = check(
        "} ) ] kernel a() {}\nfoo bar baz\nlayer l(x: f32[B]) -> y: f32[B] { }\n",
        expect![[r#"
            E0002 0..1: expected an item, found `}` [unexpected `}`]
            E0002 20..23: expected an item, found identifier `foo` [unexpected identifier `foo`]
        "#]],
    );
    assert_eq!(item_kinds(&parsed), ["error", "kernel", "error", "layer"]);
}

#[test]
fn too_many_errors_stop_the_parse() {
    let src = "x = ;\n".repeat(300);
    let parsed = parse(&src);
    assert_eq!(parsed.errors.len(), 101);
    let last = parsed.errors.last().expect("errors");
    assert_eq!(last.code, "E0007");
    assert!(last.message.contains("too many"), "{}", last.message);
}

#[test]
fn every_code_is_listed_and_documented() {
    let listed: Vec<&str> = codes().iter().map(|(c, _)| *c).collect();
    assert_eq!(
        listed,
        [
            "E0001", "E0002", "E0003", "E0004", "E0005", "E0006", "E0007"
        ]
    );
    assert!(codes().iter().all(|(_, d)| !d.is_empty()));
}

#[test]
fn expected_lists_are_in_user_terms() {
    let parsed = parse("kernel k() { task main() { recv(xs, x) step; } }");
    let e = &parsed.errors[0];
    assert_eq!(e.expected, ["`then`"]);
    let parsed = parse("const A: u32 = ;");
    let e = &parsed.errors[0];
    assert!(e.expected.contains(&"identifier".to_string()), "{e:?}");
    assert!(e.message.starts_with("expected an expression"), "{e:?}");
}

#[test]
fn a_missing_semicolon_keeps_its_statement() {
    let parsed = check(
        "kernel k() {\n    task main() {\n        let x = 1\n        let y = 2;\n        activate main;\n    }\n}\n",
        expect![[r#"
            E0002 48..48: expected `;` or an operator, found `let` [expected `;` here]
        "#]],
    );
    let Item::Kernel(k) = &parsed.module.items[0] else {
        panic!()
    };
    let KernelMember::Task(t) = &k.members[0] else {
        panic!()
    };
    assert!(matches!(
        t.body.stmts[..],
        [
            Stmt::Let {
                value: Expr::Int(1, _),
                ..
            },
            Stmt::Let { .. },
            Stmt::Activate { .. }
        ]
    ));
}

#[test]
fn a_broken_member_resumes_at_the_next_member_keyword() {
    let parsed = check(
        "kernel k() {\n    var x: f32 =\n    const C: u32 = 1;\n    task main() { }\n}\n",
        expect![[r#"
            E0002 34..39: expected an expression, found `const` [unexpected `const`]
        "#]],
    );
    let Item::Kernel(k) = &parsed.module.items[0] else {
        panic!()
    };
    assert!(matches!(
        k.members[..],
        [
            KernelMember::Var(VarDecl {
                ty: Type::Scalar(..),
                init: None,
                ..
            }),
            KernelMember::Const(_),
            KernelMember::Task(_)
        ]
    ));
}

#[test]
fn a_broken_model_statement_resumes_at_the_next_keyword() {
    let parsed = check(
        "model m(x: f32[B]) -> f32[B] {\n    param w: f32[4]\n    let h = x;\n    return h;\n}\n",
        expect![[r#"
            E0002 50..50: expected `from` or `;`, found `let` [expected `;` here]
        "#]],
    );
    let Item::Model(m) = &parsed.module.items[0] else {
        panic!()
    };
    assert_eq!(m.body.len(), 3);
}

#[test]
fn unknown_escape_of_a_control_character_keeps_a_source_span() {
    // Found by the `random_bytes` property: the span must cover the source bytes.
    let src = "run m { output = \"\\\t\u{FFFD}\"; }";
    let parsed = check(
        src,
        expect![[r#"
        E0004 18..20: unknown escape in string literal: `\` followed by '\t' [the escapes are `\"`, `\\`, `\n` and `\t`]
    "#]],
    );
    let span = parsed.errors[0].span.clone();
    assert_eq!(&src[span], "\\\t");
}

#[test]
fn a_broken_construct_skips_its_brace_group_whole() {
    let parsed = check(
        r#"layer l(x: f32[B]) -> y: f32[B] {
    cots { flops = 1; weights = 0; }
    pipelined on [1, 1] { run k(); }
}
kernel k() {
    task main( { x = 1; }
    task b() { }
}
kernal j() { task main() { } }
const A: u32 = 1;
"#,
        expect![[r#"
            E0002 38..42: expected one of `cost`, `pipelined`, `streaming`, or `}`, found identifier `cots` [unexpected identifier `cots`]
            E0002 138..139: expected `)`, found `{` [unexpected `{`]
            E0002 168..174: expected an item, found identifier `kernal` [unexpected identifier `kernal`]
        "#]],
    );
    assert_eq!(item_kinds(&parsed), ["layer", "kernel", "error", "const"]);
    let Item::Layer(l) = &parsed.module.items[0] else {
        panic!()
    };
    assert_eq!(l.impls.len(), 1);
    let Item::Kernel(k) = &parsed.module.items[1] else {
        panic!()
    };
    assert!(matches!(
        k.members[..],
        [KernelMember::Error(_), KernelMember::Task(_)]
    ));
}

#[test]
fn a_second_cost_block_is_structural() {
    check(
        "layer l(x: f32[B]) -> y: f32[B] {\n    cost { flops = 1; }\n    cost { flops = 2; }\n}\n",
        expect![[r#"
            E0007 62..81: a layer has exactly one `cost` block; this is a second one [second `cost` block]
        "#]],
    );
}

#[test]
fn a_broken_string_still_gives_its_declaration_a_value() {
    let parsed =
        parse("run m {\n    input x = \"data\\digits.npy\";\n    output = \"out.npy;\n}\n");
    let codes: Vec<&str> = parsed.errors.iter().map(|e| e.code).collect();
    assert_eq!(codes, ["E0004", "E0004"]);
    let Item::Run(run) = &parsed.module.items[0] else {
        panic!("{:?}", parsed.module)
    };
    let shown: Vec<String> = run.settings.iter().map(|s| format!("{s:?}")).collect();
    assert_eq!(run.settings.len(), 2, "{shown:?}");
    assert!(
        shown[0].contains(r#"path: "data\\digits.npy""#),
        "{shown:?}"
    );
    assert!(shown[1].contains(r#"Str("out.npy""#), "{shown:?}");
}

#[test]
fn a_train_item_parses_like_a_run_item_and_recovers_alike() {
    let parsed = check(
        "train m {\n    input x = \"x.npy\";\n    lr = 0.05;\n    optimizer = ;\n    shuffle = false;\n}\nrun m { batch = 8; }\n",
        expect![[r#"
            E0002 64..65: expected an expression, found `;` [unexpected `;`]
        "#]],
    );
    assert_eq!(item_kinds(&parsed), ["train", "run"]);
    let Item::Train(train) = &parsed.module.items[0] else {
        panic!("{:?}", parsed.module)
    };
    let keys: Vec<String> = train.settings.iter().map(|s| format!("{s:?}")).collect();
    assert_eq!(train.settings.len(), 3, "{keys:?}");
    assert!(keys[1].contains("Float(0.05"), "{keys:?}");
    assert!(keys[2].contains("Bool(false"), "{keys:?}");
}

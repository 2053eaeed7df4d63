//! Property tests: the lexer and the parser never panic and always terminate, on random
//! bytes, on random token soup, and on valid programs with a token deleted or duplicated.

use proptest::prelude::*;
use wsel_syntax::{KEYWORDS, Parsed, codes, lex, parse};

const PROGRAM: &str = r#"import std.nn.{dense, relu as r};

/// A constant.
const N: u32 = 0x10 + 1_000 * 2;

/// y = alpha * x + y
kernel axpy(n: u32, alpha: f32) {
    var x: [f32; n];
    var y: [f32; n] = 0.0;
    in xs: stream<f32> from west multicast;
    out ys: stream<f32> to east;
    task main() { recv(xs, x[0..n]) then step; }
    task step() {
        for k in 0..n { y[k] += alpha * x[k] as f32; }
        if pe.row == 0 && !(n < 2) { activate main; } else { return; }
        while n > 0 { send(ys, y[0..n]) then main; }
    }
}

layer dense2(x: f32[B, N], param w: f32[N, M]) -> y: f32[B, M] {
    cost { flops = 2 * N * M; weights = 4 * N * M; activations = 4 * (N + M); }
    pipelined, streaming on [R, C] where N % R == 0, M % C == 0 {
        run gemv_tile(n = N / R, m = M / C);
        bind w to array w split [rows, cols];
        bind x to port xs split [_, rows];
    }
}

model digits(x: f32[B, 64]) -> f32[B, 10] {
    param w1: f32[64, 10] from "weights/w1.npy";
    let h = r(dense(x, w1));
    return h;
}

run digits { input x = "data/x.npy"; batch = 64; mode = "auto"; }
"#;

/// Source forms of every token that is not a keyword, for token soup (with `KEYWORDS`).
const OTHER_TOKENS: &[&str] = &[
    "_",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "<",
    ">",
    ";",
    ":",
    ",",
    ".",
    "..",
    "->",
    "=",
    "+=",
    "-=",
    "*=",
    "/=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "==",
    "!=",
    "<=",
    ">=",
    "&&",
    "||",
    "!",
    "x",
    "pe",
    "rows",
    "multicast",
    "0",
    "42",
    "1.5e-3",
    "\"s.npy\"",
    "// c\n",
    "/// d\n",
    "/* b */",
    "@",
    "1e",
    "\"open\n",
];

/// The invariants every parse keeps, whatever the input.
fn check_invariants(src: &str, parsed: &Parsed) {
    let known: Vec<&str> = codes().iter().map(|(c, _)| *c).collect();
    for e in &parsed.errors {
        assert!(known.contains(&e.code), "unknown code {}", e.code);
        assert!(
            e.span.start <= e.span.end && e.span.end <= src.len(),
            "{e:?}"
        );
        assert!(src.is_char_boundary(e.span.start) && src.is_char_boundary(e.span.end));
        assert!(!e.message.is_empty());
    }
    assert!(parsed.errors.len() <= 101);
    for (_, span) in lex(src) {
        assert!(span.start < span.end && span.end <= src.len());
        assert!(src.is_char_boundary(span.start) && src.is_char_boundary(span.end));
    }
}

fn token_spans() -> Vec<std::ops::Range<usize>> {
    lex(PROGRAM).into_iter().map(|(_, span)| span).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let src = String::from_utf8_lossy(&bytes);
        let parsed = parse(&src);
        check_invariants(&src, &parsed);
    }

    #[test]
    fn random_printable_text(src in "[ -~\n]{0,300}") {
        let parsed = parse(&src);
        check_invariants(&src, &parsed);
    }

    #[test]
    fn token_soup(picks in proptest::collection::vec(0..KEYWORDS.len() + OTHER_TOKENS.len(), 0..200)) {
        let tokens: Vec<&str> = KEYWORDS.iter().chain(OTHER_TOKENS).copied().collect();
        let src: Vec<&str> = picks.iter().map(|&i| tokens[i]).collect();
        let src = src.join(" ");
        let parsed = parse(&src);
        check_invariants(&src, &parsed);
    }

    #[test]
    fn delete_a_token(index in 0..1000usize) {
        let spans = token_spans();
        let span = &spans[index % spans.len()];
        let src = format!("{}{}", &PROGRAM[..span.start], &PROGRAM[span.end..]);
        let parsed = parse(&src);
        check_invariants(&src, &parsed);
    }

    #[test]
    fn duplicate_a_token(index in 0..1000usize) {
        let spans = token_spans();
        let span = &spans[index % spans.len()];
        let src = format!("{} {}", &PROGRAM[..span.end], &PROGRAM[span.start..]);
        let parsed = parse(&src);
        check_invariants(&src, &parsed);
    }

    #[test]
    fn truncate_the_program(cut in 0..PROGRAM.len()) {
        let src = &PROGRAM[..cut];
        let parsed = parse(src);
        check_invariants(src, &parsed);
    }
}

#[test]
fn the_base_program_is_valid() {
    let parsed = parse(PROGRAM);
    assert!(parsed.errors.is_empty(), "{:#?}", parsed.errors);
    assert_eq!(parsed.module.items.len(), 6);
}

#[test]
fn deep_nesting_and_long_chains_stop_cleanly() {
    let deep = format!("const A: u32 = {}1{};", "(".repeat(5000), ")".repeat(5000));
    let parsed = parse(&deep);
    assert_eq!(parsed.errors.last().map(|e| e.code), Some("E0007"));

    let long = format!("const A: u32 = 1{};", " + 1".repeat(20_000));
    let parsed = parse(&long);
    assert_eq!(parsed.errors.last().map(|e| e.code), Some("E0007"));

    let unary = format!("const A: u32 = {}1;", "- ".repeat(20_000));
    let parsed = parse(&unary);
    assert_eq!(parsed.errors.last().map(|e| e.code), Some("E0007"));

    // Found by fuzzing: each `else if` nests its `if` in the `else` before it, so a chain of
    // 20,000 is as deep as 20,000 brackets; on 61cd1ce it parsed, and `wsel check` overflowed
    // its stack walking it (SIGABRT).
    let chain = |n: usize| {
        let links = "else if a { } ".repeat(n);
        format!("kernel k() {{ task main() {{ if a {{ }} {links}}} }}")
    };
    let parsed = parse(&chain(20_000));
    assert_eq!(parsed.errors.last().map(|e| e.code), Some("E0007"));
    assert!(parse(&chain(200)).errors.is_empty());

    // Found by fuzzing: a chain of 2,000 `*`s (under the 4,096-token limit) is a tree 2,000
    // deep, and `wsel check` overflowed its stack walking it. Operators nest like brackets;
    // they are released at the end of their expression, so many short ones are fine.
    let chain = format!("const A: u32 = 2{};", " * 3".repeat(2_000));
    let parsed = parse(&chain);
    assert_eq!(parsed.errors.last().map(|e| e.code), Some("E0007"));
    assert!(
        parse(&format!("const A: u32 = 2{};", " * 3".repeat(200)))
            .errors
            .is_empty()
    );
    let statements = "if a > b + 1 { x = -y * 2; } ".repeat(1_000);
    let many = format!("kernel k() {{ task main() {{ {statements}}} }}");
    assert!(parse(&many).errors.is_empty(), "{:?}", parse(&many).errors);
    let arguments = vec!["a + 1"; 1_000].join(", ");
    let call = format!("kernel k() {{ task main() {{ f({arguments}); }} }}");
    assert!(parse(&call).errors.is_empty());

    let garbage = "@ ".repeat(1000);
    let parsed = parse(&garbage);
    assert_eq!(parsed.errors.len(), 101);
}

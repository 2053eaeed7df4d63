//! Doc comments attach to the item after them; the public lexer classifies every token
//! (comments included) for syntax highlighting.

use wsel_syntax::ast::{Item, KernelMember};
use wsel_syntax::{Number, Token, TokenKind, doc_comments, lex, parse};

#[test]
fn doc_comments_attach_to_the_next_item() {
    let src = r#"/// Not attached: imports have no doc.
import std.nn.{dense};

/// The width.
/// In elements.
const N: u32 = 4;

//// A separator, not a doc comment.
/// A kernel.
// an ordinary comment in between is fine
kernel k() {
    /// Half the width.
    const H: u32 = N / 2;
    task main() { }
}

/// A layer.
layer l(x: f32[B]) -> y: f32[B] { }

model m(x: f32[B]) -> f32[B] { return x; }
"#;
    let parsed = parse(src);
    assert!(parsed.errors.is_empty(), "{:#?}", parsed.errors);
    let docs: Vec<Option<&str>> = parsed
        .module
        .items
        .iter()
        .map(|item| match item {
            Item::Const(c) => c.doc.as_deref(),
            Item::Kernel(k) => k.doc.as_deref(),
            Item::Layer(l) => l.doc.as_deref(),
            Item::Model(m) => m.doc.as_deref(),
            _ => None,
        })
        .collect();
    assert_eq!(
        docs,
        [
            None,
            Some("The width.\nIn elements."),
            Some("A kernel."),
            Some("A layer."),
            None
        ]
    );
    let Item::Kernel(k) = &parsed.module.items[2] else {
        panic!()
    };
    let KernelMember::Const(h) = &k.members[0] else {
        panic!()
    };
    assert_eq!(h.doc.as_deref(), Some("Half the width."));
}

#[test]
fn doc_comment_side_list() {
    let src = "/// one\nconst A: u32 = 1; ///two\n";
    let docs = doc_comments(&lex(src));
    assert_eq!(
        docs,
        [(0..7, "one".to_string()), (26..32, "two".to_string())]
    );
}

#[test]
fn token_kinds_for_highlighting() {
    let src = "kernel k(n: u32) { // c\n var x = 1.5 + \"p\" @ }";
    let kinds: Vec<(TokenKind, &str)> = lex(src)
        .into_iter()
        .map(|(tok, span)| (tok.kind(), &src[span]))
        .collect();
    use TokenKind::*;
    assert_eq!(
        kinds,
        [
            (Keyword, "kernel"),
            (Identifier, "k"),
            (Operator, "("),
            (Identifier, "n"),
            (Operator, ":"),
            (Keyword, "u32"),
            (Operator, ")"),
            (Operator, "{"),
            (Comment, "// c"),
            (Keyword, "var"),
            (Identifier, "x"),
            (Operator, "="),
            (Number, "1.5"),
            (Operator, "+"),
            (String, "\"p\""),
            (Error, "@"),
            (Operator, "}"),
        ]
    );
}

#[test]
fn tokens_display_their_source_form() {
    let shown: Vec<std::string::String> = [
        Token::Semi,
        Token::DotDot,
        Token::Kernel,
        Token::Ident("w1".into()),
        Token::Number(Number::Int(42)),
        Token::Number(Number::Float(0.5)),
        Token::Str("a.npy".into()),
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(shown, [";", "..", "kernel", "w1", "42", "0.5", "\"a.npy\""]);
}

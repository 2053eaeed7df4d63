//! Doc comments: collects `///` lines and attaches each run of them to the `kernel`,
//! `layer`, `model` or `const` whose first token follows it.

use std::collections::HashMap;

use crate::ast::{Item, KernelMember, Module, Span};
use crate::lexer::Token;

/// Every doc comment of a token list, as `(span, text)`, the text without `///` and without
/// one leading space.
pub fn doc_comments(tokens: &[(Token, Span)]) -> Vec<(Span, String)> {
    tokens
        .iter()
        .filter_map(|(tok, span)| match tok {
            Token::DocComment(text) => Some((span.clone(), text.clone())),
            _ => None,
        })
        .collect()
}

/// Fills the `doc` fields of `module` from the doc comments in `tokens`. A run of `///`
/// lines (other comments may sit between them) documents the next token; it is kept only
/// if that token starts a kernel, layer, model or constant.
pub(crate) fn attach(module: &mut Module, tokens: &[(Token, Span)]) {
    let mut docs = docs_by_next_token(tokens);
    if docs.is_empty() {
        return;
    }
    let mut take = |span: &Span| docs.remove(&span.start);
    for item in &mut module.items {
        match item {
            Item::Const(c) => c.doc = take(&c.span),
            Item::Kernel(k) => {
                k.doc = take(&k.span);
                for member in &mut k.members {
                    if let KernelMember::Const(c) = member {
                        c.doc = take(&c.span);
                    }
                }
            }
            Item::Layer(l) => l.doc = take(&l.span),
            Item::Model(m) => m.doc = take(&m.span),
            Item::Import(_) | Item::Run(_) | Item::Train(_) | Item::Error(_) => {}
        }
    }
}

/// Doc text keyed by the start offset of the first non-comment token after it.
fn docs_by_next_token(tokens: &[(Token, Span)]) -> HashMap<usize, String> {
    let mut map = HashMap::new();
    let mut pending: Vec<&str> = Vec::new();
    for (tok, span) in tokens {
        match tok {
            Token::DocComment(text) => pending.push(text),
            t if t.is_trivia() => {}
            _ if pending.is_empty() => {}
            _ => {
                map.insert(span.start, pending.join("\n"));
                pending.clear();
            }
        }
    }
    map
}

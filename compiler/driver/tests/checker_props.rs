//! Property tests of the whole front end (parse, load imports, resolve, type-check): mutated
//! real programs and random token soup never panic or hang, and every diagnostic has a known
//! code and a span inside its file.

use std::path::Path;

use proptest::prelude::*;
use wsel_sema::{Database, load_program};

const SEEDS: &[&str] = &[
    include_str!("../../../examples/digits/main.wse"),
    include_str!("../../../examples/gemv/main.wse"),
    include_str!("../../../examples/residual/main.wse"),
    include_str!("../../../stdlib/nn.wse"),
];

/// Checks `text` as `prop.wse` and validates every diagnostic.
fn check_text(text: &str) {
    let mut db = Database::default();
    let file = load_program(&mut db, Path::new("prop.wse"), &mut |p: &Path| {
        if p == Path::new("prop.wse") {
            Ok(text.to_string())
        } else {
            Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "not in the test",
            ))
        }
    })
    .expect("the root file is in memory");
    let codes: Vec<&str> = wsel_sema::all_codes().into_iter().map(|(c, _)| c).collect();
    for diagnostic in wsel_sema::diagnostics(&db, file) {
        assert!(
            codes.contains(&diagnostic.code),
            "unknown code {}",
            diagnostic.code
        );
        let location = &diagnostic.primary.location;
        if location.file == Path::new("prop.wse") {
            assert!(location.span.start <= location.span.end && location.span.end <= text.len());
        }
    }
}

/// The token spans of `text` (trivia included), to mutate whole tokens.
fn token_spans(text: &str) -> Vec<std::ops::Range<usize>> {
    wsel_syntax::lexer::lex(text)
        .into_iter()
        .map(|(_, span)| span)
        .collect()
}

#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize),
    Duplicate(usize),
    Swap(usize, usize),
    Insert(usize, &'static str),
}

const INSERTIONS: &[&str] = &[
    "}", "{", ";", "(", ")", "[", "]", "..", "kernel", "task", "recv", "then", "let", "param",
    "layer", "f32[B,", "0", "-1", "1e309", "\"", "/*", "as u32", "pe.", "region", "[f32; 0]",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Delete),
        any::<usize>().prop_map(Mutation::Duplicate),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Swap(a, b)),
        (any::<usize>(), prop::sample::select(INSERTIONS))
            .prop_map(|(a, s)| Mutation::Insert(a, s)),
    ]
}

fn apply(text: &str, mutation: &Mutation) -> String {
    let spans = token_spans(text);
    if spans.is_empty() {
        return text.to_string();
    }
    let pick = |i: usize| spans[i % spans.len()].clone();
    match mutation {
        Mutation::Delete(i) => {
            let s = pick(*i);
            format!("{}{}", &text[..s.start], &text[s.end..])
        }
        Mutation::Duplicate(i) => {
            let s = pick(*i);
            format!("{} {}", &text[..s.end], &text[s.start..])
        }
        Mutation::Swap(a, b) => {
            let (mut x, mut y) = (pick(*a), pick(*b));
            if x.start > y.start {
                std::mem::swap(&mut x, &mut y);
            }
            if x.end > y.start {
                return text.to_string();
            }
            format!(
                "{}{}{}{}{}",
                &text[..x.start],
                &text[y.clone()],
                &text[x.end..y.start],
                &text[x.clone()],
                &text[y.end..]
            )
        }
        Mutation::Insert(i, s) => {
            let at = pick(*i).start;
            format!("{} {s} {}", &text[..at], &text[at..])
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn mutated_programs_never_panic(
        seed in prop::sample::select(SEEDS),
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        let mut text = seed.to_string();
        for m in &mutations {
            text = apply(&text, m);
        }
        check_text(&text);
    }

    #[test]
    fn token_soup_never_panics(words in prop::collection::vec(prop::sample::select(INSERTIONS), 0..60)) {
        check_text(&words.join(" "));
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,300}") {
        check_text(&text);
    }
}

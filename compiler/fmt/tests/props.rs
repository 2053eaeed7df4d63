//! Property tests of the formatter over the examples (the slide for switched ports and
//! `nop * k`) and the stdlib with their whitespace scrambled (and with tokens deleted):
//! formatting keeps the token sequence, is idempotent, and leaves a file with syntax errors
//! alone.

use proptest::prelude::*;
use wsel_syntax::Token;

const SEEDS: &[&str] = &[
    include_str!("../../../examples/digits/main.wse"),
    include_str!("../../../examples/gemv/main.wse"),
    include_str!("../../../examples/residual/main.wse"),
    include_str!("../../../examples/heat/main.wse"),
    include_str!("../../../examples/allreduce/main.wse"),
    include_str!("../../../examples/fidelity/synchronous_slide.wse"),
    include_str!("../../../stdlib/nn.wse"),
    include_str!("../../../stdlib/collectives.wse"),
    include_str!("../../../stdlib/stencil.wse"),
];

/// The tokens of `text` as comparable values (line comments without trailing whitespace).
fn tokens(text: &str) -> Vec<(Token, String)> {
    wsel_syntax::lex(text)
        .into_iter()
        .map(|(t, span)| {
            let source = text.get(span).unwrap_or("").trim_end().to_string();
            let t = match t {
                Token::DocComment(d) => Token::DocComment(d.trim_end().to_string()),
                other => other,
            };
            (t, source)
        })
        .collect()
}

/// A small deterministic generator for the choices of one case.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// `text` with the whitespace between its tokens replaced at random (never joining two
/// tokens, never putting code after a line comment on its line).
fn scramble(text: &str, seed: u64) -> String {
    const GAPS: &[&str] = &[" ", "  ", "\n", "\n\n\n", "\t ", " \n    ", "\r\n"];
    let mut rng = Rng(seed | 1);
    let mut out = String::new();
    let mut previous_end = 0;
    let mut after_line_comment = false;
    for (token, span) in wsel_syntax::lex(text) {
        let original = &text[previous_end..span.start];
        let choice = rng.next() % 10;
        let gap = if previous_end == 0 || choice > GAPS.len() as u64 {
            original.to_string()
        } else if choice == GAPS.len() as u64 {
            // Remove the whitespace where that cannot join tokens.
            if original.is_empty() {
                String::new()
            } else {
                " ".to_string()
            }
        } else {
            GAPS[choice as usize].to_string()
        };
        if after_line_comment && !gap.contains('\n') {
            out.push('\n');
        }
        out.push_str(&gap);
        out.push_str(&text[span.clone()]);
        after_line_comment = matches!(token, Token::Comment | Token::DocComment(_));
        previous_end = span.end;
    }
    out.push_str(&text[previous_end..]);
    out
}

fn check_formatting(text: &str) {
    match wsel_fmt::format(text) {
        Ok(once) => {
            assert_eq!(tokens(&once), tokens(text), "the token sequence changed");
            let twice = wsel_fmt::format(&once).unwrap_or_else(|e| panic!("{e}\n{once}"));
            assert_eq!(twice, once, "formatting is not idempotent");
        }
        Err(error) => assert!(!error.errors.is_empty()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn scrambled_whitespace_formats_to_the_same_tokens(
        file in 0..SEEDS.len(),
        seed in any::<u64>(),
    ) {
        let text = scramble(SEEDS[file], seed);
        prop_assume!(tokens(&text) == tokens(SEEDS[file]));
        prop_assert!(wsel_fmt::format(&text).is_ok());
        check_formatting(&text);
    }

    #[test]
    fn deleting_a_token_never_breaks_the_formatter(
        file in 0..SEEDS.len(),
        pick in any::<prop::sample::Index>(),
        seed in any::<u64>(),
    ) {
        let source = scramble(SEEDS[file], seed);
        let all = wsel_syntax::lex(&source);
        let (_, span) = &all[pick.index(all.len())];
        let mut text = source.clone();
        text.replace_range(span.clone(), " ");
        check_formatting(&text);
    }
}

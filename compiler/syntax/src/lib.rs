//! The .wse syntax: lexer, grammar and AST, and `parse`, which turns a source text into a
//! module plus every syntax error it can find. No salsa, no IO.

pub mod ast;
mod docs;
mod error;
pub mod lexer;
mod support;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::unwrap_used, unused)]
    grammar
);

pub use docs::doc_comments;
pub use error::{E0001, E0002, E0003, E0004, E0005, E0006, E0007, SyntaxError, codes};
pub use lexer::{LexErrorKind, Number, Token, TokenKind, lex};

use ast::Span;
use error::{Cut, Feed, MAX_ERRORS, MAX_NESTING, MAX_RUN, Never, Sink};

/// The result of parsing one file: the module (with `Error` nodes where the source was
/// broken) and every syntax error, in source order.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub module: ast::Module,
    pub errors: Vec<SyntaxError>,
}

/// Parses a `.wse` source. Never panics and always terminates; after a syntax error the
/// parser skips to the next statement, member or item, so one call reports every error it
/// can (at most about 100).
pub fn parse(src: &str) -> Parsed {
    let tokens = lex(src);
    let sink = Sink::default();
    let feed = TokenFeed::new(&tokens, &sink);
    let info = Feed {
        eof: feed.eof,
        missing_braces: feed.missing_braces,
    };
    let (mut module, fatal) = match grammar::ModuleParser::new().parse(&sink, feed) {
        Ok(module) => (module, None),
        Err(e) => (ast::Module::default(), Some(e)),
    };
    docs::attach(&mut module, &tokens);
    let errors = error::collect(src, &tokens, sink, fatal, &info);
    Parsed { module, errors }
}

/// The tokens the grammar sees: no trivia, one synthetic zero-width `}` at the end for each
/// `{` still open (so the items before a truncated end keep their shape), and an early end
/// once too many errors have been recorded or the input nests or runs on too far.
struct TokenFeed<'a> {
    tokens: std::slice::Iter<'a, (Token, Span)>,
    sink: &'a Sink,
    eof: usize,
    missing_braces: usize,
    synthetic_left: usize,
    /// Open `(`, `[` and `{`.
    nesting: usize,
    /// Tokens since the last `;`, `{` or `}`.
    run: usize,
}

impl<'a> TokenFeed<'a> {
    fn new(tokens: &'a [(Token, Span)], sink: &'a Sink) -> Self {
        let mut depth: usize = 0;
        let mut eof = 0;
        for (tok, span) in tokens.iter().filter(|(t, _)| !t.is_trivia()) {
            eof = span.end;
            match tok {
                Token::LBrace => depth += 1,
                Token::RBrace => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        TokenFeed {
            tokens: tokens.iter(),
            sink,
            eof,
            missing_braces: depth,
            synthetic_left: depth,
            nesting: 0,
            run: 0,
        }
    }
}

impl Iterator for TokenFeed<'_> {
    type Item = Result<(usize, Token, usize), Never>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.sink.cut.get().is_some() {
            return None;
        }
        for (tok, span) in self.tokens.by_ref() {
            if tok.is_trivia() {
                continue;
            }
            match tok {
                Token::LParen | Token::LBracket | Token::LBrace => self.nesting += 1,
                Token::RParen | Token::RBracket | Token::RBrace => {
                    self.nesting = self.nesting.saturating_sub(1)
                }
                _ => {}
            }
            self.run = match tok {
                Token::Semi | Token::LBrace | Token::RBrace => 0,
                _ => self.run + 1,
            };
            let cut = if self.sink.count() >= MAX_ERRORS {
                Some(Cut::Errors)
            } else if self.nesting > MAX_NESTING {
                Some(Cut::Nesting)
            } else if self.run > MAX_RUN {
                Some(Cut::Length)
            } else {
                None
            };
            if let Some(why) = cut {
                self.sink.cut.set(Some((span.start, why)));
                return None;
            }
            return Some(Ok((span.start, tok.clone(), span.end)));
        }
        if self.synthetic_left > 0 {
            self.synthetic_left -= 1;
            return Some(Ok((self.eof, Token::RBrace, self.eof)));
        }
        None
    }
}

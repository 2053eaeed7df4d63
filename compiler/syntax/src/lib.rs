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
pub use lexer::{KEYWORDS, LexErrorKind, Number, Token, TokenKind, lex};

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
    let mut tokens = lex(src);
    let sink = Sink::default();
    let feed = TokenFeed::new(src, &mut tokens, &sink);
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
///
/// A broken string literal (reported from the token list as E0004) reaches the grammar as a
/// string, so the declaration around it survives: with an unknown escape it keeps the escape
/// as written; unterminated, it ends at the end of its line, and a `;` it swallowed there is
/// given back as a `;` token.
struct TokenFeed<'a> {
    src: &'a str,
    /// The tokens left to give; an identifier's or string's value is moved out to the grammar
    /// (what reads the list after the parse needs only the tokens' kinds and spans).
    tokens: std::slice::IterMut<'a, (Token, Span)>,
    /// A token to give before reading on (the `;` an unterminated string swallowed).
    pending: Option<(usize, Token, usize)>,
    sink: &'a Sink,
    eof: usize,
    missing_braces: usize,
    synthetic_left: usize,
    /// Open `(`, `[` and `{`, `else if`s in the open blocks (each nests its `if` in the `else`
    /// before it), and operators in the open expressions (each nests the expression before it).
    nesting: usize,
    /// Per open `{`: the `else if`s directly in it, released with its `}`.
    else_ifs: Vec<usize>,
    /// Per open bracket, and one for the top level: the operators since its last `,`, `;`,
    /// `=`, `{` or `}`, released with them.
    operators: Vec<usize>,
    /// Whether the last token was `else`.
    after_else: bool,
    /// Tokens since the last `;`, `{` or `}`.
    run: usize,
}

impl<'a> TokenFeed<'a> {
    fn new(src: &'a str, tokens: &'a mut [(Token, Span)], sink: &'a Sink) -> Self {
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
            src,
            tokens: tokens.iter_mut(),
            pending: None,
            sink,
            eof,
            missing_braces: depth,
            synthetic_left: depth,
            nesting: 0,
            else_ifs: Vec::new(),
            operators: vec![0],
            after_else: false,
            run: 0,
        }
    }
}

impl TokenFeed<'_> {
    fn track_nesting(&mut self, tok: &Token) {
        match tok {
            Token::LParen | Token::LBracket => self.open(),
            Token::LBrace => {
                // A block ends the expression before it (an `if`'s condition) and its own.
                self.end_expression();
                self.open();
                self.else_ifs.push(0);
            }
            Token::RParen | Token::RBracket => self.close(),
            Token::RBrace => {
                self.close();
                self.end_expression();
                let chain = self.else_ifs.pop().unwrap_or(0);
                self.nesting = self.nesting.saturating_sub(chain);
            }
            Token::If if self.after_else => {
                self.nesting += 1;
                if let Some(chain) = self.else_ifs.last_mut() {
                    *chain += 1;
                }
            }
            Token::Comma | Token::Semi | Token::Assign => self.end_expression(),
            tok if is_operator(tok) => {
                self.nesting += 1;
                if let Some(count) = self.operators.last_mut() {
                    *count += 1;
                }
            }
            _ => {}
        }
        self.after_else = matches!(tok, Token::Else);
    }

    fn open(&mut self) {
        self.nesting += 1;
        self.operators.push(0);
    }

    fn close(&mut self) {
        self.end_expression();
        if self.operators.len() > 1 {
            self.operators.pop();
        }
        self.nesting = self.nesting.saturating_sub(1);
    }

    /// The operators of the expression that ends here no longer nest what follows.
    fn end_expression(&mut self) {
        if let Some(count) = self.operators.last_mut() {
            self.nesting = self.nesting.saturating_sub(*count);
            *count = 0;
        }
    }
}

/// Whether `tok` is an operator, which nests the expression before it (a chain of `n` binary
/// operators, or `n` unary ones, is a tree `n` deep). Conservative: `<` and `>` of a type count
/// too.
fn is_operator(tok: &Token) -> bool {
    matches!(
        tok,
        Token::Plus
            | Token::Minus
            | Token::Star
            | Token::Slash
            | Token::Percent
            | Token::EqEq
            | Token::NotEq
            | Token::Lt
            | Token::Gt
            | Token::Le
            | Token::Ge
            | Token::AndAnd
            | Token::OrOr
            | Token::Bang
            | Token::As
            | Token::DotDot
    )
}

impl Iterator for TokenFeed<'_> {
    type Item = Result<(usize, Token, usize), Never>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.sink.cut.get().is_some() {
            return None;
        }
        if let Some(token) = self.pending.take() {
            self.run = 0;
            return Some(Ok(token));
        }
        for (tok, span) in self.tokens.by_ref() {
            if tok.is_trivia() {
                continue;
            }
            self.track_nesting(tok);
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
            let text = self.src.get(span.clone()).unwrap_or("");
            let tok = match tok {
                Token::Error(LexErrorKind::UnknownEscape) => {
                    let body = text.strip_prefix('"').unwrap_or(text);
                    Token::Str(lenient_string(body.strip_suffix('"').unwrap_or(body)))
                }
                Token::Error(LexErrorKind::UnterminatedString) => {
                    let body = text.trim_end();
                    let body = body.strip_prefix('"').unwrap_or(body);
                    match body.strip_suffix(';') {
                        Some(before) => {
                            let at = span.start + 1 + before.len();
                            self.pending = Some((at, Token::Semi, at + 1));
                            Token::Str(lenient_string(before))
                        }
                        None => Token::Str(lenient_string(body)),
                    }
                }
                // `größe`: reported as E0001; an identifier to the grammar.
                Token::Error(LexErrorKind::InvalidChar) if lexer::is_non_ascii_word(text) => {
                    Token::Ident(text.to_string())
                }
                Token::Ident(name) => Token::Ident(std::mem::take(name)),
                Token::Str(value) => Token::Str(std::mem::take(value)),
                other => other.clone(),
            };
            return Some(Ok((span.start, tok, span.end)));
        }
        if self.synthetic_left > 0 {
            self.synthetic_left -= 1;
            return Some(Ok((self.eof, Token::RBrace, self.eof)));
        }
        None
    }
}

/// The value of the text between the quotes of a broken string literal: known escapes
/// decoded, unknown ones kept as written.
fn lenient_string(body: &str) -> String {
    let mut value = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            value.push(c);
            continue;
        }
        match chars.next() {
            Some('"') => value.push('"'),
            Some('\\') => value.push('\\'),
            Some('n') => value.push('\n'),
            Some('t') => value.push('\t'),
            Some(other) => {
                value.push('\\');
                value.push(other);
            }
            None => value.push('\\'),
        }
    }
    value
}

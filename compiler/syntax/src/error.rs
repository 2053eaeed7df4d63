//! Syntax errors: the stable codes `E0001`–`E0007`, the `SyntaxError` value, and the
//! translation of lexical errors and LALRPOP's recovered `ParseError`s into user terms.

use std::cell::{Cell, RefCell};

use lalrpop_util::{ErrorRecovery, ParseError};

use crate::ast::{Ident, Span};
use crate::lexer::{LexErrorKind, Token};

/// An invalid character, or a run of them: a character that starts no token of the
/// language, such as `@`, `#` or a lone `&`.
pub const E0001: &str = "E0001";
/// An unexpected token: the parser expected one of a few tokens and found another, e.g.
/// "expected `;`, found `}`". Also fires for a contextual word in the wrong place, such as
/// `bind w to arr w;` (`array` or `port` expected).
pub const E0002: &str = "E0002";
/// The file ended in the middle of an item, e.g. "unexpected end of file: a `}` is missing".
pub const E0003: &str = "E0003";
/// A string literal without its closing `"` on the same line, or with an unknown escape
/// (only `\"`, `\\`, `\n`, `\t` exist).
pub const E0004: &str = "E0004";
/// A `/*` block comment without its closing `*/`.
pub const E0005: &str = "E0005";
/// A malformed number literal such as `1e`, `0x`, `12ab`, or an integer literal larger than
/// 2^64 - 1.
pub const E0006: &str = "E0006";
/// Another structural syntax error: a layer implementation with two `run`s, a token after
/// the end of the module, or too many syntax errors (parsing stops after a limit).
pub const E0007: &str = "E0007";

/// Every syntax error code with a one-line description, for `docs/diagnostics.md`.
pub fn codes() -> &'static [(&'static str, &'static str)] {
    &[
        (E0001, "invalid character: a character that starts no token"),
        (E0002, "unexpected token: something else was expected here"),
        (E0003, "unexpected end of file: an item is not finished"),
        (
            E0004,
            "unterminated string literal, or an unknown escape in one",
        ),
        (E0005, "unterminated block comment"),
        (
            E0006,
            "malformed number literal, or an integer too large for 64 bits",
        ),
        (
            E0007,
            "other structural syntax error (two `run`s in one implementation, too many errors)",
        ),
    ]
}

/// One syntax error. Spans are byte offsets into the source.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SyntaxError {
    /// A stable code, `E0001`…`E0007`.
    pub code: &'static str,
    /// The headline, e.g. "expected `;`, found `}`".
    pub message: String,
    /// Where the error is: the offending token, or the end of the file.
    pub span: Span,
    /// A short text for the label under the span.
    pub label: String,
    /// What the parser would have accepted here, in user terms (`;`, `identifier`, …);
    /// empty for lexical errors.
    pub expected: Vec<String>,
    /// A suggested fix, when one is obvious (`help: ...`).
    pub help: Option<String>,
}

impl SyntaxError {
    fn new(code: &'static str, message: String, span: Span, label: &str) -> Self {
        SyntaxError {
            code,
            message,
            span,
            label: label.to_string(),
            expected: Vec::new(),
            help: None,
        }
    }

    /// E0002 for a contextual word (`multicast`, `array`, `input`, …) that is not the one
    /// the construct needs.
    pub(crate) fn unexpected_word(word: &Ident, expected: &[&str], label: &str) -> Self {
        let expected: Vec<String> = expected.iter().map(|w| format!("`{w}`")).collect();
        SyntaxError {
            code: E0002,
            message: format!(
                "expected {}, found identifier `{}`",
                join_or(&expected),
                word.name
            ),
            span: word.span.clone(),
            label: label.to_string(),
            expected,
            help: None,
        }
    }

    /// E0002 for a token the grammar accepts only to explain it: `found` at `span` where one
    /// of `expected` belongs, with a label and a suggested fix.
    pub(crate) fn misplaced(
        span: Span,
        expected: &[&str],
        found: &str,
        label: &str,
        help: &str,
    ) -> Self {
        let expected: Vec<String> = expected.iter().map(|w| format!("`{w}`")).collect();
        SyntaxError {
            code: E0002,
            message: format!("expected {}, found {found}", join_or(&expected)),
            span,
            label: label.to_string(),
            expected,
            help: Some(help.to_string()),
        }
    }

    /// This error with a suggested fix.
    pub(crate) fn with_help(mut self, help: &str) -> Self {
        self.help = Some(help.to_string());
        self
    }

    /// E0002 with the given message (for a token the grammar accepts only to explain it).
    pub(crate) fn unexpected(message: &str, span: Span, label: &str) -> Self {
        SyntaxError::new(E0002, message.to_string(), span, label)
    }

    /// E0007 with the given message.
    pub(crate) fn structural(message: &str, span: Span, label: &str) -> Self {
        SyntaxError::new(E0007, message.to_string(), span, label)
    }
}

/// The parser's error type for lexer failures: there are none, lexical errors travel as
/// `Token::Error` tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Never {}

pub(crate) type Recovery = ErrorRecovery<usize, Token, Never>;

/// Where the grammar's actions put the errors they recover from.
#[derive(Default)]
pub(crate) struct Sink {
    recovered: RefCell<Vec<Recovery>>,
    custom: RefCell<Vec<SyntaxError>>,
    /// Set when the token feed stopped early, with where and why.
    pub(crate) cut: Cell<Option<(usize, Cut)>>,
}

impl Sink {
    pub(crate) fn recovered(&self, e: Recovery) {
        self.recovered.borrow_mut().push(e);
    }

    pub(crate) fn custom(&self, e: SyntaxError) {
        self.custom.borrow_mut().push(e);
    }

    pub(crate) fn count(&self) -> usize {
        self.recovered.borrow().len() + self.custom.borrow().len()
    }
}

/// Why the token feed stopped before the end of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// More than [`MAX_ERRORS`] syntax errors.
    Errors,
    /// Brackets nested more than [`MAX_NESTING`] deep.
    Nesting,
    /// More than [`MAX_RUN`] tokens without a `;`, `{` or `}`.
    Length,
}

/// Stop reporting after this many errors.
pub(crate) const MAX_ERRORS: usize = 100;
/// The deepest nesting of `(`, `[` and `{` the parser accepts, counting each `else if` of a
/// chain as a level (its `if` sits in the `else` before it) and each operator of an expression
/// (it nests the expression before it): the AST is recursive, and later passes walk it
/// recursively.
pub(crate) const MAX_NESTING: usize = 256;
/// The most tokens between two `;`, `{` or `}`: bounds the length of a statement.
pub(crate) const MAX_RUN: usize = 4096;

/// Facts about the token feed that the error report needs.
pub(crate) struct Feed {
    /// The end of the last real token: where "end of file" errors point.
    pub(crate) eof: usize,
    /// How many `{` were still open at the end of the file (closed by synthetic `}`).
    pub(crate) missing_braces: usize,
}

/// All errors of one parse, in source order: lexical errors, recovered parse errors, the
/// error that ended the parse (if any), and the missing-brace report.
pub(crate) fn collect(
    src: &str,
    tokens: &[(Token, Span)],
    sink: Sink,
    fatal: Option<ParseError<usize, Token, Never>>,
    feed: &Feed,
) -> Vec<SyntaxError> {
    // A non-ASCII identifier is reported where it first appears, not at every use.
    let mut words_seen: Vec<&str> = Vec::new();
    let mut errors: Vec<SyntaxError> = tokens
        .iter()
        .filter_map(|(tok, span)| match tok {
            Token::Error(LexErrorKind::InvalidChar)
                if src
                    .get(span.clone())
                    .is_some_and(crate::lexer::is_non_ascii_word) =>
            {
                let word = src.get(span.clone()).unwrap_or("");
                if words_seen.contains(&word) {
                    return None;
                }
                words_seen.push(word);
                Some(lex_error(src, LexErrorKind::InvalidChar, span.clone()))
            }
            Token::Error(kind) => Some(lex_error(src, *kind, span.clone())),
            _ => None,
        })
        .collect();
    let has_open_comment = errors.iter().any(|e| e.code == E0005);
    // An unterminated string swallows the rest of its line (often a `;`): the error at the
    // next token is a consequence, not news.
    let after_open_string = tokens_after_unterminated_strings(tokens);
    let cut = sink.cut.get();
    let cut_at = cut.map(|(at, _)| at);
    let mut parse_errors: Vec<ParseError<usize, Token, Never>> = sink
        .recovered
        .into_inner()
        .into_iter()
        .map(|r| r.error)
        .collect();
    parse_errors.extend(fatal);
    for e in parse_errors {
        let Some(err) = parse_error(e, feed) else {
            continue;
        };
        // Past the end (synthetic braces, or after the cut): reported once below.
        let at_end = err.span.start >= feed.eof && err.span.is_empty();
        if at_end && (feed.missing_braces > 0 || has_open_comment || cut_at.is_some()) {
            continue;
        }
        if after_open_string.contains(&err.span.start)
            || cut_at.is_some_and(|cut| err.span.start >= cut)
        {
            continue;
        }
        errors.push(missing_semicolon_at_line_end(src, tokens, err));
    }
    errors.extend(sink.custom.into_inner());
    if feed.missing_braces > 0 && !has_open_comment && cut_at.is_none() {
        let n = feed.missing_braces;
        let what = if n == 1 {
            "a `}` is missing".to_string()
        } else {
            format!("{n} `}}` are missing")
        };
        errors.push(SyntaxError {
            code: E0003,
            message: format!("unexpected end of file: {what}"),
            span: feed.eof..feed.eof,
            label: "the file ends here".to_string(),
            expected: vec!["`}`".to_string()],
            help: None,
        });
    }
    errors.sort_by_key(|e| (e.span.start, e.span.end));
    errors.dedup_by(|b, a| a.span == b.span);
    let too_many = errors.len() > MAX_ERRORS;
    errors.truncate(MAX_ERRORS);
    let stop = match cut {
        Some((at, why)) => Some((at, why)),
        None if too_many => Some((errors.last().map_or(0, |e| e.span.end), Cut::Errors)),
        None => None,
    };
    if let Some((at, why)) = stop {
        let message = match why {
            Cut::Errors => {
                format!("too many syntax errors; stopped after {MAX_ERRORS}")
            }
            Cut::Nesting => {
                format!(
                    "brackets, operators or `else if`s nested more than {MAX_NESTING} deep; stopped parsing here"
                )
            }
            Cut::Length => format!(
                "more than {MAX_RUN} tokens without a `;`, `{{` or `}}`; stopped parsing here"
            ),
        };
        errors.push(SyntaxError::structural(
            &message,
            at..at,
            "parsing stopped here",
        ));
    }
    errors
}

/// A `;` that is missing at the end of a line is reported right after the line's last token
/// ("expected `;` here"), not at the first token of the next line.
fn missing_semicolon_at_line_end(
    src: &str,
    tokens: &[(Token, Span)],
    mut err: SyntaxError,
) -> SyntaxError {
    if err.code != E0002 || !err.expected.iter().any(|e| e == "`;`") {
        return err;
    }
    let previous_end = tokens
        .iter()
        .filter(|(t, span)| !t.is_trivia() && span.end <= err.span.start)
        .map(|(_, span)| span.end)
        .next_back();
    if let Some(end) = previous_end
        && src
            .get(end..err.span.start)
            .is_some_and(|gap| gap.contains('\n'))
    {
        err.span = end..end;
        err.label = "expected `;` here".to_string();
    }
    err
}

/// The start of the first real token after each unterminated string literal.
fn tokens_after_unterminated_strings(tokens: &[(Token, Span)]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut pending = false;
    for (tok, span) in tokens.iter().filter(|(t, _)| !t.is_trivia()) {
        if pending {
            starts.push(span.start);
        }
        pending = *tok == Token::Error(LexErrorKind::UnterminatedString);
    }
    starts
}

fn lex_error(src: &str, kind: LexErrorKind, span: Span) -> SyntaxError {
    let text = src.get(span.clone()).unwrap_or("");
    match kind {
        LexErrorKind::InvalidChar if crate::lexer::is_non_ascii_word(text) => {
            let others: String = text.chars().filter(|c| !c.is_ascii()).collect();
            SyntaxError::new(
                E0001,
                format!("identifiers must be ASCII, but `{text}` has `{others}`"),
                span,
                "not an ASCII identifier",
            )
            .with_help("identifiers use the letters `A`–`Z`, `a`–`z`, digits and `_`")
        }
        LexErrorKind::InvalidChar => {
            let shown: String = text.escape_debug().collect();
            let (noun, label) = if text.chars().count() == 1 {
                ("character", "this character starts no token")
            } else {
                ("characters", "these characters start no token")
            };
            SyntaxError::new(E0001, format!("invalid {noun} `{shown}`"), span, label)
        }
        LexErrorKind::UnterminatedString => SyntaxError::new(
            E0004,
            "unterminated string literal".to_string(),
            span,
            "this string has no closing `\"` on its line",
        ),
        LexErrorKind::UnknownEscape => {
            let (offset, c) = unknown_escape(text).unwrap_or((0, '\\'));
            let start = span.start + offset;
            SyntaxError::new(
                E0004,
                if c.is_control() || c.is_whitespace() {
                    format!("unknown escape in string literal: `\\` followed by {c:?}")
                } else {
                    format!("unknown escape `\\{c}` in string literal")
                },
                start..(start + 1 + c.len_utf8()).min(span.end),
                "the escapes are `\\\"`, `\\\\`, `\\n` and `\\t`",
            )
            .with_help("write `\\\\` for a backslash; paths may also use `/`")
        }
        LexErrorKind::UnterminatedBlockComment => SyntaxError::new(
            E0005,
            "unterminated block comment".to_string(),
            span.start..(span.start + 2).min(span.end),
            "this comment has no closing `*/`",
        ),
        LexErrorKind::MalformedNumber => SyntaxError::new(
            E0006,
            format!("malformed number literal `{text}`"),
            span,
            "not a valid integer or float literal",
        ),
        LexErrorKind::IntegerTooLarge => SyntaxError::new(
            E0006,
            format!("integer literal `{text}` is too large"),
            span,
            "integers must fit in 64 bits",
        ),
    }
}

/// The byte offset of the first unknown `\x` escape in a string literal, and its `x`.
fn unknown_escape(literal: &str) -> Option<(usize, char)> {
    let mut chars = literal.char_indices();
    while let Some((i, c)) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some((_, '"' | '\\' | 'n' | 't')) => {}
                Some((_, other)) => return Some((i, other)),
                None => return None,
            }
        }
    }
    None
}

/// A parse error in user terms; `None` for errors already reported by the lexer.
fn parse_error(e: ParseError<usize, Token, Never>, feed: &Feed) -> Option<SyntaxError> {
    match e {
        ParseError::UnrecognizedToken {
            token: (_, Token::Error(_), _),
            ..
        }
        | ParseError::InvalidToken { .. } => None,
        ParseError::UnrecognizedToken {
            token: (start, token, end),
            expected,
        } => {
            let expected = humanize(&expected);
            let found = token.describe();
            Some(SyntaxError {
                code: E0002,
                message: format!("expected {}, found {found}", summarize(&expected)),
                span: start..end,
                label: format!("unexpected {found}"),
                expected,
                help: None,
            })
        }
        ParseError::UnrecognizedEof { location, expected } => {
            let expected = humanize(&expected);
            let what = if expected.iter().any(|e| e == "`}`") {
                "a `}` is missing".to_string()
            } else {
                format!("expected {}", summarize(&expected))
            };
            let at = location.min(feed.eof);
            Some(SyntaxError {
                code: E0003,
                message: format!("unexpected end of file: {what}"),
                span: at..at,
                label: "the file ends here".to_string(),
                expected,
                help: None,
            })
        }
        ParseError::ExtraToken {
            token: (start, token, end),
        } => Some(SyntaxError::structural(
            &format!(
                "unexpected {} after the end of the module",
                token.describe()
            ),
            start..end,
            "extra token",
        )),
        ParseError::User { error } => match error {},
    }
}

/// LALRPOP's terminal names (`"\";\""`, `"\"identifier\""`) in user terms.
fn humanize(expected: &[String]) -> Vec<String> {
    expected
        .iter()
        .map(|raw| raw.trim_matches('"'))
        .filter(|name| *name != "invalid token")
        .map(|name| match name {
            "identifier" => "identifier".to_string(),
            "number" => "number".to_string(),
            "string" => "string literal".to_string(),
            other => format!("`{other}`"),
        })
        .collect()
}

const EXPR_START: &[&str] = &[
    "identifier",
    "number",
    "string literal",
    "`true`",
    "`false`",
    "`(`",
    "`-`",
    "`!`",
];
const OPERATORS: &[&str] = &[
    "`||`", "`&&`", "`==`", "`!=`", "`<`", "`<=`", "`>`", "`>=`", "`+`", "`-`", "`*`", "`/`",
    "`%`", "`as`", "`[`", "`.`",
];
const STATEMENTS: &[&str] = &[
    "`let`",
    "`var`",
    "`for`",
    "`while`",
    "`if`",
    "`recv`",
    "`send`",
    "`activate`",
    "`control`",
    "`return`",
];
const ITEMS: &[&str] = &[
    "`import`", "`const`", "`kernel`", "`layer`", "`model`", "`run`", "`train`",
];
const TYPES: &[&str] = &[
    "`f32`", "`f16`", "`i32`", "`u32`", "`bool`", "`stream`", "`[`",
];

/// A readable "expected" phrase: groups such as "an expression" or "an operator" replace
/// long runs of tokens, and the list is cut after a few entries.
fn summarize(expected: &[String]) -> String {
    let has = |name: &str| expected.iter().any(|e| e == name);
    let count = |group: &[&str]| group.iter().filter(|g| has(g)).count();
    let mut covered: Vec<&str> = Vec::new();
    let mut groups: Vec<String> = Vec::new();
    if has("`let`") && has("`recv`") && has("`activate`") {
        groups.push("a statement".to_string());
        covered.extend(STATEMENTS);
        covered.extend(EXPR_START);
    } else if has("identifier") && has("number") {
        groups.push("an expression".to_string());
        covered.extend(EXPR_START);
    }
    if count(OPERATORS) >= 4 {
        groups.push("an operator".to_string());
        covered.extend(OPERATORS);
    }
    if has("`kernel`") && has("`layer`") && has("`model`") {
        groups.push("an item".to_string());
        covered.extend(ITEMS);
    }
    if count(&TYPES[..5]) == 5 {
        groups.push("a type".to_string());
        covered.extend(TYPES);
    }
    let mut parts: Vec<String> = expected
        .iter()
        .filter(|e| !covered.contains(&e.as_str()))
        .cloned()
        .collect();
    parts.extend(groups);
    const LIMIT: usize = 6;
    if parts.len() > LIMIT {
        parts.truncate(LIMIT);
        parts.push("…".to_string());
    }
    join_or(&parts)
}

fn join_or(parts: &[String]) -> String {
    match parts {
        [] => "something else".to_string(),
        [one] => one.clone(),
        [a, b] => format!("{a} or {b}"),
        [init @ .., last] => format!("one of {}, or {last}", init.join(", ")),
    }
}

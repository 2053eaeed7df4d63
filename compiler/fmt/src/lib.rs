//! The `.wse` formatter behind `wsel fmt` and the language server's formatting: token-based and
//! comment-preserving. It re-lays out the whitespace *between* the tokens of
//! `wsel_syntax::lex` and never adds, drops or changes a token (comments included; only the
//! trailing whitespace inside a line comment is trimmed).
//!
//! The layout rules, all decided from the token sequence and the original line breaks, so
//! that formatting is idempotent:
//!
//! - indentation: four spaces per open block `{`; a line that continues a statement gets four
//!   more, except a line that starts with a closing `)`, `]` or import `}`;
//! - line breaks: after a block's `{`, before its `}` (an empty block stays `{}`), after a `;`
//!   that ends a statement, after a `}` unless `else`, `;`, `,` or `)` follows; a block's `{`,
//!   a `;` and a `,` always stay on the line before them; every other line break of the
//!   original is kept, and runs of blank lines become one blank line (none right after `{`
//!   or right before `}`);
//! - spaces: one around binary operators, `=`, `->`, `as` and keywords; none inside `()`, `[]`,
//!   `stream<..>` and import braces, before `,` `;` `:` and around `.`; `..` keeps its spaces
//!   if it had any; calls and indexing `f(x)`, `a[i]`, `f32[B, 64]` have no space before the
//!   bracket; unary `-` and `!` stick to their operand;
//! - comments: a comment that followed code on the same line stays there, at its original
//!   column when that is still right of the code (so aligned comments stay aligned);
//! - alignment: consecutive port declarations (`in  xs:   stream<f32> ...`) are aligned on
//!   their names and types.
//!
//! A file with syntax errors is not formatted: [`format`] returns the errors and the caller
//! keeps its text unchanged.

use std::fmt;

use wsel_syntax::{SyntaxError, Token};

/// Why a text was not formatted: it has syntax errors (the text is left as it is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// The syntax errors of the text, in source order (never empty).
    pub errors: Vec<SyntaxError>,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.errors.len();
        write!(
            f,
            "not formatted: the file has {count} syntax error{}",
            if count == 1 { "" } else { "s" }
        )?;
        if let Some(first) = self.errors.first() {
            write!(f, " (first: {} {})", first.code, first.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for FormatError {}

/// Formats a `.wse` source. Returns the formatted text (ending in one newline, or empty for
/// a file with no tokens), or the syntax errors when the text does not parse.
pub fn format(text: &str) -> Result<String, FormatError> {
    let parsed = wsel_syntax::parse(text);
    if !parsed.errors.is_empty() {
        return Err(FormatError {
            errors: parsed.errors,
        });
    }
    let tokens = source_tokens(text);
    let mut lines = layout(&tokens);
    align_ports(&tokens, &mut lines);
    Ok(render(&tokens, &lines))
}

/// Whether `text` is already formatted (false when it has syntax errors).
pub fn is_formatted(text: &str) -> bool {
    format(text).is_ok_and(|formatted| formatted == text)
}

// ---- tokens with their surroundings ----

/// A token of the source with what the layout needs to know about the whitespace before it.
struct SourceToken<'a> {
    token: Token,
    /// The token's source text (line comments without trailing whitespace).
    text: &'a str,
    /// Line breaks between the previous token and this one.
    newlines_before: usize,
    /// Whether any whitespace separates this token from the previous one.
    space_before: bool,
    /// The character column where the token starts in the original text.
    column: usize,
}

fn source_tokens(text: &str) -> Vec<SourceToken<'_>> {
    let mut out = Vec::new();
    let mut previous_end = 0;
    for (token, span) in wsel_syntax::lex(text) {
        let gap = text.get(previous_end..span.start).unwrap_or("");
        let line_start = text
            .get(..span.start)
            .and_then(|before| before.rfind('\n'))
            .map_or(0, |i| i + 1);
        let column = text
            .get(line_start..span.start)
            .map_or(0, |s| s.chars().count());
        let mut token_text = text.get(span.clone()).unwrap_or("");
        if matches!(token, Token::Comment | Token::DocComment(_)) {
            token_text = token_text.trim_end();
        }
        out.push(SourceToken {
            token,
            text: token_text,
            newlines_before: gap.matches('\n').count(),
            space_before: !gap.is_empty(),
            column,
        });
        previous_end = span.end;
    }
    out
}

// ---- layout: lines of tokens ----

/// One output line: its indentation and its tokens, each with the spaces before it.
struct Line {
    blank_before: bool,
    indent: usize,
    /// (token index, spaces before it); the spaces of the first piece are unused.
    pieces: Vec<Piece>,
    /// Whether the line continues a statement begun on an earlier line.
    continuation: bool,
}

struct Piece {
    token: usize,
    gap: Gap,
}

enum Gap {
    Spaces(usize),
    /// A trailing line comment: at its original column if that is right of the code.
    Comment {
        column: usize,
    },
}

/// What an opening bracket opened.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Paren,
    Bracket,
    Block,
    /// The braces of an import list, `std.nn.{dense, relu}`.
    Inline,
}

/// Per-token facts found while laying out, needed by the spacing rules.
#[derive(Clone, Copy, Default)]
struct Role {
    block_open: bool,
    block_close: bool,
    inline_open: bool,
    inline_close: bool,
    unary: bool,
    generic_open: bool,
    generic_close: bool,
    /// For `..`: whether it is written with spaces around it.
    spaced_range: bool,
    /// A `;` that ends a statement (not inside `()` or `[]`).
    statement_end: bool,
}

fn layout(tokens: &[SourceToken<'_>]) -> Vec<Line> {
    let mut lines: Vec<Line> = Vec::new();
    let mut roles: Vec<Role> = Vec::with_capacity(tokens.len());
    let mut stack: Vec<Open> = Vec::new();
    let mut generic_open = false;
    // The last token that is not a comment, and whether it ends a statement.
    let mut previous_code: Option<usize> = None;
    for (i, tok) in tokens.iter().enumerate() {
        let mut role = Role::default();
        let previous = i.checked_sub(1);
        match &tok.token {
            Token::RBrace => {
                match stack.pop() {
                    Some(Open::Inline) => role.inline_close = true,
                    _ => role.block_close = true,
                }
                generic_open = false;
            }
            Token::RParen | Token::RBracket => {
                stack.pop();
            }
            Token::LBrace => {
                if previous.is_some_and(|p| tokens[p].token == Token::Dot) {
                    role.inline_open = true;
                } else {
                    role.block_open = true;
                }
            }
            Token::Semi => {
                role.statement_end = !matches!(stack.last(), Some(Open::Paren | Open::Bracket));
            }
            Token::Minus => {
                role.unary = previous_code.is_none_or(|p| !ends_value(&tokens[p].token));
            }
            Token::Bang => role.unary = true,
            Token::Lt => {
                role.generic_open = previous_code.is_some_and(|p| tokens[p].token == Token::Stream);
                generic_open = role.generic_open;
            }
            Token::Gt if generic_open => {
                role.generic_close = true;
                generic_open = false;
            }
            Token::DotDot => {
                let after = tokens.get(i + 1).is_some_and(|t| t.space_before);
                role.spaced_range = tok.space_before || after;
            }
            _ => {}
        }
        roles.push(role);
        let is_comment = is_comment(&tok.token);
        let new_line = match previous {
            None => true,
            Some(p) => breaks_before(tokens, &roles, p, previous_code, i),
        };
        if new_line {
            let blank_before = previous.is_some()
                && tok.newlines_before >= 2
                && !previous.is_some_and(|p| roles[p].block_open)
                && !role.block_close;
            let continuation = match previous_code {
                None => false,
                Some(p) => {
                    let ends =
                        roles[p].statement_end || roles[p].block_open || roles[p].block_close;
                    !ends && !role.block_close
                }
            };
            let closer = matches!(tok.token, Token::RParen | Token::RBracket) || role.inline_close;
            let depth = stack.iter().filter(|o| **o == Open::Block).count();
            let indent = 4 * depth + if continuation && !closer { 4 } else { 0 };
            lines.push(Line {
                blank_before,
                indent,
                pieces: vec![Piece {
                    token: i,
                    gap: Gap::Spaces(0),
                }],
                continuation,
            });
        } else if let Some(line) = lines.last_mut() {
            let gap = if matches!(tok.token, Token::Comment | Token::DocComment(_)) {
                Gap::Comment { column: tok.column }
            } else {
                let p = i - 1;
                Gap::Spaces(usize::from(space_between(tokens, &roles, p, i)))
            };
            line.pieces.push(Piece { token: i, gap });
        }
        match &tok.token {
            Token::LParen => stack.push(Open::Paren),
            Token::LBracket => stack.push(Open::Bracket),
            Token::LBrace if role.inline_open => stack.push(Open::Inline),
            Token::LBrace => stack.push(Open::Block),
            _ => {}
        }
        if !is_comment {
            previous_code = Some(i);
        }
    }
    lines
}

/// Whether token `i` starts a new line, given the token `p` right before it and the last
/// token before it that is not a comment, `code`.
fn breaks_before(
    tokens: &[SourceToken<'_>],
    roles: &[Role],
    p: usize,
    code: Option<usize>,
    i: usize,
) -> bool {
    let tok = &tokens[i];
    let original = tok.newlines_before > 0;
    if matches!(tokens[p].token, Token::Comment | Token::DocComment(_)) {
        return true;
    }
    if is_comment(&tok.token) {
        return original;
    }
    let Some(c) = code else {
        return original;
    };
    let role = roles[i];
    if role.block_close {
        return p != c || !roles[c].block_open;
    }
    if roles[c].block_open {
        return true;
    }
    if (role.block_open || matches!(tok.token, Token::Semi | Token::Comma)) && p == c {
        return false;
    }
    if roles[c].block_close {
        return !matches!(
            tok.token,
            Token::Else | Token::Semi | Token::Comma | Token::RParen
        );
    }
    if roles[c].statement_end {
        return true;
    }
    original
}

/// Whether one space separates tokens `p` and `i` on the same line.
fn space_between(tokens: &[SourceToken<'_>], roles: &[Role], p: usize, i: usize) -> bool {
    let (prev, tok) = (&tokens[p].token, &tokens[i].token);
    let (prev_role, role) = (roles[p], roles[i]);
    if prev == &Token::BlockComment || tok == &Token::BlockComment {
        return true;
    }
    if matches!(prev, Token::LParen | Token::LBracket) || prev_role.inline_open {
        return false;
    }
    if matches!(
        tok,
        Token::RParen | Token::RBracket | Token::Comma | Token::Semi | Token::Colon
    ) || role.inline_close
    {
        return false;
    }
    if tok == &Token::Dot || prev == &Token::Dot {
        return false;
    }
    if tok == &Token::DotDot {
        return role.spaced_range;
    }
    if prev == &Token::DotDot {
        return prev_role.spaced_range;
    }
    if role.generic_open || prev_role.generic_open || role.generic_close {
        return false;
    }
    if prev_role.unary || (prev_role.block_open && role.block_close) {
        return false;
    }
    match tok {
        Token::LParen => !matches!(
            prev,
            Token::Ident(_) | Token::Recv | Token::Send | Token::Control
        ),
        Token::LBracket => !matches!(
            prev,
            Token::Ident(_)
                | Token::RParen
                | Token::RBracket
                | Token::F32
                | Token::F16
                | Token::I32
                | Token::U32
                | Token::Bool
        ),
        _ => true,
    }
}

/// Tokens after which a `-` is binary (they end an operand).
fn ends_value(token: &Token) -> bool {
    matches!(
        token,
        Token::Ident(_)
            | Token::Number(_)
            | Token::Str(_)
            | Token::RParen
            | Token::RBracket
            | Token::True
            | Token::False
            | Token::Underscore
    )
}

fn is_comment(token: &Token) -> bool {
    matches!(
        token,
        Token::Comment | Token::DocComment(_) | Token::BlockComment
    )
}

// ---- alignment and rendering ----

/// Aligns runs of consecutive port declarations: `in  xs:   stream<f32> from west;`.
fn align_ports(tokens: &[SourceToken<'_>], lines: &mut [Line]) {
    let is_port = |line: &Line| {
        !line.continuation
            && line.pieces.len() >= 4
            && matches!(tokens[line.pieces[0].token].token, Token::In | Token::Out)
            && matches!(tokens[line.pieces[1].token].token, Token::Ident(_))
            && tokens[line.pieces[2].token].token == Token::Colon
    };
    let is_comment_line =
        |line: &Line| line.pieces.len() == 1 && is_comment(&tokens[line.pieces[0].token].token);
    let mut start = 0;
    while start < lines.len() {
        if !is_port(&lines[start]) {
            start += 1;
            continue;
        }
        // A run goes on across comment lines, but not across blank lines.
        let mut end = start + 1;
        let mut last_port = start;
        while end < lines.len()
            && !lines[end].blank_before
            && lines[end].indent == lines[start].indent
            && (is_port(&lines[end]) || is_comment_line(&lines[end]))
        {
            if is_port(&lines[end]) {
                last_port = end;
            }
            end += 1;
        }
        let end = last_port + 1;
        let width = |line: &Line, k: usize| tokens[line.pieces[k].token].text.chars().count();
        let run = &mut lines[start..end];
        let direction = run
            .iter()
            .filter(|l| is_port(l))
            .map(|l| width(l, 0))
            .max()
            .unwrap_or(0);
        let name = run
            .iter()
            .filter(|l| is_port(l))
            .map(|l| width(l, 1) + 1)
            .max()
            .unwrap_or(0);
        for line in run.iter_mut().filter(|l| is_port(l)) {
            let pad_direction = direction - width(line, 0);
            let pad_name = name - (width(line, 1) + 1);
            line.pieces[1].gap = Gap::Spaces(1 + pad_direction);
            line.pieces[3].gap = Gap::Spaces(1 + pad_name);
        }
        start = end;
    }
}

fn render(tokens: &[SourceToken<'_>], lines: &[Line]) -> String {
    let mut out = String::new();
    for line in lines {
        if line.blank_before {
            out.push('\n');
        }
        let mut column = line.indent;
        out.extend(std::iter::repeat_n(' ', line.indent));
        for (k, piece) in line.pieces.iter().enumerate() {
            let text = tokens[piece.token].text;
            if k > 0 {
                let spaces = match piece.gap {
                    Gap::Spaces(n) => n,
                    Gap::Comment { column: wanted } => wanted.saturating_sub(column).max(1),
                };
                out.extend(std::iter::repeat_n(' ', spaces));
                column += spaces;
            }
            out.push_str(text);
            column = match text.rfind('\n') {
                Some(i) => text[i + 1..].chars().count(),
                None => column + text.chars().count(),
            };
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests;

//! The logos lexer: every token of `docs/language.md` §1, comments and doc comments as trivia,
//! and lexical errors as `Token::Error` tokens with their spans (never a panic).

use std::fmt;

use logos::Logos;

use crate::ast::Span;

/// What went wrong while cutting the source into tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LexErrorKind {
    /// A character that starts no token, such as `@` or a lone `&`.
    #[default]
    InvalidChar,
    /// A `"` without its closing `"` on the same line.
    UnterminatedString,
    /// A backslash escape other than `\"`, `\\`, `\n`, `\t` inside a string literal.
    UnknownEscape,
    /// A `/*` without its closing `*/`.
    UnterminatedBlockComment,
    /// A number such as `1e`, `0x`, `12ab` or `1.5e+`.
    MalformedNumber,
    /// An integer literal that does not fit in 64 bits.
    IntegerTooLarge,
}

/// The value of a number literal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// `42`, `1_000`, `0x2A`
    Int(u64),
    /// `1.0`, `0.5e-3`, `2e8`
    Float(f64),
}

/// One token of a `.wse` source, including trivia (comments) and lexical errors.
#[derive(Logos, Debug, Clone, PartialEq)]
#[logos(error = LexErrorKind)]
#[logos(skip r"[ \t\r\n\f]+")]
pub enum Token {
    // ---- trivia ----
    /// `// ...` to the end of the line (also `////...`).
    #[regex(r"//[^\n]*", allow_greedy = true)]
    Comment,
    /// `/// text`: the text after `///`, with one leading space removed.
    #[regex(r"///([^/\n][^\n]*)?", doc_comment, allow_greedy = true, priority = 10)]
    DocComment(String),
    /// `/* ... */` (not nested).
    #[token("/*", block_comment)]
    BlockComment,

    // ---- literals and names ----
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice().to_string())]
    Ident(String),
    #[regex(r"[0-9]", number)]
    Number(Number),
    /// A string literal, escapes already decoded.
    #[token("\"", string)]
    Str(String),
    /// A lexical error; never produced by logos itself, only by [`lex`].
    Error(LexErrorKind),

    // ---- keywords ----
    #[token("_", priority = 5)]
    Underscore,
    #[token("import")]
    Import,
    #[token("as")]
    As,
    #[token("const")]
    Const,
    #[token("kernel")]
    Kernel,
    #[token("layer")]
    Layer,
    #[token("model")]
    Model,
    #[token("param")]
    Param,
    #[token("let")]
    Let,
    #[token("var")]
    Var,
    #[token("in")]
    In,
    #[token("out")]
    Out,
    #[token("stream")]
    Stream,
    #[token("task")]
    Task,
    #[token("then")]
    Then,
    #[token("recv")]
    Recv,
    #[token("send")]
    Send,
    #[token("activate")]
    Activate,
    #[token("control")]
    Control,
    #[token("if")]
    If,
    #[token("else")]
    Else,
    #[token("for")]
    For,
    #[token("while")]
    While,
    #[token("return")]
    Return,
    #[token("true")]
    True,
    #[token("false")]
    False,
    #[token("cost")]
    Cost,
    #[token("pipelined")]
    Pipelined,
    #[token("streaming")]
    Streaming,
    #[token("on")]
    On,
    #[token("where")]
    Where,
    #[token("run")]
    Run,
    #[token("train")]
    Train,
    #[token("bind")]
    Bind,
    #[token("to")]
    To,
    #[token("split")]
    Split,
    #[token("from")]
    From,
    #[token("f32")]
    F32,
    #[token("f16")]
    F16,
    #[token("i32")]
    I32,
    #[token("u32")]
    U32,
    #[token("bool")]
    Bool,

    // ---- punctuation ----
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("<")]
    Lt,
    #[token(">")]
    Gt,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token(",")]
    Comma,
    #[token(".")]
    Dot,
    #[token("..")]
    DotDot,
    #[token("->")]
    Arrow,
    #[token("=")]
    Assign,
    #[token("+=")]
    PlusAssign,
    #[token("-=")]
    MinusAssign,
    #[token("*=")]
    StarAssign,
    #[token("/=")]
    SlashAssign,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("==")]
    EqEq,
    #[token("!=")]
    NotEq,
    #[token("<=")]
    Le,
    #[token(">=")]
    Ge,
    #[token("&&")]
    AndAnd,
    #[token("||")]
    OrOr,
    #[token("!")]
    Bang,
}

/// The class of a token, for syntax highlighting (LSP semantic tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenKind {
    Keyword,
    Identifier,
    Number,
    String,
    Comment,
    Operator,
    Error,
}

impl Token {
    /// The class of this token.
    pub fn kind(&self) -> TokenKind {
        use Token as T;
        match self {
            T::Comment | T::DocComment(_) | T::BlockComment => TokenKind::Comment,
            T::Ident(_) => TokenKind::Identifier,
            T::Number(_) => TokenKind::Number,
            T::Str(_) => TokenKind::String,
            T::Error(_) => TokenKind::Error,
            _ if self.keyword().is_some() => TokenKind::Keyword,
            _ => TokenKind::Operator,
        }
    }

    /// Comments and doc comments: tokens the parser never sees.
    pub fn is_trivia(&self) -> bool {
        matches!(
            self,
            Token::Comment
                | Token::DocComment(_)
                | Token::BlockComment
                | Token::Error(LexErrorKind::UnterminatedBlockComment)
        )
    }

    /// The source text of a keyword token (`_` included), `None` for every other token.
    pub fn keyword(&self) -> Option<&'static str> {
        use Token as T;
        Some(match self {
            T::Underscore => "_",
            T::Import => "import",
            T::As => "as",
            T::Const => "const",
            T::Kernel => "kernel",
            T::Layer => "layer",
            T::Model => "model",
            T::Param => "param",
            T::Let => "let",
            T::Var => "var",
            T::In => "in",
            T::Out => "out",
            T::Stream => "stream",
            T::Task => "task",
            T::Then => "then",
            T::Recv => "recv",
            T::Send => "send",
            T::Activate => "activate",
            T::Control => "control",
            T::If => "if",
            T::Else => "else",
            T::For => "for",
            T::While => "while",
            T::Return => "return",
            T::True => "true",
            T::False => "false",
            T::Cost => "cost",
            T::Pipelined => "pipelined",
            T::Streaming => "streaming",
            T::On => "on",
            T::Where => "where",
            T::Run => "run",
            T::Train => "train",
            T::Bind => "bind",
            T::To => "to",
            T::Split => "split",
            T::From => "from",
            T::F32 => "f32",
            T::F16 => "f16",
            T::I32 => "i32",
            T::U32 => "u32",
            T::Bool => "bool",
            _ => return None,
        })
    }

    /// The source text of a punctuation token, `None` for every other token.
    pub fn punct(&self) -> Option<&'static str> {
        use Token as T;
        Some(match self {
            T::LBrace => "{",
            T::RBrace => "}",
            T::LParen => "(",
            T::RParen => ")",
            T::LBracket => "[",
            T::RBracket => "]",
            T::Lt => "<",
            T::Gt => ">",
            T::Semi => ";",
            T::Colon => ":",
            T::Comma => ",",
            T::Dot => ".",
            T::DotDot => "..",
            T::Arrow => "->",
            T::Assign => "=",
            T::PlusAssign => "+=",
            T::MinusAssign => "-=",
            T::StarAssign => "*=",
            T::SlashAssign => "/=",
            T::Plus => "+",
            T::Minus => "-",
            T::Star => "*",
            T::Slash => "/",
            T::Percent => "%",
            T::EqEq => "==",
            T::NotEq => "!=",
            T::Le => "<=",
            T::Ge => ">=",
            T::AndAnd => "&&",
            T::OrOr => "||",
            T::Bang => "!",
            _ => return None,
        })
    }

    /// How the token is named in a message: `` `;` ``, `` identifier `foo` ``, `number `42``.
    pub fn describe(&self) -> String {
        match self {
            Token::Ident(name) => format!("identifier `{name}`"),
            Token::Number(_) => format!("number `{self}`"),
            Token::Str(_) => "string literal".to_string(),
            Token::Comment | Token::DocComment(_) | Token::BlockComment => "comment".to_string(),
            Token::Error(_) => "invalid token".to_string(),
            _ => format!("`{self}`"),
        }
    }
}

/// The source form of the token: `;`, `kernel`, the identifier's name, the number, the
/// quoted string.
impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(text) = self.keyword().or_else(|| self.punct()) {
            return f.write_str(text);
        }
        match self {
            Token::Ident(name) => f.write_str(name),
            Token::Number(Number::Int(v)) => write!(f, "{v}"),
            Token::Number(Number::Float(v)) => write!(f, "{v:?}"),
            Token::Str(s) => write!(f, "{s:?}"),
            Token::Comment | Token::BlockComment => f.write_str("comment"),
            Token::DocComment(_) => f.write_str("doc comment"),
            Token::Error(_) => f.write_str("invalid token"),
            _ => f.write_str("?"),
        }
    }
}

/// Cuts `src` into tokens with byte spans, comments included. Lexical errors appear as
/// [`Token::Error`] tokens (adjacent invalid characters are merged into one). Never panics.
pub fn lex(src: &str) -> Vec<(Token, Span)> {
    // About one token per five bytes in the stdlib: reserved once, the list is not copied
    // through ever larger fresh allocations (each a page fault per 2 MiB huge page zeroed, which
    // was 6% of a streamed run's CPU time lexing `std.nn`; BENCHMARKS.md, "Outside the hops").
    let mut out: Vec<(Token, Span)> = Vec::with_capacity(src.len() / 4 + 8);
    for (result, span) in Token::lexer(src).spanned() {
        let token = match result {
            Ok(Token::DocComment(_)) if src[span.clone()].starts_with("////") => Token::Comment,
            Ok(token) => token,
            Err(kind) => Token::Error(kind),
        };
        if let (Token::Error(LexErrorKind::InvalidChar), Some((Token::Error(prev), prev_span))) =
            (&token, out.last_mut())
            && *prev == LexErrorKind::InvalidChar
            && prev_span.end == span.start
        {
            prev_span.end = span.end;
            continue;
        }
        out.push((token, span));
    }
    merge_non_ascii_words(src, out)
}

/// Whether `text` reads as an identifier that uses letters outside ASCII (`größe`): the lexer
/// reports it as one invalid token, and the parser reads it as an identifier.
pub(crate) fn is_non_ascii_word(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !text.is_ascii()
}

/// Merges a word written with non-ASCII letters (`größe` lexes as `gr`, `öß`, `e`) into one
/// `InvalidChar` token, so that it is one error, and one identifier for the parser.
fn merge_non_ascii_words(src: &str, tokens: Vec<(Token, Span)>) -> Vec<(Token, Span)> {
    // Identifiers, numbers and keywords are ASCII: a non-ASCII word has an invalid character.
    if !tokens
        .iter()
        .any(|(t, _)| *t == Token::Error(LexErrorKind::InvalidChar))
    {
        return tokens;
    }
    let word_like = |tok: &Token, span: &Span| match tok {
        Token::Ident(_) | Token::Number(_) | Token::Underscore => true,
        Token::Error(LexErrorKind::InvalidChar) => src
            .get(span.clone())
            .is_some_and(|t| t.chars().all(|c| c.is_alphanumeric() || c == '_')),
        other => other.keyword().is_some(),
    };
    let mut out: Vec<(Token, Span)> = Vec::with_capacity(tokens.len());
    // The start in `out` of the current run of adjacent word-like tokens.
    let mut run_start: Option<usize> = None;
    for (tok, span) in tokens {
        let continues = word_like(&tok, &span)
            && out
                .last()
                .is_some_and(|(_, prev): &(Token, Span)| prev.end == span.start)
            && run_start.is_some();
        if !continues {
            collapse_run(src, &mut out, run_start);
            run_start = None;
        }
        if word_like(&tok, &span) && run_start.is_none() {
            run_start = Some(out.len());
        }
        out.push((tok, span));
    }
    collapse_run(src, &mut out, run_start);
    out
}

/// Replaces the tokens of `out` from `start` with one `InvalidChar` token when together they
/// spell a non-ASCII word.
fn collapse_run(src: &str, out: &mut Vec<(Token, Span)>, start: Option<usize>) {
    let Some(start) = start else { return };
    if out.len() - start < 2
        && !out[start..]
            .iter()
            .any(|(t, _)| matches!(t, Token::Error(_)))
    {
        return;
    }
    let span = out[start].1.start..out[out.len() - 1].1.end;
    if src.get(span.clone()).is_some_and(is_non_ascii_word) {
        out.truncate(start);
        out.push((Token::Error(LexErrorKind::InvalidChar), span));
    }
}

// ---- callbacks ----

fn doc_comment(lex: &mut logos::Lexer<Token>) -> String {
    let text = &lex.slice()[3..];
    text.strip_prefix(' ').unwrap_or(text).to_string()
}

fn block_comment(lex: &mut logos::Lexer<Token>) -> Result<(), LexErrorKind> {
    match lex.remainder().find("*/") {
        Some(end) => {
            lex.bump(end + 2);
            Ok(())
        }
        None => {
            lex.bump(lex.remainder().len());
            Err(LexErrorKind::UnterminatedBlockComment)
        }
    }
}

fn string(lex: &mut logos::Lexer<Token>) -> Result<String, LexErrorKind> {
    let rest = lex.remainder();
    let mut value = String::new();
    let mut error = None;
    let mut chars = rest.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                lex.bump(i + 1);
                return match error {
                    Some(e) => Err(e),
                    None => Ok(value),
                };
            }
            '\n' => {
                lex.bump(i);
                return Err(LexErrorKind::UnterminatedString);
            }
            '\\' => match chars.next() {
                Some((_, '"')) => value.push('"'),
                Some((_, '\\')) => value.push('\\'),
                Some((_, 'n')) => value.push('\n'),
                Some((_, 't')) => value.push('\t'),
                Some((j, '\n')) => {
                    lex.bump(j);
                    return Err(LexErrorKind::UnterminatedString);
                }
                Some(_) => error = Some(LexErrorKind::UnknownEscape),
                None => break,
            },
            c => value.push(c),
        }
    }
    lex.bump(rest.len());
    Err(LexErrorKind::UnterminatedString)
}

/// Scans a whole number-like word after its first digit: digits, `_`, letters, `.digits`
/// and the sign of an exponent. Anything that is not a valid literal is
/// one malformed-number error, so `1e` or `12ab` never split into two tokens.
fn number(lex: &mut logos::Lexer<Token>) -> Result<Number, LexErrorKind> {
    let hex = lex.slice() == "0" && lex.remainder().starts_with(['x', 'X']);
    let rest = lex.remainder().as_bytes();
    let word_char = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut len = 0;
    let mut seen_exp = hex;
    loop {
        match rest.get(len) {
            Some(b'e' | b'E') if !seen_exp => {
                seen_exp = true;
                len += 1;
                if matches!(rest.get(len), Some(b'+' | b'-')) {
                    len += 1;
                }
            }
            Some(&b) if word_char(b) => len += 1,
            Some(b'.') if !hex && rest.get(len + 1).is_some_and(u8::is_ascii_digit) => len += 1,
            _ => break,
        }
    }
    lex.bump(len);
    parse_number(lex.slice())
}

fn parse_number(text: &str) -> Result<Number, LexErrorKind> {
    let digits: String = text.chars().filter(|&c| c != '_').collect();
    if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(LexErrorKind::MalformedNumber);
        }
        return u64::from_str_radix(hex, 16)
            .map(Number::Int)
            .map_err(|_| LexErrorKind::IntegerTooLarge);
    }
    if digits.bytes().all(|b| b.is_ascii_digit()) {
        return digits
            .parse::<u64>()
            .map(Number::Int)
            .map_err(|_| LexErrorKind::IntegerTooLarge);
    }
    // A float: digits [. digits] [e [+-] digits], and nothing else.
    let (mantissa, exponent) = match digits.find(['e', 'E']) {
        Some(i) => (&digits[..i], Some(&digits[i + 1..])),
        None => (digits.as_str(), None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((int, frac)) => is_digits(int) && is_digits(frac),
        None => is_digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        is_digits(e)
    });
    if !mantissa_ok || !exponent_ok {
        return Err(LexErrorKind::MalformedNumber);
    }
    digits
        .parse::<f64>()
        .map(Number::Float)
        .map_err(|_| LexErrorKind::MalformedNumber)
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Every keyword of the language, in the order of `docs/language.md` §1 (what completion
/// offers and what tests feed the parser). `Token::keyword` gives the same words.
pub const KEYWORDS: &[&str] = &[
    "import",
    "as",
    "const",
    "kernel",
    "layer",
    "model",
    "param",
    "let",
    "var",
    "in",
    "out",
    "stream",
    "task",
    "then",
    "recv",
    "send",
    "activate",
    "control",
    "if",
    "else",
    "for",
    "while",
    "return",
    "true",
    "false",
    "cost",
    "pipelined",
    "streaming",
    "on",
    "where",
    "run",
    "train",
    "bind",
    "to",
    "split",
    "from",
    "f32",
    "f16",
    "i32",
    "u32",
    "bool",
];

#[cfg(test)]
mod tests {
    #[test]
    fn every_listed_keyword_lexes_as_that_keyword() {
        for word in super::KEYWORDS {
            let tokens = super::lex(word);
            assert_eq!(tokens.len(), 1, "{word}");
            assert_eq!(tokens[0].0.keyword(), Some(*word));
        }
    }

    use super::*;

    fn kinds(src: &str) -> Vec<Token> {
        lex(src).into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn numbers() {
        assert_eq!(
            kinds("42 1_000 0x2A 1.0 0.5e-3 2e8"),
            vec![
                Token::Number(Number::Int(42)),
                Token::Number(Number::Int(1000)),
                Token::Number(Number::Int(42)),
                Token::Number(Number::Float(1.0)),
                Token::Number(Number::Float(0.5e-3)),
                Token::Number(Number::Float(2e8)),
            ]
        );
    }

    #[test]
    fn ranges_are_not_floats() {
        assert_eq!(
            kinds("0..n"),
            vec![
                Token::Number(Number::Int(0)),
                Token::DotDot,
                Token::Ident("n".into())
            ]
        );
        assert_eq!(
            kinds("x[1..2]")[2..5],
            [
                Token::Number(Number::Int(1)),
                Token::DotDot,
                Token::Number(Number::Int(2))
            ]
        );
    }

    #[test]
    fn malformed_numbers() {
        for src in ["1e", "0x", "12ab", "1.5e+", "0xZZ", "1e5x", "1.2.3e"] {
            let toks = lex(src);
            assert_eq!(
                toks,
                vec![(Token::Error(LexErrorKind::MalformedNumber), 0..src.len())],
                "{src}"
            );
        }
        assert_eq!(
            kinds("99999999999999999999"),
            vec![Token::Error(LexErrorKind::IntegerTooLarge)]
        );
    }

    #[test]
    fn strings_and_escapes() {
        assert_eq!(
            kinds(r#""a\"b\\c\n\t""#),
            vec![Token::Str("a\"b\\c\n\t".into())]
        );
        assert_eq!(
            lex("\"abc\nx"),
            vec![
                (Token::Error(LexErrorKind::UnterminatedString), 0..4),
                (Token::Ident("x".into()), 5..6)
            ]
        );
        assert_eq!(
            kinds(r#""\q""#),
            vec![Token::Error(LexErrorKind::UnknownEscape)]
        );
    }

    #[test]
    fn a_non_ascii_word_is_one_invalid_token() {
        assert_eq!(
            lex("a größe b"),
            vec![
                (Token::Ident("a".into()), 0..1),
                (Token::Error(LexErrorKind::InvalidChar), 2..9),
                (Token::Ident("b".into()), 10..11),
            ]
        );
        assert!(is_non_ascii_word("größe") && !is_non_ascii_word("@@"));
    }

    #[test]
    fn comments() {
        assert_eq!(
            kinds("a // x\n/// doc\n//// not doc\n/* b */ c /* open"),
            vec![
                Token::Ident("a".into()),
                Token::Comment,
                Token::DocComment("doc".into()),
                Token::Comment,
                Token::BlockComment,
                Token::Ident("c".into()),
                Token::Error(LexErrorKind::UnterminatedBlockComment),
            ]
        );
    }

    #[test]
    fn keywords_punctuation_and_errors() {
        assert_eq!(
            kinds("_ _x kernel -> .. += <= && @@ é"),
            vec![
                Token::Underscore,
                Token::Ident("_x".into()),
                Token::Kernel,
                Token::Arrow,
                Token::DotDot,
                Token::PlusAssign,
                Token::Le,
                Token::AndAnd,
                Token::Error(LexErrorKind::InvalidChar),
                Token::Error(LexErrorKind::InvalidChar),
            ]
        );
        assert_eq!(Token::Kernel.kind(), TokenKind::Keyword);
        assert_eq!(Token::Semi.to_string(), ";");
        assert_eq!(Token::Ident("x".into()).describe(), "identifier `x`");
    }
}

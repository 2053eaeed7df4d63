//! Semantic tokens: every token of `wsel_syntax::lex` classified for highlighting, names
//! refined by what they resolve to (a layer is a function, a port a property, a dimension
//! variable a type parameter, stdlib items carry `defaultLibrary`), and the LSP encoding
//! (relative positions, one token per line).

use std::collections::HashMap;
use std::path::PathBuf;

use tower_lsp::lsp_types::{SemanticToken, SemanticTokenModifier, SemanticTokenType};
use wsel_sema::check::kernel::PORT_SIDES;
use wsel_syntax::Token;

use crate::context::FileCtx;
use crate::defs::{Def, DefKind, def_named_at};
use crate::line_index::LineIndex;

/// The token types, in legend order.
pub const TOKEN_TYPES: &[SemanticTokenType] = &[
    SemanticTokenType::KEYWORD,
    SemanticTokenType::TYPE,
    SemanticTokenType::FUNCTION,
    SemanticTokenType::PARAMETER,
    SemanticTokenType::VARIABLE,
    SemanticTokenType::PROPERTY,
    SemanticTokenType::NUMBER,
    SemanticTokenType::STRING,
    SemanticTokenType::COMMENT,
    SemanticTokenType::OPERATOR,
    SemanticTokenType::TYPE_PARAMETER,
    SemanticTokenType::METHOD,
    SemanticTokenType::ENUM_MEMBER,
];

/// The token modifiers, in legend order (bit i is modifier i).
pub const TOKEN_MODIFIERS: &[SemanticTokenModifier] = &[
    SemanticTokenModifier::DECLARATION,
    SemanticTokenModifier::READONLY,
    SemanticTokenModifier::DEFAULT_LIBRARY,
    SemanticTokenModifier::DOCUMENTATION,
];

/// Indices into [`TOKEN_TYPES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Keyword = 0,
    Type = 1,
    Function = 2,
    Parameter = 3,
    Variable = 4,
    Property = 5,
    Number = 6,
    String = 7,
    Comment = 8,
    Operator = 9,
    TypeParameter = 10,
    Method = 11,
    EnumMember = 12,
}

pub const DECLARATION: u32 = 1;
pub const READONLY: u32 = 2;
pub const DEFAULT_LIBRARY: u32 = 4;
pub const DOCUMENTATION: u32 = 8;

/// One classified token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    pub span: std::ops::Range<usize>,
    pub class: Class,
    pub modifiers: u32,
}

/// Every token of the file worth highlighting, in source order.
pub fn classify(ctx: &FileCtx<'_>) -> Vec<Classified> {
    let tokens = wsel_syntax::lex(ctx.text);
    let mut other_files: HashMap<PathBuf, Vec<Def>> = HashMap::new();
    let mut out = Vec::with_capacity(tokens.len());
    let mut previous: Option<&Token> = None;
    for (token, span) in &tokens {
        let (class, modifiers) = match token {
            Token::Comment | Token::BlockComment => (Class::Comment, 0),
            Token::DocComment(_) => (Class::Comment, DOCUMENTATION),
            Token::Number(_) => (Class::Number, 0),
            Token::Str(_) => (Class::String, 0),
            Token::Error(_) => {
                continue;
            }
            Token::F32 | Token::F16 | Token::I32 | Token::U32 | Token::Bool | Token::Stream => {
                (Class::Type, 0)
            }
            Token::Ident(name) => ident_class(ctx, &mut other_files, name, span, previous),
            t if t.keyword().is_some() => (Class::Keyword, 0),
            t if is_operator(t) => (Class::Operator, 0),
            _ => {
                if !token.is_trivia() {
                    previous = Some(token);
                }
                continue;
            }
        };
        out.push(Classified {
            span: span.clone(),
            class,
            modifiers,
        });
        if !token.is_trivia() {
            previous = Some(token);
        }
    }
    out
}

fn ident_class(
    ctx: &FileCtx<'_>,
    other_files: &mut HashMap<PathBuf, Vec<Def>>,
    name: &str,
    span: &std::ops::Range<usize>,
    previous: Option<&Token>,
) -> (Class, u32) {
    // A module path in an import refers to the whole module (an empty span): classified by
    // its tokens below, like other paths.
    if let Some(def) = ctx.analysis.definition_at(span.start)
        && !def.span.is_empty()
    {
        let std = def.file.starts_with(wsel_sema::STD_PREFIX);
        let library = if std { DEFAULT_LIBRARY } else { 0 };
        let kind = if def.file == ctx.path() {
            def_named_at(&ctx.defs, &def.span).map(|d| d.kind)
        } else {
            let defs = other_files.entry(def.file.clone()).or_insert_with(|| {
                FileCtx::of_path(ctx.db, &def.file)
                    .map(|c| c.defs)
                    .unwrap_or_default()
            });
            def_named_at(defs, &def.span).map(|d| d.kind)
        };
        let (class, modifiers) = kind.map_or((Class::Variable, 0), def_class);
        return (class, modifiers | library);
    }
    if let Some(def) = def_named_at(&ctx.defs, span) {
        let (class, modifiers) = def_class(def.kind);
        return (class, modifiers | DECLARATION);
    }
    match (previous, name) {
        (Some(Token::Dot), _) => (Class::Property, DEFAULT_LIBRARY),
        (Some(Token::From | Token::To), side) if PORT_SIDES.contains(&side) => {
            (Class::EnumMember, 0)
        }
        (_, "multicast" | "array" | "port" | "rows" | "cols") => (Class::Keyword, 0),
        (_, "pe" | "region") => (Class::Variable, DEFAULT_LIBRARY | READONLY),
        (_, name) if wsel_sema::builtins::builtin(name).is_some() => {
            (Class::Function, DEFAULT_LIBRARY)
        }
        _ => (Class::Variable, 0),
    }
}

fn def_class(kind: DefKind) -> (Class, u32) {
    match kind {
        DefKind::Kernel | DefKind::Layer | DefKind::Model | DefKind::Run | DefKind::Train => {
            (Class::Function, 0)
        }
        DefKind::Task => (Class::Method, 0),
        DefKind::Const | DefKind::LocalConst => (Class::Variable, READONLY),
        DefKind::KernelParam => (Class::Parameter, READONLY),
        DefKind::InPort | DefKind::OutPort => (Class::Property, 0),
        DefKind::DimVar | DefKind::RegionSize => (Class::TypeParameter, 0),
        DefKind::LayerInput | DefKind::LayerParam | DefKind::LayerOutput => (Class::Parameter, 0),
        DefKind::LayerScalar => (Class::Parameter, READONLY),
        DefKind::Storage
        | DefKind::Let
        | DefKind::LocalVar
        | DefKind::LoopVar
        | DefKind::ModelInput
        | DefKind::ModelParam
        | DefKind::ModelLet => (Class::Variable, 0),
    }
}

fn is_operator(token: &Token) -> bool {
    matches!(
        token,
        Token::Arrow
            | Token::Assign
            | Token::PlusAssign
            | Token::MinusAssign
            | Token::StarAssign
            | Token::SlashAssign
            | Token::Plus
            | Token::Minus
            | Token::Star
            | Token::Slash
            | Token::Percent
            | Token::EqEq
            | Token::NotEq
            | Token::Le
            | Token::Ge
            | Token::Lt
            | Token::Gt
            | Token::AndAnd
            | Token::OrOr
            | Token::Bang
            | Token::DotDot
    )
}

/// The LSP encoding: positions relative to the previous token, lengths in UTF-16 units, and
/// tokens that span lines (block comments) cut at every line end.
pub fn encode(tokens: &[Classified], index: &LineIndex<'_>, text: &str) -> Vec<SemanticToken> {
    let mut out = Vec::with_capacity(tokens.len());
    let (mut last_line, mut last_start) = (0u32, 0u32);
    for t in tokens {
        let mut start = t.span.start;
        while start < t.span.end {
            let end = text
                .get(start..t.span.end)
                .and_then(|s| s.find('\n'))
                .map_or(t.span.end, |i| start + i);
            let from = index.position(start);
            let to = index.position(end);
            let length = to.character.saturating_sub(from.character);
            if length > 0 {
                let delta_line = from.line - last_line;
                let delta_start = if delta_line == 0 {
                    from.character - last_start
                } else {
                    from.character
                };
                out.push(SemanticToken {
                    delta_line,
                    delta_start,
                    length,
                    token_type: t.class as u32,
                    token_modifiers_bitset: t.modifiers,
                });
                last_line = from.line;
                last_start = from.character;
            }
            start = end + 1;
        }
    }
    out
}

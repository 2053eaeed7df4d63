//! Helpers that the grammar's actions call: building nodes whose shape is checked while
//! parsing (contextual words such as `multicast`, `array`, `input`) and reporting the
//! structural errors found there.

use crate::ast::*;
use crate::error::{Sink, SyntaxError};

/// One statement of a layer implementation's body, before it is split into `run` and
/// `bind`s.
pub(crate) enum ImplStmt {
    Run(RunKernel),
    Bind(Bind),
    /// A statement that was skipped after a syntax error (already reported).
    Error,
}

/// The parts of a layer body, collected in source order.
#[derive(Default)]
pub(crate) struct LayerParts {
    pub(crate) cost: Option<Cost>,
    pub(crate) impls: Vec<LayerImpl>,
}

impl LayerParts {
    /// Keeps the first `cost` block; a second one is a structural error.
    pub(crate) fn add_cost(&mut self, sink: &Sink, cost: Cost) {
        if self.cost.is_some() {
            sink.custom(SyntaxError::structural(
                "a layer has exactly one `cost` block; this is a second one",
                cost.span,
                "second `cost` block",
            ));
        } else {
            self.cost = Some(cost);
        }
    }
}

/// One argument of a call as written.
pub(crate) enum CallArg {
    Positional(Expr),
    Named(Ident, Expr),
}

/// A call: positional arguments first, then named ones; a positional argument after a named
/// one is a structural error (it is kept, in order, with the positional ones).
pub(crate) fn call(sink: &Sink, callee: Ident, written: Vec<CallArg>, span: Span) -> Expr {
    let mut args = Vec::new();
    let mut named: Vec<(Ident, Expr)> = Vec::new();
    for arg in written {
        match arg {
            CallArg::Positional(value) => {
                if let Some((first, _)) = named.first() {
                    sink.custom(
                        SyntaxError::structural(
                            "a positional argument after a named one",
                            value.span(),
                            "positional argument",
                        )
                        .with_help(&format!(
                            "give the tensors first, then the named arguments such as `{} = ...`",
                            first.name
                        )),
                    );
                }
                args.push(value);
            }
            CallArg::Named(name, value) => named.push((name, value)),
        }
    }
    Expr::Call {
        callee,
        args,
        named,
        span,
    }
}

/// A layer input; a default value is kept only on a scalar input (on a tensor it is a
/// structural error: tensors come from the call).
pub(crate) fn layer_param(
    sink: &Sink,
    is_param: bool,
    name: Ident,
    ty: Type,
    default: Option<Expr>,
    span: Span,
) -> Param {
    let scalar = matches!(ty, Type::Scalar(..) | Type::Error(_));
    let default = match default {
        Some(value) if !scalar => {
            sink.custom(
                SyntaxError::structural(
                    "only a scalar input of a layer has a default value",
                    value.span(),
                    "default of a tensor",
                )
                .with_help("remove `= ...`: a tensor input is given at every call"),
            );
            None
        }
        other => other,
    };
    Param {
        is_param,
        name,
        ty,
        default,
        span,
    }
}

pub(crate) fn binary(op: BinaryOp, lhs: Expr, rhs: Expr, span: Span) -> Expr {
    Expr::Binary {
        op,
        lhs: Box::new(lhs),
        rhs: Box::new(rhs),
        span,
    }
}

/// The optional word after `in p: stream<T> from side`: `multicast`, or `switch` (the port
/// receives on a switched pair's color); returns (multicast, switch).
pub(crate) fn in_word(sink: &Sink, word: Option<Ident>) -> (bool, Option<SwitchSpec>) {
    match word {
        None => (false, None),
        Some(word) if word.name == "multicast" => (true, None),
        Some(word) if word.name == "switch" => (
            false,
            Some(SwitchSpec {
                positions: Vec::new(),
                start: None,
                ring: false,
                unknown: Vec::new(),
                span: word.span,
            }),
        ),
        Some(word) => {
            sink.custom(SyntaxError::unexpected_word(
                &word,
                &["multicast", "switch", ";"],
                "an input port ends with `multicast`, `switch` or `;`",
            ));
            (false, None)
        }
    }
}

/// The optional word after `out p: stream<T> to side`: none is allowed; `multicast` gets an
/// explanation (only input streams entering the region's edge are multicast).
pub(crate) fn out_word(sink: &Sink, word: Option<Ident>) {
    match word {
        None => {}
        Some(word) if word.name == "multicast" => sink.custom(
            SyntaxError::unexpected_word(&word, &[";"], "`multicast` is only for `in` ports")
                .with_help(
                    "remove `multicast`: only an `in` port receives a multicast stream (the \
                     routers deliver a stream entering the region's edge to a whole row or column)",
                ),
        ),
        Some(word) => sink.custom(SyntaxError::unexpected_word(
            &word,
            &[";"],
            "an output port ends with `;`",
        )),
    }
}

/// `by k` after a port's side (a pass-through stream to the PE `k` away): the word must be
/// `by`.
pub(crate) fn distance(sink: &Sink, word: Ident, distance: Expr) -> Option<Expr> {
    if word.name == "by" {
        return Some(distance);
    }
    sink.custom(SyntaxError::unexpected_word(
        &word,
        &["by", ";"],
        "a port's side is followed by `;`, or by `by` and a distance",
    ));
    None
}

/// One item of an `out` port's `switch { ... }` as parsed.
pub(crate) enum SwitchItem {
    /// `posK: rx D tx D`.
    Position(SwitchPos),
    /// `start: e`.
    Value(Ident, Expr),
    /// `ring`.
    Flag(Ident),
}

/// `switch { items }` after an `out` port's side: the word must be `switch`. Items other than
/// positions, `start: e` and `ring` are kept for the checker to report (E0708).
pub(crate) fn switch(
    sink: &Sink,
    word: Ident,
    items: Vec<SwitchItem>,
    span: Span,
) -> Option<SwitchSpec> {
    if word.name != "switch" {
        sink.custom(SyntaxError::unexpected_word(
            &word,
            &["switch", ";"],
            "a port's side is followed by `;`, `by` and a distance, or `switch { ... }`",
        ));
        return None;
    }
    let mut spec = SwitchSpec {
        positions: Vec::new(),
        start: None,
        ring: false,
        unknown: Vec::new(),
        span,
    };
    for item in items {
        match item {
            SwitchItem::Position(p) => spec.positions.push(p),
            SwitchItem::Value(key, e) if key.name == "start" => spec.start = Some(e),
            SwitchItem::Flag(key) if key.name == "ring" => spec.ring = true,
            SwitchItem::Value(key, _) | SwitchItem::Flag(key) => spec.unknown.push(key),
        }
    }
    Some(spec)
}

/// A port declaration that broke after its name: the port is declared, with the error type
/// and an empty side (the checker reports nothing more about it).
pub(crate) fn broken_port(
    direction: PortDirection,
    name: Ident,
    error: Span,
    span: Span,
) -> PortDecl {
    PortDecl {
        direction,
        name,
        ty: Type::Error(error.clone()),
        side: Ident {
            name: String::new(),
            span: error,
        },
        multicast: false,
        distance: None,
        switch: None,
        span,
    }
}

/// `for i = lo..hi`: the loop is kept; the `=` is reported.
pub(crate) fn for_with_eq(sink: &Sink, eq: Span) {
    sink.custom(SyntaxError::misplaced(
        eq,
        &["in"],
        "`=`",
        "a `for` loop takes its range with `in`",
        "write `for i in lo..hi { ... }`",
    ));
}

/// `where a = b`: the condition is kept as `a == b`; the `=` is reported.
pub(crate) fn condition_with_eq(sink: &Sink, eq: Span) {
    sink.custom(SyntaxError::misplaced(
        eq,
        &["=="],
        "`=`",
        "`=` assigns; a condition compares",
        "did you mean `==`?",
    ));
}

/// `layer l(...) y: T`: the result is kept; the missing `->` is reported.
pub(crate) fn result_without_arrow(sink: &Sink, output: &Ident, ty: &Type) {
    let at = output.span.start..output.span.start;
    sink.custom(SyntaxError::misplaced(
        at,
        &["->"],
        &format!("identifier `{}`", output.name),
        "expected `->` here",
        &format!("write `-> {}: {}`", output.name, type_text(ty)),
    ));
}

/// `layer l(...) -> T`: the result has no name for the implementation to bind. The layer is
/// kept with an unnamed result (an empty name, which binds nothing and is never reported).
pub(crate) fn unnamed_result(sink: &Sink, ty: &Type) -> Ident {
    let span = type_span(ty);
    sink.custom(
        SyntaxError::unexpected(
            &format!(
                "expected a name for the layer's result, found type `{}`",
                type_text(ty)
            ),
            span.clone(),
            "the result has no name",
        )
        .with_help(&format!(
            "an implementation binds the result by name: write `-> y: {}`",
            type_text(ty)
        )),
    );
    Ident {
        name: String::new(),
        span: span.start..span.start,
    }
}

/// A written type as source text, for messages (dimensions other than numbers and names are
/// shown as `..`).
fn type_text(ty: &Type) -> String {
    let scalar = |s: &ScalarType| match s {
        ScalarType::F32 => "f32",
        ScalarType::F16 => "f16",
        ScalarType::I32 => "i32",
        ScalarType::U32 => "u32",
        ScalarType::Bool => "bool",
    };
    match ty {
        Type::Scalar(s, _) => scalar(s).to_string(),
        Type::Array { elem, .. } => format!("[{}; ..]", scalar(elem)),
        Type::Stream(s, _) => format!("stream<{}>", scalar(s)),
        Type::Tensor { elem, dims, .. } => {
            let dims: Vec<String> = dims
                .iter()
                .map(|d| match d {
                    Expr::Int(n, _) => n.to_string(),
                    Expr::Name(id) => id.name.clone(),
                    _ => "..".to_string(),
                })
                .collect();
            format!("{}[{}]", scalar(elem), dims.join(", "))
        }
        Type::Error(_) => "T".to_string(),
    }
}

fn type_span(ty: &Type) -> Span {
    match ty {
        Type::Scalar(_, s) | Type::Stream(_, s) | Type::Error(s) => s.clone(),
        Type::Array { span, .. } | Type::Tensor { span, .. } => span.clone(),
    }
}

/// `bind tensor to array|port target [split [...]] [tiles [...]];` — `array`, `port` and
/// `tiles` are contextual.
pub(crate) fn bind(
    sink: &Sink,
    tensor: Ident,
    kind: Ident,
    target: Ident,
    split: Option<Vec<SplitAxis>>,
    tiles: Option<(Ident, Vec<Expr>)>,
    span: Span,
) -> ImplStmt {
    let tiles = match tiles {
        None => None,
        Some((word, counts)) if word.name == "tiles" => Some(counts),
        Some((word, _)) => {
            sink.custom(SyntaxError::unexpected_word(
                &word,
                &["tiles"],
                "after a bind's target (and split) only `tiles [...]` may follow",
            ));
            return ImplStmt::Error;
        }
    };
    let kind = match kind.name.as_str() {
        "array" => BindKind::Array,
        "port" => BindKind::Port,
        _ => {
            sink.custom(SyntaxError::unexpected_word(
                &kind,
                &["array", "port"],
                "a tensor binds to an `array` or a `port`",
            ));
            return ImplStmt::Error;
        }
    };
    ImplStmt::Bind(Bind {
        tensor,
        kind,
        target,
        split,
        tiles,
        span,
    })
}

pub(crate) fn split_axis(id: Ident) -> SplitAxis {
    match id.name.as_str() {
        "rows" => SplitAxis::Rows(id.span),
        "cols" => SplitAxis::Cols(id.span),
        _ => SplitAxis::Unknown(id),
    }
}

/// Assembles a layer implementation; a second `run` in one body is a structural error.
pub(crate) fn layer_impl(
    sink: &Sink,
    modes: Vec<(Mode, Span)>,
    rows: Expr,
    cols: Expr,
    conditions: Vec<Expr>,
    body: Vec<ImplStmt>,
    span: Span,
) -> LayerImpl {
    let mut run: Option<RunKernel> = None;
    let mut binds = Vec::new();
    for stmt in body {
        match stmt {
            ImplStmt::Run(r) if run.is_some() => sink.custom(SyntaxError::structural(
                "a layer implementation runs exactly one kernel: a second `run`",
                r.span,
                "second `run`",
            )),
            ImplStmt::Run(r) => run = Some(r),
            ImplStmt::Bind(b) => binds.push(b),
            ImplStmt::Error => {}
        }
    }
    LayerImpl {
        modes,
        rows,
        cols,
        conditions,
        run,
        binds,
        span,
    }
}

/// `input name = "path";` in a run configuration: the first word must be `input`, the value
/// a string. An input with another value is kept (it is given, with an empty path) so that
/// the checker does not also report it missing.
pub(crate) fn input(
    sink: &Sink,
    word: Ident,
    name: Ident,
    value: Expr,
    span: Span,
) -> Option<RunSetting> {
    if word.name != "input" {
        sink.custom(SyntaxError::unexpected_word(
            &word,
            &["input", "="],
            "a setting is `input NAME = \"path\";` or `key = value;`",
        ));
        return None;
    }
    let path = match value {
        Expr::Str(path, _) => path,
        Expr::Error(_) => String::new(),
        other => {
            sink.custom(
                SyntaxError::unexpected(
                    "expected string literal: an input is read from a `.npy` file",
                    other.span(),
                    "not a string",
                )
                .with_help(&format!(
                    "write the path of a `.npy` file: `input {} = \"{}.npy\";`",
                    name.name, name.name
                )),
            );
            String::new()
        }
    };
    Some(RunSetting::Input { name, path, span })
}

/// The values of a list parsed boxed. The grammar's larger nonterminals are boxed so that
/// the parser's symbols, which it moves at every shift and reduction, stay the size of an
/// expression (`grammar.lalrpop`'s header).
pub(crate) fn unbox<T>(boxed: Vec<Box<T>>) -> Vec<T> {
    boxed.into_iter().map(|b| *b).collect()
}

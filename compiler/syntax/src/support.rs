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

pub(crate) fn binary(op: BinaryOp, lhs: Expr, rhs: Expr, span: Span) -> Expr {
    Expr::Binary {
        op,
        lhs: Box::new(lhs),
        rhs: Box::new(rhs),
        span,
    }
}

/// The optional word after `in p: stream<T> from side`: only `multicast` is allowed.
pub(crate) fn multicast(sink: &Sink, word: Option<Ident>) -> bool {
    match word {
        None => false,
        Some(word) if word.name == "multicast" => true,
        Some(word) => {
            sink.custom(SyntaxError::unexpected_word(
                &word,
                &["multicast", ";"],
                "an input port ends with `multicast` or `;`",
            ));
            false
        }
    }
}

/// `bind tensor to array|port target [split [...]];` — `array` and `port` are contextual.
pub(crate) fn bind(
    sink: &Sink,
    tensor: Ident,
    kind: Ident,
    target: Ident,
    split: Option<Vec<SplitAxis>>,
    span: Span,
) -> ImplStmt {
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

/// `input name = "path";` in a run configuration: the first word must be `input`.
pub(crate) fn input(
    sink: &Sink,
    word: Ident,
    name: Ident,
    path: String,
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
    Some(RunSetting::Input { name, path, span })
}

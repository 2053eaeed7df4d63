//! A layer's output dimension written as an expression (`f32[B, heads * context]`): turned into
//! a [`DimExpr`] of the layer's dimension variables, integer scalar inputs and module constants,
//! with E0442 (unknown name) and E0443 (not integer arithmetic) for what cannot be one. Its
//! value is computed at each call (`Dim::size_at`); docs/language.md §6.1.

use wsel_syntax::ast::{self, BinaryOp, ScalarType, Span};

use crate::check::expr::{Checker, Local, LocalKind};
use crate::diagnostics::{did_you_mean, layers};
use crate::items::ItemKind;
use crate::ty::{Dim, DimExpr, DimOp, Ty, Value, is_int, scalar_name};

/// The dimension `expr` of a layer's output, or `None` after reporting why it is not one.
/// An expression without names is folded to its value.
pub fn output_dim(c: &mut Checker<'_>, expr: &ast::Expr) -> Option<Dim> {
    let e = convert(c, expr)?;
    if !e.names().is_empty() {
        return Some(Dim::Expr(e));
    }
    match Dim::Expr(e).size_at(&|_| None) {
        Ok(Some(n)) => Some(Dim::Known(n)),
        _ => {
            let d = layers::dim_expr_not_positive(c.loc(&expr.span()), None);
            c.report(d);
            None
        }
    }
}

fn convert(c: &mut Checker<'_>, expr: &ast::Expr) -> Option<DimExpr> {
    match expr {
        ast::Expr::Int(n, _) => Some(DimExpr::Const(*n)),
        ast::Expr::Name(id) => name(c, id),
        ast::Expr::Binary { op, lhs, rhs, span } => {
            let op = match op {
                BinaryOp::Add => DimOp::Add,
                BinaryOp::Sub => DimOp::Sub,
                BinaryOp::Mul => DimOp::Mul,
                BinaryOp::Div => DimOp::Div,
                BinaryOp::Rem => DimOp::Rem,
                _ => return not_integer(c, span, "it has a comparison or logical operator"),
            };
            let (a, b) = (convert(c, lhs), convert(c, rhs));
            Some(DimExpr::Bin(op, Box::new(a?), Box::new(b?)))
        }
        ast::Expr::Float(_, span) => not_integer(c, span, "it has a float literal"),
        ast::Expr::Bool(_, span) => not_integer(c, span, "it has a `bool` literal"),
        other => not_integer(c, &other.span(), "only `+ - * / %` of integers are"),
    }
}

/// A name in a dimension expression: a dimension variable or integer scalar input of the
/// layer, or a module constant (folded to its value).
fn name(c: &mut Checker<'_>, id: &ast::Ident) -> Option<DimExpr> {
    if let Some(b) = c.lookup(&id.name).cloned() {
        let def = c.loc(&b.def);
        c.record_use(&id.span, def);
        return match b.local {
            Local::Value {
                kind: LocalKind::Dim | LocalKind::Param,
                ty: Ty::Scalar(ty),
                ..
            } if is_int(ty) => {
                c.record_type(&id.span, &Ty::Scalar(ty));
                Some(DimExpr::Name(id.name.clone()))
            }
            Local::Value {
                ty: Ty::Scalar(ty), ..
            } => not_integer(
                c,
                &id.span,
                &format!("`{}` is a `{}`", id.name, scalar_name(ty)),
            ),
            _ => not_integer(c, &id.span, &format!("`{}` is not a value", id.name)),
        };
    }
    let is_const = c
        .module
        .get(&id.name)
        .is_some_and(|i| i.kind(c.db) == ItemKind::Const);
    if is_const {
        let typed = c.expect_const(
            &ast::Expr::Name(id.clone()),
            ScalarType::U32,
            "a tensor dimension",
        );
        return typed.value.and_then(Value::as_size).map(DimExpr::Const);
    }
    let names: Vec<String> = c
        .scopes
        .iter()
        .flatten()
        .filter(|b| matches!(b.local, Local::Value { .. }))
        .map(|b| b.name.clone())
        .collect();
    let help = did_you_mean(&id.name, names.iter().map(String::as_str))
        .map(|s| format!("did you mean `{s}`?"));
    let d = layers::dim_expr_unknown_name(c.loc(&id.span), &id.name, help);
    c.report(d);
    None
}

fn not_integer(c: &mut Checker<'_>, span: &Span, what: &str) -> Option<DimExpr> {
    let d = layers::dim_expr_not_integer(c.loc(span), what);
    c.report(d);
    None
}

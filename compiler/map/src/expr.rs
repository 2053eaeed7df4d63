//! Small helpers over compile-time expressions: which names one mentions, how it reads, and
//! the environment that evaluates it for a candidate region size.

use std::collections::BTreeMap;
use std::fmt::Write;

use wsel_ir::graph::{CBinOp, CExpr, CValue};

/// Whether `e` mentions the variable `name`.
pub(crate) fn mentions(e: &CExpr, name: &str) -> bool {
    match e {
        CExpr::Int(_) | CExpr::Float(_) | CExpr::Bool(_) => false,
        CExpr::Var(v) => v == name,
        CExpr::Neg(a) | CExpr::Not(a) => mentions(a, name),
        CExpr::Binary(_, a, b) | CExpr::Min(a, b) | CExpr::Max(a, b) => {
            mentions(a, name) || mentions(b, name)
        }
    }
}

/// The expression as a person would write it (fully parenthesised inside).
pub(crate) fn show(e: &CExpr) -> String {
    let mut out = String::new();
    write_expr(&mut out, e, true);
    out
}

fn write_expr(out: &mut String, e: &CExpr, top: bool) {
    match e {
        CExpr::Int(v) => {
            let _ = write!(out, "{v}");
        }
        CExpr::Float(v) => {
            let _ = write!(out, "{v:?}");
        }
        CExpr::Bool(v) => {
            let _ = write!(out, "{v}");
        }
        CExpr::Var(v) => out.push_str(v),
        CExpr::Neg(a) => {
            out.push('-');
            write_expr(out, a, false);
        }
        CExpr::Not(a) => {
            out.push('!');
            write_expr(out, a, false);
        }
        CExpr::Min(a, b) | CExpr::Max(a, b) => {
            out.push_str(if matches!(e, CExpr::Min(..)) {
                "min("
            } else {
                "max("
            });
            write_expr(out, a, true);
            out.push_str(", ");
            write_expr(out, b, true);
            out.push(')');
        }
        CExpr::Binary(op, a, b) => {
            if !top {
                out.push('(');
            }
            write_expr(out, a, false);
            let _ = write!(out, " {} ", op_text(*op));
            write_expr(out, b, false);
            if !top {
                out.push(')');
            }
        }
    }
}

fn op_text(op: CBinOp) -> &'static str {
    match op {
        CBinOp::Add => "+",
        CBinOp::Sub => "-",
        CBinOp::Mul => "*",
        CBinOp::Div => "/",
        CBinOp::Rem => "%",
        CBinOp::Eq => "==",
        CBinOp::Ne => "!=",
        CBinOp::Lt => "<",
        CBinOp::Le => "<=",
        CBinOp::Gt => ">",
        CBinOp::Ge => ">=",
        CBinOp::And => "&&",
        CBinOp::Or => "||",
    }
}

/// The names a layer call's expressions may mention: its dimension variables and the names
/// of its free region sides, bound to a candidate size.
pub(crate) struct Env<'a> {
    pub dims: &'a BTreeMap<String, u64>,
    pub rows_name: Option<&'a str>,
    pub cols_name: Option<&'a str>,
    pub rows: u32,
    pub cols: u32,
}

impl Env<'_> {
    pub(crate) fn lookup(&self, name: &str) -> Option<CValue> {
        if self.rows_name == Some(name) {
            return Some(CValue::Int(i64::from(self.rows)));
        }
        if self.cols_name == Some(name) {
            return Some(CValue::Int(i64::from(self.cols)));
        }
        self.dims
            .get(name)
            .and_then(|&v| i64::try_from(v).ok())
            .map(CValue::Int)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bin(op: CBinOp, a: CExpr, b: CExpr) -> CExpr {
        CExpr::Binary(op, Box::new(a), Box::new(b))
    }

    #[test]
    fn shows_and_finds_names() {
        let e = bin(
            CBinOp::Eq,
            bin(CBinOp::Rem, CExpr::Var("N".into()), CExpr::Var("R".into())),
            CExpr::Int(0),
        );
        assert_eq!(show(&e), "(N % R) == 0");
        assert!(mentions(&e, "R"));
        assert!(!mentions(&e, "C"));
    }
}

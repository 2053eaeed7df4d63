//! Compile-time expressions of layers (`where` conditions, kernel arguments, region sizes,
//! costs, array lengths) as `CExpr`: names of dimension variables and region sizes stay
//! variables, module constants become literals, and kernel parameters can be replaced by the
//! expressions a `run` gives them. [`simplify`] folds what has no variables in it.

use std::collections::{BTreeMap, BTreeSet};

use wsel_ir::graph::{CBinOp, CEvalError, CExpr, CValue};
use wsel_sema::items::ModuleScope;
use wsel_sema::ty::Value;
use wsel_sema::{Db, ItemKind, const_value};
use wsel_syntax::ast::{self, BinaryOp, ScalarType, UnaryOp};

/// Converts layer-level AST expressions to `CExpr`.
pub struct Converter<'a, 'db> {
    pub db: &'db dyn Db,
    /// The module scope of the file the expressions are written in.
    pub module: &'db ModuleScope<'db>,
    /// What a name stands for (a variable or a substituted expression); module constants are
    /// looked up when this gives `None`.
    pub names: &'a dyn Fn(&str) -> Option<CExpr>,
    /// The concrete value of a variable, where known (dimension variables at one call), for
    /// folding the casts `CExpr` cannot express.
    pub values: &'a dyn Fn(&str) -> Option<CValue>,
}

impl Converter<'_, '_> {
    /// The `CExpr` of `expr`, or why it has none.
    pub fn convert(&self, expr: &ast::Expr) -> Result<CExpr, String> {
        Ok(match expr {
            ast::Expr::Int(v, _) => {
                CExpr::Int(i64::try_from(*v).map_err(|_| format!("the literal {v} is too large"))?)
            }
            ast::Expr::Float(v, _) => CExpr::Float(*v),
            ast::Expr::Bool(v, _) => CExpr::Bool(*v),
            ast::Expr::Name(id) => match (self.names)(&id.name) {
                Some(e) => e,
                None => self.module_const(&id.name)?,
            },
            // `pe.row`, `region.cols`: a variable where `names` gives one (a switch's start).
            ast::Expr::Field { base, field, .. } => match &**base {
                ast::Expr::Name(b) => (self.names)(&format!("{}.{}", b.name, field.name))
                    .ok_or_else(|| {
                        format!("`{}.{}` is not a compile-time value", b.name, field.name)
                    })?,
                _ => return Err("this is not a compile-time expression".into()),
            },
            ast::Expr::Unary { op, operand, .. } => {
                let inner = Box::new(self.convert(operand)?);
                match op {
                    UnaryOp::Neg => CExpr::Neg(inner),
                    UnaryOp::Not => CExpr::Not(inner),
                }
            }
            ast::Expr::Binary { op, lhs, rhs, .. } => CExpr::Binary(
                cbin_op(*op),
                Box::new(self.convert(lhs)?),
                Box::new(self.convert(rhs)?),
            ),
            ast::Expr::Call { callee, args, .. }
                if (callee.name == "max" || callee.name == "min") && args.len() == 2 =>
            {
                let a = Box::new(self.convert(&args[0])?);
                let b = Box::new(self.convert(&args[1])?);
                if callee.name == "max" {
                    CExpr::Max(a, b)
                } else {
                    CExpr::Min(a, b)
                }
            }
            ast::Expr::Call { callee, args, .. } if callee.name == "select" && args.len() == 3 => {
                let [c, a, b] = [&args[0], &args[1], &args[2]].map(|a| self.convert(a));
                CExpr::Select(Box::new(c?), Box::new(a?), Box::new(b?))
            }
            ast::Expr::Call { callee, args, .. }
                if (callee.name == "part_len" || callee.name == "part_start")
                    && args.len() == 3 =>
            {
                let [total, parts, index] = [&args[0], &args[1], &args[2]].map(|a| self.convert(a));
                part_expr(callee.name == "part_start", total?, parts?, index?)
            }
            ast::Expr::Cast { value, ty, .. } => {
                let inner = self.convert(value)?;
                let value = inner.eval(self.values).map_err(|_| {
                    "a cast of an expression that depends on the region size cannot be expressed"
                        .to_string()
                })?;
                cast(value, *ty)
            }
            _ => return Err("this is not a compile-time expression".into()),
        })
    }

    fn module_const(&self, name: &str) -> Result<CExpr, String> {
        let item = self
            .module
            .get(name)
            .filter(|i| i.kind(self.db) == ItemKind::Const)
            .ok_or_else(|| format!("`{name}` is not a compile-time value"))?;
        match const_value(self.db, item).value {
            Some(Value::Int(v)) => i64::try_from(v)
                .map(CExpr::Int)
                .map_err(|_| format!("`{name}` is too large")),
            Some(Value::Float(v)) => Ok(CExpr::Float(v)),
            Some(Value::Bool(v)) => Ok(CExpr::Bool(v)),
            None => Err(format!("the constant `{name}` has no value")),
        }
    }
}

/// What a layer's names stand for at one call: its dimension variables (by name; `dims`
/// gives the values known at the call) and its scalar inputs' values.
#[derive(Debug, Clone, Copy)]
pub struct LayerNames<'a> {
    pub dim_vars: &'a [String],
    pub dims: &'a BTreeMap<String, u64>,
    pub scalars: &'a [(String, Value)],
}

impl LayerNames<'_> {
    /// The literal a scalar input stands for.
    fn scalar(&self, name: &str) -> Option<CExpr> {
        let (_, value) = self.scalars.iter().find(|(n, _)| n == name)?;
        cvalue(*value).map(literal)
    }
}

/// A checked compile-time value as the layer graph holds it (`None`: an integer beyond 64
/// bits, which no scalar type holds).
pub fn cvalue(value: Value) -> Option<CValue> {
    Some(match value {
        Value::Int(v) => CValue::Int(i64::try_from(v).ok()?),
        Value::Float(v) => CValue::Float(v),
        Value::Bool(v) => CValue::Bool(v),
    })
}

/// The expression of a value.
pub fn literal(value: CValue) -> CExpr {
    match value {
        CValue::Int(v) => CExpr::Int(v),
        CValue::Float(v) => CExpr::Float(v),
        CValue::Bool(v) => CExpr::Bool(v),
    }
}

/// `part_len(total, parts, index)` as `(total + parts - 1 - index) / parts`, or
/// `part_start(...)` as `index * (total / parts) + min(index, total % parts)`: the rule of
/// uneven splits (`docs/mapping.md` §4) in operations `CExpr` has.
fn part_expr(start: bool, total: CExpr, parts: CExpr, index: CExpr) -> CExpr {
    let bin = |op, a: CExpr, b: CExpr| CExpr::Binary(op, Box::new(a), Box::new(b));
    if start {
        let size = bin(CBinOp::Div, total.clone(), parts.clone());
        let extra = bin(CBinOp::Rem, total, parts);
        let before = CExpr::Min(Box::new(index.clone()), Box::new(extra));
        bin(CBinOp::Add, bin(CBinOp::Mul, index, size), before)
    } else {
        let rounded = bin(
            CBinOp::Sub,
            bin(CBinOp::Add, total, parts.clone()),
            CExpr::Int(1),
        );
        bin(CBinOp::Div, bin(CBinOp::Sub, rounded, index), parts)
    }
}

/// Converts an expression of a layer (cost entry, region size, `where` condition, kernel
/// argument): the layer's dimension variables and the region names `regions` stay
/// variables, scalar inputs become their values at the call, and casts are folded with the
/// values the dimension variables have at the call. `module` is the scope of the layer's
/// file.
pub fn convert_layer_expr<'db>(
    db: &'db dyn Db,
    module: &'db ModuleScope<'db>,
    layer: LayerNames<'_>,
    regions: &[String],
    expr: &ast::Expr,
) -> Result<CExpr, String> {
    let names = |name: &str| {
        if layer.dim_vars.iter().any(|d| d == name) || regions.iter().any(|r| r == name) {
            return Some(CExpr::Var(name.to_string()));
        }
        layer.scalar(name)
    };
    let values = |name: &str| dim_value(layer.dims, name);
    let converter = Converter {
        db,
        module,
        names: &names,
        values: &values,
    };
    converter.convert(expr).map(|e| simplify(&e))
}

/// The value of the dimension variable `name` in `dims`.
pub fn dim_value(dims: &BTreeMap<String, u64>, name: &str) -> Option<CValue> {
    dims.get(name).map(|v| CValue::Int(*v as i64))
}

/// Why a compile-time expression has no value, in words.
pub fn eval_reason(error: CEvalError) -> String {
    match error {
        CEvalError::UnknownName(n) => format!("`{n}` has no value"),
        CEvalError::DivisionByZero => "it divides by zero".into(),
        CEvalError::Overflow => "it overflows".into(),
        CEvalError::TypeMismatch => "its operands have different types".into(),
    }
}

fn cast(value: CValue, to: ScalarType) -> CExpr {
    match (value, to) {
        (CValue::Int(v), ScalarType::F32 | ScalarType::F16) => CExpr::Float(v as f64),
        (CValue::Float(v), ScalarType::I32 | ScalarType::U32) => CExpr::Int(v.trunc() as i64),
        (CValue::Int(v), _) => CExpr::Int(v),
        (CValue::Float(v), _) => CExpr::Float(v),
        (CValue::Bool(v), _) => CExpr::Bool(v),
    }
}

/// The `CExpr` operator of a source operator.
pub fn cbin_op(op: BinaryOp) -> CBinOp {
    match op {
        BinaryOp::Add => CBinOp::Add,
        BinaryOp::Sub => CBinOp::Sub,
        BinaryOp::Mul => CBinOp::Mul,
        BinaryOp::Div => CBinOp::Div,
        BinaryOp::Rem => CBinOp::Rem,
        BinaryOp::Eq => CBinOp::Eq,
        BinaryOp::Ne => CBinOp::Ne,
        BinaryOp::Lt => CBinOp::Lt,
        BinaryOp::Le => CBinOp::Le,
        BinaryOp::Gt => CBinOp::Gt,
        BinaryOp::Ge => CBinOp::Ge,
        BinaryOp::And => CBinOp::And,
        BinaryOp::Or => CBinOp::Or,
    }
}

/// The names `expr` mentions.
pub fn free_vars(expr: &CExpr) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    collect_vars(expr, &mut out);
    out
}

fn collect_vars(expr: &CExpr, out: &mut BTreeSet<String>) {
    match expr {
        CExpr::Int(_) | CExpr::Float(_) | CExpr::Bool(_) => {}
        CExpr::Var(name) => {
            out.insert(name.clone());
        }
        CExpr::Neg(e) | CExpr::Not(e) => collect_vars(e, out),
        CExpr::Binary(_, a, b) | CExpr::Min(a, b) | CExpr::Max(a, b) => {
            collect_vars(a, out);
            collect_vars(b, out);
        }
        CExpr::Select(c, a, b) => {
            collect_vars(c, out);
            collect_vars(a, out);
            collect_vars(b, out);
        }
    }
}

/// `expr` with every variable-free sub-expression that evaluates replaced by its value, and
/// the integer identities `x + 0`, `0 + x`, `x - 0`, `x * 1`, `1 * x`, `x / 1` removed.
pub fn simplify(expr: &CExpr) -> CExpr {
    let simplified = match expr {
        CExpr::Int(_) | CExpr::Float(_) | CExpr::Bool(_) | CExpr::Var(_) => return expr.clone(),
        CExpr::Neg(e) => CExpr::Neg(Box::new(simplify(e))),
        CExpr::Not(e) => CExpr::Not(Box::new(simplify(e))),
        CExpr::Min(a, b) => CExpr::Min(Box::new(simplify(a)), Box::new(simplify(b))),
        CExpr::Max(a, b) => CExpr::Max(Box::new(simplify(a)), Box::new(simplify(b))),
        CExpr::Select(c, a, b) => CExpr::Select(
            Box::new(simplify(c)),
            Box::new(simplify(a)),
            Box::new(simplify(b)),
        ),
        CExpr::Binary(op, a, b) => {
            let (a, b) = (simplify(a), simplify(b));
            match (op, &a, &b) {
                (CBinOp::Add | CBinOp::Sub, _, CExpr::Int(0)) => return a,
                (CBinOp::Add, CExpr::Int(0), _) => return b,
                (CBinOp::Mul | CBinOp::Div, _, CExpr::Int(1)) => return a,
                (CBinOp::Mul, CExpr::Int(1), _) => return b,
                _ => CExpr::Binary(*op, Box::new(a), Box::new(b)),
            }
        }
    };
    if free_vars(&simplified).is_empty()
        && let Ok(value) = simplified.eval(&|_| None)
    {
        return literal(value);
    }
    simplified
}

/// The addends of `expr` (`a + b + c` gives `a`, `b`, `c`).
fn flatten_sum(expr: CExpr, out: &mut Vec<CExpr>) {
    match expr {
        CExpr::Binary(CBinOp::Add, a, b) => {
            flatten_sum(*a, out);
            flatten_sum(*b, out);
        }
        other => out.push(other),
    }
}

/// The sum of `terms`, simplified: equal terms are counted (`M / C + 2 * (M / C)` is
/// `3 * (M / C)`), in order of first appearance, and the constant terms are added into one last
/// term.
pub fn sum(terms: &[CExpr]) -> CExpr {
    let mut constant: i64 = 0;
    let mut counted: Vec<(i64, CExpr)> = Vec::new();
    let mut addends = Vec::new();
    for term in terms {
        flatten_sum(simplify(term), &mut addends);
    }
    for term in addends {
        let (count, term) = match term {
            CExpr::Int(v) if constant.checked_add(v).is_some() => {
                constant += v;
                continue;
            }
            CExpr::Binary(CBinOp::Mul, a, b) => match (*a, *b) {
                (CExpr::Int(k), t) | (t, CExpr::Int(k)) => (k, t),
                (a, b) => (1, CExpr::Binary(CBinOp::Mul, Box::new(a), Box::new(b))),
            },
            other => (1, other),
        };
        match counted.iter_mut().find(|(_, t)| *t == term) {
            Some((n, _)) if n.checked_add(count).is_some() => *n += count,
            _ => counted.push((count, term)),
        }
    }
    let mut out: Option<CExpr> = None;
    for (count, term) in counted {
        let term = match count {
            1 => term,
            k => CExpr::Binary(CBinOp::Mul, Box::new(CExpr::Int(k)), Box::new(term)),
        };
        out = Some(match out {
            None => term,
            Some(acc) => CExpr::Binary(CBinOp::Add, Box::new(acc), Box::new(term)),
        });
    }
    match out {
        None => CExpr::Int(constant),
        Some(acc) if constant == 0 => acc,
        Some(acc) => CExpr::Binary(CBinOp::Add, Box::new(acc), Box::new(CExpr::Int(constant))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(name: &str) -> CExpr {
        CExpr::Var(name.into())
    }

    fn bin(op: CBinOp, a: CExpr, b: CExpr) -> CExpr {
        CExpr::Binary(op, Box::new(a), Box::new(b))
    }

    #[test]
    fn sums_count_equal_terms_and_add_constants() {
        let n = bin(CBinOp::Div, var("N"), CExpr::Int(2));
        let twice_plus_one = bin(
            CBinOp::Add,
            bin(CBinOp::Mul, n.clone(), CExpr::Int(2)),
            CExpr::Int(1),
        );
        let total = sum(&[twice_plus_one, n.clone(), CExpr::Int(1)]);
        let three_n = bin(CBinOp::Mul, CExpr::Int(3), n);
        assert_eq!(total, bin(CBinOp::Add, three_n, CExpr::Int(2)));
        assert_eq!(sum(&[]), CExpr::Int(0));
        assert_eq!(sum(&[var("a"), CExpr::Int(0)]), var("a"));
    }
}

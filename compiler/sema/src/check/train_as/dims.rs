//! The shapes of a `train as` clause's calls, in the terms of the layer that declares it:
//! each dimension a size, one of the layer's dimension variables or scalar inputs, or an
//! expression of those (`3 * N`, after `pack_qkv`). Two dimensions are taken as the same when
//! they are equal at every one of [`TRIALS`] sets of sizes: a test by evaluation, which two
//! different expressions pass only if they agree at all of those sizes. Each call's sizes are
//! compared again when pipelined training lowers the clause (`wsel_lower`, E0453 at the call).

use std::collections::BTreeMap;

use crate::ty::{Dim, DimExpr, TensorType};

/// The sizes the clause's names take when two dimensions are compared: every name a multiple
/// of 2520 (divisible by 1 to 10, so a division by a written constant is whole), the names
/// given different multiples in each trial.
const TRIALS: usize = 4;
const FACTORS: [i128; 7] = [1, 2, 3, 5, 7, 11, 13];

/// The dimension as an expression of the layer's names.
fn expr_of(dim: &Dim) -> DimExpr {
    match dim {
        Dim::Known(n) => DimExpr::Const(*n),
        Dim::Var(v) => DimExpr::Name(v.clone()),
        Dim::Expr(e) => e.clone(),
    }
}

/// Whether `a` and `b` are the same dimension at every size of the layer's names.
pub fn same_dim(a: &Dim, b: &Dim) -> bool {
    if a == b {
        return true;
    }
    let (a, b) = (expr_of(a), expr_of(b));
    let mut names: Vec<&str> = a.names();
    names.extend(b.names());
    (0..TRIALS).all(|t| {
        let value = |name: &str| {
            let i = names.iter().position(|n| *n == name)?;
            Some(2520 * FACTORS[(i + t) % FACTORS.len()])
        };
        matches!((a.eval(&value), b.eval(&value)), (Ok(x), Ok(y)) if x == y)
    })
}

/// Whether two tensor types are the same in the layer's terms.
pub fn same_type(a: &TensorType, b: &TensorType) -> bool {
    a.elem == b.elem
        && a.dims.len() == b.dims.len()
        && a.dims.iter().zip(&b.dims).all(|(x, y)| same_dim(x, y))
}

/// Binds the called layer's input type `expected` to the argument type `found`, extending
/// `bindings` (the called layer's dimension variables in the declaring layer's terms); `false`
/// when they do not fit.
pub fn bind(
    expected: &TensorType,
    found: &TensorType,
    bindings: &mut BTreeMap<String, Dim>,
) -> bool {
    if expected.elem != found.elem || expected.dims.len() != found.dims.len() {
        return false;
    }
    expected.dims.iter().zip(&found.dims).all(|(e, f)| match e {
        Dim::Var(v) => match bindings.get(v) {
            Some(bound) => same_dim(bound, f),
            None => {
                bindings.insert(v.clone(), f.clone());
                true
            }
        },
        other => same_dim(other, f),
    })
}

/// The called layer's result type in the declaring layer's terms: its dimension variables
/// bound by the arguments, its scalar inputs' names by `scalar` (the declaring layer's scalar
/// input it is given, or a constant).
pub fn result_type(
    out: &TensorType,
    bindings: &BTreeMap<String, Dim>,
    scalar: &dyn Fn(&str) -> Option<DimExpr>,
) -> TensorType {
    let name = |n: &str| match bindings.get(n) {
        Some(d) => Some(expr_of(d)),
        None => scalar(n),
    };
    let dims = out
        .dims
        .iter()
        .map(|d| match d {
            Dim::Known(_) => d.clone(),
            Dim::Var(v) => match name(v) {
                Some(DimExpr::Const(n)) => Dim::Known(n),
                Some(DimExpr::Name(n)) => Dim::Var(n),
                Some(e) => Dim::Expr(e),
                None => d.clone(),
            },
            Dim::Expr(e) => Dim::Expr(substitute(e, &name)),
        })
        .collect();
    TensorType {
        elem: out.elem,
        dims,
    }
}

fn substitute(e: &DimExpr, name: &dyn Fn(&str) -> Option<DimExpr>) -> DimExpr {
    match e {
        DimExpr::Const(_) => e.clone(),
        DimExpr::Name(n) => name(n).unwrap_or_else(|| e.clone()),
        DimExpr::Bin(op, a, b) => DimExpr::Bin(
            *op,
            Box::new(substitute(a, name)),
            Box::new(substitute(b, name)),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ty::DimOp;

    fn bin(op: DimOp, a: DimExpr, b: DimExpr) -> Dim {
        Dim::Expr(DimExpr::Bin(op, Box::new(a), Box::new(b)))
    }

    #[test]
    fn a_third_of_three_n_is_n_and_a_third_of_m_is_not() {
        let three_n = DimExpr::Bin(
            DimOp::Mul,
            Box::new(DimExpr::Const(3)),
            Box::new(DimExpr::Name("N".into())),
        );
        let n = Dim::Var("N".into());
        assert!(same_dim(&bin(DimOp::Div, three_n, DimExpr::Const(3)), &n));
        let m = DimExpr::Name("M".into());
        assert!(!same_dim(&bin(DimOp::Div, m, DimExpr::Const(3)), &n));
        assert!(!same_dim(&Dim::Var("M".into()), &n));
        assert!(same_dim(&Dim::Known(4), &Dim::Known(4)));
    }
}

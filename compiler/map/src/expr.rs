//! Small helpers over compile-time expressions: which names one mentions, how it reads, and
//! the environment that evaluates it for a candidate region size.

use std::collections::BTreeMap;

use wsel_ir::graph::{CEvalError, CExpr, CValue, LayerImpl, LayerInstance, RegionSide};

/// Whether `e` mentions the variable `name`.
pub(crate) fn mentions(e: &CExpr, name: &str) -> bool {
    match e {
        CExpr::Int(_) | CExpr::Float(_) | CExpr::Bool(_) => false,
        CExpr::Var(v) => v == name,
        CExpr::Neg(a) | CExpr::Not(a) => mentions(a, name),
        CExpr::Binary(_, a, b) | CExpr::Min(a, b) | CExpr::Max(a, b) => {
            mentions(a, name) || mentions(b, name)
        }
        CExpr::Select(c, a, b) => mentions(c, name) || mentions(a, name) || mentions(b, name),
    }
}

/// The expression as a person would write it (the IR's own printer).
pub(crate) fn show(e: &CExpr) -> String {
    wsel_ir::print_graph::cexpr_text(e)
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

impl<'a> Env<'a> {
    /// The layer's dimensions alone, for expressions that mention no region side.
    pub(crate) fn dims_only(dims: &'a BTreeMap<String, u64>) -> Env<'a> {
        Env {
            dims,
            rows_name: None,
            cols_name: None,
            rows: 1,
            cols: 1,
        }
    }

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

/// The names of an implementation's free region sides (rows, columns); a fixed side has none.
pub(crate) fn side_names(imp: &LayerImpl) -> (Option<&str>, Option<&str>) {
    fn name(s: &RegionSide) -> Option<&str> {
        match s {
            RegionSide::Free(n) => Some(n.as_str()),
            RegionSide::Fixed(_) => None,
        }
    }
    (name(&imp.rows), name(&imp.cols))
}

/// The kernel arguments implementation `imp` of `layer` runs with on a logical `rows × cols`
/// region, evaluated; or the first argument that cannot be evaluated, with why.
pub fn kernel_args(
    layer: &LayerInstance,
    imp: &LayerImpl,
    rows: u32,
    cols: u32,
) -> Result<Vec<(String, CValue)>, (String, CEvalError)> {
    let env = region_env(layer, imp, rows, cols);
    imp.kernel_args
        .iter()
        .map(|(name, e)| {
            e.eval(&|s| env.lookup(s))
                .map(|v| (name.clone(), v))
                .map_err(|err| (name.clone(), err))
        })
        .collect()
}

/// Whether every kernel argument of `imp` evaluates on a logical `rows × cols` region:
/// [`kernel_args`]`.is_ok()` without building the arguments (the region choice asks it of
/// every size it tries).
pub(crate) fn kernel_args_evaluate(
    layer: &LayerInstance,
    imp: &LayerImpl,
    rows: u32,
    cols: u32,
) -> bool {
    let env = region_env(layer, imp, rows, cols);
    imp.kernel_args
        .iter()
        .all(|(_, e)| e.eval(&|s| env.lookup(s)).is_ok())
}

/// The names of `layer`'s expressions bound for implementation `imp` on a `rows × cols`
/// region.
pub(crate) fn region_env<'a>(
    layer: &'a LayerInstance,
    imp: &'a LayerImpl,
    rows: u32,
    cols: u32,
) -> Env<'a> {
    let names = side_names(imp);
    Env {
        dims: &layer.dims,
        rows_name: names.0,
        cols_name: names.1,
        rows,
        cols,
    }
}

/// Every port's distance (`by k`; `None` for a neighbour port) on the region `env`
/// describes, or why one has none: it cannot be evaluated, or it is not at least 1.
pub(crate) fn port_distances(imp: &LayerImpl, env: &Env<'_>) -> Result<Vec<Option<u32>>, String> {
    imp.ports
        .iter()
        .map(|p| {
            let Some(e) = &p.distance else {
                return Ok(None);
            };
            match e.eval_int(&|s| env.lookup(s)) {
                Ok(d) if d >= 1 => u32::try_from(d).map(Some).map_err(|_| {
                    format!(
                        "the distance `{}` of port `{}` is {d}, too far",
                        show(e),
                        p.name
                    )
                }),
                Ok(d) => Err(format!(
                    "the distance `{}` of port `{}` is {d}: a port's distance is at least 1",
                    show(e),
                    p.name
                )),
                Err(err) => Err(format!(
                    "the distance `{}` of port `{}` cannot be evaluated ({err:?})",
                    show(e),
                    p.name
                )),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wsel_ir::graph::CBinOp;

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
        assert_eq!(show(&e), "N % R == 0");
        assert!(mentions(&e, "R"));
        assert!(!mentions(&e, "C"));
    }

    /// `dense` (64 → 32, 8 samples) with a kernel argument `N / (R - 2)` added: it has no
    /// value on 2 rows (division by zero) and one on 1 or 4; the check without the arguments
    /// says so exactly where building them fails.
    #[test]
    fn kernel_arguments_evaluate_where_they_can_be_built() {
        let graph = crate::fixtures::mlp(&[64, 32], 8, false);
        let mut layer = graph.layers[0].clone();
        let imp = &mut layer.impls[1];
        let r_less_2 = bin(CBinOp::Sub, CExpr::Var("R".into()), CExpr::Int(2));
        imp.kernel_args.push((
            "q".into(),
            bin(CBinOp::Div, CExpr::Var("N".into()), r_less_2),
        ));
        let imp = &layer.impls[1];
        for (rows, cols, evaluates) in [(1, 1, true), (2, 4, false), (4, 8, true)] {
            assert_eq!(kernel_args_evaluate(&layer, imp, rows, cols), evaluates);
            assert_eq!(kernel_args(&layer, imp, rows, cols).is_ok(), evaluates);
        }
    }
}

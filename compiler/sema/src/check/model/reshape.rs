//! `reshape(x, d1, ..., dk)` in a model (docs/language.md §7.1): the same per-sample features
//! read with other feature dimensions. A relabelling, not a layer: no node is added to the
//! graph, the value keeps its source and takes the new type, and the layer that reads it sees
//! that type (lowering keeps the two shapes apart and makes the parts line up, §7.1). It is
//! the built-in meaning of the name `reshape` where no item of that name is in scope.

use wsel_syntax::ast::{self, ScalarType, Span};

use super::{ModelChecker, TensorValue};
use crate::analysis::ValueRef;
use crate::diagnostics::models;
use crate::ty::{Dim, TensorType, Ty, Value};

/// The built-in's name.
pub(super) const RESHAPE: &str = "reshape";

impl ModelChecker<'_> {
    /// Whether the call of `callee` is the built-in `reshape`: no tensor or item has the name.
    pub(super) fn is_reshape(&self, callee: &ast::Ident) -> bool {
        callee.name == RESHAPE
            && self.c.lookup(RESHAPE).is_none()
            && self.c.module.get(RESHAPE).is_none()
    }

    /// Checks `reshape(x, dims...)`: the relabelled value, or `None` after a report (E0454
    /// for a different feature count, E0455 for a model input or param, E0456 for arguments
    /// that are not a tensor and feature dimensions).
    pub(super) fn reshape(
        &mut self,
        args: &[ast::Expr],
        named: &[(ast::Ident, ast::Expr)],
        span: &Span,
    ) -> Option<TensorValue> {
        for (name, value) in named {
            self.c.expr(value, None);
            let d = models::reshape_args(self.c.loc(&name.span), "takes no named arguments");
            self.c.report(d);
        }
        let Some((tensor, dims)) = args.split_first().filter(|(_, d)| !d.is_empty()) else {
            let d = models::reshape_args(
                self.c.loc(span),
                "takes a tensor and its new feature dimensions",
            );
            self.c.report(d);
            return None;
        };
        let value = self.value(tensor, None);
        let sizes: Vec<Option<u64>> = dims.iter().map(|d| self.reshape_dim(d)).collect();
        let value = value?;
        if !named.is_empty() {
            return None;
        }
        if value.param_def.is_some() || matches!(value.source, ValueRef::Input(_)) {
            let what = if value.param_def.is_some() {
                "a model `param`"
            } else {
                "a model input"
            };
            let d = models::reshape_not_a_result(self.c.loc(&tensor.span()), what);
            self.c.report(d);
            return None;
        }
        let from = value.ty.clone()?;
        let sizes: Vec<u64> = sizes.into_iter().collect::<Option<_>>()?;
        let sample = from.dims.first()?.clone();
        let to = TensorType {
            elem: from.elem,
            dims: std::iter::once(sample)
                .chain(sizes.iter().map(|&n| Dim::Known(n)))
                .collect(),
        };
        if features(&from) != Some(sizes.iter().product()) {
            let d = models::reshape_count(self.c.loc(span), &from.to_string(), &to.to_string());
            self.c.report(d);
            return None;
        }
        self.c.record_type(span, &Ty::Tensor(to.clone()));
        Some(TensorValue {
            source: value.source,
            ty: Some(to),
            param_def: None,
            relabelled: Some(span.clone()),
        })
    }

    /// A new feature dimension: a positive `u32` known at compile time (E0456 otherwise).
    fn reshape_dim(&mut self, dim: &ast::Expr) -> Option<u64> {
        let typed = self
            .c
            .expect_const(dim, ScalarType::U32, "a reshape's dimension");
        match typed.value {
            Some(Value::Int(n)) if n > 0 => u64::try_from(n).ok(),
            Some(_) => {
                let d = models::reshape_args(self.c.loc(&dim.span()), "takes positive dimensions");
                self.c.report(d);
                None
            }
            None => None,
        }
    }
}

/// The per-sample feature count of `ty`, when every feature dimension is known.
fn features(ty: &TensorType) -> Option<u64> {
    ty.dims.iter().skip(1).try_fold(1u64, |n, d| match d {
        Dim::Known(k) => n.checked_mul(*k),
        Dim::Var(_) | Dim::Expr(_) => None,
    })
}

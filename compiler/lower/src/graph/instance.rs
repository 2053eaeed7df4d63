//! One layer call as a layer instance: the layer's dimension variables bound to the concrete
//! argument shapes, the output shape, the cost evaluated at those shapes (E0501), and the
//! implementations.

use std::collections::BTreeMap;

use wsel_ir::graph::{CExpr, CValue, LayerCost, LayerInstance, SourceSpan, TensorRef};
use wsel_sema::ty::Dim;
use wsel_sema::{Db, Diagnostic, ItemId, Location, item_ast, layer_signature, module_scope};
use wsel_syntax::ast;

use super::implementation::lower_impl;
use crate::cexpr::Converter;
use crate::diagnostics;
use crate::value::scalar_ty;

/// What lowering one layer's expressions needs.
pub(super) struct LayerCx<'a, 'db> {
    pub db: &'db dyn Db,
    pub layer_file: std::path::PathBuf,
    pub module: &'db wsel_sema::items::ModuleScope<'db>,
    pub dim_vars: &'a [String],
    pub dims: &'a BTreeMap<String, u64>,
    /// The call, where E05xx diagnostics point.
    pub call: Location,
}

impl LayerCx<'_, '_> {
    pub fn loc(&self, span: &ast::Span) -> Location {
        Location {
            file: self.layer_file.clone(),
            span: span.clone(),
        }
    }

    /// The value of a dimension variable at this call.
    pub fn dim_value(&self, name: &str) -> Option<CValue> {
        self.dims.get(name).map(|v| CValue::Int(*v as i64))
    }

    /// Converts a layer expression in which the dimension variables and `regions` are
    /// variables.
    pub fn convert(&self, expr: &ast::Expr, regions: &[String]) -> Result<CExpr, String> {
        let names = |name: &str| {
            (self.dim_vars.iter().any(|d| d == name) || regions.iter().any(|r| r == name))
                .then(|| CExpr::Var(name.to_string()))
        };
        let values = |name: &str| self.dim_value(name);
        let converter = Converter {
            db: self.db,
            module: self.module,
            names: &names,
            values: &values,
        };
        converter.convert(expr).map(|e| crate::cexpr::simplify(&e))
    }
}

/// Lowers the call of `layer` with arguments `args` of shapes `shapes`.
pub(super) fn lower_instance(
    db: &dyn Db,
    layer: ItemId<'_>,
    name: String,
    call: Location,
    args: Vec<TensorRef>,
    shapes: &[Vec<u64>],
    diags: &mut Vec<Diagnostic>,
) -> Option<LayerInstance> {
    let sig = layer_signature(db, layer);
    let Some(ast::Item::Layer(layer_ast)) = item_ast(db, layer) else {
        return None;
    };
    let mut dims: BTreeMap<String, u64> = BTreeMap::new();
    for (input, shape) in sig.inputs.iter().zip(shapes) {
        let Some(ty) = &input.ty else { continue };
        for (dim, n) in ty.dims.iter().zip(shape) {
            if let Dim::Var(v) = dim {
                dims.entry(v.clone()).or_insert(*n);
            }
        }
    }
    let output = sig.output.as_ref()?;
    let output_ty = output.ty.as_ref()?;
    let output_shape = output_ty
        .dims
        .iter()
        .map(|d| match d {
            Dim::Known(n) => *n,
            Dim::Var(v) => dims.get(v).copied().unwrap_or(0),
        })
        .collect();
    let file = layer.file(db);
    let cx = LayerCx {
        db,
        layer_file: file.path(db).clone(),
        module: module_scope(db, file),
        dim_vars: &sig.dim_vars,
        dims: &dims,
        call: call.clone(),
    };
    let cost = lower_cost(&cx, layer_ast, diags);
    let impls = layer_ast
        .impls
        .iter()
        .filter_map(|imp| lower_impl(&cx, imp, diags))
        .collect();
    Some(LayerInstance {
        name,
        layer: sig.name.clone(),
        call: SourceSpan {
            file: call.file,
            span: call.span,
        },
        args,
        arg_names: sig.inputs.iter().map(|i| i.name.clone()).collect(),
        output_name: output.name.clone(),
        output_elem: scalar_ty(output_ty.elem),
        output_shape,
        dims,
        cost,
        impls,
    })
}

/// The cost block evaluated at the call's shapes; an entry without a value is reported
/// (E0501) and counts as 0.
fn lower_cost(cx: &LayerCx<'_, '_>, layer: &ast::Layer, diags: &mut Vec<Diagnostic>) -> LayerCost {
    let mut cost = LayerCost {
        flops: 0,
        weight_bytes: 0,
        activation_bytes: 0,
    };
    let Some(block) = &layer.cost else {
        return cost;
    };
    for (key, expr) in &block.entries {
        let value = cx
            .convert(expr, &[])
            .and_then(|e| e.eval_int(&|n| cx.dim_value(n)).map_err(eval_reason))
            .and_then(|v| u64::try_from(v).map_err(|_| format!("it is negative ({v})")));
        let value = match value {
            Ok(v) => v,
            Err(reason) => {
                diags.push(diagnostics::cost_failed(
                    cx.call.clone(),
                    &key.name,
                    &reason,
                    cx.loc(&expr.span()),
                ));
                continue;
            }
        };
        match key.name.as_str() {
            "flops" => cost.flops = value,
            "weights" => cost.weight_bytes = value,
            "activations" => cost.activation_bytes = value,
            _ => {}
        }
    }
    cost
}

/// Why a compile-time expression has no value, in words.
pub(super) fn eval_reason(error: wsel_ir::graph::CEvalError) -> String {
    match error {
        wsel_ir::graph::CEvalError::UnknownName(n) => format!("`{n}` has no value"),
        wsel_ir::graph::CEvalError::DivisionByZero => "it divides by zero".into(),
        wsel_ir::graph::CEvalError::Overflow => "it overflows".into(),
        wsel_ir::graph::CEvalError::TypeMismatch => "its operands have different types".into(),
    }
}

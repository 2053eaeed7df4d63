//! One layer call as a layer instance: the layer's dimension variables bound to the concrete
//! argument shapes, the output shape, the cost evaluated at those shapes (`cost`; E0501), and the
//! implementations.

use std::collections::BTreeMap;

use wsel_ir::graph::{CExpr, CValue, LayerCost, LayerGraph, LayerInstance, SourceSpan, TensorRef};
use wsel_sema::ty::{Dim, Value};
use wsel_sema::{Db, Diagnostic, ItemId, Location, item_ast, layer_signature, module_scope};
use wsel_syntax::ast;

use super::cost::cost_at;
use super::implementation::lower_impl;
use crate::cexpr::{LayerNames, convert_layer_expr, cvalue, dim_value};
use crate::diagnostics;
use crate::value::scalar_ty;

/// What lowering one layer's expressions needs.
pub(super) struct LayerCx<'a, 'db> {
    pub db: &'db dyn Db,
    pub layer_file: std::path::PathBuf,
    pub module: &'db wsel_sema::items::ModuleScope<'db>,
    pub dim_vars: &'a [String],
    pub dims: &'a BTreeMap<String, u64>,
    /// The layer's scalar inputs at this call.
    pub scalars: &'a [(String, Value)],
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
        dim_value(self.dims, name)
    }

    /// Converts a layer expression in which the dimension variables and `regions` are
    /// variables.
    pub fn convert(&self, expr: &ast::Expr, regions: &[String]) -> Result<CExpr, String> {
        let names = LayerNames {
            dim_vars: self.dim_vars,
            dims: self.dims,
            scalars: self.scalars,
        };
        convert_layer_expr(self.db, self.module, names, regions, expr)
    }
}

/// The tensors of a layer call, with their shapes, and its scalar inputs' values.
pub(super) struct CallArgs<'a> {
    pub tensors: Vec<TensorRef>,
    pub shapes: &'a [Vec<u64>],
    pub scalars: &'a [(String, Value)],
}

/// `call`'s layer call lowered again as `twin` (its held or fused twin), named `name`: the
/// same tensors, their shapes in `graph`, the same call site, and the values `scalars`.
pub(super) fn lower_twin(
    db: &dyn Db,
    graph: &LayerGraph,
    call: &LayerInstance,
    twin: ItemId<'_>,
    name: String,
    scalars: &[(String, Value)],
    diags: &mut Vec<Diagnostic>,
) -> Option<LayerInstance> {
    let shapes: Vec<Vec<u64>> = call
        .args
        .iter()
        .map(|&a| super::shape_of(graph, a))
        .collect();
    let args = CallArgs {
        tensors: call.args.clone(),
        shapes: &shapes,
        scalars,
    };
    let site = Location {
        file: call.call.file.clone(),
        span: call.call.span.clone(),
    };
    lower_instance(db, twin, name, site, args, diags)
}

/// Lowers the call of `layer` with the arguments `args`.
pub(super) fn lower_instance(
    db: &dyn Db,
    layer: ItemId<'_>,
    name: String,
    call: Location,
    args: CallArgs<'_>,
    diags: &mut Vec<Diagnostic>,
) -> Option<LayerInstance> {
    let CallArgs {
        tensors: args,
        shapes,
        scalars,
    } = args;
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
    // The checker evaluated the output's dimension expressions at this call (E0444/E0445
    // otherwise), so they have a value here.
    let value = |name: &str| {
        dims.get(name).map(|&n| i128::from(n)).or_else(|| {
            scalars
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, v)| match v {
                    Value::Int(v) => Some(*v),
                    _ => None,
                })
        })
    };
    let output_shape = output_ty
        .dims
        .iter()
        .map(|d| d.size_at(&value).ok().flatten().unwrap_or(0))
        .collect();
    let file = layer.file(db);
    let cx = LayerCx {
        db,
        layer_file: file.path(db).clone(),
        module: module_scope(db, file),
        dim_vars: &sig.dim_vars,
        dims: &dims,
        scalars,
        call: call.clone(),
    };
    let cost = lower_cost(&cx, layer, diags);
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
        scalars: scalars
            .iter()
            .filter_map(|(name, value)| Some((name.clone(), cvalue(*value)?)))
            .collect(),
        cost,
        impls,
    })
}

/// The cost block evaluated at the call's shapes ([`layer_cost`], the evaluation the language
/// server shows too); an entry without a value is reported (E0501) and counts as 0.
fn lower_cost(cx: &LayerCx<'_, '_>, layer: ItemId<'_>, diags: &mut Vec<Diagnostic>) -> LayerCost {
    let mut cost = LayerCost {
        flops: 0,
        weight_bytes: 0,
        activation_bytes: 0,
    };
    for entry in cost_at(cx.db, layer, cx.dims, cx.scalars) {
        let value = match &entry.value {
            Ok(v) => *v,
            Err(reason) => {
                diags.push(diagnostics::cost_failed(
                    cx.call.clone(),
                    &entry.key,
                    reason,
                    cx.loc(&entry.span),
                ));
                continue;
            }
        };
        match entry.key.as_str() {
            "flops" => cost.flops = value,
            "weights" => cost.weight_bytes = value,
            "activations" => cost.activation_bytes = value,
            _ => {}
        }
    }
    cost
}

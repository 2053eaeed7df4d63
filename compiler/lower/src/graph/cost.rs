//! A layer's `cost` entries evaluated at one call's dimension variables: the one evaluation
//! behind both the layer graph's `LayerCost` (which reports an entry without a value as
//! E0501) and the language server's hover at a call (which shows such an entry as written).

use std::collections::BTreeMap;

use wsel_sema::{Db, ItemId, item_ast, layer_signature, module_scope};
use wsel_syntax::ast::{self, Span};

use wsel_sema::ty::Value;

use crate::cexpr::{LayerNames, convert_layer_expr, dim_value, eval_reason};

/// A layer and the values of those of its dimension variables that are known at a call
/// (sorted by name; a variable that is missing has no value, like the sample dimension `B`
/// of a call the checker saw), and of its scalar inputs.
#[salsa::interned(debug)]
pub struct CostKey<'db> {
    #[returns(copy)]
    pub layer: ItemId<'db>,
    #[returns(ref)]
    pub dims: Vec<(String, u64)>,
    #[returns(ref)]
    pub scalars: Vec<(String, Value)>,
}

/// One entry of a layer's `cost` block at a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CostEntry {
    /// `flops`, `weights`, `activations` (or an unknown key, already reported by the checker).
    pub key: String,
    /// The value, or why it has none at these dimensions (`` `B` has no value``, "it
    /// overflows", "it is negative (-32)", ...).
    pub value: Result<u64, String>,
    /// The entry's expression, in the layer's file.
    pub span: Span,
}

/// The `cost` entries of `key`'s layer, in the order written, evaluated at `key`'s dimensions
/// in 64 bits. Empty when the layer has no cost block.
#[salsa::tracked(returns(ref))]
pub fn layer_cost<'db>(db: &'db dyn Db, key: CostKey<'db>) -> Vec<CostEntry> {
    let layer = key.layer(db);
    let Some(ast::Item::Layer(layer_ast)) = item_ast(db, layer) else {
        return Vec::new();
    };
    let Some(block) = &layer_ast.cost else {
        return Vec::new();
    };
    let dim_vars = &layer_signature(db, layer).dim_vars;
    let module = module_scope(db, layer.file(db));
    let dims: BTreeMap<String, u64> = key.dims(db).iter().cloned().collect();
    let names = LayerNames {
        dim_vars,
        dims: &dims,
        scalars: key.scalars(db),
    };
    block
        .entries
        .iter()
        .map(|(name, expr)| CostEntry {
            key: name.name.clone(),
            value: convert_layer_expr(db, module, names, &[], expr)
                .and_then(|e| e.eval_int(&|n| dim_value(&dims, n)).map_err(eval_reason))
                .and_then(|v| u64::try_from(v).map_err(|_| format!("it is negative ({v})"))),
            span: expr.span(),
        })
        .collect()
}

/// [`layer_cost`] of `layer` at the dimension values `dims` and the scalar inputs' values
/// `scalars`.
pub fn cost_at<'db>(
    db: &'db dyn Db,
    layer: ItemId<'db>,
    dims: &BTreeMap<String, u64>,
    scalars: &[(String, Value)],
) -> &'db [CostEntry] {
    let dims: Vec<(String, u64)> = dims.iter().map(|(n, v)| (n.clone(), *v)).collect();
    layer_cost(db, CostKey::new(db, layer, dims, scalars.to_vec()))
}

//! What the language server says about one layer call in a model: the shapes it binds, its
//! result, the layer's cost entries evaluated at those shapes, and (once the mapping pass
//! exists) how the call maps onto the default target.

use wsel_sema::Db;
use wsel_sema::analysis::CallBinding;
use wsel_sema::check::expr::{Checker, Local, LocalKind};
use wsel_sema::items::{ItemId, ItemKind, item_ast, module_scope};
use wsel_sema::ty::{Dim, Ty, Value};
use wsel_syntax::ast::{self, ScalarType};

use crate::context::FileCtx;

/// One cost entry of a layer at a call: `flops`, `weights` or `activations`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CostFigure {
    pub key: String,
    /// The value at the call's shapes, or `None` when it depends on an unbound dimension.
    pub value: Option<u64>,
    /// The entry as written in the layer (`2 * N * M`).
    pub written: String,
}

/// The layer a call in `ctx` names (as written, so an import alias works).
pub fn called_layer<'db>(ctx: &FileCtx<'db>, callee: &str) -> Option<ItemId<'db>> {
    let item = module_scope(ctx.db, ctx.file).get(callee)?;
    (item.kind(ctx.db) == ItemKind::Layer).then_some(item)
}

/// The layer's `cost` entries evaluated with the call's bound dimension variables.
pub fn call_costs(db: &dyn Db, layer: ItemId<'_>, call: &CallBinding) -> Vec<CostFigure> {
    let Some(ast::Item::Layer(ast_layer)) = item_ast(db, layer) else {
        return Vec::new();
    };
    let Some(cost) = &ast_layer.cost else {
        return Vec::new();
    };
    let file = layer.file(db);
    let text = file.text(db);
    // The layer's own checker resolves module constants; the call's bindings become the
    // values of its dimension variables. Its diagnostics are the layer's, already reported.
    let mut checker = Checker::new(db, file);
    for (name, dim) in &call.dims {
        let value = match dim {
            Dim::Known(n) => Some(Value::Int(i128::from(*n))),
            Dim::Var(_) => None,
        };
        let local = Local::Value {
            kind: LocalKind::Dim,
            ty: Ty::Scalar(ScalarType::U32),
            value,
        };
        let ident = ast::Ident {
            name: name.clone(),
            span: 0..0,
        };
        checker.define(&ident, local, 1);
    }
    cost.entries
        .iter()
        .map(|(key, expr)| {
            let typed = checker.expect_const(expr, ScalarType::U32, "a cost entry");
            CostFigure {
                key: key.name.clone(),
                value: typed.value.and_then(Value::as_size),
                written: text
                    .get(expr.span())
                    .map(crate::context::one_line)
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// The mapping of this call on the default target: region, PE count, SRAM per PE and
/// estimated cycles, as Markdown.
///
/// This is the one place the mapping summary goes. The mapping pass (`compiler/map`) does not
/// exist yet, so there is nothing to show and this returns `None`; it must never invent
/// figures. When the pass exists, call it here for `call` and format its result.
pub fn mapping_summary(_db: &dyn Db, _layer: ItemId<'_>, _call: &CallBinding) -> Option<String> {
    None
}

/// The hover text of a layer call.
pub fn call_hover(ctx: &FileCtx<'_>, callee: &str, call: &CallBinding) -> String {
    let mut out = String::new();
    let layer = called_layer(ctx, callee);
    if let Some(layer) = layer
        && let Some((sig, doc)) = layer_header(ctx.db, layer)
    {
        out.push_str(&format!("```wse\n{sig}\n```\n"));
        if let Some(doc) = doc {
            out.push_str(&format!("\n{doc}\n"));
        }
    } else {
        out.push_str(&format!("layer `{}`\n", call.layer));
    }
    let dims: Vec<String> = call
        .dims
        .iter()
        .map(|(name, dim)| format!("`{name} = {dim}`"))
        .collect();
    out.push_str("\n**This call:** ");
    if !dims.is_empty() {
        out.push_str(&dims.join(", "));
        out.push_str(" → ");
    }
    out.push_str(&format!("`{}`\n", call.result));
    if let Some(layer) = layer {
        let costs = call_costs(ctx.db, layer, call);
        if !costs.is_empty() {
            out.push_str("\n**Cost at these shapes:**\n");
            for c in &costs {
                let (what, unit) = match c.key.as_str() {
                    "flops" => ("flops", " per sample"),
                    "weights" => ("weights", " bytes"),
                    "activations" => ("activations", " bytes per sample"),
                    other => (other, ""),
                };
                match c.value {
                    Some(v) => out.push_str(&format!(
                        "- {what}: {}{unit} (`{}`)\n",
                        group_digits(v),
                        c.written
                    )),
                    None => out.push_str(&format!("- {what}: `{}`{unit}\n", c.written)),
                }
            }
        }
        if let Some(mapping) = mapping_summary(ctx.db, layer, call) {
            out.push_str(&format!("\n{mapping}\n"));
        }
    }
    out
}

/// A layer's signature line and doc comment.
pub fn layer_header(db: &dyn Db, layer: ItemId<'_>) -> Option<(String, Option<String>)> {
    let Some(ast::Item::Layer(l)) = item_ast(db, layer) else {
        return None;
    };
    let text = layer.file(db).text(db);
    let end = crate::defs::written_span(&l.output_ty).end;
    let sig = text.get(l.span.start..end).map(crate::context::one_line)?;
    Some((sig, l.doc.clone()))
}

/// `1234567` as `1,234,567`.
pub fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::group_digits;

    #[test]
    fn digits_are_grouped() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(4096), "4,096");
        assert_eq!(group_digits(1234567), "1,234,567");
    }
}

//! Which of a pair's inputs a keep must hold (`docs/language.md` §11.2): the gradient layer
//! of the input before it runs on the keep's region and reads the keep's SRAM by name, so the
//! keep keeps the batch only when that layer's kernel has an array of `keep_train`'s kernel's
//! (`matmul_qk_train_back_q` reads k from `kept`). One that reads none (`pack_qkv`'s, which
//! only cut the packed gradient) runs on a `relay`, which keeps nothing.

use std::path::Path;

use wsel_ir::graph::{LayerInstance, TensorRef};
use wsel_sema::{Db, ItemId, ItemKind, item_ast, kernel_signature, module_scope};
use wsel_syntax::ast;

use super::find_item;
use super::staging::RESIDENT;

/// Whether the keep before argument `i` of `layer` (defined in `file`), an activation but the
/// first, must keep it: the gradient layer of the activation before it reads an array of
/// `keep_train` (or either is missing: then the keep, as before, and the missing layer is
/// reported where it is looked for).
pub(super) fn keeps(db: &dyn Db, file: &Path, layer: &LayerInstance, i: usize) -> bool {
    let previous = (0..i)
        .rev()
        .find(|&p| !matches!(layer.args[p], TensorRef::Param(_)));
    let Some(name) = previous.and_then(|p| layer.arg_names.get(p)) else {
        return true;
    };
    let back = format!("{}_train_back_{name}", layer.layer);
    let back = find_item(db, file, ItemKind::Layer, &back);
    let keep = find_item(db, Path::new(RESIDENT), ItemKind::Layer, "keep_train");
    let (Some(back), Some(keep)) = (back, keep) else {
        return true;
    };
    let kept = arrays(db, keep);
    arrays(db, back).iter().any(|a| kept.contains(a))
}

/// The names of the arrays of the kernels `layer`'s implementations run.
fn arrays(db: &dyn Db, layer: ItemId<'_>) -> Vec<String> {
    let Some(ast::Item::Layer(l)) = item_ast(db, layer) else {
        return Vec::new();
    };
    let scope = module_scope(db, layer.file(db));
    l.impls
        .iter()
        .filter_map(|imp| scope.get(&imp.run.as_ref()?.kernel.name))
        .flat_map(|k| {
            kernel_signature(db, k)
                .arrays
                .iter()
                .map(|a| a.name.clone())
        })
        .collect()
}

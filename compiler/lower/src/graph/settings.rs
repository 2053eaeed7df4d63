//! Settings a training graph must not drop. A forward call's scalar inputs reach the layers
//! that stand in for it in training by name (`eps`, `heads`, `context`); one that none of
//! them declares would be left behind, and training would compute as if the call had left
//! it at its default — `softmax(s, context = 8)` differentiated as a whole-row softmax. So a
//! setting the call moved away from its default must be declared by at least one of them
//! (E1116).

use wsel_ir::graph::CValue;
use wsel_sema::ty::Value;
use wsel_sema::{Db, Diagnostic, ItemId, Location, layer_signature};

use super::pipelined_training::values;
use crate::diagnostics;

/// E1116 when a scalar `call` sets on `forward` away from its default is declared by none of
/// `takers` (the layers standing in for the call: its backward layers, or its `L_train`).
/// Nothing to check when there are no takers (a call no gradient passes through).
pub(super) fn check_kept(
    db: &dyn Db,
    forward: ItemId<'_>,
    call: &[(String, CValue)],
    takers: &[ItemId<'_>],
    at: &Location,
) -> Result<(), Vec<Diagnostic>> {
    if takers.is_empty() {
        return Ok(());
    }
    let sig = layer_signature(db, forward);
    let taken = |name: &str| {
        takers.iter().any(|t| {
            layer_signature(db, *t)
                .scalars
                .iter()
                .any(|s| s.name == name)
        })
    };
    for (name, value) in values(call) {
        let default = sig
            .scalars
            .iter()
            .find(|s| s.name == name)
            .and_then(|s| s.default);
        if default != Some(value) && !taken(&name) {
            let names: Vec<String> = takers
                .iter()
                .map(|t| layer_signature(db, *t).name.clone())
                .collect();
            return Err(vec![diagnostics::setting_dropped(
                at.clone(),
                &sig.name,
                &name,
                &shown(value),
                &names,
            )]);
        }
    }
    Ok(())
}

/// A scalar value as the source writes it.
fn shown(value: Value) -> String {
    match value {
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Bool(b) => b.to_string(),
    }
}

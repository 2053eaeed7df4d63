//! Module-level constants: `const_value` (the evaluated value, for everyone) and
//! `check_const` (its diagnostics).

use salsa::Accumulator;
use wsel_syntax::ast;

use crate::analysis::{ConstInfo, ItemAnalysis};
use crate::check::expr::{Checker, evaluate_const, written_type};
use crate::db::{Db, Reported};
use crate::diagnostics::types;
use crate::items::{ItemId, item_ast, item_location};

/// The type and value of a module constant. Cycles give `None` (reported by `check_const`).
#[salsa::tracked(returns(ref))]
pub fn const_value<'db>(db: &'db dyn Db, item: ItemId<'db>) -> ConstInfo {
    let (ty, value, cyclic) = evaluate_const(db, item, vec![item]);
    ConstInfo {
        ty,
        value: if cyclic { None } else { value },
    }
}

/// Checks a module constant: a scalar type and a compile-time value of that type.
#[salsa::tracked(returns(ref))]
pub fn check_const<'db>(db: &'db dyn Db, item: ItemId<'db>) -> ItemAnalysis {
    let Some(ast::Item::Const(decl)) = item_ast(db, item) else {
        return ItemAnalysis::default();
    };
    let mut checker = Checker::new(db, item.file(db));
    checker.const_stack = Some(vec![item]);
    match &decl.ty {
        ast::Type::Scalar(t, _) => {
            let typed = checker.expect_const(&decl.value, *t, "a constant");
            let _ = typed;
        }
        ast::Type::Error(_) => {}
        other => {
            let (printed, span) = written_type(other);
            let d = types::type_not_allowed(checker.loc(&span), &printed, "a constant");
            checker.report(d);
        }
    }
    // A cycle is reported once, at the member that comes first (by file and position), and
    // not at constants that merely depend on it.
    if let Some(cycle) = checker.const_cycle.clone()
        && let Some(at) = cycle.iter().position(|i| *i == item)
    {
        let first = cycle
            .iter()
            .min_by_key(|i| item_location(db, **i).map(|l| (l.file, l.span.start)));
        if first == Some(&item) {
            let mut names: Vec<String> = cycle[at..]
                .iter()
                .chain(&cycle[..at])
                .map(|i| format!("`{}`", i.name(db)))
                .collect();
            names.push(format!("`{}`", item.name(db)));
            let mut d = types::const_cycle(checker.loc(&decl.name.span), &decl.name.name);
            if cycle.len() > 1 {
                d = d.with_note(format!("the cycle is {}", names.join(" → ")));
            }
            checker.report(d);
        }
    }
    for d in checker.diags {
        Reported(d).accumulate(db);
    }
    checker.analysis
}

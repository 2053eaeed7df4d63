//! A switched port's switch (`docs/language.md` §5.4, "Switched ports") as the layer graph
//! holds it: positions with logical sides, and the start position as an expression over the
//! dims, the region size and the PE's logical place (`pe.row`, `pe.col`), which the mapper
//! evaluates per PE. E0814 for a start that cannot be carried that far.

use std::collections::BTreeMap;

use wsel_ir::graph::{CExpr, Side, SwitchInfo, SwitchOverride, SwitchPort};
use wsel_sema::{Diagnostic, Location};
use wsel_syntax::ast;

use crate::cexpr::{Converter, simplify};
use crate::diagnostics;

/// The switch of `spec` on a kernel with `names` (its parameters and constants); E0814 into
/// `diags` when the start has no expression (then every PE starts at 0).
pub(super) fn lower_switch(
    db: &dyn wsel_sema::Db,
    module: &wsel_sema::items::ModuleScope<'_>,
    spec: &ast::SwitchSpec,
    names: &BTreeMap<String, CExpr>,
    at: (Location, Location),
    diags: &mut Vec<Diagnostic>,
) -> SwitchInfo {
    let positions = spec
        .positions
        .iter()
        .map(|p| {
            let mut o = SwitchOverride { rx: None, tx: None };
            for (set, side) in &p.sets {
                let port = switch_port(&side.name);
                if set.name == "rx" {
                    o.rx = port;
                } else {
                    o.tx = port;
                }
            }
            o
        })
        .collect();
    let lookup = |n: &str| match n {
        "pe.row" | "pe.col" => Some(CExpr::Var(n.to_string())),
        _ => names.get(n).cloned(),
    };
    let converter = Converter {
        db,
        module,
        names: &lookup,
        values: &|_| None,
    };
    let start = match spec.start.as_ref().map(|e| converter.convert(e)) {
        None => CExpr::Int(0),
        Some(Ok(e)) => simplify(&e),
        Some(Err(reason)) => {
            diags.push(diagnostics::switch_start_failed(at.0, &reason, at.1));
            CExpr::Int(0)
        }
    };
    SwitchInfo {
        positions,
        start,
        ring: spec.ring,
    }
}

/// A side named in a switch position (checked by sema: `ramp` or a side).
fn switch_port(name: &str) -> Option<SwitchPort> {
    Some(match name {
        "ramp" => SwitchPort::Ramp,
        "north" => SwitchPort::Side(Side::North),
        "south" => SwitchPort::Side(Side::South),
        "east" => SwitchPort::Side(Side::East),
        "west" => SwitchPort::Side(Side::West),
        _ => return None,
    })
}

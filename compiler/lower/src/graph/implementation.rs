//! One implementation of a layer instance: its modes, region sides, `where` conditions, the
//! kernel with its arguments as expressions over the dimensions and the region size (E0502
//! for one that has no value at the call's shapes), the kernel's SRAM words as an expression
//! built from its array lengths, its ports and the `bind`s.

use std::collections::BTreeMap;

use wsel_ir::graph::{
    BindInfo, BindTarget, Bus, CExpr, KernelRef, LayerImpl, Mode, PortInfo, RegionSide, Side,
    SourceSpan, SplitAxis,
};
use wsel_ir::kernel::PortDirection;
use wsel_sema::{Diagnostic, ItemKind, item_ast, kernel_signature, module_scope};
use wsel_syntax::ast;

use super::instance::LayerCx;
use crate::cexpr::{Converter, eval_reason, free_vars, simplify, sum};
use crate::diagnostics;
use crate::value::{int_range, is_int, scalar_ty};

/// Lowers `imp`; `None` when its kernel cannot be found (a checked program always has it).
pub(super) fn lower_impl(
    cx: &LayerCx<'_, '_>,
    imp: &ast::LayerImpl,
    diags: &mut Vec<Diagnostic>,
) -> Option<LayerImpl> {
    let db = cx.db;
    let mut regions: Vec<String> = Vec::new();
    let mut side = |size: &ast::Expr, diags: &mut Vec<Diagnostic>| -> RegionSide {
        if let ast::Expr::Name(id) = size
            && !cx.dim_vars.contains(&id.name)
            && !is_module_const(cx, &id.name)
            && !cx.scalars.iter().any(|(name, _)| *name == id.name)
        {
            regions.push(id.name.clone());
            return RegionSide::Free(id.name.clone());
        }
        let fixed = cx.convert(size, &[]);
        let value = fixed
            .clone()
            .and_then(|e| e.eval_int(&|n| cx.dim_value(n)).map_err(eval_reason));
        match value {
            Ok(v) if v > 0 => {}
            Ok(v) => diags.push(diagnostics::region_failed(
                cx.call.clone(),
                &format!("it is {v}"),
                cx.loc(&size.span()),
            )),
            Err(reason) => diags.push(diagnostics::region_failed(
                cx.call.clone(),
                &reason,
                cx.loc(&size.span()),
            )),
        }
        RegionSide::Fixed(fixed.unwrap_or(CExpr::Int(0)))
    };
    let rows = side(&imp.rows, diags);
    let cols = side(&imp.cols, diags);
    let conditions = imp
        .conditions
        .iter()
        .filter_map(|c| cx.convert(c, &regions).ok())
        .collect();
    let run = imp.run.as_ref()?;
    let kernel_item = cx
        .module
        .get(&run.kernel.name)
        .filter(|i| i.kind(db) == ItemKind::Kernel)?;
    let kernel_file = kernel_item.file(db);
    let ksig = kernel_signature(db, kernel_item);
    let mut kernel_args = Vec::new();
    for param in &ksig.params {
        let Some((_, expr)) = run.args.iter().find(|(n, _)| n.name == param.name) else {
            continue;
        };
        let arg = match cx.convert(expr, &regions) {
            Ok(arg) => arg,
            Err(reason) => {
                diags.push(diagnostics::kernel_arg_failed(
                    cx.call.clone(),
                    &param.name,
                    &reason,
                    cx.loc(&expr.span()),
                ));
                continue;
            }
        };
        if let Some(reason) = check_arg(cx, &arg, param.ty.map(scalar_ty)) {
            diags.push(diagnostics::kernel_arg_failed(
                cx.call.clone(),
                &param.name,
                &reason,
                cx.loc(&expr.span()),
            ));
        }
        kernel_args.push((param.name.clone(), arg));
    }
    let module = module_scope(db, kernel_file);
    let ((sram_words, held_words), names) = match item_ast(db, kernel_item) {
        Some(ast::Item::Kernel(kernel)) => {
            let names = kernel_names(db, module, kernel, &kernel_args);
            (sram_words(db, module, kernel, &names), names)
        }
        _ => ((CExpr::Int(0), CExpr::Int(0)), BTreeMap::new()),
    };
    let ports = ksig
        .ports
        .iter()
        .filter_map(|p| {
            let distance = p
                .distance
                .as_ref()
                .map(|d| convert_member(db, module, d, &names).unwrap_or(CExpr::Int(0)));
            let switch = p.switch.as_ref().map(|spec| {
                let at = (cx.call.clone(), p.def.clone());
                super::switch::lower_switch(db, module, spec, &names, at, diags)
            });
            Some(PortInfo {
                name: p.name.clone(),
                direction: match p.direction {
                    ast::PortDirection::In => PortDirection::In,
                    ast::PortDirection::Out => PortDirection::Out,
                },
                elem: scalar_ty(p.elem?),
                side: side_of(&p.side)?,
                multicast: p.multicast,
                bus: bus_of(&p.side),
                distance,
                switch,
                span: SourceSpan {
                    file: p.def.file.clone(),
                    span: p.def.span.clone(),
                },
            })
        })
        .collect();
    let binds = imp
        .binds
        .iter()
        .map(|b| BindInfo {
            tensor: b.tensor.name.clone(),
            target: match b.kind {
                ast::BindKind::Array => BindTarget::Array,
                ast::BindKind::Port => BindTarget::Port,
            },
            target_name: b.target.name.clone(),
            split: b
                .split
                .iter()
                .flatten()
                .map(|axis| match axis {
                    ast::SplitAxis::Rows(_) => SplitAxis::Rows,
                    ast::SplitAxis::Cols(_) => SplitAxis::Cols,
                    ast::SplitAxis::Whole(_) | ast::SplitAxis::Unknown(_) => SplitAxis::Whole,
                })
                .collect(),
            tiles: b
                .tiles
                .iter()
                .flatten()
                .map(|count| cx.convert(count, &regions).unwrap_or(CExpr::Int(1)))
                .collect(),
            span: SourceSpan {
                file: cx.layer_file.clone(),
                span: b.span.clone(),
            },
        })
        .collect();
    Some(LayerImpl {
        modes: imp
            .modes
            .iter()
            .map(|(m, _)| match m {
                ast::Mode::Pipelined => Mode::Pipelined,
                ast::Mode::Streaming => Mode::Streaming,
            })
            .collect(),
        rows,
        cols,
        conditions,
        kernel: KernelRef {
            file: kernel_file.path(db).clone(),
            name: kernel_item.name(db).clone(),
        },
        kernel_args,
        sram_words,
        held_words,
        ports,
        binds,
        span: SourceSpan {
            file: cx.layer_file.clone(),
            span: imp.span.clone(),
        },
    })
}

/// Why a kernel argument that does not depend on the region size has no valid value at this
/// call, if it has none.
fn check_arg(
    cx: &LayerCx<'_, '_>,
    arg: &CExpr,
    ty: Option<wsel_ir::kernel::ScalarTy>,
) -> Option<String> {
    if !free_vars(arg).iter().all(|v| cx.dims.contains_key(v)) {
        return None;
    }
    let value = match arg.eval(&|n| cx.dim_value(n)) {
        Ok(v) => v,
        Err(e) => return Some(eval_reason(e)),
    };
    if let (wsel_ir::graph::CValue::Int(v), Some(ty)) = (value, ty)
        && is_int(ty)
    {
        let (lo, hi) = int_range(ty);
        if i128::from(v) < lo || i128::from(v) > hi {
            return Some(format!("{v} does not fit {}", ty.name()));
        }
    }
    None
}

/// The kernel's parameters (replaced by `args`) and its constants, as expressions over the
/// dims and the region size.
fn kernel_names(
    db: &dyn wsel_sema::Db,
    module: &wsel_sema::items::ModuleScope<'_>,
    kernel: &ast::Kernel,
    args: &[(String, CExpr)],
) -> BTreeMap<String, CExpr> {
    let mut names: BTreeMap<String, CExpr> = args.iter().cloned().collect();
    for member in &kernel.members {
        if let ast::KernelMember::Const(c) = member
            && let Ok(value) = convert_member(db, module, &c.value, &names)
        {
            names.insert(c.name.name.clone(), value);
        }
    }
    names
}

/// A kernel member's compile-time expression (an array length, a port's distance) over the
/// dims and the region size, given the kernel's `names`.
fn convert_member(
    db: &dyn wsel_sema::Db,
    module: &wsel_sema::items::ModuleScope<'_>,
    expr: &ast::Expr,
    names: &BTreeMap<String, CExpr>,
) -> Result<CExpr, String> {
    let lookup = |n: &str| names.get(n).cloned();
    let converter = Converter {
        db,
        module,
        names: &lookup,
        values: &|_| None,
    };
    converter.convert(expr).map(|e| simplify(&e))
}

/// The kernel's SRAM words (its arrays' lengths plus one per SRAM scalar), and those of its
/// `held_*` arrays (the weights it holds between micro-batches), given its `names`.
fn sram_words(
    db: &dyn wsel_sema::Db,
    module: &wsel_sema::items::ModuleScope<'_>,
    kernel: &ast::Kernel,
    names: &BTreeMap<String, CExpr>,
) -> (CExpr, CExpr) {
    let mut terms = Vec::new();
    let mut held = Vec::new();
    for member in &kernel.members {
        if let ast::KernelMember::Var(v) = member {
            let words = match &v.ty {
                ast::Type::Array { len, .. } => {
                    convert_member(db, module, len, names).unwrap_or(CExpr::Int(0))
                }
                _ => CExpr::Int(1),
            };
            if v.name.name.starts_with("held_") {
                held.push(words.clone());
            }
            terms.push(words);
        }
    }
    (sum(&terms), sum(&held))
}

fn is_module_const(cx: &LayerCx<'_, '_>, name: &str) -> bool {
    cx.module
        .get(name)
        .is_some_and(|i| i.kind(cx.db) == ItemKind::Const)
}

fn side_of(name: &str) -> Option<Side> {
    Some(match name {
        "north" => Side::North,
        "south" => Side::South,
        "east" => Side::East,
        "west" => Side::West,
        bus => bus_of(bus)?.side(),
    })
}

fn bus_of(name: &str) -> Option<Bus> {
    Some(match name {
        "row" => Bus::Row,
        "col" => Bus::Col,
        "region" => Bus::Region,
        _ => return None,
    })
}

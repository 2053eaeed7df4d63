//! Hover: for a name, its declaration (signature, type at this use, doc comment, where it is
//! defined); for a layer call, the call's shapes, the layer's cost at them and the call's
//! mapping on the default target (`layer_call`); elsewhere, the type of the innermost checked
//! expression.

use wsel_sema::builtins::{Builtin, builtin};
use wsel_sema::items::{ItemKind, item_index};
use wsel_sema::{const_value, kernel_signature};
use wsel_syntax::ast::{self, PortDirection};

use crate::context::{FileCtx, def_at_location, ident_at, module_label, one_line, target_at};
use crate::defs::{Def, DefKind};
use crate::layer_call::call_hover;
use wsel_sema::syntax::written_span;

/// A hover: the span it is about and Markdown text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoverInfo {
    pub span: std::ops::Range<usize>,
    pub markdown: String,
}

pub fn hover(ctx: &FileCtx<'_>, offset: usize) -> Option<HoverInfo> {
    let ident = ident_at(ctx.text, offset);
    if let Some((name, span)) = &ident {
        if let Some(call) = ctx
            .analysis
            .calls
            .iter()
            .find(|c| c.span.start == span.start)
        {
            return Some(HoverInfo {
                span: span.clone(),
                markdown: call_hover(ctx, name, call),
            });
        }
        if let Some(target) = target_at(ctx, span.start)
            && let Some((def_ctx, def)) = def_at_location(ctx.db, &target)
        {
            let use_type = ctx.analysis.type_at(span.start);
            return Some(HoverInfo {
                span: span.clone(),
                markdown: describe_def(&def_ctx, &def, use_type, def_ctx.file != ctx.file),
            });
        }
        if let Some(function) = builtin_called(ctx, name, span) {
            return Some(HoverInfo {
                span: span.clone(),
                markdown: format!("```wse\n{}\n```\n\n{}", function.signature, function.doc),
            });
        }
    }
    let (span, ty) = ctx
        .analysis
        .types
        .iter()
        .filter(|(s, _)| s.start <= offset && offset < s.end)
        .min_by_key(|(s, _)| s.end - s.start)?;
    Some(HoverInfo {
        span: span.clone(),
        markdown: format!("```wse\n{ty}\n```"),
    })
}

/// The built-in function `name` when the identifier at `span` calls it (is followed by `(`).
fn builtin_called(
    ctx: &FileCtx<'_>,
    name: &str,
    span: &std::ops::Range<usize>,
) -> Option<&'static Builtin> {
    let called = ctx.text.get(span.end..)?.trim_start().starts_with('(');
    called.then(|| builtin(name)).flatten()
}

/// The hover text of a declaration. `use_type` is the type recorded where the name is used;
/// `elsewhere` adds the module it is defined in.
pub fn describe_def(
    ctx: &FileCtx<'_>,
    def: &Def,
    use_type: Option<&str>,
    elsewhere: bool,
) -> String {
    let text = ctx.text;
    let slice =
        |span: &std::ops::Range<usize>| text.get(span.clone()).map(one_line).unwrap_or_default();
    let own_type = ctx.analysis.type_at(def.name_span.start);
    let ty = use_type.or(own_type);
    let container = def
        .parent
        .and_then(|p| ctx.defs.get(p))
        .map(|p| (p.kind, p.name.clone()));
    let mut code = match def.kind {
        DefKind::Kernel | DefKind::Layer | DefKind::Model => header(ctx, def),
        DefKind::Const | DefKind::LocalConst | DefKind::Storage | DefKind::LocalVar => {
            slice(&def.decl_span).trim_end_matches(';').to_string()
        }
        DefKind::InPort | DefKind::OutPort | DefKind::ModelParam => {
            slice(&def.decl_span).trim_end_matches(';').to_string()
        }
        DefKind::Task => format!("task {}()", def.name),
        DefKind::KernelParam
        | DefKind::LayerInput
        | DefKind::LayerParam
        | DefKind::LayerScalar
        | DefKind::ModelInput => slice(&def.decl_span),
        DefKind::LayerOutput => format!("-> {}", slice(&def.decl_span)),
        DefKind::Let | DefKind::ModelLet => match ty {
            Some(t) => format!("let {}: {t}", def.name),
            None => format!("let {}", def.name),
        },
        DefKind::LoopVar => format!("{}: {}", def.name, ty.unwrap_or("u32")),
        DefKind::DimVar | DefKind::RegionSize => format!("{}: u32", def.name),
        DefKind::Run => format!("run {}", def.name),
        DefKind::Train => format!("train {}", def.name),
    };
    if def.kind == DefKind::Const
        && let Some(value) = const_item_value(ctx, &def.name)
    {
        code.push_str(&format!("  // = {value}"));
    }
    let mut out = format!("```wse\n{code}\n```\n");
    let mut facts: Vec<String> = Vec::new();
    match (&container, def.kind.is_item()) {
        (Some((kind, name)), false) => facts.push(format!(
            "{} of {} `{name}`",
            def.kind.describe(),
            kind_word(*kind)
        )),
        _ => facts.push(def.kind.describe().to_string()),
    }
    if let Some(t) = ty
        && !matches!(
            def.kind,
            DefKind::Let
                | DefKind::ModelLet
                | DefKind::LoopVar
                | DefKind::Kernel
                | DefKind::Layer
                | DefKind::Model
        )
        && !code.contains(t)
    {
        facts.push(format!("type `{t}`"));
    }
    if def.kind == DefKind::RegionSize {
        facts.push("chosen by the mapper".to_string());
    }
    if elsewhere {
        facts.push(format!("defined in `{}`", module_label(ctx.path())));
    }
    out.push_str(&format!("\n{}\n", facts.join(" · ")));
    match def.kind {
        DefKind::Kernel => out.push_str(&kernel_interface(ctx, &def.name)),
        DefKind::Layer => out.push_str(&layer_cost(ctx, def)),
        _ => {}
    }
    if let Some(doc) = &def.doc {
        out.push_str(&format!("\n{doc}\n"));
    }
    out
}

/// The head of an item up to its body: `kernel k(n: u32)`, `layer l(...) -> y: f32[B, M]`.
fn header(ctx: &FileCtx<'_>, def: &Def) -> String {
    let end = ctx
        .module
        .items
        .iter()
        .find_map(|item| match item {
            ast::Item::Layer(l) if l.name.span == def.name_span => {
                Some(written_span(&l.output_ty).end)
            }
            ast::Item::Model(m) if m.name.span == def.name_span => {
                Some(written_span(&m.output_ty).end)
            }
            ast::Item::Kernel(k) if k.name.span == def.name_span => {
                let body = ctx
                    .text
                    .get(k.name.span.end..k.span.end)
                    .and_then(|t| t.find('{'));
                body.map(|b| k.name.span.end + b)
            }
            _ => None,
        })
        .unwrap_or(def.name_span.end);
    ctx.text
        .get(def.decl_span.start..end)
        .map(one_line)
        .unwrap_or_else(|| def.name.clone())
}

fn kind_word(kind: DefKind) -> &'static str {
    match kind {
        DefKind::Task => "task",
        DefKind::Kernel => "kernel",
        DefKind::Layer => "layer",
        DefKind::Model => "model",
        other => other.describe(),
    }
}

fn const_item_value(ctx: &FileCtx<'_>, name: &str) -> Option<String> {
    let item = item_index(ctx.db, ctx.file)
        .iter()
        .find(|i| i.kind(ctx.db) == ItemKind::Const && i.name(ctx.db) == name)?;
    const_value(ctx.db, *item).value.map(|v| v.to_string())
}

/// The ports and arrays of a kernel, as a Markdown list.
fn kernel_interface(ctx: &FileCtx<'_>, name: &str) -> String {
    let Some(item) = item_index(ctx.db, ctx.file)
        .iter()
        .find(|i| i.kind(ctx.db) == ItemKind::Kernel && i.name(ctx.db) == name)
    else {
        return String::new();
    };
    let sig = kernel_signature(ctx.db, *item);
    let mut out = String::new();
    if !sig.ports.is_empty() {
        let ports: Vec<String> = sig
            .ports
            .iter()
            .map(|p| {
                let dir = match p.direction {
                    PortDirection::In => "in from",
                    PortDirection::Out => "out to",
                };
                let multicast = if p.multicast { ", multicast" } else { "" };
                format!("`{}` ({dir} {}{multicast})", p.name, p.side)
            })
            .collect();
        out.push_str(&format!("\n**Ports:** {}\n", ports.join(", ")));
    }
    if !sig.arrays.is_empty() {
        let arrays: Vec<String> = sig
            .arrays
            .iter()
            .map(|a| {
                let len = a.len.map(|n| n.to_string()).unwrap_or_else(|| {
                    ctx.text
                        .get(a.len_expr.span())
                        .map(one_line)
                        .unwrap_or_default()
                });
                format!(
                    "`{}: [{}; {len}]`",
                    a.name,
                    wsel_sema::ty::scalar_name(a.elem)
                )
            })
            .collect();
        out.push_str(&format!("\n**Arrays:** {}\n", arrays.join(", ")));
    }
    out
}

/// A layer's cost entries as written.
fn layer_cost(ctx: &FileCtx<'_>, def: &Def) -> String {
    let Some(layer) = ctx.module.items.iter().find_map(|item| match item {
        ast::Item::Layer(l) if l.name.span == def.name_span => Some(l),
        _ => None,
    }) else {
        return String::new();
    };
    let Some(cost) = &layer.cost else {
        return String::new();
    };
    let entries: Vec<String> = cost
        .entries
        .iter()
        .map(|(k, e)| {
            let written = ctx.text.get(e.span()).map(one_line).unwrap_or_default();
            format!("`{} = {written}`", k.name)
        })
        .collect();
    format!("\n**Cost:** {}\n", entries.join(", "))
}

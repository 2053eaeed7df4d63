//! Completion: what may be written at an offset, from the tokens before it. Import lists
//! offer stdlib modules and a module's items; `bind .. to port|array` offers the ports or
//! arrays of the implementation's kernel; `run k(` its parameters; `pe.`/`region.` their
//! fields; `then`/`activate` the kernel's tasks; anywhere else keywords, the names in scope
//! (items, imports, the enclosing item's declarations) and stdlib items.

use std::collections::BTreeSet;

use wsel_sema::builtins::BUILTINS;
use wsel_sema::check::kernel::{BUS_SIDES, PORT_SIDES};
use wsel_sema::items::{ItemKind, item_index, module_scope, resolve_module};
use wsel_sema::{kernel_signature, layer_signature};
use wsel_syntax::{KEYWORDS, Token, ast};

use crate::context::FileCtx;
use crate::defs::{DefKind, file_defs, item_at};

/// What a completion inserts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionKind {
    Keyword,
    Module,
    Kernel,
    Layer,
    Model,
    Constant,
    Variable,
    Port,
    Task,
    Function,
    Field,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub label: String,
    pub kind: CompletionKind,
    pub detail: Option<String>,
}

pub fn completions(ctx: &FileCtx<'_>, offset: usize) -> Vec<Completion> {
    let offset = offset.min(ctx.text.len());
    let tokens = wsel_syntax::lex(ctx.text);
    if tokens.iter().any(|(t, s)| {
        matches!(
            t,
            Token::Comment | Token::DocComment(_) | Token::BlockComment | Token::Str(_)
        ) && s.start < offset
            && offset < s.end + usize::from(!matches!(t, Token::Str(_) | Token::BlockComment))
    }) {
        return Vec::new();
    }
    let mut before: Vec<&Token> = tokens
        .iter()
        .filter(|(t, s)| s.end <= offset && !t.is_trivia())
        .map(|(t, _)| t)
        .collect();
    // The word being typed is not context.
    let typing = tokens
        .iter()
        .rev()
        .find(|(_, s)| s.end <= offset)
        .is_some_and(|(t, s)| matches!(t, Token::Ident(_)) && s.end == offset);
    if typing {
        before.pop();
    }
    if let Some(items) = import_completions(ctx, &before) {
        return items;
    }
    let last = before.last().copied();
    let second = before
        .len()
        .checked_sub(2)
        .and_then(|i| before.get(i))
        .copied();
    match (second, last) {
        (Some(Token::Ident(base)), Some(Token::Dot)) => {
            let fields: &[&str] = match base.as_str() {
                "pe" => &["row", "col"],
                "region" => &["rows", "cols"],
                _ => &[],
            };
            return fields
                .iter()
                .map(|f| simple(f, CompletionKind::Field, "u32"))
                .collect();
        }
        (_, Some(Token::Then | Token::Activate)) => {
            return local_defs(ctx, offset)
                .into_iter()
                .filter(|c| c.kind == CompletionKind::Task)
                .collect();
        }
        (_, Some(Token::From | Token::To)) if in_port_declaration(&before) => {
            return PORT_SIDES
                .iter()
                .map(|side| {
                    let what = if BUS_SIDES.contains(side) {
                        "bus: every other PE of the line"
                    } else {
                        "port side"
                    };
                    simple(side, CompletionKind::Keyword, what)
                })
                .collect();
        }
        (_, Some(Token::Split)) | (Some(Token::Split), Some(Token::LBracket)) => {
            return ["rows", "cols", "_"]
                .iter()
                .map(|w| simple(w, CompletionKind::Keyword, "split axis"))
                .collect();
        }
        (Some(Token::To), Some(Token::Ident(word))) if word == "port" || word == "array" => {
            return kernel_members(ctx, offset, word == "port");
        }
        (Some(Token::Ident(_)), Some(Token::To)) => {
            return ["array", "port"]
                .iter()
                .map(|w| simple(w, CompletionKind::Keyword, "bind target"))
                .collect();
        }
        _ => {}
    }
    if let Some(kernel) = open_run_call(&before) {
        return kernel_params(ctx, kernel);
    }
    let mut out = everything(ctx, offset);
    if let Some(layer) = open_call(&before) {
        out.extend(layer_scalars(ctx, layer));
    }
    out
}

/// Whether the tokens end inside a port declaration (`in p: stream<T> from`), not inside a
/// model `param ... from "path"`.
fn in_port_declaration(before: &[&Token]) -> bool {
    let start = before
        .iter()
        .rposition(|t| matches!(t, Token::Semi | Token::LBrace | Token::RBrace));
    let statement = &before[start.map_or(0, |i| i + 1)..];
    matches!(statement.first(), Some(Token::In | Token::Out))
}

/// The callee of the innermost unclosed call `f(...` when the cursor is where an argument
/// starts (after the `(` or a `,`).
fn open_call<'t>(before: &[&'t Token]) -> Option<&'t str> {
    if !matches!(before.last(), Some(Token::LParen | Token::Comma)) {
        return None;
    }
    let mut depth = 0usize;
    for (i, token) in before.iter().enumerate().rev() {
        match token {
            Token::RParen => depth += 1,
            Token::LParen if depth > 0 => depth -= 1,
            Token::LParen => {
                return match i.checked_sub(1).map(|j| before[j]) {
                    Some(Token::Ident(callee)) => Some(callee.as_str()),
                    _ => None,
                };
            }
            _ => {}
        }
    }
    None
}

/// The scalar inputs of `layer` (a layer in scope), given by name at a call.
fn layer_scalars(ctx: &FileCtx<'_>, layer: &str) -> Vec<Completion> {
    let db = ctx.db;
    let Some(item) = module_scope(db, ctx.file).get(layer) else {
        return Vec::new();
    };
    if item.kind(db) != ItemKind::Layer {
        return Vec::new();
    }
    layer_signature(db, item)
        .scalars
        .iter()
        .map(|s| Completion {
            label: s.name.clone(),
            kind: CompletionKind::Variable,
            detail: Some(format!(
                "scalar input of `{layer}`: {}{}",
                wsel_sema::ty::scalar_name(s.ty),
                s.default.map(|d| format!(" = {d}")).unwrap_or_default()
            )),
        })
        .collect()
}

fn simple(label: &str, kind: CompletionKind, detail: &str) -> Completion {
    Completion {
        label: label.to_string(),
        kind,
        detail: (!detail.is_empty()).then(|| detail.to_string()),
    }
}

/// Completions inside an unfinished `import`: `std` and its modules after `import`, the items
/// of the module inside `{ }`.
fn import_completions(ctx: &FileCtx<'_>, before: &[&Token]) -> Option<Vec<Completion>> {
    let start = before.iter().rposition(|t| **t == Token::Import)?;
    let rest = &before[start + 1..];
    if rest
        .iter()
        .any(|t| **t == Token::Semi || **t == Token::RBrace)
    {
        return None;
    }
    let segments: Vec<String> = rest
        .iter()
        .take_while(|t| **t != &Token::LBrace)
        .filter_map(|t| match t {
            Token::Ident(s) => Some(s.clone()),
            _ => None,
        })
        .collect();
    if rest.contains(&&Token::LBrace) {
        return Some(module_items(ctx, &segments));
    }
    Some(match segments.as_slice() {
        [] => vec![simple(
            "std",
            CompletionKind::Module,
            "the standard library",
        )],
        [first, ..] if first == "std" => wsel_stdlib::module_paths()
            .map(|m| simple(m, CompletionKind::Module, &format!("std.{m}")))
            .collect(),
        _ => Vec::new(),
    })
}

/// The importable items of the module at `segments` (a loaded file, or a stdlib module).
fn module_items(ctx: &FileCtx<'_>, segments: &[String]) -> Vec<Completion> {
    let db = ctx.db;
    if let Some(module) = resolve_module(db, ctx.file, segments) {
        return item_index(db, module)
            .iter()
            .filter(|i| !i.kind(db).is_config())
            .map(|i| simple(i.name(db), item_kind(i.kind(db)), i.kind(db).keyword()))
            .collect();
    }
    match segments.split_first() {
        Some((first, rest)) if first == "std" => {
            let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
            stdlib_items(&rest.join("."))
        }
        _ => Vec::new(),
    }
}

/// The items of the stdlib module `dotted` (`nn`), parsed from its embedded source.
fn stdlib_items(dotted: &str) -> Vec<Completion> {
    let segments: Vec<&str> = dotted.split('.').collect();
    let Some(source) = wsel_stdlib::source(&segments) else {
        return Vec::new();
    };
    let module = wsel_syntax::parse(source).module;
    // Items only: what dimension and region names declare does not matter here.
    file_defs(&module, &[])
        .into_iter()
        .filter(|d| d.kind.is_item() && !matches!(d.kind, DefKind::Run | DefKind::Train))
        .map(|d| Completion {
            label: d.name.clone(),
            kind: def_kind(d.kind),
            detail: Some(format!("{} from std.{dotted}", d.kind.describe())),
        })
        .collect()
}

/// `run k(` with the parenthesis still open: the kernel's name.
fn open_run_call<'t>(before: &[&'t Token]) -> Option<&'t str> {
    let run = before.iter().rposition(|t| **t == Token::Run)?;
    let rest = &before[run + 1..];
    match rest {
        [Token::Ident(kernel), Token::LParen, tail @ ..] if !tail.contains(&&Token::RParen) => {
            // Only where a parameter name goes: at the start or after a comma.
            match tail.last() {
                None | Some(Token::Comma) => Some(kernel.as_str()),
                _ => None,
            }
        }
        _ => None,
    }
}

fn kernel_params(ctx: &FileCtx<'_>, kernel: &str) -> Vec<Completion> {
    let db = ctx.db;
    let Some(item) = module_scope(db, ctx.file).get(kernel) else {
        return Vec::new();
    };
    if item.kind(db) != ItemKind::Kernel {
        return Vec::new();
    }
    kernel_signature(db, item)
        .params
        .iter()
        .map(|p| Completion {
            label: p.name.clone(),
            kind: CompletionKind::Variable,
            detail: Some(format!(
                "parameter of `{kernel}`{}",
                p.ty.map(|t| format!(": {}", wsel_sema::ty::scalar_name(t)))
                    .unwrap_or_default()
            )),
        })
        .collect()
}

/// The ports (or arrays) of the kernel that the layer implementation around `offset` runs.
fn kernel_members(ctx: &FileCtx<'_>, offset: usize, ports: bool) -> Vec<Completion> {
    let db = ctx.db;
    let kernel = ctx.module.items.iter().find_map(|item| match item {
        ast::Item::Layer(l) if l.span.start <= offset && offset <= l.span.end => l
            .impls
            .iter()
            .find(|i| i.span.start <= offset && offset <= i.span.end)
            .and_then(|i| i.run.as_ref())
            .map(|r| r.kernel.name.clone()),
        _ => None,
    });
    let Some(kernel) = kernel else {
        return Vec::new();
    };
    let Some(item) = module_scope(db, ctx.file).get(&kernel) else {
        return Vec::new();
    };
    let sig = kernel_signature(db, item);
    if ports {
        sig.ports
            .iter()
            .map(|p| Completion {
                label: p.name.clone(),
                kind: CompletionKind::Port,
                detail: Some(format!(
                    "{} port of `{kernel}` ({} {})",
                    match p.direction {
                        ast::PortDirection::In => "input",
                        ast::PortDirection::Out => "output",
                    },
                    match p.direction {
                        ast::PortDirection::In => "from",
                        ast::PortDirection::Out => "to",
                    },
                    p.side
                )),
            })
            .collect()
    } else {
        sig.arrays
            .iter()
            .map(|a| Completion {
                label: a.name.clone(),
                kind: CompletionKind::Variable,
                detail: Some(format!(
                    "array of `{kernel}`: [{}; _]",
                    wsel_sema::ty::scalar_name(a.elem)
                )),
            })
            .collect()
    }
}

/// The declarations visible at `offset` inside its item: the item's members and
/// parameters, and the locals of the enclosing task declared before `offset`.
fn local_defs(ctx: &FileCtx<'_>, offset: usize) -> Vec<Completion> {
    let Some((item, _)) = item_at(&ctx.defs, offset) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for d in &ctx.defs {
        let Some(parent) = d.parent else { continue };
        let visible = if parent == item {
            true
        } else {
            let task = &ctx.defs[parent];
            task.parent == Some(item)
                && task.decl_span.start <= offset
                && offset <= task.decl_span.end
                && d.name_span.end <= offset
        };
        if visible {
            out.push(Completion {
                label: d.name.clone(),
                kind: def_kind(d.kind),
                detail: Some(d.kind.describe().to_string()),
            });
        }
    }
    out
}

fn everything(ctx: &FileCtx<'_>, offset: usize) -> Vec<Completion> {
    let db = ctx.db;
    let mut out = local_defs(ctx, offset);
    let in_kernel = item_at(&ctx.defs, offset).is_some_and(|(_, d)| d.kind == DefKind::Kernel);
    if in_kernel {
        out.extend(
            BUILTINS
                .iter()
                .map(|f| simple(f.name, CompletionKind::Function, f.signature)),
        );
        out.push(simple(
            "pe",
            CompletionKind::Variable,
            "this PE: pe.row, pe.col",
        ));
        out.push(simple(
            "region",
            CompletionKind::Variable,
            "the region: region.rows, region.cols",
        ));
    }
    for (name, item) in &module_scope(db, ctx.file).names {
        let file = item.file(db);
        let detail = if file == ctx.file {
            item.kind(db).keyword().to_string()
        } else {
            format!(
                "{} from {}",
                item.kind(db).keyword(),
                crate::context::module_label(file.path(db))
            )
        };
        out.push(Completion {
            label: name.clone(),
            kind: item_kind(item.kind(db)),
            detail: Some(detail),
        });
    }
    for module in wsel_stdlib::module_paths() {
        for mut c in stdlib_items(module) {
            if let Some(detail) = &mut c.detail {
                detail.push_str(&format!(" (add `import std.{module}.{{{}}};`)", c.label));
            }
            out.push(c);
        }
    }
    out.extend(
        KEYWORDS
            .iter()
            .map(|k| simple(k, CompletionKind::Keyword, "")),
    );
    let mut seen = BTreeSet::new();
    out.retain(|c| seen.insert(c.label.clone()));
    out
}

fn item_kind(kind: ItemKind) -> CompletionKind {
    match kind {
        ItemKind::Const => CompletionKind::Constant,
        ItemKind::Kernel => CompletionKind::Kernel,
        ItemKind::Layer => CompletionKind::Layer,
        ItemKind::Model | ItemKind::Run | ItemKind::Train => CompletionKind::Model,
    }
}

fn def_kind(kind: DefKind) -> CompletionKind {
    match kind {
        DefKind::Const | DefKind::LocalConst => CompletionKind::Constant,
        DefKind::Kernel => CompletionKind::Kernel,
        DefKind::Layer => CompletionKind::Layer,
        DefKind::Model | DefKind::Run | DefKind::Train => CompletionKind::Model,
        DefKind::InPort | DefKind::OutPort => CompletionKind::Port,
        DefKind::Task => CompletionKind::Task,
        _ => CompletionKind::Variable,
    }
}

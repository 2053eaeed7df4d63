//! Module-level checks of one file: imports (unknown module, unknown name, cycles),
//! duplicate top-level names, and at most one `run` item and one `train` item; and the name uses an import list
//! makes (`import_uses`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use salsa::Accumulator;
use wsel_syntax::ast::{self, Span};

use crate::analysis::NameUse;
use crate::db::{Db, Reported, SourceFile};
use crate::diagnostics::{did_you_mean, resolve, run, train};
use crate::items::{
    file_imports, import_target_path, importable_item, item_index, item_location, resolve_module,
};
use crate::syntax::parse;
use wsel_diagnostic::Location;

/// Reports the module-level problems of `file`.
#[salsa::tracked]
pub fn check_imports(db: &dyn Db, file: SourceFile) {
    let path = file.path(db).clone();
    let loc = |span: &Span| Location {
        file: path.clone(),
        span: span.clone(),
    };
    let module = parse(db, file);
    // Every module-level name (items and imported names), in source order, so that the
    // first definition is the one written first.
    let mut names: Vec<&ast::Ident> = Vec::new();
    let mut first_run: Option<Span> = None;
    let mut first_train: Option<Span> = None;
    for item in &module.items {
        let name = match item {
            ast::Item::Const(c) => &c.name,
            ast::Item::Kernel(k) => &k.name,
            ast::Item::Layer(l) => &l.name,
            ast::Item::Model(m) => &m.name,
            ast::Item::Run(r) => {
                match &first_run {
                    Some(first) => {
                        Reported(run::second_run(loc(&r.span), loc(first))).accumulate(db)
                    }
                    None => first_run = Some(r.span.clone()),
                }
                continue;
            }
            ast::Item::Train(t) => {
                match &first_train {
                    Some(first) => {
                        Reported(train::second_train(loc(&t.span), loc(first))).accumulate(db)
                    }
                    None => first_train = Some(t.span.clone()),
                }
                continue;
            }
            ast::Item::Import(import) => {
                names.extend(
                    import
                        .names
                        .iter()
                        .map(|n| n.alias.as_ref().unwrap_or(&n.name)),
                );
                continue;
            }
            ast::Item::Error(_) => continue,
        };
        names.push(name);
    }
    names.sort_by_key(|n| n.span.start);
    // name → where it is first defined.
    let mut defined: BTreeMap<String, Span> = BTreeMap::new();
    for name in names {
        match defined.get(&name.name) {
            Some(first) => Reported(resolve::duplicate_item(
                loc(&name.span),
                &name.name,
                loc(first),
            ))
            .accumulate(db),
            None => {
                defined.insert(name.name.clone(), name.span.clone());
            }
        }
    }
    for item in &module.items {
        let ast::Item::Import(import) = item else {
            continue;
        };
        let segments: Vec<String> = import.path.iter().map(|p| p.name.clone()).collect();
        let dotted = segments.join(".");
        let path_span = match (import.path.first(), import.path.last()) {
            (Some(a), Some(b)) => a.span.start..b.span.end,
            _ => import.span.clone(),
        };
        let Some(target) = resolve_module(db, file, &segments) else {
            let looked_for = import_target_path(&path, &segments);
            let mut d = resolve::unknown_module(
                loc(&path_span),
                &dotted,
                &looked_for.display().to_string(),
            );
            if segments.first().map(String::as_str) == Some("std") {
                let list: Vec<String> = wsel_stdlib::module_paths()
                    .map(|m| format!("`std.{m}`"))
                    .collect();
                d = d.with_help(format!("the standard library has {}", list.join(", ")));
            }
            Reported(d).accumulate(db);
            continue;
        };
        // Every file of a cycle sees it; it is reported once, by the file whose path comes
        // first, at its import that starts the cycle.
        if let Some(cycle) = find_cycle(db, file, target)
            && cycle.iter().all(|f| f.path(db) >= file.path(db))
        {
            let names: Vec<String> = cycle.iter().map(|f| file_name(db, *f)).collect();
            Reported(resolve::import_cycle(loc(&path_span), &names)).accumulate(db);
        }
        for n in &import.names {
            if importable_item(db, target, &n.name.name).is_none() {
                let names = item_index(db, target)
                    .iter()
                    .filter(|i| !i.kind(db).is_config())
                    .map(|i| i.name(db).as_str());
                let suggestion = did_you_mean(&n.name.name, names);
                Reported(resolve::unknown_import(
                    loc(&n.name.span),
                    &n.name.name,
                    &dotted,
                    suggestion,
                ))
                .accumulate(db);
            }
        }
    }
}

/// The names written in the import lists of `file` as name uses: every segment of a module
/// path that resolves refers to that module (its start), and an imported name and its alias
/// refer to the item imported. Unresolved ones refer to nothing (`check_imports` reports
/// them).
#[salsa::tracked(returns(ref))]
pub fn import_uses(db: &dyn Db, file: SourceFile) -> Vec<NameUse> {
    let mut uses = Vec::new();
    for item in &parse(db, file).items {
        let ast::Item::Import(import) = item else {
            continue;
        };
        let segments: Vec<String> = import.path.iter().map(|p| p.name.clone()).collect();
        let Some(target) = resolve_module(db, file, &segments) else {
            continue;
        };
        let module = Location {
            file: target.path(db).clone(),
            span: 0..0,
        };
        for segment in &import.path {
            uses.push(NameUse {
                span: segment.span.clone(),
                def: module.clone(),
            });
        }
        for name in &import.names {
            let Some(def) =
                importable_item(db, target, &name.name.name).and_then(|i| item_location(db, i))
            else {
                continue;
            };
            for written in std::iter::once(&name.name).chain(&name.alias) {
                uses.push(NameUse {
                    span: written.span.clone(),
                    def: def.clone(),
                });
            }
        }
    }
    uses
}

fn file_name(db: &dyn Db, f: SourceFile) -> String {
    let p: &PathBuf = f.path(db);
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// If importing `target` from `file` closes a cycle, the cycle's files starting and ending at
/// `file`.
fn find_cycle(db: &dyn Db, file: SourceFile, target: SourceFile) -> Option<Vec<SourceFile>> {
    // Depth-first search from `target` back to `file`, remembering the path.
    let mut stack: Vec<(SourceFile, Vec<SourceFile>)> = vec![(target, vec![file, target])];
    let mut seen = vec![target];
    while let Some((current, trail)) = stack.pop() {
        for import in file_imports(db, current) {
            let Some(next) = resolve_module(db, current, &import.path) else {
                continue;
            };
            if next == file {
                let mut files = trail.clone();
                files.push(file);
                return Some(files);
            }
            if !seen.contains(&next) {
                seen.push(next);
                let mut t = trail.clone();
                t.push(next);
                stack.push((next, t));
            }
        }
    }
    None
}

//! Items and module scopes: the interned id of every top-level item, the `item_index` and
//! `item_ast` queries that give per-item granularity, and `module_scope` (names → items,
//! imports resolved).
//!
//! Nothing here holds spans except `item_ast`, so an edit inside one item changes only that
//! item's `item_ast` (and those of the items after it, whose spans shift).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use wsel_syntax::ast;

use crate::db::{Db, FileSet, SourceFile};
use crate::syntax::parse;
use wsel_diagnostic::Location;

/// What kind of top-level item an [`ItemId`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ItemKind {
    Const,
    Kernel,
    Layer,
    Model,
    Run,
    Train,
}

impl ItemKind {
    /// The keyword that declares the item, for messages (`kernel`, `layer`, ...).
    pub fn keyword(self) -> &'static str {
        match self {
            ItemKind::Const => "constant",
            ItemKind::Kernel => "kernel",
            ItemKind::Layer => "layer",
            ItemKind::Model => "model",
            ItemKind::Run => "run configuration",
            ItemKind::Train => "training configuration",
        }
    }

    /// Whether the item is a configuration (`run`, `train`): it has no name of its own, so it
    /// is neither in scope nor importable.
    pub fn is_config(self) -> bool {
        matches!(self, ItemKind::Run | ItemKind::Train)
    }
}

/// A top-level item of a file, identified by its kind, name and the number of earlier items of
/// the same kind and name (0 unless the name is duplicated). The id survives edits to the
/// item's body, which is what lets per-item checks be reused.
#[salsa::interned(debug)]
pub struct ItemId<'db> {
    #[returns(copy)]
    pub file: SourceFile,
    #[returns(copy)]
    pub kind: ItemKind,
    #[returns(ref)]
    pub name: String,
    #[returns(copy)]
    pub ordinal: u32,
}

/// The items of `file`, in source order (imports are not items).
#[salsa::tracked(returns(ref))]
pub fn item_index<'db>(db: &'db dyn Db, file: SourceFile) -> Vec<ItemId<'db>> {
    let module = parse(db, file);
    let mut seen: BTreeMap<(ItemKind, String), u32> = BTreeMap::new();
    let mut items = Vec::new();
    for item in &module.items {
        let Some((kind, name)) = item_key(item) else {
            continue;
        };
        let ordinal = seen.entry((kind, name.clone())).or_insert(0);
        items.push(ItemId::new(db, file, kind, name, *ordinal));
        *ordinal += 1;
    }
    items
}

/// The syntax of one item. Re-executes on every edit of the file, but its result is equal
/// (and dependent queries are reused) unless this item's text or position changed.
#[salsa::tracked(returns(ref))]
pub fn item_ast<'db>(db: &'db dyn Db, item: ItemId<'db>) -> Option<ast::Item> {
    let module = parse(db, item.file(db));
    let mut ordinal = 0;
    for candidate in &module.items {
        if let Some((kind, name)) = item_key(candidate)
            && kind == item.kind(db)
            && &name == item.name(db)
        {
            if ordinal == item.ordinal(db) {
                return Some(candidate.clone());
            }
            ordinal += 1;
        }
    }
    None
}

/// The names visible at the top level of a file: its own items and what it imports.
#[derive(Debug, Clone, PartialEq, Eq, Default, salsa::SalsaValue)]
pub struct ModuleScope<'db> {
    pub names: BTreeMap<String, ItemId<'db>>,
}

impl<'db> ModuleScope<'db> {
    pub fn get(&self, name: &str) -> Option<ItemId<'db>> {
        self.names.get(name).copied()
    }
}

/// The module scope of `file`. A local item wins over an import of the same name, and the
/// first of duplicated names wins; those conflicts and unresolved imports are reported by
/// `check_imports`, not here. Only items defined in a module can be imported from it.
#[salsa::tracked(returns(ref))]
pub fn module_scope<'db>(db: &'db dyn Db, file: SourceFile) -> ModuleScope<'db> {
    let mut names = BTreeMap::new();
    for &item in item_index(db, file) {
        if !item.kind(db).is_config() {
            names.entry(item.name(db).clone()).or_insert(item);
        }
    }
    for import in file_imports(db, file) {
        let Some(target) = resolve_module(db, file, &import.path) else {
            continue;
        };
        for name in &import.names {
            let local = name.alias.as_ref().unwrap_or(&name.name);
            if let Some(found) = importable_item(db, target, &name.name.name) {
                names.entry(local.name.clone()).or_insert(found);
            }
        }
    }
    ModuleScope { names }
}

/// The local names of the imports of `file` that failed (unknown module, E0101, or unknown
/// item, E0102). Those errors are reported by `check_imports`; a use of such a name is not
/// reported again (the name is defined, with the error type).
#[salsa::tracked(returns(ref))]
pub fn unresolved_imports(db: &dyn Db, file: SourceFile) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for import in file_imports(db, file) {
        let target = resolve_module(db, file, &import.path);
        for name in &import.names {
            let found = target.is_some_and(|t| importable_item(db, t, &name.name.name).is_some());
            if !found {
                let local = name.alias.as_ref().unwrap_or(&name.name);
                out.insert(local.name.clone());
            }
        }
    }
    out
}

/// The item an import of `name` from `module` names: the first item so named that is not a
/// `run` or `train` item (only those can be imported).
pub fn importable_item<'db>(
    db: &'db dyn Db,
    module: SourceFile,
    name: &str,
) -> Option<ItemId<'db>> {
    item_index(db, module)
        .iter()
        .copied()
        .find(|i| !i.kind(db).is_config() && i.name(db) == name)
}

/// One `import` with its module path as strings (no spans, so it is stable across edits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportInfo {
    pub path: Vec<String>,
    pub names: Vec<ImportedName>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedName {
    pub name: ast::Ident,
    pub alias: Option<ast::Ident>,
}

/// The imports of `file`, without the spans of the module paths.
#[salsa::tracked(returns(ref))]
pub fn file_imports(db: &dyn Db, file: SourceFile) -> Vec<ImportInfo> {
    parse(db, file)
        .items
        .iter()
        .filter_map(|item| match item {
            ast::Item::Import(import) => Some(ImportInfo {
                path: import.path.iter().map(|p| p.name.clone()).collect(),
                names: import
                    .names
                    .iter()
                    .map(|n| ImportedName {
                        name: n.name.clone(),
                        alias: n.alias.clone(),
                    })
                    .collect(),
            }),
            _ => None,
        })
        .collect()
}

/// The path an import of `module_path` from the file at `importing` names: `<std>/a/b.wse`
/// for `std.a.b`, else `a/b.wse` beside the importing file.
pub fn import_target_path(importing: &Path, module_path: &[String]) -> PathBuf {
    let (base, rest) = match module_path.split_first() {
        Some((first, rest)) if first == "std" => (PathBuf::from(crate::STD_PREFIX), rest),
        _ => (
            importing
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
            module_path,
        ),
    };
    let mut path = base;
    for (i, segment) in rest.iter().enumerate() {
        if i + 1 == rest.len() {
            path.push(format!("{segment}.wse"));
        } else {
            path.push(segment);
        }
    }
    path
}

/// The file an import of `module_path` from `file` names, if the file set has it.
pub fn resolve_module(db: &dyn Db, file: SourceFile, module_path: &[String]) -> Option<SourceFile> {
    if module_path.is_empty() || module_path == ["std"] {
        return None;
    }
    let path = import_target_path(file.path(db), module_path);
    // The set is created by the loader; queries only read it.
    let set = FileSet::try_get(db)?;
    set.files(db).get(&path).copied()
}

/// Where an item's name is written, for secondary labels and go-to-definition.
pub fn item_location(db: &dyn Db, item: ItemId<'_>) -> Option<Location> {
    let span = match item_ast(db, item).as_ref()? {
        ast::Item::Const(c) => c.name.span.clone(),
        ast::Item::Kernel(k) => k.name.span.clone(),
        ast::Item::Layer(l) => l.name.span.clone(),
        ast::Item::Model(m) => m.name.span.clone(),
        ast::Item::Run(r) | ast::Item::Train(r) => r.model.span.clone(),
        ast::Item::Import(_) | ast::Item::Error(_) => return None,
    };
    Some(Location {
        file: item.file(db).path(db).clone(),
        span,
    })
}

/// The kind and name of an item, or `None` for imports and broken items.
fn item_key(item: &ast::Item) -> Option<(ItemKind, String)> {
    match item {
        ast::Item::Const(c) => Some((ItemKind::Const, c.name.name.clone())),
        ast::Item::Kernel(k) => Some((ItemKind::Kernel, k.name.name.clone())),
        ast::Item::Layer(l) => Some((ItemKind::Layer, l.name.name.clone())),
        ast::Item::Model(m) => Some((ItemKind::Model, m.name.name.clone())),
        ast::Item::Run(_) => Some((ItemKind::Run, String::new())),
        ast::Item::Train(_) => Some((ItemKind::Train, String::new())),
        ast::Item::Import(_) | ast::Item::Error(_) => None,
    }
}

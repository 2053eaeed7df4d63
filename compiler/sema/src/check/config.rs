//! What the `run` and `train` items share (docs/language.md §8, §11): the model they name, one
//! `input` per model input, and `key = value;` settings, each known to the item's [`Rules`]
//! and given once.

use std::collections::BTreeMap;

use salsa::Accumulator;
use wsel_diagnostic::{Diagnostic, Location};
use wsel_syntax::ast::{self, Span};

use crate::analysis::ItemAnalysis;
use crate::check::expr::Checker;
use crate::db::{Db, Reported};
use crate::diagnostics::{did_you_mean, resolve, run};
use crate::items::{ItemKind, item_ast, item_location};

/// The settings one kind of configuration item knows.
pub struct Rules {
    /// The keys of `key = value;` settings.
    pub keys: &'static [&'static str],
    /// Reports a known key's value of the wrong kind or out of range.
    pub check_value: fn(&mut Checker<'_>, &str, &ast::Expr),
    /// The diagnostic for a key not in `keys` (with a suggestion).
    pub unknown_setting: fn(Location, &str, Option<String>) -> Diagnostic,
    /// The diagnostic for a key given twice (at the second, with the first).
    pub repeated_setting: fn(Location, &str, Location) -> Diagnostic,
}

/// Checks a `run` or `train` item (`config`, the syntax of `item`) by `rules` and reports its
/// diagnostics.
pub fn check_config<'db>(
    db: &'db dyn Db,
    item: crate::items::ItemId<'db>,
    config: &ast::RunConfig,
    rules: &Rules,
) -> ItemAnalysis {
    let mut c = Checker::new(db, item.file(db));
    // The model and its inputs (name → definition).
    let mut inputs: Option<ModelInputs> = None;
    match c.module.get(&config.model.name) {
        Some(m) if m.kind(db) == ItemKind::Model => {
            if let Some(def) = item_location(db, m) {
                c.record_use(&config.model.span, def);
            }
            if let Some(ast::Item::Model(model)) = item_ast(db, m) {
                let list = model
                    .inputs
                    .iter()
                    .map(|p| (p.name.name.clone(), p.name.span.clone()))
                    .collect();
                inputs = Some(ModelInputs {
                    model: model.name.name.clone(),
                    inputs: list,
                    file: m.file(db).path(db).clone(),
                });
            }
        }
        Some(other) => {
            let def = item_location(db, other);
            let d = run::not_a_model(
                c.loc(&config.model.span),
                &config.model.name,
                other.kind(db).keyword(),
                def,
            );
            c.report(d);
        }
        None if c.is_failed_import(&config.model.name) => {}
        None => {
            let models: Vec<&String> = c
                .module
                .names
                .iter()
                .filter(|(_, i)| i.kind(db) == ItemKind::Model)
                .map(|(n, _)| n)
                .collect();
            let suggestion = did_you_mean(&config.model.name, models.iter().map(|s| s.as_str()));
            let d = resolve::unresolved_name(
                c.loc(&config.model.span),
                &config.model.name,
                "model",
                suggestion,
            );
            c.report(d);
        }
    }
    let mut given_inputs: BTreeMap<String, Span> = BTreeMap::new();
    let mut given_keys: BTreeMap<String, Span> = BTreeMap::new();
    for setting in &config.settings {
        match setting {
            ast::RunSetting::Input { name, .. } => {
                let Some(ModelInputs {
                    model,
                    inputs: list,
                    file,
                }) = &inputs
                else {
                    continue;
                };
                match list.iter().find(|(n, _)| n == &name.name) {
                    Some((_, def)) => {
                        let def = wsel_diagnostic::Location {
                            file: file.clone(),
                            span: def.clone(),
                        };
                        c.record_use(&name.span, def);
                    }
                    None => {
                        let suggestion =
                            did_you_mean(&name.name, list.iter().map(|(n, _)| n.as_str()));
                        let d =
                            run::unknown_input(c.loc(&name.span), &name.name, model, suggestion);
                        c.report(d);
                        continue;
                    }
                }
                if let Some(first) = given_inputs.get(&name.name) {
                    let d = run::input_count(
                        c.loc(&name.span),
                        format!("input `{}` is given more than once", name.name),
                        "given again here",
                    )
                    .with_secondary(c.loc(first), "first given here");
                    c.report(d);
                } else {
                    given_inputs.insert(name.name.clone(), name.span.clone());
                }
            }
            ast::RunSetting::Key { key, value, .. } => {
                if !rules.keys.contains(&key.name.as_str()) {
                    let suggestion = did_you_mean(&key.name, rules.keys.iter().copied());
                    let d = (rules.unknown_setting)(c.loc(&key.span), &key.name, suggestion);
                    c.report(d);
                    continue;
                }
                if let Some(first) = given_keys.get(&key.name) {
                    let d = (rules.repeated_setting)(c.loc(&key.span), &key.name, c.loc(first));
                    c.report(d);
                    continue;
                }
                given_keys.insert(key.name.clone(), key.span.clone());
                (rules.check_value)(&mut c, &key.name, value);
            }
        }
    }
    if let Some(ModelInputs {
        model,
        inputs: list,
        ..
    }) = &inputs
        && !c.is_cut_short(&config.span)
    {
        for (name, _) in list {
            if !given_inputs.contains_key(name) {
                let d = run::input_count(
                    c.loc(&config.model.span),
                    format!(
                        "the {} does not give input `{name}` of model `{model}`",
                        item.kind(db).keyword()
                    ),
                    "missing input",
                )
                .with_help(format!("add `input {name} = \"{name}.npy\";`"));
                c.report(d);
            }
        }
    }
    for d in c.diags {
        Reported(d).accumulate(db);
    }
    c.analysis
}

/// The model a `run` item names: its name, its inputs with their definitions, its file.
struct ModelInputs {
    model: String,
    inputs: Vec<(String, Span)>,
    file: std::path::PathBuf,
}

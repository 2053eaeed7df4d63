//! The `run` item: the model it names, one input per model input, and known settings with
//! values of the right kind. `output` and the other settings are optional here (the command
//! line can give them).

use std::collections::BTreeMap;

use salsa::Accumulator;
use wsel_syntax::ast::{self, Span};

use crate::analysis::ItemAnalysis;
use crate::check::expr::Checker;
use crate::db::{Db, Reported};
use crate::diagnostics::{did_you_mean, resolve, run};
use crate::items::{ItemKind, item_ast, item_location};

const KEYS: &[&str] = &["output", "labels", "target", "mode", "batch", "systems"];
const MODES: &[&str] = &["pipelined", "streaming", "auto"];

/// Checks one `run` item and reports its diagnostics.
#[salsa::tracked(returns(ref))]
pub fn check_run<'db>(db: &'db dyn Db, item: crate::items::ItemId<'db>) -> ItemAnalysis {
    let Some(ast::Item::Run(config)) = item_ast(db, item) else {
        return ItemAnalysis::default();
    };
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
                if !KEYS.contains(&key.name.as_str()) {
                    let suggestion = did_you_mean(&key.name, KEYS.iter().copied());
                    let d = run::unknown_setting(c.loc(&key.span), &key.name, suggestion);
                    c.report(d);
                    continue;
                }
                if let Some(first) = given_keys.get(&key.name) {
                    let d = run::repeated_setting(c.loc(&key.span), &key.name, c.loc(first));
                    c.report(d);
                    continue;
                }
                given_keys.insert(key.name.clone(), key.span.clone());
                check_value(&mut c, &key.name, value);
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
                        "the run configuration does not give input `{name}` of model `{model}`"
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

fn check_value(c: &mut Checker<'_>, key: &str, value: &ast::Expr) {
    let ok = match (key, value) {
        ("batch", ast::Expr::Int(n, _)) => *n > 0,
        ("batch", _) => false,
        ("systems", ast::Expr::Int(n, _)) => (1..=u64::from(u32::MAX)).contains(n),
        ("systems", _) => false,
        ("mode", ast::Expr::Str(s, _)) => MODES.contains(&s.as_str()),
        (_, ast::Expr::Str(..)) => key != "mode",
        _ => false,
    };
    if !ok {
        let expected = match key {
            "batch" => "a positive integer",
            "systems" => "a positive integer (the systems of a cluster)",
            "mode" => "\"pipelined\", \"streaming\" or \"auto\"",
            "target" => "a string: \"dev\", \"wse2\", \"wse3\" or a path to a target .toml",
            _ => "a string path",
        };
        let d = run::bad_setting_value(c.loc(&value.span()), key, expected);
        c.report(d);
    }
}

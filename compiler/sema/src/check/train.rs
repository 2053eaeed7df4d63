//! The `train` item (docs/language.md §11): what `check::config` checks of every
//! configuration item, each training setting's value (E1110, with the learning rate's and the
//! optimizer's ranges as E1106/E1107 at the value), and settings that exclude each other
//! (E1112).

use std::collections::BTreeMap;

use salsa::Accumulator;
use wsel_syntax::ast::{self, Span, UnaryOp};

use crate::analysis::ItemAnalysis;
use crate::check::config::{Rules, check_config};
use crate::check::expr::Checker;
use crate::db::{Db, Reported};
use crate::diagnostics::train;
use crate::items::{ItemId, item_ast};

/// The keys of a `train` item's `key = value;` settings.
pub const KEYS: &[&str] = &[
    "labels",
    "loss",
    "optimizer",
    "lr",
    "momentum",
    "beta1",
    "beta2",
    "eps",
    "steps",
    "epochs",
    "batch",
    "micro_batch",
    "recompute",
    "seed",
    "shuffle",
    "target",
    "mode",
    "out_dir",
];

/// The values of the `recompute` setting.
pub const RECOMPUTE: &[&str] = &["auto", "never", "always"];

const RULES: Rules = Rules {
    keys: KEYS,
    check_value,
    unknown_setting: train::unknown_setting,
    repeated_setting: train::repeated_setting,
};

/// Checks one `train` item and reports its diagnostics.
#[salsa::tracked(returns(ref))]
pub fn check_train<'db>(db: &'db dyn Db, item: ItemId<'db>) -> ItemAnalysis {
    let Some(ast::Item::Train(config)) = item_ast(db, item) else {
        return ItemAnalysis::default();
    };
    let analysis = check_config(db, item, config, &RULES);
    let path = item.file(db).path(db).clone();
    for d in conflicts(&path, config) {
        Reported(d).accumulate(db);
    }
    analysis
}

/// The value of a number literal, negated or not (`0.05`, `-1`, `1e-8`).
pub fn number(value: &ast::Expr) -> Option<f64> {
    match value {
        ast::Expr::Int(n, _) => Some(*n as f64),
        ast::Expr::Float(x, _) => Some(*x),
        ast::Expr::Unary {
            op: UnaryOp::Neg,
            operand,
            ..
        } => number(operand).map(|x| -x),
        _ => None,
    }
}

fn check_value(c: &mut Checker<'_>, key: &str, value: &ast::Expr) {
    let at = c.loc(&value.span());
    let bad = |expected: &str| Some(train::bad_value(at.clone(), key, expected));
    let unit = |x: f64| {
        (!(0.0..1.0).contains(&x))
            .then(|| train::optimizer_setting(at.clone(), key, x, "at least 0 and below 1"))
    };
    let d = match (key, value, number(value)) {
        ("labels" | "target" | "out_dir" | "loss", ast::Expr::Str(..), _) => None,
        ("labels" | "out_dir" | "loss", ..) => bad("a string"),
        ("target", ..) => bad("a string: \"dev\", \"wse2\", \"wse3\" or a path to a target .toml"),
        ("optimizer", ast::Expr::Str(s, _), _) if s == "sgd" || s == "adam" => None,
        ("optimizer", ..) => bad("\"sgd\" or \"adam\""),
        ("mode", ast::Expr::Str(s, _), _) if s == "streaming" || s == "pipelined" => None,
        ("mode", ..) => bad("\"streaming\" or \"pipelined\""),
        ("recompute", ast::Expr::Str(s, _), _) if RECOMPUTE.contains(&s.as_str()) => None,
        ("recompute", ..) => Some(train::bad_recompute(at.clone())),
        ("shuffle", ast::Expr::Bool(..), _) => None,
        ("shuffle", ..) => bad("`true` or `false`"),
        ("steps" | "epochs" | "batch" | "micro_batch", ast::Expr::Int(n, _), _) if *n > 0 => None,
        ("steps" | "epochs" | "batch" | "micro_batch", ..) => bad("a positive integer"),
        ("seed", ast::Expr::Int(..), _) => None,
        ("seed", ..) => bad("a non-negative integer"),
        (_, _, None) => bad("a number"),
        ("lr", _, Some(x)) => {
            (!(x.is_finite() && x > 0.0)).then(|| train::learning_rate(at.clone(), x))
        }
        ("eps", _, Some(x)) => (!(x.is_finite() && x > 0.0))
            .then(|| train::optimizer_setting(at.clone(), key, x, "a finite positive number")),
        (_, _, Some(x)) => unit(x),
    };
    if let Some(d) = d {
        c.report(d);
    }
}

/// E1112: `steps` with `epochs`, and a setting of the optimizer not chosen (SGD unless
/// `optimizer = "adam";`).
fn conflicts(path: &std::path::Path, config: &ast::RunConfig) -> Vec<wsel_diagnostic::Diagnostic> {
    let loc = |span: &Span| wsel_diagnostic::Location {
        file: path.to_path_buf(),
        span: span.clone(),
    };
    let mut given: BTreeMap<&str, (Span, &ast::Expr)> = BTreeMap::new();
    for setting in &config.settings {
        if let ast::RunSetting::Key { key, value, .. } = setting {
            given
                .entry(key.name.as_str())
                .or_insert((key.span.clone(), value));
        }
    }
    let mut out = Vec::new();
    if let (Some((steps, _)), Some((epochs, _))) = (given.get("steps"), given.get("epochs")) {
        let (later, earlier) = if steps.start > epochs.start {
            (steps, epochs)
        } else {
            (epochs, steps)
        };
        out.push(train::conflicting(
            loc(later),
            "`steps` and `epochs` both say how long to train: give one of them",
            loc(earlier),
            "the other one",
        ));
    }
    let adam = matches!(given.get("optimizer"), Some((_, ast::Expr::Str(s, _))) if s == "adam");
    let (chosen, foreign): (&str, &[&str]) = if adam {
        ("adam", &["momentum"])
    } else {
        ("sgd", &["beta1", "beta2", "eps"])
    };
    for key in foreign {
        if let Some((span, _)) = given.get(key) {
            let d = train::conflicting(
                loc(span),
                format!("`{key}` is not a setting of the optimizer `{chosen}`"),
                given
                    .get("optimizer")
                    .map_or_else(|| loc(&config.span), |(s, _)| loc(s)),
                if given.contains_key("optimizer") {
                    "the optimizer chosen here"
                } else {
                    "no `optimizer` given: SGD with momentum"
                },
            );
            out.push(d);
        }
    }
    out
}

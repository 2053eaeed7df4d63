//! The `run` item: the model it names, one input per model input (`check::config`), and known
//! settings with values of the right kind. `output` and the other settings are optional here
//! (the command line can give them).

use wsel_syntax::ast;

use crate::analysis::ItemAnalysis;
use crate::check::config::{Rules, check_config};
use crate::check::expr::Checker;
use crate::db::Db;
use crate::diagnostics::run;

const KEYS: &[&str] = &[
    "output",
    "labels",
    "target",
    "mode",
    "micro_order",
    "batch",
    "systems",
];
const MODES: &[&str] = &["pipelined", "streaming", "auto"];
const MICRO_ORDERS: &[&str] = &["auto", "micro", "layer"];

const RULES: Rules = Rules {
    keys: KEYS,
    check_value,
    unknown_setting: run::unknown_setting,
    repeated_setting: run::repeated_setting,
};

/// Checks one `run` item and reports its diagnostics.
#[salsa::tracked(returns(ref))]
pub fn check_run<'db>(db: &'db dyn Db, item: crate::items::ItemId<'db>) -> ItemAnalysis {
    match crate::items::item_ast(db, item) {
        Some(ast::Item::Run(config)) => check_config(db, item, config, &RULES),
        _ => ItemAnalysis::default(),
    }
}

fn check_value(c: &mut Checker<'_>, key: &str, value: &ast::Expr) {
    let ok = match (key, value) {
        ("batch", ast::Expr::Int(n, _)) => *n > 0,
        ("batch", _) => false,
        ("systems", ast::Expr::Int(n, _)) => (1..=u64::from(u32::MAX)).contains(n),
        ("systems", _) => false,
        ("mode", ast::Expr::Str(s, _)) => MODES.contains(&s.as_str()),
        ("micro_order", ast::Expr::Str(s, _)) => MICRO_ORDERS.contains(&s.as_str()),
        (_, ast::Expr::Str(..)) => key != "mode" && key != "micro_order",
        _ => false,
    };
    if !ok {
        let expected = match key {
            "batch" => "a positive integer",
            "systems" => "a positive integer (the systems of a cluster)",
            "mode" => "\"pipelined\", \"streaming\" or \"auto\"",
            "micro_order" => "\"auto\", \"micro\" or \"layer\"",
            "target" => "a string: \"dev\", \"wse2\", \"wse3\" or a path to a target .toml",
            _ => "a string path",
        };
        let d = run::bad_setting_value(c.loc(&value.span()), key, expected);
        c.report(d);
    }
}

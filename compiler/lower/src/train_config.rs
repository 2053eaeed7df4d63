//! The `train` item of a file as plain data for `wsel train` (docs/language.md §11): the
//! settings it shares with `run` (model, inputs, labels, target, mode, batch) and the
//! training settings. Every one is optional: a command-line flag overrides it, a default
//! stands in for it. The item is assumed checked (E1106–E1112): a value of the wrong kind is
//! left out.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use wsel_ir::graph::SourceSpan;
use wsel_sema::check::train::number;
use wsel_sema::{Db, ItemKind, SourceFile};
use wsel_syntax::ast;

use crate::graph::resolve_path;
use crate::run_config::{RunConfig, config_item, lower_data};

/// The `optimizer` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OptimizerName {
    Sgd,
    Adam,
}

/// The `recompute` setting: whether the backward pass of streamed training recomputes
/// activations instead of keeping them from the forward pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RecomputeChoice {
    /// When the kept activations do not fit, and recomputing is estimated faster than
    /// micro-batches.
    Auto,
    /// Never: micro-batches when the kept activations do not fit.
    Never,
    /// Always: some activations are recomputed even when all would fit.
    Always,
}

/// The settings of a `train` item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    /// What a `run` item could say as well; its `output` is always `None`.
    pub data: RunConfig,
    /// The loss layer's name, with where it is written (E1101 points there).
    pub loss: Option<(String, SourceSpan)>,
    pub optimizer: Option<OptimizerName>,
    pub lr: Option<f32>,
    pub momentum: Option<f32>,
    pub beta1: Option<f32>,
    pub beta2: Option<f32>,
    pub eps: Option<f32>,
    pub steps: Option<u64>,
    pub epochs: Option<u64>,
    pub micro_batch: Option<u64>,
    pub recompute: Option<RecomputeChoice>,
    pub seed: Option<u64>,
    pub shuffle: Option<bool>,
    /// The folder for the trained weights, loss.csv and loss.svg.
    pub out_dir: Option<PathBuf>,
}

/// The first `train` item of `file`, if it has one.
pub fn lower_train_config(db: &dyn Db, file: SourceFile) -> Option<TrainConfig> {
    let item = config_item(db, file, ItemKind::Train)?;
    let path = file.path(db);
    let mut config = TrainConfig {
        data: lower_data(path, item),
        loss: None,
        optimizer: None,
        lr: None,
        momentum: None,
        beta1: None,
        beta2: None,
        eps: None,
        steps: None,
        epochs: None,
        micro_batch: None,
        recompute: None,
        seed: None,
        shuffle: None,
        out_dir: None,
    };
    for setting in &item.settings {
        if let ast::RunSetting::Key { key, value, .. } = setting {
            apply(&mut config, path, &key.name, value);
        }
    }
    Some(config)
}

fn apply(config: &mut TrainConfig, file: &std::path::Path, key: &str, value: &ast::Expr) {
    let real = number(value).map(|x| x as f32);
    let count = match value {
        ast::Expr::Int(n, _) => Some(*n),
        _ => None,
    };
    match (key, value) {
        ("loss", ast::Expr::Str(s, span)) => {
            let at = SourceSpan {
                file: file.to_path_buf(),
                span: span.clone(),
            };
            config.loss = Some((s.clone(), at));
        }
        ("optimizer", ast::Expr::Str(s, _)) => {
            config.optimizer = match s.as_str() {
                "sgd" => Some(OptimizerName::Sgd),
                "adam" => Some(OptimizerName::Adam),
                _ => None,
            };
        }
        ("recompute", ast::Expr::Str(s, _)) => {
            config.recompute = match s.as_str() {
                "auto" => Some(RecomputeChoice::Auto),
                "never" => Some(RecomputeChoice::Never),
                "always" => Some(RecomputeChoice::Always),
                _ => None,
            };
        }
        ("out_dir", ast::Expr::Str(s, _)) => config.out_dir = Some(resolve_path(file, s)),
        ("shuffle", ast::Expr::Bool(b, _)) => config.shuffle = Some(*b),
        ("lr", _) => config.lr = real,
        ("momentum", _) => config.momentum = real,
        ("beta1", _) => config.beta1 = real,
        ("beta2", _) => config.beta2 = real,
        ("eps", _) => config.eps = real,
        ("steps", _) => config.steps = count.filter(|n| *n > 0),
        ("epochs", _) => config.epochs = count.filter(|n| *n > 0),
        ("micro_batch", _) => config.micro_batch = count.filter(|n| *n > 0),
        ("seed", _) => config.seed = count,
        _ => {}
    }
}

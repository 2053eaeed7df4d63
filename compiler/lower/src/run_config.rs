//! The `run` item of a file as plain data for the driver: the model, input paths resolved
//! against the file's folder, and the optional settings (the command line may override each).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use wsel_ir::graph::SourceSpan;
use wsel_sema::{Db, ItemId, ItemKind, SourceFile, item_ast, item_index, module_scope};
use wsel_syntax::ast;

use crate::graph::resolve_path;

/// The `mode` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RunMode {
    Pipelined,
    Streaming,
    Auto,
}

/// The `micro_order` setting: the order of weight streaming's micro-batches
/// (`docs/running.md`, "Micro-batches").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RunMicroOrder {
    Auto,
    Micro,
    Layer,
}

/// The `target` setting: a preset name, or a target description file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TargetSpec {
    /// `dev`, `wse2` or `wse3`.
    Preset(String),
    /// A path to a target `.toml`, resolved against the file's folder.
    File(PathBuf),
}

/// The settings of a `run` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunConfig {
    /// The model's name as written (look it up with [`find_model`]).
    pub model: String,
    /// One `(input name, .npy path)` per `input` setting, in source order.
    pub inputs: Vec<(String, PathBuf)>,
    pub output: Option<PathBuf>,
    pub labels: Option<PathBuf>,
    pub target: Option<TargetSpec>,
    pub mode: Option<RunMode>,
    /// `micro_order = "auto" | "micro" | "layer";` (`--micro-order` overrides it).
    pub micro_order: Option<RunMicroOrder>,
    pub batch: Option<u64>,
    /// `systems = N;`: a cluster of N systems in data parallel (`--systems` overrides it).
    pub systems: Option<u32>,
    /// The whole `run` item.
    pub span: SourceSpan,
}

/// The target names that are presets rather than paths.
pub const TARGET_PRESETS: &[&str] = &["dev", "wse2", "wse3"];

/// The first `run` item of `file`, if it has one. Settings with values of the wrong kind
/// (reported by the checker) are left out.
pub fn lower_run_config(db: &dyn Db, file: SourceFile) -> Option<RunConfig> {
    let run = config_item(db, file, ItemKind::Run)?;
    Some(lower_data(file.path(db), run))
}

/// The syntax of the first configuration item of `kind` (`run` or `train`) in `file`.
pub(crate) fn config_item(
    db: &dyn Db,
    file: SourceFile,
    kind: ItemKind,
) -> Option<&ast::RunConfig> {
    let item = item_index(db, file)
        .iter()
        .copied()
        .find(|i| i.kind(db) == kind)?;
    match item_ast(db, item) {
        Some(ast::Item::Run(config) | ast::Item::Train(config)) => Some(config),
        _ => None,
    }
}

/// The settings a `run` and a `train` item share (model, inputs, labels, target, mode,
/// micro_order, batch, output) of `run`, written in the file at `path`; other keys are left out.
pub(crate) fn lower_data(path: &Path, run: &ast::RunConfig) -> RunConfig {
    let mut config = RunConfig {
        model: run.model.name.clone(),
        inputs: Vec::new(),
        output: None,
        labels: None,
        target: None,
        mode: None,
        micro_order: None,
        batch: None,
        systems: None,
        span: SourceSpan {
            file: path.to_path_buf(),
            span: run.span.clone(),
        },
    };
    for setting in &run.settings {
        match setting {
            ast::RunSetting::Input { name, path: p, .. } => {
                config
                    .inputs
                    .push((name.name.clone(), resolve_path(path, p)));
            }
            ast::RunSetting::Key { key, value, .. } => apply(&mut config, path, &key.name, value),
        }
    }
    config
}

/// The model named `name` in the scope of `file` (defined there or imported).
pub fn find_model<'db>(db: &'db dyn Db, file: SourceFile, name: &str) -> Option<ItemId<'db>> {
    module_scope(db, file)
        .get(name)
        .filter(|i| i.kind(db) == ItemKind::Model)
}

fn apply(config: &mut RunConfig, file: &Path, key: &str, value: &ast::Expr) {
    match (key, value) {
        ("output", ast::Expr::Str(s, _)) => config.output = Some(resolve_path(file, s)),
        ("labels", ast::Expr::Str(s, _)) => config.labels = Some(resolve_path(file, s)),
        ("target", ast::Expr::Str(s, _)) => {
            config.target = Some(if TARGET_PRESETS.contains(&s.as_str()) {
                TargetSpec::Preset(s.clone())
            } else {
                TargetSpec::File(resolve_path(file, s))
            });
        }
        ("mode", ast::Expr::Str(s, _)) => {
            config.mode = match s.as_str() {
                "pipelined" => Some(RunMode::Pipelined),
                "streaming" => Some(RunMode::Streaming),
                "auto" => Some(RunMode::Auto),
                _ => None,
            };
        }
        ("micro_order", ast::Expr::Str(s, _)) => {
            config.micro_order = match s.as_str() {
                "auto" => Some(RunMicroOrder::Auto),
                "micro" => Some(RunMicroOrder::Micro),
                "layer" => Some(RunMicroOrder::Layer),
                _ => None,
            };
        }
        ("batch", ast::Expr::Int(n, _)) if *n > 0 => config.batch = Some(*n),
        ("systems", ast::Expr::Int(n, _)) if *n > 0 => config.systems = u32::try_from(*n).ok(),
        _ => {}
    }
}

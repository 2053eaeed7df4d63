//! `wsel train`'s settings: each override (a flag, or an argument of the library call),
//! else the file's `train` item, else its default (docs/running.md, "Training"). The item's
//! data settings (inputs, labels, target, batch) replace the `run` item's when the file has a
//! `train` item.

use std::path::{Path, PathBuf};

use wsel_lower::{OptimizerName, RecomputeChoice, RunConfig, RunMode, TrainConfig};
use wsel_sema::Location;

use crate::cli::{BackendArg, ModeArg, OptimizerArg, RecomputeArg, TrainArgs};
use crate::training::{Optimizer, Settings};

/// The settings a caller gives over the file's `train` item: `None` takes the item's, then
/// the default. `wsel train`'s flags, or the arguments of `wsel.train` in Python.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainOverrides {
    pub target: Option<String>,
    pub mode: Option<ModeArg>,
    pub loss: Option<String>,
    pub optimizer: Option<OptimizerArg>,
    pub lr: Option<f32>,
    pub momentum: Option<f32>,
    pub beta1: Option<f32>,
    pub beta2: Option<f32>,
    pub eps: Option<f32>,
    /// At most one of `steps` and `epochs`; either replaces both of the item's.
    pub steps: Option<u64>,
    pub epochs: Option<u64>,
    pub batch: Option<u64>,
    pub micro_batch: Option<u64>,
    pub recompute: Option<RecomputeArg>,
    /// Every streamed phase on one region (no per-layer rows).
    pub one_region: bool,
    pub seed: Option<u64>,
    pub shuffle: Option<bool>,
    pub systems: Option<u32>,
    pub backend: BackendArg,
    pub threads: crate::threads::Threads,
    pub max_cycles: u64,
}

impl TrainOverrides {
    /// `wsel train`'s flags.
    pub fn of_args(args: &TrainArgs) -> TrainOverrides {
        TrainOverrides {
            target: args.target.clone(),
            mode: args.mode,
            loss: args.loss.clone(),
            optimizer: args.optimizer,
            lr: args.lr,
            momentum: args.momentum,
            beta1: args.beta1,
            beta2: args.beta2,
            eps: args.eps,
            steps: args.steps,
            epochs: args.epochs,
            batch: args.batch,
            micro_batch: args.micro_batch,
            recompute: args.recompute,
            one_region: args.one_region,
            seed: args.seed,
            shuffle: (args.shuffle || args.no_shuffle).then_some(args.shuffle),
            systems: args.systems,
            backend: args.backend,
            threads: args.threads,
            max_cycles: args.max_cycles,
        }
    }
}

/// The loss layer's name and where an unknown one is reported (E1101).
pub struct LossChoice {
    pub name: String,
    /// The item's `loss = "...";` value, if the name comes from there.
    pub at: Option<Location>,
}

/// The configuration the data comes from: the `train` item's, else the `run` item's.
pub fn data_config<'a>(
    train: Option<&'a TrainConfig>,
    run: Option<&'a RunConfig>,
) -> Option<&'a RunConfig> {
    train.map(|t| &t.data).or(run)
}

/// Whether training runs pipelined: `--mode`, else the item's `mode`, else streaming.
pub fn pipelined(args: &TrainOverrides, item: Option<&TrainConfig>) -> bool {
    match args.mode {
        Some(mode) => mode == ModeArg::Pipelined,
        None => item.and_then(|t| t.data.mode) == Some(RunMode::Pipelined),
    }
}

/// Whether streamed training recomputes activations: `--recompute`, else the item's, else
/// `auto`.
pub fn recompute(args: &TrainOverrides, item: Option<&TrainConfig>) -> RecomputeChoice {
    match args.recompute {
        Some(RecomputeArg::Auto) => RecomputeChoice::Auto,
        Some(RecomputeArg::Never) => RecomputeChoice::Never,
        Some(RecomputeArg::Always) => RecomputeChoice::Always,
        None => item
            .and_then(|t| t.recompute)
            .unwrap_or(RecomputeChoice::Auto),
    }
}

/// The loss: `--loss`, else the item's, else `cross_entropy`.
pub fn loss(args: &TrainOverrides, item: Option<&TrainConfig>) -> LossChoice {
    if let Some(name) = &args.loss {
        return LossChoice {
            name: name.clone(),
            at: None,
        };
    }
    match item.and_then(|t| t.loss.as_ref()) {
        Some((name, at)) => LossChoice {
            name: name.clone(),
            at: Some(Location {
                file: at.file.clone(),
                span: at.span.clone(),
            }),
        },
        None => LossChoice {
            name: "cross_entropy".into(),
            at: None,
        },
    }
}

/// The optimizer, learning rate, step count and batch order; `per_epoch` is the number of
/// whole batches in the data, `batch` the samples per step.
pub fn settings(
    args: &TrainOverrides,
    item: Option<&TrainConfig>,
    batch: u64,
    per_epoch: u64,
) -> Settings {
    let pick = |flag: Option<f32>, of: fn(&TrainConfig) -> Option<f32>, default: f32| {
        flag.or(item.and_then(of)).unwrap_or(default)
    };
    let adam = match args.optimizer {
        Some(choice) => choice == OptimizerArg::Adam,
        None => item.and_then(|t| t.optimizer) == Some(OptimizerName::Adam),
    };
    let optimizer = if adam {
        Optimizer::Adam {
            beta1: pick(args.beta1, |t| t.beta1, 0.9),
            beta2: pick(args.beta2, |t| t.beta2, 0.999),
            eps: pick(args.eps, |t| t.eps, 1e-8),
        }
    } else {
        Optimizer::Sgd {
            momentum: pick(args.momentum, |t| t.momentum, 0.9),
        }
    };
    // Flags win over the item as a pair: `--epochs` replaces the item's `steps`.
    let (steps, epochs) = match (args.steps, args.epochs) {
        (None, None) => (item.and_then(|t| t.steps), item.and_then(|t| t.epochs)),
        flags => flags,
    };
    let shuffle = args
        .shuffle
        .or(item.and_then(|t| t.shuffle))
        .unwrap_or(true);
    Settings {
        optimizer,
        lr: pick(args.lr, |t| t.lr, 0.01),
        steps: match (steps, epochs) {
            (Some(steps), _) => steps,
            (None, Some(epochs)) => epochs * per_epoch,
            (None, None) => per_epoch,
        },
        batch,
        micro_batch: args
            .micro_batch
            .or(item.and_then(|t| t.micro_batch))
            .unwrap_or(batch),
        seed: args.seed.or(item.and_then(|t| t.seed)).unwrap_or(0),
        shuffle,
    }
}

/// The output folder: `--out`, else the item's `out_dir`, else `out/train` beside the file.
pub fn out_dir(args: &TrainArgs, item_out_dir: Option<&PathBuf>) -> PathBuf {
    args.out
        .clone()
        .or_else(|| item_out_dir.cloned())
        .unwrap_or_else(|| {
            args.file
                .parent()
                .unwrap_or(Path::new("."))
                .join("out")
                .join("train")
        })
}

//! `wsel.train`'s settings as the Python half passes them: each `None` takes the program's
//! `train` item's value, then `wsel train`'s default.

use pyo3::prelude::*;
use wsel::cli::{BackendArg, ModeArg, OptimizerArg, RecomputeArg};
use wsel::train_settings::TrainOverrides;

use crate::program::{backend_arg, invalid, mode_arg};

/// The settings over the `train` item, with the simulator's threads and cycle budget.
#[derive(FromPyObject)]
pub struct TrainSettings {
    #[pyo3(item)]
    target: Option<String>,
    #[pyo3(item, from_py_with = mode_arg)]
    mode: Option<ModeArg>,
    #[pyo3(item)]
    loss: Option<String>,
    #[pyo3(item, from_py_with = optimizer_arg)]
    optimizer: Option<OptimizerArg>,
    #[pyo3(item)]
    lr: Option<f32>,
    #[pyo3(item)]
    momentum: Option<f32>,
    #[pyo3(item)]
    beta1: Option<f32>,
    #[pyo3(item)]
    beta2: Option<f32>,
    #[pyo3(item)]
    eps: Option<f32>,
    #[pyo3(item)]
    steps: Option<u64>,
    #[pyo3(item)]
    epochs: Option<u64>,
    #[pyo3(item)]
    batch: Option<u64>,
    #[pyo3(item)]
    micro_batch: Option<u64>,
    #[pyo3(item, from_py_with = recompute_arg)]
    recompute: Option<RecomputeArg>,
    #[pyo3(item)]
    seed: Option<u64>,
    #[pyo3(item)]
    shuffle: Option<bool>,
    #[pyo3(item)]
    systems: Option<u32>,
    #[pyo3(item, from_py_with = backend_arg)]
    backend: BackendArg,
    #[pyo3(item)]
    threads: usize,
    #[pyo3(item)]
    max_cycles: u64,
}

impl TrainSettings {
    /// The driver's overrides of the `train` item.
    pub fn overrides(&self) -> TrainOverrides {
        TrainOverrides {
            target: self.target.clone(),
            mode: self.mode,
            loss: self.loss.clone(),
            optimizer: self.optimizer,
            lr: self.lr,
            momentum: self.momentum,
            beta1: self.beta1,
            beta2: self.beta2,
            eps: self.eps,
            steps: self.steps,
            epochs: self.epochs,
            batch: self.batch,
            micro_batch: self.micro_batch,
            recompute: self.recompute,
            one_region: false,
            seed: self.seed,
            shuffle: self.shuffle,
            systems: self.systems,
            backend: self.backend,
            threads: wsel::threads::Threads::at_most(self.threads),
            max_cycles: self.max_cycles,
        }
    }
}

fn optimizer_arg(value: &Bound<'_, PyAny>) -> PyResult<Option<OptimizerArg>> {
    let Some(name) = value.extract::<Option<String>>()? else {
        return Ok(None);
    };
    match name.as_str() {
        "sgd" => Ok(Some(OptimizerArg::Sgd)),
        "adam" => Ok(Some(OptimizerArg::Adam)),
        other => Err(invalid("optimizer", other, "'sgd' or 'adam'")),
    }
}

fn recompute_arg(value: &Bound<'_, PyAny>) -> PyResult<Option<RecomputeArg>> {
    let Some(name) = value.extract::<Option<String>>()? else {
        return Ok(None);
    };
    match name.as_str() {
        "auto" => Ok(Some(RecomputeArg::Auto)),
        "never" => Ok(Some(RecomputeArg::Never)),
        "always" => Ok(Some(RecomputeArg::Always)),
        other => Err(invalid("recompute", other, "'auto', 'never' or 'always'")),
    }
}

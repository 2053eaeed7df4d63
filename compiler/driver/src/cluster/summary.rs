//! What a process sends process 0: every system's figures and result, or why it failed.
//! Plain data, serialised with postcard; nothing in it depends on which process sent it.

use serde::{Deserialize, Serialize};
use wsel_ir::kernel::ScalarTy;

use crate::pipeline::BuildError;
use crate::render::SourceTexts;
use crate::run_report::RunReport;
use crate::status::Status;
use crate::tensor::Tensor;

/// One process's systems and, on the last process, the one-system run.
#[derive(Serialize, Deserialize)]
pub struct RankPayload {
    /// Whether the phase barrier ended without a failure.
    pub ok: bool,
    pub systems: Vec<Result<SystemSummary, Failure>>,
    pub baseline: Option<Result<SystemSummary, Failure>>,
}

impl RankPayload {
    /// What stands for a payload process 0 cannot decode.
    pub fn unreadable() -> RankPayload {
        RankPayload {
            ok: false,
            systems: Vec::new(),
            baseline: None,
        }
    }
}

/// A system's run: its figures and its part of the result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SystemSummary {
    /// The system's number (`u32::MAX` for the one-system run of the whole batch).
    pub system: u32,
    pub first_sample: u64,
    pub samples: u64,
    /// When it finished, on the cluster's clock (its phases start with the cluster's).
    pub cycles: u64,
    /// Of those, the cycles it waited at the end of its phases for slower systems.
    pub wait_cycles: u64,
    pub wavelet_hops: u64,
    /// Weight streaming's passes over the layers (micro-batches); 1 otherwise.
    pub micro_batches: u32,
    /// Per layer whose weights stream from the store (the report's weight table).
    pub layers: Vec<LayerLoad>,
    pub elem: ScalarTy,
    pub shape: Vec<u64>,
    pub words: Vec<u32>,
}

/// A layer's weight streaming on one system.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LayerLoad {
    pub layer: String,
    pub weight_bytes: u64,
    pub compute_cycles: u64,
    pub load_cycles: u64,
    pub stall_cycles: u64,
    pub stalled_by: Option<String>,
    pub stall_free_bytes_per_cycle: Option<f64>,
}

impl SystemSummary {
    pub fn new(
        system: u32,
        first_sample: u64,
        report: &RunReport,
        simulation: &wsel_sim::Report,
        wait_cycles: u64,
        result: &Tensor,
    ) -> SystemSummary {
        let layers = report
            .layers
            .iter()
            .filter_map(|row| {
                let w = row.weights?;
                Some(LayerLoad {
                    layer: row.name.clone(),
                    weight_bytes: w.weight_bytes,
                    compute_cycles: w.compute_cycles,
                    load_cycles: w.load_cycles,
                    stall_cycles: w.stall_cycles,
                    stalled_by: w.stalled_by.map(|c| c.name().to_string()),
                    stall_free_bytes_per_cycle: w.stall_free_bytes_per_cycle,
                })
            })
            .collect();
        SystemSummary {
            system,
            first_sample,
            samples: report.batch,
            cycles: report.cycles,
            wait_cycles,
            wavelet_hops: simulation.wavelet_hops,
            micro_batches: report.micro_batches.as_ref().map_or(1, |m| m.count),
            layers,
            elem: result.elem,
            shape: result.shape.clone(),
            words: result.words.clone(),
        }
    }
}

/// Why a process or one of its systems failed, rendered where it happened.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Failure {
    /// The system, when a system's simulation failed (`u32::MAX`: the one-system run).
    pub system: Option<u32>,
    /// The error as `wsel run` prints it.
    pub text: String,
    /// The exit status it calls for.
    pub status: u8,
    /// Whether the system only stopped because another failed.
    pub aborted: bool,
}

impl Failure {
    /// `error` rendered (with `sources` for diagnostics).
    pub fn new(system: Option<u32>, sources: Option<&SourceTexts>, error: BuildError) -> Failure {
        let (text, status) = match error {
            BuildError::Diagnostics(diagnostics) => {
                let none = SourceTexts::new();
                let text = crate::render::render_diagnostics(
                    &diagnostics,
                    sources.unwrap_or(&none),
                    false,
                );
                (text, Status::Failure)
            }
            BuildError::Run { code, message } => {
                (format!("error[{code}]: {message}\n"), Status::Failure)
            }
            BuildError::Message(text) => {
                let status = if sources.is_none() {
                    Status::UsageOrIo
                } else {
                    Status::Failure
                };
                (format!("error: {text}\n"), status)
            }
        };
        Failure {
            system,
            text,
            status: status.code(),
            aborted: false,
        }
    }

    /// A system's simulation failed (or stopped, `aborted`, because another did).
    pub fn system(system: u32, sources: &SourceTexts, error: BuildError, aborted: bool) -> Failure {
        Failure {
            aborted,
            ..Failure::new(Some(system), Some(sources), error)
        }
    }

    /// A failure outside the program, in one sentence.
    pub fn message(system: u32, text: &str) -> Failure {
        Failure::new(Some(system), None, BuildError::Message(text.to_string()))
    }

    /// A system's thread panicked.
    pub fn panicked(system: u32) -> Failure {
        Failure::message(system, "the simulation of this system panicked")
    }

    /// The failure as an error of a library call: its text as the command line prints it
    /// (`error[E0806]: ...`).
    pub fn into_error(self) -> BuildError {
        BuildError::Message(
            self.text
                .trim_end()
                .trim_start_matches("error: ")
                .to_string(),
        )
    }

    /// Prints the failure (from process `rank` of `ranks`) and gives the exit status.
    pub fn print(&self, rank: usize, ranks: usize) -> Status {
        eprint!("{}", self.text);
        let whom = match self.system {
            Some(u32::MAX) => Some("in the one-system run of the whole batch".to_string()),
            Some(s) => Some(format!("in system {s}")),
            None => None,
        };
        let place = (ranks > 1).then(|| format!("on process {rank} of {ranks}"));
        let note: Vec<String> = whom.into_iter().chain(place).collect();
        if !note.is_empty() {
            eprintln!("  note: {}", note.join(", "));
        }
        match self.status {
            0 => Status::Success,
            2 => Status::UsageOrIo,
            _ => Status::Failure,
        }
    }
}

//! The simulated wafer-scale fabric: an event-driven, deterministic, multi-threaded model of a
//! 2D mesh of PEs with routers, on which compiled (or hand-written) per-PE task code runs.
//!
//! The machine model and timing rules are in this crate's `README.md` (included below). In
//! short:
//!
//! - Build a [`Program`] (kernels of tasks, per-PE code and data, routes per color, edge
//!   streams) and call [`simulate`] with a [`wsel_target::Target`] and [`SimOptions`].
//! - Task code implements [`TaskCode`]: closures via [`task`], compiled code via [`AbiTask`].
//!   A task sees only its PE through a [`TaskContext`].
//! - The result is an [`Outcome`] (cycles, [`Report`], host outputs, final SRAM, optional
//!   [`Trace`]) or a [`SimError`] (bad program, task fault, deadlock, cycle budget).
#![doc = include_str!("../README.md")]

mod abi_task;
mod bands;
mod engine;
mod error;
mod events;
mod express;
mod express_start;
mod fabric;
mod finish;
mod layout;
mod materialize;
mod pacer;
mod parallel;
mod partition;
mod pe;
mod pe_exec;
mod phases;
mod prefetch;
mod program;
mod progress;
mod queue;
mod ramp;
mod report;
mod router;
mod switches;
mod task;
mod trace;
mod validate;
mod waits;
pub mod workloads;

pub use abi_task::{AbiEntry, AbiTask};
pub use engine::{ExpressStats, Outcome, PES_PER_THREAD, PartitionLoad, SimOptions, simulate};
pub use error::{DeadlockReport, QueuedWavelets, SimError, StuckSend, TaskFault, WaitingRecv};
pub use program::{
    Color, EdgeInput, EdgeOutput, EdgeSource, Kernel, KernelId, PeProgram, Program, RampFilter,
    Route, Switch, SwitchCommand, SwitchPosition, Task, TaskId,
};
pub use progress::Progress;
pub use report::{ColorTraffic, ColorWait, LinkTraffic, PeActivity, Report, StreamTiming};
pub use task::{TaskCode, TaskContext, task};
pub use trace::{Trace, TraceGroup, TraceOffsets, TraceOptions, TraceOut};

//! Everything that can go wrong in a simulation, as values: [`SimError`], [`TaskFault`] and the
//! [`DeadlockReport`]. Every message names the PE (and color, port, task) concerned.

use crate::program::{Color, TaskId};
use serde::Serialize;
use std::fmt;
use wsel_target::{Coord, Port};

/// What a task did wrong, as reported from inside the task through its context.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub enum TaskFault {
    /// An SRAM access beyond the PE's SRAM.
    SramRange {
        /// First byte accessed.
        offset: u64,
        /// Bytes accessed.
        len: u64,
        /// Bytes of SRAM the PE has.
        size: u32,
    },
    /// A port number with no color bound at this PE.
    UnboundPort {
        /// The port.
        port: u32,
    },
    /// A send on a color whose route at this PE does not receive from the ramp.
    UnroutedSend {
        /// The port sent on.
        port: u32,
        /// Its color.
        color: Color,
    },
    /// A control wavelet on a color that has no switch, or whose route at this PE does not
    /// take wavelets from the ramp.
    ControlWithoutSwitch {
        /// The port sent on.
        port: u32,
        /// Its color.
        color: Color,
    },
    /// A receive on a color whose route at this PE does not deliver to the ramp.
    UnroutedRecv {
        /// The port received on.
        port: u32,
        /// Its color.
        color: Color,
    },
    /// A task number outside the PE's task table.
    NoSuchTask {
        /// The task number.
        task: u32,
    },
    /// Compiled code reported an out-of-range array index.
    OutOfBounds {
        /// The array's id in the kernel.
        array: u32,
        /// The index used.
        index: u64,
        /// The array's length.
        bound: u64,
    },
    /// The task was still running when the cycle budget ran out (compiled loops check it at
    /// every iteration, so an endless loop inside one task stops too).
    PastCycleBudget {
        /// The budget ([`crate::SimOptions::max_cycles`]).
        max_cycles: u64,
    },
    /// The PE ran [`crate::SimOptions::livelock_tasks`] tasks in a row that only activated
    /// tasks, with no receive or send of its own open.
    Livelock {
        /// Tasks in the row.
        tasks: u64,
    },
    /// Compiled code returned a nonzero status without recording a cause.
    Status(u32),
    /// Any other failure, described.
    Message(String),
}

impl fmt::Display for TaskFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaskFault::SramRange { offset, len, size } => write!(
                f,
                "SRAM access of {len} bytes at byte {offset} is beyond this PE's {size} bytes of SRAM"
            ),
            TaskFault::UnboundPort { port } => {
                write!(f, "port {port} is not bound to a color on this PE")
            }
            TaskFault::UnroutedSend { port, color } => write!(
                f,
                "send on port {port} (color {color}): the route for color {color} at this PE does not take wavelets from the ramp"
            ),
            TaskFault::ControlWithoutSwitch { port, color } => write!(
                f,
                "control wavelet on port {port} (color {color}): color {color} has no switch, or its route at this PE does not take wavelets from the ramp"
            ),
            TaskFault::UnroutedRecv { port, color } => write!(
                f,
                "receive on port {port} (color {color}): the route for color {color} at this PE does not deliver to the ramp"
            ),
            TaskFault::NoSuchTask { task } => write!(f, "task {task} does not exist on this PE"),
            TaskFault::OutOfBounds {
                array,
                index,
                bound,
            } => {
                write!(
                    f,
                    "index {index} is out of bounds for array {array} of length {bound}"
                )
            }
            TaskFault::PastCycleBudget { max_cycles } => write!(
                f,
                "the task was still running when the budget of {max_cycles} cycles ran out (an endless loop?)"
            ),
            TaskFault::Livelock { tasks } => write!(
                f,
                "the PE ran {tasks} tasks in a row that only activate tasks, with no receive or send open (a livelock?)"
            ),
            TaskFault::Status(s) => write!(f, "compiled task returned status {s}"),
            TaskFault::Message(m) => f.write_str(m),
        }
    }
}

/// A simulation failure. Never a panic: every problem the simulator can detect is one of these.
#[derive(Clone, PartialEq, Debug)]
pub enum SimError {
    /// The target itself is invalid.
    Target(String),
    /// The program is malformed (names what and where).
    Program {
        /// The PE concerned, if any.
        at: Option<Coord>,
        /// What is wrong.
        message: String,
    },
    /// A PE needs more SRAM than the target gives it.
    SramOverflow {
        /// The PE.
        at: Coord,
        /// Bytes the program asks for.
        needed: u64,
        /// Bytes the PE has.
        capacity: u32,
    },
    /// A route uses a dead PE or a dead link.
    DeadRoute {
        /// The router whose configuration is at fault.
        at: Coord,
        /// The color.
        color: Color,
        /// Which dead element, in words.
        element: String,
    },
    /// A route forwards to a neighbour whose route for the same color does not receive from it.
    RouteMismatch {
        /// The forwarding router.
        at: Coord,
        /// The color.
        color: Color,
        /// The neighbour.
        to: Coord,
        /// The port at the neighbour that should be in its receive set.
        port: Port,
    },
    /// A task failed.
    Task {
        /// The PE.
        at: Coord,
        /// The task's number in its PE's table.
        task: TaskId,
        /// The task's name.
        task_name: String,
        /// The cycle at which it ran.
        cycle: u64,
        /// What went wrong.
        fault: TaskFault,
    },
    /// Nothing can make progress but some PE still waits.
    Deadlock(Box<DeadlockReport>),
    /// The `max_cycles` budget ran out.
    CycleBudget {
        /// The budget.
        max_cycles: u64,
        /// PEs that still had work queued (first few).
        busy: Vec<Coord>,
    },
    /// The trace could not be written ([`crate::TraceOut::File`]).
    TraceWrite {
        /// The system's reason.
        message: String,
    },
}

/// A PE waiting for wavelets that will never come.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct WaitingRecv {
    /// The PE.
    pub at: Coord,
    /// The color it receives on.
    pub color: Color,
    /// Wavelets it still needs.
    pub missing: u32,
    /// Wavelets it asked for.
    pub requested: u32,
}

/// A send that could not finish.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct StuckSend {
    /// The PE.
    pub at: Coord,
    /// The color.
    pub color: Color,
    /// Wavelets not yet injected.
    pub remaining: u32,
}

/// Wavelets sitting in a router queue.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct QueuedWavelets {
    /// The router.
    pub at: Coord,
    /// The color.
    pub color: Color,
    /// The port they came in on.
    pub from: Port,
    /// How many.
    pub count: u32,
    /// Where the head wavelet still has to go.
    pub blocked_on: Vec<Port>,
}

/// Who waits on what when a deadlock is detected.
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize)]
pub struct DeadlockReport {
    /// The cycle of the last progress.
    pub cycle: u64,
    /// Posted receives that will never complete, by PE, a PE's by color, a color's in the
    /// order they fill.
    pub waiting: Vec<WaitingRecv>,
    /// Sends that could not inject all their wavelets.
    pub stuck_sends: Vec<StuckSend>,
    /// Wavelets left in router queues (in flight but stopped).
    pub queued: Vec<QueuedWavelets>,
}

/// How many lines of each list a message shows.
const SHOWN: usize = 12;

impl fmt::Display for DeadlockReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "deadlock at cycle {}: nothing can make progress, but {} receive(s) wait, {} send(s) are stuck and {} router queue(s) hold wavelets",
            self.cycle,
            self.waiting.len(),
            self.stuck_sends.len(),
            self.queued.len()
        )?;
        for w in self.waiting.iter().take(SHOWN) {
            write!(
                f,
                "\n  PE {} waits on color {} for {} more wavelet(s) (of {})",
                w.at, w.color, w.missing, w.requested
            )?;
        }
        more(f, self.waiting.len())?;
        for s in self.stuck_sends.iter().take(SHOWN) {
            write!(
                f,
                "\n  PE {} cannot send {} more wavelet(s) on color {}",
                s.at, s.remaining, s.color
            )?;
        }
        more(f, self.stuck_sends.len())?;
        for q in self.queued.iter().take(SHOWN) {
            let to: Vec<String> = q.blocked_on.iter().map(|p| p.to_string()).collect();
            // A switch whose position does not receive from the queue's port holds it.
            let waits = if to.is_empty() {
                "held by its switch's position".to_string()
            } else {
                format!("waiting for {}", to.join(", "))
            };
            write!(
                f,
                "\n  router {} holds {} wavelet(s) of color {} from {} {waits}",
                q.at, q.count, q.color, q.from
            )?;
        }
        more(f, self.queued.len())
    }
}

fn more(f: &mut fmt::Formatter<'_>, n: usize) -> fmt::Result {
    if n > SHOWN {
        write!(f, "\n  … and {} more", n - SHOWN)
    } else {
        Ok(())
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Target(m) => write!(f, "invalid target: {m}"),
            SimError::Program {
                at: Some(at),
                message,
            } => write!(f, "invalid program at PE {at}: {message}"),
            SimError::Program { at: None, message } => write!(f, "invalid program: {message}"),
            SimError::SramOverflow {
                at,
                needed,
                capacity,
            } => write!(
                f,
                "SRAM overflow at PE {at}: the program needs {needed} bytes but the PE has {capacity}"
            ),
            SimError::DeadRoute { at, color, element } => {
                write!(
                    f,
                    "route for color {color} at PE {at} goes through {element}"
                )
            }
            SimError::RouteMismatch {
                at,
                color,
                to,
                port,
            } => write!(
                f,
                "route for color {color} at PE {at} forwards to PE {to}, whose route for color {color} does not receive from its {port} port"
            ),
            SimError::Task {
                at,
                task,
                task_name,
                cycle,
                fault,
            } => {
                write!(
                    f,
                    "PE {at}, task {task} `{task_name}`, cycle {cycle}: {fault}"
                )
            }
            SimError::Deadlock(report) => report.fmt(f),
            SimError::CycleBudget { max_cycles, busy } => {
                write!(
                    f,
                    "the program was still running after the budget of {max_cycles} cycles"
                )?;
                if !busy.is_empty() {
                    let list: Vec<String> = busy.iter().map(|c| c.to_string()).collect();
                    write!(f, "; PEs with work left include {}", list.join(", "))?;
                }
                Ok(())
            }
            SimError::TraceWrite { message } => write!(f, "cannot write the trace: {message}"),
        }
    }
}

impl std::error::Error for SimError {}

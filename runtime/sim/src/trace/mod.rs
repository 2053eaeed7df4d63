//! The optional execution trace, streamed to its destination as the run goes, in the Chrome
//! trace-event JSON format that Perfetto and `chrome://tracing` open: one process per group
//! of PEs (the driver makes one per layer), one track per PE named by its group and its
//! position in its region, a slice (`ph: "X"`) per task run named by the task, and counters
//! (`ph: "C"`) of wavelets per link per window of cycles.
//!
//! How the bytes come out the same for any number of threads, in bounded memory:
//! - each partition records into its own [`TraceBuf`] (`record.rs`): it drops what the
//!   options filter out, sums link wavelets per window, and sends its events in chunks, each
//!   with a *horizon*, a cycle before which it will send nothing more;
//! - one writer thread (`merge.rs`) holds the events of all partitions in a heap and lets out
//!   those before the least horizon of all partitions, in the order of [`Event`], which does
//!   not depend on the partitioning; `json.rs` serialises them with serde as they come.
//!
//! Timestamps are cycles written as microseconds: 1 µs in the viewer is 1 cycle. When
//! tracing is off nothing is recorded (the engine checks an `Option`).

mod json;
mod merge;
mod record;
mod tracks;

pub(crate) use record::TraceBuf;

use crate::error::SimError;
use crate::program::Program;
use merge::{Chunk, Merge};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;
use tracks::Tracks;
use wsel_target::{Coord, Rect, Target};

/// What to trace, how to name it and where to write it ([`crate::SimOptions::trace`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceOptions {
    /// Where the trace goes.
    pub out: TraceOut,
    /// Width, in cycles, of the windows link counters are summed over.
    pub window: u64,
    /// Only task runs that overlap these cycles, and wavelets forwarded in them (`None`: all).
    pub cycles: Option<Range<u64>>,
    /// Only the PEs in this physical rectangle, and their links (`None`: the whole fabric).
    pub region: Option<Rect>,
    /// Named groups of PEs, one process each, in this order; a PE in several belongs to the
    /// first. A PE of a group is shown as `NAME · PE (row, column)`, its position in its
    /// program's region as its tasks see it.
    pub groups: Vec<TraceGroup>,
    /// The name of the process of the PEs in no group, shown as `PE (x, y)` (physical);
    /// `None`: PEs in no group are not traced.
    pub others: Option<String>,
    /// Where the program sits in a longer run that several traces are spliced into (the
    /// phases of weight streaming): its first cycle, added to every timestamp, and the
    /// numbers its processes and tracks start from. All 0 for a trace of its own.
    pub offsets: TraceOffsets,
}

/// See [`TraceOptions::offsets`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceOffsets {
    pub cycle: u64,
    pub process: u32,
    pub track: u32,
}

impl TraceOptions {
    /// Everything, to `out`, in one process named `fabric`, with link counters per 64 cycles.
    pub fn new(out: TraceOut) -> TraceOptions {
        TraceOptions {
            out,
            window: 64,
            cycles: None,
            region: None,
            groups: Vec::new(),
            others: Some("fabric".to_string()),
            offsets: TraceOffsets::default(),
        }
    }
}

/// A named group of PEs: one process of the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceGroup {
    /// The process name.
    pub name: String,
    /// Its PEs (physical).
    pub region: Rect,
}

/// Where a trace goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceOut {
    /// Kept in memory and returned in [`Trace::text`] (for tests and small runs).
    Memory,
    /// Written to this file as the run goes (created, or truncated). If the run fails, the
    /// file holds the events up to the failure.
    File(PathBuf),
}

/// A finished trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    events: u64,
    text: Option<String>,
}

impl Trace {
    /// How many events (slices, counters and names) the trace holds.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The trace as JSON text, for [`TraceOut::Memory`].
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }
}

/// One event of a trace. The derived order — cycle, slices before counters, track (the
/// fabric's row-major PE order), then task or direction — is the order of the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Event {
    pub ts: u64,
    pub kind: Kind,
    /// The PE (`y * width + x`).
    pub track: u32,
    /// Slices: the task; counters: the link's direction (`Dir::index`).
    pub what: u32,
    /// Slices: the duration; counters: the wavelets.
    pub value: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    Slice,
    Counter,
}

/// A trace being written: the writer thread and what the partitions' recorders need.
pub(crate) struct Tracer {
    tracks: Arc<Tracks>,
    window: u64,
    cycles: Range<u64>,
    tx: SyncSender<Chunk>,
    writer: JoinHandle<std::io::Result<json::Written>>,
}

impl Tracer {
    /// Open the destination and start the writer for a run on `parts` partitions.
    pub(crate) fn start(
        options: &TraceOptions,
        target: &Target,
        program: &Program,
        parts: usize,
    ) -> Result<Tracer, SimError> {
        let tracks = Arc::new(Tracks::new(options, target, program));
        let window = options.window.max(1);
        // Two chunks in flight per partition keep the workers going while the writer works,
        // and bound the memory the chunks take.
        let (tx, rx) = sync_channel(2 * parts + 2);
        let header = json::Header {
            clock_hz: target.clock_hz,
            window,
            offsets: options.offsets,
        };
        let merge = Merge::new(rx, parts);
        let out = json::Out::open(&options.out).map_err(write_error)?;
        let shared = Arc::clone(&tracks);
        let writer = std::thread::Builder::new()
            .name("wsel-trace".to_string())
            .spawn(move || json::write(out, merge, &shared, header))
            .map_err(write_error)?;
        Ok(Tracer {
            tracks,
            window,
            cycles: options.cycles.clone().unwrap_or(0..u64::MAX),
            tx,
            writer,
        })
    }

    /// The recorder of partition `part`, whose routers (local ids from 0) are at `routers`,
    /// in order.
    pub(crate) fn recorder(&self, part: u32, routers: impl Iterator<Item = Coord>) -> TraceBuf {
        let tracks = routers.map(|at| self.tracks.track(at)).collect();
        TraceBuf::new(
            part,
            tracks,
            self.window,
            self.cycles.clone(),
            self.tx.clone(),
        )
    }

    /// Wait for the writer once every recorder is closed (or dropped, after a failed run).
    pub(crate) fn finish(self) -> Result<Trace, SimError> {
        drop(self.tx);
        let written = self
            .writer
            .join()
            .map_err(|_| SimError::TraceWrite {
                message: "the trace writer stopped unexpectedly".to_string(),
            })?
            .map_err(write_error)?;
        Ok(Trace {
            events: written.events,
            text: written.text,
        })
    }
}

fn write_error(e: std::io::Error) -> SimError {
    SimError::TraceWrite {
        message: e.to_string(),
    }
}

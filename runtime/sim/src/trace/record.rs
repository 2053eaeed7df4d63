//! The recording side of the trace: one [`TraceBuf`] per partition, behind four calls the
//! engine makes — [`TraceBuf::task`] when a task starts, [`TraceBuf::link`] when a wavelet
//! leaves a router through a link, [`TraceBuf::advance`] once every cycle before a given one
//! is simulated, and [`TraceBuf::close`] at the end of the run.
//!
//! Events of routers and cycles the options leave out are dropped at once; link wavelets are
//! summed per window of cycles, and a window's counters are made when the window is over;
//! events go to the writer in chunks, each with the partition's *horizon*: the earliest
//! cycle any event it sends later can have. The engine may record the events of one cycle in
//! any order, and may even record an event late, as long as its cycle is not before the last
//! cycle it called `advance` with.

use super::merge::Chunk;
use super::{Event, Kind};
use crate::fabric::NONE;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::mpsc::SyncSender;

/// Events a recorder collects before it sends them (half a megabyte).
const CHUNK: usize = 16_384;

/// A recorder with fewer events sends them anyway once its horizon has moved this many cycles,
/// so that the writer, which waits for the slowest horizon, holds only about a hundred cycles
/// of events.
const SPAN: u64 = 64;

/// One partition's recorder.
pub(crate) struct TraceBuf {
    part: u32,
    /// Per local router: its track, or NONE when the trace leaves the router out.
    tracks: Vec<u32>,
    window: u64,
    cycles: Range<u64>,
    events: Vec<Event>,
    /// Wavelets per (window, track, direction) of the windows not yet over.
    open: BTreeMap<(u64, u32, u32), u64>,
    /// The last window whose counters were made, and the links it counted (sorted): a link
    /// the next window does not count gets a zero at the next window's start.
    last: Option<(u64, Vec<(u32, u32)>)>,
    /// The horizon last sent.
    sent: u64,
    tx: SyncSender<Chunk>,
}

impl TraceBuf {
    pub(super) fn new(
        part: u32,
        tracks: Vec<u32>,
        window: u64,
        cycles: Range<u64>,
        tx: SyncSender<Chunk>,
    ) -> TraceBuf {
        TraceBuf {
            part,
            tracks,
            window,
            cycles,
            events: Vec::new(),
            open: BTreeMap::new(),
            last: None,
            sent: 0,
            tx,
        }
    }

    /// Local router `node`'s PE started task `task` at cycle `start`, busy for `dur` cycles.
    pub(crate) fn task(&mut self, node: u32, task: u32, start: u64, dur: u64) {
        let track = self.track(node);
        if track != NONE && start < self.cycles.end && start + dur > self.cycles.start {
            self.events.push(Event {
                ts: start,
                kind: Kind::Slice,
                track,
                what: task,
                value: dur,
            });
        }
    }

    /// Local router `node` forwarded a wavelet through its link towards `dir` (`Dir::index`)
    /// at cycle `t`.
    pub(crate) fn link(&mut self, node: u32, dir: u8, t: u64) {
        let track = self.track(node);
        if track != NONE && self.cycles.contains(&t) {
            *self
                .open
                .entry((t / self.window, track, u32::from(dir)))
                .or_insert(0) += 1;
        }
    }

    /// Every cycle before `horizon` has been simulated: nothing more will be recorded before
    /// it.
    pub(crate) fn advance(&mut self, horizon: u64) {
        let current = horizon / self.window;
        self.close_windows(current);
        // Counters are stamped with their window's start: those of the window still running
        // (and zeros for the links the last window counted) come at its start.
        let horizon = current * self.window;
        if self.events.len() >= CHUNK || horizon >= self.sent.saturating_add(SPAN) {
            self.send(horizon);
        }
    }

    /// The run is over: make the last counters and send everything.
    pub(crate) fn close(mut self) {
        self.close_windows(u64::MAX);
        self.send(u64::MAX);
    }

    fn track(&self, node: u32) -> u32 {
        self.tracks.get(node as usize).copied().unwrap_or(NONE)
    }

    /// Make the counters of the windows before window `upto`: each link's wavelets at its
    /// window's start, and a zero at the start of the next window in which it carried none.
    fn close_windows(&mut self, upto: u64) {
        while let Some(&(w, ..)) = self.open.keys().next()
            && w < upto
        {
            let later = self.open.split_off(&(w + 1, 0, 0));
            let counts = std::mem::replace(&mut self.open, later);
            self.zeros_before(w);
            let links: Vec<(u32, u32)> =
                counts.keys().map(|&(_, track, dir)| (track, dir)).collect();
            let ts = w * self.window;
            if let Some((_, previous)) = self.last.take() {
                for &(track, dir) in &previous {
                    if links.binary_search(&(track, dir)).is_err() {
                        self.counter(ts, track, dir, 0);
                    }
                }
            }
            for ((_, track, dir), wavelets) in counts {
                self.counter(ts, track, dir, wavelets);
            }
            self.last = Some((w, links));
        }
        self.zeros_before(upto);
    }

    /// If the window after the last counted one is before window `upto`, it counted nothing:
    /// zeros for all the last window's links.
    fn zeros_before(&mut self, upto: u64) {
        if let Some((w, links)) = self.last.take_if(|(w, _)| *w + 1 < upto) {
            for (track, dir) in links {
                self.counter((w + 1) * self.window, track, dir, 0);
            }
        }
    }

    fn counter(&mut self, ts: u64, track: u32, dir: u32, wavelets: u64) {
        self.events.push(Event {
            ts,
            kind: Kind::Counter,
            track,
            what: dir,
            value: wavelets,
        });
    }

    fn send(&mut self, horizon: u64) {
        debug_assert!(horizon >= self.sent, "horizons only move forward");
        self.sent = horizon;
        let events = std::mem::take(&mut self.events);
        // The writer holds its receiver until it has all events, or until it failed, which
        // `Tracer::finish` reports; either way nothing is lost by ignoring the error here.
        let _ = self.tx.send(Chunk {
            part: self.part,
            horizon,
            events,
        });
    }
}

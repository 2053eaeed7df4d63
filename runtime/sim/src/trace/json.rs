//! The trace file: the Chrome trace-event JSON object, serialised with serde as the merged
//! events come, so the whole trace is never in memory. A process and a track are named
//! (`ph: "M"` events) just before their first event.

use super::merge::Merge;
use super::tracks::{LinkName, TaskName, Tracks};
use super::{Event, Kind, TraceOut};
use serde::ser::{Serialize, Serializer};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufWriter, Write};

/// What the writer produced.
pub(super) struct Written {
    pub events: u64,
    /// The JSON text, for [`TraceOut::Memory`].
    pub text: Option<String>,
}

/// The figures of the file's `otherData`.
pub(super) struct Header {
    pub clock_hz: u64,
    pub window: u64,
    pub offsets: super::TraceOffsets,
}

/// The destination, opened.
pub(super) enum Out {
    Memory,
    File(File),
}

impl Out {
    pub(super) fn open(out: &TraceOut) -> io::Result<Out> {
        Ok(match out {
            TraceOut::Memory => Out::Memory,
            TraceOut::File(path) => Out::File(File::create(path)?),
        })
    }
}

/// Write the whole trace to `out`; runs on the writer thread.
pub(super) fn write(
    out: Out,
    merge: Merge,
    tracks: &Tracks,
    header: Header,
) -> io::Result<Written> {
    match out {
        Out::Memory => {
            let (bytes, events) = serialise(Vec::new(), merge, tracks, header)?;
            let text = String::from_utf8(bytes).map_err(io::Error::other)?;
            Ok(Written {
                events,
                text: Some(text),
            })
        }
        Out::File(file) => {
            let (_, events) = serialise(file, merge, tracks, header)?;
            Ok(Written { events, text: None })
        }
    }
}

/// Serialise the trace into `out`, buffered; the error of any write or of the final flush is
/// returned. When writing fails, the merge (and its receiver) is dropped at once, so the
/// recorders' sends return instead of waiting.
fn serialise<W: Write>(
    out: W,
    merge: Merge,
    tracks: &Tracks,
    header: Header,
) -> io::Result<(W, u64)> {
    let mut out = BufWriter::with_capacity(1 << 20, out);
    let count = Cell::new(0);
    let file = TraceFile {
        trace_events: Stream(RefCell::new(Some(Named::new(
            merge,
            tracks,
            header.offsets,
            &count,
        )))),
        display_time_unit: "ns",
        other_data: OtherData {
            time_unit: "1 us in this trace = 1 cycle",
            clock_hz: header.clock_hz,
            link_counter_window_cycles: header.window,
        },
    };
    serde_json::to_writer(&mut out, &file)?;
    let out = out.into_inner().map_err(io::IntoInnerError::into_error)?;
    Ok((out, count.get()))
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase", bound(serialize = "Stream<I>: Serialize"))]
struct TraceFile<I> {
    trace_events: Stream<I>,
    display_time_unit: &'static str,
    other_data: OtherData,
}

#[derive(serde::Serialize)]
struct OtherData {
    time_unit: &'static str,
    clock_hz: u64,
    link_counter_window_cycles: u64,
}

/// A JSON array of the items of an iterator, taken when serialised.
struct Stream<I>(RefCell<Option<I>>);

impl<I: Iterator<Item = T>, T: Serialize> Serialize for Stream<I> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let items = self.0.borrow_mut().take();
        serializer.collect_seq(items.into_iter().flatten())
    }
}

/// One JSON event.
#[derive(serde::Serialize)]
#[serde(tag = "ph")]
enum Json<'a> {
    #[serde(rename = "M")]
    Meta {
        name: &'static str,
        pid: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        tid: Option<u32>,
        args: MetaArgs,
    },
    #[serde(rename = "X")]
    Slice {
        #[serde(serialize_with = "display")]
        name: TaskName<'a>,
        ts: u64,
        dur: u64,
        pid: u32,
        tid: u32,
    },
    #[serde(rename = "C")]
    Counter {
        #[serde(serialize_with = "display")]
        name: LinkName,
        ts: u64,
        pid: u32,
        args: Wavelets,
    },
}

#[derive(serde::Serialize)]
#[serde(untagged)]
enum MetaArgs {
    Name { name: String },
    Sort { sort_index: u32 },
}

#[derive(serde::Serialize)]
struct Wavelets {
    wavelets: u64,
}

fn display<T: std::fmt::Display, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(value)
}

/// The merged events as JSON events, each process and track named before its first event.
struct Named<'a> {
    events: Merge,
    tracks: &'a Tracks,
    offsets: super::TraceOffsets,
    process_named: Vec<bool>,
    track_named: Vec<bool>,
    queue: VecDeque<Json<'a>>,
    count: &'a Cell<u64>,
}

impl<'a> Named<'a> {
    fn new(
        events: Merge,
        tracks: &'a Tracks,
        offsets: super::TraceOffsets,
        count: &'a Cell<u64>,
    ) -> Named<'a> {
        Named {
            events,
            tracks,
            offsets,
            process_named: vec![false; tracks.groups()],
            track_named: Vec::new(),
            queue: VecDeque::new(),
            count,
        }
    }

    /// Queue `e`, after the names it needs.
    fn push(&mut self, e: Event) {
        let group = self.tracks.group(e.track);
        let pid = self.offsets.process + group + 1;
        let tid = self.offsets.track + e.track + 1;
        let ts = self.offsets.cycle + e.ts;
        if !std::mem::replace(&mut self.process_named[group as usize], true) {
            let name = self.tracks.process_name(group).to_string();
            self.queue
                .push_back(meta("process_name", pid, None, MetaArgs::Name { name }));
            let sort = MetaArgs::Sort {
                sort_index: self.offsets.process + group,
            };
            self.queue
                .push_back(meta("process_sort_index", pid, None, sort));
        }
        match e.kind {
            Kind::Slice => {
                self.name_track(e.track, pid, tid);
                self.queue.push_back(Json::Slice {
                    name: self.tracks.task_name(e.track, e.what),
                    ts,
                    dur: e.value,
                    pid,
                    tid,
                });
            }
            Kind::Counter => self.queue.push_back(Json::Counter {
                name: self.tracks.link_name(e.track, e.what),
                ts,
                pid,
                args: Wavelets { wavelets: e.value },
            }),
        }
    }

    fn name_track(&mut self, track: u32, pid: u32, tid: u32) {
        let i = track as usize;
        if i >= self.track_named.len() {
            self.track_named.resize(i + 1, false);
        }
        if !std::mem::replace(&mut self.track_named[i], true)
            && let Some(name) = self.tracks.thread_name(track)
        {
            let args = MetaArgs::Name { name };
            self.queue
                .push_back(meta("thread_name", pid, Some(tid), args));
        }
    }
}

fn meta(name: &'static str, pid: u32, tid: Option<u32>, args: MetaArgs) -> Json<'static> {
    Json::Meta {
        name,
        pid,
        tid,
        args,
    }
}

impl<'a> Iterator for Named<'a> {
    type Item = Json<'a>;

    fn next(&mut self) -> Option<Json<'a>> {
        if self.queue.is_empty() {
            let e = self.events.next()?;
            self.push(e);
        }
        self.count.set(self.count.get() + 1);
        self.queue.pop_front()
    }
}

//! The optional execution trace, in the Chrome trace-event JSON format that Perfetto and
//! `chrome://tracing` open: one process per fabric row, one thread (track) per PE, a slice
//! (`ph: "X"`) per task run, and counters (`ph: "C"`) of wavelets per link per time window.
//!
//! Timestamps are cycles written as microseconds: 1 µs in the viewer is 1 cycle.
//! When tracing is off nothing is recorded (the engine checks an `Option`).

use serde_json::{Value, json};
use std::collections::BTreeMap;
use wsel_target::Coord;

/// Trace events collected by one partition.
#[derive(Debug, Default)]
pub(crate) struct TraceBuf {
    window: u64,
    /// (global node, task, start, duration).
    slices: Vec<(u32, u32, u64, u64)>,
    /// (global node, direction, window index) → wavelets.
    links: BTreeMap<(u32, u8, u64), u64>,
}

impl TraceBuf {
    pub(crate) fn new(window: u64) -> TraceBuf {
        TraceBuf {
            window: window.max(1),
            ..TraceBuf::default()
        }
    }

    pub(crate) fn task(&mut self, node: u32, task: u32, start: u64, dur: u64) {
        self.slices.push((node, task, start, dur));
    }

    pub(crate) fn link(&mut self, node: u32, dir: u8, t: u64) {
        *self.links.entry((node, dir, t / self.window)).or_insert(0) += 1;
    }
}

/// A finished trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    json: Value,
}

impl Trace {
    /// The trace as a JSON value (`{"traceEvents": [...], ...}`).
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// The trace as JSON text.
    pub fn to_json_string(&self) -> String {
        self.json.to_string()
    }

    /// Write the trace to `path`.
    pub fn write(&self, path: &std::path::Path) -> std::io::Result<()> {
        std::fs::write(path, self.to_json_string())
    }
}

const DIRS: [&str; 4] = ["N", "S", "E", "W"];

/// Merge partition buffers (in partition order) into one trace. `coord` maps a global node to
/// its PE, `task_name` a (global node, task) to a name.
pub(crate) fn build(
    bufs: Vec<TraceBuf>,
    coord: impl Fn(u32) -> Coord,
    task_name: impl Fn(u32, u32) -> String,
    clock_hz: u64,
) -> Trace {
    let window = bufs.first().map_or(1, |b| b.window);
    let mut slices: Vec<(u32, u32, u64, u64)> = Vec::new();
    let mut links: BTreeMap<(u32, u8, u64), u64> = BTreeMap::new();
    for b in bufs {
        slices.extend(b.slices);
        links.extend(b.links);
    }
    slices.sort_by_key(|&(node, _, start, _)| (start, node));
    let mut events: Vec<Value> = Vec::new();
    let mut rows = std::collections::BTreeSet::new();
    let mut tracks = std::collections::BTreeSet::new();
    for &(node, ..) in &slices {
        tracks.insert(node);
    }
    for &(node, ..) in links.keys() {
        tracks.insert(node);
    }
    for &node in &tracks {
        let c = coord(node);
        if rows.insert(c.y) {
            events.push(json!({"ph": "M", "name": "process_name", "pid": c.y + 1, "args": {"name": format!("row {}", c.y)}}));
            events.push(json!({"ph": "M", "name": "process_sort_index", "pid": c.y + 1, "args": {"sort_index": c.y}}));
        }
        events.push(json!({"ph": "M", "name": "thread_name", "pid": c.y + 1, "tid": c.x + 1, "args": {"name": format!("PE ({}, {})", c.x, c.y)}}));
    }
    for (node, task, start, dur) in slices {
        let c = coord(node);
        events.push(json!({
            "ph": "X", "cat": "task", "name": task_name(node, task),
            "ts": start, "dur": dur, "pid": c.y + 1, "tid": c.x + 1,
            "args": {"task": task}
        }));
    }
    for (&(node, dir, w), &count) in &links {
        let c = coord(node);
        let name = format!("link ({}, {}) {}", c.x, c.y, DIRS[dir as usize]);
        events.push(json!({"ph": "C", "name": name, "ts": w * window, "pid": c.y + 1, "args": {"wavelets": count}}));
        if !links.contains_key(&(node, dir, w + 1)) {
            events.push(json!({"ph": "C", "name": name, "ts": (w + 1) * window, "pid": c.y + 1, "args": {"wavelets": 0}}));
        }
    }
    Trace {
        json: json!({
            "traceEvents": events,
            "displayTimeUnit": "ns",
            "otherData": {
                "time_unit": "1 us in this trace = 1 cycle",
                "clock_hz": clock_hz,
                "link_counter_window_cycles": window
            }
        }),
    }
}

//! Which routers a trace covers and what its processes, tracks and slices are called: built
//! once from the program and the trace options, then read by the recorders (is this router
//! traced?) and by the writer (names).

use super::TraceOptions;
use crate::fabric::NONE;
use crate::program::{Program, TaskId};
use std::collections::HashMap;
use std::fmt;
use wsel_target::{Coord, Dir, Rect, Target};

/// The trace's processes and tracks. A track is a router, numbered `y * width + x`.
pub(crate) struct Tracks {
    width: u32,
    /// Per router: its group (the last one is the others'), or NONE when not traced.
    group: Vec<u32>,
    /// Process names by group.
    names: Vec<String>,
    /// How many of them are named groups (the others' process, if any, comes after them).
    named: u32,
    /// The traced PEs that run code, by track.
    pes: HashMap<u32, PeInfo>,
    /// Task names by kernel and task.
    tasks: Vec<Vec<String>>,
}

/// What the trace says about a PE that runs code.
struct PeInfo {
    kernel: u32,
    /// Its (row, column) in its program's region, as its tasks see it.
    logical: (u32, u32),
}

impl Tracks {
    pub(crate) fn new(options: &TraceOptions, target: &Target, program: &Program) -> Tracks {
        let fabric = Rect::new(0, 0, target.width, target.height);
        let others = match options.others {
            Some(_) => options.groups.len() as u32,
            None => NONE,
        };
        let mut group = vec![others; target.width as usize * target.height as usize];
        // The first group holding a PE wins: fill in reverse.
        for (i, g) in options.groups.iter().enumerate().rev() {
            for at in cells(g.region).filter(|&at| fabric.contains(at)) {
                group[(at.y * target.width + at.x) as usize] = i as u32;
            }
        }
        if let Some(region) = options.region {
            for at in cells(fabric).filter(|&at| !region.contains(at)) {
                group[(at.y * target.width + at.x) as usize] = NONE;
            }
        }
        let mut names: Vec<String> = options.groups.iter().map(|g| g.name.clone()).collect();
        names.extend(options.others.clone());
        let mut tracks = Tracks {
            width: target.width,
            group,
            names,
            named: options.groups.len() as u32,
            pes: HashMap::new(),
            tasks: program
                .kernels
                .iter()
                .map(|k| k.tasks.iter().map(|t| t.name.clone()).collect())
                .collect(),
        };
        for pe in program.pes.iter().filter(|pe| fabric.contains(pe.at)) {
            let track = tracks.index(pe.at);
            if tracks.group[track as usize] != NONE {
                let (col, row) = pe.logical();
                let logical = (row, col);
                let info = PeInfo {
                    kernel: pe.kernel,
                    logical,
                };
                tracks.pes.insert(track, info);
            }
        }
        tracks
    }

    /// The track of the router at `at`, or NONE when the trace leaves it out.
    pub(crate) fn track(&self, at: Coord) -> u32 {
        let track = self.index(at);
        match self.group.get(track as usize) {
            Some(&g) if g != NONE => track,
            _ => NONE,
        }
    }

    /// The process (group) of a traced track.
    pub(crate) fn group(&self, track: u32) -> u32 {
        self.group[track as usize]
    }

    /// How many processes there are.
    pub(crate) fn groups(&self) -> usize {
        self.names.len()
    }

    /// The name of process `group`.
    pub(crate) fn process_name(&self, group: u32) -> &str {
        &self.names[group as usize]
    }

    /// The name of a track, or `None` for a router without code (it has only link counters).
    pub(crate) fn thread_name(&self, track: u32) -> Option<String> {
        let pe = self.pes.get(&track)?;
        let group = self.group(track);
        Some(if group < self.named {
            let (row, col) = pe.logical;
            format!("{} · PE ({row}, {col})", self.process_name(group))
        } else {
            format!("PE {}", self.coord(track))
        })
    }

    /// The name of task `task` of the PE on `track`.
    pub(crate) fn task_name(&self, track: u32, task: TaskId) -> TaskName<'_> {
        let name = self
            .pes
            .get(&track)
            .and_then(|pe| self.tasks.get(pe.kernel as usize))
            .and_then(|tasks| tasks.get(task as usize));
        match name {
            Some(name) => TaskName::Named(name),
            None => TaskName::Numbered(task),
        }
    }

    /// The name of the counter of the link leaving `track` towards `dir`: `link (x, y) E`.
    pub(crate) fn link_name(&self, track: u32, dir: u32) -> LinkName {
        LinkName {
            at: self.coord(track),
            dir: Dir::ALL.get(dir as usize).copied().unwrap_or(Dir::North),
        }
    }

    fn index(&self, at: Coord) -> u32 {
        at.y * self.width + at.x
    }

    fn coord(&self, track: u32) -> Coord {
        Coord::new(track % self.width, track / self.width)
    }
}

/// A task's name, or its number when its kernel has no such task.
pub(crate) enum TaskName<'a> {
    Named(&'a str),
    Numbered(TaskId),
}

impl fmt::Display for TaskName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaskName::Named(name) => f.write_str(name),
            TaskName::Numbered(task) => write!(f, "task {task}"),
        }
    }
}

/// A link counter's name, written without allocating.
pub(crate) struct LinkName {
    at: Coord,
    dir: Dir,
}

impl fmt::Display for LinkName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "link {} {}", self.at, self.dir.port())
    }
}

/// The PEs of `r`, row by row.
fn cells(r: Rect) -> impl Iterator<Item = Coord> {
    (r.y..r.y.saturating_add(r.height))
        .flat_map(move |y| (r.x..r.x.saturating_add(r.width)).map(move |x| Coord::new(x, y)))
}

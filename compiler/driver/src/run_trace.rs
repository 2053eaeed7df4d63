//! The trace of `wsel run`: its flags (`--trace`, `--trace-layers`, `--trace-region`,
//! `--trace-cycles`) turned into the simulator's trace options — one process per placed
//! layer, named as in the report's table — and the file the simulator streams it into, a
//! temporary file beside the destination that becomes the destination only when the run
//! succeeds. The simulator knows no layer: it gets named rectangles.
//!
//! Flags that cannot be read, or that name nothing on the fabric, are error E0807.

use std::ops::Range;
use std::path::{Path, PathBuf};

use std::io::{Read, Seek, Write};
use tempfile::NamedTempFile;
use wsel_map::Placement;

use wsel_sim::{TraceGroup, TraceOffsets, TraceOptions, TraceOut};
use wsel_target::{Rect, Target};

use crate::cli::RunArgs;

/// The process of the routers outside every layer (routes to and from the fabric's edges).
const OUTSIDE: &str = "outside the layers";

/// What the trace flags ask for, read before anything is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceRequest {
    pub path: PathBuf,
    pub layers: Vec<String>,
    /// Corners included: (x0, y0, x1, y1).
    pub region: Option<(u32, u32, u32, u32)>,
    pub cycles: Option<Range<u64>>,
}

/// The trace flags of `args`, or `None` without `--trace`; a message when a flag cannot be
/// read.
pub fn request(args: &RunArgs) -> Result<Option<TraceRequest>, String> {
    let Some(path) = &args.trace else {
        return Ok(None);
    };
    Ok(Some(TraceRequest {
        path: path.clone(),
        layers: args.trace_layers.clone(),
        region: args.trace_region.as_deref().map(region).transpose()?,
        cycles: args.trace_cycles.as_deref().map(cycles).transpose()?,
    }))
}

/// A trace being written: the options for the simulator, and the temporary file it writes.
pub struct TraceFile {
    pub options: TraceOptions,
    temp: NamedTempFile,
    path: PathBuf,
}

impl TraceFile {
    /// The options for `placement` on `target`, and the temporary file beside the
    /// destination.
    pub fn new(
        request: &TraceRequest,
        placement: &Placement,
        target: &Target,
    ) -> Result<TraceFile, TraceFileError> {
        let groups = groups(placement, &request.layers).map_err(TraceFileError::Flag)?;
        let region = match request.region {
            Some(corners) => Some(within(corners, target).map_err(TraceFileError::Flag)?),
            None => None,
        };
        let temp = crate::atomic::temp_beside(&request.path).map_err(TraceFileError::Create)?;
        let options = TraceOptions {
            cycles: request.cycles.clone(),
            region,
            others: request.layers.is_empty().then(|| OUTSIDE.to_string()),
            groups,
            ..TraceOptions::new(TraceOut::File(temp.path().to_path_buf()))
        };
        Ok(TraceFile {
            options,
            temp,
            path: request.path.clone(),
        })
    }

    /// The destination.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The trace of one phase of a weight-streaming run, started at cycle `start` (its
    /// processes numbered from `process`): the options with only the phase's layers, its
    /// cycles counted from the phase's start, offsets so that the phases' traces splice into
    /// one ([`TraceFile::splice`]), and a part file beside the destination; `None` when the
    /// filters leave nothing of the phase.
    pub fn phase(
        &self,
        placement: &Placement,
        phase: u32,
        start: u64,
        process: u32,
        target: &Target,
    ) -> std::io::Result<Option<PhasePart>> {
        let label = |i: usize| wsel_map::report::label(placement, i);
        let in_phase: Vec<String> = (0..placement.layers.len())
            .filter(|&i| placement.layers[i].phase == phase)
            .map(label)
            .collect();
        let groups: Vec<TraceGroup> = self
            .options
            .groups
            .iter()
            .filter(|g| in_phase.contains(&g.name))
            .cloned()
            .collect();
        let cycles = match &self.options.cycles {
            Some(c) if c.end <= start => return Ok(None),
            Some(c) => Some(c.start.saturating_sub(start)..c.end.saturating_sub(start)),
            None => None,
        };
        if groups.is_empty() && self.options.others.is_none() {
            return Ok(None);
        }
        let file = crate::atomic::temp_beside(&self.path)?;
        let tracks = target.width * target.height;
        let options = TraceOptions {
            cycles,
            offsets: TraceOffsets {
                cycle: start,
                process,
                track: phase.saturating_mul(tracks),
            },
            groups,
            ..TraceOptions {
                out: TraceOut::File(file.path().to_path_buf()),
                ..self.options.clone()
            }
        };
        Ok(Some(PhasePart { options, file }))
    }

    /// Writes the phases' traces (`parts`, in order) into the trace as one: their events one
    /// after another in one `traceEvents` array, streamed from the part files.
    pub fn splice(&self, parts: &[PhasePart]) -> std::io::Result<()> {
        let mut out = std::io::BufWriter::new(self.temp.as_file());
        out.write_all(EVENTS_OPEN.as_bytes())?;
        let mut tail = String::from("]}");
        let mut first = true;
        for part in parts {
            let (events, rest) = events_of(part.file.path())?;
            if events.end > events.start {
                if !first {
                    out.write_all(b",")?;
                }
                first = false;
                let mut file = std::fs::File::open(part.file.path())?;
                file.seek(std::io::SeekFrom::Start(events.start))?;
                std::io::copy(&mut file.take(events.end - events.start), &mut out)?;
            }
            tail = rest;
        }
        out.write_all(tail.as_bytes())?;
        out.flush()
    }

    /// The run succeeded: the destination and the finished trace, to be committed with the
    /// run's other outputs (`crate::atomic::Outputs::add_staged`).
    pub fn into_staged(self) -> (PathBuf, NamedTempFile) {
        (self.path, self.temp)
    }
}

/// The trace of one phase of a weight-streaming run: its options and the file they write.
pub struct PhasePart {
    pub options: TraceOptions,
    file: NamedTempFile,
}

/// How the simulator's trace file starts: its events array opens.
const EVENTS_OPEN: &str = "{\"traceEvents\":[";

/// Where the events of a trace file lie (byte range), and the text after them (from the
/// array's closing bracket to the end).
fn events_of(path: &Path) -> std::io::Result<(Range<u64>, String)> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let from = len.saturating_sub(4096);
    file.seek(std::io::SeekFrom::Start(from))?;
    let mut end = String::new();
    file.read_to_string(&mut end)?;
    let close = end
        .rfind("],\"displayTimeUnit\"")
        .ok_or_else(|| std::io::Error::other("a phase's trace is not a trace file"))?;
    let start = EVENTS_OPEN.len() as u64;
    Ok((start..from + close as u64, end[close..].to_string()))
}

/// Why a trace file could not be set up.
#[derive(Debug)]
pub enum TraceFileError {
    /// A flag names nothing on the fabric (E0807).
    Flag(String),
    /// The temporary file cannot be created (E0804).
    Create(std::io::Error),
}

/// One group per placed layer (all, or those `names` selects), named as in the report.
fn groups(placement: &Placement, names: &[String]) -> Result<Vec<TraceGroup>, String> {
    let label = |i: usize| wsel_map::report::label(placement, i);
    let named = |i: usize, n: &str| placement.layers[i].name == n || label(i) == n;
    let layers = 0..placement.layers.len();
    if let Some(unknown) = names.iter().find(|n| !layers.clone().any(|i| named(i, n))) {
        let mut known: Vec<&str> = Vec::new();
        for layer in &placement.layers {
            if !known.contains(&layer.name.as_str()) {
                known.push(&layer.name);
            }
        }
        return Err(format!(
            "`--trace-layers`: the model has no layer `{unknown}`; its layers are {}",
            known.join(", ")
        ));
    }
    Ok(layers
        .filter(|&i| names.is_empty() || names.iter().any(|n| named(i, n)))
        .map(|i| TraceGroup {
            name: label(i),
            region: placement.layers[i].rect,
        })
        .collect())
}

/// `x0,y0,x1,y1` with `x0 <= x1` and `y0 <= y1`.
fn region(text: &str) -> Result<(u32, u32, u32, u32), String> {
    let bad = || {
        format!(
            "`--trace-region {text}`: expected four numbers x0,y0,x1,y1 with x0 <= x1 and y0 <= y1 (the corners' columns and rows, both included)"
        )
    };
    let numbers: Vec<u32> = text
        .split(',')
        .map(|n| n.trim().parse().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    match numbers[..] {
        [x0, y0, x1, y1] if x0 <= x1 && y0 <= y1 => Ok((x0, y0, x1, y1)),
        _ => Err(bad()),
    }
}

/// The rectangle of `corners`, if it lies on the fabric.
fn within((x0, y0, x1, y1): (u32, u32, u32, u32), target: &Target) -> Result<Rect, String> {
    if x1 >= target.width || y1 >= target.height {
        return Err(format!(
            "`--trace-region {x0},{y0},{x1},{y1}` reaches beyond the fabric of {} ({}×{} PEs: columns 0 to {}, rows 0 to {})",
            target.name,
            target.width,
            target.height,
            target.width - 1,
            target.height - 1
        ));
    }
    Ok(Rect::new(x0, y0, x1 - x0 + 1, y1 - y0 + 1))
}

/// `a..b`, `a..` or `..b`, not empty.
fn cycles(text: &str) -> Result<Range<u64>, String> {
    let bad = |why: &str| format!("`--trace-cycles {text}`: {why}");
    let (start, end) = text
        .split_once("..")
        .ok_or_else(|| bad("expected a range of cycles a..b (b excluded), a.. or ..b"))?;
    let bound = |s: &str, default: u64| match s.trim() {
        "" => Ok(default),
        s => s
            .parse::<u64>()
            .map_err(|_| bad(&format!("`{s}` is not a cycle number"))),
    };
    let range = bound(start, 0)?..bound(end, u64::MAX)?;
    if range.is_empty() {
        return Err(bad("the range is empty (its end is excluded)"));
    }
    Ok(range)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_read_corners_in_order() {
        assert_eq!(region("1,2,3,4"), Ok((1, 2, 3, 4)));
        assert_eq!(region(" 0, 0, 0, 0"), Ok((0, 0, 0, 0)));
        for bad in [
            "1,2,3",
            "1,2,3,4,5",
            "3,0,1,0",
            "0,3,0,1",
            "a,b,c,d",
            "-1,0,1,1",
            "",
        ] {
            assert!(region(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cycle_ranges_exclude_their_end() {
        assert_eq!(cycles("10..20"), Ok(10..20));
        assert_eq!(cycles("10.."), Ok(10..u64::MAX));
        assert_eq!(cycles("..20"), Ok(0..20));
        for bad in ["20..10", "5..5", "10", "a..b", "1...3", "..0"] {
            assert!(cycles(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn regions_must_lie_on_the_fabric() {
        let dev = Target::dev();
        assert_eq!(within((0, 0, 15, 15), &dev), Ok(Rect::new(0, 0, 16, 16)));
        assert_eq!(within((2, 3, 2, 5), &dev), Ok(Rect::new(2, 3, 1, 3)));
        assert!(within((0, 0, 16, 0), &dev).is_err());
        assert!(within((0, 0, 0, 16), &dev).is_err());
    }
}

//! The machine description [`Target`]: fabric size, per-PE and per-router resources, links,
//! weight store, host I/O and clock; its validation and its TOML form.

use crate::boundary::Boundary;
use crate::defects::DefectMap;
use crate::geometry::{Coord, Dir};
use crate::swarm::Swarm;
use crate::switched::Switched;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// Bytes in one wavelet. Links carry one wavelet per cycle per direction.
pub const WAVELET_BYTES: u32 = 4;

/// The most colors a target may have (the simulator keeps per-PE color sets as 64-bit masks).
pub const MAX_COLORS: u32 = 64;

/// The deepest router input queue a target may have.
pub const MAX_QUEUE_DEPTH: u32 = 255;

/// The widest and tallest fabric a target may have, in PEs. WSE-3's fabric is 762 × 1176; a
/// side of 2048 leaves room for larger machines while keeping the tables the mapper and the
/// simulator keep per PE of the fabric (tens of bytes each) well under a gigabyte.
pub const MAX_FABRIC_SIDE: u32 = 2048;

/// The longest hop latency a target may have, in cycles. Real fabrics take a cycle or two per
/// hop; the simulator keeps a ring of one slot per cycle of latency for every band of rows,
/// so an absurd latency would only cost memory.
pub const MAX_HOP_LATENCY: u32 = 1024;

/// The most SRAM a PE may have, in bytes: 16 MiB, over 300 times a WSE PE's 48 KiB. The
/// simulator allocates every used PE's SRAM, so larger figures only make runs run out of
/// host memory.
pub const MAX_SRAM_BYTES: u32 = 16 * 1024 * 1024;

/// A target file that cannot be found or read, or a name that is neither a preset nor a
/// file ([`TargetError::Io`], [`TargetError::UnknownPreset`]).
pub const E0901: &str = "E0901";

/// A target description that is malformed or that the machine model cannot use: TOML syntax,
/// a missing, unknown or mistyped field, or a value outside the documented limits
/// ([`TargetError::Parse`], [`TargetError::Field`]).
pub const E0902: &str = "E0902";

/// Every code of a target problem, with a one-line summary, in code order.
pub const CODES: &[(&str, &str)] = &[
    (E0901, "target not found"),
    (E0902, "target description invalid"),
];

/// One machine. Every field is required in a target file; only `launch`, `boundary`, `ramp`,
/// `switched`, `swarm` and `defects` may be left out.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// A short name printed in reports.
    pub name: String,
    /// Fabric width in PEs usable by programs (at most [`MAX_FABRIC_SIDE`]).
    pub width: u32,
    /// Fabric height in PEs usable by programs (at most [`MAX_FABRIC_SIDE`]).
    pub height: u32,
    /// SRAM per PE in bytes (a hard limit; at most [`MAX_SRAM_BYTES`]).
    pub sram_bytes: u32,
    /// Number of SRAM banks per PE (`sram_bytes` must divide evenly).
    pub sram_banks: u32,
    /// Routable colors (virtual channels) per router.
    pub colors: u32,
    /// Depth, in wavelets, of each router input queue (per color and receive port).
    pub queue_depth: u32,
    /// Cycles a wavelet takes to cross one link (also the time a flow-control credit takes to
    /// travel back); at most [`MAX_HOP_LATENCY`].
    pub hop_latency: u32,
    /// Bytes per cycle per link direction. The simulator models one 32-bit wavelet per cycle,
    /// so this must be 4.
    pub link_bytes_per_cycle: u32,
    /// Cycles the PE spends switching to a task before the task's own work starts.
    pub task_switch_cycles: u32,
    /// Cycles the fabric needs between two phases of a weight-streaming run to take the next
    /// layer's code and routes (every PE's task table, every router's color configuration).
    pub reconfigure_cycles: u32,
    /// Clock frequency in Hz, used only to print times beside cycle counts.
    pub clock_hz: u64,
    /// fp32 vector throughput, elements per cycle.
    pub fp32: Throughput,
    /// fp16 vector throughput, elements per cycle.
    pub fp16: Throughput,
    /// The off-fabric weight store (the MemoryX role).
    pub weight_store: WeightStore,
    /// Host I/O through the fabric edges.
    pub host_io: HostIo,
    /// How the host's launch reaches the PEs; optional in a target file (by default every
    /// program starts at cycle 0).
    #[serde(default)]
    pub launch: Launch,
    /// Boundaries between dies that cost extra cycles to cross; optional in a target file
    /// (by default there are none).
    #[serde(default, skip_serializing_if = "Boundary::is_absent")]
    pub boundary: Boundary,
    /// How a PE's ramp arbitrates between its transfers; optional in a target file (by
    /// default one wavelet in and one out per cycle).
    #[serde(default, skip_serializing_if = "Ramp::is_default")]
    pub ramp: Ramp,
    /// Cycles per wavelet leaving a router through a switched route, per direction; optional
    /// in a target file (by default one wavelet per cycle, as a plain route).
    #[serde(default, skip_serializing_if = "Switched::is_default")]
    pub switched: Switched,
    /// The broadcast/reduce fabric between the weight store and a cluster of systems (the
    /// SwarmX role), used by `wsel run --systems N`; optional in a target file.
    #[serde(default)]
    pub swarm: Swarm,
    /// Dead PEs and links.
    #[serde(default, skip_serializing_if = "DefectMap::is_empty")]
    pub defects: DefectMap,
}

/// Vector arithmetic throughput in elements per cycle.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Throughput {
    /// Additions (and subtractions, moves) per cycle.
    pub add: u32,
    /// Multiplications per cycle.
    pub mul: u32,
    /// Fused multiply-adds per cycle.
    pub fma: u32,
}

/// The off-fabric weight store.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WeightStore {
    /// Capacity in bytes.
    pub capacity_bytes: u64,
    /// Bandwidth into the fabric edge, bytes per cycle, shared by all weight streams.
    pub bandwidth_bytes_per_cycle: u32,
    /// Cycles from a request until the first wavelet reaches the fabric edge.
    pub latency_cycles: u32,
    /// Bandwidth from the fabric edge into the store, bytes per cycle: the gradients of
    /// training (`wsel train`) arrive at this rate.
    #[serde(default = "default_gradient_bandwidth")]
    pub gradient_bandwidth_bytes_per_cycle: u32,
    /// Parameters the store's optimizer updates per cycle (an SGD or Adam step per element).
    #[serde(default = "default_update_rate")]
    pub update_elements_per_cycle: u32,
}

/// The default inbound bandwidth of the store: as outbound in the presets (not public).
fn default_gradient_bandwidth() -> u32 {
    64
}

/// The default optimizer throughput of the store (not public).
fn default_update_rate() -> u32 {
    16
}

/// The host's launch of a program (CSL's memcpy `launch`): a command that travels along
/// every row from the west, so that PEs further east start later. A PE `d` columns east of
/// the westernmost column that runs a program runs its launch tasks from cycle
/// `floor(d · cycles_per_column)`; every row is reached at once.
#[derive(Clone, Copy, PartialEq, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Launch {
    /// Cycles the launch takes per PE column (0: every program starts at cycle 0); at most
    /// [`MAX_LAUNCH_CYCLES_PER_COLUMN`].
    pub cycles_per_column: f64,
}

/// The ramp between a PE and its router. By default it moves one wavelet from the PE's sends
/// into the router and one from the router to the PE's receives in every cycle. `shared`:
/// it moves one wavelet per cycle in either direction, and when a send and a delivery could
/// both move, the one on the lower color goes (a PE serves its transfers in queue order; the
/// simulator's colors stand for the queues, see `runtime/sim/README.md`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ramp {
    /// One wavelet per cycle in or out, the lower color first (else one each way).
    pub shared: bool,
}

impl Ramp {
    /// Whether this is the default ramp (one wavelet each way per cycle).
    pub fn is_default(&self) -> bool {
        *self == Ramp::default()
    }
}

/// The most cycles per column a launch may take.
pub const MAX_LAUNCH_CYCLES_PER_COLUMN: f64 = 1024.0;

impl Launch {
    /// The cycle the launch reaches a PE `columns` columns east of the first.
    pub fn start(&self, columns: u32) -> u64 {
        (f64::from(columns) * self.cycles_per_column).floor() as u64
    }

    /// What is wrong with the figure, if anything.
    fn problem(&self) -> Option<String> {
        let c = self.cycles_per_column;
        (!(0.0..=MAX_LAUNCH_CYCLES_PER_COLUMN).contains(&c)).then(|| {
            format!("{c} is not between 0 and {MAX_LAUNCH_CYCLES_PER_COLUMN} cycles per column")
        })
    }
}

/// Host I/O through the fabric edges.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostIo {
    /// Aggregate bandwidth between host and fabric edge, bytes per cycle, shared by all host
    /// streams (in and out). One stream never exceeds one wavelet per cycle (a link's rate).
    pub bandwidth_bytes_per_cycle: u32,
}

/// Why a target could not be loaded. The message always names the offending field.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum TargetError {
    /// The file could not be read.
    Io {
        /// The file.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// The TOML is malformed, a field is missing, unknown or of the wrong type.
    Parse {
        /// The field concerned, dotted (`weight_store.latency_cycles`), when it is known.
        field: Option<String>,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A field has a value the machine model cannot use.
    Field {
        /// The field, dotted.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// No preset has this name.
    UnknownPreset(String),
}

impl fmt::Display for TargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetError::Io { path, message } => {
                write!(f, "cannot read target file {path}: {message}")
            }
            TargetError::Parse {
                field: Some(field),
                message,
            } => {
                write!(f, "target field `{field}`: {message}")
            }
            TargetError::Parse {
                field: None,
                message,
            } => write!(f, "target file: {message}"),
            TargetError::Field { field, message } => write!(f, "target field `{field}`: {message}"),
            TargetError::UnknownPreset(name) => write!(
                f,
                "unknown target preset `{name}` (known: {})",
                crate::presets::PRESET_NAMES.join(", ")
            ),
        }
    }
}

impl std::error::Error for TargetError {}

impl TargetError {
    /// The stable code of this error: [`E0901`] or [`E0902`].
    pub fn code(&self) -> &'static str {
        match self {
            TargetError::Io { .. } | TargetError::UnknownPreset(_) => E0901,
            TargetError::Parse { .. } | TargetError::Field { .. } => E0902,
        }
    }
}

impl Target {
    /// Parse and validate a target from TOML text.
    pub fn from_toml_str(text: &str) -> Result<Target, TargetError> {
        let mut target: Target = toml::from_str(text).map_err(|e| parse_error(text, &e))?;
        target.defects.canonicalize();
        target.validate()?;
        Ok(target)
    }

    /// Read, parse and validate a target file.
    pub fn load(path: &Path) -> Result<Target, TargetError> {
        let text = std::fs::read_to_string(path).map_err(|e| TargetError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Target::from_toml_str(&text)
    }

    /// This target as TOML text that [`Target::from_toml_str`] reads back unchanged.
    pub fn to_toml_string(&self) -> String {
        // Serialising plain integers, strings and tables cannot fail.
        toml::to_string(self).unwrap_or_default()
    }

    /// Check every field against what the machine model supports: positive where zero makes
    /// no sense, within the limits above ([`MAX_FABRIC_SIDE`], [`MAX_HOP_LATENCY`],
    /// [`MAX_SRAM_BYTES`], [`MAX_COLORS`], [`MAX_QUEUE_DEPTH`]), and defects on the fabric.
    /// Every front end validates here, before anything is sized from the target.
    pub fn validate(&self) -> Result<(), TargetError> {
        self.check_positive()?;
        self.check_limits()?;
        if self.link_bytes_per_cycle != WAVELET_BYTES {
            return Err(field_error(
                "link_bytes_per_cycle",
                "must be 4: the simulator models one 32-bit wavelet per cycle per link direction",
            ));
        }
        if !self.sram_bytes.is_multiple_of(4) {
            return Err(field_error(
                "sram_bytes",
                "must be a multiple of 4 (whole 32-bit words)",
            ));
        }
        if !self.sram_bytes.is_multiple_of(self.sram_banks) {
            return Err(field_error("sram_banks", "must divide sram_bytes evenly"));
        }
        if let Some(message) = self.launch.problem() {
            return Err(field_error("launch.cycles_per_column", &message));
        }
        if let Some((field, message)) = self.boundary.problem(self.hop_latency) {
            return Err(field_error(&format!("boundary.{field}"), &message));
        }
        if let Some((field, message)) = self.switched.problem() {
            return Err(field_error(&format!("switched.{field}"), &message));
        }
        if let Some((field, message)) = self.swarm.problem() {
            return Err(field_error(&format!("swarm.{field}"), &message));
        }
        self.check_defects()
    }

    fn check_positive(&self) -> Result<(), TargetError> {
        let positive: [(&str, u64); 18] = [
            ("width", self.width.into()),
            ("height", self.height.into()),
            ("sram_bytes", self.sram_bytes.into()),
            ("sram_banks", self.sram_banks.into()),
            ("colors", self.colors.into()),
            ("queue_depth", self.queue_depth.into()),
            ("hop_latency", self.hop_latency.into()),
            ("clock_hz", self.clock_hz),
            ("fp32.add", self.fp32.add.into()),
            ("fp32.mul", self.fp32.mul.into()),
            ("fp32.fma", self.fp32.fma.into()),
            ("fp16.add", self.fp16.add.into()),
            ("fp16.mul", self.fp16.mul.into()),
            ("fp16.fma", self.fp16.fma.into()),
            (
                "weight_store.bandwidth_bytes_per_cycle",
                self.weight_store.bandwidth_bytes_per_cycle.into(),
            ),
            (
                "weight_store.gradient_bandwidth_bytes_per_cycle",
                self.weight_store.gradient_bandwidth_bytes_per_cycle.into(),
            ),
            (
                "weight_store.update_elements_per_cycle",
                self.weight_store.update_elements_per_cycle.into(),
            ),
            (
                "host_io.bandwidth_bytes_per_cycle",
                self.host_io.bandwidth_bytes_per_cycle.into(),
            ),
        ];
        match positive.iter().find(|(_, value)| *value == 0) {
            Some((field, _)) => Err(field_error(field, "must be at least 1")),
            None => Ok(()),
        }
    }

    fn check_limits(&self) -> Result<(), TargetError> {
        let limits: [(&str, u32, u32, &str); 6] = [
            ("width", self.width, MAX_FABRIC_SIDE, "PEs"),
            ("height", self.height, MAX_FABRIC_SIDE, "PEs"),
            ("hop_latency", self.hop_latency, MAX_HOP_LATENCY, "cycles"),
            ("sram_bytes", self.sram_bytes, MAX_SRAM_BYTES, "bytes"),
            ("colors", self.colors, MAX_COLORS, "colors"),
            ("queue_depth", self.queue_depth, MAX_QUEUE_DEPTH, "wavelets"),
        ];
        match limits.iter().find(|(_, value, max, _)| value > max) {
            Some((field, value, max, unit)) => Err(field_error(
                field,
                &format!("{value} is over the limit of {max} {unit}"),
            )),
            None => Ok(()),
        }
    }

    fn check_defects(&self) -> Result<(), TargetError> {
        for &c in &self.defects.dead_pes {
            if !self.contains(c) {
                return Err(field_error(
                    "defects.dead_pes",
                    &format!("PE {c} is outside the fabric"),
                ));
            }
        }
        for l in &self.defects.dead_links {
            let c = Coord::new(l.x, l.y);
            if !self.contains(c) || self.neighbor(c, l.dir).is_none() {
                return Err(field_error(
                    "defects.dead_links",
                    &format!("the {} link of PE {c} is not a link of the fabric", l.dir),
                ));
            }
        }
        if self.defects.dead_pes.len() as u64 == self.pe_count() {
            let (w, h) = (self.width, self.height);
            return Err(field_error(
                "defects.dead_pes",
                &format!("every PE of the {w} × {h} fabric is dead: no program can run on it"),
            ));
        }
        Ok(())
    }

    /// Whether `c` is on the fabric.
    pub fn contains(&self, c: Coord) -> bool {
        c.x < self.width && c.y < self.height
    }

    /// The neighbour of `c` toward `dir`, if it is on the fabric.
    pub fn neighbor(&self, c: Coord, dir: Dir) -> Option<Coord> {
        dir.step(c, self.width, self.height)
    }

    /// Number of PEs usable by programs.
    pub fn pe_count(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }

    /// Row-major index of `c` (`y * width + x`).
    pub fn pe_index(&self, c: Coord) -> u32 {
        c.y * self.width + c.x
    }

    /// `cycles` converted to seconds at this target's clock.
    pub fn seconds(&self, cycles: u64) -> f64 {
        cycles as f64 / self.clock_hz as f64
    }
}

fn field_error(field: &str, message: &str) -> TargetError {
    TargetError::Field {
        field: field.to_string(),
        message: message.to_string(),
    }
}

/// Turn a TOML error into one that names the field: from the message when serde names it
/// (missing or unknown fields), otherwise from the key on the line the error points at.
fn parse_error(text: &str, e: &toml::de::Error) -> TargetError {
    let message = e.to_string();
    let detail = e.message();
    let named = ["missing field `", "unknown field `"]
        .iter()
        .find_map(|prefix| {
            detail
                .split_once(prefix)
                .and_then(|(_, rest)| rest.split_once('`'))
        })
        .map(|(name, _)| name.to_string());
    let table = e
        .span()
        .map(|s| table_at(text, s.start))
        .unwrap_or_default();
    let field = match named {
        Some(name) => Some(join(&table, &name)),
        None => e
            .span()
            .and_then(|s| key_at(text, s.start))
            .map(|key| join(&table, &key)),
    };
    TargetError::Parse {
        field,
        message: message.trim_end().to_string(),
    }
}

fn join(table: &str, key: &str) -> String {
    if table.is_empty() || key.starts_with(table) {
        key.to_string()
    } else {
        format!("{table}.{key}")
    }
}

/// The `key` of a `key = value` line containing byte `offset`.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let start = text[..offset.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let line = text[start..].lines().next()?;
    let (key, _) = line.split_once('=')?;
    let key = key.trim().trim_matches('"');
    (!key.is_empty() && !key.starts_with('[')).then(|| key.to_string())
}

/// The name of the `[table]` whose body contains byte `offset`, or "" for the root table.
fn table_at(text: &str, offset: usize) -> String {
    let offset = offset.min(text.len());
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    text[..line_end]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('[') && l.ends_with(']'))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string())
        .unwrap_or_default()
}

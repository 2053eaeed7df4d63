//! Machine descriptions for wsel, shared by the compiler's mapping pass and the simulator.
//!
//! - [`Target`]: one machine (fabric size, SRAM, colors, links, throughput, weight store,
//!   host I/O, clock), built from a preset ([`Target::preset`]) or a TOML file
//!   ([`Target::load`], [`Target::from_toml_str`]); a bad or missing field, or a value outside
//!   the documented limits ([`MAX_FABRIC_SIDE`], [`MAX_HOP_LATENCY`], [`MAX_SRAM_BYTES`], ...), is
//!   an error naming it, with a stable code ([`TargetError::code`]).
//! - [`Swarm`]: the broadcast/reduce fabric between the weight store and a cluster of
//!   systems (`wsel run --systems N`).
//! - [`Boundary`]: lines between dies that cost extra cycles to cross.
//! - [`Switched`]: the rate of a switched route (router switch positions), per direction.
//! - [`DefectMap`]: dead PEs and dead links.
//! - Geometry: [`Coord`] (x = column eastward, y = row southward), [`Dir`], [`Port`], [`PortSet`],
//!   [`Rect`].
//! - Routing: [`shortest_path`], [`multicast_tree`], [`path_to_edge`] avoid defects and return
//!   router entries ([`RouteEntry`]) for one color.
//!
//! This crate knows nothing of the simulator.

mod boundary;
mod defects;
mod geometry;
mod presets;
mod routing;
mod swarm;
mod switched;
mod target;

pub use boundary::Boundary;
pub use defects::{DeadLink, DefectMap};
pub use geometry::{Coord, Dir, Port, PortSet, Rect};
pub use presets::{PRESET_NAMES, Provenance, Source, sources};
pub use routing::{
    Path, RouteEntry, RouteError, RouteTree, dir_between, multicast_tree, path_to_edge,
    shortest_path,
};
pub use swarm::{MAX_FAN_OUT, Swarm};
pub use switched::{MAX_SWITCHED_CYCLES_PER_WAVELET, SWITCHED_PERIOD_UNITS, Switched};
pub use target::{
    CODES, E0901, E0902, HostIo, Launch, MAX_COLORS, MAX_FABRIC_SIDE, MAX_HOP_LATENCY,
    MAX_LAUNCH_CYCLES_PER_COLUMN, MAX_QUEUE_DEPTH, MAX_SRAM_BYTES, Ramp, Target, TargetError,
    Throughput, WAVELET_BYTES, WeightStore,
};

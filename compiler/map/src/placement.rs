//! The result of mapping, as plain serialisable data: [`Placement`] with one [`PlacedLayer`]
//! per layer instance, the [`Transfer`]s that carry tensors between regions and the fabric's
//! edges, and the host and weight-store edge points.
//!
//! Streams inside a region are stored as rules, not as one record per PE, so a placement on a
//! 750 × 994 fabric stays small: every port has a [`ColorRule`] (one color, or two alternating
//! by the PE's index along the port's axis), from which [`PlacedLayer::port_table`] gives any
//! PE's port → color table and [`Placement::region_routes`] the router entries inside the
//! region. Routes between regions are explicit [`Hop`]s. [`Placement::routes`] gathers every
//! router entry of the program; no router has two entries for one color.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use wsel_ir::graph::{Bus, CValue, Side};

use crate::bus::bus_sides;
use wsel_target::{Coord, DefectMap, Dir, Port, PortSet, Rect, RouteEntry};

pub use crate::orientation::Orientation;

/// A color (virtual channel), `0 .. target.colors`.
pub type Color = u8;

/// A whole program's placement on one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// The model mapped.
    pub model: String,
    /// The target's name.
    pub target: String,
    /// Fabric size in PEs.
    pub fabric_width: u32,
    pub fabric_height: u32,
    /// `pipelined` or `streaming`.
    pub mode: String,
    /// Samples per batch, over all copies.
    pub batch: u64,
    /// Samples each copy processes: copy `c` takes samples `c·samples_per_copy ..
    /// (c+1)·samples_per_copy` of the batch (`docs/mapping.md` §5).
    pub samples_per_copy: u64,
    /// SRAM bytes per PE on the target.
    pub sram_bytes_available: u32,
    /// Colors per router on the target, and how many distinct colors the program uses.
    pub colors_available: u32,
    pub colors_used: u32,
    /// The per-stage target `T` the size search settled on: every layer's estimate is at most
    /// this many cycles per sample.
    pub stage_target: u64,
    /// Copies of the whole pipeline (1: no replication for data parallelism).
    pub copies: u32,
    /// Phases of a weight-streaming run (one per layer instance, in graph order); 1 in
    /// pipelined mode.
    #[serde(default = "one_phase")]
    pub phases: u32,
    /// Weight streaming: the batch runs in this many micro-batches of `samples_per_copy`
    /// samples, one after another, every phase for each (1: the whole batch at once).
    #[serde(default = "one_phase")]
    pub micro_batches: u32,
    /// Why the batch runs in micro-batches: the working set of the whole batch that does not
    /// fit (empty when it runs whole).
    #[serde(default)]
    pub micro_batch_reason: String,
    /// With micro-batches: the store traffic of re-streaming the weights for each against
    /// parking the waiting micro-batches' activations in the store (`crate::micro_traffic`).
    #[serde(default)]
    pub micro_traffic: Option<crate::MicroTraffic>,
    /// Weight streaming with per-layer rows (`docs/running.md`): the one region the phases
    /// would otherwise share (rows, columns) and its estimated cycles for the whole batch;
    /// `None` when the phases run on one region.
    #[serde(default)]
    pub one_region: Option<(u32, u32, u64)>,
    /// Estimated cycles for the whole batch: the slowest copy's fill plus its further samples
    /// at its slowest stage's period (`docs/mapping.md` §5).
    pub estimated_cycles: u64,
    /// The fill in that estimate: from a copy's first input to its first result leaving.
    #[serde(default)]
    pub estimated_fill_cycles: u64,
    /// Why the pipeline runs in this many copies (`--copies auto` says what the estimate
    /// found); empty when the count was asked for.
    #[serde(default)]
    pub copies_reason: String,
    /// How the regions were laid out when not by the size search's placer (the band
    /// planner, `crate::bands`); empty otherwise. Always serialized: build artifacts use a
    /// format that is not self-describing, where a skipped field shifts every later one.
    #[serde(default)]
    pub layout_reason: String,
    /// One entry per layer instance per copy: copy 0's layers in the layer graph's order, then
    /// copy 1's, and so on. Layer indices in [`Endpoint`]s and [`EdgePoint`]s count in this
    /// list.
    pub layers: Vec<PlacedLayer>,
    /// Every tensor part that crosses from one region (or the fabric edge) to another.
    pub transfers: Vec<Transfer>,
    /// Streams entering the fabric edge (model inputs from the host, weights from the store).
    pub inputs: Vec<EdgePoint>,
    /// Streams leaving the fabric edge (the model's result).
    pub outputs: Vec<EdgePoint>,
    /// The target's dead PEs and links, which no region contains and no route crosses.
    pub defects: DefectMap,
}

/// One layer instance on its region.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacedLayer {
    /// The instance's name (`dense#2`) and the layer called.
    pub name: String,
    pub layer: String,
    /// The copy of the pipeline this region belongs to (0 without replication).
    pub copy: u32,
    /// The phase of a weight-streaming run this layer runs in (`docs/running.md`): layers of
    /// different phases time-share the fabric, one phase after another, and may overlap. 0 in
    /// pipelined mode, where every layer runs at once.
    #[serde(default)]
    pub phase: u32,
    /// Index of the implementation chosen, in the layer's `impls`.
    pub implementation: usize,
    /// The kernel that runs on every PE of the region, and the file defining it.
    pub kernel: String,
    pub kernel_file: PathBuf,
    /// The logical region size (`region.rows × region.cols` as the kernel sees it).
    pub rows: u32,
    pub cols: u32,
    /// The physical rectangle (width and height swapped when transposed).
    pub rect: Rect,
    pub orientation: Orientation,
    /// The kernel's arguments evaluated at this region size, in parameter order.
    #[serde(with = "kernel_args")]
    pub kernel_args: Vec<(String, CValue)>,
    /// SRAM bytes every PE of the region uses (the kernel's arrays plus any reserve).
    pub sram_bytes: u64,
    /// Cycles per sample, analytically (`docs/mapping.md` §5).
    pub estimate: Estimate,
    /// The kernel's ports in declaration order, with their colors.
    pub ports: Vec<PlacedPort>,
}

/// The analytic estimate of one layer on its region, in cycles per sample
/// (`docs/mapping.md` §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Estimate {
    /// The busiest PE's task work: measured by dry runs of the kernel, else multiply-adds per
    /// PE at the target's fma rate. Comparable with the simulated busy cycles.
    pub compute: u64,
    /// Cycles an edge PE takes in its inputs: every bound input port's part, one after
    /// another, each wavelet at its stream's pace (one per cycle, or slower for a host stream
    /// sharing the host's bandwidth) but those a host stream queued in front of the PE before
    /// the receive.
    pub edge_in: u64,
    /// Cycles the slowest input part takes to arrive at its stream's pace: host streams run
    /// side by side, so the stage is never faster than its slowest one.
    #[serde(default)]
    pub stream: u64,
    /// Cycles the longest output part takes to leave, at its stream's pace.
    pub edge_out: u64,
    /// Cycles a PE of a reduction chain waits for its neighbour's partial result (the bound
    /// output's part, when the output port passes its data along a chain of PEs), 0 without.
    #[serde(default)]
    pub chain: u64,
    /// The busiest PE's task work for the whole batch, where the estimate knows it exactly (a
    /// phase of weight streaming, which runs every sample at once); 0 otherwise.
    #[serde(default)]
    pub batch_compute: u64,
    /// The stage's period: `max(edge_in + compute + chain, stream, edge_out)`.
    pub cycles: u64,
    /// Cycles from a sample's first wavelet reaching the region to its result leaving it:
    /// inputs, work, and the hops and steps of every chain of PEs the data crosses.
    #[serde(default)]
    pub latency: u64,
}

/// A kernel port on its region.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacedPort {
    pub name: String,
    /// `true` for `in` ports.
    pub input: bool,
    pub multicast: bool,
    /// The side as written in the kernel, and where it faces on the fabric.
    pub side: Dir,
    pub physical_side: Dir,
    /// The port's color on every PE.
    pub colors: ColorRule,
    /// The tensor streamed through this port at the region's edge, if the layer binds one.
    pub bound: Option<String>,
    /// The tensor's part count (the number of lines along the port's side) when bound.
    pub parts: u32,
    /// `Some` for a bus port: every PE of the line sends and receives on one color.
    #[serde(default)]
    pub bus: Option<Bus>,
    /// An `in` port whose stream other layers read too: the far end of each line forwards it
    /// on out of the region, straight on, toward them (`docs/mapping.md` §4, "Fan-out").
    #[serde(default)]
    pub passes_on: bool,
    /// `by k`: the PE the stream goes to or comes from is `k` away on the port's side, the
    /// routers between passing it through (`None`: the neighbour; `links`).
    #[serde(default)]
    pub distance: Option<u32>,
    /// A switched port's switch (`crate::switched`).
    #[serde(default)]
    pub switch: Option<crate::switched::PlacedSwitch>,
}

/// A port's color on the PEs of a region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ColorRule {
    /// The same color on every PE (multicast ports).
    Fixed { color: Color },
    /// Neighbour ports: the PE whose logical row (`along_rows`) or column index `k` is even
    /// uses `even`, odd uses `odd`.
    Alternating {
        along_rows: bool,
        even: Color,
        odd: Color,
        /// The port's distance `k`: the parity is that of the index divided by `k`.
        #[serde(default = "one")]
        stride: u32,
    },
}

impl ColorRule {
    /// The color at logical `(row, col)`.
    pub fn at(self, row: u32, col: u32) -> Color {
        match self {
            ColorRule::Fixed { color } => color,
            ColorRule::Alternating {
                along_rows,
                even,
                odd,
                stride,
            } => {
                let k = if along_rows { row } else { col };
                if (k / stride.max(1)) % 2 == 0 {
                    even
                } else {
                    odd
                }
            }
        }
    }
}

/// One part of a tensor carried from a source to one or more destinations on one color.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transfer {
    /// The tensor: a model input's or parameter's name, or `layer.output` for a layer result.
    pub tensor: String,
    /// The copy of the pipeline the transfer belongs to.
    pub copy: u32,
    pub part: u32,
    pub parts: u32,
    pub color: Color,
    pub source: Endpoint,
    pub destinations: Vec<Endpoint>,
    /// Router entries between the source and the destinations, outside both regions (the
    /// entries at the endpoints belong to their regions' port rules). Empty when the source PE
    /// is the destination's neighbour, or the destination sits on the fabric edge.
    pub hops: Vec<Hop>,
}

/// Where a transfer starts or ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Endpoint {
    /// Model input `input` enters the fabric at PE `at` from `side`.
    Host { input: usize, at: Coord, side: Dir },
    /// Parameter `param` enters from the weight store at PE `at` from `side`.
    WeightStore { param: usize, at: Coord, side: Dir },
    /// Port `port` of layer `layer` sends the part from PE `at` out of the region.
    LayerOutput {
        layer: usize,
        port: usize,
        at: Coord,
    },
    /// Port `port` of layer `layer` receives the part at PE `at` (for a multicast port, the
    /// first PE of the line).
    LayerInput {
        layer: usize,
        port: usize,
        at: Coord,
    },
    /// The model's result leaves the fabric at PE `at` through `side`.
    HostOutput { at: Coord, side: Dir },
}

impl Endpoint {
    /// The same endpoint with its layer index (if any) moved on by `by`.
    pub(crate) fn shifted(self, by: usize) -> Endpoint {
        match self {
            Endpoint::LayerOutput { layer, port, at } => Endpoint::LayerOutput {
                layer: layer + by,
                port,
                at,
            },
            Endpoint::LayerInput { layer, port, at } => Endpoint::LayerInput {
                layer: layer + by,
                port,
                at,
            },
            other => other,
        }
    }
}

/// One router entry on a transfer's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hop {
    pub at: Coord,
    pub rx: PortSet,
    pub tx: PortSet,
}

/// Where the data of an edge stream comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeSource {
    Host,
    WeightStore,
}

/// A stream through the fabric's edge: into PE `at` from `side` (inputs), or out of it
/// toward `side` (outputs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EdgePoint {
    /// The tensor's name (a model input, a parameter, or the model's result).
    pub tensor: String,
    /// Index of the model input or parameter (0 for the result).
    pub index: usize,
    /// The copy of the pipeline whose samples (or weights) the stream carries.
    pub copy: u32,
    pub part: u32,
    pub parts: u32,
    pub at: Coord,
    pub side: Dir,
    pub color: Color,
    pub source: EdgeSource,
    /// The layer that consumes (inputs) or produces (outputs) this stream.
    pub layer: usize,
}

impl Estimate {
    /// The busiest PE's task work per sample for a batch of `batch` samples: `compute`, or
    /// `batch_compute` spread over the batch where it is known.
    pub fn work_per_sample(&self, batch: u64) -> f64 {
        if self.batch_compute > 0 {
            self.batch_compute as f64 / batch.max(1) as f64
        } else {
            self.compute as f64
        }
    }
}

impl PlacedLayer {
    /// The port → color table of the PE at logical `(row, col)`, indexed like the kernel's
    /// ports.
    pub fn port_table(&self, row: u32, col: u32) -> Vec<Color> {
        self.ports.iter().map(|p| p.colors.at(row, col)).collect()
    }

    /// The physical PE of logical `(row, col)`.
    pub fn pe(&self, row: u32, col: u32) -> Coord {
        self.orientation.pe(self.rect, row, col)
    }

    /// Number of PEs.
    pub fn pe_count(&self) -> u64 {
        u64::from(self.rows) * u64::from(self.cols)
    }

    /// The colors any port of this region uses, sorted.
    pub fn colors(&self) -> Vec<Color> {
        let mut out: Vec<Color> = Vec::new();
        for p in &self.ports {
            match p.colors {
                ColorRule::Fixed { color } => out.push(color),
                ColorRule::Alternating { even, odd, .. } => {
                    out.push(even);
                    out.push(odd);
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The router entries inside the region: neighbour links (a PE sends on its port's color
    /// toward the port's side; the neighbour receives it into its paired port), multicast lines
    /// (entering at the port's side, delivered to every PE of the line and forwarded), buses,
    /// and the boundary entries of bound ports. A boundary port that no bind feeds or drains
    /// gets no entry.
    pub fn region_routes(&self) -> Vec<(Color, RouteEntry)> {
        let paired = crate::pairing(&self.ports);
        let mut out = Vec::new();
        for row in 0..self.rows {
            for col in 0..self.cols {
                out.extend(
                    self.entries_paired(row, col, &paired)
                        .into_iter()
                        .map(|(_, c, e)| (c, e)),
                );
            }
        }
        out
    }

    /// The router entries at logical `(row, col)`, each with the port whose rule made it.
    /// A neighbour port without a partner (an `out ... to east` with no `in ... from west`)
    /// is routed only where it crosses the region's edge: inside the region no neighbour
    /// takes its stream, so a send there is an error the hang checks report (E0702).
    pub fn entries_at(&self, row: u32, col: u32) -> Vec<(usize, Color, RouteEntry)> {
        self.entries_paired(row, col, &crate::pairing(&self.ports))
    }

    /// [`PlacedLayer::entries_at`] with the ports' pairs already known.
    fn entries_paired(
        &self,
        row: u32,
        col: u32,
        paired: &[Option<usize>],
    ) -> Vec<(usize, Color, RouteEntry)> {
        let at = self.pe(row, col);
        let mut out = Vec::new();
        for (i, p) in self.ports.iter().enumerate() {
            let color = p.colors.at(row, col);
            let toward = self.orientation.dir(dir_side(p.side));
            let bound = p.bound.is_some();
            let (rx, tx) = if p.switch.is_some() {
                // One entry per switched pair, made by its `out` port.
                let Some((color, rx, tx, _)) = crate::switched::switched_entry(self, row, col, i)
                else {
                    continue;
                };
                out.push((i, color, RouteEntry { at, rx, tx }));
                continue;
            } else if let Some(bus) = p.bus {
                // One entry per bus, made by its `in` port when an `out` port sends on it.
                let sent = self
                    .ports
                    .iter()
                    .any(|o| !o.input && o.bus == p.bus && o.colors == p.colors);
                let sides = bus_sides(bus, self.rows, self.cols, row, col);
                if !p.input || !sent || sides.is_empty() {
                    continue;
                }
                let ports = sides.iter().fold(PortSet::only(Port::Ramp), |set, side| {
                    set.with(self.orientation.dir(*side).port())
                });
                (ports, ports)
            } else if p.multicast {
                if !bound {
                    continue;
                }
                // Enters from `toward`, forwarded away from it (past the far edge too when
                // the stream passes on).
                let mut tx = PortSet::only(Port::Ramp);
                if p.passes_on || !self.at_edge(row, col, opposite_side(p.side)) {
                    tx = tx.with(toward.opposite().port());
                }
                (PortSet::only(toward.port()), tx)
            } else {
                if let Some((color, rx, mut tx)) =
                    crate::links::link_entry(self, row, col, i, paired[i].is_some())
                {
                    // A stream passed on crosses a region one PE deep on its way out.
                    if p.input && p.passes_on {
                        tx = tx.with(toward.opposite().port());
                    }
                    out.push((i, color, RouteEntry { at, rx, tx }));
                }
                continue;
            };
            out.push((i, color, RouteEntry { at, rx, tx }));
        }
        out
    }

    /// The switches of the router at logical `(row, col)`: one per switched port's color
    /// there (`crate::switched`), to set on the routes [`PlacedLayer::entries_at`] gives.
    pub fn switches_at(&self, row: u32, col: u32) -> Vec<crate::switched::SwitchAt> {
        (0..self.ports.len())
            .filter_map(|i| crate::switched::switched_entry(self, row, col, i)?.3)
            .collect()
    }

    /// Whether logical `(row, col)` is on the region's logical `side`.
    pub(crate) fn at_edge(&self, row: u32, col: u32, side: Dir) -> bool {
        match side {
            Dir::North => row == 0,
            Dir::South => row + 1 == self.rows,
            Dir::West => col == 0,
            Dir::East => col + 1 == self.cols,
        }
    }
}

fn one_phase() -> u32 {
    1
}

fn one() -> u32 {
    1
}

impl Placement {
    /// Every router entry of the program: all regions' entries and all transfers' hops.
    /// (In weight-streaming mode, see [`Placement::phase_routes`].)
    pub fn routes(&self) -> Vec<(Color, RouteEntry)> {
        self.routes_where(|_| true)
    }

    /// The router entries of one phase of a weight-streaming run: its layers' regions and the
    /// transfers that reach them.
    pub fn phase_routes(&self, phase: u32) -> Vec<(Color, RouteEntry)> {
        self.routes_where(|l| l.phase == phase)
    }

    /// The layer a transfer belongs to: the layer it leaves or reaches.
    pub fn transfer_layer(&self, t: &Transfer) -> Option<usize> {
        std::iter::once(&t.source)
            .chain(&t.destinations)
            .find_map(|e| match *e {
                Endpoint::LayerOutput { layer, .. } | Endpoint::LayerInput { layer, .. } => {
                    Some(layer)
                }
                _ => None,
            })
    }

    fn routes_where(&self, keep: impl Fn(&PlacedLayer) -> bool) -> Vec<(Color, RouteEntry)> {
        let mut out = Vec::new();
        for layer in self.layers.iter().filter(|l| keep(l)) {
            out.extend(layer.region_routes());
        }
        let kept = |t: &&Transfer| {
            self.transfer_layer(t)
                .and_then(|l| self.layers.get(l))
                .is_none_or(&keep)
        };
        for t in self.transfers.iter().filter(kept) {
            out.extend(t.hops.iter().map(|h| {
                (
                    t.color,
                    RouteEntry {
                        at: h.at,
                        rx: h.rx,
                        tx: h.tx,
                    },
                )
            }));
        }
        out
    }

    /// Live PEs on the fabric.
    pub fn live_pes(&self) -> u64 {
        u64::from(self.fabric_width) * u64::from(self.fabric_height)
            - self.defects.dead_pes.len() as u64
    }

    /// PEs used by regions (at once: the phases of weight streaming share theirs).
    pub fn pes_used(&self) -> u64 {
        (0..self.phases.max(1))
            .map(|phase| {
                self.layers
                    .iter()
                    .filter(|l| l.phase == phase)
                    .map(PlacedLayer::pe_count)
                    .sum::<u64>()
            })
            .max()
            .unwrap_or(0)
    }

    /// Layers per copy of the pipeline: the layer graph's layer count.
    pub fn layers_per_copy(&self) -> usize {
        self.layers.len() / self.copies.max(1) as usize
    }

    /// The layer graph's index of `self.layers[i]`: every copy holds the graph's layers in
    /// order.
    pub fn instance(&self, i: usize) -> usize {
        i % self.layers_per_copy().max(1)
    }

    /// The layer with the largest estimate (the first one on ties), if any.
    pub fn bottleneck(&self) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (i, l) in self.layers.iter().enumerate() {
            if best.is_none_or(|b| l.estimate.cycles > self.layers[b].estimate.cycles) {
                best = Some(i);
            }
        }
        best
    }
}

/// A logical side as a direction value (the same compass name).
pub(crate) fn dir_side(side: Dir) -> Side {
    match side {
        Dir::North => Side::North,
        Dir::South => Side::South,
        Dir::East => Side::East,
        Dir::West => Side::West,
    }
}

/// A logical side as the [`Dir`] of the same name (for serialisation).
pub(crate) fn side_dir(side: Side) -> Dir {
    match side {
        Side::North => Dir::North,
        Side::South => Dir::South,
        Side::East => Dir::East,
        Side::West => Dir::West,
    }
}

fn opposite_side(side: Dir) -> Dir {
    side.opposite()
}

/// Kernel arguments: a `{name: value}` map for people (JSON), a list of `(name, value)` pairs
/// that keeps each value's kind for binary formats (the build artifact).
mod kernel_args {
    use serde::de::{Deserializer, Error, MapAccess, Visitor};
    use serde::ser::{SerializeMap, Serializer};
    use serde::{Deserialize, Serialize};
    use wsel_ir::graph::CValue;

    pub(super) fn serialize<S: Serializer>(
        args: &[(String, CValue)],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        if !s.is_human_readable() {
            return args.serialize(s);
        }
        let mut map = s.serialize_map(Some(args.len()))?;
        for (name, value) in args {
            match value {
                CValue::Int(v) => map.serialize_entry(name, v)?,
                CValue::Float(v) => map.serialize_entry(name, v)?,
                CValue::Bool(v) => map.serialize_entry(name, v)?,
            }
        }
        map.end()
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<(String, CValue)>, D::Error> {
        if !d.is_human_readable() {
            return Vec::deserialize(d);
        }
        d.deserialize_map(ArgsVisitor)
    }

    struct ArgsVisitor;

    impl<'de> Visitor<'de> for ArgsVisitor {
        type Value = Vec<(String, CValue)>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a map from argument names to numbers or booleans")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some((name, value)) = map.next_entry::<String, Scalar>()? {
                out.push((name, value.0));
            }
            Ok(out)
        }
    }

    /// One argument value written as a bare JSON number or boolean.
    struct Scalar(CValue);

    impl<'de> Deserialize<'de> for Scalar {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct ScalarVisitor;
            impl Visitor<'_> for ScalarVisitor {
                type Value = Scalar;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("a number or a boolean")
                }
                fn visit_i64<E: Error>(self, v: i64) -> Result<Scalar, E> {
                    Ok(Scalar(CValue::Int(v)))
                }
                fn visit_u64<E: Error>(self, v: u64) -> Result<Scalar, E> {
                    i64::try_from(v)
                        .map(|v| Scalar(CValue::Int(v)))
                        .map_err(|_| E::custom("integer argument out of range"))
                }
                fn visit_f64<E: Error>(self, v: f64) -> Result<Scalar, E> {
                    Ok(Scalar(CValue::Float(v)))
                }
                fn visit_bool<E: Error>(self, v: bool) -> Result<Scalar, E> {
                    Ok(Scalar(CValue::Bool(v)))
                }
            }
            d.deserialize_any(ScalarVisitor)
        }
    }
}

/// Builds the placement from the pass's intermediate results.
///
/// The layers are those of copy `copy` of the pipeline: layer indices in endpoints count from
/// `copy · graph.layers.len()`, as in the whole program's [`Placement::layers`]. The defects
/// are `problem.target`'s, the batch is one copy's, and the estimated cycles are left for
/// the caller (which knows every copy).
pub(crate) fn assemble(
    problem: &crate::search::Problem<'_>,
    choice: &crate::search::Choice,
    routed: &crate::routes::Routed,
    coloring: &crate::colors::Coloring,
    copy: u32,
) -> Placement {
    use crate::ports::{BoundTensor, SlotOf, lines_on};
    let graph = problem.graph;
    let target = problem.target;
    let offset = copy as usize * graph.layers.len();
    let color_of_slot = |slot: usize| coloring.class_color[routed.slot_class[slot]];
    let mut layers = Vec::with_capacity(graph.layers.len());
    for (l, layer) in graph.layers.iter().enumerate() {
        let lp = &problem.layers[l];
        let imp = &layer.impls[lp.impl_index];
        let (rows, cols) = choice.sizes[l];
        let (rect, orientation) = choice.regions[l];
        // The search evaluated every argument for this size (`search::Problem::build`).
        let kernel_args = crate::expr::kernel_args(layer, imp, rows, cols).unwrap_or_default();
        let env = crate::expr::region_env(layer, imp, rows, cols);
        // The search allowed only sizes where every distance is at least 1.
        let distances = crate::expr::port_distances(imp, &env).unwrap_or_default();
        let distance = |i: usize| distances.get(i).copied().flatten();
        // The search allowed only sizes where every switch's start is one of its positions.
        let starts = crate::switched::switch_starts(imp, &env, rows, cols).unwrap_or_default();
        let base = lp.slot_base;
        let links = lp.plan.links.len();
        let ports = lp
            .plan
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let colors = match p.slot {
                    SlotOf::Multicast(m) => ColorRule::Fixed {
                        color: color_of_slot(base + 2 * links + m),
                    },
                    SlotOf::Bus(b) => ColorRule::Fixed {
                        color: color_of_slot(base + lp.plan.bus_slot(b)),
                    },
                    SlotOf::Link(k) => {
                        let (a, b) = (color_of_slot(base + 2 * k), color_of_slot(base + 2 * k + 1));
                        let along_rows = matches!(lp.plan.links[k].dir, Side::North | Side::South);
                        // A PE sends on slot `k % 2` and receives on slot `(k + 1) % 2`.
                        let (even, odd) = if p.direction == wsel_ir::kernel::PortDirection::Out {
                            (a, b)
                        } else {
                            (b, a)
                        };
                        ColorRule::Alternating {
                            along_rows,
                            even,
                            odd,
                            stride: distance(i).unwrap_or(1),
                        }
                    }
                };
                let bound = p.bind.as_ref().map(|b| match b.tensor {
                    BoundTensor::Output => layer.output_name.clone(),
                    BoundTensor::Arg(i) => layer.arg_names.get(i).cloned().unwrap_or_default(),
                });
                PlacedPort {
                    name: p.name.clone(),
                    input: p.direction == wsel_ir::kernel::PortDirection::In,
                    multicast: p.multicast,
                    side: side_dir(p.side),
                    physical_side: orientation.dir(p.side),
                    colors,
                    parts: if bound.is_some() {
                        lines_on(p.side, rows, cols)
                    } else {
                        0
                    },
                    bound,
                    bus: imp.ports.get(i).and_then(|info| info.bus),
                    passes_on: routed.passes_on.contains(&(l, i)),
                    distance: distance(i),
                    switch: imp.ports.get(i).and_then(|info| {
                        let switch = info.switch.as_ref()?;
                        Some(crate::switched::PlacedSwitch {
                            positions: switch.positions.clone(),
                            starts: starts.get(i).cloned().flatten().unwrap_or_default(),
                            ring: switch.ring,
                        })
                    }),
                }
            })
            .collect();
        let cand = choice.candidates.get(l).copied();
        layers.push(PlacedLayer {
            name: layer.name.clone(),
            layer: layer.layer.clone(),
            copy,
            phase: 0,
            implementation: lp.impl_index,
            kernel: imp.kernel.name.clone(),
            kernel_file: imp.kernel.file.clone(),
            rows,
            cols,
            rect,
            orientation,
            kernel_args,
            sram_bytes: cand.map_or(0, |c| c.sram_bytes),
            estimate: cand.map_or_else(
                || {
                    let chains = lp.cost.chain_terms(rows, cols, &|_, _| None);
                    lp.cost.estimate(rows, cols, None, chains, None)
                },
                |c| c.estimate,
            ),
            ports,
        });
    }
    let color = |class: usize| coloring.class_color[class];
    let transfers = routed
        .transfers
        .iter()
        .map(|t| Transfer {
            tensor: t.tensor.clone(),
            copy,
            part: t.part,
            parts: t.parts,
            color: color(t.class),
            source: t.source.shifted(offset),
            destinations: t.destinations.iter().map(|d| d.shifted(offset)).collect(),
            hops: t.hops.clone(),
        })
        .collect();
    let edge = |e: &crate::routes::RawEdge| EdgePoint {
        tensor: e.tensor.clone(),
        index: e.index,
        copy,
        part: e.part,
        parts: e.parts,
        at: e.at,
        side: e.side,
        color: color(e.class),
        source: e.source,
        layer: offset + e.layer,
    };
    Placement {
        model: graph.model.clone(),
        target: target.name.clone(),
        fabric_width: target.width,
        fabric_height: target.height,
        mode: crate::search::mode_name(problem.mode).to_string(),
        batch: graph.batch,
        samples_per_copy: graph.batch,
        sram_bytes_available: target.sram_bytes,
        colors_available: target.colors,
        colors_used: coloring.colors_used,
        stage_target: choice.stage_target,
        copies: 1,
        phases: 1,
        micro_batches: 1,
        micro_batch_reason: String::new(),
        micro_traffic: None,
        one_region: None,
        estimated_cycles: 0,
        estimated_fill_cycles: 0,
        copies_reason: String::new(),
        layout_reason: String::new(),
        layers,
        transfers,
        inputs: routed.inputs.iter().map(edge).collect(),
        outputs: routed.outputs.iter().map(edge).collect(),
        defects: target.defects.clone(),
    }
}

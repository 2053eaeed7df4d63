//! The mapping pass of wsel: a [`LayerGraph`] and a [`Target`] in, a [`Placement`] (regions,
//! orientations, kernel arguments, SRAM plan, colors, routes, host edges) and diagnostics out.
//!
//! `docs/mapping.md` is the design this crate implements. The pass is a plain function,
//! [`map`], or [`map_batch`], which also chooses how many copies of the pipeline to place. It
//! never panics on a bad program and never fails as a Rust error: a program that cannot be
//! mapped yields no placement and at least one diagnostic (codes in [`codes`]).
//!
//! The steps, one module each:
//! - `ports`: which streams a layer implementation's ports become (neighbour
//!   links, multicast lines, boundary binds) and how many parts each bound tensor has;
//! - `search`: candidate region sizes per layer, part-count agreement between connected layers
//!   and the balanced choice of sizes (smallest per-stage cycle target `T`);
//! - `estimate`: the analytic cycles per sample of `docs/mapping.md` §5;
//! - `bands`: the band planner, a chain laid out in bands of straight layers (the caller's
//!   [`MapOptions::straight_twins`]) turned at the ends, when it beats the search's layout;
//! - `place`: the staircase placement around dead PEs, in the eight orientations of
//!   `orientation` (transposed, mirrored); `fold`: where a consumer goes when the bundle of its
//!   input's routes turns, so the chain folds back at the fabric's edges;
//! - `routes`: routes between regions and from and to the fabric's edges; `fan_out`: the
//!   consumers that pass a result read by several layers on to the others;
//! - `colors`: colors for every stream, reused where routes do not meet;
//! - [`fusion`]: for pipelined inference, a layer and the layer that alone reads its result
//!   as one stage, where the producer's file has a fused twin for them (`dense_relu`);
//! - `ladder`: the PEs the least-area sizes take at each stage target ([`size_ladder`]);
//! - `batch`: the estimate of a whole batch (fill, period, copies side by side);
//! - `copies`: replication of the whole pipeline for data parallelism, and the choice of the
//!   number of copies ([`map_batch`]); `tiles` moves copy 0 onto a grid of tiles, and
//!   `io_routes` routes every copy's inputs and result to the fabric's edge;
//! - [`report`] and [`svg`]: the `wsel map` table and picture.

mod bands;
mod batch;
mod bus;
mod chain;
mod colors;
mod companion;
mod copies;
pub mod diagnostics;
mod estimate;
mod expr;
mod fan_out;
mod filled;
pub mod fixtures;
mod fold;
pub mod fusion;
mod held_cost;
mod held_fit;
mod held_rows;
mod io_routes;
pub mod kept_fit;
mod ladder;
mod layer_major;
mod links;
mod micro_pace;
mod micro_traffic;
mod orientation;
mod pairing;
mod place;
mod placement;
mod ports;
mod regions;
pub mod report;
mod routes;
mod search;
mod streaming;
pub mod svg;
mod switched;
mod tiles;
mod train_regions;

use wsel_diagnostic::Diagnostic;
use wsel_ir::graph::{LayerGraph, Mode};
use wsel_target::Target;

pub use chain::ChainFlow;
pub use companion::{Companion, Seat, seat_regions};
pub use copies::{Copies, MAX_AUTO_COPIES, Mapped, map_batch};
pub use diagnostics::codes;
pub use expr::kernel_args;
pub use held_fit::segments;
pub use ladder::{LadderStep, size_ladder};
pub use micro_traffic::{ChunkedLayer, MicroOrder, MicroTraffic};
pub use pairing::pairing;
pub use placement::{
    Color, ColorRule, EdgePoint, EdgeSource, Endpoint, Estimate, Hop, Orientation, PlacedLayer,
    PlacedPort, Placement, Transfer,
};
pub use streaming::{Chunked, PhaseDryRun, Relaid, map_micro_batches};
pub use switched::{PlacedSwitch, SwitchAt};
pub use train_regions::{TrainMapped, TrainParts, TrainRelaid, map_training};

/// The task work of a layer's kernel on a region, for the estimate (`docs/mapping.md` §5):
/// what a caller that can lower and run kernels measures (the driver dry-runs every kernel
/// instance, `wsel_codegen::dry_run`). Without it the mapper falls back to the layer's
/// multiply-adds spread over the region.
pub trait KernelWork {
    /// Busy cycles per sample of the busiest PE when layer `layer` (an index into the layer
    /// graph) runs its implementation `implementation` on a logical `rows × cols` region and
    /// each copy of the pipeline processes `samples` samples; `None` when unknown.
    fn cycles_per_sample(
        &self,
        layer: usize,
        implementation: usize,
        rows: u32,
        cols: u32,
        samples: u64,
    ) -> Option<u64>;

    /// What the dry runs of `layer`'s kernel measure when it runs its implementation
    /// `implementation` once, for its whole batch, on a logical `rows × cols` region (a phase
    /// of weight streaming); `None` when unknown. The default knows nothing.
    fn phase_work(
        &self,
        layer: &wsel_ir::graph::LayerInstance,
        implementation: usize,
        rows: u32,
        cols: u32,
    ) -> Option<PhaseDryRun> {
        let _ = (layer, implementation, rows, cols);
        None
    }

    /// A floor under [`KernelWork::phase_work`], had for less: what the dry run of the
    /// phase's centre PE alone measures (its busy cycles at most the busiest PE's, its relay
    /// step the one the full measure takes), `None` only where `phase_work` is `None` too.
    /// The mapper drops a candidate whose estimate with floors already loses
    /// (`docs/mapping.md` §5). The default is `phase_work` itself.
    fn phase_floor(
        &self,
        layer: &wsel_ir::graph::LayerInstance,
        implementation: usize,
        rows: u32,
        cols: u32,
    ) -> Option<PhaseDryRun> {
        self.phase_work(layer, implementation, rows, cols)
    }

    /// How `layer`'s kernel, running its implementation `implementation` on a logical
    /// `rows × cols` region, passes messages along the chain whose PEs send on `out_port` and
    /// receive their neighbour's sends on `in_port`, per sample (or once, for a kernel that
    /// passes its messages once whatever the batch); `None` when unknown. The default knows
    /// nothing.
    fn chain_flow(
        &self,
        layer: usize,
        implementation: usize,
        rows: u32,
        cols: u32,
        out_port: &str,
        in_port: &str,
    ) -> Option<ChainFlow> {
        let _ = (layer, implementation, rows, cols, out_port, in_port);
        None
    }
}

/// Knobs of the mapping pass. [`MapOptions::default`] is what `wsel map` uses.
#[derive(Clone, Copy)]
pub struct MapOptions<'a> {
    /// SRAM bytes per PE kept back from every kernel (for a runtime's own use). The SRAM plan
    /// of a region is its kernel's arrays plus this reserve.
    pub reserved_sram_bytes: u32,
    /// The most distinct sizes tried for one free region side. Sides whose `where` conditions
    /// allow more values are sampled (all values up to 16, then four per octave, and the
    /// largest), which keeps mapping fast on large fabrics.
    pub max_side_candidates: usize,
    /// Copies of the whole pipeline [`map`] places, each on regions and routes of its own and
    /// each running the graph's batch (`docs/mapping.md` §5). [`map_batch`] chooses it.
    pub copies: u32,
    /// Measures the task work of the layers' kernels; `None` estimates it from multiply-adds.
    pub work: Option<&'a dyn KernelWork>,
    /// Place the graph's only layer on exactly this physical rectangle, unturned, at the
    /// `pinned` size (the rectangle's height × width): how weight streaming maps each phase
    /// onto the region it chose (`streaming`). `None`: the mapper chooses.
    pub region: Option<wsel_target::Rect>,
    /// The region size (logical rows × columns) of every layer, in graph order, to keep
    /// instead of choosing: a layer's tile shapes, and so its results, follow from its size
    /// (the driver keeps the defect-free mapping's sizes on a target with defects). `None`
    /// chooses them.
    pub sizes: Option<&'a [(u32, u32)]>,
    /// Place every layer, in graph order, on exactly this physical rectangle in this
    /// orientation (its size follows from both): how pipelined training maps its backward
    /// program onto the regions of the forward program, so that a layer's forward and backward
    /// kernels run on the same PEs (`docs/running.md`, "Training"). Routes between the
    /// regions are searched as usual. `None`: the mapper chooses.
    pub regions: Option<&'a [(wsel_target::Rect, Orientation)]>,
    /// Weight streaming in micro-batches: the order asked for (`docs/running.md`,
    /// "Micro-batches").
    pub micro_order: MicroOrder,
    /// Weight streaming on one region: no per-layer rows even where they estimate faster
    /// (`wsel run --one-region`, `docs/running.md`, "How weight streaming runs").
    pub one_region: bool,
    /// A program that will run on these regions (pipelined training's backward): a choice
    /// is kept only when its routes exist too (`companion`).
    pub companion: Option<Companion<'a>>,
    /// The graph with every layer that has a straight twin (its input and result on opposite
    /// sides, on the same rows: `std.nn`'s `dense_straight`) replaced by it: the same stages,
    /// reading the same tensors. With it, [`map`] also tries the band planner on a chain
    /// (`bands`) and keeps its layout when its bottleneck estimate is lower (on ties, when
    /// it uses more PEs); the placement's layers are then each stage's chosen layer.
    /// `None`: the search's layout only.
    pub straight_twins: Option<&'a LayerGraph>,
    /// With [`MapOptions::copies`] above one, every copy's layers take the PEs the copy's
    /// share of the fabric holds, not the fewest that keep its pace (`--copies fill:N`,
    /// `docs/mapping.md` §5).
    pub fill: bool,
}

impl Default for MapOptions<'_> {
    fn default() -> Self {
        MapOptions {
            reserved_sram_bytes: 0,
            max_side_candidates: 48,
            copies: 1,
            work: None,
            region: None,
            sizes: None,
            regions: None,
            micro_order: MicroOrder::Auto,
            one_region: false,
            companion: None,
            straight_twins: None,
            fill: false,
        }
    }
}

impl std::fmt::Debug for MapOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MapOptions")
            .field("reserved_sram_bytes", &self.reserved_sram_bytes)
            .field("max_side_candidates", &self.max_side_candidates)
            .field("copies", &self.copies)
            .field("work", &self.work.map(|_| "measured"))
            .field("region", &self.region)
            .field("sizes", &self.sizes)
            .field("regions", &self.regions)
            .field("one_region", &self.one_region)
            .field("companion", &self.companion.map(|c| c.graph.layers.len()))
            .field(
                "straight_twins",
                &self.straight_twins.map(|g| g.layers.len()),
            )
            .field("fill", &self.fill)
            .finish()
    }
}

/// What [`map`] returns: a placement when mapping succeeded, and the diagnostics (errors at
/// the layer calls when it did not).
#[derive(Debug, Clone)]
pub struct MapResult {
    pub placement: Option<Placement>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Map `graph` onto `target` for execution `mode`, in `options.copies` copies.
///
/// Every layer instance gets a region (a rectangle without dead PEs or dead links inside),
/// an orientation, its kernel's evaluated arguments and SRAM plan, and an estimate; every
/// port gets colors; every tensor crossing between regions (or to and from the host or weight
/// store) gets routes. With several copies, each runs `graph.batch` samples on regions and
/// routes of its own. On failure the result has no placement and one diagnostic per problem
/// found, each at the layer call concerned.
pub fn map(graph: &LayerGraph, target: &Target, mode: Mode, options: &MapOptions) -> MapResult {
    if mode == Mode::Streaming && options.region.is_none() {
        return streaming::map_streamed(graph, target, options);
    }
    let wanted = options.copies.max(1);
    let (mut placement, mut diagnostics) =
        copies::place_copies(graph, target, mode, options, wanted);
    let banded = options
        .straight_twins
        .filter(|_| mode == Mode::Pipelined)
        .and_then(|twins| bands::map_banded(graph, twins, target, options, placement.as_ref()));
    if let Some(b) = banded
        && placement
            .as_ref()
            .is_none_or(|p| bands::rank(&b) < bands::rank(p))
    {
        // The search's errors, when it placed nothing, are not the banded placement's.
        if placement.is_none() {
            diagnostics.clear();
        }
        placement = Some(b);
    }
    match placement {
        Some(p) if p.copies < wanted => {
            diagnostics.push(copies::shortfall(graph, wanted, p.copies));
            MapResult {
                placement: None,
                diagnostics,
            }
        }
        placement => MapResult {
            placement,
            diagnostics,
        },
    }
}

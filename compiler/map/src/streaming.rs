//! Weight streaming (`docs/running.md`, "Weight streaming"): the fabric is time-shared between
//! layers. Every layer instance is a **phase** of its own; the phases run one after another
//! on one region, chosen for the whole model, and between them the batch's activations stay
//! in that region's SRAM in the resident layout (`std.resident`: samples over the columns,
//! features over the rows), so a layer finds its input where its producer left it.
//!
//! The graph given here is already staged: the driver puts a `stage_in` before every layer
//! fed by a model input and a `stage_out` after the result (`std.resident`), so that every
//! activation between two layers is resident — bound to arrays on both sides — and only the
//! stage layers stream activations through ports (from and to the host). Weights stream into
//! ports from the weight store.
//!
//! The region is chosen by an analytic estimate of the whole run (every phase on an `R × C`
//! region at the north-west-most place free of defects): a phase takes the longest of its
//! arithmetic spread over the region, its weights through one PE's ramp (a weight row is
//! multicast to every PE of its row), and its weights through the store, plus a chain latency
//! down the region's rows; the region minimising the sum over the phases wins, the smaller on
//! ties. So a phase bound by the store takes the fewest rows that keep up with it, not the
//! whole fabric. Each phase is then mapped as a graph of its one layer, pinned to that region
//! ([`MapOptions::region`]), which gives its ports colors, its edge streams routes and its
//! kernel arguments; the phases' placements are merged into one [`Placement`] whose layers
//! carry their phase.

use wsel_diagnostic::Diagnostic;
use wsel_ir::graph::{
    BindTarget, LayerGraph, LayerImpl, LayerInstance, Mode, ParamDecl, RowMove, SplitAxis,
    TensorDecl, TensorRef,
};
use wsel_target::{Rect, Target};

use crate::diagnostics as diag;
use crate::expr::{Env, kernel_args_evaluate, side_names};
use crate::place::DeadIndex;
use crate::placement::{EdgePoint, Endpoint, Estimate, Placement};
use crate::{MapOptions, MapResult, copies, held_fit, regions, search};

/// Whether `imp` keeps the tensor named `name` resident: an activation bound to an array.
pub(crate) fn is_resident(imp: &LayerImpl, name: &str) -> bool {
    resident_split(imp, name).is_some()
}

/// The split of the array bind of tensor `name` in `imp`, if it is bound to an array.
fn resident_split<'a>(imp: &'a LayerImpl, name: &str) -> Option<&'a [SplitAxis]> {
    imp.binds
        .iter()
        .find(|b| b.tensor == name && b.target == BindTarget::Array)
        .map(|b| b.split.as_slice())
}

/// Maps a staged graph for weight streaming: one phase per layer, in graph order, all on one
/// region. On failure, no placement and a diagnostic at the layer concerned.
pub(crate) fn map_streamed(graph: &LayerGraph, target: &Target, options: &MapOptions) -> MapResult {
    map_phases(graph, target, options, false)
}

/// [`map_streamed`]; with `held`, every layer that streams weights runs its streaming
/// implementation that holds them (layer-major micro-batches, `crate::layer_major`).
pub(crate) fn map_phases(
    graph: &LayerGraph,
    target: &Target,
    options: &MapOptions,
    held: bool,
) -> MapResult {
    let impls = match prepare(graph, target, held) {
        Ok(impls) => impls,
        Err(d) => return failed(d),
    };
    // The region's phase estimates come with their kernels' measured work, when the options
    // can measure it.
    let Some(region) = choose_region(graph, &impls, target, options) else {
        return failed(vec![no_region(graph, &impls, target, options)]);
    };
    place_phases(graph, &impls, &region.plan(), target, options)
}

/// Builds a staged graph with layers `(l, K)` cut into `K` chunks of their outputs
/// (`wsel_lower::chunked_graph`; layer-major order, `crate::held_fit::chunk_counts`).
pub type Chunked<'c> =
    dyn Fn(&LayerGraph, &[(usize, u32)]) -> Result<LayerGraph, Vec<Diagnostic>> + 'c;

/// Builds the graph with relayouts before the layers [`RowMove`]s name (`wsel_lower::
/// relaid_graph`, `std.resident`'s `relayout`).
pub type Relaid<'r> = dyn Fn(&LayerGraph, &[RowMove]) -> Result<LayerGraph, Vec<Diagnostic>> + 'r;

/// [`map_streamed`] with per-layer rows where they pay (`crate::regions`): a chain whose
/// phases estimate faster on rows of their own, relayouts counted, runs as the graph
/// `relaid` makes with a relayout phase wherever the rows change; any other model, or one
/// whose sizes are kept, on one region. The graph returned is the one the placement runs.
fn map_regions(
    graph: &LayerGraph,
    relaid: &Relaid<'_>,
    target: &Target,
    options: &MapOptions,
) -> crate::Mapped {
    let one = |result: MapResult| crate::Mapped {
        result,
        graph: graph.clone(),
    };
    let impls = match prepare(graph, target, false) {
        Ok(impls) => impls,
        Err(d) => return one(failed(d)),
    };
    if let Some(sizes) = options.sizes
        && let Some(mapped) = regions::kept(graph, sizes, relaid, target, options)
    {
        return mapped;
    }
    let region = choose_region(graph, &impls, target, options);
    if options.sizes.is_none()
        && !options.one_region
        && regions::is_chain(graph)
        && let Some(mapped) =
            regions::per_layer(graph, &impls, region.as_ref(), relaid, target, options)
    {
        return mapped;
    }
    match region {
        Some(region) => one(place_phases(graph, &impls, &region.plan(), target, options)),
        None => one(failed(vec![no_region(graph, &impls, target, options)])),
    }
}

/// Every layer's streaming implementation, the model checked for weight streaming (E0606,
/// E0611, E0613, E0614).
fn prepare(graph: &LayerGraph, target: &Target, held: bool) -> Result<Vec<usize>, Vec<Diagnostic>> {
    let impls = streaming_impls(graph, held)?;
    check_residency(graph, &impls)?;
    check_weights(graph, &impls, target)?;
    Ok(impls)
}

/// No placement, and why.
fn failed(diagnostics: Vec<Diagnostic>) -> MapResult {
    MapResult {
        placement: None,
        diagnostics,
    }
}

/// Maps every phase of `graph` onto its region of `plan` and merges the phases' placements.
pub(crate) fn place_phases(
    graph: &LayerGraph,
    impls: &[usize],
    plan: &Plan,
    target: &Target,
    options: &MapOptions,
) -> MapResult {
    let mut merged: Option<Placement> = None;
    for (l, &impl_index) in impls.iter().enumerate() {
        let phase = PhaseGraph::new(graph, l, impl_index);
        let rect = plan.rects[l];
        let pinned_options = MapOptions {
            region: Some(rect),
            copies: 1,
            work: None,
            ..*options
        };
        let mut diagnostics = Vec::new();
        let pinned = [(rect.height, rect.width)];
        let Some((placement, _)) = copies::map_one(
            &phase.graph,
            target,
            Mode::Streaming,
            &pinned_options,
            Some(&pinned),
            0,
            &mut diagnostics,
        ) else {
            return failed(diagnostics);
        };
        let placement = phase.globalise(placement, l, plan.estimates[l], graph.batch);
        merged = Some(match merged {
            None => placement,
            Some(whole) => merge(whole, placement),
        });
    }
    let Some(mut placement) = merged else {
        return failed(Vec::new());
    };
    placement.phases = graph.layers.len() as u32;
    placement.batch = graph.batch;
    placement.samples_per_copy = graph.batch;
    placement.estimated_cycles = plan.total;
    placement.stage_target = plan.estimates.iter().map(|e| e.cycles).max().unwrap_or(0);
    if let Some(d) = crate::kept_fit::check(graph, &placement, target) {
        return failed(vec![d]);
    }
    MapResult {
        placement: Some(placement),
        diagnostics: Vec::new(),
    }
}

/// Maps a model for weight streaming, in micro-batches when the whole batch does not fit:
/// `staged(b)` lowers and stages the model for a batch of `b` samples. The whole batch first;
/// when a layer's working set does not fit even the whole fabric (E0612, or beside the
/// activations kept for later phases, E0624), the largest
/// micro-batch that divides the batch and maps; when none maps, the whole batch's E0612 with
/// a note on the largest micro-batch's failure; then the order of the micro-batches
/// (`crate::layer_major`, where `parked(g)` inserts the parking phases into a staged graph
/// and `chunked` cuts layers too big to hold into chunks).
/// The graph returned is the one the placement runs (lowered for a micro-batch).
pub fn map_micro_batches(
    graph: &LayerGraph,
    staged: &mut dyn FnMut(u64) -> Result<LayerGraph, Vec<Diagnostic>>,
    chunked: &Chunked<'_>,
    parked: &dyn Fn(&LayerGraph) -> Result<LayerGraph, Vec<Diagnostic>>,
    relaid: &Relaid<'_>,
    target: &Target,
    options: &MapOptions,
) -> crate::Mapped {
    let batch = graph.batch.max(1);
    let whole = map_regions(graph, relaid, target, options);
    let too_big = |r: &MapResult| r.diagnostics.iter().any(|d| diag::batch_too_big(d.code));
    if whole.result.placement.is_some() || !too_big(&whole.result) {
        return whole;
    }
    let whole = whole.result;
    let mut first_micro_failure: Option<(u64, Diagnostic)> = None;
    for size in (1..batch).rev().filter(|s| batch.is_multiple_of(*s)) {
        let lowered = match staged(size) {
            Ok(g) => g,
            Err(diagnostics) => {
                return crate::Mapped {
                    result: MapResult {
                        placement: None,
                        diagnostics,
                    },
                    graph: graph.clone(),
                };
            }
        };
        let crate::Mapped {
            mut result,
            graph: lowered,
        } = map_regions(&lowered, relaid, target, options);
        if let Some(p) = &mut result.placement {
            p.micro_batches = (batch / size) as u32;
            p.micro_batch_reason = whole
                .diagnostics
                .iter()
                .find(|d| diag::batch_too_big(d.code))
                .map(|d| d.message.clone())
                .unwrap_or_default();
            let capacity = target.weight_store.capacity_bytes;
            let mut traffic = crate::MicroTraffic::of(&lowered, batch / size, capacity);
            p.batch = batch;
            let micro = |cycles: u64| {
                cycles * (batch / size) + u64::from(target.reconfigure_cycles) * (batch / size - 1)
            };
            p.estimated_cycles = micro(p.estimated_cycles);
            if let Some((_, _, cycles)) = &mut p.one_region {
                *cycles = micro(*cycles);
            }
            traffic.micro_cycles = p.estimated_cycles;
            p.micro_traffic = Some(traffic);
            let micro_major = crate::Mapped {
                result,
                graph: lowered,
            };
            let stagings = crate::layer_major::Stagings {
                staged,
                chunked,
                parked,
                relaid,
            };
            return crate::layer_major::choose(micro_major, stagings, target, options);
        }
        // A micro-batch may fail for reasons of its own (a layer's conditions on the batch):
        // the whole batch's E0612 stays the reason, with the largest micro-batch's failure.
        if first_micro_failure.is_none() {
            first_micro_failure = result.diagnostics.first().map(|d| (size, d.clone()));
        }
    }
    let mut whole = whole;
    if let Some((size, d)) = first_micro_failure {
        whole.diagnostics = whole
            .diagnostics
            .into_iter()
            .map(|e| {
                if !diag::batch_too_big(e.code) {
                    return e;
                }
                e.with_note(format!(
                    "no micro-batch that divides the batch of {batch} maps either: the largest, \
                     {size}, fails with {}: {}",
                    d.code, d.message
                ))
            })
            .collect();
    }
    crate::Mapped {
        result: whole,
        graph: graph.clone(),
    }
}

/// Every layer's streaming implementation (its index), or E0606 at each layer without one:
/// the first that does not hold its weights, or with `held` for a layer with weights, the
/// first that does (E0618 when it has none).
pub(crate) fn streaming_impls(
    graph: &LayerGraph,
    held: bool,
) -> Result<Vec<usize>, Vec<Diagnostic>> {
    let mut impls = Vec::new();
    let mut missing = Vec::new();
    for layer in &graph.layers {
        let hold = held && layer.args.iter().any(|a| matches!(a, TensorRef::Param(_)));
        let streaming = |i: &LayerImpl| i.modes.contains(&Mode::Streaming);
        match layer
            .impls
            .iter()
            .position(|i| streaming(i) && holds(i) == hold)
        {
            Some(k) => impls.push(k),
            None if hold && layer.impls.iter().any(streaming) => {
                missing.push(diag::no_held_implementation(&layer.name, &layer.call));
            }
            None => missing.push(diag::no_implementation(
                &layer.name,
                &layer.call,
                "streaming",
            )),
        }
    }
    if missing.is_empty() {
        Ok(impls)
    } else {
        Err(missing)
    }
}

/// Whether implementation `imp` holds its weights between micro-batches: its kernel takes
/// `hold = true` (std.nn's `dense_resident`).
pub(crate) fn holds(imp: &LayerImpl) -> bool {
    imp.kernel_args
        .iter()
        .any(|(name, e)| name == "hold" && *e == wsel_ir::graph::CExpr::Bool(true))
}

/// Every activation passed between two layers must be resident on both sides in the same
/// split; only model inputs and the model's result may cross the edge (E0611 otherwise).
pub(crate) fn check_residency(graph: &LayerGraph, impls: &[usize]) -> Result<(), Vec<Diagnostic>> {
    let mut found = Vec::new();
    for (l, layer) in graph.layers.iter().enumerate() {
        let imp = &layer.impls[impls[l]];
        for (arg, name) in layer.args.iter().zip(&layer.arg_names) {
            let TensorRef::Layer(p) = *arg else { continue };
            let producer = &graph.layers[p];
            let made = resident_split(&producer.impls[impls[p]], &producer.output_name);
            // A parked micro-batch comes back from the store (`crate::layer_major`).
            let parked = producer.layer == "park" && made.is_none();
            match (resident_split(imp, name), made) {
                (None, None) if parked => {}
                (Some(taken), Some(made)) if same_split(taken, made) => {}
                (Some(_), Some(_)) => found.push(diag::resident_mismatch(
                    &layer.name,
                    &layer.call,
                    name,
                    &format!("`{}` leaves it split another way", producer.name),
                )),
                (None, _) => found.push(diag::resident_mismatch(
                    &layer.name,
                    &layer.call,
                    name,
                    "this layer's streaming implementation takes it through a port; bind it to \
                     an array (`split [cols, rows]`) to take it from SRAM",
                )),
                (Some(_), None) => found.push(diag::resident_mismatch(
                    &layer.name,
                    &layer.call,
                    name,
                    &format!(
                        "`{}`'s streaming implementation sends it through a port instead of \
                         leaving it in SRAM",
                        producer.name
                    ),
                )),
            }
        }
    }
    if found.is_empty() { Ok(()) } else { Err(found) }
}

/// Whether two splits of a resident tensor cut it the same way: equal but for dimensions left
/// whole at the end (`[cols, rows]` of `f32[B, T·D]` and `[cols, rows, _]` of `f32[B, T, D]`
/// read through a `reshape`, whose row count lowering made divide `T`: docs/language.md §7.1).
fn same_split(a: &[SplitAxis], b: &[SplitAxis]) -> bool {
    let trim = |s: &[SplitAxis]| {
        let end = s
            .iter()
            .rposition(|x| *x != SplitAxis::Whole)
            .map_or(0, |i| i + 1);
        s[..end].to_vec()
    };
    trim(a) == trim(b)
}

/// Weights stream from the store: every streamed layer takes its weights through ports
/// (E0614), and the store holds them all (E0613).
fn check_weights(
    graph: &LayerGraph,
    impls: &[usize],
    target: &Target,
) -> Result<(), Vec<Diagnostic>> {
    let mut found = Vec::new();
    let mut stored = 0u64;
    for (l, layer) in graph.layers.iter().enumerate() {
        let imp = &layer.impls[impls[l]];
        for (arg, name) in layer.args.iter().zip(&layer.arg_names) {
            let TensorRef::Param(p) = *arg else { continue };
            if resident_split(imp, name).is_some() {
                found.push(diag::weight_in_array(&layer.name, &layer.call, name));
            }
            stored += 4 * graph.params[p].tensor.shape.iter().product::<u64>();
        }
        let capacity = target.weight_store.capacity_bytes;
        if stored > capacity && found.is_empty() {
            found.push(diag::store_too_small(
                &layer.name,
                &layer.call,
                stored,
                capacity,
            ));
            break;
        }
    }
    if found.is_empty() { Ok(()) } else { Err(found) }
}

/// Where every phase runs: its rectangle (the phases share their north-west corner and
/// columns), with its estimate there and the whole run's.
pub(crate) struct Plan {
    pub rects: Vec<Rect>,
    pub estimates: Vec<Estimate>,
    pub total: u64,
}

/// The region every phase runs on, with the estimate of each phase there.
pub(crate) struct Region {
    pub rect: Rect,
    pub rows: u32,
    pub cols: u32,
    /// Per phase, its estimate per sample (the phase's cycles over the batch).
    pub estimates: Vec<Estimate>,
    /// The whole run's estimated cycles.
    pub total: u64,
}

impl Region {
    /// Every phase on this region.
    fn plan(&self) -> Plan {
        Plan {
            rects: vec![self.rect; self.estimates.len()],
            estimates: self.estimates.clone(),
            total: self.total,
        }
    }
}

/// The region (size and place) with the smallest estimated run, the smaller on ties, or of
/// the size `options.sizes` keeps. The store's bandwidth counts: it takes as long to send a
/// phase's weights to any region, so a region larger than the one at which the phase becomes
/// store-bound gains nothing and loses its longer chains (as much of the fabric as pays).
/// Sizes are compared by multiply-adds; the winner is then estimated with the kernels'
/// measured work (when `options.work` can measure it), and its columns take more rows while
/// that work says it pays (unless the size is kept).
fn choose_region(
    graph: &LayerGraph,
    impls: &[usize],
    target: &Target,
    options: &MapOptions,
) -> Option<Region> {
    let dead = DeadIndex::new(target);
    let sides = stream_sides(graph, impls);
    let lengths = |max: u32| lengths(max, options);
    let max_cols = u32::try_from(graph.batch.max(1))
        .unwrap_or(u32::MAX)
        .min(target.width);
    // Sizes to keep (`MapOptions::sizes`): every phase runs on the one region.
    let (all_rows, all_cols) = match options.sizes.and_then(|sizes| sizes.first()) {
        Some(&(rows, cols)) => (vec![rows], vec![cols]),
        None => (lengths(target.height), lengths(max_cols)),
    };
    // Where a `rows × cols` region may go: every phase allowed there, beside any held
    // weights, on a rectangle clear of defects.
    let place = |rows: u32, cols: u32| -> Option<Rect> {
        if !all_allowed(graph, impls, (rows, cols), target, options)
            || held_fit::overflow(graph, impls, (rows, cols), limit(target, options)).is_some()
        {
            return None;
        }
        first_clean(&dead, target, rows, cols, &sides)
    };
    let estimated = |rows: u32, cols: u32, work: Work| {
        let estimates = estimates(graph, impls, target, options, (rows, cols), work);
        let total = total_cycles(graph, &estimates, target);
        (estimates, total)
    };
    let candidate = |rows: u32, cols: u32, work: Work| -> Option<Region> {
        let rect = place(rows, cols)?;
        let (estimates, total) = estimated(rows, cols, work);
        Some(Region {
            rect,
            rows,
            cols,
            estimates,
            total,
        })
    };
    let better = |a: &Region, b: &Region| (a.total, a.rows * a.cols) < (b.total, b.rows * b.cols);
    // A counted estimate needs no place: the sizes are placed in the order of their
    // estimates (the smaller on ties, then the first tried), and the first that may be
    // placed wins, as if every size had been placed and then compared.
    let mut order: Vec<(u64, u32, usize, u32, u32)> = Vec::new();
    for &rows in &all_rows {
        for &cols in &all_cols {
            let total = estimated(rows, cols, Work::Counted).1;
            order.push((total, rows * cols, order.len(), rows, cols));
        }
    }
    order.sort_unstable();
    let best = order
        .iter()
        .find_map(|&(_, _, _, rows, cols)| candidate(rows, cols, Work::Counted));
    // Multiply-adds understate a kernel's task work, and so the rows a phase needs to keep
    // up with the store: with the work measured, the chosen columns take more rows while
    // that shortens the run (it falls until the store binds, then the chains lengthen it).
    if options.work.is_none() {
        return best;
    }
    // A taller region whose estimate with floors (its phases' centre PEs alone) already
    // loses is not measured on its other PEs.
    let mut best = candidate(best.as_ref()?.rows, best.as_ref()?.cols, Work::Measured)?;
    let from = best.rows;
    let grow = options.sizes.is_none();
    for &rows in all_rows.iter().filter(|&&r| grow && r > from) {
        let measured = candidate(rows, best.cols, Work::Floor)
            .filter(|floor| better(floor, &best))
            .and_then(|_| candidate(rows, best.cols, Work::Measured));
        match measured {
            Some(region) if better(&region, &best) => best = region,
            _ => break,
        }
    }
    Some(best)
}

/// Every side some phase streams through: it must be reachable from outside the region.
pub(crate) fn stream_sides(graph: &LayerGraph, impls: &[usize]) -> Vec<wsel_target::Dir> {
    graph
        .layers
        .iter()
        .enumerate()
        .flat_map(|(l, layer)| phase_sides(&layer.impls[impls[l]]))
        .collect()
}

/// Every side the phase of implementation `imp` streams through.
pub(crate) fn phase_sides(imp: &LayerImpl) -> Vec<wsel_target::Dir> {
    imp.binds
        .iter()
        .filter(|b| b.target == BindTarget::Port)
        .filter_map(|b| imp.ports.iter().find(|p| p.name == b.target_name))
        .map(|p| crate::placement::side_dir(p.side))
        .collect()
}

/// The side lengths tried, from 1 to `max` (sampled on large fabrics).
pub(crate) fn lengths(max: u32, options: &MapOptions) -> Vec<u32> {
    let all: Vec<u32> = (1..=max).collect();
    search::sample(&all, options.max_side_candidates.clamp(2, 255))
}

/// Every phase's estimate on a `rows × cols` region, its task work had as `work` says.
fn estimates(
    graph: &LayerGraph,
    impls: &[usize],
    target: &Target,
    options: &MapOptions,
    size: (u32, u32),
    work: Work,
) -> Vec<Estimate> {
    let store = u64::from(target.weight_store.bandwidth_bytes_per_cycle.max(1));
    graph
        .layers
        .iter()
        .enumerate()
        .map(|(l, layer)| {
            let measured = work.dry_run(options, layer, impls[l], size);
            phase_estimate(graph, layer, impls[l], size, measured, store, target)
        })
        .collect()
}

/// How a phase's task work is had for its estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Work {
    /// Counted from the layer's multiply-adds.
    Counted,
    /// A floor under the measure, from the phase's centre PE alone
    /// ([`crate::KernelWork::phase_floor`]): an estimate with it is at most the measured one
    /// (unless another PE's run fails, and the measure falls back to multiply-adds).
    Floor,
    /// Measured by the dry runs of the phase's PEs ([`crate::KernelWork::phase_work`]).
    Measured,
}

impl Work {
    /// What the dry runs say of `layer`'s implementation `imp` on `size`, had this way
    /// (when the options can measure it); `None`: counted from its multiply-adds.
    pub(crate) fn dry_run(
        self,
        options: &MapOptions,
        layer: &LayerInstance,
        imp: usize,
        (rows, cols): (u32, u32),
    ) -> Option<PhaseDryRun> {
        let work = options.work?;
        match self {
            Work::Counted => None,
            Work::Floor => work.phase_floor(layer, imp, rows, cols),
            Work::Measured => work.phase_work(layer, imp, rows, cols),
        }
    }
}

/// The estimated cycles of a whole run: every phase and the reconfigurations between them.
pub(crate) fn total_cycles(graph: &LayerGraph, estimates: &[Estimate], target: &Target) -> u64 {
    let phases: u64 = estimates
        .iter()
        .map(|e| e.cycles * graph.batch.max(1))
        .sum();
    phases + u64::from(target.reconfigure_cycles) * (estimates.len() as u64).saturating_sub(1)
}

/// Whether every layer's implementation may run on a `rows × cols` region ([`allowed`]),
/// each taking and leaving its resident tensors on all its rows (a layer that moves them to
/// other rows, `LayerInstance::row_move`, runs only among per-layer rows).
fn all_allowed(
    graph: &LayerGraph,
    impls: &[usize],
    (rows, cols): (u32, u32),
    target: &Target,
    options: &MapOptions,
) -> bool {
    graph.layers.iter().enumerate().all(|(l, layer)| {
        allowed(layer, &layer.impls[impls[l]], rows, cols, target, options)
            && layer.row_move().is_none_or(|m| m == (rows, rows))
    })
}

/// The SRAM bytes per PE a phase's kernels may take: the target's, less the reserved.
pub(crate) fn limit(target: &Target, options: &MapOptions) -> u64 {
    u64::from(target.sram_bytes).saturating_sub(u64::from(options.reserved_sram_bytes))
}

/// Whether `imp` may run on a `rows × cols` region: its conditions hold, its arguments have
/// values and its SRAM fits.
pub(crate) fn allowed(
    layer: &LayerInstance,
    imp: &LayerImpl,
    rows: u32,
    cols: u32,
    target: &Target,
    options: &MapOptions,
) -> bool {
    sram_bytes(layer, imp, rows, cols).is_some_and(|bytes| {
        bytes + u64::from(options.reserved_sram_bytes) <= u64::from(target.sram_bytes)
    }) && meets_conditions(layer, imp, rows, cols)
}

/// Whether the implementation may run on `rows × cols`, SRAM aside: its kernel arguments
/// evaluate, its fixed sides have those sizes and its `where` conditions hold.
fn meets_conditions(layer: &LayerInstance, imp: &LayerImpl, rows: u32, cols: u32) -> bool {
    kernel_args_evaluate(layer, imp, rows, cols)
        && fixed_side_holds(layer, &imp.rows, rows)
        && fixed_side_holds(layer, &imp.cols, cols)
        && {
            let (rn, cn) = side_names(imp);
            let env = Env {
                dims: &layer.dims,
                rows_name: rn,
                cols_name: cn,
                rows,
                cols,
            };
            imp.conditions
                .iter()
                .all(|c| c.eval_bool(&|s| env.lookup(s)) == Ok(true))
        }
}

/// Whether a side the implementation fixes (`on [1, C]`) has that size; a free side always
/// does.
fn fixed_side_holds(layer: &LayerInstance, side: &wsel_ir::graph::RegionSide, size: u32) -> bool {
    match side {
        wsel_ir::graph::RegionSide::Free(_) => true,
        wsel_ir::graph::RegionSide::Fixed(e) => {
            let env = Env::dims_only(&layer.dims);
            e.eval_int(&|s| env.lookup(s)) == Ok(i64::from(size))
        }
    }
}

/// The SRAM bytes per PE `imp`'s kernel needs on a `rows × cols` region.
fn sram_bytes(layer: &LayerInstance, imp: &LayerImpl, rows: u32, cols: u32) -> Option<u64> {
    bytes_of(&imp.sram_words, layer, imp, rows, cols)
}

/// The bytes of `words` (an expression of `imp`'s kernel's words) on a `rows × cols` region.
pub(crate) fn bytes_of(
    words: &wsel_ir::graph::CExpr,
    layer: &LayerInstance,
    imp: &LayerImpl,
    rows: u32,
    cols: u32,
) -> Option<u64> {
    let (rn, cn) = side_names(imp);
    let env = Env {
        dims: &layer.dims,
        rows_name: rn,
        cols_name: cn,
        rows,
        cols,
    };
    let words = words.eval_int(&|s| env.lookup(s)).ok()?;
    u64::try_from(words).ok().map(|w| w * 4)
}

/// The first `rows × cols` rectangle in row-major order with no dead PE or link inside, and
/// each of `sides` open to streams from outside.
pub(crate) fn first_clean(
    dead: &DeadIndex,
    target: &Target,
    rows: u32,
    cols: u32,
    sides: &[wsel_target::Dir],
) -> Option<Rect> {
    if rows > target.height || cols > target.width {
        return None;
    }
    (0..=target.height - rows).find_map(|y| {
        (0..=target.width - cols)
            .map(|x| Rect::new(x, y, cols, rows))
            .find(|&r| {
                dead.clean(r)
                    && sides
                        .iter()
                        .all(|&s| crate::place::side_open(dead, r, s, target))
            })
    })
}

/// What the dry runs of a weight-streaming phase measure ([`crate::KernelWork::phase_work`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhaseDryRun {
    /// The busiest PE's busy cycles for the whole batch.
    pub busy: u64,
    /// The longest step a message takes through a PE along the region's chains: a relayed
    /// message's words and the work between two relays; `None` when its PEs relay nothing.
    pub relay_step: Option<u64>,
    /// The most work a PE does on a chain message it keeps (passes on to no neighbour)
    /// before its next transfer: a reduce-scatter row's keep of its own chunk; `None` when
    /// the PEs pass on every chain message they take.
    pub keep_turn: Option<u64>,
    /// The receives a PE posts on its ports from outside the region: its blocks of weights
    /// (and bias), among which its busy cycles divide.
    pub blocks: u64,
}

/// The estimate of one phase on a `rows × cols` region, per sample of the batch: the longest
/// of the busiest PE's task work (`measured`'s, from a dry run of the kernel, else
/// the layer's multiply-adds spread over the region), the words of its streamed weights that
/// every PE of a row takes through its ramp, and its weight bytes through the store (at
/// `store_bytes_per_cycle`); plus the chain down the region's rows that its last reduction or
/// combine crosses after the work: `rows − 1` steps of a hop and the measured relay step, or
/// without one a round trip of a hop, a task switch and 2 cycles a row. Where the PEs also
/// keep chain messages (a reduce-scatter: each row keeps one chunk, and relays the next only
/// after its keep), the phase takes at least the chain of its keepers ([`keepers`]); the
/// estimate's `chain` holds what the chains add beyond the work.
pub(crate) fn phase_estimate(
    graph: &LayerGraph,
    layer: &LayerInstance,
    impl_index: usize,
    (rows, cols): (u32, u32),
    measured: Option<PhaseDryRun>,
    store_bytes_per_cycle: u64,
    target: &Target,
) -> Estimate {
    let work = measured.map(|m| m.busy);
    let imp = &layer.impls[impl_index];
    let batch = graph.batch.max(1);
    let fma = u64::from(target.fp32.fma.max(1));
    let samples_per_col = batch.div_ceil(u64::from(cols));
    let compute = work.unwrap_or_else(|| {
        (layer.cost.flops.saturating_mul(samples_per_col)).div_ceil(2 * u64::from(rows) * fma)
    });
    let (ramp, store_bytes) = streamed_weights(graph, layer, imp, rows);
    let store = store_bytes.div_ceil(store_bytes_per_cycle.max(1));
    let hop = u64::from(target.hop_latency);
    let (tail, keepers) = match measured.and_then(|m| Some((m, m.relay_step?))) {
        Some((m, step)) => (
            u64::from(rows.saturating_sub(1)) * (hop + step),
            keepers(m, keeps(layer, rows), hop + step, ramp.max(store) < compute),
        ),
        None => (
            2 * u64::from(rows) * (hop + u64::from(target.task_switch_cycles) + 2),
            0,
        ),
    };
    let base = compute.max(ramp).max(store);
    let cycles = (base + tail).max(keepers);
    let chain = cycles - base;
    Estimate {
        compute: compute.div_ceil(batch),
        edge_in: ramp.max(store).div_ceil(batch),
        stream: 0,
        edge_out: 0,
        batch_compute: compute,
        chain: chain.div_ceil(batch),
        cycles: cycles.div_ceil(batch),
        latency: cycles,
    }
}

/// The chain of keepers of a phase whose PEs relay chain messages and keep some (`m`'s
/// `keep_turn`): each row keeps one chunk of a reduce-scatter and relays the next chunk only
/// after its keep and, when the weights come faster than the work (`waiting`), the block of
/// work it takes up then (the accumulator the keep frees), so the chunks end one after
/// another: `keeps` times the keep, an average block's share of the busy cycles, and a `step`
/// (hop and relay). 0 without keeps. std.nn's
/// `dense_resident` with its result written a word at a time (`K` > 1, the transformer's
/// `dense#5` chunks on `dev`): keeps of 861 cycles and blocks of 936, 2,373 cycles a chunk
/// as simulated, where its busiest PE's work would take 1,275.
fn keepers(m: PhaseDryRun, keeps: u64, step: u64, waiting: bool) -> u64 {
    let Some(turn) = m.keep_turn else {
        return 0;
    };
    let block = if waiting { m.busy / m.blocks.max(1) } else { 0 };
    keeps * (turn + block + step)
}

/// The rows of a `rows`-row region that keep a chunk of `layer`'s result: its features lie
/// over the rows (the resident layout), so rows past the last feature have none to keep and
/// skip their keeps (mlp_streaming's dense#3, 10 outputs on 16 rows: 10).
fn keeps(layer: &LayerInstance, rows: u32) -> u64 {
    u64::from(rows).min(crate::estimate::per_sample(&layer.output_shape).max(1))
}

/// The weights implementation `imp` of `layer` streams in on `rows` rows: the words each
/// row's stream carries (one a cycle down its ramp) and the bytes the store sends in all.
pub(crate) fn streamed_weights(
    graph: &LayerGraph,
    layer: &LayerInstance,
    imp: &LayerImpl,
    rows: u32,
) -> (u64, u64) {
    let (mut ramp, mut store_bytes) = (0u64, 0u64);
    for bind in imp.binds.iter().filter(|b| b.target == BindTarget::Port) {
        let Some(i) = layer.arg_names.iter().position(|n| *n == bind.tensor) else {
            continue;
        };
        let Some(TensorRef::Param(p)) = layer.args.get(i) else {
            continue;
        };
        let elems: u64 = graph.params[*p].tensor.shape.iter().product();
        ramp += elems.div_ceil(u64::from(rows));
        store_bytes += elems * 4;
    }
    (ramp, store_bytes)
}

/// Why no region suits every phase: at the first layer that no region of the fabric suits on
/// its own, E0605 when its implementation's conditions hold on no region, else E0612 with the
/// least SRAM per PE it needs on a region where they hold (and that region's size). When every
/// layer has regions but no one region suits them all: E0612 when some region meets every
/// phase's conditions and only SRAM rules them out (the layer that needs the most on the region
/// where that most is least, see [`shared_working_set`]), else E0605 for the model.
fn no_region(
    graph: &LayerGraph,
    impls: &[usize],
    target: &Target,
    options: &MapOptions,
) -> Diagnostic {
    let max_cols = target.width.min(graph.batch.max(1) as u32);
    let sizes = || (1..=target.height).flat_map(|r| (1..=max_cols).map(move |c| (r, c)));
    for (l, layer) in graph.layers.iter().enumerate() {
        let imp = &layer.impls[impls[l]];
        if sizes().any(|(r, c)| allowed(layer, imp, r, c, target, options)) {
            continue;
        }
        let least = sizes()
            .filter(|&(r, c)| meets_conditions(layer, imp, r, c))
            .filter_map(|(r, c)| Some((sram_bytes(layer, imp, r, c)?, r, c)))
            .min();
        return match least {
            Some((bytes, rows, cols)) => diag::working_set_too_big(
                &layer.name,
                &layer.call,
                bytes + u64::from(options.reserved_sram_bytes),
                rows,
                cols,
                target.sram_bytes,
            ),
            None => diag::no_allowed_size(
                &layer.name,
                &layer.call,
                &format!(
                    "its streaming implementation's conditions hold on no region of at most \
                     {} × {max_cols} PEs (rows × columns, the columns at most the batch of {})",
                    target.height,
                    graph.batch.max(1)
                ),
            ),
        };
    }
    if let Some(d) = beside_held(graph, impls, sizes(), target, options) {
        return d;
    }
    let reserved = u64::from(options.reserved_sram_bytes);
    if let Some((bytes, rows, cols, l)) = shared_working_set(graph, impls, sizes())
        && bytes + reserved > u64::from(target.sram_bytes)
    {
        let layer = &graph.layers[l];
        return diag::shared_working_set_too_big(
            &layer.name,
            &layer.call,
            bytes + reserved,
            rows,
            cols,
            target.sram_bytes,
        );
    }
    let first = &graph.layers[0];
    diag::no_allowed_size(
        &first.name,
        &first.call,
        "no region of the fabric suits every phase of the streamed model at once",
    )
}

/// E0619 when every phase fits some region on its own but on each such region a phase does
/// not fit beside a layer's held weights: the least such overflow, with its region.
fn beside_held(
    graph: &LayerGraph,
    impls: &[usize],
    sizes: impl Iterator<Item = (u32, u32)>,
    target: &Target,
    options: &MapOptions,
) -> Option<Diagnostic> {
    let limit = limit(target, options);
    let mut least: Option<(held_fit::Overflow, u32, u32)> = None;
    for size in sizes.filter(|&size| all_allowed(graph, impls, size, target, options)) {
        let o = held_fit::overflow(graph, impls, size, limit)?;
        if least.is_none_or(|(l, _, _)| o.own + o.held < l.own + l.held) {
            least = Some((o, size.0, size.1));
        }
    }
    let (o, rows, cols) = least?;
    let (holder, phase) = (&graph.layers[o.holder], &graph.layers[o.phase]);
    Some(diag::phase_beside_held(
        diag::Beside {
            holder: &holder.name,
            call: &holder.call,
            phase: o.phase,
            phase_name: &phase.name,
            micro: graph.batch,
        },
        (o.held, o.own + u64::from(options.reserved_sram_bytes)),
        (rows, cols),
        target.sram_bytes,
    ))
}

/// Over the region sizes `sizes` on which every phase's conditions hold, the one whose largest
/// working set is least: that SRAM per PE, the size, and the layer that needs it.
fn shared_working_set(
    graph: &LayerGraph,
    impls: &[usize],
    sizes: impl Iterator<Item = (u32, u32)>,
) -> Option<(u64, u32, u32, usize)> {
    sizes
        .filter_map(|(rows, cols)| {
            let mut largest = None;
            for (l, layer) in graph.layers.iter().enumerate() {
                let imp = &layer.impls[impls[l]];
                if !meets_conditions(layer, imp, rows, cols) {
                    return None;
                }
                let bytes = sram_bytes(layer, imp, rows, cols)?;
                largest = largest.max(Some((bytes, l)));
            }
            largest.map(|(bytes, l)| (bytes, rows, cols, l))
        })
        .min()
}

/// One phase as a graph of its own: the layer, its activation arguments as the graph's inputs
/// and its weights as the graph's parameters, with the maps back to the whole graph.
struct PhaseGraph {
    graph: LayerGraph,
    /// For each input of the phase graph, the whole graph's tensor.
    inputs: Vec<TensorRef>,
    /// For each parameter of the phase graph, the whole graph's parameter index.
    params: Vec<usize>,
    /// The implementation's index in the whole graph's layer (the phase graph keeps only it).
    impl_index: usize,
}

impl PhaseGraph {
    fn new(whole: &LayerGraph, l: usize, impl_index: usize) -> PhaseGraph {
        let layer = &whole.layers[l];
        let mut inputs = Vec::new();
        let mut params = Vec::new();
        let mut graph = LayerGraph {
            model: whole.model.clone(),
            batch: whole.batch,
            inputs: Vec::new(),
            params: Vec::new(),
            layers: Vec::new(),
            output: TensorRef::Layer(0),
        };
        let mut args = Vec::new();
        for (arg, name) in layer.args.iter().zip(&layer.arg_names) {
            match *arg {
                TensorRef::Param(p) => {
                    graph.params.push(whole.params[p].clone());
                    params.push(p);
                    args.push(TensorRef::Param(params.len() - 1));
                }
                other => {
                    graph.inputs.push(activation_decl(whole, other, name));
                    inputs.push(other);
                    args.push(TensorRef::Input(inputs.len() - 1));
                }
            }
        }
        let mut instance = layer.clone();
        instance.args = args;
        instance.impls = vec![layer.impls[impl_index].clone()];
        graph.layers.push(instance);
        PhaseGraph {
            graph,
            inputs,
            params,
            impl_index,
        }
    }

    /// The phase's placement with its indices in the whole graph's terms: its layer is layer
    /// `l` of phase `l`, its streams name the whole graph's inputs and parameters.
    fn globalise(&self, mut p: Placement, l: usize, estimate: Estimate, batch: u64) -> Placement {
        for layer in &mut p.layers {
            layer.phase = l as u32;
            layer.implementation = self.impl_index;
            layer.estimate = estimate;
        }
        let endpoint = |e: Endpoint| match e {
            Endpoint::Host { input, at, side } => Endpoint::Host {
                input: self.input_index(input),
                at,
                side,
            },
            Endpoint::WeightStore { param, at, side } => Endpoint::WeightStore {
                param: self.params[param],
                at,
                side,
            },
            other => other.shifted(l),
        };
        for t in &mut p.transfers {
            t.source = endpoint(t.source);
            for d in &mut t.destinations {
                *d = endpoint(*d);
            }
        }
        let edge = |e: &mut EdgePoint, input: bool| {
            e.layer += l;
            if input {
                e.index = match e.source {
                    crate::placement::EdgeSource::Host => self.input_index(e.index),
                    crate::placement::EdgeSource::WeightStore => self.params[e.index],
                };
            }
        };
        p.inputs.iter_mut().for_each(|e| edge(e, true));
        p.outputs.iter_mut().for_each(|e| edge(e, false));
        p.batch = batch;
        p
    }

    /// The whole graph's model input behind phase input `i` (the stage layers' inputs).
    fn input_index(&self, i: usize) -> usize {
        match self.inputs.get(i) {
            Some(TensorRef::Input(k)) => *k,
            _ => i,
        }
    }
}

/// The declaration of an activation tensor of the whole graph, under the name `name`.
fn activation_decl(whole: &LayerGraph, tensor: TensorRef, name: &str) -> TensorDecl {
    let (elem, shape, span) = match tensor {
        TensorRef::Input(i) => {
            let t = &whole.inputs[i];
            (t.elem, t.shape.clone(), t.span.clone())
        }
        TensorRef::Layer(p) => {
            let l = &whole.layers[p];
            (l.output_elem, l.output_shape.clone(), l.call.clone())
        }
        TensorRef::Param(p) => {
            let ParamDecl { tensor, .. } = &whole.params[p];
            (tensor.elem, tensor.shape.clone(), tensor.span.clone())
        }
    };
    TensorDecl {
        name: name.to_string(),
        elem,
        shape,
        span,
    }
}

/// `whole` with the phase placement `more` appended (its layer indices already global).
fn merge(mut whole: Placement, more: Placement) -> Placement {
    whole.colors_used = whole.colors_used.max(more.colors_used);
    whole.layers.extend(more.layers);
    whole.transfers.extend(more.transfers);
    whole.inputs.extend(more.inputs);
    whole.outputs.extend(more.outputs);
    whole
}

#[cfg(test)]
mod tests;

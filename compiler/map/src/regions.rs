//! Per-layer rows in weight streaming (`docs/running.md`, "How weight streaming runs"). The
//! model's phases share the region's north-west corner and its columns (the samples' split),
//! and each phase of a chain takes its own rows: a store-bound or tiny layer few (shorter
//! chains), a big one the most that pays. Where a layer runs on other rows than its input lies
//! on, a relayout phase (`std.resident`'s `relayout`) moves the activation's blocks down the
//! columns' buses first.
//!
//! The choice is a dynamic programme over the chain: the state is the rows the previous phase
//! left its result on; a step costs the phase's estimate on its rows, plus a relayout's and a
//! reconfiguration when the rows differ. It runs twice: over every sampled row count with
//! the phases' multiply-adds, then with their measured work over the rows the first pass
//! chose, their doubles and halves, and the one region's rows — so the one region's
//! assignment (no relayout) is among those compared, and the answer is never worse by the
//! measured estimate. On a fabric with defects a layer's rows are at most the tallest
//! defect-free rectangle of the columns has, and a caller's check beyond each phase's fit
//! (layer-major order's held weights, `Order::fits`) passes over columns whose choice fails
//! it.

use std::cell::RefCell;
use std::collections::HashSet;

use wsel_ir::graph::{LayerGraph, LayerInstance, RowMove};
use wsel_target::{Dir, Rect, Target};

use crate::place::DeadIndex;
use crate::placement::Estimate;
use crate::streaming::{self as st, Plan, Region, Relaid, Work};
use crate::{MapOptions, MapResult, Mapped, held_cost};

/// The mapping with per-layer rows when it beats the one `region` (if any) by the estimate:
/// the columns and rows chosen ([`best_rows`]), the relaid graph, every phase's rectangle
/// from the corner the tallest shares with the others, and the phases mapped there. `None`
/// when no assignment is faster, or one that is cannot be built or placed (the one region
/// runs).
pub(crate) fn per_layer(
    graph: &LayerGraph,
    impls: &[usize],
    region: Option<&Region>,
    relaid: &Relaid<'_>,
    target: &Target,
    options: &MapOptions,
) -> Option<Mapped> {
    let (cols, rows) = best_rows(graph, impls, region, None, target, options)?;
    if rows.rows.iter().all(|&r| r == rows.rows[0]) {
        return None;
    }
    let mapped = on_rows(graph, &rows.rows, cols, relaid, target, options)?;
    let total = mapped.result.placement.as_ref()?.estimated_cycles;
    if region.is_some_and(|r| total >= r.total) {
        return None;
    }
    Some(with_one_region(mapped, region))
}

/// The kept per-layer sizes of a chain (`MapOptions::sizes`, one per layer of the staged
/// graph: a defect-free mapping's, its relayouts left out), mapped on those rows; `None` when
/// they are one region's (or not a chain's), which `streaming` keeps as before.
pub(crate) fn kept(
    graph: &LayerGraph,
    sizes: &[(u32, u32)],
    relaid: &Relaid<'_>,
    target: &Target,
    options: &MapOptions,
) -> Option<Mapped> {
    let (cols, rows) = kept_rows(graph, sizes)?;
    if rows.iter().all(|&r| r == rows[0]) || !is_chain(graph) {
        return None;
    }
    on_rows(graph, &rows, cols, relaid, target, options)
}

/// The columns and every layer's rows of kept sizes (`MapOptions::sizes`: one per layer of
/// `graph`, all on the same columns); `None` when they do not match the graph.
pub(crate) fn kept_rows(graph: &LayerGraph, sizes: &[(u32, u32)]) -> Option<(u32, Vec<u32>)> {
    let cols = sizes.first()?.1;
    let same = sizes.len() == graph.layers.len() && sizes.iter().all(|s| s.1 == cols);
    same.then(|| (cols, sizes.iter().map(|s| s.0).collect()))
}

/// `graph` mapped with layer `l` on `rows[l]` of `cols` columns, relayouts inserted where
/// the rows change; `None` when that cannot be built or placed.
fn on_rows(
    graph: &LayerGraph,
    rows: &[u32],
    cols: u32,
    relaid: &Relaid<'_>,
    target: &Target,
    options: &MapOptions,
) -> Option<Mapped> {
    let on = relaid_on(graph, rows, relaid, false)?;
    let result = placed_on(&on, cols, target, options)?;
    Some(Mapped {
        result,
        graph: on.graph,
    })
}

/// A chain relaid for its per-layer rows: the graph with a relayout before every layer a
/// move names, its streaming implementations and every layer's rows.
pub(crate) struct RelaidOn {
    pub graph: LayerGraph,
    pub impls: Vec<usize>,
    pub rows: Vec<u32>,
}

/// `graph` with layer `l` on `rows[l]`, relayouts inserted where the rows change, with its
/// streaming implementations (`held`: the held twins of layer-major order); `None` when that
/// cannot be built.
pub(crate) fn relaid_on(
    graph: &LayerGraph,
    rows: &[u32],
    relaid: &Relaid<'_>,
    held: bool,
) -> Option<RelaidOn> {
    let moves = moves(graph, rows);
    let whole = match moves.is_empty() {
        true => graph.clone(),
        false => relaid(graph, &moves).ok()?,
    };
    let impls = st::streaming_impls(&whole, held).ok()?;
    st::check_residency(&whole, &impls).ok()?;
    Some(RelaidOn {
        rows: relaid_rows(rows, &moves),
        graph: whole,
        impls,
    })
}

/// The phases of `on` planned on their rows of `cols` columns and placed; `None` when they
/// cannot be.
pub(crate) fn placed_on(
    on: &RelaidOn,
    cols: u32,
    target: &Target,
    options: &MapOptions,
) -> Option<MapResult> {
    let plan = plan(&on.graph, &on.impls, &on.rows, cols, target, options)?;
    let result = st::place_phases(&on.graph, &on.impls, &plan, target, options);
    result.placement.as_ref()?;
    Some(result)
}

/// `mapped` with the one region it was compared with.
fn with_one_region(mut mapped: Mapped, region: Option<&Region>) -> Mapped {
    if let Some(p) = mapped.result.placement.as_mut() {
        p.one_region = region.map(|r| (r.rows, r.cols, r.total));
    }
    mapped
}

/// The rows of every layer of the relaid graph: the staged layers' `rows`, with a relayout
/// on the larger of its two before each layer a move names.
pub(crate) fn relaid_rows(rows: &[u32], moves: &[RowMove]) -> Vec<u32> {
    let mut all = Vec::with_capacity(rows.len() + moves.len());
    for (l, &r) in rows.iter().enumerate() {
        for m in moves.iter().filter(|m| m.before == l) {
            all.push(m.from_rows.max(m.to_rows));
        }
        all.push(r);
    }
    all
}

/// The columns and every phase's rows: the first pass of the programme on every sampled
/// column count, the cheapest kept; then the second, measured, on its columns (with the one
/// `region`'s rows among the candidates when it has those columns).
pub(crate) fn best_rows(
    graph: &LayerGraph,
    impls: &[usize],
    region: Option<&Region>,
    beside: Option<&Beside<'_>>,
    target: &Target,
    options: &MapOptions,
) -> Option<(u32, RowChoice)> {
    let order = Order {
        beside,
        micro: 1,
        fits: None,
    };
    let one = region.map(|r| (r.rows, r.cols));
    best_rows_in(graph, impls, one, order, target, options)
}

/// [`best_rows`] for a chain run in `order`: beside other phases, or layer-major over
/// micro-batches; `one`, the rows and columns of the one region compared with.
pub(crate) fn best_rows_in(
    graph: &LayerGraph,
    impls: &[usize],
    one: Option<(u32, u32)>,
    order: Order<'_>,
    target: &Target,
    options: &MapOptions,
) -> Option<(u32, RowChoice)> {
    let beside = order.beside;
    let dead = DeadIndex::new(target);
    let allowed = |cols: u32| {
        let tallest = tallest_clean(&dead, cols, target);
        move |l: usize, rows: u32| {
            let layer = &graph.layers[l];
            rows <= tallest
                && rows_fit_move(layer, rows)
                && st::allowed(layer, &layer.impls[impls[l]], rows, cols, target, options)
                && beside.is_none_or(|b| b.allowed(l, (rows, cols), target, options))
        }
    };
    let moved: Vec<_> = graph.layers.iter().map(LayerInstance::row_move).collect();
    // Every sampled row count, and the rows a layer that moves rows must run on.
    let sampled = |l: usize| {
        let mut rows = st::lengths(target.height, options);
        rows.extend(moved[l].map(|(from, to)| from.max(to)));
        rows
    };
    let max_cols = u32::try_from(graph.batch.max(1))
        .unwrap_or(u32::MAX)
        .min(target.width);
    let fits = |cols: u32, choice: &RowChoice| order.fits.is_none_or(|f| f(cols, &choice.rows));
    let mut firsts: Vec<(u32, RowChoice)> = st::lengths(max_cols, options)
        .into_iter()
        .filter_map(|cols| {
            let fits = allowed(cols);
            let candidates = (0..graph.layers.len())
                .map(|l| sampled(l).into_iter().filter(|&r| fits(l, r)).collect())
                .collect();
            let counted = |_: usize, _: u32| Work::Counted;
            let costs = costs(
                graph,
                impls,
                order,
                (cols, &counted),
                candidates,
                target,
                options,
            );
            Some((cols, choose_rows(&moved, &costs)?))
        })
        .collect();
    firsts.sort_by_key(|(cols, choice)| (choice.total, *cols));
    // The cheapest columns whose choice fits: measured (when the work can be) or as counted;
    // where neither fits, with the tallest rows among the candidates too (more rows hold
    // fewer weights a PE, and keep fewer features of a sample).
    let measure = options.work.is_some();
    firsts.into_iter().find_map(|(cols, first)| {
        let again = |more: &[u32]| {
            let candidates = around(&first.rows, more, &allowed(cols));
            let measured = Measured::default();
            let work = |l: usize, rows: u32| measured.work(l, rows);
            let costs = costs(
                graph,
                impls,
                order,
                (cols, &work),
                candidates,
                target,
                options,
            );
            measured.choose(&moved, &costs)
        };
        let one = one.filter(|r| r.1 == cols).map_or(first.rows[0], |r| r.0);
        let tallest = tallest_clean(&dead, cols, target);
        // Layer-major (held weights): the tallest rows measured too, as the first pass's
        // multiply-adds undercount a held layer's work by far (2048 → 4 on 13 × 8: 1,260
        // cycles a micro-batch counted, 18,240 measured), and its rows often miss them.
        let more = match order.fits {
            Some(_) => vec![one, tallest],
            None => vec![one],
        };
        let measured = measure.then(|| again(&more)).flatten();
        let fitting = |c: &RowChoice| fits(cols, c);
        let choice = [measured, Some(first.clone())]
            .into_iter()
            .flatten()
            .find(fitting);
        let choice = choice.or_else(|| again(&[one, tallest]).filter(fitting))?;
        Some((cols, choice))
    })
}

/// The most rows of `cols` columns that have a rectangle free of defects: the phases share
/// the corner of the tallest's, so none may take more (whether the streams reach the phases
/// there, [`corner`] finds).
fn tallest_clean(dead: &DeadIndex, cols: u32, target: &Target) -> u32 {
    let fits = |rows: u32| st::first_clean(dead, target, rows, cols, &[]).is_some();
    let (mut low, mut high) = (0, target.height);
    while low < high {
        let mid = high - (high - low) / 2;
        match fits(mid) {
            true => low = mid,
            false => high = mid - 1,
        }
    }
    low
}

/// How a chain's phases run beyond one pass over the batch.
#[derive(Clone, Copy)]
pub(crate) struct Order<'o> {
    /// The phases that run on each layer's rows beside it (a training step's).
    pub beside: Option<&'o Beside<'o>>,
    /// The micro-batches every phase runs over in layer-major order (1: the batch at once).
    pub micro: u64,
    /// Whether the phases may run on these columns and rows beyond each phase's own fit
    /// (beside held weights); the programme's cheapest choice that does is taken.
    pub fits: Option<&'o Fits<'o>>,
}

/// A check of a choice's columns and every phase's rows ([`Order::fits`]).
pub(crate) type Fits<'f> = dyn Fn(u32, &[u32]) -> bool + 'f;

/// The programme's costs on `cols` columns, phase `l`'s work on `rows` had as `work(l, rows)`
/// says; with
/// `beside`, a phase's cost adds the phases that run on its rows, and a relayout counts twice
/// (the activation down, its gradient back). Over `micro` micro-batches every phase, relayout
/// and reconfiguration counts once per micro-batch, but a layer that holds its weights
/// streams them once, and a park or an unpark runs for all but one micro-batch, an unpark at
/// the store's bandwidth (`crate::held_cost::layer_cycles`).
fn costs<'c>(
    graph: &'c LayerGraph,
    impls: &'c [usize],
    Order { beside, micro, .. }: Order<'c>,
    (cols, work): (u32, &'c dyn Fn(usize, u32) -> Work),
    candidates: Vec<Vec<u32>>,
    target: &'c Target,
    options: &'c MapOptions,
) -> Costs<'c> {
    let batch = graph.batch.max(1);
    let micro = micro.max(1);
    let phase = move |l: usize, rows: u32| {
        let size = (rows, cols);
        let work = work(l, rows);
        let e = phase_estimate(graph, impls, l, size, work, target, options);
        let others = beside.map_or(0, |b| b.cycles(l, size, work, target, options));
        held_cost::layer_cycles(graph, (l, impls[l]), size, &e, micro, target) + others
    };
    let times = if beside.is_some() { 2 } else { 1 };
    // An unpark takes its park's result from the store onto the park's rows: nothing to move.
    let relayout = move |l: usize, from: u32, to: u32| {
        let words = features(&graph.layers[l - 1]);
        let samples = batch.div_ceil(u64::from(cols));
        let cycles = micro * times * relayout_cycles(words, samples, (from, to), None, target);
        (!held_cost::unparks(graph, l)).then_some(cycles)
    };
    Costs {
        candidates,
        phase: Box::new(phase),
        relayout: Box::new(relayout),
        reconfigure: micro * u64::from(target.reconfigure_cycles),
    }
}

/// The estimate of phase `l` on `size`: a relayout's ([`relayout_cycles`]), else the
/// phase's (`streaming::phase_estimate`); its work had as `work` says.
fn phase_estimate(
    graph: &LayerGraph,
    impls: &[usize],
    l: usize,
    size: (u32, u32),
    work: Work,
    target: &Target,
    options: &MapOptions,
) -> Estimate {
    let layer = &graph.layers[l];
    let measured = work.dry_run(options, layer, impls[l], size);
    let Some(moved) = layer.row_move() else {
        let store = u64::from(target.weight_store.bandwidth_bytes_per_cycle.max(1));
        return st::phase_estimate(graph, layer, impls[l], size, measured, store, target);
    };
    let batch = graph.batch.max(1);
    let busy = measured.map(|m| m.busy);
    let samples = batch.div_ceil(u64::from(size.1));
    let cycles = relayout_cycles(features(layer), samples, moved, busy, target);
    Estimate {
        compute: busy.unwrap_or(0).div_ceil(batch),
        batch_compute: busy.unwrap_or(0),
        cycles: cycles.div_ceil(batch),
        latency: cycles,
        ..Estimate::default()
    }
}

/// The features per sample of `layer`'s result.
fn features(layer: &LayerInstance) -> u64 {
    layer.output_shape.iter().skip(1).product()
}

/// Every phase of the relaid graph `whole` on its `rows` and `cols` columns, all from the
/// corner of the first clean rectangle of the tallest; `None` when a phase's rectangle is not
/// open to its streams there.
pub(crate) fn plan(
    whole: &LayerGraph,
    impls: &[usize],
    rows: &[u32],
    cols: u32,
    target: &Target,
    options: &MapOptions,
) -> Option<Plan> {
    let corner = corner(whole, impls, rows, cols, target)?;
    let mut rects = Vec::with_capacity(rows.len());
    let mut estimates = Vec::with_capacity(rows.len());
    for (l, &r) in rows.iter().enumerate() {
        rects.push(Rect::new(corner.0, corner.1, cols, r));
        estimates.push(phase_estimate(
            whole,
            impls,
            l,
            (r, cols),
            Work::Measured,
            target,
            options,
        ));
    }
    let total = st::total_cycles(whole, &estimates, target);
    Some(Plan {
        rects,
        estimates,
        total,
    })
}

/// The first place (row-major) for the phases' shared north-west corner: the tallest's
/// rectangle free of defects, and every phase's own rectangle open to the sides its streams
/// cross (a phase on a few rows needs its sides open on those rows only).
fn corner(
    whole: &LayerGraph,
    impls: &[usize],
    rows: &[u32],
    cols: u32,
    target: &Target,
) -> Option<(u32, u32)> {
    let dead = DeadIndex::new(target);
    let tallest = rows.iter().copied().max()?;
    let sides: Vec<Vec<Dir>> = (0..rows.len())
        .map(|l| st::phase_sides(&whole.layers[l].impls[impls[l]]))
        .collect();
    let open = |x: u32, y: u32| {
        dead.clean(Rect::new(x, y, cols, tallest))
            && rows.iter().zip(&sides).all(|(&r, sides)| {
                let rect = Rect::new(x, y, cols, r);
                sides
                    .iter()
                    .all(|&s| crate::place::side_open(&dead, rect, s, target))
            })
    };
    let (ys, xs) = (
        target.height.checked_sub(tallest)?,
        target.width.checked_sub(cols)?,
    );
    (0..=ys).find_map(|y| (0..=xs).find(|&x| open(x, y)).map(|x| (x, y)))
}

/// The phases that run on a chain's rows beside its own (a training step's loss and backward
/// layers, `crate::train_regions`): `of[l]` are the layers of `graph` on layer `l`'s rows.
pub(crate) struct Beside<'b> {
    pub graph: &'b LayerGraph,
    pub impls: &'b [usize],
    pub of: Vec<Vec<usize>>,
}

impl Beside<'_> {
    /// Whether every phase beside layer `l` may run on `size`.
    fn allowed(&self, l: usize, size: (u32, u32), target: &Target, options: &MapOptions) -> bool {
        self.of[l].iter().all(|&b| {
            let layer = &self.graph.layers[b];
            st::allowed(
                layer,
                &layer.impls[self.impls[b]],
                size.0,
                size.1,
                target,
                options,
            )
        })
    }

    /// The estimated cycles of the phases beside layer `l` on `size`, for the whole batch.
    fn cycles(
        &self,
        l: usize,
        size: (u32, u32),
        work: Work,
        target: &Target,
        options: &MapOptions,
    ) -> u64 {
        let batch = self.graph.batch.max(1);
        let (graph, impls) = (self.graph, self.impls);
        self.of[l]
            .iter()
            .map(|&b| phase_estimate(graph, impls, b, size, work, target, options).cycles * batch)
            .sum()
    }
}

/// The rows each phase of a chain runs on and the estimated cycles of the whole run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RowChoice {
    pub rows: Vec<u32>,
    pub total: u64,
}

/// Whether per-layer rows apply to `graph`: a chain of resident `f32[B, N]` activations —
/// one model input, each layer after the first taking exactly the result of the layer
/// before it, once, and the last layer's result the model's.
pub(crate) fn is_chain(graph: &LayerGraph) -> bool {
    let n = graph.layers.len();
    let flat = |l: &LayerInstance| l.output_shape.len() == 2;
    n >= 2 && graph.is_chain() && graph.layers[..n - 1].iter().all(flat)
}

/// The rows a layer's resident input lies on when it runs on `rows` rows, given its row move
/// (`LayerInstance::row_move`).
fn in_rows(moved: Option<(u32, u32)>, rows: u32) -> u32 {
    moved.map_or(rows, |(from, _)| from)
}

/// The rows a layer's resident result lies on when it runs on `rows` rows.
pub(crate) fn out_rows(moved: Option<(u32, u32)>, rows: u32) -> u32 {
    moved.map_or(rows, |(_, to)| to)
}

/// Whether `layer` may run on `rows` rows as far as its row move goes: a layer that moves
/// rows runs on the larger of its two.
fn rows_fit_move(layer: &LayerInstance, rows: u32) -> bool {
    layer
        .row_move()
        .is_none_or(|(from, to)| rows == from.max(to))
}

/// The relayouts a chain on `rows` needs: before every layer whose input lies on other rows
/// than its producer left it on.
pub(crate) fn moves(graph: &LayerGraph, rows: &[u32]) -> Vec<RowMove> {
    (1..graph.layers.len())
        .filter_map(|l| {
            let from_rows = out_rows(graph.layers[l - 1].row_move(), rows[l - 1]);
            let to_rows = in_rows(graph.layers[l].row_move(), rows[l]);
            (from_rows != to_rows).then_some(RowMove {
                before: l,
                from_rows,
                to_rows,
            })
        })
        .collect()
}

/// What the programme needs: every layer's candidate rows (those it may run on), a phase's
/// estimated cycles for the whole batch on given rows, and a relayout's.
struct Costs<'c> {
    pub candidates: Vec<Vec<u32>>,
    pub phase: Box<dyn Fn(usize, u32) -> u64 + 'c>,
    /// The estimated cycles of a relayout before layer `l` from rows `from` to rows `to`;
    /// `None` where none may run.
    pub relayout: Box<dyn Fn(usize, u32, u32) -> Option<u64> + 'c>,
    pub reconfigure: u64,
}

/// The cheapest rows for every phase of a chain whose layers move rows as `moved` says
/// (`LayerInstance::row_move`), relayouts counted; `None` when some phase has no candidate.
fn choose_rows(moved: &[Option<(u32, u32)>], costs: &Costs<'_>) -> Option<RowChoice> {
    let Costs {
        candidates,
        phase,
        relayout,
        reconfigure,
    } = costs;
    let reconfigure = *reconfigure;
    // Per candidate of the current layer: the best total so far and the rows that reach it.
    let mut best: Vec<Option<(u64, Vec<u32>)>> = Vec::new();
    for (l, &layer) in moved.iter().enumerate() {
        let mut next = Vec::with_capacity(candidates[l].len());
        for &rows in &candidates[l] {
            let own = phase(l, rows);
            if l == 0 {
                next.push(Some((own, vec![rows])));
                continue;
            }
            let previous = moved[l - 1];
            // The first least total; a relayout is not costed where, free, it could not be
            // less than the least so far.
            let mut reached: Option<(u64, &Vec<u32>)> = None;
            for (&r, b) in candidates[l - 1].iter().zip(&best) {
                let Some((total, path)) = b.as_ref() else {
                    continue;
                };
                let (from, to) = (out_rows(previous, r), in_rows(layer, rows));
                let least = |t: u64| reached.is_none_or(|(least, _)| t < least);
                let relaid = if from == to {
                    0
                } else if least(total + 2 * reconfigure + own) {
                    let Some(cycles) = relayout(l, from, to) else {
                        continue;
                    };
                    cycles + reconfigure
                } else {
                    continue;
                };
                let t = total + relaid + reconfigure + own;
                if least(t) {
                    reached = Some((t, path));
                }
            }
            next.push(reached.map(|(total, path)| {
                let mut path = path.clone();
                path.push(rows);
                (total, path)
            }));
        }
        best = next;
    }
    best.into_iter()
        .flatten()
        .min_by_key(|(total, _)| *total)
        .map(|(total, rows)| RowChoice { rows, total })
}

/// The phases of [`choose_rows`]'s candidates measured so far; the others are estimated on
/// floors (each phase's centre PE alone, `Work::Floor`).
#[derive(Default)]
struct Measured(RefCell<HashSet<(usize, u32)>>);

impl Measured {
    /// How phase `l`'s work on `rows` is had.
    fn work(&self, l: usize, rows: u32) -> Work {
        match self.0.borrow().contains(&(l, rows)) {
            true => Work::Measured,
            false => Work::Floor,
        }
    }

    /// [`choose_rows`] with the phases' work measured where it decides: the programme runs
    /// on `costs` (whose phases are had as [`Measured::work`] says), the phases of its choice
    /// are measured, and it runs again until its choice is measured throughout. Every other
    /// choice then costs at least its floors, which cost at least the measured one's total
    /// (`docs/mapping.md` §5).
    fn choose(&self, moved: &[Option<(u32, u32)>], costs: &Costs<'_>) -> Option<RowChoice> {
        loop {
            let choice = choose_rows(moved, costs)?;
            let phases = choice.rows.iter().copied().enumerate();
            let fresh: Vec<_> = phases.filter(|p| !self.0.borrow().contains(p)).collect();
            if fresh.is_empty() {
                return Some(choice);
            }
            self.0.borrow_mut().extend(fresh);
        }
    }
}

/// The estimated cycles of a relayout of `words` features per sample from `from` rows to `to`
/// on columns of `samples` samples each (the busiest column): every word of a column's
/// activation crosses its bus once, one a cycle; every sample of a turn is a task on every
/// receiving PE; and a turn's first wavelet crosses the column before the next row sends.
/// `busy`, a dry run's busy cycles of the busiest PE, replaces the tasks' part when known.
fn relayout_cycles(
    words: u64,
    samples: u64,
    (from, to): (u32, u32),
    busy: Option<u64>,
    target: &Target,
) -> u64 {
    let rows = u64::from(from.max(to));
    let turns = u64::from(from);
    let bus = samples * words;
    let tasks = busy.unwrap_or(samples * turns * (u64::from(target.task_switch_cycles) + 4));
    bus.max(tasks) + turns * rows * u64::from(target.hop_latency)
}

/// The candidates of the second pass: around each layer's first-pass rows (itself, double and
/// half) and the rows `more` names (the one region's), those `allowed` keeps, in order.
fn around(first: &[u32], more: &[u32], allowed: &dyn Fn(usize, u32) -> bool) -> Vec<Vec<u32>> {
    first
        .iter()
        .enumerate()
        .map(|(l, &r)| {
            let mut c: Vec<u32> = [r, r.saturating_mul(2), r / 2]
                .into_iter()
                .chain(more.iter().copied())
                .filter(|&x| x > 0 && allowed(l, x))
                .collect();
            c.sort_unstable();
            c.dedup();
            c
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three phases on 1, 2 or 4 rows; a relayout costs 10 and a reconfiguration 1, and none
    /// may run before layer `barred` (an unpark's).
    fn choose_barring(
        moved: &[Option<(u32, u32)>],
        candidates: Vec<Vec<u32>>,
        barred: usize,
    ) -> RowChoice {
        let costs = Costs {
            candidates,
            phase: Box::new(table),
            relayout: Box::new(move |l, _, _| (l != barred).then_some(10)),
            reconfigure: 1,
        };
        choose_rows(moved, &costs).expect("a choice")
    }

    /// The measured cycles of the three phases on 1, 2 or 4 rows.
    fn table(l: usize, rows: u32) -> u64 {
        let costs: [[u64; 3]; 3] = [[5, 3, 2], [1, 50, 60], [40, 30, 4]];
        costs[l][rows.trailing_zeros() as usize]
    }

    fn choose(moved: &[Option<(u32, u32)>], candidates: Vec<Vec<u32>>) -> RowChoice {
        choose_barring(moved, candidates, usize::MAX)
    }

    #[test]
    fn floors_choose_what_the_measures_do_measuring_only_the_choice() {
        // Every floor half its measure (rounded down). On floors the cheapest is [1, 1, 4]:
        // 2 + 0 + 2 + one relayout (10 + 1) + 2 reconfigurations = 17; its three phases are
        // measured, and then it costs 5 + 1 + 4 + 11 + 2 = 23, while the next on floors,
        // [1, 1, 1], costs 5 + 1 + 20 + 2 = 28 (and every other more): taken, measured
        // throughout, after 3 of the 9 phases' measures — what the full measure chooses.
        let measured = Measured::default();
        let costs = Costs {
            candidates: vec![vec![1, 2, 4]; 3],
            phase: Box::new(|l, rows| match measured.work(l, rows) {
                Work::Measured => table(l, rows),
                _ => table(l, rows) / 2,
            }),
            relayout: Box::new(|_, _, _| Some(10)),
            reconfigure: 1,
        };
        let choice = measured.choose(&[None; 3], &costs).expect("a choice");
        assert_eq!(choice, choose(&[None; 3], vec![vec![1, 2, 4]; 3]));
        assert_eq!(choice.total, 23);
        let mut phases: Vec<_> = measured.0.borrow().iter().copied().collect();
        phases.sort_unstable();
        assert_eq!(phases, [(0, 1), (1, 1), (2, 4)]);
    }

    #[test]
    fn no_relayout_runs_where_it_is_barred() {
        // Layer 2 must take layer 1's rows: (a, b, b). By hand: b = 1 and a = 1: 5 + 1 + 40
        // + 2 = 48; a = 4: 2 + 11 + 1 + 40 + 2 = 56; b = 2: 3 + 50 + 30 + 2 = 85; b = 4:
        // 2 + 60 + 4 + 2 = 68. Unbarred it was [1, 1, 4] at 23.
        let choice = choose_barring(&[None; 3], vec![vec![1, 2, 4]; 3], 2);
        assert_eq!(choice.rows, [1, 1, 1]);
        assert_eq!(choice.total, 48);
    }

    #[test]
    fn the_programme_pays_for_a_relayout_only_where_the_rows_save_more() {
        let all = vec![vec![1, 2, 4]; 3];
        // By hand: [1, 1, 4] = 5 + 1 + 4 + one relayout (10 + 1) + 2 reconfigurations = 23;
        // every phase on 4 rows = 2 + 60 + 4 + 2 = 68, on 1 = 5 + 1 + 40 + 2 = 48;
        // [4, 1, 4] = 2 + 1 + 4 + 2 · 11 + 2 = 29.
        let choice = choose(&[None; 3], all);
        assert_eq!(choice.rows, [1, 1, 4]);
        assert_eq!(choice.total, 23);
    }

    #[test]
    fn a_layer_that_moves_rows_is_one_relayout_already() {
        // The middle layer takes its input on 1 row and leaves it on 4, running on 4:
        // [1, 4, 4] = 5 + 60 + 4 + 2 = 71, no relayout; starting on 4 rows adds one back to 1:
        // 2 + 11 + 60 + 4 + 2 = 79.
        let candidates = vec![vec![1, 2, 4], vec![4], vec![1, 2, 4]];
        let choice = choose(&[None, Some((1, 4)), None], candidates);
        assert_eq!(choice.rows, [1, 4, 4]);
        assert_eq!(choice.total, 71);
    }

    /// Five phases on 1–6 rows, their cycles and relayouts' from a xorshift sequence (some
    /// relayouts barred): the least total is every path's least (all 6⁵ tried by hand), and
    /// relayouts that could not win even free are not costed.
    #[test]
    fn relayouts_that_cannot_win_are_not_costed_and_the_least_total_is_found() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % 97
        };
        let phases: Vec<Vec<u64>> = (0..5).map(|_| (0..6).map(|_| next()).collect()).collect();
        let moves: Vec<Vec<u64>> = (0..36).map(|_| (0..5).map(|_| next()).collect()).collect();
        let relayout = |l: usize, from: u32, to: u32| {
            let c = moves[(from as usize - 1) * 6 + to as usize - 1][l];
            (!c.is_multiple_of(11)).then_some(c)
        };
        let costed = RefCell::new(0usize);
        let costs = Costs {
            candidates: vec![(1..=6).collect(); 5],
            phase: Box::new(|l, rows| phases[l][rows as usize - 1]),
            relayout: Box::new(|l, from, to| {
                *costed.borrow_mut() += 1;
                relayout(l, from, to)
            }),
            reconfigure: 3,
        };
        let choice = choose_rows(&[None; 5], &costs).expect("a choice");
        let mut least = u64::MAX;
        for path in 0..6u32.pow(5) {
            let rows: Vec<u32> = (0..5).map(|l| path / 6u32.pow(l) % 6 + 1).collect();
            let mut total = phases[0][rows[0] as usize - 1];
            for l in 1..5 {
                let (from, to) = (rows[l - 1], rows[l]);
                let moved = match from == to {
                    true => Some(0),
                    false => relayout(l, from, to).map(|c| c + 3),
                };
                let Some(moved) = moved else {
                    total = u64::MAX;
                    break;
                };
                total += moved + 3 + phases[l][to as usize - 1];
            }
            least = least.min(total);
        }
        assert_eq!(choice.total, least);
        assert!(
            *costed.borrow() < 4 * 6 * 5,
            "{} relayouts costed",
            costed.borrow()
        );
    }
}

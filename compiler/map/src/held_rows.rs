//! Per-layer rows in layer-major order (`docs/running.md`, "Per-layer rows, and relayouts"
//! and "Micro-batches"). The parked graph of one micro-batch (a chain: a park and an unpark
//! before every layer with weights but the first) takes the rows of the programme of
//! `crate::regions`, costed over the micro-batches with each held layer's weights streamed
//! once (`crate::held_cost`); a park may run on other rows than its input lies on (a
//! relayout first, in the segment before), an unpark only on its park's. The graph is then
//! relaid, so every relayout runs once per micro-batch, and every phase is checked beside its
//! segment's held weights on its own rows (`held_fit::overflow_on`); the programme takes the
//! cheapest columns whose rows pass that check (on a fabric with defects the cheapest often
//! do not: the tallest free rectangle of all the columns may be too short to hold them).

use wsel_ir::graph::LayerGraph;
use wsel_target::Target;

use crate::regions::{self, Order, RelaidOn};
use crate::streaming::{self as st, Relaid};
use crate::{MapOptions, Mapped, held_cost, held_fit};

/// The layer-major mapping of `parked` (one micro-batch's parked chain) on per-layer rows
/// over `micro` micro-batches, relaid by `relaid`, when it beats `one` (the same graph on one
/// region, if that maps) by the layer-major estimate; `None` when the model is no chain, its
/// sizes are kept, one region is asked for, every phase takes the same rows, or the plan
/// does not fit, place or pay.
pub(crate) fn held_rows(
    parked: &LayerGraph,
    micro: u64,
    one: Option<&Mapped>,
    relaid: &Relaid<'_>,
    target: &Target,
    options: &MapOptions,
) -> Option<Mapped> {
    if options.one_region || !regions::is_chain(parked) {
        return None;
    }
    let (cols, rows) = match options.sizes {
        Some(sizes) => regions::kept_rows(parked, sizes)?,
        None => chosen(parked, micro, one, target, options)?,
    };
    if rows.iter().all(|&r| r == rows[0]) {
        return None;
    }
    let on = regions::relaid_on(parked, &rows, relaid, true)?;
    if !fits(&on, cols, target, options) {
        return None;
    }
    let mut result = regions::placed_on(&on, cols, target, options)?;
    let placement = result.placement.as_mut()?;
    let whole = on.graph;
    let total = held_cost::run_cycles(&whole, placement, micro, target);
    let kept = options.sizes.is_some();
    if let Some(one) = one.filter(|_| !kept) {
        let (graph, placed) = (&one.graph, one.result.placement.as_ref()?);
        let one_total = held_cost::run_cycles(graph, placed, micro, target);
        if total >= one_total {
            return None;
        }
        let first = placed.layers.first()?;
        placement.one_region = Some((first.rows, first.cols, one_total));
    }
    Some(Mapped {
        result,
        graph: whole,
    })
}

/// The columns and every layer's rows by the programme, costed over `micro` micro-batches,
/// the `one` region's rows among the candidates.
fn chosen(
    parked: &LayerGraph,
    micro: u64,
    one: Option<&Mapped>,
    target: &Target,
    options: &MapOptions,
) -> Option<(u32, Vec<u32>)> {
    let impls = st::streaming_impls(parked, true).ok()?;
    // Beside the held weights, the relayouts aside (`fits` checks the relaid graph).
    let limit = st::limit(target, options);
    let held = |cols: u32, rows: &[u32]| {
        held_fit::overflow_on(parked, &impls, rows, cols, limit).is_none()
    };
    let order = Order {
        beside: None,
        micro,
        fits: Some(&held),
    };
    let placed = one.and_then(|m| m.result.placement.as_ref()?.layers.first());
    let size = placed.map(|p| (p.rows, p.cols));
    let (cols, choice) = regions::best_rows_in(parked, &impls, size, order, target, options)?;
    Some((cols, choice.rows))
}

/// Whether every phase of `on` fits its own rows of the `cols` columns, alone and beside its
/// segment's held weights.
fn fits(on: &RelaidOn, cols: u32, target: &Target, options: &MapOptions) -> bool {
    let alone = on.graph.layers.iter().enumerate().all(|(l, layer)| {
        let imp = &layer.impls[on.impls[l]];
        st::allowed(layer, imp, on.rows[l], cols, target, options)
    });
    let limit = st::limit(target, options);
    alone && held_fit::overflow_on(&on.graph, &on.impls, &on.rows, cols, limit).is_none()
}

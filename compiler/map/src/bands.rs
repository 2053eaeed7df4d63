//! The band planner (issue #23; `benches/plan96.py` is its design study, BENCHMARKS.md "The
//! band planner"): a chain laid out as a boustrophedon of bands, which the chain placer's
//! spiral of one region size cannot find.
//!
//! The caller gives, beside the graph, its straight twins ([`crate::MapOptions::straight_twins`]):
//! the same stages with each layer that has one replaced by its straight implementation
//! (input west, result east on the same rows). A band of height `h` holds straight stages of
//! `R = h` one after another along it; at each end a turning stage of the main graph (input
//! west, result south) and a fold's square (`fold`) turn the chain into the next band, whose
//! height is the turning stage's `C` (`dp` says where each lies). Per stage target `T` a
//! dynamic programme (`dp`) finds the plan with every stage's estimate — the size search's
//! own candidates (`ways`) — within `T` and the most PEs; the smallest `T` with a plan is
//! found by binary search, and there `balance` prefers a plan whose bottleneck is near its
//! mean stage to a fuller one. The plan becomes a graph of each stage's chosen layer and its
//! regions (`realize`), which the mapper then routes, colors and checks pinned
//! ([`crate::MapOptions::regions`]), as it does any pinned placement.

mod balance;
mod dp;
mod frame;
mod realize;
mod ways;

use wsel_diagnostic::Diagnostic;
use wsel_ir::graph::{LayerGraph, Mode};
use wsel_target::{Rect, Target};

use crate::placement::{Orientation, Placement};
use crate::search::Problem;
use crate::{MapOptions, copies};
use dp::{Kind, Plan};
use frame::Frame;
use ways::StageWays;

/// Stage targets tried above the smallest one with a plan when the plan does not route.
const ROUTE_RETRIES: usize = 3;

/// The band planner's placement of `graph` with its straight `twins`, when the graph is a
/// chain it lays out, a plan ranks above `rival` (the search's placement, [`rank`]) and
/// routes; `None` otherwise (the caller keeps the search's).
pub(crate) fn map_banded(
    graph: &LayerGraph,
    twins: &LayerGraph,
    target: &Target,
    options: &MapOptions,
    rival: Option<&Placement>,
) -> Option<Placement> {
    let plain = options.copies <= 1
        && options.region.is_none()
        && options.regions.is_none()
        && options.sizes.is_none()
        && options.companion.is_none();
    if !plain || !graph.is_chain() || !ways::same_stages(graph, twins) {
        return None;
    }
    let mode = Mode::Pipelined;
    let mut ignored: Vec<Diagnostic> = Vec::new();
    let main = Problem::build(graph, target, mode, options, None, &mut ignored)?;
    let straight = Problem::build(twins, target, mode, options, None, &mut ignored)?;
    let heights = ways::heights(&straight);
    let stage_ways = ways::stage_ways(&main, &straight, &heights);
    let mut targets = stage_targets(&stage_ways);
    // A plan slower than the search's placement never replaces it.
    if let Some(bound) = rival.map(|p| rank(p).0) {
        targets.retain(|&t| t <= bound);
    }
    let dead = main.dead.dead_pe_count() > 0 || !target.defects.dead_links.is_empty();
    let frames = Frame::both(target);
    let index = &main.dead;
    let cleans: Vec<_> = frames
        .iter()
        .map(|frame| move |r| index.clean(frame.physical(r)))
        .collect();
    let plans: Vec<Plan<'_>> = frames
        .iter()
        .zip(&cleans)
        .map(|(frame, clean)| Plan {
            ways: &stage_ways,
            heights: &heights,
            frame,
            weight: 0,
            clean: dead.then_some(clean as &dyn Fn(frame::ARect) -> bool),
        })
        .collect();
    first_placed(graph, twins, target, options, (&plans, &targets))
}

/// The placement of the best plan of any frame that realizes and routes: each frame's plan
/// at its smallest target (a later frame's searched only where it can tie or beat an earlier
/// one's; `balance` chooses among the plans there), the lower target first, then the
/// balanced one, then the more PEs; on failure its next few targets.
fn first_placed(
    graph: &LayerGraph,
    twins: &LayerGraph,
    target: &Target,
    options: &MapOptions,
    (plans, targets): (&[Plan<'_>], &[u64]),
) -> Option<Placement> {
    let mut found: Vec<(usize, Vec<dp::Step>, &Plan<'_>)> = Vec::new();
    for plan in plans {
        let end = found.iter().map(|f| f.0 + 1).min().unwrap_or(targets.len());
        if let Some((first, fullest)) = smallest(plan, &targets[..end]) {
            found.push((first, balance::chosen(plan, targets[first], fullest), plan));
        }
    }
    found
        .sort_by_key(|(first, steps, _)| (*first, !balance::is_balanced(steps), dp::rank(steps).1));
    found.into_iter().find_map(|(first, steps, plan)| {
        let retries = targets[first + 1..].iter().take(ROUTE_RETRIES - 1);
        let solve = |&t: &u64| {
            plan.solve(t)
                .map(|fullest| balance::chosen(plan, t, fullest))
        };
        let mut tried = std::iter::once(Some(steps)).chain(retries.map(solve));
        tried.find_map(|steps| placed(graph, twins, target, options, (plan, &steps?)))
    })
}

/// The smallest of `targets` (ascending) with a plan, and its plan: a plan at a target is
/// one at every larger target, so the smallest is found by bisection.
fn smallest(plan: &Plan<'_>, targets: &[u64]) -> Option<(usize, Vec<dp::Step>)> {
    let (mut lo, mut hi) = (0, targets.len());
    let mut best = None;
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match plan.solve(targets[mid]) {
            Some(steps) => {
                best = Some((mid, steps));
                hi = mid;
            }
            None => lo = mid + 1,
        }
    }
    best
}

/// The placement of `plan`'s layout `steps`, when it realizes and routes.
fn placed(
    graph: &LayerGraph,
    twins: &LayerGraph,
    target: &Target,
    options: &MapOptions,
    (plan, steps): (&Plan<'_>, &[dp::Step]),
) -> Option<Placement> {
    let regions = realize::realize(steps, plan.frame)?;
    let mixed = mixed_graph(graph, twins, steps);
    let mut placement = pinned(&mixed, target, options, &regions)?;
    placement.layout_reason = format!(
        "the band planner laid the chain out ({}, {} straight stages, {} turning)",
        plan.frame.describe(),
        steps.iter().filter(|s| s.kind == Kind::Straight).count(),
        steps.iter().filter(|s| s.kind == Kind::Tile).count(),
    );
    Some(placement)
}

/// `graph` with each stage the plan lays straight taken from `twins`.
fn mixed_graph(graph: &LayerGraph, twins: &LayerGraph, steps: &[dp::Step]) -> LayerGraph {
    let mut mixed = graph.clone();
    for (l, step) in steps.iter().enumerate() {
        if step.kind == Kind::Straight {
            mixed.layers[l] = twins.layers[l].clone();
        }
    }
    mixed
}

/// `graph` mapped on exactly `regions`: routes, colors and SRAM as for any pinned placement.
fn pinned(
    graph: &LayerGraph,
    target: &Target,
    options: &MapOptions,
    regions: &[(Rect, Orientation)],
) -> Option<Placement> {
    let options = MapOptions {
        regions: Some(regions),
        straight_twins: None,
        ..*options
    };
    copies::place_copies(graph, target, Mode::Pipelined, &options, 1).0
}

/// Every stage target a plan can settle on: the ways' distinct estimates, ascending.
fn stage_targets(ways: &[StageWays]) -> Vec<u64> {
    let mut targets: Vec<u64> = ways
        .iter()
        .flat_map(|w| {
            let straights = w.straights.iter().flatten().map(|s| s.1);
            straights.chain(w.tiles.iter().flatten().flatten().copied())
        })
        .collect();
    targets.sort_unstable();
    targets.dedup();
    targets
}

/// How placements compare: the lower bottleneck estimate first, then the more PEs.
pub(crate) fn rank(p: &Placement) -> (u64, std::cmp::Reverse<u64>) {
    let bottleneck = p.layers.iter().map(|l| l.estimate.cycles).max();
    (bottleneck.unwrap_or(0), std::cmp::Reverse(p.pes_used()))
}

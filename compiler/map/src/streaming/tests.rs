//! The streaming region choice against its definition: of every size that may be placed
//! (every phase allowed, beside any held weights, on a rectangle clear of defects), the one
//! with the least counted estimate, the smaller on ties, the first tried on ties of both.

use super::*;
use crate::fixtures;

/// A chosen region: its rectangle, rows, columns, estimated total and phase estimates.
type Chosen = Option<(Rect, u32, u32, u64, Vec<Estimate>)>;

/// The counted choice by its definition: every size placed, then compared.
fn placed_first(
    graph: &LayerGraph,
    impls: &[usize],
    target: &Target,
    options: &MapOptions,
) -> Chosen {
    let dead = DeadIndex::new(target);
    let sides = stream_sides(graph, impls);
    let max_cols = u32::try_from(graph.batch.max(1))
        .unwrap_or(u32::MAX)
        .min(target.width);
    let mut best: Chosen = None;
    for rows in lengths(target.height, options) {
        for cols in lengths(max_cols, options) {
            let held = held_fit::overflow(graph, impls, (rows, cols), limit(target, options));
            if !all_allowed(graph, impls, (rows, cols), target, options) || held.is_some() {
                continue;
            }
            let Some(rect) = first_clean(&dead, target, rows, cols, &sides) else {
                continue;
            };
            let estimates = estimates(graph, impls, target, options, (rows, cols), Work::Counted);
            let total = total_cycles(graph, &estimates, target);
            if best
                .as_ref()
                .is_none_or(|b| (total, rows * cols) < (b.3, b.1 * b.2))
            {
                best = Some((rect, rows, cols, total, estimates));
            }
        }
    }
    best
}

/// `graph`'s region as `choose_region` chooses it and as its definition does (neither when
/// the model cannot stream on `target`).
fn both(graph: &LayerGraph, target: &Target, options: &MapOptions) -> (Chosen, Chosen) {
    let Ok(impls) = prepare(graph, target, false) else {
        return (None, None);
    };
    let chosen = choose_region(graph, &impls, target, options)
        .map(|r| (r.rect, r.rows, r.cols, r.total, r.estimates));
    (chosen, placed_first(graph, &impls, target, options))
}

/// Models of several shapes and batches, some holding their weights, on `dev` and on WSE-2
/// with and without dead PEs, with the SRAM reserve and the sides' sampling varied: every
/// choice is its definition's (and some size is found for most).
#[test]
fn the_counted_choice_places_only_sizes_that_would_win_and_chooses_as_placing_all() {
    let wse2 = Target::wse2();
    let targets = [
        Target::dev(),
        fixtures::scatter_dead_pes(Target::dev(), 12, 0x9e37_79b9_7f4a_7c15),
        fixtures::scatter_dead_pes(wse2.clone(), 400, 7),
        wse2,
    ];
    let mut graphs = Vec::new();
    for (widths, batch) in [
        (&[64u64, 64, 64][..], 8u64),
        (&[256, 512, 10][..], 8),
        (&[784, 1024, 1024, 10][..], 16),
        (&[64, 2048, 10][..], 3),
    ] {
        let graph = fixtures::mlp(widths, batch, true);
        let mut held = graph.clone();
        for layer in held.layers.iter_mut().filter(|l| l.layer == "dense") {
            *layer = fixtures::held(layer.clone());
        }
        graphs.extend([graph, held]);
    }
    let mut found = 0;
    for target in &targets {
        for graph in &graphs {
            for (reserved, sides) in [(0, 48), (8 * 1024, 255), (40 * 1024, 7)] {
                let options = MapOptions {
                    reserved_sram_bytes: reserved,
                    max_side_candidates: sides,
                    ..MapOptions::default()
                };
                let (chosen, defined) = both(graph, target, &options);
                assert_eq!(chosen, defined, "{} on {}", graph.model, target.name);
                found += usize::from(chosen.is_some());
            }
        }
    }
    // 29 when written: the others' models do not fit the target's store or SRAM.
    assert!(found >= 24, "{found} of 96 choices found a region");
}

/// A phase whose rows keep the chunks of a reduce-scatter in turn (`keep_turn`) takes at
/// least the chain of its keepers, with the figures of the transformer's `dense#5` chunks on
/// `dev` rounded: 128 → 256 for 64 samples on 16 × 16, the busiest PE 20,400 cycles over
/// 17 blocks (the bias and 16 of weights), a relay step of 230, keeps of 1,000. The weights
/// take 2,064 cycles down each row's ramp (16 + 128 · 256 / 16 words) and from the store
/// (132,096 B at 64 B a cycle).
#[test]
fn a_phase_whose_rows_keep_in_turn_takes_the_chain_of_its_keepers() {
    let graph = fixtures::mlp(&[128, 256], 64, false);
    let layer = &graph.layers[0];
    let imp = layer
        .impls
        .iter()
        .position(|i| i.modes == [Mode::Streaming])
        .expect("a streaming implementation");
    let target = Target::dev();
    let (hop, store) = (u64::from(target.hop_latency), 64);
    assert_eq!(target.weight_store.bandwidth_bytes_per_cycle, 64);
    let run = |busy: u64, keep_turn: Option<u64>| PhaseDryRun {
        busy,
        relay_step: Some(230),
        keep_turn,
        blocks: 17,
    };
    let latency = |m: PhaseDryRun| {
        phase_estimate(&graph, layer, imp, (16, 16), Some(m), store, &target).latency
    };
    // No keeps: the work, then 15 steps down the column.
    assert_eq!(latency(run(20_400, None)), 20_400 + 15 * (hop + 230));
    // Keeps: 16 rows of a keep, a block's share of the work (20,400 / 17 = 1,200) taken up
    // when the keep frees its accumulator, and a step.
    assert_eq!(
        latency(run(20_400, Some(1_000))),
        16 * (1_000 + 1_200 + hop + 230)
    );
    // Weights slower than the work (1,600 < 2,064): no block waits for the keep; the keepers'
    // 16 · (1,000 + hop + 230) still exceed the ramp and the steps.
    assert_eq!(latency(run(1_600, Some(1_000))), 16 * (1_000 + hop + 230));
    // Short keeps hide behind the work: 16 · (10 + 1,200 + hop + 230) is less than
    // 20,400 + 15 · (hop + 230) while hop < 1,250.
    assert!(hop < 1_250);
    assert_eq!(latency(run(20_400, Some(10))), 20_400 + 15 * (hop + 230));
    // 128 → 10: only the 10 rows with outputs keep, 10 · (1,000 + 1,200 + hop + 230), more
    // than 20,400 + 15 · (hop + 230) while hop < 90.
    let narrow = fixtures::mlp(&[128, 10], 64, false);
    let e = phase_estimate(
        &narrow,
        &narrow.layers[0],
        imp,
        (16, 16),
        Some(run(20_400, Some(1_000))),
        store,
        &target,
    );
    assert!(hop < 90);
    assert_eq!(e.latency, 10 * (1_000 + 1_200 + hop + 230));
}

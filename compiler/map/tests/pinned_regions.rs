//! Pinned regions (`MapOptions::regions`): a graph whose every layer is placed on a rectangle
//! chosen beforehand, as pipelined training maps its backward program onto the regions of its
//! forward program (`docs/running.md`, "Training"), with routes searched between them.

mod common;

use wsel_ir::graph::Mode;
use wsel_map::{MapOptions, Orientation, fixtures, map};
use wsel_target::{Rect, Target};

/// The forward chain's regions, last layer first: the backward chain's layer `k` runs on the
/// region of forward layer `layers - 1 - k`.
fn reversed_regions(p: &wsel_map::Placement) -> Vec<(Rect, Orientation)> {
    p.layers
        .iter()
        .rev()
        .map(|l| (l.rect, l.orientation))
        .collect()
}

#[test]
fn a_reversed_chain_runs_on_the_forward_chains_regions() {
    let target = Target::dev();
    let forward = fixtures::mlp(&[16, 16, 16, 16], 8, false);
    let placed = map(&forward, &target, Mode::Pipelined, &MapOptions::default());
    let placed = placed.placement.expect("the forward chain maps");
    // The backward chain, each layer on its forward layer's PEs.
    let backward = fixtures::mlp_backward(&[16, 16, 16, 16], 8);
    let regions = reversed_regions(&placed);
    let options = MapOptions {
        regions: Some(&regions),
        ..MapOptions::default()
    };
    let result = map(&backward, &target, Mode::Pipelined, &options);
    let p = result
        .placement
        .unwrap_or_else(|| panic!("{:#?}", result.diagnostics));
    common::check_placement(&p, &target);
    let got: Vec<(Rect, Orientation)> = p.layers.iter().map(|l| (l.rect, l.orientation)).collect();
    assert_eq!(got, regions);
    // Each backward layer's dy comes from the region of the forward layer after it.
    assert!(p.transfers.len() >= backward.layers.len() - 1);
}

#[test]
fn overlapping_pinned_regions_are_refused() {
    let target = Target::dev();
    let graph = fixtures::mlp(&[16, 16, 16], 8, false);
    let placed = map(&graph, &target, Mode::Pipelined, &MapOptions::default());
    let placed = placed.placement.expect("maps");
    let first = (placed.layers[0].rect, placed.layers[0].orientation);
    let regions = [first, first];
    let options = MapOptions {
        regions: Some(&regions),
        ..MapOptions::default()
    };
    let result = map(&graph, &target, Mode::Pipelined, &options);
    assert!(result.placement.is_none());
    assert!(!result.diagnostics.is_empty());
}

//! Pinned regions (`MapOptions::regions`): a graph whose every layer is placed on a rectangle
//! chosen beforehand, as pipelined training maps its backward program onto the regions of its
//! forward program (`docs/running.md`, "Training"), with routes searched between them.

mod common;

use wsel_ir::graph::Mode;
use wsel_map::{MapOptions, Orientation, fixtures, map};
use wsel_target::{Coord, Rect, Target};

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

/// A result of two parts that must turn back past its producer: dense#1 on 1 × 2 at (6, 6)
/// sends its parts south, into (6, 7) and (7, 7), and dense#2 on 2 × 1 at (5, 2) takes them
/// from the west, from (4, 2) and (4, 3), north-west of the producer. Each part is kept off the
/// other's first and last PEs. By a shortest way either part walls the other in: part 0
/// first, say (6, 7) (5, 7) (5, 6) (5, 5) (5, 4) (4, 4) (3, 4) (3, 3) (3, 2) (4, 2), takes every
/// free PE beside (4, 3); part 1 first, say (7, 7) (7, 8) (6, 8) (5, 8) (5, 7) … (4, 3), every
/// free PE beside (6, 7). With the parts kept off the other's ends alone (the routing pass
/// before `route_parts` kept them apart) this placement did not map — nor did
/// 177 other placements of the consumer around this producer in a sweep of positions and
/// orientations. Kept a PE off the other part's ends as well, each goes round its own way.
#[test]
fn parts_that_turn_back_route_kept_a_pe_apart() {
    let target = Target::dev();
    let graph = fixtures::mlp(&[8, 8, 8], 4, false);
    let regions = [
        (Rect::new(6, 6, 2, 1), Orientation::Identity),
        (Rect::new(5, 2, 1, 2), Orientation::Identity),
    ];
    let options = MapOptions {
        regions: Some(&regions),
        ..MapOptions::default()
    };
    let result = map(&graph, &target, Mode::Pipelined, &options);
    let p = result
        .placement
        .unwrap_or_else(|| panic!("{:#?}", result.diagnostics));
    common::check_placement(&p, &target);
    let parts: Vec<Vec<Coord>> = (0..2)
        .map(|j| {
            let t = p
                .transfers
                .iter()
                .find(|t| t.tensor == "dense#1.y" && t.part == j);
            t.expect("a part of dense#1's result")
                .hops
                .iter()
                .map(|h| h.at)
                .collect()
        })
        .collect();
    let ends = [
        [Coord::new(6, 7), Coord::new(4, 2)],
        [Coord::new(7, 7), Coord::new(4, 3)],
    ];
    for (j, path) in parts.iter().enumerate() {
        assert_eq!(
            [path[0], path[path.len() - 1]],
            ends[j],
            "part {j}: {path:?}"
        );
        // Never beside the other part's ends, but at its own.
        let other = &ends[1 - j];
        let beside = |c: &Coord| other.iter().any(|o| o.manhattan(*c) == 1);
        let near: Vec<&Coord> = path
            .iter()
            .filter(|c| beside(c) && !ends[j].contains(c))
            .collect();
        assert!(
            near.is_empty(),
            "part {j} passes beside the other's ends at {near:?}"
        );
    }
}

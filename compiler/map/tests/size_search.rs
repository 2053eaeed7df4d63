//! Regressions of the size search: when the least-area sizes cannot be placed or routed, other
//! sizes are tried instead of giving up on a fabric with room to spare.

mod common;

use wsel_ir::graph::{LayerGraph, Mode, TensorRef};
use wsel_map::{MapOptions, fixtures, map};
use wsel_target::Target;

fn maps(graph: &LayerGraph, target: &Target) {
    let result = map(graph, target, Mode::Pipelined, &MapOptions::default());
    let Some(p) = &result.placement else {
        panic!("no placement: {:#?}", result.diagnostics);
    };
    assert_eq!(p.layers.len(), graph.layers.len());
    common::check_placement(p, target);
}

/// `relu(dense(x, w, b))` with 256 inputs and outputs at batch 16 on dev: the least-area
/// dense region, 16 × 8, has its output edge on the fabric's edge in both orientations, so it
/// cannot feed the relu; 8 × 16 fits (E0607 "no room" on an empty fabric before).
#[test]
fn a_size_whose_output_edge_falls_off_the_fabric_gives_way_to_one_that_fits() {
    let mut graph = fixtures::mlp_store_fed(&[256, 256], 16, false);
    graph
        .layers
        .push(fixtures::relu(1, TensorRef::Layer(0), 256, 16));
    graph.output = TensorRef::Layer(1);
    maps(&graph, &Target::dev());
}

/// `dense(relu(dense(x, w1, b1)), w2, b2)` with widths 64 at batch 32 on dev: the least-area
/// sizes (8 × 4, 1 × 4, 4 × 8) leave the second dense no room beside the relu and, placed
/// apart, cannot be routed (E0603 on a defect-free fabric before); other sizes map.
#[test]
fn sizes_that_cannot_be_routed_give_way_to_sizes_that_can() {
    let graph = fixtures::mlp_store_fed(&[64, 64, 64], 32, true);
    maps(&graph, &Target::dev());
}

/// The same chain maps at every batch up to 32.
#[test]
fn a_two_layer_mlp_maps_at_every_batch() {
    for batch in 1..=32 {
        let graph = fixtures::mlp_store_fed(&[64, 64, 64], batch, true);
        maps(&graph, &Target::dev());
    }
}

/// A 12-layer chain (six `dense` of width 64, each followed by a `relu`) on `dev` with 6 or 10
/// PEs dead at random (2–4%): defect maps where the first way every layer can lie leads to a
/// layer with no room, so the placer must move earlier layers (measured: with one way per
/// layer, no backtracking, this test fails). Each maps, its regions clear of the dead PEs and
/// its routes checked.
#[test]
fn a_chain_on_dev_with_dead_pes_maps_by_moving_earlier_layers() {
    let graph = fixtures::mlp(&[64; 7], 1, true);
    for (dead, seed) in [(6, 30u64), (10, 6), (10, 27), (10, 30)] {
        let target = fixtures::scatter_dead_pes(Target::dev(), dead, 0x9e37_79b9_7f4a_7c15 ^ seed);
        maps(&graph, &target);
    }
}

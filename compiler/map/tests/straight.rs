//! A chain of straight dense layers (`fixtures::straight`, std.nn's `dense_straight`: `y`
//! leaves on the side opposite `x`, split over the same rows) lies straight on: every region
//! on the same rows of the fabric as the one before, directly east of it (or directly south,
//! transposed) — where the same chain of `dense` layers turns at every layer.

use wsel_ir::graph::{LayerGraph, Mode};
use wsel_map::{MapOptions, fixtures, fusion, map};
use wsel_target::{Rect, Target};

/// Four dense layers (64 → 128 → 64 → 128 → 32), each but the last followed by a relu, fused
/// as `wsel map` fuses them; straight layers when `straight`.
fn chain(straight: bool) -> LayerGraph {
    let mut graph = fixtures::mlp(&[64, 128, 64, 128, 32], 1, true);
    if straight {
        for layer in &mut graph.layers {
            if layer.layer == "dense" {
                *layer = fixtures::straight(layer.clone());
            }
        }
    }
    fusion::fused(&graph, &fixtures::fused_twin)
}

/// The placed regions of `graph` on wse2 (room enough that nothing needs to fold).
fn regions(graph: &LayerGraph) -> Vec<Rect> {
    let result = map(
        graph,
        &Target::wse2(),
        Mode::Pipelined,
        &MapOptions::default(),
    );
    let placement = result.placement.expect("the chain maps");
    placement.layers.iter().map(|l| l.rect).collect()
}

/// Whether `q` lies directly east of `p` on the same rows, or directly south on the same
/// columns.
fn straight_on(p: Rect, q: Rect) -> bool {
    let east = q.x == p.x + p.width && q.y == p.y && q.height == p.height;
    let south = q.y == p.y + p.height && q.x == p.x && q.width == p.width;
    east || south
}

/// Whether every region lies straight on from the one before, all the same way.
fn runs_straight(rects: &[Rect]) -> bool {
    let east = |p: Rect, q: Rect| q.x == p.x + p.width;
    rects.windows(2).all(|w| straight_on(w[0], w[1]))
        && rects
            .windows(2)
            .all(|w| east(w[0], w[1]) == east(rects[0], rects[1]))
}

#[test]
fn a_chain_of_straight_denses_lies_straight_on() {
    let graph = chain(true);
    let names: Vec<&str> = graph.layers.iter().map(|l| l.layer.as_str()).collect();
    assert_eq!(
        names,
        [
            "dense_straight_relu",
            "dense_straight_relu",
            "dense_straight_relu",
            "dense_straight"
        ]
    );
    let rects = regions(&graph);
    assert!(runs_straight(&rects), "{rects:?}");
}

#[test]
fn the_same_chain_of_denses_turns() {
    let rects = regions(&chain(false));
    assert!(!runs_straight(&rects), "{rects:?}");
}

//! The band planner (`MapOptions::straight_twins`, issue #23): a chain of fused `dense + relu`
//! stages with the straight twins of std.nn's `dense_straight` laid out in bands on a small
//! made-up fabric — regions inside it, disjoint, routed and colored (the placement
//! invariants of `common`), consecutive stages adjacent or joined through a free fold
//! square — and compared with the size search's own layout of the same graph.

mod common;

use wsel_ir::graph::{LayerGraph, Mode, TensorRef};
use wsel_map::{MapOptions, Placement, fixtures, fusion, map};
use wsel_target::{Rect, Target};

/// Stage widths of the chain: ten stages, 64 → 128 → 64 → …
const WIDTHS: [u64; 11] = [64, 128, 64, 128, 64, 128, 64, 128, 64, 128, 64];

/// The chain of `widths`, each dense but the last with its relu, fused as `wsel map` fuses
/// it; every dense a `dense_straight` when `straight`.
fn chain(widths: &[u64], straight: bool) -> LayerGraph {
    let mut graph = fixtures::mlp(widths, 1, true);
    if straight {
        for layer in &mut graph.layers {
            if layer.layer == "dense" {
                *layer = fixtures::straight(layer.clone());
            }
        }
    }
    fusion::fused(&graph, &fixtures::fused_twin)
}

/// A made-up fabric of `width × height` PEs, otherwise wse2.
fn fabric(width: u32, height: u32) -> Target {
    Target {
        name: format!("made-up {width}x{height}"),
        width,
        height,
        ..Target::wse2()
    }
}

/// `graph` mapped on `target`, with `twins` as its straight twins when given.
fn mapped(graph: &LayerGraph, twins: Option<&LayerGraph>, target: &Target) -> Placement {
    let options = MapOptions {
        straight_twins: twins,
        ..MapOptions::default()
    };
    let result = map(graph, target, Mode::Pipelined, &options);
    let placement = result.placement.expect("the chain maps");
    common::check_placement(&placement, target);
    placement
}

fn bottleneck(p: &Placement) -> u64 {
    p.layers
        .iter()
        .map(|l| l.estimate.cycles)
        .max()
        .unwrap_or(0)
}

/// Whether `q` shares a side with `p` (a straight-on neighbour).
fn adjacent(p: Rect, q: Rect) -> bool {
    let rows = q.y < p.y + p.height && p.y < q.y + q.height;
    let cols = q.x < p.x + p.width && p.x < q.x + q.width;
    (rows && (q.x == p.x + p.width || p.x == q.x + q.width))
        || (cols && (q.y == p.y + p.height || p.y == q.y + q.height))
}

fn overlaps(a: Rect, b: Rect) -> bool {
    a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height
}

/// Whether `q` is fed from `p` (whose result has `parts` parts) through a fold: the two meet
/// at a corner, and the square of side `parts` beside both, in the corner between them,
/// holds no region.
fn folded(p: Rect, q: Rect, parts: u32, all: &[Rect]) -> bool {
    [
        Rect::new(q.x, p.y, q.width, p.height),
        Rect::new(p.x, q.y, p.width, q.height),
    ]
    .into_iter()
    .any(|s| {
        s.width == parts
            && s.height == parts
            && adjacent(p, s)
            && adjacent(q, s)
            && all.iter().all(|&r| !overlaps(r, s))
    })
}

#[test]
fn the_planner_lays_the_chain_in_bands_and_beats_the_search() {
    let target = fabric(96, 160);
    let (graph, twins) = (chain(&WIDTHS, false), chain(&WIDTHS, true));
    let searched = mapped(&graph, None, &target);
    let banded = mapped(&graph, Some(&twins), &target);
    assert!(
        banded.layout_reason.starts_with("the band planner"),
        "{}",
        banded.layout_reason
    );
    assert!(
        bottleneck(&banded) < bottleneck(&searched),
        "banded {} against searched {}",
        bottleneck(&banded),
        bottleneck(&searched)
    );
    let kinds: Vec<&str> = banded.layers.iter().map(|l| l.layer.as_str()).collect();
    assert!(
        kinds.iter().any(|k| k.starts_with("dense_straight")),
        "{kinds:?}"
    );
    assert!(
        kinds.iter().any(|k| k.starts_with("dense_relu")),
        "{kinds:?}"
    );
    // Consecutive stages touch, or meet at a corner around a free fold square.
    let rects: Vec<Rect> = banded.layers.iter().map(|l| l.rect).collect();
    for w in banded.layers.windows(2) {
        let (p, q) = (w[0].rect, w[1].rect);
        let parts = if w[0].layer.starts_with("dense_straight") {
            w[0].rows
        } else {
            w[0].cols
        };
        assert!(
            adjacent(p, q) || folded(p, q, parts, &rects),
            "{} {p:?} and {} {q:?}",
            w[0].name,
            w[1].name
        );
    }
    // Straights with fewer columns than rows (R % C == 0) let one turn do.
    let folds = rects.windows(2).filter(|w| !adjacent(w[0], w[1])).count();
    assert!(folds >= 1, "{rects:?}");
}

#[test]
fn without_twins_or_on_a_non_chain_nothing_changes() {
    let target = fabric(96, 160);
    let graph = chain(&WIDTHS, false);
    let plain = mapped(&graph, None, &target);
    // Twins of another graph (not the same stages): the planner declines.
    let other = chain(&WIDTHS[..5], true);
    let declined = mapped(&graph, Some(&other), &target);
    assert!(declined.layout_reason.is_empty());
    let rects = |p: &Placement| p.layers.iter().map(|l| l.rect).collect::<Vec<_>>();
    assert_eq!(rects(&declined), rects(&plain));
    // A residual block (the model's input read twice): not a chain, so no bands.
    let residual = |straight: bool| {
        let mut g = fixtures::mlp(&[64, 128, 64], 1, false);
        if straight {
            for layer in &mut g.layers {
                *layer = fixtures::straight(layer.clone());
            }
        }
        g.layers.push(fixtures::add(
            3,
            TensorRef::Input(0),
            TensorRef::Layer(1),
            64,
            1,
        ));
        g.output = TensorRef::Layer(2);
        g
    };
    let (graph, twins) = (residual(false), residual(true));
    let plain = mapped(&graph, None, &target);
    let declined = mapped(&graph, Some(&twins), &target);
    assert!(declined.layout_reason.is_empty());
    assert_eq!(rects(&declined), rects(&plain));
}

/// A dead PE: the bands lie around it (no region or fold square holds it; `common` checks
/// the regions and routes), still faster than the search's layout.
#[test]
fn the_bands_lie_around_a_dead_pe() {
    let mut target = fabric(96, 160);
    target.defects.add_dead_pe(wsel_target::Coord::new(39, 11));
    let (graph, twins) = (chain(&WIDTHS, false), chain(&WIDTHS, true));
    let searched = mapped(&graph, None, &target);
    let banded = mapped(&graph, Some(&twins), &target);
    assert!(!banded.layout_reason.is_empty());
    assert!(bottleneck(&banded) < bottleneck(&searched));
}

//! A chain of straight dense layers (`fixtures::straight`, std.nn's `dense_straight`: `y`
//! leaves on the side opposite `x`, split over the same rows) lies straight on: every region
//! on the same rows of the fabric as the one before, directly east of it (or directly south,
//! transposed) — where the same chain of `dense` layers turns at every layer. Its regions may
//! have fewer columns than rows (`R % C == 0`, the rows of a column taking turns on its bus)
//! as well as more.

use wsel_ir::graph::{CValue, LayerGraph, LayerImpl, LayerInstance, Mode, TensorRef};
use wsel_map::{MapOptions, fixtures, fusion, kernel_args, map};
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

/// A straight 384 → 128 dense (the light stage of map96), batch 1.
fn light() -> LayerInstance {
    let x = TensorRef::Input(0);
    let (w, b) = (TensorRef::Param(0), TensorRef::Param(1));
    fixtures::straight(fixtures::dense(1, x, w, b, 384, 128, 1))
}

/// The names `layer`'s expressions mention, on a `rows × cols` region (`R`, `C`).
fn env(layer: &LayerInstance, rows: i64, cols: i64) -> impl Fn(&str) -> Option<CValue> + '_ {
    move |name| match name {
        "R" => Some(CValue::Int(rows)),
        "C" => Some(CValue::Int(cols)),
        _ => layer.dims.get(name).map(|&v| CValue::Int(v as i64)),
    }
}

/// Whether every condition of `imp` holds for `layer` on `rows × cols`.
fn allows(layer: &LayerInstance, imp: &LayerImpl, rows: i64, cols: i64) -> bool {
    let env = env(layer, rows, cols);
    imp.conditions.iter().all(|c| c.eval_bool(&env) == Ok(true))
}

/// The 384 → 128 layer may take 64 × 16 (four rows a column), 32 × 1, 48 × 16 as well as
/// 64 × 64 and 16 × 64, but not 64 × 24 or 24 × 64 (neither side a multiple of the other),
/// 256 × 1 (more rows than outputs, and 256 does not divide 384) or 5 × 1 (5 does not divide
/// 384, though 1 does). On 64 × 16 the kernel runs with one column a row (k = 1) and four
/// rows a column (j = 4), a row part of 6 inputs and a column block of 24, and takes, by
/// `dense_straight_tile`'s declarations, w 24 × 2, bias, acc and part 2 each, two slots of
/// 6 + 24 and 14 scalars: 48 + 6 + 60 + 14 = 128 words.
#[test]
fn a_straight_dense_may_have_fewer_columns_than_rows() {
    let layer = light();
    let imp = &layer.impls[0];
    for (rows, cols) in [(64, 16), (64, 64), (16, 64), (32, 1), (48, 16)] {
        assert!(allows(&layer, imp, rows, cols), "{rows} x {cols}");
    }
    for (rows, cols) in [(64, 24), (256, 1), (24, 64), (5, 1)] {
        assert!(!allows(&layer, imp, rows, cols), "{rows} x {cols}");
    }
    let args = kernel_args(&layer, imp, 64, 16).expect("the arguments");
    let arg = |name: &str| args.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
    let expected = [("n", 6), ("nc", 24), ("k", 1), ("j", 4), ("m", 2)];
    for (name, value) in expected {
        assert_eq!(arg(name), Some(CValue::Int(value)), "{name}");
    }
    let words = imp.sram_words.eval_int(&env(&layer, 64, 16));
    assert_eq!(words, Ok(128));
}

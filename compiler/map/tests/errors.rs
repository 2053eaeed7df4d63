//! Mapping failures are diagnostics at the layer call with the numbers, never panics: SRAM
//! that fits no region, more colors than the routers have, a connection a wall of dead PEs
//! cuts, part counts that cannot agree, a mode without implementation. Every code is
//! documented in `docs/diagnostics.md`.

use wsel_diagnostic::Diagnostic;
use wsel_ir::graph::{BindTarget, CExpr, LayerGraph, Mode, RegionSide, Side, SplitAxis, TensorRef};
use wsel_ir::kernel::PortDirection;
use wsel_map::{MapOptions, fixtures, map};
use wsel_target::{Coord, Target};

/// Fixes a fixture layer's region at `rows × cols` (with constant kernel arguments and SRAM).
fn fix_size(layer: &mut wsel_ir::graph::LayerInstance, rows: i64, cols: i64) {
    let imp = &mut layer.impls[0];
    imp.rows = RegionSide::Fixed(CExpr::Int(rows));
    imp.cols = RegionSide::Fixed(CExpr::Int(cols));
    imp.conditions.clear();
    imp.kernel_args = vec![("n".into(), CExpr::Int(4)), ("m".into(), CExpr::Int(2))];
    imp.sram_words = CExpr::Int(64);
}

fn only_error(graph: &LayerGraph, target: &Target, mode: Mode) -> Diagnostic {
    let result = map(graph, target, mode, &MapOptions::default());
    assert!(result.placement.is_none(), "mapped unexpectedly");
    assert!(!result.diagnostics.is_empty());
    result.diagnostics[0].clone()
}

#[test]
fn sram_that_fits_no_region_on_dev() {
    // A 2048 × 2048 dense layer: even 16 × 16 PEs need 16 K words each.
    let graph = fixtures::mlp(&[2048, 2048], 1, false);
    let d = only_error(&graph, &Target::dev(), Mode::Pipelined);
    assert_eq!(d.code, "E0601");
    assert!(d.message.contains("dense#1"), "{}", d.message);
    assert!(d.message.contains("4096"), "{}", d.message);
    // 2048/16 · 2048/16 + 3 · 128 + 128 + 1 words at 16 × 16.
    let words = 128 * 128 + 3 * 128 + 128 + 1;
    assert!(
        d.message.contains(&format!("{} bytes", words * 4)),
        "{}",
        d.message
    );
    assert_eq!(d.primary.location.span, graph.layers[0].call.span);
}

#[test]
fn too_many_colors() {
    // A layer with 13 pairs of neighbour ports needs 26 colors; the target has 24.
    let mut graph = fixtures::mlp(&[16, 16], 1, true);
    graph
        .layers
        .push(fixtures::relu(9, TensorRef::Layer(0), 16, 1));
    graph.output = TensorRef::Layer(1);
    let imp = &mut graph.layers[1].impls[0];
    for k in 0..12 {
        imp.ports.push(fixtures::port(
            &format!("extra_in{k}"),
            PortDirection::In,
            Side::North,
            false,
        ));
        imp.ports.push(fixtures::port(
            &format!("extra_out{k}"),
            PortDirection::Out,
            Side::South,
            false,
        ));
    }
    let d = only_error(&graph, &Target::dev(), Mode::Pipelined);
    assert_eq!(d.code, "E0602");
    assert!(d.message.contains("26 colors"), "{}", d.message);
    assert!(d.message.contains("has 24"), "{}", d.message);
    assert!(d.message.contains("relu#9"), "{}", d.message);
}

#[test]
fn a_wall_of_dead_pes_cuts_the_input() {
    // A dense layer fixed at 16 × 8 PEs fits only east of a dead column at x = 1 (its
    // transposed shape, 16 wide, cannot avoid the wall), but its input enters from the west:
    // between the wall and the region, the middle parts find no way from any edge.
    let mut graph = fixtures::mlp(&[64, 16], 1, false);
    fix_size(&mut graph.layers[0], 16, 8);
    let mut target = Target::dev();
    for y in 0..target.height {
        target.defects.add_dead_pe(Coord::new(1, y));
    }
    let d = only_error(&graph, &target, Mode::Pipelined);
    assert_eq!(d.code, "E0603", "{d:?}");
    assert!(d.message.contains("`x`"), "{}", d.message);
    assert!(d.message.contains("fabric's edge"), "{}", d.message);
}

#[test]
fn part_counts_that_cannot_agree() {
    // dense#1's 4 outputs split over its columns (1, 2 or 4 parts); the relu is fixed at 3.
    let mut graph = fixtures::mlp(&[8, 4], 1, false);
    let mut relu = fixtures::relu(1, TensorRef::Layer(0), 4, 1);
    relu.impls[0].cols = RegionSide::Fixed(CExpr::Int(3));
    relu.impls[0].conditions.clear();
    graph.layers.push(relu);
    graph.output = TensorRef::Layer(1);
    let d = only_error(&graph, &Target::dev(), Mode::Pipelined);
    assert_eq!(d.code, "E0604", "{d:?}");
    assert!(d.message.contains("relu#1"), "{}", d.message);
    assert!(d.message.contains("{3}"), "{}", d.message);
}

#[test]
fn a_split_on_the_wrong_side() {
    let mut graph = fixtures::mlp(&[8, 4], 1, false);
    graph.layers[0].impls[0].binds[2] =
        fixtures::bind("x", BindTarget::Port, "xs", &[SplitAxis::Cols]);
    let d = only_error(&graph, &Target::dev(), Mode::Pipelined);
    assert_eq!(d.code, "E0609", "{d:?}");
}

#[test]
fn a_mode_without_implementation() {
    let mut graph = fixtures::mlp(&[8, 4], 1, false);
    graph.layers[0].impls.truncate(1);
    let d = only_error(&graph, &Target::dev(), Mode::Streaming);
    assert_eq!(d.code, "E0606");
    assert!(d.message.contains("streaming"), "{}", d.message);
}

#[test]
fn streamed_layers_must_leave_activations_where_the_next_takes_them() {
    // A relu whose streaming implementation takes its input through a port, fed by a dense
    // that leaves its result in SRAM.
    let mut graph = fixtures::mlp(&[8, 4], 2, false);
    let mut relu = fixtures::relu(1, TensorRef::Layer(0), 4, 2);
    relu.impls[0].modes.push(Mode::Streaming);
    relu.impls.truncate(1);
    graph.layers.push(relu);
    graph.output = TensorRef::Layer(1);
    let d = only_error(&graph, &Target::dev(), Mode::Streaming);
    assert_eq!(d.code, "E0611", "{d:?}");
    assert!(d.message.contains("relu#1"), "{}", d.message);
    assert!(d.message.contains("port"), "{}", d.message);
    // The same, split another way: the relu takes its block features-over-columns.
    let mut graph = fixtures::mlp(&[8, 4], 2, false);
    let mut relu = fixtures::relu(1, TensorRef::Layer(0), 4, 2);
    for b in &mut relu.impls[1].binds {
        b.split = vec![SplitAxis::Rows, SplitAxis::Cols];
    }
    graph.layers.push(relu);
    graph.output = TensorRef::Layer(1);
    let d = only_error(&graph, &Target::dev(), Mode::Streaming);
    assert_eq!(d.code, "E0611", "{d:?}");
    assert!(d.message.contains("split another way"), "{}", d.message);
}

#[test]
fn a_streamed_working_set_larger_than_the_fabric() {
    // dense 64 → 2048 at batch 4096 on dev: even on all 16 × 16 PEs a PE holds 256 samples
    // of 4 inputs and 4 · 128 outputs' buffers: far beyond 4 KiB.
    let graph = fixtures::mlp(&[64, 2048], 4096, false);
    let d = only_error(&graph, &Target::dev(), Mode::Streaming);
    assert_eq!(d.code, "E0612", "{d:?}");
    assert!(d.message.contains("dense#1"), "{}", d.message);
    assert!(d.message.contains("16 × 16"), "{}", d.message);
    assert!(d.message.contains("4096"), "{}", d.message);
}

#[test]
fn a_weight_store_too_small_for_the_model() {
    // Two 64 × 64 dense layers: 16,640 bytes each with the bias; the store holds 20,000.
    let graph = fixtures::mlp(&[64, 64, 64], 2, false);
    let mut target = Target::dev();
    target.weight_store.capacity_bytes = 20_000;
    let d = only_error(&graph, &target, Mode::Streaming);
    assert_eq!(d.code, "E0613", "{d:?}");
    assert!(d.message.contains("dense#2"), "{}", d.message);
    assert!(d.message.contains("33280 bytes"), "{}", d.message);
    assert!(d.message.contains("holds 20000"), "{}", d.message);
    assert_eq!(d.primary.location.span, graph.layers[1].call.span);
}

#[test]
fn a_streamed_weight_bound_to_an_array() {
    let mut graph = fixtures::mlp(&[8, 4], 2, false);
    graph.layers[0].impls[1].binds[2].target = BindTarget::Array;
    let d = only_error(&graph, &Target::dev(), Mode::Streaming);
    assert_eq!(d.code, "E0614", "{d:?}");
    assert!(d.message.contains("`b`"), "{}", d.message);
}

#[test]
fn a_model_larger_than_the_fabric() {
    // Five 8 × 8 layers cannot share a 16 × 16 fabric.
    let mut graph = fixtures::mlp(&[256; 6], 1, false);
    for l in &mut graph.layers {
        fix_size(l, 8, 8);
    }
    let result = map(
        &graph,
        &Target::dev(),
        Mode::Pipelined,
        &MapOptions::default(),
    );
    assert!(result.placement.is_none());
    let codes: Vec<&str> = result.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["E0607"], "{:#?}", result.diagnostics);
}

#[test]
fn every_code_is_documented() {
    let doc = include_str!("../../../docs/diagnostics.md");
    for (code, _) in wsel_map::codes() {
        assert!(
            doc.contains(code),
            "{code} is missing from docs/diagnostics.md"
        );
    }
}

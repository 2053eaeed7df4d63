//! Balanced stages: in a chain of layers whose costs differ by 10×, the size search gives the
//! heavy layers more PEs, so that the bottleneck stage's estimate stays within 25% of the
//! mean stage when the fabric has enough PEs.

mod common;

use wsel_ir::graph::Mode;
use wsel_map::{MapOptions, fixtures, map, report};
use wsel_target::Target;

/// A 64 × 64 fabric with WSE-2's PEs: room for every layer to grow.
fn roomy() -> Target {
    let mut t = Target::wse2();
    t.width = 64;
    t.height = 64;
    t
}

#[test]
fn stages_whose_costs_differ_tenfold_are_balanced() {
    // dense 64→64 (4,096 multiply-adds), 64→640 and 640→64 (40,960 each), 64→64.
    let graph = fixtures::mlp(&[64, 64, 640, 64, 64], 1, false);
    let costs: Vec<u64> = graph.layers.iter().map(|l| l.cost.flops).collect();
    assert!(
        costs[1] >= 9 * costs[0] && costs[2] >= 9 * costs[3],
        "{costs:?}"
    );
    let target = roomy();
    let result = map(&graph, &target, Mode::Pipelined, &MapOptions::default());
    let p = result.placement.expect("maps");
    common::check_placement(&p, &target);
    let cycles: Vec<u64> = p.layers.iter().map(|l| l.estimate.cycles).collect();
    let bottleneck = *cycles.iter().max().unwrap_or(&0) as f64;
    let mean = cycles.iter().sum::<u64>() as f64 / cycles.len() as f64;
    assert!(
        bottleneck <= 1.25 * mean,
        "bottleneck {bottleneck} vs mean {mean}:\n{}",
        report::render(&p)
    );
    // The heavy layers got the PEs.
    let pes: Vec<u64> = p.layers.iter().map(|l| l.pe_count()).collect();
    assert!(pes[1] >= 5 * pes[0] && pes[2] >= 5 * pes[3], "{pes:?}");
    // And `wsel map`'s table says so.
    let text = report::render(&p);
    assert!(text.contains("bottleneck:"), "{text}");
    assert!(
        text.contains("1.00× the mean") || text.contains("× the mean"),
        "{text}"
    );
}

#[test]
fn a_small_fabric_limits_the_balance_but_still_maps() {
    // On `dev` the heavy layers cannot grow enough; the mapping still succeeds.
    let graph = fixtures::mlp(&[64, 64, 640, 64, 64], 1, false);
    let mut target = Target::dev();
    target.sram_bytes = 48 * 1024;
    let result = map(&graph, &target, Mode::Pipelined, &MapOptions::default());
    let p = result.placement.expect("maps");
    common::check_placement(&p, &target);
    let light = p.layers[0].estimate.cycles;
    let heavy = p.layers[1].estimate.cycles;
    assert!(heavy >= light, "{}", report::render(&p));
}

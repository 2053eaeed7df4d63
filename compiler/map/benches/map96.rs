//! Benchmark: map a generated 96-layer model (48 `dense` layers of widths 128–1024, each
//! followed by a `relu`) onto the full WSE-2 fabric (750 × 994 PEs), pipelined — without
//! defects, with 50 dead PEs and with 1% of the PEs dead (7,455), scattered pseudo-randomly.
//! Prints the median
//! of several runs and the placement's figures: the live PEs in regions, and the bottleneck
//! stage against the mean stage. Run with `cargo bench -p wsel-map --bench map96`;
//! `MAP96_DEAD=7455` (or 0, 50) runs only that case, `MAP96_RUNS=n` times instead of 7;
//! `MAP96_SVG=path` writes the last case's placement as SVG. Each case also prints the size
//! ladder: the PEs the least-area sizes take at each stage target (`wsel_map::size_ladder`).
//! Each `dense` and its `relu` are fused into one stage (`wsel_map::fusion`, as `wsel map`
//! does: 48 stages); `MAP96_FUSE=0` maps the 96 layers apart (`wsel map --no-fuse`).
//! `MAP96_DENSE=straight` makes every `dense` std.nn's `dense_straight` (`fixtures::straight`:
//! its result leaves on the side opposite its input), fused with its relu into
//! `dense_straight_relu`; with it, `MAP96_TURN=k` keeps every k-th `dense` a `dense` (a
//! region that turns the chain, and whose columns set the next straight run's rows).
//! `MAP96_DENSE=choose` maps the `dense` graph with the `dense_straight` graph as its straight
//! twins (`MapOptions::straight_twins`): the band planner lays the chain out in bands of
//! straight stages turned by `dense` ones, where that beats the search's layout.

use std::time::{Duration, Instant};

use wsel_ir::graph::{Mode, TensorRef};
use wsel_map::{MapOptions, fixtures, fusion, map, report, size_ladder};
use wsel_target::Target;

const RUNS: usize = 7;
/// Dead PEs scattered over the fabric in the later runs: 50, and 1% of wse2's.
const DEAD: [usize; 2] = [50, 7_455];

fn model(straight: bool) -> wsel_ir::graph::LayerGraph {
    let cycle = [256u64, 512, 1024, 384, 128, 768];
    let widths: Vec<u64> = (0..49).map(|i| cycle[i % cycle.len()]).collect();
    let mut graph = fixtures::mlp(&widths, 1, true);
    if straight {
        let turn: usize = std::env::var("MAP96_TURN")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let denses = graph.layers.iter_mut().filter(|l| l.layer == "dense");
        for (i, layer) in denses.enumerate() {
            if turn == 0 || (i + 1) % turn != 0 {
                *layer = fixtures::straight(layer.clone());
            }
        }
    }
    let last = graph.layers.len() - 1;
    let n = *widths.last().unwrap_or(&1);
    graph
        .layers
        .push(fixtures::relu(48, TensorRef::Layer(last), n, 1));
    graph.output = TensorRef::Layer(last + 1);
    graph
}

fn main() {
    let dense = std::env::var("MAP96_DENSE").unwrap_or_default();
    let (straight, choose) = (dense == "straight", dense == "choose");
    let apart = std::env::var("MAP96_FUSE").is_ok_and(|v| v == "0");
    let stages = |straight: bool| {
        let graph = model(straight);
        assert_eq!(graph.layers.len(), 96);
        match apart {
            true => graph,
            false => fusion::fused(&graph, &fixtures::fused_twin),
        }
    };
    let graph = stages(straight);
    let twins = choose.then(|| stages(true));
    println!(
        "map96: {} stages ({}{})",
        graph.layers.len(),
        match apart {
            true => "every layer apart, MAP96_FUSE=0",
            false => "each dense fused with its relu",
        },
        match (straight, choose) {
            (true, _) => "; dense_straight, MAP96_DENSE=straight",
            (_, true) => "; dense with dense_straight twins, MAP96_DENSE=choose",
            _ => "",
        }
    );
    let options = MapOptions {
        straight_twins: twins.as_ref(),
        ..MapOptions::default()
    };
    let only: Option<usize> = std::env::var("MAP96_DEAD")
        .ok()
        .and_then(|v| v.parse().ok());
    if only.is_none_or(|d| d == 0) {
        run(&graph, Target::wse2(), "no defects", &options);
    }
    for dead in DEAD {
        if only.is_some_and(|d| d != dead) {
            continue;
        }
        let defective = fixtures::scatter_dead_pes(Target::wse2(), dead, 0x2545_f491_4f6c_dd1d);
        run(&graph, defective, &format!("{dead} dead PEs"), &options);
    }
}

fn run(graph: &wsel_ir::graph::LayerGraph, target: Target, what: &str, options: &MapOptions) {
    let runs: usize = std::env::var("MAP96_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(RUNS)
        .max(1);
    let mut times: Vec<Duration> = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let result = map(graph, &target, Mode::Pipelined, options);
        times.push(start.elapsed());
        last = Some(result);
    }
    times.sort();
    let median = times[runs / 2];
    let Some(result) = last else { return };
    let Some(placement) = result.placement else {
        println!(
            "map96: {} stages onto {} ({what}): no placement after a median {:.1} ms over {runs} runs (min {:.1} ms, max {:.1} ms): {}",
            graph.layers.len(),
            target.name,
            median.as_secs_f64() * 1e3,
            times[0].as_secs_f64() * 1e3,
            times[runs - 1].as_secs_f64() * 1e3,
            result
                .diagnostics
                .first()
                .map_or("no diagnostic", |d| d.message.as_str())
        );
        return;
    };
    let live = placement.live_pes();
    let stages: Vec<u64> = placement.layers.iter().map(|l| l.estimate.cycles).collect();
    let mean = stages.iter().sum::<u64>() as f64 / stages.len().max(1) as f64;
    let bottleneck = stages.iter().copied().max().unwrap_or(0);
    println!(
        "map96: {} stages onto {} ({} × {} PEs, {what}): median {:.1} ms over {runs} runs (min {:.1} ms, max {:.1} ms)",
        graph.layers.len(),
        target.name,
        target.width,
        target.height,
        median.as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3,
        times[runs - 1].as_secs_f64() * 1e3,
    );
    println!(
        "  PEs in regions: {} of {} live ({:.1}%); bottleneck {} cycles/sample, mean stage {:.0} ({:.2}× the mean)",
        report::group(placement.pes_used()),
        report::group(live),
        100.0 * placement.pes_used() as f64 / live.max(1) as f64,
        report::group(bottleneck),
        mean,
        bottleneck as f64 / mean.max(1.0)
    );
    if let Ok(path) = std::env::var("MAP96_SVG") {
        let svg = wsel_map::svg::render(&placement, wsel_map::svg::SvgOptions::default());
        if let Err(e) = std::fs::write(&path, svg) {
            println!("  cannot write {path}: {e}");
        }
    }
    print_ladder(graph, &target, live);
    let text = report::render(&placement);
    let tail = if placement.layout_reason.is_empty() {
        2
    } else {
        3
    };
    for line in text
        .lines()
        .rev()
        .take(tail)
        .collect::<Vec<_>>()
        .iter()
        .rev()
    {
        println!("  {line}");
    }
}

/// The size ladder's rungs from a tenth of the live PEs up to the first that exceeds them: the
/// fills the search can reach at all.
fn print_ladder(graph: &wsel_ir::graph::LayerGraph, target: &Target, live: u64) {
    let Ok(ladder) = size_ladder(graph, target, Mode::Pipelined, &MapOptions::default()) else {
        return;
    };
    let first_over = ladder.iter().rposition(|s| s.pes > live);
    let rungs: Vec<String> = ladder
        .iter()
        .enumerate()
        .filter(|&(i, s)| 10 * s.pes >= live && (s.pes <= live || Some(i) == first_over))
        .map(|(_, s)| {
            format!(
                "{}: {} ({:.1}%)",
                s.stage_target,
                report::group(s.pes),
                100.0 * s.pes as f64 / live.max(1) as f64
            )
        })
        .collect();
    println!(
        "  size ladder (stage target: least-area PEs): {}",
        rungs.join(", ")
    );
}

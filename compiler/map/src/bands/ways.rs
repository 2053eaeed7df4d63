//! What each stage of a chain may be in a band plan, from the size search's own candidate
//! tables (`search::Problem`), so plans are ranked by the estimate the report shows: a
//! straight (the twin graph's layer, input west and result east on the same rows) of each
//! band height and length, or a turning tile (the main graph's layer, input west and result
//! south) of each band height and next band height.

use wsel_ir::graph::{LayerGraph, Side, TensorRef};

use super::dp::UNIT;
use crate::ports::ImplPlan;
use crate::search::Problem;

/// One stage's ways, in units: `straights[hi]` the `(length, cycles)` of a straight of the
/// band height `heights[hi]`, `tiles[hi][h2i]` the cycles of a tile `heights[hi]` parts in,
/// `heights[h2i]` out.
pub(crate) struct StageWays {
    pub straights: Vec<Vec<(u32, u64)>>,
    pub tiles: Vec<Vec<Option<u64>>>,
}

/// Whether `twins` is `graph` with some layers replaced: the same stages reading the same
/// tensors.
pub(crate) fn same_stages(graph: &LayerGraph, twins: &LayerGraph) -> bool {
    graph.layers.len() == twins.layers.len()
        && graph.inputs == twins.inputs
        && graph.output == twins.output
        && graph
            .layers
            .iter()
            .zip(&twins.layers)
            .all(|(a, b)| a.args == b.args)
}

/// The sides a layer's chain input and result lie on (its implementation's ports).
pub(crate) fn chain_sides(problem: &Problem<'_>, l: usize) -> Option<(Side, Side)> {
    let plan: &ImplPlan = &problem.layers[l].plan;
    let layer = &problem.graph.layers[l];
    let arg = layer
        .args
        .iter()
        .position(|a| !matches!(a, TensorRef::Param(_)))?;
    let input = plan.arg_ports(arg).next()?;
    let output = plan.output_port()?;
    Some((plan.ports[input].side, plan.ports[output].side))
}

/// The band heights (units) the straights of `twins` allow anywhere in the chain, ascending.
pub(crate) fn heights(twins: &Problem<'_>) -> Vec<u32> {
    let mut heights: Vec<u32> = (0..twins.layers.len())
        .filter(|&l| chain_sides(twins, l) == Some((Side::West, Side::East)))
        .flat_map(|l| twins.sizes(l))
        .filter(|&(r, _)| r % UNIT == 0)
        .map(|(r, _)| r / UNIT)
        .collect();
    heights.sort_unstable();
    heights.dedup();
    heights
}

/// Every stage's ways over `heights`: straights from `twins` where its layer runs straight,
/// tiles from `main` where its layer turns.
pub(crate) fn stage_ways(
    main: &Problem<'_>,
    twins: &Problem<'_>,
    heights: &[u32],
) -> Vec<StageWays> {
    (0..main.layers.len())
        .map(|l| {
            let straight = chain_sides(twins, l) == Some((Side::West, Side::East));
            let turning = chain_sides(main, l) == Some((Side::West, Side::South));
            let straights = heights
                .iter()
                .map(|&h| match straight {
                    true => lengths(twins, l, h),
                    false => Vec::new(),
                })
                .collect();
            let tiles = heights
                .iter()
                .map(|&h| {
                    heights
                        .iter()
                        .map(|&h2| {
                            let cand = main.candidate_sized(l, h * UNIT, h2 * UNIT);
                            cand.filter(|_| turning).map(|c| c.estimate.cycles)
                        })
                        .collect()
                })
                .collect();
            StageWays { straights, tiles }
        })
        .collect()
}

/// The `(length, cycles)` of every candidate of layer `l` with `R = h` units and a whole
/// number of units along the band.
fn lengths(twins: &Problem<'_>, l: usize, h: u32) -> Vec<(u32, u64)> {
    twins
        .sizes(l)
        .filter(|&(r, c)| r == h * UNIT && c % UNIT == 0)
        .filter_map(|(r, c)| {
            let cand = twins.candidate_sized(l, r, c)?;
            Some((c / UNIT, cand.estimate.cycles))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MapOptions, fixtures, fusion};
    use wsel_ir::graph::Mode;
    use wsel_target::Target;

    /// map96's first six stages (`benches/map96.rs`) fused, as `dense` or `dense_straight`.
    fn stages(straight: bool) -> LayerGraph {
        let mut graph = fixtures::mlp(&[256, 512, 1024, 384, 128, 768, 256], 1, true);
        for layer in graph.layers.iter_mut().filter(|l| l.layer == "dense") {
            if straight {
                *layer = fixtures::straight(layer.clone());
            }
        }
        fusion::fused(&graph, &fixtures::fused_twin)
    }

    /// The ways' estimates are the size search's, which for these stages are
    /// `benches/plan96.py`'s formulas (hand-derived there from `estimate.rs`): with `work` the
    /// multiply-adds and the fused relu, a tile `N/R + ⌈work/(R C)⌉ + M/C` and a straight
    /// `N/R + ⌈work/(R C)⌉ + ⌈M/R⌉`. The first stage, paced by the host, is left out.
    #[test]
    fn the_ways_estimates_are_plan96s_formulas() {
        let (main, twins) = (stages(false), stages(true));
        let target = Target::wse2();
        let options = MapOptions::default();
        let build =
            |g| Problem::build(g, &target, Mode::Pipelined, &options, None, &mut Vec::new());
        let (Some(main), Some(twins)) = (build(&main), build(&twins)) else {
            panic!("the stages have candidates");
        };
        let heights = heights(&twins);
        assert!(heights.contains(&8) && heights.contains(&16), "{heights:?}");
        let ways = stage_ways(&main, &twins, &heights);
        let widths = [256u64, 512, 1024, 384, 128, 768, 256];
        let mut checked = 0;
        for (l, w) in ways.iter().enumerate().skip(1) {
            let (n, m) = (widths[l], widths[l + 1]);
            let work = n * m + if l + 1 < ways.len() { m } else { m / 2 };
            let body = |r: u64, c: u64| n / r + work.div_ceil(r * c);
            for (hi, &h) in heights.iter().enumerate() {
                let r = u64::from(h * UNIT);
                for &(c, cycles) in &w.straights[hi] {
                    let c = u64::from(c * UNIT);
                    assert_eq!(cycles, body(r, c) + m.div_ceil(r), "straight {l} {r}x{c}");
                    checked += 1;
                }
                for (h2i, &h2) in heights.iter().enumerate() {
                    let c = u64::from(h2 * UNIT);
                    if let Some(cycles) = w.tiles[hi][h2i] {
                        assert_eq!(cycles, body(r, c) + m / c, "tile {l} {r}x{c}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }
}

//! The size ladder (`docs/mapping.md` §5): for every per-stage target at which the size
//! search's least-area sizes change, those sizes' PEs. The binary search over targets asks the
//! placer for one rung of this ladder at a time, so it shows, before anything is placed, how
//! much of the fabric a faster pipeline needs to fill: the fill a mapping can reach is one of
//! its rungs.

use wsel_diagnostic::Diagnostic;
use wsel_ir::graph::{LayerGraph, Mode};
use wsel_target::Target;

use crate::MapOptions;
use crate::search::{self, Problem};

/// One rung: at per-stage targets from `stage_target` up to the next rung's, the least-area
/// sizes take `pes` PEs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LadderStep {
    /// Cycles per sample every stage must keep within.
    pub stage_target: u64,
    /// PEs in regions at the least-area sizes for that target.
    pub pes: u64,
}

/// The size ladder of one copy of `graph` on `target` in `mode`, tightest target first (most
/// PEs first); the diagnostics when the layers have no candidate sizes.
pub fn size_ladder(
    graph: &LayerGraph,
    target: &Target,
    mode: Mode,
    options: &MapOptions,
) -> Result<Vec<LadderStep>, Vec<Diagnostic>> {
    let mut diagnostics = Vec::new();
    let Some(problem) = Problem::build(graph, target, mode, options, None, &mut diagnostics) else {
        return Err(diagnostics);
    };
    Ok(search::ladder(&problem)
        .into_iter()
        .map(|(stage_target, pes)| LadderStep { stage_target, pes })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{fixtures, map};

    /// The rungs are ordered both ways (tighter targets need more PEs), and the mapping the
    /// search settles on takes at least the PEs of the rung its bottleneck stage stands on
    /// (more when the least-area sizes could not be placed and larger ones were), and fewer
    /// than the next tighter rung's.
    #[test]
    fn the_mapping_stands_on_a_rung() {
        let graph = fixtures::mlp(&[64, 32, 16], 1, true);
        let target = Target::dev();
        let options = MapOptions::default();
        let ladder = size_ladder(&graph, &target, Mode::Pipelined, &options).expect("sizes");
        assert!(ladder.len() > 2, "{ladder:?}");
        for w in ladder.windows(2) {
            assert!(w[0].stage_target < w[1].stage_target, "{ladder:?}");
            assert!(w[0].pes > w[1].pes, "{ladder:?}");
        }
        let placement = map(&graph, &target, Mode::Pipelined, &options)
            .placement
            .expect("maps");
        let bottleneck = placement.layers.iter().map(|l| l.estimate.cycles).max();
        let at = ladder
            .iter()
            .rposition(|s| Some(s.stage_target) <= bottleneck)
            .expect("a rung at or below the bottleneck");
        let used = placement.pes_used();
        assert!(used >= ladder[at].pes, "{used} PEs, {ladder:?}");
        assert!(
            at == 0 || used < ladder[at - 1].pes,
            "{used} PEs, {ladder:?}"
        );
    }

    #[test]
    fn a_layer_without_sizes_has_no_ladder() {
        // 1 × 2 PEs cannot hold the dense layer's weights.
        let graph = fixtures::mlp(&[4096, 4096], 1, false);
        let mut target = Target::dev();
        target.width = 1;
        target.height = 2;
        let found = size_ladder(&graph, &target, Mode::Pipelined, &MapOptions::default());
        assert!(found.is_err_and(|d| !d.is_empty()));
    }
}

//! Pipelined mapping's way back from fusion (`docs/mapping.md` §4, "Fusion"). The model is
//! mapped fused first ([`crate::pipeline::pipelined`]); when that graph does not place (a
//! fused stage's region finds no room among the others, its SRAM does not fit) and the graph
//! with every layer apart does, the latter is kept, with the kernels' work measured on its own
//! layers, and the mode's reason says so. A model that maps fused is never mapped twice.

use wsel_ir::graph::{LayerGraph, Mode};
use wsel_map::{Copies, KernelWork, MapOptions, Mapped};
use wsel_sema::Diagnostic;
use wsel_target::Target;

/// A lowering of the model's graph another way (the type of [`crate::pipeline::Lowerings`]'
/// graph transformations).
pub type Lowering<'a> = dyn Fn(&LayerGraph) -> Result<LayerGraph, Vec<Diagnostic>> + 'a;

/// The model as pipelined mode maps it with every layer apart, for when the fused graph does
/// not place.
pub struct Unfused<'a> {
    /// The graph relayed without fusion ([`crate::pipeline::pipelined`] with `fuse` false).
    pub relayed: &'a Lowering<'a>,
    /// The kernels' work measured on that graph's layers (the fused graph's `work` indexes
    /// other layers).
    pub work: &'a dyn KernelWork,
}

/// What pipelined mapping lowers and measures: the graph for a copy's share of the batch,
/// the (fused) relayed graph, and the way back without fusion (`None` with `--no-fuse`).
pub struct PipelinedLowerings<'l, 'a> {
    pub per_copy: &'l mut dyn FnMut(u64) -> Result<LayerGraph, Vec<Diagnostic>>,
    pub relayed: &'a Lowering<'a>,
    pub unfused: Option<&'l Unfused<'a>>,
}

/// Maps `graph` pipelined as `lowerings.relayed` makes it, else, when that does not place,
/// as `lowerings.unfused` makes it: the mapping, and with the latter, one sentence on why.
/// With pinned `options.sizes` (the defect-free mapping's, `crate::defects`) only the graph
/// they were chosen for, the one with as many layers, is tried.
pub fn map_pipelined(
    graph: &LayerGraph,
    lowerings: PipelinedLowerings<'_, '_>,
    target: &Target,
    options: &MapOptions<'_>,
    copies: Copies,
) -> Result<(Mapped, Option<String>), Vec<Diagnostic>> {
    let PipelinedLowerings {
        per_copy,
        relayed,
        unfused,
    } = lowerings;
    let mut map = |relayed: &Lowering<'_>, whole: LayerGraph, options: &MapOptions<'_>| {
        let mut share = |b: u64| relayed(&per_copy(b)?);
        let mapped =
            wsel_map::map_batch(&whole, &mut share, target, Mode::Pipelined, options, copies);
        Ok::<_, Vec<Diagnostic>>(mapped)
    };
    let fused_graph = relayed(graph)?;
    let sized_for = |g: &LayerGraph| options.sizes.is_none_or(|s| s.len() == g.layers.len());
    let Some(unfused) = unfused else {
        return Ok((map(relayed, fused_graph, options)?, None));
    };
    let apart_graph = (unfused.relayed)(graph)?;
    if apart_graph.layers.len() == fused_graph.layers.len() {
        // Nothing fused: the two graphs are one.
        return Ok((map(relayed, fused_graph, options)?, None));
    }
    let apart_options = MapOptions {
        work: Some(unfused.work),
        ..*options
    };
    if !sized_for(&fused_graph) {
        return Ok((map(unfused.relayed, apart_graph, &apart_options)?, None));
    }
    let fused = map(relayed, fused_graph, options)?;
    if fused.result.placement.is_some() || !sized_for(&apart_graph) {
        return Ok((fused, None));
    }
    let apart = map(unfused.relayed, apart_graph, &apart_options)?;
    if apart.result.placement.is_none() {
        // Neither places: the fused graph's problems are the ones a user meets first.
        return Ok((fused, None));
    }
    let why = fused
        .result
        .diagnostics
        .first()
        .map_or_else(String::new, |d| format!(" ({})", d.message));
    let note = format!(
        "the fused stages did not place{why}, so every layer has a stage of its own as with \
         --no-fuse"
    );
    Ok((apart, Some(note)))
}

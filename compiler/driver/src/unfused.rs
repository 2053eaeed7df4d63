//! Pipelined mapping's choice between fused and apart (`docs/mapping.md` §4, "Fusion"). When
//! fusion changed the graph ([`crate::pipeline::pipelined`]), the model is mapped both fused
//! and with every layer apart, the latter with the kernels' work measured on its own layers,
//! and the mapping estimated faster for the batch is kept (on a tie the fused one, with fewer
//! stages), or the one that places when the other does not (a fused stage's region finds no
//! room among the others, its SRAM does not fit). The mode's reason says which and why:
//! fusion saves a stage and its hop, but the fused stage does two layers' work in one region
//! and may be the slower bottleneck (digits on `wse2`: 72 fused copies of 5 stages are
//! estimated 3.5% slower than 60 copies of 6 apart, and simulate 6.3% slower).

use wsel_ir::graph::{LayerGraph, Mode};
use wsel_map::report::group;
use wsel_map::{Copies, KernelWork, MapOptions, Mapped, Placement};
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

/// Maps `graph` pipelined as `lowerings.relayed` makes it and, when that fused layers, as
/// `lowerings.unfused` makes it too, keeping the mapping whose estimated batch cycles are
/// lower (on a tie the fused one, with fewer stages): the mapping, and one sentence on the
/// choice. With pinned `options.sizes` (the defect-free mapping's, `crate::defects`) only the
/// graph they were chosen for, the one with as many layers, is mapped.
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
    if !sized_for(&apart_graph) {
        return Ok((fused, None));
    }
    let apart = map(unfused.relayed, apart_graph, &apart_options)?;
    Ok(keep_faster(fused, apart))
}

/// The better of the fused and the unfused mapping: the one that places, or of two that do,
/// the one estimated faster (the fused one on a tie); with the sentence that says why. When
/// neither places, the fused graph's problems are the ones a user meets first.
fn keep_faster(fused: Mapped, apart: Mapped) -> (Mapped, Option<String>) {
    let (f, a) = match (&fused.result.placement, &apart.result.placement) {
        (_, None) => return (fused, None),
        (None, Some(_)) => {
            let why = fused
                .result
                .diagnostics
                .first()
                .map_or_else(String::new, |d| format!(" ({})", d.message));
            let note = format!(
                "the fused stages did not place{why}, so every layer has a stage of its own \
                 as with --no-fuse"
            );
            return (apart, Some(note));
        }
        (Some(f), Some(a)) => (f, a),
    };
    let shape = |p: &Placement| {
        let stages = p.layers.len() / p.copies.max(1) as usize;
        format!(
            "{}, {}, estimated {} cycles",
            counted(stages as u64, "stage"),
            counted(u64::from(p.copies), "copy"),
            group(p.estimated_cycles)
        )
    };
    if a.estimated_cycles < f.estimated_cycles {
        let note = format!(
            "every layer apart as with --no-fuse: {}, against fused {}",
            shape(a),
            shape(f)
        );
        (apart, Some(note))
    } else {
        let note = format!("fused: {}, against apart {}", shape(f), shape(a));
        (fused, Some(note))
    }
}

/// `n` and the noun, plural unless one: "1 stage", "60 copies".
fn counted(n: u64, noun: &str) -> String {
    match (n, noun.strip_suffix('y')) {
        (1, _) => format!("1 {noun}"),
        (_, Some(stem)) => format!("{} {stem}ies", group(n)),
        (_, None) => format!("{} {noun}s", group(n)),
    }
}

//! What the language server says about one layer call in a model: the shapes it binds, its
//! result, the layer's cost entries evaluated at those shapes, and how the call maps onto the
//! default target (`wsel-map` on a `wsel-target` machine description, with the kernels' work
//! measured by the dry runs `wsel map` uses, `wsel-estimate`; never the simulator).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use wsel_estimate::{KernelDryRuns, MeasuredWork};
use wsel_ir::graph::{LayerGraph, Mode};
use wsel_map::{KernelWork, MapOptions, MapResult};
use wsel_sema::analysis::CallBinding;
use wsel_sema::items::{ItemId, ItemKind, item_ast, item_index, module_scope};
use wsel_sema::ty::Dim;
use wsel_sema::{Db, Severity};
use wsel_syntax::ast;
use wsel_target::Target;

use crate::context::FileCtx;

/// One cost entry of a layer at a call: `flops`, `weights` or `activations`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CostFigure {
    pub key: String,
    /// The value at the call's shapes, or `None` when it has none there (it depends on an
    /// unbound dimension, is negative, or overflows 64 bits: E0501 once lowered).
    pub value: Option<u64>,
    /// The entry as written in the layer (`2 * N * M`).
    pub written: String,
}

/// The layer a call in `ctx` names (as written, so an import alias works).
pub fn called_layer<'db>(ctx: &FileCtx<'db>, callee: &str) -> Option<ItemId<'db>> {
    let item = module_scope(ctx.db, ctx.file).get(callee)?;
    (item.kind(ctx.db) == ItemKind::Layer).then_some(item)
}

/// The layer's `cost` entries evaluated with the call's bound dimension variables: the
/// evaluation lowering puts in the layer graph (`wsel_lower::layer_cost`), at the dimensions
/// the checker bound at the call (a symbolic one, such as the sample dimension, has no value).
pub fn call_costs(db: &dyn Db, layer: ItemId<'_>, call: &CallBinding) -> Vec<CostFigure> {
    let dims: BTreeMap<String, u64> = call
        .dims
        .iter()
        .filter_map(|(name, dim)| match dim {
            Dim::Known(n) => Some((name.clone(), *n)),
            Dim::Var(_) | Dim::Expr(_) => None,
        })
        .collect();
    let text = layer.file(db).text(db);
    wsel_lower::cost_at(db, layer, &dims, &call.scalars)
        .iter()
        .map(|entry| CostFigure {
            key: entry.key.clone(),
            value: entry.value.clone().ok(),
            written: text
                .get(entry.span.clone())
                .map(crate::context::one_line)
                .unwrap_or_default(),
        })
        .collect()
}

/// The target the hover maps on: the `dev` preset (a machine description, not the
/// simulator).
pub const DEFAULT_TARGET: &str = "dev";

/// A model's layer graph mapped on a target in auto mode, as `wsel map` does it: pipelined,
/// and streaming when pipelined does not map.
#[derive(Debug, Clone)]
pub struct AutoMapping {
    /// The mode of `result`.
    pub mode: Mode,
    /// When `mode` is streaming: why pipelined did not map (its first diagnostic).
    pub pipelined_failure: Option<String>,
    /// The mapping in `mode`; when neither mode maps, the pipelined attempt (its errors
    /// explain it best).
    pub result: MapResult,
}

/// Maps `graph` on `target` in auto mode, with the layers' work measured by `work`: pipelined
/// as `fused` (the graph with its fused stages, [`fused_graph`], which `work` measures), else
/// streaming.
pub fn map_auto(
    graph: &LayerGraph,
    fused: &LayerGraph,
    target: &Target,
    work: &dyn KernelWork,
) -> AutoMapping {
    let options = MapOptions {
        work: Some(work),
        ..MapOptions::default()
    };
    let pipelined = wsel_map::map(fused, target, Mode::Pipelined, &options);
    if pipelined.placement.is_some() {
        return AutoMapping {
            mode: Mode::Pipelined,
            pipelined_failure: None,
            result: pipelined,
        };
    }
    let streaming = wsel_map::map(graph, target, Mode::Streaming, &options);
    if streaming.placement.is_some() {
        return AutoMapping {
            mode: Mode::Streaming,
            pipelined_failure: pipelined.diagnostics.first().map(|d| d.message.clone()),
            result: streaming,
        };
    }
    AutoMapping {
        mode: Mode::Pipelined,
        pipelined_failure: None,
        result: pipelined,
    }
}

/// What a mapping is a pure function of: the target (a preset, by name), the layer graph
/// (model, batch, shapes, implementations, call spans) and the digest of the sources its
/// kernels' dry runs read ([`wsel_estimate::sources::digest`]) — the graph holds no kernel
/// body, so an edit inside one leaves it equal.
struct MappingKey {
    target: String,
    graph: LayerGraph,
    sources: blake3::Hash,
}

impl MappingKey {
    fn is(&self, target: &str, graph: &LayerGraph, sources: &blake3::Hash) -> bool {
        self.target == target && self.sources == *sources && self.graph == *graph
    }
}

/// The mappings computed recently, most recent first: an entry is valid for as long as an
/// equal key comes back, and any edit that changes the graph or a kernel's source misses.
/// Hovering over the calls of one model maps it once. The lock is held to look up and insert
/// only, never while mapping.
static MAPPINGS: Mutex<Vec<(MappingKey, Arc<AutoMapping>)>> = Mutex::new(Vec::new());

/// How many mapped graphs [`MAPPINGS`] keeps (most recent first).
const CACHED_MAPPINGS: usize = 8;

/// The kernels' dry runs, kept by their inputs (the lowered kernel IR, the region): mapping
/// again after an edit measures only the kernel instances the edit changed.
static MEASURED: MeasuredWork = MeasuredWork::new();

/// [`map_auto`] of `model`'s layer graph `graph` on the preset `target`, its kernels
/// dry-run as `wsel map` does ([`KernelDryRuns`]); cached.
pub fn cached_map_auto<'db>(
    db: &'db dyn Db,
    model: ItemId<'db>,
    graph: &LayerGraph,
    target: &Target,
) -> Arc<AutoMapping> {
    let lock = || MAPPINGS.lock().unwrap_or_else(|p| p.into_inner());
    let sources = wsel_estimate::sources::digest(db, graph);
    {
        let mut cache = lock();
        if let Some(i) = cache
            .iter()
            .position(|(k, _)| k.is(&target.name, graph, &sources))
        {
            let entry = cache.remove(i);
            let mapped = Arc::clone(&entry.1);
            cache.insert(0, entry);
            return mapped;
        }
    }
    let work = KernelDryRuns::new(db, model, target)
        .shaped(&|g| Some(fused_graph(db, g)))
        .keeping(&MEASURED);
    let fused = fused_graph(db, graph);
    let mapped = Arc::new(map_auto(graph, &fused, target, &work));
    let key = MappingKey {
        target: target.name.clone(),
        graph: graph.clone(),
        sources,
    };
    let mut cache = lock();
    cache.insert(0, (key, Arc::clone(&mapped)));
    cache.truncate(CACHED_MAPPINGS);
    mapped
}

/// `graph` with the stages pipelined inference fuses, as `wsel map` maps it: a layer and the
/// layer that alone reads its result (a `dense` and its `relu`) as one, `dense#1+relu#1`
/// (`wsel_map::fusion`, `docs/mapping.md` §4).
pub fn fused_graph(db: &dyn Db, graph: &LayerGraph) -> LayerGraph {
    let twins = |g: &LayerGraph, p: usize, r: usize| wsel_lower::fused_twin(db, g, p, r);
    wsel_map::fusion::fused(graph, &twins)
}

/// Forgets every cached mapping, and with `measurements` every kept dry run too (for
/// measuring the uncached hover).
#[doc(hidden)]
pub fn clear_mapping_cache(measurements: bool) {
    MAPPINGS.lock().unwrap_or_else(|p| p.into_inner()).clear();
    if measurements {
        MEASURED.clear();
    }
}

/// The model of `ctx`'s file whose body contains the call at `span`.
fn enclosing_model<'db>(ctx: &FileCtx<'db>, span: &ast::Span) -> Option<ItemId<'db>> {
    item_index(ctx.db, ctx.file).iter().copied().find(|item| {
        item.kind(ctx.db) == ItemKind::Model
            && matches!(
                item_ast(ctx.db, *item),
                Some(ast::Item::Model(m)) if m.span.start <= span.start && span.end <= m.span.end
            )
    })
}

/// The mapping of this call on the default target ([`DEFAULT_TARGET`], auto mode): mode,
/// region, PE count, SRAM per PE and estimated cycles per sample, as Markdown. Every figure
/// comes from `wsel_map::map` on the model's layer graph (batch from the file's `run` item,
/// else 1) with the work `wsel map` measures; when the model does not map, the mapper's first
/// diagnostic is shown instead. A call fused into a stage with another (`dense#1+relu#1`,
/// [`fused_graph`]) shows that stage, and says so.
/// `None` when the call is not in a model's layer graph.
pub fn mapping_summary(ctx: &FileCtx<'_>, call: &CallBinding) -> Option<String> {
    let db = ctx.db;
    let model = enclosing_model(ctx, &call.span)?;
    let title = format!("**Mapping on `{DEFAULT_TARGET}`**");
    // Lowering assumes a program without errors; its figures would mean nothing.
    if wsel_sema::diagnostics(db, ctx.file)
        .iter()
        .any(|d| d.severity == Severity::Error)
    {
        return Some(format!(
            "{title}: not computed while the program has errors"
        ));
    }
    let batch = wsel_lower::lower_run_config(db, ctx.file)
        .and_then(|run| run.batch)
        .unwrap_or(1);
    let (graph, lowering) = wsel_lower::layer_graph(db, model, batch);
    if let Some(error) = lowering.iter().find(|d| d.severity == Severity::Error) {
        return Some(format!(
            "{title}: not computed, the model does not lower: {}",
            error.message
        ));
    }
    let path = ctx.path();
    let instance = graph
        .layers
        .iter()
        .find(|l| l.call.span == call.span && l.call.file == path)?;
    let target = Target::preset(DEFAULT_TARGET).ok()?;
    let mapped = cached_map_auto(db, model, &graph, &target);
    let Some(placement) = &mapped.result.placement else {
        let Some(first) = mapped.result.diagnostics.first() else {
            return Some(format!(
                "{title}: the model does not map on `{DEFAULT_TARGET}` (neither pipelined nor \
                 streaming)"
            ));
        };
        let at = &first.primary.location;
        let elsewhere = graph
            .layers
            .iter()
            .find(|l| l.call.file == at.file && l.call.span == at.span)
            .filter(|l| l.name != instance.name)
            .map(|l| format!(" (at the call of `{}`)", l.name))
            .unwrap_or_default();
        return Some(format!(
            "{title}: the model does not map on `{DEFAULT_TARGET}` (neither pipelined nor \
             streaming): {}{elsewhere}",
            first.message
        ));
    };
    // A fused layer is placed as its stage, named by both calls (`dense#1+relu#1`).
    let index = placement
        .layers
        .iter()
        .position(|l| l.name.split('+').any(|n| n == instance.name))?;
    let placed = &placement.layers[index];
    let mode = match (mapped.mode, &mapped.pipelined_failure) {
        (Mode::Pipelined, _) => "pipelined (auto)".to_string(),
        (Mode::Streaming, Some(why)) => format!("streaming (auto; pipelined does not map: {why})"),
        (Mode::Streaming, None) => "streaming (auto; pipelined does not map)".to_string(),
    };
    let transposed = placed.orientation.described();
    let bottleneck = if placement.layers.len() > 1 && placement.bottleneck() == Some(index) {
        ", the bottleneck stage"
    } else {
        ""
    };
    let e = &placed.estimate;
    let mut out = format!(
        "{title} (`{}`, batch {})\n- mode: {mode}\n",
        placed.name, placement.batch
    );
    if placed.name != instance.name {
        out.push_str(&format!(
            "- fused into the stage `{}` (docs/mapping.md §4): one region runs both layers, \
             and the figures below are the stage's\n",
            placed.name
        ));
    }
    out.push_str(&format!(
        "- region: {} × {} at fabric ({}, {}){transposed}\n",
        placed.rows, placed.cols, placed.rect.x, placed.rect.y
    ));
    out.push_str(&format!("- PEs: {}\n", group_digits(placed.pe_count())));
    out.push_str(&format!(
        "- SRAM per PE: {} / {} bytes\n",
        group_digits(placed.sram_bytes),
        group_digits(u64::from(placement.sram_bytes_available))
    ));
    out.push_str(&format!(
        "- estimated cycles: {} per sample (compute {}, in {}, out {}){bottleneck}\n",
        group_digits(e.cycles),
        group_digits(e.compute),
        group_digits(e.edge_in),
        group_digits(e.edge_out)
    ));
    Some(out.trim_end().to_string())
}

/// The hover text of a layer call.
pub fn call_hover(ctx: &FileCtx<'_>, callee: &str, call: &CallBinding) -> String {
    let mut out = String::new();
    let layer = called_layer(ctx, callee);
    if let Some(layer) = layer
        && let Some((sig, doc)) = layer_header(ctx.db, layer)
    {
        out.push_str(&format!("```wse\n{sig}\n```\n"));
        if let Some(doc) = doc {
            out.push_str(&format!("\n{doc}\n"));
        }
    } else {
        out.push_str(&format!("layer `{}`\n", call.layer));
    }
    let dims: Vec<String> = call
        .dims
        .iter()
        .map(|(name, dim)| format!("`{name} = {dim}`"))
        .chain(
            call.scalars
                .iter()
                .map(|(name, value)| format!("`{name} = {value}`")),
        )
        .collect();
    out.push_str("\n**This call:** ");
    if !dims.is_empty() {
        out.push_str(&dims.join(", "));
        out.push_str(" → ");
    }
    out.push_str(&format!("`{}`\n", call.result));
    if let Some(layer) = layer {
        let costs = call_costs(ctx.db, layer, call);
        if !costs.is_empty() {
            out.push_str("\n**Cost at these shapes:**\n");
            for c in &costs {
                let (what, unit) = match c.key.as_str() {
                    "flops" => ("flops", " per sample"),
                    "weights" => ("weights", " bytes"),
                    "activations" => ("activations", " bytes per sample"),
                    other => (other, ""),
                };
                match c.value {
                    Some(v) => out.push_str(&format!(
                        "- {what}: {}{unit} (`{}`)\n",
                        group_digits(v),
                        c.written
                    )),
                    None => out.push_str(&format!("- {what}: `{}`{unit}\n", c.written)),
                }
            }
        }
        if let Some(mapping) = mapping_summary(ctx, call) {
            out.push_str(&format!("\n{mapping}\n"));
        }
    }
    out
}

/// A layer's signature line and doc comment.
pub fn layer_header(db: &dyn Db, layer: ItemId<'_>) -> Option<(String, Option<String>)> {
    let Some(ast::Item::Layer(l)) = item_ast(db, layer) else {
        return None;
    };
    let text = layer.file(db).text(db);
    let end = wsel_sema::syntax::written_span(&l.output_ty).end;
    let sig = text.get(l.span.start..end).map(crate::context::one_line)?;
    Some((sig, l.doc.clone()))
}

/// `1234567` as `1,234,567`.
pub fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::group_digits;

    #[test]
    fn digits_are_grouped() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(4096), "4,096");
        assert_eq!(group_digits(1234567), "1,234,567");
    }
}

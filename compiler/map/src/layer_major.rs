//! The order of a batch's micro-batches in weight streaming (`docs/running.md`,
//! "Micro-batches"): micro-batch-major as mapped, or layer-major — the staged graph with its
//! parking phases (`wsel_lower::parked_graph`), every layer with weights on its streaming
//! implementation that holds them, in micro-batches small enough that the held weights fit,
//! on per-layer rows where they pay (`crate::held_rows`).
//! `auto` takes layer-major order whenever it can run (DESIGN §5): it maps and the store holds
//! the parked activations ([`crate::MicroTraffic::obstacle`]), whatever the estimate says of the
//! other order (the report shows both, `crate::micro_pace`); `layer` takes it or fails with
//! E0618; `micro` never.

use wsel_diagnostic::Diagnostic;
use wsel_ir::graph::LayerGraph;
use wsel_target::Target;

use crate::diagnostics as diag;
use crate::held_fit::chunk_counts;
use crate::held_rows::held_rows;
use crate::micro_traffic::{ChunkedLayer, MicroOrder};
use crate::streaming::{Chunked, Relaid};
use crate::{MapOptions, MapResult, Mapped, held_cost};

/// How the mapper gets the model staged for a micro-batch size, chunked, parked, and relaid.
pub(crate) struct Stagings<'a> {
    pub staged: &'a mut dyn FnMut(u64) -> Result<LayerGraph, Vec<Diagnostic>>,
    pub chunked: &'a Chunked<'a>,
    pub parked: &'a dyn Fn(&LayerGraph) -> Result<LayerGraph, Vec<Diagnostic>>,
    pub relaid: &'a Relaid<'a>,
}

/// The mapping that runs: `micro_major` (mapped in micro-batches, its traffic counted) or
/// the layer-major mapping, as `options.micro_order` asks.
pub(crate) fn choose(
    mut micro_major: Mapped,
    stagings: Stagings<'_>,
    target: &Target,
    options: &MapOptions,
) -> Mapped {
    let asked = options.micro_order;
    let Some(p) = micro_major.result.placement.as_mut() else {
        return micro_major;
    };
    let Some(mut traffic) = p.micro_traffic.take() else {
        return micro_major;
    };
    traffic.asked = asked;
    // Smaller micro-batches park more at once: when the store cannot hold micro-batch-major's
    // count parked, it cannot hold layer-major's either.
    let cannot = asked == MicroOrder::Auto && traffic.obstacle().is_some();
    if asked == MicroOrder::Micro || cannot {
        p.micro_traffic = Some(traffic);
        return micro_major;
    }
    let (batch, size) = (p.batch.max(1), p.samples_per_copy.max(1));
    match held_mapping(stagings, batch, size, target, options) {
        Ok(mut layer) => {
            let micro = batch / layer.size;
            traffic.park(&layer.staged, micro);
            traffic.chunks = layer.chunks;
            let placed = layer.mapped.result.placement.as_mut().expect("mapped");
            let cycles = held_cost::run_cycles(&layer.mapped.graph, placed, micro, target);
            traffic.layer_cycles = Some(cycles);
            if asked == MicroOrder::Auto && traffic.obstacle().is_some() {
                p.micro_traffic = Some(traffic);
                return micro_major;
            }
            traffic.layer_major = true;
            placed.micro_batches = micro as u32;
            placed.micro_batch_reason = p.micro_batch_reason.clone();
            placed.estimated_cycles = cycles;
            placed.micro_traffic = Some(traffic);
            placed.batch = batch;
            layer.mapped
        }
        Err(failure) if asked == MicroOrder::Layer => Mapped {
            result: MapResult {
                placement: None,
                diagnostics: vec![failure.0],
            },
            graph: micro_major.graph,
        },
        Err(failure) => {
            traffic.unheld = Some(failure.1);
            p.micro_traffic = Some(traffic);
            micro_major
        }
    }
}

/// A layer-major mapping: in micro-batches of `size` samples, the staged graph of one.
struct Held {
    mapped: Mapped,
    staged: LayerGraph,
    size: u64,
    chunks: Vec<ChunkedLayer>,
}

/// The largest micro-batch of at most `most` samples that divides `batch` and maps with the
/// weights held; or E0618 with why the closest does not (the mapper's own sentence), or its
/// E0619 (a phase does not fit beside the held weights).
fn held_mapping(
    stagings: Stagings<'_>,
    batch: u64,
    most: u64,
    target: &Target,
    options: &MapOptions,
) -> Result<Held, Box<(Diagnostic, String)>> {
    let (size, d) = match search(stagings, batch, most, target, options) {
        Ok(held) => return Ok(held),
        Err(failure) => *failure,
    };
    let why = d.message.clone();
    let error = if d.code == diag::E0618 || d.code == diag::E0619 {
        d
    } else {
        diag::held_weights_do_not_fit(&d, size)
    };
    Err(Box::new((error, why)))
}

/// [`held_mapping`]'s search, from the largest micro-batch down. When none maps: the first
/// diagnostic of the largest that takes at most one sample a column of the fabric (there
/// each PE keeps the fewest activations and the smallest share of its row's held weights,
/// `stdlib/nn.wse`'s `dense_held`), else of the smallest, with its size.
fn search(
    mut stagings: Stagings<'_>,
    batch: u64,
    most: u64,
    target: &Target,
    options: &MapOptions,
) -> Result<Held, Box<(u64, Diagnostic)>> {
    let mut last = (1, Vec::new());
    let fail = |size: u64| move |d: Vec<Diagnostic>| Box::new((size, *first(d)));
    for size in (1..=most).rev().filter(|s| batch.is_multiple_of(*s)) {
        let (staged, parked, chunks) =
            chunked(&mut stagings, size, target, options).map_err(fail(size))?;
        let result = crate::streaming::map_phases(&parked, target, options, true);
        let failed = result.placement.is_none();
        let closest = last.1.is_empty() || last.0 > u64::from(target.width);
        if failed && closest {
            last = (size, result.diagnostics.clone());
        }
        let one = (!failed).then(|| Mapped {
            result,
            graph: parked.clone(),
        });
        // Per-layer rows where they pay, held weights checked on each phase's own rows.
        let relaid = stagings.relaid;
        let rows = held_rows(&parked, batch / size, one.as_ref(), relaid, target, options);
        if let Some(mapped) = rows.or(one) {
            return Ok(Held {
                mapped,
                staged,
                size,
                chunks,
            });
        }
        if last.1.first().is_some_and(|d| d.code == diag::E0618) {
            break;
        }
    }
    Err(fail(last.0)(last.1))
}

/// The model staged for micro-batches of `size` samples, its layers that cannot hold their
/// weights whole cut into the fewest chunks that can (`crate::held_fit::chunk_counts`), that
/// graph parked, and the chunked layers with their counts.
fn chunked(
    stagings: &mut Stagings<'_>,
    size: u64,
    target: &Target,
    options: &MapOptions,
) -> Result<(LayerGraph, LayerGraph, Vec<ChunkedLayer>), Vec<Diagnostic>> {
    let staged = (stagings.staged)(size)?;
    let parked = (stagings.parked)(&staged)?;
    let chunk = |l: usize, k: u32| (stagings.chunked)(&staged, &[(l, k)]).ok();
    let counts = chunk_counts(&staged, &parked, &chunk, size, target, options);
    if counts.is_empty() {
        return Ok((staged, parked, Vec::new()));
    }
    let chunks = counts
        .iter()
        .map(|&(l, count)| ChunkedLayer {
            layer: staged.layers[l].name.clone(),
            count,
        })
        .collect();
    let staged = (stagings.chunked)(&staged, &counts)?;
    let parked = (stagings.parked)(&staged)?;
    Ok((staged, parked, chunks))
}

/// The first of `diagnostics` (the mapper always gives one with a failure).
fn first(diagnostics: Vec<Diagnostic>) -> Box<Diagnostic> {
    Box::new(diagnostics.into_iter().next().unwrap_or_else(|| {
        let nowhere = wsel_diagnostic::Location {
            file: std::path::PathBuf::new(),
            span: 0..0,
        };
        Diagnostic::error(diag::E0618, "layer-major order did not map", nowhere, "")
    }))
}

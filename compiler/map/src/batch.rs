//! The estimate of a whole batch (`docs/mapping.md` §5): a copy of the pipeline needs a
//! **fill** before its first result leaves, then one **period** of its slowest stage per
//! further sample; copies run side by side, so the batch takes as long as its slowest copy.
//!
//! ```text
//! fill   = the longest path through the layer graph of each layer's latency
//!          (crate::estimate) plus hop_latency × the hops of the routes between them,
//!          plus the time the result's part takes to leave at its pace
//! period = the largest stage estimate (its `cycles`)
//! copy   = fill + (b − 1) · period                 b samples through one copy
//! batch  = the slowest copy
//! ```
//!
//! The host's bandwidth is shared by every host stream of every copy, so a layer's estimate
//! depends on how many copies there are: [`repace`] estimates every layer again at the
//! program's pace once the copies are placed, and [`copies_estimate`] guesses a copy count's
//! batch from one copy before placing more.

use std::collections::HashMap;

use wsel_ir::graph::{LayerGraph, TensorRef};
use wsel_target::Target;

use crate::chain::ChainTerms;
use crate::estimate::{CostInputs, HostPace};
use crate::placement::{EdgeSource, PlacedLayer, Placement, Transfer};
use crate::ports::ImplPlan;

/// What one copy of the pipeline costs, in cycles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CopyCost {
    /// From its first input wavelet to its first result leaving the fabric.
    pub fill: u64,
    /// Per further sample: the largest stage estimate.
    pub period: u64,
}

impl CopyCost {
    /// The cost of the copy made of `layers` (the graph's layers, in order) and the
    /// `transfers` between them.
    pub(crate) fn of<'t>(
        graph: &LayerGraph,
        layers: &[PlacedLayer],
        transfers: impl IntoIterator<Item = &'t Transfer>,
        hop_latency: u32,
    ) -> CopyCost {
        let hop = u64::from(hop_latency);
        // The parts of a tensor travel side by side: its longest route counts.
        let mut longest: HashMap<&'t str, u64> = HashMap::new();
        for t in transfers {
            let hops = longest.entry(t.tensor.as_str()).or_default();
            *hops = (*hops).max(t.hops.len() as u64);
        }
        let route = |name: &str| hop * longest.get(name).copied().unwrap_or(0);
        let tensor_of = |l: usize| {
            let layer = &graph.layers[l];
            format!("{}.{}", layer.name, layer.output_name)
        };
        let mut done = vec![0u64; layers.len()];
        for (l, placed) in layers.iter().enumerate() {
            let Some(layer) = graph.layers.get(l) else {
                break;
            };
            let start = layer
                .args
                .iter()
                .map(|arg| match *arg {
                    TensorRef::Layer(p) if p < l => done[p] + route(&tensor_of(p)),
                    TensorRef::Input(k) => graph.inputs.get(k).map_or(0, |t| route(&t.name)),
                    _ => 0,
                })
                .max()
                .unwrap_or(0);
            done[l] = start + placed.estimate.latency;
        }
        // The first result is out when its last wavelet has left, at its stream's pace.
        let fill = match graph.output {
            TensorRef::Layer(l) if l < done.len() => {
                done[l] + route(&tensor_of(l)) + layers[l].estimate.edge_out
            }
            _ => done.iter().copied().max().unwrap_or(0),
        };
        let period = layers.iter().map(|l| l.estimate.cycles).max().unwrap_or(0);
        CopyCost { fill, period }
    }

    /// Cycles for `samples` samples through the copy.
    pub(crate) fn cycles(self, samples: u64) -> u64 {
        self.fill + samples.saturating_sub(1) * self.period
    }
}

/// Cycles for a batch run by `copies` side by side, `samples_per_copy` samples each.
pub(crate) fn batch_cycles(copies: &[CopyCost], samples_per_copy: u64) -> u64 {
    copies
        .iter()
        .map(|c| c.cycles(samples_per_copy))
        .max()
        .unwrap_or(0)
}

/// Sets `p.estimated_cycles` (and every layer's estimate) for its copies, each running
/// `graph.batch` samples, with the host's bandwidth shared by all their host streams.
pub(crate) fn estimate_batch(graph: &LayerGraph, p: &mut Placement, target: &Target) {
    repace(graph, p, target, host_streams(p));
    let per_copy = graph.layers.len();
    let costs: Vec<CopyCost> = (0..p.copies)
        .map(|c| {
            let first = c as usize * per_copy;
            let layers = p.layers.get(first..first + per_copy).unwrap_or_default();
            let transfers = p.transfers.iter().filter(|t| t.copy == c);
            CopyCost::of(graph, layers, transfers, target.hop_latency)
        })
        .collect();
    p.estimated_cycles = batch_cycles(&costs, graph.batch);
    p.estimated_fill_cycles = costs.iter().map(|c| c.fill).max().unwrap_or(0);
}

/// The host streams of a placement: model inputs from the host and the result.
pub(crate) fn host_streams(p: &Placement) -> u64 {
    let inputs = p.inputs.iter().filter(|e| e.source == EdgeSource::Host);
    (inputs.count() + p.outputs.len()) as u64
}

/// Estimates every layer of `p` again with the host's bandwidth shared by `streams` host
/// streams, keeping each layer's measured work and chain terms.
pub(crate) fn repace(graph: &LayerGraph, p: &mut Placement, target: &Target, streams: u64) {
    let pace = HostPace::new(target, streams);
    let per_copy = p.layers_per_copy().max(1);
    let mut costs: Vec<Option<CostInputs>> = vec![None; graph.layers.len()];
    for (i, placed) in p.layers.iter_mut().enumerate() {
        let l = i % per_copy;
        let Some(layer) = graph.layers.get(l) else {
            continue;
        };
        let Some(imp) = layer.impls.get(placed.implementation) else {
            continue;
        };
        let cost = costs[l]
            .get_or_insert_with(|| CostInputs::new(graph, l, &ImplPlan::new(layer, imp), target));
        let (work, chains) = (placed.estimate.compute, ChainTerms::kept(&placed.estimate));
        placed.estimate = cost.estimate(placed.rows, placed.cols, Some(work), chains, Some(pace));
    }
}

/// The estimated batch of `copies` copies of `one` (as [`copies_estimate`]) and what bounds
/// it: the slowest stage and the term of its estimate that dominates.
pub(crate) fn copies_bound(
    graph: &LayerGraph,
    one: &Placement,
    target: &Target,
    copies: u64,
) -> (u64, String) {
    let streams = copies * host_streams(one);
    let mut guess = one.clone();
    repace(graph, &mut guess, target, streams);
    let cost = CopyCost::of(graph, &guess.layers, &guess.transfers, target.hop_latency);
    let cycles = cost.cycles(graph.batch / copies.max(1));
    let slowest = (0..guess.layers.len()).max_by_key(|&i| guess.layers[i].estimate.cycles);
    let Some(i) = slowest else {
        return (cycles, "no layers".to_string());
    };
    let (now, before) = (guess.layers[i].estimate, one.layers[i].estimate);
    let name = &guess.layers[i].name;
    let bound = if now.edge_in + now.edge_out > before.edge_in + before.edge_out {
        format!(
            "{name} waits for the host: its {} B/cycle shared by {streams} streams",
            target.host_io.bandwidth_bytes_per_cycle
        )
    } else if now.edge_in + now.chain > now.compute {
        format!("{name} waits for its inputs and neighbours in every copy")
    } else {
        format!("{name}'s work bounds every copy")
    };
    (cycles, bound)
}

/// The estimated batch of `copies` copies of the single-copy placement `one` (mapped for
/// the whole batch), each running its share of `batch` samples, before they are placed: the
/// host streams multiply, every copy has copy 0's cost.
pub(crate) fn copies_estimate(
    graph: &LayerGraph,
    one: &Placement,
    target: &Target,
    copies: u64,
    batch: u64,
) -> u64 {
    let mut guess = one.clone();
    repace(graph, &mut guess, target, copies * host_streams(one));
    let cost = CopyCost::of(graph, &guess.layers, &guess.transfers, target.hop_latency);
    cost.cycles(batch / copies.max(1))
}

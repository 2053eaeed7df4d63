//! Layer-major micro-batches (`docs/running.md`, "Micro-batches"): each layer runs over
//! every micro-batch before the next layer, its weights streamed from the store once and held
//! on the fabric for the others, while the micro-batches waiting their turn are parked in the
//! weight store.
//!
//! The placement's graph is the parked graph (`wsel_lower::parked_graph`): before every
//! layer with weights but the first stand a `park` and an `unpark` for each result still
//! live there. The phases fall into *segments*: a segment runs from the unparks after one
//! boundary to the parks before the next. A segment runs for one micro-batch after another —
//! forwards in even segments, backwards in odd ones (a snake), so the last micro-batch of a
//! segment is the first of the next and stays on the fabric: its park and unpark are skipped,
//! its results kept where they lie. Every other micro-batch parks — its results leave the
//! region's west edge as wavelets for the store — and is unparked — the same wavelets come
//! back in from the store through `stage_in`, sharing the store's bandwidth and latency. The
//! segment's layer with weights streams them for its first micro-batch only, keeping them
//! (`crate::held`), and applies the held ones for the others.

use std::collections::{BTreeMap, HashMap};

use wsel_ir::graph::{LayerGraph, TensorRef};
use wsel_map::Placement;
use wsel_sim::Program;

use crate::assemble::HostData;
use crate::held::HeldWeights;
use crate::streamed::{MicroState, PhaseFailure, PhaseWork, Runner, micro_batch};
use crate::tensor::Tensor;

/// What a phase is to the order.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Sends a waiting micro-batch's result (graph layer `.0`'s) to the store.
    Park(usize),
    /// Brings a parked result back (the one graph layer `.0` parked).
    Unpark(usize),
    /// A layer with weights, held over the segment's micro-batches.
    Weighted,
    Other,
}

/// Runs every phase of the placement in layer-major order over its micro-batches of `size`
/// samples of `data`.
pub(crate) fn run(
    runner: &mut Runner<'_, '_>,
    data: &HostData<'_>,
    size: usize,
) -> Result<(), PhaseFailure> {
    let (graph, placement) = (runner.program().graph, runner.program().placement);
    let m = placement.micro_batches.max(1);
    let kinds: Vec<Kind> = (0..placement.phases)
        .map(|phase| kind(graph, placement, phase))
        .collect();
    // One layer a phase, in graph order; segments as the mapper checked them (E0619).
    let segments: Vec<Vec<u32>> = wsel_map::segments(graph)
        .into_iter()
        .map(|s| s.into_iter().map(|l| placement.layers[l].phase).collect())
        .collect();
    let inputs: Vec<Vec<Tensor>> = (0..m)
        .map(|micro| micro_batch(data.inputs, micro as usize, size))
        .collect();
    let mut states: Vec<MicroState> = (0..m).map(|_| MicroState::new(graph)).collect();
    // Parked streams by (park layer, micro-batch), each by part.
    let mut parked: HashMap<(usize, u32), BTreeMap<u32, Vec<u32>>> = HashMap::new();
    for (s, phases) in segments.iter().enumerate() {
        let order: Vec<u32> = if s % 2 == 0 {
            (0..m).collect()
        } else {
            (0..m).rev().collect()
        };
        let mut held: HashMap<u32, HeldWeights> = HashMap::new();
        for (i, &micro) in order.iter().enumerate() {
            let (first, last) = (i == 0, i + 1 == order.len());
            let state = &mut states[micro as usize];
            for &phase in phases {
                let kind = kinds[phase as usize];
                let stays = match kind {
                    Kind::Unpark(_) => first && s > 0,
                    Kind::Park(_) => last && s + 1 < segments.len(),
                    _ => false,
                };
                if stays {
                    stay(graph, placement, phase, state);
                    continue;
                }
                let zeros;
                let mut own = HostData {
                    inputs: &inputs[micro as usize],
                    params: data.params,
                };
                let mut work = PhaseWork::default();
                match kind {
                    Kind::Weighted if first => work.keep = true,
                    Kind::Weighted => work.held = held.get(&phase),
                    Kind::Park(_) => work.park = true,
                    Kind::Unpark(from) => {
                        work.unpark = parked.get(&(from, micro));
                        zeros = [placeholder(graph, placement, phase)];
                        own.inputs = &zeros;
                    }
                    Kind::Other => {}
                }
                let done = runner.step(phase, micro, &own, state, work)?;
                if let Some(kept) = done.kept {
                    held.insert(phase, kept);
                }
                if let Kind::Park(l) = kind {
                    parked.insert((l, micro), done.parked);
                }
            }
        }
    }
    Ok(())
}

/// A micro-batch that stays on the fabric skips parking phase `phase`: the layer's result is
/// its input, where it lies.
fn stay(graph: &LayerGraph, placement: &Placement, phase: u32, state: &mut MicroState) {
    let l = placement.instance(layer_of(placement, phase));
    if let Some(&TensorRef::Layer(p)) = graph.layers[l].args.first() {
        state.resident.alias(p, l);
    }
    state.after(graph, placement, phase);
}

/// The placed layer of phase `phase` (one layer a phase in weight streaming).
fn layer_of(placement: &Placement, phase: u32) -> usize {
    placement
        .layers
        .iter()
        .position(|p| p.phase == phase)
        .unwrap_or(0)
}

fn kind(graph: &LayerGraph, placement: &Placement, phase: u32) -> Kind {
    let layer = &graph.layers[placement.instance(layer_of(placement, phase))];
    let from = |arg: Option<&TensorRef>| match arg {
        Some(&TensorRef::Layer(p)) if graph.layers[p].layer == "park" => Some(p),
        _ => None,
    };
    if layer.layer == "park" {
        return Kind::Park(placement.instance(layer_of(placement, phase)));
    }
    if let Some(p) = from(layer.args.first()) {
        return Kind::Unpark(p);
    }
    if layer.args.iter().any(|a| matches!(a, TensorRef::Param(_))) {
        return Kind::Weighted;
    }
    Kind::Other
}

/// The input an unpark phase is assembled with: zeros of the parked result's shape, which the
/// parked streams replace ([`feed`]).
fn placeholder(graph: &LayerGraph, placement: &Placement, phase: u32) -> Tensor {
    let layer = &graph.layers[placement.instance(layer_of(placement, phase))];
    Tensor {
        elem: layer.output_elem,
        shape: layer.output_shape.clone(),
        words: vec![0; layer.output_shape.iter().product::<u64>() as usize],
    }
}

/// Feeds the edge inputs of unpark phase `phase` in `program` from the store with the
/// streams its park sent out, part for part; the bytes fed.
pub(crate) fn feed(
    program: &mut Program,
    placement: &Placement,
    phase: u32,
    streams: &BTreeMap<u32, Vec<u32>>,
) -> Result<u64, String> {
    let points = placement
        .inputs
        .iter()
        .filter(|p| placement.layers[p.layer].phase == phase);
    let mut bytes = 0;
    for (input, point) in program.inputs.iter_mut().zip(points) {
        let words = streams
            .get(&point.part)
            .ok_or_else(|| format!("nothing parked for part {}", point.part))?;
        if words.len() != input.data.len() {
            return Err(format!(
                "part {} parked {} words, its unpark takes {}",
                point.part,
                words.len(),
                input.data.len()
            ));
        }
        input.data.clone_from(words);
        input.source = wsel_sim::EdgeSource::WeightStore;
        bytes += 4 * words.len() as u64;
    }
    Ok(bytes)
}

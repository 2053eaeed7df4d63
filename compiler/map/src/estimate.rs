//! The analytic estimate of a layer's cycles per sample on an `R × C` region
//! (`docs/mapping.md` §5):
//!
//! ```text
//! compute  = the task cycles per sample of the busiest PE, measured by a dry run of the
//!            kernel (crate::KernelWork), or without one
//!            ceil(flops / 2 / (R·C) / fma_rate)    multiply-adds spread over the PEs
//! edge_in  = max input part length (wavelets per edge PE per sample)
//! edge_out = max output part length
//! estimate = max(compute, edge_in, edge_out)
//! ```
//!
//! `fma_rate` is the target's fp16 rate for an fp16 result, its fp32 rate otherwise. A weight
//! streamed into a port (weight-streaming mode) arrives once per batch, so its part length is
//! divided by the batch size.
//!
//! A whole pipeline copy is estimated from its stages ([`CopyCost`]): its **fill** (every
//! stage's estimate, plus a hop of latency per PE a sample crosses: each region's rows and
//! columns and each tensor's longest route) and its **bottleneck** (the largest stage
//! estimate), so `b` samples take `fill + (b − 1) · bottleneck` cycles. Copies run side by
//! side, but every sample's inputs and result share the host's I/O bandwidth
//! ([`host_io_cycles`]); the batch takes the longer of the two ([`batch_cycles`]).

use std::collections::HashMap;

use wsel_ir::graph::{LayerGraph, LayerInstance, TensorRef};
use wsel_ir::kernel::{PortDirection, ScalarTy};
use wsel_target::Target;

use crate::placement::{Estimate, PlacedLayer, Transfer};
use crate::ports::{BoundTensor, ImplPlan, Parts};

/// What a layer's estimate depends on, gathered once per layer.
#[derive(Debug, Clone)]
pub(crate) struct CostInputs {
    flops: u64,
    fma_rate: u64,
    /// Per bound port: elements per sample (before splitting), its parts, whether it is an
    /// input, and the number of samples it is amortised over.
    ports: Vec<(u64, Parts, bool, u64)>,
}

impl CostInputs {
    pub(crate) fn new(
        graph: &LayerGraph,
        layer: &LayerInstance,
        plan: &ImplPlan,
        target: &Target,
    ) -> CostInputs {
        let fma = match layer.output_elem {
            ScalarTy::F16 => target.fp16.fma,
            _ => target.fp32.fma,
        };
        let batch = graph.batch.max(1);
        let mut ports = Vec::new();
        for p in &plan.ports {
            let Some(bind) = &p.bind else { continue };
            let (elems, amortise) = match bind.tensor {
                BoundTensor::Output => (per_sample(&layer.output_shape), 1),
                BoundTensor::Arg(i) => match layer.args.get(i) {
                    Some(TensorRef::Input(k)) => {
                        (graph.inputs.get(*k).map_or(0, |t| per_sample(&t.shape)), 1)
                    }
                    Some(TensorRef::Layer(k)) => (
                        graph
                            .layers
                            .get(*k)
                            .map_or(0, |l| per_sample(&l.output_shape)),
                        1,
                    ),
                    Some(TensorRef::Param(k)) => (
                        graph
                            .params
                            .get(*k)
                            .map_or(0, |t| t.tensor.shape.iter().product()),
                        batch,
                    ),
                    None => (0, 1),
                },
            };
            ports.push((
                elems,
                bind.parts,
                p.direction == PortDirection::In,
                amortise,
            ));
        }
        CostInputs {
            flops: layer.cost.flops,
            fma_rate: u64::from(fma.max(1)),
            ports,
        }
    }

    /// The estimate on a `rows × cols` region, whose busiest PE does `work` cycles of tasks
    /// per sample when the caller measured it ([`crate::KernelWork`]); without it, the
    /// layer's multiply-adds spread over the region at the target's fma rate.
    pub(crate) fn estimate(&self, rows: u32, cols: u32, work: Option<u64>) -> Estimate {
        let pes = u64::from(rows.max(1)) * u64::from(cols.max(1));
        let compute = work.unwrap_or_else(|| self.flops.div_ceil(2 * pes * self.fma_rate));
        let (mut edge_in, mut edge_out) = (0, 0);
        for &(elems, parts, input, amortise) in &self.ports {
            let n = match parts {
                Parts::Rows => u64::from(rows.max(1)),
                Parts::Cols => u64::from(cols.max(1)),
                Parts::One => 1,
            };
            let len = elems.div_ceil(n).div_ceil(amortise);
            if input {
                edge_in = edge_in.max(len);
            } else {
                edge_out = edge_out.max(len);
            }
        }
        Estimate {
            compute,
            edge_in,
            edge_out,
            cycles: compute.max(edge_in).max(edge_out),
        }
    }
}

/// What one copy of the pipeline costs, in cycles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CopyCost {
    /// Until the first sample has passed every stage.
    pub fill: u64,
    /// Per further sample: the largest stage estimate.
    pub bottleneck: u64,
}

impl CopyCost {
    /// The cost of the copy made of `layers` and the `transfers` between them.
    pub(crate) fn of(layers: &[PlacedLayer], transfers: &[Transfer], hop_latency: u32) -> CopyCost {
        let hop = u64::from(hop_latency);
        let mut fill = 0;
        let mut bottleneck = 0;
        for l in layers {
            fill += l.estimate.cycles + hop * u64::from(l.rows + l.cols);
            bottleneck = bottleneck.max(l.estimate.cycles);
        }
        // The parts of a tensor travel side by side: its longest route counts.
        let mut longest: HashMap<&str, u64> = HashMap::new();
        for t in transfers {
            let hops = longest.entry(t.tensor.as_str()).or_default();
            *hops = (*hops).max(t.hops.len() as u64);
        }
        fill += hop * longest.values().sum::<u64>();
        CopyCost { fill, bottleneck }
    }

    /// Cycles for `samples` samples through the copy.
    pub(crate) fn cycles(self, samples: u64) -> u64 {
        self.fill + samples.saturating_sub(1) * self.bottleneck
    }
}

/// Cycles the host's I/O needs for `samples` samples: every model input and the result cross
/// the fabric's edge at the target's host bandwidth, shared by all streams (32-bit words).
pub(crate) fn host_io_cycles(graph: &LayerGraph, target: &Target, samples: u64) -> u64 {
    let inputs: u64 = graph.inputs.iter().map(|t| per_sample(&t.shape)).sum();
    let output = match graph.output {
        TensorRef::Layer(l) => graph
            .layers
            .get(l)
            .map_or(0, |l| per_sample(&l.output_shape)),
        TensorRef::Input(i) => graph.inputs.get(i).map_or(0, |t| per_sample(&t.shape)),
        TensorRef::Param(_) => 0,
    };
    let bytes = samples * (inputs + output) * 4;
    bytes.div_ceil(u64::from(target.host_io.bandwidth_bytes_per_cycle.max(1)))
}

/// Cycles for a batch run by `copies` side by side, `samples_per_copy` samples each: the
/// slowest copy, or the host I/O when that takes longer.
pub(crate) fn batch_cycles(copies: &[CopyCost], samples_per_copy: u64, io_cycles: u64) -> u64 {
    copies
        .iter()
        .map(|c| c.cycles(samples_per_copy))
        .max()
        .unwrap_or(0)
        .max(io_cycles)
}

/// Elements per sample of an activation shaped `[batch, ...]`.
fn per_sample(shape: &[u64]) -> u64 {
    shape.iter().skip(1).product()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compute_and_edges_take_the_maximum() {
        let c = CostInputs {
            flops: 2 * 64 * 32,
            fma_rate: 1,
            ports: vec![(64, Parts::Rows, true, 1), (32, Parts::Cols, false, 1)],
        };
        let e = c.estimate(4, 2, None);
        assert_eq!(e.compute, 256);
        assert_eq!(e.edge_in, 16);
        assert_eq!(e.edge_out, 16);
        assert_eq!(e.cycles, 256);
        let e = c.estimate(64, 32, None);
        assert_eq!((e.compute, e.edge_in, e.edge_out, e.cycles), (1, 1, 1, 1));
    }

    #[test]
    fn measured_work_replaces_the_flops_formula() {
        let c = CostInputs {
            flops: 2 * 64 * 32,
            fma_rate: 1,
            ports: vec![(64, Parts::Rows, true, 1)],
        };
        let e = c.estimate(4, 2, Some(300));
        assert_eq!((e.compute, e.edge_in, e.cycles), (300, 16, 300));
        let e = c.estimate(4, 2, Some(3));
        assert_eq!((e.compute, e.cycles), (3, 16));
    }
}

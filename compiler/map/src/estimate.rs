//! The analytic estimate of a layer's cycles per sample on an `R × C` region
//! (`docs/mapping.md` §5):
//!
//! ```text
//! compute  = the task cycles per sample of the busiest PE, measured by a dry run of the
//!            kernel (crate::KernelWork), or without one
//!            ceil(flops / 2 / (R·C) / fma_rate)    multiply-adds spread over the PEs
//! edge_in  = Σ over bound input ports: the part's receive     (taken one after another)
//! stream   = max over bound input ports: part length × pace   (host streams run side by side)
//! edge_out = max over bound output ports: part length × pace
//! chain    = the bound output's part length, when the output port passes it along a chain
//!            of PEs (a link class of length > 1: a reduction down the columns, along a row),
//!            plus the chains' latency when a PE's next sample waits for a round trip
//! cycles   = max(edge_in + compute + chain, stream, edge_out)   the stage's period
//! latency  = max(edge_in, stream) + compute + Σ chains' latency (crate::chain)
//! ```
//!
//! A stream's `pace` is one wavelet per cycle, except a host stream's: the host's bandwidth is
//! shared evenly by every host stream of the program (the simulator paces each stream at
//! `bandwidth / streams` bytes per cycle), so `4 · streams / bandwidth` cycles per wavelet
//! when that is more than one ([`HostPace`]). `fma_rate` is the target's fp16 rate for an
//! fp16 result, its fp32 rate otherwise. A weight streamed into a port arrives once per
//! batch, so its part length is divided by the batch size.
//!
//! A host stream does not wait for the kernel's receive: the host feeds every stream at its
//! pace, and a stream runs ahead of its receive by the queue in front of the PE
//! (`queue_depth` wavelets). So a part's receive takes `pace × (len − q) + q` cycles, `q =
//! min(queue_depth, len)` of it already queued while the PE did something else; a short part
//! (axpy's two elements a PE on wse2) is all queued, and the stage runs at its streams' pace.
//!
//! Inputs and work add up because kernels take a sample's input, work on it and only then
//! post the receive for the next (std.nn's `dense_tile`, std.collectives' `row_reduce`); a
//! kernel that keeps several samples in flight (std.nn's `softmax_row`) runs faster than the
//! estimate by up to its input time. The whole pipeline's estimate is in `crate::batch`.

use wsel_ir::graph::{Bus, LayerGraph, LayerInstance, TensorRef};
use wsel_ir::kernel::{PortDirection, ScalarTy};
use wsel_target::Target;

use crate::chain::{Answer, ChainFlow, ChainOn, ChainTerms, StepCosts, Wait, chain_terms};
use crate::placement::Estimate;
use crate::ports::{BoundTensor, ImplPlan, Parts, SlotOf, along};

/// How fast host streams move: the host's bandwidth shared evenly by `streams` streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HostPace {
    pub streams: u64,
    pub bandwidth_bytes_per_cycle: u64,
}

impl HostPace {
    /// The pace of `streams` host streams on `target`.
    pub(crate) fn new(target: &Target, streams: u64) -> HostPace {
        HostPace {
            streams: streams.max(1),
            bandwidth_bytes_per_cycle: u64::from(target.host_io.bandwidth_bytes_per_cycle.max(1)),
        }
    }

    /// Cycles `wavelets` wavelets of one host stream take: at most one per cycle.
    pub(crate) fn cycles(self, wavelets: u64) -> u64 {
        let per_wavelet = (4 * self.streams).max(self.bandwidth_bytes_per_cycle);
        (wavelets * per_wavelet).div_ceil(self.bandwidth_bytes_per_cycle)
    }
}

/// One bound port, as the estimate sees it.
#[derive(Debug, Clone, Copy)]
struct PortCost {
    /// Elements per sample, before splitting into parts.
    elems: u64,
    parts: Parts,
    input: bool,
    /// Samples the port's data is amortised over (a weight streamed once per batch).
    amortise: u64,
    /// Fed from the host, or leaving to it: paced by the host's bandwidth.
    host: bool,
}

/// A link class along which PEs pass data from one to the next.
#[derive(Debug, Clone)]
struct Chain {
    /// Along the region's rows (a north/south link, a column's bus), else along its columns.
    along_rows: bool,
    /// A row's or a column's bus: a message reaches the line's far end.
    bus: bool,
    /// The bound output port the chain carries (index into `ports`), if any.
    output: Option<usize>,
    /// The kernel's ports that send and receive on it.
    out_port: String,
    in_port: String,
    /// Its `in` port takes a bound input at the region's edge (a wait for it is `edge_in`'s).
    fed: bool,
}

/// An `in` port bound to no tensor: where a reduction's answer may come back.
#[derive(Debug, Clone)]
struct AnswerPort {
    name: String,
    /// The bus it takes the answer from, if any.
    bus: Option<Bus>,
}

/// The hops a reduction's answer takes on a bus on a `rows × cols` region from the line's
/// far end back to the PE at its start, whose round trip is the longest: a row's or a
/// column's length less one; across the region's comb (every row joined by column 0,
/// `crate::bus`) from one corner to the opposite one, `R − 1 + C − 1`.
fn bus_hops(bus: Bus, rows: u32, cols: u32) -> u64 {
    let (rows, cols) = (u64::from(rows.max(1)), u64::from(cols.max(1)));
    match bus {
        Bus::Row => cols - 1,
        Bus::Col => rows - 1,
        Bus::Region => rows - 1 + cols - 1,
    }
}

/// The row and column buses of `plan` as chains: the `out` and `in` port of each bus class.
/// No tensor is bound to a bus port.
fn bus_chains(plan: &ImplPlan) -> impl Iterator<Item = Chain> + '_ {
    (0..plan.buses).filter_map(|b| {
        let port = |d: PortDirection| {
            plan.ports.iter().find(|p| {
                p.slot == SlotOf::Bus(b)
                    && p.direction == d
                    && p.bus.is_some_and(|k| k != Bus::Region)
            })
        };
        let (out, inp) = (port(PortDirection::Out)?, port(PortDirection::In)?);
        Some(Chain {
            along_rows: out.bus == Some(Bus::Col),
            bus: true,
            output: None,
            out_port: out.name.clone(),
            in_port: inp.name.clone(),
            fed: false,
        })
    })
}

/// What a layer's estimate depends on, gathered once per layer.
#[derive(Debug, Clone)]
pub(crate) struct CostInputs {
    flops: u64,
    fma_rate: u64,
    ports: Vec<PortCost>,
    chains: Vec<Chain>,
    /// The `in` ports bound to no tensor.
    answer_ports: Vec<AnswerPort>,
    hop: u64,
    switch: u64,
    add_rate: u64,
    host_bandwidth: u64,
    /// Wavelets a stream can queue in front of a PE before its receive is posted.
    queue: u64,
}

impl CostInputs {
    /// The inputs of layer `l` of `graph`, running the implementation `plan`.
    pub(crate) fn new(
        graph: &LayerGraph,
        l: usize,
        plan: &ImplPlan,
        target: &Target,
    ) -> CostInputs {
        let layer = &graph.layers[l];
        let result = graph.output == TensorRef::Layer(l);
        let (fma, add) = match layer.output_elem {
            ScalarTy::F16 => (target.fp16.fma, target.fp16.add),
            _ => (target.fp32.fma, target.fp32.add),
        };
        let mut ports = Vec::new();
        let mut port_of_plan = vec![None; plan.ports.len()];
        for (i, p) in plan.ports.iter().enumerate() {
            let Some(bind) = &p.bind else { continue };
            let (elems, amortise, host) = bound_elems(graph, layer, bind.tensor, result);
            port_of_plan[i] = Some(ports.len());
            ports.push(PortCost {
                elems,
                parts: bind.parts,
                input: p.direction == PortDirection::In,
                amortise,
                host,
            });
        }
        let chains = plan
            .links
            .iter()
            // A chain: the class has both a sending and a receiving port.
            .filter_map(|link| Some((link, link.out_port?, link.in_port?)))
            .map(|(link, out_port, in_port)| {
                let out = &plan.ports[out_port];
                let carries_output = out
                    .bind
                    .as_ref()
                    .is_some_and(|b| b.tensor == BoundTensor::Output);
                Chain {
                    along_rows: along(link.dir, 2, 1) == 2,
                    bus: false,
                    output: port_of_plan[out_port].filter(|_| carries_output),
                    out_port: out.name.clone(),
                    in_port: plan.ports[in_port].name.clone(),
                    fed: plan.ports[in_port].bind.is_some(),
                }
            })
            .chain(bus_chains(plan))
            .collect();
        let answer_ports = plan
            .ports
            .iter()
            .filter(|p| p.direction == PortDirection::In && p.bind.is_none())
            .map(|p| AnswerPort {
                name: p.name.clone(),
                bus: p.bus,
            })
            .collect();
        CostInputs {
            flops: layer.cost.flops,
            fma_rate: u64::from(fma.max(1)),
            ports,
            chains,
            answer_ports,
            hop: u64::from(target.hop_latency),
            switch: u64::from(target.task_switch_cycles),
            add_rate: u64::from(add.max(1)),
            host_bandwidth: u64::from(target.host_io.bandwidth_bytes_per_cycle.max(1)),
            queue: u64::from(target.queue_depth),
        }
    }

    /// The host streams this layer's bound ports make on a `rows × cols` region.
    pub(crate) fn host_streams(&self, rows: u32, cols: u32) -> u64 {
        self.ports
            .iter()
            .filter(|p| p.host)
            .map(|p| parts(p.parts, rows, cols))
            .sum()
    }

    /// What the chains add on a `rows × cols` region, where `flow` says how the kernel
    /// passes messages on the chain of its `out` and `in` ports, when the caller measured it
    /// ([`crate::KernelWork::chain_flow`]).
    pub(crate) fn chain_terms(
        &self,
        rows: u32,
        cols: u32,
        flow: &dyn Fn(&str, &str) -> Option<ChainFlow>,
    ) -> ChainTerms {
        let chains: Vec<ChainOn> = self
            .chains
            .iter()
            .map(|c| ChainOn {
                length: u64::from(if c.along_rows { rows } else { cols }),
                bound: c.output.map(|o| self.part(&self.ports[o], rows, cols)),
                flow: flow(&c.out_port, &c.in_port),
                waits: self.waits(c, flow),
                bus: c.bus,
                answer: self.answer(c, rows, cols, flow),
            })
            .collect();
        let costs = StepCosts {
            hop: self.hop,
            switch: self.switch,
            add_rate: self.add_rate,
        };
        chain_terms(&chains, costs)
    }

    /// The chain whose message chain `c`'s sends follow: a send on `c`'s `out` port that
    /// relays, by `flow`, what came on another chain's `in` port from a neighbour (not a bound
    /// input); of several, the one with the most relay work.
    fn waits(&self, c: &Chain, flow: &dyn Fn(&str, &str) -> Option<ChainFlow>) -> Option<Wait> {
        self.chains
            .iter()
            .enumerate()
            .filter(|(_, o)| o.in_port != c.in_port && !o.fed)
            .filter_map(|(on, o)| {
                let f = flow(&c.out_port, &o.in_port).filter(|f| f.relays > 0)?;
                Some(Wait {
                    on,
                    relay_work: f.relay_work,
                })
            })
            .max_by_key(|w| (w.relay_work, std::cmp::Reverse(w.on)))
    }

    /// The answers chain `c`'s sends wait for on a `rows × cols` region: of the `in` ports
    /// bound to no tensor but `c`'s own, the one whose answers, by `flow`, the most sends
    /// wait for; the way back is a bus's crossing (a hop to the farthest PE, a switch and the
    /// answer's words), or nothing on a neighbour's link (a relaying chain's, whose crossing
    /// the round trip holds).
    fn answer(
        &self,
        c: &Chain,
        rows: u32,
        cols: u32,
        flow: &dyn Fn(&str, &str) -> Option<ChainFlow>,
    ) -> Option<Answer> {
        self.answer_ports
            .iter()
            .filter(|p| p.name != c.in_port)
            .filter_map(|p| {
                let f = flow(&c.out_port, &p.name).filter(|f| f.answered > 0)?;
                let back = p.bus.map_or(0, |b| {
                    bus_hops(b, rows, cols) * self.hop + self.switch + f.answer_words
                });
                Some(Answer {
                    trips: f.answered,
                    back,
                })
            })
            .max_by_key(|a| (a.trips, a.back))
    }

    /// A bound port's part on a `rows × cols` region, in elements per sample.
    fn part(&self, p: &PortCost, rows: u32, cols: u32) -> u64 {
        p.elems
            .div_ceil(parts(p.parts, rows, cols))
            .div_ceil(p.amortise)
    }

    /// The estimate on a `rows × cols` region, whose busiest PE does `work` cycles of tasks
    /// per sample when the caller measured it ([`crate::KernelWork`]); without it, the
    /// layer's multiply-adds spread over the region at the target's fma rate. The chains add
    /// `chains` ([`CostInputs::chain_terms`]). Host streams move at `pace`; `None` takes this
    /// layer's own host streams as the only ones.
    pub(crate) fn estimate(
        &self,
        rows: u32,
        cols: u32,
        work: Option<u64>,
        chains: ChainTerms,
        pace: Option<HostPace>,
    ) -> Estimate {
        let pes = u64::from(rows.max(1)) * u64::from(cols.max(1));
        let compute = work.unwrap_or_else(|| self.flops.div_ceil(2 * pes * self.fma_rate));
        let pace = pace.unwrap_or(HostPace {
            streams: self.host_streams(rows, cols).max(1),
            bandwidth_bytes_per_cycle: self.host_bandwidth,
        });
        let len = |p: &PortCost| self.part(p, rows, cols);
        let time = |p: &PortCost| if p.host { pace.cycles(len(p)) } else { len(p) };
        let receive = |p: &PortCost| {
            if !p.host {
                return len(p);
            }
            let queued = len(p).min(self.queue);
            pace.cycles(len(p) - queued) + queued
        };
        let inputs = || self.ports.iter().filter(|p| p.input);
        let edge_in: u64 = inputs().map(receive).sum();
        let stream = inputs().map(time).max().unwrap_or(0);
        let edge_out = self
            .ports
            .iter()
            .filter(|p| !p.input)
            .map(time)
            .max()
            .unwrap_or(0);
        Estimate {
            compute,
            edge_in,
            stream,
            edge_out,
            chain: chains.chain,
            batch_compute: 0,
            cycles: (edge_in + compute + chains.chain).max(stream).max(edge_out),
            latency: edge_in.max(stream) + compute + chains.steps,
        }
    }
}

/// Elements per sample of a bound tensor, the samples it is amortised over, and whether it
/// crosses the host's edge.
fn bound_elems(
    graph: &LayerGraph,
    layer: &LayerInstance,
    tensor: BoundTensor,
    result: bool,
) -> (u64, u64, bool) {
    match tensor {
        BoundTensor::Output => (per_sample(&layer.output_shape), 1, result),
        BoundTensor::Arg(i) => match layer.args.get(i) {
            Some(TensorRef::Input(k)) => (
                graph.inputs.get(*k).map_or(0, |t| per_sample(&t.shape)),
                1,
                true,
            ),
            Some(TensorRef::Layer(k)) => (
                graph
                    .layers
                    .get(*k)
                    .map_or(0, |l| per_sample(&l.output_shape)),
                1,
                false,
            ),
            Some(TensorRef::Param(k)) => (
                graph
                    .params
                    .get(*k)
                    .map_or(0, |t| t.tensor.shape.iter().product()),
                graph.batch.max(1),
                false,
            ),
            None => (0, 1, false),
        },
    }
}

/// The part count of a split on a `rows × cols` region.
fn parts(p: Parts, rows: u32, cols: u32) -> u64 {
    u64::from(match p {
        Parts::Rows => rows.max(1),
        Parts::Cols => cols.max(1),
        Parts::One => 1,
    })
}

/// Elements per sample of an activation shaped `[batch, ...]`.
pub(crate) fn per_sample(shape: &[u64]) -> u64 {
    shape.iter().skip(1).product()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(ports: Vec<PortCost>, chains: Vec<Chain>) -> CostInputs {
        CostInputs {
            flops: 2 * 64 * 32,
            fma_rate: 1,
            ports,
            chains,
            answer_ports: Vec::new(),
            hop: 1,
            switch: 4,
            add_rate: 2,
            host_bandwidth: 1 << 20,
            queue: 0,
        }
    }

    /// The estimate with no chain measured.
    fn unmeasured(
        c: &CostInputs,
        rows: u32,
        cols: u32,
        work: Option<u64>,
        pace: Option<HostPace>,
    ) -> Estimate {
        let chains = c.chain_terms(rows, cols, &|_, _| None);
        c.estimate(rows, cols, work, chains, pace)
    }

    fn port(elems: u64, parts: Parts, input: bool, host: bool) -> PortCost {
        PortCost {
            elems,
            parts,
            input,
            amortise: 1,
            host,
        }
    }

    #[test]
    fn inputs_work_and_chain_add_up() {
        // x over rows in, y over columns out down a chain of rows (dense_tile's shape).
        let c = inputs(
            vec![
                port(64, Parts::Rows, true, false),
                port(32, Parts::Cols, false, false),
            ],
            vec![Chain {
                along_rows: true,
                bus: false,
                output: Some(1),
                out_port: "ysum".into(),
                in_port: "psum".into(),
                fed: false,
            }],
        );
        let e = unmeasured(&c, 4, 2, None, None);
        assert_eq!(
            (e.compute, e.edge_in, e.edge_out, e.chain),
            (256, 16, 16, 16)
        );
        assert_eq!(e.cycles, 16 + 256 + 16);
        // Three steps down the rows, each a hop, a task switch, 16 wavelets and 8 adds.
        assert_eq!(e.latency, 16 + 256 + 3 * (1 + 4 + 16 + 8));
        // One row: no chain.
        let e = unmeasured(&c, 1, 2, Some(10), None);
        assert_eq!((e.chain, e.cycles, e.latency), (0, 64 + 10, 64 + 10));
    }

    #[test]
    fn host_streams_share_the_bandwidth() {
        let c = inputs(
            vec![
                port(64, Parts::Cols, true, true),
                port(64, Parts::Cols, false, true),
            ],
            Vec::new(),
        );
        assert_eq!(c.host_streams(1, 16), 32);
        // 32 streams share 64 bytes per cycle: a wavelet every 2 cycles.
        let pace = HostPace {
            streams: 32,
            bandwidth_bytes_per_cycle: 64,
        };
        let e = unmeasured(&c, 1, 16, Some(5), Some(pace));
        assert_eq!((e.edge_in, e.edge_out, e.cycles), (8, 8, 13));
        // Few streams never move faster than a wavelet per cycle.
        assert_eq!(HostPace::new(&Target::wse2(), 2).cycles(100), 100);
    }

    #[test]
    fn a_host_stream_queues_ahead_of_its_receive() {
        // x and y, one part each, from the host at a wavelet every 3 cycles (3 streams share
        // 4 bytes per cycle), 4 wavelets queued in front of the PE.
        let pace = HostPace {
            streams: 3,
            bandwidth_bytes_per_cycle: 4,
        };
        let two_inputs = |elems| CostInputs {
            queue: 4,
            ..inputs(
                vec![
                    port(elems, Parts::One, true, true),
                    port(elems, Parts::One, true, true),
                ],
                Vec::new(),
            )
        };
        // 8 wavelets each: 4 were queued, 4 more come at the pace, 3 · 4 + 4 = 16 a receive;
        // both streams ran from the start, so the slowest arrived after 8 · 3 = 24.
        let e = unmeasured(&two_inputs(8), 1, 1, Some(5), Some(pace));
        assert_eq!((e.edge_in, e.stream), (32, 24));
        assert_eq!((e.cycles, e.latency), (32 + 5, 32 + 5));
        // 2 wavelets each, all queued: the receives take 2 cycles each, but the stage can go no
        // faster than its streams, 2 · 3 = 6 cycles a sample.
        let e = unmeasured(&two_inputs(2), 1, 1, Some(1), Some(pace));
        assert_eq!((e.edge_in, e.stream), (4, 6));
        assert_eq!((e.cycles, e.latency), (6, 6 + 1));
    }

    #[test]
    fn a_reduction_answered_on_the_region_bus_waits_for_its_way_back() {
        // csl's bicgstab's dot products on 5 × 5: 11 a run, each PE's partial east along its
        // row (`sum_e`/`sum_w`), the row sums south down the last column (`sum_s`/`sum_n`),
        // each one word relayed 13 cycles after it came; the total back to every PE on the
        // region's bus (`bcast_in`), which each takes before it goes on. A round: up the row
        // and the column, 4 steps each of a hop (1), the word (1) and the relay (13), 60 + 60,
        // less the two relays in the PE's work, 94; back across the bus from the bottom-right
        // corner to the top-left one, 8 hops, a switch (4) and the word: 13. 11 · 107 = 1,177.
        let chain = |along_rows, out: &str, inp: &str| Chain {
            along_rows,
            bus: false,
            output: None,
            out_port: out.into(),
            in_port: inp.into(),
            fed: false,
        };
        let c = CostInputs {
            answer_ports: ["sum_w", "sum_n", "bcast_in"]
                .iter()
                .map(|&name| AnswerPort {
                    name: name.into(),
                    bus: (name == "bcast_in").then_some(Bus::Region),
                })
                .collect(),
            ..inputs(
                Vec::new(),
                vec![
                    chain(false, "sum_e", "sum_w"),
                    chain(true, "sum_s", "sum_n"),
                ],
            )
        };
        let sums = ChainFlow {
            messages: 11,
            words: 11,
            relays: 11,
            relay_words: 11,
            relay_work: 13,
            ..ChainFlow::default()
        };
        let answers = ChainFlow {
            messages: 11,
            words: 11,
            answered: 11,
            answer_words: 1,
            ..ChainFlow::default()
        };
        let flow = |out: &str, inp: &str| match (out, inp) {
            ("sum_e", "sum_w") | ("sum_s", "sum_n") => Some(sums),
            (_, "bcast_in") => Some(answers),
            _ => Some(ChainFlow::default()),
        };
        assert_eq!(c.chain_terms(5, 5, &flow).steps, 11 * (60 + 60 - 26 + 13));
        // Unanswered, the sums follow one word apart: 2 · (60 + 10) − 26.
        let unanswered = |out: &str, inp: &str| match inp {
            "bcast_in" => Some(ChainFlow::default()),
            _ => flow(out, inp),
        };
        assert_eq!(c.chain_terms(5, 5, &unanswered).steps, 2 * 70 - 26);
    }

    #[test]
    fn an_exchange_waits_for_a_neighbour_not_for_an_input() {
        // residual's shape on 2 × 2: x south (`tx_x`/`rx_x`), then the sums east
        // (`tx_psum`/`rx_psum`), whose sends follow x's receive; b comes from the west edge on
        // `bs`, which pairs with the result's port, and x's sends follow b's receive. A step is
        // a hop (1), a switch (4) and the message's 2 words: 7 each. The sums wait for x
        // (7 + 7); x waits for no neighbour: b's receive is the input's, in `edge_in`.
        let chain = |along_rows, out: &str, inp: &str, fed| Chain {
            along_rows,
            bus: false,
            output: None,
            out_port: out.into(),
            in_port: inp.into(),
            fed,
        };
        let c = inputs(
            Vec::new(),
            vec![
                chain(true, "tx_x", "rx_x", false),
                chain(false, "tx_psum", "rx_psum", false),
                chain(false, "out", "bs", true),
            ],
        );
        let sent = ChainFlow {
            messages: 1,
            words: 2,
            ..ChainFlow::default()
        };
        let follows = ChainFlow { relays: 1, ..sent };
        let flow = |out: &str, inp: &str| match (out, inp) {
            ("tx_psum", "rx_x") | ("tx_x", "bs") => Some(follows),
            ("tx_x", "rx_x") | ("tx_psum", "rx_psum") => Some(sent),
            _ => Some(ChainFlow::default()),
        };
        assert_eq!(c.chain_terms(2, 2, &flow).steps, 7 + 7);
        // Without the sums' wait the two exchanges overlap: 7.
        let apart = |out: &str, inp: &str| match (out, inp) {
            ("tx_psum", "rx_x") => Some(sent),
            _ => flow(out, inp),
        };
        assert_eq!(c.chain_terms(2, 2, &apart).steps, 7);
    }
}

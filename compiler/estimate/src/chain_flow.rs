//! How a kernel passes messages along its chains ([`wsel_map::ChainFlow`],
//! `docs/mapping.md` §5), read from the causal traces of a region's representative PEs
//! ([`wsel_codegen::dry_trace`]) for a batch of one sample and of two: the difference is one
//! sample's — or, when the kernel sends as much on a chain for two samples as for one (it
//! runs once whatever the batch), the one run's. [`region_flows`] picks each chain's PE.
//!
//! For a pair of an `out` port and an `in` port (the mapper asks for the pairs that make a
//! chain: a PE sends on `out` to the neighbour that receives on `in`):
//! - a send on `out` **relays** when it follows the receive of the same number (the k-th send
//!   after the k-th receive) on `in` or on another `in` port from the same side (its **near
//!   side**): the message a neighbour passed on, as a running sum, whatever colour it came
//!   on — gemv-08's columns alternate two colours, receiving on one and sending on the other;
//!   its relay work is the causal clock from the receive's task to the send;
//! - a bus's sending **hands over** to another PE when the PE that receives the most on it
//!   takes more messages than the one that sends the most sends: ⌈received / sent⌉ − 1
//!   times (its senders take turns);
//! - the PE makes a **round trip** on the chain when the first receive of its second sample
//!   on another `in` port follows a receive on `in` that the PE posted after its own send of
//!   the same number on another `out` port: the next sample waits for an answer;
//! - a send on `out` is **answered** on `in` when the first receive the PE posts after it is
//!   on `in` and a later send follows that receive: it sent a partial to a reduction and
//!   waits for the result before it goes on (csl's bicgstab's dot products, answered on the
//!   region's bus). Counted in the one sample's run: the answers a sample waits for.

use wsel_codegen::dry_run::PePlace;
use wsel_codegen::dry_trace::{Mark, Transfer};
use wsel_ir::graph::{PortInfo, Side};
use wsel_ir::kernel::{KernelIr, PortDirection};
use wsel_map::ChainFlow;

/// Per `in` port of a kernel (by index), the neighbour ports on its axis: the `in` ports from
/// the same side (itself included) and the `out` ports to the opposite side — no bus,
/// multicast or switched port, at the same distance. Empty for an `out` port.
pub(crate) type NearSides = Vec<Axis>;

/// The neighbour ports on an `in` port's axis (indices).
#[derive(Debug, Clone, Default)]
pub(crate) struct Axis {
    near: Vec<u32>,
    far: Vec<u32>,
    /// The side the `in` port faces.
    side: Option<Side>,
}

impl Axis {
    /// The `in` ports from the near side and the `out` ports to the far side.
    pub(crate) fn ports(&self) -> (&[u32], &[u32]) {
        (&self.near, &self.far)
    }
}

/// The near sides of `ir`'s ports, from the layer's view of them (`ports`, matched by name).
pub(crate) fn near_sides(ir: &KernelIr, ports: &[PortInfo]) -> NearSides {
    let neighbour = |name: &str| {
        ports
            .iter()
            .find(|p| p.name == name && p.bus.is_none() && !p.multicast && p.switch.is_none())
    };
    let infos: Vec<Option<&PortInfo>> = ir.ports.iter().map(|p| neighbour(&p.name)).collect();
    let matching = |side, distance: &Option<_>, direction| -> Vec<u32> {
        (0..infos.len() as u32)
            .filter(|&q| {
                infos[q as usize].is_some_and(|o| {
                    o.side == side && o.distance == *distance && o.direction == direction
                })
            })
            .collect()
    };
    infos
        .iter()
        .map(|info| match info {
            Some(i) if i.direction == PortDirection::In => Axis {
                near: matching(i.side, &i.distance, PortDirection::In),
                far: matching(i.side.opposite(), &i.distance, PortDirection::Out),
                side: Some(i.side),
            },
            _ => Axis::default(),
        })
        .collect()
}

/// A chain's flow at one PE.
#[derive(Debug, Clone)]
pub(crate) struct PairFlow {
    pub out: String,
    pub inp: String,
    pub flow: ChainFlow,
    /// Its relays pass on what came on another colour (an `in` port of the near side).
    crossed: bool,
    /// The side its `in` port faces.
    side: Option<Side>,
    /// Receives on its `in` port, counted as its sends are (per sample, or the one run's).
    received: u64,
}

/// The flow of every pair of an `out` and an `in` port of `ir` (by name), from one PE's
/// traces for one sample (`one`) and two (`two`); `near` from [`near_sides`].
pub(crate) fn chain_flows(
    ir: &KernelIr,
    near: &NearSides,
    one: &[Transfer],
    two: &[Transfer],
) -> Vec<PairFlow> {
    let ports = |d: PortDirection| {
        ir.ports
            .iter()
            .enumerate()
            .filter(move |(_, p)| p.direction == d)
            .map(|(i, p)| (i as u32, p.name.clone()))
    };
    let mut flows = Vec::new();
    for (out, out_name) in ports(PortDirection::Out) {
        for (inp, in_name) in ports(PortDirection::In) {
            let pair = Pair::new(ir, near, out, inp);
            let flow = pair.flow(one, two);
            flows.push(PairFlow {
                out: out_name.clone(),
                inp: in_name,
                crossed: flow.relays > 0 && pair.relay_ports(two) != [inp],
                side: pair.axis.side,
                received: pair.received(one, two),
                flow,
            });
        }
    }
    flows
}

/// The flows of a region's chains from those of its representative PEs (`per_pe`, each with
/// its place, the centre's at `centre`): per chain, the flow of the PE that relays the most
/// messages a sample — the far end of a gather, whose last message leaves after all the
/// others — the centre's on a tie, and the centre's round trip; when the centre sends nothing
/// and no PE relays, that of the PE that sends the most, as an exchange. A relay across
/// colours counts only at the centre: each of the colours' chains would take it, and they are
/// one chain. The
/// chain's first PE relays too when a representative PE on the region's edge its `in` port
/// faces relays on it (a message that enters the region there, as gemv-09's b).
pub(crate) fn region_flows(per_pe: &[(PePlace, Vec<PairFlow>)], centre: usize) -> Vec<PairFlow> {
    let Some((_, mut flows)) = per_pe.get(centre).cloned() else {
        return Vec::new();
    };
    for (i, f) in flows.iter_mut().enumerate() {
        let at = |pe: &(PePlace, Vec<PairFlow>)| pe.1.get(i).cloned();
        let mut best = f.flow;
        for o in per_pe.iter().filter_map(at) {
            if o.flow.relays > best.relays && !o.crossed {
                best = ChainFlow {
                    round_trip: f.flow.round_trip,
                    ..o.flow
                };
            }
        }
        if best.messages == 0 {
            best = sender(per_pe.iter().filter_map(at)).unwrap_or(best);
        }
        best.first_relays = per_pe.iter().any(|pe| {
            f.side.is_some_and(|side| on_edge(pe.0, side))
                && at(pe).is_some_and(|o| o.flow.relays > 0)
        });
        best.handovers = handovers(per_pe.iter().filter_map(at));
        f.flow = best;
    }
    flows
}

/// The flow of the PE that sends the most messages on a chain none of whose PEs relays on
/// it and whose centre sends nothing on it (a bus's root, residual's top row sending x
/// south), as an exchange: a relay across colours counts only at the centre.
fn sender(flows: impl Iterator<Item = PairFlow>) -> Option<ChainFlow> {
    let o = flows.max_by_key(|o| o.flow.messages)?;
    let exchange = ChainFlow {
        relays: 0,
        relay_words: 0,
        relay_work: 0,
        round_trip: false,
        ..o.flow
    };
    // Every PE's relays are across colours here: the first pass took any other.
    (o.flow.messages > 0).then_some(exchange)
}

/// How often the sending on a chain passes to another PE: the most messages a PE receives on
/// it over the most one sends, less one (cholesky's row bus: 36 and 4, 8 handovers); none
/// when no PE sends.
fn handovers(flows: impl Iterator<Item = PairFlow>) -> u64 {
    let (received, sent) = flows.fold((0, 0), |(r, s), o| {
        (r.max(o.received), s.max(o.flow.messages))
    });
    if sent == 0 {
        return 0;
    }
    received.div_ceil(sent).saturating_sub(1)
}

/// Whether `place` lies on the region's edge on `side`.
fn on_edge(place: PePlace, side: Side) -> bool {
    match side {
        Side::West => place.x == 0,
        Side::East => place.x + 1 == place.width,
        Side::North => place.y == 0,
        Side::South => place.y + 1 == place.height,
    }
}

/// The longest step a message takes through the PE of `trace` along any chain of `ir`, or
/// `None` when the PE relays nothing: a relayed message's words (on average) and the shortest
/// work between two relays on the chain — a PE takes the chain's messages one after another,
/// so at the end of a phase, when only the reductions are left, the last message advances one
/// PE per such period. `trace` takes the chains' messages last
/// ([`wsel_codegen::dry_run::DryRunner::trace_late`]), as the phase's end does. A
/// weight-streaming phase runs its whole batch in one trace, so there is no second sample to
/// subtract.
pub(crate) fn relay_step(ir: &KernelIr, near: &NearSides, trace: &[Transfer]) -> Option<u64> {
    let ports = |d: PortDirection| {
        (0..ir.ports.len() as u32).filter(move |&i| ir.ports[i as usize].direction == d)
    };
    ports(PortDirection::Out)
        .flat_map(|out| ports(PortDirection::In).map(move |inp| Pair::new(ir, near, out, inp)))
        .filter_map(|pair| pair.relay_period(trace))
        .max()
}

/// The most work the PE of `trace` does on a chain message it keeps, before it goes on: of
/// the receives on `chain` (its ports from neighbours), those whose first transfer after
/// them is no send (they end their chain here, as a reduce-scatter's row keeps its own
/// chunk: std.nn's `dense_resident` adds it up and writes its result before it relays the
/// next chunk), the causal clock from the receive's task to that transfer. `None` when the
/// PE passes on every chain message it takes, or takes none. The rows keep their chunks one
/// after another, each relaying the next chunk only after its keep.
pub(crate) fn keep_turn(ir: &KernelIr, chain: &[u32], trace: &[Transfer]) -> Option<u64> {
    let mut seen = vec![0u32; ir.ports.len()];
    let mut turn = None;
    for t in trace {
        for &p in chain {
            let Some(mark) = t.after.get(p as usize).copied().flatten() else {
                continue;
            };
            let Some(last) = seen.get_mut(p as usize) else {
                continue;
            };
            if mark.ordinal <= *last {
                continue;
            }
            *last = mark.ordinal;
            if !t.send {
                turn = turn.max(Some(t.at.saturating_sub(mark.at)));
            }
        }
    }
    turn
}

/// The receives the PE of `trace` posts on its ports from outside the region (`in` ports not
/// in `chain`): a weight-streaming phase's blocks of weights (and its bias).
pub(crate) fn outside_receives(ir: &KernelIr, chain: &[u32], trace: &[Transfer]) -> u64 {
    let outside = |p: u32| {
        !chain.contains(&p)
            && ir
                .ports
                .get(p as usize)
                .is_some_and(|port| port.direction == PortDirection::In)
    };
    trace.iter().filter(|t| !t.send && outside(t.port)).count() as u64
}

/// Sends on a chain's `out` port in one trace.
#[derive(Debug, Clone, Copy, Default)]
struct Sends {
    messages: u64,
    words: u64,
    relays: u64,
    relay_words: u64,
    /// The most relay work.
    relay_work: u64,
}

/// A chain: the kernel's ports (indices) it sends and receives on, and the `in` ports from
/// the same side as `inp` (its near side).
struct Pair<'a> {
    ir: &'a KernelIr,
    out: u32,
    inp: u32,
    axis: &'a Axis,
}

impl<'a> Pair<'a> {
    fn new(ir: &'a KernelIr, near: &'a NearSides, out: u32, inp: u32) -> Pair<'a> {
        static NONE: Axis = Axis {
            near: Vec::new(),
            far: Vec::new(),
            side: None,
        };
        let axis = near.get(inp as usize).unwrap_or(&NONE);
        Pair { ir, out, inp, axis }
    }

    fn flow(&self, one: &[Transfer], two: &[Transfer]) -> ChainFlow {
        let (a, b) = (self.sends(one), self.sends(two));
        let (answered, answer_words) = self.answered(one);
        // A kernel that sends on the chain as much for two samples as for one passes its
        // messages once, whatever the batch (csl's ports run once): the first sample waits
        // for all of them.
        let a = if b.messages > a.messages {
            a
        } else {
            Sends::default()
        };
        ChainFlow {
            messages: b.messages.saturating_sub(a.messages),
            words: b.words.saturating_sub(a.words),
            relays: b.relays.saturating_sub(a.relays),
            relay_words: b.relay_words.saturating_sub(a.relay_words),
            relay_work: b.relay_work,
            first_relays: false,
            round_trip: self.round_trip(one, two),
            handovers: 0,
            answered,
            answer_words,
        }
    }

    /// The sends on `out` in `trace` whose answer on `in` the PE waits for: the first receive
    /// it posts after the send is on `in`, and a later send follows that receive. With the
    /// most words of such an answer. None when `in` takes messages from the side `out` sends
    /// away from: that is the next message along the chain, on its colour or another one
    /// (mandelbrot's packets), not an answer.
    fn answered(&self, trace: &[Transfer]) -> (u64, u64) {
        if self.axis.far.contains(&self.out) {
            return (0, 0);
        }
        let (mut sends, mut words) = (0, 0);
        for (i, t) in trace.iter().enumerate() {
            if !t.send || t.port != self.out {
                continue;
            }
            let later = &trace[i + 1..];
            let Some(answer) = later
                .iter()
                .find(|r| !r.send)
                .filter(|r| r.port == self.inp)
            else {
                continue;
            };
            let follows = |n: &Transfer| {
                n.send && self.latest(n).is_some_and(|m| m.ordinal >= answer.ordinal)
            };
            if later.iter().any(follows) {
                sends += 1;
                words = words.max(u64::from(answer.words));
            }
        }
        (sends, words)
    }

    /// Receives on the chain's `in` port per sample — or, when the two runs post as many, the
    /// one run's, as [`Pair::flow`] counts sends.
    fn received(&self, one: &[Transfer], two: &[Transfer]) -> u64 {
        let count = |trace: &[Transfer]| {
            trace
                .iter()
                .filter(|t| !t.send && t.port == self.inp)
                .count() as u64
        };
        let (a, b) = (count(one), count(two));
        if b > a { b - a } else { b }
    }

    fn sends(&self, trace: &[Transfer]) -> Sends {
        let ports = self.relay_ports(trace);
        let mut s = Sends::default();
        for t in trace.iter().filter(|t| t.send && t.port == self.out) {
            s.messages += 1;
            s.words += u64::from(t.words);
            if let Some(m) = self.relayed(ports, t) {
                s.relays += 1;
                s.relay_words += u64::from(t.words);
                s.relay_work = s.relay_work.max(t.at.saturating_sub(m.at));
            }
        }
        s
    }

    /// The words of a relayed message (on average) plus the shortest causal work between two
    /// consecutive relays, `None` without two relays. The shortest: a relay may follow other
    /// work in the dry run (a reduction that waits for its chunk's last weight block) that
    /// the fabric has done by then; the chain's own cycle (receive, relay, the bookkeeping to
    /// the next receive) lies between the closest two.
    fn relay_period(&self, trace: &[Transfer]) -> Option<u64> {
        let ports = self.relay_ports(trace);
        let relays: Vec<&Transfer> = trace
            .iter()
            .filter(|t| t.send && t.port == self.out)
            .filter(|t| self.relayed(ports, t).is_some())
            .collect();
        let words: u64 = relays.iter().map(|t| u64::from(t.words)).sum();
        let gap = relays
            .windows(2)
            .map(|w| w[1].at.saturating_sub(w[0].at))
            .min()?;
        Some(words.div_ceil(relays.len() as u64) + gap)
    }

    /// The `in` ports whose receives the PE of `trace` passes on along the chain: its `in`
    /// port, or — when the PE receives nothing on it and sends on no other port of the
    /// chain's axis toward the far side — every port from the near side: the PE takes the
    /// chain from another colour and passes it on this one.
    fn relay_ports(&self, trace: &[Transfer]) -> &[u32] {
        let used = |p: u32, send: bool| trace.iter().any(|t| t.port == p && t.send == send);
        let other_far = self
            .axis
            .far
            .iter()
            .any(|&p| p != self.out && used(p, true));
        if used(self.inp, false) || other_far || self.axis.near.is_empty() {
            std::slice::from_ref(&self.inp)
        } else {
            &self.axis.near
        }
    }

    /// The receive that the send `t` relays: the latest receive of its number or later on one
    /// of `ports` that `t` follows.
    fn relayed(&self, ports: &[u32], t: &Transfer) -> Option<Mark> {
        ports
            .iter()
            .filter_map(|&p| t.after.get(p as usize).copied().flatten())
            .filter(|m| m.ordinal >= t.ordinal)
            .max_by_key(|m| m.at)
    }

    /// The latest receive on the chain's `in` port that `t` follows.
    fn latest(&self, t: &Transfer) -> Option<Mark> {
        t.after.get(self.inp as usize).copied().flatten()
    }

    /// Whether the second sample's first receive on some other `in` port waits for an answer
    /// on this chain.
    fn round_trip(&self, one: &[Transfer], two: &[Transfer]) -> bool {
        let receives = |trace: &[Transfer], port: u32| {
            trace.iter().filter(|t| !t.send && t.port == port).count() as u32
        };
        (0..self.ir.ports.len() as u32)
            .filter(|&x| x != self.inp && self.direction(x) == PortDirection::In)
            .filter_map(|x| {
                let first = receives(one, x);
                let next = two
                    .iter()
                    .find(|t| !t.send && t.port == x && t.ordinal == first + 1);
                (first > 0).then_some(next?)
            })
            .filter_map(|t| self.latest(t))
            .any(|m| self.answers(two, m))
    }

    /// Whether the receive `m` on `in` was posted after a send of the same number on
    /// another `out` port.
    fn answers(&self, trace: &[Transfer], m: Mark) -> bool {
        trace
            .iter()
            .filter(|t| !t.send && t.port == self.inp && t.ordinal == m.ordinal)
            .any(|t| {
                t.after.iter().enumerate().any(|(p, sent)| {
                    let other_out =
                        p as u32 != self.out && self.direction(p as u32) == PortDirection::Out;
                    other_out && sent.is_some_and(|s| s.ordinal >= m.ordinal)
                })
            })
    }

    fn direction(&self, port: u32) -> PortDirection {
        self.ir.ports[port as usize].direction
    }
}

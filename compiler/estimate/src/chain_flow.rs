//! How a kernel passes messages along its chains ([`wsel_map::ChainFlow`],
//! `docs/mapping.md` §5), read from the causal traces of a region's centre PE
//! ([`wsel_codegen::dry_trace`]) for a batch of one sample and of two: the difference is one
//! sample's.
//!
//! For a pair of an `out` port and an `in` port (the mapper asks for the pairs that make a
//! chain: a PE sends on `out` to the neighbour that receives on `in`):
//! - a send on `out` **relays** when it follows the receive on `in` of the same number (the
//!   k-th send after the k-th receive): the message a neighbour passed on, as a running sum;
//!   its relay work is the causal clock from the receive's task to the send;
//! - the PE makes a **round trip** on the chain when the first receive of its second sample
//!   on another `in` port follows a receive on `in` that the PE posted after its own send of
//!   the same number on another `out` port: the next sample waits for an answer.

use wsel_codegen::dry_trace::{Mark, Transfer};
use wsel_ir::kernel::{KernelIr, PortDirection};
use wsel_map::ChainFlow;

/// The flow of every pair of an `out` and an `in` port of `ir` (by name), from the centre
/// PE's traces for one sample (`one`) and two (`two`).
pub(crate) fn chain_flows(
    ir: &KernelIr,
    one: &[Transfer],
    two: &[Transfer],
) -> Vec<(String, String, ChainFlow)> {
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
            let pair = Pair { ir, out, inp };
            flows.push((out_name.clone(), in_name, pair.flow(one, two)));
        }
    }
    flows
}

/// The longest step a message takes through the PE of `trace` along any chain of `ir`, or
/// `None` when the PE relays nothing: a relayed message's words (on average) and the shortest
/// work between two relays on the chain — a PE takes the chain's messages one after another,
/// so at the end of a phase, when only the reductions are left, the last message advances one
/// PE per such period. `trace` takes the chains' messages last
/// ([`wsel_codegen::dry_run::DryRunner::trace_late`]), as the phase's end does. A
/// weight-streaming phase runs its whole batch in one trace, so there is no second sample to
/// subtract.
pub(crate) fn relay_step(ir: &KernelIr, trace: &[Transfer]) -> Option<u64> {
    let ports = |d: PortDirection| {
        (0..ir.ports.len() as u32).filter(move |&i| ir.ports[i as usize].direction == d)
    };
    ports(PortDirection::Out)
        .flat_map(|out| ports(PortDirection::In).map(move |inp| Pair { ir, out, inp }))
        .filter_map(|pair| pair.relay_period(trace))
        .max()
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

/// A chain: the kernel's ports (indices) it sends and receives on.
struct Pair<'a> {
    ir: &'a KernelIr,
    out: u32,
    inp: u32,
}

impl Pair<'_> {
    fn flow(&self, one: &[Transfer], two: &[Transfer]) -> ChainFlow {
        let (a, b) = (self.sends(one), self.sends(two));
        ChainFlow {
            messages: b.messages.saturating_sub(a.messages),
            words: b.words.saturating_sub(a.words),
            relays: b.relays.saturating_sub(a.relays),
            relay_words: b.relay_words.saturating_sub(a.relay_words),
            relay_work: b.relay_work,
            round_trip: self.round_trip(one, two),
        }
    }

    fn sends(&self, trace: &[Transfer]) -> Sends {
        let mut s = Sends::default();
        for t in trace.iter().filter(|t| t.send && t.port == self.out) {
            s.messages += 1;
            s.words += u64::from(t.words);
            let relayed = self.latest(t).filter(|m| m.ordinal >= t.ordinal);
            if let Some(m) = relayed {
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
        let relays: Vec<&Transfer> = trace
            .iter()
            .filter(|t| t.send && t.port == self.out)
            .filter(|t| self.latest(t).is_some_and(|m| m.ordinal >= t.ordinal))
            .collect();
        let words: u64 = relays.iter().map(|t| u64::from(t.words)).sum();
        let gap = relays
            .windows(2)
            .map(|w| w[1].at.saturating_sub(w[0].at))
            .min()?;
        Some(words.div_ceil(relays.len() as u64) + gap)
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

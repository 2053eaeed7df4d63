//! The reduction: every system's stream summed by the switches on its way up to the store
//! (the gradients of data-parallel training), with its timing.
//!
//! Each system sends its stream up its link from the cycle it is ready, at the link's rate.
//! A switch forwards packet `k` up once packet `k` of every child has begun to arrive (plus
//! its latency), as the sum of its children's packets in child order, at no more than the
//! link's rate and its `reduce_bytes_per_cycle`, and never ahead of the slowest child's
//! bytes. The order of the sums is fixed by the tree (system 0 first under each switch), so
//! the result is the same for any number of processes simulating the cluster.

use wsel_target::Swarm;

use crate::events::{Ticks, packets};
use crate::tree::{Node, Tree};

/// A reduction's result at the store.
#[derive(Clone, Debug, PartialEq)]
pub struct Reduced {
    /// The element-wise sum of the systems' streams.
    pub values: Vec<f32>,
    pub ticks: Ticks,
    /// When the first and the last byte of the sum reached the store (ticks from cycle 0).
    pub first: u128,
    pub last: u128,
}

impl Reduced {
    /// The cycle by which the whole sum had reached the store.
    pub fn cycles(&self) -> u64 {
        self.ticks.ceil(self.last)
    }
}

/// A node's sum on its way up: its values and every packet's arrival (head, tail) at the
/// upper end of its link.
struct Upstream {
    node: Node,
    values: Vec<f32>,
    head: Vec<u128>,
    tail: Vec<u128>,
}

/// Sums `streams` (one per system of `tree`, in system order, all of one length; system `s`
/// ready to send from cycle `ready[s]`) through the tree into the store.
pub fn reduce(tree: &Tree, swarm: &Swarm, streams: &[Vec<f32>], ready: &[u64]) -> Reduced {
    let ticks = Ticks::for_rates(&[swarm.link_bytes_per_cycle, swarm.reduce_bytes_per_cycle]);
    let len = streams.first().map_or(0, Vec::len);
    let sizes = packets(4 * len as u64, swarm.packet_bytes);
    let flight = ticks.cycles(u64::from(swarm.link_latency_cycles));
    let switch = ticks.cycles(u64::from(swarm.switch_latency_cycles));
    // One up-link: (head, tail) arrivals at its upper end of every packet, from the times
    // each packet's head and tail are ready at its lower end and the rate it may leave at.
    let uplink = |ready_head: &[u128], ready_tail: &[u128], rate: u32| {
        let mut free = 0u128;
        let mut head = Vec::with_capacity(sizes.len());
        let mut tail = Vec::with_capacity(sizes.len());
        for (k, &size) in sizes.iter().enumerate() {
            let start = ready_head[k].max(free);
            let end = (start + ticks.bytes(size, rate)).max(ready_tail[k]);
            free = end;
            head.push(start + flight);
            tail.push(end + flight);
        }
        (head, tail)
    };
    let link = swarm.link_bytes_per_cycle;
    let summed = link.min(swarm.reduce_bytes_per_cycle);
    // Systems: all their bytes are ready at `ready`; the link paces them.
    let mut up: Vec<Upstream> = (0..tree.systems)
        .map(|s| {
            let t = ticks.cycles(ready.get(s as usize).copied().unwrap_or(0));
            let at = vec![t; sizes.len()];
            let (head, tail) = uplink(&at, &at, link);
            let values = streams.get(s as usize).cloned().unwrap_or_default();
            Upstream {
                node: Node::System(s),
                values,
                head,
                tail,
            }
        })
        .collect();
    // Switches, bottom level first: sum the children, send the sum up.
    for level in (0..tree.depth).rev() {
        let mut next = Vec::new();
        for index in 0..tree.switches(level) {
            let children: Vec<_> = tree
                .children(level, index)
                .into_iter()
                .filter_map(|c| up.iter().find(|u| u.node == c))
                .collect();
            let mut values = vec![0f32; len];
            for child in &children {
                for (v, c) in values.iter_mut().zip(&child.values) {
                    *v += *c;
                }
            }
            let latest = |pick: fn(&Upstream) -> &Vec<u128>| {
                (0..sizes.len())
                    .map(|k| children.iter().map(|c| pick(c)[k]).max().unwrap_or(0) + switch)
                    .collect::<Vec<u128>>()
            };
            let (head, tail) = uplink(&latest(|c| &c.head), &latest(|c| &c.tail), summed);
            next.push(Upstream {
                node: Node::Switch { level, index },
                values,
                head,
                tail,
            });
        }
        up = next;
    }
    let (values, head, tail) = match up.into_iter().next() {
        Some(root) => (root.values, root.head, root.tail),
        None => (Vec::new(), Vec::new(), Vec::new()),
    };
    Reduced {
        values,
        ticks,
        first: head.first().copied().unwrap_or(0),
        last: tail.last().copied().unwrap_or(0),
    }
}

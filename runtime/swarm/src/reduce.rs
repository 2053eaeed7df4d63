//! The reduction: every system's stream summed by the switches on its way up to the store
//! (the gradients of data-parallel training), with its timing.
//!
//! Each system sends its stream up its link from the cycle it is ready, at the link's rate.
//! A switch forwards packet `k` up once packet `k` of every child has begun to arrive (plus
//! its latency), as the sum of its children's packets in child order, at no more than the
//! link's rate and its `reduce_bytes_per_cycle`, and never ahead of the slowest child's
//! bytes. The order of the sums is fixed by the tree (system 0 first under each switch), so
//! the result is the same for any number of processes simulating the cluster.
//!
//! A training step sends several streams up one after another (a gradient per parameter,
//! each ready when its backward phase ends): [`reduce_all`] sends them through the same
//! FIFO links in order, so a stream that is ready while the one before still occupies a
//! link waits for it — two streams never share a link's bandwidth unaccounted.

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

/// One stream to reduce: every system's values (in system order, all of one length) and the
/// cycle each system has them ready to send.
#[derive(Clone, Copy, Debug)]
pub struct Stream<'a> {
    pub values: &'a [Vec<f32>],
    pub ready: &'a [u64],
}

/// A node's sums on their way up: per stream its values, and every packet's arrival (head,
/// tail) at the upper end of its link.
struct Upstream {
    node: Node,
    values: Vec<Vec<f32>>,
    head: Vec<u128>,
    tail: Vec<u128>,
}

/// Sums `streams` (one per system of `tree`, in system order, all of one length; system `s`
/// ready to send from cycle `ready[s]`) through the tree into the store.
pub fn reduce(tree: &Tree, swarm: &Swarm, streams: &[Vec<f32>], ready: &[u64]) -> Reduced {
    let stream = Stream {
        values: streams,
        ready,
    };
    let mut all = reduce_all(tree, swarm, &[stream]);
    all.pop().unwrap_or(Reduced {
        values: Vec::new(),
        ticks: Ticks::for_rates(&[1]),
        first: 0,
        last: 0,
    })
}

/// Sums each of `streams` through the tree into the store, one after another on the same
/// links (stream `i + 1`'s packets queue behind stream `i`'s); a result per stream.
pub fn reduce_all(tree: &Tree, swarm: &Swarm, streams: &[Stream<'_>]) -> Vec<Reduced> {
    let ticks = Ticks::for_rates(&[swarm.link_bytes_per_cycle, swarm.reduce_bytes_per_cycle]);
    // Every stream's packets, in order; `owner[k]` is the stream packet `k` belongs to.
    let mut sizes = Vec::new();
    let mut owner = Vec::new();
    for (i, stream) in streams.iter().enumerate() {
        let len = stream.values.first().map_or(0, Vec::len);
        let own = packets(4 * len as u64, swarm.packet_bytes);
        owner.extend(std::iter::repeat_n(i, own.len()));
        sizes.extend(own);
    }
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
    // Systems: all of a stream's bytes are ready at its `ready`; the link paces them.
    let mut up: Vec<Upstream> = (0..tree.systems)
        .map(|s| {
            let ready_of = |i: usize| {
                let ready = streams[i].ready.get(s as usize).copied().unwrap_or(0);
                ticks.cycles(ready)
            };
            let at: Vec<u128> = owner.iter().map(|&i| ready_of(i)).collect();
            let (head, tail) = uplink(&at, &at, link);
            let values = streams
                .iter()
                .map(|st| st.values.get(s as usize).cloned().unwrap_or_default())
                .collect();
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
            let values = (0..streams.len())
                .map(|i| sum_of(children.iter().map(|c| &c.values[i])))
                .collect();
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
    let root = up.into_iter().next();
    (0..streams.len())
        .map(|i| {
            let mine: Vec<usize> = (0..sizes.len()).filter(|&k| owner[k] == i).collect();
            let ready = streams[i].ready.iter().copied().max().unwrap_or(0);
            let (first, last) = match (&root, mine.first(), mine.last()) {
                (Some(r), Some(&a), Some(&b)) => (r.head[a], r.tail[b]),
                _ => (ticks.cycles(ready), ticks.cycles(ready)),
            };
            Reduced {
                values: root.as_ref().map_or_else(Vec::new, |r| r.values[i].clone()),
                ticks,
                first,
                last,
            }
        })
        .collect()
}

/// The element-wise sum of `parts`, in order (each of one length).
fn sum_of<'a>(mut parts: impl Iterator<Item = &'a Vec<f32>>) -> Vec<f32> {
    let mut sum = parts.next().cloned().unwrap_or_default();
    for part in parts {
        for (s, p) in sum.iter_mut().zip(part) {
            *s += *p;
        }
    }
    sum
}

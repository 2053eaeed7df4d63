//! The broadcast, packet by packet over every link of the tree, in exact time.

use wsel_target::Swarm;

use crate::tree::{Node, Tree};

/// Exact times: `ticks / per_cycle` cycles, where `per_cycle` is divisible by every rate of
/// the model (store, links, reduction), so that a packet's time on a link is a whole number
/// of ticks.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Ticks {
    pub per_cycle: u128,
}

impl Ticks {
    /// The clock for these rates (bytes per cycle, each at least 1).
    pub fn for_rates(rates: &[u32]) -> Ticks {
        let per_cycle = rates
            .iter()
            .map(|&r| u128::from(r.max(1)))
            .fold(1, |a, b| a / gcd(a, b) * b);
        Ticks { per_cycle }
    }

    /// Ticks of `cycles` cycles.
    pub fn cycles(&self, cycles: u64) -> u128 {
        u128::from(cycles) * self.per_cycle
    }

    /// Ticks to move `bytes` at `rate` bytes per cycle.
    pub fn bytes(&self, bytes: u64, rate: u32) -> u128 {
        u128::from(bytes) * self.per_cycle / u128::from(rate.max(1))
    }

    /// `ticks` in whole cycles, rounded up (the cycle by which it has happened).
    pub fn ceil(&self, ticks: u128) -> u64 {
        ticks.div_ceil(self.per_cycle).min(u128::from(u64::MAX)) as u64
    }
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// When each packet's first and last byte reached the lower end of one link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkTimes {
    /// The node the link leads down to.
    pub to: Node,
    pub head: Vec<u128>,
    pub tail: Vec<u128>,
}

/// One layer's broadcast: every link's packet times, and every system's feed.
#[derive(Clone, Debug)]
pub struct Broadcast {
    pub ticks: Ticks,
    /// The packets' sizes in bytes, in order.
    pub packets: Vec<u64>,
    /// Every link, top-down (`Tree::links_top_down`).
    pub links: Vec<LinkTimes>,
    /// Per system, in order.
    pub feeds: Vec<Feed>,
}

impl Broadcast {
    /// The cycle by which the last byte had reached every system.
    pub fn cycles(&self) -> u64 {
        let last = self.feeds.iter().map(|f| f.last).max().unwrap_or(0);
        self.ticks.ceil(last)
    }
}

/// What one system receives of a broadcast: its first byte at `first`, its last at `last`
/// (ticks from the store's request), and between them `rate` bytes per cycle when the
/// stream is even (`even`: every packet's last byte came exactly when `rate` says).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Feed {
    pub first: u128,
    pub last: u128,
    pub rate: u32,
    pub even: bool,
}

impl Feed {
    /// The feed every system of `tree` gets from a store of `store_rate` bytes per cycle and
    /// `store_latency` cycles, in closed form: first byte after the store's latency and the
    /// path's links and switches, then `min(store, link)` bytes per cycle. Exact for the event
    /// model ([`broadcast`]); the tests check it packet by packet. Returns (first byte in
    /// whole cycles, rate).
    pub fn closed_form(
        tree: &Tree,
        swarm: &Swarm,
        store_rate: u32,
        store_latency: u32,
    ) -> (u64, u32) {
        let links = u64::from(tree.depth) + 1;
        let first = u64::from(store_latency)
            + links * u64::from(swarm.link_latency_cycles)
            + u64::from(tree.depth) * u64::from(swarm.switch_latency_cycles);
        (first, store_rate.min(swarm.link_bytes_per_cycle))
    }
}

/// Broadcasts `bytes` from a store of `store_rate` bytes per cycle, whose first byte is
/// ready `store_latency` cycles after the request, to every system of `tree`.
pub fn broadcast(
    tree: &Tree,
    swarm: &Swarm,
    store_rate: u32,
    store_latency: u32,
    bytes: u64,
) -> Broadcast {
    let ticks = Ticks::for_rates(&[
        store_rate,
        swarm.link_bytes_per_cycle,
        swarm.reduce_bytes_per_cycle,
    ]);
    let packets = packets(bytes, swarm.packet_bytes);
    let link = |from_head: &[u128], from_tail: &[u128], delay: u128| {
        // One FIFO link: packet k starts when its head is ready at the upper end and the
        // packet before has left; it ends no sooner than its bytes take at the link's rate,
        // and no sooner than its last byte is ready.
        let mut head = Vec::with_capacity(packets.len());
        let mut tail = Vec::with_capacity(packets.len());
        let mut free = 0u128;
        let flight = ticks.cycles(u64::from(swarm.link_latency_cycles));
        for (k, &size) in packets.iter().enumerate() {
            let start = (from_head[k] + delay).max(free);
            let end =
                (start + ticks.bytes(size, swarm.link_bytes_per_cycle)).max(from_tail[k] + delay);
            free = end;
            head.push(start + flight);
            tail.push(end + flight);
        }
        (head, tail)
    };
    // The store's output: packet k's first byte ready once the bytes before it are out.
    let t0 = ticks.cycles(u64::from(store_latency));
    let mut sent = 0u64;
    let (mut store_head, mut store_tail) = (Vec::new(), Vec::new());
    for &size in &packets {
        store_head.push(t0 + ticks.bytes(sent, store_rate));
        sent += size;
        store_tail.push(t0 + ticks.bytes(sent, store_rate));
    }
    let switch = ticks.cycles(u64::from(swarm.switch_latency_cycles));
    let mut links: Vec<LinkTimes> = Vec::new();
    for to in tree.links_top_down() {
        let parent = tree.parent(to);
        let (head, tail) = match parent {
            Node::Store => link(&store_head, &store_tail, 0),
            _ => {
                let up = links
                    .iter()
                    .find(|l| l.to == parent)
                    .map(|l| (l.head.clone(), l.tail.clone()))
                    .unwrap_or_default();
                link(&up.0, &up.1, switch)
            }
        };
        links.push(LinkTimes { to, head, tail });
    }
    let rate = store_rate.min(swarm.link_bytes_per_cycle);
    let feeds = links
        .iter()
        .filter(|l| matches!(l.to, Node::System(_)))
        .map(|l| {
            let first = l.head.first().copied().unwrap_or(t0);
            let mut through = 0u64;
            let even = packets.iter().zip(&l.tail).all(|(&size, &tail)| {
                through += size;
                tail == first + ticks.bytes(through, rate)
            });
            Feed {
                first,
                last: l.tail.last().copied().unwrap_or(first),
                rate,
                even,
            }
        })
        .collect();
    Broadcast {
        ticks,
        packets,
        links,
        feeds,
    }
}

/// `bytes` cut into packets of `packet` bytes (the last one shorter).
pub(crate) fn packets(bytes: u64, packet: u32) -> Vec<u64> {
    let packet = u64::from(packet.max(1));
    let mut out = Vec::new();
    let mut left = bytes;
    while left > 0 {
        out.push(left.min(packet));
        left -= left.min(packet);
    }
    out
}

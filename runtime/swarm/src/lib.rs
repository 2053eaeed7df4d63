//! The broadcast/reduce fabric of a wsel cluster (the SwarmX role): the tree of switches
//! between the weight store and N systems, and a discrete-event model of its traffic.
//!
//! - [`Tree`]: the topology. N systems hang at depth `D = ceil(log_f N)` below the root
//!   switch (fan-out `f`); the store is linked to the root; every path from the store to a
//!   system crosses `D + 1` links and `D` switches.
//! - [`broadcast`]: one layer's weights from the store to every system, packet by packet
//!   over every link of the tree. [`Feed`] is what one system sees of it: its first byte's
//!   arrival and the rate after it.
//! - [`reduce`]: the systems' streams (gradients, in training) summed by the switches on
//!   their way back to the store, values and timing; [`reduce_all`] several streams one
//!   after another on the same links (a training step's gradients).
//!
//! The model. Links are FIFO servers, one per direction, of `link_bytes_per_cycle` with
//! `link_latency_cycles` of flight. Switches cut through: a packet's first byte leaves
//! `switch_latency_cycles` after it arrived, and no byte leaves before it has arrived (so a
//! packet's last byte leaves no earlier than its arrival plus the switch latency). A switch
//! copies each packet to every child on the child's own link. The store emits at its
//! bandwidth from its latency on. On the way back, a switch forwards packet `k` once packet
//! `k` of every child has begun to arrive, and sums at `reduce_bytes_per_cycle`. Times are
//! exact: kept in fractions of a cycle ([`Ticks`]) with a denominator every rate divides.
//!
//! With every link alike, a system receives the layer as one even stream: its first byte at
//! `store latency + (D + 1)·link latency + D·switch latency`, then `min(store, link)` bytes
//! per cycle with no gap ([`Feed::closed_form`]; the tests check it against the event model
//! for every packet). That is what lets the fabric simulator take the tree's output as its
//! weight store's bandwidth and latency without approximation.

mod events;
mod reduce;
mod tree;

pub use events::{Feed, LinkTimes, Ticks, broadcast};
pub use reduce::{Reduced, Stream, reduce, reduce_all};
pub use tree::{Node, Tree};

#[cfg(test)]
mod tests;

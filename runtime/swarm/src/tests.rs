//! The tree model against timings derived by hand, and its closed form against the events.

use proptest::prelude::*;
use wsel_target::Swarm;

use crate::{Feed, Node, Stream, Tree, broadcast, reduce, reduce_all};

fn swarm(fan_out: u32, link: u32, latency: u32, switch: u32, packet: u32) -> Swarm {
    Swarm {
        fan_out,
        link_bytes_per_cycle: link,
        link_latency_cycles: latency,
        switch_latency_cycles: switch,
        reduce_bytes_per_cycle: link,
        packet_bytes: packet,
    }
}

#[test]
fn the_tree_has_the_depth_and_parents_of_its_fan_out() {
    let t = Tree::new(5, 2);
    assert_eq!(t.depth, 3);
    assert_eq!((t.switches(0), t.switches(1), t.switches(2)), (1, 2, 3));
    assert_eq!(
        t.parent(Node::System(4)),
        Node::Switch { level: 2, index: 2 }
    );
    assert_eq!(
        t.parent(Node::Switch { level: 2, index: 2 }),
        Node::Switch { level: 1, index: 1 }
    );
    assert_eq!(t.parent(Node::Switch { level: 0, index: 0 }), Node::Store);
    assert_eq!(Tree::new(1, 4).depth, 0);
    assert_eq!(Tree::new(1, 4).parent(Node::System(0)), Node::Store);
    assert_eq!(Tree::new(4, 4).depth, 1);
    assert_eq!(Tree::new(192, 4).depth, 4);
}

/// Four systems under fan-out 2 (two levels of switches), links of 8 B/cycle and 10 cycles,
/// switches of 5 cycles, 64-byte packets, 256 bytes, a store of 8 B/cycle ready at cycle 0.
/// By hand, packet 0: the store's link sends it over cycles 0..8, its head reaches the root
/// at 10 and its tail at 18; the root forwards from 15 (head + 5) to 23 (tail + 5), so it
/// reaches the level-1 switch at 25..33; that one forwards over 30..38, so it reaches each
/// system at 40..48. Each later packet follows 8 cycles behind: the last tail at 72.
#[test]
fn a_broadcast_reaches_every_system_when_derived_by_hand() {
    let s = swarm(2, 8, 10, 5, 64);
    let b = broadcast(&Tree::new(4, 2), &s, 8, 0, 256);
    let c = |t: u128| t / b.ticks.per_cycle;
    assert_eq!(b.packets, vec![64; 4]);
    assert_eq!(b.feeds.len(), 4);
    for feed in &b.feeds {
        assert_eq!((c(feed.first), c(feed.last)), (40, 72));
        assert!(feed.even);
    }
    let root = &b.links[0];
    assert_eq!(root.to, Node::Switch { level: 0, index: 0 });
    assert_eq!(
        root.head.iter().map(|&t| c(t)).collect::<Vec<_>>(),
        vec![10, 18, 26, 34]
    );
    assert_eq!(
        root.tail.iter().map(|&t| c(t)).collect::<Vec<_>>(),
        vec![18, 26, 34, 42]
    );
    assert_eq!(b.cycles(), 72);
}

/// As above with a store of 4 B/cycle, half the links' rate: the store's link carries
/// packet 0 over 0..16 (its last byte is ready at 16), the root forwards it over 15..31, the
/// level-1 switch over 30..46: the systems get it over 40..56, and packet k's last byte at
/// 56 + 16k, the last at 104 = 40 + 256 / 4.
#[test]
fn a_slow_store_sets_the_pace_of_every_system() {
    let s = swarm(2, 8, 10, 5, 64);
    let b = broadcast(&Tree::new(4, 2), &s, 4, 0, 256);
    let sys = b
        .links
        .iter()
        .find(|l| l.to == Node::System(3))
        .expect("system 3's link");
    let per = b.ticks.per_cycle;
    assert_eq!(
        sys.tail.iter().map(|&t| t / per).collect::<Vec<_>>(),
        vec![56, 72, 88, 104]
    );
    assert_eq!(b.feeds[3].first / per, 40);
    assert!(b.feeds.iter().all(|f| f.even && f.rate == 4));
}

/// Two systems under one switch, packets of 8 bytes (2 values), links of 4 B/cycle and
/// latency 3, switch latency 1, summing at 2 B/cycle. System 0 is ready at 0, system 1 at
/// 10. System 1's packets reach the switch at 13..15 and 15..17 (system 0's earlier); the
/// switch sends packet 0 up from 14 at 2 B/cycle: 14..18, packet 1 over 18..22; they reach
/// the store 3 cycles later: the first byte at 17, the last at 25.
#[test]
fn a_reduction_sums_in_tree_order_and_waits_for_the_slowest_child() {
    let s = Swarm {
        reduce_bytes_per_cycle: 2,
        ..swarm(2, 4, 3, 1, 8)
    };
    let streams = vec![vec![1.0, 2.0, 3.0, 4.0], vec![10.0, 20.0, 30.0, 40.0]];
    let r = reduce(&Tree::new(2, 2), &s, &streams, &[0, 10]);
    assert_eq!(r.values, vec![11.0, 22.0, 33.0, 44.0]);
    let per = r.ticks.per_cycle;
    assert_eq!((r.first / per, r.last / per), (17, 25));
    assert_eq!(r.cycles(), 25);
}

#[test]
fn a_reduction_over_levels_adds_every_system_once() {
    let s = swarm(3, 16, 5, 2, 64);
    let streams: Vec<Vec<f32>> = (0..7).map(|i| vec![i as f32, 1.0, -(i as f32)]).collect();
    let r = reduce(&Tree::new(7, 3), &s, &streams, &[0; 7]);
    assert_eq!(r.values, vec![21.0, 7.0, -21.0]);
    // Depth 2: the one packet (12 bytes, 0.75 cycles at 16 B/cycle) crosses 3 links and 2
    // switches, summed at 16 B/cycle too. Switches cut through, so its 0.75 cycles overlap
    // from link to link: 3·5 + 2·2 + 0.75 = 19.75, by cycle 20.
    assert_eq!(r.last, 19 * r.ticks.per_cycle + 3 * r.ticks.per_cycle / 4);
    assert_eq!(r.cycles(), 20);
}

/// Two streams on the tree of the test above, one packet each (8 bytes), the first ready
/// at cycle 0 on both systems, the second at 1. Up the systems' links: A over 0..2 (at the
/// switch 3..5), B from 2, when the link is free, over 2..4 (5..7). The switch sends A up
/// from 3 + 1 = 4 at 2 B/cycle over 4..8 (store 7..11), then B from 8 over 8..12 (store
/// 11..15). Alone, B would have reached the store by 12: it waited 3 cycles behind A.
#[test]
fn streams_reduced_in_sequence_queue_on_the_links() {
    let s = Swarm {
        reduce_bytes_per_cycle: 2,
        ..swarm(2, 4, 3, 1, 8)
    };
    let a = vec![vec![1.0, 2.0], vec![3.0, 4.0]];
    let b = vec![vec![5.0, 6.0], vec![7.0, 8.0]];
    let tree = Tree::new(2, 2);
    let streams = [
        Stream {
            values: &a,
            ready: &[0, 0],
        },
        Stream {
            values: &b,
            ready: &[1, 1],
        },
    ];
    let r = reduce_all(&tree, &s, &streams);
    let per = r[0].ticks.per_cycle;
    assert_eq!(r[0].values, vec![4.0, 6.0]);
    assert_eq!(r[1].values, vec![12.0, 14.0]);
    assert_eq!((r[0].first / per, r[0].last / per), (7, 11));
    assert_eq!((r[1].first / per, r[1].last / per), (11, 15));
    assert_eq!(reduce(&tree, &s, &b, &[1, 1]).cycles(), 12);
}

proptest! {
    /// Every system gets the closed form's first byte, its rate with no gap (every packet's
    /// last byte exactly when the rate says), and its last byte at first + bytes / rate.
    #[test]
    fn the_closed_form_is_the_event_model(
        systems in 1u32..40,
        fan_out in 2u32..6,
        store in 1u32..300,
        link in 1u32..300,
        latency in 0u32..50,
        switch in 0u32..50,
        packet in 1u32..64,
        store_latency in 0u32..100,
        bytes in 1u64..5000,
    ) {
        let s = swarm(fan_out, link, latency, switch, 4 * packet);
        let tree = Tree::new(systems, fan_out);
        let b = broadcast(&tree, &s, store, store_latency, bytes);
        let (first, rate) = Feed::closed_form(&tree, &s, store, store_latency);
        prop_assert_eq!(b.feeds.len(), systems as usize);
        for feed in &b.feeds {
            prop_assert_eq!(feed.first, b.ticks.cycles(first));
            prop_assert_eq!(feed.rate, rate);
            prop_assert!(feed.even);
            prop_assert_eq!(feed.last, feed.first + b.ticks.bytes(bytes, rate));
        }
    }
}

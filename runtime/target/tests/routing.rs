//! The routing helper: routes are connected, avoid defects, are shortest, and follow X-then-Y
//! dimension order when nothing is in the way.

use proptest::prelude::*;
use std::collections::VecDeque;
use wsel_target::{
    Coord, Dir, Port, Rect, RouteError, Target, dir_between, multicast_tree, path_to_edge,
    shortest_path,
};

fn small(w: u32, h: u32) -> Target {
    let mut t = Target::dev();
    t.width = w;
    t.height = h;
    t
}

/// Reference distances by plain BFS over the whole fabric.
fn reference_distance(t: &Target, from: Coord, to: Coord) -> Option<usize> {
    if t.defects.pe_dead(from) || t.defects.pe_dead(to) {
        return None;
    }
    let mut dist = vec![usize::MAX; (t.width * t.height) as usize];
    let idx = |c: Coord| (c.y * t.width + c.x) as usize;
    dist[idx(from)] = 0;
    let mut q = VecDeque::from([from]);
    while let Some(c) = q.pop_front() {
        for d in Dir::ALL {
            if let Some(n) = t.neighbor(c, d)
                && dist[idx(n)] == usize::MAX
                && t.defects.hop_usable(c, d, n)
            {
                dist[idx(n)] = dist[idx(c)] + 1;
                q.push_back(n);
            }
        }
    }
    (dist[idx(to)] != usize::MAX).then(|| dist[idx(to)])
}

fn assert_usable(t: &Target, pes: &[Coord]) {
    for w in pes.windows(2) {
        let d = dir_between(w[0], w[1]).expect("consecutive PEs are neighbours");
        assert!(
            t.defects.hop_usable(w[0], d, w[1]),
            "hop {} -> {} uses a defect",
            w[0],
            w[1]
        );
    }
}

#[test]
fn without_defects_routes_go_x_then_y() {
    let t = small(8, 8);
    let p = shortest_path(&t, Coord::new(1, 1), Coord::new(4, 3)).expect("route");
    assert_eq!(
        p.dirs(),
        vec![Dir::East, Dir::East, Dir::East, Dir::South, Dir::South]
    );
    let entries = p.entries(Port::Ramp, wsel_target::PortSet::only(Port::Ramp));
    assert_eq!(entries.len(), 6);
    assert!(entries[0].rx.contains(Port::Ramp) && entries[0].tx.contains(Port::E));
    assert!(entries[5].rx.contains(Port::N) && entries[5].tx.contains(Port::Ramp));
}

#[test]
fn a_dead_pe_costs_exactly_two_extra_hops_on_a_row() {
    let mut t = small(8, 8);
    t.defects.add_dead_pe(Coord::new(3, 2));
    let p = shortest_path(&t, Coord::new(0, 2), Coord::new(6, 2)).expect("route");
    assert_eq!(p.hops(), 8);
    assert!(!p.pes.contains(&Coord::new(3, 2)));
    assert_usable(&t, &p.pes);
}

#[test]
fn cut_off_pes_are_unroutable() {
    let mut t = small(4, 4);
    t.defects.add_dead_link(Coord::new(0, 0), Dir::East);
    t.defects.add_dead_link(Coord::new(0, 0), Dir::South);
    assert_eq!(
        shortest_path(&t, Coord::new(0, 0), Coord::new(3, 3)),
        Err(RouteError::Unroutable {
            from: Coord::new(0, 0),
            to: Coord::new(3, 3)
        })
    );
    t.defects.add_dead_pe(Coord::new(2, 2));
    assert_eq!(
        shortest_path(&t, Coord::new(1, 1), Coord::new(2, 2)),
        Err(RouteError::DeadEndpoint(Coord::new(2, 2)))
    );
}

#[test]
fn multicast_to_a_row_is_a_chain() {
    let t = small(8, 4);
    let dests: Vec<Coord> = (1..8).map(|x| Coord::new(x, 1)).collect();
    let tree = multicast_tree(&t, Coord::new(0, 1), &dests).expect("tree");
    assert_eq!(tree.nodes.len(), 8);
    for x in 1..8 {
        let (rx, tx) = tree.nodes[&Coord::new(x, 1)];
        assert_eq!(rx, Port::W);
        assert!(tx.contains(Port::Ramp));
        assert_eq!(tx.contains(Port::E), x < 7);
        assert_eq!(tree.depth(Coord::new(x, 1)), Some(x as usize));
    }
}

#[test]
fn path_to_the_east_edge() {
    let mut t = small(8, 8);
    let area = Rect::new(0, 0, 8, 8);
    let p = path_to_edge(&t, Coord::new(2, 3), area, Dir::East).expect("edge");
    assert_eq!(p.pes.last(), Some(&Coord::new(7, 3)));
    assert_eq!(p.hops(), 5);
    t.defects.add_dead_pe(Coord::new(7, 3));
    let p = path_to_edge(&t, Coord::new(2, 3), area, Dir::East).expect("edge");
    assert_eq!(p.hops(), 6);
    assert!(area.on_edge(*p.pes.last().expect("nonempty"), Dir::East));
}

/// Dead PEs as `(x, y)` and dead links as `(x, y, direction index)`.
type Defects = (Vec<(u32, u32)>, Vec<(u32, u32, u8)>);

fn defects_strategy() -> impl Strategy<Value = Defects> {
    (
        prop::collection::vec((0u32..12, 0u32..10), 0..20),
        prop::collection::vec((0u32..12, 0u32..10, 0u8..4), 0..20),
    )
}

fn with_defects(pes: &[(u32, u32)], links: &[(u32, u32, u8)]) -> Target {
    let mut t = small(12, 10);
    for &(x, y) in pes {
        t.defects.add_dead_pe(Coord::new(x, y));
    }
    for &(x, y, d) in links {
        let dir = Dir::ALL[d as usize];
        if t.neighbor(Coord::new(x, y), dir).is_some() {
            t.defects.add_dead_link(Coord::new(x, y), dir);
        }
    }
    t
}

proptest! {
    #[test]
    fn routes_avoid_defects_are_connected_and_shortest(
        (pes, links) in defects_strategy(),
        a in (0u32..12, 0u32..10),
        b in (0u32..12, 0u32..10),
    ) {
        let t = with_defects(&pes, &links);
        let (from, to) = (Coord::new(a.0, a.1), Coord::new(b.0, b.1));
        let expected = reference_distance(&t, from, to);
        match shortest_path(&t, from, to) {
            Ok(p) => {
                prop_assert_eq!(p.pes.first(), Some(&from));
                prop_assert_eq!(p.pes.last(), Some(&to));
                assert_usable(&t, &p.pes);
                prop_assert_eq!(Some(p.hops()), expected);
            }
            Err(_) => prop_assert_eq!(expected, None),
        }
    }

    #[test]
    fn multicast_trees_reach_every_destination(
        (pes, links) in defects_strategy(),
        src in (0u32..12, 0u32..10),
        dests in prop::collection::vec((0u32..12, 0u32..10), 1..6),
    ) {
        let t = with_defects(&pes, &links);
        let src = Coord::new(src.0, src.1);
        let dests: Vec<Coord> = dests.into_iter().map(|(x, y)| Coord::new(x, y)).collect();
        let reachable = dests.iter().all(|&d| reference_distance(&t, src, d).is_some());
        match multicast_tree(&t, src, &dests) {
            Ok(tree) => {
                for &d in &dests {
                    prop_assert!(tree.nodes[&d].1.contains(Port::Ramp));
                    prop_assert!(tree.depth(d).is_some());
                }
                for (&c, &(rx, tx)) in &tree.nodes {
                    prop_assert!(!t.defects.pe_dead(c));
                    if let Some(d) = rx.dir() {
                        let parent = t.neighbor(c, d).expect("parent on fabric");
                        prop_assert!(t.defects.hop_usable(parent, d.opposite(), c));
                        prop_assert!(tree.nodes[&parent].1.contains(d.opposite().port()));
                    } else {
                        prop_assert_eq!(c, src);
                    }
                    for p in tx.iter() {
                        if let Some(d) = p.dir() {
                            let child = t.neighbor(c, d).expect("child on fabric");
                            prop_assert_eq!(tree.nodes[&child].0, d.opposite().port());
                        }
                    }
                }
            }
            Err(_) => prop_assert!(!reachable),
        }
    }
}

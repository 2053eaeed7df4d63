//! Which stream feeds or drains each port of a placed layer, by the rules of
//! `docs/mapping.md` §3 (the mapper's `ports` module implements the same rules): the k-th
//! `out ... to D` pairs with the k-th non-multicast `in ... from opposite(D)`, the k-th
//! `out ... to B` with the k-th `in ... from B` of a bus `B`; a multicast port is fed only
//! through the region's edge, by a bound tensor; on the region's edge on a port's side, a port
//! has a stream only when the layer binds a tensor to it.

use wsel_ir::graph::Bus;
use wsel_map::PlacedPort;
use wsel_target::Dir;

use crate::classes::{EAST, NORTH, SOUTH, WEST};

/// The index into `Group::neighbours` of a logical side.
pub(crate) fn side_index(side: Dir) -> usize {
    match side {
        Dir::North => NORTH,
        Dir::South => SOUTH,
        Dir::East => EAST,
        Dir::West => WEST,
    }
}

pub(crate) fn side_name(side: Dir) -> &'static str {
    match side {
        Dir::North => "north",
        Dir::South => "south",
        Dir::East => "east",
        Dir::West => "west",
    }
}

/// For every port, the port it pairs with (an `out` port's `in` partner and back).
pub(crate) fn pairing(ports: &[PlacedPort]) -> Vec<Option<usize>> {
    let mut paired = vec![None; ports.len()];
    let mut pair = |outs: Vec<usize>, ins: Vec<usize>| {
        for (o, i) in outs.into_iter().zip(ins) {
            paired[o] = Some(i);
            paired[i] = Some(o);
        }
    };
    let side_port = |i: usize, input: bool, side: Dir| {
        ports[i].input == input && ports[i].bus.is_none() && ports[i].side == side
    };
    for dir in [Dir::North, Dir::South, Dir::East, Dir::West] {
        let outs = (0..ports.len())
            .filter(|&i| side_port(i, false, dir))
            .collect();
        let ins = (0..ports.len())
            .filter(|&i| side_port(i, true, dir.opposite()) && !ports[i].multicast)
            .collect();
        pair(outs, ins);
    }
    for bus in [Bus::Row, Bus::Col, Bus::Region] {
        let on = |input: bool| -> Vec<usize> {
            (0..ports.len())
                .filter(|&i| ports[i].input == input && ports[i].bus == Some(bus))
                .collect()
        };
        pair(on(false), on(true));
    }
    paired
}

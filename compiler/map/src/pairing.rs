//! Which port of a placed layer each port pairs with, by the rules of `docs/mapping.md` §3:
//! the k-th `out ... to D` pairs with the k-th non-multicast `in ... from opposite(D)` (among
//! the ports without a distance, and apart from them among the ports `by` one), the
//! k-th `out ... to B` with the k-th `in ... from B` of a bus `B`, the k-th switched
//! `out ... to D` with the k-th switched `in ... from opposite(D)`. The mapper routes a
//! neighbour port only where it has a partner (`PlacedLayer::entries_at`), and the hang
//! checks follow the same pairs.

use wsel_ir::graph::Bus;
use wsel_target::Dir;

use crate::placement::PlacedPort;

/// For every port, the port it pairs with (an `out` port's `in` partner and back).
pub fn pairing(ports: &[PlacedPort]) -> Vec<Option<usize>> {
    let mut paired = vec![None; ports.len()];
    let mut pair = |outs: Vec<usize>, ins: Vec<usize>| {
        for (o, i) in outs.into_iter().zip(ins) {
            paired[o] = Some(i);
            paired[i] = Some(o);
        }
    };
    let side_port = |i: usize, input: bool, side: Dir, far: bool| {
        ports[i].input == input
            && ports[i].bus.is_none()
            && ports[i].side == side
            && ports[i].distance.is_some() == far
            && ports[i].switch.is_none()
    };
    for far in [false, true] {
        for dir in [Dir::North, Dir::South, Dir::East, Dir::West] {
            let outs = (0..ports.len())
                .filter(|&i| side_port(i, false, dir, far))
                .collect();
            let ins = (0..ports.len())
                .filter(|&i| side_port(i, true, dir.opposite(), far) && !ports[i].multicast)
                .collect();
            pair(outs, ins);
        }
    }
    // Switched ports pair among themselves (`crate::switched`).
    for dir in [Dir::North, Dir::South, Dir::East, Dir::West] {
        let on = |input: bool, side: Dir| -> Vec<usize> {
            (0..ports.len())
                .filter(|&i| {
                    ports[i].input == input && ports[i].switch.is_some() && ports[i].side == side
                })
                .collect()
        };
        pair(on(false, dir), on(true, dir.opposite()));
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

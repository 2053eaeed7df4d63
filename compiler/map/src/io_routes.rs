//! Routes of every copy's edge streams (`docs/mapping.md` §5): each part of a model input, a
//! weight or the result goes from the fabric's edge to its region (or back), straight on
//! where the way is clear, else through the gaps between tiles, else across other tiles on a
//! color their regions and routes leave free, to the nearest edge it can reach.
//!
//! A router holds one route per color, so routes of different copies, and regions, may share
//! a router (and so a link) as long as they have different colors there; the simulator then
//! shares the link's bandwidth between them, so crowded ways to the edge show in the run's
//! cycles. Each copy's colors are its core's shifted by an offset ([`crate::tiles`]); a copy
//! whose parts find no way out at one offset tries the next.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use wsel_target::{Coord, Dir, Port, PortSet, Target, dir_between};

use crate::place::DeadIndex;
use crate::placement::{EdgePoint, Endpoint, Hop, Transfer};
use crate::tiles::{Core, EdgePart, shift, shift_color};

/// Which routers belong to a tile, and which colors every router has given to routes.
pub(crate) struct Occupancy {
    width: u32,
    /// Per router (row-major): whether a copy's tile holds it (or it is dead).
    tile: Vec<bool>,
    /// Per router: a bit per color in use, by a region's entries or a route; all bits for a
    /// dead PE.
    colors: Vec<u64>,
    /// The searches' tables: the stamp of the search that last saw each router, and the
    /// router it was reached from.
    stamp: u32,
    seen: Vec<u32>,
    parent: Vec<u32>,
    /// PEs the searches may still expand for the stream being routed.
    budget: usize,
}

impl Occupancy {
    /// The fabric with its dead PEs taken.
    pub(crate) fn new(target: &Target) -> Occupancy {
        let pes = target.pe_count() as usize;
        let mut occ = Occupancy {
            width: target.width,
            tile: vec![false; pes],
            colors: vec![0; pes],
            stamp: 0,
            seen: vec![0; pes],
            parent: vec![0; pes],
            budget: STREAM_BUDGET,
        };
        for &c in &target.defects.dead_pes {
            let i = occ.index(c);
            occ.tile[i] = true;
            occ.colors[i] = u64::MAX;
        }
        occ
    }

    fn index(&self, c: Coord) -> usize {
        (c.y * self.width + c.x) as usize
    }

    /// Gives router `c` to a tile (`true`) or back (`false`).
    pub(crate) fn set_tile(&mut self, c: Coord, taken: bool) {
        let i = self.index(c);
        self.tile[i] = taken;
    }

    /// Whether no tile holds router `c`.
    pub(crate) fn tile_free(&self, c: Coord) -> bool {
        !self.tile[self.index(c)]
    }

    /// Whether none of the colors of `mask` is in use at router `c`.
    pub(crate) fn colors_free(&self, c: Coord, mask: u64) -> bool {
        self.colors[self.index(c)] & mask == 0
    }

    /// Marks (`true`) or frees the colors of `mask` at router `c`.
    pub(crate) fn set_colors(&mut self, c: Coord, mask: u64, used: bool) {
        let i = self.index(c);
        if used {
            self.colors[i] |= mask;
        } else {
            self.colors[i] &= !mask;
        }
    }

    fn free_for(&self, c: Coord, color: u8) -> bool {
        self.colors_free(c, 1 << color)
    }

    fn mark(&mut self, c: Coord, color: u8) {
        self.set_colors(c, 1 << color, true);
    }

    fn unmark(&mut self, c: Coord, color: u8) {
        self.set_colors(c, 1 << color, false);
    }
}

/// The most PEs one search for a way to the edge expands.
const MAX_EXPANSIONS: usize = 20_000;

/// The most PEs the searches for all parts of one stream toward one edge expand: a stream
/// whose parts need that much searching takes another edge, or its copy another offset.
const STREAM_BUDGET: usize = 100_000;

/// One copy's edge streams, routed.
pub(crate) struct CopyEdges {
    pub transfers: Vec<Transfer>,
    pub inputs: Vec<EdgePoint>,
    pub outputs: Vec<EdgePoint>,
}

/// Routes the edge parts of copy `copy`: the core moved by `offset_xy`, its colors shifted by
/// `color_offset`. The parts of one stream share a color, so they go as a bundle to one edge
/// of the fabric, the part nearest that edge first, so that each finds the way beside the
/// ones before it. On failure nothing stays marked.
pub(crate) fn route_copy(
    occ: &mut Occupancy,
    target: &Target,
    dead: &DeadIndex,
    core: &Core,
    copy: u32,
    offset_xy: (i64, i64),
    color_offset: u8,
) -> Option<CopyEdges> {
    let by = copy as usize * core.layers.len();
    let mut marked: Vec<(Coord, u8)> = Vec::new();
    let mut out = CopyEdges {
        transfers: Vec::new(),
        inputs: Vec::new(),
        outputs: Vec::new(),
    };
    let mut streams: Vec<Vec<&EdgePart>> = Vec::new();
    for part in &core.edge {
        match streams.iter_mut().find(|s| same_stream(s[0], part)) {
            Some(s) => s.push(part),
            None => streams.push(vec![part]),
        }
    }
    for stream in streams {
        let color = shift_color(stream[0].transfer.color, color_offset, target.colors);
        let moved: Vec<Coord> = stream
            .iter()
            .map(|p| shift(p.pe, offset_xy.0, offset_xy.1))
            .collect();
        let Some(routes) = route_stream(occ, target, dead, &stream, &moved, color) else {
            for (c, color) in marked {
                occ.unmark(c, color);
            }
            return None;
        };
        for ((part, pe), route) in stream.iter().zip(moved).zip(routes) {
            marked.extend(route.hops.iter().map(|h| (h.at, color)));
            let point = EdgePoint {
                copy,
                at: route.edge,
                side: route.side,
                color,
                layer: part.point.layer + by,
                ..part.point.clone()
            };
            let (source, destination) = endpoints(part, pe, &route, by);
            out.transfers.push(Transfer {
                copy,
                color,
                source,
                destinations: vec![destination],
                hops: route.hops,
                ..part.transfer.clone()
            });
            if part.input {
                out.inputs.push(point);
            } else {
                out.outputs.push(point);
            }
        }
    }
    Some(out)
}

/// Whether two parts belong to one stream (one tensor through one port: one color).
fn same_stream(a: &EdgePart, b: &EdgePart) -> bool {
    a.input == b.input && a.transfer.tensor == b.transfer.tensor && a.point.layer == b.point.layer
}

/// A part's way between the fabric's edge and its region.
struct PartRoute {
    /// The PE on the fabric's edge where the part enters or leaves, and the side it crosses.
    edge: Coord,
    side: Dir,
    hops: Vec<Hop>,
}

/// Routes every part of one stream (region PEs `pes`, moved) to one edge of the fabric: the
/// edge its parts reach in the fewest hops in all. The routes are marked in `occ` on success.
fn route_stream(
    occ: &mut Occupancy,
    target: &Target,
    dead: &DeadIndex,
    stream: &[&EdgePart],
    pes: &[Coord],
    color: u8,
) -> Option<Vec<PartRoute>> {
    // No route is shorter than the straight lines from the region's PEs: edges by that
    // bound, and none tried whose bound is no better than a route found.
    let least = |edge: Dir| -> usize {
        pes.iter()
            .map(|&pe| distance_to_edge(target, pe, edge) as usize)
            .sum()
    };
    let mut edges = Dir::ALL;
    edges.sort_by_key(|&d| least(d));
    let mut best: Option<(usize, Vec<PartRoute>)> = None;
    for edge in edges {
        if best.as_ref().is_some_and(|(b, _)| least(edge) >= *b) {
            continue;
        }
        occ.budget = STREAM_BUDGET;
        let mut order: Vec<usize> = (0..stream.len()).collect();
        order.sort_by_key(|&i| distance_to_edge(target, pes[i], edge));
        let mut routes: Vec<Option<PartRoute>> = (0..stream.len()).map(|_| None).collect();
        for (rank, i) in order.into_iter().enumerate() {
            let way = Way {
                color,
                edge,
                rank: rank as u32,
            };
            match route_part(occ, target, dead, stream[i], pes[i], way) {
                Some(route) => {
                    route.hops.iter().for_each(|h| occ.mark(h.at, color));
                    routes[i] = Some(route);
                }
                None => break,
            }
        }
        for route in routes.iter().flatten() {
            route.hops.iter().for_each(|h| occ.unmark(h.at, color));
        }
        let Some(routes) = routes.into_iter().collect::<Option<Vec<PartRoute>>>() else {
            continue;
        };
        let hops = routes.iter().map(|r| r.hops.len()).sum();
        if best.as_ref().is_none_or(|(b, _)| hops < *b) {
            best = Some((hops, routes));
        }
    }
    let (_, routes) = best?;
    for route in &routes {
        route.hops.iter().for_each(|h| occ.mark(h.at, color));
    }
    Some(routes)
}

/// PEs from `c` to the fabric's `edge`.
fn distance_to_edge(target: &Target, c: Coord, edge: Dir) -> u32 {
    match edge {
        Dir::North => c.y,
        Dir::West => c.x,
        Dir::South => target.height - 1 - c.y,
        Dir::East => target.width - 1 - c.x,
    }
}

/// Where one part of a stream goes: on `color`, to the fabric's `edge`, as the `rank`-th of
/// its stream's parts (nearest that edge first).
#[derive(Clone, Copy)]
struct Way {
    color: u8,
    edge: Dir,
    rank: u32,
}

/// The way of one part whose region PE (moved) is `pe` (or straight out where the region's
/// PE is on the fabric's edge already).
fn route_part(
    occ: &mut Occupancy,
    target: &Target,
    dead: &DeadIndex,
    part: &EdgePart,
    pe: Coord,
    way: Way,
) -> Option<PartRoute> {
    let Some(beside) = target.neighbor(pe, part.side) else {
        // The region's PE is on the fabric's edge: the part crosses it right there.
        return Some(PartRoute {
            edge: pe,
            side: part.side,
            hops: Vec::new(),
        });
    };
    if dead.link_dead(pe, part.side) {
        return None;
    }
    let mut path = occ.path_to_edge(target, dead, beside, part.side, way)?;
    let end = *path.last()?;
    // From the region toward the edge; an input travels it the other way.
    let toward_region = part.side.opposite().port();
    let hops = if part.input {
        path.reverse();
        hops_along(&path, way.edge.port(), toward_region)
    } else {
        hops_along(&path, toward_region, way.edge.port())
    };
    Some(PartRoute {
        edge: end,
        side: way.edge,
        hops,
    })
}

/// The transfer's two ends for a routed part.
fn endpoints(part: &EdgePart, pe: Coord, route: &PartRoute, by: usize) -> (Endpoint, Endpoint) {
    let (at, side) = (route.edge, route.side);
    match (part.transfer.source, part.transfer.destinations.first()) {
        (Endpoint::Host { input, .. }, Some(&Endpoint::LayerInput { layer, port, .. })) => (
            Endpoint::Host { input, at, side },
            Endpoint::LayerInput {
                layer: layer + by,
                port,
                at: pe,
            },
        ),
        (Endpoint::WeightStore { param, .. }, Some(&Endpoint::LayerInput { layer, port, .. })) => (
            Endpoint::WeightStore { param, at, side },
            Endpoint::LayerInput {
                layer: layer + by,
                port,
                at: pe,
            },
        ),
        (Endpoint::LayerOutput { layer, port, .. }, _) => (
            Endpoint::LayerOutput {
                layer: layer + by,
                port,
                at: pe,
            },
            Endpoint::HostOutput { at, side },
        ),
        (source, _) => (source, Endpoint::HostOutput { at, side }),
    }
}

/// Router entries along `path`: the first receives from `first_rx`, the last forwards to
/// `last_tx`.
fn hops_along(path: &[Coord], first_rx: Port, last_tx: Port) -> Vec<Hop> {
    path.iter()
        .enumerate()
        .map(|(i, &at)| {
            let rx = match i.checked_sub(1).and_then(|p| dir_between(at, path[p])) {
                Some(d) => PortSet::only(d.port()),
                None => PortSet::only(first_rx),
            };
            let tx = match path.get(i + 1).and_then(|&n| dir_between(at, n)) {
                Some(d) => PortSet::only(d.port()),
                None => PortSet::only(last_tx),
            };
            Hop { at, rx, tx }
        })
        .collect()
}

impl Occupancy {
    /// A path from `from`, beside a region's side facing `out`, to a PE on the fabric's edge
    /// `way.edge` over live links and routers with `way.color` free: straight on; else, toward
    /// an edge to the side, out from the region `way.rank` hops further and then straight, so
    /// that the parts of a stream turn one inside the other; else the shortest one. Each way
    /// is first looked for through the gaps between tiles, and only then across tiles, on a
    /// color their regions and routes leave free.
    fn path_to_edge(
        &mut self,
        target: &Target,
        dead: &DeadIndex,
        from: Coord,
        out: Dir,
        way: Way,
    ) -> Option<Vec<Coord>> {
        let (color, edge) = (way.color, way.edge);
        if !self.free_for(from, color) {
            return None;
        }
        for through_tiles in [false, true] {
            let path = self.straight(target, dead, vec![from], color, edge, through_tiles);
            if path.is_some() {
                return path;
            }
            if edge != out && edge != out.opposite() {
                let bent = self.bent(target, dead, from, out, way, through_tiles);
                if bent.is_some() {
                    return bent;
                }
            }
            let found = self.search(target, dead, from, color, edge, through_tiles);
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// The way out from the region `way.rank` hops further than `from`, then straight on to
    /// the edge to the side.
    fn bent(
        &self,
        target: &Target,
        dead: &DeadIndex,
        from: Coord,
        out: Dir,
        way: Way,
        through_tiles: bool,
    ) -> Option<Vec<Coord>> {
        let mut path = vec![from];
        for _ in 0..way.rank {
            let c = *path.last()?;
            let n = target.neighbor(c, out)?;
            if dead.link_dead(c, out) || !self.open(n, way.color, through_tiles) {
                return None;
            }
            path.push(n);
        }
        self.straight(target, dead, path, way.color, way.edge, through_tiles)
    }

    /// Whether a route on `color` may use router `c`.
    fn open(&self, c: Coord, color: u8, through_tiles: bool) -> bool {
        self.free_for(c, color) && (through_tiles || self.tile_free(c))
    }

    /// `path` continued straight on to the fabric's `edge`, when every router on the way is
    /// open and every link between them lives.
    fn straight(
        &self,
        target: &Target,
        dead: &DeadIndex,
        mut path: Vec<Coord>,
        color: u8,
        edge: Dir,
        through_tiles: bool,
    ) -> Option<Vec<Coord>> {
        let mut c = *path.last()?;
        while let Some(n) = target.neighbor(c, edge) {
            if dead.link_dead(c, edge) || !self.open(n, color, through_tiles) {
                return None;
            }
            path.push(n);
            c = n;
        }
        Some(path)
    }

    /// The shortest path from `from` to a PE on the fabric's `edge` over open routers and
    /// live links: an A* search, guided by the distance left to that edge, that gives up
    /// after [`MAX_EXPANSIONS`] PEs (a way that long around obstacles is not worth having), or
    /// when the stream's budget is spent.
    fn search(
        &mut self,
        target: &Target,
        dead: &DeadIndex,
        from: Coord,
        color: u8,
        edge: Dir,
        through_tiles: bool,
    ) -> Option<Vec<Coord>> {
        // A new stamp marks every PE unseen without clearing the table.
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.seen.fill(0);
            self.stamp = 1;
        }
        let start = self.index(from);
        self.seen[start] = self.stamp;
        self.parent[start] = start as u32;
        // (hops so far + hops left at least, hops so far, PE), least first.
        let mut queue =
            BinaryHeap::from([Reverse((distance_to_edge(target, from, edge), 0, from))]);
        let mut expanded = 0;
        while let Some(Reverse((_, g, c))) = queue.pop() {
            expanded += 1;
            if expanded > MAX_EXPANSIONS || self.budget == 0 {
                return None;
            }
            self.budget -= 1;
            if target.neighbor(c, edge).is_none() {
                let mut path = vec![c];
                let mut i = self.index(c);
                while self.parent[i] as usize != i {
                    i = self.parent[i] as usize;
                    path.push(Coord::new(i as u32 % self.width, i as u32 / self.width));
                }
                path.reverse();
                return Some(path);
            }
            for d in Dir::ALL {
                let Some(n) = target.neighbor(c, d) else {
                    continue;
                };
                let ni = self.index(n);
                if self.seen[ni] == self.stamp
                    || dead.link_dead(c, d)
                    || !self.open(n, color, through_tiles)
                {
                    continue;
                }
                self.seen[ni] = self.stamp;
                self.parent[ni] = self.index(c) as u32;
                queue.push(Reverse((
                    g + 1 + distance_to_edge(target, n, edge),
                    g + 1,
                    n,
                )));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn way(color: u8, edge: Dir) -> Way {
        Way {
            color,
            edge,
            rank: 0,
        }
    }

    #[test]
    fn hops_follow_the_path() {
        let path = [Coord::new(0, 2), Coord::new(1, 2), Coord::new(1, 3)];
        let hops = hops_along(&path, Port::W, Port::E);
        assert_eq!(hops[0].rx, PortSet::only(Port::W));
        assert_eq!(hops[0].tx, PortSet::only(Port::E));
        assert_eq!(hops[1].rx, PortSet::only(Port::W));
        assert_eq!(hops[1].tx, PortSet::only(Port::S));
        assert_eq!(hops[2].rx, PortSet::only(Port::N));
        assert_eq!(hops[2].tx, PortSet::only(Port::E));
    }

    #[test]
    fn a_search_reaches_its_edge_around_taken_routers() {
        let mut t = Target::dev();
        t.defects.add_dead_pe(Coord::new(3, 5));
        let dead = DeadIndex::new(&t);
        let mut occ = Occupancy::new(&t);
        let west = occ.path_to_edge(&t, &dead, Coord::new(5, 5), Dir::North, way(0, Dir::West));
        assert_eq!(west.map(|p| p.len()), Some(7), "around the dead PE");
        for y in 0..16 {
            occ.set_colors(Coord::new(4, y), u64::MAX, true);
        }
        occ.mark(Coord::new(6, 5), 0);
        assert!(
            occ.path_to_edge(&t, &dead, Coord::new(5, 5), Dir::North, way(0, Dir::West))
                .is_none()
        );
        let north = occ.path_to_edge(&t, &dead, Coord::new(5, 5), Dir::North, way(0, Dir::North));
        let north = north.expect("a path north");
        assert!(
            north.iter().all(|c| c.x > 4 && *c != Coord::new(6, 5)),
            "{north:?}"
        );
        assert_eq!(north.last().map(|c| c.y), Some(0));
        // Another color passes where the first is taken.
        let other = occ.path_to_edge(&t, &dead, Coord::new(6, 5), Dir::North, way(1, Dir::North));
        assert!(other.is_some());
    }
}

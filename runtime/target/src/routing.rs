//! The routing helper: shortest routes between PEs, multicast trees and routes to a region's
//! edge, all avoiding dead PEs and dead links, with deterministic tie-breaking.
//!
//! Without defects in the way a route is the dimension-order route: first along the row
//! (X), then along the column (Y). Otherwise it is a shortest path found by breadth-first
//! search; among equally short paths, each step prefers moving toward the goal in X, then
//! toward it in Y, then east, west, south, north. Searches start in a window around the
//! endpoints and widen only when a shorter path could lie outside it, so results are exact
//! shortest paths while usually touching few PEs.

use crate::geometry::{Coord, Dir, Port, PortSet, Rect};
use crate::target::Target;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;

/// A route from one PE to another: the PEs visited, first and last included.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Path {
    /// The PEs in order; consecutive PEs are neighbours.
    pub pes: Vec<Coord>,
}

/// One router's configuration for one color: where wavelets come from, where they go.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RouteEntry {
    /// The router.
    pub at: Coord,
    /// Ports it accepts wavelets of this color from.
    pub rx: PortSet,
    /// Ports it forwards them to (several = multicast; the ramp = deliver to its PE).
    pub tx: PortSet,
}

/// A multicast tree rooted at a source PE.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct RouteTree {
    /// The source PE (receives from its ramp).
    pub source: Coord,
    /// For every PE of the tree: the port it receives from and the ports it forwards to.
    pub nodes: BTreeMap<Coord, (Port, PortSet)>,
}

/// Why no route could be built.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum RouteError {
    /// An endpoint is not on the fabric.
    OffFabric(Coord),
    /// An endpoint is a dead PE.
    DeadEndpoint(Coord),
    /// Defects cut every path between the two PEs.
    Unroutable {
        /// Start of the route.
        from: Coord,
        /// Where it should have reached.
        to: Coord,
    },
    /// Defects cut every path from the PE to the requested edge.
    NoEdge {
        /// Start of the route.
        from: Coord,
        /// The edge of the area.
        side: Dir,
    },
}

impl fmt::Display for RouteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RouteError::OffFabric(c) => write!(f, "PE {c} is outside the fabric"),
            RouteError::DeadEndpoint(c) => write!(f, "PE {c} is dead (defect map)"),
            RouteError::Unroutable { from, to } => {
                write!(
                    f,
                    "no route from PE {from} to PE {to}: dead PEs or links cut every path"
                )
            }
            RouteError::NoEdge { from, side } => {
                write!(
                    f,
                    "no route from PE {from} to the {side} edge: dead PEs or links cut every path"
                )
            }
        }
    }
}

impl std::error::Error for RouteError {}

impl Path {
    /// Number of links crossed.
    pub fn hops(&self) -> usize {
        self.pes.len().saturating_sub(1)
    }

    /// The direction of every hop.
    pub fn dirs(&self) -> Vec<Dir> {
        self.pes
            .windows(2)
            .filter_map(|w| dir_between(w[0], w[1]))
            .collect()
    }

    /// Router entries for one color along this path: the first PE receives from `first_rx`
    /// (usually the ramp), the last forwards to `last_tx` (usually the ramp; an off-fabric
    /// direction sends to the host).
    pub fn entries(&self, first_rx: Port, last_tx: PortSet) -> Vec<RouteEntry> {
        let n = self.pes.len();
        let mut out = Vec::with_capacity(n);
        for (i, &at) in self.pes.iter().enumerate() {
            let rx = if i == 0 {
                PortSet::only(first_rx)
            } else {
                dir_between(at, self.pes[i - 1]).map_or(PortSet::EMPTY, |d| PortSet::only(d.port()))
            };
            let tx = if i + 1 == n {
                last_tx
            } else {
                dir_between(at, self.pes[i + 1]).map_or(PortSet::EMPTY, |d| PortSet::only(d.port()))
            };
            out.push(RouteEntry { at, rx, tx });
        }
        out
    }
}

impl RouteTree {
    /// Router entries for one color: the source receives from its ramp.
    pub fn entries(&self) -> Vec<RouteEntry> {
        self.nodes
            .iter()
            .map(|(&at, &(rx, tx))| RouteEntry {
                at,
                rx: PortSet::only(rx),
                tx,
            })
            .collect()
    }

    /// Hops from the source to `c` along the tree, if `c` is in it.
    pub fn depth(&self, c: Coord) -> Option<usize> {
        let mut cur = c;
        let mut depth = 0;
        while cur != self.source {
            let (rx, _) = self.nodes.get(&cur)?;
            let d = rx.dir()?;
            cur = step_unchecked(cur, d);
            depth += 1;
        }
        Some(depth)
    }
}

/// The direction of the hop from `a` to its neighbour `b`.
pub fn dir_between(a: Coord, b: Coord) -> Option<Dir> {
    Dir::ALL.into_iter().find(|d| step_unchecked(a, *d) == b)
}

fn step_unchecked(c: Coord, d: Dir) -> Coord {
    match d {
        Dir::North => Coord::new(c.x, c.y.wrapping_sub(1)),
        Dir::South => Coord::new(c.x, c.y.wrapping_add(1)),
        Dir::East => Coord::new(c.x.wrapping_add(1), c.y),
        Dir::West => Coord::new(c.x.wrapping_sub(1), c.y),
    }
}

/// A shortest route from `from` to `to` avoiding defects.
pub fn shortest_path(t: &Target, from: Coord, to: Coord) -> Result<Path, RouteError> {
    check_endpoint(t, from)?;
    check_endpoint(t, to)?;
    if let Some(p) = dimension_order(t, from, to) {
        return Ok(p);
    }
    let bbox = bounding(&[from, to]);
    let search = search_widening(t, bbox, &[to], from, from.manhattan(to));
    let Some(dist) = search else {
        return Err(RouteError::Unroutable { from, to });
    };
    Ok(walk(t, &dist, from, to))
}

/// A multicast tree from `from` reaching every PE of `dests` (in the given order, each
/// attached to the nearest PE already in the tree). Each destination's tx includes the ramp.
pub fn multicast_tree(t: &Target, from: Coord, dests: &[Coord]) -> Result<RouteTree, RouteError> {
    check_endpoint(t, from)?;
    let mut tree = RouteTree {
        source: from,
        nodes: BTreeMap::new(),
    };
    tree.nodes.insert(from, (Port::Ramp, PortSet::EMPTY));
    for &dest in dests {
        check_endpoint(t, dest)?;
        if !tree.nodes.contains_key(&dest) {
            attach(t, &mut tree, dest)?;
        }
        if let Some(node) = tree.nodes.get_mut(&dest) {
            node.1 = node.1.with(Port::Ramp);
        }
    }
    Ok(tree)
}

/// A shortest route from `from` to any live PE on the `side` edge of `area`. Its last PE is on
/// that edge; to leave the fabric there, forward to `side` from it.
pub fn path_to_edge(t: &Target, from: Coord, area: Rect, side: Dir) -> Result<Path, RouteError> {
    check_endpoint(t, from)?;
    let goal = project(from, area, side);
    let edge: Vec<Coord> = edge_pes(area, side)
        .filter(|&c| t.contains(c) && !t.defects.pe_dead(c))
        .collect();
    if edge.is_empty() {
        return Err(RouteError::NoEdge { from, side });
    }
    if t.contains(goal)
        && let Some(p) = dimension_order(t, from, goal)
    {
        return Ok(p);
    }
    let mut corners = vec![from];
    corners.extend(edge.first().copied());
    corners.extend(edge.last().copied());
    let bbox = bounding(&corners);
    let base = edge.iter().map(|&c| from.manhattan(c)).min().unwrap_or(0);
    let Some(dist) = search_widening(t, bbox, &edge, from, base) else {
        return Err(RouteError::NoEdge { from, side });
    };
    Ok(walk(t, &dist, from, goal))
}

fn check_endpoint(t: &Target, c: Coord) -> Result<(), RouteError> {
    if !t.contains(c) {
        Err(RouteError::OffFabric(c))
    } else if t.defects.pe_dead(c) {
        Err(RouteError::DeadEndpoint(c))
    } else {
        Ok(())
    }
}

fn project(c: Coord, area: Rect, side: Dir) -> Coord {
    let cx = c.x.clamp(area.x, area.x + area.width.saturating_sub(1));
    let cy = c.y.clamp(area.y, area.y + area.height.saturating_sub(1));
    match side {
        Dir::North => Coord::new(cx, area.y),
        Dir::South => Coord::new(cx, area.y + area.height.saturating_sub(1)),
        Dir::West => Coord::new(area.x, cy),
        Dir::East => Coord::new(area.x + area.width.saturating_sub(1), cy),
    }
}

fn edge_pes(area: Rect, side: Dir) -> Box<dyn Iterator<Item = Coord>> {
    let (x0, y0) = (area.x, area.y);
    let (x1, y1) = (
        area.x + area.width.saturating_sub(1),
        area.y + area.height.saturating_sub(1),
    );
    match side {
        Dir::North => Box::new((x0..=x1).map(move |x| Coord::new(x, y0))),
        Dir::South => Box::new((x0..=x1).map(move |x| Coord::new(x, y1))),
        Dir::West => Box::new((y0..=y1).map(move |y| Coord::new(x0, y))),
        Dir::East => Box::new((y0..=y1).map(move |y| Coord::new(x1, y))),
    }
}

/// The X-then-Y route, if every hop of it is usable.
fn dimension_order(t: &Target, from: Coord, to: Coord) -> Option<Path> {
    let mut pes = Vec::with_capacity(from.manhattan(to) as usize + 1);
    let mut c = from;
    pes.push(c);
    while c != to {
        let d = if c.x < to.x {
            Dir::East
        } else if c.x > to.x {
            Dir::West
        } else if c.y < to.y {
            Dir::South
        } else {
            Dir::North
        };
        let next = t.neighbor(c, d)?;
        if !t.defects.hop_usable(c, d, next) {
            return None;
        }
        c = next;
        pes.push(c);
    }
    Some(pes).map(|pes| Path { pes })
}

fn attach(t: &Target, tree: &mut RouteTree, dest: Coord) -> Result<(), RouteError> {
    let mut corners: Vec<Coord> = tree.nodes.keys().copied().collect();
    corners.push(dest);
    let bbox = bounding(&corners);
    let base = tree
        .nodes
        .keys()
        .map(|&c| c.manhattan(dest))
        .min()
        .unwrap_or(0);
    // The nearest tree PE; ties go to the first in row-major order.
    let Some(dist) = search_widening(t, bbox, &[dest], tree.source, base).and_then(|dist| {
        tree.nodes
            .keys()
            .any(|&c| dist.get(c).is_some())
            .then_some(dist)
    }) else {
        return Err(RouteError::Unroutable {
            from: tree.source,
            to: dest,
        });
    };
    let mut best: Option<(u32, Coord)> = None;
    for &c in tree.nodes.keys() {
        if let Some(d) = dist.get(c)
            && best.is_none_or(|(bd, _)| d < bd)
        {
            best = Some((d, c));
        }
    }
    let Some((_, start)) = best else {
        return Err(RouteError::Unroutable {
            from: tree.source,
            to: dest,
        });
    };
    let path = walk(t, &dist, start, dest);
    for w in path.pes.windows(2) {
        let (a, b) = (w[0], w[1]);
        let Some(d) = dir_between(a, b) else { continue };
        if let Some(node) = tree.nodes.get_mut(&a) {
            node.1 = node.1.with(d.port());
        }
        tree.nodes.insert(b, (d.opposite().port(), PortSet::EMPTY));
    }
    Ok(())
}

/// Breadth-first distances to the `seeds` inside a window.
struct Distances {
    window: Rect,
    dist: Vec<u32>,
}

impl Distances {
    fn get(&self, c: Coord) -> Option<u32> {
        if !self.window.contains(c) {
            return None;
        }
        let i = ((c.y - self.window.y) * self.window.width + (c.x - self.window.x)) as usize;
        let d = self.dist[i];
        (d != u32::MAX).then_some(d)
    }
}

fn bounding(cs: &[Coord]) -> Rect {
    let x0 = cs.iter().map(|c| c.x).min().unwrap_or(0);
    let y0 = cs.iter().map(|c| c.y).min().unwrap_or(0);
    let x1 = cs.iter().map(|c| c.x).max().unwrap_or(0);
    let y1 = cs.iter().map(|c| c.y).max().unwrap_or(0);
    Rect::new(x0, y0, x1 - x0 + 1, y1 - y0 + 1)
}

fn widen(t: &Target, r: Rect, m: u32) -> Rect {
    let x0 = r.x.saturating_sub(m);
    let y0 = r.y.saturating_sub(m);
    let x1 = (r.x + r.width - 1).saturating_add(m).min(t.width - 1);
    let y1 = (r.y + r.height - 1).saturating_add(m).min(t.height - 1);
    Rect::new(x0, y0, x1 - x0 + 1, y1 - y0 + 1)
}

/// Search windows of growing margin around `bbox` (which holds `from` and every seed) until
/// the distance found at `from` is provably the global shortest: any path leaving a window of
/// margin `m` is at least `base + 2(m + 1)` long, where `base` is the Manhattan lower bound.
fn search_widening(
    t: &Target,
    bbox: Rect,
    seeds: &[Coord],
    from: Coord,
    base: u32,
) -> Option<Distances> {
    let full = Rect::new(0, 0, t.width, t.height);
    let mut m = 2u32;
    loop {
        let window = widen(t, bbox, m);
        let dist = bfs(t, window, seeds);
        let is_full = window == full;
        match dist.get(from) {
            Some(d) if is_full || d <= base + 2 * (m + 1) => return Some(dist),
            None if is_full => return None,
            _ => m = m.saturating_mul(4),
        }
    }
}

fn bfs(t: &Target, window: Rect, seeds: &[Coord]) -> Distances {
    let mut out = Distances {
        window,
        dist: vec![u32::MAX; (window.width * window.height) as usize],
    };
    let idx = |c: Coord| ((c.y - window.y) * window.width + (c.x - window.x)) as usize;
    let blocked = Blocked::new(t, window);
    let mut queue = VecDeque::new();
    for &s in seeds {
        if window.contains(s) && !blocked.pe_dead(idx(s)) && out.dist[idx(s)] == u32::MAX {
            out.dist[idx(s)] = 0;
            queue.push_back(s);
        }
    }
    while let Some(c) = queue.pop_front() {
        let d = out.dist[idx(c)];
        for dir in Dir::ALL {
            let Some(n) = t.neighbor(c, dir) else {
                continue;
            };
            if window.contains(n)
                && out.dist[idx(n)] == u32::MAX
                && blocked.hop_usable(idx(c), dir, idx(n))
            {
                out.dist[idx(n)] = d + 1;
                queue.push_back(n);
            }
        }
    }
    out
}

/// The defects inside a search window as flags per PE, so that the search's hop tests are
/// array reads rather than lookups in the defect map's sets (which large maps — every PE of
/// other pipeline copies, say — make slow).
struct Blocked {
    /// Per PE of the window, row-major: bit 0 dead PE, bit 1 dead link east, bit 2 dead link
    /// south.
    flags: Vec<u8>,
}

impl Blocked {
    const DEAD: u8 = 1;
    const EAST: u8 = 2;
    const SOUTH: u8 = 4;

    fn new(t: &Target, window: Rect) -> Blocked {
        let mut flags = vec![0u8; (window.width * window.height) as usize];
        let idx = |x: u32, y: u32| ((y - window.y) * window.width + (x - window.x)) as usize;
        let (top, bottom) = (window.y, window.y + window.height);
        let first = Coord::new(0, top);
        for c in t
            .defects
            .dead_pes
            .range(first..)
            .take_while(|c| c.y < bottom)
        {
            if window.contains(*c) {
                flags[idx(c.x, c.y)] |= Blocked::DEAD;
            }
        }
        for l in &t.defects.dead_links {
            // Canonical links point east or south from their west or north end.
            let from = Coord::new(l.x, l.y);
            if window.contains(from) {
                flags[idx(l.x, l.y)] |= match l.dir {
                    Dir::East => Blocked::EAST,
                    _ => Blocked::SOUTH,
                };
            }
        }
        Blocked { flags }
    }

    fn pe_dead(&self, i: usize) -> bool {
        self.flags[i] & Blocked::DEAD != 0
    }

    /// Whether a wavelet can hop from PE `from` toward `dir` to its neighbour `to` (both
    /// inside the window): the link and both ends live.
    fn hop_usable(&self, from: usize, dir: Dir, to: usize) -> bool {
        let link_dead = match dir {
            Dir::East => self.flags[from] & Blocked::EAST != 0,
            Dir::South => self.flags[from] & Blocked::SOUTH != 0,
            Dir::West => self.flags[to] & Blocked::EAST != 0,
            Dir::North => self.flags[to] & Blocked::SOUTH != 0,
        };
        !link_dead && !self.pe_dead(from) && !self.pe_dead(to)
    }
}

/// Follow decreasing distances from `from` (which must be reachable) to a seed, preferring
/// X toward `goal`, then Y toward `goal`, then east, west, south, north.
fn walk(t: &Target, dist: &Distances, from: Coord, goal: Coord) -> Path {
    let mut pes = vec![from];
    let mut c = from;
    while let Some(d) = dist.get(c).filter(|&d| d > 0) {
        let toward_x = if goal.x > c.x {
            Some(Dir::East)
        } else if goal.x < c.x {
            Some(Dir::West)
        } else {
            None
        };
        let toward_y = if goal.y > c.y {
            Some(Dir::South)
        } else if goal.y < c.y {
            Some(Dir::North)
        } else {
            None
        };
        let order = [
            toward_x,
            toward_y,
            Some(Dir::East),
            Some(Dir::West),
            Some(Dir::South),
            Some(Dir::North),
        ];
        let next = order.into_iter().flatten().find_map(|dir| {
            let n = t.neighbor(c, dir)?;
            (dist.get(n) == Some(d - 1) && t.defects.hop_usable(c, dir, n)).then_some(n)
        });
        let Some(n) = next else { break };
        c = n;
        pes.push(c);
    }
    Path { pes }
}

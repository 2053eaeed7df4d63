//! Routes for every tensor that crosses a region's edge (`docs/mapping.md` §2–§4): between
//! regions (part `i` of the producer's output edge to part `i` of each consumer's input
//! edge), from the host or weight store into the fabric's edge, and from the last region to
//! the fabric's south or east edge.
//!
//! A transfer keeps one color end to end: the producer's boundary slot, the hops between the
//! regions and the consumer's boundary slot are merged into one **slot class** here, and the
//! class later gets one color. Since every part of a tensor shares that color, the paths of
//! different parts (and the regions the class already uses) must not meet in a router: each
//! path is first asked of the target's routing helpers, which avoid defects, and if it would
//! meet, found again by a breadth-first search that avoids the class's routers too.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use wsel_diagnostic::Diagnostic;
use wsel_ir::graph::{LayerGraph, TensorRef};
use wsel_target::{Coord, Dir, Port, PortSet, Rect, multicast_tree, shortest_path};

use crate::diagnostics as diag;
use crate::place::DeadIndex;
use crate::placement::{EdgeSource, Endpoint, Hop};
use crate::search::{Choice, Problem, UnionFind};
use blocked::Blocked;

mod blocked;
mod enclosed;
mod inputs;
mod results;

/// The routes and the slot classes.
pub(crate) struct Routed {
    /// Class of every slot (program-wide slot numbering).
    pub slot_class: Vec<usize>,
    pub class_count: usize,
    /// The layers whose regions each class uses.
    pub class_layers: Vec<Vec<usize>>,
    pub transfers: Vec<RawTransfer>,
    pub inputs: Vec<RawEdge>,
    pub outputs: Vec<RawEdge>,
    /// The `(layer, port)` inputs that pass their stream on to other readers (`fan_out`).
    pub passes_on: Vec<(usize, usize)>,
}

/// A transfer before colors.
pub(crate) struct RawTransfer {
    pub tensor: String,
    pub part: u32,
    pub parts: u32,
    pub class: usize,
    pub source: Endpoint,
    pub destinations: Vec<Endpoint>,
    pub hops: Vec<Hop>,
}

/// An edge stream before colors.
pub(crate) struct RawEdge {
    pub tensor: String,
    pub index: usize,
    pub part: u32,
    pub parts: u32,
    pub at: Coord,
    pub side: Dir,
    pub class: usize,
    pub source: EdgeSource,
    pub layer: usize,
}

/// One place a part must reach: the PE beside the consumer's edge, and the port it forwards
/// to from there.
#[derive(Clone, Copy)]
struct Goal {
    /// The PE the path must reach.
    at: Coord,
    /// The port that PE forwards to (toward the consumer, or off the fabric).
    tx: Port,
}

pub(crate) fn route_all(
    problem: &Problem<'_>,
    choice: &Choice,
    diagnostics: &mut Vec<Diagnostic>,
    blamed: &mut Vec<usize>,
) -> Option<Routed> {
    let errors_before = diagnostics.len();
    let wiring = Wiring::new(problem, choice);
    let regions: Vec<Rect> = choice.regions.iter().map(|r| r.0).collect();
    let target = problem.target;
    let mut finder = PathFinder {
        problem,
        dead: &problem.dead,
        blocked: Blocked::new(
            (target.width, target.height),
            &problem.dead,
            &regions,
            &wiring.class_layers,
        ),
        used: vec![CoordSet::default(); wiring.class_count],
        reserved: CoordSet::default(),
    };
    let mut found = Found::default();
    let mut failed = Failed {
        diagnostics,
        blamed,
    };
    inputs::route_bound_inputs(&mut finder, &wiring, &mut found, &mut failed);
    results::route_results(&mut finder, &wiring, &mut found, &mut failed);
    if diagnostics.len() > errors_before {
        return None;
    }
    let Wiring {
        slot_class,
        class_count,
        class_layers,
        ..
    } = wiring;
    Some(Routed {
        slot_class,
        class_count,
        class_layers,
        transfers: found.transfers,
        inputs: found.inputs,
        outputs: found.outputs,
        passes_on: found.passes_on,
    })
}

/// The choice being routed and its slot classes: every layer-to-layer connection's slots
/// merged into one class, so that classes are final before any route is found.
struct Wiring<'w, 'a> {
    problem: &'w Problem<'a>,
    choice: &'w Choice,
    /// Per layer, the `(layer, port)` inputs that read its result.
    consumers_of: Vec<Vec<(usize, usize)>>,
    /// Class of every slot (program-wide slot numbering).
    slot_class: Vec<usize>,
    class_count: usize,
    /// The layers whose regions each class uses.
    class_layers: Vec<Vec<usize>>,
}

impl<'w, 'a> Wiring<'w, 'a> {
    fn new(problem: &'w Problem<'a>, choice: &'w Choice) -> Self {
        let consumers_of = consumers_of(problem);
        let mut uf = UnionFind::new(problem.slot_count());
        for (p, consumers) in consumers_of.iter().enumerate() {
            let Some(out) = problem.layers[p].plan.output_port() else {
                continue;
            };
            for &(l, q) in consumers {
                uf.union(slot(problem, choice, p, out), slot(problem, choice, l, q));
            }
        }
        let (slot_class, class_count) = uf.classes();
        let mut class_layers: Vec<Vec<usize>> = vec![Vec::new(); class_count];
        for (l, lp) in problem.layers.iter().enumerate() {
            for &c in &slot_class[lp.slot_base..lp.slot_base + lp.plan.slot_count()] {
                if class_layers[c].last() != Some(&l) {
                    class_layers[c].push(l);
                }
            }
        }
        Wiring {
            problem,
            choice,
            consumers_of,
            slot_class,
            class_count,
            class_layers,
        }
    }

    /// The class of layer `l`'s boundary slot for port `port`.
    fn class(&self, l: usize, port: usize) -> usize {
        self.slot_class[slot(self.problem, self.choice, l, port)]
    }

    /// The physical side of layer `l`'s region that port `port` faces.
    fn phys(&self, l: usize, port: usize) -> Dir {
        self.choice.regions[l]
            .1
            .dir(self.problem.layers[l].plan.ports[port].side)
    }
}

/// Per layer, the `(layer, port)` inputs that read its result.
fn consumers_of(problem: &Problem<'_>) -> Vec<Vec<(usize, usize)>> {
    let graph = problem.graph;
    let mut consumers_of: Vec<Vec<(usize, usize)>> = vec![Vec::new(); graph.layers.len()];
    for (l, layer) in graph.layers.iter().enumerate() {
        for (i, arg) in layer.args.iter().enumerate() {
            if let TensorRef::Layer(p) = *arg
                && p < graph.layers.len()
            {
                for q in problem.layers[l].plan.arg_ports(i) {
                    consumers_of[p].push((l, q));
                }
            }
        }
    }
    consumers_of
}

/// The program-wide number of layer `l`'s boundary slot for port `port` at its chosen size.
fn slot(problem: &Problem<'_>, choice: &Choice, l: usize, port: usize) -> usize {
    let lp = &problem.layers[l];
    let (r, c) = choice.sizes[l];
    lp.slot_base + lp.plan.boundary_slot(port, r, c)
}

/// The streams routed so far.
#[derive(Default)]
struct Found {
    transfers: Vec<RawTransfer>,
    inputs: Vec<RawEdge>,
    outputs: Vec<RawEdge>,
    passes_on: Vec<(usize, usize)>,
}

/// Where routing failures go: a diagnostic each, and the layer it blames.
struct Failed<'d> {
    diagnostics: &'d mut Vec<Diagnostic>,
    blamed: &'d mut Vec<usize>,
}

impl Failed<'_> {
    /// `what` (a part of a tensor) could not be routed to layer `l` because of `why`.
    fn unroutable(&mut self, graph: &LayerGraph, l: usize, what: &str, why: &str) {
        let layer = &graph.layers[l];
        self.blamed.push(l);
        self.diagnostics
            .push(diag::unroutable(&layer.name, &layer.call, what, why));
    }
}

/// Finds the routers' paths for one class of parts at a time, over live links and routers no
/// other class uses yet.
struct PathFinder<'p, 'a> {
    problem: &'p Problem<'a>,
    dead: &'p DeadIndex,
    /// Per class, the dead PEs and the class's regions.
    blocked: Blocked<'p>,
    /// Routers each class already uses outside its regions.
    used: Vec<CoordSet>,
    /// PEs where the other parts of the tensor being routed start or end, which its part
    /// must leave to them.
    reserved: CoordSet,
}

impl PathFinder<'_, '_> {
    /// Routes parts `0..parts` of one class with `route`, first in ascending order, then (if a
    /// part fails, because earlier parts took its way) in descending order; the other way
    /// round when `descending_first` (a bundle that turns, whose last part turns first).
    /// Results are by part; on failure, the part that failed in the first order and why.
    fn in_some_order<T>(
        &mut self,
        class: usize,
        parts: u32,
        descending_first: bool,
        mut route: impl FnMut(&mut Self, u32) -> Result<T, String>,
    ) -> Result<Vec<T>, (u32, String)> {
        let before = self.used[class].clone();
        let mut first_failure = None;
        for descending in [descending_first, !descending_first] {
            self.used[class] = before.clone();
            let mut out: Vec<Option<T>> = (0..parts).map(|_| None).collect();
            let mut failed = None;
            for k in 0..parts {
                let j = if descending { parts - 1 - k } else { k };
                match route(self, j) {
                    Ok(v) => out[j as usize] = Some(v),
                    Err(why) => {
                        failed = Some((j, why));
                        break;
                    }
                }
            }
            match failed {
                None => return Ok(out.into_iter().flatten().collect()),
                Some(f) => {
                    first_failure.get_or_insert(f);
                }
            }
            if parts < 2 {
                break;
            }
        }
        self.used[class] = before;
        Err(first_failure.unwrap_or((0, String::new())))
    }

    /// Whether `c` may carry a hop of `class`: a live PE outside the class's regions, not
    /// yet used by the class and not reserved for another part.
    fn free_for(&self, class: usize, c: Coord) -> bool {
        !self.blocked.contains(class, c)
            && !self.used[class].contains(&c)
            && !self.reserved.contains(&c)
    }

    /// A stream from the fabric's edge into `cp` from `din`: the edge PE straight out from
    /// `cp` when the way is clear, else the nearest free PE on any edge of the fabric; the
    /// entry PE, the side the stream enters it from, and the hops to `cp`'s neighbour.
    fn edge_stream_to(
        &mut self,
        class: usize,
        cp: Coord,
        din: Dir,
    ) -> Result<(Coord, Dir, Vec<Hop>), String> {
        let target = self.problem.target;
        let Some(b) = target.neighbor(cp, din) else {
            // `cp` is on the fabric's edge: the stream enters it directly.
            return Ok((cp, din, Vec::new()));
        };
        let straight = project(cp, din, target.width, target.height);
        let found = self
            .path(class, straight, b)
            .map(|path| (path, din))
            .or_else(|| self.path_to_edge(class, b, din));
        let Some((path, side)) = found else {
            return Err(format!(
                "no path from the fabric's edge to PE {cp} avoids the defects and the routes \
                 of the other parts"
            ));
        };
        let hops = self.commit(class, &path, side.port(), din.opposite().port());
        Ok((path[0], side, hops))
    }

    /// A path from the nearest free PE on the fabric's edge to `to`, and the side the stream
    /// enters that PE from (`prefer` when the PE lies on that edge).
    fn path_to_edge(&self, class: usize, to: Coord, prefer: Dir) -> Option<(Vec<Coord>, Dir)> {
        let target = self.problem.target;
        if !self.free_for(class, to) {
            return None;
        }
        let on_edge = |c: Coord, d: Dir| target.neighbor(c, d).is_none();
        let goal = |c: Coord| Dir::ALL.into_iter().any(|d| on_edge(c, d));
        // Search near `to` first: a window reaching a few PEs past the nearest edge.
        let nearest =
            to.x.min(to.y)
                .min(target.width - 1 - to.x)
                .min(target.height - 1 - to.y);
        let mut found = None;
        for margin in [nearest + 8, nearest + 64, u32::MAX] {
            let (x0, y0) = (to.x.saturating_sub(margin), to.y.saturating_sub(margin));
            let x1 = to.x.saturating_add(margin).min(target.width - 1);
            let y1 = to.y.saturating_add(margin).min(target.height - 1);
            let window = Rect::new(x0, y0, x1 - x0 + 1, y1 - y0 + 1);
            found = self.bfs_in(class, &[to], goal, &BTreeMap::new(), window, usize::MAX);
            if found.is_some() || (window.width == target.width && window.height == target.height) {
                break;
            }
        }
        let mut path = found?;
        path.reverse();
        let entry = path[0];
        let side = if on_edge(entry, prefer) {
            prefer
        } else {
            Dir::ALL.into_iter().find(|&d| on_edge(entry, d))?
        };
        Some((path, side))
    }

    /// The fabric edges the model's result may leave by, from the PE beside `sp` toward
    /// `dout`, in the order that breaks ties: the usual one first (`dout` when it is south or
    /// east, else the nearer of those two), then the others, nearest first. Several parts
    /// cannot turn back around their own region, so they never leave opposite `dout`.
    fn exit_sides(&self, sp: Coord, dout: Dir, parts: u32) -> Vec<Dir> {
        let target = self.problem.target;
        let Some(a) = target.neighbor(sp, dout) else {
            return vec![dout];
        };
        let distance = |side: Dir| match side {
            Dir::North => a.y,
            Dir::West => a.x,
            Dir::South => target.height - 1 - a.y,
            Dir::East => target.width - 1 - a.x,
        };
        let usual = match dout {
            Dir::South | Dir::East => dout,
            _ if distance(Dir::South) <= distance(Dir::East) => Dir::South,
            _ => Dir::East,
        };
        let mut others: Vec<Dir> = Dir::ALL
            .into_iter()
            .filter(|&d| d != usual && (parts == 1 || d != dout.opposite()))
            .collect();
        others.sort_by_key(|&d| distance(d));
        std::iter::once(usual)
            .filter(|&d| parts == 1 || d != dout.opposite())
            .chain(others)
            .collect()
    }

    /// Where part `j` of `parts` of the model's result leaves toward `side`, from the PE
    /// beside `sp` toward `dout`: straight on when `side` is `dout`; else it first goes on
    /// toward `dout` far enough that the parts turn one inside the other without crossing
    /// (the part nearest `side` turns first), then straight to the fabric's `side` edge.
    /// `None` when the turn would leave the fabric.
    fn exit_goal(&self, sp: Coord, dout: Dir, side: Dir, j: u32, parts: u32) -> Option<Goal> {
        let target = self.problem.target;
        let a = target.neighbor(sp, dout)?;
        // Parts run east along north and south edges, south along west and east edges.
        let along = match dout {
            Dir::North | Dir::South => Dir::East,
            Dir::West | Dir::East => Dir::South,
        };
        let depth = if side == along {
            parts - 1 - j
        } else if side == along.opposite() {
            j
        } else {
            0
        };
        let mut turn = a;
        for _ in 0..depth {
            turn = target.neighbor(turn, dout)?;
        }
        Some(Goal {
            at: project(turn, side, target.width, target.height),
            tx: side.port(),
        })
    }

    /// Hops from `sp` (sending toward `dout`) to every goal: straight on through the
    /// consumers that pass the part on (`passes`: the goal's index and the PE just past its
    /// line, nearest first), then as one tree from past the last of them to the other goals.
    fn between(
        &mut self,
        class: usize,
        sp: Coord,
        dout: Dir,
        goals: &[(Goal, Coord)],
        passes: &[(usize, Coord)],
    ) -> Result<Vec<Hop>, String> {
        let Some(a) = self.problem.target.neighbor(sp, dout) else {
            return if goals.is_empty() {
                // The result leaves the fabric straight from `sp`.
                Ok(Vec::new())
            } else {
                Err(format!("PE {sp} sends {dout}, off the fabric"))
            };
        };
        let (mut from, mut start) = (sp, a);
        let mut hops = Vec::new();
        for &(k, beyond) in passes {
            let Some(&(goal, cp)) = goals.get(k) else {
                continue;
            };
            hops.extend(self.tree_from(class, from, start, dout, &[(goal, cp)])?);
            from = self
                .problem
                .target
                .neighbor(beyond, dout.opposite())
                .unwrap_or(beyond);
            start = beyond;
        }
        let rest: Vec<(Goal, Coord)> = goals
            .iter()
            .enumerate()
            .filter(|(k, _)| !passes.iter().any(|&(passed, _)| passed == *k))
            .map(|(_, g)| *g)
            .collect();
        if !rest.is_empty() {
            hops.extend(self.tree_from(class, from, start, dout, &rest)?);
        }
        Ok(hops)
    }

    /// Hops from `a`, which receives from `from` on its side opposite `dout`, to every goal,
    /// as one tree.
    fn tree_from(
        &mut self,
        class: usize,
        from: Coord,
        a: Coord,
        dout: Dir,
        goals: &[(Goal, Coord)],
    ) -> Result<Vec<Hop>, String> {
        let target = self.problem.target;
        // Neighbouring regions: the part goes straight from `from` into the consumer.
        if let [(goal, cp)] = goals
            && a == *cp
            && goal.at == from
        {
            return Ok(Vec::new());
        }
        // The model's result leaves the fabric at `a` itself (an exit goal is recorded with
        // its own PE as `cp`): one hop, from the producer's side straight off the fabric.
        if let [(goal, cp)] = goals
            && *cp == a
            && goal.at == a
        {
            if !self.free_for(class, a) {
                return Err(format!(
                    "the result's exit from the fabric, {a}, right beside the producer's \
                     edge, is dead or already carries this color"
                ));
            }
            return Ok(self.commit(class, &[a], dout.opposite().port(), goal.tx));
        }
        if goals.iter().any(|(goal, cp)| *cp == a && goal.at == a) {
            return Err(format!(
                "the result leaves the fabric at {a}, right beside the producer's edge, and \
                 {} layers read it as well: the part cannot both leave the fabric there and \
                 branch to them",
                goals.len() - 1
            ));
        }
        if goals.iter().any(|(_, cp)| *cp == a) {
            return Err(format!(
                "it feeds {} layers, and one sits right beside PE {from} (PE {a}) but cannot \
                 pass the part on (its input line must be a multicast line, or the region one \
                 PE deep, with a live PE past it), so the part cannot branch to the others",
                goals.len()
            ));
        }
        if !self.free_for(class, a) {
            return Err(format!(
                "the PE beside the edge the part leaves by, {a}, is dead or already carries \
                 this color"
            ));
        }
        let rx = dout.opposite().port();
        if let [(goal, _)] = goals {
            let path = self.path(class, a, goal.at).ok_or_else(|| {
                format!(
                    "defects or other routes cut every path from {a} to {}",
                    goal.at
                )
            })?;
            return Ok(self.commit(class, &path, rx, goal.tx));
        }
        // Several goals: a multicast tree from `a`.
        let mut tree: BTreeMap<Coord, (PortSet, PortSet)> = BTreeMap::new();
        tree.insert(a, (PortSet::only(rx), PortSet::EMPTY));
        let dests: Vec<Coord> = goals.iter().map(|(g, _)| g.at).collect();
        let helper = multicast_tree(target, a, &dests)
            .ok()
            .filter(|t| t.nodes.keys().all(|&c| self.free_for(class, c)));
        match helper {
            Some(t) => {
                for (c, (r, tx)) in t.nodes {
                    let rx_set = if c == a {
                        PortSet::only(rx)
                    } else {
                        PortSet::only(r)
                    };
                    let tx = PortSet(tx.0 & !PortSet::only(Port::Ramp).0);
                    tree.insert(c, (rx_set, tx));
                }
            }
            None => {
                for &(goal, _) in goals {
                    if tree.contains_key(&goal.at) {
                        continue;
                    }
                    let starts: Vec<Coord> = tree.keys().copied().collect();
                    let path = self.bfs(class, &starts, goal.at, &tree).ok_or_else(|| {
                        format!("defects or other routes cut every path to {}", goal.at)
                    })?;
                    for w in path.windows(2) {
                        let Some(d) = wsel_target::dir_between(w[0], w[1]) else {
                            continue;
                        };
                        if let Some(node) = tree.get_mut(&w[0]) {
                            node.1 = node.1.with(d.port());
                        }
                        tree.insert(w[1], (PortSet::only(d.opposite().port()), PortSet::EMPTY));
                    }
                }
            }
        }
        for (goal, _) in goals {
            if let Some(node) = tree.get_mut(&goal.at) {
                node.1 = node.1.with(goal.tx);
            }
        }
        let hops: Vec<Hop> = tree
            .into_iter()
            .map(|(at, (rx, tx))| Hop { at, rx, tx })
            .collect();
        for h in &hops {
            self.used[class].insert(h.at);
        }
        Ok(hops)
    }

    /// A path from `from` to `to` over routers free for `class`: the target's shortest path
    /// when it stays clear, else a breadth-first search.
    fn path(&self, class: usize, from: Coord, to: Coord) -> Option<Vec<Coord>> {
        if !self.free_for(class, from) || !self.free_for(class, to) {
            return None;
        }
        if let Ok(p) = shortest_path(self.problem.target, from, to)
            && p.pes.iter().all(|&c| self.free_for(class, c))
        {
            return Some(p.pes);
        }
        self.bfs(class, &[from], to, &BTreeMap::new())
    }

    /// Breadth-first search from any of `starts` to `goal` over live links and routers free
    /// for `class` (or already in `tree`, which the path may not re-enter after leaving): in
    /// a window around them, then a wider one, then over the whole fabric, where it enters
    /// at most [`MAX_FLOOD`] PEs (when the goal is not [`PathFinder::goal_enclosed`]).
    fn bfs(
        &self,
        class: usize,
        starts: &[Coord],
        goal: Coord,
        tree: &BTreeMap<Coord, (PortSet, PortSet)>,
    ) -> Option<Vec<Coord>> {
        let target = self.problem.target;
        let mut lo = goal;
        let mut hi = goal;
        for s in starts {
            lo = Coord::new(lo.x.min(s.x), lo.y.min(s.y));
            hi = Coord::new(hi.x.max(s.x), hi.y.max(s.y));
        }
        for margin in [8u32, 64, u32::MAX] {
            let x0 = lo.x.saturating_sub(margin);
            let y0 = lo.y.saturating_sub(margin);
            let x1 = hi.x.saturating_add(margin).min(target.width - 1);
            let y1 = hi.y.saturating_add(margin).min(target.height - 1);
            let window = Rect::new(x0, y0, x1 - x0 + 1, y1 - y0 + 1);
            let whole = window.width == target.width && window.height == target.height;
            if whole && self.goal_enclosed(class, starts, goal, tree) {
                return None;
            }
            let limit = if whole { MAX_FLOOD } else { usize::MAX };
            if let Some(p) = self.bfs_in(class, starts, |c| c == goal, tree, window, limit) {
                return Some(p);
            }
            if whole {
                break;
            }
        }
        None
    }

    /// Breadth-first search inside `window` from any of `starts` to the nearest PE that is a
    /// `goal`, over live links and routers free for `class` (and not in `tree`), giving up
    /// after entering `limit` PEs.
    fn bfs_in(
        &self,
        class: usize,
        starts: &[Coord],
        goal: impl Fn(Coord) -> bool,
        tree: &BTreeMap<Coord, (PortSet, PortSet)>,
        window: Rect,
        limit: usize,
    ) -> Option<Vec<Coord>> {
        let target = self.problem.target;
        let idx = |c: Coord| ((c.y - window.y) * window.width + (c.x - window.x)) as usize;
        let mut parent = vec![u32::MAX; (window.width * window.height) as usize];
        let mut queue = VecDeque::new();
        let mut entered = 0;
        for &s in starts {
            if window.contains(s) && parent[idx(s)] == u32::MAX {
                parent[idx(s)] = idx(s) as u32;
                queue.push_back(s);
            }
        }
        while let Some(c) = queue.pop_front() {
            if goal(c) {
                let mut path = vec![c];
                let mut cur = c;
                while parent[idx(cur)] != idx(cur) as u32 {
                    let p = parent[idx(cur)];
                    cur = Coord::new(window.x + p % window.width, window.y + p / window.width);
                    path.push(cur);
                }
                path.reverse();
                return Some(path);
            }
            for d in Dir::ALL {
                let Some(n) = target.neighbor(c, d) else {
                    continue;
                };
                if !window.contains(n)
                    || parent[idx(n)] != u32::MAX
                    || self.dead.link_dead(c, d)
                    || tree.contains_key(&n)
                    || !self.free_for(class, n)
                {
                    continue;
                }
                entered += 1;
                if entered > limit {
                    return None;
                }
                parent[idx(n)] = idx(c) as u32;
                queue.push_back(n);
            }
        }
        None
    }

    /// Turns a path into hops (the first receives from `first_rx`, the last forwards to
    /// `last_tx`) and marks its routers used by `class`.
    fn commit(&mut self, class: usize, path: &[Coord], first_rx: Port, last_tx: Port) -> Vec<Hop> {
        let mut hops = Vec::with_capacity(path.len());
        for (i, &at) in path.iter().enumerate() {
            let rx = if i == 0 {
                PortSet::only(first_rx)
            } else {
                wsel_target::dir_between(at, path[i - 1])
                    .map_or(PortSet::EMPTY, |d| PortSet::only(d.port()))
            };
            let tx = if i + 1 == path.len() {
                PortSet::only(last_tx)
            } else {
                wsel_target::dir_between(at, path[i + 1])
                    .map_or(PortSet::EMPTY, |d| PortSet::only(d.port()))
            };
            hops.push(Hop { at, rx, tx });
            self.used[class].insert(at);
        }
        hops
    }
}

/// The most PEs a search over the whole fabric enters. On wse2 with 1% of the PEs dead, a
/// part's goal is often cut off by regions and routes; unbounded, each failed search flooded
/// all 745,500 PEs (20 ms), hundreds of times per mapping. A path found within the bound is
/// the one the unbounded search finds; one that needs more would be hundreds of hops long.
const MAX_FLOOD: usize = 1 << 17;

/// The PE on the fabric's `side` edge straight out from `c`.
fn project(c: Coord, side: Dir, width: u32, height: u32) -> Coord {
    match side {
        Dir::North => Coord::new(c.x, 0),
        Dir::South => Coord::new(c.x, height - 1),
        Dir::West => Coord::new(0, c.y),
        Dir::East => Coord::new(width - 1, c.y),
    }
}

/// A set of PEs with a cheap hash (coordinates need no protection from collisions attacks).
type CoordSet = HashSet<Coord, BuildHasherDefault<CoordHasher>>;

/// Multiplicative hashing of the few integers a [`Coord`] feeds the hasher.
#[derive(Default)]
struct CoordHasher(u64);

impl Hasher for CoordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

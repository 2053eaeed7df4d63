//! Layer results (`docs/mapping.md` §4): each part of a layer's result to every consumer, and
//! to the host for the model's result, leaving the fabric by whichever side its parts reach in
//! the fewest hops.

use wsel_ir::graph::TensorRef;
use wsel_target::{Coord, Dir};

use super::{CoordSet, Failed, Found, Goal, PathFinder, RawEdge, RawTransfer, Wiring};
use crate::fan_out::{self, PassOn};
use crate::place::edge_pe;
use crate::placement::{EdgeSource, Endpoint, Hop};
use crate::ports::lines_on;

/// One part of a layer's result: the sending PE, the goals its route must reach (with the PE
/// each goal serves), its destinations, and where it leaves the fabric (for the model's
/// result).
type PartSpec = (
    Coord,
    Vec<(Goal, Coord)>,
    Vec<Endpoint>,
    Option<(Coord, Dir)>,
);

/// The part that could not be routed, and why.
type Failure = (u32, String);

/// Routes every layer's result that some layer reads or that is the model's result.
pub(super) fn route_results(
    finder: &mut PathFinder<'_, '_>,
    wiring: &Wiring<'_, '_>,
    found: &mut Found,
    failed: &mut Failed<'_>,
) {
    let graph = wiring.problem.graph;
    for (p, consumers) in wiring.consumers_of.iter().enumerate() {
        let is_result = graph.output == TensorRef::Layer(p);
        if consumers.is_empty() && !is_result {
            continue;
        }
        let Some(out) = wiring.problem.layers[p].plan.output_port() else {
            continue;
        };
        let stream = ResultStream::new(wiring, p, out, is_result);
        let sides = stream.sides(finder);
        match stream.route_best_side(finder, &sides) {
            Ok((k, hops)) => {
                found
                    .passes_on
                    .extend(stream.passes.iter().map(|pass| consumers[pass.consumer]));
                let specs = stream.specs(finder, sides[k]).unwrap_or_default();
                stream.record(specs, hops, found);
            }
            Err((j, why)) => {
                let blame = consumers.first().map_or(p, |&(l, _)| l);
                let what = format!("part {j} of `{}`", stream.tensor);
                failed.unroutable(graph, blame, &what, &why);
            }
        }
    }
}

/// Layer `p`'s result on its way out of its region.
struct ResultStream<'s, 'a> {
    wiring: &'s Wiring<'s, 'a>,
    p: usize,
    out: usize,
    consumers: &'s [(usize, usize)],
    is_result: bool,
    parts: u32,
    /// The side of the region the result leaves by.
    dout: Dir,
    class: usize,
    tensor: String,
    /// The consumers that pass the stream on to the others (`fan_out`).
    passes: Vec<PassOn>,
}

impl<'s, 'a> ResultStream<'s, 'a> {
    fn new(wiring: &'s Wiring<'s, 'a>, p: usize, out: usize, is_result: bool) -> Self {
        let (problem, choice) = (wiring.problem, wiring.choice);
        let layer = &problem.graph.layers[p];
        let consumers = wiring.consumers_of[p].as_slice();
        let (rows, cols) = choice.sizes[p];
        let parts = lines_on(problem.layers[p].plan.ports[out].side, rows, cols);
        let dout = wiring.phys(p, out);
        let passes =
            fan_out::passing_consumers(problem, choice, p, consumers, dout, parts, is_result);
        ResultStream {
            wiring,
            p,
            out,
            consumers,
            is_result,
            parts,
            dout,
            class: wiring.class(p, out),
            tensor: format!("{}.{}", layer.name, layer.output_name),
            passes,
        }
    }

    /// Per consumer that passes the stream on, its index and the PE just past part `j`'s line.
    fn passes_of(&self, j: u32) -> Vec<(usize, Coord)> {
        self.passes
            .iter()
            .map(|pass| (pass.consumer, pass.beyond[j as usize]))
            .collect()
    }

    /// Per part: the sending PE, the goals, the destinations and the host exit, for the result
    /// leaving toward `side` (`None`: not the result).
    fn specs(&self, finder: &PathFinder<'_, '_>, side: Option<Dir>) -> Option<Vec<PartSpec>> {
        let (choice, target) = (self.wiring.choice, self.wiring.problem.target);
        let mut specs = Vec::with_capacity(self.parts as usize);
        for j in 0..self.parts {
            let (region, orientation) = choice.regions[self.p];
            let sp = orientation.part_pe(region, self.dout, j);
            let mut goals = Vec::new();
            let mut destinations = Vec::new();
            for &(l, q) in self.consumers {
                let din = self.wiring.phys(l, q);
                let (rect, o) = choice.regions[l];
                let cp = o.part_pe(rect, din, j);
                destinations.push(Endpoint::LayerInput {
                    layer: l,
                    port: q,
                    at: cp,
                });
                if let Some(b) = target.neighbor(cp, din) {
                    goals.push((
                        Goal {
                            at: b,
                            tx: din.opposite().port(),
                        },
                        cp,
                    ));
                }
            }
            // The model's result: a goal on the fabric's edge, or straight out of `sp` when
            // `sp` is on the fabric's edge toward `dout`.
            let exit = match side {
                None => None,
                Some(_) if target.neighbor(sp, self.dout).is_none() => Some((sp, self.dout)),
                Some(side) => {
                    // The turn nests the parts by their physical order along the edge.
                    let along = if orientation.reversed_along(self.dout) {
                        self.parts - 1 - j
                    } else {
                        j
                    };
                    let goal = finder.exit_goal(sp, self.dout, side, along, self.parts)?;
                    goals.push((goal, goal.at));
                    Some((goal.at, side))
                }
            };
            if let Some((at, side)) = exit {
                destinations.push(Endpoint::HostOutput { at, side });
            }
            specs.push((sp, goals, destinations, exit));
        }
        Some(specs)
    }

    /// The sides of the fabric the result may leave by, usual first (`[None]` when it is not
    /// the model's result).
    fn sides(&self, finder: &PathFinder<'_, '_>) -> Vec<Option<Dir>> {
        if !self.is_result {
            return vec![None];
        }
        let region = self.wiring.choice.regions[self.p].0;
        finder
            .exit_sides(edge_pe(region, self.dout, 0), self.dout, self.parts)
            .into_iter()
            .map(Some)
            .collect()
    }

    /// The result leaves by whichever side of the fabric its parts reach in the fewest hops
    /// (on ties, the usual side: south or east), so its routes stay short and leave room for
    /// other copies of the pipeline. The side's index in `sides` and the hops of every part.
    fn route_best_side(
        &self,
        finder: &mut PathFinder<'_, '_>,
        sides: &[Option<Dir>],
    ) -> Result<(usize, Vec<Vec<Hop>>), Failure> {
        let before = finder.used[self.class].clone();
        let mut best: Option<(usize, Vec<Vec<Hop>>, CoordSet, usize)> = None;
        let mut first_failure = None;
        for (least, k, tried) in self.tries(finder, sides) {
            if best.as_ref().is_some_and(|b| least >= b.0) {
                break;
            }
            finder.used[self.class] = before.clone();
            match self.route_parts(finder, &tried) {
                Ok(hops) => {
                    let total = hops.iter().map(Vec::len).sum();
                    if best.as_ref().is_none_or(|b| total < b.0) {
                        best = Some((total, hops, finder.used[self.class].clone(), k));
                    }
                }
                Err(failure) => {
                    first_failure.get_or_insert(failure);
                }
            }
        }
        match best {
            Some((_, hops, used, k)) => {
                finder.used[self.class] = used;
                Ok((k, hops))
            }
            None => {
                finder.used[self.class] = before;
                Err(first_failure.unwrap_or((0, String::new())))
            }
        }
    }

    /// The sides in order of the fewest hops their parts could take (straight lines), so the
    /// search stops at the first side no other can beat: the least hops, the side's index in
    /// `sides` and its parts.
    fn tries(
        &self,
        finder: &PathFinder<'_, '_>,
        sides: &[Option<Dir>],
    ) -> Vec<(usize, usize, Vec<PartSpec>)> {
        let target = self.wiring.problem.target;
        let mut tries: Vec<(usize, usize, Vec<PartSpec>)> = sides
            .iter()
            .enumerate()
            .filter_map(|(k, side)| {
                let specs = self.specs(finder, *side)?;
                let least = specs
                    .iter()
                    .map(|(sp, goals, _, _)| {
                        let a = target.neighbor(*sp, self.dout);
                        goals
                            .iter()
                            .filter_map(|(g, _)| Some(a?.manhattan(g.at) as usize + 1))
                            .max()
                            .unwrap_or(0)
                    })
                    .sum();
                Some((least, k, specs))
            })
            .collect();
        tries.sort_by_key(|&(least, k, _)| (least, k));
        tries
    }

    /// Routes every part of `tried`, each kept off the PEs where the other parts start or end;
    /// when no order of the parts routes so, once more with each part kept off those PEs'
    /// neighbours too: a part routed first by its shortest way can wall in
    /// another's start or end (a bundle that turns back beside its producer), which a part
    /// kept a PE away leaves a way around.
    fn route_parts(
        &self,
        finder: &mut PathFinder<'_, '_>,
        tried: &[PartSpec],
    ) -> Result<Vec<Vec<Hop>>, Failure> {
        let first = self.route_kept_off(finder, tried, false);
        if first.is_ok() || tried.len() < 2 {
            return first;
        }
        self.route_kept_off(finder, tried, true).or(first)
    }

    /// Per part of `tried`, the PEs where it starts or ends.
    fn part_ends(&self, tried: &[PartSpec]) -> Vec<Vec<Coord>> {
        let target = self.wiring.problem.target;
        tried
            .iter()
            .enumerate()
            .map(|(j, (sp, goals, _, _))| {
                let mut at: Vec<Coord> = goals.iter().map(|(g, _)| g.at).collect();
                at.extend(target.neighbor(*sp, self.dout));
                at.extend(
                    self.passes_of(j as u32)
                        .into_iter()
                        .map(|(_, beyond)| beyond),
                );
                at
            })
            .collect()
    }

    /// Routes every part of `tried`, each kept off the PEs where the other parts start or end
    /// and, with `halo`, off those PEs' neighbours but its own ends.
    fn route_kept_off(
        &self,
        finder: &mut PathFinder<'_, '_>,
        tried: &[PartSpec],
        halo: bool,
    ) -> Result<Vec<Vec<Hop>>, Failure> {
        let target = self.wiring.problem.target;
        let ends = self.part_ends(tried);
        // Parts that turn one inside the other are routed innermost (shortest) first.
        let reach = |j: usize| {
            let (sp, goals, _, _) = &tried[j];
            goals
                .iter()
                .map(|(g, _)| sp.manhattan(g.at))
                .max()
                .unwrap_or(0)
        };
        let descending_first = tried.len() > 1 && reach(tried.len() - 1) < reach(0);
        finder.in_some_order(self.class, self.parts, descending_first, |finder, j| {
            let (sp, goals, _, _) = &tried[j as usize];
            if goals.len() < self.consumers.len() {
                return Err("a consumer's input edge faces off the fabric".to_string());
            }
            let others = ends
                .iter()
                .enumerate()
                .filter(|&(k, _)| k != j as usize)
                .flat_map(|(_, at)| at.iter().copied());
            finder.reserved = others.clone().collect();
            if halo {
                let mine = &ends[j as usize];
                let beside = others.flat_map(|c| beside(target, c));
                finder.reserved.extend(beside.filter(|c| !mine.contains(c)));
            }
            let hops = finder.between(self.class, *sp, self.dout, goals, &self.passes_of(j));
            finder.reserved.clear();
            hops
        })
    }

    /// Records the routed parts: a transfer each, and an output edge where a part leaves the
    /// fabric for the host.
    fn record(&self, specs: Vec<PartSpec>, hops_per_part: Vec<Vec<Hop>>, found: &mut Found) {
        for (j, ((sp, _, destinations, exit), hops)) in
            specs.into_iter().zip(hops_per_part).enumerate()
        {
            let j = j as u32;
            if let Some((at, side)) = exit {
                found.outputs.push(RawEdge {
                    tensor: self.tensor.clone(),
                    index: 0,
                    part: j,
                    parts: self.parts,
                    at,
                    side,
                    class: self.class,
                    source: EdgeSource::Host,
                    layer: self.p,
                });
            }
            found.transfers.push(RawTransfer {
                tensor: self.tensor.clone(),
                part: j,
                parts: self.parts,
                class: self.class,
                source: Endpoint::LayerOutput {
                    layer: self.p,
                    port: self.out,
                    at: sp,
                },
                destinations,
                hops,
            });
        }
    }
}

/// The PEs beside `c`.
fn beside(target: &wsel_target::Target, c: Coord) -> impl Iterator<Item = Coord> + '_ {
    Dir::ALL
        .into_iter()
        .filter_map(move |d| target.neighbor(c, d))
}

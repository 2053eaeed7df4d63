//! The ways one layer of the chain can lie, given the regions placed before it
//! (`docs/mapping.md` §2): straight on from its producer's output edge (aligned part for part,
//! at the least gap that is free), folded each way, or — when it has no producer, or is not
//! held beside one — against the fabric's edge or at the first free place.

use std::cmp::Reverse;
use wsel_ir::graph::{Side, TensorRef};

use wsel_target::{Dir, Rect, Target};

use super::{MAX_GAP, beside, edge_fit, first_fit, on_fabric_edge, overlaps, seam_clear, strip};
use crate::fold;
use crate::placement::Orientation;
use crate::ports::{BoundTensor, lines_on};
use crate::search::Problem;

/// One way to place a layer: its rectangle and orientation, and the square its producer's
/// bundle turns in when it is folded.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pick {
    pub rect: Rect,
    pub orientation: Orientation,
    pub square: Option<Rect>,
}

/// The chain's layers at their chosen sizes, and what placing them depends on.
pub(super) struct Chain<'a> {
    problem: &'a Problem<'a>,
    sizes: &'a [(u32, u32)],
    variant: u32,
    /// Order a layer's ways snuggest first, else straight on first.
    snug: bool,
    strict: bool,
    /// How many layers read each layer's result.
    consumers: Vec<usize>,
}

impl<'a> Chain<'a> {
    pub(super) fn new(
        problem: &'a Problem<'a>,
        sizes: &'a [(u32, u32)],
        variant: u32,
        snug: bool,
        strict: bool,
    ) -> Chain<'a> {
        let mut consumers = vec![0usize; sizes.len()];
        for layer in &problem.graph.layers {
            for a in &layer.args {
                if let TensorRef::Layer(p) = *a
                    && p < consumers.len()
                {
                    consumers[p] += 1;
                }
            }
        }
        Chain {
            problem,
            sizes,
            variant,
            snug,
            strict,
            consumers,
        }
    }

    /// The failure of layer `l`: it, and the PEs of the layers before it.
    pub(super) fn failure(&self, l: usize) -> (usize, u64) {
        (l, crate::search::pes(&self.sizes[..l]))
    }

    /// The least gap between a result read by `fan_out` layers (or the model's result too),
    /// leaving in `parts` parts, and its first consumer, `depth` PEs deep toward it: one PE,
    /// where the parts branch. With [`Problem::fork_room`], a line for the companion's sum of
    /// the two gradients beside the producer, and the lines where the skip's gradient turns
    /// in beside the sum's edge, one inside the other: `parts` lines with the consumer's own
    /// (`companion`, `docs/mapping.md` §4).
    fn fork_gap(&self, fan_out: usize, parts: u32, depth: u32) -> u32 {
        match (fan_out > 1, self.problem.fork_room) {
            (false, _) => 0,
            (true, false) => 1,
            (true, true) => 1 + parts.saturating_sub(depth).max(1),
        }
    }

    /// The least gap between layer `l` and its producer `p` (at `prect`, its result leaving
    /// toward `out_dir`) that leaves room for the other results `l` reads — a residual block's
    /// `h` in `add(h, f(h))`, `p` being `f`'s last layer — to reach `l`'s input edge
    /// (`docs/mapping.md` §4, "A residual block"). `h`'s parts reach the PEs beside the edge
    /// through the gap and through `p`'s PEs, unless `p` reads `h` too (they carry it on its
    /// own color); arriving from one side they turn one inside the other, a line of PEs each,
    /// so the gap and `p`'s depth together take `n` lines for `n` parts. Two parts enter a
    /// line of the gap from its two ends, so up to two need only one line.
    fn join_gap(&self, l: usize, p: usize, prect: Rect, out_dir: Dir) -> u32 {
        let graph = self.problem.graph;
        let depth = match out_dir {
            Dir::North | Dir::South => prect.height,
            Dir::West | Dir::East => prect.width,
        };
        graph.layers[l]
            .args
            .iter()
            .filter_map(|a| match *a {
                TensorRef::Layer(q) if q != p && q < l => {
                    Some((q, graph.layers[p].args.contains(a)))
                }
                _ => None,
            })
            .map(|(q, p_reads)| {
                let (rows, cols) = self.sizes[q];
                let plan = &self.problem.layers[q].plan;
                let parts = plan
                    .output_port()
                    .map_or(1, |out| lines_on(plan.ports[out].side, rows, cols));
                match (parts, p_reads) {
                    (0..=2, reads) => u32::from(reads),
                    (n, true) => n,
                    (n, false) => n.saturating_sub(depth).max(1),
                }
            })
            .max()
            .unwrap_or(0)
    }

    /// The ways layer `l` can lie beside `placed` (the layers before it) without taking a
    /// fold's `squares`, best first: straight on from its producer in each orientation that
    /// takes the parts in order, then folded toward each side (a result read by one layer
    /// only), reordered snuggest first when `snug`; failing all of those, against the
    /// fabric's edge (fed from the host) or at the first free place (not in `strict` mode when
    /// fed several parts by a layer).
    pub(super) fn picks(
        &self,
        l: usize,
        placed: &[(Rect, Orientation)],
        squares: &[Rect],
    ) -> Vec<Pick> {
        let problem = self.problem;
        let graph = problem.graph;
        let dead = &problem.dead;
        let layer = &graph.layers[l];
        let (rows, cols) = self.sizes[l];
        let plan = &problem.layers[l].plan;
        // Sides that exchange tensors with other regions must not face off the fabric.
        let inner_sides: Vec<Side> = plan
            .ports
            .iter()
            .filter(|p| match p.bind.as_ref().map(|b| b.tensor) {
                Some(BoundTensor::Output) => self.consumers[l] > 0,
                Some(BoundTensor::Arg(i)) => matches!(layer.args.get(i), Some(TensorRef::Layer(_))),
                None => false,
            })
            .map(|p| p.side)
            .collect();
        // Every bound side's parts cross into the PEs just outside it, which must be live.
        let bound_sides: Vec<Side> = plan
            .ports
            .iter()
            .filter(|p| p.bind.is_some())
            .map(|p| p.side)
            .collect();
        // Cheapest tests first: most positions tried overlap a region already placed.
        let free = |rect: Rect, o: Orientation, placed: &[(Rect, Orientation)]| {
            placed.iter().all(|(p, _)| !overlaps(*p, rect))
                && squares.iter().all(|q| !overlaps(*q, rect))
                && dead.clean(rect)
                && inner_sides
                    .iter()
                    .all(|&s| !on_fabric_edge(rect, o.dir(s), problem.target))
                && bound_sides.iter().all(|&s| {
                    let d = o.dir(s);
                    on_fabric_edge(rect, d, problem.target)
                        || seam_clear(dead, rect, d, lines_on(s, rows, cols), 0)
                })
        };
        // The layer that feeds it: the latest producing argument bound to one of its ports.
        let producer = layer
            .args
            .iter()
            .enumerate()
            .filter_map(|(i, a)| match a {
                TensorRef::Layer(p) if *p < l => {
                    let port = plan.arg_ports(i).next()?;
                    Some((*p, port))
                }
                _ => None,
            })
            .max_by_key(|&(p, _)| p);
        let mut picks = Vec::new();
        let mut host_side = None;
        let mut orientations = vec![Orientation::Identity, Orientation::Transposed];
        if let Some((p, in_port)) = producer {
            let (prect, porient) = placed[p];
            let pplan = &problem.layers[p].plan;
            let (prows, pcols) = self.sizes[p];
            if let Some(out_port) = pplan.output_port() {
                let out_side = pplan.ports[out_port].side;
                let out_dir = porient.dir(out_side);
                let in_side = plan.ports[in_port].side;
                orientations.sort_by_key(|o| o.dir(in_side) != out_dir.opposite());
                let lines = lines_on(out_side, prows, pcols);
                // Straight on, the consumer takes the parts in the producer's order along
                // the seam: unmirrored first, as the staircase always placed them.
                let reversed = porient.reversed_along(out_dir);
                let straight = Orientation::ALL.into_iter().filter(|o| {
                    o.dir(in_side) == out_dir.opposite() && o.reversed_along(out_dir) == reversed
                });
                // A result feeding several layers branches one PE out from its
                // producer, so its first consumer keeps a gap.
                let fan_out = self.consumers[p] + usize::from(graph.output == TensorRef::Layer(p));
                let join_gap = self.join_gap(l, p, prect, out_dir);
                for o in straight {
                    let (w, h) = o.extent(rows, cols);
                    let depth = match out_dir {
                        Dir::North | Dir::South => h,
                        Dir::West | Dir::East => w,
                    };
                    let first_gap = self.fork_gap(fan_out, lines, depth).max(join_gap);
                    let found = (first_gap..=MAX_GAP)
                        .map_while(|gap| Some((beside(prect, out_dir, w, h, gap)?, gap)))
                        .find(|&(rect, gap)| {
                            free(rect, o, placed) && seam_clear(dead, prect, out_dir, lines, gap)
                        });
                    picks.extend(found.map(|(rect, _)| Pick {
                        rect,
                        orientation: o,
                        square: None,
                    }));
                }
                if fan_out == 1 {
                    let edge = fold::OutEdge {
                        rect: prect,
                        orientation: porient,
                        dir: out_dir,
                        parts: lines,
                    };
                    let fits = |t: &fold::Turned| {
                        free(t.rect, t.orientation, placed)
                            && dead.clean(t.square)
                            && placed.iter().all(|(r, _)| !overlaps(*r, t.square))
                            && squares.iter().all(|q| !overlaps(*q, t.square))
                    };
                    for turn in fold::turns(out_dir, prect, problem.target) {
                        let turned = (0..=MAX_GAP)
                            .flat_map(|gap| fold::turned(edge, turn, gap, (rows, cols), in_side))
                            .find(fits);
                        picks.extend(turned.map(|t| Pick {
                            rect: t.rect,
                            orientation: t.orientation,
                            square: Some(t.square),
                        }));
                    }
                }
            }
        } else if let Some(in_port) = plan.ports.iter().position(|p| {
            p.bind
                .as_ref()
                .is_some_and(|b| matches!(b.tensor, BoundTensor::Arg(_)))
        }) {
            // Fed from the host: prefer the input edge facing west or north.
            let in_side = plan.ports[in_port].side;
            host_side = Some(in_side);
            orientations.sort_by_key(|o| !matches!(o.dir(in_side), Dir::West | Dir::North));
        }
        if self.variant == 1 {
            orientations.reverse();
        }
        if !picks.is_empty() {
            // Snug first: the way whose border lies most against the fabric's edge and
            // the regions placed so far leaves the fewest pockets the chain cannot fill.
            if self.snug {
                picks.sort_by_key(|p| Reverse(contact(p.rect, placed, problem.target)));
            }
            return picks;
        }
        let plain = |c: (Rect, Orientation)| Pick {
            rect: c.0,
            orientation: c.1,
            square: None,
        };
        if let Some(in_side) = host_side {
            // On the fabric's edge, the input enters the region directly.
            let edge = edge_fit(problem, placed, rows, cols, &orientations, in_side, free);
            if let Some(c) = edge {
                return vec![plain(c)];
            }
        }
        let multi_part_feed = producer.is_some_and(|(p, _)| {
            let pplan = &problem.layers[p].plan;
            pplan.output_port().is_some_and(|out| {
                lines_on(pplan.ports[out].side, self.sizes[p].0, self.sizes[p].1) > 1
            })
        });
        if self.strict && multi_part_feed {
            return Vec::new();
        }
        // Away from its producers, the region must keep the PEs beside its fed sides out
        // of every region, and must not cover a producer's output strip: the streams'
        // routes start and end there, on the color of the producer's region.
        let fed_sides: Vec<Side> = plan
            .ports
            .iter()
            .filter(|p| match p.bind.as_ref().map(|b| b.tensor) {
                Some(BoundTensor::Arg(i)) => {
                    matches!(layer.args.get(i), Some(TensorRef::Layer(_)))
                }
                _ => false,
            })
            .map(|p| p.side)
            .collect();
        let producer_strips: Vec<Rect> = layer
            .args
            .iter()
            .filter_map(|a| match a {
                TensorRef::Layer(p) if *p < l => {
                    let (prect, porient) = placed[*p];
                    let pplan = &problem.layers[*p].plan;
                    let out = pplan.output_port()?;
                    strip(prect, porient.dir(pplan.ports[out].side))
                }
                _ => None,
            })
            .collect();
        let away = |rect: Rect, o: Orientation, placed: &[(Rect, Orientation)]| {
            free(rect, o, placed)
                && producer_strips.iter().all(|s| !overlaps(*s, rect))
                && fed_sides.iter().all(|&side| {
                    strip(rect, o.dir(side))
                        .is_none_or(|s| placed.iter().all(|(p, _)| !overlaps(*p, s)))
                })
        };
        first_fit(problem, placed, rows, cols, &orientations, away)
            .map(plain)
            .into_iter()
            .collect()
    }
}

/// How much of `rect`'s border lies against the fabric's edge or a placed region (one PE
/// apart counts): the PEs along those stretches.
fn contact(rect: Rect, placed: &[(Rect, Orientation)], target: &Target) -> u64 {
    let (w, h) = (u64::from(rect.width), u64::from(rect.height));
    let mut n = 0;
    n += if rect.x == 0 { h } else { 0 };
    n += if rect.y == 0 { w } else { 0 };
    n += if rect.x + rect.width >= target.width {
        h
    } else {
        0
    };
    n += if rect.y + rect.height >= target.height {
        w
    } else {
        0
    };
    n + placed.iter().map(|&(o, _)| touching(rect, o)).sum::<u64>()
}

/// The length along which `a` and `b` face each other across a gap of at most one PE.
fn touching(a: Rect, b: Rect) -> u64 {
    // The gap between two spans (0 when they meet or overlap) and their overlap.
    let gap = |a0: u32, a1: u32, b0: u32, b1: u32| b0.saturating_sub(a1).max(a0.saturating_sub(b1));
    let overlap =
        |a0: u32, a1: u32, b0: u32, b1: u32| u64::from(a1.min(b1).saturating_sub(a0.max(b0)));
    let (ax1, ay1, bx1, by1) = (a.x + a.width, a.y + a.height, b.x + b.width, b.y + b.height);
    let beside = gap(a.x, ax1, b.x, bx1) <= 1 && overlap(a.x, ax1, b.x, bx1) == 0;
    let above = gap(a.y, ay1, b.y, by1) <= 1 && overlap(a.y, ay1, b.y, by1) == 0;
    let mut n = 0;
    if beside {
        n += overlap(a.y, ay1, b.y, by1);
    }
    if above {
        n += overlap(a.x, ax1, b.x, bx1);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-derived: rectangles side by side, one PE apart, corner to corner, and far apart.
    #[test]
    fn touching_counts_the_facing_stretch() {
        let a = Rect::new(10, 10, 4, 6);
        assert_eq!(touching(a, Rect::new(14, 12, 3, 10)), 4); // east, rows 12–15
        assert_eq!(touching(a, Rect::new(15, 10, 3, 6)), 6); // east, one PE apart
        assert_eq!(touching(a, Rect::new(16, 10, 3, 6)), 0); // two apart
        assert_eq!(touching(a, Rect::new(8, 4, 4, 6)), 2); // north, columns 10–11
        assert_eq!(touching(a, Rect::new(14, 16, 2, 2)), 0); // corner to corner
    }

    #[test]
    fn contact_adds_the_fabric_edges() {
        let t = Target::dev();
        let (w, h) = (t.width, t.height);
        let corner = Rect::new(0, 0, 3, 2);
        assert_eq!(contact(corner, &[], &t), 3 + 2);
        let whole = Rect::new(0, 0, w, h);
        assert_eq!(contact(whole, &[], &t), 2 * u64::from(w + h));
        let beside = [(Rect::new(3, 0, 2, 5), Orientation::Identity)];
        assert_eq!(contact(corner, &beside, &t), 3 + 2 + 2);
    }
}

//! A layer's result read by several layers (`docs/mapping.md` §4, "Fan-out"). Every part of a
//! tensor travels on one color, so the parts' routes may not meet in a router; where a
//! consumer's input edge sits straight on from the producer's output edge, the parallel
//! parts cannot branch around it without crossing each other. Such a consumer **passes the
//! stream on**: the router at the far end of each of its input lines forwards the part out of
//! the region, straight on, as well as delivering it to its PE, and the routes to the other
//! readers start just past that end. A line can pass a stream on when the stream crosses the
//! whole region on one color: a multicast port, or a region one PE deep in that direction.
//! This module finds those consumers and the PEs just past their lines.

use wsel_target::{Coord, Dir, Rect};

use crate::ports::SlotOf;
use crate::search::{Choice, Problem};

/// A consumer that passes the stream on.
pub(crate) struct PassOn {
    /// Its index among the producer's consumers.
    pub consumer: usize,
    /// Per part, the PE just past the far end of the part's line in the consumer's region.
    pub beyond: Vec<Coord>,
}

/// The consumers (`(layer, port)` of producer `p`'s result, leaving its region toward
/// `dout` in `parts` parts) that pass the stream on, nearest first: those straight on from
/// the producer for every part whose lines can pass it on — all of them when other readers
/// (`others`: consumers elsewhere, or the model's result) remain, else all but the farthest.
pub(crate) fn passing_consumers(
    problem: &Problem<'_>,
    choice: &Choice,
    p: usize,
    consumers: &[(usize, usize)],
    dout: Dir,
    parts: u32,
    result_too: bool,
) -> Vec<PassOn> {
    if consumers.len() + usize::from(result_too) < 2 {
        return Vec::new();
    }
    let (producer, porient) = choice.regions[p];
    let mut in_line: Vec<(u32, PassOn)> = consumers
        .iter()
        .enumerate()
        .filter_map(|(k, &(l, q))| {
            let port = &problem.layers[l].plan.ports[q];
            let (rect, orientation) = choice.regions[l];
            let passable =
                port.multicast || (matches!(port.slot, SlotOf::Link(_)) && depth(rect, dout) == 1);
            if !passable || orientation.dir(port.side) != dout.opposite() {
                return None;
            }
            let mut distance = None;
            let mut beyond = Vec::with_capacity(parts as usize);
            for j in 0..parts {
                let sp = porient.part_pe(producer, dout, j);
                let cp = orientation.part_pe(rect, dout.opposite(), j);
                let d = straight_on(sp, dout, cp)?;
                if distance.is_some_and(|e| e != d) {
                    return None;
                }
                distance = Some(d);
                beyond.push(past_line(problem, rect, cp, dout)?);
            }
            Some((
                distance?,
                PassOn {
                    consumer: k,
                    beyond,
                },
            ))
        })
        .collect();
    in_line.sort_by_key(|(d, _)| *d);
    if in_line.len() == consumers.len() && !result_too {
        in_line.pop();
    }
    in_line.into_iter().map(|(_, pass)| pass).collect()
}

/// The region's extent in direction `d`.
fn depth(rect: Rect, d: Dir) -> u32 {
    match d {
        Dir::North | Dir::South => rect.height,
        Dir::West | Dir::East => rect.width,
    }
}

/// How many hops `to` lies straight on from `from` toward `d`, if it does.
fn straight_on(from: Coord, d: Dir, to: Coord) -> Option<u32> {
    match d {
        Dir::South if to.x == from.x && to.y > from.y => Some(to.y - from.y),
        Dir::North if to.x == from.x && to.y < from.y => Some(from.y - to.y),
        Dir::East if to.y == from.y && to.x > from.x => Some(to.x - from.x),
        Dir::West if to.y == from.y && to.x < from.x => Some(from.x - to.x),
        _ => None,
    }
}

/// The live PE just past the far end (toward `d`) of the line of `rect` that starts at `cp`,
/// reached over a live link.
fn past_line(problem: &Problem<'_>, rect: Rect, cp: Coord, d: Dir) -> Option<Coord> {
    let mut end = cp;
    for _ in 1..depth(rect, d) {
        end = problem.target.neighbor(end, d)?;
    }
    let beyond = problem.target.neighbor(end, d)?;
    (!problem.dead.pe_dead(beyond) && !problem.dead.link_dead(end, d)).then_some(beyond)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn straight_on_counts_hops_in_the_direction_only() {
        let a = Coord::new(3, 4);
        assert_eq!(straight_on(a, Dir::South, Coord::new(3, 6)), Some(2));
        assert_eq!(straight_on(a, Dir::North, Coord::new(3, 6)), None);
        assert_eq!(straight_on(a, Dir::East, Coord::new(5, 4)), Some(2));
        assert_eq!(straight_on(a, Dir::West, Coord::new(5, 4)), None);
        assert_eq!(straight_on(a, Dir::South, Coord::new(4, 6)), None);
    }
}

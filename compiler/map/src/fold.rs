//! The fold (`docs/mapping.md` §2): a consumer fed through a bundle of routes that turns.
//!
//! A layer's result leaves its region as `n` parts side by side, and the consumer must take
//! them in the same order, for routes of one color cannot cross. Placed straight on from the
//! producer, the chain can only turn the way its kernels turn it (a `dense` takes its parts on
//! one side and gives them on the next side round), so it runs as a staircase. Here the parts
//! turn instead, a quarter turn toward `T`, one inside the other in the `n × n` square beside
//! the producer's output edge: the part nearest `T` turns first. The bundle then reaches the
//! consumer's input edge, which faces back against `T`, in the reverse order along it, which
//! only a mirrored orientation takes. So the chain can fold back at the fabric's edges.

use wsel_target::{Coord, Dir, Rect, Target};

use crate::place::edge_pe;
use crate::placement::Orientation;

/// Where a consumer fed through a turning bundle lies: its rectangle and orientation, and the
/// square the bundle turns in, which no other region may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Turned {
    pub rect: Rect,
    pub orientation: Orientation,
    pub square: Rect,
}

/// The producer's output edge: its rectangle, orientation and physical side, and the parts
/// along it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OutEdge {
    pub rect: Rect,
    pub orientation: Orientation,
    pub dir: Dir,
    pub parts: u32,
}

impl OutEdge {
    /// The square just outside the edge where the parts turn (`None` off the fabric's
    /// coordinates).
    fn square(&self) -> Option<Rect> {
        let (p, n) = (self.rect, self.parts);
        Some(match self.dir {
            Dir::South => Rect::new(p.x, p.y + p.height, p.width, n),
            Dir::North => Rect::new(p.x, p.y.checked_sub(n)?, p.width, n),
            Dir::East => Rect::new(p.x + p.width, p.y, n, p.height),
            Dir::West => Rect::new(p.x.checked_sub(n)?, p.y, n, p.height),
        })
    }

    /// The PE where part `j`'s route, turned toward `turn`, enters the consumer's region
    /// whose input edge lies `gap` PEs past the square.
    fn entry(&self, j: u32, turn: Dir, gap: u32) -> Option<Coord> {
        let n = self.parts;
        let i = if self.orientation.reversed_along(self.dir) {
            n - 1 - j
        } else {
            j
        };
        // Parts run east along north/south edges, south along west/east ones: the part
        // nearest `turn` turns first, at depth 0 just outside the edge.
        let toward_higher = matches!(turn, Dir::East | Dir::South);
        let depth = if toward_higher { n - 1 - i } else { i };
        let start = edge_pe(self.rect, self.dir, i);
        let lane = shift(start, self.dir, depth + 1)?;
        let square = self.square()?;
        let past = match turn {
            Dir::East => square.x + square.width + gap,
            Dir::West => square.x.checked_sub(gap + 1)?,
            Dir::South => square.y + square.height + gap,
            Dir::North => square.y.checked_sub(gap + 1)?,
        };
        Some(match turn {
            Dir::East | Dir::West => Coord::new(past, lane.y),
            Dir::North | Dir::South => Coord::new(lane.x, past),
        })
    }
}

/// `c` moved `k` PEs toward `d` (`None` past the fabric's north or west edge).
fn shift(c: Coord, d: Dir, k: u32) -> Option<Coord> {
    Some(match d {
        Dir::North => Coord::new(c.x, c.y.checked_sub(k)?),
        Dir::South => Coord::new(c.x, c.y + k),
        Dir::East => Coord::new(c.x + k, c.y),
        Dir::West => Coord::new(c.x.checked_sub(k)?, c.y),
    })
}

/// The two ways a bundle leaving `rect` toward `out` may turn, the one with more room on the
/// fabric first.
pub(crate) fn turns(out: Dir, rect: Rect, target: &Target) -> [Dir; 2] {
    match out {
        Dir::North | Dir::South => {
            let east = target.width.saturating_sub(rect.x + rect.width);
            if east >= rect.x {
                [Dir::East, Dir::West]
            } else {
                [Dir::West, Dir::East]
            }
        }
        Dir::West | Dir::East => {
            let south = target.height.saturating_sub(rect.y + rect.height);
            if south >= rect.y {
                [Dir::South, Dir::North]
            } else {
                [Dir::North, Dir::South]
            }
        }
    }
}

/// The placements of a `rows × cols` consumer whose input side `in_side` takes the parts of
/// `edge` after they turn toward `turn` (perpendicular to the edge's side), its input edge
/// `gap` PEs past the square: one per orientation that takes the parts in their order.
pub(crate) fn turned(
    edge: OutEdge,
    turn: Dir,
    gap: u32,
    (rows, cols): (u32, u32),
    in_side: wsel_ir::graph::Side,
) -> Vec<Turned> {
    let Some(square) = edge.square() else {
        return Vec::new();
    };
    let (Some(first), Some(last)) = (
        edge.entry(0, turn, gap),
        edge.entry(edge.parts - 1, turn, gap),
    ) else {
        return Vec::new();
    };
    Orientation::ALL
        .into_iter()
        .filter(|o| o.dir(in_side) == turn.opposite())
        .filter_map(|o| {
            let (w, h) = o.extent(rows, cols);
            let (top, left) = (first.y.min(last.y), first.x.min(last.x));
            let rect = match turn {
                Dir::East => Rect::new(first.x, top, w, h),
                Dir::West => Rect::new((first.x + 1).checked_sub(w)?, top, w, h),
                Dir::South => Rect::new(left, first.y, w, h),
                Dir::North => Rect::new(left, (first.y + 1).checked_sub(h)?, w, h),
            };
            let takes = o.part_pe(rect, turn.opposite(), 0) == first
                && o.part_pe(rect, turn.opposite(), edge.parts - 1) == last;
            takes.then_some(Turned {
                rect,
                orientation: o,
                square,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wsel_ir::graph::Side;

    /// A 4-part edge on the south of a 4 × 3 region at (10, 5), turned east: the parts
    /// nest in the square below it (part 3, the easternmost, turns first) and reach a
    /// consumer east of the square whose west side takes them from the south up, so only an
    /// orientation mirrored north–south takes them (hand-derived).
    #[test]
    fn a_south_edge_turned_east_needs_a_mirror() {
        let edge = OutEdge {
            rect: Rect::new(10, 5, 4, 3),
            orientation: Orientation::Identity,
            dir: Dir::South,
            parts: 4,
        };
        assert_eq!(edge.entry(3, Dir::East, 0), Some(Coord::new(14, 8)));
        assert_eq!(edge.entry(0, Dir::East, 0), Some(Coord::new(14, 11)));
        let placed = turned(edge, Dir::East, 0, (4, 2), Side::West);
        assert_eq!(
            placed,
            vec![Turned {
                rect: Rect::new(14, 8, 2, 4),
                orientation: Orientation::MirrorY,
                square: Rect::new(10, 8, 4, 4),
            }]
        );
        // Part j enters the consumer's logical row j.
        let o = placed[0].orientation;
        for j in 0..4 {
            let at = edge.entry(j, Dir::East, 0).expect("on the fabric");
            assert_eq!(o.logical(placed[0].rect, at), Some((j, 0)));
        }
    }

    /// Turned west instead (one PE apart), the westernmost part turns first: the parts reach
    /// the consumer's east side in order from the north, which its logical west side takes
    /// when mirrored east–west.
    #[test]
    fn a_south_edge_turned_west() {
        let edge = OutEdge {
            rect: Rect::new(10, 5, 4, 3),
            orientation: Orientation::Identity,
            dir: Dir::South,
            parts: 4,
        };
        let placed = turned(edge, Dir::West, 1, (4, 2), Side::West);
        assert_eq!(placed.len(), 1);
        assert_eq!(placed[0].rect, Rect::new(7, 8, 2, 4));
        assert_eq!(placed[0].orientation, Orientation::MirrorX);
        for j in 0..4 {
            let at = edge.entry(j, Dir::West, 1).expect("on the fabric");
            assert_eq!(
                placed[0].orientation.logical(placed[0].rect, at),
                Some((j, 0))
            );
        }
    }

    /// The compass order, clockwise: a right turn is one step on.
    fn clockwise(d: Dir) -> u32 {
        match d {
            Dir::North => 0,
            Dir::East => 1,
            Dir::South => 2,
            Dir::West => 3,
        }
    }

    /// +1 for a right turn from heading `from` to heading `to`, −1 for a left one.
    fn turn(from: Dir, to: Dir) -> i32 {
        match (clockwise(to) + 4 - clockwise(from)) % 4 {
            1 => 1,
            3 => -1,
            _ => 0,
        }
    }

    /// The turn a `dense`-like region (input `west`, output `south`) in orientation `o` gives
    /// the chain: it enters heading away from its input side and leaves toward its output.
    fn region_turn(o: Orientation) -> i32 {
        turn(o.dir(Side::West).opposite(), o.dir(Side::South))
    }

    /// Why a chain of such regions is a staircase and its serpentine needs folds (the band
    /// layout tried in BENCHMARKS.md, session 29): a region turns the chain right when its
    /// orientation is a rotation and left when it is a reflection; a consumer straight on
    /// takes the producer's parts in order only with the other kind, so the turns alternate
    /// and the heading swings between two directions. A fold's consumer is again of the other
    /// kind, and the fold's own quarter turn moves the staircase onto the other diagonal.
    #[test]
    fn regions_turn_alternately_and_a_fold_adds_a_quarter_turn() {
        for o in Orientation::ALL {
            let (mx, my) = o.mirrors();
            let reflections = [o.transposed(), mx, my].iter().filter(|&&f| f).count();
            let expected = if reflections % 2 == 0 { 1 } else { -1 };
            assert_eq!(region_turn(o), expected, "{o:?}");
        }
        // Straight on from every producer: the consumer whose input faces the output edge
        // and keeps the parts' order (as `place::chain` picks it) turns the other way.
        for p in Orientation::ALL {
            let out = p.dir(Side::South);
            let straight: Vec<Orientation> = Orientation::ALL
                .into_iter()
                .filter(|c| {
                    c.dir(Side::West) == out.opposite()
                        && c.reversed_along(out) == p.reversed_along(out)
                })
                .collect();
            assert_eq!(straight.len(), 1, "{p:?}");
            assert_eq!(region_turn(straight[0]), -region_turn(p), "{p:?}");
        }
        // Folded: an identity producer leaving south (a right turn, entered heading east),
        // its bundle turned east or west; the consumer turns left either way.
        let edge = OutEdge {
            rect: Rect::new(10, 5, 4, 3),
            orientation: Orientation::Identity,
            dir: Dir::South,
            parts: 4,
        };
        for (fold, gap) in [(Dir::East, 0), (Dir::West, 1)] {
            let placed = turned(edge, fold, gap, (4, 2), Side::West);
            assert_eq!(placed.len(), 1);
            let c = placed[0].orientation;
            assert_eq!(region_turn(Orientation::Identity), 1);
            assert_eq!(region_turn(c), -1, "{fold:?}");
            // Headings east, south, then the fold's turn, then the consumer's: east and south
            // (a staircase toward the south-east) become east and north, or west and south.
            let after = c.dir(Side::South);
            let axis = match fold {
                Dir::East => (Dir::East, Dir::North),
                _ => (Dir::West, Dir::South),
            };
            assert_eq!((c.dir(Side::West).opposite(), after), axis, "{fold:?}");
        }
    }
}

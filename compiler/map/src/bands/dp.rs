//! The band planner's dynamic programme (`benches/plan96.py`'s `plan`, in Rust): for a stage
//! target `T`, the boustrophedon plan whose every stage is within `T` with the most PEs in
//! regions (plus a weight on the stages' sum), over states (heading, band height, chain head,
//! band top), all in units of [`UNIT`] PEs along and across the bands.
//!
//! Moves from a state `(heading, h, x, y)` of a band of height `h` whose rows start at `y`
//! and whose chain has reached `x`:
//! - a straight stage of `R = h`, length `c`: east to `x + c`, or west to `x − c` keeping
//!   room for the west end's fold square (`x − c ≥ h`);
//! - at the east end, a turning tile `h` high and `h′` long (its `C = h′` output parts, the
//!   next band's height) with the fold's `h′ × h′` square below it: the next band heads west
//!   from `x`, and must start with a straight;
//! - at the west end (after at least one straight), the fold's `h × h` square west of the
//!   chain and the tile `h` wide, `h′` high below it: the next band heads east from `x`.

use super::frame::{ARect, Frame};
use super::ways::StageWays;

/// The grid the planner works on, in PEs: every band height and stage length is a multiple.
pub(crate) const UNIT: u32 = 8;

/// How a stage lies in a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The twin graph's straight layer: `R = rows` across the band, `C = cols` along it.
    Straight,
    /// The main graph's turning layer: `R = rows` parts in, `C = cols` parts out.
    Tile,
}

/// Where a fold's square is, relative to the stage that lies beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fold {
    None,
    /// The stage's result turns in the square (a tile at a band's east end).
    After,
    /// The stage's input turns in the square (a tile at a band's west end).
    Before,
}

/// One stage of a plan, in units.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Step {
    pub kind: Kind,
    /// Logical rows and columns, in units.
    pub rows: u32,
    pub cols: u32,
    /// The stage's estimate, cycles per sample.
    pub cycles: u64,
    pub rect: ARect,
    pub square: Option<ARect>,
    pub fold: Fold,
}

const EAST: usize = 0;
/// Heading west, no straight laid yet in the band.
const WEST_FRESH: usize = 1;
const WEST: usize = 2;

/// A state reached after a stage: its index, its score, the entry it came from in the
/// previous stage's list and the move (`kind`, the straight's length or the tile's height
/// index).
#[derive(Clone, Copy)]
struct Entry {
    state: u32,
    prev: u32,
    score: i64,
    tile: bool,
    arg: u32,
}

/// The states of a plan: `(heading, height index, x, y)` packed into one index.
struct States {
    heights: usize,
    xs: usize,
    ys: usize,
}

impl States {
    fn index(&self, heading: usize, hi: usize, x: u32, y: u32) -> usize {
        ((heading * self.heights + hi) * self.xs + x as usize) * self.ys + y as usize
    }

    fn unpack(&self, i: usize) -> (usize, usize, u32, u32) {
        let y = i % self.ys;
        let x = (i / self.ys) % self.xs;
        let hi = (i / self.ys / self.xs) % self.heights;
        (i / self.ys / self.xs / self.heights, hi, x as u32, y as u32)
    }

    fn count(&self) -> usize {
        3 * self.heights * self.xs * self.ys
    }
}

/// The inputs of one run of the programme.
#[derive(Clone, Copy)]
pub(crate) struct Plan<'a> {
    pub ways: &'a [StageWays],
    /// Band heights in units, ascending.
    pub heights: &'a [u32],
    pub frame: &'a Frame,
    /// PEs a cycle of the stages' sum weighs against (0: the fullest plan).
    pub weight: i64,
    /// Whether a rectangle of the frame is free of dead PEs (`None`: the fabric has none).
    pub clean: Option<&'a dyn Fn(ARect) -> bool>,
}

#[cfg(test)]
impl<'a> Plan<'a> {
    /// The programme of weight 0 over `ways` on `frame` without dead PEs, for tests.
    pub(crate) fn fullest(ways: &'a [StageWays], heights: &'a [u32], frame: &'a Frame) -> Self {
        Plan {
            ways,
            heights,
            frame,
            weight: 0,
            clean: None,
        }
    }
}

impl Plan<'_> {
    /// The best plan with every stage within `t` cycles, first stage first; `None` when none
    /// exists.
    pub(crate) fn solve(&self, t: u64) -> Option<Vec<Step>> {
        let states = States {
            heights: self.heights.len(),
            xs: self.frame.length as usize + 1,
            ys: self.frame.stack as usize + 1,
        };
        let mut slot = vec![u32::MAX; states.count()];
        let mut layers: Vec<Vec<Entry>> = Vec::with_capacity(self.ways.len());
        let mut current: Vec<Entry> = (0..self.heights.len())
            .filter(|&hi| self.heights[hi] <= self.frame.stack)
            .map(|hi| Entry {
                state: states.index(EAST, hi, 0, 0) as u32,
                prev: u32::MAX,
                score: 0,
                tile: false,
                arg: 0,
            })
            .collect();
        for ways in self.ways {
            let mut next: Vec<Entry> = Vec::new();
            for (pi, e) in current.iter().enumerate() {
                self.moves(
                    &states,
                    e.state as usize,
                    ways,
                    t,
                    &mut |state, gain, tile, arg| {
                        let entry = Entry {
                            state: state as u32,
                            prev: pi as u32,
                            score: e.score + gain,
                            tile,
                            arg,
                        };
                        match slot[state] {
                            u32::MAX => {
                                slot[state] = next.len() as u32;
                                next.push(entry);
                            }
                            j if next[j as usize].score < entry.score => next[j as usize] = entry,
                            _ => {}
                        }
                    },
                );
            }
            for e in &next {
                slot[e.state as usize] = u32::MAX;
            }
            if next.is_empty() {
                return None;
            }
            layers.push(std::mem::replace(&mut current, next));
        }
        let best = (0..current.len()).max_by_key(|&i| (current[i].score, std::cmp::Reverse(i)))?;
        layers.push(current);
        Some(self.walk(&states, &layers, best))
    }

    /// Every move from `state` for a stage with `ways` within `t`: `put(next state, score
    /// gained, is a tile, the straight's length or the tile's height index)`.
    fn moves(
        &self,
        states: &States,
        state: usize,
        ways: &StageWays,
        t: u64,
        put: &mut dyn FnMut(usize, i64, bool, u32),
    ) {
        let (heading, hi, x, y) = states.unpack(state);
        let h = self.heights[hi];
        for &(c, cycles) in ways.straights[hi].iter().filter(|s| s.1 <= t) {
            let gain = self.gain(h * c, cycles);
            if heading == EAST && x + c <= self.frame.length {
                if self.free(ARect::new(x, y, c, h)) {
                    put(states.index(EAST, hi, x + c, y), gain, false, c);
                }
            } else if heading != EAST && x >= c + h && self.free(ARect::new(x - c, y, c, h)) {
                put(states.index(WEST, hi, x - c, y), gain, false, c);
            }
        }
        if heading == WEST_FRESH {
            return;
        }
        for (h2i, &h2) in self.heights.iter().enumerate() {
            let Some(cycles) = ways.tiles[hi][h2i].filter(|&c| c <= t) else {
                continue;
            };
            if y + h + h2 > self.frame.stack {
                continue;
            }
            let gain = self.gain(h * h2, cycles);
            let next = |heading| states.index(heading, h2i, x, y + h);
            if heading == EAST && x + h2 <= self.frame.length {
                let (tile, square) = east_end(x, y, h, h2);
                if self.free(tile) && self.free(square) {
                    put(next(WEST_FRESH), gain, true, h2i as u32);
                }
            } else if heading == WEST && x >= h {
                let (square, tile) = west_end(x, y, h, h2);
                if self.free(tile) && self.free(square) {
                    put(next(EAST), gain, true, h2i as u32);
                }
            }
        }
    }

    fn free(&self, r: ARect) -> bool {
        self.clean.is_none_or(|clean| clean(r))
    }

    /// The score of a region of `units` square units and `cycles` per sample.
    fn gain(&self, units: u32, cycles: u64) -> i64 {
        i64::from(units * UNIT * UNIT) + self.weight * cycles as i64
    }

    /// The steps of the plan ending at entry `best` of the last list, first stage first.
    fn walk(&self, states: &States, layers: &[Vec<Entry>], best: usize) -> Vec<Step> {
        let mut steps = Vec::with_capacity(self.ways.len());
        let mut at = best;
        for l in (0..self.ways.len()).rev() {
            let e = layers[l + 1][at];
            let before = layers[l][e.prev as usize].state as usize;
            steps.push(self.step(states.unpack(before), l, e));
            at = e.prev as usize;
        }
        steps.reverse();
        steps
    }

    /// The step that moved from state `(heading, hi, x, y)` by `e`'s move at stage `l`.
    fn step(&self, (heading, hi, x, y): (usize, usize, u32, u32), l: usize, e: Entry) -> Step {
        let h = self.heights[hi];
        let ways = &self.ways[l];
        if !e.tile {
            let c = e.arg;
            let rect = ARect::new(if heading == EAST { x } else { x - c }, y, c, h);
            let cycles = ways.straights[hi]
                .iter()
                .find(|s| s.0 == c)
                .map_or(0, |s| s.1);
            return Step {
                kind: Kind::Straight,
                rows: h,
                cols: c,
                cycles,
                rect,
                square: None,
                fold: Fold::None,
            };
        }
        let h2i = e.arg as usize;
        let h2 = self.heights[h2i];
        let (rect, square, fold) = if heading == EAST {
            let (tile, square) = east_end(x, y, h, h2);
            (tile, square, Fold::After)
        } else {
            let (square, tile) = west_end(x, y, h, h2);
            (tile, square, Fold::Before)
        };
        Step {
            kind: Kind::Tile,
            rows: h,
            cols: h2,
            cycles: ways.tiles[hi][h2i].unwrap_or(0),
            rect,
            square: Some(square),
            fold,
        }
    }
}

/// A band's east end at `x`: the tile `h2` long in the band of height `h` at `y`, and the
/// fold's square below it.
fn east_end(x: u32, y: u32, h: u32, h2: u32) -> (ARect, ARect) {
    (ARect::new(x, y, h2, h), ARect::new(x, y + h, h2, h2))
}

/// A band's west end at `x`: the fold's square west of the chain, and the tile `h` wide and
/// `h2` high below it.
fn west_end(x: u32, y: u32, h: u32, h2: u32) -> (ARect, ARect) {
    (ARect::new(x - h, y, h, h), ARect::new(x - h, y + h, h, h2))
}

/// A plan's bottleneck estimate and PEs in regions, the way plans are ranked (the lower
/// bottleneck, then the more PEs).
pub(crate) fn rank(steps: &[Step]) -> (u64, std::cmp::Reverse<u64>) {
    let bottleneck = steps.iter().map(|s| s.cycles).max().unwrap_or(0);
    let units: u64 = steps.iter().map(|s| u64::from(s.rows * s.cols)).sum();
    (
        bottleneck,
        std::cmp::Reverse(units * u64::from(UNIT * UNIT)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overlap(a: ARect, b: ARect) -> bool {
        a.x < b.x + b.length && b.x < a.x + a.length && a.y < b.y + b.depth && b.y < a.y + a.depth
    }

    fn touch(a: ARect, b: ARect) -> bool {
        let along = a.x < b.x + b.length && b.x < a.x + a.length;
        let across = a.y < b.y + b.depth && b.y < a.y + a.depth;
        (across && (a.x + a.length == b.x || b.x + b.length == a.x))
            || (along && (a.y + a.depth == b.y || b.y + b.depth == a.y))
    }

    /// Twelve stages of made-up ways (straights 2–6 units long, every tile allowed) on a
    /// frame 20 units long and 12 across: the fullest plan turns, and its regions and fold
    /// squares lie inside the frame and apart, each stage beside the one before or past a
    /// square both touch (plan96.py's `check_geometry`).
    #[test]
    fn a_plan_lies_in_the_frame_without_overlaps() {
        let heights = [2, 4];
        let ways: Vec<StageWays> = (0..12)
            .map(|_| StageWays {
                straights: vec![vec![(2, 9), (4, 7), (6, 5)]; 2],
                tiles: vec![vec![Some(6); 2]; 2],
            })
            .collect();
        let frame = Frame::rows(20, 12);
        let plan = Plan::fullest(&ways, &heights, &frame);
        assert!(plan.solve(4).is_none(), "no way is within 4 cycles");
        let steps = plan.solve(9).expect("a plan");
        assert!(steps.iter().filter(|s| s.kind == Kind::Tile).count() >= 2);
        let mut taken: Vec<ARect> = Vec::new();
        for s in &steps {
            for r in std::iter::once(s.rect).chain(s.square) {
                assert!(r.x + r.length <= frame.length && r.y + r.depth <= frame.stack);
                assert!(taken.iter().all(|&t| !overlap(t, r)), "{r:?} in {steps:?}");
                taken.push(r);
            }
        }
        for w in steps.windows(2) {
            let square = match (w[0].fold, w[1].fold) {
                (Fold::After, _) => w[0].square,
                (_, Fold::Before) => w[1].square,
                _ => None,
            };
            let joined = match square {
                Some(q) => touch(w[0].rect, q) && touch(q, w[1].rect),
                None => touch(w[0].rect, w[1].rect),
            };
            assert!(joined, "{:?} then {:?}", w[0], w[1]);
        }
        // The fullest plan: every stage as large as the target allows where it fits.
        let units: u32 = steps.iter().map(|s| s.rows * s.cols).sum();
        assert!(units > 12 * 2 * 2, "{units}");
    }
}

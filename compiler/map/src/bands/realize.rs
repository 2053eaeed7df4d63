//! A band plan on the fabric: each stage's rectangle and orientation, found the way the
//! placer finds them (`place::beside` straight on from the producer's output edge, aligned
//! part for part; `fold::turned` where the producer's bundle turns in a fold's square), and
//! held to the plan: every stage must land exactly on the plan's rectangle and every fold's
//! square on the plan's square, or the plan is dropped. So the plan's geometry (regions
//! inside the fabric, disjoint, squares free) and the mapper's routes agree by construction.

use wsel_ir::graph::Side;
use wsel_target::{Dir, Rect};

use super::dp::{Fold, Kind, Step, UNIT};
use super::frame::Frame;
use crate::fold::{OutEdge, turned};
use crate::placement::Orientation;
use crate::ports::lines_on;

/// The physical regions of `steps` in `frame`, first stage first; `None` when no
/// orientation of the first stage makes every later one land where the plan has it.
pub(crate) fn realize(steps: &[Step], frame: &Frame) -> Option<Vec<(Rect, Orientation)>> {
    let first = steps.first()?;
    Orientation::ALL.into_iter().find_map(|o| {
        let rect = frame.physical(first.rect);
        let (rows, cols) = logical(first);
        let lands = o.extent(rows, cols) == (rect.width, rect.height)
            && o.dir(Side::West) == frame.east().opposite();
        lands.then(|| follow(steps, frame, (rect, o))).flatten()
    })
}

/// The chain from the first stage's `start`, each later stage placed from its producer.
fn follow(
    steps: &[Step],
    frame: &Frame,
    start: (Rect, Orientation),
) -> Option<Vec<(Rect, Orientation)>> {
    let mut placed = vec![start];
    for pair in steps.windows(2) {
        let (producer, step) = (pair[0], pair[1]);
        let &(prect, porient) = placed.last()?;
        let out_side = match producer.kind {
            Kind::Straight => Side::East,
            Kind::Tile => Side::South,
        };
        let (prows, pcols) = logical(&producer);
        let edge = OutEdge {
            rect: prect,
            orientation: porient,
            dir: porient.dir(out_side),
            parts: lines_on(out_side, prows, pcols),
        };
        let want = frame.physical(step.rect);
        let next = match (producer.fold, step.fold) {
            (Fold::After, _) => {
                folded(edge, frame.east().opposite(), &step, producer.square, frame)?
            }
            (_, Fold::Before) => folded(edge, frame.south(), &step, step.square, frame)?,
            _ => straight_on(edge, &step)?,
        };
        if next.0 != want {
            return None;
        }
        placed.push(next);
    }
    Some(placed)
}

/// The consumer straight on from `edge`: input facing it, the parts in the producer's order.
fn straight_on(edge: OutEdge, step: &Step) -> Option<(Rect, Orientation)> {
    let (rows, cols) = logical(step);
    let reversed = edge.orientation.reversed_along(edge.dir);
    let o = Orientation::ALL.into_iter().find(|o| {
        o.dir(Side::West) == edge.dir.opposite() && o.reversed_along(edge.dir) == reversed
    })?;
    let (w, h) = o.extent(rows, cols);
    Some((crate::place::beside(edge.rect, edge.dir, w, h, 0)?, o))
}

/// The consumer of `edge`'s bundle turned toward `turn` in the plan's `square`.
fn folded(
    edge: OutEdge,
    turn: Dir,
    step: &Step,
    square: Option<super::frame::ARect>,
    frame: &Frame,
) -> Option<(Rect, Orientation)> {
    let square = frame.physical(square?);
    let rect = frame.physical(step.rect);
    turned(edge, turn, 0, logical(step), Side::West)
        .into_iter()
        .find(|t| t.rect == rect && t.square == square)
        .map(|t| (t.rect, t.orientation))
}

/// A step's logical rows and columns, in PEs.
fn logical(step: &Step) -> (u32, u32) {
    (step.rows * UNIT, step.cols * UNIT)
}

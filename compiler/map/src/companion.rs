//! A second program placed on the regions of the one being mapped (`docs/mapping.md` §4,
//! "Training's forks"): pipelined training's backward graph, whose layers run on the forward
//! layers' regions — and a residual block's sum of its two gradients at the block's fork, on
//! the free line of PEs between the layer whose result forks and the branch's first layer.
//! Its routes depend on the forward's regions, so a forward choice is complete only when the
//! backward's routes exist and take colors too; when they do not, the forward layers whose
//! regions the failing backward layers use are blamed, and the search tries other sizes.

use std::cell::RefCell;

use wsel_ir::graph::{LayerGraph, Side};
use wsel_target::{Dir, Rect, Target};

use crate::place::overlaps;
use crate::placement::Orientation;
use crate::search::{self, Choice, Incomplete, Problem};
use crate::{MapOptions, Mode, colors, routes};

/// Where a layer of the second program runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seat {
    /// On the region of this layer of the mapped program.
    On(usize),
    /// On the line of PEs between the region of layer `from` and that of layer `to`, which
    /// lies straight on from it a gap away (a fork: `from`'s result feeds `to` and others),
    /// one PE deep, beside `to`'s edge and its input side facing it; on `otherwise`'s region
    /// when there is no such free line.
    Fork {
        from: usize,
        to: usize,
        otherwise: usize,
    },
}

/// A program that runs on the regions of the one mapped.
#[derive(Debug, Clone, Copy)]
pub struct Companion<'a> {
    pub graph: &'a LayerGraph,
    /// Where each layer of `graph` runs.
    pub seats: &'a [Seat],
}

/// The rectangle and orientation of every seat, given the mapped program's `regions`.
pub fn seat_regions(
    seats: &[Seat],
    regions: &[(Rect, Orientation)],
) -> Option<Vec<(Rect, Orientation)>> {
    seats
        .iter()
        .map(|seat| match *seat {
            Seat::On(l) => regions.get(l).copied(),
            Seat::Fork {
                from,
                to,
                otherwise,
            } => {
                let line = fork_line(*regions.get(from)?, *regions.get(to)?, regions);
                line.or_else(|| regions.get(otherwise).copied())
            }
        })
        .collect()
}

/// The free line of PEs beside `from`'s edge that faces `to` across a gap, oriented so that
/// its logical south faces `to` and its parts lie straight on from `to`'s parts in their
/// order.
fn fork_line(
    from: (Rect, Orientation),
    to: (Rect, Orientation),
    regions: &[(Rect, Orientation)],
) -> Option<(Rect, Orientation)> {
    let (p, (f, fo)) = (from.0, to);
    let (toward, line) = if f.y > p.y + p.height {
        (Dir::South, Rect::new(f.x, p.y + p.height, f.width, 1))
    } else if f.y + f.height < p.y {
        (Dir::North, Rect::new(f.x, p.y - 1, f.width, 1))
    } else if f.x > p.x + p.width {
        (Dir::East, Rect::new(p.x + p.width, f.y, 1, f.height))
    } else if f.x + f.width < p.x {
        (Dir::West, Rect::new(p.x - 1, f.y, 1, f.height))
    } else {
        return None;
    };
    if regions.iter().any(|(r, _)| overlaps(*r, line)) {
        return None;
    }
    let len = match toward {
        Dir::North | Dir::South => line.width,
        Dir::West | Dir::East => line.height,
    };
    Orientation::ALL.into_iter().find_map(|o| {
        let straight = (0..len).all(|j| {
            let a = o.part_pe(line, toward, j);
            let b = fo.part_pe(f, toward.opposite(), j);
            match toward {
                Dir::North | Dir::South => a.x == b.x,
                Dir::West | Dir::East => a.y == b.y,
            }
        });
        (o.dir(Side::South) == toward && straight).then_some((line, o))
    })
}

/// `Ok` when `companion`, on its seats given `choice`'s regions, routes and takes colors; else
/// its diagnostics, blaming the mapped program's layers whose regions its failing layers take.
pub(crate) fn check(
    companion: &Companion<'_>,
    target: &Target,
    mode: Mode,
    choice: &Choice,
) -> Result<(), Incomplete> {
    let Some(regions) = seat_regions(companion.seats, &choice.regions) else {
        return Ok(());
    };
    let options = MapOptions {
        regions: Some(&regions),
        ..MapOptions::default()
    };
    let mut diagnostics = Vec::new();
    let built = Problem::build(
        companion.graph,
        target,
        mode,
        &options,
        None,
        &mut diagnostics,
    );
    let Some(problem) = built else {
        // A layer that fits no region (its SRAM, its sizes) is named at its call.
        let failing = companion
            .graph
            .layers
            .iter()
            .enumerate()
            .filter(|(_, layer)| {
                diagnostics.iter().any(|d| {
                    let at = &d.primary.location;
                    at.file == layer.call.file && at.span == layer.call.span
                })
            });
        let blamed = failing.map(|(k, _)| k).collect();
        let sized = incomplete(companion, diagnostics, blamed);
        return Err(Incomplete {
            sized: true,
            ..sized
        });
    };
    let blamed = RefCell::new(Vec::new());
    let found = search::choose(&problem, &mut diagnostics, |pinned| {
        complete(&problem, pinned).inspect_err(|inc| {
            blamed.borrow_mut().extend(inc.layers.iter().copied());
        })
    });
    match found {
        Some(_) => Ok(()),
        None => Err(incomplete(companion, diagnostics, blamed.into_inner())),
    }
}

/// The failure of `companion`'s layers `blamed`, blaming the mapped program's layers whose
/// regions they take.
fn incomplete(
    companion: &Companion<'_>,
    diagnostics: Vec<wsel_diagnostic::Diagnostic>,
    blamed: Vec<usize>,
) -> Incomplete {
    let layers = blamed
        .into_iter()
        .filter_map(|k| match companion.seats.get(k)? {
            Seat::On(l) | Seat::Fork { to: l, .. } => Some(*l),
        })
        .collect();
    Incomplete {
        diagnostics,
        layers,
        sized: false,
    }
}

/// Routes and colors of `problem` on the `pinned` choice.
fn complete(problem: &Problem<'_>, pinned: &Choice) -> Result<(), Incomplete> {
    let mut diagnostics = Vec::new();
    let mut layers = Vec::new();
    let routed = routes::route_all(problem, pinned, &mut diagnostics, &mut layers);
    let colored = routed
        .and_then(|routed| colors::assign(problem, pinned, &routed, &mut diagnostics, &mut layers));
    match colored {
        Some(_) => Ok(()),
        None => Err(Incomplete {
            diagnostics,
            layers,
            sized: false,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line beside the producer, facing the consumer across the gap, its parts straight
    /// on from the consumer's: south of a row, east of a column (hand-placed regions).
    #[test]
    fn a_fork_line_lies_beside_the_producer_facing_the_consumer() {
        let row = |y| (Rect::new(2, y, 3, 1), Orientation::Identity);
        let (line, o) = fork_line(row(0), row(4), &[row(0), row(4)]).expect("a line");
        assert_eq!(line, Rect::new(2, 1, 3, 1));
        assert_eq!(o.dir(Side::South), Dir::South);
        assert_eq!(o.part_pe(line, Dir::South, 0).x, 2);

        let column = |x| (Rect::new(x, 1, 1, 3), Orientation::Transposed);
        let (line, o) = fork_line(column(0), column(3), &[]).expect("a line");
        assert_eq!(line, Rect::new(1, 1, 1, 3));
        assert_eq!(o.dir(Side::South), Dir::East);
        let f = column(3);
        for j in 0..3 {
            assert_eq!(
                o.part_pe(line, Dir::East, j).y,
                f.1.part_pe(f.0, Dir::West, j).y
            );
        }
    }

    /// No line: the regions touch, or another region takes it.
    #[test]
    fn no_fork_line_without_a_free_gap() {
        let row = |y| (Rect::new(2, y, 3, 1), Orientation::Identity);
        assert!(fork_line(row(0), row(1), &[]).is_none());
        let other = (Rect::new(4, 1, 1, 1), Orientation::Identity);
        assert!(fork_line(row(0), row(3), &[other]).is_none());
        let seats = [Seat::Fork {
            from: 0,
            to: 1,
            otherwise: 2,
        }];
        let regions = [row(0), row(1), row(5)];
        assert_eq!(seat_regions(&seats, &regions), Some(vec![row(5)]));
    }
}

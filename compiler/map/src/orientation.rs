//! [`Orientation`]: how a region's logical rows, columns and sides lie on the fabric.

use serde::{Deserialize, Serialize};
use wsel_ir::graph::Side;
use wsel_target::{Coord, Dir, Rect};

/// How a region's logical coordinates lie on the fabric: transposed or not, then mirrored
/// along either physical axis or both (the eight symmetries of a rectangle).
///
/// A mirror reverses the order of the parts along the sides it crosses: a region mirrored
/// east–west takes the parts of a `north`/`south` port from its east end. That is what lets a
/// chain of layers fold back (`docs/mapping.md` §2): a bundle of routes that turns between two
/// regions reverses its parts' order, and only a mirrored consumer takes them in that order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Orientation {
    /// Logical row `r`, column `c` is the PE at `(rect.x + c, rect.y + r)`; sides as written.
    Identity,
    /// Logical row `r`, column `c` is the PE at `(rect.x + r, rect.y + c)`: rows run along
    /// physical columns, and the sides map `north ↔ west`, `south ↔ east`.
    Transposed,
    /// Identity, then mirrored east–west: physical x counts from the east side.
    MirrorX,
    /// Identity, then mirrored north–south: physical y counts from the south side.
    MirrorY,
    /// Identity, mirrored along both axes (turned by 180°).
    MirrorXY,
    /// Transposed, then mirrored east–west.
    TransposedMirrorX,
    /// Transposed, then mirrored north–south.
    TransposedMirrorY,
    /// Transposed, mirrored along both axes.
    TransposedMirrorXY,
}

impl Orientation {
    /// All eight, the two unmirrored ones first.
    pub const ALL: [Orientation; 8] = [
        Orientation::Identity,
        Orientation::Transposed,
        Orientation::MirrorX,
        Orientation::MirrorY,
        Orientation::MirrorXY,
        Orientation::TransposedMirrorX,
        Orientation::TransposedMirrorY,
        Orientation::TransposedMirrorXY,
    ];

    /// Whether logical rows run along physical columns.
    pub fn transposed(self) -> bool {
        matches!(
            self,
            Orientation::Transposed
                | Orientation::TransposedMirrorX
                | Orientation::TransposedMirrorY
                | Orientation::TransposedMirrorXY
        )
    }

    /// Whether the region is mirrored east–west and north–south (after any transposition).
    pub fn mirrors(self) -> (bool, bool) {
        match self {
            Orientation::Identity | Orientation::Transposed => (false, false),
            Orientation::MirrorX | Orientation::TransposedMirrorX => (true, false),
            Orientation::MirrorY | Orientation::TransposedMirrorY => (false, true),
            Orientation::MirrorXY | Orientation::TransposedMirrorXY => (true, true),
        }
    }

    /// A short mark for tables: `T` transposed, `X`/`Y` mirrored along that axis; empty for
    /// identity.
    pub fn mark(self) -> String {
        let (mx, my) = self.mirrors();
        let mut s = String::new();
        for (on, c) in [(self.transposed(), 'T'), (mx, 'X'), (my, 'Y')] {
            if on {
                s.push(c);
            }
        }
        s
    }

    /// How the region lies, in words after a comma (`, transposed, mirrored east–west`);
    /// empty for identity.
    pub fn described(self) -> String {
        let (mx, my) = self.mirrors();
        [
            (self.transposed(), ", transposed"),
            (mx, ", mirrored east–west"),
            (my, ", mirrored north–south"),
        ]
        .into_iter()
        .filter(|(on, _)| *on)
        .map(|(_, w)| w)
        .collect()
    }

    /// The physical direction of a logical side.
    pub fn dir(self, side: Side) -> Dir {
        let unmirrored = match (self.transposed(), side) {
            (false, Side::North) | (true, Side::West) => Dir::North,
            (false, Side::South) | (true, Side::East) => Dir::South,
            (false, Side::East) | (true, Side::South) => Dir::East,
            (false, Side::West) | (true, Side::North) => Dir::West,
        };
        let (mx, my) = self.mirrors();
        match unmirrored {
            Dir::East | Dir::West if mx => unmirrored.opposite(),
            Dir::North | Dir::South if my => unmirrored.opposite(),
            d => d,
        }
    }

    /// Whether the parts along the physical side `d` run against the usual order (west to
    /// east along north and south sides, north to south along west and east sides).
    pub fn reversed_along(self, d: Dir) -> bool {
        let (mx, my) = self.mirrors();
        match d {
            Dir::North | Dir::South => mx,
            Dir::West | Dir::East => my,
        }
    }

    /// The PE of logical `(row, col)` in a region placed at `rect`.
    pub fn pe(self, rect: Rect, row: u32, col: u32) -> Coord {
        let (dx, dy) = if self.transposed() {
            (row, col)
        } else {
            (col, row)
        };
        let (mx, my) = self.mirrors();
        let dx = if mx { rect.width - 1 - dx } else { dx };
        let dy = if my { rect.height - 1 - dy } else { dy };
        Coord::new(rect.x + dx, rect.y + dy)
    }

    /// The logical `(row, col)` of PE `at`, if it lies in `rect`.
    pub fn logical(self, rect: Rect, at: Coord) -> Option<(u32, u32)> {
        if !rect.contains(at) {
            return None;
        }
        let (mx, my) = self.mirrors();
        let dx = at.x - rect.x;
        let dy = at.y - rect.y;
        let dx = if mx { rect.width - 1 - dx } else { dx };
        let dy = if my { rect.height - 1 - dy } else { dy };
        Some(if self.transposed() {
            (dx, dy)
        } else {
            (dy, dx)
        })
    }

    /// The physical `(width, height)` of a `rows × cols` region.
    pub fn extent(self, rows: u32, cols: u32) -> (u32, u32) {
        if self.transposed() {
            (rows, cols)
        } else {
            (cols, rows)
        }
    }

    /// The PE of part `j` on the region's physical side `d` (the part of logical row or
    /// column `j` along that side).
    pub fn part_pe(self, rect: Rect, d: Dir, j: u32) -> Coord {
        let len = match d {
            Dir::North | Dir::South => rect.width,
            Dir::West | Dir::East => rect.height,
        };
        let i = if self.reversed_along(d) {
            len - 1 - j
        } else {
            j
        };
        crate::place::edge_pe(rect, d, i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIDES: [Side; 4] = [Side::North, Side::South, Side::East, Side::West];

    /// Every orientation is one-to-one on a 3 × 5 region, and its mirror flags undo.
    #[test]
    fn logical_undoes_pe() {
        for o in Orientation::ALL {
            let (w, h) = o.extent(3, 5);
            let rect = Rect::new(4, 7, w, h);
            let mut seen = std::collections::BTreeSet::new();
            for row in 0..3 {
                for col in 0..5 {
                    let at = o.pe(rect, row, col);
                    assert!(rect.contains(at), "{o:?}");
                    assert_eq!(o.logical(rect, at), Some((row, col)), "{o:?}");
                    seen.insert(at);
                }
            }
            assert_eq!(seen.len(), 15, "{o:?}");
        }
    }

    /// Part `j` of a logical side is the PE of logical row (or column) `j` on that side, and
    /// that PE lies on the physical side the orientation gives.
    #[test]
    fn parts_follow_logical_rows_and_columns() {
        let (rows, cols) = (3, 5);
        for o in Orientation::ALL {
            let (w, h) = o.extent(rows, cols);
            let rect = Rect::new(2, 1, w, h);
            for side in SIDES {
                let d = o.dir(side);
                let lines = match side {
                    Side::West | Side::East => rows,
                    Side::North | Side::South => cols,
                };
                for j in 0..lines {
                    let (row, col) = match side {
                        Side::West => (j, 0),
                        Side::East => (j, cols - 1),
                        Side::North => (0, j),
                        Side::South => (rows - 1, j),
                    };
                    let at = o.pe(rect, row, col);
                    assert_eq!(o.part_pe(rect, d, j), at, "{o:?} {side:?} part {j}");
                    let on_side = match d {
                        Dir::North => at.y == rect.y,
                        Dir::South => at.y == rect.y + rect.height - 1,
                        Dir::West => at.x == rect.x,
                        Dir::East => at.x == rect.x + rect.width - 1,
                    };
                    assert!(on_side, "{o:?} {side:?} faces {d:?}");
                }
            }
        }
    }

    /// Hand-derived: mirrored north–south, logical row 0 is the physical south row, so the
    /// west side's parts run from the south up; transposed and mirrored east–west, logical
    /// north faces east.
    #[test]
    fn mirrors_by_hand() {
        let rect = Rect::new(10, 20, 2, 4);
        let o = Orientation::MirrorY;
        assert_eq!(o.pe(rect, 0, 0), Coord::new(10, 23));
        assert_eq!(o.dir(Side::South), Dir::North);
        assert_eq!(o.part_pe(rect, Dir::West, 0), Coord::new(10, 23));
        assert_eq!(o.mark(), "Y");
        let t = Orientation::TransposedMirrorX;
        assert_eq!(t.dir(Side::North), Dir::East);
        assert_eq!(t.dir(Side::East), Dir::South);
        assert_eq!(t.described(), ", transposed, mirrored east–west");
    }
}

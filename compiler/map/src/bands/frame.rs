//! The band planner's frame: rectangles in units of [`UNIT`] PEs, `x` along the bands and
//! `y` across them (bands stacked southward in the frame), and their place on the fabric —
//! bands along its rows (`x` east, `y` south) or along its columns (`x` south, `y` east, a
//! transpose).

use wsel_target::{Dir, Rect, Target};

use super::dp::UNIT;

/// A rectangle of the frame, in units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ARect {
    pub x: u32,
    pub y: u32,
    /// Along the bands.
    pub length: u32,
    /// Across them.
    pub depth: u32,
}

impl ARect {
    pub(crate) fn new(x: u32, y: u32, length: u32, depth: u32) -> ARect {
        ARect {
            x,
            y,
            length,
            depth,
        }
    }
}

/// Bands along one side of the fabric.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Frame {
    /// Bands run down the fabric's columns (along its height), else along its rows.
    pub vertical: bool,
    /// Units along a band and across the stack of bands.
    pub length: u32,
    pub stack: u32,
}

impl Frame {
    /// A frame of bands along the rows, `length` units long and `stack` across, for tests.
    #[cfg(test)]
    pub(crate) fn rows(length: u32, stack: u32) -> Frame {
        Frame {
            vertical: false,
            length,
            stack,
        }
    }

    /// The two frames of `target`, bands along its longer side first.
    pub(crate) fn both(target: &Target) -> [Frame; 2] {
        let (w, h) = (target.width / UNIT, target.height / UNIT);
        let rows = Frame {
            vertical: false,
            length: w,
            stack: h,
        };
        let columns = Frame {
            vertical: true,
            length: h,
            stack: w,
        };
        if target.height > target.width {
            [columns, rows]
        } else {
            [rows, columns]
        }
    }

    /// The fabric's rectangle of `r`, in PEs.
    pub(crate) fn physical(&self, r: ARect) -> Rect {
        let (x, y, w, h) = (r.x * UNIT, r.y * UNIT, r.length * UNIT, r.depth * UNIT);
        if self.vertical {
            Rect::new(y, x, h, w)
        } else {
            Rect::new(x, y, w, h)
        }
    }

    /// The fabric's direction of the frame's east (`x` growing along a band).
    pub(crate) fn east(&self) -> Dir {
        if self.vertical { Dir::South } else { Dir::East }
    }

    /// The fabric's direction of the frame's south (toward the next band).
    pub(crate) fn south(&self) -> Dir {
        if self.vertical { Dir::East } else { Dir::South }
    }

    /// Which way the bands run, for the report.
    pub(crate) fn describe(&self) -> &'static str {
        if self.vertical {
            "bands down the fabric's columns"
        } else {
            "bands along the fabric's rows"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bands down the columns transpose the frame: along is south, across is east.
    #[test]
    fn a_vertical_frame_is_transposed() {
        let f = Frame {
            vertical: true,
            length: 10,
            stack: 5,
        };
        assert_eq!(f.physical(ARect::new(1, 2, 3, 4)), Rect::new(16, 8, 32, 24));
        assert_eq!((f.east(), f.south()), (Dir::South, Dir::East));
    }
}

//! The legend of the `wsel map` picture: a swatch and a sentence for every colour, outline and
//! mark the picture uses, and only those, in rows that wrap at the canvas's width.

use svg::node::element::{Group, Line, Polygon, Polyline, Rectangle};

use super::labels::{Box2, plain, text_box, width};
use super::{BOTTLENECK, DEAD, INPUT, OUTPUT, PALETTE, hue};

/// Something the picture draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mark {
    Region,
    Bottleneck,
    /// The other copies of the pipeline, this many.
    OtherCopies(u32),
    Input,
    Output,
    /// Where the other copies' streams cross the fabric's edge.
    OtherEdge,
    DeadPe,
    DeadLink,
    Route,
}

/// The text size of the legend.
const SIZE: f64 = 11.0;
/// A row's height, a swatch's width, and the space after an entry.
const ROW: f64 = 20.0;
const SWATCH: f64 = 18.0;
const SPACE: f64 = 22.0;

impl Mark {
    fn sentence(self) -> String {
        match self {
            Mark::Region => "a layer's region: name, logical rows × columns (↻ transposed), \
                             estimated cycles per sample"
                .to_string(),
            Mark::Bottleneck => "the bottleneck stage (the slowest estimate)".to_string(),
            Mark::OtherCopies(n) => format!(
                "the other {n} cop{} of the pipeline: same layers, same sizes",
                if n == 1 { "y" } else { "ies" }
            ),
            Mark::Input => "a tensor entering the fabric".to_string(),
            Mark::Output => "a tensor leaving the fabric".to_string(),
            Mark::OtherEdge => "where the other copies' tensors cross the edge".to_string(),
            Mark::DeadPe => "a dead PE".to_string(),
            Mark::DeadLink => "a dead link".to_string(),
            Mark::Route => "a route, one hue per router color".to_string(),
        }
    }

    fn entry_width(self) -> f64 {
        SWATCH + 6.0 + width(&self.sentence(), SIZE, false) + SPACE
    }

    /// The swatch, its left edge at `x`, centred on the row whose middle is `y`.
    fn swatch(self, x: f64, y: f64) -> Group {
        let rect = |fill: &str, stroke: &str, w: f64| {
            Rectangle::new()
                .set("x", x)
                .set("y", y - 6.0)
                .set("width", SWATCH)
                .set("height", 12)
                .set("fill", fill)
                .set("stroke", stroke)
                .set("stroke-width", w)
        };
        let g = Group::new();
        match self {
            Mark::Region => g.add(rect(PALETTE[0], "#333", 1.0)),
            Mark::Bottleneck => g.add(rect("none", BOTTLENECK, 2.5)),
            Mark::OtherCopies(_) => g.add(rect("#dcdcdc", "#8a8a8a", 1.0)),
            Mark::Input | Mark::Output => {
                let colour = if self == Mark::Input { INPUT } else { OUTPUT };
                let (tip, back) = if self == Mark::Input {
                    (y + 6.0, y - 6.0)
                } else {
                    (y - 6.0, y + 6.0)
                };
                g.add(
                    Polygon::new()
                        .set(
                            "points",
                            format!(
                                "{:.1},{back:.1} {:.1},{back:.1} {:.1},{tip:.1}",
                                x + 2.0,
                                x + SWATCH - 2.0,
                                x + SWATCH / 2.0
                            ),
                        )
                        .set("fill", colour),
                )
            }
            Mark::OtherEdge => g.add(
                Line::new()
                    .set("x1", x + SWATCH / 2.0)
                    .set("y1", y - 6.0)
                    .set("x2", x + SWATCH / 2.0)
                    .set("y2", y + 6.0)
                    .set("stroke", "#555")
                    .set("stroke-width", 1.5),
            ),
            Mark::DeadPe => g.add(rect(DEAD, DEAD, 1.0)).add(
                Polyline::new()
                    .set(
                        "points",
                        format!(
                            "{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
                            x + 5.0,
                            y - 4.0,
                            x + 13.0,
                            y + 4.0,
                            x + 9.0,
                            y,
                            x + 13.0,
                            y - 4.0,
                            x + 5.0,
                            y + 4.0
                        ),
                    )
                    .set("fill", "none")
                    .set("stroke", "white")
                    .set("stroke-width", 1.5),
            ),
            Mark::DeadLink => g.add(
                Line::new()
                    .set("x1", x + 2.0)
                    .set("y1", y)
                    .set("x2", x + SWATCH - 2.0)
                    .set("y2", y)
                    .set("stroke", DEAD)
                    .set("stroke-width", 3),
            ),
            Mark::Route => g.add(
                Polyline::new()
                    .set(
                        "points",
                        format!(
                            "{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
                            x + 1.0,
                            y + 5.0,
                            x + SWATCH / 2.0,
                            y + 5.0,
                            x + SWATCH / 2.0,
                            y - 5.0
                        ),
                    )
                    .set("fill", "none")
                    .set("stroke", hue(3))
                    .set("stroke-width", 2),
            ),
        }
    }
}

/// The marks in rows no wider than `width_px`.
pub(super) fn layout(marks: &[Mark], width_px: f64) -> Vec<Vec<Mark>> {
    let mut rows: Vec<Vec<Mark>> = Vec::new();
    let mut used = f64::INFINITY;
    for &m in marks {
        let w = m.entry_width();
        if used + w > width_px {
            rows.push(Vec::new());
            used = 0.0;
        }
        used += w;
        if let Some(row) = rows.last_mut() {
            row.push(m);
        }
    }
    rows
}

/// The height the rows take.
pub(super) fn height(rows: &[Vec<Mark>]) -> f64 {
    rows.len() as f64 * ROW
}

/// The legend with its first row's top at `(x, y)`, and the boxes of its texts.
pub(super) fn draw(rows: &[Vec<Mark>], x: f64, y: f64) -> (Group, Vec<Box2>) {
    let mut group = Group::new();
    let mut boxes = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        let middle = y + r as f64 * ROW + ROW / 2.0;
        let mut left = x;
        for &m in row {
            group = group.add(m.swatch(left, middle));
            let s = m.sentence();
            let (tx, ty) = (left + SWATCH + 6.0, middle + SIZE * 0.35);
            boxes.push(text_box(&s, tx, ty, SIZE, false, "start"));
            group = group.add(plain(&s, tx, ty, SIZE, false));
            left += m.entry_width();
        }
    }
    (group, boxes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_wrap_at_the_width() {
        let marks = [Mark::Region, Mark::Bottleneck, Mark::Input, Mark::Output];
        let one = layout(&marks, 10_000.0);
        assert_eq!(one.len(), 1);
        let narrow = layout(&marks, 400.0);
        assert!(narrow.len() > 1);
        assert_eq!(narrow.iter().map(Vec::len).sum::<usize>(), 4);
    }
}

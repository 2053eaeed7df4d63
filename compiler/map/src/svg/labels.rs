//! Labels of the `wsel map` picture that never overlap: every text's box is measured
//! generously (DejaVu Sans is about 0.6 em wide per character; bold a little more) and placed
//! only where it meets no box placed before and lies on the canvas. A region's label goes
//! inside its box when it fits; otherwise the region gets a number — inside, or beside it with
//! a leader line — and the key under the fabric says what each number is.

use svg::node::element::{Group, Line, Text};

use crate::placement::Placement;

/// An axis-aligned box in pixels: x, y, width, height.
pub(super) type Box2 = (f64, f64, f64, f64);

/// The smallest font size a label is drawn at.
const MIN_SIZE: f64 = 8.0;
/// The size of numbers and labels placed beside their regions, and of the key.
const SIDE_SIZE: f64 = 10.0;

/// The pixel width of `s` at `size`, measured generously.
pub(super) fn width(s: &str, size: f64, bold: bool) -> f64 {
    let em = if bold { 0.70 } else { 0.64 };
    s.chars().count() as f64 * size * em + 2.0
}

/// The box of `s` drawn at `(x, y)` (its baseline) with `anchor` (`start`, `middle`, `end`).
pub(super) fn text_box(s: &str, x: f64, y: f64, size: f64, bold: bool, anchor: &str) -> Box2 {
    let w = width(s, size, bold);
    let left = match anchor {
        "middle" => x - w / 2.0,
        "end" => x - w,
        _ => x,
    };
    (left, y - size, w, size * 1.3)
}

/// The boxes of the texts placed so far, on a canvas `(width, height)`.
pub(super) struct Labels {
    boxes: Vec<Box2>,
    canvas: (f64, f64),
}

impl Labels {
    pub(super) fn new(canvas: (f64, f64)) -> Labels {
        Labels {
            boxes: Vec::new(),
            canvas,
        }
    }

    /// Records a text placed at `b`.
    pub(super) fn claim(&mut self, b: Box2) {
        self.boxes.push(b);
    }

    /// Whether `b` lies on the canvas and meets no box placed before.
    pub(super) fn is_free(&self, b: Box2) -> bool {
        b.0 >= 0.0
            && b.1 >= 0.0
            && b.0 + b.2 <= self.canvas.0
            && b.1 + b.3 <= self.canvas.1
            && self.boxes.iter().all(|t| apart(b, *t))
    }

    /// The lowest edge of any box placed.
    pub(super) fn bottom(&self) -> f64 {
        self.boxes.iter().map(|b| b.1 + b.3).fold(0.0, f64::max)
    }

    /// A free spot for one line `s` beside `near` (above, right, below, left, then further
    /// out), preferring spots that cover none of `avoid`; the text's box, claimed.
    pub(super) fn place_near(
        &mut self,
        s: &str,
        size: f64,
        bold: bool,
        near: Box2,
        avoid: &[Box2],
    ) -> Box2 {
        let (x, y, w, h) = near;
        let (bw, bh) = (width(s, size, bold), size * 1.3);
        let gap = 4.0;
        let mut spots = Vec::new();
        for k in 0..40 {
            let out = f64::from(k) * (bh + 2.0);
            spots.push((x, y - gap - bh - out));
            spots.push((x + w + gap + out * 2.0, y + h / 2.0 - bh / 2.0));
            spots.push((x, y + h + gap + out));
            spots.push((x - gap - bw - out * 2.0, y + h / 2.0 - bh / 2.0));
            spots.push((x + w + gap, y - bh - out));
            spots.push((x + w + gap, y + h + out));
        }
        let fits = |b: Box2, strict: bool| {
            self.is_free(b) && (!strict || avoid.iter().all(|a| apart(b, *a)))
        };
        let chosen = [true, false]
            .into_iter()
            .find_map(|strict| {
                spots
                    .iter()
                    .map(|&(sx, sy)| (sx, sy, bw, bh))
                    .find(|&b| fits(b, strict))
            })
            .unwrap_or((x, y, bw, bh));
        self.claim(chosen);
        chosen
    }
}

/// Whether two boxes do not overlap.
fn apart(a: Box2, b: Box2) -> bool {
    a.0 + a.2 <= b.0 || b.0 + b.2 <= a.0 || a.1 + a.3 <= b.1 || b.1 + b.3 <= a.1
}

/// `s` centred in box `b` (as [`text_box`] measures it), dark on a white outline.
pub(super) fn halo(s: &str, b: Box2, size: f64, bold: bool) -> Text {
    Text::new(s)
        .set("x", b.0 + b.2 / 2.0)
        .set("y", b.1 + size)
        .set("font-size", size)
        .set("font-weight", if bold { "bold" } else { "normal" })
        .set("fill", "#111")
        .set("text-anchor", "middle")
        .set("stroke", "white")
        .set("stroke-width", size / 5.0)
        .set("paint-order", "stroke")
}

/// One numbered region in the key.
pub(super) struct KeyEntry {
    number: usize,
    text: String,
}

/// The labels of the regions `detailed` picks (their pixel boxes `region_px`): inside when
/// they fit, else numbers; the key's entries for the numbered ones.
pub(super) fn regions(
    p: &Placement,
    region_px: &[Box2],
    detailed: &dyn Fn(usize) -> bool,
    bottleneck: Option<usize>,
    taken: &mut Labels,
) -> (Group, Vec<KeyEntry>) {
    let mut group = Group::new();
    let mut key = Vec::new();
    let mut beside = Vec::new();
    // Inside first, so that labels placed beside their regions go around them.
    for (i, l) in p.layers.iter().enumerate().filter(|(i, _)| detailed(*i)) {
        let hot = Some(i) == bottleneck;
        let lines = [
            l.name.clone(),
            format!(
                "{} × {}{}",
                l.rows,
                l.cols,
                if l.orientation.transposed() {
                    " ↻"
                } else {
                    ""
                }
            ),
            format!(
                "≈{} cyc/sample{}",
                super::short(l.estimate.cycles),
                if hot { " (bottleneck)" } else { "" }
            ),
        ];
        let (x, y, rw, rh) = region_px[i];
        let longest = lines
            .iter()
            .map(|s| width(s, 1.0, true))
            .fold(0.0, f64::max);
        let size = ((rw - 4.0) / longest).min((rh - 4.0) / 3.9).min(14.0);
        let (cx, cy) = (x + rw / 2.0, y + rh / 2.0);
        if size >= MIN_SIZE {
            let boxes: Vec<Box2> = (0..3)
                .map(|k| {
                    let base = cy - 1.5 * size * 1.3 + size + k as f64 * size * 1.3;
                    text_box(&lines[k], cx, base, size, k == 0, "middle")
                })
                .collect();
            if boxes.iter().all(|b| taken.is_free(*b)) {
                for (k, b) in boxes.into_iter().enumerate() {
                    taken.claim(b);
                    group = group.add(halo(&lines[k], b, size, k == 0));
                }
                continue;
            }
        }
        let number = key.len() + 1;
        key.push(KeyEntry {
            number,
            text: format!("{} · {} · {}", lines[0], lines[1], lines[2]),
        });
        let n = number.to_string();
        let size = ((rw - 2.0) / width(&n, 1.0, true))
            .min((rh - 2.0) / 1.3)
            .min(12.0);
        let inside = text_box(&n, cx, cy + size * 0.35, size, true, "middle");
        if size >= MIN_SIZE && taken.is_free(inside) {
            taken.claim(inside);
            group = group.add(halo(&n, inside, size, true));
        } else {
            beside.push((n, region_px[i]));
        }
    }
    for (n, region) in beside {
        let b = taken.place_near(&n, SIDE_SIZE, true, region, region_px);
        let (x, y, rw, rh) = region;
        let (cx, cy) = (x + rw / 2.0, y + rh / 2.0);
        let (lx, ly) = (cx.clamp(b.0, b.0 + b.2), cy.clamp(b.1, b.1 + b.3));
        group = group
            .add(
                Line::new()
                    .set("x1", lx)
                    .set("y1", ly)
                    .set("x2", cx)
                    .set("y2", cy)
                    .set("stroke", "#555")
                    .set("stroke-width", 0.8),
            )
            .add(halo(&n, b, SIDE_SIZE, true));
    }
    (group, key)
}

/// The key to the numbered regions at `(x, y)`, in as many columns as `width` holds; the
/// group and its height.
pub(super) fn key(
    entries: &[KeyEntry],
    x: f64,
    y: f64,
    width_px: f64,
    taken: &mut Labels,
) -> (Group, f64) {
    if entries.is_empty() {
        return (Group::new(), 0.0);
    }
    let title = "Key to the numbered regions (name · logical rows × columns, ↻ transposed · estimated cycles per sample):";
    let mut group = Group::new().add(plain(title, x, y, 11.0, true));
    taken.claim(text_box(title, x, y, 11.0, true, "start"));
    let line = |e: &KeyEntry| format!("{:>3}  {}", e.number, e.text);
    let column = entries
        .iter()
        .map(|e| width(&line(e), SIDE_SIZE, false))
        .fold(0.0, f64::max)
        + 16.0;
    let columns = ((width_px / column).floor() as usize).clamp(1, entries.len());
    let rows = entries.len().div_ceil(columns);
    let step = SIDE_SIZE * 1.5;
    for (k, e) in entries.iter().enumerate() {
        let (c, r) = (k / rows, k % rows);
        let (tx, ty) = (x + c as f64 * column, y + 20.0 + r as f64 * step);
        let s = line(e);
        taken.claim(text_box(&s, tx, ty, SIDE_SIZE, false, "start"));
        group = group.add(plain(&s, tx, ty, SIDE_SIZE, false));
    }
    (group, 20.0 + rows as f64 * step)
}

/// Dark text at `(x, y)`, anchored at its start.
pub(super) fn plain(s: &str, x: f64, y: f64, size: f64, bold: bool) -> Text {
    Text::new(s)
        .set("x", x)
        .set("y", y)
        .set("font-size", size)
        .set("font-weight", if bold { "bold" } else { "normal" })
        .set("fill", "#222")
        .set("xml:space", "preserve")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_follow_the_anchor() {
        let b = text_box("abcd", 100.0, 50.0, 10.0, false, "middle");
        assert!((b.0 + b.2 / 2.0 - 100.0).abs() < 1e-9);
        assert_eq!(b.1, 40.0);
        let e = text_box("abcd", 100.0, 50.0, 10.0, false, "end");
        assert!((e.0 + e.2 - 100.0).abs() < 1e-9);
    }

    #[test]
    fn a_label_is_placed_clear_of_others() {
        let mut taken = Labels::new((200.0, 200.0));
        let first = taken.place_near("12", 10.0, true, (50.0, 50.0, 4.0, 4.0), &[]);
        let second = taken.place_near("13", 10.0, true, (50.0, 50.0, 4.0, 4.0), &[]);
        assert!(apart(first, second));
        assert!(taken.is_free((0.0, 150.0, 10.0, 10.0)));
        assert!(!taken.is_free((195.0, 150.0, 10.0, 10.0)), "off the canvas");
    }
}

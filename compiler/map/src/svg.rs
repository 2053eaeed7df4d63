//! The `wsel map` picture: the fabric to scale, every region a labelled rectangle (layer name,
//! logical rows × columns, estimated cycles per sample), dead PEs and links marked in red,
//! arrows where tensors enter and leave the fabric and, optionally, the routes between regions
//! as lines in their color's hue. A title line names the target and fabric size and a caption
//! says what the marks mean, so the picture reads without a legend.
//!
//! The drawing has one element per region, defect, edge stream and route, never one per PE,
//! so a 750 × 994 fabric draws as quickly as a 16 × 16 one (at about one pixel per PE).

use svg::Document;
use svg::node::element::{Group, Line, Polygon, Polyline, Rectangle, Text, Title};
use wsel_target::{Coord, Dir};

use crate::placement::{Endpoint, Orientation, Placement};
use crate::report::{copies_note, group, label};

/// What to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SvgOptions {
    /// Draw the routes between regions and from and to the fabric's edges.
    pub routes: bool,
}

/// The picture as SVG text.
pub fn render(p: &Placement, options: SvgOptions) -> String {
    let (w, h) = (p.fabric_width.max(1), p.fabric_height.max(1));
    // Pixels per PE: the longer side about 1,000 px, at most 48 px per PE.
    let scale = (1000.0 / f64::from(w.max(h))).clamp(0.5, 48.0);
    // Margins: title lines above; edge arrows outside the coordinate ticks on every side.
    // Beyond the arrows, room for the longest edge label (about 7 px per character).
    // ` · copy 12` after the tensor's name when the pipeline has copies.
    let copy_suffix = if p.copies > 1 { 10 } else { 0 };
    let label_room = |side: &[Dir]| {
        p.inputs
            .iter()
            .map(|e| (e, " in"))
            .chain(p.outputs.iter().map(|e| (e, " out")))
            .filter(|(e, _)| side.contains(&e.side))
            .map(|(e, suffix)| 7.0 * (e.tensor.chars().count() + suffix.len() + copy_suffix) as f64)
            .fold(0.0, f64::max)
    };
    let left = 56.0 + label_room(&[Dir::West]).max(40.0);
    let (top, bottom) = (150.0, 72.0);
    let right =
        (760.0 - f64::from(w) * scale - left).max(56.0 + label_room(&[Dir::East]).max(40.0));
    let width = f64::from(w) * scale + left + right;
    let height = f64::from(h) * scale + top + bottom;
    let px = |c: u32| f64::from(c) * scale;
    let centre = |c: Coord| (left + px(c.x) + scale / 2.0, top + px(c.y) + scale / 2.0);
    let frame = Frame {
        left,
        top,
        scale,
        w,
        h,
    };

    let mut doc = Document::new()
        .set("viewBox", (0, 0, width.ceil(), height.ceil()))
        .set("width", width.ceil())
        .set("height", height.ceil())
        .set("font-family", "Helvetica, Arial, sans-serif");
    doc = doc.add(
        Rectangle::new()
            .set("width", "100%")
            .set("height", "100%")
            .set("fill", "white"),
    );

    // Title, summary and caption.
    let bottleneck = p.bottleneck();
    let heading = [
        (
            format!(
                "{} on {} — fabric {} × {} PEs, {} mode, batch {}{}",
                p.model,
                p.target,
                w,
                h,
                p.mode,
                p.batch,
                copies_note(p)
            ),
            17.0,
            "bold",
            "#111",
        ),
        (
            format!(
                "{} region{}, {} of {} live PEs, {} of {} colors{}",
                p.layers.len(),
                if p.layers.len() == 1 { "" } else { "s" },
                group(p.pes_used()),
                group(p.live_pes()),
                p.colors_used,
                p.colors_available,
                bottleneck.map_or(String::new(), |b| format!(
                    "; bottleneck {} at {} cycles/sample",
                    label(p, b),
                    group(p.layers[b].estimate.cycles)
                ))
            ),
            13.0,
            "normal",
            "#222",
        ),
        (
            "Each box is a layer's region: name, logical rows × columns (↻ = transposed), estimated \
             cycles per sample."
                .to_string(),
            12.0,
            "normal",
            "#444",
        ),
        (
            format!(
                "Red squares with ✕ are dead PEs. Blue arrows: tensors entering the fabric; green: \
                 leaving it.{}",
                if options.routes {
                    " Lines: routes between regions, one hue per router color."
                } else {
                    ""
                }
            ),
            12.0,
            "normal",
            "#444",
        ),
    ];
    for (k, (s, size, weight, fill)) in heading.iter().enumerate() {
        doc = doc.add(text(
            s,
            16.0,
            24.0 + 19.0 * k as f64,
            *size,
            weight,
            fill,
            "start",
        ));
    }

    // The fabric, with coordinate ticks.
    doc = doc.add(
        Rectangle::new()
            .set("x", left)
            .set("y", top)
            .set("width", px(w))
            .set("height", px(h))
            .set("fill", "#f4f4f4")
            .set("stroke", "#888")
            .set("stroke-width", 1),
    );
    let tick = tick_step(w.max(h), scale);
    let mut ticks = Group::new()
        .set("stroke", "#ddd")
        .set("stroke-width", if scale >= 8.0 { 0.5 } else { 0.6 });
    let mut labels = Group::new();
    for x in (0..=w).step_by(tick as usize) {
        ticks = ticks.add(line(left + px(x), top, left + px(x), top + px(h)));
        if x < w {
            labels = labels.add(text(
                &x.to_string(),
                left + px(x) + scale / 2.0,
                top - 5.0,
                10.0,
                "normal",
                "#777",
                "middle",
            ));
        }
    }
    for y in (0..=h).step_by(tick as usize) {
        ticks = ticks.add(line(left, top + px(y), left + px(w), top + px(y)));
        if y < h {
            labels = labels.add(text(
                &y.to_string(),
                left - 5.0,
                top + px(y) + scale / 2.0 + 3.0,
                10.0,
                "normal",
                "#777",
                "end",
            ));
        }
    }
    doc = doc.add(ticks).add(labels);
    doc = doc.add(text(
        "x →",
        left + px(w) + 4.0,
        top - 5.0,
        10.0,
        "normal",
        "#777",
        "start",
    ));
    doc = doc.add(text(
        "y ↓",
        left - 5.0,
        top + px(h) + 14.0,
        10.0,
        "normal",
        "#777",
        "end",
    ));

    // Regions (boxes now, labels last so nothing covers them).
    let mut boxes = Group::new();
    let mut region_px = Vec::with_capacity(p.layers.len());
    for (i, l) in p.layers.iter().enumerate() {
        let (x, y) = (left + px(l.rect.x), top + px(l.rect.y));
        let (rw, rh) = (px(l.rect.width).max(1.0), px(l.rect.height).max(1.0));
        region_px.push((x, y, rw, rh));
        let hot = Some(i) == bottleneck;
        boxes = boxes.add(
            Rectangle::new()
                .set("x", x)
                .set("y", y)
                .set("width", rw)
                .set("height", rh)
                .set("fill", PALETTE[i % PALETTE.len()])
                .set("fill-opacity", 0.85)
                .set("stroke", if hot { "#c62828" } else { "#333" })
                .set("stroke-width", if hot { 2.5 } else { 1.0 })
                .add(Title::new(tooltip(p, i))),
        );
    }
    doc = doc.add(boxes);

    // Routes between regions: for a tensor of many parts, its first, middle and last part.
    if options.routes {
        let mut routes = Group::new()
            .set("fill", "none")
            .set("stroke-linecap", "round")
            .set("stroke-linejoin", "round")
            .set("stroke-opacity", 0.9);
        let stroke = (scale / 5.0).clamp(1.0, 3.0);
        for t in &p.transfers {
            let shown =
                t.parts <= 8 || t.part == 0 || t.part == t.parts / 2 || t.part + 1 == t.parts;
            if !shown {
                continue;
            }
            let Some(start) = endpoint_at(&t.source) else {
                continue;
            };
            let mut points = vec![centre(start)];
            points.extend(t.hops.iter().map(|h| centre(h.at)));
            for d in &t.destinations {
                if let Some(end) = endpoint_at(d)
                    && !matches!(d, Endpoint::HostOutput { .. })
                {
                    points.push(centre(end));
                }
            }
            points.dedup_by(|a, b| (a.0 - b.0).abs() < 0.01 && (a.1 - b.1).abs() < 0.01);
            if points.len() < 2 {
                continue;
            }
            let pts = points
                .iter()
                .map(|(x, y)| format!("{x:.1},{y:.1}"))
                .collect::<Vec<_>>()
                .join(" ");
            routes = routes.add(
                Polyline::new()
                    .set("points", pts)
                    .set("stroke", hue(t.color))
                    .set("stroke-width", stroke)
                    .add(Title::new(format!(
                        "{}, part {} of {}, color {}",
                        t.tensor, t.part, t.parts, t.color
                    ))),
            );
        }
        doc = doc.add(routes);
    }

    // Defects.
    doc = doc.add(defects(p, scale, &centre));

    // Edge streams: one arrow per tensor per side, spanning its parts.
    let mut arrows = Group::new();
    let mut drawn: Vec<(String, Dir, usize)> = Vec::new();
    for (e, inward) in p
        .inputs
        .iter()
        .map(|e| (e, true))
        .chain(p.outputs.iter().map(|e| (e, false)))
    {
        let key = (e.tensor.clone(), e.side, e.layer);
        if drawn.contains(&key) {
            continue;
        }
        drawn.push(key);
        let same: Vec<Coord> = p
            .inputs
            .iter()
            .chain(&p.outputs)
            .filter(|f| f.tensor == e.tensor && f.side == e.side && f.layer == e.layer)
            .map(|f| f.at)
            .collect();
        let text = format!(
            "{} {}{}",
            e.tensor,
            if inward { "in" } else { "out" },
            if p.copies > 1 {
                format!(" · copy {}", e.copy)
            } else {
                String::new()
            }
        );
        arrows = arrows.add(edge_arrow(&same, e.side, inward, &text, &frame));
    }
    doc = doc.add(arrows);

    // Region labels: inside when they fit, else beside the region with a leader line, never
    // on top of another label.
    let mut taken: Vec<Box2> = Vec::new();
    let mut label_group = Group::new();
    for (i, l) in p.layers.iter().enumerate() {
        let hot = Some(i) == bottleneck;
        let turned = if l.orientation == Orientation::Transposed {
            " ↻"
        } else {
            ""
        };
        let lines = [
            label(p, i),
            format!("{} × {}{turned}", l.rows, l.cols),
            format!(
                "≈{} cyc/sample{}",
                short(l.estimate.cycles),
                if hot { " (bottleneck)" } else { "" }
            ),
        ];
        let (x, y, rw, rh) = region_px[i];
        let placed = place_label(&lines, (x, y, rw, rh), &mut taken, (width, height));
        if placed.outside {
            let (bx, by, bw, bh) = placed.bounds;
            // From the label's nearest edge point to the region's centre.
            let (cx, cy) = (x + rw / 2.0, y + rh / 2.0);
            let (lx, ly) = (cx.clamp(bx, bx + bw), cy.clamp(by, by + bh));
            label_group = label_group.add(
                line(lx, ly, cx, cy)
                    .set("stroke", "#555")
                    .set("stroke-width", 0.8),
            );
        }
        for (k, s) in lines.iter().enumerate() {
            let weight = if k == 0 { "bold" } else { "normal" };
            let ty = placed.first_baseline + k as f64 * placed.size * 1.15;
            label_group = label_group.add(halo_text(s, placed.centre_x, ty, placed.size, weight));
        }
    }
    doc = doc.add(label_group);
    doc.to_string()
}

/// Where the fabric is drawn.
struct Frame {
    left: f64,
    top: f64,
    scale: f64,
    w: u32,
    h: u32,
}

/// An axis-aligned box in pixels: x, y, width, height.
type Box2 = (f64, f64, f64, f64);

/// Where a region's label went.
struct LabelPlace {
    centre_x: f64,
    first_baseline: f64,
    size: f64,
    bounds: Box2,
    outside: bool,
}

/// Puts a three-line label inside its region when it fits at a readable size, else at the
/// first free spot beside it (right, below, left, above, then further right and down).
fn place_label(
    lines: &[String; 3],
    region: Box2,
    taken: &mut Vec<Box2>,
    canvas: (f64, f64),
) -> LabelPlace {
    let (x, y, rw, rh) = region;
    let longest = lines.iter().map(|s| s.chars().count()).max().unwrap_or(1) as f64;
    let fit = (rw / (longest * 0.62)).min(rh / 3.8).min(14.0);
    let free = |b: Box2, taken: &[Box2]| {
        b.0 >= 0.0
            && b.1 >= 0.0
            && b.0 + b.2 <= canvas.0
            && b.1 + b.3 <= canvas.1
            && taken.iter().all(|t| {
                b.0 + b.2 <= t.0 || t.0 + t.2 <= b.0 || b.1 + b.3 <= t.1 || t.1 + t.3 <= b.1
            })
    };
    let boxed = |cx: f64, cy: f64, size: f64| -> Box2 {
        let (bw, bh) = (longest * size * 0.62 + 4.0, 3.0 * size * 1.15 + 2.0);
        (cx - bw / 2.0, cy - bh / 2.0, bw, bh)
    };
    let done = |b: Box2, size: f64, outside: bool, taken: &mut Vec<Box2>| {
        taken.push(b);
        LabelPlace {
            centre_x: b.0 + b.2 / 2.0,
            first_baseline: b.1 + size * 0.95,
            size,
            bounds: b,
            outside,
        }
    };
    let inside = boxed(x + rw / 2.0, y + rh / 2.0, fit);
    if fit >= 8.0 && free(inside, taken) {
        return done(inside, fit, false, taken);
    }
    let size = 9.0;
    let probe = boxed(0.0, 0.0, size);
    let (bw, bh) = (probe.2, probe.3);
    let gap = 6.0;
    let mut candidates = vec![
        (x + rw + gap + bw / 2.0, y + rh / 2.0),
        (x + rw / 2.0, y + rh + gap + bh / 2.0),
        (x - gap - bw / 2.0, y + rh / 2.0),
        (x + rw / 2.0, y - gap - bh / 2.0),
    ];
    for k in 1..40 {
        let step = k as f64 * (bh + 2.0);
        candidates.push((x + rw + gap + bw / 2.0, y + rh / 2.0 + step));
        candidates.push((x + rw + gap + bw / 2.0, y + rh / 2.0 - step));
        candidates.push((
            x + rw + gap + bw / 2.0 + k as f64 * (bw + 4.0),
            y + rh / 2.0,
        ));
    }
    for (cx, cy) in candidates {
        let b = boxed(cx, cy, size);
        if free(b, taken) {
            return done(b, size, true, taken);
        }
    }
    done(boxed(x + rw / 2.0, y + rh / 2.0, size), size, false, taken)
}

/// The hover text of region `i`.
fn tooltip(p: &Placement, i: usize) -> String {
    let l = &p.layers[i];
    format!(
        "{} ({}): {} × {} PEs{} at ({}, {}), SRAM {} of {} B per PE, colors {:?}, ≈{} cycles/sample",
        label(p, i),
        l.kernel,
        l.rows,
        l.cols,
        if l.orientation == Orientation::Transposed {
            ", transposed"
        } else {
            ""
        },
        l.rect.x,
        l.rect.y,
        group(l.sram_bytes),
        group(u64::from(p.sram_bytes_available)),
        l.colors(),
        group(l.estimate.cycles)
    )
}

/// Dead PEs as red squares with a white ✕, dead links as red bars across the link.
fn defects(p: &Placement, scale: f64, centre: &dyn Fn(Coord) -> (f64, f64)) -> Group {
    let mut dead = Group::new();
    let cell = scale.max(3.0);
    for c in &p.defects.dead_pes {
        let (cx, cy) = centre(*c);
        let half = cell / 2.0;
        let cross = (cell / 8.0).max(0.5);
        dead = dead.add(
            Group::new()
                .add(Title::new(format!("dead PE ({}, {})", c.x, c.y)))
                .add(
                    Rectangle::new()
                        .set("x", cx - half)
                        .set("y", cy - half)
                        .set("width", cell)
                        .set("height", cell)
                        .set("fill", "#b71c1c"),
                )
                .add(
                    line(
                        cx - half * 0.7,
                        cy - half * 0.7,
                        cx + half * 0.7,
                        cy + half * 0.7,
                    )
                    .set("stroke", "white")
                    .set("stroke-width", cross),
                )
                .add(
                    line(
                        cx - half * 0.7,
                        cy + half * 0.7,
                        cx + half * 0.7,
                        cy - half * 0.7,
                    )
                    .set("stroke", "white")
                    .set("stroke-width", cross),
                ),
        );
    }
    for l in &p.defects.dead_links {
        let (ax, ay) = centre(Coord::new(l.x, l.y));
        let (mx, my, horizontal) = match l.dir {
            Dir::East => (ax + scale / 2.0, ay, false),
            Dir::West => (ax - scale / 2.0, ay, false),
            Dir::South => (ax, ay + scale / 2.0, true),
            Dir::North => (ax, ay - scale / 2.0, true),
        };
        let half = cell / 2.0;
        let seg = if horizontal {
            line(mx - half, my, mx + half, my)
        } else {
            line(mx, my - half, mx, my + half)
        };
        dead = dead.add(
            seg.set("stroke", "#b71c1c")
                .set("stroke-width", (cell / 4.0).max(1.5))
                .add(Title::new(format!(
                    "dead link {} of ({}, {})",
                    l.dir, l.x, l.y
                ))),
        );
    }
    dead
}

/// The PE an endpoint names.
fn endpoint_at(e: &Endpoint) -> Option<Coord> {
    Some(match *e {
        Endpoint::Host { at, .. }
        | Endpoint::WeightStore { at, .. }
        | Endpoint::LayerOutput { at, .. }
        | Endpoint::LayerInput { at, .. }
        | Endpoint::HostOutput { at, .. } => at,
    })
}

/// An arrow outside the fabric's `side` edge (beyond the coordinate ticks), across the PEs
/// `points`, pointing in or out, with its label beyond it.
fn edge_arrow(points: &[Coord], side: Dir, inward: bool, label: &str, f: &Frame) -> Group {
    let along_x = matches!(side, Dir::North | Dir::South);
    let (lo, hi) = points.iter().fold((u32::MAX, 0), |(lo, hi), c| {
        let v = if along_x { c.x } else { c.y };
        (lo.min(v), hi.max(v))
    });
    let (lo, hi) = (f64::from(lo) * f.scale, f64::from(hi + 1) * f.scale);
    let mid = (lo + hi) / 2.0;
    let half = ((hi - lo) / 2.0).max(6.0);
    let (near, depth) = (22.0, 18.0);
    let colour = if inward { "#1565c0" } else { "#2e7d32" };
    // The edge line's coordinate and the direction pointing away from the fabric.
    let (edge, away) = match side {
        Dir::North => (f.top, -1.0),
        Dir::West => (f.left, -1.0),
        Dir::South => (f.top + f64::from(f.h) * f.scale, 1.0),
        Dir::East => (f.left + f64::from(f.w) * f.scale, 1.0),
    };
    let base = if along_x { f.left } else { f.top };
    let (tip, back) = if inward {
        (edge + away * near, edge + away * (near + depth))
    } else {
        (edge + away * (near + depth), edge + away * near)
    };
    let pts = if along_x {
        format!(
            "{:.1},{back:.1} {:.1},{back:.1} {:.1},{tip:.1}",
            base + mid - half,
            base + mid + half,
            base + mid
        )
    } else {
        format!(
            "{back:.1},{:.1} {back:.1},{:.1} {tip:.1},{:.1}",
            base + mid - half,
            base + mid + half,
            base + mid
        )
    };
    let outer = near + depth + 4.0;
    let (lx, ly, anchor) = match side {
        Dir::North => (base + mid, edge - outer, "middle"),
        Dir::South => (base + mid, edge + outer + 9.0, "middle"),
        Dir::West => (edge - outer, base + mid + 4.0, "end"),
        Dir::East => (edge + outer, base + mid + 4.0, "start"),
    };
    Group::new()
        .add(
            Polygon::new()
                .set("points", pts)
                .set("fill", colour)
                .set("fill-opacity", 0.8),
        )
        .add(text(label, lx, ly, 11.0, "bold", colour, anchor))
}

fn line(x1: f64, y1: f64, x2: f64, y2: f64) -> Line {
    Line::new()
        .set("x1", x1)
        .set("y1", y1)
        .set("x2", x2)
        .set("y2", y2)
}

fn text(s: &str, x: f64, y: f64, size: f64, weight: &str, fill: &str, anchor: &str) -> Text {
    Text::new(s)
        .set("x", x)
        .set("y", y)
        .set("font-size", size)
        .set("font-weight", weight)
        .set("fill", fill)
        .set("text-anchor", anchor)
}

/// Text with a white outline, readable over any fill or when it overflows a small region.
fn halo_text(s: &str, x: f64, y: f64, size: f64, weight: &str) -> Text {
    text(s, x, y, size, weight, "#111", "middle")
        .set("stroke", "white")
        .set("stroke-width", size / 5.0)
        .set("paint-order", "stroke")
}

/// Grid lines every so many PEs: every PE when cells are large, else a round number.
fn tick_step(longest: u32, scale: f64) -> u32 {
    if scale >= 12.0 {
        return 1;
    }
    for step in [2u32, 5, 10, 20, 50, 100, 200, 500] {
        if f64::from(step) * scale >= 40.0 || step * 10 >= longest {
            return step;
        }
    }
    1000
}

/// `12345` as `12.3k`.
fn short(v: u64) -> String {
    match v {
        0..1_000 => v.to_string(),
        1_000..1_000_000 => format!("{:.1}k", v as f64 / 1e3),
        _ => format!("{:.1}M", v as f64 / 1e6),
    }
}

/// A distinct hue per color number.
fn hue(color: u8) -> String {
    let h = (u32::from(color) * 137) % 360;
    format!("hsl({h}, 75%, 40%)")
}

/// Region fills: light, distinct, readable under dark text.
const PALETTE: [&str; 10] = [
    "#aecbfa", "#fdd663", "#a8dab5", "#f6aea9", "#d7aefb", "#fcc89b", "#a1e4f2", "#e6c9a8",
    "#c5e1a5", "#f8bbd0",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_numbers() {
        assert_eq!(short(999), "999");
        assert_eq!(short(12_345), "12.3k");
        assert_eq!(short(2_500_000), "2.5M");
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(16, 40.0), 1);
        assert_eq!(tick_step(994, 1.0), 50);
    }
}

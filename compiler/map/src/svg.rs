//! The `wsel map` picture: the fabric to scale, every region a box, dead PEs and links marked
//! in red, arrows where tensors enter and leave the fabric and, optionally, the routes between
//! regions as lines in their color's hue. A title names the target, the fabric and the mode;
//! a legend explains every colour, outline and mark the picture uses.
//!
//! It reads at any scale (`docs/mapping.md` §5):
//! - a region's label (name, logical rows × columns, estimated cycles per sample) goes inside
//!   its box when it fits at a readable size; otherwise the box gets a number, inside or
//!   beside it with a leader line, and a **key** under the fabric lists what each number is;
//! - with copies of the pipeline, copy 0 is drawn in detail, the other copies as grey
//!   outlines, and a badge on copy 0 says how many there are (`× 60`); only copy 0's edge
//!   streams are labelled, the others' entry points are ticks on the fabric's border;
//! - no two labels overlap and every label lies on the canvas: labels are placed against the
//!   boxes of those placed before, with widths measured generously (`labels::width`).
//!
//! The drawing has one element per region, defect, edge stream and route, never one per PE,
//! so a 750 × 994 fabric draws as quickly as a 16 × 16 one (at about one pixel per PE).

mod labels;
mod legend;

use svg::Document;
use svg::node::element::{Group, Line, Polygon, Polyline, Rectangle, Text, Title};
use wsel_target::{Coord, Dir};

use crate::placement::{Endpoint, Placement};
use crate::report::{copies_note, group};
use labels::{Box2, Labels, width};
use legend::Mark;

/// What to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SvgOptions {
    /// Draw the routes between regions and from and to the fabric's edges.
    pub routes: bool,
}

/// The font the picture asks for (the PNG renderer bundles it).
pub const FONT: &str = "DejaVu Sans";

/// The picture as SVG text.
pub fn render(p: &Placement, options: SvgOptions) -> String {
    let detailed = |i: usize| p.layers.get(i).is_some_and(|l| l.copy == 0);
    let bottleneck = p.bottleneck().map(|b| p.instance(b));
    let canvas = Canvas::new(p, options, bottleneck);
    // Labels: every text's box, so that none is placed over another.
    let mut taken = Labels::new((canvas.width, f64::INFINITY));

    let mut doc = canvas.header(&mut taken);
    doc = doc.add(fabric(&canvas.frame, &mut taken));
    let (regions, region_px) = regions(p, &canvas.frame, &detailed, bottleneck);
    doc = doc.add(regions);
    if options.routes {
        doc = doc.add(routes(p, &canvas.frame));
    }
    doc = doc.add(defects(p, &canvas.frame));
    doc = doc.add(edge_streams(p, &canvas.frame, &mut taken));
    if p.copies > 1 {
        doc = doc.add(copies_badge(p, &region_px, &detailed, &mut taken));
    }

    // Region labels, last so that nothing covers them; a key for those that are numbered.
    let (label_group, key) = labels::regions(p, &region_px, &detailed, bottleneck, &mut taken);
    doc = doc.add(label_group);
    let key_top = canvas.fabric_bottom() + 70.0;
    let (key_group, key_height) = labels::key(&key, 16.0, key_top, canvas.width - 32.0, &mut taken);
    doc = doc.add(key_group);
    let height = (key_top + key_height + 16.0).max(taken.bottom() + 16.0);
    document(doc, canvas.width, height)
}

/// The picture's layout: the heading's lines and the legend above the fabric, the margins
/// around it for the edge streams' labels, the scale.
struct Canvas {
    heading: Vec<(String, f64, bool)>,
    legend_top: f64,
    legend_rows: Vec<Vec<Mark>>,
    frame: Frame,
    width: f64,
}

impl Canvas {
    fn new(p: &Placement, options: SvgOptions, bottleneck: Option<usize>) -> Canvas {
        let (w, h) = (p.fabric_width.max(1), p.fabric_height.max(1));
        // Pixels per PE: the longer side about 1,000 px, at most 48 px per PE.
        let scale = (1000.0 / f64::from(w.max(h))).clamp(0.5, 48.0);
        // The header's lines and the legend's marks decide the canvas width and the top.
        let heading = heading(p, bottleneck);
        let header_width = heading
            .iter()
            .map(|(s, size, bold)| width(s, *size, *bold))
            .fold(0.0, f64::max)
            + 32.0;
        // Margins: arrows and their labels outside the coordinate ticks on every side.
        let label_room = |side: Dir| {
            edge_labels(p)
                .iter()
                .filter(|(_, d, _)| *d == side)
                .map(|(s, _, _)| width(s, 11.0, true))
                .fold(0.0, f64::max)
        };
        let left = 60.0 + label_room(Dir::West).max(30.0);
        let right = 60.0 + label_room(Dir::East).max(30.0);
        let width = (f64::from(w) * scale + left + right)
            .max(header_width)
            .max(760.0);
        let legend_top = 24.0 + 20.0 * heading.len() as f64;
        let legend_rows = legend::layout(&marks(p, options), width - 32.0);
        let top = legend_top + legend::height(&legend_rows) + 60.0;
        Canvas {
            heading,
            legend_top,
            legend_rows,
            frame: Frame {
                left,
                top,
                scale,
                w,
                h,
            },
            width,
        }
    }

    fn fabric_bottom(&self) -> f64 {
        self.frame.top + f64::from(self.frame.h) * self.frame.scale
    }

    /// The heading's lines and the legend.
    fn header(&self, taken: &mut Labels) -> Group {
        let mut doc = Group::new();
        for (k, (s, size, bold)) in self.heading.iter().enumerate() {
            let y = 24.0 + 20.0 * k as f64;
            taken.claim(labels::text_box(s, 16.0, y, *size, *bold, "start"));
            let weight = if *bold { "bold" } else { "normal" };
            doc = doc.add(text(s, 16.0, y, *size, weight, "#111", "start"));
        }
        let (legend_group, legend_boxes) = legend::draw(&self.legend_rows, 16.0, self.legend_top);
        legend_boxes.into_iter().for_each(|b| taken.claim(b));
        doc.add(legend_group)
    }
}

/// The fabric, with coordinate ticks.
fn fabric(f: &Frame, taken: &mut Labels) -> Group {
    let px = |c: u32| f64::from(c) * f.scale;
    Group::new()
        .add(
            Rectangle::new()
                .set("x", f.left)
                .set("y", f.top)
                .set("width", px(f.w))
                .set("height", px(f.h))
                .set("fill", "#f4f4f4")
                .set("stroke", "#888")
                .set("stroke-width", 1),
        )
        .add(ticks(f, taken))
}

/// Regions: copy 0 (or the only copy) filled, the bottleneck outlined, further copies as
/// outlines. Also gives every region's box in pixels.
fn regions(
    p: &Placement,
    f: &Frame,
    detailed: &dyn Fn(usize) -> bool,
    bottleneck: Option<usize>,
) -> (Group, Vec<Box2>) {
    let px = |c: u32| f64::from(c) * f.scale;
    let mut boxes = Group::new();
    let mut outlines = Group::new().set("fill", "#dcdcdc").set("stroke", "#8a8a8a");
    let mut region_px: Vec<Box2> = Vec::with_capacity(p.layers.len());
    for (i, l) in p.layers.iter().enumerate() {
        let (x, y) = (f.left + px(l.rect.x), f.top + px(l.rect.y));
        let (rw, rh) = (px(l.rect.width).max(1.0), px(l.rect.height).max(1.0));
        region_px.push((x, y, rw, rh));
        let rect = Rectangle::new()
            .set("x", x)
            .set("y", y)
            .set("width", rw)
            .set("height", rh);
        if detailed(i) {
            let hot = Some(i) == bottleneck;
            boxes = boxes.add(
                rect.set("fill", PALETTE[i % PALETTE.len()])
                    .set("fill-opacity", 0.9)
                    .set("stroke", if hot { BOTTLENECK } else { "#333" })
                    .set("stroke-width", if hot { 2.5 } else { 1.0 })
                    .add(Title::new(tooltip(p, i))),
            );
        } else {
            let stroke = if f.scale >= 4.0 { 1.0 } else { 0.5 };
            outlines = outlines.add(rect.set("stroke-width", stroke));
        }
    }
    (Group::new().add(outlines).add(boxes), region_px)
}

/// The copies badge (`copy 0 × 60`), above copy 0's regions.
fn copies_badge(
    p: &Placement,
    region_px: &[Box2],
    detailed: &dyn Fn(usize) -> bool,
    taken: &mut Labels,
) -> Text {
    let (x0, y0) = region_px
        .iter()
        .enumerate()
        .filter(|(i, _)| detailed(*i))
        .fold((f64::MAX, f64::MAX), |(x, y), (_, b)| {
            (x.min(b.0), y.min(b.1))
        });
    let s = format!("copy 0 × {}", p.copies);
    let b = taken.place_near(&s, 12.0, true, (x0, y0 - 2.0, 0.0, 0.0), region_px);
    labels::halo(&s, b, 12.0, true)
}

/// The SVG document of `width` × `height` px: a white page under the drawing.
fn document(drawing: Group, width: f64, height: f64) -> String {
    Document::new()
        .set("viewBox", (0, 0, width.ceil(), height.ceil()))
        .set("width", width.ceil())
        .set("height", height.ceil())
        .set(
            "font-family",
            format!("{FONT}, Helvetica, Arial, sans-serif"),
        )
        .add(
            Rectangle::new()
                .set("width", "100%")
                .set("height", "100%")
                .set("fill", "white"),
        )
        .add(drawing)
        .to_string()
}

/// The title and summary lines: text, size, bold.
fn heading(p: &Placement, bottleneck: Option<usize>) -> Vec<(String, f64, bool)> {
    let per_copy = p.layers_per_copy();
    vec![
        (
            format!(
                "{} on {} — fabric {} × {} PEs, {} mode, batch {}{}",
                p.model,
                p.target,
                p.fabric_width,
                p.fabric_height,
                p.mode,
                group(p.batch),
                copies_note(p)
            ),
            15.0,
            true,
        ),
        (
            format!(
                "{} region{}{}, {} of {} live PEs ({:.1}%), {} of {} colors{}",
                per_copy,
                if per_copy == 1 { "" } else { "s" },
                if p.copies > 1 {
                    format!(" per copy × {} copies", p.copies)
                } else {
                    String::new()
                },
                group(p.pes_used()),
                group(p.live_pes()),
                100.0 * p.pes_used() as f64 / p.live_pes().max(1) as f64,
                p.colors_used,
                p.colors_available,
                bottleneck.map_or(String::new(), |b| format!(
                    "; bottleneck {} at {} cycles/sample",
                    p.layers[b].name,
                    group(p.layers[b].estimate.cycles)
                ))
            ),
            12.0,
            false,
        ),
    ]
}

/// The legend's marks this picture uses.
fn marks(p: &Placement, options: SvgOptions) -> Vec<Mark> {
    let mut out = vec![Mark::Region];
    if p.bottleneck().is_some() {
        out.push(Mark::Bottleneck);
    }
    if p.copies > 1 {
        out.push(Mark::OtherCopies(p.copies - 1));
    }
    if !p.inputs.is_empty() {
        out.push(Mark::Input);
    }
    if !p.outputs.is_empty() {
        out.push(Mark::Output);
    }
    if p.copies > 1 && (!p.inputs.is_empty() || !p.outputs.is_empty()) {
        out.push(Mark::OtherEdge);
    }
    if !p.defects.dead_pes.is_empty() {
        out.push(Mark::DeadPe);
    }
    if !p.defects.dead_links.is_empty() {
        out.push(Mark::DeadLink);
    }
    if options.routes {
        out.push(Mark::Route);
    }
    out
}

/// Where the fabric is drawn.
struct Frame {
    left: f64,
    top: f64,
    scale: f64,
    w: u32,
    h: u32,
}

impl Frame {
    /// The pixel centre of PE `c`.
    fn centre(&self, c: Coord) -> (f64, f64) {
        (
            self.left + f64::from(c.x) * self.scale + self.scale / 2.0,
            self.top + f64::from(c.y) * self.scale + self.scale / 2.0,
        )
    }
}

/// Grid lines and coordinates every so many PEs.
fn ticks(f: &Frame, taken: &mut Labels) -> Group {
    let px = |c: u32| f64::from(c) * f.scale;
    let tick = tick_step(f.w.max(f.h), f.scale);
    let mut lines = Group::new()
        .set("stroke", "#ddd")
        .set("stroke-width", if f.scale >= 8.0 { 0.5 } else { 0.6 });
    let mut numbers = Group::new();
    for x in (0..=f.w).step_by(tick as usize) {
        lines = lines.add(line(f.left + px(x), f.top, f.left + px(x), f.top + px(f.h)));
        if x < f.w {
            let (s, tx, ty) = (x.to_string(), f.left + px(x) + f.scale / 2.0, f.top - 5.0);
            taken.claim(labels::text_box(&s, tx, ty, 10.0, false, "middle"));
            numbers = numbers.add(text(&s, tx, ty, 10.0, "normal", "#777", "middle"));
        }
    }
    for y in (0..=f.h).step_by(tick as usize) {
        lines = lines.add(line(f.left, f.top + px(y), f.left + px(f.w), f.top + px(y)));
        if y < f.h {
            let (s, tx, ty) = (
                y.to_string(),
                f.left - 5.0,
                f.top + px(y) + f.scale / 2.0 + 3.0,
            );
            taken.claim(labels::text_box(&s, tx, ty, 10.0, false, "end"));
            numbers = numbers.add(text(&s, tx, ty, 10.0, "normal", "#777", "end"));
        }
    }
    let axes = [
        ("x →", f.left + px(f.w) + 4.0, f.top - 5.0, "start"),
        ("y ↓", f.left - 5.0, f.top + px(f.h) + 14.0, "end"),
    ];
    for (s, x, y, anchor) in axes {
        taken.claim(labels::text_box(s, x, y, 10.0, false, anchor));
        numbers = numbers.add(text(s, x, y, 10.0, "normal", "#777", anchor));
    }
    Group::new().add(lines).add(numbers)
}

/// Routes between regions (copy 0's only when there are copies): for a tensor of many parts,
/// its first, middle and last part.
fn routes(p: &Placement, f: &Frame) -> Group {
    let mut routes = Group::new()
        .set("fill", "none")
        .set("stroke-linecap", "round")
        .set("stroke-linejoin", "round")
        .set("stroke-opacity", 0.9);
    let stroke = (f.scale / 5.0).clamp(1.0, 3.0);
    for t in p.transfers.iter().filter(|t| t.copy == 0) {
        let shown = t.parts <= 8 || t.part == 0 || t.part == t.parts / 2 || t.part + 1 == t.parts;
        if !shown {
            continue;
        }
        let Some(start) = endpoint_at(&t.source) else {
            continue;
        };
        let mut points = vec![f.centre(start)];
        points.extend(t.hops.iter().map(|h| f.centre(h.at)));
        for d in &t.destinations {
            if let Some(end) = endpoint_at(d)
                && !matches!(d, Endpoint::HostOutput { .. })
            {
                points.push(f.centre(end));
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
    routes
}

/// The labels of copy 0's edge streams: text, side, and whether the stream enters.
fn edge_labels(p: &Placement) -> Vec<(String, Dir, bool)> {
    let mut out: Vec<(String, Dir, bool)> = Vec::new();
    for (e, inward) in p
        .inputs
        .iter()
        .map(|e| (e, true))
        .chain(p.outputs.iter().map(|e| (e, false)))
        .filter(|(e, _)| e.copy == 0)
    {
        let s = format!("{} {}", e.tensor, if inward { "in" } else { "out" });
        if !out.iter().any(|(t, d, _)| *t == s && *d == e.side) {
            out.push((s, e.side, inward));
        }
    }
    out
}

/// Copy 0's edge streams as arrows with labels (one per tensor per side, spanning its parts);
/// the other copies' as ticks on the fabric's border.
fn edge_streams(p: &Placement, f: &Frame, taken: &mut Labels) -> Group {
    let mut arrows = Group::new();
    let mut ticks = Group::new().set("stroke", "#555").set("stroke-width", 1.5);
    for (label, side, inward) in edge_labels(p) {
        let tensor = label.rsplit_once(' ').map_or(label.as_str(), |(t, _)| t);
        let points: Vec<Coord> = p
            .inputs
            .iter()
            .filter(|_| inward)
            .chain(p.outputs.iter().filter(|_| !inward))
            .filter(|e| e.copy == 0 && e.side == side && e.tensor == tensor)
            .map(|e| e.at)
            .collect();
        arrows = arrows.add(edge_arrow(&points, side, inward, &label, f, taken));
    }
    for e in p.inputs.iter().chain(&p.outputs).filter(|e| e.copy > 0) {
        let (cx, cy) = f.centre(e.at);
        let (edge_x0, edge_y0) = (f.left, f.top);
        let (edge_x1, edge_y1) = (
            f.left + f64::from(f.w) * f.scale,
            f.top + f64::from(f.h) * f.scale,
        );
        let tick = match e.side {
            Dir::North => line(cx, edge_y0 - 6.0, cx, edge_y0),
            Dir::South => line(cx, edge_y1, cx, edge_y1 + 6.0),
            Dir::West => line(edge_x0 - 6.0, cy, edge_x0, cy),
            Dir::East => line(edge_x1, cy, edge_x1 + 6.0, cy),
        };
        ticks = ticks.add(tick);
    }
    Group::new().add(ticks).add(arrows)
}

/// An arrow outside the fabric's `side` edge (beyond the coordinate ticks), across the PEs
/// `points`, pointing in or out, with its label beyond it (moved along the edge when another
/// label is there).
fn edge_arrow(
    points: &[Coord],
    side: Dir,
    inward: bool,
    label: &str,
    f: &Frame,
    taken: &mut Labels,
) -> Group {
    let along_x = matches!(side, Dir::North | Dir::South);
    let (lo, hi) = points.iter().fold((u32::MAX, 0), |(lo, hi), c| {
        let v = if along_x { c.x } else { c.y };
        (lo.min(v), hi.max(v))
    });
    let (lo, hi) = (f64::from(lo) * f.scale, f64::from(hi + 1) * f.scale);
    let mid = (lo + hi) / 2.0;
    let half = ((hi - lo) / 2.0).max(6.0);
    let (near, depth) = (22.0, 18.0);
    let colour = if inward { INPUT } else { OUTPUT };
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
    // Slide along the edge, away from labels placed before, in steps of a line.
    let mut spot = (lx, ly);
    for k in 0..60 {
        let step = f64::from(k / 2) * 14.0 * if k % 2 == 0 { 1.0 } else { -1.0 };
        let (x, y) = if along_x {
            (lx + step * 4.0, ly)
        } else {
            (lx, ly + step)
        };
        if taken.is_free(labels::text_box(label, x, y, 11.0, true, anchor)) {
            spot = (x, y);
            break;
        }
    }
    taken.claim(labels::text_box(label, spot.0, spot.1, 11.0, true, anchor));
    Group::new()
        .add(
            Polygon::new()
                .set("points", pts)
                .set("fill", colour)
                .set("fill-opacity", 0.8),
        )
        .add(text(label, spot.0, spot.1, 11.0, "bold", colour, anchor))
}

/// The hover text of region `i`.
fn tooltip(p: &Placement, i: usize) -> String {
    let l = &p.layers[i];
    format!(
        "{} ({}): {} × {} PEs{} at ({}, {}), SRAM {} of {} B per PE, colors {:?}, ≈{} cycles/sample",
        l.name,
        l.kernel,
        l.rows,
        l.cols,
        l.orientation.described(),
        l.rect.x,
        l.rect.y,
        group(l.sram_bytes),
        group(u64::from(p.sram_bytes_available)),
        l.colors(),
        group(l.estimate.cycles)
    )
}

/// Dead PEs as red squares with a white ✕, dead links as red bars across the link.
fn defects(p: &Placement, f: &Frame) -> Group {
    let mut dead = Group::new();
    let cell = f.scale.max(3.0);
    for c in &p.defects.dead_pes {
        let (cx, cy) = f.centre(*c);
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
                        .set("fill", DEAD),
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
        let (ax, ay) = f.centre(Coord::new(l.x, l.y));
        let (mx, my, horizontal) = match l.dir {
            Dir::East => (ax + f.scale / 2.0, ay, false),
            Dir::West => (ax - f.scale / 2.0, ay, false),
            Dir::South => (ax, ay + f.scale / 2.0, true),
            Dir::North => (ax, ay - f.scale / 2.0, true),
        };
        let half = cell / 2.0;
        let seg = if horizontal {
            line(mx - half, my, mx + half, my)
        } else {
            line(mx, my - half, mx, my + half)
        };
        dead = dead.add(
            seg.set("stroke", DEAD)
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
/// The bottleneck's outline, dead PEs and links, arrows in and out.
const BOTTLENECK: &str = "#c62828";
const DEAD: &str = "#6a1b9a";
const INPUT: &str = "#1565c0";
const OUTPUT: &str = "#2e7d32";

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

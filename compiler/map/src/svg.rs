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
use crate::report::group;

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
    let (left, top, right, bottom) = (56.0, 92.0, 56.0, 48.0);
    let width = f64::from(w) * scale + left + right;
    let height = f64::from(h) * scale + top + bottom;
    let px = |c: u32| f64::from(c) * scale;
    let centre = |c: Coord| (left + px(c.x) + scale / 2.0, top + px(c.y) + scale / 2.0);

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

    // Title and caption.
    let bottleneck = p.bottleneck();
    let title = format!(
        "{} on {}: fabric {} × {} PEs, {} mode, batch {}, {} region{}{}",
        p.model,
        p.target,
        w,
        h,
        p.mode,
        p.batch,
        p.layers.len(),
        if p.layers.len() == 1 { "" } else { "s" },
        bottleneck.map_or(String::new(), |b| format!(
            ", bottleneck {} at {} cycles/sample",
            p.layers[b].name,
            group(p.layers[b].estimate.cycles)
        ))
    );
    doc = doc.add(text(
        &title,
        16.0,
        top - 64.0,
        17.0,
        "bold",
        "#111",
        "start",
    ));
    let mut caption = String::from(
        "Boxes: layer regions (name, logical rows × columns, ↻ = transposed, estimated cycles per \
         sample). Red ✕: dead PE. Arrows: tensors entering and leaving the fabric.",
    );
    if options.routes {
        caption.push_str(" Lines: routes between regions, one hue per router color.");
    }
    doc = doc.add(text(
        &caption,
        16.0,
        top - 42.0,
        12.0,
        "normal",
        "#333",
        "start",
    ));
    doc = doc.add(text(
        &format!(
            "{} of {} live PEs in regions; {} of {} colors used",
            group(p.pes_used()),
            group(p.live_pes()),
            p.colors_used,
            p.colors_available
        ),
        16.0,
        top - 24.0,
        12.0,
        "normal",
        "#333",
        "start",
    ));

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
                top - 6.0,
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
                left - 6.0,
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
        left + px(w),
        top - 6.0,
        10.0,
        "normal",
        "#777",
        "end",
    ));
    doc = doc.add(text(
        "y ↓",
        left - 6.0,
        top + px(h) + 14.0,
        10.0,
        "normal",
        "#777",
        "end",
    ));

    // Regions.
    let mut regions = Group::new();
    for (i, l) in p.layers.iter().enumerate() {
        let (x, y) = (left + px(l.rect.x), top + px(l.rect.y));
        let (rw, rh) = (px(l.rect.width), px(l.rect.height));
        let hot = Some(i) == bottleneck;
        let fill = PALETTE[i % PALETTE.len()];
        let tip = format!(
            "{} ({}): {} × {} PEs{} at ({}, {}), SRAM {} of {} B per PE, colors {:?}, ≈{} cycles/sample",
            l.name,
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
        );
        let mut g = Group::new().add(Title::new(tip)).add(
            Rectangle::new()
                .set("x", x)
                .set("y", y)
                .set("width", rw.max(1.0))
                .set("height", rh.max(1.0))
                .set("fill", fill)
                .set("fill-opacity", 0.85)
                .set("stroke", if hot { "#c62828" } else { "#333" })
                .set("stroke-width", if hot { 2.5 } else { 1.0 }),
        );
        let turned = if l.orientation == Orientation::Transposed {
            " ↻"
        } else {
            ""
        };
        let lines = [
            l.name.clone(),
            format!("{} × {}{turned}", l.rows, l.cols),
            format!(
                "≈{} cyc/sample{}",
                short(l.estimate.cycles),
                if hot { " (bottleneck)" } else { "" }
            ),
        ];
        let longest = lines.iter().map(|s| s.chars().count()).max().unwrap_or(1) as f64;
        let size = (rw / (longest * 0.6)).min(rh / 3.6).clamp(7.0, 14.0);
        let (cx, cy) = (x + rw / 2.0, y + rh / 2.0);
        for (k, s) in lines.iter().enumerate() {
            let dy = (k as f64 - 1.0) * size * 1.15 + size * 0.35;
            let weight = if k == 0 { "bold" } else { "normal" };
            g = g.add(halo_text(s, cx, cy + dy, size, weight));
        }
        regions = regions.add(g);
    }
    doc = doc.add(regions);

    // Routes between regions.
    if options.routes {
        let mut routes = Group::new()
            .set("fill", "none")
            .set("stroke-linecap", "round")
            .set("stroke-linejoin", "round")
            .set("stroke-opacity", 0.85);
        let stroke = (scale / 5.0).clamp(0.6, 3.0);
        for t in &p.transfers {
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
                        "{} part {} of {}, color {}",
                        t.tensor, t.part, t.parts, t.color
                    ))),
            );
        }
        doc = doc.add(routes);
    }

    // Defects.
    let mut dead = Group::new();
    let cell = scale.max(3.0);
    for c in &p.defects.dead_pes {
        let (cx, cy) = centre(*c);
        let half = cell / 2.0;
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
                    .set("stroke-width", (cell / 8.0).max(0.5)),
                )
                .add(
                    line(
                        cx - half * 0.7,
                        cy + half * 0.7,
                        cx + half * 0.7,
                        cy - half * 0.7,
                    )
                    .set("stroke", "white")
                    .set("stroke-width", (cell / 8.0).max(0.5)),
                ),
        );
    }
    for l in &p.defects.dead_links {
        let a = Coord::new(l.x, l.y);
        let (ax, ay) = centre(a);
        // The link's midpoint, drawn across it.
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
    doc = doc.add(dead);

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
        let label = if inward {
            format!("{} in", e.tensor)
        } else {
            format!("{} out", e.tensor)
        };
        arrows = arrows.add(edge_arrow(
            &same, e.side, inward, &label, scale, left, top, w, h,
        ));
    }
    doc = doc.add(arrows);
    doc.to_string()
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

/// An arrow outside the fabric's `side` edge, across the PEs `points`, pointing in or out.
#[allow(clippy::too_many_arguments)]
fn edge_arrow(
    points: &[Coord],
    side: Dir,
    inward: bool,
    label: &str,
    scale: f64,
    left: f64,
    top: f64,
    w: u32,
    h: u32,
) -> Group {
    let along_x = matches!(side, Dir::North | Dir::South);
    let (lo, hi) = points.iter().fold((u32::MAX, 0), |(lo, hi), c| {
        let v = if along_x { c.x } else { c.y };
        (lo.min(v), hi.max(v))
    });
    let (lo, hi) = (f64::from(lo) * scale, f64::from(hi + 1) * scale);
    let mid = (lo + hi) / 2.0;
    let half = ((hi - lo) / 2.0).max(6.0);
    let depth = 18.0;
    let colour = if inward { "#1565c0" } else { "#2e7d32" };
    // The edge line's coordinate and the direction pointing away from the fabric.
    let (edge, away) = match side {
        Dir::North => (top, -1.0),
        Dir::West => (left, -1.0),
        Dir::South => (top + f64::from(h) * scale, 1.0),
        Dir::East => (left + f64::from(w) * scale, 1.0),
    };
    let base = if along_x { left } else { top };
    let (tip, back) = if inward {
        (edge, edge + away * depth)
    } else {
        (edge + away * depth, edge)
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
    let (lx, ly, anchor) = match side {
        Dir::North => (base + mid, edge - depth - 4.0, "middle"),
        Dir::South => (base + mid, edge + depth + 12.0, "middle"),
        Dir::West => (edge - depth - 4.0, base + mid + 4.0, "end"),
        Dir::East => (edge + depth + 4.0, base + mid + 4.0, "start"),
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

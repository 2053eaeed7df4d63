//! `wsel run --heatmap h.svg` (or `h.png`): where a run's time went on the fabric. Two panels
//! of the fabric side by side: on the left every PE's **busy fraction** (the cycles it ran
//! tasks over the run's cycles), on the right every link's **load** (the wavelets it carried
//! over the run's cycles; a link carries one per cycle). The layers' regions are outlined on
//! both, and a colour bar under each says what the colours mean.
//!
//! At any scale: when a PE would be smaller than a few pixels (wse2's 750 × 994 PEs), PEs are
//! gathered into square tiles of `t × t` — a tile shows the mean busy fraction of its PEs and
//! the load of its busiest link, and the caption says so. Only tiles with activity are drawn,
//! so the picture stays small however large the fabric. Every figure is the simulation's.

use std::collections::HashMap;
use std::fmt::Write as _;

use svg::Document;
use svg::node::element::{Group, Rectangle, Text, Title};
use wsel_map::Placement;
use wsel_map::report::group;
use wsel_sim::Report;

/// The longer side of one panel, in pixels.
const PANEL: f64 = 460.0;
/// The least size of a drawn tile, in pixels.
const MIN_TILE_PX: f64 = 2.5;
/// Space around and between the panels.
const MARGIN: f64 = 40.0;
const TOP: f64 = 96.0;
/// The colour scale, from idle to fully busy: (fraction, colour).
const STOPS: [(f64, [u8; 3]); 5] = [
    (0.0, [255, 255, 204]),
    (0.25, [254, 217, 118]),
    (0.5, [253, 141, 60]),
    (0.75, [227, 26, 28]),
    (1.0, [128, 0, 38]),
];
/// The fabric's background: PEs that ran nothing, links that carried nothing.
const IDLE: &str = "#ececec";

/// The heat map of the run `report` of `placement`, as SVG text.
pub fn render(placement: &Placement, report: &Report) -> String {
    let (w, h) = (
        placement.fabric_width.max(1),
        placement.fabric_height.max(1),
    );
    let cycles = report.cycles.max(1) as f64;
    let scale = PANEL / f64::from(w.max(h));
    let tile = (MIN_TILE_PX / scale).ceil().max(1.0) as u32;
    let (pw, ph) = (f64::from(w) * scale, f64::from(h) * scale);
    let width = (2.0 * pw + 3.0 * MARGIN).max(960.0);
    let height = TOP + ph + 110.0;
    let left = [MARGIN, 2.0 * MARGIN + pw];

    let busy = tile_busy(report, tile);
    let links = tile_links(report, tile);
    let mut doc = Document::new()
        .set("viewBox", (0, 0, width.ceil(), height.ceil()))
        .set("width", width.ceil())
        .set("height", height.ceil())
        .set("font-family", "DejaVu Sans, Helvetica, Arial, sans-serif")
        .add(
            Rectangle::new()
                .set("width", "100%")
                .set("height", "100%")
                .set("fill", "white"),
        );
    let per = if tile > 1 {
        format!("tiles of {tile} × {tile} PEs: their mean busy fraction, their busiest link")
    } else {
        "one cell per PE".to_string()
    };
    let lines = [
        (
            format!(
                "Heat map: {} on {} ({} × {} PEs), {} mode, batch {} — {} cycles",
                placement.model,
                placement.target,
                w,
                h,
                placement.mode,
                group(placement.batch),
                group(report.cycles)
            ),
            15.0,
            "bold",
        ),
        (
            format!("Left: PEs busy running tasks; right: load of the links between PEs ({per})."),
            12.0,
            "normal",
        ),
        (
            format!(
                "Outlines: the layers' regions. {} PEs ran tasks; mean busy fraction {:.1}%.",
                group(report.pes.len() as u64),
                100.0 * report.utilisation()
            ),
            12.0,
            "normal",
        ),
    ];
    for (k, (s, size, weight)) in lines.iter().enumerate() {
        doc = doc.add(text(
            s,
            MARGIN,
            24.0 + 20.0 * k as f64,
            *size,
            weight,
            "start",
        ));
    }
    let panels = [
        ("PE busy fraction", &busy, busiest_pe(report, cycles)),
        ("link load", &links, busiest_link(report, cycles)),
    ];
    for (k, (title, cells, busiest)) in panels.into_iter().enumerate() {
        let x0 = left[k];
        let mut panel = Group::new().add(
            Rectangle::new()
                .set("x", x0)
                .set("y", TOP)
                .set("width", pw)
                .set("height", ph)
                .set("fill", IDLE)
                .set("stroke", "#888"),
        );
        let side = f64::from(tile) * scale;
        let mut keys: Vec<&(u32, u32)> = cells.keys().collect();
        keys.sort_unstable();
        let mut body = String::new();
        for &(tx, ty) in keys {
            let v = cells[&(tx, ty)] / cycles;
            let cw = side.min(pw - f64::from(tx * tile) * scale);
            let ch = side.min(ph - f64::from(ty * tile) * scale);
            let _ = write!(
                body,
                "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{:.2}\" fill=\"{}\"/>",
                x0 + f64::from(tx * tile) * scale,
                TOP + f64::from(ty * tile) * scale,
                cw,
                ch,
                colour(v)
            );
        }
        panel = panel.add(svg::node::Blob::new(body));
        for l in &placement.layers {
            let r = l.rect;
            panel = panel.add(
                Rectangle::new()
                    .set("x", x0 + f64::from(r.x) * scale)
                    .set("y", TOP + f64::from(r.y) * scale)
                    .set("width", (f64::from(r.width) * scale).max(0.5))
                    .set("height", (f64::from(r.height) * scale).max(0.5))
                    .set("fill", "none")
                    .set("stroke", "#333")
                    .set("stroke-width", if scale >= 4.0 { 1.0 } else { 0.5 })
                    .add(Title::new(format!("{} ({})", l.name, l.kernel))),
            );
        }
        doc = doc.add(panel).add(text(
            &format!("{title} — {busiest}"),
            x0,
            TOP - 8.0,
            12.0,
            "bold",
            "start",
        ));
        doc = doc.add(colour_bar(x0, TOP + ph + 18.0, pw.min(300.0)));
    }
    doc.to_string()
}

/// Busy cycles per tile, summed, over the tile's PE count: the tile's mean (times the run's
/// cycles).
fn tile_busy(report: &Report, tile: u32) -> HashMap<(u32, u32), f64> {
    let mut sums: HashMap<(u32, u32), f64> = HashMap::new();
    for pe in report.pes.iter().filter(|p| p.busy_cycles > 0) {
        *sums.entry((pe.x / tile, pe.y / tile)).or_default() += pe.busy_cycles as f64;
    }
    let area = f64::from(tile * tile);
    sums.values_mut().for_each(|v| *v /= area);
    sums
}

/// The busiest link's wavelets per tile (links counted at their sending PE).
fn tile_links(report: &Report, tile: u32) -> HashMap<(u32, u32), f64> {
    let mut most: HashMap<(u32, u32), f64> = HashMap::new();
    for l in report.links.iter().filter(|l| l.wavelets > 0) {
        let v = most.entry((l.x / tile, l.y / tile)).or_default();
        *v = v.max(l.wavelets as f64);
    }
    most
}

/// The busiest PE, as a caption.
fn busiest_pe(report: &Report, cycles: f64) -> String {
    report
        .pes
        .iter()
        .max_by_key(|p| (p.busy_cycles, std::cmp::Reverse((p.y, p.x))))
        .map_or("no PE ran".to_string(), |p| {
            format!(
                "busiest PE ({}, {}): {:.0}%",
                p.x,
                p.y,
                100.0 * p.busy_cycles as f64 / cycles
            )
        })
}

/// The busiest link, as a caption.
fn busiest_link(report: &Report, cycles: f64) -> String {
    report
        .links
        .iter()
        .max_by_key(|l| (l.wavelets, std::cmp::Reverse((l.y, l.x))))
        .map_or("no link carried data".to_string(), |l| {
            format!(
                "busiest link ({}, {}) {}: {:.0}%",
                l.x,
                l.y,
                l.dir,
                100.0 * l.wavelets as f64 / cycles
            )
        })
}

/// The colour of a fraction `v` (clamped to 0..1) on the scale.
fn colour(v: f64) -> String {
    let v = v.clamp(0.0, 1.0);
    let k = STOPS
        .iter()
        .position(|s| s.0 >= v)
        .unwrap_or(STOPS.len() - 1)
        .max(1);
    let ((a, ca), (b, cb)) = (STOPS[k - 1], STOPS[k]);
    let t = if b > a { (v - a) / (b - a) } else { 0.0 };
    let mix = |i: usize| (f64::from(ca[i]) + t * (f64::from(cb[i]) - f64::from(ca[i]))).round();
    format!("rgb({},{},{})", mix(0), mix(1), mix(2))
}

/// The colour scale at `(x, y)`, `length` pixels long, with its ticks and the idle swatch.
fn colour_bar(x: f64, y: f64, length: f64) -> Group {
    let steps = 40;
    let mut g = Group::new();
    for i in 0..steps {
        let v = (f64::from(i) + 0.5) / f64::from(steps);
        g = g.add(
            Rectangle::new()
                .set("x", x + length * f64::from(i) / f64::from(steps))
                .set("y", y)
                .set("width", length / f64::from(steps) + 0.3)
                .set("height", 12)
                .set("fill", colour(v)),
        );
    }
    for (i, tick) in ["0%", "25%", "50%", "75%", "100%"].iter().enumerate() {
        let tx = x + length * i as f64 / 4.0;
        g = g.add(text(tick, tx, y + 26.0, 10.0, "normal", "middle"));
    }
    g.add(
        Rectangle::new()
            .set("x", x)
            .set("y", y + 36.0)
            .set("width", 12)
            .set("height", 12)
            .set("fill", IDLE)
            .set("stroke", "#888"),
    )
    .add(text(
        "nothing (idle PE, unused link)",
        x + 18.0,
        y + 46.0,
        10.0,
        "normal",
        "start",
    ))
}

fn text(s: &str, x: f64, y: f64, size: f64, weight: &str, anchor: &str) -> Text {
    Text::new(s)
        .set("x", x)
        .set("y", y)
        .set("font-size", size)
        .set("font-weight", weight)
        .set("fill", "#222")
        .set("text-anchor", anchor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_runs_from_pale_to_dark() {
        assert_eq!(colour(0.0), "rgb(255,255,204)");
        assert_eq!(colour(1.0), "rgb(128,0,38)");
        assert_eq!(colour(2.0), colour(1.0));
        assert_eq!(colour(0.125), "rgb(255,236,161)");
    }
}

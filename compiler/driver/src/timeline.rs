//! `wsel run --timeline t.svg`: a weight-streaming run over its cycles. The top lane has a
//! bar per phase (its layer, from its start until the fabric went quiet), the reconfigurations
//! between them as gaps; the lane beneath shows, per phase, when its weights entered the
//! fabric from the store. An axis of cycles runs along the bottom. Bars too narrow for their
//! name are numbered, and the numbers are explained in a key under the picture.
//!
//! Every figure is the simulation's, read from the run's report. A pipelined run is one
//! phase: every layer at once.

use svg::Document;
use svg::node::element::{Line, Rectangle, Text, Title};

use crate::run_report::RunReport;
use crate::streamed_report::PhaseRow;
use wsel_map::report::group;

/// Picture width, and the margins around the lanes.
const WIDTH: f64 = 1000.0;
const LEFT: f64 = 90.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 56.0;
/// Lane heights and the gap between them.
const LANE: f64 = 34.0;
const GAP: f64 = 10.0;
/// Pixels per character of the labels, to decide whether a name fits its bar.
const CHAR: f64 = 6.5;

/// The timeline of `report`'s run as SVG text.
pub fn render(report: &RunReport) -> String {
    let phases = phases_of(report);
    let cycles = report.cycles.max(1) as f64;
    let span = WIDTH - LEFT - RIGHT;
    let x = |cycle: u64| LEFT + span * cycle as f64 / cycles;
    let store_top = TOP + LANE + GAP;
    let axis = store_top + LANE + 18.0;
    let mut key = Vec::new();
    let mut doc = Document::new().add(text(
        LEFT,
        24.0,
        &format!(
            "{} · {} mode · {} cycles = {:.1} µs · {} phase{}",
            report.model,
            report.mode,
            group(report.cycles),
            report.seconds * 1e6,
            phases.len(),
            if phases.len() == 1 { "" } else { "s" }
        ),
        13.0,
    ));
    doc = doc
        .add(text(8.0, TOP + LANE / 2.0 + 4.0, "fabric", 12.0))
        .add(text(
            8.0,
            store_top + LANE / 2.0 + 4.0,
            "store → fabric",
            11.0,
        ));
    for (i, p) in phases.iter().enumerate() {
        let (x0, x1) = (
            x(p.start_cycle),
            x(p.start_cycle + p.cycles).max(x(p.start_cycle) + 1.0),
        );
        let tip = format!(
            "{}: cycles {} .. {} ({} cycles)",
            p.layer,
            group(p.start_cycle),
            group(p.start_cycle + p.cycles),
            group(p.cycles)
        );
        doc = doc.add(bar(x0, TOP, x1 - x0, LANE, phase_colour(i), &tip));
        let label = if (p.layer.chars().count() as f64) * CHAR + 6.0 < x1 - x0 {
            p.layer.clone()
        } else {
            key.push(format!("{}: {}", i + 1, p.layer));
            (i + 1).to_string()
        };
        if (label.chars().count() as f64) * CHAR + 2.0 < x1 - x0 {
            doc = doc.add(text(x0 + 3.0, TOP + LANE / 2.0 + 4.0, &label, 11.0));
        }
        if let Some((first, last)) = p.weights_in {
            let (w0, w1) = (x(p.start_cycle + first), x(p.start_cycle + last + 1));
            let tip = format!(
                "{}'s weights entered the fabric at cycles {} .. {}",
                p.layer,
                group(p.start_cycle + first),
                group(p.start_cycle + last)
            );
            doc = doc.add(bar(
                w0,
                store_top,
                (w1 - w0).max(1.0),
                LANE,
                "#9aa7b8",
                &tip,
            ));
        }
    }
    doc = doc.add(axis_line(axis, report.cycles, &x));
    for tick in ticks(report.cycles) {
        doc = doc
            .add(
                Line::new()
                    .set("x1", x(tick))
                    .set("x2", x(tick))
                    .set("y1", axis - 4.0)
                    .set("y2", axis + 4.0)
                    .set("stroke", "#333"),
            )
            .add(text(x(tick) - 10.0, axis + 18.0, &group(tick), 10.0));
    }
    let mut y = axis + 44.0;
    doc = doc.add(text(
        LEFT,
        y,
        "top: the phases (a layer each, the gaps are reconfigurations); beneath: when each \
         phase's weights entered the fabric; cycles along the bottom",
        11.0,
    ));
    for line in &key {
        y += 16.0;
        doc = doc.add(text(LEFT, y, line, 11.0));
    }
    let height = y + 16.0;
    doc.set("viewBox", (0, 0, WIDTH, height.ceil()))
        .set("width", WIDTH)
        .set("height", height.ceil())
        .set("font-family", "sans-serif")
        .to_string()
}

/// The run's phases; a pipelined run is one phase of every layer.
fn phases_of(report: &RunReport) -> Vec<PhaseRow> {
    if !report.phases.is_empty() {
        return report.phases.clone();
    }
    vec![PhaseRow {
        layer: "every layer at once".to_string(),
        micro_batch: 0,
        start_cycle: 0,
        cycles: report.cycles,
        weights_in: None,
        rows: 0,
        cols: 0,
    }]
}

/// Round cycle counts along the axis: about eight of them.
fn ticks(cycles: u64) -> Vec<u64> {
    let raw = (cycles / 8).max(1);
    let magnitude = 10u64.pow(raw.ilog10());
    let step = [1, 2, 5, 10]
        .iter()
        .map(|m| m * magnitude)
        .find(|&s| s >= raw)
        .unwrap_or(raw);
    (0..=cycles / step).map(|k| k * step).collect()
}

fn axis_line(y: f64, cycles: u64, x: &dyn Fn(u64) -> f64) -> Line {
    Line::new()
        .set("x1", x(0))
        .set("x2", x(cycles))
        .set("y1", y)
        .set("y2", y)
        .set("stroke", "#333")
}

fn bar(x: f64, y: f64, w: f64, h: f64, fill: &str, tip: &str) -> Rectangle {
    Rectangle::new()
        .set("x", x)
        .set("y", y)
        .set("width", w)
        .set("height", h)
        .set("fill", fill)
        .set("stroke", "white")
        .add(Title::new(tip))
}

fn text(x: f64, y: f64, content: &str, size: f64) -> Text {
    Text::new(content)
        .set("x", x)
        .set("y", y)
        .set("font-size", size)
        .set("fill", "#222")
}

/// Alternating colours, so that neighbouring phases stay apart.
fn phase_colour(i: usize) -> &'static str {
    [
        "#7fb3d5", "#f0b27a", "#82e0aa", "#c39bd3", "#f7dc6f", "#85c1e9",
    ][i % 6]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_run() {
        assert_eq!(
            ticks(85_209),
            (0..=4).map(|k| k * 20_000).collect::<Vec<_>>()
        );
        assert_eq!(ticks(7), (0..=7).collect::<Vec<_>>());
        assert_eq!(ticks(0), vec![0]);
    }
}

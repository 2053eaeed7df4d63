//! What `wsel train` writes and prints: the loss per step as CSV, its curve as SVG, and the
//! per-step table (`docs/running.md`, "Training").

use std::fmt::Write;

use wsel_map::report::group;
use wsel_target::Target;

use crate::training::StepRecord;

/// The CSV header and one line per step.
pub const CSV_HEADER: &str = "step,loss,forward_cycles,loss_cycles,backward_cycles,update_cycles,stall_cycles,cycles,samples_per_second";

/// Samples per second of a step of `batch` samples that took `cycles`.
pub fn samples_per_second(target: &Target, batch: u64, cycles: u64) -> f64 {
    batch as f64 / target.seconds(cycles.max(1))
}

/// The loss and the timing of every step as CSV.
pub fn csv(steps: &[StepRecord], batch: u64, target: &Target) -> String {
    let mut out = format!("{CSV_HEADER}\n");
    for s in steps {
        let _ = writeln!(
            out,
            "{},{:e},{},{},{},{},{},{},{:.1}",
            s.step,
            s.loss,
            s.forward_cycles,
            s.loss_cycles,
            s.backward_cycles,
            s.update_cycles,
            s.stall_cycles,
            s.cycles,
            samples_per_second(target, batch, s.cycles)
        );
    }
    out
}

/// The loss curve: loss against step, axes labelled with the range of each.
pub fn svg(steps: &[StepRecord], title: &str) -> String {
    let (w, h, left, bottom, top, right) = (640.0, 360.0, 64.0, 40.0, 32.0, 16.0);
    let finite: Vec<f32> = steps
        .iter()
        .map(|s| s.loss)
        .filter(|l| l.is_finite())
        .collect();
    let max = finite.iter().copied().fold(f32::MIN, f32::max).max(1e-12);
    let min = finite
        .iter()
        .copied()
        .fold(f32::MAX, f32::min)
        .min(max)
        .min(0.0);
    let n = steps.len().max(2) as f64 - 1.0;
    let x = |i: usize| left + (w - left - right) * i as f64 / n;
    let y = |l: f32| top + (h - top - bottom) * f64::from((max - l) / (max - min).max(1e-12));
    let points: Vec<String> = steps
        .iter()
        .enumerate()
        .filter(|(_, s)| s.loss.is_finite())
        .map(|(i, s)| format!("{:.1},{:.1}", x(i), y(s.loss)))
        .collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{left}" y="20" font-size="14">{}</text>"#,
        escape(title)
    );
    let (x0, x1, y0, y1) = (left, w - right, top, h - bottom);
    let _ = writeln!(
        out,
        r#"<path d="M{x0},{y0} L{x0},{y1} L{x1},{y1}" fill="none" stroke="black"/>"#
    );
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="end">{max:.4}</text>"#,
        x0 - 4.0,
        y0 + 4.0
    );
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="end">{min:.4}</text>"#,
        x0 - 4.0,
        y1
    );
    let last = steps.last().map_or(0, |s| s.step);
    let first = steps.first().map_or(0, |s| s.step);
    let _ = writeln!(
        out,
        r#"<text x="{x0}" y="{}">step {first}</text>"#,
        y1 + 16.0
    );
    let _ = writeln!(
        out,
        r#"<text x="{x1}" y="{}" text-anchor="end">step {last}</text>"#,
        y1 + 16.0
    );
    let _ = writeln!(
        out,
        r#"<polyline points="{}" fill="none" stroke="steelblue" stroke-width="2"/>"#,
        points.join(" ")
    );
    out.push_str("</svg>\n");
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The per-step table's header.
pub fn table_header() -> String {
    format!(
        "  {:>5} {:>12} {:>11} {:>9} {:>11} {:>9} {:>8} {:>11} {:>10}\n",
        "step", "loss", "forward", "loss", "backward", "update", "stall", "cycles", "samples/s"
    )
}

/// One step's line.
pub fn table_line(s: &StepRecord, batch: u64, target: &Target) -> String {
    format!(
        "  {:>5} {:>12.6} {:>11} {:>9} {:>11} {:>9} {:>8} {:>11} {:>10.0}\n",
        s.step,
        s.loss,
        group(s.forward_cycles),
        group(s.loss_cycles),
        group(s.backward_cycles),
        group(s.update_cycles),
        group(s.stall_cycles),
        group(s.cycles),
        samples_per_second(target, batch, s.cycles)
    )
}

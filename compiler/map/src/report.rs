//! The `wsel map` table: a title line, one line per layer (region origin and size, PEs, SRAM
//! per PE used of available, colors, estimated cycles per sample; with several copies of the
//! pipeline, one line per layer of every copy, numbered), the edges where tensors enter and
//! leave, and a summary naming the bottleneck stage and the estimate for the whole batch.

use std::fmt::Write;

use crate::placement::{EdgeSource, Placement};

/// The report as plain text (no colour), ending with a newline.
pub fn render(p: &Placement) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} on {}: {} × {} PEs, {} B SRAM per PE, {} colors; {} mode, batch {}{}",
        p.model,
        p.target,
        p.fabric_width,
        p.fabric_height,
        group(u64::from(p.sram_bytes_available)),
        p.colors_available,
        p.mode,
        p.batch,
        copies_note(p)
    );
    out.push('\n');
    let copied = p.copies > 1;
    let header = [
        if copied { "copy · layer" } else { "layer" },
        "kernel",
        "origin",
        "size",
        "PEs",
        "SRAM/PE used",
        "colors",
        "est. work",
        "est. stage",
    ];
    let mut rows: Vec<[String; 9]> = Vec::new();
    let bottleneck = p.bottleneck();
    for (i, l) in p.layers.iter().enumerate() {
        let mark_text = l.orientation.mark();
        let turned = if mark_text.is_empty() {
            String::new()
        } else {
            format!(" {mark_text}")
        };
        let mark = match (Some(i) == bottleneck, p.phases > 1) {
            (true, false) => "  ◀ bottleneck",
            (true, true) => "  ◀ longest phase",
            _ => "",
        };
        rows.push([
            label(p, i),
            l.kernel.clone(),
            format!("({}, {})", l.rect.x, l.rect.y),
            format!("{} × {}{turned}", l.rows, l.cols),
            group(l.pe_count()),
            format!(
                "{} / {} B",
                group(l.sram_bytes),
                group(u64::from(p.sram_bytes_available))
            ),
            l.colors()
                .iter()
                .map(u8::to_string)
                .collect::<Vec<_>>()
                .join(","),
            group(l.estimate.compute),
            format!("{}{mark}", group(l.estimate.cycles)),
        ]);
    }
    let mut widths = header.map(|h| h.chars().count());
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let mut s = String::new();
        for (k, (cell, w)) in cells.iter().zip(widths).enumerate() {
            let pad = w.saturating_sub(cell.chars().count());
            // Numbers right-aligned, text left-aligned; the last column is not padded.
            let right = matches!(k, 4 | 7);
            if k > 0 {
                s.push_str("  ");
            }
            if right {
                s.push_str(&" ".repeat(pad));
                s.push_str(cell);
            } else if k + 1 == cells.len() {
                s.push_str(cell);
            } else {
                s.push_str(cell);
                s.push_str(&" ".repeat(pad));
            }
        }
        s.trim_end().to_string()
    };
    let _ = writeln!(out, "{}", line(&header.map(str::to_string)));
    for r in &rows {
        let _ = writeln!(out, "{}", line(r));
    }
    out.push('\n');
    if !p.layers.is_empty() {
        out.push_str(
            "(origin: the region's north-west PE as (x, y); size: logical rows × columns, T = \
             transposed on the fabric, X / Y = mirrored east–west / north–south; est.: cycles per sample, work = the busiest PE's tasks, \
             stage = the stage's period with its inputs and chain waits)\n\n",
        );
    }

    // Where tensors cross the fabric's edge.
    let mut seen: Vec<(String, EdgeSource, usize)> = Vec::new();
    for e in &p.inputs {
        let key = (e.tensor.clone(), e.source, e.layer);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let points: Vec<_> = p
            .inputs
            .iter()
            .filter(|f| f.tensor == e.tensor && f.layer == e.layer && f.source == e.source)
            .collect();
        // Layer-major order's unparks take parked activations back from the store.
        let from = match e.source {
            EdgeSource::Host if label(p, e.layer).starts_with("unpark#") => "parked, weight store",
            EdgeSource::Host => "host",
            EdgeSource::WeightStore => "weight store",
        };
        let _ = writeln!(
            out,
            "in:  {} ({from}) → {}: {} part{} entering the {} edge at {}",
            e.tensor,
            label(p, e.layer),
            e.parts,
            if e.parts == 1 { "" } else { "s" },
            e.side,
            span_of(points.iter().map(|f| f.at)),
        );
    }
    let mut layers: Vec<usize> = p.outputs.iter().map(|o| o.layer).collect();
    layers.sort_unstable();
    layers.dedup();
    for (copy, layer) in (0..p.copies).flat_map(|c| layers.iter().map(move |&l| (c, l))) {
        let points: Vec<_> = p
            .outputs
            .iter()
            .filter(|o| o.copy == copy && o.layer == layer)
            .collect();
        let Some(o) = points.first() else { continue };
        // Layer-major order's parks send activations to the store.
        let to = match label(p, o.layer).starts_with("park#") {
            true => "weight store",
            false => "host",
        };
        let mut sides: Vec<String> = points.iter().map(|f| f.side.to_string()).collect();
        sides.dedup();
        let _ = writeln!(
            out,
            "out: {}{} → {to}: {} part{} leaving the {} edge{} at {}",
            if copied {
                format!("{} ", copy_name(copy))
            } else {
                String::new()
            },
            o.tensor,
            o.parts,
            if o.parts == 1 { "" } else { "s" },
            sides.join(" and "),
            if sides.len() > 1 { "s" } else { "" },
            span_of(points.iter().map(|f| f.at)),
        );
    }
    out.push('\n');

    if let Some(b) = bottleneck {
        let bl = &p.layers[b];
        let mean =
            p.layers.iter().map(|l| l.estimate.cycles).sum::<u64>() as f64 / p.layers.len() as f64;
        let live = p.live_pes();
        let used = p.pes_used();
        if p.phases > 1 {
            let on = match p.one_region {
                None => "on one region".to_string(),
                Some((rows, cols, cycles)) => format!(
                    "each on its rows of the same columns (one region of {rows} × {cols} \
                     estimates {} cycles)",
                    group(cycles)
                ),
            };
            let _ = writeln!(
                out,
                "weight streaming: {} phases, one layer at a time {on}, the longest {} at {} \
                 cycles/sample",
                p.phases,
                label(p, b),
                group(bl.estimate.cycles),
            );
        } else {
            let _ = writeln!(
                out,
                "bottleneck: {} at {} cycles/sample (mean stage {:.0}, {:.2}× the mean)",
                label(p, b),
                group(bl.estimate.cycles),
                mean,
                if mean > 0.0 {
                    bl.estimate.cycles as f64 / mean
                } else {
                    1.0
                }
            );
        }
        let _ = writeln!(
            out,
            "PEs used: {} of {} live ({:.1}%); colors used: {} of {}",
            group(used),
            group(live),
            100.0 * used as f64 / live.max(1) as f64,
            p.colors_used,
            p.colors_available
        );
        if p.micro_batches > 1 {
            let layer_major = p.micro_traffic.as_ref().is_some_and(|t| t.layer_major);
            let order = if layer_major {
                "layer-major: each layer over every micro-batch before the next"
            } else {
                "one after another, each streaming every layer's weights again"
            };
            let _ = writeln!(
                out,
                "micro-batches: {} of {} samples, {order} ({} samples at once do not fit: {})",
                p.micro_batches,
                group(p.samples_per_copy),
                group(p.batch),
                p.micro_batch_reason
            );
            if let Some(traffic) = &p.micro_traffic {
                let _ = writeln!(out, "  store traffic: {}", traffic.sentence());
            }
        }
        let _ = writeln!(
            out,
            "estimated batch: {} cycles for {} sample{}{}{}",
            group(p.estimated_cycles),
            group(p.batch),
            if p.batch == 1 { "" } else { "s" },
            copies_note(p),
            if p.phases <= 1 && p.estimated_fill_cycles > 0 {
                format!(
                    " (fill {}, then {} cycles per sample)",
                    group(p.estimated_fill_cycles),
                    group(bl.estimate.cycles)
                )
            } else {
                String::new()
            }
        );
        if !p.copies_reason.is_empty() {
            let _ = writeln!(out, "copies: {}", p.copies_reason);
        }
        if !p.layout_reason.is_empty() {
            let _ = writeln!(out, "layout: {}", p.layout_reason);
        }
    }
    out
}

/// `, in 2 copies of 180 samples` with several copies of the pipeline, else nothing.
pub(crate) fn copies_note(p: &Placement) -> String {
    if p.copies > 1 {
        format!(
            " in {} copies of {} sample{}",
            p.copies,
            group(p.samples_per_copy),
            if p.samples_per_copy == 1 { "" } else { "s" }
        )
    } else {
        String::new()
    }
}

/// The name of `p.layers[i]`, with its copy's number when there are several copies.
pub fn label(p: &Placement, i: usize) -> String {
    match p.layers.get(i) {
        Some(l) if p.copies > 1 => format!("{} · {}", copy_name(l.copy), l.name),
        Some(l) => l.name.clone(),
        None => "?".to_string(),
    }
}

/// `copy 0`, as the JSON numbers copies.
fn copy_name(copy: u32) -> String {
    format!("copy {copy}")
}

/// `(x, y)` for one point, `(x0, y0)…(x1, y1)` for several.
fn span_of(points: impl Iterator<Item = wsel_target::Coord>) -> String {
    let points: Vec<_> = points.collect();
    match (points.first(), points.last()) {
        (Some(a), Some(b)) if a != b => format!("{a}…{b}"),
        (Some(a), _) => a.to_string(),
        _ => "-".to_string(),
    }
}

/// `12345` as `12,345`.
pub fn group(v: u64) -> String {
    let digits = v.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::group;

    #[test]
    fn groups_thousands() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1234567), "1,234,567");
    }
}

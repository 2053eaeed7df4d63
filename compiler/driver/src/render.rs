//! Renders diagnostics for people: the only place that knows ariadne.
//!
//! All rendering goes through [`render_diagnostics`] so that the terminal output, the UI test
//! snapshots and `--color` handling stay in one function (ariadne's builder API changes between
//! versions; keeping it here keeps the blast radius small).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ariadne::{Config, IndexType, Label, Report, ReportKind};
use wsel_sema::diagnostic::{Diagnostic, Severity};

/// The text of every file a diagnostic may point into, by the path the diagnostic names.
pub type SourceTexts = BTreeMap<PathBuf, String>;

/// Renders `diagnostics` as ariadne reports, one after another, into a string.
pub fn render_diagnostics(
    diagnostics: &[Diagnostic],
    sources: &SourceTexts,
    color: bool,
) -> String {
    let mut out = Vec::new();
    let cache = ariadne::sources(
        sources
            .iter()
            .map(|(path, text)| (display_path(path), text.clone())),
    );
    let mut cache = cache;
    for diagnostic in diagnostics {
        let kind = match diagnostic.severity {
            Severity::Error => ReportKind::Error,
            Severity::Warning => ReportKind::Warning,
        };
        let primary = &diagnostic.primary;
        let primary_span = (
            display_path(&primary.location.file),
            clamp(&primary.location.span, sources, &primary.location.file),
        );
        let mut report = Report::build(kind, primary_span.clone())
            .with_config(
                Config::default()
                    .with_color(color)
                    .with_index_type(IndexType::Byte),
            )
            .with_code(diagnostic.code)
            .with_message(&diagnostic.message)
            .with_label(
                Label::new(primary_span)
                    .with_message(&primary.message)
                    .with_order(0),
            );
        for (order, label) in diagnostic.secondary.iter().enumerate() {
            let span = (
                display_path(&label.location.file),
                clamp(&label.location.span, sources, &label.location.file),
            );
            report = report.with_label(
                Label::new(span)
                    .with_message(&label.message)
                    .with_order(order as i32 + 1),
            );
        }
        for note in &diagnostic.notes {
            report = report.with_note(note);
        }
        if let Some(help) = &diagnostic.help {
            report = report.with_help(help);
        }
        // Writing into a Vec cannot fail for IO reasons; a failure here would be an ariadne
        // bug with an unknown source id, which the clamp above and the source map rule out.
        if let Err(error) = report.finish().write(&mut cache, &mut out) {
            out.extend_from_slice(format!("(could not render diagnostic: {error})\n").as_bytes());
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The summary line printed after the reports, e.g. `error: 2 errors in 1 file`.
pub fn summary_line(errors: usize, warnings: usize) -> String {
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    match (errors, warnings) {
        (0, 0) => "no problems found".to_string(),
        (0, w) => plural(w, "warning"),
        (e, 0) => plural(e, "error"),
        (e, w) => format!("{}, {}", plural(e, "error"), plural(w, "warning")),
    }
}

fn display_path(path: &Path) -> String {
    path.display().to_string()
}

/// Keeps a span inside its file so a stale or end-of-file span still renders.
fn clamp(
    span: &std::ops::Range<usize>,
    sources: &SourceTexts,
    file: &Path,
) -> std::ops::Range<usize> {
    let len = sources.get(file).map_or(0, String::len);
    let start = span.start.min(len);
    let end = span.end.clamp(start, len);
    start..end
}

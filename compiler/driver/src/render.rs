//! Renders diagnostics for people: the only place that knows ariadne.
//!
//! All rendering goes through [`render_diagnostics`] so that the terminal output, the UI test
//! snapshots and `--color` handling stay in one function (ariadne's builder API changes between
//! versions; keeping it here keeps the blast radius small).
//!
//! Diagnostics carry byte spans; they are converted to character offsets here and rendered with
//! `IndexType::Char`. ariadne 0.6's byte mode computes the `file:line:col` header of a label in
//! another file from a character offset treated as a byte offset, which puts the column off by
//! the multi-byte characters before it; its character mode is consistent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use std::ops::Range;

use ariadne::{Config, IndexType, Label, Report, ReportKind};
use wsel_diagnostic::{Diagnostic, Severity};

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
            char_span(&primary.location.span, sources, &primary.location.file),
        );
        let mut report = Report::build(kind, primary_span.clone())
            .with_config(
                Config::default()
                    .with_color(color)
                    .with_index_type(IndexType::Char),
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
                char_span(&label.location.span, sources, &label.location.file),
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
        // bug with an unknown source id, which `char_span` and the source map rule out.
        if let Err(error) = report.finish().write(&mut cache, &mut out) {
            out.extend_from_slice(format!("(could not render diagnostic: {error})\n").as_bytes());
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Prints `diagnostics` to standard error followed by the summary line.
pub fn eprint_diagnostics(diagnostics: &[Diagnostic], sources: &SourceTexts, color: bool) {
    use std::io::Write;
    let errors = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = diagnostics.len() - errors;
    let mut stderr = std::io::stderr().lock();
    // A closed stderr is not worth a panic; the exit status still tells the outcome.
    let _ = write!(
        stderr,
        "{}",
        render_diagnostics(diagnostics, sources, color)
    );
    let _ = writeln!(stderr, "{}", summary_line(errors, warnings));
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

/// The character range of a byte span, kept inside its file so that a stale or end-of-file
/// span still renders.
fn char_span(span: &Range<usize>, sources: &SourceTexts, file: &Path) -> Range<usize> {
    let text = sources.get(file).map_or("", String::as_str);
    let start = char_offset(text, span.start);
    let end = char_offset(text, span.end.max(span.start));
    start..end
}

/// The number of characters before byte `offset` (rounded down to a character boundary).
fn char_offset(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    text[..offset].chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wsel_sema::{Diagnostic, Location};

    #[test]
    fn header_columns_count_characters_in_every_file() {
        // The secondary label sits after multi-byte characters in another file; its header
        // must name the column a person counts (13: `x` in `layer dense(x`).
        let other = "// résumé — ok\nlayer dense(x: f32) {}\n";
        let main = "model m() {}\n";
        let mut sources = SourceTexts::new();
        sources.insert("other.wse".into(), other.to_string());
        sources.insert("main.wse".into(), main.to_string());
        let x = other.find("x:").expect("x in text");
        let diagnostic = Diagnostic::error(
            "E0402",
            "mismatch",
            Location {
                file: "main.wse".into(),
                span: 0..5,
            },
            "here",
        )
        .with_secondary(
            Location {
                file: "other.wse".into(),
                span: x..x + 1,
            },
            "declared here",
        );
        let text = render_diagnostics(&[diagnostic], &sources, false);
        assert!(text.contains("other.wse:2:13"), "{text}");
        assert!(text.contains("main.wse:1:1"), "{text}");
    }

    #[test]
    fn char_offsets_round_down_inside_a_character() {
        assert_eq!(char_offset("aé b", 2), 1);
        assert_eq!(char_offset("aé b", 3), 2);
        assert_eq!(char_offset("ab", 99), 2);
    }
}

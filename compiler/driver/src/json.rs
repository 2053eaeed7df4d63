//! Diagnostics as JSON for tools (`wsel check --format json`).
//!
//! The shape is stable: one object per diagnostic with its code, severity, message and
//! labelled locations, each location given as a byte range and as 1-based line and column
//! (columns count characters).

use serde::Serialize;
use wsel_diagnostic::{Diagnostic, Label, Severity};

use crate::render::SourceTexts;

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    code: &'a str,
    severity: &'a str,
    message: &'a str,
    primary: JsonLabel<'a>,
    secondary: Vec<JsonLabel<'a>>,
    notes: &'a [String],
    help: Option<&'a str>,
}

#[derive(Serialize)]
struct JsonLabel<'a> {
    file: String,
    start: usize,
    end: usize,
    line: usize,
    column: usize,
    message: &'a str,
}

/// Serialises `diagnostics` as a pretty JSON array.
pub fn diagnostics_to_json(diagnostics: &[Diagnostic], sources: &SourceTexts) -> String {
    let items: Vec<JsonDiagnostic<'_>> = diagnostics
        .iter()
        .map(|d| JsonDiagnostic {
            code: d.code,
            severity: match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            },
            message: &d.message,
            primary: json_label(&d.primary, sources),
            secondary: d.secondary.iter().map(|l| json_label(l, sources)).collect(),
            notes: &d.notes,
            help: d.help.as_deref(),
        })
        .collect();
    serde_json::to_string_pretty(&items).unwrap_or_else(|error| format!("\"{error}\""))
}

fn json_label<'a>(label: &'a Label, sources: &SourceTexts) -> JsonLabel<'a> {
    let text = sources.get(&label.location.file).map_or("", String::as_str);
    let (line, column) = line_column(text, label.location.span.start);
    JsonLabel {
        file: label.location.file.display().to_string(),
        start: label.location.span.start,
        end: label.location.span.end,
        line,
        column,
        message: &label.message,
    }
}

/// 1-based line and character column of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::line_column;

    #[test]
    fn line_column_counts_from_one_and_in_characters() {
        assert_eq!(line_column("abc", 0), (1, 1));
        assert_eq!(line_column("ab\ncd", 3), (2, 1));
        assert_eq!(line_column("ab\nλd", 5), (2, 2));
        assert_eq!(line_column("ab", 99), (1, 3));
    }
}

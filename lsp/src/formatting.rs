//! Formatting a document with `wsel_fmt` (the formatter of `wsel fmt`).

/// The formatted text, `Ok(None)` when the text is already formatted, or the formatter's
/// error for a text with syntax errors.
pub fn format_document(text: &str) -> Result<Option<String>, wsel_fmt::FormatError> {
    let formatted = wsel_fmt::format(text)?;
    Ok((formatted != text).then_some(formatted))
}

//! Byte offsets ↔ LSP positions (line, UTF-16 code unit), and applying incremental text
//! changes. Positions past the end of a line or of the text are clamped, never an error.

use tower_lsp::lsp_types::{Position, Range};

/// The starts of the lines of one text, for converting offsets and positions.
pub struct LineIndex<'a> {
    text: &'a str,
    /// Byte offset of the start of every line; the first is 0.
    line_starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, line_starts }
    }

    /// The position of byte `offset` (clamped to the text, and moved back to a character
    /// boundary).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let character: usize = self.text[start..offset].chars().map(char::len_utf16).sum();
        Position::new(to_u32(line), to_u32(character))
    }

    pub fn range(&self, span: &std::ops::Range<usize>) -> Range {
        Range::new(self.position(span.start), self.position(span.end))
    }

    /// The byte offset of `position`; a line past the end gives the end of the text, a
    /// character past the end of its line gives the end of the line.
    pub fn offset(&self, position: Position) -> usize {
        let line = position.line as usize;
        let Some(&start) = self.line_starts.get(line) else {
            return self.text.len();
        };
        let end = self
            .line_starts
            .get(line + 1)
            .map_or(self.text.len(), |&next| next - 1);
        let mut units = 0usize;
        for (i, c) in self.text[start..end].char_indices() {
            if units >= position.character as usize {
                return start + i;
            }
            units += c.len_utf16();
        }
        end
    }
}

/// Applies one `didChange` content change to `text`: replaces `range`, or the whole text
/// when there is no range.
pub fn apply_change(text: &mut String, range: Option<Range>, new_text: &str) {
    match range {
        None => {
            text.clear();
            text.push_str(new_text);
        }
        Some(range) => {
            let index = LineIndex::new(text);
            let start = index.offset(range.start);
            let end = index.offset(range.end).max(start);
            text.replace_range(start..end, new_text);
        }
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns() {
        let text = "ab\nλ𝄞x\n";
        let index = LineIndex::new(text);
        assert_eq!(index.position(0), Position::new(0, 0));
        assert_eq!(index.position(3), Position::new(1, 0));
        // λ is 2 bytes / 1 unit, 𝄞 is 4 bytes / 2 units.
        assert_eq!(index.position(9), Position::new(1, 3));
        assert_eq!(index.offset(Position::new(1, 3)), 9);
        assert_eq!(
            index.position(4),
            Position::new(1, 0),
            "inside λ moves back"
        );
        assert_eq!(
            index.offset(Position::new(1, 99)),
            10,
            "clamped to the line"
        );
        assert_eq!(index.offset(Position::new(9, 0)), text.len());
        assert_eq!(index.position(999), Position::new(2, 0));
    }

    #[test]
    fn incremental_changes() {
        let mut text = String::from("hello\nworld\n");
        apply_change(
            &mut text,
            Some(Range::new(Position::new(1, 0), Position::new(1, 5))),
            "there",
        );
        assert_eq!(text, "hello\nthere\n");
        apply_change(
            &mut text,
            Some(Range::new(Position::new(0, 5), Position::new(1, 0))),
            " ",
        );
        assert_eq!(text, "hello there\n");
        // A reversed range deletes nothing and inserts at its start.
        apply_change(
            &mut text,
            Some(Range::new(Position::new(0, 5), Position::new(0, 2))),
            "!",
        );
        assert_eq!(text, "hello! there\n");
        apply_change(&mut text, None, "new");
        assert_eq!(text, "new");
    }
}

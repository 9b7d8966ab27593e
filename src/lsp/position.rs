//! Position encodings: LSP counts characters in UTF-16 code units unless client and server agree on
//! another encoding at `initialize`. Callers of this module think in Unicode code points (what our
//! tools expose); this module converts at the wire.
//!
//! Lines end at LF, CR LF or a lone CR, as LSP specifies and as the workspace splits them
//! (`crate::text::line_starts`); clangd itself only splits at LF, so documents go to it with every
//! lone CR sent as LF (`crate::text::lone_cr_as_lf`, same length and offsets).
//!
//! Architecture invariant: conversions never panic on positions a server makes up: a character past
//! the end of its line clamps to the line's end, and a UTF-16 offset inside a surrogate pair counts the
//! whole character as before it.

use lsp_types::PositionEncodingKind;

/// The unit of `Position.character` on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PositionEncoding {
    Utf8,
    Utf16,
    Utf32,
}

impl PositionEncoding {
    /// The encoding named by a server, if we know it.
    pub fn from_name(name: &str) -> Option<PositionEncoding> {
        match name {
            "utf-8" => Some(PositionEncoding::Utf8),
            "utf-16" => Some(PositionEncoding::Utf16),
            "utf-32" => Some(PositionEncoding::Utf32),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PositionEncoding::Utf8 => "utf-8",
            PositionEncoding::Utf16 => "utf-16",
            PositionEncoding::Utf32 => "utf-32",
        }
    }

    pub fn kind(self) -> PositionEncodingKind {
        match self {
            PositionEncoding::Utf8 => PositionEncodingKind::UTF8,
            PositionEncoding::Utf16 => PositionEncodingKind::UTF16,
            PositionEncoding::Utf32 => PositionEncodingKind::UTF32,
        }
    }

    fn units(self, ch: char) -> u32 {
        match self {
            PositionEncoding::Utf8 => ch.len_utf8() as u32,
            PositionEncoding::Utf16 => ch.len_utf16() as u32,
            PositionEncoding::Utf32 => 1,
        }
    }

    /// Wire units of the first `code_points` characters of `line` (clamped to the line).
    pub fn to_wire(self, line: &str, code_points: u32) -> u32 {
        if self == PositionEncoding::Utf32 {
            return code_points.min(line.chars().count() as u32);
        }
        line.chars().take(code_points as usize).map(|ch| self.units(ch)).sum()
    }

    /// Code points before wire offset `units` of `line` (clamped to the line; an offset inside a
    /// character does not count that character).
    pub fn from_wire(self, line: &str, units: u32) -> u32 {
        let mut seen = 0u32;
        let mut res = 0u32;
        for ch in line.chars() {
            let next = seen + self.units(ch);
            if next > units {
                break;
            }
            seen = next;
            res += 1;
        }
        res
    }
}

/// A position in code points: zero-based line and zero-based character.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TextPosition {
    pub line: u32,
    pub character: u32,
}

/// The lines of one text, for converting positions.
#[derive(Debug, Clone)]
pub struct LineIndex {
    text: String,
    /// Byte offset where each line starts.
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: impl Into<String>) -> LineIndex {
        let text = text.into();
        let starts = crate::text::line_starts(&text);
        LineIndex { text, starts }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Number of lines; a final line without LF counts, and so does the empty line after a final LF.
    pub fn line_count(&self) -> u32 {
        self.starts.len() as u32
    }

    /// Line `line` (zero-based) without its ending; `None` past the last line.
    pub fn line(&self, line: u32) -> Option<&str> {
        let start = *self.starts.get(line as usize)?;
        let end = self.starts.get(line as usize + 1).copied().unwrap_or(self.text.len());
        Some(crate::text::trim_line_ending(&self.text[start..end]))
    }

    /// Line `line` (zero-based) with its LF, CR LF or CR ending, if it has one.
    pub fn line_with_ending(&self, line: u32) -> Option<&str> {
        let start = *self.starts.get(line as usize)?;
        let end = self.starts.get(line as usize + 1).copied().unwrap_or(self.text.len());
        Some(&self.text[start..end])
    }

    /// Characters (code points) of line `line`, or `None` past the last line.
    pub fn line_length(&self, line: u32) -> Option<u32> {
        self.line(line).map(|text| text.chars().count() as u32)
    }

    /// The wire position of a code-point position.
    pub fn to_wire(&self, position: TextPosition, encoding: PositionEncoding) -> lsp_types::Position {
        let line = self.line(position.line).unwrap_or("");
        lsp_types::Position { line: position.line, character: encoding.to_wire(line, position.character) }
    }

    /// The code-point position of a wire position.
    pub fn from_wire(&self, position: lsp_types::Position, encoding: PositionEncoding) -> TextPosition {
        let character = match self.line(position.line) {
            Some(line) => encoding.from_wire(line, position.character),
            // A position past the last line cannot be checked; keep what the server said.
            None => position.character,
        };
        TextPosition { line: position.line, character }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "a😀b€c";

    #[test]
    fn utf16_counts_surrogate_pairs_as_two_units() {
        let enc = PositionEncoding::Utf16;
        // Code points: a=0, 😀=1, b=2, €=3, c=4.
        assert_eq!(enc.to_wire(LINE, 0), 0);
        assert_eq!(enc.to_wire(LINE, 1), 1);
        assert_eq!(enc.to_wire(LINE, 2), 3);
        assert_eq!(enc.to_wire(LINE, 3), 4);
        assert_eq!(enc.to_wire(LINE, 5), 6);
        assert_eq!(enc.from_wire(LINE, 3), 2);
        assert_eq!(enc.from_wire(LINE, 6), 5);
    }

    #[test]
    fn an_offset_inside_a_surrogate_pair_stays_before_it() {
        assert_eq!(PositionEncoding::Utf16.from_wire(LINE, 2), 1);
        assert_eq!(PositionEncoding::Utf8.from_wire(LINE, 3), 1);
    }

    #[test]
    fn utf8_and_utf32_units() {
        assert_eq!(PositionEncoding::Utf8.to_wire(LINE, 2), 5);
        assert_eq!(PositionEncoding::Utf8.to_wire(LINE, 4), 9);
        assert_eq!(PositionEncoding::Utf8.from_wire(LINE, 9), 4);
        assert_eq!(PositionEncoding::Utf32.to_wire(LINE, 4), 4);
        assert_eq!(PositionEncoding::Utf32.from_wire(LINE, 4), 4);
    }

    #[test]
    fn positions_past_the_line_end_clamp() {
        for enc in [PositionEncoding::Utf8, PositionEncoding::Utf16, PositionEncoding::Utf32] {
            assert_eq!(enc.from_wire(LINE, 100), 5, "{enc:?}");
            assert_eq!(enc.from_wire(LINE, enc.to_wire(LINE, 100)), 5, "{enc:?}");
        }
    }

    #[test]
    fn round_trips_at_every_character_boundary() {
        for enc in [PositionEncoding::Utf8, PositionEncoding::Utf16, PositionEncoding::Utf32] {
            for cp in 0..=5 {
                assert_eq!(enc.from_wire(LINE, enc.to_wire(LINE, cp)), cp, "{enc:?} at {cp}");
            }
        }
    }

    #[test]
    fn lines_split_at_lf_crlf_and_lone_cr_and_drop_their_endings() {
        let index = LineIndex::new("one\r\n😀x\nlone\rcr");
        assert_eq!(index.line_count(), 4);
        assert_eq!(index.line(0), Some("one"));
        assert_eq!(index.line(1), Some("😀x"));
        assert_eq!(index.line(2), Some("lone"));
        assert_eq!(index.line(3), Some("cr"));
        assert_eq!(index.line(4), None);
        assert_eq!(index.line_with_ending(0), Some("one\r\n"));
        assert_eq!(index.line_with_ending(2), Some("lone\r"));
        assert_eq!(LineIndex::new("a\n").line_count(), 2);
        assert_eq!(LineIndex::new("a\n").line(1), Some(""));
    }

    #[test]
    fn the_index_converts_whole_positions() {
        let index = LineIndex::new("int x;\n// 😀 y\n");
        let wire = index.to_wire(TextPosition { line: 1, character: 5 }, PositionEncoding::Utf16);
        assert_eq!(wire, lsp_types::Position { line: 1, character: 6 });
        assert_eq!(index.from_wire(wire, PositionEncoding::Utf16), TextPosition { line: 1, character: 5 });
        // Past the last line the character is kept as it is.
        let far = lsp_types::Position { line: 9, character: 4 };
        assert_eq!(index.from_wire(far, PositionEncoding::Utf16), TextPosition { line: 9, character: 4 });
    }

    #[test]
    fn encoding_names() {
        for enc in [PositionEncoding::Utf8, PositionEncoding::Utf16, PositionEncoding::Utf32] {
            assert_eq!(PositionEncoding::from_name(enc.name()), Some(enc));
            assert_eq!(enc.kind().as_str(), enc.name());
        }
        assert_eq!(PositionEncoding::from_name("utf-7"), None);
    }
}

//! What the searcher reports per matching line, the match spans of kept lines, and the window
//! a long line is clipped to.

use std::io;

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, Sink, SinkMatch};

use super::{FoundLine, LineClip};

/// A line without its LF or CR LF terminator.
pub(super) fn trim_terminator(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Counts matching lines and records the first `room` of them.
pub(super) struct LineSink<'s> {
    pub(super) matcher: &'s RegexMatcher,
    /// The searcher runs the matcher over whole buffers, where a zero-width pattern can match between
    /// CR and LF only; such a line has no match in its text, so it must not count.
    pub(super) recheck_crlf_lines: bool,
    pub(super) room: usize,
    pub(super) n_lines: u64,
    pub(super) found: &'s mut Vec<FoundLine>,
    /// Where to copy recorded lines, when the searched bytes do not stay in memory.
    pub(super) copies: Option<&'s mut Vec<u8>>,
}

impl Sink for LineSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let mut line_start = usize::try_from(mat.absolute_byte_offset()).unwrap_or(usize::MAX);
        let mut line_number = mat.line_number();
        for line in mat.lines() {
            let line_end = line_start.saturating_add(line.len());
            let counts = !self.recheck_crlf_lines
                || !line.ends_with(b"\r\n")
                || self.matcher.is_match(&line[..line.len() - 2]).unwrap_or(true);
            if counts {
                self.n_lines += 1;
                if self.found.len() < self.room {
                    let found = match self.copies.as_deref_mut() {
                        Some(copies) => {
                            let start = copies.len();
                            copies.extend_from_slice(line);
                            FoundLine { line: line_number, start, end: copies.len() }
                        }
                        None => FoundLine { line: None, start: line_start, end: line_end },
                    };
                    self.found.push(found);
                }
            }
            line_start = line_end;
            line_number = line_number.map(|n| n + 1);
        }
        Ok(true)
    }
}

/// Every match of `matcher` in `line`, as code point spans.
///
/// After an empty match the search resumes at the next character, and an empty match right where the
/// previous match ended is dropped, as the `regex` crate's `find_iter` does.
pub(super) fn spans(matcher: &RegexMatcher, line: &str) -> Vec<[usize; 2]> {
    let bytes = line.as_bytes();
    let mut byte_spans = Vec::new();
    let (mut at, mut last_end) = (0, None);
    while at <= bytes.len() {
        let Ok(Some(m)) = matcher.find_at(bytes, at) else { break };
        if m.is_empty() {
            at = next_char_boundary(line, m.end());
            if last_end == Some(m.end()) || !line.is_char_boundary(m.end()) {
                continue;
            }
        } else {
            at = m.end();
        }
        last_end = Some(m.end());
        byte_spans.push([m.start(), m.end()]);
    }
    if line.is_ascii() {
        return byte_spans;
    }
    // Offsets only grow along the spans, so one pass converts them all.
    let (mut byte_pos, mut char_pos) = (0, 0);
    let mut to_chars = |offset: usize| {
        char_pos += bytes[byte_pos..offset].iter().filter(|&&b| !is_continuation_byte(b)).count();
        byte_pos = offset;
        char_pos
    };
    byte_spans.into_iter().map(|[start, end]| [to_chars(start), to_chars(end)]).collect()
}

fn next_char_boundary(line: &str, offset: usize) -> usize {
    let mut next = offset + 1;
    while next < line.len() && !line.is_char_boundary(next) {
        next += 1;
    }
    next
}

fn is_continuation_byte(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// Lines longer than this many characters are returned as a window around their first match.
pub const LONG_LINE_CHARS: usize = 400;
/// The characters a long line's window holds.
pub const LONG_LINE_WINDOW: usize = 200;

/// A long line's window of [`LONG_LINE_WINDOW`] characters around its first match, with the spans
/// inside it made relative to it; other lines as they are.
pub(super) fn clip_long_line(line: &str, spans: Vec<[usize; 2]>) -> (String, Vec<[usize; 2]>, Option<LineClip>) {
    let line_chars = line.chars().count();
    if line_chars <= LONG_LINE_CHARS {
        return (line.to_owned(), spans, None);
    }
    let first = spans.first().map_or(0, |span| span[0]);
    let from = first.saturating_sub(LONG_LINE_WINDOW / 4).min(line_chars - LONG_LINE_WINDOW);
    let to = from + LONG_LINE_WINDOW;
    let text: String = line.chars().skip(from).take(LONG_LINE_WINDOW).collect();
    let spans = spans
        .into_iter()
        .filter(|span| span[0] < to && span[1] >= from)
        .map(|span| [span[0].max(from) - from, span[1].min(to) - from])
        .collect();
    (text, spans, Some(LineClip { line_chars, from }))
}

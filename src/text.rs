//! Small text helpers shared by more than one module: error chains, line splitting, counts in words.
//!
//! Architecture invariant: a line ends at LF, CR LF or a lone CR (INTERFACE.md decision 6), for
//! search, reads, diffs and clangd positions alike (LSP counts the same three endings), so their
//! line numbers agree; text without CR takes a memchr fast path on LF alone.

/// `1 file`, `3 files`: a count with the word for it.
pub fn plural<N: std::fmt::Display + PartialEq + From<u8>>(n: N, one: &str, many: &str) -> String {
    let word = if n == N::from(1) { one } else { many };
    format!("{n} {word}")
}

/// An error and its sources as one lowercase line (`a: b: c`); a source whose text is already part
/// of the line is not repeated.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Splits text into lines that keep their endings (LF, CR LF or a lone CR); no empty line follows
/// a final ending.
pub fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    let has_cr = memchr::memchr(b'\r', text.as_bytes()).is_some();
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let bytes = rest.as_bytes();
        let end = if has_cr {
            match memchr::memchr2(b'\n', b'\r', bytes) {
                Some(at) if bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n') => at + 2,
                Some(at) => at + 1,
                None => bytes.len(),
            }
        } else {
            memchr::memchr(b'\n', bytes).map_or(bytes.len(), |at| at + 1)
        };
        let (line, tail) = rest.split_at(end);
        rest = tail;
        Some(line)
    })
}

/// The largest char boundary `<= idx`.
pub fn floor_char_boundary(text: &str, idx: usize) -> usize {
    if idx >= text.len() {
        return text.len();
    }
    (0..=idx).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0)
}

/// Removes a trailing LF, CR LF or lone CR.
pub fn trim_line_ending(line: &str) -> &str {
    match line.strip_suffix('\n') {
        Some(line) => line.strip_suffix('\r').unwrap_or(line),
        None => line.strip_suffix('\r').unwrap_or(line),
    }
}

/// The byte offset where each line starts: 0, then after every line ending (so text ending with a
/// line ending has an empty last line, as LSP counts it).
pub fn line_starts(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut starts = vec![0];
    if memchr::memchr(b'\r', bytes).is_none() {
        starts.extend(memchr::memchr_iter(b'\n', bytes).map(|at| at + 1));
        return starts;
    }
    for at in memchr::memchr2_iter(b'\n', b'\r', bytes) {
        // The CR of a CR LF ends nothing by itself; its LF ends the line.
        if bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n') {
            continue;
        }
        starts.push(at + 1);
    }
    starts
}

/// The text with every lone CR replaced by LF (same length and offsets), for consumers that only
/// split lines at LF (clangd); borrowed when there is none.
pub fn lone_cr_as_lf(text: &str) -> std::borrow::Cow<'_, str> {
    if !has_lone_cr(text.as_bytes()) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut owned = text.as_bytes().to_vec();
    replace_lone_cr(&mut owned);
    // Replacing one ASCII byte by another keeps the text valid UTF-8.
    std::borrow::Cow::Owned(String::from_utf8(owned).unwrap_or_else(|_| text.to_owned()))
}

/// Replaces every lone CR in `bytes` by LF, in place; returns whether there was one. A CR at the
/// very end counts as lone.
pub fn replace_lone_cr(bytes: &mut [u8]) -> bool {
    if !has_lone_cr(bytes) {
        return false;
    }
    let (mut found, mut from) = (false, 0);
    while let Some(offset) = memchr::memchr(b'\r', &bytes[from..]) {
        let at = from + offset;
        if bytes.get(at + 1) != Some(&b'\n') {
            bytes[at] = b'\n';
            found = true;
        }
        from = at + 1;
    }
    found
}

/// Whether `bytes` holds a CR not followed by LF (a CR at the end counts). Text without CR costs
/// one memchr pass; CR LF text is checked in blocks by a loop the compiler vectorizes, so a search
/// pays no per-line cost for it.
pub fn has_lone_cr(bytes: &[u8]) -> bool {
    let Some(first) = memchr::memchr(b'\r', bytes) else { return false };
    if bytes.last() == Some(&b'\r') {
        return true;
    }
    let rest = &bytes[first..];
    const BLOCK: usize = 64 * 1024;
    let mut start = 0;
    while start + 1 < rest.len() {
        let end = (start + BLOCK).min(rest.len() - 1);
        let (current, next) = (&rest[start..end], &rest[start + 1..end + 1]);
        let lone = current.iter().zip(next).fold(false, |acc, (&a, &b)| acc | ((a == b'\r') & (b != b'\n')));
        if lone {
            return true;
        }
        start = end;
    }
    false
}

/// A reader that hands on its input with every lone CR as LF (a CR that ends one read waits for
/// the next byte), so a line searcher splitting at LF sees the lines of [`split_lines`].
pub struct LoneCrAsLf<R> {
    inner: R,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    /// The last byte read was a CR, not yet handed on: the next byte decides what it is.
    held_cr: bool,
    eof: bool,
}

impl<R: std::io::Read> LoneCrAsLf<R> {
    pub fn new(inner: R) -> LoneCrAsLf<R> {
        LoneCrAsLf { inner, buf: vec![0; 64 * 1024].into(), start: 0, end: 0, held_cr: false, eof: false }
    }

    fn fill(&mut self) -> std::io::Result<()> {
        let carried = usize::from(self.held_cr);
        if self.held_cr {
            self.buf[0] = b'\r';
        }
        let n_read = self.inner.read(&mut self.buf[carried..])?;
        self.start = 0;
        if n_read == 0 {
            self.eof = true;
            self.buf[0] = b'\n';
            self.end = carried;
            self.held_cr = false;
            return Ok(());
        }
        let total = carried + n_read;
        self.held_cr = self.buf[total - 1] == b'\r';
        self.end = total - usize::from(self.held_cr);
        replace_lone_cr(&mut self.buf[..self.end]);
        Ok(())
    }
}

impl<R: std::io::Read> std::io::Read for LoneCrAsLf<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.start == self.end {
            if self.eof || out.is_empty() {
                return Ok(0);
            }
            self.fill()?;
        }
        let n = out.len().min(self.end - self.start);
        out[..n].copy_from_slice(&self.buf[self.start..self.start + n]);
        self.start += n;
        Ok(n)
    }
}

/// The line ending a text uses throughout, when it has at least one ending and all are the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEndings {
    Lf,
    CrLf,
    Cr,
    Mixed,
}

/// Which line endings `text` uses; `None` when it has none.
pub fn line_endings(text: &str) -> Option<LineEndings> {
    let bytes = text.as_bytes();
    let (mut lf, mut crlf, mut cr) = (false, false, false);
    for at in memchr::memchr2_iter(b'\n', b'\r', bytes) {
        match bytes[at] {
            b'\n' if at > 0 && bytes[at - 1] == b'\r' => {}
            b'\n' => lf = true,
            _ if bytes.get(at + 1) == Some(&b'\n') => crlf = true,
            _ => cr = true,
        }
    }
    match (lf, crlf, cr) {
        (false, false, false) => None,
        (true, false, false) => Some(LineEndings::Lf),
        (false, true, false) => Some(LineEndings::CrLf),
        (false, false, true) => Some(LineEndings::Cr),
        _ => Some(LineEndings::Mixed),
    }
}

/// `text` with every character that could change how a one-line message reads escaped: line breaks
/// and other control characters, Unicode line and paragraph separators, and bidirectional
/// overrides and isolates become `\n`, `\r`, `\t` or `\u{…}` (backslashes stay, so Windows paths
/// read as they are).
pub fn escape_controls(text: &str) -> String {
    let mut res = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => res.push_str("\\n"),
            '\r' => res.push_str("\\r"),
            '\t' => res.push_str("\\t"),
            c if c.is_control()
                || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') =>
            {
                res.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            }
            c => res.push(c),
        }
    }
    res
}

#[cfg(test)]
mod tests {
    #[test]
    fn controls_line_breaks_and_bidi_overrides_are_escaped() {
        let escaped = super::escape_controls("/tmp/a\nAllow? yes\r\t\u{1b}[2J\u{202e}b\\c\u{2028}é");
        assert_eq!(escaped, "/tmp/a\\nAllow? yes\\r\\t\\u{1b}[2J\\u{202e}b\\c\\u{2028}é");
    }

    use super::*;

    #[test]
    fn lines_end_at_lf_crlf_and_lone_cr() {
        let lines: Vec<&str> = split_lines("a\r\nb\rc\nd").collect();
        assert_eq!(lines, vec!["a\r\n", "b\r", "c\n", "d"]);
        assert_eq!(split_lines("x\ny\n").collect::<Vec<_>>(), vec!["x\n", "y\n"]);
        assert_eq!(split_lines("\r\r\n\n").collect::<Vec<_>>(), vec!["\r", "\r\n", "\n"]);
        assert_eq!(split_lines("").count(), 0);
        assert_eq!(trim_line_ending("a\r\n"), "a");
        assert_eq!(trim_line_ending("b\r"), "b");
        assert_eq!(trim_line_ending("c\n"), "c");
        assert_eq!(trim_line_ending("d"), "d");
        assert_eq!(line_starts("a\r\nb\rc\nd"), vec![0, 3, 5, 7]);
        assert_eq!(line_starts("a\nb\n"), vec![0, 2, 4]);
        assert_eq!(line_starts("a\r"), vec![0, 2]);
        assert_eq!(lone_cr_as_lf("a\rb\r\nc\r"), "a\nb\r\nc\n");
        assert!(matches!(lone_cr_as_lf("a\r\nb"), std::borrow::Cow::Borrowed(_)));
        let mut crlf = "a\r\n".repeat(40_000).into_bytes();
        assert!(!has_lone_cr(&crlf));
        crlf[100_001] = b'x';
        assert!(has_lone_cr(&crlf), "a lone CR past the first block");
        assert!(has_lone_cr(b"a\r"));
        assert!(!has_lone_cr(b"plain\n"));
    }

    #[test]
    fn the_reader_turns_lone_cr_into_lf_across_reads() {
        use std::io::Read as _;
        // One byte per inner read: every CR ends a read.
        struct Slow<'a>(&'a [u8]);
        impl std::io::Read for Slow<'_> {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                let Some((first, rest)) = self.0.split_first() else { return Ok(0) };
                out[0] = *first;
                self.0 = rest;
                Ok(1)
            }
        }
        for input in ["a\rb\r\nc\r", "\r\r\n\r", "plain\n", ""] {
            let mut out = String::new();
            LoneCrAsLf::new(Slow(input.as_bytes())).read_to_string(&mut out).unwrap();
            assert_eq!(out, lone_cr_as_lf(input), "{input:?}");
        }
    }

    #[test]
    fn uniform_endings_are_named() {
        assert_eq!(line_endings("a\r\nb\r\n"), Some(LineEndings::CrLf));
        assert_eq!(line_endings("a\nb"), Some(LineEndings::Lf));
        assert_eq!(line_endings("a\rb\r"), Some(LineEndings::Cr));
        assert_eq!(line_endings("a\r\nb\n"), Some(LineEndings::Mixed));
        assert_eq!(line_endings("ab"), None);
    }

    #[test]
    fn sources_are_joined_once() {
        #[derive(Debug, thiserror::Error)]
        #[error("failed to read `project/a`")]
        struct Outer(#[source] std::io::Error);
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        assert_eq!(error_chain(&Outer(io)), "failed to read `project/a`: no such file");
    }
}

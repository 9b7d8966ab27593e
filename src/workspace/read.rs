//! Reading UTF-8 text files, whole or by line range.
//!
//! Lines end at LF, CR LF or a lone CR (`crate::text::split_lines`). The selected lines keep their
//! original endings so the excerpt is byte-exact.

use std::io::Read;

use crate::call::Call;
use crate::workspace::opened::{self, Place, Purpose, open_checked};
use crate::workspace::path::{Area, LinkPolicy, QualifiedPath};
use crate::workspace::{Error, WorkspaceService};

/// A selected excerpt of a text file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileExcerpt {
    pub path: QualifiedPath,
    /// The selected lines with their original endings; empty past the end of the file.
    pub text: String,
    /// The first line requested (1-based).
    pub start_line: u64,
    /// Set when an open-ended read was cut to [`OPEN_READ_MAX_LINES`] / [`OPEN_READ_MAX_BYTES`]:
    /// where to continue, and how many lines the file has.
    pub continuation: Option<Continuation>,
}

/// Where a cut read continues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Continuation {
    pub next_start_line: u64,
    pub total_lines: u64,
}

/// The most lines a read without `end_line` returns (a tool result must fit a model's limit:
/// Claude Code refuses results over about 25,000 tokens).
pub const OPEN_READ_MAX_LINES: usize = 2000;
/// The most bytes of text a read without `end_line` returns (at least one line is always returned).
pub const OPEN_READ_MAX_BYTES: usize = 80 * 1000;

impl FileExcerpt {
    /// Cuts the excerpt of a read without `end_line` (which runs to the end of the file) to
    /// [`OPEN_READ_MAX_LINES`] lines and [`OPEN_READ_MAX_BYTES`] bytes, recording where to continue.
    /// This is the one place the default read size is decided; explicit ranges are never cut.
    pub fn limit_open_read(mut self) -> FileExcerpt {
        let (mut n_lines, mut n_bytes, mut cut) = (0usize, 0usize, None);
        for line in split_lines(&self.text) {
            if n_lines == OPEN_READ_MAX_LINES || (n_lines > 0 && n_bytes + line.len() > OPEN_READ_MAX_BYTES) {
                cut = Some(n_bytes);
                break;
            }
            n_lines += 1;
            n_bytes += line.len();
        }
        if let Some(at) = cut {
            let total_lines = self.start_line - 1 + split_lines(&self.text).count() as u64;
            self.text.truncate(at);
            self.continuation = Some(Continuation { next_start_line: self.start_line + n_lines as u64, total_lines });
        }
        self
    }

    /// The selected lines without their endings, numbered from `start_line`.
    pub fn numbered_lines(&self) -> impl Iterator<Item = (u64, &str)> {
        split_lines(&self.text).enumerate().map(|(idx, line)| (self.start_line + idx as u64, trim_line_ending(line)))
    }
}

pub use crate::text::{split_lines, trim_line_ending};

/// Decodes file bytes as text: valid UTF-8 without NUL bytes.
pub fn decode_text(path: &QualifiedPath, bytes: Vec<u8>) -> Result<String, Error> {
    if memchr::memchr(0, &bytes).is_some() {
        return Err(Error::Binary { path: path.clone() });
    }
    String::from_utf8(bytes).map_err(|_| Error::NotUtf8 { path: path.clone() })
}

impl WorkspaceService {
    /// Reads lines `start_line..=end_line` (1-based, inclusive; `None` = to the end) of a managed
    /// file. In-root links are followed; links leaving the roots are refused.
    pub fn read_file(
        &self,
        path: &QualifiedPath,
        start_line: u64,
        end_line: Option<u64>,
        call: &Call,
    ) -> Result<FileExcerpt, Error> {
        if path.area() == Area::Root {
            return Err(Error::ExternalNotAllowed { path: path.clone() });
        }
        let _guard = self.read_lock();
        let resolved = self.resolve_existing(path, LinkPolicy::FollowInsideRoots)?;
        let file = open_checked(&resolved.abs, Place::InsideRoots(self.roots()), Purpose::Read)
            .map_err(|e| io_error(path, e))?;
        read_excerpt(path, file, start_line, end_line, call)
    }

    /// Reads the exact bytes of a managed file (any content).
    pub fn read_bytes(&self, path: &QualifiedPath) -> Result<Vec<u8>, Error> {
        let _guard = self.read_lock();
        let resolved = self.resolve_existing(path, LinkPolicy::FollowInsideRoots)?;
        let mut file = open_checked(&resolved.abs, Place::InsideRoots(self.roots()), Purpose::Read)
            .map_err(|e| io_error(path, e))?;
        let meta = file.metadata().map_err(|e| io_error(path, e))?;
        if !meta.is_file() {
            return Err(Error::NotAFile { path: path.clone() });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        file.read_to_end(&mut bytes).map_err(|e| io_error(path, e))?;
        Ok(bytes)
    }

    /// Reads an external `root/…` file. The caller must have obtained the user's permission.
    pub fn read_external_file(
        &self,
        path: &QualifiedPath,
        start_line: u64,
        end_line: Option<u64>,
        call: &Call,
    ) -> Result<FileExcerpt, Error> {
        let abs = path.external_path().ok_or_else(|| Error::ExternalNotAllowed { path: path.clone() })?;
        // The user allowed this path, whatever it leads to.
        let file = opened::open_unchecked(&abs, Purpose::Read).map_err(|e| io_error(path, e))?;
        read_excerpt(path, file, start_line, end_line, call)
    }
}

fn read_excerpt(
    path: &QualifiedPath,
    mut file: std::fs::File,
    start_line: u64,
    end_line: Option<u64>,
    call: &Call,
) -> Result<FileExcerpt, Error> {
    let meta = file.metadata().map_err(|e| io_error(path, e))?;
    if !meta.is_file() {
        return Err(Error::NotAFile { path: path.clone() });
    }
    call.progress.report(0.0, None, "Bytes read");
    // Read straight into the one buffer the text then lives in, a MiB at a time for progress and
    // cancellation.
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    loop {
        if call.is_cancelled() {
            return Err(Error::Cancelled);
        }
        let n = (&mut file).take(1 << 20).read_to_end(&mut bytes).map_err(|e| io_error(path, e))?;
        if n == 0 {
            break;
        }
        call.progress.report(bytes.len() as f64, None, "Bytes read");
    }
    let mut text = decode_text(path, bytes)?;
    let first = usize::try_from(start_line.saturating_sub(1)).unwrap_or(usize::MAX);
    let count = match end_line {
        Some(end) => usize::try_from(end - start_line + 1).unwrap_or(usize::MAX),
        None => usize::MAX,
    };
    // The selected lines are one range of the text: cut it in place instead of copying it.
    let (start, end) = line_range(&text, first, count);
    text.truncate(end);
    text.drain(..start);
    if text.len() < text.capacity() / 2 {
        text.shrink_to_fit();
    }
    Ok(FileExcerpt { path: path.clone(), text, start_line, continuation: None })
}

/// The byte range of `count` lines of `text` from line `first` (0-based; [`split_lines`]).
fn line_range(text: &str, first: usize, count: usize) -> (usize, usize) {
    let mut lines = split_lines(text);
    let start: usize = lines.by_ref().take(first).map(str::len).sum();
    let len: usize = lines.take(count).map(str::len).sum();
    (start, start + len)
}

fn io_error(path: &QualifiedPath, source: std::io::Error) -> Error {
    if source.kind() == std::io::ErrorKind::NotFound {
        return Error::Resolve(crate::workspace::path::ResolveError::NotFound { path: path.clone() });
    }
    Error::io(path, source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_range_is_the_bytes_of_its_lines() {
        // Lines: "a\n", "bb\r\n", "ccc\r", "d".
        let text = "a\nbb\r\nccc\rd";
        assert_eq!(line_range(text, 0, usize::MAX), (0, text.len()));
        assert_eq!(line_range(text, 1, 2), (2, 10));
        assert_eq!(&text[2..10], "bb\r\nccc\r");
        assert_eq!(line_range(text, 3, 1), (10, 11));
        assert_eq!(line_range(text, 9, 3), (text.len(), text.len()));
        assert_eq!(line_range("", 0, 5), (0, 0));
    }

    #[test]
    fn excerpt_numbers_lines_from_start() {
        let path = QualifiedPath::parse("a.txt").unwrap();
        let excerpt = FileExcerpt { path, text: "x\ny\r\n".into(), start_line: 4, continuation: None };
        assert_eq!(excerpt.numbered_lines().collect::<Vec<_>>(), vec![(4, "x"), (5, "y")]);
    }

    #[test]
    fn open_reads_stop_at_the_line_and_byte_limits() {
        let excerpt = |text: String, start_line| FileExcerpt {
            path: QualifiedPath::parse("a.txt").unwrap(),
            text,
            start_line,
            continuation: None,
        };
        let cut = excerpt("x\n".repeat(5000), 1).limit_open_read();
        assert_eq!(cut.text.len(), 2 * OPEN_READ_MAX_LINES);
        assert_eq!(cut.continuation, Some(Continuation { next_start_line: 2001, total_lines: 5000 }));
        let cut = excerpt("x\n".repeat(2000), 3001).limit_open_read();
        assert_eq!((cut.text.len(), cut.continuation), (4000, None), "exactly the limit is whole");
        let long = format!("{}\n", "y".repeat(30_000));
        let cut = excerpt(long.repeat(4), 1).limit_open_read();
        assert_eq!(cut.continuation, Some(Continuation { next_start_line: 3, total_lines: 4 }));
        assert_eq!(cut.text.len(), 2 * long.len());
        let huge = "z".repeat(OPEN_READ_MAX_BYTES * 2);
        let cut = excerpt(format!("{huge}\nrest\n"), 1).limit_open_read();
        assert_eq!(cut.text.len(), huge.len() + 1, "one line is always returned");
    }

    #[test]
    fn text_must_be_utf8_without_nul() {
        let path = QualifiedPath::parse("a.bin").unwrap();
        assert!(matches!(decode_text(&path, b"a\0b".to_vec()), Err(Error::Binary { .. })));
        assert!(matches!(decode_text(&path, vec![0xff, 0xfe]), Err(Error::NotUtf8 { .. })));
        assert_eq!(decode_text(&path, "é\n".as_bytes().to_vec()).unwrap(), "é\n");
    }
}

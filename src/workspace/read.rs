//! Reading UTF-8 text files, whole or by line range, within a byte budget.
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
    /// The selected lines with their original endings (a [`Clipped`] line cut short); empty past
    /// the end of the file. A leading byte-order mark is not part of line 1.
    pub text: String,
    /// The first line requested (1-based).
    pub start_line: u64,
    /// Set when the read was cut to its byte budget (or an open-ended one to
    /// [`OPEN_READ_MAX_LINES`]): where to continue.
    pub continuation: Option<Continuation>,
    /// Set when the first selected line alone is beyond the budget and only its start is returned.
    pub clipped: Option<Clipped>,
    /// The file starts with a UTF-8 byte-order mark.
    pub bom: bool,
}

/// Where a cut read continues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Continuation {
    pub next_start_line: u64,
    /// The last line of the selection: the file's last line, or `end_line` when it was given
    /// (`explicit`).
    pub last_line: u64,
    pub explicit: bool,
}

/// A line longer than the budget, returned cut short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clipped {
    pub line: u64,
    /// Characters of the whole line (without its ending).
    pub chars: u64,
    /// Characters returned.
    pub shown: u64,
}

/// The most lines a read without `end_line` returns.
pub const OPEN_READ_MAX_LINES: usize = 2000;
/// The default byte budget of a read (`max_bytes`): a tool result must fit a model's limit (Claude
/// Code refuses results over about 25,000 tokens). It bounds the numbered text and the structured
/// copy of the lines together, so a result is never twice the budget.
pub const DEFAULT_READ_MAX_BYTES: usize = 80 * 1000;

/// Bytes of a read's budget kept for the notes after its lines (at most a tenth of the budget).
const NOTES_ROOM: usize = 1000;

impl FileExcerpt {
    /// Cuts the excerpt at a line end so that its numbered copy and its raw text together stay within
    /// `max_bytes` (and an open-ended read, `explicit` false, to [`OPEN_READ_MAX_LINES`] lines),
    /// recording where to continue; a first line beyond the budget is clipped to its start. This is
    /// the one place the size of a read is decided.
    pub fn limit(mut self, explicit: bool, max_bytes: usize) -> FileExcerpt {
        let total = split_lines(&self.text).count();
        let last_line = self.start_line - 1 + total as u64;
        // Each line costs its raw bytes twice plus its number, the separator and a line break.
        let overhead = last_line.to_string().len() + 4;
        let max_lines = if explicit { usize::MAX } else { OPEN_READ_MAX_LINES };
        // Room for the notes the text ends with (a cut, an encoding, line endings, providers).
        let max_bytes = max_bytes - (max_bytes / 10).min(NOTES_ROOM);
        let (mut n_lines, mut n_bytes, mut spent, mut cut) = (0usize, 0usize, 0usize, None);
        for line in split_lines(&self.text) {
            let cost = 2 * line.len() + overhead;
            if n_lines == max_lines || spent + cost > max_bytes {
                cut = Some(n_bytes);
                break;
            }
            n_lines += 1;
            n_bytes += line.len();
            spent += cost;
        }
        let Some(at) = cut else { return self };
        if n_lines == 0 {
            // Not even the first line fits: return its start.
            let line = trim_line_ending(split_lines(&self.text).next().unwrap_or_default());
            let keep = crate::text::floor_char_boundary(line, max_bytes.saturating_sub(overhead) / 2);
            self.clipped = Some(Clipped {
                line: self.start_line,
                chars: line.chars().count() as u64,
                shown: line[..keep].chars().count() as u64,
            });
            self.text.truncate(keep);
            n_lines = 1;
        } else {
            self.text.truncate(at);
        }
        let next_start_line = self.start_line + n_lines as u64;
        if next_start_line <= last_line {
            self.continuation = Some(Continuation { next_start_line, last_line, explicit });
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
    let bom = text.starts_with('\u{feff}');
    if bom {
        text.drain(..'\u{feff}'.len_utf8());
    }
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
    Ok(FileExcerpt { path: path.clone(), text, start_line, continuation: None, clipped: None, bom })
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
        let excerpt =
            FileExcerpt { path, text: "x\ny\r\n".into(), start_line: 4, continuation: None, clipped: None, bom: false };
        assert_eq!(excerpt.numbered_lines().collect::<Vec<_>>(), vec![(4, "x"), (5, "y")]);
    }

    #[test]
    fn reads_stop_at_the_line_limit_and_the_byte_budget() {
        let excerpt = |text: String, start_line| FileExcerpt {
            path: QualifiedPath::parse("a.txt").unwrap(),
            text,
            start_line,
            continuation: None,
            clipped: None,
            bom: false,
        };
        let budget = DEFAULT_READ_MAX_BYTES;
        let cut = excerpt("x\n".repeat(5000), 1).limit(false, budget);
        assert_eq!(cut.text.len(), 2 * OPEN_READ_MAX_LINES);
        let next = Continuation { next_start_line: 2001, last_line: 5000, explicit: false };
        assert_eq!(cut.continuation, Some(next));
        let cut = excerpt("x\n".repeat(2000), 3001).limit(false, budget);
        assert_eq!((cut.text.len(), cut.continuation), (4000, None), "exactly the limit is whole");
        assert_eq!(excerpt("x\n".repeat(5000), 1).limit(true, budget).continuation, None, "ranges have no line limit");
        // Lines of 20,000 bytes cost 40,000 and more each: one fits in 79,000.
        let long = format!("{}\n", "y".repeat(20_000));
        let cut = excerpt(long.repeat(4), 10).limit(true, budget);
        assert_eq!(cut.continuation, Some(Continuation { next_start_line: 11, last_line: 13, explicit: true }));
        assert_eq!((cut.text.len(), cut.clipped), (long.len(), None));
        // A line beyond the budget is clipped to its start.
        let huge = "z".repeat(budget * 2);
        let cut = excerpt(format!("{huge}\nrest\n"), 1).limit(false, budget);
        assert_eq!(cut.clipped, Some(Clipped { line: 1, chars: huge.len() as u64, shown: 39_497 }));
        assert_eq!(cut.text.len(), 39_497);
        assert_eq!(cut.continuation.map(|c| c.next_start_line), Some(2));
    }

    #[test]
    fn text_must_be_utf8_without_nul() {
        let path = QualifiedPath::parse("a.bin").unwrap();
        assert!(matches!(decode_text(&path, b"a\0b".to_vec()), Err(Error::Binary { .. })));
        assert!(matches!(decode_text(&path, vec![0xff, 0xfe]), Err(Error::NotUtf8 { .. })));
        assert_eq!(decode_text(&path, "é\n".as_bytes().to_vec()).unwrap(), "é\n");
    }
}

//! Reading UTF-8 text files, whole or by line range.
//!
//! Lines end at LF; a CR before the LF belongs to the line ending; a lone CR is text. The selected
//! lines keep their original endings so the excerpt is byte-exact.

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
}

impl FileExcerpt {
    /// The selected lines without their endings, numbered from `start_line`.
    pub fn numbered_lines(&self) -> impl Iterator<Item = (u64, &str)> {
        split_lines(&self.text).enumerate().map(|(idx, line)| (self.start_line + idx as u64, trim_line_ending(line)))
    }
}

/// Splits text into lines that keep their `\n` (and `\r\n`) endings.
pub fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive('\n')
}

/// Removes a trailing `\n` or `\r\n`.
pub fn trim_line_ending(line: &str) -> &str {
    match line.strip_suffix('\n') {
        Some(line) => line.strip_suffix('\r').unwrap_or(line),
        None => line,
    }
}

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
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        if call.is_cancelled() {
            return Err(Error::Cancelled);
        }
        let n = file.read(&mut chunk).map_err(|e| io_error(path, e))?;
        if n == 0 {
            break;
        }
        bytes.extend_from_slice(&chunk[..n]);
        call.progress.report(bytes.len() as f64, None, "Bytes read");
    }
    let text = decode_text(path, bytes)?;
    let first = usize::try_from(start_line.saturating_sub(1)).unwrap_or(usize::MAX);
    let count = match end_line {
        Some(end) => usize::try_from(end - start_line + 1).unwrap_or(usize::MAX),
        None => usize::MAX,
    };
    let selected: String = split_lines(&text).skip(first).take(count).collect();
    Ok(FileExcerpt { path: path.clone(), text: selected, start_line })
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
    fn lines_keep_endings_and_lone_cr_is_text() {
        let lines: Vec<&str> = split_lines("a\r\nb\rc\nd").collect();
        assert_eq!(lines, vec!["a\r\n", "b\rc\n", "d"]);
        assert_eq!(trim_line_ending("a\r\n"), "a");
        assert_eq!(trim_line_ending("b\rc\n"), "b\rc");
        assert_eq!(trim_line_ending("x\r"), "x\r");
        assert_eq!(trim_line_ending("d"), "d");
    }

    #[test]
    fn excerpt_numbers_lines_from_start() {
        let path = QualifiedPath::parse("a.txt").unwrap();
        let excerpt = FileExcerpt { path, text: "x\ny\r\n".into(), start_line: 4 };
        assert_eq!(excerpt.numbered_lines().collect::<Vec<_>>(), vec![(4, "x"), (5, "y")]);
    }

    #[test]
    fn text_must_be_utf8_without_nul() {
        let path = QualifiedPath::parse("a.bin").unwrap();
        assert!(matches!(decode_text(&path, b"a\0b".to_vec()), Err(Error::Binary { .. })));
        assert!(matches!(decode_text(&path, vec![0xff, 0xfe]), Err(Error::NotUtf8 { .. })));
        assert_eq!(decode_text(&path, "é\n".as_bytes().to_vec()).unwrap(), "é\n");
    }
}

//! Between clangd's world and ours: `file://` URIs and qualified paths (`root/…` for locations
//! outside the project and storage), wire positions and one-based code-point positions, source
//! reads, and saved previews around locations.
//!
//! Architecture invariant: files are read only inside the managed roots, through `Roots` with the
//! workspace's link rule (in-root links followed, links leaving the roots refused); external
//! `root/…` locations are never read, so they get no preview and their characters stay as clangd
//! sent them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

use super::Error;
use super::model::{Position, Preview, SourceRange};
use crate::lsp::{LineIndex, PositionEncoding, TextPosition};
use crate::workspace::path::{LinkPolicy, QualifiedPath, Roots};
use crate::workspace::read::decode_text;

/// Characters kept as they are in a `file://` URI path: RFC 3986 unreserved, `/`, and `:` (drives).
const URI_PATH: &AsciiSet =
    &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~').remove(b'/').remove(b':');

/// The `file://` URI of an absolute path.
pub fn file_uri(abs: &Path) -> lsp_types::Uri {
    let text = abs.to_string_lossy().replace('\\', "/");
    let text = if text.starts_with('/') { text } else { format!("/{text}") };
    let uri = format!("file://{}", utf8_percent_encode(&text, URI_PATH));
    lsp_types::Uri::from_str(&uri).expect("a percent-encoded file URI is a valid URI")
}

/// The absolute path of a `file://` URI (`None` for other schemes or remote hosts).
pub fn uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let decoded = percent_decode_str(rest).decode_utf8().ok()?.into_owned();
    if cfg!(windows) {
        // `/C:/x` → `C:/x`.
        let bytes = decoded.as_bytes();
        if bytes.len() >= 3 && bytes[2] == b':' && bytes[1].is_ascii_alphabetic() {
            return Some(PathBuf::from(&decoded[1..]));
        }
    }
    Some(PathBuf::from(decoded))
}

/// The qualified path of an absolute path: `project/…` or `storage/…` inside the roots, else
/// `root/<absolute path>`.
pub fn qualify(roots: &Roots, abs: &Path) -> Option<QualifiedPath> {
    if let Some(managed) = roots.qualify(abs) {
        return Some(managed);
    }
    let text = abs.to_string_lossy().replace('\\', "/");
    let rest = text.strip_prefix('/').unwrap_or(&text);
    QualifiedPath::parse(&format!("root/{rest}")).ok()
}

/// A managed source file as one analysis saw it.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub path: QualifiedPath,
    /// Where the file is (the target of an in-root link).
    pub abs: PathBuf,
    pub uri: lsp_types::Uri,
    pub lines: Arc<LineIndex>,
}

/// Reads a managed file's complete current text.
pub fn read_source(roots: &Roots, path: &QualifiedPath) -> Result<SourceFile, Error> {
    let (abs, text) = read_managed(roots, path)?;
    let uri = file_uri(&abs);
    Ok(SourceFile { path: path.clone(), abs, uri, lines: Arc::new(LineIndex::new(text)) })
}

fn read_managed(roots: &Roots, path: &QualifiedPath) -> Result<(PathBuf, String), Error> {
    let resolved =
        roots.resolve_existing(path, LinkPolicy::FollowInsideRoots).map_err(crate::workspace::Error::from)?;
    let read_error = |source| Error::Workspace(crate::workspace::Error::io(path, source));
    let meta = std::fs::metadata(&resolved.abs).map_err(read_error)?;
    if !meta.is_file() {
        return Err(Error::Workspace(crate::workspace::Error::NotAFile { path: path.clone() }));
    }
    let bytes = std::fs::read(&resolved.abs).map_err(read_error)?;
    Ok((resolved.abs, decode_text(path, bytes)?))
}

/// A one-based position of ours on a line of `lines`, for the wire.
pub fn to_wire(lines: &LineIndex, position: Position, encoding: PositionEncoding) -> lsp_types::Position {
    let position = TextPosition { line: position.line.saturating_sub(1), character: position.character };
    lines.to_wire(position, encoding)
}

/// A wire position as ours: one-based line; characters converted when the text is known.
pub fn from_wire(lines: Option<&LineIndex>, position: lsp_types::Position, encoding: PositionEncoding) -> Position {
    let character = match lines {
        Some(lines) => lines.from_wire(position, encoding).character,
        None => position.character,
    };
    Position { line: position.line.saturating_add(1), character }
}

pub fn range_from_wire(lines: Option<&LineIndex>, range: lsp_types::Range, encoding: PositionEncoding) -> SourceRange {
    let start = from_wire(lines, range.start, encoding);
    let end = from_wire(lines, range.end, encoding).max(start);
    SourceRange { start, end }
}

/// Up to 7 lines around zero-based `line` (3 before, the line, 3 after), with their endings.
pub fn preview(lines: &LineIndex, line: u32) -> Option<Preview> {
    let text = lines.text();
    let n_lines = lines.line_count();
    if line >= n_lines {
        return None;
    }
    let first = line.saturating_sub(3);
    let last = (line + 3).min(n_lines - 1);
    let mut res = String::new();
    for idx in first..=last {
        res.push_str(lines.line_with_ending(idx).unwrap_or_default());
    }
    if res.is_empty() && text.is_empty() {
        return None;
    }
    Some(Preview { start_line: u64::from(first) + 1, text: res })
}

/// Turns the locations of one answer into ours, reading each managed file once (for previews and
/// position conversion).
pub struct Locator<'a> {
    roots: &'a Roots,
    encoding: PositionEncoding,
    files: HashMap<PathBuf, Option<Arc<LineIndex>>>,
}

/// A converted location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub path: QualifiedPath,
    pub range: SourceRange,
    pub preview: Option<Preview>,
}

impl<'a> Locator<'a> {
    /// `known`: a file already read (the analysed one), so its text is not read again.
    pub fn new(roots: &'a Roots, encoding: PositionEncoding, known: Option<&SourceFile>) -> Locator<'a> {
        let mut files = HashMap::new();
        if let Some(file) = known {
            files.insert(file.abs.clone(), Some(file.lines.clone()));
        }
        Locator { roots, encoding, files }
    }

    pub fn encoding(&self) -> PositionEncoding {
        self.encoding
    }

    /// The text of a managed file, read once; `None` for external or unreadable files.
    fn lines(&mut self, abs: &Path, path: &QualifiedPath) -> Option<Arc<LineIndex>> {
        if !path.is_managed() {
            return None;
        }
        let roots = self.roots;
        self.files
            .entry(abs.to_path_buf())
            .or_insert_with(|| read_managed(roots, path).ok().map(|(_, text)| Arc::new(LineIndex::new(text))))
            .clone()
    }

    /// A wire location; `None` when its URI names no file we can show.
    pub fn locate(&mut self, uri: &lsp_types::Uri, range: lsp_types::Range) -> Option<Located> {
        let abs = uri_path(uri.as_str())?;
        let path = qualify(self.roots, &abs)?;
        let lines = self.lines(&abs, &path);
        let converted = range_from_wire(lines.as_deref(), range, self.encoding);
        let preview = lines.as_deref().and_then(|lines| preview(lines, range.start.line));
        Some(Located { path, range: converted, preview })
    }

    /// A wire range inside a file already located.
    pub fn range(&mut self, uri: &lsp_types::Uri, range: lsp_types::Range) -> SourceRange {
        let lines = uri_path(uri.as_str()).and_then(|abs| {
            let path = qualify(self.roots, &abs)?;
            self.lines(&abs, &path)
        });
        range_from_wire(lines.as_deref(), range, self.encoding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots() -> Roots {
        Roots::new(PathBuf::from("/w/proj"), PathBuf::from("/w/.proj.forgemcp"))
    }

    #[test]
    fn uris_round_trip_with_percent_encoding() {
        let abs = Path::new("/w/proj/src/my file#1+é.cpp");
        let uri = file_uri(abs);
        assert_eq!(uri.as_str(), "file:///w/proj/src/my%20file%231%2B%C3%A9.cpp");
        assert_eq!(uri_path(uri.as_str()).as_deref(), Some(abs));
        assert_eq!(
            uri_path("file://localhost/usr/include/stdio.h").as_deref(),
            Some(Path::new("/usr/include/stdio.h"))
        );
        assert_eq!(uri_path("https://example.invalid/x"), None);
        assert_eq!(uri_path("file://host/x"), None);
    }

    #[test]
    fn paths_outside_the_roots_become_root_paths() {
        let roots = roots();
        let q = |p: &str| qualify(&roots, Path::new(p)).map(|q| q.to_string());
        assert_eq!(q("/w/proj/include/fixture/math.hpp").as_deref(), Some("project/include/fixture/math.hpp"));
        assert_eq!(q("/w/.proj.forgemcp/build/gen.h").as_deref(), Some("storage/build/gen.h"));
        assert_eq!(q("/usr/include/c++/12/cmath").as_deref(), Some("root/usr/include/c++/12/cmath"));
    }

    #[test]
    fn previews_keep_three_lines_around_and_their_endings() {
        let lines = LineIndex::new("1\n2\r\n3\n4\n5\n6\n7\n8\n9");
        assert_eq!(preview(&lines, 4), Some(Preview { start_line: 2, text: "2\r\n3\n4\n5\n6\n7\n8\n".into() }));
        assert_eq!(preview(&lines, 0), Some(Preview { start_line: 1, text: "1\n2\r\n3\n4\n".into() }));
        assert_eq!(preview(&lines, 8), Some(Preview { start_line: 6, text: "6\n7\n8\n9".into() }));
        assert_eq!(preview(&lines, 9), None);
    }

    #[test]
    fn wire_positions_become_one_based_code_points() {
        let lines = LineIndex::new("auto s = \"😀\"; int x;\n");
        let wire = lsp_types::Position { line: 0, character: 18 };
        assert_eq!(from_wire(Some(&lines), wire, PositionEncoding::Utf16), Position { line: 1, character: 17 });
        assert_eq!(from_wire(None, wire, PositionEncoding::Utf16), Position { line: 1, character: 18 });
        let ours = Position { line: 1, character: 17 };
        assert_eq!(to_wire(&lines, ours, PositionEncoding::Utf16), wire);
        assert_eq!(to_wire(&lines, ours, PositionEncoding::Utf32), lsp_types::Position { line: 0, character: 17 });
    }
}

//! `workspace_edit_file`: replace exact text in an existing UTF-8 file.
//!
//! `old_text` is matched byte for byte (no normalisation of whitespace); occurrences are counted
//! left to right without overlap. One exception for line endings: when `old_text` has LF endings,
//! does not occur, and the file uses CRLF throughout, the CRLF form of `old_text` is matched and
//! `new_text` is written with CRLF endings (agents send LF); a miss then says the file uses CRLF. Zero occurrences, or more than one
//! without `replace_all`, are errors that leave the file untouched and state the count. Everything
//! outside the replaced occurrences is kept byte for byte (CRLF, mixed endings, a missing final
//! newline), and the result is written with the same atomic replacement as `write.rs`.

use crate::call::Call;
use crate::workspace::diff::{self, FileDiff};
use crate::workspace::mutate::check_managed;
use crate::workspace::observer::{Affected, EntryKind, Mutation, MutationKind};
use crate::workspace::path::{QualifiedPath, ResolveError};
use crate::workspace::{Error, WorkspaceService};

/// The outcome of an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEdit {
    pub path: QualifiedPath,
    /// Occurrences replaced.
    pub replacements: u64,
    pub diff: FileDiff,
    /// The previous content, for result providers.
    pub before: std::sync::Arc<str>,
}

/// Replaces the occurrences of `old` in `text`: all of them with `replace_all`, else exactly one.
/// Returns the new text and the number of replacements, or the error that leaves the file as is.
pub fn replace_text(
    path: &QualifiedPath,
    text: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<(String, u64), Error> {
    if old.is_empty() {
        return Err(Error::EmptyOldText.for_argument("old_text"));
    }
    let crlf = crate::text::line_endings(text) == Some(crate::text::LineEndings::CrLf);
    let mut count = text.matches(old).count() as u64;
    let converted;
    let (old, new) = if count == 0 && crlf && old.contains('\n') && !old.contains('\r') {
        converted = (lf_to_crlf(old), lf_to_crlf(new));
        count = text.matches(converted.0.as_str()).count() as u64;
        (converted.0.as_str(), converted.1.as_str())
    } else {
        (old, new)
    };
    match count {
        0 => Err(Error::TextNotFound { path: path.clone(), crlf }.for_argument("old_text")),
        1 => Ok((text.replacen(old, new, 1), 1)),
        _ if replace_all => Ok((text.replace(old, new), count)),
        _ => {
            let lines = occurrence_lines(text, old);
            Err(Error::AmbiguousText { path: path.clone(), count, lines }.for_argument("old_text"))
        }
    }
}

/// The lines where the occurrences of `old` start, as `lines 3, 9 and 14` (each once, at most ten
/// named).
fn occurrence_lines(text: &str, old: &str) -> String {
    const SHOWN: usize = 10;
    let starts = crate::text::line_starts(text);
    let mut lines: Vec<String> =
        text.match_indices(old).map(|(at, _)| starts.partition_point(|&start| start <= at).to_string()).collect();
    lines.dedup();
    let shown = &lines[..lines.len().min(SHOWN)];
    let listed = match shown {
        [one] => return format!("all on line {one}"),
        [rest @ .., last] if lines.len() <= SHOWN => format!("{} and {last}", rest.join(", ")),
        _ => format!("{}, …", shown.join(", ")),
    };
    format!("lines {listed}")
}

/// Every LF not already preceded by CR becomes CR LF.
pub(crate) fn lf_to_crlf(text: &str) -> String {
    let mut res = String::with_capacity(text.len() + text.len() / 16);
    let mut previous = '\0';
    for ch in text.chars() {
        if ch == '\n' && previous != '\r' {
            res.push('\r');
        }
        res.push(ch);
        previous = ch;
    }
    res
}

impl WorkspaceService {
    /// Replaces `old_text` with `new_text` in the managed file `path`. Progress: `0/1`, `1/1`.
    pub fn edit_file(
        &self,
        path: &QualifiedPath,
        old_text: &str,
        new_text: &str,
        replace_all: bool,
        call: &Call,
    ) -> Result<FileEdit, Error> {
        let path_error = |e: Error| e.for_argument("path");
        if old_text.is_empty() {
            return Err(Error::EmptyOldText.for_argument("old_text"));
        }
        check_managed(path).map_err(path_error)?;
        if path.is_area_root() {
            return Err(path_error(Error::IsADirectory { path: path.clone() }));
        }
        if let Some(protection) = self.protected.guarding_contents(path) {
            return Err(path_error(Error::Protected { path: path.clone(), owner: protection.owner }));
        }
        call.progress.report(0.0, Some(1.0), format!("Editing {path}"));
        let session = self.begin_mutation();
        let anchor = session.anchor(path).map_err(|e| match e {
            Error::MissingParent { .. } => path_error(Error::Resolve(ResolveError::NotFound { path: path.clone() })),
            other => path_error(other),
        })?;
        let Some((stat, before)) = session.read_existing_text(&anchor, call).map_err(path_error)? else {
            return Err(path_error(Error::Resolve(ResolveError::NotFound { path: path.clone() })));
        };
        let (after, replacements) = replace_text(path, &before, old_text, new_text, replace_all)?;
        if call.is_cancelled() {
            return Err(Error::Cancelled);
        }
        session
            .replace_and_record(call, &anchor, Some((&stat, before.as_bytes())), after.as_bytes())
            .map_err(path_error)?;
        let affected = vec![Affected { path: path.clone(), kind: EntryKind::File }];
        session.notify(&Mutation { kind: MutationKind::Edited, before: affected.clone(), after: affected });
        drop(session);

        let diff = diff::diff_texts(path, &before, &after);
        let res = FileEdit { path: path.clone(), replacements, diff, before: before.into() };
        call.progress.report(1.0, Some(1.0), format!("Edited {path}"));
        Ok(res)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path() -> QualifiedPath {
        QualifiedPath::parse("project/a.txt").unwrap()
    }

    #[test]
    fn one_occurrence_is_replaced_and_the_rest_kept_byte_for_byte() {
        let (text, n) = replace_text(&path(), "a\r\nb\nc\r\n", "b", "B", false).unwrap();
        assert_eq!((text.as_str(), n), ("a\r\nB\nc\r\n", 1));
    }

    #[test]
    fn lf_old_text_matches_a_crlf_file_and_writes_crlf() {
        let file = "int a;\r\nint b;\r\nint c;\r\n";
        let (text, n) = replace_text(&path(), file, "int a;\nint b;\n", "int a;\nint x;\r\nint y;\n", false).unwrap();
        assert_eq!((text.as_str(), n), ("int a;\r\nint x;\r\nint y;\r\nint c;\r\n", 1));
        let miss = crate::server::registry::error_chain(
            &replace_text(&path(), file, "int q;\n", "", false).expect_err("an error"),
        );
        assert!(miss.ends_with("(the file uses CRLF line endings); nothing was changed."), "{miss}");
        // Mixed endings are matched exactly only.
        assert!(replace_text(&path(), "a\r\nb\nc\r\n", "a\nb", "x", false).is_err());
    }

    #[test]
    fn occurrences_are_counted_without_overlap() {
        let (text, n) = replace_text(&path(), "aaaa", "aa", "b", true).unwrap();
        assert_eq!((text.as_str(), n), ("bb", 2));
        let (text, n) = replace_text(&path(), "aaa", "aa", "b", false).unwrap();
        assert_eq!((text.as_str(), n), ("ba", 1));
        assert!(replace_text(&path(), "aaaa", "aa", "b", false).is_err());
    }

    #[test]
    fn missing_and_ambiguous_text_name_old_text_and_the_count() {
        let message = |r: Result<(String, u64), Error>| crate::server::registry::error_chain(&r.expect_err("an error"));
        assert_eq!(
            message(replace_text(&path(), "x", "y", "z", false)),
            "Invalid argument `old_text`: it does not occur in `project/a.txt`; nothing was changed."
        );
        let ambiguous = message(replace_text(&path(), "y y y", "y", "z", false));
        assert!(
            ambiguous.starts_with("Invalid argument `old_text`: it occurs 3 times in `project/a.txt` (all on line 1)"),
            "{ambiguous}"
        );
        let ambiguous = message(replace_text(&path(), "a\nx\r\nb\rx\nx", "x", "z", false));
        assert!(ambiguous.contains("it occurs 3 times in `project/a.txt` (lines 2, 4 and 5);"), "{ambiguous}");
        assert_eq!(
            message(replace_text(&path(), "x", "", "z", false)),
            "Invalid argument `old_text`: the text to replace is empty."
        );
    }
}

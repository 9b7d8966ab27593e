//! `workspace_write_file`: create or overwrite a UTF-8 text file atomically.
//!
//! The text goes to a sibling temporary file (`.forgemcp-tmp-` and 16 hex digits) in the target's
//! directory, is flushed to disk, takes over the previous file's permissions, and is renamed over
//! the target, so the target always holds either the old or the new content. Every error path
//! removes the temporary file. The writer holds an exclusive `flock` on its temporary file until the
//! rename; a file left by a killed server (no lock held any more) is removed by the next write to
//! that directory, one another live server is writing never is, and listings and searches never
//! show one (`is_temp_name`).
//!
//! Over an existing file that uses CRLF throughout or starts with a UTF-8 byte-order mark, text
//! with LF endings (or without the mark) takes the file's form unless `exact` is asked for; the
//! outcome says what was converted.
//!
//! Architecture invariant: the bytes written are exactly the UTF-8 of the given text, or of that
//! text in the existing file's line endings and mark; an existing target must be UTF-8 text (it is
//! read for the diff).

use crate::call::Call;
use crate::workspace::diff::{self, FileDiff};
use crate::workspace::edit::lf_to_crlf;
pub use crate::workspace::fsat::is_temp_name;
use crate::workspace::mutate::{check_managed, line_count};
use crate::workspace::observer::{Affected, EntryKind, Mutation, MutationKind};
use crate::workspace::path::QualifiedPath;
use crate::workspace::{Error, WorkspaceService};

/// Whether the write created the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteAction {
    Created,
    Overwritten,
}

/// The outcome of a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileWrite {
    pub path: QualifiedPath,
    pub action: WriteAction,
    /// Lines of the previous content (0 when the file was created).
    pub lines_removed: u64,
    /// Lines of the new content.
    pub lines_added: u64,
    pub diff: FileDiff,
    /// The previous content (`None` when the file was created), for result providers.
    pub before: Option<std::sync::Arc<str>>,
    /// What was converted to keep the existing file's form.
    pub kept: KeptForm,
}

/// The parts of an existing file's form a write gave the new text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeptForm {
    /// LF endings were written as CRLF.
    pub crlf: bool,
    /// The byte-order mark was kept.
    pub bom: bool,
}

/// `text` in the form of the existing file `before`: CRLF endings when `before` uses CRLF throughout
/// and `text` has no CR, and its byte-order mark when `text` lacks one.
fn keep_form(before: &str, text: &str) -> (Option<String>, KeptForm) {
    let crlf = crate::text::line_endings(before) == Some(crate::text::LineEndings::CrLf)
        && text.contains('\n')
        && !text.contains('\r');
    let bom = before.starts_with('\u{feff}') && !text.starts_with('\u{feff}');
    if !crlf && !bom {
        return (None, KeptForm::default());
    }
    let mut res = String::with_capacity(text.len() + text.len() / 16 + 3);
    if bom {
        res.push('\u{feff}');
    }
    res.push_str(&if crlf { lf_to_crlf(text) } else { text.to_owned() });
    (Some(res), KeptForm { crlf, bom })
}

impl WorkspaceService {
    /// Creates or overwrites the managed file `path` with `text` (in the existing file's line
    /// endings and mark unless `exact`). The parent directory must exist. Progress: `0/1` before,
    /// `1/1` after.
    pub fn write_file(&self, path: &QualifiedPath, text: &str, exact: bool, call: &Call) -> Result<FileWrite, Error> {
        self.write_file_inner(path, text, exact, call).map_err(|e| e.for_argument("path"))
    }

    fn write_file_inner(&self, path: &QualifiedPath, text: &str, exact: bool, call: &Call) -> Result<FileWrite, Error> {
        check_managed(path)?;
        if path.is_area_root() {
            return Err(Error::IsADirectory { path: path.clone() });
        }
        if let Some(protection) = self.protected.guarding_contents(path) {
            return Err(Error::Protected { path: path.clone(), owner: protection.owner });
        }
        call.progress.report(0.0, Some(1.0), format!("Writing {path}"));
        let session = self.begin_mutation();
        let anchor = session.anchor(path)?;
        let existing = session.read_existing_text(&anchor, call)?;
        if call.is_cancelled() {
            return Err(Error::Cancelled);
        }
        let (converted, kept) = match &existing {
            Some((_, before)) if !exact => keep_form(before, text),
            _ => (None, KeptForm::default()),
        };
        let text = converted.as_deref().unwrap_or(text);
        session.replace_and_record(
            call,
            &anchor,
            existing.as_ref().map(|(stat, old)| (stat, old.as_bytes())),
            text.as_bytes(),
        )?;
        let action = if existing.is_some() { WriteAction::Overwritten } else { WriteAction::Created };
        let affected = vec![Affected { path: path.clone(), kind: EntryKind::File }];
        let (kind, before) = match action {
            WriteAction::Overwritten => (MutationKind::Written, affected.clone()),
            WriteAction::Created => (MutationKind::Created, Vec::new()),
        };
        session.notify(&Mutation { kind, before, after: affected });
        drop(session);

        let old_text = existing.map(|(_, text)| text);
        let before = old_text.as_deref().unwrap_or_default();
        let res = FileWrite {
            path: path.clone(),
            action,
            lines_removed: line_count(before),
            lines_added: line_count(text),
            diff: diff::diff_texts(path, before, text),
            before: old_text.map(std::sync::Arc::from),
            kept,
        };
        call.progress.report(1.0, Some(1.0), format!("Wrote {path}"));
        Ok(res)
    }
}

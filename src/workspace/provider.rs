//! The result-provider hook: services that add an immutable result document to reads, writes and
//! edits of a file (clangd's `resources.clangd`) implement [`ResultProvider`] and register with
//! [`WorkspaceService::add_provider`](crate::workspace::WorkspaceService::add_provider).
//!
//! The tool layer calls every provider after the file operation finished and its lock is released,
//! stores the documents under one result id, and links them in the result's `resources` by name.
//! A provider may also say what the operation did to its analysis: a note for the result text and
//! a typed summary for the structured result (clangd's edit-delta diagnostics). Before a write or
//! edit, the tool lets every provider prepare on the current content (clangd starts analysing it).
//!
//! Architecture invariant: a provider never fails the file operation: an error (or a panic) only
//! omits its link, with a warning on stderr.
//! Architecture invariant: providers run outside the workspace lock, so they may read through the
//! workspace; they never change files.

use std::sync::Arc;

use crate::call::{BoxFuture, Call};
use crate::workspace::path::QualifiedPath;
use crate::workspace::results::Document;

/// The file operation a provider is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOperation {
    Read,
    Write,
    Edit,
}

/// Which lines of the file the operation returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineWindow {
    /// The whole file (writes, edits, complete reads).
    Whole,
    /// Lines `first..=last`, one-based (a partial read).
    Lines { first: u64, last: u64 },
    /// Nothing (a read past the end of the file).
    Empty,
}

impl LineWindow {
    /// The window of a read that asked for `start_line` and returned `n_lines` lines.
    pub fn of_read(start_line: u64, end_line: Option<u64>, n_lines: u64) -> LineWindow {
        if n_lines == 0 {
            LineWindow::Empty
        } else if start_line <= 1 && end_line.is_none() {
            LineWindow::Whole
        } else {
            LineWindow::Lines { first: start_line, last: start_line + n_lines - 1 }
        }
    }

    /// Whether a range of one-based lines `first..=last` meets the window.
    pub fn intersects(self, first: u64, last: u64) -> bool {
        match self {
            LineWindow::Whole => true,
            LineWindow::Lines { first: a, last: b } => first <= b && last >= a,
            LineWindow::Empty => false,
        }
    }
}

/// What a provider is asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderRequest {
    /// The managed file, canonical.
    pub path: QualifiedPath,
    pub operation: FileOperation,
    pub lines: LineWindow,
    /// The content before a write or edit (`None` for reads and for created files).
    pub before: Option<Arc<str>>,
}

/// What a provider contributes to one file operation.
#[derive(Debug, Default)]
pub struct Provided {
    /// The document linked under the provider's name.
    pub document: Option<Document>,
    /// Lines for the result text.
    pub note: Option<String>,
    /// The note's typed summary, under the provider's name in the structured result.
    pub summary: Option<serde_json::Value>,
}

/// A failed provider: the message is logged; the operation still succeeds.
pub type ProviderError = Box<dyn std::error::Error + Send + Sync>;

/// A service that contributes a result document to file operations.
pub trait ResultProvider: Send + Sync {
    /// The name under `resources` and in the document URI (ASCII letters, digits, `_`, `-`).
    fn name(&self) -> &'static str;

    /// The contribution to this operation; all parts empty when the provider has nothing to say
    /// (not its kind of file, no configuration to analyse with).
    fn provide(&self, request: ProviderRequest, call: Call) -> BoxFuture<'static, Result<Provided, ProviderError>>;

    /// Called before a write or edit of `path` changes it (the operation may still fail), so the
    /// provider can start on the current content while the file is written; what it starts lives
    /// as long as the returned guard, which the tool drops after `provide`. `provide` must give the
    /// same answer with or without it.
    fn prepare(&self, path: &QualifiedPath) -> Option<PrepareGuard> {
        let _ = path;
        None
    }
}

/// Keeps a provider's preparation for one write or edit alive (see [`ResultProvider::prepare`]).
pub type PrepareGuard = Box<dyn Send + Sync>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_windows() {
        assert_eq!(LineWindow::of_read(1, None, 10), LineWindow::Whole);
        assert_eq!(LineWindow::of_read(3, Some(5), 3), LineWindow::Lines { first: 3, last: 5 });
        assert_eq!(LineWindow::of_read(3, Some(50), 2), LineWindow::Lines { first: 3, last: 4 });
        assert_eq!(LineWindow::of_read(1, Some(4), 4), LineWindow::Lines { first: 1, last: 4 });
        assert_eq!(LineWindow::of_read(99, None, 0), LineWindow::Empty);
        assert_eq!(LineWindow::of_read(1, None, 0), LineWindow::Empty);
    }

    #[test]
    fn intersection_is_by_whole_lines() {
        let window = LineWindow::Lines { first: 3, last: 5 };
        assert!(window.intersects(5, 9));
        assert!(window.intersects(1, 3));
        assert!(window.intersects(4, 4));
        assert!(!window.intersects(6, 7));
        assert!(!window.intersects(1, 2));
        assert!(LineWindow::Whole.intersects(100, 100));
        assert!(!LineWindow::Empty.intersects(1, 1));
    }
}

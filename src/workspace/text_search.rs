//! The workspace side of text search: resolves the start path, runs the engine under the read
//! lock with progress and cancellation, and maps engine paths back to qualified paths.

use crate::call::Call;
use crate::workspace::path::{LinkPolicy, QualifiedPath};
use crate::workspace::search::{self, SearchError, SearchOptions};
use crate::workspace::{Error, WorkspaceService};

/// One returned matching line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextMatch {
    pub path: QualifiedPath,
    /// 1-based line number.
    pub line: u64,
    /// The line without its terminator.
    pub text: String,
    /// Every match on the line: zero-based Unicode code points, half-open `[start, end)`.
    pub spans: Vec<[usize; 2]>,
}

/// The outcome of a whole-tree text search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextSearch {
    pub path: QualifiedPath,
    /// At most `max_matches` lines, sorted by (path, line).
    pub matches: Vec<TextMatch>,
    /// Exact number of matching lines in the whole scan.
    pub matches_count: u64,
    /// Files skipped as binary or not UTF-8, sorted.
    pub skipped_files: Vec<QualifiedPath>,
}

impl TextSearch {
    pub fn truncated(&self) -> bool {
        self.matches_count > self.matches.len() as u64
    }

    /// Number of distinct files among the returned matches.
    pub fn displayed_files(&self) -> usize {
        let mut n = 0;
        let mut last: Option<&QualifiedPath> = None;
        for m in &self.matches {
            if last != Some(&m.path) {
                n += 1;
                last = Some(&m.path);
            }
        }
        n
    }
}

impl WorkspaceService {
    /// Searches a managed file or directory tree. Dot-directories are skipped and links are never
    /// followed; binary and non-UTF-8 files are skipped and listed.
    pub fn search_text(&self, path: &QualifiedPath, options: &SearchOptions, call: &Call) -> Result<TextSearch, Error> {
        let _guard = self.read_lock();
        let resolved = self.resolve_existing(path, LinkPolicy::Refuse)?;
        call.progress.report(0.0, None, "Files visited");
        let on_file = |visited: u64, rel: &str| {
            call.progress.report_with(visited as f64, None, || match path.join_relative(rel) {
                Some(file) => format!("Searching {file}"),
                None => format!("Searching {path}"),
            });
        };
        let cancel = || call.is_cancelled();
        let outcome = search::search(&resolved.abs, options, &on_file, &cancel).map_err(|err| match err {
            SearchError::Cancelled => Error::Cancelled,
            source => Error::Search { path: path.clone(), source },
        })?;
        let qualify = |rel: &str| path.join_relative(rel).unwrap_or_else(|| path.clone());
        Ok(TextSearch {
            path: path.clone(),
            matches: outcome
                .matches
                .into_iter()
                .map(|m| TextMatch { path: qualify(&m.rel_path), line: m.line, text: m.text, spans: m.spans })
                .collect(),
            matches_count: outcome.matches_count,
            skipped_files: outcome.skipped_files.iter().map(|rel| qualify(rel)).collect(),
        })
    }
}

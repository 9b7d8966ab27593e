//! The workspace side of text search: resolves the start path, runs the engine under the read
//! lock with progress and cancellation, and maps engine paths back to qualified paths.

use crate::call::Call;
use crate::workspace::path::{LinkPolicy, QualifiedPath};
use crate::workspace::search::index::IndexStatus;
use crate::workspace::search::{self, LineClip, SearchError, SearchOptions};
use crate::workspace::{Error, WorkspaceService};

/// One returned matching line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextMatch {
    pub path: QualifiedPath,
    /// 1-based line number.
    pub line: u64,
    /// The line without its terminator (a window of a long line, see `clip`).
    pub text: String,
    /// Every match in `text`: zero-based Unicode code points, half-open `[start, end)`.
    pub spans: Vec<[usize; 2]>,
    pub clip: Option<LineClip>,
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
    /// Every file with a matching line and its number of matching lines, sorted by path.
    pub file_counts: Vec<(QualifiedPath, u64)>,
    /// Matching lines (or files) passed over before the returned ones (paging).
    pub offset: u64,
    /// Set for a files-only search: which files of `file_counts` are returned.
    pub files_page: Option<FilesPage>,
    /// The default-excluded directories the search left out.
    pub excluded_dirs: Vec<QualifiedPath>,
    /// Lines `max_matches` allowed that the byte budget left out.
    pub over_budget: u64,
    /// Whether the index answered, or why the tree was scanned.
    pub index: IndexStatus,
}

/// The files a files-only search returns: `limit` files of `file_counts` from `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilesPage {
    pub offset: usize,
    pub limit: usize,
}

impl TextSearch {
    /// More lines matched than were returned (before or after them).
    pub fn truncated(&self) -> bool {
        self.matches_count > self.matches.len() as u64
    }

    /// Keeps the first matches whose texts fit in `budget` bytes (at least one), counting the rest.
    pub fn keep_within(&mut self, budget: usize) {
        let mut spent = 0;
        let fits = self.matches.iter().take_while(|m| {
            spent += m.text.len() + m.path.to_string().len();
            spent <= budget
        });
        let keep = fits.count().max(1).min(self.matches.len());
        self.over_budget = (self.matches.len() - keep) as u64;
        self.matches.truncate(keep);
    }

    /// The files a files-only search returns, with their counts.
    pub fn listed_files(&self) -> impl Iterator<Item = (&QualifiedPath, u64)> {
        let page = self.files_page.unwrap_or(FilesPage { offset: 0, limit: 0 });
        self.file_counts.iter().skip(page.offset).take(page.limit).map(|(path, n)| (path, *n))
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
        let index = self.search_index().map(|index| &**index);
        let searched = search::search_indexed(&resolved.abs, options, index, &on_file, &cancel);
        let (outcome, index) = searched.map_err(|err| match err {
            SearchError::Cancelled => Error::Cancelled,
            source => Error::Search { path: path.clone(), source },
        })?;
        let qualify = |rel: &str| path.join_relative(rel).unwrap_or_else(|| path.clone());
        Ok(TextSearch {
            path: path.clone(),
            matches: outcome
                .matches
                .into_iter()
                .map(|m| TextMatch {
                    path: qualify(&m.rel_path),
                    line: m.line,
                    text: m.text,
                    spans: m.spans,
                    clip: m.clip,
                })
                .collect(),
            matches_count: outcome.matches_count,
            skipped_files: outcome.skipped_files.iter().map(|rel| qualify(rel)).collect(),
            file_counts: outcome.file_counts.iter().map(|(rel, n)| (qualify(rel), *n)).collect(),
            offset: options.offset as u64,
            files_page: None,
            over_budget: 0,
            index,
            excluded_dirs: options
                .excluded_dirs
                .iter()
                .filter(|dir| dir.starts_with(&resolved.abs) && **dir != resolved.abs && dir.exists())
                .filter_map(|dir| self.roots().qualify(dir))
                .collect(),
        })
    }
}

//! The state all workers of one search share: the kept lines, the per-file counts, the skipped
//! files and the totals, merged into the outcome at the end.
//!
//! Architecture invariant: the kept lines are always the `cap` smallest `(rel_path, line)` keys
//! offered so far, whatever order the workers offer their files in.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::{SearchError, SearchMatch, SearchOutcome};

/// State shared by all workers of one search.
pub(super) struct Shared {
    pub(super) kept: Mutex<Kept>,
    pub(super) file_counts: Mutex<Vec<(String, u64)>>,
    pub(super) skipped_files: Mutex<Vec<String>>,
    pub(super) matches_count: AtomicU64,
    pub(super) files_visited: AtomicU64,
    pub(super) cancelled: AtomicBool,
    failure: Mutex<Option<SearchError>>,
}

impl Shared {
    pub(super) fn new(max_matches: usize) -> Shared {
        Shared {
            kept: Mutex::new(Kept { cap: max_matches, lines: Vec::new() }),
            file_counts: Mutex::new(Vec::new()),
            skipped_files: Mutex::new(Vec::new()),
            matches_count: AtomicU64::new(0),
            files_visited: AtomicU64::new(0),
            cancelled: AtomicBool::new(false),
            failure: Mutex::new(None),
        }
    }

    pub(super) fn fail(&self, err: SearchError) {
        lock(&self.failure).get_or_insert(err);
    }

    pub(super) fn finish(self) -> Result<SearchOutcome, SearchError> {
        if self.cancelled.into_inner() {
            return Err(SearchError::Cancelled);
        }
        if let Some(err) = into_inner(self.failure) {
            return Err(err);
        }
        let matches = into_inner(self.kept).lines;
        let mut skipped_files = into_inner(self.skipped_files);
        skipped_files.sort_unstable();
        let mut file_counts = into_inner(self.file_counts);
        file_counts.sort_unstable();
        Ok(SearchOutcome {
            matches,
            matches_count: self.matches_count.into_inner(),
            skipped_files,
            files_visited: self.files_visited.into_inner(),
            file_counts,
        })
    }
}

/// The kept matching lines, sorted by `(rel_path, line)`, never more than `cap`.
pub(super) struct Kept {
    cap: usize,
    lines: Vec<SearchMatch>,
}

impl Kept {
    /// Where the lines of `rel_path` go; each file merges once, so its path is not yet present.
    fn position(&self, rel_path: &str) -> usize {
        self.lines.partition_point(|m| m.rel_path.as_str() < rel_path)
    }

    /// How many of a file's first lines can still be kept; an upper bound for later calls.
    pub(super) fn room_for(&self, rel_path: &str) -> usize {
        self.cap - self.position(rel_path)
    }

    /// Inserts one file's lines (sorted by line, all with `rel_path`) and drops what no longer fits.
    pub(super) fn merge(&mut self, rel_path: &str, file_lines: Vec<SearchMatch>) {
        let pos = self.position(rel_path);
        self.lines.splice(pos..pos, file_lines);
        self.lines.truncate(self.cap);
    }
}

// A worker that panics cannot leave the shared collections in a harmful state (each update is one
// push, splice or insert), so a poisoned lock is used as it is.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn into_inner<T>(mutex: Mutex<T>) -> T {
    mutex.into_inner().unwrap_or_else(PoisonError::into_inner)
}

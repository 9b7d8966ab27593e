//! A search answered with the index: the index lists the files below the start with their states
//! and whether their trigrams admit the query; only the admitted ones and the paths changed since
//! they were indexed are read, with the same worker, exclusions and extension filter as a scan.
//!
//! Architecture invariant: the outcome equals a scan's: a file the index does not admit holds no
//! matching line, a file indexed as binary or not UTF-8 is listed as skipped without being read,
//! every listed file passing the filters counts as visited, and changed paths are read as a scan
//! would read them. A file indexed with the content of another that this search read (unchanged,
//! and read with the size the index holds) has that file's matching lines. When the index cannot
//! answer, the search scans and says why.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::index::{BaseFiles, FILES_PER_RELEASE, FileState, IndexStatus, SearchIndex, plan};
use super::{
    IndexedText, Plan, SearchError, SearchOptions, SearchOutcome, Shared, Worker, lock, search_with_plan, walk_tree,
};
use crate::workspace::write::is_temp_name;

/// Searches `start` like [`super::search`], through `index` when it can answer; also says how.
///
/// # Errors
///
/// As [`super::search`].
pub fn search_indexed(
    start: &Path,
    options: &SearchOptions,
    index: Option<&SearchIndex>,
    on_file: &(dyn Fn(u64, &str) + Sync),
    cancel: &(dyn Fn() -> bool + Sync),
) -> Result<(SearchOutcome, IndexStatus), SearchError> {
    let mut plan = Plan::new(options)?;
    plan.exclusions = plan.exclusions.for_start(start);
    let keep = options.offset.saturating_add(options.max_matches);
    let page = |mut outcome: SearchOutcome| {
        outcome.matches.drain(..options.offset.min(outcome.matches.len()));
        outcome
    };
    let scan = |status: IndexStatus| -> Result<(SearchOutcome, IndexStatus), SearchError> {
        Ok((page(search_with_plan(start, &plan, keep, on_file, cancel)?), status))
    };
    let Some(index) = index else { return scan(IndexStatus::Scanning("the index is off".to_owned())) };
    let Some(prefix) = super::index::relative(index.root(), start) else {
        return scan(IndexStatus::Scanning("only the project tree is indexed".to_owned()));
    };
    if prefix.split('/').any(|c| c.starts_with('.')) {
        return scan(IndexStatus::Scanning("dot-directories are not indexed".to_owned()));
    }
    if !std::fs::symlink_metadata(start).is_ok_and(|m| m.is_dir()) {
        return scan(IndexStatus::Scanning("a single file is read directly".to_owned()));
    }
    let view = match index.view() {
        Ok(view) => view,
        Err(status) => return scan(status),
    };
    let Ok(changed) = view.changed_under(&prefix) else {
        drop(view);
        return scan(IndexStatus::Scanning("the searched directory itself changed".to_owned()));
    };
    let query = plan::plan(&options.query, options.regex, options.case_sensitive);
    plan.read_whole_up_to = index.read_whole_up_to();
    let shared = Shared::new(keep);
    let mut filter = Filter { plan: &plan, start, dir: None, dir_excluded: false };
    let (mut to_read, mut skipped, mut unread) = (ToRead::default(), Vec::new(), 0u64);
    // Where in `to_read.base` the first listed file of each content shared by several files is.
    let mut firsts: HashMap<usize, u32> = HashMap::new();
    let from = if prefix.is_empty() { 0 } else { prefix.len() + 1 };
    // Without exclusions or extensions every listed file passes: those not read are only counted.
    let every = !(plan.exclusions.is_empty() && plan.extensions.is_none());
    let passed_over = view.for_each(&prefix, &query, every, |listed| {
        let rel = &listed.rel[from..];
        if !filter.passes(rel) {
            return;
        }
        match listed.state {
            FileState::Binary | FileState::NotUtf8 => skipped.push(rel.to_owned()),
            FileState::Text if listed.candidate => match listed.base_id {
                // Its path is read back from the mapped index: no copy of it is held meanwhile.
                Some(id) => {
                    let id = id as u32;
                    let first = listed.same_content.and_then(|content| match firsts.entry(content) {
                        Entry::Occupied(first) => Some(*first.get()),
                        Entry::Vacant(first) => {
                            first.insert(to_read.base.len() as u32);
                            None
                        }
                    });
                    match first {
                        Some(at) => to_read.copies.push((at, id)),
                        None => to_read.base.push(id),
                    }
                }
                None => to_read.paths.push((rel.to_owned(), Some(listed.size))),
            },
            FileState::Unindexed if listed.candidate => to_read.paths.push((rel.to_owned(), None)),
            FileState::Text | FileState::Unindexed | FileState::Unreadable => unread += 1,
        }
    });
    drop(firsts);
    // Each first file's copies together, in listed order.
    to_read.copies.sort_by_key(|(at, _)| *at);
    let base = view.base_files();
    drop(view);
    unread += passed_over;
    let mut changed_dirs = Vec::new();
    for path in changed {
        let rel = &path[from.min(path.len())..];
        let abs = start.join(rel);
        let Ok(meta) = std::fs::symlink_metadata(&abs) else { continue };
        let (parents, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        if parents.split('/').any(|c| c.starts_with('.')) || filter.dir_left_out(parents) {
            continue;
        }
        if meta.is_file() && !is_temp_name(name) && filter.passes(rel) {
            to_read.paths.push((rel.to_owned(), None));
        } else if meta.is_dir() && !name.starts_with('.') && !plan.exclusions.excludes(rel, &abs, true) {
            changed_dirs.push(abs);
        }
    }
    let files = Files { start, from, base: base.as_ref(), to_read: &to_read };
    read_all(&files, &plan, &shared, on_file, cancel);
    files.base.inspect(|base| base.release_pages());
    for dir in changed_dirs {
        walk_tree(&dir, start, &plan, &shared, on_file, cancel);
    }
    shared.files_visited.fetch_add(unread + skipped.len() as u64, Ordering::Relaxed);
    lock(&shared.skipped_files).extend(skipped);
    Ok((page(shared.finish()?), IndexStatus::Ready))
}

/// The files one search reads: 4 bytes for each file of the index's base, whatever the tree.
#[derive(Default)]
struct ToRead {
    /// Files of the index's base, unchanged text, by id in listed order.
    base: Vec<u32>,
    /// Other listed files of the base indexed with the content of one in `base` (its position
    /// there), unchanged too: answered from that file's read. Sorted by that position.
    copies: Vec<(u32, u32)>,
    /// Files by their path relative to the start, with their size when the index holds them as
    /// unchanged text (re-indexed since the base was written).
    paths: Vec<(String, Option<u64>)>,
}

/// The files one search reads, and where their paths come from.
struct Files<'a> {
    start: &'a Path,
    /// Bytes of an indexed path before its part relative to the start.
    from: usize,
    base: Option<&'a BaseFiles>,
    to_read: &'a ToRead,
}

impl Files<'_> {
    /// Files to read: those of the base first, then those by path.
    fn len(&self) -> usize {
        self.to_read.base.len() + self.to_read.paths.len()
    }

    /// File `at`'s path relative to the start, and what the index holds of it.
    fn get(&self, at: usize) -> Option<(String, Option<IndexedText<'_>>)> {
        match self.to_read.base.get(at) {
            Some(id) => {
                let (rel, indexed) = self.base_file(*id)?;
                Some((rel, Some(indexed)))
            }
            None => {
                let (rel, size) = self.to_read.paths.get(at - self.to_read.base.len())?;
                Some((rel.clone(), size.map(|size| IndexedText { size, cr_free: false, kept: None })))
            }
        }
    }

    /// The ids of the files with the content of file `at` of the base.
    fn copies(&self, at: usize) -> impl Iterator<Item = u32> + '_ {
        let copies = &self.to_read.copies;
        let first = copies.partition_point(|(of, _)| (*of as usize) < at);
        copies[first..].iter().take_while(move |(of, _)| *of as usize == at).map(|(_, id)| *id)
    }

    /// The path relative to the start of file `id` of the base, unchanged text.
    fn base_file(&self, id: u32) -> Option<(String, IndexedText<'_>)> {
        let base = self.base?;
        let id = id as usize;
        let rel = base.path(id).get(self.from..)?.to_owned();
        let (size, cr_free) = base.text(id);
        Some((rel, IndexedText { size, cr_free, kept: Some((id, base.open_files())) }))
    }
}

/// Files a reading thread takes at once (a divisor of [`FILES_PER_RELEASE`]).
const RUN: usize = 16;

/// Reads and searches the files on all cores, through the descriptors the index keeps open.
fn read_all(
    files: &Files<'_>,
    plan: &Plan,
    shared: &Shared,
    on_file: &(dyn Fn(u64, &str) + Sync),
    cancel: &(dyn Fn() -> bool + Sync),
) {
    let next = AtomicUsize::new(0);
    let n = files.len();
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get).min(n);
    // Threads take runs of neighbouring files, which mostly share a directory (opened once per run).
    let work = || {
        let mut worker = Worker::new(plan, shared, files.start, on_file, cancel);
        loop {
            let at = next.fetch_add(RUN, Ordering::Relaxed);
            if at >= n {
                return;
            }
            if (at + RUN).is_multiple_of(FILES_PER_RELEASE) {
                files.base.inspect(|base| base.release_pages());
            }
            for at in at..(at + RUN).min(n) {
                let Some((rel, indexed)) = files.get(at) else { continue };
                if quits(files.start, rel, |path, name, rel| worker.visit_file(path, name, rel, indexed)) {
                    return;
                }
                for (rel, indexed) in files.copies(at).filter_map(|id| files.base_file(id)) {
                    if quits(files.start, rel, |path, name, rel| worker.visit_copy(path, name, rel, indexed)) {
                        return;
                    }
                }
            }
        }
    };
    if threads <= 1 || n < 64 {
        work();
        return;
    }
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(work);
        }
        work();
    });
}

/// Visits file `rel` (relative to `start`) with its path and name; whether the search stops.
fn quits(start: &Path, rel: String, visit: impl FnOnce(&Path, &str, String) -> ignore::WalkState) -> bool {
    let path = start.join(&rel);
    let name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
    matches!(visit(&path, name, rel), ignore::WalkState::Quit)
}

/// The exclusions and the extension filter applied to listed paths, remembering the verdict of
/// the last directory (listed paths come sorted, so directories repeat).
struct Filter<'a> {
    plan: &'a Plan,
    start: &'a Path,
    dir: Option<String>,
    dir_excluded: bool,
}

impl Filter<'_> {
    /// Whether a file (relative to the start) is searched.
    fn passes(&mut self, rel: &str) -> bool {
        let (parents, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        if !self.plan.selects_file(name) {
            return false;
        }
        if self.plan.exclusions.is_empty() {
            return true;
        }
        if self.dir.as_deref() != Some(parents) {
            self.dir_excluded = self.dir_left_out(parents);
            self.dir = Some(parents.to_owned());
        }
        !self.dir_excluded && !self.plan.exclusions.excludes(rel, Path::new(""), false)
    }

    /// Whether a directory (relative to the start; `""` is the start) or one of its ancestors below
    /// the start is left out.
    fn dir_left_out(&self, dir: &str) -> bool {
        if dir.is_empty() || self.plan.exclusions.is_empty() {
            return false;
        }
        let mut at = 0;
        loop {
            let end = dir[at..].find('/').map_or(dir.len(), |i| at + i);
            let ancestor = &dir[..end];
            if self.plan.exclusions.excludes(ancestor, &self.start.join(ancestor), true) {
                return true;
            }
            if end == dir.len() {
                return false;
            }
            at = end + 1;
        }
    }
}

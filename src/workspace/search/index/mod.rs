//! The search index of the project tree: a trigram index (`segment.rs`, mapped from the storage
//! root) plus what changed since it was written (re-indexed files in memory, files reported changed
//! and not yet re-indexed), kept current by the workspace's own mutations and by the operating
//! system's file notifications (`watch.rs`), built and refreshed by one low-priority thread
//! (`worker.rs`).
//!
//! A search asks for a [`View`]: first a barrier file is written into the watched index directory
//! and its notification awaited, so every notification of a change made before the search has been
//! applied; then the view lists, under the search start, each indexed file with its state and
//! whether its trigrams admit the query, and the changed paths, which the search reads directly.
//!
//! Architecture invariant: the index never changes an answer. A path reported changed (by a
//! workspace mutation before the tool reports success, by a notification before any later barrier
//! completes) is searched directly until re-indexed; when notifications may have been lost
//! (overflow, a watch that could not be added, a barrier that did not come back) or are not
//! available, [`SearchIndex::view`] refuses and the search scans, saying why.
//! Architecture invariant: the index covers the project root with the walk rules of the search
//! (links not followed, dot-directories not entered, interrupted writes' temporary files left out);
//! exclusions and extensions are applied per query, by the caller.

mod build;
mod open_files;
pub mod plan;
mod runs;
mod segment;
mod watch;
mod worker;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::{Condvar, Mutex, RwLock, RwLockReadGuard};

use crate::workspace::observer::{Mutation, MutationObserver};
use crate::workspace::path::Area;
pub use build::relative;
pub use open_files::{OpenFiles, raise_open_file_limit};
use plan::{Query, Trigram};
use segment::Segment;

/// The directory of the index under the storage root (a dot-directory: never searched).
pub const DIR_NAME: &str = ".index";

/// Files a search lists or reads between two releases of the index's mapped pages: each file
/// touches its record and path in the map, which would otherwise stay resident (in the process's
/// RSS) after the search, and during a search that lists every file of a large tree (40 bytes of
/// record and its path a file). Dropped pages stay in the page cache; touching them again costs a
/// minor fault per 64 KiB.
pub const FILES_PER_RELEASE: usize = 4096;

/// Who protects the index directory.
pub const OWNER: &str = "the search index";

/// What a file's metadata was when it was indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileMeta {
    pub size: u64,
    pub mtime_ns: i64,
    pub ino: u64,
}

impl FileMeta {
    pub fn of(meta: &std::fs::Metadata) -> FileMeta {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            FileMeta {
                size: meta.len(),
                mtime_ns: meta.mtime().saturating_mul(1_000_000_000).saturating_add(meta.mtime_nsec()),
                ino: meta.ino(),
            }
        }
        #[cfg(not(unix))]
        {
            let mtime_ns = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i64);
            FileMeta { size: meta.len(), mtime_ns, ino: 0 }
        }
    }
}

/// What indexing found in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum FileState {
    /// Valid UTF-8 without NUL; its trigrams are indexed.
    Text = 0,
    /// Contains a NUL byte: a search lists it as skipped.
    Binary = 1,
    /// Not valid UTF-8: a search lists it as skipped.
    NotUtf8 = 2,
    /// Could not be opened or read: a search counts it as visited and finds nothing in it.
    Unreadable = 3,
    /// Not indexed (too large to read whole): a search reads it.
    Unindexed = 4,
}

impl FileState {
    fn from_u8(byte: u8) -> FileState {
        match byte {
            0 => FileState::Text,
            1 => FileState::Binary,
            2 => FileState::NotUtf8,
            3 => FileState::Unreadable,
            _ => FileState::Unindexed,
        }
    }
}

/// A file re-indexed since the segment was written.
#[derive(Debug, Clone)]
struct DeltaFile {
    meta: FileMeta,
    state: FileState,
    /// Sorted, distinct.
    trigrams: Vec<Trigram>,
    /// When it was read (for the racy-timestamp check of a re-check).
    read_at_ns: i64,
}

/// What a search says about the index it used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexStatus {
    Ready,
    Building,
    Scanning(String),
}

impl std::fmt::Display for IndexStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IndexStatus::Ready => f.write_str("ready"),
            IndexStatus::Building => f.write_str("building"),
            IndexStatus::Scanning(reason) => write!(f, "scanning ({reason})"),
        }
    }
}

/// Settings of an index; the defaults serve; tests lower the limits to make states reproducible.
#[derive(Debug, Clone)]
pub struct IndexOptions {
    /// More notifications than this between two searches count as lost (an overflow).
    pub event_limit: usize,
    /// A re-check after lost notifications starts at once (`false`: when the next search finds
    /// them lost, so that search deterministically scans; tests).
    pub eager_recheck: bool,
    /// How long a search waits for its barrier notification before it scans instead.
    pub barrier_timeout: Duration,
    /// While set, the index waits before reading the tree (tests observe `building` with it).
    pub hold_build: Option<Arc<AtomicBool>>,
    /// The notification thread waits this long before applying what it read (tests: a slow
    /// thread, so that only the barrier keeps answers current).
    pub notification_delay: Duration,
    /// Indexed text up to this size is read whole by a search; a larger file is searched as a
    /// stream (the index already checked it), so a search's reading threads each hold at most
    /// this much of a file, not the largest file they read (tests lower it to stream more files).
    pub read_whole_up_to: u64,
}

impl Default for IndexOptions {
    fn default() -> IndexOptions {
        IndexOptions {
            event_limit: usize::MAX,
            eager_recheck: true,
            barrier_timeout: Duration::from_secs(2),
            hold_build: None,
            notification_delay: Duration::ZERO,
            read_whole_up_to: 1 << 20,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    Building,
    Ready,
    /// Notifications may have been lost; a re-check of the tree restores `Ready`.
    Lost(String),
    /// Notifications cannot be had at all; every search scans.
    Unavailable(String),
}

impl Phase {
    fn status(&self) -> IndexStatus {
        match self {
            Phase::Building => IndexStatus::Building,
            Phase::Ready => IndexStatus::Ready,
            Phase::Lost(reason) | Phase::Unavailable(reason) => IndexStatus::Scanning(reason.clone()),
        }
    }
}

/// The mutable state, behind one lock.
struct Inner {
    phase: Phase,
    base: Option<Arc<Segment>>,
    /// Base files superseded by `delta` or deleted (bitset over base ids).
    dead: Vec<u64>,
    /// Descriptors of base files kept open between searches (forgotten as they die).
    open_files: Arc<OpenFiles>,
    delta: BTreeMap<String, DeltaFile>,
    /// Paths (relative to the root) reported changed and not yet re-indexed, with the generation
    /// of their latest report.
    dirty: HashMap<String, u64>,
    generation: u64,
    /// Bumped each time notifications are lost, so a re-check that overlapped a loss does not
    /// declare the index current.
    lost_generation: u64,
    recheck_wanted: bool,
    /// File notifications since the last search's barrier (only Linux has notifications).
    #[cfg(target_os = "linux")]
    events_since_barrier: usize,
}

struct Shared {
    root: PathBuf,
    dir: PathBuf,
    options: IndexOptions,
    inner: RwLock<Inner>,
    /// Wakes the worker (dirty paths, a re-check, shutdown).
    work: Mutex<bool>,
    work_ready: Condvar,
    barrier_seen: Mutex<u64>,
    barrier_cv: Condvar,
    barrier_next: AtomicU64,
    stop: AtomicBool,
}

impl Shared {
    fn wake_worker(&self) {
        *self.work.lock() = true;
        self.work_ready.notify_all();
    }

    /// Records that `rel` (relative to the root) changed.
    fn mark_dirty(&self, rel: String) {
        let mut inner = self.inner.write();
        inner.generation += 1;
        let generation = inner.generation;
        inner.dirty.insert(rel, generation);
        drop(inner);
        self.wake_worker();
    }

    /// Counts one notification; past the limit they count as lost.
    #[cfg(target_os = "linux")]
    fn count_event(&self) {
        let mut inner = self.inner.write();
        inner.events_since_barrier += 1;
        if inner.events_since_barrier > self.options.event_limit && !matches!(inner.phase, Phase::Lost(_)) {
            let reason = format!("more than {} file notifications between two searches", self.options.event_limit);
            drop(inner);
            self.lose(reason);
        }
    }

    /// Notifications were lost: searches scan until a re-check re-establishes the index.
    fn lose(&self, reason: String) {
        let mut inner = self.inner.write();
        if matches!(inner.phase, Phase::Unavailable(_)) {
            return;
        }
        inner.lost_generation += 1;
        if inner.phase != Phase::Building {
            inner.phase = Phase::Lost(reason);
        }
        inner.recheck_wanted = self.options.eager_recheck || inner.phase == Phase::Building;
        drop(inner);
        self.wake_worker();
    }

    fn unavailable(&self, reason: String) {
        self.inner.write().phase = Phase::Unavailable(reason);
        self.wake_worker();
    }

    fn status(&self) -> IndexStatus {
        self.inner.read().phase.status()
    }
}

/// The index of one project tree. Dropping it stops its threads.
pub struct SearchIndex {
    shared: Arc<Shared>,
}

impl SearchIndex {
    /// Starts indexing `root` in the background, keeping the index in `storage/.index`.
    pub fn start(root: PathBuf, storage: &Path, options: IndexOptions) -> Arc<SearchIndex> {
        let shared = Arc::new(Shared {
            root,
            dir: storage.join(DIR_NAME),
            options,
            inner: RwLock::new(Inner {
                phase: Phase::Building,
                base: None,
                dead: Vec::new(),
                open_files: Arc::new(OpenFiles::within_limit()),
                delta: BTreeMap::new(),
                dirty: HashMap::new(),
                generation: 0,
                lost_generation: 0,
                recheck_wanted: false,
                #[cfg(target_os = "linux")]
                events_since_barrier: 0,
            }),
            work: Mutex::new(false),
            work_ready: Condvar::new(),
            barrier_seen: Mutex::new(0),
            barrier_cv: Condvar::new(),
            barrier_next: AtomicU64::new(0),
            stop: AtomicBool::new(false),
        });
        worker::spawn(shared.clone());
        Arc::new(SearchIndex { shared })
    }

    /// The indexed root.
    pub fn root(&self) -> &Path {
        &self.shared.root
    }

    /// The size of indexed text a search reads whole (see [`IndexOptions::read_whole_up_to`]).
    pub fn read_whole_up_to(&self) -> u64 {
        self.shared.options.read_whole_up_to
    }

    /// The index's state now.
    pub fn status(&self) -> IndexStatus {
        self.shared.status()
    }

    /// A view for one search, once every notification of an earlier change has been applied; the
    /// reason to scan instead when the index cannot answer.
    pub fn view(&self) -> Result<View<'_>, IndexStatus> {
        if self.shared.status() == IndexStatus::Ready && !watch::barrier(&self.shared) {
            self.shared.lose("file notifications did not arrive in time".to_owned());
        }
        let inner = self.shared.inner.read();
        if inner.phase == Phase::Ready {
            return Ok(View { inner, root: &self.shared.root });
        }
        drop(inner);
        // Without eager re-checks, the first search that finds notifications lost asks for one.
        let mut inner = self.shared.inner.write();
        let ask = matches!(inner.phase, Phase::Lost(_)) && !inner.recheck_wanted;
        inner.recheck_wanted |= ask;
        let status = inner.phase.status();
        drop(inner);
        if ask {
            self.shared.wake_worker();
        }
        Err(status)
    }

    /// The observer that tells the index about the workspace's own changes.
    pub fn observer(self: &Arc<SearchIndex>) -> Arc<dyn MutationObserver> {
        Arc::new(IndexObserver { shared: self.shared.clone() })
    }

    /// Bytes of the index file on disk (0 before the first build is written).
    pub fn size_on_disk(&self) -> u64 {
        self.shared.inner.read().base.as_ref().map_or(0, |base| base.size() as u64)
    }
}

impl Drop for SearchIndex {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.wake_worker();
        watch::poke(&self.shared);
    }
}

struct IndexObserver {
    shared: Arc<Shared>,
}

impl MutationObserver for IndexObserver {
    fn mutated(&self, change: &Mutation) {
        for affected in change.before.iter().chain(&change.after) {
            if affected.path.area() == Area::Project {
                self.shared.mark_dirty(affected.path.relative().to_owned());
            }
        }
    }
}

/// The base segment's files, for reading them by id after the view is dropped.
pub struct BaseFiles {
    segment: Arc<Segment>,
    open: Arc<OpenFiles>,
}

impl BaseFiles {
    /// The path of file `id` (relative to the indexed root).
    pub fn path(&self, id: usize) -> &str {
        self.segment.path(id)
    }

    /// The size of file `id` when it was indexed, and whether it held no CR.
    pub fn text(&self, id: usize) -> (u64, bool) {
        (self.segment.meta(id).size, self.segment.cr_free(id))
    }

    /// Drops the index's mapped pages from the process's memory (see [`FILES_PER_RELEASE`]).
    pub fn release_pages(&self) {
        self.segment.release_pages();
    }

    /// The descriptors kept for these files.
    pub fn open_files(&self) -> &OpenFiles {
        &self.open
    }
}

/// One search's look at the index, holding its read lock (briefly: the caller collects what to read,
/// then drops it).
pub struct View<'a> {
    inner: RwLockReadGuard<'a, Inner>,
    root: &'a Path,
}

/// One indexed file below the search start.
pub struct Listed<'a> {
    /// Relative to the indexed root.
    pub rel: &'a str,
    pub state: FileState,
    /// Its size when it was indexed.
    pub size: u64,
    /// Its trigrams admit the query (always true for files that are not indexed text).
    pub candidate: bool,
    /// Its id in the base segment (`None`: re-indexed since), the key of its kept descriptor.
    pub base_id: Option<usize>,
    /// Indexed as text without any CR (`false` when not known).
    pub cr_free: bool,
    /// The id (in the base segment) shared by the files indexed with this file's content, when
    /// other files have it: reading one of them answers for all that are unchanged.
    pub same_content: Option<usize>,
}

impl View<'_> {
    pub fn root(&self) -> &Path {
        self.root
    }

    /// The files this view lists with a `base_id`: their paths and kept descriptors, usable after
    /// the view is dropped.
    pub fn base_files(&self) -> Option<BaseFiles> {
        let segment = self.inner.base.clone()?;
        Some(BaseFiles { segment, open: self.inner.open_files.clone() })
    }

    /// Changed paths (relative to the root) at or below `prefix` (`""`: the root), outermost only;
    /// `Err(())` when a changed path contains `prefix` itself.
    #[expect(clippy::result_unit_err, reason = "the only failure is \"scan the whole start\"")]
    pub fn changed_under(&self, prefix: &str) -> Result<Vec<String>, ()> {
        let mut found: Vec<&String> = Vec::new();
        for path in self.inner.dirty.keys() {
            if is_under(path, prefix) {
                found.push(path);
            } else if is_under(prefix, path) {
                return Err(());
            }
        }
        found.sort();
        let mut outer: Vec<String> = Vec::new();
        for path in found {
            if outer.last().is_none_or(|last| !is_under(path, last)) {
                outer.push(path.clone());
            }
        }
        Ok(outer)
    }

    /// Calls `each` for every indexed file below `prefix` that no changed path covers. With
    /// `every` false, the files a search neither reads nor lists (text the query excludes,
    /// unreadable files) are only counted, without their paths; the count is returned.
    pub fn for_each(&self, prefix: &str, query: &Query, every: bool, mut each: impl FnMut(Listed<'_>)) -> u64 {
        let covered = |rel: &str| -> bool {
            !self.inner.dirty.is_empty() && ancestors(rel).any(|a| self.inner.dirty.contains_key(a))
        };
        let mut passed_over = 0;
        if let Some(base) = &self.inner.base {
            let candidates = base.candidates(query);
            // Paths below `prefix` sort between `prefix/` and `prefix0` (`0` follows `/`).
            let (from, to) = match prefix.is_empty() {
                true => (0, base.len()),
                false => (base.lower_bound(&format!("{prefix}/")), base.lower_bound(&format!("{prefix}0"))),
            };
            let by_count = !every && self.inner.dirty.is_empty();
            // The query's posting lists were read into `candidates`.
            base.release_pages();
            for id in from..to {
                if (id - from + 1).is_multiple_of(FILES_PER_RELEASE) {
                    base.release_pages();
                }
                if segment::has(&self.inner.dead, id) {
                    continue;
                }
                let state = base.state(id);
                let same_content = base.same_content(id);
                // A file with another's content has no postings of its own: that file's stand for it.
                let candidate = state != FileState::Text
                    || candidates.as_ref().is_none_or(|set| segment::has(set, same_content.unwrap_or(id)));
                if by_count && (state == FileState::Unreadable || !candidate) {
                    passed_over += 1;
                    continue;
                }
                let rel = base.path(id);
                if !covered(rel) {
                    let (size, cr_free) = (base.meta(id).size, base.cr_free(id));
                    each(Listed { rel, state, size, candidate, base_id: Some(id), cr_free, same_content });
                }
            }
        }
        let range_start = if prefix.is_empty() { String::new() } else { format!("{prefix}/") };
        for (rel, file) in self.inner.delta.range(range_start..) {
            if !prefix.is_empty() && !is_under(rel, prefix) {
                break;
            }
            if covered(rel) {
                continue;
            }
            let candidate = file.state != FileState::Text || query.matches_sorted(&file.trigrams);
            let (size, cr_free, same_content) = (file.meta.size, false, None);
            each(Listed { rel, state: file.state, size, candidate, base_id: None, cr_free, same_content });
        }
        passed_over
    }
}

/// `path` is `prefix` or lies below it (`""` is the root, above everything).
fn is_under(path: &str, prefix: &str) -> bool {
    prefix.is_empty()
        || path == prefix
        || (path.starts_with(prefix) && path.as_bytes().get(prefix.len()) == Some(&b'/'))
}

/// `rel` and each of its ancestors below the root, innermost first.
fn ancestors(rel: &str) -> impl Iterator<Item = &str> {
    std::iter::successors(Some(rel), |p| p.rfind('/').map(|at| &p[..at]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_below_a_prefix() {
        assert!(is_under("a/b", "a"));
        assert!(is_under("a", "a"));
        assert!(!is_under("ab", "a"));
        assert!(is_under("x", ""));
        assert_eq!(ancestors("a/b/c").collect::<Vec<_>>(), ["a/b/c", "a/b", "a"]);
    }
}

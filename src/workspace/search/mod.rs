//! Text search over one file or one directory tree, at ripgrep speed, with exact line counts.
//!
//! This module owns the search engine behind `workspace_text_search`: walking the tree, deciding which
//! files are searched, matching lines, counting them and keeping the first ones. It knows nothing about
//! MCP, qualified paths, progress throttling or result resources; callers pass an absolute start path
//! and receive paths relative to it.
//!
//! The walk uses the `ignore` crate's parallel walker with its standard filters off, so ignore files
//! are not applied and build directories are searched. Matching uses ripgrep's `grep-regex` matcher
//! (built once, shared by all threads) and `grep-searcher` line searcher. A file up to 32 MiB is read
//! whole into a per-thread buffer, checked and searched as one slice; a larger one is read twice as a
//! stream (checked, then searched), so a worker's memory stays bounded by that limit plus its longest
//! line.
//!
//! Architecture invariant: links are never followed, and directories whose name starts with `.` below
//! the start are never entered; dot files are searched.
//! Architecture invariant: a file containing a NUL byte or invalid UTF-8 contributes no matching line,
//! only an entry in `skipped_files`; it is checked in full before it is searched.
//! Architecture invariant: `matches_count` counts every matching line of the whole scan, while
//! `matches` keeps the `max_matches` smallest `(rel_path, line)` keys, whatever the thread timing.
//! Architecture invariant: spans are zero-based Unicode code points, half-open, computed only for kept
//! lines, and a line never includes its terminator (LF, CR LF, or a lone CR, which is searched as LF).

use std::io::{self, Seek};
use std::num::NonZeroUsize;
use std::path::{Component, Path};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use grep_matcher::LineTerminator;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::{DirEntry, WalkBuilder, WalkState};

use crate::workspace::opened::TraversalOpener;
use crate::workspace::write::is_temp_name;

mod content;
mod sink;

use content::{check_streamed, read_whole};
use sink::{LineSink, spans, trim_terminator};

/// What to look for and which files to look in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchOptions {
    /// The text or pattern to find; must not be empty.
    pub query: String,
    /// `true`: `query` is a Rust `regex` pattern; `false`: `query` is literal text.
    pub regex: bool,
    /// `false` folds case with Unicode simple case folding.
    pub case_sensitive: bool,
    /// File-name extensions to search, with or without a leading dot, compared case-insensitively.
    ///
    /// `None` searches every file, `Some(vec![])` searches no file, and an empty entry `""` selects
    /// files without an extension. A file has an extension when its name has a dot after its first
    /// character and before its last (`.bashrc` and `notes.` have none). An entry matches any dot
    /// suffix of the name, so `gz` and `tar.gz` both select `a.tar.gz`.
    pub extensions: Option<Vec<String>>,
    /// The most matching lines to return (at least 1); scanning and counting continue past it.
    pub max_matches: usize,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchMatch {
    /// The file's path relative to the search start, `/`-separated; `""` when the start is a file.
    pub rel_path: String,
    /// One-based line number.
    pub line: u64,
    /// The line without its terminator (LF, or CR LF).
    pub text: String,
    /// Every match on the line, zero-width ones included, as zero-based Unicode code point offsets
    /// into `text`, half-open `[start, end)`, in order.
    pub spans: Vec<[usize; 2]>,
}

/// The result of a completed search.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SearchOutcome {
    /// At most `max_matches` matching lines: the smallest by `(rel_path, line)`, in that order.
    pub matches: Vec<SearchMatch>,
    /// The exact number of matching lines in all searched files.
    pub matches_count: u64,
    /// Relative paths of files skipped because they contain a NUL byte or are not valid UTF-8, sorted.
    pub skipped_files: Vec<String>,
    /// The number of files that passed the extension filter and were opened for searching.
    pub files_visited: u64,
}

/// Why a search did not produce an outcome.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("search query is empty")]
    EmptyQuery,
    #[error("max_matches must be at least 1")]
    ZeroMaxMatches,
    #[error("search query contains a line break, but matches never span lines")]
    LineBreakInQuery,
    #[error("invalid regex: {message}")]
    InvalidRegex { message: String },
    #[error("search query cannot be compiled: {message}")]
    UncompilableQuery { message: String },
    #[error("cannot read the search path")]
    StartUnreadable {
        #[source]
        source: io::Error,
    },
    #[error("the search path is a link, and searches do not follow links")]
    StartIsLink,
    #[error("the search path is neither a file nor a directory")]
    StartNotFileOrDirectory,
    #[error("the search was cancelled")]
    Cancelled,
    /// The searcher rejected its configuration; this indicates a bug, not a problem with the input.
    #[error("searching `{rel_path}` failed: {message}")]
    SearcherFailed { rel_path: String, message: String },
}

/// Searches `start` (a file, or a directory tree) for lines matching `options`.
///
/// The extension filter applies to a file start too. Relative paths of entries whose names are not
/// valid Unicode are converted lossily.
///
/// `on_file` is called from worker threads before each file is searched, with the number of files
/// visited so far (this one included) and the file's relative path. `cancel` is polled before each
/// directory entry; once it returns `true` the walk stops and the result is [`SearchError::Cancelled`].
/// Entries that vanish or cannot be read during the walk are left out silently, as ripgrep does when
/// its messages are off.
///
/// # Errors
///
/// Invalid options (an empty query, `max_matches` of 0, a literal with a line break, a pattern that
/// does not compile), a start that cannot be read, is a link or is neither a file nor a directory,
/// and cancellation.
pub fn search(
    start: &Path,
    options: &SearchOptions,
    on_file: &(dyn Fn(u64, &str) + Sync),
    cancel: &(dyn Fn() -> bool + Sync),
) -> Result<SearchOutcome, SearchError> {
    let plan = Plan::new(options)?;
    search_with_plan(start, &plan, options.max_matches, on_file, cancel)
}

fn search_with_plan(
    start: &Path,
    plan: &Plan,
    max_matches: usize,
    on_file: &(dyn Fn(u64, &str) + Sync),
    cancel: &(dyn Fn() -> bool + Sync),
) -> Result<SearchOutcome, SearchError> {
    let start_type =
        std::fs::symlink_metadata(start).map_err(|source| SearchError::StartUnreadable { source })?.file_type();
    let shared = Shared::new(max_matches);
    if start_type.is_symlink() {
        return Err(SearchError::StartIsLink);
    } else if start_type.is_file() {
        let mut worker = Worker::new(plan, &shared, on_file, cancel);
        let name = start.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        // The result only matters for cancellation, which `shared` records.
        let _ = worker.visit_file(start, &name, String::new());
    } else if start_type.is_dir() {
        let threads = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
        WalkBuilder::new(start)
            .standard_filters(false)
            .follow_links(false)
            .threads(threads)
            .filter_entry(|entry| !is_dot_dir(entry))
            .build_parallel()
            .run(|| {
                let mut worker = Worker::new(plan, &shared, on_file, cancel);
                Box::new(move |entry| worker.visit_entry(start, entry))
            });
    } else {
        return Err(SearchError::StartNotFileOrDirectory);
    }
    shared.finish()
}

/// The validated, compiled form of [`SearchOptions`], shared read-only by all workers.
struct Plan {
    matcher: RegexMatcher,
    /// Lowercased extensions without their leading dot; `None` means every file.
    extensions: Option<Vec<String>>,
    /// Whether a matched line ending in CR LF must be re-checked without its CR (see [`LineSink`]).
    recheck_crlf_lines: bool,
    /// Larger files are streamed rather than read whole; lowered by tests to exercise streaming.
    whole_file_limit: u64,
}

impl Plan {
    fn new(options: &SearchOptions) -> Result<Plan, SearchError> {
        if options.query.is_empty() {
            return Err(SearchError::EmptyQuery);
        }
        if options.max_matches == 0 {
            return Err(SearchError::ZeroMaxMatches);
        }
        if !options.regex && options.query.contains(['\n', '\r']) {
            return Err(SearchError::LineBreakInQuery);
        }
        // `multi_line` makes `^`/`$` line anchors, since the searcher runs the matcher over whole
        // buffers; `crlf` keeps CR out of every match and lets `$` match before CR LF.
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(!options.case_sensitive)
            .fixed_strings(!options.regex)
            .multi_line(true)
            .crlf(true)
            .build(&options.query)
            .map_err(|err| {
                let message = err.to_string();
                match options.regex {
                    true => SearchError::InvalidRegex { message },
                    false => SearchError::UncompilableQuery { message },
                }
            })?;
        let extensions = options
            .extensions
            .as_ref()
            .map(|exts| exts.iter().map(|ext| ext.strip_prefix('.').unwrap_or(ext).to_lowercase()).collect());
        // A literal is never empty and never contains CR, so only a pattern can match a CR LF line
        // solely at the position between CR and LF (for example `\B`).
        Ok(Plan { matcher, extensions, recheck_crlf_lines: options.regex, whole_file_limit: WHOLE_FILE_LIMIT })
    }

    fn selects_file(&self, file_name: &str) -> bool {
        let Some(extensions) = &self.extensions else { return true };
        if extensions.is_empty() {
            return false;
        }
        let name = file_name.to_lowercase();
        extensions.iter().any(|ext| match ext.is_empty() {
            true => !has_extension(&name),
            false => {
                name.len() > ext.len() + 1
                    && name.ends_with(ext.as_str())
                    && name.as_bytes()[name.len() - ext.len() - 1] == b'.'
            }
        })
    }
}

/// Whether a file name has an extension: a dot after the first character and before the last.
fn has_extension(name: &str) -> bool {
    name.rfind('.').is_some_and(|dot| dot > 0 && dot + 1 < name.len())
}

/// A directory below the start whose name begins with a dot; the start itself is always entered.
fn is_dot_dir(entry: &DirEntry) -> bool {
    entry.depth() > 0
        && entry.file_type().is_some_and(|t| t.is_dir())
        && entry.file_name().as_encoded_bytes().first() == Some(&b'.')
}

/// State shared by all workers of one search.
struct Shared {
    kept: Mutex<Kept>,
    skipped_files: Mutex<Vec<String>>,
    matches_count: AtomicU64,
    files_visited: AtomicU64,
    cancelled: AtomicBool,
    failure: Mutex<Option<SearchError>>,
}

impl Shared {
    fn new(max_matches: usize) -> Shared {
        Shared {
            kept: Mutex::new(Kept { cap: max_matches, lines: Vec::new() }),
            skipped_files: Mutex::new(Vec::new()),
            matches_count: AtomicU64::new(0),
            files_visited: AtomicU64::new(0),
            cancelled: AtomicBool::new(false),
            failure: Mutex::new(None),
        }
    }

    fn fail(&self, err: SearchError) {
        lock(&self.failure).get_or_insert(err);
    }

    fn finish(self) -> Result<SearchOutcome, SearchError> {
        if self.cancelled.into_inner() {
            return Err(SearchError::Cancelled);
        }
        if let Some(err) = into_inner(self.failure) {
            return Err(err);
        }
        let matches = into_inner(self.kept).lines;
        let mut skipped_files = into_inner(self.skipped_files);
        skipped_files.sort_unstable();
        Ok(SearchOutcome {
            matches,
            matches_count: self.matches_count.into_inner(),
            skipped_files,
            files_visited: self.files_visited.into_inner(),
        })
    }
}

/// The kept matching lines, sorted by `(rel_path, line)`, never more than `cap`.
struct Kept {
    cap: usize,
    lines: Vec<SearchMatch>,
}

impl Kept {
    /// Where the lines of `rel_path` go; each file merges once, so its path is not yet present.
    fn position(&self, rel_path: &str) -> usize {
        self.lines.partition_point(|m| m.rel_path.as_str() < rel_path)
    }

    /// How many of a file's first lines can still be kept; an upper bound for later calls.
    fn room_for(&self, rel_path: &str) -> usize {
        self.cap - self.position(rel_path)
    }

    /// Inserts one file's lines (sorted by line, all with `rel_path`) and drops what no longer fits.
    fn merge(&mut self, rel_path: &str, file_lines: Vec<SearchMatch>) {
        let pos = self.position(rel_path);
        self.lines.splice(pos..pos, file_lines);
        self.lines.truncate(self.cap);
    }
}

/// Files up to this size are read whole and searched as one slice; larger ones are streamed twice
/// (checked, then searched) so that a worker's memory stays bounded.
const WHOLE_FILE_LIMIT: u64 = 32 << 20;

/// How much is read between two checks for NUL and invalid UTF-8, so that a large binary is
/// abandoned early; also the buffer size of the streamed check.
const CHUNK_SIZE: usize = 256 << 10;

/// One walker thread's reusable state.
struct Worker<'a> {
    plan: &'a Plan,
    shared: &'a Shared,
    on_file: &'a (dyn Fn(u64, &str) + Sync),
    cancel: &'a (dyn Fn() -> bool + Sync),
    /// Searches whole-file slices; line numbers are computed later, for kept lines only.
    slice_searcher: Searcher,
    /// Searches streamed large files, counting line numbers as it goes.
    stream_searcher: Searcher,
    /// The current file's bytes, or the streamed check's chunk; reused so most files cost no allocation.
    buf: Vec<u8>,
    /// Copies of kept lines of a streamed file, whose bytes do not stay in memory.
    copies: Vec<u8>,
    /// The current file's first matching lines, at most as many as the kept set has room for.
    found: Vec<FoundLine>,
    /// Opens files relative to their verified directory (a link swap cannot redirect them).
    opener: TraversalOpener,
}

/// A matching line recorded during a search.
struct FoundLine {
    /// One-based line number, when the searcher counted lines (streamed files only).
    line: Option<u64>,
    /// The line's bytes with its terminator: in `buf` for whole files, in `copies` for streamed ones.
    start: usize,
    end: usize,
}

/// What reading a file found out about its contents.
enum Content {
    /// Valid UTF-8 without NUL; `has_cr`: it contains a CR (so lone CRs may end lines).
    Text {
        has_cr: bool,
    },
    /// Contains a NUL byte.
    Binary,
    NotUtf8,
}

impl<'a> Worker<'a> {
    fn new(
        plan: &'a Plan,
        shared: &'a Shared,
        on_file: &'a (dyn Fn(u64, &str) + Sync),
        cancel: &'a (dyn Fn() -> bool + Sync),
    ) -> Worker<'a> {
        // Contents are checked for NUL and UTF-8 before a searcher sees them, and BOM sniffing would
        // transcode and shift byte offsets, so both are off.
        let searcher = |line_number: bool| {
            SearcherBuilder::new()
                .line_terminator(LineTerminator::crlf())
                .binary_detection(BinaryDetection::none())
                .bom_sniffing(false)
                .line_number(line_number)
                .multi_line(false)
                .build()
        };
        Worker {
            plan,
            shared,
            on_file,
            cancel,
            slice_searcher: searcher(false),
            stream_searcher: searcher(true),
            buf: Vec::new(),
            copies: Vec::new(),
            opener: TraversalOpener::default(),
            found: Vec::new(),
        }
    }

    fn visit_entry(&mut self, start: &Path, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        let Ok(entry) = entry else { return WalkState::Continue };
        // Symbolic links (and Windows junctions) report their own type, so they are never files here.
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return self.check_cancel();
        }
        // The temporary file of an interrupted write is not user content.
        if entry.file_name().to_str().is_some_and(is_temp_name) {
            return WalkState::Continue;
        }
        let Some(rel_path) = relative_path(start, entry.path()) else { return WalkState::Continue };
        self.visit_file(entry.path(), &entry.file_name().to_string_lossy(), rel_path)
    }

    fn check_cancel(&self) -> WalkState {
        if self.shared.cancelled.load(Ordering::Relaxed) || (self.cancel)() {
            self.shared.cancelled.store(true, Ordering::Relaxed);
            return WalkState::Quit;
        }
        WalkState::Continue
    }

    fn visit_file(&mut self, path: &Path, file_name: &str, rel_path: String) -> WalkState {
        if let WalkState::Quit = self.check_cancel() {
            return WalkState::Quit;
        }
        if !self.plan.selects_file(file_name) {
            return WalkState::Continue;
        }
        let n_visited = self.shared.files_visited.fetch_add(1, Ordering::Relaxed) + 1;
        (self.on_file)(n_visited, &rel_path);
        // A file that vanishes or cannot be read is left out, like any other walk error.
        // Opened only if it is still exactly the walked path: a directory swapped for a link during
        // the walk cannot feed another file's bytes in under this name.
        let Ok(mut file) = self.opener.open(path) else { return WalkState::Continue };
        let size = file.metadata().map_or(0, |metadata| metadata.len());
        let whole = size <= self.plan.whole_file_limit;
        let content = match whole {
            true => read_whole(&mut file, size, &mut self.buf),
            false => check_streamed(&mut file, &mut self.buf),
        };
        let has_cr = match content {
            Ok(Content::Text { has_cr }) => has_cr,
            Ok(Content::Binary | Content::NotUtf8) => {
                lock(&self.shared.skipped_files).push(rel_path);
                return WalkState::Continue;
            }
            Err(_) => return WalkState::Continue,
        };
        self.found.clear();
        self.copies.clear();
        let mut sink = LineSink {
            matcher: &self.plan.matcher,
            recheck_crlf_lines: self.plan.recheck_crlf_lines,
            room: lock(&self.shared.kept).room_for(&rel_path),
            n_lines: 0,
            found: &mut self.found,
            copies: (!whole).then_some(&mut self.copies),
        };
        // Lines also end at a lone CR: it becomes LF (same offsets) before the LF-splitting searcher
        // runs; the text check already found whether the file holds a CR at all.
        let searched = match whole {
            true => {
                if has_cr {
                    crate::text::replace_lone_cr(&mut self.buf);
                }
                self.slice_searcher.search_slice(&self.plan.matcher, &self.buf, &mut sink)
            }
            false => match file.rewind() {
                Ok(()) => self.stream_searcher.search_reader(
                    &self.plan.matcher,
                    crate::text::LoneCrAsLf::new(&mut file),
                    &mut sink,
                ),
                Err(_) => return WalkState::Continue,
            },
        };
        let n_lines = sink.n_lines;
        if let Err(err) = searched {
            // Reading a streamed file can fail midway; a failure of the searcher itself is a bug.
            if whole {
                self.shared.fail(SearchError::SearcherFailed { rel_path, message: err.to_string() });
                return WalkState::Quit;
            }
            return WalkState::Continue;
        }
        self.shared.matches_count.fetch_add(n_lines, Ordering::Relaxed);
        if !self.found.is_empty() {
            self.keep_found(&rel_path, whole);
        }
        WalkState::Continue
    }

    /// Offers the current file's found lines to the shared kept set.
    fn keep_found(&mut self, rel_path: &str, whole: bool) {
        let source = if whole { &self.buf } else { &self.copies };
        let (mut line, mut counted_to) = (1, 0);
        let file_lines = self
            .found
            .iter()
            .map(|found| {
                let line = found.line.unwrap_or_else(|| {
                    line += memchr::memchr_iter(b'\n', &source[counted_to..found.start]).count() as u64;
                    counted_to = found.start;
                    line
                });
                // Streamed files are checked before they are searched, but could change in between.
                let text = String::from_utf8_lossy(trim_terminator(&source[found.start..found.end]));
                let spans = spans(&self.plan.matcher, &text);
                SearchMatch { rel_path: rel_path.to_owned(), line, text: text.into_owned(), spans }
            })
            .collect();
        lock(&self.shared.kept).merge(rel_path, file_lines);
    }
}

// A worker that panics cannot leave the shared collections in a harmful state (each update is one
// push, splice or insert), so a poisoned lock is used as it is.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn into_inner<T>(mutex: Mutex<T>) -> T {
    mutex.into_inner().unwrap_or_else(PoisonError::into_inner)
}

/// `path` relative to `start`, `/`-separated; `None` if it is not below `start`.
fn relative_path(start: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(start).ok()?;
    let mut res = String::with_capacity(rel.as_os_str().len());
    for component in rel.components() {
        let Component::Normal(name) = component else { return None };
        if !res.is_empty() {
            res.push('/');
        }
        res.push_str(&name.to_string_lossy());
    }
    Some(res)
}

#[cfg(test)]
mod tests;

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
//! line. A file the search index holds as unchanged text is not checked again; over the index's
//! whole-read size (1 MiB) it is streamed once, through a buffer that may grow by at most that size
//! (a longer line reads it whole after all).
//!
//! Architecture invariant: links are never followed, and directories whose name starts with `.` below
//! the start are never entered; dot files are searched.
//! Architecture invariant: a file containing a NUL byte or invalid UTF-8 contributes no matching line,
//! only an entry in `skipped_files`; it is checked in full before it is searched.
//! Architecture invariant: `matches_count` counts every matching line of the whole scan, while
//! `matches` keeps the `max_matches` smallest `(rel_path, line)` keys, whatever the thread timing.
//! Architecture invariant: spans are zero-based Unicode code points, half-open, computed only for kept
//! lines, and a line never includes its terminator (LF, CR LF, or a lone CR, which is searched as LF).

use std::fs::File;
use std::io;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use grep_matcher::LineTerminator;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::{DirEntry, WalkBuilder, WalkState};

use crate::workspace::opened::TraversalOpener;
use crate::workspace::write::is_temp_name;
use index::OpenFiles;

mod content;
mod filter;
pub mod index;
mod indexed;
mod plan;
mod shared;
mod sink;

use content::{check_streamed, read_indexed_text, read_whole, skip_bom};
use filter::relative_path;
pub use indexed::search_indexed;
use plan::Plan;
use shared::{Shared, lock};
pub use sink::{LONG_LINE_CHARS, LONG_LINE_WINDOW};
use sink::{LineSink, clip_long_line, spans, trim_terminator};

/// The UTF-8 byte-order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

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
    /// Matching lines to pass over before the returned ones (paging), in `(rel_path, line)` order.
    pub offset: usize,
    /// Globs of files and directories to leave out ([`filter`]).
    pub exclude: Vec<String>,
    /// Absolute directories left out unless the search starts inside one (the server's default
    /// exclusions).
    pub excluded_dirs: Vec<PathBuf>,
}

/// A file the search index holds as unchanged text.
#[derive(Clone, Copy)]
pub(super) struct IndexedText<'a> {
    /// Its size when it was indexed.
    size: u64,
    /// It held no CR when it was indexed.
    cr_free: bool,
    /// Its id in the index's base and the descriptors kept for them.
    kept: Option<(usize, &'a OpenFiles)>,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchMatch {
    /// The file's path relative to the search start, `/`-separated; `""` when the start is a file.
    pub rel_path: String,
    /// One-based line number.
    pub line: u64,
    /// The line without its terminator (LF, or CR LF); for a long line, [`LONG_LINE_WINDOW`]
    /// characters around its first match.
    pub text: String,
    /// Every match in `text`, zero-width ones included, as zero-based Unicode code point offsets
    /// into `text`, half-open `[start, end)`, in order.
    pub spans: Vec<[usize; 2]>,
    /// Set when `text` is a window of a line longer than [`LONG_LINE_CHARS`].
    pub clip: Option<LineClip>,
}

/// Where the window of a long line lies in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineClip {
    /// Characters of the whole line.
    pub line_chars: usize,
    /// The zero-based character column where `text` starts.
    pub from: usize,
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
    /// Every file with a matching line and its number of matching lines, sorted by path.
    pub file_counts: Vec<(String, u64)>,
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
    #[error("invalid exclude pattern `{pattern}`: {reason}")]
    InvalidExclude { pattern: String, reason: String },
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
    let mut plan = Plan::new(options)?;
    plan.exclusions = plan.exclusions.for_start(start);
    let mut outcome =
        search_with_plan(start, &plan, options.offset.saturating_add(options.max_matches), on_file, cancel)?;
    outcome.matches.drain(..options.offset.min(outcome.matches.len()));
    Ok(outcome)
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
        let mut worker = Worker::new(plan, &shared, start.parent().unwrap_or(start), on_file, cancel);
        let name = start.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        // The result only matters for cancellation, which `shared` records.
        let _ = worker.visit_file(start, &name, String::new(), None);
    } else if start_type.is_dir() {
        walk_tree(start, start, plan, &shared, on_file, cancel);
    } else {
        return Err(SearchError::StartNotFileOrDirectory);
    }
    shared.finish()
}

/// Searches every file below `walk_root` (itself a directory at or below `start`, entered whatever
/// its name) with the walk rules of a search of `start`: paths and exclusions are relative to `start`.
fn walk_tree(
    walk_root: &Path,
    start: &Path,
    plan: &Plan,
    shared: &Shared,
    on_file: &(dyn Fn(u64, &str) + Sync),
    cancel: &(dyn Fn() -> bool + Sync),
) {
    let threads = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    WalkBuilder::new(walk_root)
        .standard_filters(false)
        .follow_links(false)
        .threads(threads)
        .filter_entry({
            let (exclusions, start) = (plan.exclusions.clone(), start.to_path_buf());
            move |entry| !is_dot_dir(entry) && !exclusions.leaves_out(&start, entry)
        })
        .build_parallel()
        .run(|| {
            let mut worker = Worker::new(plan, shared, start, on_file, cancel);
            Box::new(move |entry| worker.visit_entry(start, entry))
        });
}

/// A directory below the start whose name begins with a dot; the start itself is always entered.
fn is_dot_dir(entry: &DirEntry) -> bool {
    entry.depth() > 0
        && entry.file_type().is_some_and(|t| t.is_dir())
        && entry.file_name().as_encoded_bytes().first() == Some(&b'.')
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
    /// What the last file searched found, when it was read whole exactly as the index holds it:
    /// files the index holds with the same content are answered from it ([`Worker::visit_copy`]).
    answered: Option<Answered>,
}

/// The outcome of the last file searched, kept for files with its content.
#[derive(Clone, Copy)]
struct Answered {
    n_lines: u64,
    /// Bytes of its byte-order mark.
    skip: usize,
}

/// A line searcher whose buffer grows by at most `heap_limit` bytes (a longer line fails the
/// search). Contents are checked for NUL and UTF-8 before a searcher sees them, and BOM sniffing
/// would transcode and shift byte offsets, so both are off.
fn line_searcher(line_number: bool, heap_limit: Option<u64>) -> Searcher {
    SearcherBuilder::new()
        .line_terminator(LineTerminator::crlf())
        .binary_detection(BinaryDetection::none())
        .bom_sniffing(false)
        .line_number(line_number)
        .multi_line(false)
        .heap_limit(heap_limit.map(|limit| usize::try_from(limit).unwrap_or(usize::MAX)))
        .build()
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
    /// A worker for files below `root`.
    fn new(
        plan: &'a Plan,
        shared: &'a Shared,
        root: &Path,
        on_file: &'a (dyn Fn(u64, &str) + Sync),
        cancel: &'a (dyn Fn() -> bool + Sync),
    ) -> Worker<'a> {
        Worker {
            plan,
            shared,
            on_file,
            cancel,
            slice_searcher: line_searcher(false, None),
            stream_searcher: line_searcher(true, None),
            buf: Vec::new(),
            copies: Vec::new(),
            opener: TraversalOpener::beneath(root),
            found: Vec::new(),
            answered: None,
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
        self.visit_file(entry.path(), &entry.file_name().to_string_lossy(), rel_path, None)
    }

    fn check_cancel(&self) -> WalkState {
        if self.shared.cancelled.load(Ordering::Relaxed) || (self.cancel)() {
            self.shared.cancelled.store(true, Ordering::Relaxed);
            return WalkState::Quit;
        }
        WalkState::Continue
    }

    /// Searches one file. `indexed`: the search index holds it as text (valid UTF-8 without NUL,
    /// small enough to read whole) and it has not changed since, as far as the file notifications
    /// tell; it is read without asking its size and without checking it again, through the
    /// descriptor the index keeps for it when there is one.
    fn visit_file(
        &mut self,
        path: &Path,
        file_name: &str,
        rel_path: String,
        indexed: Option<IndexedText<'_>>,
    ) -> WalkState {
        self.answered = None;
        if let Some(state) = self.enter(file_name, &rel_path) {
            return state;
        }
        // A file that vanishes or cannot be read is left out, like any other walk error.
        // Opened only if it is still exactly the walked path: a directory swapped for a link during
        // the walk cannot feed another file's bytes in under this name.
        let kept = indexed.and_then(|text| text.kept);
        let reused = kept.and_then(|(id, open)| open.take(id));
        let Some(mut file) = reused.or_else(|| self.opener.open(path).ok()) else { return WalkState::Continue };
        // Indexed text larger than a whole read is streamed (the index checked it), through a
        // buffer that may not outgrow that size; a longer line makes it read whole after all.
        if indexed.is_some_and(|text| text.size > self.plan.read_whole_up_to) {
            let limited = line_searcher(true, Some(self.plan.read_whole_up_to));
            let unlimited = std::mem::replace(&mut self.stream_searcher, limited);
            let (searched, n_lines, _) = self.search(&mut file, &rel_path, false, false);
            // The stream's buffer (as long as the file's longest line) is not kept for other files.
            self.stream_searcher = unlimited;
            if searched.is_ok() {
                if let Some((id, open)) = kept {
                    open.give_back(id, file);
                }
                self.count_and_keep(rel_path, n_lines, false, 0);
                return WalkState::Continue;
            }
        }
        // A buffer that grew past a whole read for the file before is not kept for this one.
        if self.buf.capacity() as u64 > self.plan.read_whole_up_to {
            self.buf = Vec::new();
        }
        let known = indexed
            .and_then(|text| read_indexed_text(&file, text, self.plan.whole_file_limit, &mut self.buf).transpose());
        // Read whole, as long as it was indexed: the same content as the files indexed with it.
        let as_indexed =
            known.as_ref().is_some_and(Result::is_ok) && indexed.is_some_and(|text| self.buf.len() as u64 == text.size);
        let (whole, content) = match known {
            Some(content) => (true, content),
            None => {
                let size = file.metadata().map_or(0, |metadata| metadata.len());
                match size <= self.plan.whole_file_limit {
                    true => (true, read_whole(&mut file, size, &mut self.buf)),
                    false => (false, check_streamed(&mut file, &mut self.buf)),
                }
            }
        };
        let has_cr = match content {
            Ok(Content::Text { has_cr }) => has_cr,
            Ok(Content::Binary | Content::NotUtf8) => {
                lock(&self.shared.skipped_files).push(rel_path);
                return WalkState::Continue;
            }
            Err(_) => return WalkState::Continue,
        };
        let (searched, n_lines, skip) = self.search(&mut file, &rel_path, whole, has_cr);
        if let Err(err) = searched {
            // Reading a streamed file can fail midway; a failure of the searcher itself is a bug.
            if whole {
                self.shared.fail(SearchError::SearcherFailed { rel_path, message: err.to_string() });
                return WalkState::Quit;
            }
            return WalkState::Continue;
        }
        if let (Some((id, open)), true) = (kept, whole) {
            open.give_back(id, file);
        }
        self.answered = as_indexed.then_some(Answered { n_lines, skip });
        self.count_and_keep(rel_path, n_lines, whole, skip);
        WalkState::Continue
    }

    /// Searches the file read whole into `buf` (`has_cr`: it holds a CR), or streamed from `file`,
    /// into `found` (and `copies` when streamed): whether the search ended, the matching lines and
    /// the bytes of the byte-order mark left out of a whole file.
    fn search(&mut self, file: &mut File, rel_path: &str, whole: bool, has_cr: bool) -> (io::Result<()>, u64, usize) {
        self.found.clear();
        self.copies.clear();
        let mut sink = LineSink {
            matcher: &self.plan.matcher,
            recheck_crlf_lines: self.plan.recheck_crlf_lines,
            room: lock(&self.shared.kept).room_for(rel_path),
            n_lines: 0,
            found: &mut self.found,
            copies: (!whole).then_some(&mut self.copies),
        };
        // Lines also end at a lone CR: it becomes LF (same offsets) before the LF-splitting searcher
        // runs (the stream's reader does the same); the text check already found whether a whole
        // file holds a CR at all. A byte-order mark is not part of line 1, so `^` matches at the
        // text after it.
        let skip = if whole && self.buf.starts_with(BOM) { BOM.len() } else { 0 };
        let searched = match whole {
            true => {
                if has_cr {
                    crate::text::replace_lone_cr(&mut self.buf);
                }
                self.slice_searcher.search_slice(&self.plan.matcher, &self.buf[skip..], &mut sink)
            }
            false => skip_bom(file).and_then(|()| {
                self.stream_searcher.search_reader(&self.plan.matcher, crate::text::LoneCrAsLf::new(file), &mut sink)
            }),
        };
        (searched, sink.n_lines, skip)
    }

    /// Searches a file the index holds with the content of the file just searched (`indexed`
    /// says so, and that it has not changed since): answered from that file's outcome when it was
    /// read as indexed, otherwise read as any other.
    fn visit_copy(&mut self, path: &Path, file_name: &str, rel_path: String, indexed: IndexedText<'_>) -> WalkState {
        let Some(Answered { n_lines, skip }) = self.answered else {
            return self.visit_file(path, file_name, rel_path, Some(indexed));
        };
        if let Some(state) = self.enter(file_name, &rel_path) {
            return state;
        }
        self.count_and_keep(rel_path, n_lines, true, skip);
        WalkState::Continue
    }

    /// Stops on cancellation and passes over a file the name filter leaves out (what to return
    /// instead of searching it); otherwise counts the file as visited.
    fn enter(&self, file_name: &str, rel_path: &str) -> Option<WalkState> {
        if let WalkState::Quit = self.check_cancel() {
            return Some(WalkState::Quit);
        }
        if !self.plan.selects_file(file_name) {
            return Some(WalkState::Continue);
        }
        let n_visited = self.shared.files_visited.fetch_add(1, Ordering::Relaxed) + 1;
        (self.on_file)(n_visited, rel_path);
        None
    }

    /// Adds a searched file's matching lines to the totals and keeps those that fit.
    fn count_and_keep(&mut self, rel_path: String, n_lines: u64, whole: bool, skip: usize) {
        self.shared.matches_count.fetch_add(n_lines, Ordering::Relaxed);
        if n_lines > 0 {
            lock(&self.shared.file_counts).push((rel_path.clone(), n_lines));
        }
        if !self.found.is_empty() {
            self.keep_found(&rel_path, whole, skip);
        }
    }

    /// Offers the current file's found lines to the shared kept set.
    fn keep_found(&mut self, rel_path: &str, whole: bool, skip: usize) {
        let source = if whole { &self.buf[skip..] } else { &self.copies[..] };
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
                let (text, spans, clip) = clip_long_line(&text, spans);
                SearchMatch { rel_path: rel_path.to_owned(), line, text, spans, clip }
            })
            .collect();
        lock(&self.shared.kept).merge(rel_path, file_lines);
    }
}

#[cfg(test)]
mod tests;

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

use std::fs::File;
use std::io::{self, Read, Seek};
use std::num::NonZeroUsize;
use std::path::{Component, Path};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use grep_matcher::{LineTerminator, Matcher};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::{DirEntry, WalkBuilder, WalkState};

use crate::workspace::opened::TraversalOpener;
use crate::workspace::write::is_temp_name;

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
    Text,
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
        match content {
            Ok(Content::Text) => {}
            Ok(Content::Binary | Content::NotUtf8) => {
                lock(&self.shared.skipped_files).push(rel_path);
                return WalkState::Continue;
            }
            Err(_) => return WalkState::Continue,
        }
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
        // runs; a file without CR costs one memchr pass.
        let searched = match whole {
            true => {
                crate::text::replace_lone_cr(&mut self.buf);
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

/// Reads a whole file into `buf` (replacing its contents, keeping its allocation), stopping early at
/// the first NUL byte or invalid UTF-8.
fn read_whole(file: &mut File, size_hint: u64, buf: &mut Vec<u8>) -> io::Result<Content> {
    buf.clear();
    buf.reserve(usize::try_from(size_hint).unwrap_or(0).saturating_add(1));
    let mut checked = 0;
    loop {
        let n_read = file.by_ref().take(CHUNK_SIZE as u64).read_to_end(buf)?;
        match check_text(&buf[checked..]) {
            Checked::Valid(n_valid) => checked += n_valid,
            Checked::Invalid(content) => return Ok(content),
        }
        // `Take` stops short of its limit only at the end of the file.
        if n_read < CHUNK_SIZE {
            break;
        }
    }
    // A multi-byte sequence cut off by the end of the file.
    Ok(if checked == buf.len() { Content::Text } else { Content::NotUtf8 })
}

/// Reads a file chunk by chunk through `buf`, checking for NUL bytes and invalid UTF-8.
fn check_streamed(file: &mut File, buf: &mut Vec<u8>) -> io::Result<Content> {
    buf.clear();
    buf.resize(CHUNK_SIZE, 0);
    // Bytes at the front of `buf` that start a multi-byte sequence continued in the next chunk.
    let mut carried = 0;
    loop {
        let n_read = file.read(&mut buf[carried..])?;
        if n_read == 0 {
            return Ok(if carried == 0 { Content::Text } else { Content::NotUtf8 });
        }
        let end = carried + n_read;
        match check_text(&buf[..end]) {
            Checked::Valid(n_valid) => {
                buf.copy_within(n_valid..end, 0);
                carried = end - n_valid;
            }
            Checked::Invalid(content) => return Ok(content),
        }
    }
}

enum Checked {
    /// No NUL, and valid UTF-8 up to this offset; the rest (at most three bytes) may be the start of
    /// a sequence that continues in bytes not yet read.
    Valid(usize),
    Invalid(Content),
}

fn check_text(bytes: &[u8]) -> Checked {
    if memchr::memchr(0, bytes).is_some() {
        return Checked::Invalid(Content::Binary);
    }
    match std::str::from_utf8(bytes) {
        Ok(_) => Checked::Valid(bytes.len()),
        Err(err) if err.error_len().is_none() => Checked::Valid(err.valid_up_to()),
        Err(_) => Checked::Invalid(Content::NotUtf8),
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

/// A line without its LF or CR LF terminator.
fn trim_terminator(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Counts matching lines and records the first `room` of them.
struct LineSink<'s> {
    matcher: &'s RegexMatcher,
    /// The searcher runs the matcher over whole buffers, where a zero-width pattern can match between
    /// CR and LF only; such a line has no match in its text, so it must not count.
    recheck_crlf_lines: bool,
    room: usize,
    n_lines: u64,
    found: &'s mut Vec<FoundLine>,
    /// Where to copy recorded lines, when the searched bytes do not stay in memory.
    copies: Option<&'s mut Vec<u8>>,
}

impl Sink for LineSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let mut line_start = usize::try_from(mat.absolute_byte_offset()).unwrap_or(usize::MAX);
        let mut line_number = mat.line_number();
        for line in mat.lines() {
            let line_end = line_start.saturating_add(line.len());
            let counts = !self.recheck_crlf_lines
                || !line.ends_with(b"\r\n")
                || self.matcher.is_match(&line[..line.len() - 2]).unwrap_or(true);
            if counts {
                self.n_lines += 1;
                if self.found.len() < self.room {
                    let found = match self.copies.as_deref_mut() {
                        Some(copies) => {
                            let start = copies.len();
                            copies.extend_from_slice(line);
                            FoundLine { line: line_number, start, end: copies.len() }
                        }
                        None => FoundLine { line: None, start: line_start, end: line_end },
                    };
                    self.found.push(found);
                }
            }
            line_start = line_end;
            line_number = line_number.map(|n| n + 1);
        }
        Ok(true)
    }
}

/// Every match of `matcher` in `line`, as code point spans.
///
/// After an empty match the search resumes at the next character, and an empty match right where the
/// previous match ended is dropped, as the `regex` crate's `find_iter` does.
fn spans(matcher: &RegexMatcher, line: &str) -> Vec<[usize; 2]> {
    let bytes = line.as_bytes();
    let mut byte_spans = Vec::new();
    let (mut at, mut last_end) = (0, None);
    while at <= bytes.len() {
        let Ok(Some(m)) = matcher.find_at(bytes, at) else { break };
        if m.is_empty() {
            at = next_char_boundary(line, m.end());
            if last_end == Some(m.end()) || !line.is_char_boundary(m.end()) {
                continue;
            }
        } else {
            at = m.end();
        }
        last_end = Some(m.end());
        byte_spans.push([m.start(), m.end()]);
    }
    if line.is_ascii() {
        return byte_spans;
    }
    // Offsets only grow along the spans, so one pass converts them all.
    let (mut byte_pos, mut char_pos) = (0, 0);
    let mut to_chars = |offset: usize| {
        char_pos += bytes[byte_pos..offset].iter().filter(|&&b| !is_continuation_byte(b)).count();
        byte_pos = offset;
        char_pos
    };
    byte_spans.into_iter().map(|[start, end]| [to_chars(start), to_chars(end)]).collect()
}

fn next_char_boundary(line: &str, offset: usize) -> usize {
    let mut next = offset + 1;
    while next < line.len() && !line.is_char_boundary(next) {
        next += 1;
    }
    next
}

fn is_continuation_byte(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::fs;

    fn options(query: &str) -> SearchOptions {
        SearchOptions {
            query: query.to_owned(),
            regex: false,
            case_sensitive: true,
            extensions: None,
            max_matches: 100,
        }
    }

    fn write(root: &Path, rel_path: &str, contents: impl AsRef<[u8]>) {
        let path = root.join(rel_path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, contents).unwrap();
    }

    /// Searches with whole files in memory, then again with every file streamed, and checks that
    /// both ways agree.
    fn run(start: &Path, options: &SearchOptions) -> SearchOutcome {
        let res = search(start, options, &|_, _| {}, &|| false).unwrap();
        let mut plan = Plan::new(options).unwrap();
        plan.whole_file_limit = 0;
        let streamed = search_with_plan(start, &plan, options.max_matches, &|_, _| {}, &|| false).unwrap();
        assert_eq!(res, streamed, "streamed files give the same outcome");
        res
    }

    /// `(rel_path, line)` of the returned matches.
    fn located(outcome: &SearchOutcome) -> Vec<(String, u64)> {
        outcome.matches.iter().map(|m| (m.rel_path.clone(), m.line)).collect()
    }

    fn paths(outcome: &SearchOutcome) -> Vec<&str> {
        let mut res: Vec<&str> = outcome.matches.iter().map(|m| m.rel_path.as_str()).collect();
        res.dedup();
        res
    }

    #[test]
    fn literal_query_escapes_regex_syntax() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.cpp", "x = a.b(1);\nx = aXb(1);\n");
        let outcome = run(dir.path(), &options("a.b(1)"));
        assert_eq!(located(&outcome), [("a.cpp".to_owned(), 1)]);
        assert_eq!(outcome.matches[0].spans, [[4, 10]]);
        assert_eq!(outcome.matches_count, 1);
    }

    #[test]
    fn regex_query_uses_rust_regex_syntax() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.cpp", "x = a.b(1);\nx = aXb(1);\nnone\n");
        let outcome = run(dir.path(), &SearchOptions { regex: true, ..options(r"a.b\(\d\)") });
        assert_eq!(located(&outcome), [("a.cpp".to_owned(), 1), ("a.cpp".to_owned(), 2)]);
        assert_eq!(outcome.matches_count, 2);
    }

    #[test]
    fn case_insensitive_query_folds_case() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.txt", "Hello\nHELLO\nhello\nhelo\n");
        let sensitive = run(dir.path(), &options("hello"));
        assert_eq!(sensitive.matches_count, 1);
        let insensitive = run(dir.path(), &SearchOptions { case_sensitive: false, ..options("hello") });
        assert_eq!(insensitive.matches_count, 3);
        assert_eq!(insensitive.matches[1].spans, [[0, 5]]);
    }

    #[test]
    fn extension_filters_select_files() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.cpp", "b.CPP", "c.h", "Makefile", ".bashrc", "d.", "e.tar.gz"] {
            write(dir.path(), name, "needle\n");
        }
        let with = |extensions: Option<&[&str]>| {
            let extensions = extensions.map(|exts| exts.iter().map(ToString::to_string).collect());
            let outcome = run(dir.path(), &SearchOptions { extensions, ..options("needle") });
            paths(&outcome).join(" ")
        };
        assert_eq!(with(None), ".bashrc Makefile a.cpp b.CPP c.h d. e.tar.gz");
        assert_eq!(with(Some(&[])), "");
        assert_eq!(with(Some(&[""])), ".bashrc Makefile d.");
        assert_eq!(with(Some(&[".cpp"])), "a.cpp b.CPP");
        assert_eq!(with(Some(&["CPP", "h"])), "a.cpp b.CPP c.h");
        assert_eq!(with(Some(&["gz"])), "e.tar.gz");
        assert_eq!(with(Some(&[".tar.gz"])), "e.tar.gz");
        assert_eq!(with(Some(&["bashrc"])), "");
    }

    #[test]
    fn dot_directories_are_skipped_but_dot_files_are_searched() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), ".git/config", "needle\n");
        write(dir.path(), "src/.hidden/x.cpp", "needle\n");
        write(dir.path(), "src/.clang-format", "needle\n");
        write(dir.path(), "build/gen.cpp", "needle\n");
        let outcome = run(dir.path(), &options("needle"));
        assert_eq!(paths(&outcome), ["build/gen.cpp", "src/.clang-format"]);
        assert_eq!(outcome.files_visited, 2);
    }

    #[test]
    fn start_directory_with_a_dot_name_is_searched() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), ".storage/build/log.txt", "needle\n");
        let outcome = run(&dir.path().join(".storage"), &options("needle"));
        assert_eq!(paths(&outcome), ["build/log.txt"]);
    }

    #[cfg(unix)]
    #[test]
    fn links_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        write(outside.path(), "sub/x.cpp", "needle\n");
        write(dir.path(), "real.cpp", "needle\n");
        std::os::unix::fs::symlink(outside.path().join("sub"), dir.path().join("linked_dir")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("real.cpp"), dir.path().join("linked.cpp")).unwrap();
        let outcome = run(dir.path(), &options("needle"));
        assert_eq!(paths(&outcome), ["real.cpp"]);
        assert_eq!(outcome.files_visited, 1);
        let err = search(&dir.path().join("linked.cpp"), &options("needle"), &|_, _| {}, &|| false);
        assert!(matches!(err, Err(SearchError::StartIsLink)));
    }

    #[test]
    fn binary_and_non_utf8_files_are_skipped_and_listed() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "text.cpp", "needle\n");
        write(dir.path(), "obj/main.o", b"needle\nneedle\n\0needle\n");
        write(dir.path(), "latin1.txt", b"needle\ncaf\xe9 needle\n");
        let outcome = run(dir.path(), &options("needle"));
        assert_eq!(paths(&outcome), ["text.cpp"]);
        assert_eq!(outcome.matches_count, 1);
        assert_eq!(outcome.skipped_files, ["latin1.txt", "obj/main.o"]);
        assert_eq!(outcome.files_visited, 3);
    }

    #[test]
    fn max_matches_keeps_first_lines_and_counts_all() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["d/z.cpp", "a.cpp", "c.cpp", "b/x.cpp", "b.cpp"] {
            write(dir.path(), name, "needle\nother\nneedle\nneedle\n");
        }
        let outcome = run(dir.path(), &SearchOptions { max_matches: 5, ..options("needle") });
        let expected = [("a.cpp", 1), ("a.cpp", 3), ("a.cpp", 4), ("b.cpp", 1), ("b.cpp", 3)];
        let expected: Vec<_> = expected.iter().map(|&(p, l)| (p.to_owned(), l)).collect();
        assert_eq!(located(&outcome), expected);
        assert_eq!(outcome.matches_count, 15);
    }

    #[test]
    fn max_matches_is_deterministic_across_many_files() {
        let dir = tempfile::tempdir().unwrap();
        for idx in 0..200 {
            write(dir.path(), &format!("d{}/f{idx:03}.cpp", idx % 7), "x needle\nneedle y\n");
        }
        let full = run(dir.path(), &SearchOptions { max_matches: 1000, ..options("needle") });
        assert_eq!(full.matches_count, 400);
        let mut sorted = located(&full);
        sorted.sort();
        assert_eq!(located(&full), sorted);
        for _ in 0..5 {
            let outcome = run(dir.path(), &SearchOptions { max_matches: 37, ..options("needle") });
            assert_eq!(outcome.matches, full.matches[..37]);
            assert_eq!(outcome.matches_count, 400);
        }
    }

    #[test]
    fn spans_cover_every_match_including_zero_width() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.txt", "abab ab\nxyz\n");
        let outcome = run(dir.path(), &options("ab"));
        assert_eq!(outcome.matches[0].spans, [[0, 2], [2, 4], [5, 7]]);
        let regex = |query: &str| SearchOptions { regex: true, ..options(query) };
        let outcome = run(dir.path(), &regex(r"\b"));
        assert_eq!(outcome.matches[0].spans, [[0, 0], [4, 4], [5, 5], [7, 7]]);
        assert_eq!(outcome.matches[1].spans, [[0, 0], [3, 3]]);
        let outcome = run(dir.path(), &regex("b*"));
        assert_eq!(outcome.matches[0].spans, [[0, 0], [1, 2], [3, 4], [5, 5], [6, 7]]);
        assert_eq!(outcome.matches[1].spans, [[0, 0], [1, 1], [2, 2], [3, 3]]);
    }

    #[test]
    fn zero_width_pattern_matches_every_line_but_not_past_the_end() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.txt", "one\n\nthree\n");
        write(dir.path(), "b.txt", "no final newline");
        write(dir.path(), "empty.txt", "");
        let outcome = run(dir.path(), &SearchOptions { regex: true, ..options("^") });
        assert_eq!(outcome.matches_count, 4);
        let outcome = run(dir.path(), &SearchOptions { regex: true, ..options("^$") });
        assert_eq!(located(&outcome), [("a.txt".to_owned(), 2)]);
    }

    #[test]
    fn spans_are_unicode_code_points() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.txt", "// héllo wörld 😀 wörld\n");
        let outcome = run(dir.path(), &options("wörld"));
        assert_eq!(outcome.matches[0].spans, [[9, 14], [17, 22]]);
        let outcome = run(dir.path(), &SearchOptions { regex: true, ..options("q?") });
        assert_eq!(outcome.matches[0].spans.len(), "// héllo wörld 😀 wörld".chars().count() + 1);
        assert_eq!(outcome.matches[0].spans[22], [22, 22]);
        let outcome = run(dir.path(), &SearchOptions { case_sensitive: false, ..options("WÖRLD") });
        assert_eq!(outcome.matches[0].spans, [[9, 14], [17, 22]]);
    }

    #[test]
    fn crlf_lines_exclude_their_terminator() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.txt", "first end\r\nsecond\r\nthird end\r\nlast end");
        let outcome = run(dir.path(), &SearchOptions { regex: true, ..options("end$") });
        assert_eq!(located(&outcome), [("a.txt".to_owned(), 1), ("a.txt".to_owned(), 3), ("a.txt".to_owned(), 4)]);
        assert_eq!(outcome.matches[0].text, "first end");
        assert_eq!(outcome.matches[0].spans, [[6, 9]]);
        assert_eq!(outcome.matches[2].text, "last end");
        write(dir.path(), "a.txt", "ab\r\nx\r\n");
        let outcome = run(dir.path(), &SearchOptions { regex: true, ..options(r"\B") });
        assert_eq!(located(&outcome), [("a.txt".to_owned(), 1)], "`x` has no match outside its CR LF");
        assert_eq!(outcome.matches_count, 1);
    }

    #[test]
    fn line_numbers_count_lines_before_each_match() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (1..=500).map(|n| format!("line {n}\n")).collect();
        write(dir.path(), "a.txt", text);
        let outcome = run(dir.path(), &SearchOptions { regex: true, ..options(r"line \d*7$") });
        assert_eq!(outcome.matches_count, 50);
        assert_eq!(outcome.matches[0].line, 7);
        assert_eq!(outcome.matches[49].line, 497);
        assert_eq!(outcome.matches[49].text, "line 497");
    }

    #[test]
    fn single_file_start_has_empty_rel_path() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "src/main.cpp", "int main() {}\n");
        write(dir.path(), "src/other.cpp", "int main() {}\n");
        let visited = Mutex::new(Vec::new());
        let on_file = |n: u64, rel: &str| lock(&visited).push((n, rel.to_owned()));
        let outcome = search(&dir.path().join("src/main.cpp"), &options("main"), &on_file, &|| false).unwrap();
        assert_eq!(located(&outcome), [(String::new(), 1)]);
        assert_eq!(lock(&visited).as_slice(), [(1, String::new())]);
    }

    #[test]
    fn progress_reports_every_searched_file() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.cpp", "b/c.cpp", "b/d.h"] {
            write(dir.path(), name, "x\n");
        }
        let visited = Mutex::new(Vec::new());
        let on_file = |n: u64, rel: &str| lock(&visited).push((n, rel.to_owned()));
        let extensions = Some(vec!["cpp".to_owned()]);
        search(dir.path(), &SearchOptions { extensions, ..options("x") }, &on_file, &|| false).unwrap();
        let mut visited = visited.into_inner().unwrap();
        visited.sort();
        let rel_paths: Vec<&str> = visited.iter().map(|(_, rel)| rel.as_str()).collect();
        let counts: Vec<u64> = visited.iter().map(|&(n, _)| n).collect();
        assert_eq!(counts, [1, 2]);
        let mut rel_paths = rel_paths;
        rel_paths.sort();
        assert_eq!(rel_paths, ["a.cpp", "b/c.cpp"]);
    }

    #[test]
    fn cancellation_stops_the_search() {
        let dir = tempfile::tempdir().unwrap();
        for idx in 0..50 {
            write(dir.path(), &format!("f{idx}.cpp"), "needle\n");
        }
        let polls = AtomicU64::new(0);
        let cancel = || polls.fetch_add(1, Ordering::Relaxed) >= 3;
        let visited = AtomicU64::new(0);
        let on_file = |_: u64, _: &str| {
            visited.fetch_add(1, Ordering::Relaxed);
        };
        let res = search(dir.path(), &options("needle"), &on_file, &cancel);
        assert!(matches!(res, Err(SearchError::Cancelled)));
        assert!(visited.into_inner() < 50);
    }

    /// Checks `contents` as a whole file and as a streamed one; both must agree.
    fn content_of(contents: &[u8]) -> &'static str {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "f", contents);
        let name = |content: Content| match content {
            Content::Text => "text",
            Content::Binary => "binary",
            Content::NotUtf8 => "not utf-8",
        };
        let mut buf = Vec::new();
        let mut file = File::open(dir.path().join("f")).unwrap();
        let whole = name(read_whole(&mut file, 0, &mut buf).unwrap());
        if whole == "text" {
            assert_eq!(buf, contents);
        }
        let mut file = File::open(dir.path().join("f")).unwrap();
        let streamed = name(check_streamed(&mut file, &mut buf).unwrap());
        assert_eq!(whole, streamed);
        whole
    }

    #[test]
    fn contents_are_classified_across_chunk_boundaries() {
        let mut split_char = vec![b'a'; CHUNK_SIZE - 1];
        split_char.extend_from_slice("é\nneedle é\n".as_bytes());
        assert_eq!(content_of(&split_char), "text");
        let mut late_nul = vec![b'a'; CHUNK_SIZE + 10];
        late_nul.push(0);
        assert_eq!(content_of(&late_nul), "binary");
        let mut late_invalid = vec![b'a'; 2 * CHUNK_SIZE + 1];
        late_invalid.extend_from_slice(b"caf\xe9");
        assert_eq!(content_of(&late_invalid), "not utf-8");
        assert_eq!(content_of(b"cut short \xc3"), "not utf-8");
        assert_eq!(content_of(b""), "text");
    }

    #[test]
    fn large_file_lines_are_numbered_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = "x\n".repeat(CHUNK_SIZE);
        text.push_str("needle é needle\r\n");
        text.push_str(&"y\n".repeat(CHUNK_SIZE));
        text.push_str("needle");
        write(dir.path(), "big.txt", &text);
        let outcome = run(dir.path(), &options("needle"));
        let line = CHUNK_SIZE as u64 + 1;
        assert_eq!(located(&outcome), [("big.txt".to_owned(), line), ("big.txt".to_owned(), 2 * line)]);
        assert_eq!(outcome.matches[0].text, "needle é needle");
        assert_eq!(outcome.matches[0].spans, [[0, 6], [9, 15]]);
    }

    #[test]
    fn a_lone_cr_ends_a_line_in_whole_and_streamed_files() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.txt", "one\rneedle two\r\nthree\rneedle\r");
        for whole_file_limit in [WHOLE_FILE_LIMIT, 0] {
            let mut plan = Plan::new(&options("needle")).unwrap();
            plan.whole_file_limit = whole_file_limit;
            let outcome = search_with_plan(dir.path(), &plan, 10, &|_, _| {}, &|| false).unwrap();
            assert_eq!(located(&outcome), [("a.txt".to_owned(), 2), ("a.txt".to_owned(), 4)], "{whole_file_limit}");
            assert_eq!(outcome.matches[0].text, "needle two");
            assert_eq!(outcome.matches[1].text, "needle");
        }
    }

    #[test]
    fn invalid_options_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let err = |options: SearchOptions| search(dir.path(), &options, &|_, _| {}, &|| false).unwrap_err();
        let invalid = err(SearchOptions { regex: true, ..options("(unclosed") });
        assert!(matches!(invalid, SearchError::InvalidRegex { .. }));
        assert!(invalid.to_string().starts_with("invalid regex: "), "{invalid}");
        assert!(invalid.to_string().contains("unclosed group"), "{invalid}");
        assert!(matches!(err(options("")), SearchError::EmptyQuery));
        assert!(matches!(err(SearchOptions { max_matches: 0, ..options("x") }), SearchError::ZeroMaxMatches));
        assert!(matches!(err(options("a\nb")), SearchError::LineBreakInQuery));
        let missing = search(&dir.path().join("missing"), &options("x"), &|_, _| {}, &|| false);
        assert!(matches!(missing, Err(SearchError::StartUnreadable { .. })));
    }
}

//! Building a segment: walking the tree with the search's rules, reading each file once as the
//! search would (NUL and UTF-8 checks, lone CR as LF), collecting its distinct trigrams, and
//! writing each batch of files' sorted pairs as a run on disk (`runs.rs`), merged at the end, so
//! the memory held is about one batch's pairs per thread.
//!
//! Architecture invariant: a file's state and trigrams come from exactly the bytes a search would
//! match against, so a file whose trigrams do not admit a query cannot hold a matching line.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use ignore::WalkBuilder;

use super::plan::{TRIGRAMS, Trigram, fold, trigram};
use super::runs;
use super::segment::{self, FileRecord};
use super::{FileMeta, FileState};
use crate::workspace::opened::TraversalOpener;
use crate::workspace::search::content::read_whole;
use crate::workspace::search::shared::lock;
use crate::workspace::search::{Content, WHOLE_FILE_LIMIT};
use crate::workspace::write::is_temp_name;

/// The files of the tree below `dir` (relative to `root`, sorted), with the walk rules of a search
/// started at the root: links not followed, dot-directories below `root` not entered, temporary
/// files of interrupted writes left out. Fails when a name is not valid Unicode (the index keeps
/// `/`-separated Unicode paths).
pub fn walk(root: &Path, dir: &Path) -> Result<Vec<String>, String> {
    let files = Mutex::new(Vec::new());
    let not_unicode = std::sync::atomic::AtomicBool::new(false);
    let threads = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    WalkBuilder::new(dir)
        .standard_filters(false)
        .follow_links(false)
        .threads(threads)
        .filter_entry(|entry| {
            !(entry.depth() > 0
                && entry.file_type().is_some_and(|t| t.is_dir())
                && entry.file_name().as_encoded_bytes().first() == Some(&b'.'))
        })
        .build_parallel()
        .run(|| {
            let (files, not_unicode) = (&files, &not_unicode);
            Box::new(move |entry| {
                let Ok(entry) = entry else { return ignore::WalkState::Continue };
                let is_file = entry.file_type().is_some_and(|t| t.is_file());
                if is_file && !entry.file_name().to_str().is_some_and(is_temp_name) {
                    match relative(root, entry.path()) {
                        Some(rel) => files.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(rel),
                        None => not_unicode.store(true, Ordering::Relaxed),
                    }
                } else if entry.file_name().to_str().is_none() {
                    not_unicode.store(true, Ordering::Relaxed);
                }
                ignore::WalkState::Continue
            })
        });
    let mut files = files.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    if not_unicode.into_inner() {
        return Err("a file name is not valid Unicode".to_owned());
    }
    files.sort_unstable();
    Ok(files)
}

/// `path` relative to `root`, `/`-separated, when it is valid Unicode and below `root`.
pub fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let mut out = String::new();
    for component in rel.components() {
        let std::path::Component::Normal(name) = component else { return None };
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(name.to_str()?);
    }
    Some(out)
}

/// A reusable per-thread state for reading files and collecting trigrams.
pub struct Extractor {
    buf: Vec<u8>,
    /// One bit per trigram, set for those already in `trigrams`.
    seen: Box<[u64; TRIGRAMS / 64]>,
    pub trigrams: Vec<Trigram>,
    opener: TraversalOpener,
}

impl Extractor {
    /// An extractor for files below `root`.
    pub fn new(root: &Path) -> Extractor {
        Extractor {
            buf: Vec::new(),
            seen: Box::new([0; TRIGRAMS / 64]),
            trigrams: Vec::new(),
            opener: TraversalOpener::beneath(root),
        }
    }

    /// Reads `abs` and returns its metadata and state; for text, `self.trigrams` holds its distinct
    /// trigrams (unsorted). `None` when the file is gone or is no longer a file.
    pub fn read(&mut self, abs: &Path) -> Option<(FileMeta, FileState)> {
        self.trigrams.clear();
        let mut file = match self.opener.open(abs) {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return None,
            Err(_) => return Some((FileMeta::default(), FileState::Unreadable)),
        };
        let Ok(metadata) = file.metadata() else { return Some((FileMeta::default(), FileState::Unreadable)) };
        if !metadata.is_file() {
            return None;
        }
        let meta = FileMeta::of(&metadata);
        if meta.size > WHOLE_FILE_LIMIT {
            return Some((meta, FileState::Unindexed));
        }
        let state = match read_whole(&mut file, meta.size, &mut self.buf) {
            Ok(Content::Text { has_cr }) => {
                if has_cr {
                    crate::text::replace_lone_cr(&mut self.buf);
                }
                self.collect();
                FileState::Text
            }
            Ok(Content::Binary) => FileState::Binary,
            Ok(Content::NotUtf8) => FileState::NotUtf8,
            Err(_) => FileState::Unreadable,
        };
        Some((meta, state))
    }

    /// Collects the distinct trigrams of `buf`, which it folds in place.
    fn collect(&mut self) {
        for byte in &mut self.buf {
            *byte = fold(*byte);
        }
        // Each window's trigram is computed from its own three bytes: no iteration waits for the
        // one before.
        for window in self.buf.windows(3) {
            let t = trigram(window[0], window[1], window[2]);
            let (word, bit) = (&mut self.seen[(t >> 6) as usize & (TRIGRAMS / 64 - 1)], 1u64 << (t & 63));
            if *word & bit == 0 {
                *word |= bit;
                self.trigrams.push(t);
            }
        }
        for t in &self.trigrams {
            self.seen[(t >> 6) as usize] = 0;
        }
    }
}

/// Files per batch: each batch's pairs are sorted and written as one run by one thread.
const BATCH: usize = 256;
/// Runs merged at most (each holds a file open during the merge); larger trees get larger batches.
const MAX_RUNS: usize = 512;

/// A batch's file records and where its run holds each bucket of trigrams.
type Batch = (Vec<FileRecord>, runs::RunTable);

/// Builds the segment of `files` (sorted paths relative to `root`) at `out`.
pub fn build(
    root: &Path,
    files: Vec<String>,
    out: &Path,
    built_at_ns: i64,
    stop: &(dyn Fn() -> bool + Sync),
) -> std::io::Result<()> {
    let batch_len = files.len().div_ceil(MAX_RUNS).max(BATCH);
    let n_batches = files.len().div_ceil(batch_len);
    let run_path = |batch: usize| out.with_extension(format!("run{batch}.tmp"));
    let next = AtomicUsize::new(0);
    let batches: Mutex<Vec<Option<Batch>>> = Mutex::new((0..n_batches).map(|_| None).collect());
    let failure: Mutex<Option<std::io::Error>> = Mutex::new(None);
    let threads = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                super::worker::lower_priority();
                let mut extractor = Extractor::new(root);
                let mut pairs: Vec<u64> = Vec::new();
                loop {
                    let batch = next.fetch_add(1, Ordering::Relaxed);
                    if batch >= n_batches || stop() || lock(&failure).is_some() {
                        return;
                    }
                    let range = batch * batch_len..((batch + 1) * batch_len).min(files.len());
                    let mut batch_records = Vec::with_capacity(range.len());
                    pairs.clear();
                    for (id, rel) in (range.start..).zip(&files[range]) {
                        let (meta, state) =
                            extractor.read(&root.join(rel)).unwrap_or((FileMeta::default(), FileState::Unreadable));
                        pairs.extend(extractor.trigrams.iter().map(|t| u64::from(*t) << 32 | id as u64));
                        batch_records.push(FileRecord { path: rel.clone(), meta, state });
                    }
                    // Ids grow within the batch, so a stable sort by trigram sorts the pairs.
                    radsort::sort_by_key(&mut pairs, |pair| (pair >> 32) as Trigram);
                    match runs::write_run(&run_path(batch), &pairs) {
                        Ok(table) => lock(&batches)[batch] = Some((batch_records, table)),
                        Err(err) => {
                            lock(&failure).get_or_insert(err);
                            return;
                        }
                    }
                }
            });
        }
    });
    let merged = || -> std::io::Result<()> {
        if let Some(err) = lock(&failure).take() {
            return Err(err);
        }
        if stop() {
            return Err(std::io::Error::other("stopped"));
        }
        let (records, tables): (Vec<Vec<FileRecord>>, Vec<runs::RunTable>) =
            std::mem::take(&mut *lock(&batches)).into_iter().flatten().unzip();
        if tables.len() != n_batches {
            return Err(std::io::Error::other("a batch of files was not indexed"));
        }
        let records: Vec<FileRecord> = records.into_iter().flatten().collect();
        let paths: Vec<PathBuf> = (0..n_batches).map(run_path).collect();
        // Each thread merges one range of trigrams into its part; the parts are joined in order.
        let ranges = runs::split(&tables, threads);
        let parts: Vec<std::io::Result<segment::Part>> = std::thread::scope(|scope| {
            let merges: Vec<_> = ranges
                .iter()
                .enumerate()
                .map(|(i, buckets)| {
                    let (paths, tables) = (&paths, &tables);
                    scope.spawn(move || {
                        super::worker::lower_priority();
                        let mut merge = runs::Merge::open(paths, tables, buckets.clone())?;
                        segment::write_part(out, i, &mut merge)
                    })
                })
                .collect();
            merges
                .into_iter()
                .map(|merge| merge.join().unwrap_or_else(|_| Err(std::io::Error::other("a merge failed"))))
                .collect()
        });
        // Parts remove their files when dropped, on failure too.
        let parts = parts.into_iter().collect::<std::io::Result<Vec<segment::Part>>>()?;
        segment::write(out, built_at_ns, &records, &parts)
    };
    let result = merged();
    for batch in 0..n_batches {
        let _ = std::fs::remove_file(run_path(batch));
    }
    result
}

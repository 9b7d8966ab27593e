//! Building a segment: walking the tree with the search's rules, reading each file once as the
//! search would (NUL and UTF-8 checks, lone CR as LF), collecting its distinct trigrams, and
//! writing each batch of files' sorted pairs as a run on disk (`runs.rs`), merged at the end, so
//! the memory held is about one batch's pairs per thread.
//!
//! Architecture invariant: a file's state and trigrams come from exactly the bytes a search would
//! match against, so a file whose trigrams do not admit a query cannot hold a matching line.

use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use ignore::WalkBuilder;

use super::plan::{TRIGRAMS, Trigram, fold, trigram};
use super::runs;
use super::segment::{self, FileRecord};
use super::{FileMeta, FileState};
use crate::workspace::opened::TraversalOpener;
use crate::workspace::search::content::stream_text;
use crate::workspace::search::shared::lock;
use crate::workspace::search::{CHUNK_SIZE, Content, WHOLE_FILE_LIMIT};
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
    /// The part of a file being read (files are read in parts, so memory does not grow with them).
    buf: Vec<u8>,
    part_len: usize,
    /// One bit per trigram, set for those already in `trigrams`.
    seen: Box<[u64; TRIGRAMS / 64]>,
    pub trigrams: Vec<Trigram>,
    /// The last text read holds no CR at all (so a search need not look for lone ones).
    pub cr_free: bool,
    /// The 128-bit XXH3 hash of the last text read, when it holds no CR (its bytes as they are).
    pub content: Option<u128>,
    opener: TraversalOpener,
}

impl Extractor {
    /// An extractor for files below `root`.
    pub fn new(root: &Path) -> Extractor {
        Extractor::with_parts(root, CHUNK_SIZE)
    }

    fn with_parts(root: &Path, part_len: usize) -> Extractor {
        Extractor {
            buf: Vec::new(),
            part_len,
            seen: Box::new([0; TRIGRAMS / 64]),
            trigrams: Vec::new(),
            cr_free: false,
            content: None,
            opener: TraversalOpener::beneath(root),
        }
    }

    /// Reads `abs` and returns its metadata and state; for text, `self.trigrams` holds its distinct
    /// trigrams (unsorted), `self.cr_free` whether it holds no CR and `self.content` the hash of a
    /// text without CR. `None` when the file is gone or is no longer a file.
    pub fn read(&mut self, abs: &Path) -> Option<(FileMeta, FileState)> {
        self.trigrams.clear();
        self.cr_free = false;
        self.content = None;
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
        let mut collect = Collect { seen: &mut self.seen, trigrams: &mut self.trigrams, tail: [0; 2], tail_len: 0 };
        // Until a CR turns up, the parts are the file's bytes as they are.
        let mut hash = xxhash_rust::xxh3::Xxh3Default::new();
        let content = stream_text(&mut file, self.part_len, &mut self.buf, &mut |text| {
            hash.update(text);
            collect.part(text);
        });
        for t in &self.trigrams {
            self.seen[(t >> 6) as usize] = 0;
        }
        let state = match content {
            Ok(Content::Text { has_cr }) => {
                self.cr_free = !has_cr;
                self.content = (!has_cr).then(|| hash.digest128());
                return Some((meta, FileState::Text));
            }
            Ok(Content::Binary) => FileState::Binary,
            Ok(Content::NotUtf8) => FileState::NotUtf8,
            Err(_) => FileState::Unreadable,
        };
        self.trigrams.clear();
        Some((meta, state))
    }
}

/// Windows of a part whose trigrams are checked before the new ones are appended.
const WINDOWS_PER_BLOCK: usize = 64;

/// Collects the distinct trigrams of a file's text given in parts.
struct Collect<'a> {
    seen: &'a mut [u64; TRIGRAMS / 64],
    trigrams: &'a mut Vec<Trigram>,
    /// The last (at most two) folded bytes of the parts before.
    tail: [u8; 2],
    tail_len: usize,
}

impl Collect<'_> {
    /// Collects the trigrams that end in `text`, which it folds in place.
    fn part(&mut self, text: &mut [u8]) {
        for byte in text.iter_mut() {
            *byte = fold(*byte);
        }
        // The windows that start in the parts before.
        let mut head = [0u8; 4];
        head[..self.tail_len].copy_from_slice(&self.tail[..self.tail_len]);
        let from_text = text.len().min(2);
        head[self.tail_len..self.tail_len + from_text].copy_from_slice(&text[..from_text]);
        let head = &head[..self.tail_len + from_text];
        for window in head.windows(3) {
            self.add(trigram(window[0], window[1], window[2]));
        }
        // Each window's trigram is computed from its own three bytes (no iteration waits for the
        // one before), and recorded without a branch: it is written after the new ones found so
        // far, and the count grows only when its bit was not yet set. Windows go in blocks on the
        // stack, appended at once.
        let mut block = [0; WINDOWS_PER_BLOCK];
        let n_windows = text.len().saturating_sub(2);
        for from in (0..n_windows).step_by(WINDOWS_PER_BLOCK) {
            let to = (from + WINDOWS_PER_BLOCK).min(n_windows);
            let mut new = 0;
            for window in text[from..to + 2].windows(3) {
                let t = trigram(window[0], window[1], window[2]);
                block[new & (WINDOWS_PER_BLOCK - 1)] = t;
                new += usize::from(self.mark(t));
            }
            self.trigrams.extend_from_slice(&block[..new]);
        }
        let last = if text.len() >= 2 { &text[text.len() - 2..] } else { &head[head.len().saturating_sub(2)..] };
        self.tail[..last.len()].copy_from_slice(last);
        self.tail_len = last.len();
    }

    fn add(&mut self, t: Trigram) {
        if self.mark(t) {
            self.trigrams.push(t);
        }
    }

    /// Marks `t` seen; whether it was not yet.
    #[inline]
    fn mark(&mut self, t: Trigram) -> bool {
        let (word, bit) = (&mut self.seen[(t >> 6) as usize & (TRIGRAMS / 64 - 1)], 1u64 << (t & 63));
        let new = *word & bit == 0;
        *word |= bit;
        new
    }
}

/// The first file read of each CR-free text, by content hash and size: later files with the same
/// content point to it instead of posting the same trigrams again. The table holds ids only, and
/// each first file's key is in an array by id: under 40 bytes a file, allocated once.
struct Firsts {
    table: hashbrown::HashTable<u32>,
    /// Hash (low and high 64 bits) and size of the first files, by id.
    keys: Vec<[u64; 3]>,
}

impl Firsts {
    fn new(n_files: usize) -> Firsts {
        Firsts { table: hashbrown::HashTable::with_capacity(n_files), keys: vec![[0; 3]; n_files] }
    }

    /// The id of the first file read with this content, or `None` after recording file `id` as it.
    fn first(&mut self, id: usize, hash: u128, size: u64) -> Option<u32> {
        let key = [hash as u64, (hash >> 64) as u64, size];
        let keys = &mut self.keys;
        let entry = self.table.entry(key[0], |first| keys[*first as usize] == key, |first| keys[*first as usize][0]);
        match entry {
            hashbrown::hash_table::Entry::Occupied(first) => Some(*first.get()),
            hashbrown::hash_table::Entry::Vacant(slot) => {
                slot.insert(id as u32);
                keys[id] = key;
                None
            }
        }
    }
}

/// Files per batch: each thread takes a batch of consecutive files at a time.
const BATCH: usize = 256;
/// Batches at most, up to [`runs::MAX_BATCH`] files each: larger trees get larger batches, and
/// trees of more than 524,288 files more batches.
const MAX_BATCHES: usize = 256;
/// Pairs a thread holds per file of its batch before it sorts them and writes them as a run: the
/// memory held is bounded by this, not by the sizes of the files (one batch can be written as
/// several runs). Scaled by the batch length, so the runs merged stay about as many as batches
/// plus the average distinct trigrams per file.
const PAIRS_PER_FILE: usize = 1024;

/// A batch's file records and its runs, in file order.
type Batch<'a> = (Vec<FileRecord<'a>>, Vec<runs::Run>);

/// Builds the segment of `files` (sorted paths relative to `root`) for `out`, written but not yet
/// durable.
pub fn build(
    root: &Path,
    files: Vec<String>,
    out: &Path,
    built_at_ns: i64,
    stop: &(dyn Fn() -> bool + Sync),
) -> std::io::Result<segment::Unsynced> {
    let batch_len = files.len().div_ceil(MAX_BATCHES).clamp(BATCH, runs::MAX_BATCH);
    let n_batches = files.len().div_ceil(batch_len);
    let run_pairs = batch_len * PAIRS_PER_FILE;
    // Every temporary file of this build is named after `temp`.
    let temp = segment::scratch_name(out);
    let temp = temp.as_path();
    let next = AtomicUsize::new(0);
    let batches: Mutex<Vec<Option<Batch>>> = Mutex::new((0..n_batches).map(|_| None).collect());
    let failure: Mutex<Option<std::io::Error>> = Mutex::new(None);
    let firsts = Mutex::new(Firsts::new(files.len()));
    let threads = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                super::worker::lower_priority();
                let mut extractor = Extractor::new(root);
                let mut pairs: Vec<u32> = Vec::with_capacity(run_pairs);
                // Sorts the pairs (ids grow within a batch, so a stable sort by trigram sorts
                // them) and writes them as the batch's next run.
                let mut scratch = Vec::new();
                let mut write = |pairs: &mut Vec<u32>, batch: usize, runs: &mut Vec<runs::Run>| {
                    runs::sort_pairs(pairs, &mut scratch);
                    let path = temp.with_extension(format!("run{batch}-{}.tmp", runs.len()));
                    runs.push(runs::write_run(&path, pairs, (batch * batch_len) as u32)?);
                    pairs.clear();
                    std::io::Result::Ok(())
                };
                let mut index_batch = |batch: usize| -> std::io::Result<Batch> {
                    let range = batch * batch_len..((batch + 1) * batch_len).min(files.len());
                    let (mut records, mut runs) = (Vec::with_capacity(range.len()), Vec::new());
                    let first = range.start;
                    for (id, rel) in (range.start..).zip(&files[range]) {
                        let (meta, state) =
                            extractor.read(&root.join(rel)).unwrap_or((FileMeta::default(), FileState::Unreadable));
                        let same_as = extractor.content.and_then(|hash| lock(&firsts).first(id, hash, meta.size));
                        // A file with more trigrams than a run holds is split over runs: each of
                        // its trigrams is in one of them, so every list still grows by id.
                        let mut trigrams = if same_as.is_some() { &[][..] } else { extractor.trigrams.as_slice() };
                        while !trigrams.is_empty() {
                            let (now, later) = trigrams.split_at((run_pairs - pairs.len()).min(trigrams.len()));
                            let local = (id - first) as u32;
                            pairs.extend(now.iter().map(|t| t << runs::LOCAL_BITS | local));
                            trigrams = later;
                            if pairs.len() >= run_pairs {
                                write(&mut pairs, batch, &mut runs)?;
                            }
                        }
                        let cr_free = extractor.cr_free;
                        records.push(FileRecord { path: rel, meta, state, cr_free, same_as });
                    }
                    if !pairs.is_empty() {
                        write(&mut pairs, batch, &mut runs)?;
                    }
                    Ok((records, runs))
                };
                loop {
                    let batch = next.fetch_add(1, Ordering::Relaxed);
                    if batch >= n_batches || stop() || lock(&failure).is_some() {
                        return;
                    }
                    match index_batch(batch) {
                        Ok(indexed) => lock(&batches)[batch] = Some(indexed),
                        Err(err) => {
                            lock(&failure).get_or_insert(err);
                            return;
                        }
                    }
                }
            });
        }
    });
    drop(firsts);
    if let Some(err) = lock(&failure).take() {
        return Err(err);
    }
    if stop() {
        return Err(std::io::Error::other("stopped"));
    }
    let batches = std::mem::take(&mut *lock(&batches));
    if batches.iter().any(Option::is_none) {
        return Err(std::io::Error::other("a batch of files was not indexed"));
    }
    let (records, runs): (Vec<Vec<FileRecord<'_>>>, Vec<Vec<runs::Run>>) = batches.into_iter().flatten().unzip();
    let records: Vec<FileRecord<'_>> = records.into_iter().flatten().collect();
    // Runs in file order; they remove their files when dropped, on failure too.
    let runs: Vec<runs::Run> = runs.into_iter().flatten().collect();
    // Each thread merges one range of trigrams into its part; the parts are joined in order.
    let ranges = runs::split(&runs, threads);
    let parts: Vec<std::io::Result<segment::Part>> = std::thread::scope(|scope| {
        let merges: Vec<_> = ranges
            .iter()
            .enumerate()
            .map(|(i, sections)| {
                let runs = &runs;
                scope.spawn(move || {
                    super::worker::lower_priority();
                    let mut merge = runs::Merge::open(runs, sections.clone())?;
                    segment::write_part(temp, i, &mut merge)
                })
            })
            .collect();
        merges
            .into_iter()
            .map(|merge| merge.join().unwrap_or_else(|_| Err(std::io::Error::other("a merge failed"))))
            .collect()
    });
    drop(runs);
    // Parts remove their files when dropped, on failure too.
    let parts = parts.into_iter().collect::<std::io::Result<Vec<segment::Part>>>()?;
    segment::write(out, temp, built_at_ns, &records, &parts)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// The distinct trigrams of a whole text, computed directly.
    fn expected(text: &[u8]) -> BTreeSet<Trigram> {
        let mut text = text.to_vec();
        crate::text::replace_lone_cr(&mut text);
        let folded: Vec<u8> = text.iter().map(|b| fold(*b)).collect();
        folded.windows(3).map(|w| trigram(w[0], w[1], w[2])).collect()
    }

    /// The state, the distinct trigrams and whether the text holds no CR.
    fn extracted(root: &Path, name: &str, part_len: usize) -> (FileState, BTreeSet<Trigram>, bool) {
        let mut extractor = Extractor::with_parts(root, part_len);
        let (_, state) = extractor.read(&root.join(name)).unwrap();
        (state, extractor.trigrams.iter().copied().collect(), extractor.cr_free)
    }

    #[test]
    fn files_read_in_parts_give_the_trigrams_of_the_whole_text() {
        let dir = tempfile::tempdir().unwrap();
        // Pieces that cross part boundaries: CR LF, lone CRs, CR at the end, multi-byte sequences.
        let pieces: [&[u8]; 9] =
            [b"ab", b"\r\n", b"\r", b"\r\r", "é".as_bytes(), "€x".as_bytes(), "😀".as_bytes(), b"Zq", b"\n"];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for case in 0..40 {
            let mut text = Vec::new();
            for _ in 0..(case * 3 + 1) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.extend_from_slice(pieces[(seed % pieces.len() as u64) as usize]);
            }
            let name = format!("f{case}.txt");
            std::fs::write(dir.path().join(&name), &text).unwrap();
            for part_len in [1, 2, 3, 4, 5, 7, 64, 1 << 16] {
                let (state, trigrams, cr_free) = extracted(dir.path(), &name, part_len);
                assert_eq!(state, FileState::Text, "case {case}, parts of {part_len}");
                assert_eq!(cr_free, !text.contains(&b'\r'), "case {case}, parts of {part_len}: {text:?}");
                assert_eq!(trigrams, expected(&text), "case {case}, parts of {part_len}: {text:?}");
            }
        }
        // A NUL or a broken sequence in a late part makes the whole file binary or not UTF-8.
        std::fs::write(dir.path().join("nul"), [&b"abcdefgh"[..], b"\0"].concat()).unwrap();
        std::fs::write(dir.path().join("cut"), [b"abcdefgh".as_slice(), &"é".as_bytes()[..1]].concat()).unwrap();
        std::fs::write(dir.path().join("bad"), [b"abcdefgh".as_slice(), b"\xff", b"ijk"].concat()).unwrap();
        for part_len in [1, 3, 4, 64] {
            assert_eq!(extracted(dir.path(), "nul", part_len), (FileState::Binary, BTreeSet::new(), false));
            assert_eq!(extracted(dir.path(), "cut", part_len), (FileState::NotUtf8, BTreeSet::new(), false));
            assert_eq!(extracted(dir.path(), "bad", part_len), (FileState::NotUtf8, BTreeSet::new(), false));
        }
    }

    #[test]
    fn files_with_one_content_post_its_trigrams_once() {
        let dir = tempfile::tempdir().unwrap();
        let files = ["a.txt", "b.txt", "c/x.txt", "d.txt", "e.txt", "f.txt"];
        let texts = ["same text\n", "other text\n", "same text\n", "same text\r\n", "same text\n", "same texT\n"];
        std::fs::create_dir(dir.path().join("c")).unwrap();
        for (name, text) in files.iter().zip(texts) {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let out = dir.path().join("index/project.idx");
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        let written = build(dir.path(), files.map(str::to_owned).to_vec(), &out, 0, &|| false).unwrap();
        let segment = super::segment::Segment::open(written.tmp_path()).unwrap();
        // One of the three CR-free copies stands for them all; a CR or a byte's case is another content.
        let first = segment.same_content(0).expect("a.txt has copies");
        assert!([0, 2, 4].contains(&first), "{first}");
        let groups: Vec<Option<usize>> = (0..files.len()).map(|id| segment.same_content(id)).collect();
        assert_eq!(groups, [Some(first), None, Some(first), None, Some(first), None]);
        let query = super::super::plan::plan("same text", false, true);
        let candidates = segment.candidates(&query).expect("the literal gives trigrams");
        let posted: Vec<usize> = (0..files.len()).filter(|id| super::segment::has(&candidates, *id)).collect();
        // f.txt differs in case only, which trigrams do not tell apart.
        let mut expected = vec![first, 3, 5];
        expected.sort_unstable();
        assert_eq!(posted, expected);
        // Pages dropped from the process are read back from the file, the same.
        segment.release_pages();
        assert_eq!(segment.candidates(&query), Some(candidates));
        assert_eq!((0..files.len()).map(|id| segment.path(id)).collect::<Vec<_>>(), files);
        assert_eq!((0..files.len()).map(|id| segment.same_content(id)).collect::<Vec<_>>(), groups);
    }

    #[test]
    fn a_file_with_more_trigrams_than_a_run_holds_is_found_by_each_of_them() {
        let dir = tempfile::tempdir().unwrap();
        // Random printable text: nearly every folded trigram of 69 characters, more than a run.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let big: Vec<u8> = (0..3 << 20)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                b' ' + (seed % 95) as u8
            })
            .collect();
        assert!(expected(&big).len() > BATCH * PAIRS_PER_FILE, "the file must not fit in one run");
        std::fs::write(dir.path().join("a.txt"), "hello").unwrap();
        std::fs::write(dir.path().join("big.txt"), &big).unwrap();
        std::fs::write(dir.path().join("c.txt"), "world").unwrap();
        let files = ["a.txt", "big.txt", "c.txt"].map(str::to_owned).to_vec();
        let out = dir.path().join("index/project.idx");
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        let written = build(dir.path(), files, &out, 0, &|| false).unwrap();
        let segment = super::segment::Segment::open(written.tmp_path()).unwrap();
        for at in (0..big.len() - 8).step_by(3001) {
            let window = std::str::from_utf8(&big[at..at + 8]).unwrap();
            let query = super::super::plan::plan(window, false, true);
            let candidates = segment.candidates(&query).expect("eight characters give trigrams");
            assert!(super::segment::has(&candidates, 1), "`{window}` at {at} does not admit big.txt");
        }
    }
}

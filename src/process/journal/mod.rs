//! Ordered transcripts of external tool runs.
//!
//! A journal records chunks of stdin, stdout and stderr in the order they were observed, each stamped
//! with its stream and the elapsed time since the process started. Bytes are decoded as UTF-8 lossily;
//! an incomplete character at the end of a read is carried over to the next read of the same stream.
//!
//! Memory is bounded: the newest chunks stay in memory up to a budget (8 MiB by default); older ones
//! are written in blocks to an unnamed temporary file under the storage root and read back on demand.
//! Only a small index entry per block stays in memory. The file disappears with the journal (and with
//! the server, even after a crash: it never has a name on Unix, it is delete-on-close on Windows).
//!
//! `spill.rs` holds the block format of the spill file and its positioned reads and writes.
//!
//! Architecture invariant: a journal only grows; entries are never modified or removed.
//! Architecture invariant: line numbers are shared across streams in the order chunks were recorded;
//! a chunk starting at cursor `n` covers `n ..= n + #LF - (1 if it ends with LF)`, then the cursor
//! advances by `#LF`. A lone CR is text; a CRLF split across chunks advances on its LF.
//! Architecture invariant: empty chunks are never recorded.

mod spill;

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::select::{EntryMeta, Source, end_line_of};
use spill::{deserialize, read_at, serialize, write_at};

/// Bytes of recent transcript kept in memory per process before older chunks spill to disk.
pub const DEFAULT_MEMORY_BUDGET: usize = 8 * 1024 * 1024;
/// Approximate bookkeeping cost of one in-memory entry, counted against the budget so that floods of
/// tiny chunks stay bounded too.
const ENTRY_OVERHEAD: usize = 64;
/// Spilled entries are grouped into blocks of about this many bytes; one block is the unit of reading.
const BLOCK_BYTES: usize = 256 * 1024;
/// Serialized entry header: stream (1), elapsed nanoseconds (8), start line (8), end line (8), length (4).
const HEADER_BYTES: usize = 29;

/// The stream a chunk was observed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stream {
    Stdin,
    Stdout,
    Stderr,
}

impl Stream {
    pub fn as_str(self) -> &'static str {
        match self {
            Stream::Stdin => "stdin",
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    fn from_byte(byte: u8) -> Option<Stream> {
        match byte {
            0 => Some(Stream::Stdin),
            1 => Some(Stream::Stdout),
            2 => Some(Stream::Stderr),
            _ => None,
        }
    }
}

/// One recorded chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Time since the process started when the chunk was recorded.
    pub elapsed: Duration,
    pub stream: Stream,
    /// Decoded text, never empty.
    pub text: String,
    /// First absolute line the chunk touches (one-based).
    pub start_line: u64,
    /// Last absolute line the chunk touches.
    pub end_line: u64,
}

impl Entry {
    pub fn meta(&self) -> EntryMeta {
        EntryMeta { elapsed: self.elapsed, start_line: self.start_line, end_line: self.end_line }
    }
}

/// The transcript of one process.
pub struct Journal {
    started: Instant,
    spill_dir: Option<PathBuf>,
    budget: usize,
    state: Mutex<State>,
}

struct State {
    /// The line the next chunk starts on.
    cursor: u64,
    /// Incomplete UTF-8 sequences at the end of the last read, per stream.
    carry: [Vec<u8>; 3],
    hot: VecDeque<Arc<Entry>>,
    hot_cost: usize,
    /// Number of entries in the spill file; also the index of `hot[0]`.
    n_spilled: usize,
    blocks: Vec<Block>,
    spill: Spill,
    last_elapsed: Option<Duration>,
    text_bytes: u64,
}

enum Spill {
    /// Nothing spilled yet; the file is created on first need.
    NotYet,
    Active {
        file: Arc<File>,
        len: u64,
    },
    /// The file could not be created or written: keep everything in memory rather than lose text.
    Failed,
}

/// Index entry of one spilled block.
#[derive(Debug, Clone)]
struct Block {
    first_idx: usize,
    n_entries: usize,
    last: EntryMeta,
    offset: u64,
    len: usize,
}

impl Journal {
    /// A journal for a process started at `started`. Spilled chunks go to an unnamed file in
    /// `spill_dir` (created when first needed); `None` keeps everything in memory.
    pub fn new(started: Instant, spill_dir: Option<PathBuf>) -> Journal {
        Journal::with_budget(started, spill_dir, DEFAULT_MEMORY_BUDGET)
    }

    pub fn with_budget(started: Instant, spill_dir: Option<PathBuf>, budget: usize) -> Journal {
        let state = State {
            cursor: 1,
            carry: Default::default(),
            hot: VecDeque::new(),
            hot_cost: 0,
            n_spilled: 0,
            blocks: Vec::new(),
            spill: Spill::NotYet,
            last_elapsed: None,
            text_bytes: 0,
        };
        Journal { started, spill_dir, budget, state: Mutex::new(state) }
    }

    pub fn started(&self) -> Instant {
        self.started
    }

    /// Records bytes read from (or written to) `stream` now.
    pub fn record(&self, stream: Stream, bytes: &[u8]) {
        self.record_at(stream, bytes, self.started.elapsed());
    }

    /// Records bytes observed at `elapsed` after the start. Elapsed times must not decrease.
    pub fn record_at(&self, stream: Stream, bytes: &[u8], elapsed: Duration) {
        if bytes.is_empty() {
            return;
        }
        let mut state = self.state.lock();
        let text = decode(&mut state.carry[stream.index()], bytes);
        self.push(&mut state, stream, text, elapsed);
    }

    /// Flushes an incomplete character left at the end of `stream` (as U+FFFD) once it has ended.
    pub fn finish(&self, stream: Stream) {
        let mut state = self.state.lock();
        let carry = std::mem::take(&mut state.carry[stream.index()]);
        if !carry.is_empty() {
            let text = String::from_utf8_lossy(&carry).into_owned();
            self.push(&mut state, stream, text, self.started.elapsed());
        }
    }

    fn push(&self, state: &mut State, stream: Stream, text: String, elapsed: Duration) {
        if text.is_empty() {
            return;
        }
        // Keep elapsed times monotone even if two recorders race for the lock.
        let elapsed = state.last_elapsed.map_or(elapsed, |last| last.max(elapsed));
        let start_line = state.cursor;
        let end_line = end_line_of(start_line, &text);
        // The cursor moves past every LF: one line beyond the end when the text ends with one.
        state.cursor = end_line + u64::from(text.ends_with('\n'));
        state.text_bytes += text.len() as u64;
        state.last_elapsed = Some(elapsed);
        state.hot_cost += text.len() + ENTRY_OVERHEAD;
        state.hot.push_back(Arc::new(Entry { elapsed, stream, text, start_line, end_line }));
        if state.hot_cost > self.budget {
            self.spill(state);
        }
    }

    /// Moves the oldest in-memory entries to the spill file until half the budget is free.
    fn spill(&self, state: &mut State) {
        if matches!(state.spill, Spill::NotYet) {
            state.spill = match self.open_spill_file() {
                Ok(file) => Spill::Active { file: Arc::new(file), len: 0 },
                Err(err) => {
                    tracing::warn!("process transcripts stay in memory: cannot create a spill file: {err}");
                    Spill::Failed
                }
            };
        }
        let Spill::Active { file, len } = &mut state.spill else { return };
        let target = self.budget / 2;
        let mut buf = Vec::with_capacity(BLOCK_BYTES + HEADER_BYTES);
        let mut block_entries = 0;
        let mut block_last = None;
        let mut spilled = Vec::new();
        while state.hot_cost > target {
            let Some(entry) = state.hot.pop_front() else { break };
            state.hot_cost -= entry.text.len() + ENTRY_OVERHEAD;
            serialize(&entry, &mut buf);
            block_entries += 1;
            block_last = Some(entry.meta());
            if buf.len() >= BLOCK_BYTES {
                spilled.push((std::mem::take(&mut buf), block_entries, block_last.take()));
                block_entries = 0;
            }
        }
        if block_entries > 0 {
            spilled.push((buf, block_entries, block_last));
        }
        for (bytes, n_entries, last) in spilled {
            let Some(last) = last else { continue };
            if let Err(err) = write_at(file, &bytes, *len) {
                // Losing text is worse than using memory: put nothing back on disk from now on, but
                // the entries of this block are gone from memory already, so report it loudly.
                tracing::error!("failed to write a process transcript block; {n_entries} chunks are lost: {err}");
                state.spill = Spill::Failed;
                return;
            }
            state.blocks.push(Block { first_idx: state.n_spilled, n_entries, last, offset: *len, len: bytes.len() });
            state.n_spilled += n_entries;
            *len += bytes.len() as u64;
        }
    }

    fn open_spill_file(&self) -> io::Result<File> {
        let Some(dir) = &self.spill_dir else {
            return Err(io::Error::new(io::ErrorKind::Unsupported, "no spill directory configured"));
        };
        std::fs::create_dir_all(dir)?;
        tempfile::tempfile_in(dir)
    }

    /// Elapsed time of the last recorded chunk.
    pub fn last_activity(&self) -> Option<Duration> {
        self.state.lock().last_elapsed
    }

    /// Total bytes of decoded text recorded so far.
    pub fn text_bytes(&self) -> u64 {
        self.state.lock().text_bytes
    }

    /// Number of recorded entries.
    pub fn len(&self) -> usize {
        let state = self.state.lock();
        state.n_spilled + state.hot.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes currently held in memory for entries (text plus bookkeeping estimate).
    pub fn memory_cost(&self) -> usize {
        self.state.lock().hot_cost
    }

    /// A consistent view of the entries recorded so far, usable without holding the journal's lock.
    pub fn snapshot(&self) -> Snapshot {
        let state = self.state.lock();
        let file = match &state.spill {
            Spill::Active { file, .. } => Some(file.clone()),
            Spill::NotYet | Spill::Failed => None,
        };
        Snapshot {
            blocks: state.blocks.clone(),
            n_spilled: state.n_spilled,
            hot: state.hot.iter().cloned().collect(),
            file,
            cache: std::cell::RefCell::new(None),
        }
    }
}

/// Decodes `bytes` after the carried bytes of the same stream, keeping an incomplete final character.
fn decode(carry: &mut Vec<u8>, bytes: &[u8]) -> String {
    let joined;
    let buf = if carry.is_empty() {
        bytes
    } else {
        carry.extend_from_slice(bytes);
        joined = std::mem::take(carry);
        &joined[..]
    };
    let keep = incomplete_tail_len(buf);
    let (complete, tail) = buf.split_at(buf.len() - keep);
    *carry = tail.to_vec();
    lossy(complete)
}

/// `bytes` as text, invalid sequences replaced by U+FFFD. Valid UTF-8 (the common case) takes
/// `std::str::from_utf8`, which stays fast even in unoptimized builds of this crate.
fn lossy(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// Length of a UTF-8 sequence at the end of `buf` that has started but not finished.
fn incomplete_tail_len(buf: &[u8]) -> usize {
    for back in 1..=buf.len().min(3) {
        let byte = buf[buf.len() - back];
        if byte & 0xC0 == 0x80 {
            continue;
        }
        let width = match byte {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => return 0,
        };
        return if width > back { back } else { 0 };
    }
    0
}

/// A point-in-time view of a journal. Spilled blocks are read on demand; the last one read is cached.
pub struct Snapshot {
    blocks: Vec<Block>,
    n_spilled: usize,
    hot: Vec<Arc<Entry>>,
    file: Option<Arc<File>>,
    cache: std::cell::RefCell<Option<(usize, Arc<Vec<Entry>>)>>,
}

impl Snapshot {
    fn block(&self, block_idx: usize) -> io::Result<Arc<Vec<Entry>>> {
        if let Some((cached_idx, entries)) = &*self.cache.borrow()
            && *cached_idx == block_idx
        {
            return Ok(entries.clone());
        }
        let block = &self.blocks[block_idx];
        let file = self.file.as_ref().expect("spilled blocks exist only with a spill file");
        let mut buf = vec![0; block.len];
        read_at(file, &mut buf, block.offset)?;
        let entries = Arc::new(deserialize(&buf)?);
        if entries.len() != block.n_entries {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "process transcript block has the wrong length"));
        }
        *self.cache.borrow_mut() = Some((block_idx, entries.clone()));
        Ok(entries)
    }

    /// Runs `f` on the entry at `idx` without cloning its text.
    fn with_entry<T>(&self, idx: usize, f: impl FnOnce(&Entry) -> T) -> io::Result<T> {
        if idx >= self.n_spilled {
            return Ok(f(&self.hot[idx - self.n_spilled]));
        }
        let block_idx = self.blocks.partition_point(|b| b.first_idx + b.n_entries <= idx);
        let entries = self.block(block_idx)?;
        Ok(f(&entries[idx - self.blocks[block_idx].first_idx]))
    }

    /// Calls `f` on every entry in order, reading spilled blocks one at a time.
    pub fn for_each(&self, mut f: impl FnMut(&Entry)) -> io::Result<()> {
        for block_idx in 0..self.blocks.len() {
            self.block(block_idx)?.iter().for_each(&mut f);
        }
        self.hot.iter().for_each(|entry| f(entry));
        Ok(())
    }

    /// Elapsed time of the last entry.
    pub fn last_elapsed(&self) -> Option<Duration> {
        self.hot.last().map(|e| e.elapsed).or_else(|| self.blocks.last().map(|b| b.last.elapsed))
    }
}

impl Source for Snapshot {
    fn len(&self) -> usize {
        self.n_spilled + self.hot.len()
    }

    fn meta(&self, idx: usize) -> io::Result<EntryMeta> {
        self.with_entry(idx, Entry::meta)
    }

    fn entry(&self, idx: usize) -> io::Result<Entry> {
        self.with_entry(idx, Entry::clone)
    }

    fn partition_point(&self, pred: &dyn Fn(&EntryMeta) -> bool) -> io::Result<usize> {
        // Blocks are searched by their last entry, so at most one block is read.
        let block_idx = self.blocks.partition_point(|b| pred(&b.last));
        if block_idx < self.blocks.len() {
            let entries = self.block(block_idx)?;
            return Ok(self.blocks[block_idx].first_idx + entries.partition_point(|e| pred(&e.meta())));
        }
        Ok(self.n_spilled + self.hot.partition_point(|e| pred(&e.meta())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(journal: &Journal) -> Vec<(Stream, String, u64, u64)> {
        let mut res = Vec::new();
        journal.snapshot().for_each(|e| res.push((e.stream, e.text.clone(), e.start_line, e.end_line))).unwrap();
        res
    }

    fn journal() -> Journal {
        Journal::new(Instant::now(), None)
    }

    #[test]
    fn lf_advances_the_shared_line_cursor() {
        let j = journal();
        j.record(Stream::Stdout, b"a\nb");
        j.record(Stream::Stderr, b"c\n");
        j.record(Stream::Stdout, b"d\n\ne");
        assert_eq!(
            texts(&j),
            vec![
                (Stream::Stdout, "a\nb".into(), 1, 2),
                (Stream::Stderr, "c\n".into(), 2, 2),
                (Stream::Stdout, "d\n\ne".into(), 3, 5),
            ]
        );
    }

    #[test]
    fn split_crlf_advances_on_the_lf() {
        let j = journal();
        j.record(Stream::Stdout, b"a\r");
        j.record(Stream::Stdout, b"\nb");
        assert_eq!(texts(&j), vec![(Stream::Stdout, "a\r".into(), 1, 1), (Stream::Stdout, "\nb".into(), 1, 2)]);
    }

    #[test]
    fn lone_cr_is_text() {
        let j = journal();
        j.record(Stream::Stdout, b"10%\r20%\r30%\n");
        j.record(Stream::Stdout, b"done");
        assert_eq!(
            texts(&j),
            vec![(Stream::Stdout, "10%\r20%\r30%\n".into(), 1, 1), (Stream::Stdout, "done".into(), 2, 2)]
        );
    }

    #[test]
    fn empty_chunks_are_not_recorded() {
        let j = journal();
        j.record(Stream::Stdout, b"");
        assert!(j.is_empty());
        j.record(Stream::Stdout, b"\xE2\x82");
        assert!(j.is_empty(), "an incomplete character alone records nothing yet");
    }

    #[test]
    fn characters_split_across_reads_are_joined() {
        let j = journal();
        j.record(Stream::Stdout, b"price \xE2\x82");
        j.record(Stream::Stderr, b"x");
        j.record(Stream::Stdout, b"\xAC 5");
        assert_eq!(
            texts(&j),
            vec![
                (Stream::Stdout, "price ".into(), 1, 1),
                (Stream::Stderr, "x".into(), 1, 1),
                (Stream::Stdout, "€ 5".into(), 1, 1)
            ]
        );
    }

    #[test]
    fn invalid_bytes_decode_lossily() {
        let j = journal();
        j.record(Stream::Stdout, b"a\xFFb\xC3(");
        assert_eq!(texts(&j), vec![(Stream::Stdout, "a\u{FFFD}b\u{FFFD}(".into(), 1, 1)]);
    }

    #[test]
    fn unfinished_character_is_flushed_when_the_stream_ends() {
        let j = journal();
        j.record(Stream::Stdout, b"ok\xF0\x9F");
        j.finish(Stream::Stdout);
        assert_eq!(texts(&j), vec![(Stream::Stdout, "ok".into(), 1, 1), (Stream::Stdout, "\u{FFFD}".into(), 1, 1)]);
    }

    #[test]
    fn four_byte_characters_survive_byte_by_byte_reads() {
        let j = journal();
        for byte in "😀\n".as_bytes() {
            j.record(Stream::Stdout, std::slice::from_ref(byte));
        }
        let all: String = texts(&j).into_iter().map(|t| t.1).collect();
        assert_eq!(all, "😀\n");
    }

    #[test]
    fn spilled_journal_reads_back_every_entry_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::with_budget(Instant::now(), Some(dir.path().join("spill")), 4096);
        let mut expected = Vec::new();
        for i in 0..2000u64 {
            let stream = if i % 3 == 0 { Stream::Stderr } else { Stream::Stdout };
            let text = format!("line {i}\n");
            j.record_at(stream, text.as_bytes(), Duration::from_millis(i));
            expected.push((stream, text, i + 1, i + 1));
        }
        assert!(j.memory_cost() <= 4096);
        assert!(dir.path().join("spill").is_dir());
        assert_eq!(texts(&j), expected);
        let snapshot = j.snapshot();
        assert_eq!(Source::len(&snapshot), 2000);
        assert_eq!(snapshot.entry(10).unwrap().text, "line 10\n");
        assert_eq!(snapshot.partition_point(&|m| m.elapsed < Duration::from_millis(1500)).unwrap(), 1500);
        assert_eq!(snapshot.partition_point(&|m| m.end_line < 7).unwrap(), 6);
        assert_eq!(snapshot.last_elapsed(), Some(Duration::from_millis(1999)));
    }

    #[test]
    fn without_a_spill_directory_everything_stays_in_memory() {
        let j = Journal::with_budget(Instant::now(), None, 256);
        for i in 0..100 {
            j.record(Stream::Stdout, format!("{i}\n").as_bytes());
        }
        assert_eq!(texts(&j).len(), 100);
    }
}

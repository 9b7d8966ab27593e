//! The build's sorted runs: each batch of files leaves its (trigram, file id) pairs, sorted, in one
//! or more temporary files beside the index, and the runs are merged in trigram order into the
//! segment's posting lists. The build thus holds a bounded number of pairs per thread, never the
//! whole index.
//!
//! A run is a sequence of groups, one per trigram in increasing order: the trigram, the number of
//! ids, the last id, the byte length (4 bytes little-endian each), then the ids, the first one
//! absolute and the others as gaps (varints, as in the segment).
//!
//! Each run also tells where each section of trigrams (the trigrams sharing their top 8 bits)
//! starts in it, so the merge can be split into trigram ranges of about equal bytes, one per
//! thread, each reading only its part of every run.
//!
//! Architecture invariant: runs hold consecutive, increasing file-id ranges (a batch's runs in
//! order, batches in order) and the merge appends a trigram's groups in run order, so every merged
//! posting list is sorted.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::plan::{TRIGRAMS, Trigram};
use super::segment::{PostingWriter, Postings, get_varint};

/// Trigrams share a bucket (merged at once) when they agree above these low bits.
const BUCKET_SHIFT: u32 = 11;
/// Trigrams share a section (the unit the merge is split by) when they agree above these low bits.
const SECTION_SHIFT: u32 = 13;
/// Sections of trigrams.
pub const SECTIONS: usize = TRIGRAMS >> SECTION_SHIFT;

/// A run on disk, open for the merge (one descriptor per run, read at positions by every merging
/// thread); its file is removed when it is dropped.
pub struct Run {
    path: PathBuf,
    file: File,
    /// Where each section's groups start (`SECTIONS + 1` offsets, the last one the run's length; a
    /// run is far below 4 GiB, its pairs being bounded per batch): 1 KiB a run, and the runs of a
    /// 60,000-file tree are about 300.
    offsets: Box<[u32]>,
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Bits of a pair below its trigram's 21: the file's id within its batch. A pair is
/// `trigram << LOCAL_BITS | (id - the batch's first id)`, 4 bytes.
pub const LOCAL_BITS: u32 = 11;
/// Files a batch holds at most, so that its ids fit in a pair.
pub const MAX_BATCH: usize = 1 << LOCAL_BITS;

/// Bits of the trigram sorted by the first pass of [`sort_pairs`] (the second sorts the rest).
const LOW_BITS: u32 = 11;

/// Sorts `pairs` (`trigram << LOCAL_BITS | id in the batch`, ids increasing) by trigram, stably,
/// so that they end sorted: a least-significant-digit radix sort in two passes of 11 and 10 bits, through `scratch`,
/// which is kept for the next call (so a build allocates it once per thread, not once per run).
pub fn sort_pairs(pairs: &mut [u32], scratch: &mut Vec<u32>) {
    const LOW: usize = 1 << LOW_BITS;
    const HIGH: usize = TRIGRAMS >> LOW_BITS;
    let low = |pair: u32| (pair >> LOCAL_BITS) as usize & (LOW - 1);
    let high = |pair: u32| (pair >> (LOCAL_BITS + LOW_BITS)) as usize & (HIGH - 1);
    let (mut low_starts, mut high_starts) = (vec![0usize; LOW], vec![0usize; HIGH]);
    for pair in pairs.iter() {
        low_starts[low(*pair)] += 1;
        high_starts[high(*pair)] += 1;
    }
    for starts in [&mut low_starts, &mut high_starts] {
        let mut at = 0;
        for start in starts.iter_mut() {
            (*start, at) = (at, at + *start);
        }
    }
    scratch.clear();
    scratch.resize(pairs.len(), 0);
    for pair in pairs.iter() {
        let slot = &mut low_starts[low(*pair)];
        scratch[*slot] = *pair;
        *slot += 1;
    }
    for pair in scratch.iter() {
        let slot = &mut high_starts[high(*pair)];
        pairs[*slot] = *pair;
        *slot += 1;
    }
}

/// Writes `pairs` (sorted, of the batch whose first file id is `first_id`) as a run at `path`.
pub fn write_run(path: &Path, pairs: &[u32], first_id: u32) -> io::Result<Run> {
    let file = File::options().read(true).write(true).create(true).truncate(true).open(path)?;
    let mut run = Run { path: path.to_owned(), file, offsets: vec![0; SECTIONS + 1].into_boxed_slice() };
    let mut out = BufWriter::with_capacity(64 << 10, &run.file);
    let mut writer = PostingWriter::default();
    let offsets = &mut run.offsets;
    let (mut at, mut written, mut section) = (0, 0u64, 0);
    while at < pairs.len() {
        let tri: Trigram = pairs[at] >> LOCAL_BITS;
        let offset = u32::try_from(written).map_err(io::Error::other)?;
        while section <= (tri >> SECTION_SHIFT) as usize {
            offsets[section] = offset;
            section += 1;
        }
        writer.reset();
        for pair in pairs[at..].iter().take_while(|pair| *pair >> LOCAL_BITS == tri) {
            writer.push(first_id + (pair & (MAX_BATCH as u32 - 1)));
        }
        at += writer.count as usize;
        let len = u32::try_from(writer.bytes.len()).map_err(io::Error::other)?;
        for n in [tri, writer.count, writer.last_id(), len] {
            out.write_all(&n.to_le_bytes())?;
        }
        out.write_all(&writer.bytes)?;
        written += 16 + u64::from(len);
    }
    offsets[section..].fill(u32::try_from(written).map_err(io::Error::other)?);
    out.flush()?;
    drop(out);
    Ok(run)
}

/// A slice of a run, read at its own position through the run's shared descriptor.
struct RunSlice<'a> {
    file: &'a File,
    at: u64,
    end: u64,
}

impl Read for RunSlice<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = buf.len().min(usize::try_from(self.end - self.at).unwrap_or(usize::MAX));
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::read_at(self.file, &mut buf[..want], self.at)?;
        #[cfg(windows)]
        let n = std::os::windows::fs::FileExt::seek_read(self.file, &mut buf[..want], self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// Splits the sections into at most `parts` consecutive ranges holding about equal bytes of the
/// runs (what the merge reads, about in proportion to the pairs).
pub fn split(runs: &[Run], parts: usize) -> Vec<Range<usize>> {
    let bytes = |s: usize| runs.iter().map(|run| u64::from(run.offsets[s + 1] - run.offsets[s])).sum::<u64>();
    let per_section: Vec<u64> = (0..SECTIONS).map(bytes).collect();
    let total: u64 = per_section.iter().sum();
    let mut ranges = Vec::new();
    let (mut start, mut sum) = (0, 0u64);
    for (section, n) in per_section.iter().enumerate() {
        sum += n;
        if ranges.len() + 1 < parts && sum * parts as u64 >= total * (ranges.len() as u64 + 1) {
            ranges.push(start..section + 1);
            start = section + 1;
        }
    }
    ranges.push(start..SECTIONS);
    ranges
}

/// Reads the next group's head of a run, and its ids into `bytes` (reusing its allocation):
/// `(trigram, count, last id)`, or `None` at the end of the run.
fn read_group(reader: &mut impl BufRead, bytes: &mut Vec<u8>) -> io::Result<Option<(Trigram, u32, u32)>> {
    if reader.fill_buf()?.is_empty() {
        return Ok(None);
    }
    let mut head = [0u8; 16];
    reader.read_exact(&mut head)?;
    let n = |i: usize| u32::from_le_bytes([head[4 * i], head[4 * i + 1], head[4 * i + 2], head[4 * i + 3]]);
    bytes.resize(n(3) as usize, 0);
    reader.read_exact(bytes)?;
    Ok(Some((n(0), n(1), n(2))))
}

/// The runs merged: each trigram of a range of sections with its whole posting list, in increasing
/// trigram order. A bucket at a time, each run's groups in it are appended, run after run, to
/// the lists of the bucket's trigrams (runs hold increasing ids, so every list stays sorted); the
/// lists are then given out in trigram order.
pub struct Merge<'a> {
    readers: Vec<BufReader<RunSlice<'a>>>,
    /// Each run's next group: its trigram, count and last id (its ids are in `bytes`), if any.
    heads: Vec<Option<(Trigram, u32, u32)>>,
    bytes: Vec<Vec<u8>>,
    /// The bucket whose lists are given out.
    bucket: usize,
    /// The lists of that bucket's trigrams, by their low bits, reused from bucket to bucket (short
    /// ones with their allocations), and the next one to look at.
    lists: Vec<PostingWriter>,
    slot: usize,
}

/// Trigrams per bucket.
const SLOTS: usize = 1 << BUCKET_SHIFT;

/// A list's allocation kept from one bucket to the next at most.
const KEPT_LIST_BYTES: usize = 512;

impl Merge<'_> {
    /// Merges the `sections` of `runs`.
    pub fn open(runs: &[Run], sections: Range<usize>) -> io::Result<Merge<'_>> {
        let mut merge = Merge {
            readers: Vec::new(),
            heads: Vec::new(),
            bytes: Vec::new(),
            bucket: 0,
            lists: (0..SLOTS).map(|_| PostingWriter::default()).collect(),
            slot: SLOTS,
        };
        for run in runs {
            let (at, end) = (u64::from(run.offsets[sections.start]), u64::from(run.offsets[sections.end]));
            let mut reader = BufReader::with_capacity(4 << 10, RunSlice { file: &run.file, at, end });
            let mut bytes = Vec::new();
            merge.heads.push(read_group(&mut reader, &mut bytes)?);
            merge.readers.push(reader);
            merge.bytes.push(bytes);
        }
        Ok(merge)
    }

    /// Merges the next bucket that any run holds into `lists`; `false` after the last.
    fn fill(&mut self) -> io::Result<bool> {
        let Some(bucket) = self.heads.iter().flatten().map(|(tri, _, _)| (tri >> BUCKET_SHIFT) as usize).min() else {
            return Ok(false);
        };
        for list in self.lists.iter_mut().filter(|list| list.count > 0) {
            list.reset();
            // A long list's allocation is not kept for the next bucket: kept, every slot would
            // hold the longest list it ever had (14 MiB of a 60,000-file tree's merge).
            if list.bytes.capacity() > KEPT_LIST_BYTES {
                list.bytes = Vec::new();
            }
        }
        for (i, reader) in self.readers.iter_mut().enumerate() {
            while let Some((tri, count, last)) = self.heads[i]
                && (tri >> BUCKET_SHIFT) as usize == bucket
            {
                let bytes = &self.bytes[i];
                let first = get_varint(bytes).map_or(0, |(first, _)| first);
                self.lists[tri as usize & (SLOTS - 1)].append(bytes, count, first, last);
                self.heads[i] = read_group(reader, &mut self.bytes[i])?;
            }
        }
        (self.bucket, self.slot) = (bucket, 0);
        Ok(true)
    }
}

impl Postings for Merge<'_> {
    fn next_list(&mut self) -> io::Result<Option<(Trigram, u32, &[u8])>> {
        loop {
            if let Some(slot) = (self.slot..SLOTS).find(|slot| self.lists[*slot].count > 0) {
                self.slot = slot + 1;
                let tri = (self.bucket << BUCKET_SHIFT | slot) as Trigram;
                let list = &self.lists[slot];
                return Ok(Some((tri, list.count, &list.bytes)));
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8], count: u32) -> Vec<u32> {
        let (mut ids, mut rest, mut id) = (Vec::new(), bytes, 0u32);
        for i in 0..count {
            let (gap, used) = get_varint(rest).unwrap();
            id = if i == 0 { gap } else { id + gap };
            ids.push(id);
            rest = &rest[used..];
        }
        ids
    }

    #[test]
    fn pairs_sort_by_trigram_keeping_id_order() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut pairs: Vec<u32> = (0..20_000u32)
            .map(|n| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (((seed % TRIGRAMS as u64) as u32) << LOCAL_BITS) | (n * MAX_BATCH as u32 / 20_000)
            })
            .collect();
        let mut expected = pairs.clone();
        expected.sort_unstable();
        let mut scratch = Vec::new();
        sort_pairs(&mut pairs, &mut scratch);
        assert_eq!(pairs, expected);
        sort_pairs(&mut pairs[..0], &mut scratch);
    }

    #[test]
    fn runs_merge_into_sorted_posting_lists() {
        let dir = tempfile::tempdir().unwrap();
        let pair = |tri: u32, id: u32| tri << LOCAL_BITS | id;
        let high = 5 << SECTION_SHIFT;
        // Two batches' runs, of files 0.. and 3900..
        let runs = [
            (0, vec![pair(1, 0), pair(1, 3), pair(7, 2), pair(high, 9)]),
            (0, vec![pair(1, 300), pair(5, 200)]),
            (3900, vec![pair(7, 100), pair(high, 101), pair(high + 1, 102)]),
            (3900, vec![]),
        ];
        let paths: Vec<PathBuf> = (0..runs.len()).map(|i| dir.path().join(format!("run{i}"))).collect();
        let runs: Vec<Run> =
            paths.iter().zip(&runs).map(|(path, (first, run))| write_run(path, run, *first).unwrap()).collect();
        let merged = |sections: Range<usize>| {
            let mut merge = Merge::open(&runs, sections).unwrap();
            let mut merged: Vec<(Trigram, Vec<u32>)> = Vec::new();
            while let Some((t, n, b)) = merge.next_list().unwrap() {
                merged.push((t, decode(b, n)));
            }
            merged
        };
        let low = [(1, vec![0, 3, 300]), (5, vec![200]), (7, vec![2, 4000])];
        let top = [(high, vec![9, 4001]), (high + 1, vec![4002])];
        assert_eq!(merged(0..SECTIONS), [&low[..], &top[..]].concat());
        // 89 bytes of groups in section 0 and 53 in section 5: two parts split after section 0.
        let parts = split(&runs, 2);
        assert_eq!(parts, [0..1, 1..SECTIONS]);
        assert_eq!(merged(parts[0].clone()), low);
        assert_eq!(merged(parts[1].clone()), top);
        assert_eq!(split(&runs, 1), vec![0..SECTIONS]);
        // Runs remove their files when dropped.
        drop(runs);
        assert!(paths.iter().all(|path| !path.exists()));
    }
}

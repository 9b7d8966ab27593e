//! The build's sorted runs: each batch of files leaves its (trigram, file id) pairs, sorted, in a
//! temporary file beside the index, and the runs are merged in trigram order into the segment's
//! posting lists. The build thus holds one batch's pairs per thread, never the whole index.
//!
//! A run is a sequence of groups, one per trigram in increasing order: the trigram, the number of
//! ids, the last id, the byte length (4 bytes little-endian each), then the ids, the first one
//! absolute and the others as gaps (varints, as in the segment).
//!
//! Each run also tells where each bucket of trigrams (the trigrams sharing their top bits) starts
//! in it and how many pairs the bucket holds, so the merge can be split into trigram ranges of
//! about equal work, one per thread, each reading only its part of every run.
//!
//! Architecture invariant: batches hold consecutive, increasing file-id ranges and the merge appends
//! a trigram's groups in batch order, so every merged posting list is sorted.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::plan::{TRIGRAMS, Trigram};
use super::segment::{PostingWriter, Postings, get_varint};

/// Trigrams share a bucket when they agree above these low bits.
const BUCKET_SHIFT: u32 = 11;
/// Buckets of trigrams.
pub const BUCKETS: usize = TRIGRAMS >> BUCKET_SHIFT;

/// Where each bucket's groups start in a run (`BUCKETS + 1` offsets, the last one its length) and
/// how many pairs each holds.
pub struct RunTable {
    offsets: Vec<u64>,
    pub pairs: Vec<u64>,
}

/// Writes `pairs` (`trigram << 32 | file id`, sorted) as a run at `path`.
pub fn write_run(path: &Path, pairs: &[u64]) -> io::Result<RunTable> {
    let mut out = BufWriter::with_capacity(64 << 10, File::create(path)?);
    let mut writer = PostingWriter::default();
    let mut table = RunTable { offsets: vec![0; BUCKETS + 1], pairs: vec![0; BUCKETS] };
    let (mut at, mut written, mut bucket) = (0, 0u64, 0);
    while at < pairs.len() {
        let tri = (pairs[at] >> 32) as Trigram;
        while bucket <= (tri >> BUCKET_SHIFT) as usize {
            table.offsets[bucket] = written;
            bucket += 1;
        }
        writer.reset();
        for pair in pairs[at..].iter().take_while(|pair| (*pair >> 32) as Trigram == tri) {
            writer.push(*pair as u32);
        }
        at += writer.count as usize;
        let len = u32::try_from(writer.bytes.len()).map_err(io::Error::other)?;
        for n in [tri, writer.count, writer.last_id(), len] {
            out.write_all(&n.to_le_bytes())?;
        }
        out.write_all(&writer.bytes)?;
        table.pairs[bucket - 1] += u64::from(writer.count);
        written += 16 + u64::from(len);
    }
    table.offsets[bucket..].fill(written);
    out.into_inner().map_err(io::IntoInnerError::into_error)?;
    Ok(table)
}

/// Splits the buckets into at most `parts` consecutive ranges holding about equal numbers of pairs.
pub fn split(tables: &[RunTable], parts: usize) -> Vec<Range<usize>> {
    let per_bucket: Vec<u64> = (0..BUCKETS).map(|b| tables.iter().map(|t| t.pairs[b]).sum()).collect();
    let total: u64 = per_bucket.iter().sum();
    let mut ranges = Vec::new();
    let (mut start, mut sum) = (0, 0u64);
    for (bucket, n) in per_bucket.iter().enumerate() {
        sum += n;
        if ranges.len() + 1 < parts && sum * parts as u64 >= total * (ranges.len() as u64 + 1) {
            ranges.push(start..bucket + 1);
            start = bucket + 1;
        }
    }
    ranges.push(start..BUCKETS);
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

/// The runs merged: each trigram of a range of buckets with its whole posting list, in increasing
/// trigram order.
pub struct Merge {
    readers: Vec<BufReader<io::Take<File>>>,
    /// Each run's current group: its count and last id (its ids are in `bytes`).
    heads: Vec<(u32, u32)>,
    bytes: Vec<Vec<u8>>,
    /// The next trigram of each run, smallest first; for equal trigrams, the earlier run first.
    heap: BinaryHeap<Reverse<(Trigram, usize)>>,
    /// The list being merged, reused from trigram to trigram.
    writer: PostingWriter,
}

impl Merge {
    /// Merges the `buckets` of the runs at `paths`, described by `tables`.
    pub fn open(paths: &[PathBuf], tables: &[RunTable], buckets: Range<usize>) -> io::Result<Merge> {
        let mut merge = Merge {
            readers: Vec::new(),
            heads: Vec::new(),
            bytes: Vec::new(),
            heap: BinaryHeap::new(),
            writer: PostingWriter::default(),
        };
        for (i, (path, table)) in paths.iter().zip(tables).enumerate() {
            let (from, to) = (table.offsets[buckets.start], table.offsets[buckets.end]);
            let mut file = File::open(path)?;
            file.seek(SeekFrom::Start(from))?;
            let mut reader = BufReader::with_capacity(16 << 10, file.take(to - from));
            let mut bytes = Vec::new();
            let head = match read_group(&mut reader, &mut bytes)? {
                Some((tri, count, last)) => {
                    merge.heap.push(Reverse((tri, i)));
                    (count, last)
                }
                None => (0, 0),
            };
            merge.readers.push(reader);
            merge.heads.push(head);
            merge.bytes.push(bytes);
        }
        Ok(merge)
    }
}

impl Postings for Merge {
    fn next_list(&mut self) -> io::Result<Option<(Trigram, u32, &[u8])>> {
        let Some(&Reverse((tri, _))) = self.heap.peek() else { return Ok(None) };
        self.writer.reset();
        while let Some(&Reverse((next, i))) = self.heap.peek() {
            if next != tri {
                break;
            }
            self.heap.pop();
            let (count, last) = self.heads[i];
            let bytes = &self.bytes[i];
            let first = get_varint(bytes).map_or(0, |(first, _)| first);
            self.writer.append(bytes, count, first, last);
            if let Some((tri, count, last)) = read_group(&mut self.readers[i], &mut self.bytes[i])? {
                self.heap.push(Reverse((tri, i)));
                self.heads[i] = (count, last);
            }
        }
        Ok(Some((tri, self.writer.count, &self.writer.bytes)))
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
    fn runs_merge_into_sorted_posting_lists() {
        let dir = tempfile::tempdir().unwrap();
        let pair = |tri: u32, id: u32| u64::from(tri) << 32 | u64::from(id);
        let high = 5 << BUCKET_SHIFT;
        let runs = [
            vec![pair(1, 0), pair(1, 3), pair(7, 2), pair(high, 9)],
            vec![pair(1, 300), pair(5, 200), pair(7, 4000), pair(high, 4001), pair(high + 1, 4002)],
            vec![],
        ];
        let paths: Vec<PathBuf> = (0..runs.len()).map(|i| dir.path().join(format!("run{i}"))).collect();
        let tables: Vec<RunTable> = paths.iter().zip(&runs).map(|(path, run)| write_run(path, run).unwrap()).collect();
        let merged = |buckets: Range<usize>| {
            let mut merge = Merge::open(&paths, &tables, buckets).unwrap();
            let mut merged: Vec<(Trigram, Vec<u32>)> = Vec::new();
            while let Some((t, n, b)) = merge.next_list().unwrap() {
                merged.push((t, decode(b, n)));
            }
            merged
        };
        let low = [(1, vec![0, 3, 300]), (5, vec![200]), (7, vec![2, 4000])];
        let top = [(high, vec![9, 4001]), (high + 1, vec![4002])];
        assert_eq!(merged(0..BUCKETS), [&low[..], &top[..]].concat());
        // Five pairs in bucket 0 and three in bucket 5: two parts split after bucket 0.
        let parts = split(&tables, 2);
        assert_eq!(parts, [0..1, 1..BUCKETS]);
        assert_eq!(merged(parts[0].clone()), low);
        assert_eq!(merged(parts[1].clone()), top);
        assert_eq!(split(&tables, 1), vec![0..BUCKETS]);
    }
}

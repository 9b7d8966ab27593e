//! The build's sorted runs: each batch of files leaves its (trigram, file id) pairs, sorted, in a
//! temporary file beside the index, and the runs are merged in trigram order into the segment's
//! posting lists. The build thus holds one batch's pairs per thread, never the whole index.
//!
//! A run is a sequence of groups, one per trigram in increasing order: the trigram, the number of
//! ids, the last id, the byte length (4 bytes little-endian each), then the ids, the first one
//! absolute and the others as gaps (varints, as in the segment).
//!
//! Architecture invariant: batches hold consecutive, increasing file-id ranges and the merge appends
//! a trigram's groups in batch order, so every merged posting list is sorted.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use super::plan::Trigram;
use super::segment::{PostingWriter, Postings, get_varint};

/// Writes `pairs` (`trigram << 32 | file id`, sorted) as a run at `path`.
pub fn write_run(path: &Path, pairs: &[u64]) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(64 << 10, File::create(path)?);
    let mut writer = PostingWriter::default();
    let mut at = 0;
    while at < pairs.len() {
        let tri = (pairs[at] >> 32) as Trigram;
        let end = at + pairs[at..].partition_point(|pair| (pair >> 32) as Trigram == tri);
        writer.reset();
        for pair in &pairs[at..end] {
            writer.push(*pair as u32);
        }
        let len = u32::try_from(writer.bytes.len()).map_err(io::Error::other)?;
        for n in [tri, writer.count, writer.last_id(), len] {
            out.write_all(&n.to_le_bytes())?;
        }
        out.write_all(&writer.bytes)?;
        at = end;
    }
    out.into_inner().map_err(io::IntoInnerError::into_error)?;
    Ok(())
}

/// Reads the next group's head of a run, and its ids into `bytes` (reusing its allocation):
/// `(trigram, count, last id)`, or `None` at the end of the run.
fn read_group(reader: &mut BufReader<File>, bytes: &mut Vec<u8>) -> io::Result<Option<(Trigram, u32, u32)>> {
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

/// The runs merged: each trigram with its whole posting list, in increasing trigram order.
pub struct Merge {
    readers: Vec<BufReader<File>>,
    /// Each run's current group: its count and last id (its ids are in `bytes`).
    heads: Vec<(u32, u32)>,
    bytes: Vec<Vec<u8>>,
    /// The next trigram of each run, smallest first; for equal trigrams, the earlier run first.
    heap: BinaryHeap<Reverse<(Trigram, usize)>>,
    /// The list being merged, reused from trigram to trigram.
    writer: PostingWriter,
}

impl Merge {
    pub fn open(paths: &[PathBuf]) -> io::Result<Merge> {
        let mut merge = Merge {
            readers: Vec::new(),
            heads: Vec::new(),
            bytes: Vec::new(),
            heap: BinaryHeap::new(),
            writer: PostingWriter::default(),
        };
        for (i, path) in paths.iter().enumerate() {
            let mut reader = BufReader::with_capacity(16 << 10, File::open(path)?);
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
        let runs = [vec![pair(1, 0), pair(1, 3), pair(7, 2)], vec![pair(1, 300), pair(5, 200), pair(7, 4000)], vec![]];
        let paths: Vec<PathBuf> = (0..runs.len()).map(|i| dir.path().join(format!("run{i}"))).collect();
        for (path, run) in paths.iter().zip(&runs) {
            write_run(path, run).unwrap();
        }
        let mut merge = Merge::open(&paths).unwrap();
        let mut merged: Vec<(Trigram, Vec<u32>)> = Vec::new();
        while let Some((t, n, b)) = merge.next_list().unwrap() {
            merged.push((t, decode(b, n)));
        }
        assert_eq!(merged, [(1, vec![0, 3, 300]), (5, vec![200]), (7, vec![2, 4000])]);
    }
}

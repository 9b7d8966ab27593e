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
use super::segment::{PostingWriter, get_varint};

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

/// One trigram's ids in one run.
struct Group {
    tri: Trigram,
    count: u32,
    last: u32,
    bytes: Vec<u8>,
}

fn read_group(reader: &mut BufReader<File>) -> io::Result<Option<Group>> {
    if reader.fill_buf()?.is_empty() {
        return Ok(None);
    }
    let mut head = [0u8; 16];
    reader.read_exact(&mut head)?;
    let n = |i: usize| u32::from_le_bytes([head[4 * i], head[4 * i + 1], head[4 * i + 2], head[4 * i + 3]]);
    let mut bytes = vec![0; n(3) as usize];
    reader.read_exact(&mut bytes)?;
    Ok(Some(Group { tri: n(0), count: n(1), last: n(2), bytes }))
}

/// The runs merged: each trigram with its whole posting list, in increasing trigram order.
pub struct Merge {
    readers: Vec<BufReader<File>>,
    groups: Vec<Option<Group>>,
    /// The next trigram of each run, smallest first; for equal trigrams, the earlier run first.
    heap: BinaryHeap<Reverse<(Trigram, usize)>>,
}

impl Merge {
    pub fn open(paths: &[PathBuf]) -> io::Result<Merge> {
        let mut merge = Merge { readers: Vec::new(), groups: Vec::new(), heap: BinaryHeap::new() };
        for (i, path) in paths.iter().enumerate() {
            let mut reader = BufReader::with_capacity(16 << 10, File::open(path)?);
            let group = read_group(&mut reader)?;
            if let Some(group) = &group {
                merge.heap.push(Reverse((group.tri, i)));
            }
            merge.readers.push(reader);
            merge.groups.push(group);
        }
        Ok(merge)
    }
}

impl Iterator for Merge {
    type Item = io::Result<(Trigram, u32, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        let Reverse((tri, _)) = *self.heap.peek()?;
        let mut writer = PostingWriter::default();
        while let Some(&Reverse((next, i))) = self.heap.peek() {
            if next != tri {
                break;
            }
            self.heap.pop();
            let Some(group) = self.groups[i].take() else { continue };
            let first = get_varint(&group.bytes).map_or(0, |(first, _)| first);
            writer.append(&group.bytes, group.count, first, group.last);
            match read_group(&mut self.readers[i]) {
                Ok(Some(group)) => {
                    self.heap.push(Reverse((group.tri, i)));
                    self.groups[i] = Some(group);
                }
                Ok(None) => {}
                Err(err) => return Some(Err(err)),
            }
        }
        Some(Ok((tri, writer.count, writer.bytes)))
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
        let merged: Vec<(Trigram, Vec<u32>)> =
            Merge::open(&paths).unwrap().map(|item| item.unwrap()).map(|(t, n, b)| (t, decode(&b, n))).collect();
        assert_eq!(merged, [(1, vec![0, 3, 300]), (5, vec![200]), (7, vec![2, 4000])]);
    }
}

//! The index file: every indexed file's path, metadata and state, and for each trigram the sorted
//! list of files containing it, delta- and varint-encoded. It is written once (to a temporary
//! name, mapped and used at once, then made durable and renamed) and read through a memory map, so
//! a query touches only the pages of the trigrams it asks for and the file table.
//!
//! Layout (little-endian): a 72-byte header (magic, version, counts, section offsets), the file
//! records (40 bytes each, sorted by path: path offset and length, size, mtime, inode, state, a
//! flags byte whose bit 0 says the text holds no CR and bit 1 that other files have the same
//! content, and at bytes 36..40 one more than the id of the file whose content this one has, or 0),
//! the path bytes, the trigram table (16 bytes each, sorted by trigram) and the postings. A file
//! with the content of another has no postings of its own: it admits what that file admits.
//!
//! Architecture invariant: a file that is not exactly what this module wrote (other magic or
//! version, inconsistent offsets, a truncated section) is rejected as a whole; every later read is
//! bounds-checked, so a file damaged in other ways yields wrong candidates at worst, never a crash.
//! Architecture invariant: this is the only file of the crate that maps memory (`unsafe`), and it
//! maps only its own files, which nothing else writes.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use super::plan::{Query, Trigram};
use super::{FileMeta, FileState};

const MAGIC: &[u8; 8] = b"FMCPIDX1";
const VERSION: u32 = 3;
const HEADER: usize = 72;
const FILE_RECORD: usize = 40;
const TRI_RECORD: usize = 16;
/// The flag of a file record's byte 33: the file is text without any CR.
const CR_FREE: u8 = 1;
/// The flag of a file record's byte 33: other files have this file's content.
const HAS_COPIES: u8 = 2;

/// One file of a segment being written.
pub struct FileRecord<'a> {
    /// Borrowed from the build's file list (each path is held once).
    pub path: &'a str,
    pub meta: FileMeta,
    pub state: FileState,
    /// Text without any CR.
    pub cr_free: bool,
    /// The id of an earlier-read file with exactly this content (CR-free text only): this file's
    /// trigrams are not posted, that file's stand for them.
    pub same_as: Option<u32>,
}

/// The posting lists of a segment being written, in increasing trigram order.
pub trait Postings {
    /// The next trigram with its id count and its list (encoded as [`PostingWriter`] does), valid
    /// until the next call; `None` after the last.
    fn next_list(&mut self) -> io::Result<Option<(Trigram, u32, &[u8])>>;
}

/// A trigram range's table (records with offsets from the range's first posting) and postings,
/// written by [`write_part`] to two temporary files.
pub struct Part {
    table: PathBuf,
    postings: PathBuf,
    n_tris: u32,
    bytes: u64,
}

impl Drop for Part {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.table);
        let _ = std::fs::remove_file(&self.postings);
    }
}

/// Writes `postings` as part number `n` of the segment at `path`, beside it.
pub fn write_part(path: &Path, n: usize, postings: &mut impl Postings) -> io::Result<Part> {
    let mut part = Part {
        table: path.with_extension(format!("part{n}.table.tmp")),
        postings: path.with_extension(format!("part{n}.postings.tmp")),
        n_tris: 0,
        bytes: 0,
    };
    let written = (|| {
        let mut table = BufWriter::with_capacity(256 << 10, File::create(&part.table)?);
        let mut blob = BufWriter::with_capacity(256 << 10, File::create(&part.postings)?);
        while let Some((tri, count, bytes)) = postings.next_list()? {
            let mut rec = [0u8; TRI_RECORD];
            rec[0..4].copy_from_slice(&tri.to_le_bytes());
            rec[4..8].copy_from_slice(&count.to_le_bytes());
            rec[8..16].copy_from_slice(&part.bytes.to_le_bytes());
            table.write_all(&rec)?;
            blob.write_all(bytes)?;
            part.bytes += bytes.len() as u64;
            part.n_tris += 1;
        }
        table.into_inner().map_err(io::IntoInnerError::into_error)?;
        blob.into_inner().map_err(io::IntoInnerError::into_error)?;
        Ok(())
    })();
    written.map(|()| part)
}

/// A segment written completely under its temporary name: it can be opened there at once, and
/// [`Unsynced::persist`] makes it durable and renames it to its own name (removed if dropped
/// before), so that name only ever holds a segment that survives a crash of the machine.
pub struct Unsynced {
    tmp: PathBuf,
    path: PathBuf,
    file: Option<File>,
}

impl Unsynced {
    /// Where the segment can be opened until it is persisted.
    pub fn tmp_path(&self) -> &Path {
        &self.tmp
    }

    /// Flushes the segment to the disk and renames it into place; a segment mapped from the
    /// temporary name stays valid (the inode is the same).
    pub fn persist(mut self) -> io::Result<()> {
        let synced = self.file.take().map_or(Ok(()), |file| file.sync_all());
        let persisted = synced.and_then(|()| std::fs::rename(&self.tmp, &self.path));
        if persisted.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        persisted
    }
}

impl Drop for Unsynced {
    fn drop(&mut self) {
        if self.file.is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Builds made by this process so far (a part of every temporary name, with the process id).
static BUILDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A name beside `path` that no other build uses (`<stem>-<pid>-<n>.<extension>`): the temporary
/// files of a build are named after it, so servers sharing a storage root never truncate, rename
/// or remove each other's (a truncated file under a map would fault).
pub fn scratch_name(path: &Path) -> PathBuf {
    let n = BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let stem = path.file_stem().map_or_else(Default::default, |stem| stem.to_string_lossy().into_owned());
    path.with_file_name(format!("{stem}-{}-{n}.idx", std::process::id()))
}

/// Removes the temporary files that builds of processes no longer running left beside `path`
/// (Linux: a process is running while `/proc/<pid>` exists).
pub fn remove_abandoned(path: &Path) {
    let (Some(dir), Some(stem)) = (path.parent(), path.file_stem().and_then(|stem| stem.to_str())) else { return };
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(pid) = name.strip_prefix(stem).and_then(|rest| rest.strip_prefix('-')) else { continue };
        let Some((pid, _)) = pid.split_once('-') else { continue };
        let alive = pid
            .parse::<u32>()
            .is_ok_and(|pid| pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists());
        if name.ends_with(".tmp") && !alive {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Writes the segment that will be `path` under a temporary name derived from `scratch` (see
/// [`scratch_name`]) from `parts` in increasing trigram order.
pub fn write(
    path: &Path,
    scratch: &Path,
    built_at_ns: i64,
    files: &[FileRecord<'_>],
    parts: &[Part],
) -> io::Result<Unsynced> {
    let tmp = scratch.with_extension("tmp");
    let mut out = BufWriter::with_capacity(256 << 10, File::create(&tmp)?);
    let files_off = HEADER as u64;
    let paths_off = files_off + (files.len() * FILE_RECORD) as u64;
    out.write_all(&[0; HEADER])?;
    let mut has_copies = vec![false; files.len()];
    for same_as in files.iter().filter_map(|file| file.same_as) {
        if let Some(flag) = has_copies.get_mut(same_as as usize) {
            *flag = true;
        }
    }
    let mut path_at = 0u64;
    for (file, has_copies) in files.iter().zip(has_copies) {
        let mut rec = [0u8; FILE_RECORD];
        rec[0..4].copy_from_slice(&u32::try_from(path_at).map_err(io::Error::other)?.to_le_bytes());
        rec[4..8].copy_from_slice(&(file.path.len() as u32).to_le_bytes());
        rec[8..16].copy_from_slice(&file.meta.size.to_le_bytes());
        rec[16..24].copy_from_slice(&file.meta.mtime_ns.to_le_bytes());
        rec[24..32].copy_from_slice(&file.meta.ino.to_le_bytes());
        rec[32] = file.state as u8;
        rec[33] = (u8::from(file.cr_free) * CR_FREE) | (u8::from(has_copies) * HAS_COPIES);
        rec[36..40].copy_from_slice(&file.same_as.map_or(0, |id| id + 1).to_le_bytes());
        out.write_all(&rec)?;
        path_at += file.path.len() as u64;
    }
    for file in files {
        out.write_all(file.path.as_bytes())?;
    }
    let tris_off = paths_off + path_at;
    let (mut n_tris, mut blob_at) = (0u32, 0u64);
    for part in parts {
        let mut table = io::BufReader::with_capacity(256 << 10, File::open(&part.table)?);
        let mut rec = [0u8; TRI_RECORD];
        for _ in 0..part.n_tris {
            table.read_exact(&mut rec)?;
            let at = u64_at(&rec, 8) + blob_at;
            rec[8..16].copy_from_slice(&at.to_le_bytes());
            out.write_all(&rec)?;
        }
        n_tris = n_tris.checked_add(part.n_tris).ok_or_else(|| io::Error::other("too many trigrams"))?;
        blob_at += part.bytes;
    }
    let postings_off = tris_off + u64::from(n_tris) * TRI_RECORD as u64;
    for part in parts {
        io::copy(&mut File::open(&part.postings)?, &mut out)?;
    }
    let end = postings_off + blob_at;
    let mut header = [0u8; HEADER];
    header[0..8].copy_from_slice(MAGIC);
    header[8..12].copy_from_slice(&VERSION.to_le_bytes());
    header[12..16].copy_from_slice(&(files.len() as u32).to_le_bytes());
    header[16..20].copy_from_slice(&n_tris.to_le_bytes());
    header[24..32].copy_from_slice(&built_at_ns.to_le_bytes());
    for (i, off) in [files_off, paths_off, tris_off, postings_off, end].iter().enumerate() {
        header[32 + 8 * i..40 + 8 * i].copy_from_slice(&off.to_le_bytes());
    }
    let mut file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(&header)?;
    Ok(Unsynced { tmp, path: path.to_owned(), file: Some(file) })
}

/// Appends sorted file ids to one trigram's posting list.
#[derive(Default)]
pub struct PostingWriter {
    pub bytes: Vec<u8>,
    pub count: u32,
    last: Option<u32>,
}

impl PostingWriter {
    pub fn push(&mut self, id: u32) {
        let gap = match self.last {
            Some(last) => id - last,
            None => id,
        };
        put_varint(&mut self.bytes, gap);
        self.last = Some(id);
        self.count += 1;
    }

    /// Empties the list, keeping its allocation.
    pub fn reset(&mut self) {
        self.bytes.clear();
        self.count = 0;
        self.last = None;
    }

    /// The last id pushed.
    pub fn last_id(&self) -> u32 {
        self.last.unwrap_or(0)
    }

    /// Appends another list whose ids all follow this one's (`other_last` is its last id).
    pub fn append(&mut self, other: &[u8], count: u32, first: u32, other_last: u32) {
        let (_, first_len) = get_varint(other).unwrap_or((0, other.len()));
        self.push(first);
        self.bytes.extend_from_slice(&other[first_len..]);
        self.count += count - 1;
        self.last = Some(other_last);
    }
}

fn put_varint(out: &mut Vec<u8>, mut n: u32) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

pub fn get_varint(bytes: &[u8]) -> Option<(u32, usize)> {
    let mut n = 0u32;
    for (i, byte) in bytes.iter().enumerate().take(5) {
        n |= u32::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((n, i + 1));
        }
    }
    None
}

/// A mapped segment.
pub struct Segment {
    map: Mmap,
    n_files: usize,
    n_tris: usize,
    pub built_at_ns: i64,
    files_off: usize,
    paths_off: usize,
    tris_off: usize,
    postings_off: usize,
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    bytes.get(at..at + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    bytes.get(at..at + 8).map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
}

impl Segment {
    /// Maps and checks the segment at `path`.
    pub fn open(path: &Path) -> io::Result<Segment> {
        let file = File::open(path)?;
        #[expect(unsafe_code, reason = "the map of an index file only this module writes, never changed in place")]
        // SAFETY: segments are written under a temporary name and renamed into place, never
        // modified afterwards; a replaced segment keeps its inode (and this map) alive.
        let map = unsafe { Mmap::map(&file)? };
        let bad = || io::Error::new(io::ErrorKind::InvalidData, "not a valid search index file");
        if map.len() < HEADER || &map[0..8] != MAGIC || u32_at(&map, 8) != VERSION {
            return Err(bad());
        }
        let n_files = u32_at(&map, 12) as usize;
        let n_tris = u32_at(&map, 16) as usize;
        let off = |i: usize| usize::try_from(u64_at(&map, 32 + 8 * i)).unwrap_or(usize::MAX);
        let (files_off, paths_off, tris_off, postings_off, end) = (off(0), off(1), off(2), off(3), off(4));
        let consistent = files_off == HEADER
            && paths_off == files_off + n_files * FILE_RECORD
            && tris_off >= paths_off
            && postings_off == tris_off + n_tris * TRI_RECORD
            && end == map.len()
            && postings_off <= end;
        if !consistent {
            return Err(bad());
        }
        let built_at_ns = i64::from_le_bytes(map[24..32].try_into().map_err(|_| bad())?);
        Ok(Segment { map, n_files, n_tris, built_at_ns, files_off, paths_off, tris_off, postings_off })
    }

    pub fn len(&self) -> usize {
        self.n_files
    }

    /// Drops the mapped pages from this process's memory (they stay in the page cache).
    pub fn release_pages(&self) {
        #[cfg(unix)]
        #[expect(unsafe_code, reason = "dropping the pages of a shared, read-only file map")]
        // SAFETY: the map is shared and read-only, of a file never changed in place: dropped pages
        // are read back from the file, unchanged, when next touched.
        unsafe {
            let _ = self.map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed);
        }
    }

    fn record(&self, id: usize) -> &[u8] {
        let at = self.files_off + id * FILE_RECORD;
        &self.map[at..at + FILE_RECORD]
    }

    /// The path of file `id` (relative to the indexed root, `/`-separated).
    pub fn path(&self, id: usize) -> &str {
        let rec = self.record(id);
        let (at, len) = (u32_at(rec, 0) as usize, u32_at(rec, 4) as usize);
        let start = self.paths_off.saturating_add(at);
        let bytes = self.map.get(start..start.saturating_add(len).min(self.tris_off)).unwrap_or_default();
        std::str::from_utf8(bytes).unwrap_or_default()
    }

    pub fn meta(&self, id: usize) -> FileMeta {
        let rec = self.record(id);
        FileMeta { size: u64_at(rec, 8), mtime_ns: u64_at(rec, 16) as i64, ino: u64_at(rec, 24) }
    }

    pub fn state(&self, id: usize) -> FileState {
        FileState::from_u8(self.record(id)[32])
    }

    /// File `id` is text without any CR (files of indexes written before this flag read as `false`).
    pub fn cr_free(&self, id: usize) -> bool {
        self.record(id)[33] & CR_FREE != 0
    }

    /// The id shared by the files with file `id`'s content (the one whose trigrams are posted), when
    /// other files have it.
    pub fn same_content(&self, id: usize) -> Option<usize> {
        let rec = self.record(id);
        match (u32_at(rec, 36) as usize).checked_sub(1) {
            Some(first) if first < self.n_files => Some(first),
            _ => (rec[33] & HAS_COPIES != 0).then_some(id),
        }
    }

    /// The first file id whose path is not less than `path`.
    pub fn lower_bound(&self, path: &str) -> usize {
        let (mut lo, mut hi) = (0, self.n_files);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.path(mid) < path {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The file ids that may match `query`, as a bitset (`None`: every file).
    pub fn candidates(&self, query: &Query) -> Option<Vec<u64>> {
        match query {
            Query::All => None,
            Query::Trigram(tri) => Some(self.posting_set(*tri)),
            Query::And(parts) => {
                let mut acc: Option<Vec<u64>> = None;
                for part in parts {
                    if let Some(set) = self.candidates(part) {
                        acc = Some(match acc {
                            None => set,
                            Some(mut acc) => {
                                acc.iter_mut().zip(&set).for_each(|(a, b)| *a &= b);
                                acc
                            }
                        });
                    }
                }
                acc
            }
            Query::Or(parts) => {
                let mut acc = vec![0u64; self.n_files.div_ceil(64)];
                for part in parts {
                    let set = self.candidates(part)?;
                    acc.iter_mut().zip(&set).for_each(|(a, b)| *a |= b);
                }
                Some(acc)
            }
        }
    }

    fn posting_set(&self, tri: Trigram) -> Vec<u64> {
        let mut set = vec![0u64; self.n_files.div_ceil(64)];
        let (mut lo, mut hi) = (0, self.n_tris);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let at = self.tris_off + mid * TRI_RECORD;
            match u32_at(&self.map, at).cmp(&tri) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    let count = u32_at(&self.map, at + 4);
                    let start = self.postings_off.saturating_add(u64_at(&self.map, at + 8) as usize);
                    let mut bytes = self.map.get(start..).unwrap_or_default();
                    let mut id = 0u32;
                    for i in 0..count {
                        let Some((gap, used)) = get_varint(bytes) else { break };
                        id = if i == 0 { gap } else { id.saturating_add(gap) };
                        if let Some(word) = set.get_mut(id as usize / 64) {
                            *word |= 1 << (id % 64);
                        }
                        bytes = &bytes[used..];
                    }
                    break;
                }
            }
        }
        set
    }

    /// Bytes of the mapped file.
    pub fn size(&self) -> usize {
        self.map.len()
    }
}

/// Whether bit `id` is set.
pub fn has(set: &[u64], id: usize) -> bool {
    set.get(id / 64).is_some_and(|word| word & (1 << (id % 64)) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_name_their_files_apart_and_abandoned_ones_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("project.idx");
        let (first, second) = (scratch_name(&index), scratch_name(&index));
        assert_ne!(first, second);
        let ours = first.with_extension("run0-0.tmp");
        // Process ids never exceed 2^22 on Linux: this one is not running.
        let abandoned = dir.path().join("project-999999999-0.part0.table.tmp");
        let kept = [ours.clone(), index.clone(), dir.path().join("project-notes.txt"), dir.path().join("other.tmp")];
        for path in kept.iter().chain([&abandoned]) {
            std::fs::write(path, b"x").unwrap();
        }
        remove_abandoned(&index);
        assert!(!abandoned.exists());
        assert!(kept.iter().all(|path| path.exists()), "{kept:?}");
        assert!(ours.file_name().unwrap().to_str().unwrap().starts_with(&format!("project-{}-", std::process::id())));
    }
}

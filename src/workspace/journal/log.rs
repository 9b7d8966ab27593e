//! The journal's one append-only file, `journal-2.log`: a sequence of frames (a header, blobs,
//! changes, checkpoints), each `0xF7`, its type, its length (u32), its payload and a checksum
//! (u64) of the payload. One change is one `write` of its new blobs and its record, then
//! `fdatasync`, so a change is either wholly in the file or, after a crash mid-write, a torn tail
//! that the next writer cuts off.
//!
//! A change's payload is its id (u64), whether it is compressed alone (0) or with the previous
//! change's JSON as dictionary (1), and its JSON, LZ4-compressed. Consecutive changes share most of
//! their text (a file's hash before is the previous after), so with the dictionary a small edit
//! costs about its edited bytes; at most `KEY_EVERY` changes follow each one compressed alone, so
//! any change is read by decoding at most that many (the history reads only the newest changes,
//! never the whole log). A scan reads the ids and checks every frame's checksum without
//! decompressing anything.
//!
//! The header records the format (2). A format 1 log (SHA-256 hashes, every change compressed
//! against the previous one) is converted once by `migrate.rs`.
//!
//! Servers sharing a storage root serialize on an exclusive lock of the `lock` file beside it
//! (`flock` on Unix; `LockFileEx` through std on Windows), held while a server reads what others
//! appended, hands out an id and appends; compaction writes a new file and renames it over the old
//! one, which the others notice by its identity and read again.
//!
//! Architecture invariant: frames are only appended under the lock, and a frame is never changed
//! once written.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use super::blob::{self, BlobHead};
use super::model::{Change, Checkpoint, Header};

pub const MAGIC: u8 = 0xF7;
pub const FRAME_HEAD: u64 = 6;
pub const FRAME_TAIL: u64 = 8;

/// The on-disk format this code writes.
pub const FORMAT: u32 = 2;

/// At most this many changes follow one compressed without a dictionary.
pub const KEY_EVERY: u32 = 32;

/// The bytes before a change's LZ4 block: its id and whether it has a dictionary.
const CHANGE_HEAD: usize = 9;

/// The kinds of frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Header = b'H',
    Blob = b'B',
    Change = b'C',
    Checkpoint = b'K',
    /// A change whose mutation failed after the journal took it (its id, u64): not a change.
    Void = b'V',
}

/// One frame as a scan reads it.
#[derive(Debug)]
pub enum Frame {
    Header(Header),
    /// A blob's head, where its payload starts and how long it is.
    Blob {
        head: BlobHead,
        offset: u64,
        len: u64,
    },
    /// A change's id and where its payload is (decoded on demand, `decode_change`).
    Change {
        id: u64,
        offset: u64,
        len: u64,
        /// Compressed with the previous change's JSON as dictionary.
        chained: bool,
    },
    Checkpoint(Checkpoint),
    Void(u64),
}

/// Appends one frame to `out`.
pub fn frame(kind: Kind, payload: &[u8], out: &mut Vec<u8>) {
    out.push(MAGIC);
    out.push(kind as u8);
    out.extend_from_slice(&u32::try_from(payload.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(payload);
    out.extend_from_slice(&blob::checksum(payload).to_le_bytes());
}

/// A JSON record as one frame.
pub fn json_frame(kind: Kind, value: &impl serde::Serialize, out: &mut Vec<u8>) {
    let payload = serde_json::to_vec(value).expect("journal records serialize");
    frame(kind, &payload, out);
}

/// A change as one frame, compressed against `previous` (the JSON of the change before it) when
/// given, else alone. Returns the change's JSON.
pub fn change_frame(change: &Change, previous: Option<&[u8]>, out: &mut Vec<u8>) -> Vec<u8> {
    let json = serde_json::to_vec(change).expect("journal records serialize");
    let mut payload = Vec::with_capacity(CHANGE_HEAD + 8 + json.len() / 2);
    payload.extend_from_slice(&change.id.to_le_bytes());
    payload.push(u8::from(previous.is_some()));
    match previous {
        Some(dict) => payload.extend_from_slice(&lz4_flex::block::compress_prepend_size_with_dict(&json, dict)),
        None => payload.extend_from_slice(&lz4_flex::block::compress_prepend_size(&json)),
    }
    frame(Kind::Change, &payload, out);
    json
}

/// How the next change frame is compressed: against the previous change's JSON when it is known
/// and fewer than `KEY_EVERY - 1` changes were chained in a row, else alone.
#[derive(Debug, Default)]
pub struct Chain {
    /// The JSON of the last change (`None`: not known, such as another server's).
    pub previous: Option<Vec<u8>>,
    /// Changes compressed with a dictionary since the last one compressed alone.
    run: u32,
}

impl Chain {
    fn dictionary(&self) -> Option<&[u8]> {
        self.previous.as_deref().filter(|_| self.run + 1 < KEY_EVERY)
    }

    /// A change frame for `change` as the next one; the chain itself moves on when the frame is
    /// read back (`saw`). Returns the change's JSON.
    pub fn frame(&self, change: &Change, out: &mut Vec<u8>) -> Vec<u8> {
        change_frame(change, self.dictionary(), out)
    }

    /// Writes `change` as the next frame and moves on.
    pub fn write(&mut self, change: &Change, out: &mut Vec<u8>) {
        let chained = self.dictionary().is_some();
        let json = self.frame(change, out);
        self.saw(chained);
        self.previous = Some(json);
    }

    /// A change frame was read (its JSON is not known yet).
    pub fn saw(&mut self, chained: bool) {
        self.run = if chained { self.run + 1 } else { 0 };
        self.previous = None;
    }
}

/// The JSON of a change frame's payload, given the JSON of the change before it for a chained one.
pub fn change_json(payload: &[u8], previous: Option<&[u8]>) -> Option<Vec<u8>> {
    let block = payload.get(CHANGE_HEAD..)?;
    match (payload[CHANGE_HEAD - 1], previous) {
        (0, _) => lz4_flex::block::decompress_size_prepended(block).ok(),
        (1, Some(dict)) => lz4_flex::block::decompress_size_prepended_with_dict(block, dict).ok(),
        _ => None,
    }
}

/// The offset of a frame's payload, given where the frame starts.
pub fn payload_offset(frame_start: u64) -> u64 {
    frame_start + FRAME_HEAD
}

/// The whole length of a frame with a payload of `len` bytes.
pub fn frame_len(len: u64) -> u64 {
    FRAME_HEAD + len + FRAME_TAIL
}

/// The journal directory's files.
pub struct Files {
    pub dir: PathBuf,
    /// Whether this process made the directory private already (once, on first use).
    pub private: std::sync::atomic::AtomicBool,
}

impl Files {
    /// The log (format 2; a new name, so that a server of an older version on the same storage
    /// root never reads it as a damaged format 1 log and cuts it).
    pub fn log(&self) -> PathBuf {
        self.dir.join("journal-2.log")
    }

    /// A format 1 log, converted on first use (`migrate.rs`).
    pub fn format_1_log(&self) -> PathBuf {
        self.dir.join("journal.log")
    }

    fn lock_path(&self) -> PathBuf {
        self.dir.join("lock")
    }

    /// Creates the directory (private to the user) if needed and takes the exclusive lock. The
    /// directory is made private on first use and again whenever it had gone.
    pub fn lock(&self) -> std::io::Result<LockGuard> {
        use std::sync::atomic::Ordering;
        let open = || File::options().read(true).write(true).create(true).truncate(false).open(self.lock_path());
        let file = match self.private.load(Ordering::Acquire) {
            true => match open() {
                Ok(file) => file,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    super::private::create_private_dir(&self.dir)?;
                    open()?
                }
                Err(err) => return Err(err),
            },
            false => {
                super::private::create_private_dir(&self.dir)?;
                self.private.store(true, Ordering::Release);
                open()?
            }
        };
        lock_exclusive(&file)?;
        Ok(LockGuard { _file: file })
    }

    /// Opens the log for reading and appending, creating it with a header when it is missing.
    pub fn open_log(&self) -> std::io::Result<File> {
        let path = self.log();
        let mut file = File::options().read(true).append(true).create(true).open(&path)?;
        if file.metadata()?.len() == 0 {
            let mut bytes = Vec::new();
            json_frame(Kind::Header, &Header::new(1, 1), &mut bytes);
            file.write_all(&bytes)?;
            file.sync_data()?;
        }
        Ok(file)
    }
}

/// Holds the journal's lock until dropped (closing the file releases it).
pub struct LockGuard {
    _file: File,
}

#[cfg(unix)]
fn lock_exclusive(file: &File) -> std::io::Result<()> {
    Ok(rustix::fs::flock(file, rustix::fs::FlockOperation::LockExclusive)?)
}

#[cfg(windows)]
#[allow(clippy::incompatible_msrv, reason = "Windows builds use a toolchain with File::lock (1.89)")]
fn lock_exclusive(file: &File) -> std::io::Result<()> {
    file.lock().map_err(std::io::Error::other)
}

/// Whether `a` and `b` are the same file (the log was not replaced by a compaction).
pub fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        a.dev() == b.dev() && a.ino() == b.ino()
    }
    #[cfg(not(unix))]
    {
        // No stable identity: a compaction leaves a shorter file.
        b.len() >= a.len()
    }
}

/// Reads the frames of `file` from `from` to its end, handing each to `visit`; returns where the
/// last whole frame ends (a torn or damaged tail is not visited). Only a format 2 log is read (a
/// format 1 header ends the scan).
pub fn scan(file: &File, from: u64, mut visit: impl FnMut(Frame)) -> std::io::Result<u64> {
    let end = file.metadata()?.len();
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    reader.seek(SeekFrom::Start(from))?;
    let mut at = from;
    while at + FRAME_HEAD + FRAME_TAIL <= end {
        let mut head = [0u8; FRAME_HEAD as usize];
        reader.read_exact(&mut head)?;
        let len = u64::from(u32::from_le_bytes(head[2..6].try_into().expect("4 bytes")));
        if head[0] != MAGIC || at + frame_len(len) > end {
            break;
        }
        let frame = if head[1] == Kind::Blob as u8 {
            let mut start = vec![0u8; (len as usize).min(blob::HEAD_LEN)];
            reader.read_exact(&mut start)?;
            reader.seek_relative((len - start.len() as u64 + FRAME_TAIL) as i64)?;
            blob::parse_head(&start).map(|head| Frame::Blob { head, offset: payload_offset(at), len })
        } else {
            let mut payload = vec![0u8; len as usize];
            reader.read_exact(&mut payload)?;
            let mut sum = [0u8; 8];
            reader.read_exact(&mut sum)?;
            if u64::from_le_bytes(sum) != blob::checksum(&payload) {
                break;
            }
            match head[1] {
                b'H' => serde_json::from_slice(&payload).ok().map(Frame::Header),
                b'C' if payload.len() > CHANGE_HEAD && payload[CHANGE_HEAD - 1] <= 1 => Some(Frame::Change {
                    id: u64::from_le_bytes(payload[..8].try_into().expect("8 bytes")),
                    offset: payload_offset(at),
                    len,
                    chained: payload[CHANGE_HEAD - 1] == 1,
                }),
                b'K' => serde_json::from_slice(&payload).ok().map(Frame::Checkpoint),
                b'V' => payload.as_slice().try_into().ok().map(|id| Frame::Void(u64::from_le_bytes(id))),
                _ => None,
            }
        };
        let Some(frame) = frame else { break };
        visit(frame);
        at += frame_len(len);
    }
    Ok(at)
}

/// Reads a payload and checks its checksum.
pub fn read_payload(file: &File, offset: u64, len: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = vec![0u8; (len + FRAME_TAIL) as usize];
    read_at(file, offset, &mut bytes)?;
    let sum = u64::from_le_bytes(bytes[len as usize..].try_into().expect("8 bytes"));
    bytes.truncate(len as usize);
    if sum != blob::checksum(&bytes) {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "a journal record is damaged"));
    }
    Ok(bytes)
}

fn read_at(file: &File, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let mut done = 0;
        while done < buf.len() {
            let n = std::os::windows::fs::FileExt::seek_read(file, &mut buf[done..], offset + done as u64)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            done += n;
        }
        Ok(())
    }
}

/// Appends `bytes` (whole frames) and makes them durable; returns the offset they start at.
pub fn append(file: &mut File, bytes: &[u8]) -> std::io::Result<u64> {
    let start = file.metadata()?.len();
    file.write_all(bytes)?;
    file.sync_data()?;
    Ok(start)
}

/// Cuts a torn tail off (with the lock held).
pub fn truncate(file: &File, len: u64) -> std::io::Result<()> {
    file.set_len(len)?;
    file.sync_data()
}

/// Writes `bytes` as the new log (a sibling file, synced, renamed over the old one).
pub fn replace(files: &Files, bytes: &[u8]) -> std::io::Result<()> {
    let temp = files.dir.join("journal-2.log.new");
    let mut file = File::create(&temp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&temp, files.log())?;
    #[cfg(unix)]
    File::open(&files.dir)?.sync_all()?;
    Ok(())
}

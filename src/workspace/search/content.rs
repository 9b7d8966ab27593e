//! Reading a searched file: whole or in chunks, dropping files with NUL bytes or invalid UTF-8.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

use super::{BOM, CHUNK_SIZE, Content, IndexedText};

/// Reads a whole file into `buf` (replacing its contents, keeping its allocation), stopping early at
/// the first NUL byte or invalid UTF-8.
pub(super) fn read_whole(file: &mut File, size_hint: u64, buf: &mut Vec<u8>) -> io::Result<Content> {
    buf.clear();
    buf.reserve(usize::try_from(size_hint).unwrap_or(0).saturating_add(1));
    let (mut checked, mut has_cr) = (0, false);
    loop {
        let n_read = file.by_ref().take(CHUNK_SIZE as u64).read_to_end(buf)?;
        match check_text(&buf[checked..], &mut has_cr) {
            Checked::Valid(n_valid) => checked += n_valid,
            Checked::Invalid(content) => return Ok(content),
        }
        // `Take` stops short of its limit only at the end of the file.
        if n_read < CHUNK_SIZE {
            break;
        }
    }
    // A multi-byte sequence cut off by the end of the file.
    Ok(if checked == buf.len() { Content::Text { has_cr } } else { Content::NotUtf8 })
}

/// Reads a file the search index holds as text of `indexed.size` bytes whole into `buf` (room for
/// exactly that many), from its start whatever its position (a descriptor the index kept is read
/// again), without checking it again (the index checked it, and the notifications say it has not
/// changed since; a CR is looked for only if it held one); `None` when it has grown past `limit`
/// since (the file is rewound, to be read as any other).
pub(super) fn read_indexed_text(
    file: &File,
    indexed: IndexedText<'_>,
    limit: u64,
    buf: &mut Vec<u8>,
) -> io::Result<Option<Content>> {
    buf.clear();
    buf.reserve_exact(usize::try_from(indexed.size.min(limit)).unwrap_or(0).saturating_add(1));
    read_from_start(file, limit, buf)?;
    if buf.len() as u64 > limit {
        let mut file = file;
        file.rewind()?;
        return Ok(None);
    }
    Ok(Some(Content::Text { has_cr: !indexed.cr_free && memchr::memchr(b'\r', buf).is_some() }))
}

/// Appends the file's bytes from offset 0 to `buf` until its end or past `limit`, with positioned
/// reads (no seek, and no lock on the file position shared by the process's threads).
#[cfg(unix)]
fn read_from_start(file: &File, limit: u64, buf: &mut Vec<u8>) -> io::Result<()> {
    let mut at = 0u64;
    loop {
        if buf.len() == buf.capacity() {
            buf.reserve(CHUNK_SIZE);
        }
        let room = buf.capacity() - buf.len();
        let n = match rustix::io::pread(file, rustix::buffer::spare_capacity(buf), at) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(err) => return Err(err.into()),
        };
        at += n as u64;
        // A regular file's read is short only at its end.
        if n < room || at > limit {
            return Ok(());
        }
    }
}

#[cfg(not(unix))]
fn read_from_start(file: &File, limit: u64, buf: &mut Vec<u8>) -> io::Result<()> {
    let mut file = file;
    file.rewind()?;
    file.take(limit.saturating_add(1)).read_to_end(buf).map(drop)
}

/// Reads a file in parts of at most `part_len` bytes through `buf`, checking for NUL bytes and
/// invalid UTF-8 as [`read_whole`] does, and gives each part's text to `on_text` in order, lone CRs
/// turned into LF (a CR that ends a part waits for the byte after it). On `Binary` or `NotUtf8`,
/// the parts given before are not the file's text.
pub(super) fn stream_text(
    file: &mut File,
    part_len: usize,
    buf: &mut Vec<u8>,
    on_text: &mut dyn FnMut(&mut [u8]),
) -> io::Result<Content> {
    // At most three bytes of a cut multi-byte sequence, or one CR, wait in front of the next part.
    if buf.len() < part_len + 3 {
        buf.resize(part_len + 3, 0);
    }
    let (mut carried, mut has_cr) = (0, false);
    loop {
        let n_read = read_full(file, &mut buf[carried..carried + part_len])?;
        let (end, at_end) = (carried + n_read, n_read < part_len);
        let mut ready = match check_text(&buf[..end], &mut has_cr) {
            Checked::Valid(n_valid) if !at_end || n_valid == end => n_valid,
            Checked::Valid(_) => return Ok(Content::NotUtf8),
            Checked::Invalid(content) => return Ok(content),
        };
        if !at_end && ready == end && buf[..ready].last() == Some(&b'\r') {
            ready -= 1;
        }
        if has_cr {
            crate::text::replace_lone_cr(&mut buf[..ready]);
        }
        on_text(&mut buf[..ready]);
        if at_end {
            return Ok(Content::Text { has_cr });
        }
        buf.copy_within(ready..end, 0);
        carried = end - ready;
    }
}

/// Reads until `out` is full or the file ends; the bytes read.
fn read_full(file: &mut File, out: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < out.len() {
        match file.read(&mut out[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(n)
}

/// Reads a file chunk by chunk through `buf`, checking for NUL bytes and invalid UTF-8.
pub(super) fn check_streamed(file: &mut File, buf: &mut Vec<u8>) -> io::Result<Content> {
    buf.clear();
    buf.resize(CHUNK_SIZE, 0);
    // Bytes at the front of `buf` that start a multi-byte sequence continued in the next chunk.
    let (mut carried, mut has_cr) = (0, false);
    loop {
        let n_read = file.read(&mut buf[carried..])?;
        if n_read == 0 {
            return Ok(if carried == 0 { Content::Text { has_cr } } else { Content::NotUtf8 });
        }
        let end = carried + n_read;
        match check_text(&buf[..end], &mut has_cr) {
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

/// Checks `bytes` for NUL and UTF-8, and sets `has_cr` when they hold a CR: one pass finds both
/// (text without CR pays nothing more for line endings).
fn check_text(bytes: &[u8], has_cr: &mut bool) -> Checked {
    let nul = match *has_cr {
        true => memchr::memchr(0, bytes),
        false => match memchr::memchr2(0, b'\r', bytes) {
            Some(at) if bytes[at] == b'\r' => {
                *has_cr = true;
                memchr::memchr(0, &bytes[at..])
            }
            found => found,
        },
    };
    if nul.is_some() {
        return Checked::Invalid(Content::Binary);
    }
    match std::str::from_utf8(bytes) {
        Ok(_) => Checked::Valid(bytes.len()),
        Err(err) if err.error_len().is_none() => Checked::Valid(err.valid_up_to()),
        Err(_) => Checked::Invalid(Content::NotUtf8),
    }
}

/// Rewinds a streamed file to the start of its text: past a byte-order mark when it has one.
pub(super) fn skip_bom(file: &mut File) -> io::Result<()> {
    file.rewind()?;
    let mut head = [0; 3];
    let n = file.read(&mut head)?;
    if head[..n] != *BOM {
        file.seek(SeekFrom::Start(0))?;
    }
    Ok(())
}

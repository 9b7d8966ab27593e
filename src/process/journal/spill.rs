//! The spill file's block format (a 29-byte header per entry: stream, elapsed nanoseconds, start
//! and end line, text length; then the UTF-8 text) and positioned reads and writes of it.
//!
//! Architecture invariant: a block that does not decode exactly is an error, never a partial read.

use std::fs::File;
use std::io;
use std::time::Duration;

use super::{Entry, HEADER_BYTES, Stream};

pub(super) fn serialize(entry: &Entry, buf: &mut Vec<u8>) {
    buf.push(entry.stream.index() as u8);
    let nanos = u64::try_from(entry.elapsed.as_nanos()).unwrap_or(u64::MAX);
    buf.extend_from_slice(&nanos.to_le_bytes());
    buf.extend_from_slice(&entry.start_line.to_le_bytes());
    buf.extend_from_slice(&entry.end_line.to_le_bytes());
    let len = u32::try_from(entry.text.len()).expect("chunks are at most one pipe read or stdin write");
    buf.extend_from_slice(&len.to_le_bytes());
    buf.extend_from_slice(entry.text.as_bytes());
}

pub(super) fn deserialize(mut bytes: &[u8]) -> io::Result<Vec<Entry>> {
    let corrupt = || io::Error::new(io::ErrorKind::InvalidData, "corrupt process transcript block");
    let mut res = Vec::new();
    while !bytes.is_empty() {
        if bytes.len() < HEADER_BYTES {
            return Err(corrupt());
        }
        let (header, rest) = bytes.split_at(HEADER_BYTES);
        let stream = Stream::from_byte(header[0]).ok_or_else(corrupt)?;
        let word = |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().expect("8-byte field"));
        let len = u32::from_le_bytes(header[25..29].try_into().expect("4-byte field")) as usize;
        if rest.len() < len {
            return Err(corrupt());
        }
        let (text, rest) = rest.split_at(len);
        let text = String::from_utf8(text.to_vec()).map_err(|_| corrupt())?;
        res.push(Entry {
            elapsed: Duration::from_nanos(word(1)),
            stream,
            text,
            start_line: word(9),
            end_line: word(17),
        });
        bytes = rest;
    }
    Ok(res)
}

#[cfg(unix)]
pub(super) fn write_at(file: &File, bytes: &[u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, offset)
}

#[cfg(unix)]
pub(super) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
pub(super) fn write_at(file: &File, mut bytes: &[u8], mut offset: u64) -> io::Result<()> {
    while !bytes.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_write(file, bytes, offset)?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        bytes = &bytes[n..];
        offset += n as u64;
    }
    Ok(())
}

#[cfg(windows)]
pub(super) fn read_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_read(file, buf, offset)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf = &mut buf[n..];
        offset += n as u64;
    }
    Ok(())
}

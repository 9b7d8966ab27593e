//! File contents as the journal stores them: addressed by XXH3-128, compressed with LZ4, and, when
//! a content shares most of its bytes with an earlier one (an edit of the same file), stored as a
//! delta: the length of the common prefix and suffix and the compressed bytes between them.
//!
//! Blob payload: the 16-byte hash, an encoding byte, for a delta the 16-byte hash of its base and
//! the prefix and suffix lengths (u64, little endian), then the LZ4 block (size prepended). A delta
//! written now (`NEAR`) compresses its middle with the base's bytes around the changed region as
//! LZ4 dictionary (an edit mostly moves or repeats nearby text); `DELTA` (no dictionary) is what
//! format 1 wrote, kept by the conversion. (Format 1 journals used SHA-256 and 32-byte hashes;
//! `migrate.rs` converts them.)
//!
//! Architecture invariant: a decoded blob is checked against its hash before it is used, so a
//! damaged journal restores nothing rather than wrong bytes.

/// A content hash: XXH3-128, little endian.
pub type Digest = [u8; 16];

const FULL: u8 = 0;
const DELTA: u8 = 1;
const NEAR: u8 = 2;

/// How much of the base on each side of the changed region a `NEAR` delta's dictionary takes
/// (LZ4 reaches 64 KiB back).
const NEAR_SIDE: usize = 24 * 1024;
const HASH: usize = 16;
const HEAD: usize = HASH + 1;
const DELTA_HEAD: usize = HEAD + HASH + 16;

pub fn digest(bytes: &[u8]) -> Digest {
    xxhash_rust::xxh3::xxh3_128(bytes).to_le_bytes()
}

pub fn to_hex(digest: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut res = String::with_capacity(digest.len() * 2);
    for byte in digest {
        res.push(char::from(HEX[usize::from(byte >> 4)]));
        res.push(char::from(HEX[usize::from(byte & 15)]));
    }
    res
}

pub fn from_hex(hex: &str) -> Option<Digest> {
    if hex.len() != 2 * HASH {
        return None;
    }
    let mut res = [0u8; HASH];
    for (i, byte) in res.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(res)
}

/// What the start of a payload says: its hash and, for a delta, its base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobHead {
    pub hash: Digest,
    pub base: Option<Digest>,
}

/// The bytes of a payload's head that `parse_head` needs.
pub const HEAD_LEN: usize = DELTA_HEAD;

pub fn parse_head(payload: &[u8]) -> Option<BlobHead> {
    let hash: Digest = payload.get(..HASH)?.try_into().ok()?;
    match *payload.get(HASH)? {
        FULL => Some(BlobHead { hash, base: None }),
        DELTA | NEAR => Some(BlobHead { hash, base: Some(payload.get(HEAD..HEAD + HASH)?.try_into().ok()?) }),
        _ => None,
    }
}

/// The common prefix and suffix of `a` and `b`, not overlapping in either.
pub fn common_ends(a: &[u8], b: &[u8]) -> (usize, usize) {
    const BLOCK: usize = 64;
    let n = a.len().min(b.len());
    // Whole blocks compare as slices (memcmp), the rest byte by byte.
    let mut prefix = 0;
    while prefix + BLOCK <= n && a[prefix..prefix + BLOCK] == b[prefix..prefix + BLOCK] {
        prefix += BLOCK;
    }
    while prefix < n && a[prefix] == b[prefix] {
        prefix += 1;
    }
    let room = n - prefix;
    let (ea, eb) = (a.len(), b.len());
    let mut suffix = 0;
    while suffix + BLOCK <= room && a[ea - suffix - BLOCK..ea - suffix] == b[eb - suffix - BLOCK..eb - suffix] {
        suffix += BLOCK;
    }
    while suffix < room && a[ea - suffix - 1] == b[eb - suffix - 1] {
        suffix += 1;
    }
    (prefix, suffix)
}

/// `bytes` as a full payload.
pub fn encode_full(hash: &Digest, bytes: &[u8]) -> Vec<u8> {
    let mut res = Vec::with_capacity(HEAD + 8 + bytes.len() / 2);
    res.extend_from_slice(hash);
    res.push(FULL);
    res.extend_from_slice(&lz4_flex::block::compress_prepend_size(bytes));
    res
}

/// `bytes` as a delta on `base` (whose hash is `base_hash`), or `None` when they share less than
/// half of `bytes`.
pub fn encode_delta(hash: &Digest, bytes: &[u8], base_hash: &Digest, base: &[u8]) -> Option<Vec<u8>> {
    let (prefix, suffix) = common_ends(base, bytes);
    if (prefix + suffix) * 2 < bytes.len() {
        return None;
    }
    let middle = &bytes[prefix..bytes.len() - suffix];
    let mut res = Vec::with_capacity(DELTA_HEAD + 8 + middle.len());
    res.extend_from_slice(hash);
    res.push(NEAR);
    res.extend_from_slice(base_hash);
    res.extend_from_slice(&(prefix as u64).to_le_bytes());
    res.extend_from_slice(&(suffix as u64).to_le_bytes());
    res.extend_from_slice(&lz4_flex::block::compress_prepend_size_with_dict(middle, near(base, prefix, suffix)));
    Some(res)
}

/// Why a payload could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("a stored content is damaged")]
    Damaged,
    #[error("a stored content does not match its hash")]
    Mismatch,
}

/// Decodes a full payload, or a delta given its base's content.
pub fn decode(payload: &[u8], base: Option<&[u8]>) -> Result<Vec<u8>, DecodeError> {
    let head = parse_head(payload).ok_or(DecodeError::Damaged)?;
    let tail = if head.base.is_some() { payload.get(HEAD + HASH..).unwrap_or_default() } else { &payload[HEAD..] };
    let bytes = decode_tail(payload[HASH], tail, base)?;
    if digest(&bytes) != head.hash {
        return Err(DecodeError::Mismatch);
    }
    Ok(bytes)
}

/// Lines added and removed between two contents: the lines of the differing middle of each, cut
/// at line boundaries; 0 and 0 for binary contents (NUL bytes or not UTF-8).
pub fn line_delta(before: &[u8], after: &[u8]) -> (u64, u64) {
    let binary = |b: &[u8]| memchr::memchr(0, b).is_some() || std::str::from_utf8(b).is_err();
    if binary(before) || binary(after) {
        return (0, 0);
    }
    let (prefix, suffix) = common_ends(before, after);
    let start = before[..prefix].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let lines = |text: &[u8], end_from_back: usize| {
        let mut end = text.len() - end_from_back;
        if end > start && text[end - 1] != b'\n' {
            // Extend to the end of the line the middle ends in.
            end += text[end..].iter().position(|&b| b == b'\n').map_or(text.len() - end, |i| i + 1);
        }
        let middle = &text[start..end];
        let newlines = memchr::memchr_iter(b'\n', middle).count() as u64;
        newlines + u64::from(!middle.is_empty() && !middle.ends_with(b"\n"))
    };
    if prefix == before.len() && prefix == after.len() {
        return (0, 0);
    }
    (lines(after, suffix), lines(before, suffix))
}

/// A quick checksum of log frames (XXH3-64, not cryptographic): catches torn and damaged records.
pub fn checksum(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// Re-addresses a payload: the same encoding and compressed bytes under `hash` (and `base`), for
/// a format 1 blob whose content was decoded and checked (`migrate.rs`). `tail` is what follows
/// the old head: for a full blob the LZ4 block, for a delta the prefix and suffix lengths and the
/// LZ4 block.
pub fn readdress(hash: &Digest, base: Option<&Digest>, tail: &[u8]) -> Vec<u8> {
    let mut res = Vec::with_capacity(DELTA_HEAD + tail.len());
    res.extend_from_slice(hash);
    match base {
        None => res.push(FULL),
        Some(base) => {
            res.push(DELTA);
            res.extend_from_slice(base);
        }
    }
    res.extend_from_slice(tail);
    res
}

/// The dictionary of a `NEAR` delta's middle: the base's bytes from `NEAR_SIDE` before the changed
/// region to `NEAR_SIDE` after it.
fn near(base: &[u8], prefix: usize, suffix: usize) -> &[u8] {
    let end = base.len() - suffix;
    &base[prefix.saturating_sub(NEAR_SIDE)..(end + NEAR_SIDE).min(base.len())]
}

/// Decodes the tail of a payload of encoding `encoding` (see `readdress`) given its base's
/// content, unchecked.
pub fn decode_tail(encoding: u8, tail: &[u8], base: Option<&[u8]>) -> Result<Vec<u8>, DecodeError> {
    let damaged = |_| DecodeError::Damaged;
    match (encoding, base) {
        (FULL, _) => lz4_flex::block::decompress_size_prepended(tail).map_err(damaged),
        (DELTA | NEAR, Some(base)) => {
            let number = |at: usize| -> Result<usize, DecodeError> {
                let bytes = tail.get(at..at + 8).ok_or(DecodeError::Damaged)?;
                Ok(u64::from_le_bytes(bytes.try_into().expect("8 bytes")) as usize)
            };
            let (prefix, suffix) = (number(0)?, number(8)?);
            if prefix.saturating_add(suffix) > base.len() {
                return Err(DecodeError::Damaged);
            }
            let middle = match encoding {
                NEAR => lz4_flex::block::decompress_size_prepended_with_dict(&tail[16..], near(base, prefix, suffix)),
                _ => lz4_flex::block::decompress_size_prepended(&tail[16..]),
            }
            .map_err(damaged)?;
            let mut res = Vec::with_capacity(prefix + middle.len() + suffix);
            res.extend_from_slice(&base[..prefix]);
            res.extend_from_slice(&middle);
            res.extend_from_slice(&base[base.len() - suffix..]);
            Ok(res)
        }
        _ => Err(DecodeError::Damaged),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delta_restores_every_byte() {
        let base = b"line one\r\nline two\r\nline three".repeat(50);
        let mut edited = base.clone();
        edited.splice(400..410, b"\xff\x00changed".iter().copied());
        let (hb, he) = (digest(&base), digest(&edited));
        let delta = encode_delta(&he, &edited, &hb, &base).expect("mostly shared");
        assert!(delta.len() < 150, "{}", delta.len());
        assert_eq!(parse_head(&delta), Some(BlobHead { hash: he, base: Some(hb) }));
        assert_eq!(decode(&delta, Some(&base)).unwrap(), edited);
        let full = encode_full(&hb, &base);
        assert_eq!(decode(&full, None).unwrap(), base);
        assert!(encode_delta(&he, b"something else entirely", &hb, &base).is_none());
        assert_eq!(from_hex(&to_hex(&he)), Some(he));
    }

    #[test]
    fn common_ends_never_overlap() {
        let a = vec![7u8; 1000];
        let mut b = a.clone();
        assert_eq!(common_ends(&a, &b), (1000, 0));
        b[500] = 1;
        assert_eq!(common_ends(&a, &b), (500, 499));
        b.insert(200, 9);
        assert_eq!(common_ends(&a, &b), (200, 499));
        assert_eq!(common_ends(&a[..130], &a), (130, 0));
    }

    #[test]
    fn lines_are_counted_in_the_changed_middle() {
        assert_eq!(line_delta(b"a\nb\nc\n", b"a\nB\nc\n"), (1, 1));
        assert_eq!(line_delta(b"a\nc\n", b"a\nb1\nb2\nc\n"), (2, 0));
        assert_eq!(line_delta(b"", b"x\ny"), (2, 0));
        assert_eq!(line_delta(b"x\ny", b""), (0, 2));
        assert_eq!(line_delta(b"same", b"same"), (0, 0));
        assert_eq!(line_delta(b"\0bin", b"\0bim"), (0, 0));
    }
}

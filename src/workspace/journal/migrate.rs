//! Converts a format 1 journal (`journal.log`: SHA-256 content hashes, an FNV-style checksum,
//! every change compressed against the previous one) into format 2 (`journal-2.log`), once, on
//! first use, with the journal's lock held. Nothing is dropped silently: each stored content is
//! decoded, checked against its SHA-256 and re-addressed by its XXH3-128 (the compressed bytes are
//! kept as they are); the changes are rewritten with the new hashes. A content that cannot be read
//! back (a damaged record) is not carried over: the states that need it say it was not kept, and
//! the header counts it, so the history says how many older contents cannot be restored.
//!
//! Architecture invariant: the format 1 log is removed only after the format 2 log is durable in
//! its place; a conversion that fails leaves the format 1 log as it was.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read};

use sha2::{Digest as _, Sha256};

use super::blob;
use super::log::{self, FRAME_HEAD, FRAME_TAIL, Files, Kind, MAGIC};
use super::model::{Change, Checkpoint, Header, Migrated, State};

type OldDigest = [u8; 32];

/// Format 1's blob heads: hash, encoding byte, for a delta the base's hash.
const OLD_HEAD: usize = 33;
const OLD_DELTA_HEAD: usize = OLD_HEAD + 32;

/// Decoded contents kept while converting, so a delta chain is decoded once (bounded).
const CACHE_BYTES: usize = 256 << 20;

/// Format 1's frame checksum.
pub fn old_checksum(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        h = (h.rotate_left(23) ^ word).wrapping_mul(0x0100_0000_01b3);
    }
    for &byte in chunks.remainder() {
        h = (h.rotate_left(23) ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A format 1 log as read: its whole frames, up to a torn or damaged tail.
#[derive(Default)]
struct Old {
    header: Header,
    /// Blob payloads in file order.
    blobs: Vec<Vec<u8>>,
    changes: Vec<Change>,
    checkpoints: Vec<Checkpoint>,
}

fn read_old(file: &File) -> std::io::Result<Old> {
    let end = file.metadata()?.len();
    let mut reader = BufReader::with_capacity(256 * 1024, file);
    let mut old = Old::default();
    let mut dict = Vec::new();
    let mut at = 0u64;
    while at + FRAME_HEAD + FRAME_TAIL <= end {
        let mut head = [0u8; FRAME_HEAD as usize];
        reader.read_exact(&mut head)?;
        let len = u64::from(u32::from_le_bytes(head[2..6].try_into().expect("4 bytes")));
        if head[0] != MAGIC || at + log::frame_len(len) > end {
            break;
        }
        let mut payload = vec![0u8; len as usize];
        reader.read_exact(&mut payload)?;
        let mut sum = [0u8; 8];
        reader.read_exact(&mut sum)?;
        if u64::from_le_bytes(sum) != old_checksum(&payload) {
            break;
        }
        let ok = match head[1] {
            b'H' => serde_json::from_slice(&payload).map(|h| old.header = h).is_ok(),
            b'B' => {
                old.blobs.push(payload);
                true
            }
            b'C' => match lz4_flex::block::decompress_size_prepended_with_dict(&payload, &dict) {
                Ok(json) => {
                    let parsed = serde_json::from_slice(&json).map(|c| old.changes.push(c)).is_ok();
                    dict = json;
                    parsed
                }
                Err(_) => false,
            },
            b'K' => serde_json::from_slice(&payload).map(|c| old.checkpoints.push(c)).is_ok(),
            _ => false,
        };
        if !ok {
            break;
        }
        at += log::frame_len(len);
    }
    Ok(old)
}

/// The contents of format 1 blobs, decoded and checked.
struct Decoder<'a> {
    /// Old hash -> index in `blobs`, and its base.
    index: HashMap<OldDigest, (usize, Option<OldDigest>)>,
    blobs: &'a [Vec<u8>],
    cache: HashMap<OldDigest, std::rc::Rc<Vec<u8>>>,
    cached: usize,
}

impl Decoder<'_> {
    /// The content of the blob with hash `hash`, or `None` when it or a base is missing or damaged.
    fn content(&mut self, hash: &OldDigest) -> Option<std::rc::Rc<Vec<u8>>> {
        if let Some(bytes) = self.cache.get(hash) {
            return Some(bytes.clone());
        }
        // The chain back to a cached or full content, then forward.
        let mut chain = vec![*hash];
        let mut base = None;
        loop {
            let (_, parent) = self.index.get(chain.last().expect("not empty"))?;
            match parent {
                None => break,
                Some(parent) if self.cache.contains_key(parent) => {
                    base = self.cache.get(parent).cloned();
                    break;
                }
                Some(_) if chain.len() > self.index.len() => return None,
                Some(parent) => chain.push(*parent),
            }
        }
        for hash in chain.iter().rev() {
            let (at, parent) = self.index[hash];
            let payload = &self.blobs[at];
            let tail = if parent.is_some() { payload.get(OLD_DELTA_HEAD..)? } else { payload.get(OLD_HEAD..)? };
            let bytes = blob::decode_tail(u8::from(parent.is_some()), tail, base.as_deref().map(Vec::as_slice)).ok()?;
            if <[u8; 32]>::from(Sha256::digest(&bytes)) != *hash {
                return None;
            }
            if self.cached + bytes.len() > CACHE_BYTES {
                self.cache.clear();
                self.cached = 0;
            }
            self.cached += bytes.len();
            let bytes = std::rc::Rc::new(bytes);
            self.cache.insert(*hash, bytes.clone());
            base = Some(bytes);
        }
        base
    }
}

fn old_head(payload: &[u8]) -> Option<(OldDigest, Option<OldDigest>)> {
    let hash: OldDigest = payload.get(..32)?.try_into().ok()?;
    match *payload.get(32)? {
        0 => Some((hash, None)),
        1 => Some((hash, Some(payload.get(OLD_HEAD..OLD_DELTA_HEAD)?.try_into().ok()?))),
        _ => None,
    }
}

/// Converts `files`' format 1 log into a format 2 log and removes it.
pub fn convert(files: &Files) -> std::io::Result<()> {
    let old = read_old(&File::open(files.format_1_log())?)?;
    let mut index = HashMap::new();
    for (at, payload) in old.blobs.iter().enumerate() {
        if let Some((hash, base)) = old_head(payload) {
            index.entry(hash).or_insert((at, base));
        }
    }
    let mut decoder = Decoder { index, blobs: &old.blobs, cache: HashMap::new(), cached: 0 };
    let mut blobs = Vec::new();
    let mut new_hash: HashMap<OldDigest, blob::Digest> = HashMap::new();
    let mut lost = 0u64;
    for payload in &old.blobs {
        let Some((hash, base)) = old_head(payload) else { continue };
        if new_hash.contains_key(&hash) {
            continue;
        }
        let Some(bytes) = decoder.content(&hash) else {
            lost += 1;
            continue;
        };
        let hash_2 = blob::digest(&bytes);
        let payload_2 = match base.and_then(|b| new_hash.get(&b)) {
            Some(base_2) => blob::readdress(&hash_2, Some(base_2), &payload[OLD_DELTA_HEAD..]),
            None => blob::encode_full(&hash_2, &bytes),
        };
        log::frame(Kind::Blob, &payload_2, &mut blobs);
        new_hash.insert(hash, hash_2);
    }
    let migrated = Migrated {
        from: 1,
        at_ms: chrono::Utc::now().timestamp_millis(),
        changes: old.changes.len() as u64,
        contents: new_hash.len() as u64,
        lost,
    };
    let next_id = old.changes.last().map_or(1, |c| c.id + 1).max(old.header.next_id).max(1);
    let first_id = old.changes.first().map_or(next_id, |c| c.id);
    let header = Header { migrated: Some(migrated), ..Header::new(next_id, first_id.max(old.header.first_id)) };
    let mut bytes = Vec::with_capacity(blobs.len() + 4096);
    log::json_frame(Kind::Header, &header, &mut bytes);
    bytes.extend_from_slice(&blobs);
    let mut chain = log::Chain::default();
    for mut change in old.changes {
        for path in &mut change.paths {
            for state in [&mut path.before, &mut path.after] {
                rehash(state, &new_hash);
            }
        }
        chain.write(&change, &mut bytes);
    }
    for checkpoint in &old.checkpoints {
        log::json_frame(Kind::Checkpoint, checkpoint, &mut bytes);
    }
    log::replace(files, &bytes)?;
    std::fs::remove_file(files.format_1_log())?;
    tracing::info!(
        changes = header.migrated.as_ref().map_or(0, |m| m.changes),
        lost,
        "converted the undo journal to format 2"
    );
    Ok(())
}

/// A state with its format 1 hash replaced by the format 2 one; a content that was not carried
/// over is not kept.
fn rehash(state: &mut State, new_hash: &HashMap<OldDigest, blob::Digest>) {
    if let State::File { hash, kept, .. } = state {
        let old: Option<OldDigest> = (hash.len() == 64)
            .then(|| (0..32).map(|i| u8::from_str_radix(&hash[2 * i..2 * i + 2], 16).ok()).collect::<Option<Vec<u8>>>())
            .flatten()
            .and_then(|v| v.try_into().ok());
        match old.and_then(|old| new_hash.get(&old)) {
            Some(new) => *hash = blob::to_hex(new),
            None => {
                // Unknown content: an empty hash never matches a file on disk, so a revert over it
                // asks for `force`.
                hash.clear();
                *kept = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::journal::Journal;
    use crate::workspace::journal::model::{Action, PathChange};

    fn old_frame(kind: u8, payload: &[u8], out: &mut Vec<u8>) {
        out.push(MAGIC);
        out.push(kind);
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(payload);
        out.extend_from_slice(&old_checksum(payload).to_le_bytes());
    }

    fn sha(bytes: &[u8]) -> OldDigest {
        Sha256::digest(bytes).into()
    }

    fn file(bytes: &[u8]) -> State {
        State::File { hash: blob::to_hex(&sha(bytes)), mode: 0o644, size: bytes.len() as u64, kept: true }
    }

    fn change(id: u64, path: &str, action: Action, before: State, after: State) -> Change {
        Change {
            id,
            at_ms: 1_700_000_000_000 + id as i64,
            tool: "workspace_write_file".into(),
            origin: "client".into(),
            client: None,
            paths: vec![PathChange { path: path.into(), action, other: None, before, after, added: 1, removed: 0 }],
            revert: None,
            stored_bytes: 0,
        }
    }

    /// A format 1 journal as the previous version wrote it: a full content, a delta on it, and a
    /// third content whose record is intact but whose bytes no longer match their hash.
    fn format_1_log(a: &[u8], b: &[u8], c: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        old_frame(b'H', br#"{"next_id":1,"first_id":1}"#, &mut out);
        let mut full = sha(a).to_vec();
        full.push(0);
        full.extend_from_slice(&lz4_flex::block::compress_prepend_size(a));
        old_frame(b'B', &full, &mut out);
        let (prefix, suffix) = blob::common_ends(a, b);
        let mut delta = sha(b).to_vec();
        delta.push(1);
        delta.extend_from_slice(&sha(a));
        delta.extend_from_slice(&(prefix as u64).to_le_bytes());
        delta.extend_from_slice(&(suffix as u64).to_le_bytes());
        delta.extend_from_slice(&lz4_flex::block::compress_prepend_size(&b[prefix..b.len() - suffix]));
        old_frame(b'B', &delta, &mut out);
        let mut damaged = sha(c).to_vec();
        damaged.push(0);
        damaged.extend_from_slice(&lz4_flex::block::compress_prepend_size(b"not what was hashed"));
        old_frame(b'B', &damaged, &mut out);
        let changes = [
            change(1, "project/f.txt", Action::Created, State::Absent, file(a)),
            change(2, "project/f.txt", Action::Modified, file(a), file(b)),
            change(3, "project/g.bin", Action::Created, State::Absent, file(c)),
        ];
        let mut dict = Vec::new();
        for change in &changes {
            let json = serde_json::to_vec(change).unwrap();
            old_frame(b'C', &lz4_flex::block::compress_prepend_size_with_dict(&json, &dict), &mut out);
            dict = json;
        }
        old_frame(b'K', br#"{"name":"cp","after":2,"at_ms":1700000000002}"#, &mut out);
        out
    }

    #[test]
    fn a_format_1_journal_is_converted_and_says_what_could_not_be_carried_over() {
        let dir = tempfile::tempdir().unwrap();
        let journal_dir = dir.path().join(".journal");
        std::fs::create_dir(&journal_dir).unwrap();
        let a = b"line one\r\nline two\r\n\xff no final newline".repeat(40);
        let mut b = a.clone();
        b.splice(300..305, b"CHANGED".iter().copied());
        let c = b"\x00\x01 binary".to_vec();
        std::fs::write(journal_dir.join("journal.log"), format_1_log(&a, &b, &c)).unwrap();

        let journal = Journal::new(journal_dir.clone(), 1 << 30);
        let history = journal.history(None, 20).unwrap();
        assert!(!journal_dir.join("journal.log").exists() && journal_dir.join("journal-2.log").exists());
        let ids: Vec<u64> = history.changes.iter().map(|e| e.change.id).collect();
        assert_eq!(ids, [3, 2, 1]);
        assert_eq!(history.changes[1].checkpoints, ["cp"]);
        let migrated = history.migrated.clone().expect("converted");
        assert_eq!((migrated.changes, migrated.contents, migrated.lost), (3, 2, 1));
        let text = crate::render::journal::history(&history, None);
        assert!(text.contains("3 changes and 2 stored contents carried over; 1 stored content was damaged"), "{text}");

        // Both carried-over contents come back byte for byte under their new hashes.
        let after_2 = &history.changes[1].change.paths[0].after;
        assert_eq!(
            after_2,
            &State::File { hash: blob::to_hex(&blob::digest(&b)), mode: 0o644, size: b.len() as u64, kept: true }
        );
        journal
            .with_log(|log, _| {
                assert_eq!(log.content(&blob::digest(&a)).unwrap(), a);
                assert_eq!(log.content(&blob::digest(&b)).unwrap(), b);
                Ok(())
            })
            .unwrap();
        // The damaged one is not kept (a revert to it says so), never restored wrong.
        assert!(matches!(&history.changes[0].change.paths[0].after, State::File { kept: false, .. }));

        // Ids go on after the converted ones, also in a fresh journal on the same directory.
        let next = journal
            .record(
                None,
                None,
                &[crate::workspace::journal::Touched {
                    path: crate::workspace::path::QualifiedPath::parse("project/h.txt").unwrap(),
                    moved: None,
                    before: crate::workspace::journal::Snapshot::Absent,
                    after: crate::workspace::journal::Snapshot::File { bytes: b"h\n".as_slice().into(), mode: 0o644 },
                }],
            )
            .unwrap()
            .unwrap();
        assert_eq!(next.id, 4);
        let again = Journal::new(journal_dir, 1 << 30).history(None, 20).unwrap();
        assert_eq!(again.changes.len(), 4);
        assert_eq!(again.migrated.map(|m| m.lost), Some(1));
    }
}

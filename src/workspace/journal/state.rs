//! What one server knows of the shared log: its changes and checkpoints, and where each blob is.
//! Loaded on first use, brought up to date (others' appends, a compaction) under the lock before
//! every operation, and compacted when the log outgrows its limit.
//!
//! Architecture invariant: only called with the journal's lock held (`Files::lock`).

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::sync::Arc;

use super::blob::{self, Digest};
use super::log::{self, Files, Frame, Kind};
use super::model::{Change, Checkpoint, Header, State};

/// Where a blob is and what its delta chain costs.
#[derive(Debug, Clone, Copy)]
pub struct BlobInfo {
    pub offset: u64,
    pub len: u64,
    pub base: Option<Digest>,
    /// Deltas between this blob and its full root (0 for a full blob).
    pub depth: u32,
    /// Payload bytes of the chain from its full root to this blob, both included.
    pub chain: u64,
    /// Payload bytes of the chain's full root.
    pub root: u64,
}

/// A change of the log: its id and where it is; decoded on first use.
#[derive(Debug)]
pub struct Slot {
    pub id: u64,
    offset: u64,
    len: u64,
    chained: bool,
    /// Its mutation failed after the journal took it: not a change (kept only as the dictionary
    /// of the next one).
    void: bool,
    change: Option<Arc<Change>>,
}

/// The log as this server has read it.
pub struct Loaded {
    pub file: File,
    meta: std::fs::Metadata,
    /// Where the frames read so far end.
    pub end: u64,
    pub header: Header,
    pub blobs: HashMap<Digest, BlobInfo>,
    /// Every change, oldest first (ids increase).
    slots: Vec<Slot>,
    pub checkpoints: Vec<Checkpoint>,
    /// How the next change is compressed.
    pub chain: log::Chain,
    /// The highest change id seen, voided ones included (ids are never reused).
    highest: u64,
    voids: usize,
    /// Contents decoded lately, so consecutive versions of a file decode one delta each.
    decoded: HashMap<Digest, Arc<Vec<u8>>>,
    decoded_bytes: usize,
}

/// At most this many bytes of decoded contents are kept.
const DECODED_BYTES: usize = 64 << 20;

impl Loaded {
    /// Reads the log's frames (converting a format 1 journal first); changes are decoded on use.
    pub fn open(files: &Files) -> std::io::Result<Loaded> {
        if !files.log().exists() && files.format_1_log().exists() {
            super::migrate::convert(files)?;
        }
        let file = files.open_log()?;
        let meta = file.metadata()?;
        let mut loaded = Loaded {
            file,
            meta,
            end: 0,
            header: Header::default(),
            blobs: HashMap::new(),
            slots: Vec::new(),
            checkpoints: Vec::new(),
            chain: log::Chain::default(),
            highest: 0,
            voids: 0,
            decoded: HashMap::new(),
            decoded_bytes: 0,
        };
        loaded.catch_up()?;
        Ok(loaded)
    }

    /// Reads what was appended since, or everything again when the log was replaced.
    pub fn refresh(self, files: &Files) -> std::io::Result<Loaded> {
        match std::fs::metadata(files.log()) {
            Ok(now) if log::same_file(&self.meta, &now) => {
                let mut loaded = self;
                loaded.catch_up()?;
                Ok(loaded)
            }
            _ => Loaded::open(files),
        }
    }

    fn catch_up(&mut self) -> std::io::Result<()> {
        let len = self.file.metadata()?.len();
        if len == self.end {
            return Ok(());
        }
        let mut frames = Vec::new();
        let end = log::scan(&self.file, self.end, |frame| frames.push(frame))?;
        for frame in frames {
            self.apply(frame);
        }
        if end < len {
            tracing::warn!(at = end, "cutting a torn record off the journal");
            log::truncate(&self.file, end)?;
        }
        self.end = end;
        self.meta = self.file.metadata()?;
        Ok(())
    }

    fn apply(&mut self, frame: Frame) {
        match frame {
            Frame::Header(header) => self.header = header,
            Frame::Blob { head, offset, len } => {
                let info = self.chain_info(head.base, offset, len);
                self.blobs.insert(head.hash, info);
            }
            Frame::Change { id, offset, len, chained } => {
                self.chain.saw(chained);
                self.highest = self.highest.max(id);
                self.slots.push(Slot { id, offset, len, chained, void: false, change: None });
            }
            Frame::Checkpoint(checkpoint) => self.checkpoints.push(checkpoint),
            Frame::Void(id) => {
                let index = self.index_of(id);
                if let Some(slot) = self.slots.get_mut(index).filter(|slot| slot.id == id && !slot.void) {
                    slot.void = true;
                    self.voids += 1;
                }
            }
        }
    }

    /// How many changes the log holds.
    pub fn change_count(&self) -> usize {
        self.slots.len() - self.voids
    }

    /// The index from which on the log holds its newest `count` changes.
    pub fn newest(&self, count: usize) -> usize {
        if self.voids == 0 {
            return self.slots.len().saturating_sub(count);
        }
        let mut seen = 0;
        for (index, slot) in self.slots.iter().enumerate().rev() {
            seen += usize::from(!slot.void);
            if seen >= count {
                return index;
            }
        }
        0
    }

    /// The oldest change.
    pub fn first(&mut self) -> std::io::Result<Option<Arc<Change>>> {
        match self.slots.iter().position(|slot| !slot.void) {
            Some(index) => self.change(index).map(Some),
            None => Ok(None),
        }
    }

    /// The index of the first change whose id is at least `id`.
    pub fn index_of(&self, id: u64) -> usize {
        self.slots.partition_point(|slot| slot.id < id)
    }

    /// The change at `index`.
    pub fn change(&mut self, index: usize) -> std::io::Result<Arc<Change>> {
        self.decode(index..index + 1)?;
        Ok(self.slots[index].change.clone().expect("decoded"))
    }

    /// The changes from `index` on, oldest first.
    pub fn changes_from(&mut self, index: usize) -> std::io::Result<Vec<Arc<Change>>> {
        self.decode(index..self.slots.len())?;
        Ok(self.slots[index..]
            .iter()
            .filter(|slot| !slot.void)
            .map(|slot| slot.change.clone().expect("decoded"))
            .collect())
    }

    /// Decodes the changes of `range` not decoded yet, from the change compressed alone at or
    /// before each (at most `log::KEY_EVERY` before it).
    fn decode(&mut self, range: std::ops::Range<usize>) -> std::io::Result<()> {
        let damaged = || std::io::Error::new(std::io::ErrorKind::InvalidData, "a journal record is damaged");
        let Some(first) = (range.start..range.end).find(|&i| self.slots[i].change.is_none()) else {
            return Ok(());
        };
        let mut at = first;
        while self.slots[at].chained {
            at = at.checked_sub(1).ok_or_else(damaged)?;
        }
        let mut previous: Option<Vec<u8>> = None;
        for index in at..range.end {
            let slot = &mut self.slots[index];
            let payload = log::read_payload(&self.file, slot.offset, slot.len)?;
            let json = log::change_json(&payload, previous.as_deref()).ok_or_else(damaged)?;
            if slot.change.is_none() {
                let change: Change = serde_json::from_slice(&json).map_err(|_| damaged())?;
                if change.id != slot.id {
                    return Err(damaged());
                }
                slot.change = Some(Arc::new(change));
            }
            previous = Some(json);
        }
        if range.end == self.slots.len() {
            self.chain.previous = previous;
        }
        Ok(())
    }

    /// After appending `change` (whose JSON is `json`): keeps it decoded, and its JSON as the
    /// next change's dictionary. Returns the change as the log holds it.
    pub fn adopt(&mut self, change: Change, json: Vec<u8>) -> Arc<Change> {
        let change = Arc::new(change);
        if let Some(slot) = self.slots.last_mut().filter(|slot| slot.id == change.id) {
            slot.change = Some(change.clone());
            self.chain.previous = Some(json);
        }
        change
    }

    /// The chain figures of a blob at `offset` whose base is `base`.
    pub fn chain_info(&self, base: Option<Digest>, offset: u64, len: u64) -> BlobInfo {
        match base.and_then(|b| self.blobs.get(&b)) {
            Some(parent) => {
                BlobInfo { offset, len, base, depth: parent.depth + 1, chain: parent.chain + len, root: parent.root }
            }
            None => BlobInfo { offset, len, base: None, depth: 0, chain: len, root: len },
        }
    }

    /// The id the next change gets.
    pub fn next_id(&self) -> u64 {
        (self.highest + 1).max(self.header.next_id).max(1)
    }

    /// The oldest change id the journal still holds (the next id when it holds none).
    pub fn first_id(&self) -> u64 {
        self.slots.iter().find(|slot| !slot.void).map_or_else(|| self.next_id(), |c| c.id)
    }

    /// The content with hash `hash`, decoded from the nearest recently decoded content of its
    /// delta chain (or its full root) and checked against its hash at every step.
    pub fn content(&mut self, hash: &Digest) -> Result<Vec<u8>, ContentError> {
        let mut chain = Vec::new();
        let mut at = *hash;
        let mut bytes: Option<Arc<Vec<u8>>> = None;
        loop {
            if let Some(cached) = self.decoded.get(&at) {
                bytes = Some(cached.clone());
                break;
            }
            let info = self.blobs.get(&at).ok_or(ContentError::Missing)?;
            chain.push(*info);
            match info.base {
                Some(base) if chain.len() <= self.blobs.len() => at = base,
                Some(_) => return Err(ContentError::Missing),
                None => break,
            }
        }
        for info in chain.iter().rev() {
            let payload = log::read_payload(&self.file, info.offset, info.len).map_err(ContentError::Io)?;
            let decoded = blob::decode(&payload, bytes.as_deref().map(Vec::as_slice)).map_err(ContentError::Decode)?;
            let head = blob::parse_head(&payload).map(|h| h.hash).ok_or(ContentError::Missing)?;
            let decoded = Arc::new(decoded);
            self.keep_decoded(head, decoded.clone());
            bytes = Some(decoded);
        }
        let bytes = bytes.ok_or(ContentError::Missing)?;
        Ok(Arc::try_unwrap(bytes).unwrap_or_else(|shared| shared.as_ref().clone()))
    }

    /// Keeps a decoded content for the next `content` call (at most `DECODED_BYTES` in all).
    fn keep_decoded(&mut self, hash: Digest, bytes: Arc<Vec<u8>>) {
        if self.decoded_bytes + bytes.len() > DECODED_BYTES {
            self.decoded.clear();
            self.decoded_bytes = 0;
        }
        self.decoded_bytes += bytes.len();
        self.decoded.insert(hash, bytes);
    }

    /// Appends `frames` (built against `end`) and records what they hold.
    pub fn append(&mut self, bytes: &[u8]) -> std::io::Result<u64> {
        let start = log::append(&mut self.file, bytes)?;
        self.catch_up()?;
        Ok(start)
    }

    /// When the log is over `limit`, rewrites it without the oldest changes (keeping at least the
    /// newest one), so it ends at about three quarters of the limit. Blobs stay while a kept
    /// change or a kept blob's delta needs them.
    pub fn compact_if_over(&mut self, files: &Files, limit: u64) -> std::io::Result<()> {
        if self.end <= limit {
            return Ok(());
        }
        let target = limit / 4 * 3;
        let changes = self.changes_from(0)?;
        let mut kept_blobs: HashSet<Digest> = HashSet::new();
        let mut size = 0u64;
        let mut first_kept = changes.len();
        for (index, change) in changes.iter().enumerate().rev() {
            let mut added = 0u64;
            let mut mine = Vec::new();
            for hash in hashes_of(change) {
                let mut at = Some(hash);
                while let Some(hash) = at {
                    if kept_blobs.contains(&hash) || mine.contains(&hash) {
                        break;
                    }
                    let Some(info) = self.blobs.get(&hash) else { break };
                    added += log::frame_len(info.len);
                    mine.push(hash);
                    at = info.base;
                }
            }
            let record = serde_json::to_vec(change.as_ref()).map_or(0, |v| v.len() as u64);
            added += log::frame_len(record);
            if size + added > target && first_kept < changes.len() {
                break;
            }
            size += added;
            kept_blobs.extend(mine);
            first_kept = index;
        }
        let next_id = self.next_id();
        let kept = &changes[first_kept..];
        let first_id = kept.first().map_or(next_id, |c| c.id);
        let mut bytes = Vec::with_capacity(size as usize + 4096);
        let header = Header { migrated: self.header.migrated.clone(), ..Header::new(next_id, first_id) };
        log::json_frame(Kind::Header, &header, &mut bytes);
        let mut blobs: Vec<(&Digest, &BlobInfo)> = self.blobs.iter().filter(|(h, _)| kept_blobs.contains(*h)).collect();
        // File order keeps every base before its deltas.
        blobs.sort_by_key(|(_, info)| info.offset);
        for (_, info) in blobs {
            let payload = log::read_payload(&self.file, info.offset, info.len)?;
            log::frame(Kind::Blob, &payload, &mut bytes);
        }
        let mut chain = log::Chain::default();
        for change in kept {
            chain.write(change, &mut bytes);
        }
        for checkpoint in self.checkpoints.iter().filter(|c| c.after + 1 >= first_id) {
            log::json_frame(Kind::Checkpoint, checkpoint, &mut bytes);
        }
        log::replace(files, &bytes)?;
        *self = Loaded::open(files)?;
        Ok(())
    }
}

/// Every content hash a change refers to.
pub fn hashes_of(change: &Change) -> impl Iterator<Item = Digest> + '_ {
    change.paths.iter().flat_map(|p| [&p.before, &p.after]).filter_map(|state| match state {
        State::File { hash, kept: true, .. } => blob::from_hex(hash),
        _ => None,
    })
}

/// Why a stored content could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ContentError {
    #[error("the journal no longer holds it")]
    Missing,
    #[error(transparent)]
    Io(std::io::Error),
    #[error(transparent)]
    Decode(blob::DecodeError),
}

#[cfg(test)]
mod tests {
    use crate::workspace::journal::{Journal, Snapshot, Touched};
    use crate::workspace::path::QualifiedPath;

    fn write(journal: &Journal, name: &str, text: &str) -> u64 {
        let touched = Touched {
            path: QualifiedPath::parse(&format!("project/{name}")).unwrap(),
            moved: None,
            before: Snapshot::Absent,
            after: Snapshot::File { bytes: text.as_bytes().into(), mode: 0o644 },
        };
        journal.record(None, None, &[touched]).unwrap().unwrap().id
    }

    /// Changes are decoded on demand from the nearest one compressed alone, also when two
    /// journals on one directory interleave (each starts a new run after the other's change).
    #[test]
    fn any_change_decodes_from_the_nearest_change_compressed_alone() {
        let dir = tempfile::tempdir().unwrap();
        let (one, two) = (Journal::new(dir.path().join("j"), 1 << 30), Journal::new(dir.path().join("j"), 1 << 30));
        for i in 1..=100u64 {
            let journal = if i % 7 == 0 { &two } else { &one };
            assert_eq!(write(journal, &format!("f{}.txt", i % 3), &format!("{i}\n")), i);
        }
        let fresh = Journal::new(dir.path().join("j"), 1 << 30);
        let newest = fresh.history(None, 3).unwrap();
        let ids: Vec<u64> = newest.changes.iter().map(|e| e.change.id).collect();
        assert_eq!((ids, newest.matching, newest.reaches.map(|r| r.0)), (vec![100, 99, 98], 100, Some(1)));
        fresh
            .with_log(|log, _| {
                // Only the newest window and the first change were decoded.
                assert!(log.slots[..60].iter().skip(1).all(|s| s.change.is_none()));
                let runs = log.slots.iter().filter(|s| !s.chained).count();
                assert!((4..=40).contains(&runs), "{runs} changes compressed alone");
                let all = log.changes_from(0).unwrap();
                assert!(all.iter().map(|c| c.id).eq(1..=100));
                Ok(())
            })
            .unwrap();
        let filtered = fresh.history(Some(&QualifiedPath::parse("project/f1.txt").unwrap()), 5).unwrap();
        assert_eq!(filtered.matching, 34);
        assert_eq!(filtered.changes[0].change.id, 100);
        assert_eq!(write(&fresh, "g.txt", "g\n"), 101);
        assert_eq!(one.history(None, 1).unwrap().changes[0].change.id, 101);
    }
}

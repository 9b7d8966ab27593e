//! The undo journal: every change the workspace mutations make, with each path's content and mode
//! before and after, kept under the storage root (`storage/.journal`, private to the user) so it
//! can be reverted, also by another server on the same storage root and after a restart.
//!
//! The mutations record through their session (`mutate.rs`), so a tool that changes files through
//! the workspace (the quality tools' fixes included) is journaled without knowing of it. A change
//! is durable (`fdatasync`) before the mutation returns.
//!
//! Architecture invariant: the journal is written only here, never into the project; it knows
//! nothing about MCP (the tool and origin come from the call's `Author`).
//! Architecture invariant: change ids increase and are never reused, across restarts and
//! compactions (the header carries the next id), and among the servers sharing the log (ids are
//! handed out under its lock).

pub mod blob;
pub mod capture;
pub mod log;
pub mod migrate;
pub mod model;
pub mod private;
pub mod revert;
pub mod state;

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::call::Author;
use crate::workspace::path::QualifiedPath;
use blob::Digest;
use log::{Files, Kind};
use model::{Action, Change, Checkpoint, PathChange, RevertTarget, State};
use state::Loaded;

/// The default size limit of the journal (`--journal-limit`).
pub const DEFAULT_LIMIT: u64 = 512 * 1024 * 1024;

/// The journal's directory below the storage root.
pub const DIR_NAME: &str = ".journal";

/// Who protects the journal's directory.
pub const OWNER: &str = "the undo journal";

/// What one path held, as a mutation hands it to the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Snapshot<'a> {
    Absent,
    File {
        bytes: std::borrow::Cow<'a, [u8]>,
        mode: u32,
    },
    /// A file whose content was not read: the change was too large to keep (see `capture.rs`).
    Unread {
        mode: u32,
        size: u64,
    },
    Directory {
        mode: u32,
    },
}

/// One path a mutation changed.
#[derive(Debug, Clone)]
pub struct Touched<'a> {
    pub path: QualifiedPath,
    /// For moves: the action (`MovedTo`/`MovedFrom`) and the other end.
    pub moved: Option<(Action, QualifiedPath)>,
    pub before: Snapshot<'a>,
    pub after: Snapshot<'a>,
}

/// Errors of the journal itself.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("the undo journal could not be {action}: {source}")]
    Io {
        action: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid argument `change`: there is no change #{id} (the newest is #{newest})")]
    UnknownChange { id: u64, newest: u64 },
    #[error(
        "invalid argument `change`: change #{id} is older than the journal reaches (its oldest change is #{first}); \
         older changes were dropped to keep it under its size limit"
    )]
    TooOld { id: u64, first: u64 },
    #[error("invalid argument `checkpoint`: there is no checkpoint `{name}`{known}")]
    UnknownCheckpoint { name: String, known: String },
    #[error(
        "invalid argument `checkpoint`: checkpoint `{name}` is older than the journal reaches (its oldest change is #{first})"
    )]
    CheckpointTooOld { name: String, first: u64 },
    #[error("invalid argument `name`: a checkpoint `{name}` already exists (at change #{after})")]
    DuplicateCheckpoint { name: String, after: u64 },
    #[error("invalid argument `name`: a checkpoint name must not be empty")]
    EmptyCheckpoint,
    #[error("the undo journal is off in this server")]
    Off,
    #[error(
        "nothing was changed: {} (changed outside ForgeMCP); pass `force: true` to overwrite {} (the current \
         content is journaled first, so the forced revert can itself be reverted)",
        conflict_list(files),
        if files.len() == 1 { "it" } else { "them" }
    )]
    Conflicts { files: Vec<(String, u64)> },
    #[error("the content of `{path}` {when} cannot be restored: {reason}")]
    Content { path: String, when: String, reason: state::ContentError },
    #[error("the content of `{path}` {when} was not kept (that change was larger than half the journal's size limit)")]
    NotKept { path: String, when: String },
}

/// The journal of one storage root.
pub struct Journal {
    files: Files,
    limit: u64,
    state: Mutex<Option<Loaded>>,
}

/// A page of the history.
#[derive(Debug, Clone)]
pub struct History {
    /// Newest first, with the checkpoints at each and the change that reverted it.
    pub changes: Vec<HistoryEntry>,
    /// Changes matching the filter, in all.
    pub matching: u64,
    /// The oldest change the journal holds and when it was made (`None`: no change yet).
    pub reaches: Option<(u64, i64)>,
    /// Whether older changes were dropped (the size limit).
    pub dropped: bool,
    pub limit: u64,
    /// Checkpoints, oldest first.
    pub checkpoints: Vec<Checkpoint>,
    /// Set when the journal was converted from an older format.
    pub migrated: Option<model::Migrated>,
}

#[derive(Debug, Clone)]
pub struct HistoryEntry {
    pub change: Arc<Change>,
    pub checkpoints: Vec<String>,
    pub reverted_by: Option<u64>,
}

impl Journal {
    /// The journal in `dir` (created on first use), keeping at most about `limit` bytes.
    pub fn new(dir: std::path::PathBuf, limit: u64) -> Journal {
        Journal { files: Files { dir, private: false.into() }, limit, state: Mutex::new(None) }
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Runs `work` on the up-to-date log with the lock held.
    pub(crate) fn with_log<T>(
        &self,
        work: impl FnOnce(&mut Loaded, &Files) -> Result<T, JournalError>,
    ) -> Result<T, JournalError> {
        let io = |action| move |source| JournalError::Io { action, source };
        let mut slot = self.state.lock();
        let _lock = self.files.lock().map_err(io("locked"))?;
        let loaded = match slot.take() {
            Some(loaded) => loaded.refresh(&self.files),
            None => Loaded::open(&self.files),
        }
        .map_err(io("read"))?;
        let loaded = slot.insert(loaded);
        work(loaded, &self.files)
    }

    /// Records one change made by `author` (`None`: internal work). Nothing is recorded for an
    /// empty list. Returns the change once it is durable.
    pub fn record(
        &self,
        author: Option<&Author>,
        revert: Option<RevertTarget>,
        touched: &[Touched<'_>],
    ) -> Result<Option<Arc<Change>>, JournalError> {
        if touched.is_empty() {
            return Ok(None);
        }
        let total: usize = touched.iter().map(|t| content_len(&t.before) + content_len(&t.after)).sum();
        let unread = touched
            .iter()
            .any(|t| matches!((&t.before, &t.after), (Snapshot::Unread { .. }, _) | (_, Snapshot::Unread { .. })));
        let keep = !unread && (total as u64) <= self.limit / 2;
        let limit = self.limit;
        self.with_log(|log, files| {
            let mut batch = Batch { bytes: Vec::new(), new: HashMap::new(), keep };
            let mut paths = Vec::with_capacity(touched.len());
            for t in touched {
                let before = batch.state(log, &t.before, None);
                let after = batch.state(log, &t.after, Some((&t.before, &before)));
                let (added, removed) = match (&t.before, &t.after) {
                    (Snapshot::File { bytes: b, .. }, Snapshot::File { bytes: a, .. }) => blob::line_delta(b, a),
                    (Snapshot::File { bytes: b, .. }, _) => blob::line_delta(b, b"").swap(),
                    (_, Snapshot::File { bytes: a, .. }) => blob::line_delta(b"", a),
                    _ => (0, 0),
                };
                let (action, other) = match &t.moved {
                    Some((action, other)) => (*action, Some(other.to_string())),
                    None => (Action::between(&before, &after), None),
                };
                paths.push(PathChange { path: t.path.to_string(), action, other, before, after, added, removed });
            }
            let change = Change {
                id: log.next_id(),
                at_ms: chrono::Utc::now().timestamp_millis(),
                tool: author.map_or_else(|| "internal".to_owned(), |a| a.tool.clone()),
                origin: author.map_or("server", |a| a.origin).to_owned(),
                client: author.and_then(|a| a.client.clone()),
                paths,
                revert,
                stored_bytes: batch.bytes.len() as u64,
            };
            let json = log.chain.frame(&change, &mut batch.bytes);
            log.append(&batch.bytes).map_err(|source| JournalError::Io { action: "written", source })?;
            let recorded = log.adopt(change, json);
            if let Err(err) = log.compact_if_over(files, limit) {
                tracing::warn!(%err, "compacting the undo journal failed");
            }
            Ok(Some(recorded))
        })
    }

    /// The changes (newest first) that touched `path` or something below it (all when `None`).
    pub fn history(&self, path: Option<&QualifiedPath>, limit: usize) -> Result<History, JournalError> {
        let journal_limit = self.limit;
        let read = |source| JournalError::Io { action: "read", source };
        self.with_log(|log, _| {
            let filter = path.map(ToString::to_string);
            let touches = |change: &Change| match &filter {
                None => true,
                Some(filter) => change
                    .paths
                    .iter()
                    .any(|p| [Some(&p.path), p.other.as_ref()].into_iter().flatten().any(|path| under(path, filter))),
            };
            // Unfiltered, only the newest `limit` changes are read: every revert that undid one of
            // them is newer, so among them too.
            let from = if filter.is_none() { log.newest(limit) } else { 0 };
            let window = log.changes_from(from).map_err(read)?;
            let reverted = reverted_by(&window);
            let mut matching = if filter.is_none() { log.change_count() as u64 } else { 0 };
            let mut changes = Vec::new();
            for change in window.iter().rev().filter(|c| touches(c)) {
                if filter.is_some() {
                    matching += 1;
                }
                if changes.len() < limit {
                    changes.push(HistoryEntry {
                        change: change.clone(),
                        checkpoints: log
                            .checkpoints
                            .iter()
                            .filter(|c| c.after == change.id)
                            .map(|c| c.name.clone())
                            .collect(),
                        reverted_by: reverted.get(&change.id).copied(),
                    });
                }
            }
            let reaches = log.first().map_err(read)?.map(|c| (c.id, c.at_ms));
            Ok(History {
                changes,
                matching,
                reaches,
                dropped: log.header.first_id > 1,
                limit: journal_limit,
                checkpoints: log.checkpoints.clone(),
                migrated: log.header.migrated.clone(),
            })
        })
    }

    /// The texts of two states of a file (an absent one is empty), for a diff; `None` when either
    /// is a directory, not kept, over 1 MiB or not UTF-8.
    pub fn texts(&self, before: &State, after: &State) -> Result<Option<(String, String)>, JournalError> {
        let wanted = |state: &State| match state {
            State::Absent => Some(None),
            State::File { hash, kept: true, size, .. } if *size <= 1 << 20 => blob::from_hex(hash).map(Some),
            _ => None,
        };
        let (Some(a), Some(b)) = (wanted(before), wanted(after)) else { return Ok(None) };
        self.with_log(|log, _| {
            let mut text = |hash: Option<Digest>| match hash {
                None => Some(String::new()),
                Some(hash) => log.content(&hash).ok().and_then(|bytes| String::from_utf8(bytes).ok()),
            };
            let before = text(a);
            Ok(before.zip(text(b)))
        })
    }

    /// Marks change `id` as not made: its mutation failed after the journal took it.
    pub fn void(&self, id: u64) -> Result<(), JournalError> {
        self.with_log(|log, _| {
            let mut bytes = Vec::new();
            log::frame(Kind::Void, &id.to_le_bytes(), &mut bytes);
            log.append(&bytes).map(drop).map_err(|source| JournalError::Io { action: "written", source })
        })
    }

    /// Marks the state after the newest change as `name`.
    pub fn checkpoint(&self, name: &str) -> Result<Checkpoint, JournalError> {
        if name.trim().is_empty() {
            return Err(JournalError::EmptyCheckpoint);
        }
        self.with_log(|log, _| {
            if let Some(existing) = log.checkpoints.iter().find(|c| c.name == name) {
                return Err(JournalError::DuplicateCheckpoint { name: name.to_owned(), after: existing.after });
            }
            let checkpoint = Checkpoint {
                name: name.to_owned(),
                after: log.next_id() - 1,
                at_ms: chrono::Utc::now().timestamp_millis(),
            };
            let mut bytes = Vec::new();
            log::json_frame(Kind::Checkpoint, &checkpoint, &mut bytes);
            log.append(&bytes).map_err(|source| JournalError::Io { action: "written", source })?;
            Ok(checkpoint)
        })
    }
}

fn conflict_list(files: &[(String, u64)]) -> String {
    let each: Vec<String> = files
        .iter()
        .map(|(path, id)| format!("`{path}` differs from what the journal recorded after change #{id}"))
        .collect();
    each.join("; ")
}

/// Whether the qualified path `path` is `filter` or lies below it.
pub fn under(path: &str, filter: &str) -> bool {
    let filter = filter.trim_end_matches('/');
    path == filter || path.strip_prefix(filter).is_some_and(|rest| rest.starts_with('/'))
}

/// For each change undone by a later revert, the first revert that undid it.
fn reverted_by(changes: &[Arc<Change>]) -> HashMap<u64, u64> {
    let mut res = HashMap::new();
    for change in changes {
        if let Some(target) = &change.revert {
            for undone in changes.iter().filter(|c| c.id >= target.from_change && c.id < change.id) {
                res.entry(undone.id).or_insert(change.id);
            }
        }
    }
    res
}

fn content_len(snapshot: &Snapshot<'_>) -> usize {
    match snapshot {
        Snapshot::File { bytes, .. } => bytes.len(),
        _ => 0,
    }
}

trait Swap {
    fn swap(self) -> Self;
}

impl Swap for (u64, u64) {
    fn swap(self) -> (u64, u64) {
        (self.1, self.0)
    }
}

/// The blobs one change adds.
struct Batch {
    bytes: Vec<u8>,
    /// Blobs of this batch: hash, and its chain figures (offsets relative to the batch).
    new: HashMap<Digest, state::BlobInfo>,
    keep: bool,
}

impl Batch {
    /// The state of `snapshot`, storing its content unless the journal has it; an `after`
    /// content is stored as a delta on `base` when they share most bytes.
    fn state(&mut self, log: &Loaded, snapshot: &Snapshot<'_>, base: Option<(&Snapshot<'_>, &State)>) -> State {
        let (bytes, mode) = match snapshot {
            Snapshot::Absent => return State::Absent,
            Snapshot::Directory { mode } => return State::Directory { mode: *mode },
            Snapshot::Unread { mode, size } => {
                return State::File { hash: String::new(), mode: *mode, size: *size, kept: false };
            }
            Snapshot::File { bytes, mode } => (bytes, *mode),
        };
        let hash = blob::digest(bytes);
        let state = State::File { hash: blob::to_hex(&hash), mode, size: bytes.len() as u64, kept: self.keep };
        if !self.keep || log.blobs.contains_key(&hash) || self.new.contains_key(&hash) {
            return state;
        }
        let delta = base.and_then(|base| match base {
            (Snapshot::File { bytes: base, .. }, State::File { hash: base_hex, .. }) => {
                let base_hash = blob::from_hex(base_hex)?;
                let info = log.blobs.get(&base_hash).or_else(|| self.new.get(&base_hash))?;
                // A delta chain is decoded from its full root: it may grow to 8 times the root's
                // payload and to a depth whose decoding copies at most about 256 MiB.
                let room = info.root.max(4096) * 8;
                let depth = ((256usize << 20) / bytes.len().max(1)).clamp(16, 2000);
                if info.depth as usize >= depth || info.chain > room {
                    return None;
                }
                blob::encode_delta(&hash, bytes, &base_hash, base).map(|payload| (payload, *info, base_hash))
            }
            _ => None,
        });
        let (payload, info) = match delta {
            Some((payload, parent, base_hash)) => {
                let len = payload.len() as u64;
                let info = state::BlobInfo {
                    offset: 0,
                    len,
                    base: Some(base_hash),
                    depth: parent.depth + 1,
                    chain: parent.chain + len,
                    root: parent.root,
                };
                (payload, info)
            }
            None => {
                let payload = blob::encode_full(&hash, bytes);
                let len = payload.len() as u64;
                (payload, state::BlobInfo { offset: 0, len, base: None, depth: 0, chain: len, root: len })
            }
        };
        log::frame(Kind::Blob, &payload, &mut self.bytes);
        self.new.insert(hash, info);
        state
    }
}

//! `workspace_revert`: go back to the state before a change (undoing it and every later one) or
//! at a checkpoint, for every path or only some, as one new change of the journal (so reverting
//! a revert is redo).
//!
//! Each path gets the state before its earliest change in the range, byte for byte with its mode.
//! Before anything is written, every path must still be as the journal last recorded it; when one
//! is not (changed outside ForgeMCP), the whole revert is refused and nothing changes, unless
//! `force` is set, and then the current content is what the revert change records as "before".
//! A file that still holds the content before its last change, when that change was a write or
//! edit, is not taken as changed outside: that write's server died between the journal's flush
//! and the file's rename, which run side by side (`capture.rs`), so the change was not made.
//! A directory to remove that still holds entries the journal never recorded is kept.
//!
//! Architecture invariant: a revert is a workspace mutation like the others: one exclusive
//! session, link-safe walks from the root handles, protected paths refused, observers told.

use std::collections::BTreeMap;
use std::io::Read;

use super::model::{Action, RevertTarget, State};
use super::state::Loaded;
use super::{JournalError, Snapshot, Touched, blob};
use crate::call::Call;
use crate::workspace::diff::{self, FileDiff};
use crate::workspace::fsat::{Kind, Stat};
use crate::workspace::mutate::Session;
use crate::workspace::observer::{Affected, EntryKind, Mutation, MutationKind};
use crate::workspace::path::{QualifiedPath, ResolveError};
use crate::workspace::{Error, WorkspaceService};

/// Where to go back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RevertTo {
    /// The state before this change.
    Change(u64),
    /// The state at this checkpoint.
    Checkpoint(String),
}

/// A revert as the tool asks for it.
#[derive(Debug, Clone)]
pub struct RevertRequest {
    pub to: RevertTo,
    /// Only these paths (and what lies below them); empty: every path.
    pub paths: Vec<QualifiedPath>,
    pub dry_run: bool,
    pub force: bool,
}

/// One path a revert changed (or, in a dry run, would change).
#[derive(Debug, Clone)]
pub struct RevertedPath {
    pub path: QualifiedPath,
    pub action: Action,
    pub directory: bool,
    /// The line diff from the current to the restored content (text files only).
    pub diff: Option<FileDiff>,
    pub added: u64,
    pub removed: u64,
    /// Changed outside ForgeMCP since the journal's last record of it (only with `force`).
    pub outside: bool,
}

/// The outcome of a revert.
#[derive(Debug, Clone)]
pub struct RevertOutcome {
    /// The first change undone.
    pub from_change: u64,
    pub checkpoint: Option<String>,
    pub dry_run: bool,
    /// The revert's own change id (`None` for a dry run or when nothing changed).
    pub change: Option<u64>,
    pub paths: Vec<RevertedPath>,
    /// Directories left in place because they hold entries the journal never recorded.
    pub kept_directories: Vec<QualifiedPath>,
}

/// One path to restore.
struct Planned {
    path: QualifiedPath,
    target: State,
    bytes: Option<Vec<u8>>,
    expected: State,
    /// The state before the last change when that change was a write or edit: its file may
    /// still hold it when the server died between the journal's flush and the file's rename
    /// (they run side by side), and then the change was not made rather than made outside.
    unmade: Option<State>,
    last_change: u64,
}

/// A path as it is on disk now.
struct Current {
    state: State,
    bytes: Option<Vec<u8>>,
    stat: Option<Stat>,
}

impl WorkspaceService {
    /// Reverts as `request` says (see the module docs).
    pub fn revert(&self, request: &RevertRequest, call: &Call) -> Result<RevertOutcome, Error> {
        let journal = self.journal().ok_or(Error::Journal(JournalError::Off))?.clone();
        call.progress.report(0.0, Some(1.0), "Reverting".to_owned());
        let session = self.begin_mutation();
        let (from_change, planned) = journal.with_log(|log, _| plan(log, request))?;
        let mut conflicts = Vec::new();
        let mut steps = Vec::new();
        for item in planned {
            let current = current(&session, &item.path)?;
            if current.state.same_as(&item.target) {
                continue;
            }
            let unmade = item.unmade.as_ref().is_some_and(|before| current.state.same_as(before));
            let outside = !current.state.same_as(&item.expected) && !unmade;
            if outside {
                conflicts.push((item.path.to_string(), item.last_change));
            }
            steps.push((item, current, outside));
        }
        if !conflicts.is_empty() && !request.force {
            return Err(Error::Journal(JournalError::Conflicts { files: conflicts }));
        }
        let checkpoint = match &request.to {
            RevertTo::Checkpoint(name) => Some(name.clone()),
            RevertTo::Change(_) => None,
        };
        let mut outcome = RevertOutcome {
            from_change,
            checkpoint: checkpoint.clone(),
            dry_run: request.dry_run,
            change: None,
            paths: steps.iter().map(|(item, current, outside)| reverted(item, current, *outside)).collect(),
            kept_directories: Vec::new(),
        };
        if request.dry_run || steps.is_empty() {
            return Ok(outcome);
        }
        let applied = apply(&session, &steps, &mut outcome.kept_directories)?;
        outcome.paths.retain(|p| !outcome.kept_directories.contains(&p.path));
        let touched: Vec<Touched<'_>> = steps
            .iter()
            .filter(|(item, _, _)| applied.contains(&item.path))
            .map(|(item, current, _)| Touched {
                path: item.path.clone(),
                moved: None,
                before: snapshot(&current.state, current.bytes.as_deref()),
                after: snapshot(&item.target, item.bytes.as_deref()),
            })
            .collect();
        let target =
            RevertTarget { from_change, checkpoint, paths: request.paths.iter().map(ToString::to_string).collect() };
        outcome.change = journal.record(call.author(), Some(target), &touched)?.map(|c| c.id);
        drop(session);
        call.progress.report(1.0, Some(1.0), "Reverted".to_owned());
        Ok(outcome)
    }
}

/// The first change to undo and each path's target, expected state and content.
fn plan(log: &mut Loaded, request: &RevertRequest) -> Result<(u64, Vec<Planned>), JournalError> {
    let newest = log.next_id() - 1;
    let first = log.first_id();
    let from = match &request.to {
        RevertTo::Change(id) => {
            if *id == 0 || *id > newest {
                return Err(JournalError::UnknownChange { id: *id, newest });
            }
            if *id < first {
                return Err(JournalError::TooOld { id: *id, first });
            }
            *id
        }
        RevertTo::Checkpoint(name) => {
            let Some(checkpoint) = log.checkpoints.iter().find(|c| &c.name == name) else {
                let names: Vec<String> = log.checkpoints.iter().map(|c| format!("`{}`", c.name)).collect();
                let known = if names.is_empty() {
                    " (there are none)".to_owned()
                } else {
                    format!(" (known: {})", names.join(", "))
                };
                return Err(JournalError::UnknownCheckpoint { name: name.clone(), known });
            };
            if checkpoint.after + 1 < first {
                return Err(JournalError::CheckpointTooOld { name: name.clone(), first });
            }
            checkpoint.after + 1
        }
    };
    let mut paths: BTreeMap<String, Planned> = BTreeMap::new();
    let index = log.index_of(from);
    let undone = log.changes_from(index).map_err(|source| JournalError::Io { action: "read", source })?;
    for change in &undone {
        for entry in &change.paths {
            let wanted = request.paths.is_empty()
                || request.paths.iter().any(|filter| super::under(&entry.path, &filter.to_string()));
            let Some(path) = wanted.then(|| QualifiedPath::parse(&entry.path).ok()).flatten() else { continue };
            let item = paths.entry(entry.path.clone()).or_insert_with(|| Planned {
                path,
                target: entry.before.clone(),
                bytes: None,
                expected: entry.after.clone(),
                unmade: None,
                last_change: change.id,
            });
            item.expected = entry.after.clone();
            item.last_change = change.id;
            let write = change.paths.len() == 1 && matches!(entry.action, Action::Created | Action::Modified);
            item.unmade = write.then(|| entry.before.clone());
        }
    }
    let mut res = Vec::with_capacity(paths.len());
    for (name, mut item) in paths {
        if let State::File { hash, kept, .. } = &item.target {
            let when = format!("before change #{from}");
            if !kept {
                return Err(JournalError::NotKept { path: name, when });
            }
            let digest = blob::from_hex(hash).ok_or(JournalError::Content {
                path: name.clone(),
                when: when.clone(),
                reason: super::state::ContentError::Missing,
            })?;
            item.bytes = Some(log.content(&digest).map_err(|reason| JournalError::Content {
                path: name.clone(),
                when,
                reason,
            })?);
        }
        res.push(item);
    }
    Ok((from, res))
}

/// What `path` holds now, read through the session (never following a link).
fn current(session: &Session<'_>, path: &QualifiedPath) -> Result<Current, Error> {
    let absent = Current { state: State::Absent, bytes: None, stat: None };
    let anchor = match session.anchor(path) {
        Ok(anchor) => anchor,
        Err(Error::MissingParent { .. } | Error::Resolve(ResolveError::NotFound { .. })) => return Ok(absent),
        Err(err) => return Err(err.for_argument("paths")),
    };
    let Some(stat) = session.stat(&anchor)? else { return Ok(absent) };
    if stat.kind == Kind::Directory {
        return Ok(Current { state: State::Directory { mode: stat.mode }, bytes: None, stat: Some(stat) });
    }
    session.check_changeable_file(path, &stat).map_err(|e| e.for_argument("paths"))?;
    let mut bytes = Vec::new();
    anchor
        .parent
        .open_file(&anchor.name, &stat)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| Error::io(path, e))?;
    let state = State::File {
        hash: blob::to_hex(&blob::digest(&bytes)),
        mode: stat.mode,
        size: bytes.len() as u64,
        kept: true,
    };
    Ok(Current { state, bytes: Some(bytes), stat: Some(stat) })
}

fn reverted(item: &Planned, current: &Current, outside: bool) -> RevertedPath {
    let text = |bytes: Option<&[u8]>| std::str::from_utf8(bytes.unwrap_or_default()).ok().map(str::to_owned);
    let (before, after) = (current.bytes.as_deref(), item.bytes.as_deref());
    let diff = match (&current.state, &item.target) {
        (State::Directory { .. }, _) | (_, State::Directory { .. }) => None,
        _ => text(before).zip(text(after)).map(|(b, a)| diff::diff_texts(&item.path, &b, &a)),
    };
    let (added, removed) = blob::line_delta(before.unwrap_or_default(), after.unwrap_or_default());
    RevertedPath {
        path: item.path.clone(),
        action: Action::between(&current.state, &item.target),
        directory: matches!(item.target, State::Directory { .. }) || matches!(current.state, State::Directory { .. }),
        diff,
        added,
        removed,
        outside,
    }
}

fn snapshot<'a>(state: &State, bytes: Option<&'a [u8]>) -> Snapshot<'a> {
    match state {
        State::Absent => Snapshot::Absent,
        State::Directory { mode } => Snapshot::Directory { mode: *mode },
        State::File { mode, .. } => Snapshot::File { bytes: bytes.unwrap_or_default().into(), mode: *mode },
    }
}

/// Removes what must go (deepest first), then creates directories (outermost first) and writes
/// files. Returns the paths it changed.
fn apply(
    session: &Session<'_>,
    steps: &[(Planned, Current, bool)],
    kept: &mut Vec<QualifiedPath>,
) -> Result<Vec<QualifiedPath>, Error> {
    let depth = |p: &QualifiedPath| p.components().count();
    let mut applied = Vec::new();
    let mut removals: Vec<&(Planned, Current, bool)> = steps
        .iter()
        .filter(|(item, current, _)| {
            !current.state.is_absent() && std::mem::discriminant(&current.state) != std::mem::discriminant(&item.target)
        })
        .collect();
    removals.sort_by_key(|(item, _, _)| std::cmp::Reverse(depth(&item.path)));
    for (item, current, _) in removals {
        let anchor = session.anchor(&item.path)?;
        session.revalidate(&anchor)?;
        let (outcome, kind) = match current.state {
            State::Directory { .. } => (anchor.parent.remove_dir(&anchor.name), EntryKind::Directory),
            _ => (anchor.parent.unlink(&anchor.name), EntryKind::File),
        };
        match outcome {
            Ok(()) => {}
            Err(_) if kind == EntryKind::Directory && item.target.is_absent() => {
                kept.push(item.path.clone());
                continue;
            }
            Err(e) => return Err(Error::mutate("delete", &item.path, e)),
        }
        let before = vec![Affected { path: item.path.clone(), kind }];
        session.notify(&Mutation { kind: MutationKind::Deleted, before, after: Vec::new() });
        applied.push(item.path.clone());
    }
    let mut creations: Vec<&(Planned, Current, bool)> =
        steps.iter().filter(|(item, _, _)| !item.target.is_absent()).collect();
    creations.sort_by_key(|(item, _, _)| (matches!(item.target, State::File { .. }), depth(&item.path)));
    for (item, current, _) in creations {
        let anchor = session.anchor(&item.path)?;
        let affected = |kind| vec![Affected { path: item.path.clone(), kind }];
        match &item.target {
            State::Directory { mode } => {
                let existed = matches!(current.state, State::Directory { .. });
                if !existed {
                    anchor.parent.mkdir(&anchor.name).map_err(|e| Error::mutate("create", &item.path, e))?;
                }
                let dir =
                    anchor.parent.open_dir(&anchor.name).map_err(|_| Error::Changed { path: item.path.clone() })?;
                dir.set_mode(*mode).map_err(|e| Error::mutate("set the permissions of", &item.path, e))?;
                if !existed {
                    let after = affected(EntryKind::Directory);
                    session.notify(&Mutation { kind: MutationKind::DirCreated, before: Vec::new(), after });
                }
            }
            State::File { mode, .. } => {
                let previous = current.stat.filter(|s| s.kind == Kind::File);
                let bytes = item.bytes.as_deref().unwrap_or_default();
                session.replace_file_with_mode(&anchor, bytes, previous.as_ref(), Some(*mode))?;
                let (kind, before) = match previous {
                    Some(_) => (MutationKind::Written, affected(EntryKind::File)),
                    None => (MutationKind::Created, Vec::new()),
                };
                session.notify(&Mutation { kind, before, after: affected(EntryKind::File) });
            }
            State::Absent => {}
        }
        if !applied.contains(&item.path) {
            applied.push(item.path.clone());
        }
    }
    Ok(applied)
}

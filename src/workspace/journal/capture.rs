//! The mutations' side of the journal: what a write, edit, move, delete or mkdir hands over, read
//! through the session's held directory handles (never by path), recorded before the session ends.
//!
//! Architecture invariant: a mutation records after its change is on disk and before it returns;
//! a journal that cannot be written fails the call (its text says the change was made).

use std::borrow::Cow;
use std::ffi::OsStr;
use std::io::Read;

use super::model::Action;
use super::{Snapshot, Touched};
use crate::call::Call;
use crate::workspace::fsat::{Dir, Kind, Stat};
use crate::workspace::mutate::{Anchor, Session, TreeEntry};
use crate::workspace::observer::EntryKind;
use crate::workspace::path::QualifiedPath;
use crate::workspace::{Error, WorkspaceService};

/// A snapshot of a file's content and mode.
pub fn file<'a>(bytes: impl Into<Cow<'a, [u8]>>, stat: &Stat) -> Snapshot<'a> {
    Snapshot::File { bytes: bytes.into(), mode: stat.mode }
}

impl WorkspaceService {
    /// Whether mutations are journaled.
    pub(crate) fn journaling(&self) -> bool {
        self.journal.is_some()
    }
}

impl Session<'_> {
    /// Records `touched` as one change of `call`'s author.
    pub fn record(&self, call: &Call, touched: &[Touched<'_>]) -> Result<(), Error> {
        let Some(journal) = self.workspace().journal() else { return Ok(()) };
        journal.record(call.author(), None, touched).map(drop).map_err(Error::from)
    }

    /// Replaces the file the anchor names with `after` (as `Session::replace_file`) and records
    /// the write or edit: its content before (`None`: it is created) and `after`, with the mode the
    /// new file gets. The journal's record is hashed, appended and flushed on a second thread
    /// while the file is flushed and renamed, so a journaled write costs about one flush more than
    /// an unjournaled one only when the journal's is the slower; both are durable before this
    /// returns. When the replacement fails after the journal took the change, the change is voided.
    pub fn replace_and_record(
        &self,
        call: &Call,
        anchor: &Anchor,
        before: Option<(&Stat, &[u8])>,
        after: &[u8],
    ) -> Result<(), Error> {
        let previous = before.map(|(stat, _)| stat);
        let Some(journal) = self.workspace().journal() else {
            return self.replace_file(anchor, after, previous);
        };
        let author = call.author();
        let record = |mode: u32| {
            let touched = Touched {
                path: anchor.path.clone(),
                moved: None,
                before: before.map_or(Snapshot::Absent, |(stat, bytes)| file(bytes, stat)),
                after: Snapshot::File { bytes: after.into(), mode },
            };
            journal.record(author, None, &[touched])
        };
        match self.replace_file_beside(anchor, after, previous, None, Some(record)) {
            (Ok(()), Some(recorded)) => recorded.map(drop).map_err(Error::from),
            (Err(err), Some(Ok(Some(change)))) => {
                if let Err(void) = journal.void(change.id) {
                    tracing::warn!(%void, id = change.id, "voiding a journal change whose write failed failed");
                }
                Err(err)
            }
            (res, _) => res,
        }
    }

    /// Records the directories `created` (outermost first).
    pub fn record_dirs(&self, call: &Call, created: &[QualifiedPath]) -> Result<(), Error> {
        if !self.workspace().journaling() || created.is_empty() {
            return Ok(());
        }
        let mut touched = Vec::with_capacity(created.len());
        for path in created.iter().filter(|p| !p.is_area_root()) {
            let anchor = self.anchor(path)?;
            let mode = self.stat(&anchor)?.map_or(0o755, |stat| stat.mode);
            touched.push(Touched {
                path: path.clone(),
                moved: None,
                before: Snapshot::Absent,
                after: Snapshot::Directory { mode },
            });
        }
        self.record(call, &touched)
    }

    /// The snapshots of the entry the anchor names (a file, or a directory and everything in it,
    /// as `entries` from `scan_tree`), in the order of `mutate::affected`. Empty when not
    /// journaling.
    pub fn capture(
        &self,
        anchor: &Anchor,
        stat: &Stat,
        entries: &[TreeEntry],
    ) -> Result<Vec<(QualifiedPath, Snapshot<'static>)>, Error> {
        if !self.workspace().journaling() {
            return Ok(Vec::new());
        }
        let path = &anchor.path;
        if stat.kind != Kind::Directory {
            return Ok(vec![(path.clone(), file(read_file(&anchor.parent, &anchor.name, stat, path)?, stat))]);
        }
        let dir = anchor.parent.open_dir(&anchor.name).map_err(|_| Error::Changed { path: path.clone() })?;
        let mut res = vec![(path.clone(), Snapshot::Directory { mode: stat.mode })];
        let limit = self.workspace().journal().map_or(0, |j| j.limit());
        let mut budget = Budget { left: limit / 2, exceeded: false };
        capture_entries(&dir, path, entries, &mut budget, &mut res)?;
        if budget.exceeded {
            // Too large to keep: no content is kept, and none is held in memory any longer.
            for (_, snapshot) in &mut res {
                if let Snapshot::File { bytes, mode } = snapshot {
                    *snapshot = Snapshot::Unread { mode: *mode, size: bytes.len() as u64 };
                }
            }
        }
        Ok(res)
    }

    /// Records a move of `captured` (snapshots at `source`, as `capture` returned them) to
    /// `destination`.
    pub fn record_move(
        &self,
        call: &Call,
        source: &QualifiedPath,
        destination: &QualifiedPath,
        captured: Vec<(QualifiedPath, Snapshot<'static>)>,
    ) -> Result<(), Error> {
        let mut touched = Vec::with_capacity(captured.len() * 2);
        for (path, snapshot) in captured {
            let rel = path.to_string()[source.to_string().len()..].trim_start_matches('/').to_owned();
            let Some(to) = (if rel.is_empty() { Some(destination.clone()) } else { destination.join_relative(&rel) })
            else {
                continue;
            };
            touched.push(Touched {
                path: path.clone(),
                moved: Some((Action::MovedTo, to.clone())),
                before: snapshot.clone(),
                after: Snapshot::Absent,
            });
            touched.push(Touched {
                path: to,
                moved: Some((Action::MovedFrom, path)),
                before: Snapshot::Absent,
                after: snapshot,
            });
        }
        self.record(call, &touched)
    }

    /// Records the deletion of those `captured` snapshots whose paths `went` lists.
    pub fn record_deleted(
        &self,
        call: &Call,
        captured: Vec<(QualifiedPath, Snapshot<'static>)>,
        went: &[crate::workspace::observer::Affected],
    ) -> Result<(), Error> {
        let touched: Vec<Touched<'_>> = captured
            .into_iter()
            .filter(|(path, _)| went.iter().any(|a| &a.path == path))
            .map(|(path, before)| Touched { path, moved: None, before, after: Snapshot::Absent })
            .collect();
        self.record(call, &touched)
    }
}

/// How many content bytes a tree's capture may still read (half the journal's limit: a larger
/// change is recorded without its contents).
struct Budget {
    left: u64,
    exceeded: bool,
}

fn capture_entries(
    dir: &Dir,
    root: &QualifiedPath,
    entries: &[TreeEntry],
    budget: &mut Budget,
    out: &mut Vec<(QualifiedPath, Snapshot<'static>)>,
) -> Result<(), Error> {
    for entry in entries {
        let Some(path) = root.join_relative(&entry.rel).filter(|_| entry.exact) else { continue };
        match entry.kind {
            EntryKind::File => {
                let mut file_handle = dir.open_file(&entry.name, &entry.stat).map_err(|e| Error::io(&path, e))?;
                let size = file_handle.metadata().map_err(|e| Error::io(&path, e))?.len();
                if budget.exceeded || size > budget.left {
                    budget.exceeded = true;
                    out.push((path, Snapshot::Unread { mode: entry.stat.mode, size }));
                    continue;
                }
                let mut bytes = Vec::with_capacity(size as usize);
                file_handle.read_to_end(&mut bytes).map_err(|e| Error::io(&path, e))?;
                budget.left = budget.left.saturating_sub(bytes.len() as u64);
                out.push((path, file(bytes, &entry.stat)));
            }
            EntryKind::Directory => {
                out.push((path.clone(), Snapshot::Directory { mode: entry.stat.mode }));
                let child = dir.open_dir(&entry.name).map_err(|_| Error::Changed { path: path.clone() })?;
                capture_entries(&child, root, &entry.children, budget, out)?;
            }
            EntryKind::Other => {}
        }
    }
    Ok(())
}

fn read_file(dir: &Dir, name: &OsStr, stat: &Stat, path: &QualifiedPath) -> Result<Vec<u8>, Error> {
    let mut bytes = Vec::new();
    dir.open_file(name, stat).and_then(|mut f| f.read_to_end(&mut bytes)).map_err(|e| Error::io(path, e))?;
    Ok(bytes)
}

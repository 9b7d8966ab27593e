//! `workspace_delete`: remove a file, or a directory tree with `recursive`.
//!
//! A non-empty directory needs `recursive: true`. The whole tree is scanned first, without
//! following anything; a tree containing a link, a hard-linked file or a protected path is refused
//! before anything is removed. Removal then works bottom-up through directory handles and removes
//! only the entries the scan saw, each re-checked just before it goes. A link is never deleted,
//! alone or inside a tree.

use crate::call::Call;
use crate::workspace::fsat::{Dir, Kind, OpenDirError};
use crate::workspace::mutate::{PathAction, PathOperation, TreeEntry, affected};
use crate::workspace::observer::{Affected, EntryKind, Mutation, MutationKind};
use crate::workspace::path::{QualifiedPath, ResolveError};
use crate::workspace::{Error, WorkspaceService};

impl WorkspaceService {
    /// Deletes the managed file or directory `path`. Progress: `0/1`, `1/1`.
    pub fn delete_path(&self, path: &QualifiedPath, recursive: bool, call: &Call) -> Result<PathOperation, Error> {
        let path_err = |e: Error| e.for_argument("path");
        self.check_removable(path).map_err(path_err)?;
        call.progress.report(0.0, Some(1.0), format!("Deleting {path}"));
        let session = self.begin_mutation();
        let anchor = session.anchor(path).map_err(|e| match e {
            Error::MissingParent { .. } => path_err(Error::Resolve(ResolveError::NotFound { path: path.clone() })),
            other => path_err(other),
        })?;
        let Some(stat) = session.stat(&anchor)? else {
            return Err(path_err(Error::Resolve(ResolveError::NotFound { path: path.clone() })));
        };
        if stat.kind != Kind::Directory {
            session.check_changeable_file(path, &stat).map_err(path_err)?;
            let captured = session.capture(&anchor, &stat, &[])?;
            session.revalidate(&anchor)?;
            anchor.parent.unlink(&anchor.name).map_err(|e| Error::mutate("delete", path, e))?;
            sync(&anchor.parent);
            let before = vec![Affected { path: path.clone(), kind: EntryKind::File }];
            session.notify(&Mutation { kind: MutationKind::Deleted, before: before.clone(), after: Vec::new() });
            session.record_deleted(call, captured, &before)?;
        } else {
            if let Some(protection) = session.protected_by_identity(&stat) {
                return Err(path_err(Error::Protected { path: path.clone(), owner: protection.owner }));
            }
            let dir = match anchor.parent.open_dir(&anchor.name) {
                Ok(dir) => dir,
                Err(OpenDirError::Io(e)) => return Err(Error::mutate("open", path, e)),
                Err(_) => return Err(Error::Changed { path: path.clone() }),
            };
            let entries = session.scan_tree(&dir, path, call).map_err(path_err)?;
            if !entries.is_empty() && !recursive {
                return Err(path_err(Error::DirectoryNotEmpty { path: path.clone() }));
            }
            if call.is_cancelled() {
                return Err(Error::Cancelled);
            }
            let captured = session.capture(&anchor, &stat, &entries)?;
            session.revalidate(&anchor)?;
            let mut removed = Vec::new();
            let outcome = remove_entries(&dir, path, &entries, &mut removed)
                .and_then(|()| anchor.parent.remove_dir(&anchor.name).map_err(|e| Error::mutate("delete", path, e)));
            sync(&anchor.parent);
            let before = match &outcome {
                Ok(()) => affected(path, EntryKind::Directory, &entries),
                Err(_) => {
                    // The directory itself is still there; report only what went.
                    let mut went = affected(path, EntryKind::Directory, &removed);
                    went.remove(0);
                    went
                }
            };
            if !before.is_empty() {
                session.notify(&Mutation { kind: MutationKind::Deleted, before: before.clone(), after: Vec::new() });
            }
            session.record_deleted(call, captured, &before)?;
            outcome?;
        }
        drop(session);
        call.progress.report(1.0, Some(1.0), format!("Deleted {path}"));
        Ok(PathOperation { path: path.clone(), action: PathAction::Deleted, source: None })
    }
}

/// Removes the scanned `entries` of `dir` bottom-up, collecting what was removed (as entries
/// without children, each directory after its contents).
fn remove_entries(
    dir: &Dir,
    root: &QualifiedPath,
    entries: &[TreeEntry],
    removed: &mut Vec<TreeEntry>,
) -> Result<(), Error> {
    for entry in entries {
        let here = root.join_relative(&entry.rel).unwrap_or_else(|| root.clone());
        let now = dir.stat(&entry.name).map_err(|e| Error::io(&here, e))?;
        let same =
            now.is_some_and(|now| now.id == entry.stat.id && now.kind == entry.stat.kind && now.kind != Kind::Link);
        if !same {
            return Err(Error::Changed { path: here });
        }
        if entry.stat.kind == Kind::Directory {
            let child = dir.open_dir(&entry.name).map_err(|err| match err {
                OpenDirError::Io(e) => Error::mutate("open", &here, e),
                _ => Error::Changed { path: here.clone() },
            })?;
            remove_entries(&child, root, &entry.children, removed)?;
            dir.remove_dir(&entry.name).map_err(|e| Error::mutate("delete", &here, e))?;
        } else {
            dir.unlink(&entry.name).map_err(|e| Error::mutate("delete", &here, e))?;
        }
        removed.push(TreeEntry {
            rel: entry.rel.clone(),
            name: entry.name.clone(),
            exact: entry.exact,
            kind: entry.kind,
            stat: entry.stat,
            children: Vec::new(),
        });
    }
    Ok(())
}

fn sync(dir: &Dir) {
    if let Err(err) = dir.sync() {
        tracing::debug!(%err, "syncing a directory after a removal failed");
    }
}

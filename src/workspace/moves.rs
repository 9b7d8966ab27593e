//! `workspace_move`: move a file or a directory tree within one root.
//!
//! The destination must not exist and its parent must; the rename is atomic and never replaces an
//! entry (`RENAME_NOREPLACE` where the platform has it). Refused: roots, ancestors of the storage
//! root, protected paths and their ancestors (as source or destination), a link as the source, a
//! tree containing links (checked whole, without following any, before anything moves), a hard-linked
//! file, and a directory moved into itself.

use crate::call::Call;
use crate::workspace::fsat::{Kind, OpenDirError};
use crate::workspace::mutate::{PathAction, PathOperation, affected, check_managed};
use crate::workspace::observer::{EntryKind, Mutation, MutationKind};
use crate::workspace::path::{QualifiedPath, ResolveError};
use crate::workspace::{Error, WorkspaceService};

impl WorkspaceService {
    /// Refuses moving or deleting `path`: roots, ancestors of the storage root, protected paths
    /// and their ancestors.
    pub(crate) fn check_removable(&self, path: &QualifiedPath) -> Result<(), Error> {
        check_managed(path)?;
        if path.is_area_root() {
            return Err(Error::AreaRoot { path: path.clone() });
        }
        if let Some(storage) = self.roots.qualify(self.roots.storage())
            && !storage.is_area_root()
            && storage.starts_with(path)
        {
            return Err(Error::ContainsStorage { path: path.clone() });
        }
        if let Some(protection) = self.protected.guarding_tree(path) {
            if path.starts_with(&protection.path) {
                return Err(Error::Protected { path: path.clone(), owner: protection.owner });
            }
            return Err(Error::ContainsProtected {
                path: path.clone(),
                protected: protection.path,
                owner: protection.owner,
            });
        }
        Ok(())
    }

    /// Moves `source` to `destination` (same root). Progress: `0/1`, `1/1`.
    pub fn move_path(
        &self,
        source: &QualifiedPath,
        destination: &QualifiedPath,
        call: &Call,
    ) -> Result<PathOperation, Error> {
        let src_err = |e: Error| e.for_argument("source");
        let dst_err = |e: Error| e.for_argument("destination");
        self.check_removable(source).map_err(src_err)?;
        check_managed(destination).map_err(dst_err)?;
        if destination.area() != source.area() {
            return Err(dst_err(Error::DifferentAreas { from: source.clone(), to: destination.clone() }));
        }
        if destination.starts_with(source) {
            return Err(dst_err(Error::IntoItself { from: source.clone(), to: destination.clone() }));
        }
        if destination.is_area_root() {
            return Err(dst_err(Error::AlreadyExists { path: destination.clone() }));
        }
        // The destination becomes a new path: it must not be, lie in, or contain a protected path.
        self.check_removable(destination).map_err(dst_err)?;

        call.progress.report(0.0, Some(1.0), format!("Moving {source}"));
        let session = self.begin_mutation();
        let from = session.anchor(source).map_err(|e| match e {
            Error::MissingParent { .. } => src_err(Error::Resolve(ResolveError::NotFound { path: source.clone() })),
            other => src_err(other),
        })?;
        let Some(stat) = session.stat(&from)? else {
            return Err(src_err(Error::Resolve(ResolveError::NotFound { path: source.clone() })));
        };
        let (root_kind, entries) = match stat.kind {
            Kind::Directory => {
                if let Some(protection) = session.protected_by_identity(&stat) {
                    return Err(src_err(Error::Protected { path: source.clone(), owner: protection.owner }));
                }
                let dir = match from.parent.open_dir(&from.name) {
                    Ok(dir) => dir,
                    Err(OpenDirError::Io(e)) => return Err(Error::mutate("open", source, e)),
                    Err(_) => return Err(Error::Changed { path: source.clone() }),
                };
                (EntryKind::Directory, session.scan_tree(&dir, source, call).map_err(src_err)?)
            }
            _ => {
                session.check_changeable_file(source, &stat).map_err(src_err)?;
                (EntryKind::File, Vec::new())
            }
        };
        let to = session.anchor(destination).map_err(dst_err)?;
        if session.stat(&to)?.is_some() {
            return Err(dst_err(Error::AlreadyExists { path: destination.clone() }));
        }
        if call.is_cancelled() {
            return Err(Error::Cancelled);
        }
        let captured = session.capture(&from, &stat, &entries)?;
        session.revalidate(&from)?;
        session.revalidate(&to)?;
        if session.stat(&from)?.map(|now| now.id) != Some(stat.id) {
            return Err(Error::Changed { path: source.clone() });
        }
        from.parent.rename_noreplace(&from.name, &to.parent, &to.name).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => dst_err(Error::AlreadyExists { path: destination.clone() }),
            _ => Error::mutate("move", source, e),
        })?;
        if let Err(err) = from.parent.sync().and_then(|()| to.parent.sync()) {
            tracing::debug!(%err, "syncing directories after a move failed");
        }
        let before = affected(source, root_kind, &entries);
        let after = affected(destination, root_kind, &entries);
        let kind = MutationKind::Moved { from: source.clone(), to: destination.clone() };
        session.notify(&Mutation { kind, before, after });
        session.record_move(call, source, destination, captured)?;
        drop(session);

        call.progress.report(1.0, Some(1.0), format!("Moved {source}"));
        Ok(PathOperation { path: destination.clone(), action: PathAction::Moved, source: Some(source.clone()) })
    }
}

//! `workspace_mkdir`: create a directory and its missing parents.
//!
//! The walk opens each existing component without following links and creates each missing one
//! with `mkdirat` relative to its parent's handle, then opens it the same way. A link anywhere on
//! the path (including the final component, even when it points to a directory) or a
//! non-directory is an error; an existing directory is `already_exists`.

use std::ffi::OsStr;

use crate::call::Call;
use crate::workspace::fsat::{Dir, OpenDirError};
use crate::workspace::mutate::{PathAction, PathOperation, Session, check_managed};
use crate::workspace::observer::{Affected, EntryKind, Mutation, MutationKind};
use crate::workspace::path::{Area, QualifiedPath, ResolveError};
use crate::workspace::{Error, WorkspaceService};

impl WorkspaceService {
    /// Creates the managed directory `path` and its missing parents. Progress: `0/1`, `1/1`.
    pub fn make_dir(&self, path: &QualifiedPath, call: &Call) -> Result<PathOperation, Error> {
        self.make_dir_inner(path, call).map_err(|e| e.for_argument("path"))
    }

    fn make_dir_inner(&self, path: &QualifiedPath, call: &Call) -> Result<PathOperation, Error> {
        check_managed(path)?;
        if let Some(protection) = self.protected.guarding_contents(path) {
            return Err(Error::Protected { path: path.clone(), owner: protection.owner });
        }
        call.progress.report(0.0, Some(1.0), format!("Creating directory {path}"));
        let session = self.begin_mutation();
        let mut created = Vec::new();
        let storage_missing = std::fs::symlink_metadata(self.roots.storage()).is_err();
        let outcome = create_all(&session, path, &mut created);
        if path.area() == Area::Storage && storage_missing && self.roots.storage().is_dir() {
            // Storage is created on first use; here that use was this call.
            created.insert(0, QualifiedPath::area_root(Area::Storage));
        }
        if !created.is_empty() {
            let after = created.iter().map(|p| Affected { path: p.clone(), kind: EntryKind::Directory }).collect();
            session.notify(&Mutation { kind: MutationKind::DirCreated, before: Vec::new(), after });
        }
        session.record_dirs(call, &created)?;
        drop(session);
        outcome?;
        let action = if created.is_empty() { PathAction::AlreadyExists } else { PathAction::Created };
        call.progress.report(1.0, Some(1.0), format!("Created directory {path}"));
        Ok(PathOperation { path: path.clone(), action, source: None })
    }
}

/// Walks to `path`, creating missing directories; records each one created, outermost first.
fn create_all(session: &Session<'_>, path: &QualifiedPath, created: &mut Vec<QualifiedPath>) -> Result<(), Error> {
    let mut walked = QualifiedPath::area_root(path.area());
    let mut current = session.open_area(path.area())?;
    check_protected(session, &current, &walked)?;
    for name in path.components() {
        walked = walked.join_name(name).expect("components were validated at parse time");
        let name = OsStr::new(name);
        current = match current.open_dir(name) {
            Ok(next) => next,
            Err(OpenDirError::NotFound) => {
                match current.mkdir(name) {
                    Ok(()) => created.push(walked.clone()),
                    // Created by someone else in the meantime: use it if it is a directory.
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(Error::mutate("create", &walked, e)),
                }
                current.open_dir(name).map_err(|err| match err {
                    OpenDirError::Io(e) => Error::mutate("open", &walked, e),
                    _ => Error::Changed { path: walked.clone() },
                })?
            }
            Err(OpenDirError::Link) if &walked == path => return Err(Error::IsLink { path: walked }),
            Err(OpenDirError::Link) => {
                return Err(Error::Resolve(ResolveError::ThroughLink { path: path.clone(), link: walked }));
            }
            Err(OpenDirError::NotADirectory) => return Err(Error::NotADirectory { path: walked }),
            Err(OpenDirError::Io(e)) => return Err(Error::mutate("open", &walked, e)),
        };
        check_protected(session, &current, &walked)?;
    }
    Ok(())
}

fn check_protected(session: &Session<'_>, dir: &Dir, walked: &QualifiedPath) -> Result<(), Error> {
    let stat = dir.own_stat().map_err(|e| Error::mutate("inspect", walked, e))?;
    match session.protected_by_identity(&stat) {
        Some(protection) => Err(Error::Protected { path: walked.clone(), owner: protection.owner }),
        None => Ok(()),
    }
}

//! What every mutation shares: the exclusive session (lock, protected identities, notification),
//! argument checks, walking to a parent directory without following links, scanning a tree before
//! it is moved or deleted, and atomic replacement of a file's contents.
//!
//! Race safety: a session walks from the root's directory handle one component at a time with
//! no-follow opens (`fsat.rs`), and every final step names an entry of the held parent handle. A
//! component swapped for a link at any moment makes the walk fail; it is never followed. Before a
//! change is committed, the parent is walked to again from the root and must still be the same
//! directory, so a parent that another program moved away in the meantime is noticed too (what
//! remains is the instant between that check and the commit, which no descriptor-based API closes).
//!
//! Architecture invariant: nothing here builds an absolute path from user input; the roots are the
//! only absolute paths opened.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};

use parking_lot::RwLockWriteGuard;

use crate::call::Call;
use crate::workspace::fsat::{self, Dir, FileId, Kind, OpenDirError, Stat};
use crate::workspace::observer::{Affected, EntryKind, Mutation};
use crate::workspace::path::{Area, QualifiedPath, ResolveError};
use crate::workspace::protect::Protection;
use crate::workspace::read::decode_text;
use crate::workspace::{Error, WorkspaceService};

/// What a move, delete or mkdir did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathAction {
    Moved,
    Deleted,
    Created,
    AlreadyExists,
}

/// The outcome of a move, delete or mkdir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathOperation {
    /// The resulting path (the destination of a move).
    pub path: QualifiedPath,
    pub action: PathAction,
    /// The source of a move; `None` otherwise.
    pub source: Option<QualifiedPath>,
}

/// Refuses `root/` paths: they are read-only.
pub(crate) fn check_managed(path: &QualifiedPath) -> Result<(), Error> {
    if path.area() == Area::Root {
        return Err(Error::ExternalNotAllowed { path: path.clone() });
    }
    Ok(())
}

/// The number of lines of `text`: LF-terminated lines plus a final unterminated one.
pub fn line_count(text: &str) -> u64 {
    crate::workspace::read::split_lines(text).count() as u64
}

/// A parent directory held open, and the entry a mutation acts on.
pub(crate) struct Anchor {
    pub path: QualifiedPath,
    pub parent_path: QualifiedPath,
    pub parent: Dir,
    pub name: OsString,
}

/// One mutation in progress: holds the exclusive lock until it is dropped.
pub(crate) struct Session<'a> {
    ws: &'a WorkspaceService,
    _guard: RwLockWriteGuard<'a, ()>,
    protected_ids: HashMap<FileId, Protection>,
}

impl WorkspaceService {
    /// Starts a mutation: takes the exclusive lock and resolves the identities of the protected
    /// paths that exist, so aliases of them can be recognised during the walk.
    pub(crate) fn begin_mutation(&self) -> Session<'_> {
        let guard = self.write_lock();
        let mut session = Session { ws: self, _guard: guard, protected_ids: HashMap::new() };
        for protection in self.protected.list() {
            if let Some(id) = session.identity_of(&protection.path) {
                session.protected_ids.insert(id, protection);
            }
        }
        session
    }
}

/// What a walk is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// Reaching a directory to change something in it.
    Change,
    /// Looking only: nothing is created and protection is not checked.
    Inspect,
}

/// A directory walk that failed at `at`.
enum WalkError {
    NotFound,
    Link(QualifiedPath),
    NotADirectory(QualifiedPath),
    Protected(QualifiedPath, Protection),
    Io(QualifiedPath, std::io::Error),
}

impl Session<'_> {
    /// The service this session mutates.
    pub fn workspace(&self) -> &WorkspaceService {
        self.ws
    }

    /// The identity of an existing protected path, walked without following links.
    fn identity_of(&self, path: &QualifiedPath) -> Option<FileId> {
        if path.area() == Area::Root {
            return None;
        }
        let Some(parent) = path.parent() else {
            return self.open_root(path.area(), false).ok()?.own_stat().ok()?.id;
        };
        let dir = self.walk(&parent, Walk::Inspect).ok()?;
        dir.stat(OsStr::new(path.file_name()?)).ok()??.id
    }

    /// Opens the root directory of a managed area for a change (creating the storage root on
    /// first use).
    pub fn open_area(&self, area: Area) -> Result<Dir, Error> {
        self.open_root(area, true)
    }

    fn open_root(&self, area: Area, create_storage: bool) -> Result<Dir, Error> {
        let root_path = QualifiedPath::area_root(area);
        let abs = match area {
            Area::Project => self.ws.roots.project(),
            Area::Storage => {
                if create_storage {
                    self.ws.roots.ensure_storage().map_err(|e| Error::mutate("create", &root_path, e))?;
                }
                self.ws.roots.storage()
            }
            Area::Root => return Err(Error::ExternalNotAllowed { path: root_path }),
        };
        Dir::open_root(abs).map_err(|err| match err {
            OpenDirError::Io(e) => Error::mutate("open", &root_path, e),
            _ => Error::NotADirectory { path: root_path.clone() },
        })
    }

    /// Walks to the directory `dir`, one no-follow open per component. For a change, the storage
    /// root is created on first use and passing through a protected directory (or an alias of
    /// one) is refused.
    fn walk(&self, dir: &QualifiedPath, mode: Walk) -> Result<Dir, WalkError> {
        let check_protected = mode == Walk::Change;
        let root_path = QualifiedPath::area_root(dir.area());
        let mut current =
            self.open_root(dir.area(), check_protected).map_err(|e| WalkError::Io(root_path.clone(), to_io(e)))?;
        let mut walked = root_path;
        if check_protected {
            self.check_protected_dir(&current, &walked)?;
        }
        for name in dir.components() {
            walked = walked.join_name(name).expect("components were validated at parse time");
            current = match current.open_dir(OsStr::new(name)) {
                Ok(next) => next,
                Err(OpenDirError::NotFound) => return Err(WalkError::NotFound),
                Err(OpenDirError::Link) => return Err(WalkError::Link(walked)),
                Err(OpenDirError::NotADirectory) => return Err(WalkError::NotADirectory(walked)),
                Err(OpenDirError::Io(e)) => return Err(WalkError::Io(walked, e)),
            };
            if check_protected {
                self.check_protected_dir(&current, &walked)?;
            }
        }
        Ok(current)
    }

    fn check_protected_dir(&self, dir: &Dir, walked: &QualifiedPath) -> Result<(), WalkError> {
        if self.protected_ids.is_empty() {
            return Ok(());
        }
        let stat = dir.own_stat().map_err(|e| WalkError::Io(walked.clone(), e))?;
        match self.protected_by_identity(&stat) {
            Some(protection) => Err(WalkError::Protected(walked.clone(), protection)),
            None => Ok(()),
        }
    }

    /// The protection whose object `stat` describes, if any.
    pub fn protected_by_identity(&self, stat: &Stat) -> Option<Protection> {
        stat.id.and_then(|id| self.protected_ids.get(&id).cloned())
    }

    /// Opens the parent of `path` for a change of the entry `path` names. The parent must exist.
    pub fn anchor(&self, path: &QualifiedPath) -> Result<Anchor, Error> {
        let (Some(parent_path), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(Error::IsADirectory { path: path.clone() });
        };
        let parent = self.walk(&parent_path, Walk::Change).map_err(|err| match err {
            WalkError::NotFound => Error::MissingParent { parent: parent_path.clone() },
            other => walk_error(other, path),
        })?;
        Ok(Anchor { path: path.clone(), parent_path, name: OsString::from(name), parent })
    }

    /// Checks, just before a commit, that the anchor's parent is still the directory the walk
    /// from the root reaches.
    pub fn revalidate(&self, anchor: &Anchor) -> Result<(), Error> {
        let changed = || Error::Changed { path: anchor.path.clone() };
        let again = self.walk(&anchor.parent_path, Walk::Inspect).map_err(|_| changed())?;
        let held = anchor.parent.own_stat().map_err(|e| Error::mutate("inspect", &anchor.parent_path, e))?;
        let now = again.own_stat().map_err(|e| Error::mutate("inspect", &anchor.parent_path, e))?;
        if held.id != now.id {
            return Err(changed());
        }
        Ok(())
    }

    /// The entry the anchor names, without following a link; `None` when it does not exist.
    pub fn stat(&self, anchor: &Anchor) -> Result<Option<Stat>, Error> {
        anchor.parent.stat(&anchor.name).map_err(|e| Error::mutate("inspect", &anchor.path, e))
    }

    /// Refuses a regular file that cannot be changed in place: a link, a directory, a special
    /// file, a file with several hard links, or a protected file.
    pub fn check_changeable_file(&self, path: &QualifiedPath, stat: &Stat) -> Result<(), Error> {
        match stat.kind {
            Kind::Link => return Err(Error::IsLink { path: path.clone() }),
            Kind::Directory => return Err(Error::IsADirectory { path: path.clone() }),
            Kind::Other => return Err(Error::SpecialFile { path: path.clone() }),
            Kind::File => {}
        }
        if stat.nlink > 1 {
            return Err(Error::HardLinked { path: path.clone(), links: stat.nlink });
        }
        if let Some(protection) = self.protected_by_identity(stat) {
            return Err(Error::Protected { path: path.clone(), owner: protection.owner });
        }
        Ok(())
    }

    /// Reads the existing text file the anchor names; `None` when nothing is there.
    pub fn read_existing_text(&self, anchor: &Anchor, call: &Call) -> Result<Option<(Stat, String)>, Error> {
        let Some(stat) = self.stat(anchor)? else { return Ok(None) };
        self.check_changeable_file(&anchor.path, &stat)?;
        let mut file = anchor.parent.open_file(&anchor.name, &stat).map_err(|e| self.io_or_changed(anchor, e))?;
        let mut bytes = Vec::new();
        let mut chunk = vec![0u8; 1 << 20];
        loop {
            if call.is_cancelled() {
                return Err(Error::Cancelled);
            }
            let n = file.read(&mut chunk).map_err(|e| Error::io(&anchor.path, e))?;
            if n == 0 {
                break;
            }
            bytes.extend_from_slice(&chunk[..n]);
        }
        Ok(Some((stat, decode_text(&anchor.path, bytes)?)))
    }

    fn io_or_changed(&self, anchor: &Anchor, err: std::io::Error) -> Error {
        match err.raw_os_error() {
            None if err.kind() == std::io::ErrorKind::Other => Error::Changed { path: anchor.path.clone() },
            _ => Error::io(&anchor.path, err),
        }
    }

    /// Atomically replaces (or creates) the file the anchor names with `bytes`: a sibling
    /// temporary file is written, flushed, given the previous file's permissions, and renamed over
    /// the target. `previous` is the file as it was read; if the entry changed since, nothing is
    /// replaced. On every error the temporary file is removed.
    pub fn replace_file(&self, anchor: &Anchor, bytes: &[u8], previous: Option<&Stat>) -> Result<(), Error> {
        self.replace_file_with_mode(anchor, bytes, previous, None)
    }

    /// `replace_file`, giving the file the permission bits `mode` when set (a revert restores the
    /// recorded mode).
    pub fn replace_file_with_mode(
        &self,
        anchor: &Anchor,
        bytes: &[u8],
        previous: Option<&Stat>,
        mode: Option<u32>,
    ) -> Result<(), Error> {
        self.replace_file_beside(anchor, bytes, previous, mode, None::<fn(u32)>).0
    }

    /// `replace_file_with_mode`, running `beside` (given the file's new permission bits) on a
    /// second thread while the new content is flushed and renamed into place; returns once both
    /// are done, with what `beside` returned when it ran (it runs once the temporary file is
    /// written, so not when that fails). The journal uses it to append and flush its record while
    /// the file is flushed (`journal/capture.rs`).
    pub fn replace_file_beside<T: Send>(
        &self,
        anchor: &Anchor,
        bytes: &[u8],
        previous: Option<&Stat>,
        mode: Option<u32>,
        beside: Option<impl FnOnce(u32) -> T + Send>,
    ) -> (Result<(), Error>, Option<T>) {
        let fail = |action: &'static str| move |e: std::io::Error| Error::mutate(action, &anchor.path, e);
        remove_stale_temporaries(&anchor.parent);
        let initial = if previous.is_some() || mode.is_some() { 0o600 } else { 0o666 };
        let mut temp = match anchor.parent.create_temp(initial).map_err(fail("create a temporary file for")) {
            Ok(temp) => temp,
            Err(err) => return (Err(err), None),
        };
        let new_mode = match fill_temp(&mut temp, bytes, previous, mode) {
            Ok(mode) => mode,
            Err((action, err)) => return (Err(Error::mutate(action, &anchor.path, err)), None),
        };
        let finish = move || -> Result<(), Error> {
            temp.sync().map_err(fail("write"))?;
            self.revalidate(anchor)?;
            let now = self.stat(anchor)?;
            let unchanged = match (previous, &now) {
                (None, None) => true,
                (Some(before), Some(now)) => before.id == now.id && now.kind == Kind::File,
                _ => false,
            };
            if !unchanged {
                return Err(Error::Changed { path: anchor.path.clone() });
            }
            temp.commit(&anchor.name, previous.is_some()).map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => Error::Changed { path: anchor.path.clone() },
                _ => Error::mutate("replace", &anchor.path, e),
            })
        };
        match beside {
            None => (finish(), None),
            Some(beside) => std::thread::scope(|scope| {
                let side = scope.spawn(move || beside(new_mode));
                let res = finish();
                (res, Some(side.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))))
            }),
        }
    }

    /// Scans the tree below the directory `dir` (at `path`) before it is moved or deleted:
    /// refuses links, hard-linked files and protected objects anywhere in it, and returns its
    /// entries, sorted by name, each directory with its own entries.
    pub fn scan_tree(&self, dir: &Dir, path: &QualifiedPath, call: &Call) -> Result<Vec<TreeEntry>, Error> {
        self.scan_into(dir, path, "", true, call)
    }

    fn scan_into(
        &self,
        dir: &Dir,
        root: &QualifiedPath,
        rel: &str,
        exact: bool,
        call: &Call,
    ) -> Result<Vec<TreeEntry>, Error> {
        let here = || root.join_relative(rel).unwrap_or_else(|| root.clone());
        let mut names = dir.entries().map_err(|e| Error::io(&here(), e))?;
        names.sort();
        let mut res = Vec::with_capacity(names.len());
        for name in names {
            if call.is_cancelled() {
                return Err(Error::Cancelled);
            }
            let shown = name.to_string_lossy();
            let child_rel = if rel.is_empty() { shown.into_owned() } else { format!("{rel}/{shown}") };
            let display = || format!("{root}/{child_rel}");
            let Some(stat) = dir.stat(&name).map_err(|e| Error::io(&here(), e))? else {
                // Removed since it was listed: nothing left to move or delete.
                continue;
            };
            match stat.kind {
                Kind::Link => return Err(Error::TreeContainsLink { path: root.clone(), link: display() }),
                Kind::File if stat.nlink > 1 => {
                    let file = display();
                    return Err(Error::TreeContainsHardLink { path: root.clone(), file, links: stat.nlink });
                }
                _ => {}
            }
            if let Some(protection) = self.protected_by_identity(&stat) {
                let protected = protection.path.clone();
                return Err(Error::ContainsProtected { path: root.clone(), protected, owner: protection.owner });
            }
            let kind = match stat.kind {
                Kind::Directory => EntryKind::Directory,
                Kind::File => EntryKind::File,
                _ => EntryKind::Other,
            };
            let mut children = Vec::new();
            if stat.kind == Kind::Directory {
                let child = match dir.open_dir(&name) {
                    Ok(child) => child,
                    Err(OpenDirError::Link) => {
                        return Err(Error::TreeContainsLink { path: root.clone(), link: display() });
                    }
                    Err(OpenDirError::NotFound) => continue,
                    Err(OpenDirError::NotADirectory) => return Err(Error::Changed { path: root.clone() }),
                    Err(OpenDirError::Io(e)) => return Err(Error::io(&here(), e)),
                };
                children = self.scan_into(&child, root, &child_rel, exact && name.to_str().is_some(), call)?;
            }
            let exact = exact && name.to_str().is_some();
            res.push(TreeEntry { rel: child_rel, name, exact, kind, stat, children });
        }
        Ok(res)
    }

    /// Tells the observers about `change` while the lock is held.
    pub fn notify(&self, change: &Mutation) {
        self.ws.notify(change);
    }
}

/// One entry found by `scan_tree`.
#[derive(Debug, Clone)]
pub(crate) struct TreeEntry {
    /// The path below the scanned directory, `/`-separated (non-UTF-8 names shown lossily).
    pub rel: String,
    pub name: OsString,
    /// False when this name or an ancestor's is not UTF-8 (`rel` is then approximate).
    pub exact: bool,
    pub kind: EntryKind,
    pub stat: Stat,
    /// A directory's entries, sorted by name; empty otherwise.
    pub children: Vec<TreeEntry>,
}

/// The affected paths of a scanned tree rooted at `root`: the root first, then every entry below
/// it, parents before children. Entries whose names cannot be written as workspace paths are left
/// out.
pub(crate) fn affected(root: &QualifiedPath, root_kind: EntryKind, entries: &[TreeEntry]) -> Vec<Affected> {
    fn walk(root: &QualifiedPath, entries: &[TreeEntry], out: &mut Vec<Affected>) {
        for entry in entries {
            match root.join_relative(&entry.rel) {
                Some(path) if entry.exact => out.push(Affected { path, kind: entry.kind }),
                _ => tracing::warn!(root = %root, entry = %entry.rel, "a changed entry has no workspace path"),
            }
            walk(root, &entry.children, out);
        }
    }
    let mut res = vec![Affected { path: root.clone(), kind: root_kind }];
    walk(root, entries, &mut res);
    res
}

/// Writes `bytes` into a temporary file and gives it the permissions of `previous` or `mode`;
/// returns its permission bits, or what failed.
fn fill_temp(
    temp: &mut fsat::TempFile<'_>,
    bytes: &[u8],
    previous: Option<&Stat>,
    mode: Option<u32>,
) -> Result<u32, (&'static str, std::io::Error)> {
    temp.file().write_all(bytes).map_err(|e| ("write", e))?;
    if let Some(previous) = previous {
        Dir::adopt_permissions(temp.file(), previous).map_err(|e| ("set the permissions of", e))?;
    }
    if let Some(mode) = mode {
        fsat::set_mode(temp.file(), mode).map_err(|e| ("set the permissions of", e))?;
    }
    fsat::file_mode(temp.file()).map_err(|e| ("read the permissions of", e))
}

/// Removes the temporary files in `dir` that are provably abandoned (`Dir::remove_if_abandoned`:
/// left by a killed server, never one another live server on the same project is writing).
fn remove_stale_temporaries(dir: &Dir) {
    let Ok(names) = dir.entries() else { return };
    for name in names {
        if !name.to_str().is_some_and(fsat::is_temp_name) {
            continue;
        }
        if let Err(err) = dir.remove_if_abandoned(&name) {
            tracing::warn!(%err, "removing a stale temporary file failed");
        }
    }
}

fn to_io(err: Error) -> std::io::Error {
    match err {
        Error::Mutate { source, .. } => source,
        other => std::io::Error::other(other.to_string()),
    }
}

fn walk_error(err: WalkError, target: &QualifiedPath) -> Error {
    match err {
        WalkError::NotFound => Error::Resolve(ResolveError::NotFound { path: target.clone() }),
        WalkError::Link(link) if &link == target => Error::IsLink { path: link },
        WalkError::Link(link) => Error::Resolve(ResolveError::ThroughLink { path: target.clone(), link }),
        WalkError::NotADirectory(path) => Error::NotADirectory { path },
        WalkError::Protected(path, protection) => Error::Protected { path, owner: protection.owner },
        WalkError::Io(path, e) => Error::mutate("open", &path, e),
    }
}

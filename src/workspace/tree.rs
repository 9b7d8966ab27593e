//! Directory trees to a depth (`workspace_list`).
//!
//! Architecture invariant: a listing never follows a link: links are entries of kind `Symlink` and
//! are never descended, and the listed directory itself must be reachable without passing one.
//! Architecture invariant: children are sorted by the byte order of their UTF-8 names; directories
//! whose name starts with `.` are left out unless hidden entries are requested (dot files stay).

use std::collections::HashMap;
use std::fs::FileType;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};

use parking_lot::{Condvar, Mutex};
use tokio_util::sync::CancellationToken;

use crate::call::Call;
use crate::workspace::opened::{Place, Purpose, open_checked, reopen_path};
use crate::workspace::path::{LinkPolicy, QualifiedPath};
use crate::workspace::write::is_temp_name;
use crate::workspace::{Error, WorkspaceService};

/// What an entry is, seen without following links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    File,
    Directory,
    /// A symbolic link or (on Windows) a junction; never descended.
    Symlink,
    /// Anything else: sockets, FIFOs, devices.
    Other,
}

impl EntryKind {
    /// Classifies a file type read without following links.
    pub fn of(file_type: FileType) -> EntryKind {
        if file_type.is_symlink() {
            EntryKind::Symlink
        } else if file_type.is_dir() {
            EntryKind::Directory
        } else if file_type.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
        }
    }
}

/// One entry of a listed directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    pub path: QualifiedPath,
    pub kind: EntryKind,
    /// The sorted children of an expanded directory (`Some(vec![])` when it is empty); `None` for
    /// files, links, other entries and directories beyond the depth limit.
    pub children: Option<Vec<TreeEntry>>,
}

impl TreeEntry {
    /// The entry's own name (its last path component).
    pub fn name(&self) -> &str {
        self.path.file_name().unwrap_or_default()
    }
}

/// A listed directory and its entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectoryTree {
    pub path: QualifiedPath,
    /// Sorted by name.
    pub entries: Vec<TreeEntry>,
}

/// How deep and how wide a listing goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListOptions {
    /// Levels of entries to return: `1` lists the directory's own children; `None` is the whole tree.
    pub depth: Option<NonZeroU32>,
    /// Also list and descend directories whose name starts with `.`.
    pub include_hidden: bool,
}

impl Default for ListOptions {
    fn default() -> ListOptions {
        ListOptions { depth: Some(NonZeroU32::MIN), include_hidden: false }
    }
}

/// True for names that hide a directory (`.git`, `.cache`).
pub fn is_hidden_name(name: &str) -> bool {
    name.starts_with('.')
}

impl WorkspaceService {
    /// Lists a managed directory to `options.depth` levels. A directory that cannot be read fails
    /// the listing with its qualified path (a tree cannot show a partial directory honestly).
    /// Entries whose names cannot be qualified paths (not UTF-8, or containing a backslash) are skipped
    /// with a warning on stderr.
    ///
    /// Progress: `0` with "Starting directory scan", then the running count of visited entries with
    /// the entry's path as the message; no total.
    pub fn list(&self, path: &QualifiedPath, options: ListOptions, call: &Call) -> Result<DirectoryTree, Error> {
        if !path.is_managed() {
            return Err(Error::ExternalNotAllowed { path: path.clone() });
        }
        let _guard = self.read_lock();
        let resolved = self.resolve_existing(path, LinkPolicy::Refuse)?;
        let meta = std::fs::symlink_metadata(&resolved.abs).map_err(|e| Error::io(path, e))?;
        if !meta.is_dir() {
            return Err(Error::NotADirectory { path: path.clone() });
        }
        call.progress.report(0.0, None, "Starting directory scan");
        let read = read_directories(path, &resolved.abs, options, &call.cancel);
        let mut lister = Lister { options, call, n_visited: 0, read };
        let entries = lister.children(path, &resolved.abs, 1)?;
        Ok(DirectoryTree { path: path.clone(), entries })
    }
}

/// Directory reads kept in flight at once: cold, each waits for the disk, and the listing is
/// bound by how many wait together; warm, the readers share the cores.
const READERS: usize = 8;

/// The sorted `(name, kind)` entries of one directory, or why it could not be read.
type Read = Result<Vec<(String, EntryKind)>, Error>;

/// Reads every directory the listing expands, [`READERS`] at a time, by absolute path. A directory
/// that failed is not descended; on cancellation the readers stop and the rest stays unread.
fn read_directories(
    dir: &QualifiedPath,
    abs: &Path,
    options: ListOptions,
    cancel: &CancellationToken,
) -> HashMap<PathBuf, Read> {
    struct Queue {
        pending: Vec<(QualifiedPath, PathBuf, u32)>,
        in_flight: usize,
    }
    let queue = Mutex::new(Queue { pending: vec![(dir.clone(), abs.to_path_buf(), 1)], in_flight: 0 });
    let changed = Condvar::new();
    let read = Mutex::new(HashMap::new());
    let reader = || {
        loop {
            let (dir, abs, level) = {
                let mut queue = queue.lock();
                loop {
                    if cancel.is_cancelled() {
                        changed.notify_all();
                        return;
                    }
                    if let Some(next) = queue.pending.pop() {
                        queue.in_flight += 1;
                        break next;
                    }
                    if queue.in_flight == 0 {
                        changed.notify_all();
                        return;
                    }
                    changed.wait(&mut queue);
                }
            };
            let found = read_directory(&dir, &abs, options, cancel);
            let expand = options.depth.is_none_or(|depth| level < depth.get());
            let mut queue = queue.lock();
            if let (Ok(found), true) = (&found, expand) {
                for (name, kind) in found {
                    if *kind == EntryKind::Directory
                        && let Some(path) = dir.join_name(name)
                    {
                        queue.pending.push((path, abs.join(name), level + 1));
                    }
                }
            }
            queue.in_flight -= 1;
            changed.notify_all();
            drop(queue);
            read.lock().insert(abs, found);
        }
    };
    // A one-level listing reads one directory: no readers to start.
    let readers = if options.depth == Some(NonZeroU32::MIN) { 1 } else { READERS };
    std::thread::scope(|scope| {
        for _ in 1..readers {
            scope.spawn(reader);
        }
        reader();
    });
    read.into_inner()
}

/// The sorted entries of one directory, without hidden directories unless asked for and without
/// the temporary files of interrupted writes.
fn read_directory(dir: &QualifiedPath, abs: &Path, options: ListOptions, cancel: &CancellationToken) -> Read {
    // Listed through the descriptor that was verified to be `abs` itself, so a component
    // swapped for a link meanwhile cannot list another directory.
    let opened = open_checked(abs, Place::Exactly(abs), Purpose::Inspect).map_err(|e| Error::io(dir, e))?;
    let read_dir = std::fs::read_dir(reopen_path(&opened, abs)).map_err(|e| Error::io(dir, e))?;
    let mut found: Vec<(String, EntryKind)> = Vec::new();
    for entry in read_dir {
        if cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            tracing::warn!(directory = %dir, name = ?entry.file_name(), "skipping an entry whose name is not UTF-8");
            continue;
        };
        let kind = entry_kind(&entry).map_err(|e| Error::io(dir, e))?;
        if kind == EntryKind::Directory && !options.include_hidden && is_hidden_name(&name) {
            continue;
        }
        // The temporary file of an interrupted write is not user content.
        if kind == EntryKind::File && is_temp_name(&name) {
            continue;
        }
        found.push((name, kind));
    }
    found.sort_unstable_by(|(a, _), (b, _)| a.as_bytes().cmp(b.as_bytes()));
    Ok(found)
}

struct Lister<'a> {
    options: ListOptions,
    call: &'a Call,
    n_visited: u64,
    /// What [`read_directories`] read, taken out as the tree is assembled.
    read: HashMap<PathBuf, Read>,
}

impl Lister<'_> {
    /// The sorted entries of `dir`, which sit at `level` (1 = children of the listed directory),
    /// assembled in order from the directories read (so the first failing directory in tree order
    /// is the error, and progress counts up one by one).
    ///
    /// Recursion depth is bounded by the file system's path length limit.
    fn children(&mut self, dir: &QualifiedPath, abs: &Path, level: u32) -> Result<Vec<TreeEntry>, Error> {
        // Only a cancellation leaves an expanded directory unread.
        let found = self.read.remove(abs).unwrap_or(Err(Error::Cancelled))?;
        let expand = self.options.depth.is_none_or(|depth| level < depth.get());
        let mut res = Vec::with_capacity(found.len());
        for (name, kind) in found {
            if self.call.is_cancelled() {
                return Err(Error::Cancelled);
            }
            let Some(path) = dir.join_name(&name) else {
                tracing::warn!(directory = %dir, name, "skipping an entry whose name cannot be a workspace path");
                continue;
            };
            self.n_visited += 1;
            self.call.progress.report_with(self.n_visited as f64, None, || path.to_string());
            let children = match kind {
                EntryKind::Directory if expand => Some(self.children(&path, &abs.join(&name), level + 1)?),
                _ => None,
            };
            res.push(TreeEntry { path, kind, children });
        }
        Ok(res)
    }
}

/// The kind of a directory entry, without following links. On Windows every reparse point that
/// `path::is_link` recognises counts as a link, like everywhere else in the workspace.
fn entry_kind(entry: &std::fs::DirEntry) -> std::io::Result<EntryKind> {
    let file_type = entry.file_type()?;
    #[cfg(windows)]
    {
        if crate::workspace::path::is_link(&entry.metadata()?) {
            return Ok(EntryKind::Symlink);
        }
    }
    Ok(EntryKind::of(file_type))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::path::Roots;

    fn service(dir: &Path) -> WorkspaceService {
        let base = std::fs::canonicalize(dir).unwrap();
        std::fs::create_dir_all(base.join("proj")).unwrap();
        WorkspaceService::new(Roots::new(base.join("proj"), base.join(".proj.forgemcp")))
    }

    fn touch(ws: &WorkspaceService, rel: &str) {
        let path = ws.roots().project().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
    }

    /// One line per entry: indentation by level, `name/` for directories, `name/…` unexpanded.
    fn outline(entries: &[TreeEntry], level: usize, out: &mut String) {
        for entry in entries {
            let suffix = match (entry.kind, &entry.children) {
                (EntryKind::Directory, Some(_)) => "/",
                (EntryKind::Directory, None) => "/…",
                (EntryKind::Symlink, _) => "@",
                (EntryKind::Other, _) => "?",
                (EntryKind::File, _) => "",
            };
            out.push_str(&format!("{}{}{suffix}\n", "  ".repeat(level), entry.name()));
            if let Some(children) = &entry.children {
                outline(children, level + 1, out);
            }
        }
    }

    fn list(ws: &WorkspaceService, path: &str, depth: Option<u32>, include_hidden: bool) -> String {
        let options = ListOptions { depth: depth.map(|d| NonZeroU32::new(d).unwrap()), include_hidden };
        let tree = ws.list(&QualifiedPath::parse(path).unwrap(), options, &Call::detached()).unwrap();
        let mut out = String::new();
        outline(&tree.entries, 0, &mut out);
        out
    }

    #[test]
    fn depth_limits_expansion() {
        let dir = tempfile::tempdir().unwrap();
        let ws = service(dir.path());
        touch(&ws, "a/b/c/d.txt");
        touch(&ws, "top.txt");
        assert_eq!(list(&ws, "project/", Some(1), false), "a/…\ntop.txt\n");
        assert_eq!(list(&ws, "project/", Some(2), false), "a/\n  b/…\ntop.txt\n");
        assert_eq!(list(&ws, "project/", None, false), "a/\n  b/\n    c/\n      d.txt\ntop.txt\n");
        assert_eq!(list(&ws, "project/a", None, false), "b/\n  c/\n    d.txt\n");
    }

    #[test]
    fn hidden_directories_need_include_hidden_but_dot_files_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let ws = service(dir.path());
        touch(&ws, ".git/config");
        touch(&ws, ".clang-format");
        touch(&ws, "build/out.o");
        assert_eq!(list(&ws, "project/", None, false), ".clang-format\nbuild/\n  out.o\n");
        assert_eq!(list(&ws, "project/", None, true), ".clang-format\n.git/\n  config\nbuild/\n  out.o\n");
    }

    #[test]
    fn directories_read_in_parallel_assemble_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let ws = service(dir.path());
        let mut expected = String::new();
        for i in 0..40 {
            touch(&ws, &format!("d{i:02}/sub/f.txt"));
            touch(&ws, &format!("d{i:02}/g.txt"));
            expected.push_str(&format!("d{i:02}/\n  g.txt\n  sub/\n    f.txt\n"));
        }
        assert_eq!(list(&ws, "project/", None, false), expected);
    }

    #[test]
    fn children_sort_by_byte_order() {
        let dir = tempfile::tempdir().unwrap();
        let ws = service(dir.path());
        for name in ["b", "B", "a", "_", "é", "Z"] {
            touch(&ws, name);
        }
        assert_eq!(list(&ws, "project/", Some(1), false), "B\nZ\n_\na\nb\né\n");
    }

    #[test]
    fn empty_directories_expand_to_no_children() {
        let dir = tempfile::tempdir().unwrap();
        let ws = service(dir.path());
        std::fs::create_dir(ws.roots().project().join("empty")).unwrap();
        let tree = ws
            .list(
                &QualifiedPath::parse("project/").unwrap(),
                ListOptions { depth: None, ..Default::default() },
                &Call::detached(),
            )
            .unwrap();
        assert_eq!(tree.entries[0].children, Some(Vec::new()));
    }

    #[test]
    fn files_and_external_paths_are_not_listable() {
        let dir = tempfile::tempdir().unwrap();
        let ws = service(dir.path());
        touch(&ws, "a.txt");
        let call = Call::detached();
        let q = |s: &str| QualifiedPath::parse(s).unwrap();
        assert!(matches!(ws.list(&q("a.txt"), ListOptions::default(), &call), Err(Error::NotADirectory { .. })));
        assert!(matches!(
            ws.list(&q("missing"), ListOptions::default(), &call),
            Err(Error::Resolve(crate::workspace::path::ResolveError::NotFound { .. }))
        ));
        assert!(matches!(
            ws.list(&q("root/tmp"), ListOptions::default(), &call),
            Err(Error::ExternalNotAllowed { .. })
        ));
    }

    #[cfg(unix)]
    #[test]
    fn links_are_listed_but_never_descended_or_traversed() {
        let dir = tempfile::tempdir().unwrap();
        let ws = service(dir.path());
        touch(&ws, "real/inner.txt");
        let project = ws.roots().project().to_path_buf();
        std::os::unix::fs::symlink(project.join("real"), project.join("link")).unwrap();
        std::os::unix::fs::symlink(project.join("real"), project.join(".hidden_link")).unwrap();
        assert_eq!(list(&ws, "project/", None, false), ".hidden_link@\nlink@\nreal/\n  inner.txt\n");
        let err = ws.list(&QualifiedPath::parse("project/link").unwrap(), ListOptions::default(), &Call::detached());
        assert!(matches!(err, Err(Error::Resolve(crate::workspace::path::ResolveError::ThroughLink { .. }))));
    }

    #[test]
    fn cancellation_stops_the_scan() {
        let dir = tempfile::tempdir().unwrap();
        let ws = service(dir.path());
        touch(&ws, "a.txt");
        let call = Call::detached();
        call.cancel.cancel();
        let res = ws.list(&QualifiedPath::parse("project/").unwrap(), ListOptions::default(), &call);
        assert!(matches!(res, Err(Error::Cancelled)));
    }
}

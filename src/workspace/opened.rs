//! Opening a checked path so that a link swapped in after the check cannot redirect the open: the
//! file is opened, then the object actually opened is verified through its descriptor.
//!
//! Reads, the mirrors, search, listings and file info resolve a qualified path component by
//! component (`path.rs`) and then open the absolute path. Between the two, a component may be
//! swapped for a link to somewhere else. Instead of trusting the path, the opened descriptor is
//! asked where it is: on Linux `/proc/self/fd/<n>` names the object the kernel opened (the same
//! canonical form `std::fs::canonicalize` gives the roots). A read must have opened something inside
//! a managed root; a traversal (search, listing), which never follows links, must have opened
//! exactly the path it walked. Anything else is refused as if the link had been there at the check.
//! Elsewhere the descriptor's identity (device and inode) is compared with a fresh resolution, which
//! narrows the window to the moment between the open and that resolution.
//!
//! Architecture invariant: no byte or metadata of a file outside the managed roots is returned for
//! a managed path, whatever is swapped while the call runs.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use crate::workspace::path::Roots;

/// Where the opened object must be.
#[derive(Debug, Clone, Copy)]
pub enum Place<'a> {
    /// Exactly this absolute path (traversals: no link anywhere on the way).
    Exactly(&'a Path),
    /// Anywhere inside the managed roots (reads, which follow links that stay inside).
    InsideRoots(&'a Roots),
}

/// What the descriptor is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Reading bytes (never blocks on a FIFO swapped in).
    Read,
    /// Metadata or listing only (Linux: `O_PATH`, which needs no read permission).
    Inspect,
}

/// Why [`open_checked`] refused: the object opened is not where the path was checked to lead.
#[derive(Debug, thiserror::Error)]
#[error("the path was redirected while it was opened")]
pub struct Misplaced;

/// The error for an open that reached the wrong object.
pub fn misplaced_error() -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, Misplaced)
}

/// True for [`misplaced_error`].
pub fn is_misplaced(err: &io::Error) -> bool {
    err.get_ref().is_some_and(|inner| inner.is::<Misplaced>())
}

/// Opens `abs` for `purpose` and returns the file only when the object opened lies in `place`.
pub fn open_checked(abs: &Path, place: Place<'_>, purpose: Purpose) -> io::Result<File> {
    let file = open(abs, purpose)?;
    let real = real_path(&file, abs)?;
    let fits = match place {
        Place::Exactly(expected) => real == expected,
        Place::InsideRoots(roots) => roots.contains(&real),
    };
    if !fits {
        return Err(misplaced_error());
    }
    Ok(file)
}

/// Opens `abs` for `purpose` wherever it leads (an external file the user allowed), with the same
/// flags as [`open_checked`] (a FIFO never blocks the open).
pub fn open_unchecked(abs: &Path, purpose: Purpose) -> io::Result<File> {
    open(abs, purpose)
}

#[cfg(unix)]
fn open(abs: &Path, purpose: Purpose) -> io::Result<File> {
    use rustix::fs::{Mode, OFlags};
    let flags = match purpose {
        Purpose::Read => OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        #[cfg(target_os = "linux")]
        Purpose::Inspect => OFlags::PATH | OFlags::CLOEXEC,
        #[cfg(not(target_os = "linux"))]
        Purpose::Inspect => OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
    };
    Ok(File::from(rustix::fs::open(abs, flags, Mode::empty())?))
}

#[cfg(not(unix))]
fn open(abs: &Path, _purpose: Purpose) -> io::Result<File> {
    use std::os::windows::fs::OpenOptionsExt;
    // FILE_FLAG_BACKUP_SEMANTICS: directories can be opened too.
    std::fs::OpenOptions::new().read(true).custom_flags(0x0200_0000).open(abs)
}

/// The path of the object `file` (opened from `abs`) refers to now.
#[cfg(target_os = "linux")]
fn real_path(file: &File, _abs: &Path) -> io::Result<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
}

/// Elsewhere: the canonical path of `abs`, accepted only when it is still the object `file` holds.
#[cfg(not(target_os = "linux"))]
fn real_path(file: &File, abs: &Path) -> io::Result<PathBuf> {
    let real = std::fs::canonicalize(abs)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let (held, named) = (file.metadata()?, std::fs::metadata(&real)?);
        if (held.dev(), held.ino()) != (named.dev(), named.ino()) {
            return Err(misplaced_error());
        }
    }
    #[cfg(not(unix))]
    let _ = file;
    Ok(real)
}

/// Opens the files of a traversal below one root for reading, refusing any file that is not
/// exactly the walked path (a link anywhere on the way, or swapped in, is refused).
///
/// On Linux each file is opened relative to a descriptor of its directory that was verified to be
/// exactly the walked directory (one verification per directory: a traversal visits a directory's
/// files one after another), and the final open never follows a link. A directory below the root
/// is opened relative to the root (opened and verified once) with `openat2` and
/// `RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH`: the kernel walks the relative path without following
/// any link, in one call. Where `openat2` is missing (kernels before 5.6, or a filter that refuses
/// it), the directory is opened by its path and asked where it is ([`open_checked`]). Elsewhere
/// every file goes through [`open_checked`].
pub struct TraversalOpener {
    #[cfg(target_os = "linux")]
    root: PathBuf,
    #[cfg(target_os = "linux")]
    beneath: Beneath,
    #[cfg(target_os = "linux")]
    dir: Option<(PathBuf, File)>,
}

impl TraversalOpener {
    /// An opener for files below `root` (absolute, as walked).
    pub fn beneath(root: &Path) -> TraversalOpener {
        #[cfg(not(target_os = "linux"))]
        let _ = root;
        TraversalOpener {
            #[cfg(target_os = "linux")]
            root: root.to_path_buf(),
            #[cfg(target_os = "linux")]
            beneath: Beneath::Unopened,
            #[cfg(target_os = "linux")]
            dir: None,
        }
    }

    /// Opens `path` (absolute, as walked) for reading, refusing it unless it is exactly that file.
    pub fn open(&mut self, path: &Path) -> io::Result<File> {
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::{Mode, OFlags};
            let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
                return open_checked(path, Place::Exactly(path), Purpose::Read);
            };
            if self.dir.as_ref().is_none_or(|(dir, _)| dir != parent) {
                self.dir = None;
                let dir = self.open_dir(parent)?;
                self.dir = Some((parent.to_path_buf(), dir));
            }
            let (_, dir) = self.dir.as_ref().expect("set above");
            let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
            Ok(File::from(rustix::fs::openat(dir, name, flags, Mode::empty())?))
        }
        #[cfg(not(target_os = "linux"))]
        open_checked(path, Place::Exactly(path), Purpose::Read)
    }

    /// A descriptor (`O_PATH`) of exactly the directory `dir`.
    #[cfg(target_os = "linux")]
    fn open_dir(&mut self, dir: &Path) -> io::Result<File> {
        use rustix::fs::{Mode, OFlags, ResolveFlags};
        let Ok(rel) = dir.strip_prefix(&self.root) else {
            return open_checked(dir, Place::Exactly(dir), Purpose::Inspect);
        };
        if let Beneath::Unopened = self.beneath {
            self.beneath = Beneath::Root(open_checked(&self.root, Place::Exactly(&self.root), Purpose::Inspect)?);
        }
        let Beneath::Root(root) = &self.beneath else {
            return open_checked(dir, Place::Exactly(dir), Purpose::Inspect);
        };
        if rel.as_os_str().is_empty() {
            return root.try_clone();
        }
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let resolve = ResolveFlags::NO_SYMLINKS | ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
        match rustix::fs::openat2(root, rel, flags, Mode::empty(), resolve) {
            Ok(fd) => Ok(File::from(fd)),
            Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => {
                self.beneath = Beneath::Unsupported;
                open_checked(dir, Place::Exactly(dir), Purpose::Inspect)
            }
            // A link on the way: refused as if it had been there at the walk.
            Err(rustix::io::Errno::LOOP | rustix::io::Errno::XDEV | rustix::io::Errno::NOTDIR) => {
                Err(misplaced_error())
            }
            Err(err) => Err(err.into()),
        }
    }
}

/// The root a [`TraversalOpener`] opens directories beneath.
#[cfg(target_os = "linux")]
enum Beneath {
    /// Not needed yet.
    Unopened,
    /// Opened and verified to be exactly the root.
    Root(File),
    /// `openat2` was refused: directories are opened by path and verified.
    Unsupported,
}

/// A path through which the directory `dir` (opened by [`open_checked`]) is read again as the very
/// same object (Linux: `/proc/self/fd/<n>`; elsewhere its path, best effort).
pub fn reopen_path(dir: &File, abs: &Path) -> PathBuf {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let _ = abs;
        PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd()))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = dir;
        abs.to_path_buf()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_swapped_component_is_refused_and_the_real_object_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let (project, outside) = (base.join("project"), base.join("outside"));
        std::fs::create_dir_all(project.join("d")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(project.join("d/f"), "inside").unwrap();
        std::fs::write(outside.join("f"), "outside").unwrap();
        let roots = Roots::new(project.clone(), base.join("storage"));
        let f = project.join("d/f");
        assert!(open_checked(&f, Place::Exactly(&f), Purpose::Read).is_ok());
        assert!(open_checked(&f, Place::InsideRoots(&roots), Purpose::Inspect).is_ok());
        std::fs::rename(project.join("d"), project.join("d.real")).unwrap();
        std::os::unix::fs::symlink(&outside, project.join("d")).unwrap();
        for purpose in [Purpose::Read, Purpose::Inspect] {
            let err = open_checked(&f, Place::Exactly(&f), purpose).unwrap_err();
            assert!(is_misplaced(&err), "{err}");
            let err = open_checked(&f, Place::InsideRoots(&roots), purpose).unwrap_err();
            assert!(is_misplaced(&err), "{err}");
        }
        // A link that stays inside the roots is fine for reads, not for traversals.
        std::fs::remove_file(project.join("d")).unwrap();
        std::os::unix::fs::symlink(project.join("d.real"), project.join("d")).unwrap();
        assert!(open_checked(&f, Place::InsideRoots(&roots), Purpose::Read).is_ok());
        assert!(is_misplaced(&open_checked(&f, Place::Exactly(&f), Purpose::Read).unwrap_err()));
        // Through `openat2`, and through the per-directory fallback of kernels without it.
        let fallback = TraversalOpener { beneath: Beneath::Unsupported, ..TraversalOpener::beneath(&project) };
        let mut openers = [TraversalOpener::beneath(&project), fallback];
        for opener in &mut openers {
            assert!(is_misplaced(&opener.open(&f).unwrap_err()), "the directory is reached through a link");
        }
        std::fs::remove_file(project.join("d")).unwrap();
        std::fs::rename(project.join("d.real"), project.join("d")).unwrap();
        std::os::unix::fs::symlink(project.join("d/f"), project.join("d/link")).unwrap();
        for opener in &mut openers {
            assert_eq!(std::io::read_to_string(opener.open(&f).unwrap()).unwrap(), "inside");
            assert!(opener.open(&project.join("d/link")).is_err(), "a link is never opened");
        }
        assert!(matches!(openers[0].beneath, Beneath::Root(_)), "openat2 was used");
    }
}

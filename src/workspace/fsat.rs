//! Link-safe file system primitives for workspace mutations: every operation names one entry of a
//! directory handle, and directory handles are reached from a root one component at a time without
//! following links.
//!
//! Unix: a `Dir` is a file descriptor opened with `openat(O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)`
//! relative to its parent's descriptor; the final operation (`openat`, `renameat`, `unlinkat`,
//! `mkdirat`, `fstatat(AT_SYMLINK_NOFOLLOW)`) is relative to the held parent. No absolute path is
//! checked and then used again, so a component swapped for a link between a check and its use makes
//! the operation fail instead of following the link.
//!
//! Windows: a best-effort equivalent with std. A `Dir` holds a path whose every component was
//! checked not to be a link or junction when it was opened; operations re-check the entry they
//! touch, and file opens pass `FILE_FLAG_OPEN_REPARSE_POINT` so a final reparse point is opened
//! itself rather than followed. The window between the check and the use remains there.
//!
//! This module knows nothing of qualified paths; names are single components (never empty, `.`,
//! `..` or containing a separator), checked again here as defence in depth.
//!
//! Architecture invariant: no function here follows a symbolic link or junction, on any component.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;

/// What a directory entry is, seen without following links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Directory,
    /// A symbolic link, or on Windows a junction or another name-surrogate reparse point.
    Link,
    /// A FIFO, socket or device.
    Other,
}

/// Identifies a file system object (device and inode on Unix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
}

/// The metadata mutations need, read without following links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub kind: Kind,
    /// Number of hard links (names) of the object.
    pub nlink: u64,
    /// Permission bits (`0o7777` on Unix; `0o444` or `0o666` on Windows).
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    /// `None` where the platform gives no stable identity (Windows, best effort).
    pub id: Option<FileId>,
}

/// Why a directory could not be opened.
#[derive(Debug)]
pub enum OpenDirError {
    NotFound,
    /// The entry is a link (never followed).
    Link,
    /// The entry exists but is not a directory.
    NotADirectory,
    Io(io::Error),
}

/// The prefix of temporary files written next to their target.
pub const TEMP_PREFIX: &str = ".forgemcp-tmp-";

/// Random hex digits after `TEMP_PREFIX`.
const TEMP_DIGITS: usize = 16;

/// True for the names of our temporary files: `TEMP_PREFIX` followed by 16 lowercase hex digits.
pub fn is_temp_name(name: &str) -> bool {
    name.strip_prefix(TEMP_PREFIX).is_some_and(|rest| {
        rest.len() == TEMP_DIGITS && rest.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

fn temp_name() -> io::Result<String> {
    let mut bytes = [0u8; TEMP_DIGITS / 2];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(e.to_string()))?;
    let mut res = String::with_capacity(TEMP_PREFIX.len() + TEMP_DIGITS);
    res.push_str(TEMP_PREFIX);
    for b in bytes {
        res.push_str(&format!("{b:02x}"));
    }
    Ok(res)
}

/// Refuses names that are not exactly one path component.
fn check_name(name: &OsStr) -> io::Result<()> {
    let bytes = name.as_encoded_bytes();
    let bad = bytes.is_empty()
        || bytes == b"."
        || bytes == b".."
        || bytes.contains(&b'/')
        || bytes.contains(&0)
        || (cfg!(windows) && (bytes.contains(&b'\\') || bytes.contains(&b':')));
    if bad {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a single path component"));
    }
    Ok(())
}

/// An error for an entry that changed between two steps of one operation.
pub fn changed_error() -> io::Error {
    io::Error::other("the entry changed while the operation ran")
}

/// A temporary file in a directory; removed on drop unless it was renamed into place.
pub struct TempFile<'a> {
    dir: &'a Dir,
    name: OsString,
    file: Option<File>,
}

impl TempFile<'_> {
    pub fn file(&mut self) -> &mut File {
        self.file.as_mut().expect("the file is open until the temporary file is committed")
    }

    /// Flushes the written data to disk; call before `commit`.
    pub fn sync(&mut self) -> io::Result<()> {
        self.file().sync_all()
    }

    /// Renames the file over `target` (replacing it when `replace` is set; otherwise failing with
    /// `AlreadyExists` when `target` exists), then closes it. On Unix the file stays open, and so
    /// locked, until the rename is done: no other server can take it for abandoned.
    pub fn commit(mut self, target: &OsStr, replace: bool) -> io::Result<()> {
        if cfg!(windows) {
            drop(self.file.take());
        }
        if replace {
            self.dir.rename(&self.name, self.dir, target)?;
        } else {
            self.dir.rename_noreplace(&self.name, self.dir, target)?;
        }
        self.name.clear();
        drop(self.file.take());
        // Make the rename itself durable; a failure here does not undo the completed write.
        if let Err(err) = self.dir.sync() {
            tracing::debug!(%err, "syncing a directory after a rename failed");
        }
        Ok(())
    }
}

impl Drop for TempFile<'_> {
    fn drop(&mut self) {
        drop(self.file.take());
        if !self.name.is_empty()
            && let Err(err) = self.dir.unlink(&self.name)
        {
            tracing::warn!(%err, "removing a temporary file failed");
        }
    }
}

#[cfg(unix)]
pub use unix::Dir;
#[cfg(windows)]
pub use windows::Dir;

#[cfg(unix)]
mod unix {
    use std::ffi::{OsStr, OsString};
    use std::fs::File;
    use std::io;
    use std::os::fd::OwnedFd;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
    use rustix::io::Errno;

    use super::{FileId, Kind, OpenDirError, Stat, TempFile, changed_error, check_name, temp_name};

    const DIR_FLAGS: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);

    /// A directory reached without following links, held open by descriptor.
    #[derive(Debug)]
    pub struct Dir {
        fd: OwnedFd,
    }

    #[allow(clippy::unnecessary_cast, reason = "the field types of `struct stat` differ between targets")]
    fn convert(st: &rfs::Stat) -> Stat {
        let kind = match FileType::from_raw_mode(st.st_mode as rfs::RawMode) {
            FileType::RegularFile => Kind::File,
            FileType::Directory => Kind::Directory,
            FileType::Symlink => Kind::Link,
            _ => Kind::Other,
        };
        Stat {
            kind,
            nlink: st.st_nlink as u64,
            mode: (st.st_mode as u32) & 0o7777,
            uid: st.st_uid as u32,
            gid: st.st_gid as u32,
            id: Some(FileId { dev: st.st_dev as u64, ino: st.st_ino as u64 }),
        }
    }

    impl Dir {
        /// Opens a root directory by absolute path. Its last component must not be a link; the
        /// roots are canonical, so no earlier component is one either.
        pub fn open_root(path: &Path) -> Result<Dir, OpenDirError> {
            match rfs::open(path, DIR_FLAGS, Mode::empty()) {
                Ok(fd) => Ok(Dir { fd }),
                Err(Errno::NOENT) => Err(OpenDirError::NotFound),
                Err(Errno::LOOP) => Err(OpenDirError::Link),
                Err(Errno::NOTDIR) => Err(OpenDirError::NotADirectory),
                Err(err) => Err(OpenDirError::Io(err.into())),
            }
        }

        /// Opens the child directory `name` without following a link there.
        pub fn open_dir(&self, name: &OsStr) -> Result<Dir, OpenDirError> {
            check_name(name).map_err(OpenDirError::Io)?;
            match rfs::openat(&self.fd, name, DIR_FLAGS, Mode::empty()) {
                Ok(fd) => Ok(Dir { fd }),
                Err(Errno::NOENT) => Err(OpenDirError::NotFound),
                // ELOOP (Linux, macOS) or EMLINK (FreeBSD) for a final link, ENOTDIR for a file:
                // classify with a no-follow stat, only to choose the message.
                Err(err) => match self.stat(name) {
                    Ok(Some(stat)) if stat.kind == Kind::Link => Err(OpenDirError::Link),
                    Ok(Some(stat)) if stat.kind != Kind::Directory => Err(OpenDirError::NotADirectory),
                    Ok(None) => Err(OpenDirError::NotFound),
                    _ => Err(OpenDirError::Io(err.into())),
                },
            }
        }

        /// The entry `name`, without following a link; `None` when it does not exist.
        pub fn stat(&self, name: &OsStr) -> io::Result<Option<Stat>> {
            check_name(name)?;
            match rfs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => Ok(Some(convert(&st))),
                Err(Errno::NOENT) => Ok(None),
                Err(err) => Err(err.into()),
            }
        }

        /// This directory's own metadata.
        pub fn own_stat(&self) -> io::Result<Stat> {
            Ok(convert(&rfs::fstat(&self.fd)?))
        }

        /// Opens the regular file `name` for reading, refusing it unless it is still the object
        /// `expected` describes (same identity, still a regular file, same link count). The open
        /// never follows a link and never blocks on a FIFO swapped in after the check.
        pub fn open_file(&self, name: &OsStr, expected: &Stat) -> io::Result<File> {
            check_name(name)?;
            let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
            let fd = match rfs::openat(&self.fd, name, flags, Mode::empty()) {
                Ok(fd) => fd,
                // Swapped for a link since the check.
                Err(Errno::LOOP | Errno::MLINK) => return Err(changed_error()),
                Err(err) => return Err(err.into()),
            };
            let now = convert(&rfs::fstat(&fd)?);
            if now.kind != Kind::File || now.id != expected.id || now.nlink != expected.nlink {
                return Err(changed_error());
            }
            Ok(File::from(fd))
        }

        /// Creates a new temporary file (`TEMP_PREFIX` + random digits) with permission bits `mode`
        /// (the process umask applies), holding an exclusive `flock` on it for as long as it is open:
        /// the lock is what tells other servers the file is in use ([`Dir::remove_if_abandoned`]).
        /// A file another server took for abandoned in the instant between its creation and the
        /// lock is given up for a new name.
        pub fn create_temp(&self, mode: u32) -> io::Result<TempFile<'_>> {
            let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            for _ in 0..16 {
                let name = temp_name()?;
                let fd = match rfs::openat(&self.fd, name.as_str(), flags, Mode::from_raw_mode(mode as rfs::RawMode)) {
                    Ok(fd) => fd,
                    Err(Errno::EXIST) => continue,
                    Err(err) => return Err(err.into()),
                };
                if rfs::flock(&fd, rfs::FlockOperation::NonBlockingLockExclusive).is_err() {
                    // Another server is removing it as abandoned.
                    continue;
                }
                let mine = convert(&rfs::fstat(&fd)?);
                let named = self.stat(OsStr::new(&name))?;
                if mine.nlink != 1 || named.is_none_or(|named| named.id != mine.id) {
                    // Removed as abandoned before the lock was taken.
                    continue;
                }
                return Ok(TempFile { dir: self, name: OsString::from(name), file: Some(File::from(fd)) });
            }
            Err(io::Error::new(io::ErrorKind::AlreadyExists, "no free temporary file name"))
        }

        /// Removes the temporary file `name` when it is provably abandoned: a plain file with one
        /// name whose `flock` nobody holds (its writer closed it without renaming it, or died; the
        /// kernel drops a dead process's locks). A file a live server is writing stays.
        pub fn remove_if_abandoned(&self, name: &OsStr) -> io::Result<bool> {
            check_name(name)?;
            let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
            let fd = match rfs::openat(&self.fd, name, flags, Mode::empty()) {
                Ok(fd) => fd,
                Err(Errno::NOENT | Errno::LOOP | Errno::MLINK) => return Ok(false),
                Err(err) => return Err(err.into()),
            };
            let held = convert(&rfs::fstat(&fd)?);
            if held.kind != Kind::File || held.nlink != 1 {
                return Ok(false);
            }
            match rfs::flock(&fd, rfs::FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => {}
                Err(Errno::WOULDBLOCK) => return Ok(false),
                Err(err) => return Err(err.into()),
            }
            // Still the same file under that name, and locked by us: nobody can be writing it.
            if self.stat(name)?.is_none_or(|now| now.id != held.id) {
                return Ok(false);
            }
            self.unlink(name)?;
            Ok(true)
        }

        /// Sets the permission bits and (best effort) the owner of a file we created.
        pub fn adopt_permissions(file: &File, stat: &Stat) -> io::Result<()> {
            rfs::fchmod(file, Mode::from_raw_mode(stat.mode as rfs::RawMode))?;
            let now = convert(&rfs::fstat(file)?);
            if now.uid != stat.uid || now.gid != stat.gid {
                // Only the owner's group (or root) may change these; a file we cannot hand back
                // keeps our ownership, as an editor's save would.
                let owner = Some(rfs::Uid::from_raw(stat.uid));
                let group = Some(rfs::Gid::from_raw(stat.gid));
                if rfs::fchown(file, owner, group).is_err() {
                    let _ = rfs::fchown(file, None, group);
                }
            }
            Ok(())
        }

        /// Renames `from` in this directory to `to` in `to_dir`, replacing a non-directory there.
        pub fn rename(&self, from: &OsStr, to_dir: &Dir, to: &OsStr) -> io::Result<()> {
            check_name(from)?;
            check_name(to)?;
            Ok(rfs::renameat(&self.fd, from, &to_dir.fd, to)?)
        }

        /// Renames `from` to `to` in `to_dir` only when `to` does not exist (`AlreadyExists` else).
        pub fn rename_noreplace(&self, from: &OsStr, to_dir: &Dir, to: &OsStr) -> io::Result<()> {
            check_name(from)?;
            check_name(to)?;
            #[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
            {
                match rfs::renameat_with(&self.fd, from, &to_dir.fd, to, rfs::RenameFlags::NOREPLACE) {
                    Ok(()) => return Ok(()),
                    Err(Errno::EXIST) => return Err(io::ErrorKind::AlreadyExists.into()),
                    // File systems without the flag: fall back to check-then-rename below.
                    Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {}
                    Err(err) => return Err(err.into()),
                }
            }
            if to_dir.stat(to)?.is_some() {
                return Err(io::ErrorKind::AlreadyExists.into());
            }
            Ok(rfs::renameat(&self.fd, from, &to_dir.fd, to)?)
        }

        /// Removes the non-directory entry `name` (a link is removed itself, never followed).
        pub fn unlink(&self, name: &OsStr) -> io::Result<()> {
            check_name(name)?;
            Ok(rfs::unlinkat(&self.fd, name, AtFlags::empty())?)
        }

        /// Removes the empty directory `name`.
        pub fn remove_dir(&self, name: &OsStr) -> io::Result<()> {
            check_name(name)?;
            Ok(rfs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR)?)
        }

        /// Creates the directory `name` (permissions `0o777` less the umask).
        pub fn mkdir(&self, name: &OsStr) -> io::Result<()> {
            check_name(name)?;
            Ok(rfs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o777))?)
        }

        /// The names in this directory (without `.` and `..`), in no particular order.
        pub fn entries(&self) -> io::Result<Vec<OsString>> {
            let mut res = Vec::new();
            for entry in rfs::Dir::read_from(&self.fd)? {
                let entry = entry?;
                let name = entry.file_name().to_bytes();
                if name != b"." && name != b".." {
                    res.push(OsStr::from_bytes(name).to_owned());
                }
            }
            Ok(res)
        }

        /// Flushes the directory itself (makes renames and removals durable).
        pub fn sync(&self) -> io::Result<()> {
            Ok(rfs::fsync(&self.fd)?)
        }
    }
}

#[cfg(windows)]
mod windows {
    use std::ffi::{OsStr, OsString};
    use std::fs::{File, OpenOptions};
    use std::io;
    use std::os::windows::fs::{MetadataExt, OpenOptionsExt};
    use std::path::{Path, PathBuf};

    use super::{Kind, OpenDirError, Stat, TempFile, changed_error, check_name, temp_name};

    const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;

    /// A directory whose every component was checked not to be a link when it was opened.
    #[derive(Debug)]
    pub struct Dir {
        path: PathBuf,
    }

    fn convert(meta: &std::fs::Metadata) -> Stat {
        let kind = if crate::workspace::path::is_link_attributes(meta.file_type().is_symlink(), meta.file_attributes())
        {
            Kind::Link
        } else if meta.is_dir() {
            Kind::Directory
        } else if meta.is_file() {
            Kind::File
        } else {
            Kind::Other
        };
        let mode = if meta.permissions().readonly() { 0o444 } else { 0o666 };
        // Link counts and file indexes need unstable std APIs; report one name and no identity.
        Stat { kind, nlink: 1, mode, uid: 0, gid: 0, id: None }
    }

    impl Dir {
        pub fn open_root(path: &Path) -> Result<Dir, OpenDirError> {
            match std::fs::symlink_metadata(path) {
                Ok(meta) => match convert(&meta).kind {
                    Kind::Directory => Ok(Dir { path: path.to_path_buf() }),
                    Kind::Link => Err(OpenDirError::Link),
                    _ => Err(OpenDirError::NotADirectory),
                },
                Err(err) if err.kind() == io::ErrorKind::NotFound => Err(OpenDirError::NotFound),
                Err(err) => Err(OpenDirError::Io(err)),
            }
        }

        pub fn open_dir(&self, name: &OsStr) -> Result<Dir, OpenDirError> {
            check_name(name).map_err(OpenDirError::Io)?;
            match self.stat(name) {
                Ok(Some(stat)) => match stat.kind {
                    Kind::Directory => Ok(Dir { path: self.path.join(name) }),
                    Kind::Link => Err(OpenDirError::Link),
                    _ => Err(OpenDirError::NotADirectory),
                },
                Ok(None) => Err(OpenDirError::NotFound),
                Err(err) => Err(OpenDirError::Io(err)),
            }
        }

        pub fn stat(&self, name: &OsStr) -> io::Result<Option<Stat>> {
            check_name(name)?;
            match std::fs::symlink_metadata(self.path.join(name)) {
                Ok(meta) => Ok(Some(convert(&meta))),
                Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(err) => Err(err),
            }
        }

        pub fn own_stat(&self) -> io::Result<Stat> {
            Ok(convert(&std::fs::symlink_metadata(&self.path)?))
        }

        pub fn open_file(&self, name: &OsStr, expected: &Stat) -> io::Result<File> {
            check_name(name)?;
            let file =
                OpenOptions::new().read(true).custom_flags(FILE_FLAG_OPEN_REPARSE_POINT).open(self.path.join(name))?;
            let now = convert(&file.metadata()?);
            if now.kind != Kind::File || now.kind != expected.kind {
                return Err(changed_error());
            }
            Ok(file)
        }

        pub fn create_temp(&self, _mode: u32) -> io::Result<TempFile<'_>> {
            for _ in 0..16 {
                let name = temp_name()?;
                match OpenOptions::new().write(true).create_new(true).open(self.path.join(&name)) {
                    Ok(file) => return Ok(TempFile { dir: self, name: OsString::from(name), file: Some(file) }),
                    Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
                    Err(err) => return Err(err),
                }
            }
            Err(io::Error::new(io::ErrorKind::AlreadyExists, "no free temporary file name"))
        }

        /// Windows cannot tell a temporary file another live server is writing from an abandoned
        /// one without locks the std API does not offer: nothing is ever removed (listings and
        /// searches hide the names anyway).
        pub fn remove_if_abandoned(&self, name: &OsStr) -> io::Result<bool> {
            check_name(name)?;
            Ok(false)
        }

        pub fn adopt_permissions(file: &File, stat: &Stat) -> io::Result<()> {
            let mut permissions = file.metadata()?.permissions();
            permissions.set_readonly(stat.mode & 0o222 == 0);
            file.set_permissions(permissions)
        }

        pub fn rename(&self, from: &OsStr, to_dir: &Dir, to: &OsStr) -> io::Result<()> {
            check_name(from)?;
            check_name(to)?;
            if to_dir.stat(to)?.is_some_and(|stat| stat.kind == Kind::Link) {
                return Err(changed_error());
            }
            std::fs::rename(self.path.join(from), to_dir.path.join(to))
        }

        pub fn rename_noreplace(&self, from: &OsStr, to_dir: &Dir, to: &OsStr) -> io::Result<()> {
            check_name(from)?;
            check_name(to)?;
            if to_dir.stat(to)?.is_some() {
                return Err(io::ErrorKind::AlreadyExists.into());
            }
            std::fs::rename(self.path.join(from), to_dir.path.join(to))
        }

        pub fn unlink(&self, name: &OsStr) -> io::Result<()> {
            check_name(name)?;
            std::fs::remove_file(self.path.join(name))
        }

        pub fn remove_dir(&self, name: &OsStr) -> io::Result<()> {
            check_name(name)?;
            std::fs::remove_dir(self.path.join(name))
        }

        pub fn mkdir(&self, name: &OsStr) -> io::Result<()> {
            check_name(name)?;
            std::fs::create_dir(self.path.join(name))
        }

        pub fn entries(&self) -> io::Result<Vec<OsString>> {
            std::fs::read_dir(&self.path)?.map(|entry| entry.map(|e| e.file_name())).collect()
        }

        pub fn sync(&self) -> io::Result<()> {
            Ok(())
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_recognised_exactly() {
        let name = temp_name().unwrap();
        assert!(is_temp_name(&name), "{name}");
        assert!(!is_temp_name(".forgemcp-tmp-"));
        assert!(!is_temp_name(".forgemcp-tmp-notes"));
        assert!(!is_temp_name(".forgemcp-tmp-0123456789ABCDEF"));
        assert!(!is_temp_name(".forgemcp-tmp-0123456789abcdef0"));
        assert!(is_temp_name(".forgemcp-tmp-0123456789abcdef"));
    }

    #[test]
    fn names_must_be_single_components() {
        for bad in ["", ".", "..", "a/b", "a\0b"] {
            assert!(check_name(OsStr::new(bad)).is_err(), "{bad:?}");
        }
        assert!(check_name(OsStr::new("...")).is_ok());
    }

    #[test]
    fn links_are_never_opened_as_directories() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        std::fs::write(dir.path().join("file"), "x").unwrap();
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("link")).unwrap();
        let root = Dir::open_root(dir.path()).unwrap();
        assert!(root.open_dir(OsStr::new("real")).is_ok());
        assert!(matches!(root.open_dir(OsStr::new("link")), Err(OpenDirError::Link)));
        assert!(matches!(root.open_dir(OsStr::new("file")), Err(OpenDirError::NotADirectory)));
        assert!(matches!(root.open_dir(OsStr::new("missing")), Err(OpenDirError::NotFound)));
        assert_eq!(root.stat(OsStr::new("link")).unwrap().unwrap().kind, Kind::Link);
        assert!(root.stat(OsStr::new("missing")).unwrap().is_none());
    }

    #[cfg(unix)]
    #[test]
    fn only_unlocked_temporary_files_count_as_abandoned() {
        let dir = tempfile::tempdir().unwrap();
        let writer = Dir::open_root(dir.path()).unwrap();
        let other_server = Dir::open_root(dir.path()).unwrap();
        let temp = writer.create_temp(0o600).unwrap();
        let name = temp.name.clone();
        assert!(!other_server.remove_if_abandoned(&name).unwrap(), "a file being written is in use");
        assert!(dir.path().join(&name).exists());
        // A killed writer: the name stays, the lock goes with the descriptor.
        let mut temp = temp;
        drop(temp.file.take());
        temp.name.clear();
        assert!(other_server.remove_if_abandoned(&name).unwrap(), "an unlocked leftover is abandoned");
        assert!(!dir.path().join(&name).exists());
    }

    #[test]
    fn a_dropped_temporary_file_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let root = Dir::open_root(dir.path()).unwrap();
        {
            let mut temp = root.create_temp(0o600).unwrap();
            std::io::Write::write_all(temp.file(), b"partial").unwrap();
        }
        assert!(root.entries().unwrap().is_empty());
        let mut temp = root.create_temp(0o600).unwrap();
        std::io::Write::write_all(temp.file(), b"done").unwrap();
        temp.sync().unwrap();
        temp.commit(OsStr::new("target"), false).unwrap();
        assert_eq!(root.entries().unwrap(), vec![OsString::from("target")]);
        assert_eq!(std::fs::read(dir.path().join("target")).unwrap(), b"done");
        let temp = root.create_temp(0o600).unwrap();
        let err = temp.commit(OsStr::new("target"), false).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(root.entries().unwrap(), vec![OsString::from("target")]);
    }

    #[test]
    fn opening_a_file_checks_its_identity() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "a").unwrap();
        std::fs::write(dir.path().join("b"), "b").unwrap();
        let root = Dir::open_root(dir.path()).unwrap();
        let a = root.stat(OsStr::new("a")).unwrap().unwrap();
        assert!(root.open_file(OsStr::new("a"), &a).is_ok());
        std::fs::rename(dir.path().join("b"), dir.path().join("a")).unwrap();
        assert!(root.open_file(OsStr::new("a"), &a).is_err());
    }
}

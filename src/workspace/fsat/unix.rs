//! The Unix implementation of `fsat`: a `Dir` is a descriptor opened with `O_NOFOLLOW` relative to
//! its parent's, and every operation is relative to a held descriptor (`rustix`).
//!
//! Architecture invariant: no path is checked and then used again; nothing follows a link.

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

    /// Sets this directory's own permission bits.
    pub fn set_mode(&self, mode: u32) -> io::Result<()> {
        Ok(rfs::fchmod(&self.fd, Mode::from_raw_mode((mode & 0o7777) as rfs::RawMode))?)
    }

    /// Flushes the directory itself (makes renames and removals durable).
    pub fn sync(&self) -> io::Result<()> {
        Ok(rfs::fsync(&self.fd)?)
    }
}

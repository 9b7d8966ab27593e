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
//! `unix.rs` and `windows.rs` hold the two implementations of `Dir`.
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

/// Sets the permission bits of an open file or directory (Windows: only the read-only flag).
pub fn set_mode(file: &File, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(mode & 0o7777))
    }
    #[cfg(not(unix))]
    {
        let mut permissions = file.metadata()?.permissions();
        permissions.set_readonly(mode & 0o222 == 0);
        file.set_permissions(permissions)
    }
}

/// The permission bits of an open file as `Stat::mode` gives them.
pub fn file_mode(file: &File) -> io::Result<u32> {
    let meta = file.metadata()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Ok(meta.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        Ok(if meta.permissions().readonly() { 0o444 } else { 0o666 })
    }
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
mod unix;

#[cfg(windows)]
mod windows;

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

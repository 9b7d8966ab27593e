//! The Windows implementation of `fsat`: a `Dir` holds a path whose every component was checked not
//! to be a link or junction when it was opened; operations re-check the entry they touch.
//!
//! Architecture invariant: no function here follows a final reparse point (file opens pass
//! `FILE_FLAG_OPEN_REPARSE_POINT`).

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
    let kind = if crate::workspace::path::is_link_attributes(meta.file_type().is_symlink(), meta.file_attributes()) {
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

    /// Directories have no permission bits of their own here.
    pub fn set_mode(&self, _mode: u32) -> io::Result<()> {
        Ok(())
    }

    pub fn sync(&self) -> io::Result<()> {
        Ok(())
    }
}

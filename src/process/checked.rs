//! [`CheckedExecutable`]: an executable opened once, where it was checked, so that running it runs
//! exactly the checked file, not whatever its path names a moment later (a component swapped for a
//! link to another directory, or the file replaced).
//!
//! Linux: the file is held by an `O_PATH` descriptor verified to lie inside a managed root
//! (`workspace::opened`); the child execs `/proc/self/fd/<n>` (the kernel's `fexecve`), with
//! `argv[0]` still the checked path, and the descriptor's close-on-exec flag cleared in the child only,
//! so `#!` scripts, whose interpreter opens that path after the exec, work too. Elsewhere the checked
//! path is run (the window between the check and the exec remains there).
//!
//! Callers: `cmake_run_test`. The debugger hands its adapter the checked path (lldb-dap opens the
//! program itself), so the window between check and launch remains there.

#[cfg(target_os = "linux")]
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
#[cfg(target_os = "linux")]
use std::sync::Arc;

use crate::workspace::opened::{Place, Purpose, open_checked};
use crate::workspace::path::Roots;

/// An executable file opened where it was checked (see the module docs).
#[derive(Debug, Clone)]
pub struct CheckedExecutable {
    path: PathBuf,
    /// Linux: the descriptor the child executes (elsewhere the check's handle is closed again).
    #[cfg(target_os = "linux")]
    file: Arc<File>,
}

/// Why an executable cannot be pinned.
#[derive(Debug, thiserror::Error)]
pub enum CheckedExecutableError {
    #[error("is not a regular file")]
    NotAFile,
    #[error("cannot be opened: {0}")]
    Open(#[source] io::Error),
}

impl CheckedExecutable {
    /// Opens the executable at `abs` (resolved from a checked qualified path; links inside the roots
    /// may have been followed) and verifies that the object opened is a regular file inside `roots`.
    pub fn open(abs: &Path, roots: &Roots) -> Result<CheckedExecutable, CheckedExecutableError> {
        let file =
            open_checked(abs, Place::InsideRoots(roots), Purpose::Inspect).map_err(CheckedExecutableError::Open)?;
        let meta = file.metadata().map_err(CheckedExecutableError::Open)?;
        if !meta.is_file() {
            return Err(CheckedExecutableError::NotAFile);
        }
        Ok(CheckedExecutable {
            path: abs.to_path_buf(),
            #[cfg(target_os = "linux")]
            file: Arc::new(file),
        })
    }

    /// The checked path: what processes show and the child's `argv[0]`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    #[cfg(target_os = "linux")]
    pub(crate) fn file(&self) -> &File {
        &self.file
    }
}

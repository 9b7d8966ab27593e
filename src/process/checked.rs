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
//! A program that opens the executable itself (a debug adapter) is handed [`CheckedExecutable::name`]:
//! Linux: `/proc/<server pid>/fd/<n>`, a name of the held descriptor and nothing else, valid while
//! this value lives; every open and exec through it reaches the checked file.
//! [`CheckedExecutable::runs_in`] confirms afterwards that a process executes the checked file.
//!
//! Callers: `cmake_run_test` (through `CommandSpec::checked`), the debugger (`debug/launch.rs`).

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

    /// The name to hand a program that opens or execs the executable itself. Linux:
    /// `/proc/<server pid>/fd/<n>`, which names the held descriptor and nothing else for as long as
    /// this value (or a clone) lives, whatever the checked path names meanwhile. Elsewhere the checked
    /// path (the window between check and use remains there).
    pub fn name(&self) -> PathBuf {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd as _;
            PathBuf::from(format!("/proc/{}/fd/{}", std::process::id(), self.file.as_raw_fd()))
        }
        #[cfg(not(target_os = "linux"))]
        {
            self.path.clone()
        }
    }

    /// Linux: whether process `pid` executes the checked file (its `/proc/<pid>/exe` has the checked
    /// file's device and inode). A `#!` script's process executes its interpreter, so this is false
    /// for scripts.
    #[cfg(target_os = "linux")]
    pub fn runs_in(&self, pid: u32) -> io::Result<bool> {
        use std::os::unix::fs::MetadataExt as _;
        let running = std::fs::metadata(format!("/proc/{pid}/exe"))?;
        let checked = self.file.metadata()?;
        Ok((running.dev(), running.ino()) == (checked.dev(), checked.ino()))
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::workspace::path::Roots;

    /// A root with an executable copy of `sleep` at `project/d/t`.
    fn fixture() -> (tempfile::TempDir, Roots, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let (project, storage) = (base.join("project"), base.join("storage"));
        std::fs::create_dir_all(project.join("d")).unwrap();
        std::fs::create_dir_all(&storage).unwrap();
        let exe = project.join("d/t");
        std::fs::copy("/bin/sleep", &exe).unwrap();
        let roots = Roots::new(project, storage);
        (dir, roots, exe)
    }

    #[expect(clippy::disallowed_methods, reason = "the test starts the executable it checked directly")]
    fn spawn(program: &Path) -> std::process::Child {
        std::process::Command::new(program).arg("5").spawn().unwrap()
    }

    #[test]
    fn the_name_reaches_the_checked_file_after_a_swap_and_runs_in_tells_processes_apart() {
        let (_dir, roots, exe) = fixture();
        let checked = CheckedExecutable::open(&exe, &roots).unwrap();
        let name = checked.name();
        assert!(name.starts_with(format!("/proc/{}/fd", std::process::id())), "{}", name.display());
        let project = roots.project().to_path_buf();
        std::fs::rename(project.join("d"), project.join("d.real")).unwrap();
        std::fs::create_dir(project.join("d")).unwrap();
        std::fs::write(project.join("d/t"), "#!/bin/sh\nexit 0\n").unwrap();
        let mut pinned = spawn(&name);
        let mut other = spawn(Path::new("/bin/sleep"));
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(checked.runs_in(pinned.id()).unwrap(), "the name ran the checked file");
        assert!(!checked.runs_in(other.id()).unwrap(), "another program is told apart");
        for child in [&mut pinned, &mut other] {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }
}

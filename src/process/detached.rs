//! Programs that must outlive the server: the admin Hub (started by the first instance that finds
//! none) and the system's browser opener (`forgemcp --open-admin`).
//!
//! These are deliberately not runs of [`ProcessService`](super::ProcessService): a service run is
//! tied to one workspace (its working directory lies inside the roots), shown in
//! `processes_overview`, and killed as a tree at shutdown, while a Hub must survive the instance that
//! started it and an opener has no workspace at all. What they keep from the service's rules: the
//! command is built only here, stdin and stdout are never inherited (stdout is the MCP channel), and
//! the child carries no process-tree marker, so no service ever kills it as part of a tree, and its
//! pid is registered as detached, so no stray sweep kills it either.
//!
//! Architecture invariant: with `run.rs`, this is the only file that constructs OS commands.
//! Architecture invariant: a detached child starts in its own process group (Unix) or as a detached
//! process in a new group (Windows), with null stdin and stdout, in the temporary directory (so it
//! keeps no workspace directory busy), and is never killed on drop.

use std::ffi::OsString;
use std::io;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use super::tree::TREE_MARKER;

/// What to start.
#[derive(Debug)]
pub struct DetachedSpec {
    pub program: PathBuf,
    /// Literal arguments; no shell is involved.
    pub args: Vec<OsString>,
    /// Where the child's stderr goes; `None` is the null device.
    pub stderr: Option<std::fs::File>,
}

impl DetachedSpec {
    pub fn new(program: impl Into<PathBuf>) -> DetachedSpec {
        DetachedSpec { program: program.into(), args: Vec::new(), stderr: None }
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> DetachedSpec {
        self.args.push(arg.into());
        self
    }
}

/// A started detached child. Dropping it leaves the child running (the runtime reaps it once it
/// exits).
#[derive(Debug)]
pub struct Detached {
    child: tokio::process::Child,
}

impl Detached {
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Waits at most `limit` for the child to exit; `None` when it is still running.
    pub async fn wait_timeout(&mut self, limit: Duration) -> io::Result<Option<ExitStatus>> {
        match tokio::time::timeout(limit, self.child.wait()).await {
            Ok(status) => status.map(Some),
            Err(_) => Ok(None),
        }
    }

    /// Waits until the child exits (so it does not linger as a zombie while the server runs).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        self.child.wait().await
    }
}

/// Starts `spec` detached from this process (see the module docs).
pub fn spawn_detached(spec: DetachedSpec) -> io::Result<Detached> {
    #[expect(clippy::disallowed_methods, reason = "the process module is the one place that builds OS commands")]
    let mut command = tokio::process::Command::new(&spec.program);
    command
        .args(&spec.args)
        .current_dir(std::env::temp_dir())
        .env_remove(TREE_MARKER)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(match spec.stderr {
            Some(file) => Stdio::from(file),
            None => Stdio::null(),
        })
        .kill_on_drop(false);
    #[cfg(unix)]
    {
        // Its own process group: a terminal's Ctrl-C or a tree kill of the starter never reaches it.
        command.process_group(0);
    }
    #[cfg(windows)]
    {
        const DETACHED_PROCESS: u32 = 0x0000_0008;
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        const CREATE_BREAKAWAY_FROM_JOB: u32 = 0x0100_0000;
        // Leave a job object the client may have put the server in, when the job allows it;
        // otherwise start inside it (the Hub then ends with the job, and the next instance starts
        // a new one).
        command.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_BREAKAWAY_FROM_JOB);
        if let Ok(child) = command.spawn() {
            return Ok(Detached { child });
        }
        command.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP);
    }
    // Registered before the lock is released: a stray sweep never mistakes it for a stray.
    let mut detached = super::tree::detached_children();
    let child = command.spawn()?;
    if let Some(pid) = child.id() {
        detached.insert(pid);
    }
    Ok(Detached { child })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_detached_child_leads_its_own_process_group() {
        let mut child = spawn_detached(
            DetachedSpec::new("/bin/sh").arg("-c").arg("test \"$(ps -o pgid= -p $$ | tr -d ' ')\" = $$ && exit 7"),
        )
        .expect("spawn sh");
        let status = child.wait_timeout(Duration::from_secs(10)).await.expect("wait").expect("exited");
        assert_eq!(status.code(), Some(7));
    }

    #[tokio::test]
    async fn wait_timeout_reports_a_running_child() {
        let mut child = spawn_detached(DetachedSpec::new("/bin/sh").arg("-c").arg("sleep 5")).expect("spawn sh");
        assert!(child.wait_timeout(Duration::from_millis(50)).await.expect("wait").is_none());
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(child.pid().expect("pid") as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        let _ = child.wait().await;
    }
}

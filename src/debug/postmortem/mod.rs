//! Post-mortem: the stack of a program that ended by a signal, or of one stopped by its timeout, for
//! `cmake_test`, `cmake_run_test` and `debug_launch` results.
//!
//! - `core_file.rs` — which program an ELF core belongs to.
//! - `capture.rs` — one short lldb-dap session (a core file, a re-run, a re-run paused at the
//!   timeout) and what it shows: the crashing thread's frames, the innermost project frame's line
//!   and locals, every thread's innermost project frames.
//! - `render.rs` — the text: at most [`TEXT_FRAMES`] frame lines, system frames collapsed per
//!   library, the assertion of a failed `assert`.
//!
//! Where the stack comes from, in order: a core file the system wrote (the caller found it, see
//! `process::core_dumps`) when it belongs to the program; else the same command line, working
//! directory and environment run once more under lldb-dap. A re-run that does not crash makes the
//! crash intermittent; the signal the caller saw stays in its result. Hangs: the program is run again
//! under lldb-dap and paused when its timeout passes (CTest ends its own tests at their timeout, so
//! the original process is gone before ForgeMCP could attach to it; one way serves both tools).
//!
//! Architecture invariant: every session here is started through the process service, ends before
//! [`DebugService::postmortem`] returns (also when the call is cancelled: dropping the session kills
//! its tree), never counts against the interactive sessions' limit, and runs only the checked
//! executable.

mod capture;
pub mod core_file;
mod render;

use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;

use super::model::Value;
use super::session::AdapterKind;
use super::{DebugService, Error, LaunchRequest};
use crate::call::Call;
use crate::process::CheckedExecutable;
use crate::process::core_dumps::Core;
use crate::workspace::path::QualifiedPath;
pub use capture::explain_stop;
pub use render::{TEXT_FRAMES, text};

/// Signals whose death is explained with a stack.
pub const CRASH_SIGNALS: [&str; 6] = ["SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT", "SIGTRAP"];
/// How long a re-run may take to crash again.
pub const RERUN_WAIT: Duration = Duration::from_secs(30);
/// How long a hung program runs under the debugger before it is paused, at most.
pub const HANG_WAIT: Duration = Duration::from_secs(10);

/// Where a crash's stack came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CrashSource {
    /// The core file the system wrote.
    CoreFile,
    /// The program crashed again when run under lldb-dap.
    Reproduced,
    /// It did not crash again under the debugger.
    Intermittent,
    /// A hung program, paused under the debugger at its timeout.
    Paused,
    /// The program stopped at the signal in a `debug_launch` session.
    Session,
    /// No stack: no debugger, or it could not be taken (`note` says why).
    Unavailable,
}

/// One frame of a crash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CrashFrame {
    pub function: String,
    /// Qualified path of the source (`project/…`, `storage/…`, `root/…`), when known.
    pub path: Option<String>,
    pub line: u32,
    /// The library or executable the frame's code is in, when known.
    pub library: Option<String>,
    /// True for a frame whose source is in the project or storage.
    pub project: bool,
}

/// A source line of a frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SourceLine {
    pub path: String,
    pub line: u32,
    pub text: String,
}

/// One thread of a paused (hung) program: its innermost frames in the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ThreadStack {
    pub thread_id: i64,
    pub name: String,
    /// The innermost frame (where it waits), then its innermost project frames.
    pub frames: Vec<CrashFrame>,
    /// The innermost project frame's line.
    pub line: Option<SourceLine>,
}

/// The stack of a crash or a hang.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Crash {
    pub source: CrashSource,
    /// The signal (`SIGSEGV`), as the failed run showed it.
    pub signal: Option<String>,
    /// The debugger's description of the stop (`address not mapped to object (fault address: 0x0)`).
    pub description: Option<String>,
    /// The failed assertion's text (`x > 0`).
    pub assertion: Option<String>,
    /// The crashing thread's frames, innermost first (all of them; the text shows at most 16 lines).
    pub frames: Vec<CrashFrame>,
    /// The line of the innermost project frame.
    pub line: Option<SourceLine>,
    /// The locals and arguments of the innermost project frame.
    pub locals: Vec<Value>,
    /// A hung program's threads.
    pub threads: Vec<ThreadStack>,
    /// Why there is no stack, or what the re-run did instead.
    pub note: Option<String>,
}

impl Crash {
    pub fn unavailable(signal: Option<String>, note: String) -> Crash {
        Crash {
            source: CrashSource::Unavailable,
            signal,
            description: None,
            assertion: None,
            frames: Vec::new(),
            line: None,
            locals: Vec::new(),
            threads: Vec::new(),
            note: Some(note),
        }
    }
}

/// The program to explain: exactly what ran.
#[derive(Debug, Clone)]
pub struct Target {
    pub executable: QualifiedPath,
    pub checked: CheckedExecutable,
    pub arguments: Vec<String>,
    pub cwd: PathBuf,
    /// Variables set on top of the server's environment (`KEY=VALUE`).
    pub env: Vec<String>,
    /// What the failed run printed (for a failed assertion's text), when known.
    pub output: String,
}

/// How the program failed.
#[derive(Debug, Clone)]
pub enum Failure {
    /// Killed by one of [`CRASH_SIGNALS`]; `core` when the system wrote one.
    Signal { signal: String, core: Option<Core> },
    /// Stopped by its timeout after `after`.
    Hang { after: Duration },
}

impl DebugService {
    /// The stack of `target`'s failure (see the module docs). Never fails: a stack that cannot be
    /// taken is a [`CrashSource::Unavailable`] result that says why. A new core file of the program is
    /// removed once read.
    pub async fn postmortem(&self, target: &Target, failure: &Failure, call: &Call) -> Crash {
        let signal = match failure {
            Failure::Signal { signal, .. } => Some(signal.clone()),
            Failure::Hang { .. } => None,
        };
        match self.adapter(None, Some(AdapterKind::LldbDap), call).await {
            Ok((_, adapter, environment)) => {
                let adapter = capture::Adapter { path: adapter, environment };
                match failure {
                    Failure::Signal { signal, core } => {
                        let from_core = match core {
                            Some(core) => self.stack_from_core(&adapter, target, core, signal, call).await,
                            None => None,
                        };
                        match from_core {
                            Some(crash) => crash,
                            None => self.rerun(&adapter, target, signal, call).await,
                        }
                    }
                    Failure::Hang { after } => self.paused(&adapter, target, (*after).min(HANG_WAIT), call).await,
                }
            }
            Err(err) => Crash::unavailable(signal.clone(), format!("no stack: no debugger ({err})")),
        }
    }
}

impl DebugService {
    /// The core file `core` (a qualified path) for a `debug_launch` of `program`: a regular file in
    /// the project or storage that the executable wrote, and a request that only inspects.
    pub(super) fn core_of(
        &self,
        core: &str,
        program: &Path,
        executable: &QualifiedPath,
        request: &LaunchRequest,
    ) -> Result<PathBuf, Error> {
        let fail = |reason: String| Error::Argument { argument: "core", reason };
        if !request.breakpoints.is_empty() || request.stop_on_entry {
            return Err(fail("a core file is inspected, not run: breakpoints and stop_on_entry do not apply".into()));
        }
        if request.debugger == Some(AdapterKind::Gdb) {
            return Err(fail("core files are read with lldb-dap, not gdb".into()));
        }
        let (path, abs) = self.resolve(core, "core", false)?;
        core_file::check(&abs, program).map_err(|mismatch| match mismatch {
            core_file::Mismatch::Unreadable(reason) => fail(format!("`{path}` {reason}")),
            core_file::Mismatch::Owner(owner) => {
                let roots = self.inner.workspace.roots();
                let shown = roots.qualify(Path::new(&owner)).map_or(owner, |p| p.to_string());
                fail(format!("`{path}` was written by `{shown}`, not by `{executable}`"))
            }
        })?;
        Ok(abs)
    }
}

//! What to run: executable, literal arguments, working directory, environment, stdin and limits.
//!
//! Architecture invariant: a `CommandSpec` is plain data; nothing is spawned or checked here. The
//! service validates the working directory and builds the OS command in `run.rs`, the only place that
//! may.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::checked::CheckedExecutable;
use super::journal::Stream;

/// Limits for one run (INTERFACE.md §1.6): `total` counts from the start, `idle` since the last
/// transcript chunk (stdin included). `None` disables a limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timeout {
    pub total: Option<Duration>,
    pub idle: Option<Duration>,
}

impl Timeout {
    pub const NONE: Timeout = Timeout { total: None, idle: None };

    pub fn total(total: Duration) -> Timeout {
        Timeout { total: Some(total), idle: None }
    }
}

/// What the child reads on stdin.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Stdin {
    /// stdin is closed (the null device).
    #[default]
    Null,
    /// These bytes are written (and recorded as `stdin`), then stdin is closed.
    Bytes(Vec<u8>),
    /// A pipe handed to the caller; only for long-lived processes.
    Piped,
}

/// Called with each complete line of output, without its LF (and without a CR right before it).
/// A final line without LF is delivered when its stream ends. Lines longer than 64 KiB are cut there.
pub type LineCallback = Arc<dyn Fn(Stream, &str) + Send + Sync>;

/// A command to run through the process service.
#[derive(Clone)]
pub struct CommandSpec {
    pub executable: PathBuf,
    /// Literal arguments after the executable; no shell is involved.
    pub arguments: Vec<OsString>,
    /// Must lie inside the project or storage root.
    pub cwd: PathBuf,
    /// Start from an empty environment instead of the server's (then `env` is the whole environment).
    pub env_clear: bool,
    /// Variables to set (`Some`) or remove (`None`), applied after `env_clear`.
    pub env: BTreeMap<OsString, Option<OsString>>,
    pub stdin: Stdin,
    pub timeout: Timeout,
    pub on_line: Option<LineCallback>,
    /// Run exactly this opened file (its path is `executable`); see [`CommandSpec::checked`].
    pub pinned: Option<CheckedExecutable>,
    /// Raise the soft core-file size limit to the hard one in the child (and so in the programs it
    /// starts), so that a crash leaves a core file the post-mortem can read (`core_dumps.rs`).
    pub core_dumps: bool,
}

impl CommandSpec {
    pub fn new(executable: impl Into<PathBuf>, cwd: impl Into<PathBuf>) -> CommandSpec {
        CommandSpec {
            executable: executable.into(),
            arguments: Vec::new(),
            cwd: cwd.into(),
            env_clear: false,
            env: BTreeMap::new(),
            stdin: Stdin::Null,
            timeout: Timeout::NONE,
            on_line: None,
            pinned: None,
            core_dumps: false,
        }
    }

    /// Runs the file `executable` holds, whatever its path names by the time the child starts.
    pub fn checked(executable: CheckedExecutable, cwd: impl Into<PathBuf>) -> CommandSpec {
        let mut spec = CommandSpec::new(executable.path(), cwd);
        spec.pinned = Some(executable);
        spec
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> CommandSpec {
        self.arguments.push(arg.into());
        self
    }

    pub fn args<I: IntoIterator<Item = A>, A: Into<OsString>>(mut self, args: I) -> CommandSpec {
        self.arguments.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> CommandSpec {
        self.env.insert(key.into(), Some(value.into()));
        self
    }

    pub fn env_remove(mut self, key: impl Into<OsString>) -> CommandSpec {
        self.env.insert(key.into(), None);
        self
    }

    /// Runs with exactly the variables given through `env`.
    pub fn env_clear(mut self) -> CommandSpec {
        self.env_clear = true;
        self
    }

    pub fn stdin(mut self, stdin: Stdin) -> CommandSpec {
        self.stdin = stdin;
        self
    }

    pub fn timeout(mut self, timeout: Timeout) -> CommandSpec {
        self.timeout = timeout;
        self
    }

    /// Lets the program (and what it starts) write core files: see [`CommandSpec::core_dumps`].
    pub fn core_dumps(mut self) -> CommandSpec {
        self.core_dumps = true;
        self
    }

    /// Receives each output line as it is read (for progress derived from output, e.g. ninja's `[3/10]`).
    pub fn on_line(mut self, callback: LineCallback) -> CommandSpec {
        self.on_line = Some(callback);
        self
    }
}

impl fmt::Debug for CommandSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandSpec")
            .field("executable", &self.executable)
            .field("arguments", &self.arguments)
            .field("cwd", &self.cwd)
            .field("env_clear", &self.env_clear)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("stdin", &self.stdin)
            .field("timeout", &self.timeout)
            .field("on_line", &self.on_line.is_some())
            .field("core_dumps", &self.core_dumps)
            .finish()
    }
}

//! The process service: the one place where ForgeMCP starts programs, supervises them, and keeps
//! their transcripts for `processes_overview`, `process_get` and the process resources.
//!
//! Two spawn modes share one registry: [`ProcessService::run`] runs to completion with a recorded
//! transcript; [`ProcessService::spawn_long_lived`] hands stdin and stdout to the caller (clangd) while
//! still recording everything that passes through.
//!
//! Architecture invariant: only this module constructs OS commands (clippy `disallowed-methods`), so
//! every external program is registered, visible, and killed as a whole tree on timeout, cancellation,
//! owner drop and shutdown. The one exception is [`detached`]: the admin Hub and the browser opener,
//! which must outlive the server and belong to no workspace.
//! Architecture invariant: a working directory must lie inside the project or storage root, checked
//! component-wise on canonical paths.
//! Architecture invariant: this module knows nothing about MCP; it depends on `workspace::path`,
//! `workspace::opened` (to pin checked executables) and `call` only.

mod checked;
pub mod core_dumps;
pub mod detached;
pub mod journal;
#[cfg(target_os = "linux")]
mod leader;
mod registry;
mod run;
pub mod select;
mod shorten;
mod spec;
mod tree;
#[cfg(any(windows, test))]
mod verbatim;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use parking_lot::Mutex;

use crate::call::Call;
use crate::workspace::path::Roots;

pub use checked::{CheckedExecutable, CheckedExecutableError};
pub use journal::Stream;
pub use registry::{Completed, ProcessId, ProcessInfo, Status, Summary};
pub use run::{RecordedStdin, RecordedStdout};
pub use select::{LineSelector, Selection, SelectionError, TimeSelector};
pub use shorten::{Shortener, signal_name};
pub use spec::{CommandSpec, LineCallback, Stdin, Timeout};
pub use tree::{is_alive, own_every_descendant};

use journal::Journal;
use registry::{Record, Registry};
use run::Supervisor;
use select::Source;
use tree::{Leaders, Tree};

/// Errors of the process service.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("working directory `{cwd}` cannot be used")]
    CwdUnavailable {
        cwd: String,
        #[source]
        source: std::io::Error,
    },
    #[error("working directory `{cwd}` is not a directory")]
    CwdNotADirectory { cwd: String },
    #[error("working directory `{cwd}` is outside the project and storage roots")]
    CwdOutsideRoots { cwd: String },
    #[error("failed to start `{executable}`")]
    Spawn {
        executable: String,
        #[source]
        source: std::io::Error,
    },
    #[error("piped stdin is only available to long-lived processes")]
    PipedStdinNeedsLongLived,
    #[error("process {0} is not retained")]
    NotRetained(ProcessId),
    #[error("invalid transcript selection: {0}")]
    InvalidSelection(#[from] SelectionError),
    #[error("failed to read the transcript of process {id}")]
    Transcript {
        id: ProcessId,
        #[source]
        source: std::io::Error,
    },
    #[error("the process service is shutting down")]
    ShuttingDown,
}

/// Which processes an overview lists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StatusFilter {
    #[default]
    All,
    Running,
    Completed,
    /// Finished other than with exit code 0 (an error code, a signal, a timeout, stopped).
    Failed,
    /// Finished with exit code 0.
    Succeeded,
    /// Running ones first, then failed ones.
    RunningOrFailed,
}

impl StatusFilter {
    fn admits(self, status: Status) -> bool {
        match self {
            StatusFilter::All => true,
            StatusFilter::Running => status.is_running(),
            StatusFilter::Completed => !status.is_running(),
            StatusFilter::Failed => status.failed(),
            StatusFilter::Succeeded => status == Status::Exited(0),
            StatusFilter::RunningOrFailed => status.is_running() || status.failed(),
        }
    }
}

/// `processes_overview`: global counts and the filtered list, by increasing id (running ones first
/// for [`StatusFilter::RunningOrFailed`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Overview {
    pub running: usize,
    pub completed: usize,
    /// Completed ones that failed.
    pub failed: usize,
    pub processes: Vec<ProcessInfo>,
}

/// One transcript entry or fragment, with its wall-clock time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// UTC wall time when the chunk was recorded (start time plus monotonic elapsed time).
    pub timestamp: DateTime<Utc>,
    /// Time since the process started when the chunk was recorded.
    pub elapsed: Duration,
    pub stream: Stream,
    pub text: String,
    pub start_line: u64,
    pub end_line: u64,
}

/// `process_get`: the process and the selected part of its transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Details {
    pub process: ProcessInfo,
    pub transcript: Vec<LogEntry>,
    /// Inclusive span of the returned fragments; `None` when nothing is returned.
    pub lines: Option<(u64, u64)>,
}

/// A long-lived child: the caller writes stdin and reads stdout; both are recorded. Dropping it stops
/// the process (tree kill, status `stopped`) unless it already finished.
pub struct LongLived {
    pub id: ProcessId,
    pub pid: u32,
    /// `Some` when the spec asked for [`Stdin::Piped`].
    pub stdin: Option<RecordedStdin>,
    pub stdout: RecordedStdout,
    record: Arc<Record>,
}

impl LongLived {
    /// Waits until the process and its tree are gone.
    pub async fn wait(&self) -> Completed {
        wait_done(&self.record).await
    }

    /// Kills the tree (status `stopped`) and waits for the supervisor to finish.
    pub async fn stop(&self) -> Completed {
        self.record.stop.cancel();
        wait_done(&self.record).await
    }

    pub fn status(&self) -> Status {
        self.record.status()
    }

    /// Moves stdout out to a reader that must own it (an LSP client); reads through the field see
    /// end of file afterwards. Everything read is still recorded.
    pub fn take_stdout(&mut self) -> RecordedStdout {
        let empty = RecordedStdout { inner: None, record: self.record.clone() };
        std::mem::replace(&mut self.stdout, empty)
    }
}

impl Drop for LongLived {
    fn drop(&mut self) {
        self.record.stop.cancel();
    }
}

/// A process another registered process started (a debuggee its debug adapter launched), listed
/// with its own id and transcript. The owner feeds the transcript and reports the exit; it runs in
/// its parent's tree and is killed with it, so this record never kills anything itself. It ends as
/// `stopped` when dropped while running, when its parent's record ends, or at shutdown.
pub struct Observed {
    record: Arc<Record>,
}

impl Observed {
    pub fn id(&self) -> ProcessId {
        self.record.id
    }

    /// Records output the owner received for the process.
    pub fn output(&self, stream: Stream, bytes: &[u8]) {
        if self.record.status().is_running() {
            self.record.journal.record(stream, bytes);
        }
    }

    /// The process exited by itself with `code`.
    pub fn exited(&self, code: i32) {
        finish_observed(&self.record, Status::Exited(code));
    }
}

impl Drop for Observed {
    fn drop(&mut self) {
        finish_observed(&self.record, Status::Stopped);
    }
}

fn finish_observed(record: &Record, status: Status) {
    if record.status().is_running() {
        for stream in [Stream::Stdout, Stream::Stderr] {
            record.journal.finish(stream);
        }
        record.finish(status, record.started.elapsed());
    }
}

async fn wait_done(record: &Record) -> Completed {
    let mut done = record.subscribe();
    let res = match done.wait_for(Option::is_some).await {
        Ok(completed) => *completed,
        Err(_) => None,
    };
    res.expect("the record sends its completion before it is dropped")
}

/// The process service. Cheap to clone; clones share one registry.
#[derive(Clone)]
pub struct ProcessService {
    inner: Arc<Inner>,
}

struct Inner {
    roots: Roots,
    registry: Mutex<Registry>,
    leaders: Leaders,
    /// Prefix of every tree marker of this service: server pid and a random instance tag.
    marker_prefix: String,
    launches: AtomicU64,
    spill_dir: PathBuf,
    memory_budget: usize,
    closed: AtomicBool,
}

impl ProcessService {
    pub fn new(roots: Roots) -> ProcessService {
        ProcessService::with_memory_budget(roots, journal::DEFAULT_MEMORY_BUDGET)
    }

    /// Like `new`, with a different per-process memory budget for transcripts (tests use small ones).
    pub fn with_memory_budget(roots: Roots, memory_budget: usize) -> ProcessService {
        tree::become_subreaper();
        let mut tag = [0u8; 8];
        if getrandom::fill(&mut tag).is_err() {
            tag = u64::try_from(Utc::now().timestamp_nanos_opt().unwrap_or_default()).unwrap_or(0).to_le_bytes();
        }
        let marker_prefix = format!("{}-{:016x}", std::process::id(), u64::from_le_bytes(tag));
        let spill_dir = roots.storage().join("tmp").join("process-journals");
        ProcessService {
            inner: Arc::new(Inner {
                roots,
                registry: Mutex::new(Registry::default()),
                leaders: Leaders::default(),
                marker_prefix,
                launches: AtomicU64::new(0),
                spill_dir,
                memory_budget,
                closed: AtomicBool::new(false),
            }),
        }
    }

    /// Runs `spec` to completion. Cancelling `call.cancel` kills the tree (`stopped`); a total or idle
    /// timeout kills it too (`interrupted`). Dropping the returned future also stops the process.
    /// Returns after the transcript is complete.
    pub async fn run(&self, spec: CommandSpec, call: &Call) -> Result<Completed, Error> {
        if matches!(spec.stdin, Stdin::Piped) {
            return Err(Error::PipedStdinNeedsLongLived);
        }
        let record = self.launch(spec, false)?.0;
        let stop_on_drop = record.stop.clone().drop_guard();
        let completed = tokio::select! {
            completed = wait_done(&record) => completed,
            () = call.cancel.cancelled() => {
                record.stop.cancel();
                wait_done(&record).await
            }
        };
        stop_on_drop.disarm();
        Ok(completed)
    }

    /// Starts a long-lived process whose stdin (when [`Stdin::Piped`]) and stdout belong to the
    /// caller. Timeouts in the spec still apply; stderr is read and recorded by the service.
    pub async fn spawn_long_lived(&self, spec: CommandSpec) -> Result<LongLived, Error> {
        let (record, stdin, stdout) = self.launch(spec, true)?;
        let stdout =
            RecordedStdout { inner: Some(stdout.expect("long-lived launches keep stdout")), record: record.clone() };
        let stdin = stdin.map(|inner| RecordedStdin { inner, record: record.clone() });
        Ok(LongLived { id: record.id, pid: record.pid, stdin, stdout, record })
    }

    /// Registers `pid`, a process that the running process `parent` started, as [`Observed`].
    pub fn observe_child(
        &self,
        parent: ProcessId,
        pid: u32,
        executable: &Path,
        arguments: &[String],
        cwd: &Path,
    ) -> Result<Observed, Error> {
        let inner = &self.inner;
        if inner.closed.load(Ordering::SeqCst) {
            return Err(Error::ShuttingDown);
        }
        let parent = self.record(parent)?;
        let summary = Summary {
            executable: executable.to_string_lossy().into_owned(),
            arguments: arguments.to_vec(),
            cwd: cwd.to_string_lossy().into_owned(),
            encoding: "utf-8".to_owned(),
            timeout: Timeout::NONE,
        };
        let started = Instant::now();
        let journal = Journal::with_budget(started, Some(inner.spill_dir.clone()), inner.memory_budget);
        let tree = Tree {
            #[cfg(unix)]
            leader: pid,
            #[cfg(target_os = "linux")]
            marker: parent.tree.marker.clone(),
        };
        let record = {
            let mut registry = inner.registry.lock();
            let id = registry.next_id();
            let record = Arc::new(Record::new(id, summary, pid, started, Utc::now(), journal, tree));
            registry.insert(record.clone());
            record
        };
        let watched = record.clone();
        *record.task.lock() = Some(tokio::spawn(async move {
            let mut parent_done = parent.subscribe();
            tokio::select! {
                () = watched.stop.cancelled() => {}
                _ = parent_done.wait_for(Option::is_some) => {}
            }
            finish_observed(&watched, Status::Stopped);
        }));
        Ok(Observed { record })
    }

    /// Spawns, registers and starts supervising. In long-lived mode the stdin pipe (if any) and
    /// stdout are returned instead of being handled by the supervisor.
    #[allow(clippy::type_complexity)]
    fn launch(
        &self,
        spec: CommandSpec,
        long_lived: bool,
    ) -> Result<(Arc<Record>, Option<tokio::process::ChildStdin>, Option<tokio::process::ChildStdout>), Error> {
        let inner = &self.inner;
        if inner.closed.load(Ordering::SeqCst) {
            return Err(Error::ShuttingDown);
        }
        let cwd = self.check_cwd(&spec.cwd)?;
        let marker = format!("{}-{}", inner.marker_prefix, inner.launches.fetch_add(1, Ordering::SeqCst) + 1);
        let executable = spec.executable.to_string_lossy().into_owned();
        let started = Instant::now();
        let started_wall = Utc::now();
        let launch = run::spawn(&spec, &cwd, &marker, &inner.leaders)
            .map_err(|source| Error::Spawn { executable: executable.clone(), source })?;
        let summary = Summary {
            executable,
            arguments: spec.arguments.iter().map(|arg| arg.to_string_lossy().into_owned()).collect(),
            cwd: cwd.to_string_lossy().into_owned(),
            encoding: "utf-8".to_owned(),
            timeout: spec.timeout,
        };
        let journal = Journal::with_budget(started, Some(inner.spill_dir.clone()), inner.memory_budget);
        let tree = Tree {
            #[cfg(unix)]
            leader: launch.pid,
            #[cfg(target_os = "linux")]
            marker,
        };
        let record = {
            let mut registry = inner.registry.lock();
            let id = registry.next_id();
            let record = Arc::new(Record::new(id, summary, launch.pid, started, started_wall, journal, tree));
            registry.insert(record.clone());
            record
        };
        tracing::debug!(id = %record.id, pid = launch.pid, executable = %record.summary.executable, "process started");

        let (stdin_bytes, stdin_pipe) = match (spec.stdin, launch.stdin) {
            (Stdin::Bytes(bytes), Some(pipe)) => (Some((pipe, bytes)), None),
            (_, pipe) => (None, pipe),
        };
        let (stdout_for_supervisor, stdout_for_caller) =
            if long_lived { (None, Some(launch.stdout)) } else { (Some(launch.stdout), None) };
        let supervisor = Supervisor {
            record: record.clone(),
            child: launch.child,
            leaders: inner.leaders.clone(),
            stdout: stdout_for_supervisor,
            stderr: Some(launch.stderr),
            stdin: stdin_bytes,
            timeout: spec.timeout,
            on_line: spec.on_line,
        };
        // Owned: the handle lives in the record; shutdown awaits it and dropping the service aborts it.
        *record.task.lock() = Some(tokio::spawn(supervisor.run()));
        Ok((record, if long_lived { stdin_pipe } else { None }, stdout_for_caller))
    }

    fn check_cwd(&self, cwd: &Path) -> Result<PathBuf, Error> {
        let shown = || self.display_path(cwd);
        let canonical = std::fs::canonicalize(cwd).map_err(|source| Error::CwdUnavailable { cwd: shown(), source })?;
        if !canonical.is_dir() {
            return Err(Error::CwdNotADirectory { cwd: shown() });
        }
        let roots = &self.inner.roots;
        let inside = [roots.project(), roots.storage()].into_iter().any(|root| {
            let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
            canonical.starts_with(root)
        });
        if !inside {
            return Err(Error::CwdOutsideRoots { cwd: shown() });
        }
        Ok(canonical)
    }

    /// Qualified form for paths inside the roots; others are shown as given.
    fn display_path(&self, path: &Path) -> String {
        match self.inner.roots.qualify(path) {
            Some(qualified) => qualified.to_string(),
            None => path.display().to_string(),
        }
    }

    /// Rewrites host paths in text the way transcripts are given out (`project/…`).
    pub fn shortener(&self) -> Shortener {
        Shortener::new(&self.inner.roots)
    }

    /// Counts and the list of processes matching `filter`, by increasing id.
    pub fn overview(&self, filter: StatusFilter) -> Overview {
        let infos: Vec<ProcessInfo> = self.inner.registry.lock().all().map(|record| record.info()).collect();
        let running = infos.iter().filter(|info| info.status.is_running()).count();
        let completed = infos.len() - running;
        let failed = infos.iter().filter(|info| info.status.failed()).count();
        let mut processes: Vec<ProcessInfo> = infos.into_iter().filter(|info| filter.admits(info.status)).collect();
        if filter == StatusFilter::RunningOrFailed {
            processes.sort_by_key(|info| !info.status.is_running());
        }
        Overview { running, completed, failed, processes }
    }

    /// Ids of all retained processes, increasing.
    pub fn ids(&self) -> Vec<ProcessId> {
        self.inner.registry.lock().all().map(|record| record.id).collect()
    }

    fn record(&self, id: ProcessId) -> Result<Arc<Record>, Error> {
        self.inner.registry.lock().get(id).ok_or(Error::NotRetained(id))
    }

    /// One process and the part of its transcript chosen by `selection` (SPEC.md "Reading process
    /// logs"). May read spilled transcript blocks from disk: call it off the async executor for big
    /// transcripts.
    pub fn get(&self, id: ProcessId, selection: &Selection) -> Result<Details, Error> {
        selection.validate()?;
        let record = self.record(id)?;
        // Status first: a transcript read afterwards is at least as complete as the status says.
        let process = record.info();
        let reference = record.reference_time();
        let snapshot = record.journal.snapshot();
        let selected =
            select::select(&snapshot, selection, reference).map_err(|source| Error::Transcript { id, source })?;
        let shortener = self.shortener();
        let transcript = selected
            .fragments
            .into_iter()
            .map(|f| LogEntry {
                timestamp: timestamp(record.started_wall, f.elapsed),
                elapsed: f.elapsed,
                stream: f.stream,
                text: shortener.shorten(&f.text),
                start_line: f.start_line,
                end_line: f.end_line,
            })
            .collect();
        Ok(Details { process, transcript, lines: selected.lines })
    }

    /// The process and its complete transcript (for the Markdown resource). Check
    /// [`transcript_bytes`](Self::transcript_bytes) first: transcripts can be very large.
    pub fn full(&self, id: ProcessId) -> Result<(ProcessInfo, Vec<LogEntry>), Error> {
        let record = self.record(id)?;
        let process = record.info();
        let mut entries = Vec::new();
        let shortener = self.shortener();
        record
            .journal
            .snapshot()
            .for_each(|e| {
                entries.push(LogEntry {
                    timestamp: timestamp(record.started_wall, e.elapsed),
                    elapsed: e.elapsed,
                    stream: e.stream,
                    text: shortener.shorten(&e.text),
                    start_line: e.start_line,
                    end_line: e.end_line,
                })
            })
            .map_err(|source| Error::Transcript { id, source })?;
        Ok((process, entries))
    }

    /// Total decoded text recorded for a process, in bytes.
    pub fn transcript_bytes(&self, id: ProcessId) -> Result<u64, Error> {
        Ok(self.record(id)?.journal.text_bytes())
    }

    /// Number of transcript entries recorded for a process.
    pub fn transcript_entries(&self, id: ProcessId) -> Result<usize, Error> {
        Ok(Source::len(&self.record(id)?.journal.snapshot()))
    }

    /// Refuses new launches, kills every running tree (status `stopped`) and waits for supervisors.
    pub async fn shutdown(&self) {
        self.inner.closed.store(true, Ordering::SeqCst);
        let records: Vec<Arc<Record>> = self.inner.registry.lock().all().cloned().collect();
        for record in &records {
            record.stop.cancel();
        }
        for record in &records {
            let task = record.task.lock().take();
            if let Some(task) = task
                && let Err(err) = task.await
                && err.is_panic()
            {
                tracing::error!("process {} supervisor panicked", record.id);
            }
        }
        // Strays of trees that ended earlier (only when this process owns every descendant).
        let mut pending = tree::kill_strays(&self.inner.leaders);
        for _ in 0..50 {
            pending = tree::reap(&pending, &self.inner.leaders);
            if pending.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The last handle is gone: nothing may outlive the service. Kill synchronously (the runtime
        // may already be shutting down) and abort the supervisors.
        for record in self.registry.get_mut().all() {
            if record.status().is_running() {
                record.tree.kill(&self.leaders);
                record.stop.cancel();
            }
            if let Some(task) = record.task.lock().take() {
                task.abort();
            }
        }
    }
}

fn timestamp(started: DateTime<Utc>, elapsed: Duration) -> DateTime<Utc> {
    started + chrono::Duration::from_std(elapsed).unwrap_or(chrono::Duration::MAX)
}

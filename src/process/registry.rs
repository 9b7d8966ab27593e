//! The retained processes of one server lifetime: id → record (summary, live status, journal).
//!
//! Architecture invariant: ids start at 1 and increase by one per launched process; records are never
//! removed while the service lives.
//! Architecture invariant: a record's status leaves `Running` exactly once.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use parking_lot::Mutex;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::journal::Journal;
use super::spec::Timeout;
use super::tree::Tree;

/// A ForgeMCP process id (not the OS pid).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProcessId(pub u64);

impl fmt::Display for ProcessId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Where a process stands (INTERFACE.md §4.1 `current_status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Running,
    /// Finished by itself. On Unix a death by signal N is reported as `-N`.
    Exited(i32),
    /// Killed with its tree because the total or idle timeout expired.
    Interrupted,
    /// Killed with its tree by ForgeMCP: the calling request was cancelled, its owner let go of it,
    /// or the server is shutting down.
    Stopped,
    /// Reading one of its pipes failed; the tree was killed.
    StreamFailure,
}

impl Status {
    pub fn is_running(self) -> bool {
        self == Status::Running
    }

    /// Finished other than with exit code 0.
    pub fn failed(self) -> bool {
        !self.is_running() && self != Status::Exited(0)
    }

    pub fn exit_code(self) -> Option<i32> {
        match self {
            Status::Exited(code) => Some(code),
            _ => None,
        }
    }
}

/// Immutable facts about a launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The executable as launched.
    pub executable: String,
    pub arguments: Vec<String>,
    /// Absolute native working directory.
    pub cwd: String,
    /// How output bytes were decoded; always `utf-8` (lossy) here.
    pub encoding: String,
    pub timeout: Timeout,
}

/// A snapshot of one process for overviews and details.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessInfo {
    pub id: ProcessId,
    pub summary: Arc<Summary>,
    pub pid: u32,
    pub started: DateTime<Utc>,
    /// Elapsed while running, total once finished.
    pub work_time: Duration,
    pub status: Status,
}

/// The outcome of a finished run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completed {
    pub id: ProcessId,
    pub pid: u32,
    pub status: Status,
    pub work_time: Duration,
}

impl Completed {
    pub fn exit_code(&self) -> Option<i32> {
        self.status.exit_code()
    }

    pub fn succeeded(&self) -> bool {
        self.status == Status::Exited(0)
    }
}

pub(crate) struct Record {
    pub id: ProcessId,
    pub summary: Arc<Summary>,
    pub pid: u32,
    pub started_wall: DateTime<Utc>,
    pub started: Instant,
    pub journal: Journal,
    pub tree: Tree,
    /// Asks the supervisor to kill the tree and finish as `Stopped`.
    pub stop: CancellationToken,
    state: Mutex<State>,
    done: watch::Sender<Option<Completed>>,
    pub task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

struct State {
    status: Status,
    finished_after: Option<Duration>,
}

impl Record {
    pub fn new(
        id: ProcessId,
        summary: Summary,
        pid: u32,
        started: Instant,
        started_wall: DateTime<Utc>,
        journal: Journal,
        tree: Tree,
    ) -> Record {
        Record {
            id,
            summary: Arc::new(summary),
            pid,
            started_wall,
            started,
            journal,
            tree,
            stop: CancellationToken::new(),
            state: Mutex::new(State { status: Status::Running, finished_after: None }),
            done: watch::Sender::new(None),
            task: Mutex::new(None),
        }
    }

    pub fn info(&self) -> ProcessInfo {
        let state = self.state.lock();
        ProcessInfo {
            id: self.id,
            summary: self.summary.clone(),
            pid: self.pid,
            started: self.started_wall,
            work_time: state.finished_after.unwrap_or_else(|| self.started.elapsed()),
            status: state.status,
        }
    }

    pub fn status(&self) -> Status {
        self.state.lock().status
    }

    /// The end of `last` time windows: now while running; after exit the later of the recorded
    /// duration and the last chunk.
    pub fn reference_time(&self) -> Duration {
        let state = self.state.lock();
        match state.finished_after {
            None => self.started.elapsed(),
            Some(after) => after.max(self.journal.last_activity().unwrap_or_default()),
        }
    }

    /// Records the final status once; later calls are ignored.
    pub fn finish(&self, status: Status, after: Duration) -> Completed {
        let mut state = self.state.lock();
        if state.status.is_running() {
            state.status = status;
            state.finished_after = Some(after);
        }
        let completed = Completed {
            id: self.id,
            pid: self.pid,
            status: state.status,
            work_time: state.finished_after.unwrap_or(after),
        };
        drop(state);
        self.done.send_replace(Some(completed));
        completed
    }

    pub fn subscribe(&self) -> watch::Receiver<Option<Completed>> {
        self.done.subscribe()
    }
}

/// Id allocation and lookup.
#[derive(Default)]
pub(crate) struct Registry {
    last_id: u64,
    records: BTreeMap<ProcessId, Arc<Record>>,
}

impl Registry {
    pub fn next_id(&mut self) -> ProcessId {
        self.last_id += 1;
        ProcessId(self.last_id)
    }

    pub fn insert(&mut self, record: Arc<Record>) {
        self.records.insert(record.id, record);
    }

    pub fn get(&self, id: ProcessId) -> Option<Arc<Record>> {
        self.records.get(&id).cloned()
    }

    pub fn all(&self) -> impl Iterator<Item = &Arc<Record>> {
        self.records.values()
    }
}

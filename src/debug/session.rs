//! One debug session: a debug adapter started through the process service (so it, and the debuggee
//! it launches as its child, are listed in `processes_overview` and killed as one tree), spoken to
//! through `dap::Client`, and the state its events describe.
//!
//! Architecture invariant: the adapter is asked only to `launch` the one checked executable, or to
//! `attach` to a core file of it (nothing runs then), never to attach to a process; expressions go out in `watch` context only; reverse requests are refused by the client.
//! Architecture invariant: dropping a session stops its process tree (the `LongLived` handle).
//! The launch handshake is `launch.rs`.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::Map;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::Error;
pub use super::breakpoints::{Breakpoints, Target};
use super::model::{self, Excerpt, Frame, RunState, Stop};
use super::report;
use crate::dap::protocol::{self as dap, Event, StoppedEvent};
use crate::dap::{self as dap_client, Client};
use crate::process::{CheckedExecutable, LongLived, Observed, ProcessId, ProcessService, Stdin, Stream};
use crate::toolchain::{Environment, command_in};
use crate::workspace::path::{LinkPolicy, QualifiedPath, Roots};

/// How long one request may take (the first `variables` of a large program loads its symbols).
pub(super) const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the adapter may take to start and launch the program.
pub(super) const LAUNCH_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a polite `disconnect` may take before the tree is killed.
const DISCONNECT_TIMEOUT: Duration = Duration::from_millis(500);
/// Program output kept between two results.
const OUTPUT_BUDGET: usize = 4096;
/// Frames a stop result shows.
pub const STOP_FRAMES: u32 = 8;

/// Which adapter a session speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdapterKind {
    LldbDap,
    Gdb,
}

impl AdapterKind {
    /// The tool name in toolsets.
    pub fn tool(self) -> &'static str {
        match self {
            AdapterKind::LldbDap => "lldb-dap",
            AdapterKind::Gdb => "gdb",
        }
    }
}

/// What starting a session needs; every path is checked and absolute.
#[derive(Debug, Clone)]
pub struct SessionSpec {
    pub kind: AdapterKind,
    pub adapter: PathBuf,
    pub environment: Option<Arc<Environment>>,
    /// The checked executable: the adapter is handed its descriptor's name, never its path.
    pub checked: CheckedExecutable,
    pub executable: QualifiedPath,
    pub arguments: Vec<String>,
    pub cwd: PathBuf,
    /// Variables set for the program on top of the adapter's environment (`KEY=VALUE`).
    pub env: Vec<String>,
    /// A core file to inspect instead of running the program (lldb-dap only; nothing runs).
    pub core: Option<PathBuf>,
    pub stop_on_entry: bool,
}

/// Where the debuggee is, as the events told it.
#[derive(Debug, Clone)]
enum Phase {
    Running,
    Stopped(StoppedEvent),
    Ended(Option<i64>),
}

#[derive(Debug, Clone)]
struct Status {
    /// Counts stops and the end, so a waiter tells a new stop from the one before its request.
    epoch: u64,
    phase: Phase,
}

/// What the event task shares with the session.
struct Shared {
    status: watch::Sender<Status>,
    initialized: watch::Sender<bool>,
    exit_code: Mutex<Option<i64>>,
    output: Mutex<String>,
    /// The debuggee's pid, once the adapter names it.
    pid: watch::Sender<Option<u32>>,
    /// The debuggee's own entry in `processes_overview`, once the adapter names its pid.
    debuggee: Mutex<Option<Observed>>,
}

/// What registering the debuggee needs.
struct Debuggee {
    processes: ProcessService,
    adapter: ProcessId,
    program: PathBuf,
    arguments: Vec<String>,
    cwd: PathBuf,
    /// A core session: the pid the adapter names is the dead process's, never registered.
    core: bool,
}

/// How the program moves on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Continue,
    StepOver,
    StepIn,
    StepOut,
    Pause,
}

pub struct Session {
    pub id: u64,
    pub executable: QualifiedPath,
    /// The canonical program path: one session per executable.
    pub key: PathBuf,
    pub adapter_name: String,
    pub process_id: ProcessId,
    /// Inspects a core file: nothing runs, so it cannot continue or step.
    pub core: bool,
    pub deadline: tokio::time::Instant,
    /// Cancelled when the session ends; waits stop at once.
    pub ended: CancellationToken,
    /// Calls on one session take turns.
    pub breakpoints: tokio::sync::Mutex<Breakpoints>,
    pub(super) client: Client,
    process: LongLived,
    shared: Arc<Shared>,
    roots: Roots,
    /// Holds the descriptor the adapter was handed open as long as the session lives (the adapter
    /// may open the program again, e.g. to load symbols).
    _checked: CheckedExecutable,
}

impl Session {
    /// Starts the adapter and its event task; `launch` starts the program.
    pub async fn start(
        processes: &ProcessService,
        roots: &Roots,
        id: u64,
        spec: &SessionSpec,
        key: PathBuf,
        lifetime: Duration,
    ) -> Result<Session, Error> {
        let mut command = command_in(spec.environment.as_deref(), &spec.adapter, &spec.cwd).stdin(Stdin::Piped);
        command = match spec.kind {
            // Every evaluation is a variable or expression, even one sent in `repl` context.
            AdapterKind::LldbDap if is_lldb_dap(&spec.adapter) => command.args(["--repl-mode", "variable"]),
            AdapterKind::LldbDap => command,
            // No init files, no auto-loaded scripts of the debuggee.
            AdapterKind::Gdb => command.args(["-i", "dap", "-nx", "-q", "-iex", "set auto-load off"]),
        };
        let mut process = processes.spawn_long_lived(command).await.map_err(Error::Start)?;
        let stdin = process.stdin.take().expect("the command asked for a piped stdin");
        let stdout = process.take_stdout();
        let adapter_name = spec.kind.tool().to_owned();
        let (events, received) = mpsc::unbounded_channel();
        let client = Client::start(format!("{adapter_name} (debug session {id})"), stdout, stdin, events);
        let shared = Arc::new(Shared {
            status: watch::channel(Status { epoch: 0, phase: Phase::Running }).0,
            initialized: watch::channel(false).0,
            exit_code: Mutex::new(None),
            output: Mutex::new(String::new()),
            pid: watch::channel(None).0,
            debuggee: Mutex::new(None),
        });
        let debuggee = Debuggee {
            processes: processes.clone(),
            adapter: process.id,
            program: spec.checked.path().to_path_buf(),
            arguments: spec.arguments.clone(),
            cwd: spec.cwd.clone(),
            core: spec.core.is_some(),
        };
        tokio::spawn(follow_events(shared.clone(), received, debuggee));
        Ok(Session {
            id,
            executable: spec.executable.clone(),
            key,
            adapter_name,
            process_id: process.id,
            core: spec.core.is_some(),
            deadline: tokio::time::Instant::now() + lifetime,
            ended: CancellationToken::new(),
            breakpoints: tokio::sync::Mutex::new(Breakpoints::default()),
            client,
            process,
            shared,
            roots: roots.clone(),
            _checked: spec.checked.clone(),
        })
    }

    /// The debuggee's entry in `processes_overview`, once known.
    pub fn debuggee_id(&self) -> Option<ProcessId> {
        self.shared.debuggee.lock().as_ref().map(Observed::id)
    }

    /// Becomes true at the adapter's `initialized` event.
    pub(super) fn initialized(&self) -> watch::Receiver<bool> {
        self.shared.initialized.subscribe()
    }

    /// The debuggee's pid, once the adapter names it.
    #[cfg(target_os = "linux")]
    pub(super) fn named_pid(&self) -> watch::Receiver<Option<u32>> {
        self.shared.pid.subscribe()
    }

    pub fn pid(&self) -> Option<u32> {
        *self.shared.pid.borrow()
    }

    pub fn run_state(&self) -> RunState {
        match self.shared.status.borrow().phase {
            Phase::Running => RunState::Running,
            Phase::Stopped(_) => RunState::Stopped,
            Phase::Ended(_) => RunState::Exited,
        }
    }

    pub fn exit_code(&self) -> Option<i64> {
        *self.shared.exit_code.lock()
    }

    /// Continues, steps or pauses, then waits at most `wait` for the next stop or the end.
    pub async fn resume(&self, action: Action, thread: Option<i64>, wait: Duration) -> Result<Stop, Error> {
        if self.core {
            return Err(Error::CoreOnly { session_id: self.id });
        }
        let status = self.shared.status.borrow().clone();
        let stopped_thread = match &status.phase {
            Phase::Stopped(event) => event.thread_id,
            Phase::Running if matches!(action, Action::Continue) => {
                return self.wait_and_report(status.epoch, wait).await;
            }
            Phase::Running if matches!(action, Action::Pause) => None,
            Phase::Running => return Err(Error::Running { session_id: self.id }),
            Phase::Ended(_) => return self.wait_and_report(status.epoch.saturating_sub(1), wait).await,
        };
        if action == Action::Pause && matches!(status.phase, Phase::Stopped(_)) {
            return self.wait_and_report(status.epoch.saturating_sub(1), wait).await;
        }
        let thread_id = match thread.or(stopped_thread) {
            Some(id) => id,
            None => self.threads().await?.first().map(|t| t.id).ok_or(Error::NoThreads { session_id: self.id })?,
        };
        let args = dap::ThreadArguments { thread_id };
        if action != Action::Pause {
            self.shared.status.send_if_modified(|s| {
                let stopped = matches!(s.phase, Phase::Stopped(_));
                if stopped {
                    s.phase = Phase::Running;
                }
                stopped
            });
        }
        match action {
            Action::Continue => self.client.request::<dap::Continue>(&args, REQUEST_TIMEOUT).await.map(drop),
            Action::StepOver => self.client.request::<dap::Next>(&args, REQUEST_TIMEOUT).await.map(drop),
            Action::StepIn => self.client.request::<dap::StepIn>(&args, REQUEST_TIMEOUT).await.map(drop),
            Action::StepOut => self.client.request::<dap::StepOut>(&args, REQUEST_TIMEOUT).await.map(drop),
            Action::Pause => self.client.request::<dap::Pause>(&args, REQUEST_TIMEOUT).await.map(drop),
        }?;
        self.wait_and_report(status.epoch, wait).await
    }

    /// Waits for a stop or the end newer than `epoch`, then describes where the program is.
    pub(super) async fn wait_and_report(&self, epoch: u64, wait: Duration) -> Result<Stop, Error> {
        let mut status = self.shared.status.subscribe();
        let newer =
            tokio::time::timeout(wait, status.wait_for(|s| s.epoch > epoch && !matches!(s.phase, Phase::Running)));
        let phase = match newer.await {
            Ok(Ok(status)) => status.phase.clone(),
            Ok(Err(_)) => Phase::Ended(self.exit_code()),
            Err(_) => Phase::Running,
        };
        let output = std::mem::take(&mut *self.shared.output.lock());
        match phase {
            Phase::Running => Ok(report::running(self.id, wait, output)),
            Phase::Ended(code) => Ok(report::ended(self.id, code, output)),
            Phase::Stopped(event) => {
                let thread_id = match event.thread_id {
                    Some(id) => Some(id),
                    None => self.threads().await?.first().map(|t| t.id),
                };
                let frames = match thread_id {
                    Some(id) => self.frames(id, STOP_FRAMES).await?,
                    None => Vec::new(),
                };
                let top = frames.iter().find(|f| f.path.as_deref().is_some_and(|p| !p.starts_with("root/")));
                let source = top.and_then(|f| self.excerpt(f));
                let locals = match top.or(frames.first()) {
                    Some(frame) => self.locals(frame.id, 1, 40).await?,
                    None => Vec::new(),
                };
                Ok(report::stopped(self.id, &event, thread_id, frames, source, locals, output))
            }
        }
    }

    pub async fn threads(&self) -> Result<Vec<model::Thread>, Error> {
        let body = self.client.request::<dap::Threads>(&Map::new(), REQUEST_TIMEOUT).await?;
        Ok(body.threads.into_iter().map(|t| model::Thread { id: t.id, name: t.name }).collect())
    }

    pub async fn frames(&self, thread_id: i64, levels: u32) -> Result<Vec<Frame>, Error> {
        self.require_stopped()?;
        let args = dap::StackTraceArguments { thread_id, start_frame: 0, levels };
        let body = self.client.request::<dap::StackTrace>(&args, REQUEST_TIMEOUT).await?;
        Ok(body
            .stack_frames
            .into_iter()
            .map(|f| Frame {
                id: f.id,
                function: f.name,
                path: f.source.and_then(|s| s.path).and_then(|p| self.qualify(&p)),
                line: f.line,
            })
            .collect())
    }

    /// The event of the current stop, while stopped.
    pub(super) fn stopped_event(&self) -> Option<StoppedEvent> {
        match &self.shared.status.borrow().phase {
            Phase::Stopped(event) => Some(event.clone()),
            _ => None,
        }
    }

    /// The stopped thread, for calls that name none.
    pub fn stopped_thread(&self) -> Option<i64> {
        match &self.shared.status.borrow().phase {
            Phase::Stopped(event) => event.thread_id,
            _ => None,
        }
    }

    pub fn require_stopped(&self) -> Result<(), Error> {
        match self.shared.status.borrow().phase {
            Phase::Stopped(_) => Ok(()),
            _ => Err(Error::Running { session_id: self.id }),
        }
    }

    /// Numbered source lines around a frame's line (two before, two after).
    pub fn excerpt(&self, frame: &Frame) -> Option<Excerpt> {
        let path = QualifiedPath::parse(frame.path.as_deref()?).ok()?;
        let resolved = self.roots.resolve_existing(&path, LinkPolicy::FollowInsideRoots).ok()?;
        let text = std::fs::read_to_string(&resolved.abs).ok()?;
        let line = frame.line.max(1);
        let start_line = line.saturating_sub(2).max(1);
        let lines: Vec<String> = text
            .split('\n')
            .skip(start_line as usize - 1)
            .take((line - start_line + 3) as usize)
            .map(|l| l.strip_suffix('\r').unwrap_or(l).to_owned())
            .collect();
        (!lines.is_empty()).then(|| Excerpt { path: path.to_string(), line, start_line, lines })
    }

    /// The arguments and locals of a frame.
    pub async fn locals(&self, frame_id: i64, depth: u32, limit: usize) -> Result<Vec<model::Value>, Error> {
        let mut res = Vec::new();
        let mut budget = limit;
        for scope in self.scopes(frame_id).await? {
            if is_locals(&scope) {
                res.extend(self.scope_values(&scope, depth, &mut budget).await?);
            }
        }
        Ok(res)
    }

    pub async fn scopes(&self, frame_id: i64) -> Result<Vec<dap::Scope>, Error> {
        self.require_stopped()?;
        let body = self.client.request::<dap::Scopes>(&dap::ScopesArguments { frame_id }, REQUEST_TIMEOUT).await?;
        Ok(body.scopes)
    }

    /// The variables of a scope, expanded `depth` levels, at most `budget` values in all. Locals and
    /// arguments keep their declaration order; any other scope (globals, statics) is sorted by name,
    /// because an adapter lists those in the order its symbol index was built, which differs from
    /// run to run (lldb indexes in parallel).
    pub async fn scope_values(
        &self,
        scope: &dap::Scope,
        depth: u32,
        budget: &mut usize,
    ) -> Result<Vec<model::Value>, Error> {
        let mut variables = self.variables(scope.variables_reference).await?;
        if !is_locals(scope) {
            variables.sort_by(|a, b| a.name.cmp(&b.name));
        }
        self.expand(variables, depth, budget).await
    }

    async fn variables(&self, reference: i64) -> Result<Vec<dap::Variable>, Error> {
        let args = dap::VariablesArguments { variables_reference: reference, count: None };
        Ok(self.client.request::<dap::Variables>(&args, REQUEST_TIMEOUT).await?.variables)
    }

    /// The variables below `reference`, expanded `depth` levels, at most `budget` values in all.
    fn values<'a>(
        &'a self,
        reference: i64,
        depth: u32,
        budget: &'a mut usize,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<model::Value>, Error>> + Send + 'a>> {
        Box::pin(async move {
            let variables = self.variables(reference).await?;
            self.expand(variables, depth, budget).await
        })
    }

    /// Values of `variables`, in their order, each expanded `depth` levels, within `budget`.
    async fn expand(
        &self,
        variables: Vec<dap::Variable>,
        depth: u32,
        budget: &mut usize,
    ) -> Result<Vec<model::Value>, Error> {
        let mut res = Vec::new();
        for variable in variables {
            if *budget == 0 {
                break;
            }
            *budget -= 1;
            let mut value = report::value(variable.name, variable.type_name, variable.value);
            if variable.variables_reference > 0 {
                if depth > 0 {
                    value.children = self.values(variable.variables_reference, depth - 1, budget).await?;
                }
                value.more = value.children.is_empty();
            }
            res.push(value);
        }
        Ok(res)
    }

    /// Evaluates an expression in `watch` context (never `repl`, which reaches the console).
    pub async fn evaluate(
        &self,
        expression: &str,
        frame_id: i64,
        depth: u32,
        limit: usize,
    ) -> Result<model::Value, Error> {
        self.require_stopped()?;
        let args = dap::EvaluateArguments { expression: expression.to_owned(), frame_id, context: "watch" };
        let body = self.client.request::<dap::Evaluate>(&args, REQUEST_TIMEOUT).await.map_err(|err| match err {
            dap_client::Error::Failed { message, .. } => Error::Evaluate(message.trim().to_owned()),
            other => Error::Adapter(other),
        })?;
        let mut value = report::value(expression.to_owned(), body.type_name, body.result);
        if body.variables_reference > 0 {
            let mut budget = limit;
            if depth > 0 {
                value.children = self.values(body.variables_reference, depth - 1, &mut budget).await?;
            }
            value.more = value.children.is_empty();
        }
        Ok(value)
    }

    /// The qualified form of a path the adapter reports: inside a root when it (or its canonical
    /// form) lies there, else `root/…`.
    pub(super) fn qualify(&self, reported: &str) -> Option<String> {
        let abs = Path::new(reported);
        if !abs.is_absolute() {
            return None;
        }
        let inside = self.roots.qualify(abs).or_else(|| self.roots.qualify(&std::fs::canonicalize(abs).ok()?));
        match inside {
            Some(path) => Some(path.to_string()),
            None => {
                QualifiedPath::parse(&format!("root/{}", reported.trim_start_matches('/'))).ok().map(|p| p.to_string())
            }
        }
    }

    /// Ends the session: `disconnect` (terminating the debuggee) within half a second, then the
    /// adapter's whole tree is killed.
    pub async fn shutdown(&self) {
        self.ended.cancel();
        let args = dap::DisconnectArguments { terminate_debuggee: true };
        let _ = self.client.request::<dap::Disconnect>(&args, DISCONNECT_TIMEOUT).await;
        self.process.stop().await;
        // Ends the debuggee's entry as stopped unless it exited by itself.
        self.shared.debuggee.lock().take();
    }
}

fn is_locals(scope: &dap::Scope) -> bool {
    let hint = scope.presentation_hint.as_deref().unwrap_or_default();
    matches!(hint, "locals" | "arguments") || matches!(scope.name.as_str(), "Locals" | "Arguments")
}

/// True for `lldb-dap` (which has `--repl-mode`), false for the older `lldb-vscode`.
fn is_lldb_dap(adapter: &Path) -> bool {
    adapter.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("lldb-dap"))
}

/// Follows the adapter's events until it closes its output.
async fn follow_events(shared: Arc<Shared>, mut events: mpsc::UnboundedReceiver<Event>, debuggee: Debuggee) {
    let advance = |phase: Phase| {
        shared.status.send_modify(|s| {
            s.epoch += 1;
            s.phase = phase;
        })
    };
    while let Some(event) = events.recv().await {
        if matches!(shared.status.borrow().phase, Phase::Ended(_)) {
            if let Event::Output { category, output } = &event {
                append_output(&shared, category, output);
            }
            continue;
        }
        match event {
            Event::Initialized => {
                shared.initialized.send_replace(true);
            }
            Event::Stopped(stopped) => advance(Phase::Stopped(stopped)),
            // Resuming requests mark the phase themselves: lldb-dap may send `continued` after the
            // `stopped` that ends the step, which would read as running.
            Event::Continued => {}
            Event::Exited { exit_code } => {
                *shared.exit_code.lock() = Some(exit_code);
                if let Some(observed) = shared.debuggee.lock().as_ref() {
                    observed.exited(i32::try_from(exit_code).unwrap_or(i32::MIN));
                }
                advance(Phase::Ended(Some(exit_code)));
            }
            Event::Terminated => advance(Phase::Ended(*shared.exit_code.lock())),
            Event::Output { category, output } => append_output(&shared, &category, &output),
            Event::Process { .. } if debuggee.core => {}
            Event::Process { pid } => {
                shared.pid.send_replace(pid);
                let d = &debuggee;
                let observed = pid
                    .and_then(|pid| d.processes.observe_child(d.adapter, pid, &d.program, &d.arguments, &d.cwd).ok());
                *shared.debuggee.lock() = observed;
            }
            Event::Other(_) => {}
        }
    }
    if !matches!(shared.status.borrow().phase, Phase::Ended(_)) {
        advance(Phase::Ended(*shared.exit_code.lock()));
    }
}

/// Keeps the end of the program's own output (not the adapter's console messages).
fn append_output(shared: &Shared, category: &str, output: &str) {
    let stream = match category {
        "stdout" => Stream::Stdout,
        "stderr" => Stream::Stderr,
        _ => return,
    };
    if let Some(observed) = shared.debuggee.lock().as_ref() {
        observed.output(stream, output.as_bytes());
    }
    let mut kept = shared.output.lock();
    kept.push_str(&output.replace("\r\n", "\n"));
    if kept.len() > OUTPUT_BUDGET {
        let mut cut = kept.len() - OUTPUT_BUDGET;
        while !kept.is_char_boundary(cut) {
            cut += 1;
        }
        kept.drain(..cut);
    }
}

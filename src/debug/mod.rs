//! The debug service: at most [`MAX_SESSIONS`] debug sessions of built executables inside
//! `project/` or `storage/`, each driving one debug adapter (lldb-dap, lldb-vscode, or gdb ≥ 14 with
//! `-i dap`) over the Debug Adapter Protocol.
//!
//! - `breakpoints.rs` — a session's breakpoints and how the adapter bound them.
//! - `input.rs` — breakpoint specifications, the console-command refusal, gdb's DAP version check.
//! - `session.rs` — one adapter process, its DAP client and the state its events describe.
//! - `launch.rs` — the launch handshake, and the check that the debuggee runs the checked file.
//! - `report.rs` — stop results in plain English; `model.rs` — the typed results.
//!
//! A session ends on `stop`, on its timeout, when the program exits (after that result is returned),
//! when a call on it is cancelled, and at server shutdown (the process service kills every tree).
//!
//! Architecture invariant: the executable, its arguments and working directory follow
//! `cmake_run_test`'s rules (qualified `project/`/`storage/` paths resolved with links followed only
//! inside the roots, a regular file, an existing directory, literal arguments without NUL); the
//! program is launched, never attached to.
//! Architecture invariant: one session per executable (by canonical path); every adapter and
//! debuggee runs through `process` (the debuggee as the adapter's child, in its tree).
//! Architecture invariant: expressions are evaluated in `watch` context and console-like input is
//! refused before it reaches the adapter.

mod breakpoints;
pub mod input;
mod launch;
pub mod model;
pub mod postmortem;
mod report;
pub mod session;

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;

use crate::call::Call;
use crate::dap;
use crate::process::{CheckedExecutable, ProcessService};
use crate::text::error_chain;
use crate::toolchain::{self, ToolchainService, version};
use crate::workspace::WorkspaceService;
use crate::workspace::path::{LinkPolicy, QualifiedPath};
pub use input::BreakpointSpec;
use model::{Breakpoints, Inspection, Scope, SessionInfo, Stop, Stopped};
pub use session::{Action, AdapterKind};
use session::{Session, SessionSpec, Target};

/// Sessions alive at once.
pub const MAX_SESSIONS: usize = 4;
/// Ended sessions remembered for error messages.
const REMEMBERED: usize = 32;

/// Errors of the debug service.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid argument `{argument}`: {reason}")]
    Argument { argument: &'static str, reason: String },
    #[error(transparent)]
    Toolchain(#[from] toolchain::Error),
    #[error("{0}")]
    NoAdapter(String),
    #[error("{MAX_SESSIONS} debug sessions are running; end one with debug_stop first")]
    Limit,
    #[error("debug session {session_id} already debugs `{executable}`; end it with debug_stop first")]
    Busy { session_id: u64, executable: String },
    #[error("there is no debug session {session_id}{ended}")]
    NoSession { session_id: u64, ended: String },
    #[error("debug session {session_id} is running; pause it with debug_continue first")]
    Running { session_id: u64 },
    #[error("debug session {session_id} inspects a core file: it cannot run; end it with debug_stop")]
    CoreOnly { session_id: u64 },
    #[error("debug session {session_id} has no threads")]
    NoThreads { session_id: u64 },
    #[error("the debug adapter did not start")]
    Start(#[source] crate::process::Error),
    #[error("launching the program failed: {0}")]
    Launch(String),
    #[error(
        "the program the debug adapter started is not the checked file `{executable}` (the path changed after the check); {ended}"
    )]
    NotChecked { executable: String, ended: &'static str },
    #[error("the expression cannot be evaluated: {0}")]
    Evaluate(String),
    #[error(transparent)]
    Adapter(#[from] dap::Error),
    #[error("the call was cancelled; debug session {session_id} ended")]
    Cancelled { session_id: u64 },
}

/// What `debug_launch` asks for, as given.
#[derive(Debug, Clone)]
pub struct LaunchRequest {
    pub executable: String,
    pub arguments: Vec<String>,
    pub cwd: String,
    pub toolset: Option<String>,
    pub debugger: Option<AdapterKind>,
    pub breakpoints: Vec<String>,
    pub stop_on_entry: bool,
    pub lifetime: Duration,
    pub wait: Duration,
    /// Variables set for the program (`KEY=VALUE`; a CTest test's `ENVIRONMENT`).
    pub env: Vec<String>,
    /// A core file of the executable to inspect instead of running it.
    pub core: Option<String>,
}

/// What `debug_inspect` asks for.
#[derive(Debug, Clone, Default)]
pub struct InspectRequest {
    pub thread_id: Option<i64>,
    pub frame_id: Option<i64>,
    pub expression: Option<String>,
    pub depth: u32,
    pub limit: usize,
}

#[derive(Default)]
struct Table {
    next_id: u64,
    live: BTreeMap<u64, Arc<Session>>,
    /// Sessions being started, by executable key (they count against the limit).
    starting: Vec<PathBuf>,
    /// Why recent sessions ended.
    ended: VecDeque<(u64, String)>,
}

struct Inner {
    workspace: Arc<WorkspaceService>,
    processes: ProcessService,
    toolchain: Arc<ToolchainService>,
    table: Mutex<Table>,
}

/// The debug service. Cheap to clone.
#[derive(Clone)]
pub struct DebugService {
    inner: Arc<Inner>,
}

impl DebugService {
    pub fn new(workspace: Arc<WorkspaceService>, processes: ProcessService, toolchain: Arc<ToolchainService>) -> Self {
        let table = Mutex::new(Table { next_id: 1, ..Table::default() });
        DebugService { inner: Arc::new(Inner { workspace, processes, toolchain, table }) }
    }

    /// Starts a session and returns its first stop, or the program's end (the session then ends).
    pub async fn launch(&self, request: LaunchRequest, call: &Call) -> Result<Stop, Error> {
        let argument = |argument: &'static str| move |reason: String| Error::Argument { argument, reason };
        let (executable, program) = self.resolve(&request.executable, "executable", false)?;
        let checked = CheckedExecutable::open(&program, self.inner.workspace.roots())
            .map_err(|e| argument("executable")(format!("`{executable}` {e}")))?;
        if let Some(idx) = request.arguments.iter().position(|a| a.contains('\0')) {
            return Err(argument("arguments")(format!("argument {} contains a NUL character", idx + 1)));
        }
        let (_, cwd) = self.resolve(&request.cwd, "cwd", true)?;
        let core = match &request.core {
            Some(core) => Some(self.core_of(core, &program, &executable, &request)?),
            None => None,
        };
        let mut targets = Vec::new();
        for spec in &request.breakpoints {
            targets.push(self.target(spec, "breakpoints")?);
        }
        let key = std::fs::canonicalize(&program).unwrap_or_else(|_| program.clone());
        let (kind, adapter, environment) = self.adapter(request.toolset.as_deref(), request.debugger, call).await?;
        let id = self.reserve(&key, &executable)?;
        let spec = SessionSpec {
            kind,
            adapter,
            environment,
            checked,
            executable,
            arguments: request.arguments,
            cwd,
            env: request.env,
            core,
            stop_on_entry: request.stop_on_entry,
        };
        call.progress.report_with(0.0, Some(1.0), || format!("Starting {} for {}", kind.tool(), spec.executable));
        let started = Session::start(
            &self.inner.processes,
            self.inner.workspace.roots(),
            id,
            &spec,
            key.clone(),
            request.lifetime,
        )
        .await;
        let session = {
            let mut table = self.inner.table.lock();
            table.starting.retain(|k| k != &key);
            let session = Arc::new(started?);
            table.live.insert(id, session.clone());
            session
        };
        self.watch_deadline(&session);
        let work = async {
            let mut stop = session.launch(&spec, &targets, request.wait).await?;
            postmortem::explain_stop(&session, &mut stop).await;
            Ok(stop)
        };
        let res = self.guarded(&session, call, work).await;
        self.settle(&session, res).await
    }

    /// Continues, steps or pauses, then waits (bounded) for the next stop or the end.
    pub async fn resume(
        &self,
        session_id: u64,
        action: Action,
        thread_id: Option<i64>,
        wait: Duration,
        call: &Call,
    ) -> Result<Stop, Error> {
        let session = self.session(session_id)?;
        let res = self
            .guarded(&session, call, async {
                let _turn = session.breakpoints.lock().await;
                let mut stop = session.resume(action, thread_id, wait).await?;
                postmortem::explain_stop(&session, &mut stop).await;
                Ok(stop)
            })
            .await;
        self.settle(&session, res).await
    }

    /// Threads, a thread's frames, a frame's scopes, or an expression's value; with no session, the
    /// live sessions.
    pub async fn inspect(
        &self,
        session_id: Option<u64>,
        request: InspectRequest,
        call: &Call,
    ) -> Result<Inspection, Error> {
        let mut res = Inspection {
            sessions: Vec::new(),
            threads: Vec::new(),
            frames: Vec::new(),
            source: None,
            scopes: Vec::new(),
            value: None,
        };
        let Some(session_id) = session_id else {
            res.sessions = self.sessions();
            return Ok(res);
        };
        if let Some(expression) = &request.expression {
            input::check_expression(expression).map_err(|reason| Error::Argument { argument: "expression", reason })?;
        }
        let session = self.session(session_id)?;
        let work = async {
            let _turn = session.breakpoints.lock().await;
            let frame_id = match request.frame_id {
                Some(id) => Some(id),
                None if request.expression.is_some() => {
                    let thread = session.stopped_thread().or(request.thread_id);
                    let thread = match thread {
                        Some(t) => t,
                        None => {
                            session.threads().await?.first().map(|t| t.id).ok_or(Error::NoThreads { session_id })?
                        }
                    };
                    session.frames(thread, 1).await?.first().map(|f| f.id)
                }
                None => None,
            };
            if let Some(expression) = &request.expression {
                let frame_id = frame_id.ok_or(Error::NoThreads { session_id })?;
                res.value = Some(session.evaluate(expression, frame_id, request.depth, request.limit).await?);
            } else if let Some(frame_id) = frame_id {
                let mut budget = request.limit;
                for scope in session.scopes(frame_id).await? {
                    let skipped = scope.expensive || scope.presentation_hint.as_deref() == Some("registers");
                    let variables = if skipped {
                        Vec::new()
                    } else {
                        session.scope_values(&scope, request.depth, &mut budget).await?
                    };
                    res.scopes.push(Scope { name: scope.name, variables, skipped });
                }
            } else if let Some(thread_id) = request.thread_id {
                res.frames = session.frames(thread_id, 50).await?;
                res.source = res.frames.iter().find(|f| f.path.is_some()).and_then(|f| session.excerpt(f));
            } else {
                res.threads = session.threads().await?;
            }
            Ok(res)
        };
        self.guarded(&session, call, work).await
    }

    /// Sets and clears breakpoints of a live session; returns all of them as bound.
    pub async fn breakpoints(
        &self,
        session_id: u64,
        set: &[String],
        clear: &[String],
        call: &Call,
    ) -> Result<Breakpoints, Error> {
        let add: Vec<Target> = set.iter().map(|s| self.target(s, "set")).collect::<Result<_, _>>()?;
        let remove: Vec<Target> = clear.iter().map(|s| self.target(s, "clear")).collect::<Result<_, _>>()?;
        let session = self.session(session_id)?;
        let work = async {
            let mut state = session.breakpoints.lock().await;
            session.change_breakpoints(&mut state, &add, &remove).await?;
            Ok(Breakpoints { session_id, breakpoints: Session::list_breakpoints(&state) })
        };
        self.guarded(&session, call, work).await
    }

    /// Ends a session and its whole process tree.
    pub async fn stop(&self, session_id: u64) -> Result<Stopped, Error> {
        let session = self.session(session_id)?;
        // Only an exit before the stop: the kill's own exit event may or may not arrive in time.
        let exit_code = session.exit_code();
        self.end(&session, "debug_stop ended it").await;
        Ok(Stopped { session_id, executable: session.executable.to_string(), exit_code })
    }

    /// The live sessions, by id.
    pub fn sessions(&self) -> Vec<SessionInfo> {
        let live: Vec<Arc<Session>> = self.inner.table.lock().live.values().cloned().collect();
        let now = tokio::time::Instant::now();
        live.iter()
            .map(|s| SessionInfo {
                session_id: s.id,
                executable: s.executable.to_string(),
                adapter: s.adapter_name.clone(),
                state: s.run_state(),
                process_id: s.process_id.0,
                debuggee_process_id: s.debuggee_id().map(|id| id.0),
                pid: s.pid(),
                remaining_seconds: s.deadline.saturating_duration_since(now).as_secs(),
            })
            .collect()
    }

    /// Ends every session (server shutdown).
    pub async fn shutdown(&self) {
        let live: Vec<Arc<Session>> = self.inner.table.lock().live.values().cloned().collect();
        futures_util::future::join_all(live.iter().map(|s| self.end(s, "the server shut down"))).await;
    }

    // -----------------------------------------------------------------------------------------

    /// A managed path, resolved like `cmake_run_test` resolves it: a regular file, or an existing
    /// directory.
    fn resolve(&self, input: &str, argument: &'static str, directory: bool) -> Result<(QualifiedPath, PathBuf), Error> {
        let fail = |reason: String| Error::Argument { argument, reason };
        let path = self.inner.workspace.parse_managed(input).map_err(|e| fail(error_chain(&e)))?;
        let resolved = self
            .inner
            .workspace
            .roots()
            .resolve_existing(&path, LinkPolicy::FollowInsideRoots)
            .map_err(|e| fail(error_chain(&e)))?;
        match directory {
            true if !resolved.abs.is_dir() => Err(fail(format!("`{path}` is not a directory"))),
            false if !resolved.abs.is_file() => Err(fail(format!("`{path}` is not a regular file"))),
            _ => Ok((path, resolved.abs)),
        }
    }

    fn target(&self, spec: &str, argument: &'static str) -> Result<Target, Error> {
        match BreakpointSpec::parse(spec).map_err(|reason| Error::Argument { argument, reason })? {
            BreakpointSpec::Function(name) => Ok(Target::Function(name)),
            BreakpointSpec::Line { path, line } => {
                let (path, abs) = self.resolve(&path, argument, false)?;
                Ok(Target::Line { path, abs, line })
            }
        }
    }

    /// The adapter of the toolset (default: `system`): lldb-dap, else gdb when its version has DAP.
    async fn adapter(
        &self,
        toolset: Option<&str>,
        wanted: Option<AdapterKind>,
        call: &Call,
    ) -> Result<(AdapterKind, PathBuf, Option<Arc<toolchain::Environment>>), Error> {
        let toolset = self.inner.toolchain.find(toolset.unwrap_or(toolchain::SYSTEM_ID)).await?;
        let kinds = match wanted {
            Some(kind) => vec![kind],
            None => vec![AdapterKind::LldbDap, AdapterKind::Gdb],
        };
        let mut reasons = Vec::new();
        for kind in kinds {
            let Some(tool) = toolset.tool(kind.tool()) else {
                reasons.push(format!("no {}", kind.tool()));
                continue;
            };
            if kind == AdapterKind::Gdb {
                let cwd = self.inner.workspace.roots().project().to_path_buf();
                let quiet = Call::new(crate::call::Progress::disabled(), call.cancel.clone(), None);
                let env = toolset.environment().map(|e| &**e);
                let found =
                    version::probe(&self.inner.processes, tool, env, &cwd, version::PROBE_TIMEOUT, &quiet).await;
                match found {
                    Some(v) if input::gdb_has_dap(&v) => {}
                    Some(v) => {
                        reasons.push(format!("gdb {v} has no DAP interpreter (gdb 14 or later has `gdb -i dap`)"));
                        continue;
                    }
                    None => {
                        reasons.push("gdb's version is unknown".to_owned());
                        continue;
                    }
                }
            }
            return Ok((kind, tool.path.clone(), toolset.environment().cloned()));
        }
        Err(Error::NoAdapter(format!(
            "toolset `{}` has no usable debug adapter ({}); add one as a user toolset, e.g. --toolset NAME lldb-dap=PATH",
            toolset.id(),
            reasons.join("; ")
        )))
    }

    /// Reserves a session id for `key`, within the limit and one session per executable.
    fn reserve(&self, key: &PathBuf, executable: &QualifiedPath) -> Result<u64, Error> {
        let mut table = self.inner.table.lock();
        if let Some(owner) = table.live.values().find(|s| &s.key == key) {
            return Err(Error::Busy { session_id: owner.id, executable: executable.to_string() });
        }
        if table.starting.contains(key) {
            return Err(Error::Busy { session_id: table.next_id, executable: executable.to_string() });
        }
        if table.live.len() + table.starting.len() >= MAX_SESSIONS {
            return Err(Error::Limit);
        }
        table.starting.push(key.clone());
        let id = table.next_id;
        table.next_id += 1;
        Ok(id)
    }

    fn session(&self, session_id: u64) -> Result<Arc<Session>, Error> {
        let table = self.inner.table.lock();
        if let Some(session) = table.live.get(&session_id) {
            return Ok(session.clone());
        }
        let ended = match table.ended.iter().find(|(id, _)| *id == session_id) {
            Some((_, why)) => format!(" (it ended: {why})"),
            None => String::new(),
        };
        Err(Error::NoSession { session_id, ended })
    }

    /// Runs one operation of a session; a cancelled call or the session's end stops it, and a
    /// cancelled call ends the session.
    async fn guarded<T>(
        &self,
        session: &Arc<Session>,
        call: &Call,
        work: impl std::future::Future<Output = Result<T, Error>>,
    ) -> Result<T, Error> {
        let ended = || {
            let why = self.ended_reason(session.id).unwrap_or_else(|| "it ended".to_owned());
            Error::NoSession { session_id: session.id, ended: format!(" ({why})") }
        };
        tokio::select! {
            res = work => res,
            () = call.cancel.cancelled() => {
                self.end(session, "a call on it was cancelled").await;
                Err(Error::Cancelled { session_id: session.id })
            }
            () = session.ended.cancelled() => Err(ended()),
        }
    }

    /// A result that reports the program's end ends the session; a failed launch too.
    async fn settle(&self, session: &Arc<Session>, res: Result<Stop, Error>) -> Result<Stop, Error> {
        match &res {
            Ok(stop) if stop.ended => {
                let why = stop
                    .exit_code
                    .map_or("the program ended".to_owned(), |c| format!("the program exited with code {c}"));
                self.end(session, &why).await;
            }
            Err(Error::Launch(_) | Error::Adapter(_) | Error::Start(_) | Error::NotChecked { .. }) => {
                self.end(session, "the launch failed").await;
            }
            _ => {}
        }
        res
    }

    fn ended_reason(&self, session_id: u64) -> Option<String> {
        self.inner.table.lock().ended.iter().find(|(id, _)| *id == session_id).map(|(_, why)| why.clone())
    }

    /// Removes a session and kills its tree (idempotent).
    async fn end(&self, session: &Arc<Session>, why: &str) {
        {
            let mut table = self.inner.table.lock();
            if table.live.remove(&session.id).is_some() {
                table.ended.push_back((session.id, why.to_owned()));
                if table.ended.len() > REMEMBERED {
                    table.ended.pop_front();
                }
            }
        }
        session.shutdown().await;
    }

    /// Ends the session at its deadline.
    fn watch_deadline(&self, session: &Arc<Session>) {
        let service: Weak<Inner> = Arc::downgrade(&self.inner);
        let session = session.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = tokio::time::sleep_until(session.deadline) => {
                    if let Some(inner) = service.upgrade() {
                        DebugService { inner }.end(&session, "its timeout passed").await;
                    }
                }
                () = session.ended.cancelled() => {}
            }
        });
    }
}

//! The clangd service: one clangd session per usable compilation context, the seven analyses the
//! clangd tools expose, file-change notifications, and the `clangd` result provider
//! (`resources.clangd` on reads, writes and edits of C/C++ files).
//!
//! Sessions follow CMake's context subscription ([`ClangdService::follow`]): a context whose toolset
//! has clangd and whose compilation database exists gets a session at once; the session is kept
//! until the context disappears, its database content or clangd changes, or the server stops. A
//! session that dies is started again by the next analysis that needs it.
//!
//! Every analysis selects configurations (none or `[]` = all usable), lets each answer on its own
//! within one deadline, fails as a whole when any of them fails, and merges identical answers.
//!
//! Architecture invariant: clangd runs only through the process service (`processes_overview`
//! lists every session with its transcript); sessions never keep documents open between analyses.
//! Architecture invariant: this module knows nothing about MCP or CMake's internals: contexts arrive
//! as [`ContextSpec`] values through `follow`, and the workspace is reached only through its hooks
//! (mutation observer, result provider) and `Roots`.
//! Architecture invariant: the mutation observer never blocks: it queues notifications and marks
//! databases for re-checking; a provider failure never fails the file operation.

pub mod analysis;
pub mod convert;
pub mod delta;
pub mod model;
pub mod session;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use sha2::{Digest as _, Sha256};
use tokio::sync::{Notify, watch};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

use crate::call::{BoxFuture, Call, Progress};
use crate::lsp;
use crate::process::{self, ProcessId, ProcessService};
use crate::toolchain::{ToolchainService, Toolset};
use crate::workspace::observer::{Mutation, MutationKind, MutationObserver};
use crate::workspace::path::lexically_normal;
use crate::workspace::path::{QualifiedPath, Roots};
use crate::workspace::provider::{
    FileOperation, LineWindow, PrepareGuard, Provided, ProviderError, ProviderRequest, ResultProvider,
};
use crate::workspace::results::Document;
use convert::SourceFile;
use model::{
    ANNOTATIONS_VERSION, AnnotatedFile, AnnotationsDocument, CompilationContext, Diagnostic, DiagnosticsResult,
    DocumentSymbolsResult, HighlightingResult, HoverResult, LocationsResult, MutationAnalysis, Position,
    WorkspaceSymbolsResult, merge, merge_equal,
};
use session::{Session, SessionSpec};

/// The provider name under `resources` and in the document URI.
pub const PROVIDER_NAME: &str = "clangd";
/// The default limit of one analysis (tools and the provider).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// A compilation context as clangd needs it (CMake publishes these).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextSpec {
    pub id: String,
    pub toolset_id: String,
    pub build_directory: QualifiedPath,
    pub compilation_database: QualifiedPath,
}

/// Which configurations answer an analysis, and how long it may take.
#[derive(Clone, Copy)]
pub struct Scope<'a> {
    /// Configuration ids; empty = every usable configuration.
    pub configurations: &'a [String],
    /// The limit of the whole analysis (starting sessions and every configuration included).
    pub timeout: Duration,
    pub call: &'a Call,
}

/// Errors of the clangd service. Messages are lowercase fragments naming qualified paths.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "no clangd configuration is available: no CMake configuration has a compilation database and clangd in its \
         toolset; run cmake_configure first"
    )]
    NoConfiguration,
    #[error("invalid argument `configurations`: unknown configuration `{id}`; available: {available}")]
    UnknownConfiguration { id: String, available: String },
    #[error("invalid argument `path`: `{path}` is not a C/C++ source or header")]
    NotCpp { path: QualifiedPath },
    #[error(
        "invalid argument `position`: line {line}, character {character} is outside `{path}` ({reason}); lines are \
         one-based, characters zero-based code points"
    )]
    PositionOutside { path: QualifiedPath, line: u32, character: u32, reason: String },
    #[error(transparent)]
    Workspace(#[from] crate::workspace::Error),
    #[error("clangd could not be started")]
    Start(#[source] process::Error),
    #[error(transparent)]
    Lsp(lsp::Error),
    #[error("earlier analyses of `{path}` were still running when the time was up")]
    Busy { path: String },
    #[error("clangd published no diagnostics for `{path}` in time")]
    NoDiagnostics { path: String },
    #[error("clangd of configuration `{id}` did not start in time")]
    StartTimeout { id: String },
    #[error("clangd of configuration `{id}` is not running: {reason}")]
    SessionFailed { id: String, reason: String },
    #[error("clangd of configuration `{id}` did not start")]
    StartFailed {
        id: String,
        #[source]
        source: Arc<Error>,
    },
    #[error("configuration `{id}`: {source}")]
    Configuration {
        id: String,
        #[source]
        source: Box<Error>,
    },
    #[error("clangd did not finish within {} s; pass a larger `timeout`", .0.as_secs_f64())]
    Timeout(Duration),
    #[error("the analysis was cancelled")]
    Cancelled,
}

impl Error {
    fn in_configuration(self, id: &str) -> Error {
        match self {
            Error::Configuration { .. }
            | Error::SessionFailed { .. }
            | Error::StartFailed { .. }
            | Error::StartTimeout { .. } => self,
            other => Error::Configuration { id: id.to_owned(), source: Box::new(other) },
        }
    }
}

/// What an admin view shows about one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    pub context_id: String,
    /// `starting`, `running`, `stopped` or `failed`.
    pub state: &'static str,
    pub process_id: Option<ProcessId>,
    pub pid: Option<u32>,
    pub clangd: PathBuf,
}

#[derive(Clone)]
enum Phase {
    /// Nothing started yet.
    Idle,
    Starting,
    Ready(Arc<Session>),
    /// The last start failed.
    Failed(Arc<Error>),
    /// The context is gone; nothing starts again.
    Retired,
}

#[derive(Clone)]
struct SlotState {
    generation: u64,
    phase: Phase,
}

/// One usable context and its session.
struct Slot {
    spec: ContextSpec,
    session_spec: SessionSpec,
    database_hash: [u8; 32],
    /// The absolute (lexically normalized) files the compilation database lists.
    database_files: Arc<HashSet<PathBuf>>,
    state: watch::Sender<SlotState>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl Slot {
    /// Whether clangd analyses `file` with flags it infers: a translation unit the database lacks.
    fn infers_flags(&self, file: &SourceFile, lexical: Option<&Path>) -> bool {
        convert::is_translation_unit(&file.path)
            && !self.database_files.contains(&file.abs)
            && !lexical.is_some_and(|abs| self.database_files.contains(abs))
    }

    fn same(&self, other: &Slot) -> bool {
        self.spec == other.spec
            && self.session_spec.clangd == other.session_spec.clangd
            && self.session_spec.database_dir == other.session_spec.database_dir
            && self.database_hash == other.database_hash
    }

    fn context(&self) -> CompilationContext {
        CompilationContext {
            id: self.spec.id.clone(),
            toolset_id: self.spec.toolset_id.clone(),
            build_directory: self.spec.build_directory.to_string(),
            compilation_database: self.spec.compilation_database.to_string(),
        }
    }

    /// Starts a session unless one started after `generation` was seen or the slot is retired.
    fn restart(self: &Arc<Self>, generation: u64, processes: &ProcessService) {
        let mut task = self.task.lock();
        let current = self.state.borrow().clone();
        if current.generation != generation || matches!(current.phase, Phase::Retired) {
            return;
        }
        self.state.send_replace(SlotState { generation: generation + 1, phase: Phase::Starting });
        if let Some(old) = task.take() {
            old.abort();
        }
        let slot = self.clone();
        let processes = processes.clone();
        *task = Some(tokio::spawn(async move {
            let phase = match Session::start(&processes, &slot.session_spec).await {
                Ok(session) => Phase::Ready(session),
                Err(err) => {
                    tracing::warn!(context = %slot.spec.id, "clangd did not start: {err}");
                    Phase::Failed(Arc::new(err))
                }
            };
            slot.state.send_modify(|state| {
                if state.generation == generation + 1 {
                    state.phase = phase;
                }
            });
        }));
    }

    /// The running session, starting one again when the last one failed or died. Waits at most
    /// until `deadline`.
    async fn session(self: &Arc<Self>, processes: &ProcessService, deadline: Instant) -> Result<Arc<Session>, Error> {
        let mut state = self.state.subscribe();
        let mut restarted = false;
        loop {
            let SlotState { generation, phase } = state.borrow_and_update().clone();
            match phase {
                Phase::Starting => {
                    if tokio::time::timeout_at(deadline, state.changed()).await.is_err() {
                        return Err(Error::StartTimeout { id: self.spec.id.clone() });
                    }
                }
                Phase::Ready(session) if session.is_alive() => return Ok(session),
                Phase::Idle | Phase::Ready(_) | Phase::Failed(_) if !restarted => {
                    restarted = true;
                    self.restart(generation, processes);
                }
                Phase::Idle | Phase::Retired => {
                    let reason = "the configuration was withdrawn".to_owned();
                    return Err(Error::SessionFailed { id: self.spec.id.clone(), reason });
                }
                Phase::Failed(source) => return Err(Error::StartFailed { id: self.spec.id.clone(), source }),
                Phase::Ready(session) => {
                    let reason = session.client().closed_reason().unwrap_or_else(|| "the process ended".to_owned());
                    return Err(Error::SessionFailed { id: self.spec.id.clone(), reason });
                }
            }
        }
    }

    fn ready(&self) -> Option<Arc<Session>> {
        match &self.state.borrow().phase {
            Phase::Ready(session) => Some(session.clone()),
            _ => None,
        }
    }

    /// Stops the start task and hands back the session to shut down, if any.
    fn retire(&self) -> Option<Arc<Session>> {
        if let Some(task) = self.task.lock().take() {
            task.abort();
        }
        let generation = self.state.borrow().generation;
        let previous = self.state.send_replace(SlotState { generation, phase: Phase::Retired });
        match previous.phase {
            Phase::Ready(session) => Some(session),
            _ => None,
        }
    }

    fn info(&self) -> SessionInfo {
        let (state, session) = match &self.state.borrow().phase {
            Phase::Idle | Phase::Starting => ("starting", None),
            Phase::Ready(session) if session.is_alive() => ("running", Some(session.clone())),
            Phase::Ready(session) => ("stopped", Some(session.clone())),
            Phase::Failed(_) => ("failed", None),
            Phase::Retired => ("stopped", None),
        };
        SessionInfo {
            context_id: self.spec.id.clone(),
            state,
            process_id: session.as_ref().map(|s| s.process_id()),
            pid: session.as_ref().map(|s| s.pid()),
            clangd: self.session_spec.clangd.clone(),
        }
    }
}

type ContextReader = Box<dyn FnMut() -> Option<Vec<ContextSpec>> + Send>;
/// Names the contexts a mutation of a path withdrew (CMake inputs), once.
type WithdrawalSource = Box<dyn Fn(&QualifiedPath) -> Vec<String> + Send + Sync>;

struct Inner {
    processes: ProcessService,
    toolchain: Arc<ToolchainService>,
    roots: Roots,
    /// Serializes reconciliation; holds the contexts last reconciled.
    reconciled: tokio::sync::Mutex<Vec<ContextSpec>>,
    /// Reads the subscription: `Some` when it changed since the last read.
    source: Mutex<Option<ContextReader>>,
    withdrawals: RwLock<Option<WithdrawalSource>>,
    /// A compilation database was touched by a workspace mutation: hash them again.
    dirty: AtomicBool,
    kick: Arc<Notify>,
    /// The usable contexts with their sessions, in context order.
    slots: RwLock<Arc<[Arc<Slot>]>>,
    follow: Mutex<Option<JoinHandle<()>>>,
    /// Sessions shutting down.
    retiring: Mutex<JoinSet<()>>,
    /// Documents opened with a file's content before a write or edit, by qualified path.
    prepared: Mutex<std::collections::HashMap<String, Preparation>>,
    /// Numbers the preparations.
    next_preparation: AtomicU64,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(task) = self.follow.get_mut().take() {
            task.abort();
        }
        for slot in self.slots.get_mut().iter() {
            // Dropping the sessions stops their processes.
            drop(slot.retire());
        }
    }
}

/// The clangd service. Shared by `Arc`.
pub struct ClangdService {
    inner: Arc<Inner>,
}

impl ClangdService {
    pub fn new(processes: ProcessService, toolchain: Arc<ToolchainService>, roots: Roots) -> ClangdService {
        ClangdService {
            inner: Arc::new(Inner {
                processes,
                toolchain,
                roots,
                reconciled: tokio::sync::Mutex::new(Vec::new()),
                source: Mutex::new(None),
                withdrawals: RwLock::new(None),
                dirty: AtomicBool::new(false),
                kick: Arc::new(Notify::new()),
                slots: RwLock::new(Arc::from(Vec::new())),
                follow: Mutex::new(None),
                retiring: Mutex::new(JoinSet::new()),
                prepared: Mutex::new(std::collections::HashMap::new()),
                next_preparation: AtomicU64::new(0),
            }),
        }
    }

    /// Follows a context subscription: every publication (even of equal contexts, which may mean a
    /// regenerated database) is reconciled at once, starting and stopping sessions. Needs a tokio
    /// runtime. Replaces an earlier subscription.
    pub fn follow<T>(
        &self,
        contexts: watch::Receiver<T>,
        convert: impl Fn(&T) -> Vec<ContextSpec> + Send + Sync + 'static,
    ) where
        T: Send + Sync + 'static,
    {
        let mut reader = contexts.clone();
        let mut first = true;
        let read: ContextReader = Box::new(move || {
            let changed = first || reader.has_changed().unwrap_or(false);
            first = false;
            changed.then(|| convert(&reader.borrow_and_update()))
        });
        *self.inner.source.lock() = Some(read);
        // Without a runtime (a service built outside one) analyses still reconcile on demand.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let weak = Arc::downgrade(&self.inner);
        let kick = self.inner.kick.clone();
        let mut waker = contexts;
        let task = runtime.spawn(async move {
            loop {
                match weak.upgrade() {
                    Some(inner) => sync(&inner).await,
                    None => return,
                }
                tokio::select! {
                    changed = waker.changed() => {
                        if changed.is_err() {
                            // The publisher is gone: the last value stays as it is.
                            if let Some(inner) = weak.upgrade() {
                                sync(&inner).await;
                            }
                            return;
                        }
                    }
                    () = kick.notified() => {}
                }
            }
        });
        if let Some(old) = self.inner.follow.lock().replace(task) {
            old.abort();
        }
    }

    /// Where writes and edits learn which contexts they withdrew (`app.rs` asks CMake's tracker),
    /// so their result says so.
    pub fn explain_withdrawals(&self, source: impl Fn(&QualifiedPath) -> Vec<String> + Send + Sync + 'static) {
        *self.inner.withdrawals.write() = Some(Box::new(source));
    }

    /// The mutation observer to register with the workspace.
    pub fn observer(&self) -> Arc<dyn MutationObserver> {
        Arc::new(Observer(Arc::downgrade(&self.inner)))
    }

    /// The `clangd` result provider to register with the workspace.
    pub fn provider(&self) -> Arc<dyn ResultProvider> {
        Arc::new(Provider(Arc::downgrade(&self.inner)))
    }

    /// The sessions kept now, for admin views.
    pub fn sessions(&self) -> Vec<SessionInfo> {
        self.inner.slots.read().iter().map(|slot| slot.info()).collect()
    }

    /// Stops every session politely (then by force) and stops following the subscription.
    pub async fn shutdown(&self) {
        if let Some(task) = self.inner.follow.lock().take() {
            task.abort();
        }
        let slots = std::mem::replace(&mut *self.inner.slots.write(), Arc::from(Vec::new()));
        let mut retiring = std::mem::take(&mut *self.inner.retiring.lock());
        for slot in slots.iter() {
            if let Some(session) = slot.retire() {
                retiring.spawn(async move { session.shutdown().await });
            }
        }
        let all = async { while retiring.join_next().await.is_some() {} };
        if tokio::time::timeout(Duration::from_secs(10), all).await.is_err() {
            tracing::warn!("clangd sessions did not shut down in time; they are stopped");
        }
    }

    /// Usable contexts, in context order.
    pub async fn configurations(&self) -> Vec<CompilationContext> {
        sync(&self.inner).await;
        self.inner.slots.read().iter().map(|slot| slot.context()).collect()
    }

    /// Diagnostics of one file per configuration.
    pub async fn diagnostics(&self, path: &QualifiedPath, scope: Scope<'_>) -> Result<Vec<DiagnosticsResult>, Error> {
        let file = self.source(path)?;
        let roots = self.inner.roots.clone();
        let answers = self
            .each(scope, move |session, deadline| {
                let (file, roots) = (file.clone(), roots.clone());
                Box::pin(async move { analysis::diagnostics(&session, &roots, &file, deadline).await })
            })
            .await?;
        let path = path.to_string();
        Ok(merge(answers)
            .into_iter()
            .map(|(configurations, diagnostics)| DiagnosticsResult { configurations, path: path.clone(), diagnostics })
            .collect())
    }

    pub async fn hover(
        &self,
        path: &QualifiedPath,
        position: Position,
        scope: Scope<'_>,
    ) -> Result<Vec<HoverResult>, Error> {
        let file = self.source_at(path, position)?;
        let answers = self
            .each(scope, move |session, deadline| {
                let file = file.clone();
                Box::pin(async move { analysis::hover(&session, &file, position, deadline).await })
            })
            .await?;
        let path = path.to_string();
        Ok(merge(answers)
            .into_iter()
            .map(|(configurations, hover)| HoverResult { configurations, path: path.clone(), position, hover })
            .collect())
    }

    /// Definitions or references of the symbol at `position`.
    pub async fn locations(
        &self,
        path: &QualifiedPath,
        position: Position,
        navigation: analysis::Navigation,
        scope: Scope<'_>,
    ) -> Result<Vec<LocationsResult>, Error> {
        let file = self.source_at(path, position)?;
        let roots = self.inner.roots.clone();
        let answers = self
            .each(scope, move |session, deadline| {
                let (file, roots) = (file.clone(), roots.clone());
                Box::pin(
                    async move { analysis::locations(&session, &roots, &file, position, navigation, deadline).await },
                )
            })
            .await?;
        Ok(merge(answers)
            .into_iter()
            .map(|(configurations, locations)| LocationsResult { configurations, locations, omitted: 0 })
            .collect())
    }

    pub async fn document_symbols(
        &self,
        path: &QualifiedPath,
        scope: Scope<'_>,
    ) -> Result<Vec<DocumentSymbolsResult>, Error> {
        let file = self.source(path)?;
        let answers = self
            .each(scope, move |session, deadline| {
                let file = file.clone();
                Box::pin(async move { analysis::document_symbols(&session, &file, deadline).await })
            })
            .await?;
        let path = path.to_string();
        Ok(merge(answers)
            .into_iter()
            .map(|(configurations, symbols)| DocumentSymbolsResult {
                configurations,
                path: path.clone(),
                symbols,
                omitted: 0,
            })
            .collect())
    }

    pub async fn workspace_symbols(&self, query: &str, scope: Scope<'_>) -> Result<Vec<WorkspaceSymbolsResult>, Error> {
        let roots = self.inner.roots.clone();
        let query = query.to_owned();
        let answers = self
            .each(scope, move |session, deadline| {
                let (roots, query) = (roots.clone(), query.clone());
                Box::pin(async move { analysis::workspace_symbols(&session, &roots, &query, deadline).await })
            })
            .await?;
        Ok(merge(answers)
            .into_iter()
            .map(|(configurations, symbols)| WorkspaceSymbolsResult { configurations, symbols })
            .collect())
    }

    /// A file whose `position` must name a character of its current text (or a line end).
    fn source_at(&self, path: &QualifiedPath, position: Position) -> Result<Arc<SourceFile>, Error> {
        let file = self.source(path)?;
        check_position(&file, position)?;
        Ok(file)
    }

    /// The complete current text of a C/C++ file (the blocking read is short: one file).
    fn source(&self, path: &QualifiedPath) -> Result<Arc<SourceFile>, Error> {
        if !convert::is_cpp_source(path) {
            return Err(Error::NotCpp { path: path.clone() });
        }
        let file = convert::read_source(&self.inner.roots, path).map_err(|err| match err {
            Error::Workspace(err) => Error::Workspace(err.for_argument("path")),
            other => other,
        })?;
        Ok(Arc::new(file))
    }

    /// Runs `analyse` on the session of every selected configuration, concurrently, within one
    /// deadline; any failure fails the whole call.
    async fn each<T, F>(&self, scope: Scope<'_>, analyse: F) -> Result<Vec<(String, T)>, Error>
    where
        F: Fn(Arc<Session>, Instant) -> BoxFuture<'static, Result<T, Error>>,
    {
        let Scope { configurations: selection, timeout, call } = scope;
        let deadline = Instant::now() + timeout;
        let counter = AtomicU64::new(0);
        let report = |message: String| {
            let value = counter.fetch_add(1, Ordering::Relaxed) as f64;
            call.progress.report(value, None, message);
        };
        report("Starting clangd analysis".to_owned());
        let work = async {
            sync(&self.inner).await;
            let slots = select(&self.inner.slots.read(), selection)?;
            let runs = slots.iter().map(|slot| {
                let analyse = &analyse;
                let report = &report;
                async move {
                    let id = slot.spec.id.clone();
                    if slot.ready().is_none() {
                        report(format!("Starting clangd for configuration {id}"));
                    }
                    let session =
                        slot.session(&self.inner.processes, deadline).await.map_err(|err| err.in_configuration(&id))?;
                    let mut messages = session.messages();
                    let analysis = analyse(session, deadline);
                    tokio::pin!(analysis);
                    let mut listening = true;
                    loop {
                        tokio::select! {
                            answer = &mut analysis => return answer.map(|answer| (id.clone(), answer)).map_err(|err| err.in_configuration(&id)),
                            message = messages.recv(), if listening => match message {
                                Ok(message) => report(format!("{id}: {message}")),
                                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                                Err(tokio::sync::broadcast::error::RecvError::Closed) => listening = false,
                            },
                        }
                    }
                }
            });
            futures_util::future::join_all(runs).await.into_iter().collect::<Result<Vec<_>, Error>>()
        };
        let res = tokio::select! {
            res = tokio::time::timeout_at(deadline, work) => match res {
                Ok(res) => res,
                Err(_) => Err(Error::Timeout(timeout)),
            },
            () = call.cancel.cancelled() => Err(Error::Cancelled),
        };
        if res.is_ok() {
            report("Completed clangd analysis".to_owned());
        }
        res
    }

    /// `clangd.json` for one file operation, across all usable configurations; `None` when the file
    /// is not C/C++ or no configuration is usable.
    pub async fn annotate(&self, request: &ProviderRequest, call: &Call) -> Result<Option<AnnotationsDocument>, Error> {
        annotate(&self.inner, request, call).await.map(|(document, _)| document)
    }
}

/// The selected slots: all for an empty selection; unknown ids are errors.
fn select(slots: &[Arc<Slot>], selection: &[String]) -> Result<Vec<Arc<Slot>>, Error> {
    if slots.is_empty() {
        return Err(Error::NoConfiguration);
    }
    if selection.is_empty() {
        return Ok(slots.to_vec());
    }
    let mut res: Vec<Arc<Slot>> = Vec::new();
    for id in selection {
        let Some(slot) = slots.iter().find(|slot| slot.spec.id == *id) else {
            let available = slots.iter().map(|slot| slot.spec.id.as_str()).collect::<Vec<_>>().join(", ");
            return Err(Error::UnknownConfiguration { id: id.clone(), available });
        };
        if !res.iter().any(|known| Arc::ptr_eq(known, slot)) {
            res.push(slot.clone());
        }
    }
    Ok(res)
}

/// A position must name a character of the file or the end of a line.
fn check_position(file: &SourceFile, position: Position) -> Result<(), Error> {
    let outside = |reason: String| Error::PositionOutside {
        path: file.path.clone(),
        line: position.line,
        character: position.character,
        reason,
    };
    let n_lines = file.lines.line_count();
    if position.line == 0 || position.line > n_lines {
        return Err(outside(format!("it has {n_lines} lines")));
    }
    let length = file.lines.line_length(position.line - 1).unwrap_or(0);
    if position.character > length {
        return Err(outside(format!("line {} has {length} characters", position.line)));
    }
    Ok(())
}

/// Brings the sessions in line with the latest contexts (and re-hashes databases when one was
/// touched). Cheap when nothing changed.
async fn sync(inner: &Arc<Inner>) {
    let mut reconciled = inner.reconciled.lock().await;
    let fresh = inner.source.lock().as_mut().and_then(|read| read());
    let dirty = inner.dirty.swap(false, Ordering::SeqCst);
    let Some(specs) = fresh.or_else(|| dirty.then(|| reconciled.clone())) else { return };
    *reconciled = specs.clone();
    let toolsets = if specs.is_empty() { None } else { inner.toolchain.toolsets().await.ok() };
    let current = inner.slots.read().clone();
    let mut next: Vec<Arc<Slot>> = Vec::new();
    for spec in specs {
        let Some(candidate) = candidate(inner, spec, toolsets.as_deref()).await else { continue };
        match current.iter().find(|slot| slot.same(&candidate)) {
            Some(kept) => next.push(kept.clone()),
            None => {
                let slot = Arc::new(candidate);
                slot.restart(0, &inner.processes);
                next.push(slot);
            }
        }
    }
    for slot in current.iter() {
        if !next.iter().any(|kept| Arc::ptr_eq(kept, slot))
            && let Some(session) = slot.retire()
        {
            tracing::info!(context = %slot.spec.id, "stopping clangd: its configuration changed or was withdrawn");
            inner.retiring.lock().spawn(async move { session.shutdown().await });
        }
    }
    *inner.slots.write() = next.into();
}

/// A slot for `spec`, or `None` when its toolset has no clangd or its database is missing.
async fn candidate(inner: &Inner, spec: ContextSpec, toolsets: Option<&[Arc<Toolset>]>) -> Option<Slot> {
    let toolset = toolsets?.iter().find(|toolset| toolset.id().as_str() == spec.toolset_id)?;
    let Some(clangd) = toolset.tool("clangd") else {
        tracing::info!(context = %spec.id, toolset = %spec.toolset_id, "no clangd session: the toolset has no clangd");
        return None;
    };
    let database = inner.roots.lexical(&spec.compilation_database)?;
    let hashed = database.clone();
    let read = tokio::task::spawn_blocking(move || {
        std::fs::read(hashed).ok().map(|bytes| (Sha256::digest(&bytes), database_files(&bytes)))
    })
    .await
    .ok()
    .flatten();
    let Some((hash, files)) = read else {
        tracing::info!(context = %spec.id, "no clangd session: the compilation database is missing");
        return None;
    };
    let session_spec = SessionSpec {
        context_id: spec.id.clone(),
        clangd: clangd.path.clone(),
        environment: toolset.environment().cloned(),
        database_dir: database.parent()?.to_path_buf(),
        project: inner.roots.project().to_path_buf(),
    };
    let state = watch::channel(SlotState { generation: 0, phase: Phase::Idle }).0;
    Some(Slot {
        spec,
        session_spec,
        database_hash: hash.into(),
        database_files: Arc::new(files),
        state,
        task: Mutex::new(None),
    })
}

/// The files a compilation database lists, absolute and lexically normalized; empty when it is
/// not a database.
fn database_files(bytes: &[u8]) -> HashSet<PathBuf> {
    #[derive(serde::Deserialize)]
    struct Entry {
        directory: PathBuf,
        file: PathBuf,
    }
    let entries: Vec<Entry> = serde_json::from_slice(bytes).unwrap_or_default();
    entries.into_iter().map(|entry| lexically_normal(&entry.directory.join(entry.file))).collect()
}

/// What one configuration found for a file operation.
struct Answer {
    id: String,
    diagnostics: Vec<Diagnostic>,
    spans: Vec<model::SemanticSpan>,
    /// The diagnostics of the content before a write or edit (empty for a created file).
    before: Option<Vec<Diagnostic>>,
    inferred_flags: bool,
}

async fn annotate(
    inner: &Arc<Inner>,
    request: &ProviderRequest,
    call: &Call,
) -> Result<(Option<AnnotationsDocument>, MutationAnalysis), Error> {
    let mutation = matches!(request.operation, FileOperation::Write | FileOperation::Edit);
    let mut analysis = MutationAnalysis::default();
    if mutation && let Some(source) = inner.withdrawals.read().as_ref() {
        analysis.withdrawn = source(&request.path);
    }
    if !convert::is_annotated(&request.path) {
        return Ok((None, analysis));
    }
    let deadline = Instant::now() + DEFAULT_TIMEOUT;
    let work = async {
        sync(inner).await;
        let slots: Vec<Arc<Slot>> = inner.slots.read().to_vec();
        if slots.is_empty() {
            return Ok((None, analysis));
        }
        let path = request.path.to_string();
        if request.lines == LineWindow::Empty {
            let file = AnnotatedFile { path, diagnostics: Vec::new(), highlighting: Vec::new() };
            return Ok((Some(AnnotationsDocument { version: ANNOTATIONS_VERSION, files: vec![file] }), analysis));
        }
        let file = Arc::new(convert::read_source(&inner.roots, &request.path)?);
        let lexical = inner.roots.lexical(&request.path);
        let old = if mutation { request.before.as_deref() } else { None };
        let mut prepared = match old {
            Some(old) => prepared_documents(inner, &path, old).await,
            None => Vec::new(),
        };
        let runs = slots.iter().map(|slot| {
            let file = file.clone();
            let lexical = lexical.clone();
            let prepared = prepared.iter().position(|p| p.0 == slot.spec.id).map(|at| prepared.swap_remove(at));
            async move {
                let id = slot.spec.id.clone();
                let in_configuration = |err: Error| err.in_configuration(&id);
                let session = slot.session(&inner.processes, deadline).await.map_err(in_configuration)?;
                // Only a document of this very session (not of one that restarted since).
                let prepared = prepared.and_then(|(_, owner, doc)| Arc::ptr_eq(&owner, &session).then_some(doc));
                let found = analysis::annotations(&session, &inner.roots, &file, old, prepared, deadline)
                    .await
                    .map_err(in_configuration)?;
                // A created file had no diagnostics before.
                let before = if mutation { Some(found.before.unwrap_or_default()) } else { None };
                let inferred_flags = slot.infers_flags(&file, lexical.as_deref());
                Ok::<_, Error>(Answer {
                    id: id.clone(),
                    diagnostics: found.diagnostics,
                    spans: found.spans,
                    before,
                    inferred_flags,
                })
            }
        });
        let answers = futures_util::future::join_all(runs).await.into_iter().collect::<Result<Vec<_>, Error>>()?;
        let mut analysis = analysis;
        let mut deltas = Vec::new();
        let before_lines = request.before.as_deref().map(crate::lsp::LineIndex::new);
        let empty = crate::lsp::LineIndex::new("");
        for answer in &answers {
            if answer.inferred_flags {
                analysis.inferred_flags.push(answer.id.clone());
            }
            if let Some(before) = &answer.before {
                let lines = before_lines.as_ref().unwrap_or(&empty);
                deltas.push((answer.id.clone(), delta::compare(before, lines, &answer.diagnostics, &file.lines)));
            }
        }
        analysis.deltas = merge(deltas)
            .into_iter()
            .map(|(configurations, (introduced, resolved))| delta::summary(configurations, &introduced, &resolved))
            .collect();
        let window = request.lines;
        let keep = |range: &model::SourceRange| {
            let (first, last) = range.lines();
            window.intersects(first, last)
        };
        let mut diagnostics = Vec::new();
        let mut highlighting = Vec::new();
        for Answer { id, diagnostics: mut found, mut spans, .. } in answers {
            found.retain(|d| keep(&d.range));
            spans.retain(|s| keep(&s.range));
            diagnostics.push((id.clone(), found));
            highlighting.push((id, spans));
        }
        let file = AnnotatedFile {
            diagnostics: merge_equal(diagnostics)
                .into_iter()
                .map(|(configurations, diagnostics)| DiagnosticsResult {
                    configurations,
                    path: path.clone(),
                    diagnostics,
                })
                .collect(),
            highlighting: merge_equal(highlighting)
                .into_iter()
                .map(|(configurations, spans)| HighlightingResult::encode(configurations, path.clone(), &spans))
                .collect(),
            path,
        };
        Ok((Some(AnnotationsDocument { version: ANNOTATIONS_VERSION, files: vec![file] }), analysis))
    };
    tokio::select! {
        res = tokio::time::timeout_at(deadline, work) => res.unwrap_or(Err(Error::Timeout(DEFAULT_TIMEOUT))),
        () = call.cancel.cancelled() => Err(Error::Cancelled),
    }
}

/// Sends workspace changes to the sessions as `workspace/didChangeWatchedFiles`.
struct Observer(Weak<Inner>);

impl MutationObserver for Observer {
    fn mutated(&self, change: &Mutation) {
        let Some(inner) = self.0.upgrade() else { return };
        let slots = inner.slots.read().clone();
        let touches_database = slots.iter().any(|slot| {
            change
                .before
                .iter()
                .chain(&change.after)
                .any(|affected| slot.spec.compilation_database.starts_with(&affected.path))
        });
        if touches_database {
            inner.dirty.store(true, Ordering::SeqCst);
            inner.kick.notify_one();
        }
        let mutated: Vec<String> = change.before.iter().chain(&change.after).map(|a| a.path.to_string()).collect();
        for slot in slots.iter() {
            if let Some(session) = slot.ready() {
                session.forget_except(&mutated);
            }
        }
        let changes = file_events(&inner.roots, change);
        if changes.is_empty() {
            return;
        }
        let params = lsp_types::DidChangeWatchedFilesParams { changes };
        for slot in slots.iter() {
            if let Some(session) = slot.ready() {
                session.notify::<lsp_types::notification::DidChangeWatchedFiles>(params.clone());
            }
        }
    }
}

/// The file events of one mutation: a move is a deletion of every old path and a creation of
/// every new one.
fn file_events(roots: &Roots, change: &Mutation) -> Vec<lsp_types::FileEvent> {
    let (before, after) = match &change.kind {
        MutationKind::Created | MutationKind::DirCreated => (None, Some(lsp_types::FileChangeType::CREATED)),
        MutationKind::Written | MutationKind::Edited => (None, Some(lsp_types::FileChangeType::CHANGED)),
        MutationKind::Moved { .. } => {
            (Some(lsp_types::FileChangeType::DELETED), Some(lsp_types::FileChangeType::CREATED))
        }
        MutationKind::Deleted => (Some(lsp_types::FileChangeType::DELETED), None),
    };
    let mut res = Vec::new();
    for (affected, typ) in [(&change.before, before), (&change.after, after)] {
        let Some(typ) = typ else { continue };
        for entry in affected {
            if let Some(abs) = roots.lexical(&entry.path) {
                res.push(lsp_types::FileEvent { uri: convert::file_uri(&abs), typ });
            }
        }
    }
    res
}

/// The `clangd` result provider.
struct Provider(Weak<Inner>);

impl ResultProvider for Provider {
    fn name(&self) -> &'static str {
        PROVIDER_NAME
    }

    fn provide(&self, request: ProviderRequest, call: Call) -> BoxFuture<'static, Result<Provided, ProviderError>> {
        let inner = self.0.clone();
        Box::pin(async move {
            let Some(inner) = inner.upgrade() else { return Ok(Provided::default()) };
            // The file operation owns the call's progress; annotations report none.
            let quiet = Call::new(Progress::disabled(), call.cancel.clone(), None);
            let (document, analysis) =
                annotate(&inner, &request, &quiet).await.map_err(|err| Box::new(err) as ProviderError)?;
            let mut provided = Provided::default();
            if let Some(document) = document {
                let value = serde_json::to_value(&document).map_err(|err| Box::new(err) as ProviderError)?;
                provided.document = Some(Document::json(PROVIDER_NAME, &value));
            }
            provided.note = crate::render::clangd_note::mutation_note(&request.path.to_string(), &analysis);
            let mutation = matches!(request.operation, FileOperation::Write | FileOperation::Edit);
            if mutation && analysis != MutationAnalysis::default() {
                provided.summary = Some(serde_json::to_value(&analysis).map_err(|err| Box::new(err) as ProviderError)?);
            }
            Ok(provided)
        })
    }

    /// Opens the file's current content in every running session whose before-state for it is not
    /// remembered, in the background, so clangd analyses the old content while the file is written.
    fn prepare(&self, path: &QualifiedPath) -> Option<PrepareGuard> {
        let inner = self.0.upgrade()?;
        if !convert::is_annotated(path) || inner.slots.read().is_empty() {
            return None;
        }
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let id = inner.next_preparation.fetch_add(1, Ordering::Relaxed);
        let key = path.to_string();
        let task = runtime.spawn(prepare_documents(inner.clone(), path.clone()));
        // A later preparation of the same file replaces this one (the texts decide which is used).
        if let Some(old) = inner.prepared.lock().insert(key.clone(), Preparation { id, task }) {
            old.task.abort();
        }
        Some(Box::new(Prepared { inner: Arc::downgrade(&inner), key, id }))
    }
}

/// Documents opened with one content of a file, each with the session it is open in and its
/// configuration.
struct Opened {
    text: String,
    documents: Vec<(String, Arc<Session>, session::OpenDocument)>,
}

/// A preparation under way or done.
struct Preparation {
    id: u64,
    task: JoinHandle<Option<Opened>>,
}

/// The guard of one preparation: dropping it closes the documents nobody used.
struct Prepared {
    inner: Weak<Inner>,
    key: String,
    id: u64,
}

impl Drop for Prepared {
    fn drop(&mut self) {
        let Some(inner) = self.inner.upgrade() else { return };
        let mut prepared = inner.prepared.lock();
        if prepared.get(&self.key).is_some_and(|p| p.id == self.id)
            && let Some(preparation) = prepared.remove(&self.key)
        {
            preparation.task.abort();
        }
    }
}

/// Opens the current content of `path` in every running session that does not remember its
/// diagnostics for it.
async fn prepare_documents(inner: Arc<Inner>, path: QualifiedPath) -> Option<Opened> {
    let roots = inner.roots.clone();
    let source = path.clone();
    let file = tokio::task::spawn_blocking(move || convert::read_source(&roots, &source).ok()).await.ok()??;
    let key = path.to_string();
    let deadline = Instant::now() + DEFAULT_TIMEOUT;
    let slots: Vec<Arc<Slot>> = inner.slots.read().to_vec();
    let mut documents = Vec::new();
    for slot in slots {
        let Some(session) = slot.ready().filter(|session| session.is_alive()) else { continue };
        if session.remembered(&key, file.lines.text()).is_some() {
            continue;
        }
        if let Ok(doc) = session.open(&file, deadline).await {
            documents.push((slot.spec.id.clone(), session, doc));
        }
    }
    Some(Opened { text: file.lines.text().to_owned(), documents })
}

/// The documents prepared for `path` when they hold exactly `before` (else they are closed).
async fn prepared_documents(
    inner: &Inner,
    path: &str,
    before: &str,
) -> Vec<(String, Arc<Session>, session::OpenDocument)> {
    let Some(preparation) = inner.prepared.lock().remove(path) else { return Vec::new() };
    match preparation.task.await {
        Ok(Some(opened)) if opened.text == before => opened.documents,
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::observer::{Affected, EntryKind};

    fn q(text: &str) -> QualifiedPath {
        QualifiedPath::parse(text).unwrap()
    }

    fn affected(path: &str, kind: EntryKind) -> Affected {
        Affected { path: q(path), kind }
    }

    fn events(change: &Mutation) -> Vec<(String, i32)> {
        let roots = Roots::new(PathBuf::from("/w/proj"), PathBuf::from("/w/.proj.forgemcp"));
        file_events(&roots, change)
            .into_iter()
            .map(|event| {
                (event.uri.as_str().to_owned(), serde_json::to_value(event.typ).unwrap().as_i64().unwrap() as i32)
            })
            .collect()
    }

    #[test]
    fn a_move_deletes_every_old_path_and_creates_every_new_one() {
        let change = Mutation {
            kind: MutationKind::Moved { from: q("project/src"), to: q("project/lib") },
            before: vec![affected("project/src", EntryKind::Directory), affected("project/src/a.cpp", EntryKind::File)],
            after: vec![affected("project/lib", EntryKind::Directory), affected("project/lib/a.cpp", EntryKind::File)],
        };
        assert_eq!(
            events(&change),
            [
                ("file:///w/proj/src".to_owned(), 3),
                ("file:///w/proj/src/a.cpp".to_owned(), 3),
                ("file:///w/proj/lib".to_owned(), 1),
                ("file:///w/proj/lib/a.cpp".to_owned(), 1),
            ]
        );
    }

    #[test]
    fn writes_edits_and_deletes() {
        let file = || vec![affected("storage/gen/a.h", EntryKind::File)];
        let edited = Mutation { kind: MutationKind::Edited, before: file(), after: file() };
        assert_eq!(events(&edited), [("file:///w/.proj.forgemcp/gen/a.h".to_owned(), 2)]);
        let created = Mutation { kind: MutationKind::Created, before: vec![], after: file() };
        assert_eq!(events(&created), [("file:///w/.proj.forgemcp/gen/a.h".to_owned(), 1)]);
        let deleted = Mutation { kind: MutationKind::Deleted, before: file(), after: vec![] };
        assert_eq!(events(&deleted), [("file:///w/.proj.forgemcp/gen/a.h".to_owned(), 3)]);
    }

    fn slot(id: &str) -> Arc<Slot> {
        let spec = ContextSpec {
            id: id.to_owned(),
            toolset_id: "system".to_owned(),
            build_directory: q(&format!("storage/build/{id}")),
            compilation_database: q(&format!("storage/build/{id}/compile_commands.json")),
        };
        let session_spec = SessionSpec {
            context_id: id.to_owned(),
            clangd: PathBuf::from("/usr/bin/clangd"),
            environment: None,
            database_dir: PathBuf::from(format!("/w/.proj.forgemcp/build/{id}")),
            project: PathBuf::from("/w/proj"),
        };
        let state = watch::channel(SlotState { generation: 0, phase: Phase::Starting }).0;
        let database_files = Arc::new(HashSet::new());
        Arc::new(Slot { spec, session_spec, database_hash: [0; 32], database_files, state, task: Mutex::new(None) })
    }

    #[test]
    fn selection_defaults_to_all_and_names_unknown_ids() {
        let slots = vec![slot("Debug"), slot("Release")];
        let ids = |selected: Vec<Arc<Slot>>| selected.iter().map(|s| s.spec.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(select(&slots, &[]).unwrap()), ["Debug", "Release"]);
        assert_eq!(ids(select(&slots, &["Release".into(), "Release".into()]).unwrap()), ["Release"]);
        let err = select(&slots, &["Profile".into()]).err().unwrap();
        assert_eq!(
            err.to_string(),
            "invalid argument `configurations`: unknown configuration `Profile`; available: Debug, Release"
        );
        assert!(matches!(select(&[], &[]), Err(Error::NoConfiguration)));
    }

    #[test]
    fn positions_must_lie_inside_the_file() {
        let file = SourceFile {
            path: q("project/a.cpp"),
            abs: PathBuf::from("/w/proj/a.cpp"),
            uri: convert::file_uri(std::path::Path::new("/w/proj/a.cpp")),
            lines: Arc::new(crate::lsp::LineIndex::new("int x;\n😀\n")),
        };
        let at = |line, character| check_position(&file, Position { line, character });
        assert!(at(1, 0).is_ok());
        assert!(at(1, 6).is_ok());
        assert!(at(2, 1).is_ok());
        assert!(at(3, 0).is_ok(), "the empty line after the final LF");
        let err = at(2, 2).unwrap_err().to_string();
        assert!(err.contains("line 2 has 1 characters"), "{err}");
        assert!(at(4, 0).unwrap_err().to_string().contains("it has 3 lines"));
        assert!(at(0, 0).is_err());
    }
}

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
pub mod includers;
pub mod model;
pub mod session;
pub mod standing;

mod annotate;
mod error;
mod hooks;
mod known;
mod slot;
mod withdrawal_notes;

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
use crate::process::{ProcessId, ProcessService};
use crate::toolchain::{ToolchainService, Toolset};
use crate::workspace::observer::{Mutation, MutationKind, MutationObserver};
use crate::workspace::path::{QualifiedPath, Roots};
use crate::workspace::provider::{
    FileOperation, LineWindow, PrepareGuard, Provided, ProviderError, ProviderRequest, ResultProvider,
};
use crate::workspace::results::Document;
use annotate::{Preparation, annotate};
use convert::SourceFile;
pub use error::Error;
use known::{Standing, cpp_evidence, databases_changed, unavailable};
use model::{
    ANNOTATIONS_VERSION, AnnotatedFile, AnnotationsDocument, CompilationContext, Diagnostic, DiagnosticsResult,
    DocumentSymbolsResult, HighlightingResult, HoverResult, Indexed, LocationsResult, MutationAnalysis, Position,
    WorkspaceSymbolsResult, merge, merge_equal,
};
use session::{Session, SessionSpec};
use slot::{select, sync};
use standing::{EarlierBuild, Unavailable, Unusable, Withdrawn};

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
    /// What the compilation database lists: files, include directories, each unit's target.
    database: Arc<crate::compile_db::Database>,
    state: watch::Sender<SlotState>,
    task: Mutex<Option<JoinHandle<()>>>,
}

type ContextReader = Box<dyn FnMut() -> Option<Vec<ContextSpec>> + Send>;
/// Names the contexts a mutation of a path withdrew (CMake inputs or globs), once.
type WithdrawalSource = Box<dyn Fn(&QualifiedPath) -> model::Withdrawn + Send + Sync>;
/// Lists the build directories an earlier session left with a compilation database.
type EarlierSource = Box<dyn Fn() -> Vec<EarlierBuild> + Send + Sync>;
/// Makes the result text's note of a write, edit or read from the analysis (`render::clangd_note`,
/// handed in by the composition root so this service never imports `render`).
pub type NoteRenderer = fn(&str, &MutationAnalysis) -> Option<String>;
/// A database's modification time and length, to see it change on disk.
type Stamp = Option<(std::time::SystemTime, u64)>;

struct Inner {
    processes: ProcessService,
    toolchain: Arc<ToolchainService>,
    roots: Roots,
    /// Serializes reconciliation; holds the contexts last reconciled.
    reconciled: tokio::sync::Mutex<Vec<ContextSpec>>,
    /// Reads the subscription: `Some` when it changed since the last read.
    source: Mutex<Option<ContextReader>>,
    withdrawals: RwLock<Option<WithdrawalSource>>,
    earlier: RwLock<Option<EarlierSource>>,
    /// What is known of why configurations are missing: withdrawn ones (with the path that
    /// withdrew them) and published ones clangd cannot run in.
    standing: Mutex<Standing>,
    /// Managed files clangd named while analysing (headers included by translation units).
    seen: Mutex<HashSet<PathBuf>>,
    /// The databases of the contexts last reconciled, as they were on disk then.
    stamps: Mutex<Vec<Stamp>>,
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
                earlier: RwLock::new(None),
                standing: Mutex::new(Standing::default()),
                seen: Mutex::new(HashSet::new()),
                stamps: Mutex::new(Vec::new()),
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
    pub fn explain_withdrawals(&self, source: impl Fn(&QualifiedPath) -> model::Withdrawn + Send + Sync + 'static) {
        *self.inner.withdrawals.write() = Some(Box::new(source));
    }

    /// Where clangd learns which build directories an earlier session left (`app.rs` asks CMake), so
    /// calls that cannot be answered name them and the configure that confirms them.
    pub fn explain_earlier(&self, source: impl Fn() -> Vec<EarlierBuild> + Send + Sync + 'static) {
        *self.inner.earlier.write() = Some(Box::new(source));
    }

    /// Why no configuration (or not every one) can answer now.
    pub fn unavailable(&self) -> Unavailable {
        unavailable(&self.inner)
    }

    /// The mutation observer to register with the workspace.
    pub fn observer(&self) -> Arc<dyn MutationObserver> {
        Arc::new(Observer(Arc::downgrade(&self.inner)))
    }

    /// The `clangd` result provider to register with the workspace; `note` makes its text.
    pub fn provider(&self, note: NoteRenderer) -> Arc<dyn ResultProvider> {
        Arc::new(Provider { inner: Arc::downgrade(&self.inner), note })
    }

    /// The path notes to register with the workspace: a move, deletion or revert that withdrew
    /// configurations says so (`note` renders it as a write's note would).
    pub fn withdrawal_notes(&self, note: NoteRenderer) -> Arc<dyn crate::workspace::path_notes::PathNotes> {
        Arc::new(withdrawal_notes::WithdrawalNotes { inner: Arc::downgrade(&self.inner), note })
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
        let file = self.source(path).await?;
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
        let file = self.source_at(path, position).await?;
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
        let file = self.source_at(path, position).await?;
        let roots = self.inner.roots.clone();
        let answers = self
            .each(scope, move |session, deadline| {
                let (file, roots) = (file.clone(), roots.clone());
                Box::pin(
                    async move { analysis::locations(&session, &roots, &file, position, navigation, deadline).await },
                )
            })
            .await?;
        self.remember(answers.iter().flat_map(|(_, indexed)| indexed.answer.iter().map(|l| l.path.as_str())));
        Ok(merge(answers)
            .into_iter()
            .map(|(configurations, Indexed { answer: locations, index_busy })| LocationsResult {
                configurations,
                locations,
                omitted: 0,
                index_busy,
            })
            .collect())
    }

    pub async fn document_symbols(
        &self,
        path: &QualifiedPath,
        scope: Scope<'_>,
    ) -> Result<Vec<DocumentSymbolsResult>, Error> {
        let file = self.source(path).await?;
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
            .map(|(configurations, Indexed { answer: (symbols, capped), index_busy })| WorkspaceSymbolsResult {
                configurations,
                symbols,
                omitted: 0,
                capped,
                index_busy,
            })
            .collect())
    }

    /// Remembers the managed files clangd named (a header it found through a translation unit counts
    /// as C/C++ from then on, whatever its name).
    fn remember<'a>(&self, paths: impl Iterator<Item = &'a str>) {
        let found: Vec<PathBuf> = paths
            .filter_map(|path| QualifiedPath::parse(path).ok())
            .filter(|path| path.is_managed())
            .filter_map(|path| self.inner.roots.lexical(&path))
            .collect();
        self.inner.seen.lock().extend(found);
    }

    /// A file whose `position` must name a character of its current text (or a line end).
    async fn source_at(&self, path: &QualifiedPath, position: Position) -> Result<Arc<SourceFile>, Error> {
        let file = self.source(path).await?;
        check_position(&file, position)?;
        Ok(file)
    }

    /// The complete current text of a C/C++ file (the blocking read is short: one file).
    async fn source(&self, path: &QualifiedPath) -> Result<Arc<SourceFile>, Error> {
        // The latest databases decide too (a configure just confirmed one).
        sync(&self.inner).await;
        if cpp_evidence(&self.inner, path).is_none() {
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
            let slots = select(&self.inner.slots.read(), selection, || unavailable(&self.inner))?;
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

/// Sends workspace changes to the sessions as `workspace/didChangeWatchedFiles`.
struct Observer(Weak<Inner>);

/// The `clangd` result provider.
struct Provider {
    inner: Weak<Inner>,
    note: NoteRenderer,
}

#[cfg(test)]
mod tests;

//! Code quality: clang-tidy per CMake configuration and clang-format, on one file or a tree, with
//! their changes applied through the workspace's mutations.
//!
//! `QualityService` owns no state beyond its handles: compilation databases come from the CMake
//! contexts (the same published set clangd follows), executables from the configurations' toolsets,
//! every run goes through the process service, and every change through `WorkspaceService::edit_file`
//! (atomic replacement, protected paths, link rules, CMake input checks, mutation observers).
//!
//! Architecture invariant: a file is changed only if its content is still exactly the text the tool
//! read (the edit replaces that whole text, so a file changed meanwhile is refused, not merged).
//! Architecture invariant: tree runs start at most one process per core; cancelling the call or
//! dropping its future stops every run it started (the process service kills their trees).
//! Architecture invariant: nothing here knows MCP; results are plain values and `model`'s wire types.

pub mod format;
pub mod model;
pub mod parse;
pub mod tidy;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use tokio::sync::watch;

use crate::call::Call;
use crate::cmake::{CompilationContext, Contexts};
use crate::compile_db::Database;
use crate::cpp_file::Evidence;
use crate::process::ProcessService;
use crate::toolchain::ToolchainService;
use crate::workspace::WorkspaceService;
use crate::workspace::diff::FileDiff;
use crate::workspace::path::QualifiedPath;

/// Total time one clang-tidy or clang-format run may take.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(300);

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("`{path}` is outside the project and storage")]
    External { path: QualifiedPath },
    #[error("`{path}` does not exist")]
    NotFound { path: QualifiedPath },
    #[error("`{path}` is not a C/C++ file")]
    NotCpp { path: QualifiedPath },
    #[error("no CMake configuration has a compilation database yet; run cmake_configure")]
    NoContexts,
    #[error(
        "the project has no CMakeLists.txt, so the CMake tools do not apply; a compile_commands.json at the project \
         root (bear -- make writes one) or --compile-commands DIR gives the quality tools the configuration external"
    )]
    NoCmake,
    #[error("unknown configuration `{id}`; available: {available}")]
    UnknownConfiguration { id: String, available: String },
    #[error("`{path}` has no compile command in configuration {configurations}")]
    NoCompileCommand { path: QualifiedPath, configurations: String },
    #[error(
        "`{path}` is a header that no translation unit of configuration {configurations} includes by name; clang-tidy \
         checks a header only within a translation unit"
    )]
    HeaderNotIncluded { path: QualifiedPath, configurations: String },
    #[error("toolset `{toolset}` has no {tool}")]
    MissingTool { toolset: String, tool: &'static str },
    #[error(transparent)]
    Toolchain(#[from] crate::toolchain::Error),
    #[error("failed to read the compilation database `{path}`: {reason}")]
    Database { path: QualifiedPath, reason: String },
    #[error(transparent)]
    Workspace(#[from] crate::workspace::Error),
    #[error("the run was cancelled")]
    Cancelled,
}

impl Error {
    /// Whether the error is about the `path` argument.
    pub fn is_about_path(&self) -> bool {
        matches!(self, Error::External { .. } | Error::NotFound { .. } | Error::NotCpp { .. })
    }
}

/// One file changed through the workspace, with its diff.
#[derive(Debug)]
pub struct Changed {
    pub path: QualifiedPath,
    /// Replacements applied.
    pub replacements: usize,
    pub diff: FileDiff,
}

/// The quality service. Cheap to share behind an `Arc`.
pub struct QualityService {
    workspace: Arc<WorkspaceService>,
    processes: ProcessService,
    toolchain: Arc<ToolchainService>,
    contexts: watch::Receiver<Contexts>,
    /// Numbers the export files of concurrent clang-tidy runs.
    next_export: AtomicU64,
}

impl QualityService {
    pub fn new(
        workspace: Arc<WorkspaceService>,
        processes: ProcessService,
        toolchain: Arc<ToolchainService>,
        contexts: watch::Receiver<Contexts>,
    ) -> QualityService {
        QualityService { workspace, processes, toolchain, contexts, next_export: AtomicU64::new(1) }
    }

    /// The contexts `ids` names (all of them when empty), in the order of the published set.
    fn select(&self, ids: &[String]) -> Result<Vec<CompilationContext>, Error> {
        // Only configurations whose database is on disk (the external one may not exist yet).
        let roots = self.workspace.roots();
        let on_disk = |context: &&CompilationContext| {
            roots.lexical(&context.compilation_database).is_some_and(|database| database.is_file())
        };
        let contexts: Vec<CompilationContext> = self.contexts.borrow().iter().filter(on_disk).cloned().collect();
        if contexts.is_empty() && !roots.project().join("CMakeLists.txt").is_file() {
            return Err(Error::NoCmake);
        }
        if contexts.is_empty() {
            return Err(Error::NoContexts);
        }
        if let Some(id) = ids.iter().find(|id| !contexts.iter().any(|context| context.id == **id)) {
            let available = contexts.iter().map(|context| context.id.as_str()).collect::<Vec<_>>().join(", ");
            return Err(Error::UnknownConfiguration { id: id.clone(), available });
        }
        Ok(contexts.iter().filter(|context| ids.is_empty() || ids.contains(&context.id)).cloned().collect())
    }

    /// What the compilation databases of the published contexts on disk say (unreadable ones are
    /// left out: they count as no knowledge).
    async fn databases(&self) -> Vec<Database> {
        let roots = self.workspace.roots();
        let paths: Vec<PathBuf> =
            self.contexts.borrow().iter().filter_map(|context| roots.lexical(&context.compilation_database)).collect();
        let mut res = Vec::new();
        for path in paths {
            if let Ok(bytes) = tokio::fs::read(&path).await
                && let Ok(database) = Database::parse(&bytes)
            {
                res.push(database);
            }
        }
        res
    }

    /// The absolute location of a managed path that exists, and whether it is a directory.
    fn locate(&self, path: &QualifiedPath) -> Result<(PathBuf, bool), Error> {
        if !path.is_managed() {
            return Err(Error::External { path: path.clone() });
        }
        let abs = self.workspace.roots().lexical(path).ok_or_else(|| Error::External { path: path.clone() })?;
        let meta = std::fs::metadata(&abs).map_err(|_| Error::NotFound { path: path.clone() })?;
        Ok((abs, meta.is_dir()))
    }

    /// Replaces the whole of `before` in `path` with `after` through the workspace, so the edit is
    /// refused when the file no longer holds exactly `before`. Runs on a blocking thread.
    async fn replace_whole(
        &self,
        path: QualifiedPath,
        before: String,
        after: String,
        call: &Call,
    ) -> Result<FileDiff, crate::workspace::Error> {
        let workspace = self.workspace.clone();
        // The per-file progress of the edit would interleave with the run's own.
        let quiet = call.quiet();
        let edit = tokio::task::spawn_blocking(move || workspace.edit_file(&path, &before, &after, false, &quiet))
            .await
            .map_err(|_| crate::workspace::Error::Cancelled)??;
        Ok(edit.diff)
    }
}

/// Why `path` (at `abs`) counts as C/C++: `cpp_file::classify` with what `databases` say (listed
/// first, then in an include directory), or `None`.
pub fn cpp_evidence(path: &QualifiedPath, abs: &Path, databases: &[Database]) -> Option<Evidence> {
    crate::cpp_file::classify(path, Some(abs), |abs| {
        let said = databases.iter().filter_map(|database| database.evidence(abs));
        said.min_by_key(|evidence| *evidence != Evidence::CompilationDatabase)
    })
}

/// How many runs a tree run keeps going at once: one per core.
pub fn parallelism() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

/// Runs `run` on `items` with at most [`parallelism`] in flight. Before each item starts, `start`
/// decides whether it may (a result budget may stop the rest); every finished one goes to `done`
/// with the number finished so far. Returns how many items were never started. A cancelled call
/// stops at once: the runs in flight are dropped, which stops their processes.
async fn run_parallel<I, O, Fut>(
    items: Vec<I>,
    call: &Call,
    mut start: impl FnMut(&I) -> bool,
    run: impl Fn(I) -> Fut,
    mut done: impl FnMut(O, usize),
) -> Result<usize, Error>
where
    Fut: Future<Output = O>,
{
    let limit = parallelism();
    let mut pending = items.into_iter();
    let mut in_flight = FuturesUnordered::new();
    let (mut n_done, mut n_skipped, mut stopped) = (0, 0, false);
    loop {
        while !stopped && in_flight.len() < limit {
            let Some(item) = pending.next() else { break };
            if start(&item) {
                in_flight.push(run(item));
            } else {
                stopped = true;
                n_skipped = 1;
            }
        }
        if in_flight.is_empty() {
            break;
        }
        tokio::select! {
            biased;
            () = call.cancel.cancelled() => return Err(Error::Cancelled),
            Some(output) = in_flight.next() => {
                n_done += 1;
                done(output, n_done);
            }
        }
    }
    if call.is_cancelled() {
        return Err(Error::Cancelled);
    }
    Ok(n_skipped + pending.len())
}

/// Numbers an export file name unique within this server.
fn export_name(counter: &AtomicU64) -> String {
    format!("tidy-{}-{}.yaml", std::process::id(), counter.fetch_add(1, Ordering::Relaxed))
}

/// The text of a process's stdout, rebuilt from its lines (for outputs whose lines carry no CR and
/// never exceed the line limit, such as clang-format's XML).
#[derive(Default)]
struct StdoutLines {
    text: parking_lot::Mutex<String>,
}

impl StdoutLines {
    fn callback(self: &Arc<Self>) -> crate::process::LineCallback {
        let sink = self.clone();
        Arc::new(move |stream, line| {
            if stream == crate::process::Stream::Stdout {
                let mut text = sink.text.lock();
                text.push_str(line);
                text.push('\n');
            }
        })
    }

    fn take(&self) -> String {
        std::mem::take(&mut self.text.lock())
    }
}

/// `error` of a run that did not succeed: the exit code, or how it ended.
fn run_error(tool: &str, completed: &crate::process::Completed) -> String {
    use crate::process::Status;
    match completed.status {
        Status::Exited(code) => format!("{tool} exited with code {code}"),
        Status::Interrupted => format!("{tool} timed out after {} s", RUN_TIMEOUT.as_secs()),
        Status::Stopped | Status::Running => format!("{tool} was stopped"),
        Status::StreamFailure => format!("{tool}'s output could not be read"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn parallel_runs_stop_at_the_budget_and_count_the_rest() {
        let call = Call::detached();
        let mut seen = Vec::new();
        let mut started = 0;
        let not_started = run_parallel(
            (0..10).collect(),
            &call,
            |_| {
                started += 1;
                started <= 3
            },
            |item: u32| async move { item * 2 },
            |output, n_done| seen.push((output, n_done)),
        )
        .await
        .unwrap();
        seen.sort_unstable();
        assert_eq!(seen.iter().map(|(output, _)| *output).collect::<Vec<_>>(), [0, 2, 4]);
        assert_eq!(not_started, 7);
    }

    #[tokio::test]
    async fn a_cancelled_call_stops_parallel_runs() {
        let call = Call::detached();
        call.cancel.cancel();
        let res = run_parallel(vec![1], &call, |_| true, |_: u32| std::future::pending::<()>(), |(), _| {}).await;
        assert!(matches!(res, Err(Error::Cancelled)));
    }
}

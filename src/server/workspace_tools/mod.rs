//! Workspace tools and resources: argument and result types (the wire shapes) and their
//! registration, one submodule per tool family; `register` is the one entry point.
//!
//! Architecture invariant: tool bodies parse arguments into qualified paths, run the synchronous
//! service operation on a blocking thread (file info runs in place while the workspace lock is
//! free: one path check and one stat cost less than the thread hop), and render text with
//! `render`; no file logic lives here.
//! Architecture invariant: a Markdown resource runs the same service operation as its tool, with
//! the same progress reporting and the same operation lock.

mod find;
mod info;
mod list;
mod params;
mod read;
mod results;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Serialize;

use futures_util::FutureExt as _;

use crate::call::Call;
use crate::server::registry::{Registry, ToolError, error_chain};
use crate::server::resources::{Completer, ReadError, Resources};
use crate::workspace::path::{LinkPolicy, QualifiedPath, ResolveError};
use crate::workspace::provider::ProviderRequest;
use crate::workspace::results::DocumentLink;
use crate::workspace::{Error, WorkspaceService};

/// A link to an immutable result resource, keyed by provider name in `resources`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ResourceLink {
    pub uri: String,
    pub mime_type: String,
}

/// Provider name → link; `{}` when nothing was contributed.
pub type ResourceLinks = BTreeMap<String, ResourceLink>;

pub fn links(stored: BTreeMap<String, DocumentLink>) -> ResourceLinks {
    stored.into_iter().map(|(name, l)| (name, ResourceLink { uri: l.uri, mime_type: l.mime_type.to_owned() })).collect()
}

/// What the providers contributed to one file operation.
#[derive(Debug, Default)]
pub struct ProviderResults {
    pub links: ResourceLinks,
    /// Notes for the result text, in registration order.
    pub notes: Vec<String>,
    /// Typed summaries by provider name.
    pub summaries: BTreeMap<String, serde_json::Value>,
}

impl ProviderResults {
    /// `text` followed by the notes, each after a blank line.
    pub fn with_notes(&self, mut text: String) -> String {
        for note in &self.notes {
            text.push_str("\n\n");
            text.push_str(note);
        }
        text
    }
}

/// Runs every registered result provider for one file operation and stores their documents under
/// one result id. A provider that fails or panics never fails the call: it is logged, and the
/// result's text says which analysis is missing and why.
pub async fn provider_links(workspace: &WorkspaceService, request: ProviderRequest, call: &Call) -> ProviderResults {
    let providers = workspace.providers();
    let mut res = ProviderResults::default();
    if providers.is_empty() {
        return res;
    }
    let runs = providers.iter().map(|provider| {
        let started =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| provider.provide(request.clone(), call.clone())));
        async move {
            let outcome = match started {
                Ok(run) => std::panic::AssertUnwindSafe(run).catch_unwind().await,
                Err(panic) => Err(panic),
            };
            (provider.name(), outcome)
        }
    });
    let mut documents = Vec::new();
    for (name, outcome) in futures_util::future::join_all(runs).await {
        match outcome {
            Ok(Ok(provided)) => {
                documents.extend(provided.document);
                res.notes.extend(provided.note);
                if let Some(summary) = provided.summary {
                    res.summaries.insert(name.to_owned(), summary);
                }
            }
            Ok(Err(err)) => {
                tracing::warn!(provider = name, path = %request.path, "result provider failed: {err}");
                res.notes.push(format!("{name}: {} was not analysed: {err}", request.path));
            }
            Err(_) => {
                tracing::warn!(provider = name, path = %request.path, "result provider panicked");
                res.notes.push(format!("{name}: {} was not analysed: the analysis failed unexpectedly", request.path));
            }
        }
    }
    res.links = links(workspace.results().store(documents));
    res
}

pub fn register(registry: &mut Registry, resources: &mut Resources, workspace: &Arc<WorkspaceService>) {
    // Templates are listed (and tried) in this order: mirrors, Markdown views, result documents.
    read::register(registry, resources, workspace);
    list::register(registry, resources, workspace);
    find::register(registry, resources, workspace);
    info::register(registry, resources, workspace);
    results::register(resources, workspace.results());
}

/// Runs a synchronous workspace operation on a blocking thread.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, Error> + Send + 'static,
) -> Result<T, ToolError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(ToolError::user(&err)),
        Err(join) => Err(ToolError::User(format!("The workspace operation failed: {join}."))),
    }
}

/// Runs a synchronous resource read on a blocking thread.
pub async fn blocking_read<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ReadError> + Send + 'static,
) -> Result<T, ReadError> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|join| Err(ReadError::InvalidParams(join.to_string())))
}

/// Names the argument in a path error.
pub fn path_argument(workspace: &WorkspaceService, argument: &str, input: &str) -> Result<QualifiedPath, ToolError> {
    workspace
        .parse(input)
        .map_err(|err| ToolError::User(format!("Invalid argument `{argument}`: {}", error_chain(&err))))
}

/// Maps a workspace error to a resource read error: missing things are "not found", bad input is
/// "invalid parameters".
pub fn read_error(err: Error) -> ReadError {
    let message = error_chain(&err);
    if is_not_found(&err) { ReadError::NotFound(message) } else { ReadError::InvalidParams(message) }
}

/// Like `read_error`, for templates whose query parameters select what to read: an unusable value
/// is an invalid `parameter`; a path that names nothing is "not found".
pub fn parameter_error(parameter: &str, err: Error) -> ReadError {
    if is_not_found(&err) {
        return ReadError::NotFound(err.to_string());
    }
    let parameter = match err {
        Error::EmptyPattern | Error::InvalidPattern { .. } => "pattern",
        _ => parameter,
    };
    ReadError::InvalidParams(format!("invalid parameter `{parameter}`: {err}"))
}

fn is_not_found(err: &Error) -> bool {
    matches!(
        err,
        Error::ExternalNotAllowed { .. }
            | Error::Resolve(ResolveError::NotFound { .. })
            | Error::Resolve(ResolveError::External { .. })
    )
}

/// RFC 3339 UTC with `Z`, keeping sub-second precision (INTERFACE.md §1.2).
pub fn datetime(at: &DateTime<Utc>) -> String {
    crate::render::workspace::iso_timestamp(at)
}

/// Completes qualified paths: the two roots first, then the children of the typed parent
/// directory (directories with a trailing `/`; files only when `files` is set; links skipped).
pub fn path_completer(workspace: &Arc<WorkspaceService>, files: bool) -> Completer {
    let ws = workspace.clone();
    Arc::new(move |argument: &str, value: &str, _context: &HashMap<String, String>| {
        if argument != "path" {
            return Vec::new();
        }
        complete_path(&ws, value, files)
    })
}

pub fn complete_path(workspace: &WorkspaceService, value: &str, files: bool) -> Vec<String> {
    let Some((parent, _)) = value.rsplit_once('/') else {
        return vec!["project/".to_owned(), "storage/".to_owned()];
    };
    let Ok(dir) = QualifiedPath::parse(&format!("{parent}/")) else { return Vec::new() };
    if !dir.is_managed() {
        return Vec::new();
    }
    let Ok(resolved) = workspace.roots().resolve_existing(&dir, LinkPolicy::Refuse) else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(&resolved.abs) else { return Vec::new() };
    let mut res = Vec::new();
    for entry in entries.flatten() {
        let Ok(meta) = entry.path().symlink_metadata() else { continue };
        if crate::workspace::path::is_link(&meta) {
            continue;
        }
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
        let Some(child) = dir.join_name(&name) else { continue };
        if meta.is_dir() {
            res.push(format!("{child}/"));
        } else if files && meta.is_file() {
            res.push(child.to_string());
        }
    }
    res.sort();
    res
}

//! Workspace tools and resources: argument and result types (the wire shapes) and their
//! registration.
//!
//! Architecture invariant: tool bodies parse arguments into qualified paths, run the synchronous
//! service operation on a blocking thread, and render text with `render`; no file logic lives here.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use base64::Engine;
use rmcp::model::ResourceContents;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::call::{Call, Question};
use crate::render;
use crate::server::registry::{Annotations, Registry, ToolError, ToolOutput, ToolSpec, error_chain};
use crate::server::resources::{Completer, ReadError, ReadResult, ResourceSpec, Resources};
use crate::server::uri_template::Variables;
use crate::widgets::{Icon, Widget};
use crate::workspace::path::{Area, LinkPolicy, QualifiedPath};
use crate::workspace::results::{DocumentKind, DocumentLink, ResultStore};
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

/// Names the argument in a path error.
pub fn path_argument(workspace: &WorkspaceService, argument: &str, input: &str) -> Result<QualifiedPath, ToolError> {
    workspace
        .parse(input)
        .map_err(|err| ToolError::User(format!("Invalid argument `{argument}`: {}", error_chain(&err))))
}

fn default_start_line() -> u64 {
    1
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceReadFileArgs {
    /// File to read: `project/…` or `storage/…` (or the shorthands `src/x`, `./src/x`); `root/<absolute path>`
    /// reads an external file after the user confirms.
    pub path: String,
    /// First line to return, 1-based.
    #[serde(default = "default_start_line")]
    #[schemars(range(min = 1))]
    pub start_line: u64,
    /// Last line to return, inclusive; omit or null to read to the end of the file.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub end_line: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkspaceReadFileResult {
    /// The file, as a canonical qualified path.
    pub path: String,
    /// The selected lines with their original line endings; empty when the range is beyond the end.
    pub text: String,
    /// The first line requested (1-based).
    pub start_line: u64,
    /// Result resources contributed by providers, by provider name.
    pub resources: ResourceLinks,
}

pub fn register(registry: &mut Registry, resources: &mut Resources, workspace: &Arc<WorkspaceService>) {
    register_read_file(registry, workspace);
    register_mirrors(resources, workspace);
    register_results(resources, workspace.results());
}

fn register_read_file(registry: &mut Registry, workspace: &Arc<WorkspaceService>) {
    let ws = workspace.clone();
    registry.add(
        ToolSpec {
            name: "workspace_read_file",
            title: "Read file",
            description: "Read a UTF-8 text file, whole or a 1-based inclusive line range, with its original line \
                          endings. `root/<absolute path>` reads a file outside the workspace after the user confirms.",
            annotations: Annotations::FsRead,
            widget: Widget::WorkspaceFile,
            icon: Icon::WorkspaceFile,
        },
        move |args: WorkspaceReadFileArgs, call: Call| {
            let ws = ws.clone();
            async move {
                let path = path_argument(&ws, "path", &args.path)?;
                if args.start_line < 1 {
                    return Err(ToolError::User("Invalid argument `start_line`: it must be at least 1.".into()));
                }
                if let Some(end) = args.end_line
                    && end < args.start_line
                {
                    return Err(ToolError::User(format!(
                        "Invalid argument `end_line`: {end} is before `start_line` {}.",
                        args.start_line
                    )));
                }
                let external = path.area() == Area::Root;
                if external {
                    confirm_external_read(&call, &path).await?;
                }
                let (start, end) = (args.start_line, args.end_line);
                let excerpt = blocking(move || {
                    if external {
                        ws.read_external_file(&path, start, end, &call)
                    } else {
                        ws.read_file(&path, start, end, &call)
                    }
                })
                .await?;
                let text = render::excerpt::numbered(excerpt.numbered_lines(), "No lines in the selected range.");
                let value = WorkspaceReadFileResult {
                    path: excerpt.path.to_string(),
                    text: excerpt.text,
                    start_line: excerpt.start_line,
                    resources: ResourceLinks::new(),
                };
                Ok(ToolOutput::new(text, value))
            }
        },
    );
}

/// Asks the user before an external read; every such read asks again.
async fn confirm_external_read(call: &Call, path: &QualifiedPath) -> Result<(), ToolError> {
    let shown = path.external_path().map(|p| p.display().to_string()).unwrap_or_else(|| path.to_string());
    let question = Question {
        key: "confirm_external_read".into(),
        message: format!("Allow ForgeMCP to read the external file {shown}?"),
        allow_label: "Allow reading this file outside the workspace".into(),
    };
    match call.confirm(&question).await {
        Ok(true) => Ok(()),
        Ok(false) => Err(ToolError::User(format!(
            "Reading the external file `{path}` was not permitted: the user declined, or the client cannot ask."
        ))),
        Err(crate::call::AskError::InputRequired(question)) => Err(ToolError::InputRequired(question)),
        Err(err) => Err(ToolError::User(format!("Reading the external file `{path}` was not permitted: {err}."))),
    }
}

/// Maps a workspace error to a resource read error: missing things are "not found", bad input is
/// "invalid parameters".
pub fn read_error(err: Error) -> ReadError {
    let message = error_chain(&err);
    match err {
        Error::InvalidPath { .. } => ReadError::InvalidParams(message),
        Error::ExternalNotAllowed { .. } | Error::Resolve(crate::workspace::path::ResolveError::NotFound { .. }) => {
            ReadError::NotFound(message)
        }
        Error::Resolve(crate::workspace::path::ResolveError::External { .. }) => ReadError::NotFound(message),
        _ => ReadError::InvalidParams(message),
    }
}

/// Parses the `path` variable of a mirror URI; `root/…` is "not found" there.
fn mirror_path(workspace: &WorkspaceService, vars: &Variables) -> Result<QualifiedPath, ReadError> {
    let raw = vars.get("path").unwrap_or_default();
    // Mirrors take the qualified form only; shorthands and `root/` name nothing here.
    if !(raw.starts_with("project/") || raw.starts_with("storage/")) {
        return Err(ReadError::NotFound(format!("no workspace file `{raw}`; use project/… or storage/…")));
    }
    workspace.parse(raw).map_err(read_error)
}

async fn blocking_read<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ReadError> + Send + 'static,
) -> Result<T, ReadError> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|join| Err(ReadError::InvalidParams(join.to_string())))
}

fn register_mirrors(resources: &mut Resources, workspace: &Arc<WorkspaceService>) {
    let ws = workspace.clone();
    resources.add_template(
        ResourceSpec {
            uri: "forgemcp://workspace/file{/path*}",
            name: "workspace-file",
            title: "Workspace text file",
            description: "The complete UTF-8 text of a managed file, e.g. forgemcp://workspace/file/project/src/main.cpp.",
            mime_type: "text/plain",
            icon: Icon::WorkspaceFile,
        },
        move |uri: String, vars: Variables, call: Call| {
            let ws = ws.clone();
            async move {
                let path = mirror_path(&ws, &vars)?;
                let excerpt = blocking_read(move || ws.read_file(&path, 1, None, &call).map_err(read_error)).await?;
                Ok(vec![ResourceContents::text(excerpt.text, uri).with_mime_type("text/plain")])
            }
        },
        Some(path_completer(workspace, true)),
    );
    let ws = workspace.clone();
    resources.add_template(
        ResourceSpec {
            uri: "forgemcp://workspace/raw{/path*}",
            name: "workspace-raw",
            title: "Workspace raw file",
            description: "The exact bytes of a managed file as a binary resource, e.g. forgemcp://workspace/raw/storage/build/app.",
            mime_type: "application/octet-stream",
            icon: Icon::WorkspaceFile,
        },
        move |uri: String, vars: Variables, _call: Call| {
            let ws = ws.clone();
            async move {
                let path = mirror_path(&ws, &vars)?;
                let bytes = blocking_read(move || ws.read_bytes(&path).map_err(read_error)).await?;
                let blob = base64::engine::general_purpose::STANDARD.encode(bytes);
                Ok(vec![ResourceContents::blob(blob, uri).with_mime_type("application/octet-stream")])
            }
        },
        Some(path_completer(workspace, true)),
    );
}

fn register_results(resources: &mut Resources, store: &Arc<ResultStore>) {
    for kind in [DocumentKind::Json, DocumentKind::Markdown] {
        let (uri, name, title) = match kind {
            DocumentKind::Json => (
                "forgemcp://workspace/results/{result_id}/{name}.json",
                "workspace-result-json",
                "Result document (JSON)",
            ),
            DocumentKind::Markdown => (
                "forgemcp://workspace/results/{result_id}/{name}.md",
                "workspace-result-markdown",
                "Result document (Markdown)",
            ),
        };
        let reader_store = store.clone();
        let completer_store = store.clone();
        let completer: Completer =
            Arc::new(move |argument: &str, _value: &str, context: &HashMap<String, String>| match argument {
                "result_id" => completer_store.ids().into_iter().rev().collect(),
                "name" => context.get("result_id").map(|id| completer_store.names(id, kind)).unwrap_or_default(),
                _ => Vec::new(),
            });
        resources.add_template(
            ResourceSpec {
                uri,
                name,
                title,
                description: "An immutable document a provider attached to one tool result; kept in memory until the server stops.",
                mime_type: kind.mime_type(),
                icon: Icon::Workspace,
            },
            move |uri: String, vars: Variables, _call: Call| {
                let store = reader_store.clone();
                async move { read_result(&store, kind, &uri, &vars) }
            },
            Some(completer),
        );
    }
}

fn read_result(store: &ResultStore, kind: DocumentKind, uri: &str, vars: &Variables) -> ReadResult {
    let id = vars.get("result_id").unwrap_or_default();
    let name = vars.get("name").unwrap_or_default();
    let doc = store
        .get(id, name, kind)
        .ok_or_else(|| ReadError::NotFound(format!("result `{id}/{name}` is not retained")))?;
    Ok(vec![ResourceContents::text(doc.body.to_string(), uri).with_mime_type(kind.mime_type())])
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

fn complete_path(workspace: &WorkspaceService, value: &str, files: bool) -> Vec<String> {
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

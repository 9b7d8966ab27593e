//! The workspace mutation tools: `workspace_write_file`, `workspace_edit_file`, `workspace_move`,
//! `workspace_delete` and `workspace_mkdir`, with their argument and result types (the wire shapes)
//! and the `diff.json` result document.
//!
//! Architecture invariant: tool bodies only parse arguments into qualified paths, let the result
//! providers prepare (writes and edits), run the synchronous service operation on a blocking
//! thread, store the diff document and render text; every file rule lives in `workspace/`.
//! Architecture invariant: the primary write/edit result carries no diff data, only the
//! `resources.diff` link; a failure to store the diff omits the link and never fails the operation.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::call::Call;
use crate::render;
use crate::server::registry::{Annotations, Registry, ToolOutput, ToolSpec};
use crate::server::workspace_tools::{ResourceLinks, blocking, links, path_argument, provider_links};
use crate::widgets::{Icon, Widget};
use crate::workspace::WorkspaceService;
use crate::workspace::diff::{ChangeKind, FileDiff, LineKind};
use crate::workspace::mutate::{PathAction, PathOperation};
use crate::workspace::path_notes::PathChange;
use crate::workspace::provider::{FileOperation, LineWindow, PrepareGuard, ProviderRequest};
use crate::workspace::results::Document;
use crate::workspace::write::WriteAction;

/// The provider whose summary the write and edit results carry as `clangd`.
const CLANGD: &str = crate::clangd::PROVIDER_NAME;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceWriteFileArgs {
    /// File; its parent directory must exist.
    pub path: String,
    /// The complete new content. Over a file with CRLF endings or a UTF-8 byte-order mark, LF text
    /// takes the file's endings and mark unless `exact`.
    pub text: String,
    /// Write `text` byte for byte, even over a file with other line endings or a byte-order mark.
    #[serde(default)]
    pub exact: bool,
}

/// Whether the file was new.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WriteActionResult {
    Created,
    Overwritten,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkspaceWriteFileResult {
    /// The file, as a canonical qualified path.
    pub path: String,
    pub action: WriteActionResult,
    /// Lines of the previous content; 0 when the file was created.
    pub lines_removed: u64,
    /// Lines of the new content.
    pub lines_added: u64,
    /// `diff` links the typed diff (`diff.json`).
    pub resources: ResourceLinks,
    /// What the write did to clangd's analysis (C/C++ files and CMake inputs).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<crate::clangd::model::MutationAnalysis>")]
    pub clangd: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceEditFileArgs {
    /// Existing UTF-8 file.
    pub path: String,
    /// Exact text to replace (non-empty).
    pub old_text: String,
    /// Replacement text.
    pub new_text: String,
    /// Replace every occurrence.
    #[serde(default)]
    pub replace_all: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkspaceEditFileResult {
    /// The file, as a canonical qualified path.
    pub path: String,
    /// Occurrences replaced (non-overlapping).
    pub replacements: u64,
    /// `diff` links the typed diff (`diff.json`).
    pub resources: ResourceLinks,
    /// What the edit did to clangd's analysis (C/C++ files and CMake inputs).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<crate::clangd::model::MutationAnalysis>")]
    pub clangd: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceMoveArgs {
    /// Existing file or directory.
    pub source: String,
    /// New path in the same root.
    pub destination: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceDeleteArgs {
    /// File or directory.
    pub path: String,
    /// Needed to delete a non-empty directory.
    #[serde(default)]
    pub recursive: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceMkdirArgs {
    /// Directory: `project/…` or `storage/…`.
    pub path: String,
}

/// What happened to the path.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PathActionResult {
    Moved,
    Deleted,
    Created,
    AlreadyExists,
}

/// The result of `workspace_move`, `workspace_delete` and `workspace_mkdir`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PathOperationResult {
    /// The resulting path (a move's destination), canonical.
    pub path: String,
    pub action: PathActionResult,
    /// A move's source; null otherwise.
    pub source: Option<String>,
    /// Result resources contributed by providers, by provider name.
    pub resources: ResourceLinks,
}

impl From<&PathOperation> for PathOperationResult {
    fn from(op: &PathOperation) -> PathOperationResult {
        PathOperationResult {
            path: op.path.to_string(),
            action: match op.action {
                PathAction::Moved => PathActionResult::Moved,
                PathAction::Deleted => PathActionResult::Deleted,
                PathAction::Created => PathActionResult::Created,
                PathAction::AlreadyExists => PathActionResult::AlreadyExists,
            },
            source: op.source.as_ref().map(ToString::to_string),
            resources: ResourceLinks::new(),
        }
    }
}

/// `diff.json` (INTERFACE.md §8.3).
#[derive(Debug, Serialize)]
struct DiffDocument {
    path: String,
    changes: Vec<DiffChangeOut>,
    hunks: Vec<DiffHunkOut>,
}

#[derive(Debug, Serialize)]
struct DiffChangeOut {
    kind: &'static str,
    before_start: u64,
    before_count: u64,
    after_start: u64,
    after_count: u64,
}

#[derive(Debug, Serialize)]
struct DiffHunkOut {
    before_start: u64,
    before_count: u64,
    after_start: u64,
    after_count: u64,
    lines: Vec<DiffLineOut>,
}

#[derive(Debug, Serialize)]
struct DiffLineOut {
    kind: &'static str,
    before_line: Option<u64>,
    after_line: Option<u64>,
    text: String,
    spans: Vec<[usize; 2]>,
}

impl From<FileDiff> for DiffDocument {
    fn from(diff: FileDiff) -> DiffDocument {
        DiffDocument {
            path: diff.path.to_string(),
            changes: diff
                .changes
                .into_iter()
                .map(|c| DiffChangeOut {
                    kind: match c.kind {
                        ChangeKind::Replace => "replace",
                        ChangeKind::Insert => "insert",
                        ChangeKind::Delete => "delete",
                    },
                    before_start: c.before_start,
                    before_count: c.before_count,
                    after_start: c.after_start,
                    after_count: c.after_count,
                })
                .collect(),
            hunks: diff
                .hunks
                .into_iter()
                .map(|h| DiffHunkOut {
                    before_start: h.before_start,
                    before_count: h.before_count,
                    after_start: h.after_start,
                    after_count: h.after_count,
                    lines: h
                        .lines
                        .into_iter()
                        .map(|l| DiffLineOut {
                            kind: match l.kind {
                                LineKind::Context => "context",
                                LineKind::Added => "added",
                                LineKind::Removed => "removed",
                            },
                            before_line: l.before_line,
                            after_line: l.after_line,
                            text: l.text,
                            spans: l.spans,
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

/// Stores `diff` as the `diff` result document and returns the links; on failure the link is
/// omitted with a warning (a provider never fails the file operation).
pub(crate) fn store_diff(ws: &WorkspaceService, diff: FileDiff) -> ResourceLinks {
    store_diff_with(ws, diff, Vec::new())
}

/// [`store_diff`] with more documents of the same result (`quality_format`'s unified diff).
pub(crate) fn store_diff_with(ws: &WorkspaceService, diff: FileDiff, mut more: Vec<Document>) -> ResourceLinks {
    match serde_json::to_value(DiffDocument::from(diff)) {
        Ok(value) => {
            more.insert(0, Document::json("diff", &value));
            links(ws.results().store(more))
        }
        Err(err) => {
            tracing::warn!(%err, "the diff document could not be built");
            ResourceLinks::new()
        }
    }
}

pub fn register(registry: &mut Registry, workspace: &Arc<WorkspaceService>) {
    register_write_file(registry, workspace);
    register_edit_file(registry, workspace);
    register_move(registry, workspace);
    register_delete(registry, workspace);
    register_mkdir(registry, workspace);
}

fn register_write_file(registry: &mut Registry, workspace: &Arc<WorkspaceService>) {
    let ws = workspace.clone();
    registry.add(
        ToolSpec {
            name: "workspace_write_file",
            title: "Write file",
            description: "Create or overwrite a UTF-8 text file atomically, keeping its permissions; the parent \
                          directory must exist.",
            annotations: Annotations::FsWrite,
            widget: Widget::WorkspaceResult,
            icon: Icon::WorkspaceEdit,
        },
        move |args: WorkspaceWriteFileArgs, call: Call| {
            let ws = ws.clone();
            async move {
                let path = path_argument(&ws, "path", &args.path)?;
                let _prepared = prepare_providers(&ws, &path);
                let (ws_for_providers, provider_call) = (ws.clone(), call.clone());
                let (write, mut resources) = blocking(move || {
                    let mut write = ws.write_file(&path, &args.text, args.exact, &call)?;
                    let diff = std::mem::replace(&mut write.diff, empty_diff(&write.path));
                    let resources = store_diff(&ws, diff);
                    Ok((write, resources))
                })
                .await?;
                let request = ProviderRequest {
                    path: write.path.clone(),
                    operation: FileOperation::Write,
                    lines: LineWindow::Whole,
                    before: write.before.clone(),
                };
                let provided = provider_links(&ws_for_providers, request, &provider_call).await;
                resources.extend(provided.links.clone());
                let value = WorkspaceWriteFileResult {
                    path: write.path.to_string(),
                    action: match write.action {
                        WriteAction::Created => WriteActionResult::Created,
                        WriteAction::Overwritten => WriteActionResult::Overwritten,
                    },
                    lines_removed: write.lines_removed,
                    lines_added: write.lines_added,
                    resources,
                    clangd: provided.summaries.get(CLANGD).cloned(),
                };
                let mut text = provided.with_notes(render::mutation::file_written(&write));
                if write.action == WriteAction::Created {
                    with_path_notes(&mut text, &ws_for_providers, PathChange::Created(&write.path));
                }
                Ok(ToolOutput::new(text, value))
            }
        },
    );
}

/// Appends what the path-note services say about `change` (files no target compiles), one line
/// each.
pub fn with_path_notes(text: &mut String, ws: &WorkspaceService, change: PathChange<'_>) {
    for note in ws.path_notes(change) {
        text.push('\n');
        text.push_str(&note);
    }
}

/// Lets every provider start on the current content of `path` before it is written; the guards
/// live until the handler returns.
fn prepare_providers(ws: &WorkspaceService, path: &crate::workspace::path::QualifiedPath) -> Vec<PrepareGuard> {
    ws.providers().iter().filter_map(|provider| provider.prepare(path)).collect()
}

fn empty_diff(path: &crate::workspace::path::QualifiedPath) -> FileDiff {
    FileDiff { path: path.clone(), changes: Vec::new(), hunks: Vec::new() }
}

fn register_edit_file(registry: &mut Registry, workspace: &Arc<WorkspaceService>) {
    let ws = workspace.clone();
    registry.add(
        ToolSpec {
            name: "workspace_edit_file",
            title: "Edit file",
            description: "Replace exact text in a UTF-8 file; without `replace_all` it must occur exactly once. \
                          Everything else is kept byte for byte.",
            annotations: Annotations::FsWrite,
            widget: Widget::WorkspaceResult,
            icon: Icon::WorkspaceEdit,
        },
        move |args: WorkspaceEditFileArgs, call: Call| {
            let ws = ws.clone();
            async move {
                let path = path_argument(&ws, "path", &args.path)?;
                let _prepared = prepare_providers(&ws, &path);
                let (ws_for_providers, provider_call) = (ws.clone(), call.clone());
                let (edit, mut resources) = blocking(move || {
                    let mut edit = ws.edit_file(&path, &args.old_text, &args.new_text, args.replace_all, &call)?;
                    let diff = std::mem::replace(&mut edit.diff, empty_diff(&edit.path));
                    let resources = store_diff(&ws, diff);
                    Ok((edit, resources))
                })
                .await?;
                let request = ProviderRequest {
                    path: edit.path.clone(),
                    operation: FileOperation::Edit,
                    lines: LineWindow::Whole,
                    before: Some(edit.before.clone()),
                };
                let provided = provider_links(&ws_for_providers, request, &provider_call).await;
                resources.extend(provided.links.clone());
                let value = WorkspaceEditFileResult {
                    path: edit.path.to_string(),
                    replacements: edit.replacements,
                    resources,
                    clangd: provided.summaries.get(CLANGD).cloned(),
                };
                Ok(ToolOutput::new(provided.with_notes(render::mutation::file_edited(&edit)), value))
            }
        },
    );
}

fn register_move(registry: &mut Registry, workspace: &Arc<WorkspaceService>) {
    let ws = workspace.clone();
    registry.add(
        ToolSpec {
            name: "workspace_move",
            title: "Move",
            description: "Move a file or directory within its root; the destination must not exist, its parent \
                          must. Links are never moved.",
            annotations: Annotations::FsWrite,
            widget: Widget::WorkspaceResult,
            icon: Icon::WorkspaceEdit,
        },
        move |args: WorkspaceMoveArgs, call: Call| {
            let ws = ws.clone();
            async move {
                let source = path_argument(&ws, "source", &args.source)?;
                let destination = path_argument(&ws, "destination", &args.destination)?;
                let notes = ws.clone();
                let op = blocking(move || ws.move_path(&source, &destination, &call)).await?;
                let mut text = render::mutation::path_operation(&op);
                if let Some(from) = &op.source {
                    with_path_notes(&mut text, &notes, PathChange::Moved { from, to: &op.path });
                }
                Ok(ToolOutput::new(text, PathOperationResult::from(&op)))
            }
        },
    );
}

fn register_delete(registry: &mut Registry, workspace: &Arc<WorkspaceService>) {
    let ws = workspace.clone();
    registry.add(
        ToolSpec {
            name: "workspace_delete",
            title: "Delete",
            description: "Delete a file, or a directory tree with `recursive: true`. Links are never deleted.",
            annotations: Annotations::FsWrite,
            widget: Widget::WorkspaceResult,
            icon: Icon::WorkspaceEdit,
        },
        move |args: WorkspaceDeleteArgs, call: Call| {
            let ws = ws.clone();
            async move {
                let path = path_argument(&ws, "path", &args.path)?;
                let notes = ws.clone();
                let op = blocking(move || ws.delete_path(&path, args.recursive, &call)).await?;
                let mut text = render::mutation::path_operation(&op);
                with_path_notes(&mut text, &notes, PathChange::Deleted(&op.path));
                Ok(ToolOutput::new(text, PathOperationResult::from(&op)))
            }
        },
    );
}

fn register_mkdir(registry: &mut Registry, workspace: &Arc<WorkspaceService>) {
    let ws = workspace.clone();
    registry.add(
        ToolSpec {
            name: "workspace_mkdir",
            title: "Create directory",
            description: "Create a directory and its missing parents.",
            annotations: Annotations::FsMkdir,
            widget: Widget::WorkspaceResult,
            icon: Icon::Workspace,
        },
        move |args: WorkspaceMkdirArgs, call: Call| {
            let ws = ws.clone();
            async move {
                let path = path_argument(&ws, "path", &args.path)?;
                let op = blocking(move || ws.make_dir(&path, &call)).await?;
                Ok(ToolOutput::new(render::mutation::path_operation(&op), PathOperationResult::from(&op)))
            }
        },
    );
}

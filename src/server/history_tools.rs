//! The undo journal's tools: `workspace_history`, `workspace_checkpoint` and `workspace_revert`,
//! with their argument and result types. Each revert file's diff is a `diff.json` document, as a
//! write's or edit's.
//!
//! Architecture invariant: tool bodies only check arguments (naming the bad one), run the
//! workspace's journal operation on a blocking thread and render text; the journal and the revert
//! rules live in `workspace/journal/`.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::call::Call;
use crate::render;
use crate::server::mutation_tools::{store_diff, with_path_notes};
use crate::server::registry::{Annotations, Registry, ToolError, ToolOutput, ToolSpec};
use crate::server::workspace_tools::{ResourceLinks, blocking};
use crate::widgets::{Icon, Widget};
use crate::workspace::journal::model::{Action, Change, Checkpoint};
use crate::workspace::journal::revert::{RevertRequest, RevertTo};
use crate::workspace::journal::{History, JournalError};
use crate::workspace::path_notes::PathChange;
use crate::workspace::{Error, WorkspaceService};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceHistoryArgs {
    pub path: Option<String>,
    pub limit: Option<u32>,
    #[serde(default)]
    pub diffs: bool,
}

/// One path of a change.
#[derive(Debug, Serialize, JsonSchema)]
pub struct HistoryPath {
    pub path: String,
    /// `created`, `modified`, `deleted`, `moved_to` (moved away to `other`) or `moved_from`.
    pub action: Action,
    /// The other end of a move.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other: Option<String>,
    pub directory: bool,
    pub lines_added: u64,
    pub lines_removed: u64,
    /// With `diffs`: `diff` links the text diff of what the change did (`diff.json`).
    #[serde(skip_serializing_if = "ResourceLinks::is_empty")]
    pub resources: ResourceLinks,
}

/// One change of the journal.
#[derive(Debug, Serialize, JsonSchema)]
pub struct HistoryChange {
    pub id: u64,
    /// RFC 3339 time.
    pub at: String,
    pub tool: String,
    /// `client` (the MCP client), `panel` (the admin panel) or `server` (internal work).
    pub origin: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    pub paths: Vec<HistoryPath>,
    /// Checkpoints that mark the state after this change.
    pub checkpoints: Vec<String>,
    /// The revert that undid this change, if any.
    pub reverted_by: Option<u64>,
    /// For a revert: the first change it undid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverts_from: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CheckpointOut {
    pub name: String,
    /// The change whose state it marks (0: before the first change).
    pub after: u64,
    pub at: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkspaceHistoryResult {
    pub changes: Vec<HistoryChange>,
    /// Changes matching `path`, in all.
    pub matching: u64,
    /// The oldest change the journal holds (null: none yet).
    pub oldest_change: Option<u64>,
    /// Whether older changes were dropped to keep the journal under its size limit.
    pub older_dropped: bool,
    pub limit_bytes: u64,
    pub checkpoints: Vec<CheckpointOut>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceCheckpointArgs {
    pub name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceRevertArgs {
    pub change: Option<u64>,
    pub checkpoint: Option<String>,
    pub paths: Option<Vec<String>>,
    #[serde(default)]
    pub dry_run: bool,
    #[serde(default)]
    pub force: bool,
}

/// One path a revert changed.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RevertedFileResult {
    pub path: String,
    /// What the revert did to it: `created` (it comes back), `modified` (restored) or `deleted`.
    pub action: Action,
    pub directory: bool,
    pub lines_added: u64,
    pub lines_removed: u64,
    /// It had been changed outside ForgeMCP and was overwritten (`force`).
    pub outside: bool,
    /// `diff` links the typed diff (`diff.json`) of a text file.
    pub resources: ResourceLinks,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkspaceRevertResult {
    /// The first change undone.
    pub from_change: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    pub dry_run: bool,
    /// The revert's own change id (revert it to redo); null for a dry run or when nothing changed.
    pub change: Option<u64>,
    pub files: Vec<RevertedFileResult>,
    /// Directories kept because they hold entries the journal never recorded.
    pub kept_directories: Vec<String>,
}

fn time(at_ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(at_ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default()
}

fn checkpoint_out(checkpoint: &Checkpoint) -> CheckpointOut {
    CheckpointOut { name: checkpoint.name.clone(), after: checkpoint.after, at: time(checkpoint.at_ms) }
}

fn change_out(change: &Change, checkpoints: Vec<String>, reverted_by: Option<u64>) -> HistoryChange {
    use crate::workspace::journal::model::State;
    HistoryChange {
        id: change.id,
        at: time(change.at_ms),
        tool: change.tool.clone(),
        origin: change.origin.clone(),
        client: change.client.clone(),
        paths: change
            .paths
            .iter()
            .map(|p| HistoryPath {
                path: p.path.clone(),
                action: p.action,
                other: p.other.clone(),
                directory: matches!(p.before, State::Directory { .. }) || matches!(p.after, State::Directory { .. }),
                lines_added: p.added,
                lines_removed: p.removed,
                resources: ResourceLinks::new(),
            })
            .collect(),
        checkpoints,
        reverted_by,
        reverts_from: change.revert.as_ref().map(|r| r.from_change),
    }
}

fn history_result(history: &History) -> WorkspaceHistoryResult {
    WorkspaceHistoryResult {
        changes: history.changes.iter().map(|e| change_out(&e.change, e.checkpoints.clone(), e.reverted_by)).collect(),
        matching: history.matching,
        oldest_change: history.reaches.map(|(id, _)| id),
        older_dropped: history.dropped,
        limit_bytes: history.limit,
        checkpoints: history.checkpoints.iter().map(checkpoint_out).collect(),
    }
}

/// Stores the diff of every text file a listed change modified, created or deleted.
fn link_diffs(
    ws: &WorkspaceService,
    journal: &crate::workspace::journal::Journal,
    history: &History,
    value: &mut WorkspaceHistoryResult,
) -> Result<(), Error> {
    for (entry, out) in history.changes.iter().zip(&mut value.changes) {
        for (path, shown) in entry.change.paths.iter().zip(&mut out.paths) {
            if matches!(path.action, Action::MovedTo | Action::MovedFrom) {
                continue;
            }
            let Some((before, after)) = journal.texts(&path.before, &path.after)? else { continue };
            let Ok(qualified) = crate::workspace::path::QualifiedPath::parse(&path.path) else { continue };
            shown.resources = store_diff(ws, crate::workspace::diff::diff_texts(&qualified, &before, &after));
        }
    }
    Ok(())
}

fn journal_of(ws: &WorkspaceService) -> Result<Arc<crate::workspace::journal::Journal>, ToolError> {
    ws.journal().cloned().ok_or_else(|| ToolError::user(&JournalError::Off))
}

fn managed_argument(
    ws: &WorkspaceService,
    argument: &'static str,
    input: &str,
) -> Result<crate::workspace::path::QualifiedPath, ToolError> {
    ws.parse_managed(input).map_err(|e| ToolError::user(&e.for_argument(argument)))
}

pub fn register(registry: &mut Registry, workspace: &Arc<WorkspaceService>) {
    let ws = workspace.clone();
    registry.add(
        ToolSpec {
            name: "workspace_history",
            title: "Change history",
            description: "ForgeMCP's file changes.",
            annotations: Annotations::Inspect,
            widget: Widget::WorkspaceHistory,
            icon: Icon::WorkspaceEdit,
        },
        move |args: WorkspaceHistoryArgs, _call: Call| {
            let ws = ws.clone();
            async move {
                let path = args.path.as_deref().map(|p| managed_argument(&ws, "path", p)).transpose()?;
                let journal = journal_of(&ws)?;
                let limit = args.limit.unwrap_or(20) as usize;
                let filter = path.clone();
                let (history, value) = blocking(move || {
                    let history = journal.history(filter.as_ref(), limit)?;
                    let mut value = history_result(&history);
                    if args.diffs {
                        link_diffs(&ws, &journal, &history, &mut value)?;
                    }
                    Ok((history, value))
                })
                .await?;
                let text = render::journal::history(&history, path.map(|p| p.to_string()).as_deref());
                Ok(ToolOutput::new(text, value))
            }
        },
    );
    let ws = workspace.clone();
    registry.add(
        ToolSpec {
            name: "workspace_checkpoint",
            title: "Checkpoint",
            description: "Name the current state.",
            annotations: Annotations::FsMkdir,
            widget: Widget::WorkspaceHistory,
            icon: Icon::WorkspaceEdit,
        },
        move |args: WorkspaceCheckpointArgs, _call: Call| {
            let ws = ws.clone();
            async move {
                let journal = journal_of(&ws)?;
                let checkpoint = blocking(move || journal.checkpoint(&args.name).map_err(Error::from)).await?;
                Ok(ToolOutput::new(render::journal::checkpoint(&checkpoint), checkpoint_out(&checkpoint)))
            }
        },
    );
    let ws = workspace.clone();
    registry.add(
        ToolSpec {
            name: "workspace_revert",
            title: "Revert",
            description: "Undo ForgeMCP's changes from `change` or after `checkpoint`; revert a revert to redo.",
            annotations: Annotations::FsWrite,
            widget: Widget::WorkspaceRevert,
            icon: Icon::WorkspaceEdit,
        },
        move |args: WorkspaceRevertArgs, call: Call| {
            let ws = ws.clone();
            async move {
                let to = match (args.change, args.checkpoint) {
                    (Some(id), None) => RevertTo::Change(id),
                    (None, Some(name)) => RevertTo::Checkpoint(name),
                    (Some(_), Some(_)) => {
                        return Err(ToolError::User(
                            "Invalid argument `change`: pass exactly one of `change` and `checkpoint`, not both."
                                .into(),
                        ));
                    }
                    (None, None) => {
                        return Err(ToolError::User(
                            "Invalid argument `change`: pass exactly one of `change` (a change id) and `checkpoint` \
                             (a checkpoint name)."
                                .into(),
                        ));
                    }
                };
                let paths = args
                    .paths
                    .unwrap_or_default()
                    .iter()
                    .map(|p| managed_argument(&ws, "paths", p))
                    .collect::<Result<Vec<_>, _>>()?;
                let request = RevertRequest { to, paths, dry_run: args.dry_run, force: args.force };
                let (store, notes) = (ws.clone(), ws.clone());
                let (outcome, files) = blocking(move || {
                    let mut outcome = ws.revert(&request, &call)?;
                    let files = outcome
                        .paths
                        .iter_mut()
                        .map(|p| RevertedFileResult {
                            path: p.path.to_string(),
                            action: p.action,
                            directory: p.directory,
                            lines_added: p.added,
                            lines_removed: p.removed,
                            outside: p.outside,
                            resources: p.diff.take().map(|d| store_diff(&store, d)).unwrap_or_default(),
                        })
                        .collect();
                    Ok((outcome, files))
                })
                .await?;
                let value = WorkspaceRevertResult {
                    from_change: outcome.from_change,
                    checkpoint: outcome.checkpoint.clone(),
                    dry_run: outcome.dry_run,
                    change: outcome.change,
                    files,
                    kept_directories: outcome.kept_directories.iter().map(ToString::to_string).collect(),
                };
                let mut text = render::journal::revert(&outcome);
                if outcome.change.is_some() {
                    with_path_notes(&mut text, &notes, PathChange::Reverted(&outcome.paths));
                }
                Ok(ToolOutput::new(text, value))
            }
        },
    );
}

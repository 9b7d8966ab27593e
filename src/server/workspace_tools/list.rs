//! `workspace_list` and `forgemcp://workspace/list{?path,depth,include_hidden}`.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::Arc;

use rmcp::model::ResourceContents;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ResourceLinks, blocking, blocking_read, complete_path, parameter_error, params, path_argument};
use crate::call::Call;
use crate::render;
use crate::server::registry::{Annotations, Registry, ToolError, ToolOutput, ToolSpec};
use crate::server::resources::{Completer, ResourceSpec, Resources};
use crate::server::uri_template::Variables;
use crate::widgets::{Icon, Widget};
use crate::workspace::WorkspaceService;
use crate::workspace::tree::{self, DirectoryTree, EntryKind, ListOptions};

fn default_directory() -> String {
    "project/".to_owned()
}

fn default_depth() -> Option<u32> {
    Some(1)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceListArgs {
    /// Directory to list.
    #[serde(default = "default_directory")]
    pub path: String,
    /// Levels to list, ≥ 1; null = whole tree.
    #[serde(default = "default_depth")]
    #[schemars(range(min = 1))]
    pub depth: Option<u32>,
    /// Also list dot-directories.
    #[serde(default)]
    pub include_hidden: bool,
}

/// What an entry is; links are never followed.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(rename = "EntryKind")]
pub enum EntryKindResult {
    File,
    Directory,
    Symlink,
    Other,
}

/// One entry of the tree.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "TreeEntry")]
pub struct TreeEntryResult {
    /// The entry, as a canonical qualified path.
    pub path: String,
    pub kind: EntryKindResult,
    /// Sorted children of an expanded directory (`[]` when empty); null for files, links, other
    /// entries and directories beyond the depth.
    pub children: Option<Vec<TreeEntryResult>>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkspaceListResult {
    /// The listed directory, as a canonical qualified path.
    pub path: String,
    /// Its entries, sorted by the byte order of their UTF-8 names.
    pub entries: Vec<TreeEntryResult>,
    /// Result resources contributed by providers, by provider name.
    pub resources: ResourceLinks,
}

/// By value: each entry of the listing is dropped as its result is built, so a large tree is
/// never held twice.
impl From<tree::TreeEntry> for TreeEntryResult {
    fn from(entry: tree::TreeEntry) -> TreeEntryResult {
        let kind = match entry.kind {
            EntryKind::File => EntryKindResult::File,
            EntryKind::Directory => EntryKindResult::Directory,
            EntryKind::Symlink => EntryKindResult::Symlink,
            EntryKind::Other => EntryKindResult::Other,
        };
        TreeEntryResult {
            path: entry.path.to_string(),
            kind,
            children: entry.children.map(|children| children.into_iter().map(TreeEntryResult::from).collect()),
        }
    }
}

impl From<DirectoryTree> for WorkspaceListResult {
    fn from(listing: DirectoryTree) -> WorkspaceListResult {
        WorkspaceListResult {
            path: listing.path.to_string(),
            entries: listing.entries.into_iter().map(TreeEntryResult::from).collect(),
            resources: ResourceLinks::new(),
        }
    }
}

pub fn register(registry: &mut Registry, resources: &mut Resources, workspace: &Arc<WorkspaceService>) {
    let ws = workspace.clone();
    registry.add(
        ToolSpec {
            name: "workspace_list",
            title: "List directory",
            description: "List a directory as a tree. Dot-directories are hidden unless `include_hidden`; links are \
                          listed, never followed.",
            annotations: Annotations::FsRead,
            widget: Widget::WorkspaceTree,
            icon: Icon::Workspace,
        },
        move |args: WorkspaceListArgs, call: Call| {
            let ws = ws.clone();
            async move {
                let path = path_argument(&ws, "path", &args.path)?;
                let depth = match args.depth {
                    None => None,
                    Some(depth) => Some(NonZeroU32::new(depth).ok_or_else(|| {
                        ToolError::User(
                            "Invalid argument `depth`: it must be at least 1, or null for the whole tree.".into(),
                        )
                    })?),
                };
                let options = ListOptions { depth, include_hidden: args.include_hidden };
                let listing = blocking(move || ws.list(&path, options, &call)).await?;
                let text = render::tree::tree(&listing);
                Ok(ToolOutput::new(text, WorkspaceListResult::from(listing)))
            }
        },
    );

    let ws = workspace.clone();
    let completer_ws = workspace.clone();
    let completer: Completer =
        Arc::new(move |argument: &str, value: &str, _context: &HashMap<String, String>| match argument {
            "path" => complete_path(&completer_ws, value, false),
            "depth" => ["1", "2", "3", "all"].map(str::to_owned).to_vec(),
            "include_hidden" => ["false", "true"].map(str::to_owned).to_vec(),
            _ => Vec::new(),
        });
    resources.add_template(
        ResourceSpec {
            uri: "forgemcp://workspace/list{?path,depth,include_hidden}",
            name: "workspace-list",
            title: "Workspace directory tree",
            description: "A directory tree as Markdown. Defaults: path=project/, depth=1 (depth=all for the whole \
                          tree), include_hidden=false (true also lists dot-directories).",
            mime_type: "text/markdown",
            icon: Icon::Workspace,
        },
        move |uri: String, vars: Variables, call: Call| {
            let ws = ws.clone();
            async move {
                let path = params::path(&ws, &vars, "path", Some("project/"))?;
                let depth = params::depth(&vars, Some(NonZeroU32::MIN))?;
                let include_hidden = params::boolean(&vars, "include_hidden", false)?;
                let options = ListOptions { depth, include_hidden };
                let listing =
                    blocking_read(move || ws.list(&path, options, &call).map_err(|e| parameter_error("path", e)))
                        .await?;
                let text = render::tree::tree_markdown(&listing);
                Ok(vec![ResourceContents::text(text, uri).with_mime_type("text/markdown")])
            }
        },
        Some(completer),
    );
}

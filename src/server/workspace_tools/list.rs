//! `workspace_list` and `forgemcp://workspace/list{?path,depth,include_hidden}`.

use std::cell::Cell;
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::Arc;

use rmcp::model::ResourceContents;
use schemars::JsonSchema;
use serde::ser::SerializeStruct as _;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::{ResourceLinks, blocking, blocking_read, complete_path, parameter_error, params, path_argument};
use crate::call::Call;
use crate::render;
use crate::server::raw_json;
use crate::server::registry::{Annotations, Registry, ToolError, ToolOutput, ToolSpec};
use crate::server::resources::{Completer, ResourceSpec, Resources};
use crate::server::uri_template::Variables;
use crate::widgets::{Icon, Widget};
use crate::workspace::WorkspaceService;
use crate::workspace::path::QualifiedPath;
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

impl From<EntryKind> for EntryKindResult {
    fn from(kind: EntryKind) -> EntryKindResult {
        match kind {
            EntryKind::File => EntryKindResult::File,
            EntryKind::Directory => EntryKindResult::Directory,
            EntryKind::Symlink => EntryKindResult::Symlink,
            EntryKind::Other => EntryKindResult::Other,
        }
    }
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

/// Above this much drawing, `workspace_list` text stops and counts the entries it left out: a
/// drawing of tens of thousands of lines is no use to a model, and the structured result has them.
pub const TREE_TEXT_LIMIT: usize = 256 * 1024;

/// The structured result, serialized straight from the listing, which it takes apart entry by
/// entry, so each entry's memory is freed once it is written: the tree is never held typed or as a
/// `serde_json::Value` (see [`raw_json`]). Equal to serializing a [`WorkspaceListResult`] (tested).
fn structured(listing: DirectoryTree) -> serde_json::Result<Value> {
    raw_json::embed(&ListingJson { path: listing.path, entries: EntriesJson(Cell::new(listing.entries)) })
}

/// A listing shaped as a [`WorkspaceListResult`].
struct ListingJson {
    path: QualifiedPath,
    entries: EntriesJson,
}

/// Entries shaped as a list of [`TreeEntryResult`]; serializing them consumes them.
struct EntriesJson(Cell<Vec<tree::TreeEntry>>);

/// A path as its canonical text, written without building it.
struct PathJson<'a>(&'a QualifiedPath);

impl Serialize for ListingJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut res = serializer.serialize_struct("WorkspaceListResult", 3)?;
        res.serialize_field("path", &PathJson(&self.path))?;
        res.serialize_field("entries", &self.entries)?;
        res.serialize_field("resources", &ResourceLinks::new())?;
        res.end()
    }
}

impl Serialize for EntriesJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Each entry is dropped as soon as it is written.
        serializer.collect_seq(self.0.take().into_iter().map(|entry| EntryJson {
            path: entry.path,
            kind: entry.kind.into(),
            children: entry.children.map(|children| EntriesJson(Cell::new(children))),
        }))
    }
}

/// An entry shaped as a [`TreeEntryResult`].
struct EntryJson {
    path: QualifiedPath,
    kind: EntryKindResult,
    children: Option<EntriesJson>,
}

impl Serialize for EntryJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut res = serializer.serialize_struct("TreeEntryResult", 3)?;
        res.serialize_field("path", &PathJson(&self.path))?;
        res.serialize_field("kind", &self.kind)?;
        res.serialize_field("children", &self.children)?;
        res.end()
    }
}

impl Serialize for PathJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self.0)
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
                // Drawn and serialized on the blocking thread that listed it.
                let (text, value) = blocking(move || {
                    let listing = ws.list(&path, options, &call)?;
                    Ok((render::tree::tree_limited(&listing, TREE_TEXT_LIMIT), structured(listing)))
                })
                .await?;
                let value = value.map_err(|err| ToolError::user(&err))?;
                Ok(ToolOutput::<WorkspaceListResult>::json(text, value))
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

#[cfg(test)]
mod tests {
    use super::*;

    impl From<tree::TreeEntry> for TreeEntryResult {
        fn from(entry: tree::TreeEntry) -> TreeEntryResult {
            TreeEntryResult {
                path: entry.path.to_string(),
                kind: entry.kind.into(),
                children: entry.children.map(|children| children.into_iter().map(TreeEntryResult::from).collect()),
            }
        }
    }

    fn entry(path: &str, kind: EntryKind, children: Option<Vec<tree::TreeEntry>>) -> tree::TreeEntry {
        tree::TreeEntry { path: QualifiedPath::parse(path).unwrap(), kind, children }
    }

    #[test]
    fn the_json_built_from_a_listing_is_the_typed_result_serialized() {
        let listing = || DirectoryTree {
            path: QualifiedPath::parse("project/").unwrap(),
            entries: vec![
                entry(
                    "project/src",
                    EntryKind::Directory,
                    Some(vec![
                        entry("project/src/empty", EntryKind::Directory, Some(Vec::new())),
                        entry("project/src/deep", EntryKind::Directory, None),
                        entry("project/src/main.cpp", EntryKind::File, None),
                    ]),
                ),
                entry("project/link", EntryKind::Symlink, None),
                entry("project/fifo", EntryKind::Other, None),
            ],
        };
        let typed = {
            let listing = listing();
            WorkspaceListResult {
                path: listing.path.to_string(),
                entries: listing.entries.into_iter().map(TreeEntryResult::from).collect(),
                resources: ResourceLinks::new(),
            }
        };
        let embedded = structured(listing()).unwrap();
        assert_eq!(raw_json::decode(&embedded).unwrap(), serde_json::to_value(&typed).unwrap());
    }
}

//! `workspace_find_files` and `forgemcp://workspace/find-files{?pattern,path}`.

use std::sync::Arc;

use rmcp::model::ResourceContents;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::read::file_mirror_uri;
use super::{ResourceLinks, blocking, blocking_read, datetime, parameter_error, params, path_argument, path_completer};
use crate::call::Call;
use crate::render;
use crate::server::registry::{Annotations, Registry, ToolError, ToolOutput, ToolSpec};
use crate::server::resources::{ResourceSpec, Resources};
use crate::server::uri_template::Variables;
use crate::widgets::{Icon, Widget};
use crate::workspace::WorkspaceService;
use crate::workspace::find::{FilePattern, FoundFiles};

fn default_pattern() -> String {
    "*".to_owned()
}

fn default_directory() -> String {
    "project/".to_owned()
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceFindFilesArgs {
    /// Case-sensitive glob: without `/` it matches file names (`*.cpp`), with `/` the relative path
    /// (`**/test_*.cpp`).
    #[serde(default = "default_pattern")]
    #[schemars(length(min = 1))]
    pub pattern: String,
    /// Directory to search (or a single file).
    #[serde(default = "default_directory")]
    pub path: String,
}

/// One file found.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "FoundFile")]
pub struct FoundFileResult {
    /// The file, as a canonical qualified path.
    pub path: String,
    /// Last modification, RFC 3339 UTC.
    #[schemars(extend("format" = "date-time"))]
    pub modified_at: String,
    pub size_bytes: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkspaceFindFilesResult {
    /// The matching files, sorted.
    pub paths: Vec<String>,
    /// The same files with their metadata, sorted by path.
    pub files: Vec<FoundFileResult>,
    /// Result resources contributed by providers, by provider name.
    pub resources: ResourceLinks,
}

impl From<&FoundFiles> for WorkspaceFindFilesResult {
    fn from(found: &FoundFiles) -> WorkspaceFindFilesResult {
        WorkspaceFindFilesResult {
            paths: found.files.iter().map(|f| f.path.to_string()).collect(),
            files: found
                .files
                .iter()
                .map(|f| FoundFileResult {
                    path: f.path.to_string(),
                    modified_at: datetime(&f.modified_at),
                    size_bytes: f.size_bytes,
                })
                .collect(),
            resources: ResourceLinks::new(),
        }
    }
}

pub fn register(registry: &mut Registry, resources: &mut Resources, workspace: &Arc<WorkspaceService>) {
    let ws = workspace.clone();
    registry.add(
        ToolSpec {
            name: "workspace_find_files",
            title: "Find files",
            description: "Find files recursively by glob pattern (skips dot-directories and links).",
            annotations: Annotations::FsRead,
            widget: Widget::WorkspaceTree,
            icon: Icon::Workspace,
        },
        move |args: WorkspaceFindFilesArgs, call: Call| {
            let ws = ws.clone();
            async move {
                let pattern = FilePattern::new(&args.pattern)
                    .map_err(|err| ToolError::User(format!("Invalid argument `pattern`: {err}.")))?;
                let path = path_argument(&ws, "path", &args.path)?;
                let found = blocking(move || ws.find_files(&path, &pattern, &call)).await?;
                Ok(ToolOutput::new(render::workspace::found_files(&found), WorkspaceFindFilesResult::from(&found)))
            }
        },
    );

    let ws = workspace.clone();
    resources.add_template(
        ResourceSpec {
            uri: "forgemcp://workspace/find-files{?pattern,path}",
            name: "workspace-find-files",
            title: "Workspace file search",
            description: "Files matching a glob, as Markdown links to their text mirrors. Defaults: pattern=*, \
                          path=project/.",
            mime_type: "text/markdown",
            icon: Icon::Workspace,
        },
        move |uri: String, vars: Variables, call: Call| {
            let ws = ws.clone();
            async move {
                let pattern = params::text(&vars, "pattern", "*")?;
                let pattern = FilePattern::new(pattern).map_err(|e| parameter_error("pattern", e))?;
                let path = params::path(&ws, &vars, "path", Some("project/"))?;
                let found = blocking_read(move || {
                    ws.find_files(&path, &pattern, &call).map_err(|e| parameter_error("path", e))
                })
                .await?;
                let text = render::workspace::found_files_markdown(&found, file_mirror_uri);
                Ok(vec![ResourceContents::text(text, uri).with_mime_type("text/markdown")])
            }
        },
        Some(path_completer(workspace, false)),
    );
}

//! `workspace_file_info` and `forgemcp://workspace/file-info{?path}`.

use std::sync::Arc;

use rmcp::model::ResourceContents;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ResourceLinks, blocking, blocking_read, datetime, parameter_error, params, path_argument, path_completer};
use crate::call::Call;
use crate::render;
use crate::server::registry::{Annotations, Registry, ToolError, ToolOutput, ToolSpec};
use crate::server::resources::{ResourceSpec, Resources};
use crate::server::uri_template::Variables;
use crate::widgets::{Icon, Widget};
use crate::workspace::WorkspaceService;
use crate::workspace::info::FileInfo;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceFileInfoArgs {
    /// Regular file.
    pub path: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkspaceFileInfoResult {
    /// The file, as a canonical qualified path.
    pub path: String,
    /// Creation (birth) time, RFC 3339 UTC; null where the platform does not record it.
    #[schemars(extend("format" = "date-time"))]
    pub created_at: Option<String>,
    /// Last modification, RFC 3339 UTC.
    #[schemars(extend("format" = "date-time"))]
    pub modified_at: String,
    pub size_bytes: u64,
    /// The owning account's name; null when unavailable.
    pub owner: Option<String>,
    /// Result resources contributed by providers, by provider name.
    pub resources: ResourceLinks,
}

impl From<&FileInfo> for WorkspaceFileInfoResult {
    fn from(info: &FileInfo) -> WorkspaceFileInfoResult {
        WorkspaceFileInfoResult {
            path: info.path.to_string(),
            created_at: info.created_at.as_ref().map(datetime),
            modified_at: datetime(&info.modified_at),
            size_bytes: info.size_bytes,
            owner: info.owner.clone(),
            resources: ResourceLinks::new(),
        }
    }
}

pub fn register(registry: &mut Registry, resources: &mut Resources, workspace: &Arc<WorkspaceService>) {
    let ws = workspace.clone();
    registry.add(
        ToolSpec {
            name: "workspace_file_info",
            title: "File information",
            description: "Size, creation and modification times, and owner of one file.",
            annotations: Annotations::FsRead,
            widget: Widget::WorkspaceResult,
            icon: Icon::WorkspaceFile,
        },
        move |args: WorkspaceFileInfoArgs, call: Call| {
            let ws = ws.clone();
            async move {
                let path = path_argument(&ws, "path", &args.path)?;
                // A path check and a stat: cheaper run here than handed to a blocking thread,
                // unless a mutation holds the workspace lock.
                let info = match ws.try_file_info(&path, &call) {
                    Some(info) => info.map_err(|err| ToolError::user(&err))?,
                    None => blocking(move || ws.file_info(&path, &call)).await?,
                };
                Ok(ToolOutput::new(render::workspace::file_info(&info), WorkspaceFileInfoResult::from(&info)))
            }
        },
    );

    let ws = workspace.clone();
    resources.add_template(
        ResourceSpec {
            uri: "forgemcp://workspace/file-info{?path}",
            name: "workspace-file-info",
            title: "Workspace file information",
            description: "Size, times and owner of one managed file as a Markdown table; path is required.",
            mime_type: "text/markdown",
            icon: Icon::WorkspaceFile,
        },
        move |uri: String, vars: Variables, call: Call| {
            let ws = ws.clone();
            async move {
                let path = params::path(&ws, &vars, "path", None)?;
                let info =
                    blocking_read(move || ws.file_info(&path, &call).map_err(|e| parameter_error("path", e))).await?;
                let text = render::workspace::file_info_markdown(&info);
                Ok(vec![ResourceContents::text(text, uri).with_mime_type("text/markdown")])
            }
        },
        Some(path_completer(workspace, true)),
    );
}

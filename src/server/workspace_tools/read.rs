//! `workspace_read_file` and the text and raw mirrors `forgemcp://workspace/file{/path*}` and
//! `forgemcp://workspace/raw{/path*}`.

use std::sync::Arc;

use base64::Engine;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use rmcp::model::ResourceContents;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ResourceLinks, blocking, blocking_read, path_argument, path_completer, provider_links, read_error};
use crate::call::{Call, Question};
use crate::render;
use crate::server::registry::{Annotations, Registry, ToolError, ToolOutput, ToolSpec};
use crate::server::resources::{ReadError, ResourceSpec, Resources};
use crate::server::uri_template::Variables;
use crate::widgets::{Icon, Widget};
use crate::workspace::WorkspaceService;
use crate::workspace::path::{Area, QualifiedPath};
use crate::workspace::provider::{FileOperation, LineWindow, ProviderRequest};
use crate::workspace::read::DEFAULT_READ_MAX_BYTES;

/// Everything but RFC 3986 unreserved characters is percent-encoded inside a path segment.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// The text-mirror URI of a managed file: `forgemcp://workspace/file/project/src/my%20file.cpp`.
pub fn file_mirror_uri(path: &QualifiedPath) -> String {
    let mut res = format!("forgemcp://workspace/file/{}/", path.area().prefix());
    for (idx, name) in path.components().enumerate() {
        if idx > 0 {
            res.push('/');
        }
        res.extend(utf8_percent_encode(name, SEGMENT));
    }
    res
}

pub fn register(registry: &mut Registry, resources: &mut Resources, workspace: &Arc<WorkspaceService>) {
    register_read_file(registry, workspace);
    register_mirrors(resources, workspace);
}

fn default_start_line() -> u64 {
    1
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceReadFileArgs {
    /// File; `root/<absolute path>` reads an external file after the user confirms.
    pub path: String,
    /// First line, 1-based.
    #[serde(default = "default_start_line")]
    #[schemars(range(min = 1))]
    pub start_line: u64,
    /// Last line, inclusive; null = to the end (at most 2000 lines).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub end_line: Option<u64>,
    /// Byte budget of the result (numbered text and structured copy together); the read stops at a
    /// line end within it and says where to continue.
    #[serde(default = "default_max_bytes")]
    #[schemars(range(min = 1))]
    pub max_bytes: u64,
}

fn default_max_bytes() -> u64 {
    DEFAULT_READ_MAX_BYTES as u64
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkspaceReadFileResult {
    /// The file, as a canonical qualified path.
    pub path: String,
    /// The selected lines with their original line endings; empty when the range is beyond the end.
    pub text: String,
    /// The first line requested (1-based).
    pub start_line: u64,
    /// Where to continue when the read was cut (budget or line limit); absent when it is whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start_line: Option<u64>,
    /// `UTF-8`, or `UTF-8 with BOM` when the file starts with a byte-order mark (not part of `text`).
    pub encoding: String,
    /// Result resources contributed by providers, by provider name.
    pub resources: ResourceLinks,
}

fn register_read_file(registry: &mut Registry, workspace: &Arc<WorkspaceService>) {
    let ws = workspace.clone();
    registry.add(
        ToolSpec {
            name: "workspace_read_file",
            title: "Read file",
            description: "Read a UTF-8 text file, whole or by line range, with its original line endings, within a byte \
                          budget (max_bytes, default 80000) that says where to continue.",
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
                let (ws_for_providers, provider_call) = (ws.clone(), call.clone());
                let excerpt = blocking(move || {
                    if external {
                        ws.read_external_file(&path, start, end, &call)
                    } else {
                        ws.read_file(&path, start, end, &call)
                    }
                })
                .await?;
                let budget = usize::try_from(args.max_bytes).unwrap_or(usize::MAX);
                let excerpt = excerpt.limit(end.is_some(), budget);
                let n_lines = crate::workspace::read::split_lines(&excerpt.text).count() as u64;
                let mut text = if excerpt.text.len() <= NUMBERED_TEXT_LIMIT {
                    render::excerpt::file_excerpt(&excerpt)
                } else {
                    large_read_text(&excerpt.path, excerpt.start_line, n_lines, excerpt.text.len())
                };
                let resources = if external {
                    ResourceLinks::new()
                } else {
                    let shown_end = excerpt.continuation.map(|cut| cut.next_start_line - 1).or(end);
                    let lines = LineWindow::of_read(start, shown_end, n_lines);
                    let request = ProviderRequest {
                        path: excerpt.path.clone(),
                        operation: FileOperation::Read,
                        lines,
                        before: None,
                    };
                    let provided = provider_links(&ws_for_providers, request, &provider_call).await;
                    text = provided.with_notes(text);
                    provided.links
                };
                let value = WorkspaceReadFileResult {
                    path: excerpt.path.to_string(),
                    text: excerpt.text,
                    start_line: excerpt.start_line,
                    next_start_line: excerpt.continuation.map(|cut| cut.next_start_line),
                    encoding: if excerpt.bom { "UTF-8 with BOM" } else { "UTF-8" }.to_owned(),
                    resources,
                };
                let value = value.into_structured().map_err(|err| ToolError::user(&err))?;
                Ok(ToolOutput::<WorkspaceReadFileResult>::json(text, value))
            }
        },
    );
}

impl WorkspaceReadFileResult {
    /// The structured value, with the text moved into it (a large read's text is not copied);
    /// it equals the result's serialization.
    fn into_structured(self) -> serde_json::Result<Value> {
        let mut map = serde_json::Map::new();
        map.insert("path".into(), Value::String(self.path));
        map.insert("text".into(), Value::String(self.text));
        map.insert("start_line".into(), self.start_line.into());
        if let Some(next) = self.next_start_line {
            map.insert("next_start_line".into(), next.into());
        }
        map.insert("encoding".into(), Value::String(self.encoding));
        map.insert("resources".into(), serde_json::to_value(&self.resources)?);
        Ok(Value::Object(map))
    }
}

/// Above this much text a read's `content` is a note instead of a numbered copy: the text goes out
/// once (in `structuredContent.text`), so an explicit range of a large file fits one reply.
pub const NUMBERED_TEXT_LIMIT: usize = 1 << 20;

/// The `content` text of a read whose text is above [`NUMBERED_TEXT_LIMIT`].
fn large_read_text(path: &QualifiedPath, start_line: u64, n_lines: u64, bytes: usize) -> String {
    let last = start_line + n_lines.saturating_sub(1);
    format!(
        "Lines {start_line}–{last} of {path} ({bytes} bytes) are in the result's `text` field only: above {} MiB of \
         text the numbered copy is left out. Read a narrower line range to get numbered lines.",
        NUMBERED_TEXT_LIMIT >> 20
    )
}

/// Asks the user before an external read; every such read asks again.
async fn confirm_external_read(call: &Call, path: &QualifiedPath) -> Result<(), ToolError> {
    let shown = path.external_path().map(|p| p.display().to_string()).unwrap_or_else(|| path.to_string());
    let question = Question {
        key: "confirm_external_read".into(),
        // A path may hold line breaks and other controls: escaped, they cannot fake a second line.
        message: format!("Allow ForgeMCP to read the external file {}?", crate::text::escape_controls(&shown)),
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

/// Parses the `path` variable of a mirror URI; `root/…` is "not found" there.
fn mirror_path(workspace: &WorkspaceService, vars: &Variables) -> Result<QualifiedPath, ReadError> {
    let raw = vars.get("path").unwrap_or_default();
    // Mirrors take the qualified form only; shorthands and `root/` name nothing here.
    if !(raw.starts_with("project/") || raw.starts_with("storage/")) {
        return Err(ReadError::NotFound(format!("no workspace file `{raw}`; use project/… or storage/…")));
    }
    workspace.parse(raw).map_err(read_error)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reads_structured_value_is_its_serialization() {
        let mut resources = ResourceLinks::new();
        resources.insert(
            "clangd".into(),
            super::super::ResourceLink { uri: "forgemcp://clangd/1".into(), mime_type: "application/json".into() },
        );
        for next_start_line in [None, Some(12)] {
            let result = || WorkspaceReadFileResult {
                path: "project/a.cpp".into(),
                text: "int a;\r\n\"b\"\n".into(),
                start_line: 3,
                next_start_line,
                encoding: "UTF-8".into(),
                resources: resources.clone(),
            };
            assert_eq!(result().into_structured().unwrap(), serde_json::to_value(result()).unwrap());
        }
    }

    #[test]
    fn mirror_uris_encode_segments() {
        let uri = |s: &str| file_mirror_uri(&QualifiedPath::parse(s).unwrap());
        assert_eq!(uri("project/src/main.cpp"), "forgemcp://workspace/file/project/src/main.cpp");
        assert_eq!(uri("storage/a b/c+d#e?.h"), "forgemcp://workspace/file/storage/a%20b/c%2Bd%23e%3F.h");
        assert_eq!(uri("project/é)"), "forgemcp://workspace/file/project/%C3%A9%29");
    }
}

//! Toolchain tools and resources: `toolsets_list`, `toolset_get`, `forgemcp://toolsets` and
//! `forgemcp://toolsets/{toolset_id}` with id completion. The argument and result types here are
//! the wire shapes of INTERFACE.md §5.
//!
//! Architecture invariant: listing never probes; every detail (tool or resource) probes versions
//! afresh through the service, with the same progress.
//! Architecture invariant: everything here waits for toolset discovery; nothing else in the server
//! does. Environments are never part of a result.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::ResourceContents;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use crate::call::Call;
use crate::render;
use crate::server::registry::{Annotations, Registry, ToolError, ToolOutput, ToolSpec, error_chain};
use crate::server::resources::{AsyncCompleter, ReadError, ResourceSpec, Resources};
use crate::server::uri_template::Variables;
use crate::toolchain::spec::ToolKind;
use crate::toolchain::{self, ToolVersion, ToolchainService, Toolset};
use crate::widgets::{Icon, Widget};

pub fn register(registry: &mut Registry, resources: &mut Resources, toolchain: &Arc<ToolchainService>) {
    register_list(registry, toolchain);
    register_get(registry, toolchain);
    register_resources(resources, toolchain);
}

// ---------------------------------------------------------------------------------------------
// Wire types.

/// `toolsets_list` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolsetsListArgs {}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ToolsetSummary {
    /// `system`, `visual-studio-…` or `user-…`; pass it to toolset_get and to CMake profiles.
    pub id: String,
    pub name: String,
    /// Names of the tools found, sorted.
    pub tools: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ToolsetsListResult {
    /// Every discovered toolset, sorted by id.
    pub result: Vec<ToolsetSummary>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolsetGetArgs {
    /// A toolset id from toolsets_list, exactly.
    pub toolset_id: String,
}

/// `kind`: one of the `ToolKind` names.
fn kind_schema(_generator: &mut SchemaGenerator) -> Schema {
    let kinds: Vec<&str> = ToolKind::ALL.iter().map(|kind| kind.as_str()).collect();
    json_schema!({ "description": "What the tool is for.", "type": "string", "enum": kinds })
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ToolDetails {
    /// The built-in tool name (`cmake`, `clang++`, `cppvsdbg`, …).
    pub name: String,
    #[schemars(schema_with = "kind_schema")]
    pub kind: &'static str,
    /// Absolute path of the executable.
    pub path: String,
    /// Version read from the tool just now; null when it has no probe or the probe failed.
    pub version: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ToolsetGetResult {
    pub id: String,
    pub name: String,
    /// Tools sorted by name.
    pub tools: Vec<ToolDetails>,
}

impl From<&Toolset> for ToolsetSummary {
    fn from(toolset: &Toolset) -> ToolsetSummary {
        ToolsetSummary {
            id: toolset.id().to_string(),
            name: toolset.name().to_owned(),
            tools: toolset.tools().iter().map(|tool| tool.name().to_owned()).collect(),
        }
    }
}

fn details(toolset: &Toolset, versions: &[ToolVersion]) -> ToolsetGetResult {
    ToolsetGetResult {
        id: toolset.id().to_string(),
        name: toolset.name().to_owned(),
        tools: versions
            .iter()
            .map(|ToolVersion { tool, version }| ToolDetails {
                name: tool.name().to_owned(),
                kind: tool.spec.kind.as_str(),
                path: tool.path.to_string_lossy().into_owned(),
                version: version.clone(),
            })
            .collect(),
    }
}

// ---------------------------------------------------------------------------------------------
// Tools.

fn register_list(registry: &mut Registry, toolchain: &Arc<ToolchainService>) {
    let service = toolchain.clone();
    registry.add(
        ToolSpec {
            name: "toolsets_list",
            title: "Toolsets",
            description: "Discovered toolsets and their tool names (no probes). Pass ids explicitly; versions via \
                          toolset_get.",
            annotations: Annotations::Inspect,
            widget: Widget::Toolsets,
            icon: Icon::Toolchain,
        },
        move |_args: ToolsetsListArgs, call: Call| {
            let service = service.clone();
            async move {
                call.progress.report(0.0, Some(1.0), "Reading toolsets");
                let toolsets = service.toolsets().await.map_err(|err| ToolError::user(&err))?;
                let text = render::toolchain::list_text(&toolsets);
                let result = toolsets.iter().map(|toolset| ToolsetSummary::from(&**toolset)).collect();
                call.progress.report(1.0, Some(1.0), "Toolsets ready");
                Ok(ToolOutput::new(text, ToolsetsListResult { result }))
            }
        },
    );
}

fn register_get(registry: &mut Registry, toolchain: &Arc<ToolchainService>) {
    let service = toolchain.clone();
    registry.add(
        ToolSpec {
            name: "toolset_get",
            title: "Toolset",
            description: "One toolset's tools with kinds, paths and live versions.",
            annotations: Annotations::Inspect,
            widget: Widget::Toolsets,
            icon: Icon::Toolchain,
        },
        move |args: ToolsetGetArgs, call: Call| {
            let service = service.clone();
            async move {
                let toolset = service.get(&args.toolset_id).await.map_err(|err| ToolError::user(&err))?;
                let versions = service.versions(&toolset, &call).await;
                let text = render::toolchain::detail_text(&toolset, &versions);
                Ok(ToolOutput::new(text, details(&toolset, &versions)))
            }
        },
    );
}

// ---------------------------------------------------------------------------------------------
// Resources.

fn read_error(err: &toolchain::Error) -> ReadError {
    // An unknown id names nothing; a failed discovery has nothing to show either.
    ReadError::NotFound(error_chain(err))
}

fn register_resources(resources: &mut Resources, toolchain: &Arc<ToolchainService>) {
    let service = toolchain.clone();
    resources.add_static(
        ResourceSpec {
            uri: "forgemcp://toolsets",
            name: "toolsets",
            title: "Toolsets",
            description: "Every discovered toolset with its tool names, as a Markdown table (no version probes).",
            mime_type: "text/markdown",
            icon: Icon::Toolchain,
        },
        move |uri: String, _call: Call| {
            let service = service.clone();
            async move {
                let toolsets = service.toolsets().await.map_err(|err| read_error(&err))?;
                let markdown = render::toolchain::list_markdown(&toolsets);
                Ok(vec![ResourceContents::text(markdown, uri).with_mime_type("text/markdown")])
            }
        },
    );
    let service = toolchain.clone();
    let for_completion = toolchain.clone();
    let completer: AsyncCompleter =
        Arc::new(move |argument: String, _value: String, _context: HashMap<String, String>| {
            let service = for_completion.clone();
            Box::pin(async move {
                if argument != "toolset_id" {
                    return Vec::new();
                }
                match service.toolsets().await {
                    Ok(toolsets) => toolsets.iter().map(|toolset| toolset.id().to_string()).collect(),
                    Err(_) => Vec::new(),
                }
            })
        });
    resources.add_template_awaiting(
        ResourceSpec {
            uri: "forgemcp://toolsets/{toolset_id}",
            name: "toolset",
            title: "Toolset",
            description: "One toolset's tools with kinds, absolute paths and freshly probed versions, as Markdown.",
            mime_type: "text/markdown",
            icon: Icon::Toolchain,
        },
        move |uri: String, vars: Variables, call: Call| {
            let service = service.clone();
            async move {
                let id = vars.get("toolset_id").unwrap_or_default().to_owned();
                let toolset = service.get(&id).await.map_err(|err| read_error(&err))?;
                let versions = service.versions(&toolset, &call).await;
                let markdown = render::toolchain::detail_markdown(&toolset, &versions);
                Ok(vec![ResourceContents::text(markdown, uri).with_mime_type("text/markdown")])
            }
        },
        completer,
    );
}

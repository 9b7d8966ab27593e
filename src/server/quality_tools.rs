//! The quality tools: `quality_tidy` and `quality_format`, their arguments and result wrappers
//! around `quality::model`'s types, and the `diff.json` documents of the files they change (or,
//! for `quality_format` without `apply`, would change).
//!
//! Architecture invariant: each changed file carries `resources.diff` like `workspace_edit_file`;
//! a failure to store a diff omits that link and never fails the call.

use std::sync::Arc;

use rmcp::model::Resource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::call::Call;
use crate::quality::format::FormatRequest;
use crate::quality::model::{CheckCount, RunFailure, TidyFile};
use crate::quality::tidy::TidyRequest;
use crate::quality::{self, QualityService};
use crate::render;
use crate::server::mutation_tools::store_diff_with;
use crate::server::registry::{Annotations, Registry, ToolError, ToolOutput, ToolSpec, error_chain};
use crate::server::workspace_tools::{ResourceLinks, path_argument};
use crate::widgets::{Icon, Widget};
use crate::workspace::WorkspaceService;
use crate::workspace::results::{Body, Document, DocumentKind};

fn project() -> String {
    "project/".to_owned()
}

fn system() -> String {
    "system".to_owned()
}

fn default_max_diagnostics() -> u32 {
    200
}

fn default_max_files() -> u32 {
    100
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QualityTidyArgs {
    /// File or directory.
    #[serde(default = "project")]
    pub path: String,
    /// Configuration ids; omitted or [] = all.
    #[serde(default)]
    pub configurations: Option<Vec<String>>,
    /// Only these checks, not `.clang-tidy`'s.
    #[serde(default)]
    pub checks: Option<String>,
    #[serde(default)]
    pub apply_fixes: bool,
    #[serde(default = "default_max_diagnostics")]
    pub max_diagnostics: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QualityFormatArgs {
    /// File or directory.
    #[serde(default = "project")]
    pub path: String,
    /// Instead of `.clang-format`, e.g. `LLVM`.
    #[serde(default)]
    pub style: Option<String>,
    #[serde(default)]
    pub apply: bool,
    /// Toolset id or name.
    #[serde(default = "system")]
    pub toolset: String,
    #[serde(default = "default_max_files")]
    pub max_files: u32,
}

/// A file a tool changed (or would change), with `diff` linking its `diff.json`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ChangedFile {
    pub path: String,
    pub replacements: u64,
    pub resources: ResourceLinks,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct QualityTidyResult {
    pub path: String,
    /// The configurations that ran.
    pub configurations: Vec<String>,
    pub files_total: u64,
    pub files_checked: u64,
    /// Files with diagnostics, sorted by path, up to `max_diagnostics` diagnostics.
    pub files: Vec<TidyFile>,
    /// Diagnostics beyond the budget.
    pub more_diagnostics: u64,
    /// Findings per check, listed and beyond the budget together, most frequent first.
    pub checks: Vec<CheckCount>,
    /// Files changed by `apply_fixes`.
    pub changed: Vec<ChangedFile>,
    pub failures: Vec<RunFailure>,
}

/// One file that needs (or needed) formatting.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FormattedFile {
    pub path: String,
    pub replacements: u64,
    /// clang-format could not format all of it.
    pub incomplete: bool,
    /// The change was written.
    pub applied: bool,
    /// No style file applies and no `style` was given: clang-format's fallback style (LLVM).
    pub fallback: bool,
    /// `diff` links the change's `diff.json`, `unified_diff` the same change as a unified diff.
    pub resources: ResourceLinks,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct QualityFormatResult {
    pub path: String,
    pub toolset: String,
    pub apply: bool,
    pub files_total: u64,
    pub files_checked: u64,
    /// Files already formatted.
    pub formatted: u64,
    /// Files needing changes, sorted by path.
    pub files: Vec<FormattedFile>,
    /// Files needing changes beyond `max_files`.
    pub more_files: u64,
    /// Without `style`: files no `.clang-format` applies to (a tree never gets the fallback style
    /// written).
    pub fallback_files: u64,
    pub failures: Vec<RunFailure>,
}

fn count(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

fn failure(err: quality::Error) -> ToolError {
    if err.is_about_path() {
        return ToolError::User(format!("Invalid argument `path`: {}", error_chain(&err)));
    }
    match err {
        quality::Error::UnknownConfiguration { .. } => {
            ToolError::User(format!("Invalid argument `configurations`: {}", error_chain(&err)))
        }
        quality::Error::Toolchain(_) => ToolError::User(format!("Invalid argument `toolset`: {}", error_chain(&err))),
        other => ToolError::user(&other),
    }
}

/// Stores each diff as its own `diff.json` document on a blocking thread; with `unified`, the same
/// change as a unified diff in Markdown beside it (`unified_diff.md`).
async fn diffs(
    workspace: &Arc<WorkspaceService>,
    diffs: Vec<crate::workspace::diff::FileDiff>,
    unified: bool,
) -> Vec<ResourceLinks> {
    let workspace = workspace.clone();
    tokio::task::spawn_blocking(move || {
        diffs
            .into_iter()
            .map(|diff| {
                let more = if unified {
                    let body = render::quality::diff_markdown(&diff);
                    vec![Document {
                        name: "unified_diff".to_owned(),
                        kind: DocumentKind::Markdown,
                        body: Body::Ready(body.into()),
                    }]
                } else {
                    Vec::new()
                };
                store_diff_with(&workspace, diff, more)
            })
            .collect()
    })
    .await
    .unwrap_or_default()
}

/// A `resource_link` content item for the unified diff of each file, so a client that shows only
/// content sees every change the text could not hold.
fn diff_links(files: &[FormattedFile]) -> Vec<Resource> {
    files
        .iter()
        .filter_map(|file| {
            let link = file.resources.get("unified_diff")?;
            let what =
                if file.applied { "the formatting written to" } else { "the formatting clang-format would apply to" };
            Some(
                Resource::new(link.uri.clone(), file.path.clone())
                    .with_description(format!("Unified diff of {what} {}", file.path))
                    .with_mime_type(link.mime_type.clone()),
            )
        })
        .collect()
}

pub fn register(registry: &mut Registry, workspace: &Arc<WorkspaceService>, quality: &Arc<QualityService>) {
    let (ws, service) = (workspace.clone(), quality.clone());
    registry.add(
        ToolSpec {
            name: "quality_tidy",
            title: "clang-tidy",
            description: "clang-tidy per CMake configuration on a file or tree; `apply_fixes` writes the fix-its.",
            annotations: Annotations::FsWrite,
            widget: Widget::QualityTidy,
            icon: Icon::Clangd,
        },
        move |args: QualityTidyArgs, call: Call| {
            let (ws, service) = (ws.clone(), service.clone());
            async move {
                let request = TidyRequest {
                    path: path_argument(&ws, "path", &args.path)?,
                    configurations: args.configurations.unwrap_or_default(),
                    checks: args.checks.filter(|checks| !checks.trim().is_empty()),
                    apply_fixes: args.apply_fixes,
                    max_diagnostics: args.max_diagnostics as usize,
                };
                let mut report = service.tidy(request, &call).await.map_err(failure)?;
                let text = render::quality::tidy(&report, args.max_diagnostics as usize);
                let changed = std::mem::take(&mut report.changed);
                let replacements: Vec<u64> = changed.iter().map(|c| count(c.replacements)).collect();
                let paths: Vec<String> = changed.iter().map(|c| c.path.to_string()).collect();
                let links = diffs(&ws, changed.into_iter().map(|c| c.diff).collect(), false).await;
                let changed = paths
                    .into_iter()
                    .zip(replacements)
                    .zip(links)
                    .map(|((path, replacements), resources)| ChangedFile { path, replacements, resources })
                    .collect();
                let value = QualityTidyResult {
                    path: report.path.to_string(),
                    configurations: report.configurations,
                    files_total: count(report.files_total),
                    files_checked: count(report.files_checked),
                    files: report.files,
                    more_diagnostics: count(report.more_diagnostics),
                    checks: report.checks,
                    changed,
                    failures: report.failures,
                };
                Ok(ToolOutput::new(text, value))
            }
        },
    );
    let (ws, service) = (workspace.clone(), quality.clone());
    registry.add(
        ToolSpec {
            name: "quality_format",
            title: "clang-format",
            description: "clang-format check of a file or tree with per-file diffs; `apply` writes the result.",
            annotations: Annotations::FsWrite,
            widget: Widget::QualityFormat,
            icon: Icon::WorkspaceEdit,
        },
        move |args: QualityFormatArgs, call: Call| {
            let (ws, service) = (ws.clone(), service.clone());
            async move {
                let request = FormatRequest {
                    path: path_argument(&ws, "path", &args.path)?,
                    style: args.style.filter(|style| !style.trim().is_empty()),
                    apply: args.apply,
                    toolset: args.toolset,
                    max_files: args.max_files as usize,
                };
                let style = request.style.clone();
                let mut report = service.format(request, &call).await.map_err(failure)?;
                let text = render::quality::format(&report, args.apply, args.max_files as usize, style.as_deref());
                let files = std::mem::take(&mut report.files);
                let mut entries = Vec::with_capacity(files.len());
                let mut file_diffs = Vec::with_capacity(files.len());
                for file in files {
                    entries.push(FormattedFile {
                        path: file.path.to_string(),
                        replacements: count(file.replacements),
                        incomplete: file.incomplete,
                        applied: file.applied,
                        fallback: file.fallback,
                        resources: ResourceLinks::new(),
                    });
                    file_diffs.push(file.diff);
                }
                for (entry, links) in entries.iter_mut().zip(diffs(&ws, file_diffs, true).await) {
                    entry.resources = links;
                }
                let links = diff_links(&entries);
                let value = QualityFormatResult {
                    path: report.path.to_string(),
                    toolset: report.toolset,
                    apply: args.apply,
                    files_total: count(report.files_total),
                    files_checked: count(report.files_checked),
                    formatted: count(report.formatted),
                    files: entries,
                    more_files: count(report.more_files),
                    fallback_files: count(report.fallback_files),
                    failures: report.failures,
                };
                Ok(ToolOutput::new(text, value).with_links(links))
            }
        },
    );
}

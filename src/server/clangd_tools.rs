//! The clangd tools: `clangd_configurations`, `clangd_diagnostics`, `clangd_hover`,
//! `clangd_definition`, `clangd_references`, `clangd_document_symbols` and
//! `clangd_workspace_symbols` (INTERFACE.md §7). The value types are `clangd::model`'s wire
//! contracts; this file adds the arguments and the `{"result": [...]}` wrappers.
//!
//! Architecture invariant: `configurations` omitted or `[]` selects every usable configuration;
//! identical answers arrive merged, with their configuration ids listed; any failing configuration,
//! a timeout or an unknown id is a tool error, never a partial result.

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::call::Call;
use crate::clangd::model::{
    CompilationContext, DiagnosticsResult, DocumentSymbolsResult, HoverResult, LocationsResult, Position,
    WorkspaceSymbolsResult,
};
use crate::clangd::{self, ClangdService};
use crate::render;
use crate::server::registry::{Annotations, Registry, ToolError, ToolOutput, ToolSpec, error_chain};
use crate::widgets::{Icon, Widget};
use crate::workspace::path::QualifiedPath;

pub fn register(registry: &mut Registry, clangd: &Arc<ClangdService>) {
    register_configurations(registry, clangd);
    register_diagnostics(registry, clangd);
    register_hover(registry, clangd);
    register_definition(registry, clangd);
    register_references(registry, clangd);
    register_document_symbols(registry, clangd);
    register_workspace_symbols(registry, clangd);
}

// ---------------------------------------------------------------------------------------------
// Arguments.

fn default_timeout() -> f64 {
    clangd::DEFAULT_TIMEOUT.as_secs_f64()
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClangdConfigurationsArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClangdFileArgs {
    /// C/C++ file: `project/…` or `storage/…`.
    pub path: String,
    /// Configuration ids; omitted or [] = all.
    #[serde(default)]
    pub configurations: Option<Vec<String>>,
    /// Seconds for the whole call.
    #[serde(default = "default_timeout")]
    pub timeout: f64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClangdPositionArgs {
    /// C/C++ file: `project/…` or `storage/…`.
    pub path: String,
    pub position: Position,
    /// Configuration ids; omitted or [] = all.
    #[serde(default)]
    pub configurations: Option<Vec<String>>,
    /// Seconds for the whole call.
    #[serde(default = "default_timeout")]
    pub timeout: f64,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClangdReferencesArgs {
    /// C/C++ file: `project/…` or `storage/…`.
    pub path: String,
    pub position: Position,
    /// Include the declaration itself.
    #[serde(default = "yes")]
    pub include_declaration: bool,
    /// Configuration ids; omitted or [] = all.
    #[serde(default)]
    pub configurations: Option<Vec<String>>,
    /// Seconds for the whole call.
    #[serde(default = "default_timeout")]
    pub timeout: f64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClangdWorkspaceSymbolsArgs {
    /// Symbol name or fragment.
    pub query: String,
    /// Configuration ids; omitted or [] = all.
    #[serde(default)]
    pub configurations: Option<Vec<String>>,
    /// Seconds for the whole call.
    #[serde(default = "default_timeout")]
    pub timeout: f64,
}

// ---------------------------------------------------------------------------------------------
// Results.

#[derive(Debug, Serialize, JsonSchema)]
pub struct ClangdConfigurationsResult {
    /// Contexts with a compilation database and clangd, by id.
    pub result: Vec<CompilationContext>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ClangdDiagnosticsResult {
    pub result: Vec<DiagnosticsResult>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ClangdHoverResult {
    pub result: Vec<HoverResult>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ClangdLocationsResult {
    pub result: Vec<LocationsResult>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ClangdDocumentSymbolsResult {
    pub result: Vec<DocumentSymbolsResult>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ClangdWorkspaceSymbolsResult {
    pub result: Vec<WorkspaceSymbolsResult>,
}

// ---------------------------------------------------------------------------------------------
// Argument checks.

fn timeout(secs: f64) -> Result<Duration, ToolError> {
    let invalid =
        || ToolError::User("Invalid argument `timeout`: it must be a finite number of seconds above 0.".into());
    if !secs.is_finite() || secs <= 0.0 {
        return Err(invalid());
    }
    Duration::try_from_secs_f64(secs).map_err(|_| invalid())
}

/// A managed path (`root/…` is refused: clangd analyses project and storage files).
fn path(input: &str) -> Result<QualifiedPath, ToolError> {
    let invalid =
        |err: crate::workspace::Error| ToolError::User(format!("Invalid argument `path`: {}", error_chain(&err)));
    let path = QualifiedPath::parse(input)
        .map_err(|reason| invalid(crate::workspace::Error::InvalidPath { input: input.to_owned(), reason }))?;
    if !path.is_managed() {
        return Err(invalid(crate::workspace::Error::ExternalNotAllowed { path }));
    }
    Ok(path)
}

fn failure(err: &clangd::Error) -> ToolError {
    ToolError::user(err)
}

fn spec(name: &'static str, title: &'static str, description: &'static str) -> ToolSpec {
    ToolSpec {
        name,
        title,
        description,
        annotations: Annotations::Analysis,
        widget: Widget::ClangdResult,
        icon: Icon::Clangd,
    }
}

// ---------------------------------------------------------------------------------------------
// Tools.

fn register_configurations(registry: &mut Registry, clangd: &Arc<ClangdService>) {
    let service = clangd.clone();
    registry.add(
        spec(
            "clangd_configurations",
            "Clangd configurations",
            "List the CMake configurations clangd can analyse with (a compilation database and clangd in the \
             toolset; cmake_configure creates them).",
        ),
        move |_args: ClangdConfigurationsArgs, call: Call| {
            let service = service.clone();
            async move {
                call.progress.report(0.0, None, "Finding clangd configurations");
                let contexts = service.configurations().await;
                call.progress.report(1.0, Some(1.0), "Completed configuration discovery");
                Ok(ToolOutput::new(
                    render::clangd::configurations(&contexts),
                    ClangdConfigurationsResult { result: contexts },
                ))
            }
        },
    );
}

fn register_diagnostics(registry: &mut Registry, clangd: &Arc<ClangdService>) {
    let service = clangd.clone();
    registry.add(
        spec(
            "clangd_diagnostics",
            "Clangd diagnostics",
            "Compiler diagnostics of the current text of one C/C++ file, per configuration.",
        ),
        move |args: ClangdFileArgs, call: Call| {
            let service = service.clone();
            async move {
                let path = path(&args.path)?;
                let timeout = timeout(args.timeout)?;
                let selection = args.configurations.unwrap_or_default();
                let result = service.diagnostics(&path, &selection, timeout, &call).await.map_err(|e| failure(&e))?;
                let text = render::clangd::diagnostics(&path.to_string(), &result);
                Ok(ToolOutput::new(text, ClangdDiagnosticsResult { result }))
            }
        },
    );
}

fn register_hover(registry: &mut Registry, clangd: &Arc<ClangdService>) {
    let service = clangd.clone();
    registry.add(
        spec("clangd_hover", "Clangd hover", "Type, signature and documentation of the symbol at a position."),
        move |args: ClangdPositionArgs, call: Call| {
            let service = service.clone();
            async move {
                let path = path(&args.path)?;
                let timeout = timeout(args.timeout)?;
                let selection = args.configurations.unwrap_or_default();
                let result =
                    service.hover(&path, args.position, &selection, timeout, &call).await.map_err(|e| failure(&e))?;
                let text = render::clangd::hover(&path.to_string(), args.position, &result);
                Ok(ToolOutput::new(text, ClangdHoverResult { result }))
            }
        },
    );
}

fn register_definition(registry: &mut Registry, clangd: &Arc<ClangdService>) {
    let service = clangd.clone();
    registry.add(
        spec(
            "clangd_definition",
            "Clangd definition",
            "Where the symbol at a position is defined, with source previews.",
        ),
        move |args: ClangdPositionArgs, call: Call| {
            let service = service.clone();
            async move {
                let path = path(&args.path)?;
                let timeout = timeout(args.timeout)?;
                let selection = args.configurations.unwrap_or_default();
                let result = service
                    .definition(&path, args.position, &selection, timeout, &call)
                    .await
                    .map_err(|e| failure(&e))?;
                let text = render::clangd::locations("Definitions", &path.to_string(), args.position, &result);
                Ok(ToolOutput::new(text, ClangdLocationsResult { result }))
            }
        },
    );
}

fn register_references(registry: &mut Registry, clangd: &Arc<ClangdService>) {
    let service = clangd.clone();
    registry.add(
        spec(
            "clangd_references",
            "Clangd references",
            "Every reference to the symbol at a position, with source previews.",
        ),
        move |args: ClangdReferencesArgs, call: Call| {
            let service = service.clone();
            async move {
                let path = path(&args.path)?;
                let timeout = timeout(args.timeout)?;
                let selection = args.configurations.unwrap_or_default();
                let result = service
                    .references(&path, args.position, args.include_declaration, &selection, timeout, &call)
                    .await
                    .map_err(|e| failure(&e))?;
                let text = render::clangd::locations("References", &path.to_string(), args.position, &result);
                Ok(ToolOutput::new(text, ClangdLocationsResult { result }))
            }
        },
    );
}

fn register_document_symbols(registry: &mut Registry, clangd: &Arc<ClangdService>) {
    let service = clangd.clone();
    registry.add(
        spec("clangd_document_symbols", "Clangd document symbols", "The outline of one C/C++ file."),
        move |args: ClangdFileArgs, call: Call| {
            let service = service.clone();
            async move {
                let path = path(&args.path)?;
                let timeout = timeout(args.timeout)?;
                let selection = args.configurations.unwrap_or_default();
                let result =
                    service.document_symbols(&path, &selection, timeout, &call).await.map_err(|e| failure(&e))?;
                let text = render::clangd::document_symbols(&path.to_string(), &result);
                Ok(ToolOutput::new(text, ClangdDocumentSymbolsResult { result }))
            }
        },
    );
}

fn register_workspace_symbols(registry: &mut Registry, clangd: &Arc<ClangdService>) {
    let service = clangd.clone();
    registry.add(
        spec(
            "clangd_workspace_symbols",
            "Clangd workspace symbols",
            "Find symbols by name in every file clangd indexed.",
        ),
        move |args: ClangdWorkspaceSymbolsArgs, call: Call| {
            let service = service.clone();
            async move {
                let timeout = timeout(args.timeout)?;
                let selection = args.configurations.unwrap_or_default();
                let result = service
                    .workspace_symbols(&args.query, &selection, timeout, &call)
                    .await
                    .map_err(|e| failure(&e))?;
                let text = render::clangd::workspace_symbols(&args.query, &result);
                Ok(ToolOutput::new(text, ClangdWorkspaceSymbolsResult { result }))
            }
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_must_be_finite_and_positive() {
        assert_eq!(timeout(30.0).unwrap(), Duration::from_secs(30));
        assert_eq!(timeout(0.25).unwrap(), Duration::from_millis(250));
        for bad in [0.0, -1.0, f64::INFINITY, f64::NAN, 1e300] {
            assert!(timeout(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn paths_must_be_managed() {
        assert_eq!(path("src/a.cpp").unwrap().to_string(), "project/src/a.cpp");
        let message = |input| match path(input) {
            Err(ToolError::User(message)) => message,
            other => panic!("expected a user error, got {other:?}"),
        };
        assert!(
            message("root/usr/include/stdio.h")
                .starts_with("Invalid argument `path`: `root/usr/include/stdio.h` is outside")
        );
        assert!(message("/abs").starts_with("Invalid argument `path`: `/abs` is not a workspace path"));
    }
}

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
use crate::clangd::analysis::Navigation;
use crate::clangd::model::Position;
use crate::clangd::{self, ClangdService, Scope};
use crate::render;
use crate::server::registry::{Annotations, Registry, ToolError, ToolOutput, ToolSpec, error_chain};
use crate::widgets::{Icon, Widget};
use crate::workspace::path::QualifiedPath;

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
    /// Default 40.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Configuration ids; omitted or [] = all.
    #[serde(default)]
    pub configurations: Option<Vec<String>>,
    /// Seconds for the whole call.
    #[serde(default = "default_timeout")]
    pub timeout: f64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClangdDocumentSymbolsArgs {
    /// C/C++ file: `project/…` or `storage/…`.
    pub path: String,
    /// Most symbols; default 300.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Nesting levels; default all.
    #[serde(default)]
    pub depth: Option<u32>,
    /// Configuration ids; omitted or [] = all.
    #[serde(default)]
    pub configurations: Option<Vec<String>>,
    /// Seconds for the whole call.
    #[serde(default = "default_timeout")]
    pub timeout: f64,
}

/// Default `limit` of `clangd_references`: 40 locations with 7-line previews stay under ~16 KB.
pub const REFERENCES_LIMIT: u32 = 40;
/// Default `limit` of `clangd_workspace_symbols`.
pub const WORKSPACE_SYMBOLS_LIMIT: u32 = 40;
/// Default `limit` of `clangd_document_symbols`: 300 outline lines stay under ~16 KB.
pub const SYMBOLS_LIMIT: u32 = 300;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClangdWorkspaceSymbolsArgs {
    /// Symbol name or fragment.
    pub query: String,
    /// Default 40.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Configuration ids; omitted or [] = all.
    #[serde(default)]
    pub configurations: Option<Vec<String>>,
    /// Seconds for the whole call.
    #[serde(default = "default_timeout")]
    pub timeout: f64,
}

// ---------------------------------------------------------------------------------------------
// Results.

/// The `{"result": [...]}` wrapper of every clangd tool.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ClangdResult<T> {
    /// One entry per distinct answer (configurations listed inside), or per context.
    pub result: Vec<T>,
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

/// The selection and limit every analysis takes.
struct Limits {
    configurations: Vec<String>,
    timeout: Duration,
}

impl Limits {
    fn check(configurations: Option<Vec<String>>, secs: f64) -> Result<Limits, ToolError> {
        Ok(Limits { configurations: configurations.unwrap_or_default(), timeout: timeout(secs)? })
    }

    fn scope<'a>(&'a self, call: &'a Call) -> Scope<'a> {
        Scope { configurations: &self.configurations, timeout: self.timeout, call }
    }
}

fn failure(err: clangd::Error) -> ToolError {
    ToolError::user(&err)
}

/// Registers one clangd tool: its spec, and a body that gets the service, the arguments and the call.
fn add<A, R, F, Fut>(
    registry: &mut Registry,
    clangd: &Arc<ClangdService>,
    (name, title, description): (&'static str, &'static str, &'static str),
    body: F,
) where
    A: serde::de::DeserializeOwned + JsonSchema + 'static,
    R: Serialize + JsonSchema + 'static,
    F: Fn(Arc<ClangdService>, A, Call) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<ToolOutput<R>, ToolError>> + Send + 'static,
{
    let service = clangd.clone();
    let spec = ToolSpec {
        name,
        title,
        description,
        annotations: Annotations::Analysis,
        widget: Widget::ClangdResult,
        icon: Icon::Clangd,
    };
    registry.add(spec, move |args: A, call: Call| body(service.clone(), args, call));
}

// ---------------------------------------------------------------------------------------------
// Tools.

pub fn register(registry: &mut Registry, clangd: &Arc<ClangdService>) {
    add(
        registry,
        clangd,
        (
            "clangd_configurations",
            "Clangd configurations",
            "List the CMake configurations clangd can analyse with (a compilation database and clangd in the \
             toolset; cmake_configure creates them).",
        ),
        |service, _args: ClangdConfigurationsArgs, call| async move {
            call.progress.report(0.0, None, "Finding clangd configurations");
            let contexts = service.configurations().await;
            call.progress.report(1.0, Some(1.0), "Completed configuration discovery");
            let text = render::clangd::configurations(&contexts, &service.unavailable());
            Ok(ToolOutput::new(text, ClangdResult { result: contexts }))
        },
    );
    add(
        registry,
        clangd,
        (
            "clangd_diagnostics",
            "Clangd diagnostics",
            "Compiler diagnostics of the current text of one C/C++ file, per configuration.",
        ),
        |service, args: ClangdFileArgs, call| async move {
            let (path, limits) = (path(&args.path)?, Limits::check(args.configurations, args.timeout)?);
            let result = service.diagnostics(&path, limits.scope(&call)).await.map_err(failure)?;
            let text = render::clangd::diagnostics(&path.to_string(), &result);
            Ok(ToolOutput::new(text, ClangdResult { result }))
        },
    );
    add(
        registry,
        clangd,
        ("clangd_hover", "Clangd hover", "Type, signature and documentation of the symbol at a position."),
        |service, args: ClangdPositionArgs, call| async move {
            let (path, limits) = (path(&args.path)?, Limits::check(args.configurations, args.timeout)?);
            let result = service.hover(&path, args.position, limits.scope(&call)).await.map_err(failure)?;
            let text = render::clangd::hover(&path.to_string(), args.position, &result);
            Ok(ToolOutput::new(text, ClangdResult { result }))
        },
    );
    add(
        registry,
        clangd,
        ("clangd_definition", "Clangd definition", "Where the symbol at a position is defined, with source previews."),
        |service, args: ClangdPositionArgs, call| async move {
            let (path, limits) = (path(&args.path)?, Limits::check(args.configurations, args.timeout)?);
            let navigation = Navigation::Definition;
            let result =
                service.locations(&path, args.position, navigation, limits.scope(&call)).await.map_err(failure)?;
            let text = render::clangd::locations("Definitions", &path.to_string(), args.position, &result);
            Ok(ToolOutput::new(text, ClangdResult { result }))
        },
    );
    add(
        registry,
        clangd,
        (
            "clangd_references",
            "Clangd references",
            "Every reference to the symbol at a position, with source previews.",
        ),
        |service, args: ClangdReferencesArgs, call| async move {
            let (path, limits) = (path(&args.path)?, Limits::check(args.configurations, args.timeout)?);
            let navigation = Navigation::References { include_declaration: args.include_declaration };
            let mut result =
                service.locations(&path, args.position, navigation, limits.scope(&call)).await.map_err(failure)?;
            let limit = args.limit.unwrap_or(REFERENCES_LIMIT) as usize;
            result.iter_mut().for_each(|answer| answer.limit(limit));
            let text = render::clangd::locations("References", &path.to_string(), args.position, &result);
            Ok(ToolOutput::new(text, ClangdResult { result }))
        },
    );
    add(
        registry,
        clangd,
        ("clangd_document_symbols", "Clangd document symbols", "The outline of one C/C++ file."),
        |service, args: ClangdDocumentSymbolsArgs, call| async move {
            let (path, limits) = (path(&args.path)?, Limits::check(args.configurations, args.timeout)?);
            if args.depth == Some(0) {
                return Err(ToolError::User("Invalid argument `depth`: it must be at least 1.".into()));
            }
            let mut result = service.document_symbols(&path, limits.scope(&call)).await.map_err(failure)?;
            let limit = args.limit.unwrap_or(SYMBOLS_LIMIT) as usize;
            result.iter_mut().for_each(|answer| answer.limit(limit, args.depth));
            let text = render::clangd::document_symbols(&path.to_string(), &result);
            Ok(ToolOutput::new(text, ClangdResult { result }))
        },
    );
    add(
        registry,
        clangd,
        ("clangd_workspace_symbols", "Clangd workspace symbols", "Find symbols by name in every file clangd indexed."),
        |service, args: ClangdWorkspaceSymbolsArgs, call| async move {
            let limits = Limits::check(args.configurations, args.timeout)?;
            let mut result = service.workspace_symbols(&args.query, limits.scope(&call)).await.map_err(failure)?;
            let limit = args.limit.unwrap_or(WORKSPACE_SYMBOLS_LIMIT) as usize;
            result.iter_mut().for_each(|answer| answer.limit(limit));
            let text = render::clangd::workspace_symbols(&args.query, &result);
            Ok(ToolOutput::new(text, ClangdResult { result }))
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

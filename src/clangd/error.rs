//! The clangd service's errors. Messages are lowercase fragments naming qualified paths.

use std::sync::Arc;
use std::time::Duration;

use super::standing::Unavailable;
use crate::lsp;
use crate::process;
use crate::workspace::path::QualifiedPath;

/// Errors of the clangd service.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no clangd configuration is available: {0}")]
    NoConfiguration(Unavailable),
    #[error("invalid argument `configurations`: unknown configuration `{id}`; available: {available}")]
    UnknownConfiguration { id: String, available: String },
    #[error(
        "invalid argument `path`: `{path}` is not a C/C++ source or header (no C/C++ extension, no C/C++ mode line, \
         in no compilation database, and no translation unit clangd analysed includes it)"
    )]
    NotCpp { path: QualifiedPath },
    #[error(
        "invalid argument `position`: line {line}, character {character} is outside `{path}` ({reason}); lines are \
         one-based, characters zero-based code points"
    )]
    PositionOutside { path: QualifiedPath, line: u32, character: u32, reason: String },
    #[error(transparent)]
    Workspace(#[from] crate::workspace::Error),
    #[error("clangd could not be started")]
    Start(#[source] process::Error),
    #[error(transparent)]
    Lsp(lsp::Error),
    #[error("earlier analyses of `{path}` were still running when the time was up")]
    Busy { path: String },
    #[error("clangd published no diagnostics for `{path}` in time")]
    NoDiagnostics { path: String },
    #[error("clangd of configuration `{id}` did not start in time")]
    StartTimeout { id: String },
    #[error("clangd of configuration `{id}` is not running: {reason}")]
    SessionFailed { id: String, reason: String },
    #[error("clangd of configuration `{id}` did not start")]
    StartFailed {
        id: String,
        #[source]
        source: Arc<Error>,
    },
    #[error("configuration `{id}`: {source}")]
    Configuration {
        id: String,
        #[source]
        source: Box<Error>,
    },
    #[error("clangd did not finish within {} s; pass a larger `timeout`", .0.as_secs_f64())]
    Timeout(Duration),
    #[error("the analysis was cancelled")]
    Cancelled,
}

impl Error {
    pub(super) fn in_configuration(self, id: &str) -> Error {
        match self {
            Error::Configuration { .. }
            | Error::SessionFailed { .. }
            | Error::StartFailed { .. }
            | Error::StartTimeout { .. } => self,
            other => Error::Configuration { id: id.to_owned(), source: Box::new(other) },
        }
    }
}

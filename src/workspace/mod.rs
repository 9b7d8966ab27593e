//! The workspace service: qualified paths, file reads, listings and searches, and the immutable
//! result store.
//!
//! Architecture invariant: this module knows nothing about MCP, processes or other services; other
//! services plug in through the hooks it defines (result store now; mutation observers and
//! protected paths with the mutation side).
//! Architecture invariant: operations are synchronous; callers run them on blocking threads.
//! Reads share the operation lock; mutations take it exclusively.

pub mod find;
pub mod info;
pub mod path;
pub mod read;
pub mod results;
pub mod search;
pub mod text_search;
pub mod tree;

use std::sync::Arc;

use parking_lot::{RwLock, RwLockReadGuard};

use path::{LinkPolicy, PathSyntaxError, QualifiedPath, ResolveError, Resolved, Roots};
use results::ResultStore;

/// Errors of workspace operations. Messages name qualified paths, never host paths of managed files.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("`{input}` is not a workspace path: {reason}")]
    InvalidPath { input: String, reason: PathSyntaxError },
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    #[error("`{path}` is not a regular file")]
    NotAFile { path: QualifiedPath },
    #[error("`{path}` is not a directory")]
    NotADirectory { path: QualifiedPath },
    #[error("`{path}` is neither a regular file nor a directory")]
    NotFileOrDirectory { path: QualifiedPath },
    #[error("the file pattern is empty")]
    EmptyPattern,
    #[error("`{pattern}` is not a valid file pattern: {reason}")]
    InvalidPattern { pattern: String, reason: String },
    #[error("`{path}` is not UTF-8 text")]
    NotUtf8 { path: QualifiedPath },
    #[error("`{path}` is binary (it contains NUL bytes)")]
    Binary { path: QualifiedPath },
    #[error("`{path}` is outside the managed roots; only reading a file is allowed there")]
    ExternalNotAllowed { path: QualifiedPath },
    #[error("failed to read `{path}`: {source}")]
    Io {
        path: QualifiedPath,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot search `{path}`: {source}")]
    Search {
        path: QualifiedPath,
        #[source]
        source: search::SearchError,
    },
    #[error("the operation was cancelled")]
    Cancelled,
}

impl Error {
    pub fn io(path: &QualifiedPath, source: std::io::Error) -> Error {
        Error::Io { path: path.clone(), source }
    }
}

/// The workspace service. Shared by `Arc`; all methods take `&self`.
pub struct WorkspaceService {
    roots: Roots,
    lock: RwLock<()>,
    results: Arc<ResultStore>,
}

impl WorkspaceService {
    pub fn new(roots: Roots) -> WorkspaceService {
        WorkspaceService { roots, lock: RwLock::new(()), results: Arc::new(ResultStore::default()) }
    }

    pub fn roots(&self) -> &Roots {
        &self.roots
    }

    pub fn results(&self) -> &Arc<ResultStore> {
        &self.results
    }

    /// Parses user input into a qualified path.
    pub fn parse(&self, input: &str) -> Result<QualifiedPath, Error> {
        QualifiedPath::parse(input).map_err(|reason| Error::InvalidPath { input: input.to_owned(), reason })
    }

    /// Parses user input that must name a managed location (`project/` or `storage/`).
    pub fn parse_managed(&self, input: &str) -> Result<QualifiedPath, Error> {
        let path = self.parse(input)?;
        if !path.is_managed() {
            return Err(Error::ExternalNotAllowed { path });
        }
        Ok(path)
    }

    /// Shared access for reads.
    pub(crate) fn read_lock(&self) -> RwLockReadGuard<'_, ()> {
        self.lock.read()
    }

    pub(crate) fn resolve_existing(&self, path: &QualifiedPath, policy: LinkPolicy) -> Result<Resolved, Error> {
        Ok(self.roots.resolve_existing(path, policy)?)
    }
}

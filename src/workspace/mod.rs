//! The workspace service: qualified paths, file reads, listings and searches, and the immutable
//! result store.
//!
//! Architecture invariant: this module knows nothing about MCP, processes or other services; other
//! services plug in through the hooks it defines: the result store, mutation observers
//! (`observer.rs`), result providers (`provider.rs`) and protected paths (`protect.rs`).
//! Architecture invariant: operations are synchronous; callers run them on blocking threads.
//! Reads share the operation lock; mutations take it exclusively, and observers are notified
//! before it is released.
//! Architecture invariant: mutations never follow a link: they walk from a root directory handle
//! one component at a time (`fsat.rs`) and act relative to the parent's handle.

pub mod delete;
pub mod diff;
pub mod edit;
pub mod find;
pub mod fsat;
pub mod info;
pub mod journal;
pub mod mkdir;
pub mod moves;
pub mod mutate;
pub mod observer;
pub mod opened;
pub mod path;
pub mod path_notes;
pub mod protect;
pub mod provider;
pub mod read;
pub mod results;
pub mod search;
pub mod text_search;
pub mod tree;
pub mod write;

use std::sync::Arc;

use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use observer::{Mutation, MutationObserver};
use path::{Area, LinkPolicy, PathSyntaxError, QualifiedPath, ResolveError, Resolved, Roots};
use protect::ProtectedPaths;
use provider::ResultProvider;
use results::ResultStore;

/// Errors of workspace operations. Messages name qualified paths, never host paths of managed files.
fn crlf_note(crlf: bool) -> &'static str {
    if crlf { " (the file uses CRLF line endings)" } else { "" }
}

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
    /// Wraps an error caused by one tool argument, naming it.
    #[error("invalid argument `{argument}`")]
    Argument {
        argument: &'static str,
        #[source]
        source: Box<Error>,
    },
    #[error("`{path}` is protected by {owner}: it stays readable but cannot be changed through the workspace tools")]
    Protected { path: QualifiedPath, owner: &'static str },
    #[error("`{path}` contains `{protected}`, which is protected by {owner}; it can be neither moved nor deleted")]
    ContainsProtected { path: QualifiedPath, protected: QualifiedPath, owner: &'static str },
    #[error("`{path}` is a workspace root; it can be neither moved nor deleted")]
    AreaRoot { path: QualifiedPath },
    #[error("`{path}` contains the storage root; it can be neither moved nor deleted")]
    ContainsStorage { path: QualifiedPath },
    #[error("the parent directory `{parent}` does not exist; create it first with workspace_mkdir")]
    MissingParent { parent: QualifiedPath },
    #[error("`{path}` is a link; links are never written, moved or deleted through the workspace tools")]
    IsLink { path: QualifiedPath },
    #[error(
        "`{path}` has {links} hard links; a file with more than one name may be shared with a location outside \
         the workspace, so it is not changed"
    )]
    HardLinked { path: QualifiedPath, links: u64 },
    #[error("`{path}` is a FIFO, socket or device; only regular files and directories can be changed")]
    SpecialFile { path: QualifiedPath },
    #[error("`{path}` is a directory")]
    IsADirectory { path: QualifiedPath },
    #[error("`{path}` already exists")]
    AlreadyExists { path: QualifiedPath },
    #[error("`{path}` is a directory that is not empty; pass `recursive: true` to delete it with everything in it")]
    DirectoryNotEmpty { path: QualifiedPath },
    #[error("`{path}` contains the link `{link}`; a tree containing links is refused whole and nothing was changed")]
    TreeContainsLink { path: QualifiedPath, link: String },
    #[error(
        "`{path}` contains `{file}`, which has {links} hard links; a tree containing links is refused whole and \
         nothing was changed"
    )]
    TreeContainsHardLink { path: QualifiedPath, file: String, links: u64 },
    #[error("`{to}` lies inside `{from}`; a directory cannot be moved into itself")]
    IntoItself { from: QualifiedPath, to: QualifiedPath },
    #[error("`{to}` is not in the same root as `{from}`; moves stay within one root")]
    DifferentAreas { from: QualifiedPath, to: QualifiedPath },
    #[error("the text to replace is empty")]
    EmptyOldText,
    #[error("it does not occur in `{path}`{}; nothing was changed", crlf_note(*.crlf))]
    TextNotFound { path: QualifiedPath, crlf: bool },
    #[error(
        "it occurs {count} times in `{path}` ({lines}); pass `replace_all: true` to replace every occurrence, or \
         include more surrounding text so that it occurs once; nothing was changed"
    )]
    AmbiguousText { path: QualifiedPath, count: u64, lines: String },
    #[error("`{path}` changed while the operation ran (another program moved or replaced it); it was not changed")]
    Changed { path: QualifiedPath },
    #[error(transparent)]
    Journal(#[from] journal::JournalError),
    #[error("failed to {action} `{path}`: {source}")]
    Mutate {
        action: &'static str,
        path: QualifiedPath,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    pub fn io(path: &QualifiedPath, source: std::io::Error) -> Error {
        // An open that a swapped link redirected: reported as the link it met.
        if opened::is_misplaced(&source) {
            return Error::Resolve(ResolveError::LinkLeavesRoots { path: path.clone() });
        }
        Error::Io { path: path.clone(), source }
    }

    /// Attributes this error to the tool argument `argument`, unless it is an I/O failure or a
    /// cancellation, which no argument caused.
    pub fn for_argument(self, argument: &'static str) -> Error {
        match self {
            Error::Io { .. }
            | Error::Mutate { .. }
            | Error::Cancelled
            | Error::Changed { .. }
            | Error::Argument { .. }
            | Error::Journal(_)
            | Error::Resolve(ResolveError::Io { .. }) => self,
            other => Error::Argument { argument, source: Box::new(other) },
        }
    }

    pub(crate) fn mutate(action: &'static str, path: &QualifiedPath, source: std::io::Error) -> Error {
        Error::Mutate { action, path: path.clone(), source }
    }
}

/// Who protects `project/.git`.
pub const VERSION_CONTROL: &str = "version control";

/// The workspace service. Shared by `Arc`; all methods take `&self`.
pub struct WorkspaceService {
    roots: Roots,
    lock: RwLock<()>,
    results: Arc<ResultStore>,
    observers: RwLock<Vec<Arc<dyn MutationObserver>>>,
    providers: RwLock<Vec<Arc<dyn ResultProvider>>>,
    path_notes: RwLock<Vec<Arc<dyn path_notes::PathNotes>>>,
    protected: ProtectedPaths,
    /// Absolute directories every search and find leaves out unless it starts inside one.
    excluded_dirs: Vec<std::path::PathBuf>,
    journal: Option<Arc<journal::Journal>>,
    /// The project's search index, when it is on (`with_search_index`).
    index: Option<Arc<search::index::SearchIndex>>,
}

impl WorkspaceService {
    /// A service on `roots` with the undo journal at its default size limit. `project/.git`, when
    /// present, is registered as protected.
    pub fn new(roots: Roots) -> WorkspaceService {
        WorkspaceService::with_journal(roots, Some(journal::DEFAULT_LIMIT))
    }

    /// A service on `roots` whose undo journal keeps about `journal_limit` bytes (`None`: no
    /// journal). The journal's directory, `storage/.journal`, is protected.
    pub fn with_journal(roots: Roots, journal_limit: Option<u64>) -> WorkspaceService {
        let protected = ProtectedPaths::default();
        if std::fs::symlink_metadata(roots.project().join(".git")).is_ok() {
            let git = QualifiedPath::area_root(Area::Project).join_name(".git").expect("`.git` is a valid name");
            protected.add(git, VERSION_CONTROL);
        }
        let journal = journal_limit.map(|limit| {
            let dir = QualifiedPath::area_root(Area::Storage).join_name(journal::DIR_NAME).expect("a valid name");
            protected.add(dir, journal::OWNER);
            Arc::new(journal::Journal::new(roots.storage().join(journal::DIR_NAME), limit))
        });
        WorkspaceService {
            journal,
            roots,
            lock: RwLock::new(()),
            results: Arc::new(ResultStore::default()),
            observers: RwLock::new(Vec::new()),
            providers: RwLock::new(Vec::new()),
            path_notes: RwLock::new(Vec::new()),
            protected,
            excluded_dirs: Vec::new(),
            index: None,
        }
    }

    /// The service with directories (absolute, inside the project) that every text search and file
    /// find leaves out unless it starts inside one.
    pub fn with_excluded_dirs(mut self, dirs: Vec<std::path::PathBuf>) -> WorkspaceService {
        self.excluded_dirs = dirs;
        self
    }

    /// The service with the project's search index, built in the background under the storage root
    /// and told about every mutation (`search/index/`).
    pub fn with_search_index(mut self, options: search::index::IndexOptions) -> WorkspaceService {
        let index =
            search::index::SearchIndex::start(self.roots.project().to_path_buf(), self.roots.storage(), options);
        let dir = QualifiedPath::area_root(Area::Storage).join_name(search::index::DIR_NAME).expect("a valid name");
        self.protected.add(dir, search::index::OWNER);
        self.observers.get_mut().push(index.observer());
        self.index = Some(index);
        self
    }

    /// The project's search index, when it is on.
    pub fn search_index(&self) -> Option<&Arc<search::index::SearchIndex>> {
        self.index.as_ref()
    }

    /// The directories searches and finds leave out by default.
    pub fn excluded_dirs(&self) -> &[std::path::PathBuf] {
        &self.excluded_dirs
    }

    /// The undo journal, unless it is off.
    pub fn journal(&self) -> Option<&Arc<journal::Journal>> {
        self.journal.as_ref()
    }

    /// Registers a service to be told about every change (see `observer.rs`).
    pub fn add_observer(&self, observer: Arc<dyn MutationObserver>) {
        self.observers.write().push(observer);
    }

    /// Registers a result provider for reads, writes and edits (see `provider.rs`).
    pub fn add_provider(&self, provider: Arc<dyn ResultProvider>) {
        self.providers.write().push(provider);
    }

    /// Registers a service that adds lines to created, moved and deleted files' results (see
    /// `path_notes.rs`).
    pub fn add_path_notes(&self, notes: Arc<dyn path_notes::PathNotes>) {
        self.path_notes.write().push(notes);
    }

    /// What the registered path-note services say about `change`, in registration order.
    pub fn path_notes(&self, change: path_notes::PathChange<'_>) -> Vec<String> {
        let services = self.path_notes.read().clone();
        services.iter().flat_map(|service| service.notes(change)).collect()
    }

    /// The registered result providers, in registration order.
    pub fn providers(&self) -> Vec<Arc<dyn ResultProvider>> {
        self.providers.read().clone()
    }

    /// The protected-path registry; any service may add to it.
    pub fn protected(&self) -> &ProtectedPaths {
        &self.protected
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

    /// Exclusive access for mutations.
    pub(crate) fn write_lock(&self) -> RwLockWriteGuard<'_, ()> {
        self.lock.write()
    }

    /// Tells every observer about `change`. Called with the write lock held; a panicking observer
    /// is logged and does not fail the operation.
    pub(crate) fn notify(&self, change: &Mutation) {
        let observers = self.observers.read().clone();
        for observer in observers {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| observer.mutated(change)));
            if outcome.is_err() {
                tracing::warn!(?change.kind, "a mutation observer panicked");
            }
        }
    }

    pub(crate) fn resolve_existing(&self, path: &QualifiedPath, policy: LinkPolicy) -> Result<Resolved, Error> {
        Ok(self.roots.resolve_existing(path, policy)?)
    }
}

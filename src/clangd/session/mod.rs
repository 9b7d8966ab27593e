//! One clangd process for one compilation context: started through the process service (so it is
//! listed in `processes_overview` with its transcript), spoken to through `lsp::Client`.
//!
//! Every analysis opens the complete current file, collects its answer and hands the document back
//! when done ([`OpenDocument`] does so on drop, so a timeout or a cancelled call too): the session
//! keeps the most recently used documents open (`documents.rs`), so the next analysis of the same
//! text answers from clangd's AST. Analyses of one file in one session take turns; other files run
//! in parallel.
//!
//! clangd loads the compilation database, and starts its background index, only when a file is first
//! opened. So a new session opens (and closes) the first file of the database once, in the
//! background; index-backed requests wait for that warm-up and for the index to go idle
//! ([`Session::index_settled`]), so their answers do not depend on timing. The index is loaded on
//! a thread of its own, and may first report work after the warm-up's diagnostics: the warm-up
//! also waits until clangd has begun indexing once (a bounded wait, for a `.clangd` that turns the
//! background index off), and a progress token counts as work from its `create` on, not only from
//! its `begin`.
//!
//! Architecture invariant: at most `documents::WARM_DOCUMENTS` documents stay open between analyses;
//! a workspace mutation closes all of them but the mutated files' ([`Session::cool_except`]).
//! Architecture invariant: dropping a session stops its process (the `LongLived` handle), and
//! [`Session::shutdown`] tries `shutdown`/`exit` first.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::{broadcast, oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::Error;
use super::convert::{SourceFile, file_uri};
use crate::lsp::{self, Client, PositionEncoding, ResponseError};
use crate::process::{LongLived, ProcessId, ProcessService, Stdin};
use crate::toolchain::{Environment, command_in};

/// How long `initialize` may take.
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a polite shutdown may take before the process is stopped.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(2);

/// What starting a session needs.
#[derive(Debug, Clone)]
pub struct SessionSpec {
    pub context_id: String,
    pub clangd: PathBuf,
    /// The toolset's environment; `None`: the server's own.
    pub environment: Option<Arc<Environment>>,
    /// The directory holding `compile_commands.json`, absolute.
    pub database_dir: PathBuf,
    /// The project root, absolute: clangd's working directory and workspace folder.
    pub project: PathBuf,
}

/// Who waits for the diagnostics of which `(uri, version)`.
type DiagnosticsWaiters = HashMap<(String, i32), oneshot::Sender<Vec<lsp_types::Diagnostic>>>;

/// State the notification handler shares with the session.
struct State {
    /// Waiters for `publishDiagnostics` of `(uri, version)`.
    diagnostics: Mutex<DiagnosticsWaiters>,
    /// Work-done progress clangd has created or begun and not ended, by token, with its title.
    progress: Mutex<HashMap<String, String>>,
    /// Number of entries in `progress`.
    busy: watch::Sender<usize>,
    /// Whether clangd has reported any work yet (the background index starts so).
    worked: watch::Sender<bool>,
    /// Progress messages for the calls that are running.
    messages: broadcast::Sender<String>,
}

struct SessionHandler(Arc<State>);

impl lsp::Handler for SessionHandler {
    fn notification(&self, method: &str, params: Value) {
        let state = &self.0;
        match method {
            "textDocument/publishDiagnostics" => {
                let Ok(params) = serde_json::from_value::<lsp_types::PublishDiagnosticsParams>(params) else {
                    tracing::debug!("clangd sent diagnostics that do not parse");
                    return;
                };
                // Unversioned diagnostics (clangd clears a closed file's) answer nobody.
                let Some(version) = params.version else { return };
                let waiter = state.diagnostics.lock().remove(&(params.uri.as_str().to_owned(), version));
                if let Some(waiter) = waiter {
                    let _ = waiter.send(params.diagnostics);
                }
            }
            "$/progress" => progress(state, &params),
            "window/logMessage" | "window/showMessage" => {
                let message = params.get("message").and_then(Value::as_str).unwrap_or_default();
                tracing::debug!(%message, "clangd");
            }
            _ => {}
        }
    }

    fn request(&self, method: &str, params: Value) -> Result<Value, ResponseError> {
        if method == "window/workDoneProgress/create"
            && let Some(token) = progress_token(&params)
        {
            // Work is pending from here: clangd sends `begin` only after this reply arrives.
            let mut progress = self.0.progress.lock();
            progress.entry(token).or_insert_with(|| "working".to_owned());
            self.0.busy.send_replace(progress.len());
            self.0.worked.send_replace(true);
        }
        lsp::default_reply(method, &params)
    }
}

/// Tracks clangd's work-done progress (the background index) and forwards its messages.
fn progress(state: &State, params: &Value) {
    let Some(token) = progress_token(params) else { return };
    let Some(value) = params.get("value") else { return };
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let message = match value.get("kind").and_then(Value::as_str) {
        Some("begin") => {
            let title = text("title").unwrap_or_else(|| "working".to_owned());
            let message = join(&title, text("message"));
            let mut progress = state.progress.lock();
            progress.insert(token, title);
            state.busy.send_replace(progress.len());
            state.worked.send_replace(true);
            message
        }
        Some("report") => {
            let title = state.progress.lock().get(&token).cloned().unwrap_or_else(|| "working".to_owned());
            join(&title, text("message"))
        }
        Some("end") => {
            let mut progress = state.progress.lock();
            let title = progress.remove(&token).unwrap_or_else(|| "working".to_owned());
            state.busy.send_replace(progress.len());
            join(&title, Some(text("message").unwrap_or_else(|| "done".to_owned())))
        }
        _ => return,
    };
    let _ = state.messages.send(format!("clangd {message}"));
}

/// The `token` of a progress notification or `create` request, as text.
fn progress_token(params: &Value) -> Option<String> {
    match params.get("token")? {
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

fn join(title: &str, message: Option<String>) -> String {
    match message {
        Some(message) if !message.is_empty() => format!("{title}: {message}"),
        _ => title.to_owned(),
    }
}

/// One running clangd.
pub struct Session {
    pub context_id: String,
    client: Client,
    process: LongLived,
    pub encoding: PositionEncoding,
    pub capabilities: lsp_types::ServerCapabilities,
    documents: Arc<Documents>,
    state: Arc<State>,
    warmed: watch::Receiver<bool>,
    warm_up: Mutex<Option<JoinHandle<()>>>,
    /// The last diagnostics of each file (qualified path) with the SHA-256 of the content they are
    /// for: the before-state of the next write or edit of that file.
    remembered: Mutex<HashMap<String, Remembered>>,
}

/// Diagnostics of one content of a file.
#[derive(Clone)]
pub struct Remembered {
    hash: [u8; 32],
    pub diagnostics: Arc<Vec<super::model::Diagnostic>>,
}

fn content_hash(text: &str) -> [u8; 32] {
    use sha2::Digest as _;
    sha2::Sha256::digest(text.as_bytes()).into()
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(task) = self.warm_up.get_mut().take() {
            task.abort();
        }
    }
}

/// The language id clangd gets for a file.
pub fn language_id(path: &Path) -> &'static str {
    match path.extension().and_then(|ext| ext.to_str()) {
        Some("c") => "c",
        Some("m") => "objective-c",
        Some("mm") => "objective-cpp",
        _ => "cpp",
    }
}

fn client_capabilities() -> lsp_types::ClientCapabilities {
    let capabilities = json!({
        "window": { "workDoneProgress": true },
        "workspace": {
            "didChangeWatchedFiles": { "dynamicRegistration": false },
            "symbol": { "symbolKind": { "valueSet": (1..=26).collect::<Vec<u32>>() } }
        },
        "textDocument": {
            "synchronization": { "didSave": false },
            "publishDiagnostics": {
                "relatedInformation": true,
                "versionSupport": true,
                "tagSupport": { "valueSet": [1, 2] },
                "codeDescriptionSupport": true
            },
            "hover": { "contentFormat": ["markdown", "plaintext"] },
            "definition": { "linkSupport": false },
            "references": {},
            "documentSymbol": {
                "hierarchicalDocumentSymbolSupport": true,
                "symbolKind": { "valueSet": (1..=26).collect::<Vec<u32>>() }
            },
            "semanticTokens": {
                "requests": { "full": true },
                "tokenTypes": [],
                "tokenModifiers": [],
                "formats": ["relative"],
                "overlappingTokenSupport": false,
                "multilineTokenSupport": false
            }
        }
    });
    serde_json::from_value(capabilities).expect("the client capabilities are well-formed")
}

impl Session {
    /// Starts clangd for one context and initializes it; the warm-up continues in the background.
    pub async fn start(processes: &ProcessService, spec: &SessionSpec) -> Result<Arc<Session>, Error> {
        let command = command_in(spec.environment.as_deref(), &spec.clangd, &spec.project)
            .arg("-j=2")
            .arg(format!("--compile-commands-dir={}", spec.database_dir.display()))
            .stdin(Stdin::Piped);
        let mut process = processes.spawn_long_lived(command).await.map_err(Error::Start)?;
        let stdin = process.stdin.take().expect("the command asked for a piped stdin");
        let stdout = process.take_stdout();
        let state = Arc::new(State {
            diagnostics: Mutex::new(HashMap::new()),
            progress: Mutex::new(HashMap::new()),
            busy: watch::channel(0).0,
            worked: watch::channel(false).0,
            messages: broadcast::channel(64).0,
        });
        let server = format!("clangd of configuration `{}`", spec.context_id);
        let client = Client::start(server, stdout, stdin, Arc::new(SessionHandler(state.clone())));
        let root = file_uri(&spec.project);
        let name = spec.project.file_name().map_or_else(|| "project".to_owned(), |n| n.to_string_lossy().into_owned());
        #[allow(deprecated)] // clangd 14 still reads `rootUri`.
        let params = lsp_types::InitializeParams {
            process_id: Some(std::process::id()),
            root_uri: Some(root.clone()),
            workspace_folders: Some(vec![lsp_types::WorkspaceFolder { uri: root, name }]),
            capabilities: client_capabilities(),
            client_info: Some(lsp_types::ClientInfo {
                name: "forgemcp".to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            }),
            ..lsp_types::InitializeParams::default()
        };
        let initialized = client.initialize(params, INITIALIZE_TIMEOUT).await.map_err(Error::Lsp)?;
        let documents = Arc::new(Documents::new(client.clone(), state.clone()));
        let (warmed_tx, warmed) = watch::channel(false);
        let session = Arc::new(Session {
            context_id: spec.context_id.clone(),
            client,
            process,
            encoding: initialized.encoding,
            capabilities: initialized.capabilities,
            documents: documents.clone(),
            state,
            warmed,
            warm_up: Mutex::new(None),
            remembered: Mutex::new(HashMap::new()),
        });
        let database = spec.database_dir.join("compile_commands.json");
        let task = tokio::spawn(async move {
            warm_up::warm_up(&documents, &database).await;
            warmed_tx.send_replace(true);
        });
        *session.warm_up.lock() = Some(task);
        Ok(session)
    }

    pub fn process_id(&self) -> ProcessId {
        self.process.id
    }

    pub fn pid(&self) -> u32 {
        self.process.pid
    }

    /// Whether the process runs and the connection is open.
    pub fn is_alive(&self) -> bool {
        self.client.closed_reason().is_none() && self.process.status().is_running()
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Remembers the diagnostics clangd gave for `text` as the content of `path`.
    pub fn remember(&self, path: &str, text: &str, diagnostics: &[super::model::Diagnostic]) {
        let entry = Remembered { hash: content_hash(text), diagnostics: Arc::new(diagnostics.to_vec()) };
        self.remembered.lock().insert(path.to_owned(), entry);
    }

    /// The remembered diagnostics of `path` when they are for exactly `text`.
    pub fn remembered(&self, path: &str, text: &str) -> Option<Arc<Vec<super::model::Diagnostic>>> {
        let hash = content_hash(text);
        self.remembered.lock().get(path).filter(|entry| entry.hash == hash).map(|entry| entry.diagnostics.clone())
    }

    /// Closes the warm documents except those of `kept` (URIs): another file changed, and clangd
    /// would answer an unchanged document from an AST built with the old headers.
    pub fn cool_except(&self, kept: &[String]) {
        self.documents.cool_except(kept);
    }

    /// Forgets every file's diagnostics except those of `kept`: another file changed (a header
    /// can change any file's diagnostics), so only the mutated files' earlier contents stay true.
    pub fn forget_except(&self, kept: &[String]) {
        self.remembered.lock().retain(|path, _| kept.contains(path));
    }

    /// Opens the complete current text of a file; see [`OpenDocument`].
    pub async fn open(&self, file: &SourceFile, deadline: Instant) -> Result<OpenDocument, Error> {
        self.open_text(file, file.lines.text(), deadline).await
    }

    /// Opens `text` as the content of `file` (an earlier content, for edit deltas). clangd splits
    /// lines at LF only, so lone CRs go as LF (same offsets), keeping its lines ours.
    pub async fn open_text(&self, file: &SourceFile, text: &str, deadline: Instant) -> Result<OpenDocument, Error> {
        let language = language_id(&file.abs);
        let text = crate::text::lone_cr_as_lf(text);
        self.documents.open(&file.uri, file.path.to_string(), language, &text, deadline).await
    }

    /// Sends a request that must be answered before `deadline`.
    pub async fn request<R>(&self, params: R::Params, deadline: Instant) -> Result<R::Result, Error>
    where
        R: lsp_types::request::Request,
        R::Params: serde::Serialize,
        R::Result: serde::de::DeserializeOwned,
    {
        let remaining = deadline.saturating_duration_since(Instant::now());
        self.client.request::<R>(params, remaining).await.map_err(Error::Lsp)
    }

    /// Waits until the warm-up finished and clangd reports no work in progress (its background
    /// index is idle), or until `deadline`. Returns whether it settled.
    pub async fn index_settled(&self, deadline: Instant) -> bool {
        let mut warmed = self.warmed.clone();
        let mut busy = self.state.busy.subscribe();
        let settled = async {
            let _ = warmed.wait_for(|warmed| *warmed).await;
            let _ = busy.wait_for(|n| *n == 0).await;
        };
        tokio::time::timeout_at(deadline, settled).await.is_ok()
    }

    /// Progress messages clangd sends from now on.
    pub fn messages(&self) -> broadcast::Receiver<String> {
        self.state.messages.subscribe()
    }

    /// Sends a notification (file changes); never waits.
    pub fn notify<N>(&self, params: N::Params)
    where
        N: lsp_types::notification::Notification,
        N::Params: serde::Serialize,
    {
        if let Err(err) = self.client.notify::<N>(params) {
            tracing::debug!(context = %self.context_id, "notification not sent: {err}");
        }
    }

    /// `shutdown` and `exit`, then the process is stopped if it has not ended by itself.
    pub async fn shutdown(&self) {
        if let Some(task) = self.warm_up.lock().take() {
            task.abort();
        }
        if self.client.closed_reason().is_none() {
            let _ = self.client.shutdown(SHUTDOWN_TIMEOUT).await;
        }
        if tokio::time::timeout(SHUTDOWN_TIMEOUT, self.process.wait()).await.is_err() {
            self.process.stop().await;
        }
    }
}

mod documents;
mod warm_up;

use documents::Documents;
pub use documents::OpenDocument;

#[cfg(test)]
mod tests;

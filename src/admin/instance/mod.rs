//! The server side of the admin panel: the instance's link to its Hub.
//!
//! [`AdminLink::start`] runs in the background, after the stdio transport is up (it never delays
//! `initialize`): it connects to the group's endpoint, starts a detached Hub when nobody answers
//! (the exclusive bind decides between racing Hubs), says `hello`, prints the panel's public address
//! on stderr once, then serves the Hub's requests through the panel's in-process MCP session
//! ([`PanelSession`]) and streams history events. When the link is lost the instance keeps serving
//! stdio, shows as "reconnecting", and rejoins with back-off (starting a new Hub if needed).
//!
//! Architecture invariant: a lost link never replays anything: requests in flight are dropped with
//! the connection, running panel calls finish on their own (their outcome is in the history), and
//! the new Hub reads the history afresh.
//! Architecture invariant: the panel cancels only its own calls; calls of the MCP client are
//! refused.
//! `requests.rs` answers the Hub's requests (history, catalog, status, resources, panel calls).
//!
//! Architecture invariant: stdout is untouched: the startup line and every log go to stderr.

mod requests;

use std::collections::HashMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio::task::{AbortHandle, JoinHandle, JoinSet};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::history::{History, timestamp};
use super::ipc::Endpoint;
use super::protocol::{self, FrameReader, Hello, InstanceEvent, Message, write_message};
use super::session::PanelSession;
use super::settings::StartupSettings;
use crate::process::detached::{DetachedSpec, spawn_detached};
use crate::server::ForgeServer;
use requests::respond;

/// Interval of liveness pings.
pub const PING_INTERVAL: Duration = Duration::from_secs(5);
/// Silence after which a link counts as lost (three missed pings).
pub const LINK_TIMEOUT: Duration = Duration::from_secs(15);
/// Longest wait for one write to the Hub.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// Back-off between connection attempts: from the first to the last value, doubling.
const RETRY_FIRST: Duration = Duration::from_millis(50);
const RETRY_MAX: Duration = Duration::from_secs(2);
/// A new Hub is started at most this often.
const HUB_START_INTERVAL: Duration = Duration::from_secs(5);
/// Room kept in a frame for the envelope of a response.
const RESPONSE_ROOM: usize = 1 << 20;
/// Status probes: the read-only tools whose results make up the status page, when offered
/// (`debug_inspect` without arguments lists the live debug sessions).
pub const STATUS_TOOLS: [&str; 5] =
    ["processes_overview", "toolsets_list", "cmake_profiles", "clangd_configurations", "debug_inspect"];

/// What the instance says about itself.
#[derive(Debug, Clone)]
pub struct InstanceInfo {
    pub instance_id: String,
    pub workspace: PathBuf,
    pub storage: PathBuf,
    pub started_at: DateTime<Utc>,
    /// Startup settings (read-only in the panel).
    pub settings: Value,
}

impl InstanceInfo {
    /// The info of a server started with these settings, with a fresh random instance id.
    pub fn new(startup: &StartupSettings<'_>) -> InstanceInfo {
        InstanceInfo {
            instance_id: random_hex(),
            workspace: startup.workspace_root.to_path_buf(),
            storage: startup.storage_root.to_path_buf(),
            started_at: Utc::now(),
            settings: super::settings::settings(startup),
        }
    }
}

/// 32 random lowercase hex digits.
pub fn random_hex() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        bytes = (Utc::now().timestamp_nanos_opt().unwrap_or_default() as u128 ^ u128::from(std::process::id()))
            .to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// How to start a Hub when none answers.
#[derive(Debug, Clone)]
pub struct HubCommand {
    /// The `forgemcp` binary (normally this process's own executable).
    pub executable: PathBuf,
    pub ipc_name: String,
    pub port: u16,
}

/// Options of the link.
#[derive(Debug, Clone)]
pub struct LinkOptions {
    pub endpoint: Endpoint,
    /// `None`: never start a Hub (tests that run one in-process).
    pub hub_command: Option<HubCommand>,
    /// Print the startup line with the public address on stderr.
    pub announce: bool,
    /// Whether the group is the default one (the startup hint then omits `--admin-ipc`).
    pub default_group: bool,
}

/// What the link task shares with its handle.
struct Shared {
    state: Arc<Mutex<LinkState>>,
    reconnects: Arc<AtomicU32>,
    client: watch::Receiver<Option<String>>,
}

/// The link's state, as the status page and tests see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkState {
    Connecting,
    Connected { public_url: String },
    Reconnecting,
}

struct PanelCall {
    cancel: CancellationToken,
    task: AbortHandle,
}

/// What request handlers share.
struct Ctx {
    info: InstanceInfo,
    history: Arc<History>,
    session: PanelSession,
    state: Arc<Mutex<LinkState>>,
    reconnects: Arc<AtomicU32>,
    panel_calls: Arc<Mutex<HashMap<u64, PanelCall>>>,
    next_tag: AtomicU64,
    /// The MCP client's name and version once it initialized.
    client: watch::Receiver<Option<String>>,
}

impl Drop for Ctx {
    fn drop(&mut self) {
        for (_, call) in self.panel_calls.lock().drain() {
            call.cancel.cancel();
            call.task.abort();
        }
    }
}

/// The running link. Dropping it stops the link task (without saying goodbye); prefer
/// [`leave`](Self::leave).
pub struct AdminLink {
    task: Option<JoinHandle<()>>,
    shutdown: CancellationToken,
    state: Arc<Mutex<LinkState>>,
    reconnects: Arc<AtomicU32>,
    client: watch::Sender<Option<String>>,
}

impl AdminLink {
    /// Installs a new history on `server` (do this before serving MCP, so no call is missed).
    pub fn install_history(server: &ForgeServer) -> Arc<History> {
        let history = Arc::new(History::default());
        server.set_observer(history.clone());
        history
    }

    /// Starts joining in the background; `history` is the one [`install_history`](Self::install_history)
    /// put on `server`.
    pub fn start(server: &ForgeServer, history: Arc<History>, info: InstanceInfo, options: LinkOptions) -> AdminLink {
        let state = Arc::new(Mutex::new(LinkState::Connecting));
        let reconnects = Arc::new(AtomicU32::new(0));
        let shutdown = CancellationToken::new();
        let (client, client_rx) = watch::channel(None);
        let shared = Shared { state: state.clone(), reconnects: reconnects.clone(), client: client_rx };
        let task = tokio::spawn(run(server.clone(), info, options, history, shared, shutdown.clone()));
        AdminLink { task: Some(task), shutdown, state, reconnects, client }
    }

    /// The MCP client initialized: its name and version go to the panel (the instance joined at
    /// start-up, before any client).
    pub fn set_client(&self, client: String) {
        self.client.send_replace(Some(client));
    }

    pub fn state(&self) -> LinkState {
        self.state.lock().clone()
    }

    /// How often the link was lost so far.
    pub fn reconnects(&self) -> u32 {
        self.reconnects.load(Ordering::Relaxed)
    }

    /// Says goodbye to the Hub (so its tab goes at once) and stops the link.
    pub async fn leave(mut self) {
        self.shutdown.cancel();
        if let Some(mut task) = self.task.take()
            && tokio::time::timeout(Duration::from_secs(2), &mut task).await.is_err()
        {
            task.abort();
        }
    }
}

impl Drop for AdminLink {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

async fn run(
    server: ForgeServer,
    info: InstanceInfo,
    options: LinkOptions,
    history: Arc<History>,
    shared: Shared,
    shutdown: CancellationToken,
) {
    let Shared { state, reconnects, client } = shared;
    let session = match PanelSession::start(&server).await {
        Ok(session) => session,
        Err(err) => {
            tracing::warn!("the admin panel is unavailable for this server: {err}");
            return;
        }
    };
    let ctx = Arc::new(Ctx {
        info,
        history,
        session,
        state: state.clone(),
        reconnects: reconnects.clone(),
        panel_calls: Arc::default(),
        next_tag: AtomicU64::new(0),
        client,
    });
    let mut hubs: Vec<JoinHandle<()>> = Vec::new();
    let mut last_hub_start: Option<Instant> = None;
    let mut delay = RETRY_FIRST;
    let mut announced: Option<String> = None;
    let mut warned_unreachable = false;
    loop {
        if shutdown.is_cancelled() {
            break;
        }
        match options.endpoint.connect().await {
            Ok(stream) => {
                delay = RETRY_FIRST;
                warned_unreachable = false;
                let end = serve_connection(&ctx, stream, &shutdown, &options, &mut announced).await;
                ctx.history.set_sink(None);
                ctx.session.elicitations.set_sink(None);
                match end {
                    ConnectionEnd::Shutdown => break,
                    ConnectionEnd::Lost(reason) => {
                        reconnects.fetch_add(1, Ordering::Relaxed);
                        *state.lock() = LinkState::Reconnecting;
                        tracing::warn!("admin Hub link lost ({reason}); reconnecting (this server keeps serving MCP)");
                    }
                    // No session was established (for example a dying Hub's socket still accepted):
                    // just try again.
                    ConnectionEnd::Refused(reason) => {
                        tracing::debug!("admin Hub handshake failed: {reason}");
                        tokio::select! {
                            () = tokio::time::sleep(delay) => {}
                            () = shutdown.cancelled() => break,
                        }
                        delay = (delay * 2).min(RETRY_MAX);
                    }
                }
            }
            Err(err) => {
                let can_start = last_hub_start.is_none_or(|at| at.elapsed() >= HUB_START_INTERVAL);
                if let Some(command) = options.hub_command.as_ref().filter(|_| can_start) {
                    last_hub_start = Some(Instant::now());
                    match start_hub(command, &options.endpoint) {
                        Ok(waiter) => hubs.push(waiter),
                        Err(err) => tracing::warn!("cannot start the admin Hub: {err}"),
                    }
                } else if !warned_unreachable && last_hub_start.is_some_and(|at| at.elapsed() >= HUB_START_INTERVAL) {
                    warned_unreachable = true;
                    tracing::warn!("the admin Hub is not reachable yet ({err}); still trying");
                }
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = shutdown.cancelled() => break,
                }
                delay = (delay * 2).min(RETRY_MAX);
            }
        }
    }
    for hub in hubs {
        hub.abort();
    }
}

/// Starts a detached Hub; the returned task reaps it when it exits.
fn start_hub(command: &HubCommand, endpoint: &Endpoint) -> std::io::Result<JoinHandle<()>> {
    let mut spec = DetachedSpec::new(&command.executable)
        .arg("--admin-hub")
        .arg("--admin-ipc")
        .arg(&command.ipc_name)
        .arg("--admin-port")
        .arg(command.port.to_string());
    spec.stderr = open_log(&endpoint.log_path());
    let mut child = spawn_detached(spec)?;
    tracing::info!(pid = ?child.pid(), "started an admin Hub");
    Ok(tokio::spawn(async move {
        let _ = child.wait().await;
    }))
}

/// The Hub's log file (private directory, 0600 on Unix); logging is best effort.
fn open_log(path: &std::path::Path) -> Option<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).write(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    options.open(path).ok()
}

enum ConnectionEnd {
    /// The handshake failed; no session existed.
    Refused(String),
    /// An established session ended.
    Lost(String),
    Shutdown,
}

async fn serve_connection(
    ctx: &Arc<Ctx>,
    stream: interprocess::local_socket::tokio::Stream,
    shutdown: &CancellationToken,
    options: &LinkOptions,
    announced: &mut Option<String>,
) -> ConnectionEnd {
    let (reader, mut writer) = tokio::io::split(stream);
    let mut reader = FrameReader::new(reader);
    let mut client = ctx.client.clone();
    let hello = Message::Hello(Hello {
        protocol: protocol::PROTOCOL,
        instance_id: ctx.info.instance_id.clone(),
        pid: std::process::id(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        workspace: ctx.info.workspace.display().to_string(),
        storage: ctx.info.storage.display().to_string(),
        started_at: timestamp(ctx.info.started_at),
        settings: ctx.info.settings.clone(),
        reconnects: ctx.reconnects.load(Ordering::Relaxed),
        client: client.borrow_and_update().clone(),
    });
    if let Err(err) = send(&mut writer, &hello).await {
        return ConnectionEnd::Refused(err);
    }
    let welcome = match tokio::time::timeout(LINK_TIMEOUT, reader.next()).await {
        Ok(Ok(Some(Message::Welcome(welcome)))) => welcome,
        Ok(Ok(Some(other))) => return ConnectionEnd::Refused(format!("unexpected first message {other:?}")),
        Ok(Ok(None)) => return ConnectionEnd::Refused("the Hub closed the connection".into()),
        Ok(Err(err)) => return ConnectionEnd::Refused(err.to_string()),
        Err(_) => return ConnectionEnd::Refused("the Hub did not answer".into()),
    };
    *ctx.state.lock() = LinkState::Connected { public_url: welcome.public_url.clone() };
    if options.announce && announced.as_deref() != Some(welcome.public_url.as_str()) {
        announce(&welcome.public_url, options);
        *announced = Some(welcome.public_url.clone());
    }
    tracing::info!(hub_pid = welcome.hub_pid, "joined the admin Hub");

    // Two channels, so either side dropping its sender (it lags) closes a channel the loop sees.
    let (events_tx, mut events_rx) = mpsc::channel::<Message>(4096);
    let (questions_tx, mut questions_rx) = mpsc::channel::<Message>(64);
    ctx.history.set_sink(Some(events_tx));
    ctx.session.elicitations.set_sink(Some(questions_tx));
    let (responses_tx, mut responses_rx) = mpsc::channel::<Message>(256);
    let mut handlers: JoinSet<()> = JoinSet::new();
    let mut ping = tokio::time::interval_at(Instant::now() + PING_INTERVAL, PING_INTERVAL);
    let mut last_heard = Instant::now();
    loop {
        tokio::select! {
            frame = reader.next() => match frame {
                Ok(Some(message)) => {
                    last_heard = Instant::now();
                    match message {
                        Message::Request(request) => {
                            let ctx = ctx.clone();
                            let responses = responses_tx.clone();
                            handlers.spawn(async move {
                                let response = respond(&ctx, request.id, request.call).await;
                                let _ = responses.send(Message::Response(response)).await;
                            });
                        }
                        Message::Ping => {
                            if let Err(err) = send(&mut writer, &Message::Pong).await {
                                return ConnectionEnd::Lost(err);
                            }
                        }
                        Message::Pong => {}
                        other => tracing::debug!("ignoring an unexpected admin message: {other:?}"),
                    }
                }
                Ok(None) => return ConnectionEnd::Lost("the Hub closed the connection".into()),
                Err(err) => return ConnectionEnd::Lost(err.to_string()),
            },
            event = events_rx.recv() => match event {
                Some(event) => {
                    if let Err(err) = send(&mut writer, &event).await {
                        return ConnectionEnd::Lost(err);
                    }
                }
                // The history dropped a lagging link: start over so the Hub resynchronises.
                None => return ConnectionEnd::Lost("events could not be delivered in time".into()),
            },
            question = questions_rx.recv() => match question {
                Some(question) => {
                    if let Err(err) = send(&mut writer, &question).await {
                        return ConnectionEnd::Lost(err);
                    }
                }
                None => return ConnectionEnd::Lost("questions could not be delivered in time".into()),
            },
            Some(response) = responses_rx.recv() => {
                if let Err(err) = send(&mut writer, &response).await {
                    return ConnectionEnd::Lost(err);
                }
            }
            Some(_) = handlers.join_next() => {}
            Ok(()) = client.changed() => {
                let name = client.borrow_and_update().clone();
                if let Some(name) = name
                    && let Err(err) = send(&mut writer, &Message::Event(InstanceEvent::ClientInitialized { client: name })).await
                {
                    return ConnectionEnd::Lost(err);
                }
            }
            _ = ping.tick() => {
                if last_heard.elapsed() >= LINK_TIMEOUT {
                    return ConnectionEnd::Lost("the Hub stopped answering".into());
                }
                if let Err(err) = send(&mut writer, &Message::Ping).await {
                    return ConnectionEnd::Lost(err);
                }
            }
            () = shutdown.cancelled() => {
                let _ = send(&mut writer, &Message::Bye).await;
                return ConnectionEnd::Shutdown;
            }
        }
    }
}

async fn send<W: tokio::io::AsyncWrite + Unpin>(writer: &mut W, message: &Message) -> Result<(), String> {
    match tokio::time::timeout(WRITE_TIMEOUT, write_message(writer, message)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(err)) => Err(err.to_string()),
        Err(_) => Err("the Hub does not read".into()),
    }
}

/// The one stderr line naming the panel's address and how to open it (never a token).
fn announce(public_url: &str, options: &LinkOptions) {
    let command = if options.default_group {
        "forgemcp --open-admin".to_owned()
    } else {
        format!("forgemcp --open-admin --admin-ipc {}", options.endpoint.name())
    };
    // Logging may be filtered; this line is for the person who started the server.
    let _ = writeln!(std::io::stderr().lock(), "forgemcp: admin panel at {public_url} (open it with `{command}`)");
}

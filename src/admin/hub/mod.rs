//! The admin Hub: the hidden `--admin-hub` mode, one process per OS user and `--admin-ipc` group.
//!
//! It wins the election by binding the group's endpoint exclusively (a loser exits quietly), serves
//! the panel on `127.0.0.1` (`--admin-port`, else a free port) and the widget sandbox on a second
//! loopback port (`http.rs`), accepts instances and `--open-admin` clients on the socket, and relays
//! between browser tabs and instances. It owns no workspace state: everything it shows it asks the
//! instance for, and the instance's history is the only record.
//!
//! Architecture invariant: the Hub lives while instances are connected; it exits [`IDLE_EXIT`] after
//! the last one leaves (browser tabs and event streams never keep it alive).
//! Architecture invariant: an instance whose link drops without `bye` shows as "reconnecting" for
//! [`RECONNECT_GRACE`]; if it rejoins (same instance id) its tab continues, otherwise it is removed.
//! Requests in flight to a lost instance fail; nothing is replayed.

pub mod auth;
mod http;

use std::collections::{BTreeMap, HashMap};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

use super::instance::{LINK_TIMEOUT, PING_INTERVAL};
use super::ipc::{Endpoint, HubListener, IpcError};
use super::protocol::{
    FrameReader, Hello, HubRequest, InstanceEvent, Message, PROTOCOL, Request, Response, Welcome, write_message,
};
use auth::Auth;

/// How long the Hub stays after its last instance left.
pub const IDLE_EXIT: Duration = Duration::from_secs(10);
/// How long a lost instance stays listed as reconnecting.
pub const RECONNECT_GRACE: Duration = Duration::from_secs(30);
/// Longest wait for an instance's answer.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(90);
/// Longest wait for a new connection's first message.
const FIRST_MESSAGE_TIMEOUT: Duration = Duration::from_secs(10);
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// Errors that stop a Hub from starting.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    #[error(transparent)]
    Ipc(#[from] IpcError),
    #[error("cannot listen on 127.0.0.1 for the admin panel")]
    Http(#[source] std::io::Error),
}

/// Settings of a Hub.
#[derive(Debug, Clone)]
pub struct HubOptions {
    pub endpoint: Endpoint,
    /// Preferred panel port; a free port is used when it is taken.
    pub preferred_port: u16,
    pub token_ttl: Duration,
    pub idle_exit: Duration,
    pub reconnect_grace: Duration,
}

impl HubOptions {
    pub fn new(endpoint: Endpoint, preferred_port: u16) -> HubOptions {
        HubOptions {
            endpoint,
            preferred_port,
            token_ttl: auth::TOKEN_TTL,
            idle_exit: IDLE_EXIT,
            reconnect_grace: RECONNECT_GRACE,
        }
    }
}

/// An error answer of the JSON API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ApiError {
    pub status: u16,
    pub message: String,
}

impl ApiError {
    fn new(status: u16, message: impl Into<String>) -> ApiError {
        ApiError { status, message: message.into() }
    }
}

/// One connected instance link.
struct Conn {
    generation: u64,
    tx: mpsc::Sender<Message>,
    pending: Mutex<HashMap<String, oneshot::Sender<Response>>>,
}

enum InstanceState {
    Connected(Arc<Conn>),
    Reconnecting { since: Instant },
}

struct InstanceEntry {
    hello: Hello,
    /// Tab order: the order instances first joined.
    order: u64,
    state: InstanceState,
}

impl InstanceEntry {
    fn summary(&self) -> Value {
        let hello = &self.hello;
        json!({
            "instance_id": hello.instance_id,
            "pid": hello.pid,
            "version": hello.version,
            "workspace": hello.workspace,
            "storage": hello.storage,
            "started_at": hello.started_at,
            "reconnects": hello.reconnects,
            "client": hello.client,
            "order": self.order,
            "state": match self.state {
                InstanceState::Connected(_) => "connected",
                InstanceState::Reconnecting { .. } => "reconnecting",
            },
        })
    }
}

/// State shared by the socket side and the HTTP side.
pub(crate) struct HubState {
    pub port: u16,
    pub sandbox_port: u16,
    pub auth: Auth,
    options: HubOptions,
    instances: Mutex<BTreeMap<String, InstanceEntry>>,
    /// Serialized browser events (JSON), fanned out to every event stream.
    pub events: broadcast::Sender<Arc<str>>,
    next_order: AtomicU64,
    next_request: AtomicU64,
    next_generation: AtomicU64,
    /// Number of connected instances (the idle timer watches it).
    live: watch::Sender<usize>,
}

impl HubState {
    pub fn public_url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    /// A single-use login URL (for `--open-admin`).
    pub fn login_url(&self) -> String {
        format!("http://127.0.0.1:{}/login?token={}", self.port, self.auth.issue_token())
    }

    fn publish(&self, event: Value) {
        let _ = self.events.send(Arc::from(event.to_string()));
    }

    /// Instances in tab order.
    pub fn instances(&self) -> Vec<Value> {
        let instances = self.instances.lock();
        let mut list: Vec<&InstanceEntry> = instances.values().collect();
        list.sort_by_key(|entry| entry.order);
        list.into_iter().map(InstanceEntry::summary).collect()
    }

    fn update_live(&self, instances: &BTreeMap<String, InstanceEntry>) {
        let n = instances.values().filter(|e| matches!(e.state, InstanceState::Connected(_))).count();
        self.live.send_replace(n);
    }

    fn register(&self, hello: Hello, conn: Arc<Conn>) {
        let mut instances = self.instances.lock();
        let order = match instances.get(&hello.instance_id) {
            Some(previous) => previous.order,
            None => self.next_order.fetch_add(1, Ordering::Relaxed),
        };
        let rejoined = instances.contains_key(&hello.instance_id);
        let entry = InstanceEntry { hello, order, state: InstanceState::Connected(conn) };
        let summary = entry.summary();
        instances.insert(entry.hello.instance_id.clone(), entry);
        self.update_live(&instances);
        drop(instances);
        self.publish(
            json!({ "kind": if rejoined { "instance_updated" } else { "instance_added" }, "instance": summary }),
        );
    }

    /// The link `generation` of `instance_id` ended; `clean` after `bye`.
    fn unregister(self: &Arc<Self>, instance_id: &str, generation: u64, clean: bool) {
        let mut instances = self.instances.lock();
        let Some(entry) = instances.get_mut(instance_id) else { return };
        if !matches!(&entry.state, InstanceState::Connected(conn) if conn.generation == generation) {
            return; // A newer link of the same instance already took over.
        }
        let event = if clean {
            instances.remove(instance_id);
            json!({ "kind": "instance_removed", "instance_id": instance_id })
        } else {
            entry.state = InstanceState::Reconnecting { since: Instant::now() };
            json!({ "kind": "instance_updated", "instance": entry.summary() })
        };
        self.update_live(&instances);
        drop(instances);
        self.publish(event);
    }

    /// Removes instances that stayed "reconnecting" past the grace period.
    fn expire_reconnecting(&self) {
        let grace = self.options.reconnect_grace;
        let mut expired = Vec::new();
        self.instances.lock().retain(|id, entry| match entry.state {
            InstanceState::Reconnecting { since } if since.elapsed() >= grace => {
                expired.push(id.clone());
                false
            }
            _ => true,
        });
        for instance_id in expired {
            self.publish(json!({ "kind": "instance_removed", "instance_id": instance_id }));
        }
    }

    fn relay(&self, instance_id: &str, event: InstanceEvent) {
        if let InstanceEvent::ClientInitialized { client } = &event {
            // Part of the instance's summary: the tab updates like on a rejoin.
            let mut instances = self.instances.lock();
            let Some(entry) = instances.get_mut(instance_id) else { return };
            entry.hello.client = Some(client.clone());
            let summary = entry.summary();
            drop(instances);
            self.publish(json!({ "kind": "instance_updated", "instance": summary }));
            return;
        }
        let Ok(Value::Object(mut event)) = serde_json::to_value(event) else { return };
        event.insert("instance_id".into(), Value::String(instance_id.to_owned()));
        self.publish(Value::Object(event));
    }

    /// Asks an instance; the browser's JSON API is built on this.
    pub async fn request(&self, instance_id: &str, call: HubRequest) -> Result<Value, ApiError> {
        let conn = match self.instances.lock().get(instance_id).map(|e| &e.state) {
            Some(InstanceState::Connected(conn)) => conn.clone(),
            Some(InstanceState::Reconnecting { .. }) => {
                return Err(ApiError::new(503, "the instance is reconnecting; try again when it is back"));
            }
            None => return Err(ApiError::new(404, format!("no instance `{instance_id}`"))),
        };
        let id = self.next_request.fetch_add(1, Ordering::Relaxed).to_string();
        let (tx, rx) = oneshot::channel();
        conn.pending.lock().insert(id.clone(), tx);
        let sent = conn.tx.send(Message::Request(Request { id: id.clone(), call })).await;
        if sent.is_err() {
            conn.pending.lock().remove(&id);
            return Err(ApiError::new(502, "the instance disconnected"));
        }
        match tokio::time::timeout(REQUEST_TIMEOUT, rx).await {
            Ok(Ok(response)) if response.ok => Ok(response.result.unwrap_or(Value::Null)),
            Ok(Ok(response)) => Err(ApiError::new(422, response.error.unwrap_or_else(|| "the request failed".into()))),
            Ok(Err(_)) => Err(ApiError::new(502, "the instance disconnected before answering")),
            Err(_) => {
                conn.pending.lock().remove(&id);
                Err(ApiError::new(504, "the instance did not answer in time"))
            }
        }
    }
}

/// A started Hub.
pub struct RunningHub {
    state: Arc<HubState>,
    task: JoinHandle<()>,
}

impl RunningHub {
    /// `http://127.0.0.1:<port>/`.
    pub fn public_url(&self) -> String {
        self.state.public_url()
    }

    pub fn port(&self) -> u16 {
        self.state.port
    }

    pub fn sandbox_port(&self) -> u16 {
        self.state.sandbox_port
    }

    /// A fresh single-use login URL (what `--open-admin` receives).
    pub fn login_url(&self) -> String {
        self.state.login_url()
    }

    /// Waits until the Hub exits (after its last instance left).
    pub async fn wait(mut self) {
        let _ = (&mut self.task).await;
    }

    /// Stops the Hub and waits until its endpoint and ports are released.
    pub async fn stop(mut self) {
        self.task.abort();
        let _ = (&mut self.task).await;
    }

    /// Whether the Hub has exited.
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }
}

impl Drop for RunningHub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Runs the Hub of `options.endpoint` until it is idle; returns at once when another Hub holds
/// the endpoint.
pub async fn run(options: HubOptions) -> Result<(), HubError> {
    match start(options).await? {
        Some(hub) => {
            tracing::info!(url = %hub.public_url(), "admin Hub running");
            hub.wait().await;
            tracing::info!("admin Hub idle; exiting");
        }
        None => tracing::info!("another admin Hub serves this group; exiting"),
    }
    Ok(())
}

/// Wins the election and starts serving, or returns `None` when another Hub holds the endpoint.
pub async fn start(options: HubOptions) -> Result<Option<RunningHub>, HubError> {
    let Some(listener) = options.endpoint.bind_exclusive()? else {
        return Ok(None);
    };
    let admin = match TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, options.preferred_port))).await {
        Ok(listener) => listener,
        Err(err) => {
            tracing::info!("port {} is not available ({err}); using a free port", options.preferred_port);
            TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await.map_err(HubError::Http)?
        }
    };
    let sandbox = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await.map_err(HubError::Http)?;
    let port = admin.local_addr().map_err(HubError::Http)?.port();
    let sandbox_port = sandbox.local_addr().map_err(HubError::Http)?.port();
    let (live, _) = watch::channel(0);
    let state = Arc::new(HubState {
        port,
        sandbox_port,
        auth: Auth::new(port, options.token_ttl),
        options,
        instances: Mutex::default(),
        events: broadcast::channel(1024).0,
        next_order: AtomicU64::new(1),
        next_request: AtomicU64::new(1),
        next_generation: AtomicU64::new(1),
        live,
    });
    let task = tokio::spawn(serve(state.clone(), listener, admin, sandbox));
    Ok(Some(RunningHub { state, task }))
}

async fn serve(state: Arc<HubState>, listener: HubListener, admin: TcpListener, sandbox: TcpListener) {
    let mut tasks: JoinSet<()> = JoinSet::new();
    tasks.spawn(http::serve_admin(state.clone(), admin));
    tasks.spawn(http::serve_sandbox(state.clone(), sandbox));
    let mut connections: JoinSet<()> = JoinSet::new();
    let mut live = state.live.subscribe();
    let idle = tokio::time::sleep(state.options.idle_exit);
    tokio::pin!(idle);
    let mut sweep = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(stream) => {
                    connections.spawn(serve_connection(state.clone(), stream));
                }
                Err(err) => {
                    tracing::warn!("admin socket accept failed: {err}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            Some(_) = connections.join_next() => {}
            changed = live.changed() => {
                if changed.is_err() {
                    break;
                }
                if *live.borrow_and_update() == 0 {
                    idle.as_mut().reset(Instant::now() + state.options.idle_exit);
                }
            }
            () = &mut idle, if *live.borrow() == 0 => break,
            _ = sweep.tick() => state.expire_reconnecting(),
        }
    }
    // Dropping the task sets closes the HTTP servers (event streams included) and the socket.
    drop(connections);
    drop(tasks);
}

async fn serve_connection(state: Arc<HubState>, stream: interprocess::local_socket::tokio::Stream) {
    let (reader, mut writer) = tokio::io::split(stream);
    let mut reader = FrameReader::new(reader);
    let first = match tokio::time::timeout(FIRST_MESSAGE_TIMEOUT, reader.next()).await {
        Ok(Ok(Some(message))) => message,
        _ => return,
    };
    match first {
        Message::OpenUrlRequest { id } => {
            let url = state.login_url();
            let _ =
                tokio::time::timeout(WRITE_TIMEOUT, write_message(&mut writer, &Message::OpenUrl { id, url })).await;
        }
        Message::Hello(hello) => serve_instance(state, hello, reader, writer).await,
        other => tracing::debug!("closing an admin connection that began with {other:?}"),
    }
}

fn valid_instance_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

async fn serve_instance<R, W>(state: Arc<HubState>, hello: Hello, mut reader: FrameReader<R>, mut writer: W)
where
    R: tokio::io::AsyncRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    if hello.protocol != PROTOCOL || !valid_instance_id(&hello.instance_id) {
        tracing::warn!(protocol = hello.protocol, "refusing an instance with an unknown protocol or id");
        return;
    }
    let welcome = Message::Welcome(Welcome { public_url: state.public_url(), hub_pid: std::process::id() });
    if !matches!(tokio::time::timeout(WRITE_TIMEOUT, write_message(&mut writer, &welcome)).await, Ok(Ok(()))) {
        return;
    }
    let instance_id = hello.instance_id.clone();
    let (tx, mut rx) = mpsc::channel::<Message>(256);
    let generation = state.next_generation.fetch_add(1, Ordering::Relaxed);
    let conn = Arc::new(Conn { generation, tx, pending: Mutex::default() });
    state.register(hello, conn.clone());
    tracing::info!(instance = %instance_id, "instance joined");

    let mut ping = tokio::time::interval_at(Instant::now() + PING_INTERVAL, PING_INTERVAL);
    let mut last_heard = Instant::now();
    let mut clean = false;
    loop {
        let outgoing = tokio::select! {
            frame = reader.next() => match frame {
                Ok(Some(message)) => {
                    last_heard = Instant::now();
                    match message {
                        Message::Event(event) => { state.relay(&instance_id, event); None }
                        Message::Response(response) => {
                            if let Some(waiter) = conn.pending.lock().remove(&response.id) {
                                let _ = waiter.send(response);
                            }
                            None
                        }
                        Message::Ping => Some(Message::Pong),
                        Message::Pong => None,
                        Message::Bye => { clean = true; break; }
                        other => { tracing::debug!("ignoring {other:?} from an instance"); None }
                    }
                }
                Ok(None) => break,
                Err(err) => { tracing::warn!(instance = %instance_id, "admin link error: {err}"); break; }
            },
            Some(message) = rx.recv() => Some(message),
            _ = ping.tick() => {
                if last_heard.elapsed() >= LINK_TIMEOUT {
                    tracing::warn!(instance = %instance_id, "instance stopped answering");
                    break;
                }
                Some(Message::Ping)
            }
        };
        if let Some(message) = outgoing
            && !matches!(tokio::time::timeout(WRITE_TIMEOUT, write_message(&mut writer, &message)).await, Ok(Ok(())))
        {
            break;
        }
    }
    // Fail what is still waiting; the browser sees the error, nothing is replayed.
    conn.pending.lock().clear();
    state.unregister(&instance_id, generation, clean);
    tracing::info!(instance = %instance_id, clean, "instance left");
}

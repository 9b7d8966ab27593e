//! The panel's in-process MCP session: a second rmcp server session on the same [`ForgeServer`]
//! state (with origin `panel`), connected over `tokio::io::duplex` to an rmcp client that lives in
//! this instance. Panel calls, catalog listings and resource reads go through it, so they pass the
//! very same handlers, schema validation and locks as the MCP client's calls; their progress arrives
//! as real progress notifications, and the elicitations they raise come to [`PanelClient`], which
//! relays them to the browser through the Hub link.
//!
//! Architecture invariant: the panel reaches the server only through MCP; nothing here calls a
//! service directly.
//! Architecture invariant: an elicitation nobody can answer (no Hub link, link lost, call cancelled)
//! is answered `cancel` at once, which the tools treat as "no".

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::Utc;
use parking_lot::Mutex;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation, ReadResourceRequestParams, RequestMetaObject,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, Peer, RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::history::{STATUS_PROBE_KEY, timestamp};
use super::protocol::{InstanceEvent, Message};
use crate::server::{ForgeServer, Origin};

/// How long catalog listings and resource reads may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// How long one status probe may take (toolset listings wait for discovery).
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// Errors of the panel session, as the browser sees them.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("the panel's MCP session could not start: {0}")]
    Start(String),
    #[error("{0}")]
    Mcp(String),
    #[error("the request took longer than {} s", .0.as_secs())]
    Timeout(Duration),
}

impl From<ServiceError> for SessionError {
    fn from(err: ServiceError) -> SessionError {
        match err {
            ServiceError::McpError(data) => SessionError::Mcp(mcp_error_text(&data)),
            other => SessionError::Mcp(other.to_string()),
        }
    }
}

fn mcp_error_text(data: &ErrorData) -> String {
    format!("{} (JSON-RPC error {})", data.message, data.code.0)
}

/// Pending elicitations of panel calls, answered from the browser.
#[derive(Default)]
pub struct Elicitations {
    inner: Mutex<ElicitationsInner>,
    next_id: AtomicU64,
}

#[derive(Default)]
struct ElicitationsInner {
    pending: HashMap<String, (oneshot::Sender<ElicitResult>, Value)>,
    sink: Option<mpsc::Sender<Message>>,
}

impl Elicitations {
    /// Events go to `sink` (the connected Hub link). Without one, pending questions are cancelled:
    /// nobody could answer them any more.
    pub fn set_sink(&self, sink: Option<mpsc::Sender<Message>>) {
        let mut inner = self.inner.lock();
        if sink.is_none() {
            for (id, (answer, _)) in inner.pending.drain() {
                tracing::info!(elicitation = %id, "the admin link is gone; cancelling a pending question");
                let _ = answer.send(ElicitResult::new(ElicitationAction::Cancel));
            }
        }
        inner.sink = sink;
    }

    /// Questions still waiting for the browser.
    pub fn pending(&self) -> Vec<Value> {
        self.inner.lock().pending.values().map(|(_, record)| record.clone()).collect()
    }

    fn emit(inner: &mut ElicitationsInner, event: InstanceEvent) {
        if let Some(sink) = &inner.sink
            && sink.try_send(Message::Event(event)).is_err()
        {
            inner.sink = None;
        }
    }

    fn open(&self, message: &str, schema: Value) -> Option<(String, oneshot::Receiver<ElicitResult>)> {
        let mut inner = self.inner.lock();
        inner.sink.as_ref()?;
        let id = format!("e{}", self.next_id.fetch_add(1, Ordering::Relaxed) + 1);
        let record = json!({
            "elicitation_id": id,
            "message": message,
            "requested_schema": schema,
            "requested_at": timestamp(Utc::now()),
        });
        let (tx, rx) = oneshot::channel();
        inner.pending.insert(id.clone(), (tx, record.clone()));
        Elicitations::emit(&mut inner, InstanceEvent::ElicitationRequested { elicitation: record });
        Some((id, rx))
    }

    fn resolved(&self, id: &str, action: &str) {
        let mut inner = self.inner.lock();
        inner.pending.remove(id);
        Elicitations::emit(
            &mut inner,
            InstanceEvent::ElicitationResolved { elicitation_id: id.to_owned(), action: action.to_owned() },
        );
    }

    /// The browser's answer: `accept` (with `content`), `decline` or `cancel`.
    pub fn respond(&self, id: &str, action: &str, content: Option<Value>) -> Result<(), String> {
        let action = match action {
            "accept" => ElicitationAction::Accept,
            "decline" => ElicitationAction::Decline,
            "cancel" => ElicitationAction::Cancel,
            other => return Err(format!("unknown elicitation action `{other}`; use accept, decline or cancel")),
        };
        let answer = self.inner.lock().pending.remove(id);
        let Some((answer, _)) = answer else {
            return Err(format!("no question `{id}` is waiting for an answer"));
        };
        let mut result = ElicitResult::new(action);
        if matches!(result.action, ElicitationAction::Accept) {
            result.content = content;
        }
        answer.send(result).map_err(|_| format!("question `{id}` was withdrawn"))
    }
}

/// The rmcp client inside the instance: advertises form elicitation and relays each question.
struct PanelClient {
    elicitations: Arc<Elicitations>,
}

impl ClientHandler for PanelClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities = ClientCapabilities::builder().enable_elicitation().build();
        ClientConfig::new(capabilities, Implementation::new("forgemcp-admin-panel", env!("CARGO_PKG_VERSION")))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } = &request else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let schema = serde_json::to_value(requested_schema).unwrap_or(Value::Null);
        let Some((id, answer)) = self.elicitations.open(message, schema) else {
            return Ok(ElicitResult::new(ElicitationAction::Cancel));
        };
        let result = tokio::select! {
            answer = answer => answer.unwrap_or_else(|_| ElicitResult::new(ElicitationAction::Cancel)),
            () = context.ct.cancelled() => ElicitResult::new(ElicitationAction::Cancel),
        };
        let action = match result.action {
            ElicitationAction::Accept => "accept",
            ElicitationAction::Decline => "decline",
            _ => "cancel",
        };
        self.elicitations.resolved(&id, action);
        Ok(result)
    }
}

/// The running in-process session.
pub struct PanelSession {
    client: RunningService<RoleClient, PanelClient>,
    server_task: JoinHandle<()>,
    pub elicitations: Arc<Elicitations>,
}

impl PanelSession {
    /// Connects a panel client to a new session of `server` (as origin `panel`).
    pub async fn start(server: &ForgeServer) -> Result<PanelSession, SessionError> {
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        let panel_server = server.with_origin(Origin::Panel);
        // Owned by the session: aborted on drop.
        let server_task = tokio::spawn(async move {
            match panel_server.serve(crate::server::duplex::transport(server_io)).await {
                Ok(running) => {
                    let _ = running.waiting().await;
                }
                Err(err) => tracing::warn!("the panel's MCP session did not start: {err}"),
            }
        });
        let elicitations = Arc::new(Elicitations::default());
        let client = PanelClient { elicitations: elicitations.clone() }
            .serve(client_io)
            .await
            .map_err(|err| SessionError::Start(err.to_string()))?;
        Ok(PanelSession { client, server_task, elicitations })
    }

    pub fn peer(&self) -> &Peer<RoleClient> {
        self.client.peer()
    }

    /// Tools (with schemas, annotations and `_meta`), resources and resource templates.
    pub async fn catalog(&self) -> Result<Value, SessionError> {
        let peer = self.peer();
        let work = async {
            let tools = peer.list_all_tools().await?;
            let resources = peer.list_all_resources().await?;
            let templates = peer.list_all_resource_templates().await?;
            Ok::<_, ServiceError>(json!({ "tools": tools, "resources": resources, "resource_templates": templates }))
        };
        Ok(tokio::time::timeout(REQUEST_TIMEOUT, work).await.map_err(|_| SessionError::Timeout(REQUEST_TIMEOUT))??)
    }

    /// `resources/read` through the session.
    pub async fn read_resource(&self, uri: &str) -> Result<Value, SessionError> {
        let read = self.peer().read_resource(ReadResourceRequestParams::new(uri.to_owned()));
        let result =
            tokio::time::timeout(REQUEST_TIMEOUT, read).await.map_err(|_| SessionError::Timeout(REQUEST_TIMEOUT))??;
        serde_json::to_value(result).map_err(|err| SessionError::Mcp(err.to_string()))
    }

    /// Names of the tools the server offers.
    pub async fn tool_names(&self) -> Result<Vec<String>, SessionError> {
        let tools = tokio::time::timeout(REQUEST_TIMEOUT, self.peer().list_all_tools())
            .await
            .map_err(|_| SessionError::Timeout(REQUEST_TIMEOUT))??;
        Ok(tools.into_iter().map(|tool| tool.name.to_string()).collect())
    }

    /// Calls a read-only tool for the status page; tagged so the history leaves it out.
    pub async fn probe(&self, tool: &str) -> Result<CallToolResult, SessionError> {
        let mut meta = RequestMetaObject::new();
        meta.0.insert(STATUS_PROBE_KEY.to_owned(), Value::Bool(true));
        let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(serde_json::Map::new());
        params.meta = Some(meta);
        // Dropping the call on timeout cancels it on the server (rmcp cancels abandoned requests).
        let response = tokio::time::timeout(PROBE_TIMEOUT, self.peer().call_tool_once(params))
            .await
            .map_err(|_| SessionError::Timeout(PROBE_TIMEOUT))??;
        match response {
            CallToolResponse::Complete(result) => Ok(result),
            _ => Err(SessionError::Mcp(format!("`{tool}` did not return a result"))),
        }
    }
}

impl Drop for PanelSession {
    fn drop(&mut self) {
        self.server_task.abort();
    }
}

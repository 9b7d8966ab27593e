//! The instance's answers to the Hub's requests: history, catalog, status, resources, and the
//! panel's own calls (started through the panel session, cancelled only by the panel).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use rmcp::model::{CallToolRequestParams, RequestMetaObject};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::{Ctx, LinkState, PanelCall, RESPONSE_ROOM, STATUS_TOOLS};
use crate::admin::history::{PANEL_TAG_KEY, Record, timestamp};
use crate::admin::protocol::{self, HubRequest, Response};
use crate::server::{Origin, raw_json};

pub(super) async fn respond(ctx: &Arc<Ctx>, id: String, call: HubRequest) -> Response {
    let result = match call {
        // Written once, as text: the records' results are the JSON text the history holds.
        HubRequest::HistoryList => {
            raw_json::embed_nested(&HistoryList { calls: ctx.history.list() }).map_err(|err| err.to_string())
        }
        HubRequest::CatalogGet => ctx.session.catalog().await.map_err(|e| e.to_string()),
        HubRequest::StatusGet => Ok(status(ctx).await),
        HubRequest::ResourceRead { uri } => ctx.session.read_resource(&uri).await.map_err(|e| e.to_string()),
        HubRequest::ToolCall { tool, arguments } => start_panel_call(ctx, tool, arguments).await,
        HubRequest::CallCancel { call_id } => cancel_panel_call(ctx, call_id),
        HubRequest::ElicitationRespond { elicitation_id, action, content } => {
            ctx.session.elicitations.respond(&elicitation_id, &action, content).map(|()| json!({}))
        }
    };
    match result {
        Ok(value) => {
            let size = raw_json::size_of(&value).unwrap_or(usize::MAX);
            if size > protocol::MAX_FRAME - RESPONSE_ROOM {
                Response::err(id, format!("the answer is too large for the panel ({} MiB)", size >> 20))
            } else {
                Response::ok(id, value)
            }
        }
        Err(err) => Response::err(id, err),
    }
}

/// The answer of `history.list`.
#[derive(Serialize)]
struct HistoryList {
    calls: Vec<Record>,
}

async fn status(ctx: &Ctx) -> Value {
    let state = match &*ctx.state.lock() {
        LinkState::Connecting => json!({ "state": "connecting" }),
        LinkState::Connected { public_url } => json!({ "state": "connected", "public_url": public_url }),
        LinkState::Reconnecting => json!({ "state": "reconnecting" }),
    };
    let sections = match ctx.session.tool_names().await {
        Ok(names) => {
            let probes = STATUS_TOOLS.iter().filter(|tool| names.iter().any(|n| n == *tool)).map(|tool| async move {
                match ctx.session.probe(tool).await {
                    Ok(result) => json!({ "tool": tool, "result": result }),
                    Err(err) => json!({ "tool": tool, "error": err.to_string() }),
                }
            });
            futures_util::future::join_all(probes).await
        }
        Err(err) => vec![json!({ "tool": null, "error": err.to_string() })],
    };
    json!({
        "instance_id": ctx.info.instance_id,
        "pid": std::process::id(),
        "version": env!("CARGO_PKG_VERSION"),
        "started_at": timestamp(ctx.info.started_at),
        "workspace": ctx.info.workspace.display().to_string(),
        "storage": ctx.info.storage.display().to_string(),
        "settings": ctx.info.settings,
        "link": { "reconnects": ctx.reconnects.load(Ordering::Relaxed), "current": state },
        "pending_elicitations": ctx.session.elicitations.pending(),
        "sections": sections,
    })
}

async fn start_panel_call(
    ctx: &Arc<Ctx>,
    tool: String,
    arguments: serde_json::Map<String, Value>,
) -> Result<Value, String> {
    let tag = format!("{}-{}", ctx.info.instance_id, ctx.next_tag.fetch_add(1, Ordering::Relaxed) + 1);
    let started = ctx.history.expect_panel_call(&tag);
    let mut meta = RequestMetaObject::new();
    meta.0.insert(PANEL_TAG_KEY.to_owned(), Value::String(tag.clone()));
    let mut params = CallToolRequestParams::new(tool).with_arguments(arguments);
    params.meta = Some(meta);

    let cancel = CancellationToken::new();
    let (early_tx, early_rx) = oneshot::channel::<String>();
    let (id_tx, id_rx) = oneshot::channel::<u64>();
    let peer = ctx.session.peer().clone();
    let table = ctx.panel_calls.clone();
    let stop = cancel.clone();
    let task = tokio::spawn(async move {
        let outcome = tokio::select! {
            outcome = peer.call_tool_once(params) => Some(outcome),
            // Dropping the request future sends `notifications/cancelled` (rmcp's abandoned-request
            // guard); the server records the call as cancelled.
            () = stop.cancelled() => None,
        };
        if let Some(Err(err)) = outcome {
            let _ = early_tx.send(match err {
                rmcp::ServiceError::McpError(data) => format!("{} (JSON-RPC error {})", data.message, data.code.0),
                other => other.to_string(),
            });
        }
        if let Ok(call_id) = id_rx.await {
            table.lock().remove(&call_id);
        }
    });
    let call_id = tokio::select! {
        biased;
        call_id = started => call_id.map_err(|_| "the call did not start".to_owned()),
        early = early_rx => Err(early.unwrap_or_else(|_| "the call ended before it started".to_owned())),
    };
    let call_id = match call_id {
        Ok(call_id) => call_id,
        Err(err) => {
            ctx.history.forget_panel_call(&tag);
            return Err(err);
        }
    };
    ctx.panel_calls.lock().insert(call_id, PanelCall { cancel, task: task.abort_handle() });
    let _ = id_tx.send(call_id);
    Ok(json!({ "call_id": call_id }))
}

fn cancel_panel_call(ctx: &Ctx, call_id: u64) -> Result<Value, String> {
    if let Some(call) = ctx.panel_calls.lock().get(&call_id) {
        call.cancel.cancel();
        return Ok(json!({}));
    }
    match ctx.history.lookup(call_id) {
        Some((Origin::Client, _)) => {
            Err(format!("call {call_id} was made by the MCP client; only that client can cancel it"))
        }
        Some((Origin::Panel, false)) => Err(format!("call {call_id} has already finished")),
        Some((Origin::Panel, true)) => Err(format!("call {call_id} was not started by this panel session")),
        None => Err(format!("there is no call {call_id} in the history")),
    }
}

//! Builds a `Call` from an rmcp request: progress notifications to the peer, and yes/no questions
//! through elicitation on both protocol generations.
//!
//! Architecture invariant: progress notifications of one call are written in order and all of them
//! are on the wire before the call's result (the forwarder is drained before replying).

use std::sync::Arc;

use parking_lot::Mutex;
use rmcp::model::{
    ClientCapabilities, ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputResponses, ProgressNotificationParam, ProgressToken,
    ProtocolVersion, ServerRequest,
};
use rmcp::service::{PeerRequestOptions, RequestContext};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::call::{AskError, Asker, BoxFuture, CancellationToken, ProgressSink, ProgressUpdate, Question};

/// Sends throttled progress updates to the MCP peer, in order, from one forwarding task.
pub struct PeerProgress {
    tx: Mutex<Option<mpsc::UnboundedSender<ProgressUpdate>>>,
    forwarder: Mutex<Option<JoinHandle<()>>>,
}

impl PeerProgress {
    pub fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Arc<PeerProgress> {
        let (tx, mut rx) = mpsc::unbounded_channel::<ProgressUpdate>();
        let forwarder = tokio::spawn(async move {
            while let Some(update) = rx.recv().await {
                let mut param = ProgressNotificationParam::new(token.clone(), update.progress);
                if let Some(total) = update.total {
                    param = param.with_total(total);
                }
                if !update.message.is_empty() {
                    param = param.with_message(update.message);
                }
                if peer.notify_progress(param).await.is_err() {
                    break;
                }
            }
        });
        Arc::new(PeerProgress { tx: Mutex::new(Some(tx)), forwarder: Mutex::new(Some(forwarder)) })
    }

    /// Stops accepting updates and waits until every accepted one is written.
    pub async fn finish(&self) {
        drop(self.tx.lock().take());
        let forwarder = self.forwarder.lock().take();
        if let Some(forwarder) = forwarder {
            let _ = forwarder.await;
        }
    }
}

impl ProgressSink for PeerProgress {
    fn deliver(&self, update: ProgressUpdate) {
        if let Some(tx) = &*self.tx.lock() {
            let _ = tx.send(update);
        }
    }
}

/// Asks an MCP client: `elicitation/create` on sessions that began with `initialize`, the
/// input-required round trip on 2026-07-28 sessions.
pub struct McpAsker {
    peer: Peer<RoleServer>,
    capabilities: Option<ClientCapabilities>,
    round_trip: bool,
    responses: Option<InputResponses>,
}

impl McpAsker {
    pub fn new(context: &RequestContext<RoleServer>, responses: Option<InputResponses>) -> McpAsker {
        let round_trip =
            context.protocol_version().is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        McpAsker { peer: context.peer.clone(), capabilities: context.client_capabilities(), round_trip, responses }
    }

    fn can_elicit(&self) -> bool {
        self.capabilities.as_ref().is_some_and(|c| c.elicitation.is_some())
    }

    async fn ask_now(&self, question: &Question, cancel: &CancellationToken) -> Result<bool, AskError> {
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(elicit_params(question)?));
        let mut handle = self
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| AskError::Failed(e.to_string()))?;
        let answer = tokio::select! {
            answer = &mut handle.rx => answer,
            () = cancel.cancelled() => {
                let _ = handle.cancel(Some("tool call cancelled".into())).await;
                return Ok(false);
            }
        };
        match answer {
            Ok(Ok(ClientResult::ElicitResult(result))) => Ok(is_yes(&result)),
            Ok(Ok(_)) => Err(AskError::Failed("the client answered with an unexpected result".into())),
            // A client that refuses the request (for example "method not found") has said no.
            Ok(Err(_)) => Ok(false),
            Err(_) => Err(AskError::Failed("the connection closed while waiting for the answer".into())),
        }
    }
}

impl Asker for McpAsker {
    fn ask<'a>(
        &'a self,
        question: &'a Question,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<bool, AskError>> {
        Box::pin(async move {
            if let Some(answer) = self.responses.as_ref().and_then(|r| r.get(&question.key)) {
                return Ok(serde_json::from_value::<ElicitResult>(answer.clone()).is_ok_and(|r| is_yes(&r)));
            }
            if !self.can_elicit() {
                return Ok(false);
            }
            if self.round_trip {
                return Err(AskError::InputRequired(question.clone()));
            }
            self.ask_now(question, cancel).await
        })
    }
}

fn is_yes(result: &ElicitResult) -> bool {
    matches!(result.action, ElicitationAction::Accept)
        && result.content.as_ref().and_then(|c| c.get("allow")).and_then(|v| v.as_bool()).unwrap_or(false)
}

fn elicit_params(question: &Question) -> Result<ElicitRequestParams, AskError> {
    let schema = ElicitationSchema::builder()
        .required_bool_with("allow", |b| b.description(question.allow_label.clone()))
        .build()
        .map_err(|e| AskError::Failed(e.to_string()))?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.message.clone(),
        requested_schema: schema,
    })
}

/// The input-required result that asks `question` on a 2026-07-28 session.
pub fn input_required(question: &Question) -> Result<rmcp::model::InputRequiredResult, AskError> {
    let mut requests = InputRequests::new();
    requests.insert(question.key.clone(), InputRequest::Elicitation(ElicitRequest::new(elicit_params(question)?)));
    Ok(rmcp::model::InputRequiredResult::new(Some(requests), None))
}

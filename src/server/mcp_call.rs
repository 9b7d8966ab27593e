//! Builds a `Call` from an rmcp request: progress notifications to the peer, and yes/no questions
//! through elicitation on both protocol generations.
//!
//! Architecture invariant: progress notifications of one call are written in order and all of them
//! are on the wire before the call's result (the forwarder is drained before replying).
//! Architecture invariant: an `inputResponses` answer counts only on a 2026-07-28 session, in the
//! retry of a round in which this server asked that very question (same key and message, same tool
//! and arguments), recognised by the single-use random `requestState` the server issued with it;
//! any other answer is ignored and the question is asked.

use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::Mutex;
use rmcp::model::{
    ClientCapabilities, ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputResponses, JsonObject, ProgressNotificationParam,
    ProgressToken, ProtocolVersion, ServerRequest,
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

/// A question asked in an input-required round, remembered until the client's retry.
#[derive(Debug, Clone, PartialEq)]
struct Asked {
    state: String,
    tool: String,
    arguments: JsonObject,
    key: String,
    message: String,
}

/// The questions of input-required rounds still waiting for their retry: single-use, the newest
/// [`ASKED_LIMIT`] kept.
#[derive(Default)]
pub struct AskedQuestions {
    asked: Mutex<VecDeque<Asked>>,
}

/// How many unanswered input-required rounds are remembered.
const ASKED_LIMIT: usize = 256;

impl AskedQuestions {
    /// Remembers `question`, asked by a call of `tool` with `arguments`; returns the `requestState`
    /// that the retry must echo (128 random bits, hex).
    pub fn remember(&self, tool: &str, arguments: &JsonObject, question: &Question) -> Result<String, AskError> {
        let mut nonce = [0u8; 16];
        getrandom::fill(&mut nonce).map_err(|e| AskError::Failed(format!("no random state for the question: {e}")))?;
        let state: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
        let mut asked = self.asked.lock();
        if asked.len() >= ASKED_LIMIT {
            asked.pop_front();
        }
        asked.push_back(Asked {
            state: state.clone(),
            tool: tool.to_owned(),
            arguments: arguments.clone(),
            key: question.key.clone(),
            message: question.message.clone(),
        });
        Ok(state)
    }

    /// Takes the question asked in the round `state` names, if that round was a call of `tool` with
    /// `arguments`. Taken only on a match, so a forged retry cannot burn another call's round.
    fn take(&self, state: &str, tool: &str, arguments: &JsonObject) -> Option<Asked> {
        let mut asked = self.asked.lock();
        let at = asked.iter().position(|a| a.state == state && a.tool == tool && &a.arguments == arguments)?;
        asked.remove(at)
    }
}

/// The answers of a retry, with the question they may answer.
struct Answers {
    asked: Asked,
    responses: InputResponses,
}

/// Asks an MCP client: `elicitation/create` on sessions that began with `initialize`, the
/// input-required round trip on 2026-07-28 sessions.
pub struct McpAsker {
    peer: Peer<RoleServer>,
    capabilities: Option<ClientCapabilities>,
    round_trip: bool,
    answers: Option<Answers>,
}

impl McpAsker {
    /// The asker of one `tools/call`; `inputResponses` count only as the module docs say.
    pub fn new(
        context: &RequestContext<RoleServer>,
        tool: &str,
        arguments: &JsonObject,
        request: &rmcp::model::CallToolRequestParams,
        asked: &AskedQuestions,
    ) -> McpAsker {
        let round_trip =
            context.protocol_version().is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let answers = match (&request.request_state, &request.input_responses) {
            (Some(state), Some(responses)) if round_trip => {
                asked.take(state, tool, arguments).map(|asked| Answers { asked, responses: responses.clone() })
            }
            _ => None,
        };
        McpAsker { peer: context.peer.clone(), capabilities: context.client_capabilities(), round_trip, answers }
    }

    /// The client's answer to `question`, when it answers the question asked in the previous round.
    fn answer(&self, question: &Question) -> Option<bool> {
        let Answers { asked, responses } = self.answers.as_ref()?;
        if asked.key != question.key || asked.message != question.message {
            return None;
        }
        let answer = responses.get(&question.key)?;
        Some(serde_json::from_value::<ElicitResult>(answer.clone()).is_ok_and(|r| is_yes(&r)))
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
            if let Some(answer) = self.answer(question) {
                return Ok(answer);
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

/// The input-required result that asks `question` on a 2026-07-28 session, with the `requestState`
/// from [`AskedQuestions::remember`].
pub fn input_required(question: &Question, state: String) -> Result<rmcp::model::InputRequiredResult, AskError> {
    let mut requests = InputRequests::new();
    requests.insert(question.key.clone(), InputRequest::Elicitation(ElicitRequest::new(elicit_params(question)?)));
    Ok(rmcp::model::InputRequiredResult::new(Some(requests), Some(state)))
}

//! The one observation point every tool call passes: arguments, progress, outcome, timestamps and
//! origin. The admin instance plugs in here to keep its call history; tools never know about it.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use rmcp::ErrorData;
use rmcp::model::{CallToolResult, JsonObject, RequestMetaObject};
use serde_json::Value;

use crate::call::ProgressUpdate;

/// Who started a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// The MCP client on stdio.
    Client,
    /// The admin panel's in-process session.
    Panel,
}

/// A call as it starts.
#[derive(Debug, Clone)]
pub struct CallStarted {
    pub call_id: u64,
    pub origin: Origin,
    pub tool: String,
    /// Shared with the tool's own decoding of them, never copied for the observer.
    pub arguments: Arc<JsonObject>,
    pub at: DateTime<Utc>,
    /// The request's `_meta` (progress token and any keys the caller added; the admin panel's
    /// in-process session tags its calls here to recognise them).
    pub request_meta: RequestMetaObject,
}

/// How a call ended.
#[derive(Debug, Clone)]
pub enum CallEnd<'a> {
    /// A result was returned (successful or `isError`): the reply itself, lent to the observer,
    /// which keeps whatever it needs of it (the history: its JSON text).
    Result(&'a CallToolResult),
    /// The request failed at the protocol level.
    Error(ErrorData),
    /// The client must answer a question and retry (2026-07-28 sessions).
    InputRequired,
    /// The client cancelled the call; no result is sent.
    Cancelled,
}

/// Observes every call; implementations must be cheap and must not block.
pub trait CallObserver: Send + Sync {
    fn started(&self, call: &CallStarted);
    fn progress(&self, call_id: u64, update: &ProgressUpdate);
    /// The call's end; for a result, the JSON text the observer keeps of it
    /// ([`super::raw_json::embed_nested`]), which the reply is then written from.
    fn finished(&self, call_id: u64, at: DateTime<Utc>, end: &CallEnd<'_>) -> Option<Arc<Value>>;
}

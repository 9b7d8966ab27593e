//! The instance's call history: every tool call of the MCP client and of the panel, with its
//! arguments, progress, timestamps and outcome, in memory only. It is the server's
//! [`CallObserver`], and it reports each change as an [`InstanceEvent`] to the Hub link while one is
//! connected.
//!
//! Architecture invariant: the history lives only in this process's memory and is bounded (oldest
//! finished calls are forgotten first past [`MAX_CALLS`] calls or [`MAX_BYTES`] of recorded JSON).
//! Architecture invariant: observer callbacks never block: events go to the link with `try_send`;
//! a link that cannot keep up is dropped (it rejoins and reads the history afresh), never waited for.
//! Architecture invariant: calls tagged as status probes are not recorded (they are the panel's way
//! to read status, not calls a person made).
//! Architecture invariant: a call's arguments and result are held once, as [`Record`]'s shared
//! values; events and lists share them, and the result is kept as the JSON text it was sent as
//! (serialized once when the call ends; the reply itself is never copied for the history).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Utc};
use parking_lot::Mutex;
use rmcp::model::{JsonObject, RequestMetaObject};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::protocol::{CallRecord, InstanceEvent, Message};
use crate::call::ProgressUpdate;
use crate::server::{CallEnd, CallObserver, CallStarted, Origin, raw_json};

/// Most calls kept.
pub const MAX_CALLS: usize = 500;
/// Most bytes of recorded JSON kept (the whole list must fit one IPC frame).
pub const MAX_BYTES: usize = 32 << 20;
/// Most progress updates kept per call (the newest).
pub const MAX_PROGRESS: usize = 200;

/// `_meta` key of a panel call: the instance's own tag, to learn the call's id when it starts.
pub const PANEL_TAG_KEY: &str = "io.forgemcp/panelCall";
/// `_meta` key of the panel's status probes, which the history leaves out.
pub const STATUS_PROBE_KEY: &str = "io.forgemcp/statusProbe";

/// RFC 3339 UTC with sub-second precision and `Z` (INTERFACE.md §1.2).
pub fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// One call as the panel sees it. Cloning it shares the arguments and the result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Record {
    call_id: u64,
    origin: Origin,
    tool: String,
    arguments: Arc<JsonObject>,
    /// RFC 3339 ([`timestamp`]).
    started_at: String,
    finished_at: Option<String>,
    /// `running`, `completed`, `tool_error`, `protocol_error`, `cancelled`, `input_required`.
    state: &'static str,
    progress: VecDeque<Value>,
    progress_dropped: u64,
    /// The result as the JSON text the reply carried ([`raw_json::embed_nested`]).
    result: Option<Arc<Value>>,
    error: Option<Value>,
}

#[derive(Debug)]
struct Entry {
    record: Record,
    /// Estimated size of the recorded JSON.
    bytes: usize,
}

#[derive(Default)]
struct Inner {
    calls: VecDeque<Entry>,
    bytes: usize,
    /// Status probes: started but not recorded; their progress and end are ignored.
    probes: HashSet<u64>,
    /// Panel calls waiting to learn their call id, by tag.
    waiting: HashMap<String, oneshot::Sender<u64>>,
    sink: Option<mpsc::Sender<Message>>,
}

/// The history. Cheap to share behind an `Arc`; one per instance.
#[derive(Default)]
pub struct History {
    inner: Mutex<Inner>,
}

impl History {
    /// Events go to `sink` from now on (the connected Hub link), or nowhere.
    pub fn set_sink(&self, sink: Option<mpsc::Sender<Message>>) {
        self.inner.lock().sink = sink;
    }

    /// Registers a panel call tag; the receiver gets the call id when the call starts.
    pub fn expect_panel_call(&self, tag: &str) -> oneshot::Receiver<u64> {
        let (tx, rx) = oneshot::channel();
        self.inner.lock().waiting.insert(tag.to_owned(), tx);
        rx
    }

    /// Forgets a tag whose call never started (it failed before reaching the tool).
    pub fn forget_panel_call(&self, tag: &str) {
        self.inner.lock().waiting.remove(tag);
    }

    /// Every recorded call, oldest first.
    pub fn list(&self) -> Vec<Record> {
        self.inner.lock().calls.iter().map(|entry| entry.record.clone()).collect()
    }

    /// The origin of a recorded call, and whether it is still running.
    pub fn lookup(&self, call_id: u64) -> Option<(Origin, bool)> {
        let inner = self.inner.lock();
        inner.calls.iter().find(|e| e.record.call_id == call_id).map(|e| (e.record.origin, e.record.state == "running"))
    }

    fn emit(inner: &mut Inner, event: InstanceEvent) {
        let Some(sink) = &inner.sink else { return };
        if sink.try_send(Message::Event(event)).is_err() {
            // Full or closed: drop the link's event channel; the link then reconnects and the Hub
            // reads the whole history again instead of seeing a gap.
            tracing::debug!("the admin link lags behind; dropping it for a fresh resync");
            inner.sink = None;
        }
    }

    fn trim(inner: &mut Inner) {
        while inner.calls.len() > MAX_CALLS || inner.bytes > MAX_BYTES {
            let victim = inner.calls.iter().position(|e| e.record.state != "running").unwrap_or(0);
            if inner.calls.len() == 1 {
                break;
            }
            if let Some(entry) = inner.calls.remove(victim) {
                inner.bytes = inner.bytes.saturating_sub(entry.bytes);
            }
        }
    }
}

fn tag_of(meta: &RequestMetaObject, key: &str) -> Option<Value> {
    meta.0.get(key).cloned()
}

/// The size of `value` serialized.
fn json_size<T: Serialize + ?Sized>(value: &T) -> usize {
    raw_json::size_of(value).unwrap_or(0)
}

impl CallObserver for History {
    fn started(&self, call: &CallStarted) {
        let mut inner = self.inner.lock();
        if call.origin == Origin::Panel && tag_of(&call.request_meta, STATUS_PROBE_KEY).is_some() {
            inner.probes.insert(call.call_id);
            return;
        }
        if call.origin == Origin::Panel
            && let Some(Value::String(tag)) = tag_of(&call.request_meta, PANEL_TAG_KEY)
            && let Some(waiter) = inner.waiting.remove(&tag)
        {
            let _ = waiter.send(call.call_id);
        }
        let arguments_size = json_size(&*call.arguments);
        let record = Record {
            call_id: call.call_id,
            origin: call.origin,
            tool: call.tool.clone(),
            arguments: call.arguments.clone(),
            started_at: timestamp(call.at),
            finished_at: None,
            state: "running",
            progress: VecDeque::new(),
            progress_dropped: 0,
            result: None,
            error: None,
        };
        let entry = Entry { record: record.clone(), bytes: 256 + call.tool.len() + arguments_size };
        inner.bytes += entry.bytes;
        inner.calls.push_back(entry);
        History::trim(&mut inner);
        History::emit(&mut inner, InstanceEvent::CallStarted { call: CallRecord::Shared(Box::new(record)) });
    }

    fn progress(&self, call_id: u64, update: &ProgressUpdate) {
        let mut inner = self.inner.lock();
        if inner.probes.contains(&call_id) {
            return;
        }
        let progress = json!({
            "at": timestamp(Utc::now()),
            "progress": update.progress,
            "total": update.total,
            "message": update.message,
        });
        let Some(entry) = inner.calls.iter_mut().find(|e| e.record.call_id == call_id) else { return };
        let size = 64 + update.message.len();
        entry.record.progress.push_back(progress.clone());
        entry.bytes += size;
        if entry.record.progress.len() > MAX_PROGRESS {
            entry.record.progress.pop_front();
            entry.record.progress_dropped += 1;
            entry.bytes = entry.bytes.saturating_sub(size);
        } else {
            inner.bytes += size;
        }
        History::emit(&mut inner, InstanceEvent::CallProgress { call_id, progress });
    }

    fn finished(&self, call_id: u64, at: DateTime<Utc>, end: &CallEnd) -> Option<Arc<Value>> {
        let mut inner = self.inner.lock();
        if inner.probes.remove(&call_id) {
            return None;
        }
        let (state, result, error) = match end {
            CallEnd::Result(result) => {
                let state = if result.is_error == Some(true) { "tool_error" } else { "completed" };
                // The one copy the history keeps: the reply's JSON text.
                let text = raw_json::embed_nested(*result).unwrap_or_else(
                    |err| json!({ "unrecorded": format!("the result could not be serialized: {err}") }),
                );
                (state, Some(Arc::new(text)), None)
            }
            CallEnd::Error(err) => ("protocol_error", None, serde_json::to_value(err).ok()),
            CallEnd::InputRequired => ("input_required", None, None),
            CallEnd::Cancelled => ("cancelled", None, None),
        };
        let added = result.as_deref().map_or(0, json_size) + error.as_ref().map_or(0, json_size);
        let entry = inner.calls.iter_mut().find(|e| e.record.call_id == call_id)?;
        let record = &mut entry.record;
        record.finished_at = Some(timestamp(at));
        record.state = state;
        record.result = result.clone();
        record.error = error;
        let record = record.clone();
        entry.bytes += added;
        inner.bytes += added;
        History::trim(&mut inner);
        History::emit(&mut inner, InstanceEvent::CallFinished { call: CallRecord::Shared(Box::new(record)) });
        result
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolResult, ContentBlock};

    use super::*;

    fn started(call_id: u64, origin: Origin, meta: &[(&str, Value)]) -> CallStarted {
        let mut request_meta = RequestMetaObject::new();
        for (key, value) in meta {
            request_meta.0.insert((*key).to_owned(), value.clone());
        }
        CallStarted {
            call_id,
            origin,
            tool: "workspace_list".into(),
            arguments: Arc::new(json!({"path": "project/"}).as_object().cloned().expect("object")),
            at: Utc::now(),
            request_meta,
        }
    }

    /// The records as the Hub reads them.
    fn listed(history: &History) -> Vec<Value> {
        let text = raw_json::to_vec(&history.list()).expect("serializable");
        serde_json::from_slice(&text).expect("JSON")
    }

    fn update(message: &str) -> ProgressUpdate {
        ProgressUpdate { progress: 1.0, total: None, message: message.into(), at: std::time::Instant::now() }
    }

    #[test]
    fn a_call_is_recorded_from_start_to_result_and_reported() {
        let history = History::default();
        let (tx, mut rx) = mpsc::channel(16);
        history.set_sink(Some(tx));
        history.started(&started(1, Origin::Client, &[]));
        history.progress(1, &update("Files visited"));
        let result = CallToolResult::success(vec![ContentBlock::text("done")]);
        history.finished(1, Utc::now(), &CallEnd::Result(&result));
        let calls = listed(&history);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0]["state"], "completed");
        assert_eq!(calls[0]["origin"], "client");
        assert_eq!(calls[0]["progress"][0]["message"], "Files visited");
        assert_eq!(calls[0]["result"]["content"][0]["text"], "done");
        let kinds: Vec<String> = std::iter::from_fn(|| rx.try_recv().ok())
            .map(|m| match m {
                Message::Event(e) => serde_json::to_value(e).expect("json")["kind"].as_str().expect("kind").to_owned(),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(kinds, ["call_started", "call_progress", "call_finished"]);
    }

    #[test]
    fn a_result_with_an_embedded_listing_reaches_the_hub_as_plain_json_and_is_held_once() {
        let history = History::default();
        let (tx, mut rx) = mpsc::channel(16);
        history.set_sink(Some(tx));
        history.started(&started(1, Origin::Client, &[]));
        let listing = json!({ "entries": [{ "path": "project/a \"quoted\".txt", "kind": "file" }] });
        let mut result = CallToolResult::success(vec![ContentBlock::text("1 entry")]);
        result.structured_content = Some(raw_json::embed(&listing).expect("embedded"));
        history.finished(1, Utc::now(), &CallEnd::Result(&result));
        let frames: Vec<Value> = std::iter::from_fn(|| rx.try_recv().ok())
            .map(|m| serde_json::from_slice(&crate::admin::protocol::encode(&m).expect("frame")).expect("JSON"))
            .collect();
        let finished = &frames[1]["call"];
        assert_eq!(finished["result"]["structuredContent"], listing, "{finished}");
        assert_eq!(listed(&history)[0]["result"]["structuredContent"], listing);
        // The event and the list share the history's one text of the result.
        let inner = history.inner.lock();
        let held = inner.calls[0].record.result.as_ref().expect("a result");
        assert_eq!(Arc::strong_count(held), 1, "the sent event has been dropped");
        drop(inner);
        let records = history.list();
        let held = records[0].result.as_ref().expect("a result");
        assert_eq!(Arc::strong_count(held), 2, "listing shares the text instead of copying it");
    }

    #[test]
    fn panel_tags_resolve_to_call_ids_and_probes_are_left_out() {
        let history = History::default();
        let mut waiter = history.expect_panel_call("p-1");
        history.started(&started(7, Origin::Panel, &[(STATUS_PROBE_KEY, json!(true))]));
        history.progress(7, &update("ignored"));
        history.finished(7, Utc::now(), &CallEnd::Cancelled);
        assert!(history.list().is_empty(), "probes are not history");
        assert!(waiter.try_recv().is_err());
        history.started(&started(8, Origin::Panel, &[(PANEL_TAG_KEY, json!("p-1"))]));
        assert_eq!(waiter.try_recv().expect("tag resolved"), 8);
        assert_eq!(history.lookup(8), Some((Origin::Panel, true)));
        history.finished(8, Utc::now(), &CallEnd::Cancelled);
        assert_eq!(history.lookup(8), Some((Origin::Panel, false)));
        assert_eq!(listed(&history)[0]["state"], "cancelled");
    }

    #[test]
    fn the_oldest_finished_calls_go_first() {
        let history = History::default();
        history.started(&started(1, Origin::Client, &[]));
        for call_id in 2..=(MAX_CALLS as u64 + 1) {
            history.started(&started(call_id, Origin::Client, &[]));
            history.finished(call_id, Utc::now(), &CallEnd::Cancelled);
        }
        history.started(&started(10_000, Origin::Client, &[]));
        let ids: Vec<u64> = listed(&history).iter().map(|c| c["call_id"].as_u64().expect("id")).collect();
        assert_eq!(ids.len(), MAX_CALLS);
        assert_eq!(ids[0], 1, "the running call stays");
        assert!(!ids.contains(&2) && !ids.contains(&3), "the oldest finished calls left");
    }

    #[test]
    fn a_lagging_link_is_dropped_not_waited_for() {
        let history = History::default();
        let (tx, _rx) = mpsc::channel(1);
        history.set_sink(Some(tx));
        history.started(&started(1, Origin::Client, &[]));
        history.started(&started(2, Origin::Client, &[]));
        assert!(history.inner.lock().sink.is_none());
        assert_eq!(history.list().len(), 2, "the history itself is complete");
    }
}

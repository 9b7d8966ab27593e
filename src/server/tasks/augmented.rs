//! The tasks of task-augmented `tools/call` requests (MCP 2025-11-25): requestor-driven, so the
//! client asks for a task with `params.task` on a tool whose `execution.taskSupport` is
//! `"optional"`, then polls `tasks/get`, fetches the `CallToolResult` with `tasks/result` (which
//! waits for the end), lists its tasks with `tasks/list` and stops one with `tasks/cancel`. Each
//! status change goes out as `notifications/tasks/status`; progress keeps flowing on the call's
//! progress token, and the latest progress message is the task's `statusMessage`.
//!
//! Architecture invariant: a task is visible only to the origin that created it (the MCP client
//! or the admin panel), and a cancelled task stays cancelled whatever its call returns.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Utc};
use parking_lot::Mutex;
use rmcp::model::{CallToolResponse, CustomNotification, ServerNotification};
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{CallFuture, POLL_INTERVAL_MS, TASK_TTL_MS};
use crate::call::{ProgressSink, ProgressUpdate};
use crate::server::Origin;

/// The `_meta` key that ties a `tasks/result` answer to its task.
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// Tasks per `tasks/list` page.
const PAGE: usize = 50;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Working,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    fn name(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }
}

struct Entry {
    seq: u64,
    origin: Origin,
    status: Status,
    status_message: Option<String>,
    created_at: DateTime<Utc>,
    last_updated_at: DateTime<Utc>,
    ttl_ms: u64,
    /// What the call returned (the `CallToolResult` JSON) or its JSON-RPC error, once it ended.
    outcome: Option<Result<Value, ErrorData>>,
    stop: CancellationToken,
}

impl Entry {
    fn json(&self, task_id: &str) -> Value {
        let mut task = json!({
            "taskId": task_id,
            "status": self.status.name(),
            "createdAt": self.created_at.to_rfc3339_opts(SecondsFormat::Millis, true),
            "lastUpdatedAt": self.last_updated_at.to_rfc3339_opts(SecondsFormat::Millis, true),
            "ttl": self.ttl_ms,
            "pollInterval": POLL_INTERVAL_MS,
        });
        if let Some(message) = &self.status_message {
            task["statusMessage"] = Value::from(message.as_str());
        }
        task
    }

    fn expired(&self, now: DateTime<Utc>) -> bool {
        let ttl = chrono::Duration::milliseconds(i64::try_from(self.ttl_ms).unwrap_or(i64::MAX));
        self.status != Status::Working && self.created_at.checked_add_signed(ttl).is_some_and(|end| end < now)
    }
}

#[derive(Default)]
struct Table {
    tasks: HashMap<String, Entry>,
    next_seq: u64,
}

impl Table {
    /// The task `task_id` of `origin`, after dropping expired tasks.
    fn find(&mut self, origin: Origin, task_id: &str) -> Result<&mut Entry, ErrorData> {
        let now = Utc::now();
        self.tasks.retain(|_, entry| !entry.expired(now));
        self.tasks.get_mut(task_id).filter(|entry| entry.origin == origin).ok_or_else(|| {
            ErrorData::invalid_params(format!("unknown task `{task_id}`"), Some(json!({ "taskId": task_id })))
        })
    }
}

struct State {
    table: Mutex<Table>,
    /// Bumped whenever a call ends, for `tasks/result` waiters.
    ended: watch::Sender<u64>,
}

/// The task-augmented calls of one server (shared by its sessions' handles).
#[derive(Clone)]
pub struct AugmentedTasks(Arc<State>);

impl Default for AugmentedTasks {
    fn default() -> Self {
        AugmentedTasks(Arc::new(State { table: Mutex::default(), ended: watch::Sender::new(0) }))
    }
}

impl AugmentedTasks {
    /// Runs `call` as a task of `origin` and answers with the task (the `CreateTaskResult`'s `task`).
    /// `call` gets the token `tasks/cancel` fires and the sink that feeds the status message.
    pub fn create<F>(&self, origin: Origin, requested_ttl: Option<u64>, peer: Peer<RoleServer>, call: F) -> Value
    where
        F: FnOnce(CancellationToken, Arc<dyn ProgressSink>) -> CallFuture,
    {
        let task_id = new_task_id();
        let stop = CancellationToken::new();
        let now = Utc::now();
        let task = {
            let mut table = self.0.table.lock();
            table.next_seq += 1;
            let entry = Entry {
                seq: table.next_seq,
                origin,
                status: Status::Working,
                status_message: None,
                created_at: now,
                last_updated_at: now,
                ttl_ms: requested_ttl.unwrap_or(TASK_TTL_MS).min(TASK_TTL_MS),
                outcome: None,
                stop: stop.clone(),
            };
            let task = entry.json(&task_id);
            table.tasks.insert(task_id.clone(), entry);
            task
        };
        let sink = Arc::new(StatusMessage { tasks: self.clone(), task_id: task_id.clone() });
        let running = call(stop, sink);
        let tasks = self.clone();
        tokio::spawn(async move {
            let response = running.await;
            if let Some(task) = tasks.finish(&task_id, response) {
                notify_status(&peer, task).await;
            }
        });
        task
    }

    /// Records the call's end; the task's new state when its status changed.
    fn finish(&self, task_id: &str, response: Result<CallToolResponse, ErrorData>) -> Option<Value> {
        let (status, outcome) = match response {
            Ok(CallToolResponse::Complete(mut result)) => {
                let status = if result.is_error == Some(true) { Status::Failed } else { Status::Completed };
                // `tasks/result` is a 2025-11-25 method: its results carry no `resultType`.
                result.result_type = None;
                (status, serde_json::to_value(result).map_err(|e| ErrorData::internal_error(e.to_string(), None)))
            }
            Ok(_) => (
                Status::Failed,
                Err(ErrorData::internal_error(
                    "this call needs an answer from the client; call the tool again without a task",
                    None,
                )),
            ),
            Err(err) => (Status::Failed, Err(err)),
        };
        let changed = {
            let mut table = self.0.table.lock();
            let entry = table.tasks.get_mut(task_id)?;
            entry.outcome = Some(outcome);
            let changed = entry.status == Status::Working;
            if changed {
                entry.status = status;
                entry.last_updated_at = Utc::now();
            }
            changed.then(|| entry.json(task_id))
        };
        self.0.ended.send_modify(|n| *n += 1);
        changed
    }

    /// `tasks/get`.
    pub fn get(&self, origin: Origin, task_id: &str) -> Result<Value, ErrorData> {
        Ok(self.0.table.lock().find(origin, task_id)?.json(task_id))
    }

    /// `tasks/result`: waits for the call's end (or `stop`, the request's own cancellation), then
    /// answers exactly what the call answered, tied to its task.
    pub async fn result(&self, origin: Origin, task_id: &str, stop: &CancellationToken) -> Result<Value, ErrorData> {
        let mut ended = self.0.ended.subscribe();
        loop {
            if let Some(outcome) = &self.0.table.lock().find(origin, task_id)?.outcome {
                return outcome.clone().map(|mut result| {
                    result["_meta"][RELATED_TASK] = json!({ "taskId": task_id });
                    result
                });
            }
            tokio::select! {
                changed = ended.changed() => {
                    if changed.is_err() {
                        return Err(ErrorData::internal_error("the server is shutting down", None));
                    }
                }
                () = stop.cancelled() => {
                    return Err(ErrorData::internal_error("tasks/result was cancelled", None));
                }
            }
        }
    }

    /// `tasks/list`: the origin's tasks, oldest first, `PAGE` at a time.
    pub fn list(&self, origin: Origin, cursor: Option<&str>) -> Result<Value, ErrorData> {
        let after = match cursor {
            None => 0,
            Some(cursor) => cursor.parse::<u64>().map_err(|_| {
                ErrorData::invalid_params(format!("invalid cursor `{cursor}`"), Some(json!({ "cursor": cursor })))
            })?,
        };
        let mut table = self.0.table.lock();
        let now = Utc::now();
        table.tasks.retain(|_, entry| !entry.expired(now));
        let mut tasks: Vec<(&String, &Entry)> =
            table.tasks.iter().filter(|(_, entry)| entry.origin == origin && entry.seq > after).collect();
        tasks.sort_by_key(|(_, entry)| entry.seq);
        let mut result =
            json!({ "tasks": tasks.iter().take(PAGE).map(|(id, entry)| entry.json(id)).collect::<Vec<_>>() });
        if tasks.len() > PAGE {
            result["nextCursor"] = Value::from(tasks[PAGE - 1].1.seq.to_string());
        }
        Ok(result)
    }

    /// `tasks/cancel`: the task is cancelled before the answer, and its call is told to stop (which
    /// kills its process tree).
    pub fn cancel(&self, origin: Origin, task_id: &str) -> Result<Value, ErrorData> {
        let mut table = self.0.table.lock();
        let entry = table.find(origin, task_id)?;
        if entry.status != Status::Working {
            let status = entry.status.name();
            return Err(ErrorData::invalid_params(
                format!("task `{task_id}` is already {status}; only a working task can be cancelled"),
                Some(json!({ "taskId": task_id, "status": status })),
            ));
        }
        entry.status = Status::Cancelled;
        entry.status_message = Some("Cancelled by tasks/cancel.".into());
        entry.last_updated_at = Utc::now();
        entry.stop.cancel();
        Ok(entry.json(task_id))
    }
}

/// Sends `notifications/tasks/status` (best effort: the client may be gone).
pub async fn notify_status(peer: &Peer<RoleServer>, task: Value) {
    let notification = CustomNotification::new("notifications/tasks/status", Some(task));
    if let Err(err) = peer.send_notification(ServerNotification::CustomNotification(notification)).await {
        tracing::debug!("cannot send a task status notification: {err}");
    }
}

/// `task-` and 32 random hexadecimal digits: unguessable, and never the shape of an rmcp task id.
fn new_task_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system provides random bytes");
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("task-{hex}")
}

/// The task's status message follows the call's progress messages.
struct StatusMessage {
    tasks: AugmentedTasks,
    task_id: String,
}

impl ProgressSink for StatusMessage {
    fn deliver(&self, update: ProgressUpdate) {
        if update.message.is_empty() {
            return;
        }
        if let Some(entry) = self.tasks.0.table.lock().tasks.get_mut(&self.task_id)
            && entry.status == Status::Working
        {
            entry.status_message = Some(update.message);
            entry.last_updated_at = Utc::now();
        }
    }
}

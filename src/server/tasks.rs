//! MCP Tasks: the `io.modelcontextprotocol/tasks` extension (SEP-2663) as rmcp 3.11 serves it.
//!
//! A client that declares the extension (at `initialize` or in a request's `_meta` capabilities)
//! gets a task handle (`resultType: "task"`) instead of a result when it calls one of the tools that
//! can run long ([`runs_long`]); every other call, and every call of a client without the extension,
//! answers as before. The client then polls `tasks/get`, which carries the status, the latest
//! progress message as `statusMessage`, and at the end the `CallToolResult` (or the JSON-RPC error);
//! `tasks/cancel` cancels the call exactly as `notifications/cancelled` would, which kills its
//! process tree. Progress notifications keep flowing on the request's progress token while the task
//! runs. (SEP-2663 replaced the 2025-11-25 draft's `tasks/result` and `tasks/list`: `tasks/get`
//! inlines the result, and there is no list.)
//!
//! Architecture invariant: a task runs the same call path as a plain `tools/call` (history,
//! progress, validation, locks); only the cancellation token differs (the task's, not the
//! request's, which ends with the task handle).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, CreateTaskResult, DetailedTask};
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};
use tokio_util::sync::CancellationToken;

use crate::call::{ProgressSink, ProgressUpdate};

/// How long a task and its result stay available: a day (a call's own timeout ends it far sooner).
const TASK_TTL_MS: u64 = 24 * 60 * 60 * 1000;
/// The polling interval suggested to clients.
const POLL_INTERVAL_MS: u64 = 500;

/// The tools that answer a task-capable client with a task: the ones that run builds, tests,
/// clangd or a whole-workspace search.
pub fn runs_long(tool: &str) -> bool {
    matches!(tool, "cmake_configure" | "cmake_build" | "cmake_test" | "cmake_run_test" | "workspace_text_search")
        || (tool.starts_with("clangd_") && tool != "clangd_configurations")
        || matches!(tool, "debug_launch" | "debug_continue")
}

type CallFuture = Pin<Box<dyn Future<Output = Result<CallToolResponse, ErrorData>> + Send>>;

/// The tasks of one server (shared by its sessions' handles).
#[derive(Default)]
pub struct Tasks {
    manager: TaskManager,
}

impl Tasks {
    /// Runs `call` as a task: `call` gets the token that `tasks/cancel` fires and the sink that
    /// turns its progress into the task's status message.
    pub fn spawn<F>(&self, call: F) -> CreateTaskResult
    where
        F: FnOnce(CancellationToken, Arc<dyn ProgressSink>) -> CallFuture,
    {
        let options = TaskOptions::new().with_ttl_ms(TASK_TTL_MS).with_poll_interval_ms(POLL_INTERVAL_MS);
        let task = self.manager.spawn(options, move |context| {
            let stop = CancellationToken::new();
            let mut running = call(stop.clone(), Arc::new(StatusMessage(context.clone())));
            Box::pin(async move {
                let response = tokio::select! {
                    response = &mut running => response,
                    () = context.cancelled() => {
                        stop.cancel();
                        // The call stops its processes and records itself as cancelled.
                        let _ = running.await;
                        return Err(TaskExit::Cancelled);
                    }
                };
                match response {
                    Ok(CallToolResponse::Complete(result)) => Ok(result),
                    Ok(_) => Err(TaskExit::Error(ErrorData::internal_error(
                        "this call needs an answer from the client; call the tool again without a task",
                        None,
                    ))),
                    Err(err) => Err(TaskExit::Error(err)),
                }
            })
        });
        CreateTaskResult::new(task)
    }

    pub fn get(&self, task_id: &str) -> Result<DetailedTask, ErrorData> {
        self.manager.get_task(task_id)
    }

    pub fn cancel(&self, task_id: &str) -> Result<(), ErrorData> {
        self.manager.cancel_task(task_id)
    }

    /// `tasks/update`: these tasks never wait for input, so every response is ignored (per spec),
    /// but an unknown task is still an error.
    pub fn update(&self, task_id: &str) -> Result<(), ErrorData> {
        self.manager.update_task(task_id, std::iter::empty())
    }
}

/// The task's status message follows the call's progress messages.
struct StatusMessage(TaskContext);

impl ProgressSink for StatusMessage {
    fn deliver(&self, update: ProgressUpdate) {
        if !update.message.is_empty() {
            self.0.set_status_message(update.message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_long_running_tools_run_as_tasks() {
        for tool in ["cmake_build", "cmake_configure", "clangd_references", "workspace_text_search", "cmake_run_test"] {
            assert!(runs_long(tool), "{tool}");
        }
        for tool in ["workspace_read_file", "cmake_profiles", "clangd_configurations", "process_get"] {
            assert!(!runs_long(tool), "{tool}");
        }
    }
}

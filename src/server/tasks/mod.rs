//! MCP Tasks, in both forms clients speak.
//!
//! * The `io.modelcontextprotocol/tasks` extension (SEP-2663) as rmcp 3.11 serves it (this file): a
//!   client that declares the extension (at `initialize` or in a request's `_meta` capabilities)
//!   gets a task handle (`resultType: "task"`) instead of a result when it calls one of the tools
//!   that can run long ([`runs_long`]). The client polls `tasks/get`, which carries the status, the
//!   latest progress message as `statusMessage`, and at the end the `CallToolResult` (or the
//!   JSON-RPC error); `tasks/cancel` cancels the call exactly as `notifications/cancelled` would,
//!   which kills its process tree.
//! * The 2025-11-25 protocol ([`augmented`], [`requests`], [`wire`]): requestor-driven, so the
//!   server declares `capabilities.tasks` and `execution.taskSupport: "optional"` on the same tools,
//!   a `tools/call` with `params.task` answers a `CreateTaskResult`, and `tasks/get`,
//!   `tasks/result`, `tasks/list` and `tasks/cancel` follow it.
//!
//! Progress notifications keep flowing on the request's progress token while a task runs.
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

mod augmented;
mod requests;
pub(in crate::server) mod wire;

pub use augmented::AugmentedTasks;

/// How long a task and its result stay available: a day (a call's own timeout ends it far sooner).
const TASK_TTL_MS: u64 = 24 * 60 * 60 * 1000;
/// The polling interval suggested to clients.
const POLL_INTERVAL_MS: u64 = 500;

/// The tools that run as tasks (and declare `execution.taskSupport: "optional"`): the ones that run
/// builds, tests, clangd, a whole-workspace search or a debuggee.
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

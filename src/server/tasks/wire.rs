//! The part of MCP Tasks (2025-11-25) that rmcp 3.11's types cannot carry, done on the JSON of each
//! message by both transports (the stdio one and the in-process one): a task-augmented `tools/call`
//! (its `params.task` has no field in rmcp's `CallToolRequestParams`) and `tasks/get`/`tasks/cancel`
//! of a 2025-11-25 task (rmcp answers those methods only for SEP-2663 clients) are renamed to private
//! methods that reach [`ForgeServer`](crate::server::ForgeServer)'s custom-request handler;
//! `tasks/result` and `tasks/list` get there without renaming. On the way out, the `initialize` result
//! gains `capabilities.tasks` and `tools/list` gains `execution.taskSupport` on the tools that run
//! long (fields rmcp's `ServerCapabilities` and `Tool` do not have).
//!
//! Architecture invariant: this is the only place that rewrites MCP messages; it knows the methods
//! and the shapes only, never a task's state.

use rmcp::model::{JsonRpcMessage, ServerJsonRpcMessage, ServerResult};
use serde_json::{Value, json};

use super::runs_long;

/// A task-augmented `tools/call` as the handler receives it.
pub const TASK_CALL: &str = "forgemcp/tasks/call";
/// `tasks/get` of a 2025-11-25 task.
pub const TASK_GET: &str = "forgemcp/tasks/get";
/// `tasks/cancel` of a 2025-11-25 task.
pub const TASK_CANCEL: &str = "forgemcp/tasks/cancel";
/// The 2025-11-25 methods that rmcp passes to the custom-request handler as they are.
pub const TASK_RESULT: &str = "tasks/result";
pub const TASK_LIST: &str = "tasks/list";

/// Renames the incoming requests that the 2025-11-25 task handlers answer.
pub fn incoming(message: &mut Value) {
    let Some(method) = message.get("method").and_then(Value::as_str) else { return };
    let params = message.get("params");
    let renamed = match method {
        "tools/call" if params.and_then(|p| p.get("task")).is_some() => TASK_CALL,
        // SEP-2663 task ids are rmcp's UUIDs; every other id (ours, or one that names no task) is
        // answered the 2025-11-25 way.
        "tasks/get" if !names_sep_task(params) => TASK_GET,
        "tasks/cancel" if !names_sep_task(params) => TASK_CANCEL,
        _ => return,
    };
    message["method"] = Value::from(renamed);
}

fn names_sep_task(params: Option<&Value>) -> bool {
    params.and_then(|p| p.get("taskId")).and_then(Value::as_str).is_some_and(is_uuid)
}

/// `8-4-4-4-12` hexadecimal digits, the shape of rmcp's task ids.
fn is_uuid(id: &str) -> bool {
    let groups: Vec<&str> = id.split('-').collect();
    groups.len() == 5
        && groups.iter().zip([8, 4, 4, 4, 12]).all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The JSON to send instead of `message`, when the 2025-11-25 task fields go into it.
pub fn outgoing(message: &ServerJsonRpcMessage) -> Option<Value> {
    let JsonRpcMessage::Response(response) = message else { return None };
    match &response.result {
        ServerResult::InitializeResult(_) => {
            let mut value = serde_json::to_value(message).ok()?;
            value["result"]["capabilities"]["tasks"] =
                json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } });
            Some(value)
        }
        // A 2026-07-28 peer gets `resultType`; that revision removed `execution` (tasks became the
        // SEP-2663 extension there).
        ServerResult::ListToolsResult(list) if list.result_type.is_none() => {
            let mut value = serde_json::to_value(message).ok()?;
            for tool in value["result"]["tools"].as_array_mut()? {
                if tool["name"].as_str().is_some_and(runs_long) {
                    tool["execution"] = json!({ "taskSupport": "optional" });
                }
            }
            Some(value)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{JsonRpcResponse, JsonRpcVersion2_0, ListToolsResult, NumberOrString, Tool};

    use super::*;

    fn renamed(message: Value) -> String {
        let mut message = message;
        incoming(&mut message);
        message["method"].as_str().unwrap().to_owned()
    }

    #[test]
    fn task_requests_are_renamed_for_their_handlers() {
        let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "cmake_build", "task": {} } });
        assert_eq!(renamed(call), TASK_CALL);
        let plain = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "cmake_build" } });
        assert_eq!(renamed(plain), "tools/call");
        let ours = json!({ "jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": { "taskId": "task-0a1b" } });
        assert_eq!(renamed(ours), TASK_GET);
        let sep = json!({ "method": "tasks/cancel", "params": { "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840" } });
        assert_eq!(renamed(sep), "tasks/cancel");
        assert_eq!(renamed(json!({ "method": "tasks/cancel", "params": { "taskId": "x" } })), TASK_CANCEL);
        assert_eq!(renamed(json!({ "method": "tasks/result", "params": { "taskId": "x" } })), TASK_RESULT);
    }

    fn list_response(result_type: Option<rmcp::model::ResultType>) -> ServerJsonRpcMessage {
        let schema = std::sync::Arc::new(serde_json::Map::new());
        let mut list = ListToolsResult::with_all_items(vec![
            Tool::new("cmake_build", "b", schema.clone()),
            Tool::new("workspace_read_file", "r", schema),
        ]);
        list.result_type = result_type;
        JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: NumberOrString::Number(1),
            result: ServerResult::ListToolsResult(list),
        })
    }

    #[test]
    fn only_long_tools_declare_optional_task_support() {
        let value = outgoing(&list_response(None)).expect("rewritten");
        let tools = value["result"]["tools"].as_array().unwrap();
        assert_eq!(tools[0]["execution"], json!({ "taskSupport": "optional" }));
        assert_eq!(tools[1].get("execution"), None);
        assert!(outgoing(&list_response(Some(rmcp::model::ResultType::COMPLETE))).is_none());
    }
}

//! MCP Tasks as the 2025-11-25 specification states them, spoken as raw JSON-RPC over the real
//! binary's stdio: `capabilities.tasks`, `execution.taskSupport` on exactly the long-running tools,
//! task-augmented `tools/call` answering a `CreateTaskResult`, `tasks/list`, `tasks/get`,
//! `tasks/result` (the `CallToolResult`, tied to its task), the status notification, progress on
//! the call's token while the task runs, and `tasks/cancel` killing the call's process tree.

use std::collections::BTreeSet;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::support::{TempWorkspace, binary};
#[cfg(unix)]
use crate::tasks::{SleepingCmake, all_end};

/// A raw JSON-RPC session with the binary: requests by id, notifications kept in arrival order.
struct Raw {
    _child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    next_id: u64,
    notifications: Vec<Value>,
}

impl Raw {
    #[expect(clippy::disallowed_methods, reason = "tests start the real server binary")]
    fn start(ws: &TempWorkspace, extra: &[&str]) -> Raw {
        let mut child = tokio::process::Command::new(binary())
            .arg("--workspace")
            .arg(&ws.project)
            .args(["--no-admin", "--progress-interval", "0"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn server");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Raw { _child: child, stdin, stdout, next_id: 0, notifications: Vec::new() }
    }

    async fn send(&mut self, message: Value) {
        self.stdin.write_all(format!("{message}\n").as_bytes()).await.expect("write a request");
    }

    /// The whole reply (`result` or `error`) to one request.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await;
        let read = async {
            loop {
                let line = self.stdout.next_line().await.expect("read stdout").expect("the server answers");
                let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
                if message.get("method").is_some() {
                    self.notifications.push(message);
                } else if message["id"] == id {
                    return message;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(60), read).await.unwrap_or_else(|_| panic!("no reply to {method}"))
    }

    async fn result(&mut self, method: &str, params: Value) -> Value {
        let reply = self.request(method, params).await;
        reply.get("result").cloned().unwrap_or_else(|| panic!("{method} failed: {reply}"))
    }

    async fn error_code(&mut self, method: &str, params: Value) -> i64 {
        let reply = self.request(method, params).await;
        reply["error"]["code"].as_i64().unwrap_or_else(|| panic!("{method} should fail: {reply}"))
    }

    async fn initialize(&mut self) -> Value {
        let capabilities = json!({ "tasks": { "list": {}, "cancel": {} } });
        let params = json!({ "protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": { "name": "raw-tasks", "version": "1" } });
        let result = self.result("initialize", params).await;
        assert_eq!(result["protocolVersion"], "2025-11-25");
        self.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
        result
    }

    /// Polls `tasks/get` until the task's status is not `working` (at most a minute).
    async fn poll_until_done(&mut self, task_id: &str) -> Value {
        for _ in 0..600 {
            let task = self.result("tasks/get", json!({ "taskId": task_id })).await;
            assert_eq!(task["taskId"], task_id);
            if task["status"] != "working" {
                return task;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("task {task_id} still working after a minute");
    }

    /// The statuses announced for `task_id`, once `last` is among them (reading on for up to ten
    /// seconds: a notification and the replies to other requests may arrive in either order).
    async fn status_notifications(&mut self, task_id: &str, last: &str) -> Vec<String> {
        let statuses = |notifications: &[Value]| -> Vec<String> {
            notifications
                .iter()
                .filter(|n| n["method"] == "notifications/tasks/status" && n["params"]["taskId"] == task_id)
                .map(|n| n["params"]["status"].as_str().unwrap_or_default().to_owned())
                .collect()
        };
        let read = async {
            while !statuses(&self.notifications).iter().any(|s| s == last) {
                let line = self.stdout.next_line().await.expect("read stdout").expect("the server runs");
                let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
                if message.get("method").is_some() {
                    self.notifications.push(message);
                }
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(10), read).await;
        statuses(&self.notifications)
    }
}

/// Checks the task fields every task answer carries.
fn assert_task_shape(task: &Value) {
    assert!(task["taskId"].as_str().is_some_and(|id| !id.is_empty()), "{task}");
    for field in ["createdAt", "lastUpdatedAt"] {
        let stamp = task[field].as_str().unwrap_or_else(|| panic!("{field} in {task}"));
        assert!(chrono::DateTime::parse_from_rfc3339(stamp).is_ok(), "{field} {stamp}");
    }
    assert!(task["ttl"].is_u64() && task["pollInterval"].is_u64(), "{task}");
}

#[tokio::test]
async fn task_augmented_calls_follow_the_2025_11_25_protocol() {
    let ws = TempWorkspace::new("//- a.txt\n    needle\n//- b.txt\n    hay\n");
    let mut raw = Raw::start(&ws, &[]);
    let init = raw.initialize().await;
    assert_eq!(
        init["capabilities"]["tasks"],
        json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } })
    );

    let tools = raw.result("tools/list", json!({})).await;
    let tools = tools["tools"].as_array().expect("tools");
    let with_tasks: BTreeSet<&str> = tools
        .iter()
        .filter(|tool| tool.get("execution").is_some())
        .map(|tool| {
            assert_eq!(tool["execution"], json!({ "taskSupport": "optional" }), "{}", tool["name"]);
            tool["name"].as_str().unwrap()
        })
        .collect();
    let long: BTreeSet<&str> = tools
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .filter(|name| {
            matches!(
                *name,
                "cmake_configure"
                    | "cmake_build"
                    | "cmake_test"
                    | "cmake_run_test"
                    | "workspace_text_search"
                    | "debug_launch"
                    | "debug_continue"
            ) || (name.starts_with("clangd_") && *name != "clangd_configurations")
        })
        .collect();
    assert_eq!(with_tasks, long, "exactly the long-running tools declare task support");
    for name in [
        "cmake_build",
        "cmake_run_test",
        "workspace_text_search",
        "clangd_references",
        "debug_launch",
        "debug_continue",
    ] {
        assert!(with_tasks.contains(name), "{name} declares task support: {with_tasks:?}");
    }

    let params =
        json!({ "name": "workspace_text_search", "arguments": { "query": "needle" }, "task": { "ttl": 60000 } });
    let created = raw.result("tools/call", params).await;
    let task = &created["task"];
    assert_task_shape(task);
    assert_eq!((task["status"].clone(), task["ttl"].clone()), (json!("working"), json!(60000)), "{created}");
    let task_id = task["taskId"].as_str().unwrap().to_owned();

    let listed = raw.result("tasks/list", json!({})).await;
    let ids: Vec<&str> =
        listed["tasks"].as_array().expect("tasks").iter().filter_map(|t| t["taskId"].as_str()).collect();
    assert_eq!(ids, [task_id.as_str()], "{listed}");
    assert_task_shape(&listed["tasks"][0]);

    let done = raw.poll_until_done(&task_id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_task_shape(&done);
    let result = raw.result("tasks/result", json!({ "taskId": task_id })).await;
    assert_eq!(result["structuredContent"]["matches"][0]["path"], "project/a.txt", "{result}");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/related-task"], json!({ "taskId": task_id }));
    assert!(result.get("resultType").is_none(), "a 2025-11-25 result: {result}");
    // The end of the task was announced.
    assert_eq!(raw.status_notifications(&task_id, "completed").await, ["completed"]);

    // A plain call of the same tool still answers at once; other tools refuse to run as tasks.
    let plain =
        raw.result("tools/call", json!({ "name": "workspace_text_search", "arguments": { "query": "hay" } })).await;
    assert_eq!(plain["structuredContent"]["matches"][0]["path"], "project/b.txt", "{plain}");
    let refused = json!({ "name": "workspace_read_file", "arguments": { "path": "a.txt" }, "task": {} });
    assert_eq!(raw.error_code("tools/call", refused).await, -32601);
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        assert_eq!(raw.error_code(method, json!({ "taskId": "task-none" })).await, -32602, "{method}");
    }
    assert_eq!(raw.error_code("tasks/cancel", json!({ "taskId": task_id })).await, -32602, "a completed task");
    assert_eq!(raw.error_code("tasks/list", json!({ "cursor": "nonsense" })).await, -32602);

    // A call that ends with a tool error is a failed task; tasks/result still answers its result.
    let failing = json!({ "name": "workspace_text_search", "arguments": { "query": "" }, "task": {} });
    let failed_id = raw.result("tools/call", failing).await["task"]["taskId"].as_str().unwrap().to_owned();
    assert_eq!(raw.poll_until_done(&failed_id).await["status"], "failed");
    let failed = raw.result("tasks/result", json!({ "taskId": failed_id })).await;
    assert_eq!(failed["isError"], true, "{failed}");
    assert!(failed["content"][0]["text"].as_str().is_some_and(|t| t.contains("`query`")), "{failed}");

    // tasks/list pages: 50 tasks a page, oldest first, then the rest after `nextCursor`.
    let mut ids = vec![task_id, failed_id];
    for _ in 0..49 {
        let params = json!({ "name": "workspace_text_search", "arguments": { "query": "hay" }, "task": {} });
        ids.push(raw.result("tools/call", params).await["task"]["taskId"].as_str().unwrap().to_owned());
    }
    let first = raw.result("tasks/list", json!({})).await;
    let page = |list: &Value| -> Vec<String> {
        list["tasks"].as_array().unwrap().iter().map(|t| t["taskId"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(page(&first), ids[..50]);
    let cursor = first["nextCursor"].as_str().expect("a next page").to_owned();
    let second = raw.result("tasks/list", json!({ "cursor": cursor })).await;
    assert_eq!(page(&second), ids[50..]);
    assert!(second.get("nextCursor").is_none(), "{second}");
}

/// Cancelling a task of the fake cmake that waits for a child ([`SleepingCmake`]).
#[cfg(unix)]
#[tokio::test]
async fn tasks_cancel_kills_the_process_tree_of_the_task() {
    let cmake = SleepingCmake::new();
    let options: Vec<&str> = cmake.options.iter().map(String::as_str).collect();
    let mut raw = Raw::start(&cmake.ws, &options);
    raw.initialize().await;

    let params =
        json!({ "name": "cmake_configure", "arguments": {}, "task": {}, "_meta": { "progressToken": "configure" } });
    let created = raw.result("tools/call", params).await;
    let task_id = created["task"]["taskId"].as_str().expect("a task").to_owned();
    let tree = cmake.tree().await;
    // The call's progress token stays valid after the task handle: the configure output arrives on it.
    let mut running = raw.result("tasks/get", json!({ "taskId": task_id })).await;
    for _ in 0..300 {
        if running["statusMessage"].as_str().is_some_and(|m| m.contains("Pretending to configure")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        running = raw.result("tasks/get", json!({ "taskId": task_id })).await;
    }
    assert_eq!(running["status"], "working", "{running}");
    assert!(running["statusMessage"].as_str().is_some_and(|m| m.contains("Pretending to configure")), "{running}");
    assert!(
        raw.notifications
            .iter()
            .any(|n| n["method"] == "notifications/progress" && n["params"]["progressToken"] == "configure"),
        "progress on the call's token: {:?}",
        raw.notifications
    );

    let cancelled = raw.result("tasks/cancel", json!({ "taskId": task_id })).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert_task_shape(&cancelled);
    assert!(all_end(&tree).await, "cancelling killed the whole tree {tree:?}");
    // The task stays cancelled; its result is what the cancelled call answered.
    let result = raw.result("tasks/result", json!({ "taskId": task_id })).await;
    assert_eq!(result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], task_id.as_str(), "{result}");
    assert_eq!(raw.result("tasks/get", json!({ "taskId": task_id })).await["status"], "cancelled");
    assert_eq!(raw.error_code("tasks/cancel", json!({ "taskId": task_id })).await, -32602, "already cancelled");
    assert_eq!(raw.status_notifications(&task_id, "cancelled").await, ["cancelled"]);
}

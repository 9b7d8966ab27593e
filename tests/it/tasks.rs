//! MCP Tasks (SEP-2663, as rmcp 3.11 speaks it) through the real MCP surface, with rmcp's client
//! declaring the extension: long-running tools answer with a task, `tasks/get` reports progress and
//! the result, `tasks/cancel` kills the call's process tree; other tools and clients are unaffected.

use std::sync::Arc;
use std::time::Duration;

use forgemcp::server::ForgeServer;
use parking_lot::Mutex;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig, DetailedTask,
    GetTaskParams, Implementation, ProgressNotificationParam, ResultType, TaskPayload, TaskStatus,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::support::{TempWorkspace, TestClient, call, structured};
#[cfg(unix)]
use {crate::support::real_services, rmcp::model::CancelTaskParams};

/// A client that declares the tasks extension and records progress.
#[derive(Clone, Default)]
struct TaskClient {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for TaskClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::builder().enable_tasks().build(), Implementation::new("tasks", "0"))
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.lock().push(params);
    }
}

type Client = RunningService<RoleClient, TaskClient>;

async fn connect(server: ForgeServer, client: TaskClient) -> Client {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(forgemcp::server::duplex::transport(server_io)).await {
            let _ = running.waiting().await;
        }
    });
    client.serve(client_io).await.expect("client connects")
}

async fn call_once(client: &Client, tool: &str, args: Value) -> CallToolResponse {
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args.as_object().cloned().expect("object"));
    client.call_tool_once(params).await.unwrap_or_else(|e| panic!("{tool}: {e}"))
}

async fn task_of(client: &Client, tool: &str, args: Value) -> String {
    match call_once(client, tool, args).await {
        CallToolResponse::Task(created) => {
            assert_eq!(created.result_type, ResultType::TASK);
            assert_eq!(created.task.status, TaskStatus::Working);
            assert!(created.task.poll_interval_ms.is_some());
            created.task.task_id
        }
        other => panic!("{tool} should answer with a task: {other:?}"),
    }
}

async fn get(client: &Client, task_id: &str) -> DetailedTask {
    client.peer().get_task(GetTaskParams::new(task_id.to_owned())).await.expect("tasks/get").task
}

/// Polls `tasks/get` until `done` holds (at most a minute).
async fn poll(client: &Client, task_id: &str, what: &str, done: impl Fn(&DetailedTask) -> bool) -> DetailedTask {
    let mut task = get(client, task_id).await;
    for _ in 0..1200 {
        if done(&task) {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        task = get(client, task_id).await;
    }
    panic!("timed out waiting for {what}: {task:?}");
}

fn completed(task: &DetailedTask) -> CallToolResult {
    match &task.payload {
        TaskPayload::Completed { result } => serde_json::from_value(Value::Object(result.clone())).expect("a result"),
        other => panic!("expected a completed task, got {other:?}"),
    }
}

#[cfg(unix)]
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
}

/// A workspace with a fake cmake that prints a line, records its pid and the pid of a child in
/// `pids`, then waits for the child; and the server options that make it profile `p`'s cmake.
#[cfg(unix)]
pub struct SleepingCmake {
    pub ws: TempWorkspace,
    pids: std::path::PathBuf,
    pub options: Vec<String>,
}

#[cfg(unix)]
impl SleepingCmake {
    pub fn new() -> SleepingCmake {
        use std::os::unix::fs::PermissionsExt as _;

        let ws = TempWorkspace::new("//- CMakeLists.txt\n    project(x)\n");
        let pids = ws.base.join("pids");
        let script = ws.base.join("fake-cmake");
        let body = format!(
            "#!/bin/sh\ncase \"$1\" in --version) echo 'cmake version 3.25.1'; exit 0;; -E) exit 0;; esac\n\
             echo '-- Pretending to configure'\nsleep 60 &\necho \"$$ $!\" > '{}'\nwait\n",
            pids.display()
        );
        std::fs::write(&script, body).expect("write the fake cmake");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("executable");
        let cmake = format!("cmake={}", script.display());
        let options = ["--toolset", "fake", &cmake, "--cmake-profile", "p", "toolset=fake", "generator=Unix Makefiles"];
        SleepingCmake { ws, pids, options: options.map(str::to_owned).to_vec() }
    }

    /// The pids of the running fake cmake and its child, once it wrote them (all alive).
    pub async fn tree(&self) -> Vec<u32> {
        let recorded = loop {
            match std::fs::read_to_string(&self.pids) {
                Ok(text) if text.ends_with('\n') => break text,
                _ => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        };
        let tree: Vec<u32> = recorded.split_whitespace().map(|p| p.parse().expect("a pid")).collect();
        assert!(tree.iter().all(|&pid| alive(pid)), "the fake cmake and its child run");
        tree
    }
}

/// Whether every process of `tree` ends within five seconds.
#[cfg(unix)]
pub async fn all_end(tree: &[u32]) -> bool {
    for _ in 0..250 {
        if tree.iter().all(|&pid| !alive(pid)) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn a_search_runs_as_a_task_and_tasks_get_carries_its_result() {
    let ws = TempWorkspace::new("//- a.txt\n    needle\n//- b.txt\n    hay\n");
    let handler = TaskClient::default();
    let client = connect(ws.server(Duration::ZERO), handler.clone()).await;
    let caps = client.peer_info().expect("initialized").capabilities.clone();
    assert!(caps.supports_tasks(), "the server declares the tasks extension");

    let task_id = task_of(&client, "workspace_text_search", json!({ "query": "needle" })).await;
    let task = poll(&client, &task_id, "the search task", |t| t.task.status.is_terminal()).await;
    assert_eq!(task.task.status, TaskStatus::Completed);
    let result = completed(&task);
    assert_eq!(structured(&result)["matches"][0]["path"], "project/a.txt", "{result:?}");
    // rmcp's client attaches a progress token; the task's progress arrived on it.
    assert!(!handler.progress.lock().is_empty(), "progress notifications during the task");

    // Short tools still answer at once; so does a client without the extension.
    assert!(matches!(call_once(&client, "workspace_list", json!({})).await, CallToolResponse::Complete(_)));
    let plain = ws.connect(TestClient::new()).await;
    let res = call(&plain, "workspace_text_search", json!({ "query": "needle" })).await;
    assert_eq!(structured(&res)["matches"][0]["path"], "project/a.txt");

    let err = client.peer().get_task(GetTaskParams::new("no-such-task")).await.expect_err("unknown task");
    assert!(err.to_string().contains("no-such-task"), "{err}");
}

/// Cancelling a task of the fake cmake that waits for a child.
#[cfg(unix)]
#[tokio::test]
async fn cancelling_a_task_kills_its_process_tree() {
    let cmake = SleepingCmake::new();
    let options: Vec<&str> = cmake.options.iter().map(String::as_str).collect();
    let services = real_services(&cmake.ws, &options);
    let client = connect(ForgeServer::new(services, Duration::ZERO), TaskClient::default()).await;

    let task_id = task_of(&client, "cmake_configure", json!({})).await;
    let running = poll(&client, &task_id, "the configure output", |t| {
        t.task.status_message.as_deref().is_some_and(|m| m.contains("Pretending to configure"))
    })
    .await;
    assert_eq!(running.task.status, TaskStatus::Working);
    let tree = cmake.tree().await;

    client.peer().cancel_task(CancelTaskParams::new(task_id.clone())).await.expect("tasks/cancel");
    let ended = poll(&client, &task_id, "the cancelled task", |t| t.task.status.is_terminal()).await;
    assert_eq!(ended.task.status, TaskStatus::Cancelled);
    assert!(all_end(&tree).await, "cancelling killed the whole tree {tree:?}");
}

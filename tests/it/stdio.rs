//! The real binary over stdio: startup, one call, stdout purity, and robustness against malformed
//! input. Raw JSON lines are used where rmcp's client would hide what is on the wire.

use std::process::Stdio;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::support::{TempWorkspace, TestClient, binary, call, structured};

#[expect(clippy::disallowed_methods, reason = "tests start the real server binary")]
fn server_command(ws: &TempWorkspace) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(binary());
    cmd.arg("--workspace").arg(&ws.project).arg("--no-admin").env("FORGEMCP_LOG", "info");
    cmd
}

#[tokio::test]
async fn rmcp_client_talks_to_the_binary() {
    let ws = TempWorkspace::new("//- src/main.cpp\n    int main() { return 0; }");
    let cmd = server_command(&ws).configure(|_| {});
    let (transport, _stderr) = TokioChildProcess::builder(cmd).stderr(Stdio::null()).spawn().expect("spawn server");
    let client = TestClient::new().serve(transport).await.expect("initialize");
    assert_eq!(client.peer_info().unwrap().server_info.as_ref().unwrap().name, "forgemcp");
    let res = call(&client, "workspace_read_file", json!({ "path": "src/main.cpp" })).await;
    assert_eq!(structured(&res)["path"], "project/src/main.cpp");
    client.cancel().await.expect("clean shutdown");
}

/// The `initialize` request (id 0) and the `initialized` notification, as lines.
fn handshake() -> String {
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}});
    format!("{init}\n{}\n", json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
}

/// Writes `lines` (each a request or a malformed line expecting one reply) to a fresh server,
/// waits for the replies, closes stdin, and returns every stdout line parsed as JSON plus stderr.
async fn exchange(ws: &TempWorkspace, lines: &[String]) -> (Vec<Value>, String) {
    let mut child = server_command(ws)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn server");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut input = handshake();
    for line in lines {
        input.push_str(line);
        input.push('\n');
    }
    stdin.write_all(input.as_bytes()).await.unwrap();
    // Give the requests time to be answered before closing stdin ends the session.
    let mut reader = BufReader::new(stdout).lines();
    let mut out = Vec::new();
    let expected_replies = 1 + lines.len();
    let read = async {
        while let Ok(Some(line)) = reader.next_line().await {
            let value: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            assert_eq!(value["jsonrpc"], "2.0", "{line}");
            out.push(value);
            if out.iter().filter(|v| v.get("method").is_none()).count() == expected_replies {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(20), read).await.expect("replies arrive");
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait()).await.expect("exits").unwrap();
    assert!(status.success(), "exit status {status}");
    let mut err = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut err).await.unwrap();
    (out, err)
}

fn reply_for(replies: &[Value], id: Value) -> &Value {
    replies.iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("no reply with id {id}: {replies:#?}"))
}

#[tokio::test]
async fn every_request_with_an_id_gets_a_reply_and_the_session_survives_bad_input() {
    let ws = TempWorkspace::new("//- a.txt\n    hello");
    let lines = [
        "this is not json".to_owned(),
        json!({"jsonrpc":"2.0","id":1,"method":"no/such/method"}).to_string(),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"workspace_read_file","arguments":{"path":42}}}).to_string(),
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":5}).to_string(),
        json!([{"jsonrpc":"2.0","id":4,"method":"ping"}]).to_string(),
        json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope","arguments":{}}}).to_string(),
        json!({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"workspace_read_file","arguments":{"path":"a.txt"}}}).to_string(),
    ];
    let (replies, stderr) = exchange(&ws, &lines).await;
    assert_eq!(reply_for(&replies, json!(0))["result"]["serverInfo"]["name"], "forgemcp");
    let nulls: Vec<&Value> = replies.iter().filter(|r| r["id"].is_null()).collect();
    assert_eq!(nulls.len(), 2, "parse error and batch error: {nulls:#?}");
    assert!(nulls.iter().any(|r| r["error"]["code"] == -32700));
    assert!(nulls.iter().any(|r| r["error"]["code"] == -32600));
    assert_eq!(reply_for(&replies, json!(1))["error"]["code"], -32601);
    let bad_args = &reply_for(&replies, json!(2))["result"];
    assert_eq!(bad_args["isError"], true);
    assert!(bad_args["content"][0]["text"].as_str().unwrap().contains("`path`"));
    assert_eq!(reply_for(&replies, json!(3))["error"]["code"], -32602);
    assert_eq!(reply_for(&replies, json!(5))["error"]["code"], -32602);
    assert_eq!(reply_for(&replies, json!(6))["result"]["structuredContent"]["text"], "hello\n");
    assert!(stderr.contains("serving MCP on stdio"), "logs go to stderr: {stderr}");
}

#[tokio::test]
async fn progress_is_sent_only_with_a_progress_token() {
    let ws = TempWorkspace::new("//- a.txt\n    needle");
    let search = |id: u64, meta: Value| {
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
            "name":"workspace_text_search","arguments":{"query":"needle"},"_meta":meta}})
        .to_string()
    };
    let (lines, _) = exchange(&ws, &[search(1, json!({})), search(2, json!({"progressToken":"tok"}))]).await;
    let progress: Vec<&Value> = lines.iter().filter(|l| l["method"] == "notifications/progress").collect();
    assert!(!progress.is_empty(), "a call with a token gets progress");
    assert!(progress.iter().all(|p| p["params"]["progressToken"] == "tok"), "{progress:#?}");
    assert_eq!(reply_for(&lines, json!(1))["result"]["structuredContent"]["matches_count"], 1);
}

/// Minimal valid arguments for tools that need some; every other tool is called with `{}`.
fn sample_arguments(tool: &str) -> Value {
    match tool {
        "workspace_read_file" | "workspace_file_info" => json!({ "path": "a.txt" }),
        "workspace_text_search" => json!({ "query": "hello" }),
        "workspace_write_file" => json!({ "path": "new.txt", "text": "new\n" }),
        "workspace_edit_file" => json!({ "path": "b.txt", "old_text": "old", "new_text": "new" }),
        "workspace_move" => json!({ "source": "c.txt", "destination": "d.txt" }),
        "workspace_delete" => json!({ "path": "e.txt" }),
        "workspace_mkdir" => json!({ "path": "dir" }),
        "process_get" => json!({ "process_id": 1 }),
        "toolset_get" => json!({ "toolset_id": "system" }),
        "cmake_run_test" => json!({ "executable": "a.txt" }),
        "clangd_diagnostics" | "clangd_document_symbols" => json!({ "path": "a.txt" }),
        "clangd_hover" | "clangd_definition" | "clangd_references" => {
            json!({ "path": "a.txt", "position": { "line": 1, "character": 0 } })
        }
        "clangd_workspace_symbols" => json!({ "query": "main" }),
        _ => json!({}),
    }
}

#[tokio::test]
async fn every_tool_answers_over_stdio_and_stdout_stays_json_rpc() {
    let ws = TempWorkspace::new("//- a.txt\n    hello\n//- b.txt\n    old\n//- c.txt\n    c\n//- e.txt\n    e");
    let tools = ws.server(Duration::ZERO).tools();
    assert!(tools.len() >= 10, "{} tools", tools.len());
    let lines: Vec<String> = tools
        .iter()
        .enumerate()
        .map(|(idx, tool)| {
            json!({"jsonrpc":"2.0","id":idx + 1,"method":"tools/call","params":{
                "name": tool.name, "arguments": sample_arguments(&tool.name)}})
            .to_string()
        })
        .collect();
    let (replies, _) = exchange(&ws, &lines).await;
    for (idx, tool) in tools.iter().enumerate() {
        let reply = reply_for(&replies, json!(idx + 1));
        let result = &reply["result"];
        assert!(result["content"][0]["text"].is_string(), "{}: {reply}", tool.name);
        if result["isError"] != true {
            assert!(result["structuredContent"].is_object(), "{}: {reply}", tool.name);
        }
    }
}

#[tokio::test]
async fn ids_that_are_neither_string_nor_number_and_unknown_prompts_are_invalid() {
    let ws = TempWorkspace::new("//- a.txt\n    hello");
    let lines = [
        json!({"jsonrpc":"2.0","id":null,"method":"ping"}).to_string(),
        json!({"jsonrpc":"2.0","id":{"n":1},"method":"tools/list"}).to_string(),
        json!({"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"nosuch"}}).to_string(),
        json!({"jsonrpc":"2.0","id":2,"method":"prompts/list"}).to_string(),
        json!({"jsonrpc":"2.0","id":3,"method":"ping"}).to_string(),
    ];
    let (replies, _) = exchange(&ws, &lines).await;
    let nulls: Vec<&Value> = replies.iter().filter(|r| r["id"].is_null()).collect();
    assert_eq!(nulls.len(), 2, "{nulls:#?}");
    assert!(nulls.iter().all(|r| r["error"]["code"] == -32600), "{nulls:#?}");
    assert_eq!(reply_for(&replies, json!(1))["error"]["code"], -32602);
    assert_eq!(reply_for(&replies, json!(2))["result"]["prompts"], json!([]));
    assert_eq!(reply_for(&replies, json!(3))["result"], json!({}));
}

#[tokio::test]
async fn an_explicit_range_of_a_4_mb_file_is_one_reply_with_the_text_once() {
    let ws = TempWorkspace::new("//- a.txt\n    hello");
    let line = format!("{}\n", "x".repeat(73));
    let lines = 54_000;
    ws.write("big.hpp", line.repeat(lines));
    let read = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"workspace_read_file",
        "arguments":{"path":"big.hpp","start_line":1,"end_line":lines,"max_bytes":10_000_000}}});
    let (replies, _) = exchange(&ws, &[read.to_string()]).await;
    let result = &reply_for(&replies, json!(1))["result"];
    assert_eq!(result["isError"], false, "{:.300}", result.to_string());
    assert_eq!(result["structuredContent"]["text"].as_str().map(str::len), Some(line.len() * lines));
    let text = result["content"][0]["text"].as_str().expect("text");
    assert!(text.starts_with("Lines 1–54000 of project/big.hpp (3996000 bytes)"), "{text}");
}

fn initialize_and_ping() -> String {
    format!("{}{}\n", handshake(), json!({"jsonrpc":"2.0","id":1,"method":"ping"}))
}

#[tokio::test]
async fn requests_from_a_regular_file_are_answered_before_the_session_ends() {
    let ws = TempWorkspace::new("//- a.txt\n    hello");
    let input = ws.base.join("requests.jsonl");
    std::fs::write(&input, initialize_and_ping()).unwrap();
    let child = server_command(&ws)
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn server");
    let output = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output()).await.expect("exits").unwrap();
    assert!(output.status.success(), "exit status {}", output.status);
    let replies: Vec<Value> =
        String::from_utf8(output.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(reply_for(&replies, json!(0))["result"]["serverInfo"]["name"], "forgemcp");
    assert_eq!(reply_for(&replies, json!(1))["result"], json!({}));
}

/// A pipe is read on the runtime's reactor, non-blocking; its flags are shared by every holder of
/// the pipe's read end, and the server puts them back before it exits.
#[cfg(unix)]
#[tokio::test]
async fn a_pipe_on_stdin_is_read_non_blocking_and_left_as_it_was() {
    use rustix::fs::OFlags;
    let ws = TempWorkspace::new("//- a.txt\n    hello");
    // Close-on-exec: no child (this one or another test's) may hold the write end open.
    let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap();
    let ours = read.try_clone().unwrap();
    let mut child = server_command(&ws)
        .stdin(Stdio::from(read))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn server");
    let mut stdin = tokio::fs::File::from_std(std::fs::File::from(write));
    stdin.write_all(initialize_and_ping().as_bytes()).await.unwrap();
    let mut replies = BufReader::new(child.stdout.take().unwrap()).lines();
    let answered = async {
        while let Some(line) = replies.next_line().await.unwrap() {
            if serde_json::from_str::<Value>(&line).unwrap()["id"] == 1 {
                return;
            }
        }
        panic!("stdout ended before the ping's reply");
    };
    tokio::time::timeout(Duration::from_secs(20), answered).await.expect("the ping is answered");
    let flags = || rustix::fs::fcntl_getfl(&ours).unwrap();
    assert!(flags().contains(OFlags::NONBLOCK), "stdin is read on the reactor: {:?}", flags());
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait()).await.expect("exits").unwrap();
    assert!(status.success(), "exit status {status}");
    assert!(!flags().contains(OFlags::NONBLOCK), "the flags are put back: {:?}", flags());
}

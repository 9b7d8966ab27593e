#![allow(deprecated)] // rmcp marks the logging API deprecated (SEP-2577); the server must still accept it.
//! The MCP surface: identity, capabilities, the registry's rules, elicitation, the history hook.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use forgemcp::call::ProgressUpdate;
use forgemcp::server::{CallEnd, CallObserver, CallStarted, Origin};
use parking_lot::Mutex;
use rmcp::ClientServiceExt;
use rmcp::model::{CallToolRequestParams, ErrorCode, LoggingLevel, ProtocolVersion, SetLevelRequestParams};
use rmcp::service::ClientLifecycleMode;
use serde_json::json;

use crate::support::{Answer, TempWorkspace, TestClient, call, connect, structured, text, tool_error};

#[tokio::test]
async fn initialize_reports_identity_and_capabilities() {
    let ws = TempWorkspace::new("");
    let client = ws.connect(TestClient::new()).await;
    let info = client.peer_info().expect("server info after initialize");
    let server = info.server_info.as_ref().expect("server implementation");
    assert_eq!(server.name, "forgemcp");
    assert_eq!(server.title.as_deref(), Some("ForgeMCP"));
    assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
    let instructions = info.instructions.as_deref().expect("instructions");
    assert!(instructions.contains("Workspace:"), "{instructions}");
    let caps = &info.capabilities;
    assert!(caps.tools.is_some() && caps.resources.is_some() && caps.completions.is_some());
    assert!(caps.prompts.is_some() && caps.logging.is_some());
    let ui = caps.extensions.as_ref().and_then(|e| e.get("io.modelcontextprotocol/ui")).expect("MCP Apps extension");
    assert_eq!(ui["mimeTypes"], json!(["text/html;profile=mcp-app"]));
}

#[tokio::test]
async fn prompts_are_an_empty_list_and_log_levels_are_accepted() {
    let ws = TempWorkspace::new("");
    let client = ws.connect(TestClient::new()).await;
    assert!(client.list_all_prompts().await.expect("prompts/list").is_empty());
    client.set_level(SetLevelRequestParams::new(LoggingLevel::Debug)).await.expect("logging/setLevel");
}

#[tokio::test]
async fn every_tool_declares_schemas_annotations_icon_and_widget() {
    let ws = TempWorkspace::new("");
    let client = ws.connect(TestClient::new()).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    assert!(!tools.is_empty());
    let mut model_facing = 0;
    for tool in &tools {
        assert!(tool.name.len() <= 30, "{}", tool.name);
        assert!(tool.output_schema.is_some(), "{} has an output schema", tool.name);
        assert!(tool.annotations.is_some(), "{} has annotations", tool.name);
        let icons = tool.icons.as_ref().expect("icons");
        assert!(icons[0].src.starts_with("data:image/svg+xml;base64,"), "{}", tool.name);
        let meta = tool.meta.as_ref().expect("_meta");
        let uri = meta.get("ui").and_then(|ui| ui.get("resourceUri")).and_then(|u| u.as_str()).expect("ui uri");
        assert!(uri.starts_with("ui://forgemcp/") && uri.ends_with(".html"), "{uri}");
        assert_eq!(meta.get("ui/resourceUri").and_then(|u| u.as_str()), Some(uri));
        model_facing += serde_json::to_string(&json!({
            "name": tool.name, "description": tool.description, "inputSchema": tool.input_schema,
        }))
        .unwrap()
        .len();
    }
    assert!(model_facing <= 22 * 1024 + 512, "model-facing tool list is {model_facing} bytes");
}

#[tokio::test]
async fn unknown_tool_is_invalid_params() {
    let ws = TempWorkspace::new("");
    let client = ws.connect(TestClient::new()).await;
    let err = client
        .call_tool(CallToolRequestParams::new("no_such_tool").with_arguments(serde_json::Map::new()))
        .await
        .expect_err("unknown tool");
    match err {
        rmcp::ServiceError::McpError(data) => {
            assert_eq!(data.code, ErrorCode::INVALID_PARAMS);
            assert!(data.message.contains("no_such_tool"), "{}", data.message);
        }
        other => panic!("unexpected error {other:?}"),
    }
}

#[tokio::test]
async fn bad_arguments_name_the_argument_and_the_session_continues() {
    let ws = TempWorkspace::new("//- a.txt\n    hello");
    let client = ws.connect(TestClient::new()).await;
    let res = call(&client, "workspace_read_file", json!({ "path": "a.txt", "start_line": "one" })).await;
    assert!(tool_error(&res).contains("`start_line`"), "{}", text(&res));
    let res = call(&client, "workspace_read_file", json!({})).await;
    assert!(tool_error(&res).contains("`path`"), "{}", text(&res));
    let res = call(&client, "workspace_read_file", json!({ "path": "a.txt", "bogus": 1 })).await;
    assert!(tool_error(&res).contains("`bogus`"), "{}", text(&res));
    let res = call(&client, "workspace_read_file", json!({ "path": "../a.txt" })).await;
    assert!(tool_error(&res).contains("Invalid argument `path`"), "{}", text(&res));
    let res = call(&client, "workspace_read_file", json!({ "path": "a.txt" })).await;
    assert_eq!(structured(&res)["text"], "hello\n");
}

fn external_file() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::canonicalize(dir.path()).unwrap().join("external.h");
    std::fs::write(&file, "#define EXTERNAL 1\n").unwrap();
    let qualified = format!("root/{}", file.display().to_string().trim_start_matches('/'));
    (dir, qualified)
}

#[tokio::test]
async fn external_reads_ask_every_time_and_accept_reads() {
    let (_dir, path) = external_file();
    let ws = TempWorkspace::new("");
    let client_handler = TestClient::answering(Answer::Accept);
    let client = ws.connect(client_handler.clone()).await;
    for _ in 0..2 {
        let res = call(&client, "workspace_read_file", json!({ "path": path })).await;
        assert_eq!(structured(&res)["text"], "#define EXTERNAL 1\n");
        assert_eq!(structured(&res)["path"], path);
    }
    let questions = client_handler.questions.lock().clone();
    assert_eq!(questions.len(), 2, "asked on every read");
    assert!(questions[0].contains("external.h"), "{}", questions[0]);
}

#[tokio::test]
async fn external_reads_are_refused_without_a_yes() {
    let (_dir, path) = external_file();
    let ws = TempWorkspace::new("");
    for answer in [Answer::Decline, Answer::Cancel, Answer::AcceptButRefuse, Answer::NoCapability] {
        let client = ws.connect(TestClient::answering(answer)).await;
        let res = call(&client, "workspace_read_file", json!({ "path": path })).await;
        assert!(tool_error(&res).contains("not permitted"), "{answer:?}: {}", text(&res));
    }
}

#[tokio::test]
async fn external_reads_use_input_required_rounds_on_2026_sessions() {
    let (_dir, path) = external_file();
    let ws = TempWorkspace::new("");
    for (answer, allowed) in [(Answer::Accept, true), (Answer::Decline, false)] {
        let handler = TestClient::answering(answer);
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        let server = ws.server(Duration::ZERO);
        tokio::spawn(async move {
            if let Ok(running) = rmcp::ServiceExt::serve(server, forgemcp::server::duplex::transport(server_io)).await {
                let _ = running.waiting().await;
            }
        });
        let client = handler
            .clone()
            .serve_with_lifecycle(
                client_io,
                ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
            )
            .await
            .expect("2026-07-28 session");
        let res = call(&client, "workspace_read_file", json!({ "path": path })).await;
        if allowed {
            assert_eq!(structured(&res)["text"], "#define EXTERNAL 1\n");
        } else {
            assert!(tool_error(&res).contains("not permitted"), "{}", text(&res));
        }
        assert_eq!(handler.questions.lock().len(), 1);
    }
}

#[derive(Default)]
struct Recorder {
    events: Mutex<Vec<String>>,
}

impl CallObserver for Recorder {
    fn started(&self, call: &CallStarted) {
        self.events.lock().push(format!(
            "start {} {} {:?} {}",
            call.call_id,
            call.tool,
            call.origin,
            json!(call.arguments)
        ));
    }
    fn progress(&self, call_id: u64, update: &ProgressUpdate) {
        self.events.lock().push(format!("progress {call_id} {}", update.message));
    }
    fn finished(&self, call_id: u64, _at: DateTime<Utc>, end: &CallEnd) -> Option<Arc<serde_json::Value>> {
        let what = match end {
            CallEnd::Result(r) if r.is_error == Some(true) => "error-result",
            CallEnd::Result(_) => "result",
            CallEnd::Error(_) => "protocol-error",
            CallEnd::InputRequired => "input-required",
            CallEnd::Cancelled => "cancelled",
        };
        self.events.lock().push(format!("finish {call_id} {what}"));
        None
    }
}

#[tokio::test]
async fn every_call_passes_the_history_observer() {
    let ws = TempWorkspace::new("//- a.txt\n    hi");
    let server = ws.server(Duration::ZERO);
    let recorder = Arc::new(Recorder::default());
    server.set_observer(recorder.clone());
    let client = connect(server.with_origin(Origin::Panel), TestClient::new()).await;
    call(&client, "workspace_read_file", json!({ "path": "a.txt" })).await;
    call(&client, "workspace_read_file", json!({ "path": "missing.txt" })).await;
    let events = recorder.events.lock().clone();
    assert_eq!(events.first().unwrap(), r#"start 1 workspace_read_file Panel {"path":"a.txt"}"#);
    assert!(events.iter().any(|e| e.starts_with("progress 1 ")), "{events:?}");
    assert!(events.contains(&"finish 1 result".to_owned()), "{events:?}");
    assert!(events.contains(&"finish 2 error-result".to_owned()), "{events:?}");
}

/// With the admin history on, a reply is written from the text the history keeps of it: the client
/// gets the same result as with no history, without the tag that names the text, and the history
/// holds that result.
#[tokio::test]
async fn a_reply_written_from_the_historys_text_is_the_result_itself() {
    let ws = TempWorkspace::new("");
    for rel in ["README.md", "src/main.cpp", "src/deep/a.h"] {
        ws.write(rel, "x\n");
    }
    let args = json!({ "path": "project/", "depth": null });
    let plain = ws.connect(TestClient::new()).await;
    let expected = serde_json::to_value(call(&plain, "workspace_list", args.clone()).await).unwrap();

    let server = ws.server(Duration::ZERO);
    let history = Arc::new(forgemcp::admin::history::History::default());
    server.set_observer(history.clone());
    let client = connect(server, TestClient::new()).await;
    for _ in 0..2 {
        let got = serde_json::to_value(call(&client, "workspace_list", args.clone()).await).unwrap();
        assert_eq!(got, expected);
        assert_eq!(got.get("_meta"), None);
    }
    let records = history.list();
    assert_eq!(records.len(), 2);
    let record = forgemcp::server::raw_json::decode(&serde_json::to_value(&records[1]).unwrap()).unwrap();
    assert_eq!(record["result"], expected);
}

/// A whole-tree listing travels as its JSON text on our transports (`server::raw_json`); on any
/// other transport, here rmcp's own, the reply is the same plain JSON.
#[tokio::test]
async fn a_listing_is_the_same_json_on_our_transport_and_on_rmcps() {
    let ws = TempWorkspace::new("");
    for rel in ["README.md", "src/main.cpp", "src/deep/a.h"] {
        ws.write(rel, "x\n");
    }
    let args = json!({ "path": "project/", "depth": null });
    let ours = ws.connect(TestClient::new()).await;
    let on_ours = call(&ours, "workspace_list", args.clone()).await;

    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let server = ws.server(Duration::ZERO);
    tokio::spawn(async move {
        if let Ok(running) = rmcp::ServiceExt::serve(server, server_io).await {
            let _ = running.waiting().await;
        }
    });
    let theirs = rmcp::ServiceExt::serve(TestClient::new(), client_io).await.expect("client connects");
    let on_theirs = call(&theirs, "workspace_list", args).await;

    let listing = structured(&on_ours);
    assert_eq!(listing, structured(&on_theirs));
    assert_eq!(listing["path"], "project/");
    let src = &listing["entries"].as_array().expect("entries")[1];
    assert_eq!(src["path"], "project/src");
    assert_eq!(src["children"][0]["path"], "project/src/deep");
    assert_eq!(
        src["children"][0]["children"][0],
        json!({ "path": "project/src/deep/a.h", "kind": "file", "children": null })
    );
    assert_eq!(text(&on_ours), text(&on_theirs));
}

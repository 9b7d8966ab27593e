//! Confirmations through the MCP surface cannot be pre-answered or spoofed: `inputResponses` count
//! only on a 2026-07-28 session, in the retry of the round that asked, and the question shows a
//! `root/` path with its control characters escaped.

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResponse, InputResponses, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, RunningService};
use rmcp::{ClientServiceExt, RoleClient, ServiceExt};
use serde_json::json;

use crate::support::{Answer, TempWorkspace, TestClient, structured, tool_error};

type Client = RunningService<RoleClient, TestClient>;

/// An external file in a fresh directory, and its `root/…` path.
fn external_file(name: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::canonicalize(dir.path()).unwrap().join(name);
    std::fs::write(&file, "#define EXTERNAL 1\n").unwrap();
    let qualified = format!("root/{}", file.display().to_string().trim_start_matches('/'));
    (dir, qualified)
}

/// A "yes" to the external-read question, as a client would send it.
fn yes() -> InputResponses {
    InputResponses::from([(
        "confirm_external_read".to_owned(),
        json!({ "action": "accept", "content": { "allow": true } }),
    )])
}

fn read_params(path: &str) -> CallToolRequestParams {
    CallToolRequestParams::new("workspace_read_file")
        .with_arguments(json!({ "path": path }).as_object().cloned().unwrap())
}

/// A client on a 2026-07-28 session (no `initialize`) with `server` over a duplex pipe.
async fn session_2026(ws: &TempWorkspace, handler: TestClient) -> Client {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let server = ws.server(Duration::ZERO);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(forgemcp::server::duplex::transport(server_io)).await {
            let _ = running.waiting().await;
        }
    });
    handler
        .serve_with_lifecycle(
            client_io,
            ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
        )
        .await
        .expect("2026-07-28 session")
}

/// One `tools/call` round, without driving the input-required retry.
async fn once(client: &Client, params: CallToolRequestParams) -> CallToolResponse {
    client.peer().call_tool_once(params).await.expect("tools/call answers")
}

/// The `requestState` of an input-required round (panics on a final result).
fn asked_state(response: CallToolResponse) -> String {
    match response {
        CallToolResponse::InputRequired(result) => {
            let requests = result.input_requests.expect("the round asks something");
            assert!(requests.contains_key("confirm_external_read"), "{requests:?}");
            result.request_state.expect("the round carries a request state")
        }
        other => panic!("expected the question, got {other:?}"),
    }
}

#[tokio::test]
async fn unsolicited_answers_on_an_initialize_session_are_ignored_and_the_question_is_asked() {
    let (_dir, path) = external_file("external.h");
    let ws = TempWorkspace::new("");
    let handler = TestClient::answering(Answer::Decline);
    let client = ws.connect(handler.clone()).await;
    let params = read_params(&path).with_input_responses(yes()).with_request_state("anything");
    let res = client.call_tool(params).await.expect("tools/call answers");
    assert!(tool_error(&res).contains("not permitted"), "a pre-answer does not skip the question: {res:?}");
    assert_eq!(handler.questions.lock().len(), 1, "the question was asked");
}

#[tokio::test]
async fn on_a_2026_session_only_the_retry_of_the_asking_round_counts() {
    let (_dir, path) = external_file("external.h");
    let (_other_dir, other_path) = external_file("other.h");
    let ws = TempWorkspace::new("");
    let client = session_2026(&ws, TestClient::answering(Answer::Decline)).await;

    // Unsolicited, and with a forged state: asked.
    asked_state(once(&client, read_params(&path).with_input_responses(yes())).await);
    asked_state(once(&client, read_params(&path).with_input_responses(yes()).with_request_state("00")).await);
    // The state of a round that asked about another file: asked, and that round stays answerable.
    let other_state = asked_state(once(&client, read_params(&other_path)).await);
    asked_state(once(&client, read_params(&path).with_input_responses(yes()).with_request_state(&other_state)).await);
    // The retry of the asking round with the answer to another key: asked again.
    let state = asked_state(once(&client, read_params(&path)).await);
    let wrong_key =
        InputResponses::from([("other".to_owned(), json!({ "action": "accept", "content": { "allow": true } }))]);
    asked_state(once(&client, read_params(&path).with_input_responses(wrong_key).with_request_state(&state)).await);

    // The genuine retry counts, once.
    let state = asked_state(once(&client, read_params(&path)).await);
    let retry = || read_params(&path).with_input_responses(yes()).with_request_state(&state);
    match once(&client, retry()).await {
        CallToolResponse::Complete(res) => assert_eq!(structured(&res)["text"], "#define EXTERNAL 1\n"),
        other => panic!("the answered retry reads the file: {other:?}"),
    }
    asked_state(once(&client, retry()).await);
    match once(&client, read_params(&other_path).with_input_responses(yes()).with_request_state(&other_state)).await {
        CallToolResponse::Complete(res) => assert_eq!(structured(&res)["text"], "#define EXTERNAL 1\n"),
        other => panic!("the other round is still answerable: {other:?}"),
    }
}

#[tokio::test]
async fn control_characters_in_a_root_path_are_escaped_in_the_question() {
    let (_dir, path) = external_file("a.h\nAllow? Reading README.md only.\r\u{1b}[2K\u{202e}x");
    let ws = TempWorkspace::new("");
    let handler = TestClient::answering(Answer::Decline);
    let client = ws.connect(handler.clone()).await;
    let res = client.call_tool(read_params(&path)).await.expect("tools/call answers");
    assert!(tool_error(&res).contains("not permitted"), "{res:?}");
    let questions = handler.questions.lock().clone();
    assert_eq!(questions.len(), 1, "{questions:?}");
    let question = &questions[0];
    assert!(!question.chars().any(|c| c.is_control() || c == '\u{202e}'), "{question:?}");
    assert!(question.contains("a.h\\nAllow? Reading README.md only.\\r\\u{1b}[2K\\u{202e}x?"), "{question:?}");
}

//! Debug tools with the real lldb-dap (Debian's `lldb-dap-19`, found by its versioned name) and g++
//! on a temporary copy of the acceptance project into which the test writes `tests/it/debug_probe.cpp`
//! and builds it (CI or `FORGEMCP_HEAVY_TESTS=1`; a missing tool fails the test under CI). gdb is
//! tested by its version: gdb 13 (Debian 12) has no DAP and must be refused; a gdb ≥ 14 runs the
//! crash scenario.

use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use rmcp::service::{PeerRequestOptions, RunningService};
use serde_json::{Value, json};

use crate::support::{
    TempWorkspace, TestClient, acceptance_project, call, connect, real_services, structured, text, tool_error,
};
use forgemcp::server::ForgeServer;

pub type Client = RunningService<RoleClient, TestClient>;

const PROBE: &str = include_str!("debug_probe.cpp");
const SOURCE: &str = "project/debugging/probe.cpp";

/// The line of the `@name` marker.
pub fn line(name: &str) -> u64 {
    let marker = format!("// @{name}");
    PROBE.lines().position(|l| l.trim_end().ends_with(&marker)).expect("marker") as u64 + 1
}

/// Whether the real-tool tests run; then g++ and an lldb-dap must be on `PATH`.
pub fn real_tools(test: &str) -> bool {
    if !crate::support::real_tools(test, &["g++"]) {
        return false;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .any(|dir| ["lldb-dap", "lldb-dap-19", "lldb-vscode"].iter().any(|n| dir.join(n).is_file()));
    assert!(found, "{test} needs lldb-dap on PATH (install Debian's lldb-19)");
    true
}

/// A copy of the acceptance project with the probe built at `project/build/<name>`.
pub fn workspace(names: &[&str]) -> TempWorkspace {
    let ws = acceptance_project();
    ws.write("debugging/probe.cpp", PROBE);
    std::fs::create_dir_all(ws.path("build")).unwrap();
    for name in names {
        #[expect(clippy::disallowed_methods, reason = "the test builds its program with the real g++")]
        let status = std::process::Command::new("g++")
            .args(["-g", "-O0", "-std=c++17", "-o"])
            .arg(format!("build/{name}"))
            .arg("debugging/probe.cpp")
            .current_dir(&ws.project)
            .status()
            .expect("g++ runs");
        assert!(status.success(), "g++ failed");
    }
    ws
}

pub async fn server(ws: &TempWorkspace) -> Client {
    connect(ForgeServer::new(real_services(ws, &[]), Duration::ZERO), TestClient::new()).await
}

async fn launch(client: &Client, args: Value) -> Value {
    structured(&call(client, "debug_launch", args).await).clone()
}

async fn step(client: &Client, session: &Value, action: &str) -> Value {
    let res = call(client, "debug_continue", json!({ "session_id": session, "action": action })).await;
    structured(&res).clone()
}

/// The processes of the session's tree, by the process service's tree marker of its adapter.
fn tree_marker(adapter_pid: u32) -> Vec<u8> {
    let environ = std::fs::read(format!("/proc/{adapter_pid}/environ")).expect("the adapter runs");
    environ.split(|&b| b == 0).find(|v| v.starts_with(b"FORGEMCP_PROCESS_TREE=")).expect("marked").to_vec()
}

fn marked(marker: &[u8]) -> Vec<u32> {
    let mut res = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else { continue };
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else { continue };
        if environ.split(|&b| b == 0).any(|v| v == marker) && forgemcp::process::is_alive(pid) {
            res.push(pid);
        }
    }
    res
}

/// The adapter's pid and the debuggee's, from `processes_overview` and `debug_inspect`.
async fn session_pids(client: &Client, session: &Value) -> (u32, u32) {
    let sessions = structured(&call(client, "debug_inspect", json!({})).await)["sessions"].clone();
    let info = sessions.as_array().unwrap().iter().find(|s| &s["session_id"] == session).expect("listed").clone();
    let overview = structured(&call(client, "processes_overview", json!({ "status": "all" })).await).clone();
    let adapter = overview["processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["summary"]["process_id"] == info["process_id"])
        .unwrap_or_else(|| panic!("the adapter is in processes_overview: {overview}"))["status"]["pid"]
        .as_u64()
        .unwrap() as u32;
    (adapter, info["pid"].as_u64().expect("the debuggee's pid") as u32)
}

/// Every process of the tree is gone within a second.
async fn assert_gone(marker: &[u8], debuggee: u32) {
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!forgemcp::process::is_alive(debuggee), "the debuggee {debuggee} is alive 1 s later");
    assert_eq!(marked(marker), Vec::<u32>::new(), "processes of the session's tree alive 1 s later");
}

fn frame_line(stop: &Value, i: usize) -> (String, String, u64) {
    let f = &stop["frames"][i];
    assert!(f.is_object(), "no frame {i} in {stop}");
    (
        f["function"].as_str().unwrap().to_owned(),
        f["path"].as_str().unwrap_or("").to_owned(),
        f["line"].as_u64().unwrap(),
    )
}

#[tokio::test]
async fn a_null_pointer_crash_stops_with_sigsegv_at_its_line() {
    if !real_tools("debug::a_null_pointer_crash_stops_with_sigsegv_at_its_line") {
        return;
    }
    let ws = workspace(&["probe"]);
    let client = server(&ws).await;
    let res =
        call(&client, "debug_launch", json!({ "executable": "project/build/probe", "arguments": ["crash"] })).await;
    let stop = structured(&res).clone();
    let shown = text(&res).to_owned();
    assert_eq!(stop["state"], "stopped", "{shown}");
    assert_eq!(stop["signal"], "SIGSEGV", "{shown}");
    let (function, path, at) = frame_line(&stop, 0);
    assert!(function.contains("read_through"), "{shown}");
    assert_eq!((path.as_str(), at), (SOURCE, line("crash")), "{shown}");
    assert!(shown.contains("SIGSEGV (segmentation fault: invalid memory access)"), "{shown}");
    assert!(shown.contains(&format!("at {SOURCE}:{}", line("crash"))), "{shown}");
    assert!(shown.contains(&format!("> {} |     return *ptr; // @crash", line("crash"))), "{shown}");
    assert_eq!(stop["source"]["path"], SOURCE);
    let ptr = stop["locals"].as_array().unwrap().iter().find(|v| v["name"] == "ptr").expect("ptr is a local").clone();
    assert!(ptr["value"].as_str().unwrap().contains("0x0"), "{ptr}");
    assert!(stop["output"].as_str().unwrap().contains("probe 25"), "{shown}");
    let session = stop["session_id"].clone();
    let (adapter, debuggee) = session_pids(&client, &session).await;
    let marker = tree_marker(adapter);
    assert!(marked(&marker).contains(&debuggee), "the debuggee is in the adapter's tree");
    // The debuggee has its own entry, with the program's output as its transcript.
    let sessions = structured(&call(&client, "debug_inspect", json!({})).await)["sessions"].clone();
    let entry = sessions[0]["debuggee_process_id"].clone();
    let details = structured(&call(&client, "process_get", json!({ "process_id": entry })).await).clone();
    assert_eq!(details["process"]["status"]["pid"], debuggee, "{details}");
    assert!(details["process"]["summary"]["executable"].as_str().unwrap().ends_with("build/probe"), "{details}");
    assert_eq!(details["process"]["summary"]["arguments"], json!(["crash"]));
    let transcript = details["transcript"].to_string();
    assert!(transcript.contains("probe 25"), "{transcript}");

    // Continuing delivers the signal: the program ends, and so does the session.
    let end = step(&client, &session, "continue").await;
    assert_eq!((end["state"].clone(), end["ended"].clone()), (json!("exited"), json!(true)), "{end}");
    assert_gone(&marker, debuggee).await;
    let gone = call(&client, "debug_continue", json!({ "session_id": session })).await;
    assert!(tool_error(&gone).contains("it ended: the program exited"), "{}", text(&gone));
    // The adapter's transcript stays readable.
    let overview = structured(&call(&client, "processes_overview", json!({})).await).clone();
    assert_eq!(overview["running"], 0, "{overview}");
    let details = structured(&call(&client, "process_get", json!({ "process_id": entry })).await).clone();
    assert_ne!(details["process"]["status"]["current_status"], "running", "{details}");
}

#[tokio::test]
async fn breakpoints_locals_stepping_and_evaluation() {
    if !real_tools("debug::breakpoints_locals_stepping_and_evaluation") {
        return;
    }
    let ws = workspace(&["probe"]);
    let client = server(&ws).await;
    let at_break = format!("{SOURCE}:{}", line("break"));
    let stop =
        launch(&client, json!({ "executable": "project/build/probe", "breakpoints": [at_break, "nowhere_at_all"] }))
            .await;
    assert_eq!(stop["reason"], "breakpoint", "{stop}");
    assert_eq!(frame_line(&stop, 0), ("main".to_owned(), SOURCE.to_owned(), line("break")));
    let bps = stop["breakpoints"].as_array().unwrap();
    assert_eq!(bps[0]["spec"], at_break.as_str());
    assert_eq!((bps[0]["bound"].clone(), bps[0]["line"].clone()), (json!(true), json!(line("break"))));
    assert_eq!(bps[1]["bound"], false, "{stop}");
    let locals = stop["locals"].as_array().unwrap();
    let origin = locals.iter().find(|v| v["name"] == "origin").expect("origin").clone();
    let fields: Vec<(Value, Value)> =
        origin["children"].as_array().unwrap().iter().map(|c| (c["name"].clone(), c["value"].clone())).collect();
    assert_eq!(fields, [(json!("x"), json!("3")), (json!("y"), json!("4"))], "{origin}");
    let label = locals.iter().find(|v| v["name"] == "label").expect("label");
    assert!(label["value"].as_str().unwrap().contains("\"probe\""), "{label}");
    let session = stop["session_id"].clone();

    // Step in, over, in again, out.
    let s = step(&client, &session, "step_in").await;
    assert_eq!(s["reason"], "step");
    let (function, _, at) = frame_line(&s, 0);
    assert!(function.contains("add_squares") && at == line("add_first"), "{s}");
    let s = step(&client, &session, "step_over").await;

    assert_eq!(frame_line(&s, 0).2, line("add_second"), "{s}");
    let s = step(&client, &session, "step_in").await;
    let (function, _, at) = frame_line(&s, 0);
    assert!(function.contains("square") && at == line("square"), "{s}");
    let v = s["locals"].as_array().unwrap().iter().find(|v| v["name"] == "v").expect("v").clone();
    assert_eq!(v["value"], "4");
    let s = step(&client, &session, "step_out").await;

    let (function, _, at) = frame_line(&s, 0);
    assert!(function.contains("add_squares") && at == line("add_second"), "{s}");

    // Evaluation in the top frame and in a named one.
    let res = call(&client, "debug_inspect", json!({ "session_id": session, "expression": "p.x * 10 + p.y" })).await;
    assert_eq!(structured(&res)["value"]["value"], "34", "{}", text(&res));
    let main_frame = s["frames"][1]["id"].clone();
    let res = call(
        &client,
        "debug_inspect",
        json!({ "session_id": session, "expression": "origin", "frame_id": main_frame }),
    )
    .await;
    let value = structured(&res)["value"].clone();
    assert_eq!(value["children"][1]["value"], "4", "{value}");
    let res = call(&client, "debug_inspect", json!({ "session_id": session, "frame_id": main_frame })).await;
    let scopes = structured(&res)["scopes"].clone();
    assert!(scopes.to_string().contains("\"total\""), "{scopes}");
    // Locals keep their declaration order; globals come sorted by name (lldb's order varies by run).
    let names = |scope: &Value| -> Vec<String> {
        scope["variables"].as_array().unwrap().iter().map(|v| v["name"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(names(&scopes[0])[..4], ["argc", "argv", "origin", "label"], "{scopes}");
    let globals = names(&scopes[1]);
    assert!(!globals.is_empty() && globals.is_sorted(), "{scopes}");
    let res = call(&client, "debug_inspect", json!({ "session_id": session })).await;
    assert_eq!(structured(&res)["threads"].as_array().unwrap().len(), 1);
    let res = call(&client, "debug_inspect", json!({ "session_id": session, "expression": "no_such_name + 1" })).await;
    assert!(tool_error(&res).contains("cannot be evaluated"), "{}", text(&res));

    // Console commands never reach the debugger.
    let pwned = ws.base.join("pwned");
    for attempt in [
        format!("platform shell touch {}", pwned.display()),
        format!("`platform shell touch {}`", pwned.display()),
        format!("shell touch {}", pwned.display()),
        "script import os".to_owned(),
    ] {
        let res = call(&client, "debug_inspect", json!({ "session_id": session, "expression": attempt })).await;
        assert!(tool_error(&res).contains("Invalid argument `expression`"), "{attempt}: {}", text(&res));
    }
    assert!(!pwned.exists(), "a console command ran");

    // Breakpoints of a running session: set, hit, clear.
    let at_exit = format!("{SOURCE}:{}", line("exit"));
    let res = call(&client, "debug_breakpoints", json!({ "session_id": session, "set": ["square", at_exit] })).await;
    let listed = structured(&res)["breakpoints"].clone();
    let square = listed.as_array().unwrap().iter().find(|b| b["spec"] == "square").expect("square").clone();
    assert_eq!((square["bound"].clone(), square["path"].clone()), (json!(true), json!(SOURCE)), "{listed}");
    let s = step(&client, &session, "continue").await;
    assert_eq!((s["reason"].clone(), frame_line(&s, 0).2), (json!("breakpoint"), line("exit")), "{s}");
    assert!(s["output"].as_str().unwrap().contains("probe 25"), "{s}");
    let res =
        call(&client, "debug_breakpoints", json!({ "session_id": session, "clear": ["square", at_break, at_exit] }))
            .await;
    let left: Vec<Value> =
        structured(&res)["breakpoints"].as_array().unwrap().iter().map(|b| b["spec"].clone()).collect();
    assert_eq!(left, [json!("nowhere_at_all")]);

    // One session per executable.
    let again = call(&client, "debug_launch", json!({ "executable": "project/build/probe" })).await;
    assert!(tool_error(&again).contains("already debugs `project/build/probe`"), "{}", text(&again));

    let (adapter, debuggee) = session_pids(&client, &session).await;
    let marker = tree_marker(adapter);
    let res = call(&client, "debug_stop", json!({ "session_id": session })).await;
    assert!(text(&res).contains("ended"), "{}", text(&res));
    assert_gone(&marker, debuggee).await;
    let res = call(&client, "debug_inspect", json!({})).await;
    assert_eq!(structured(&res)["sessions"], json!([]));
}

#[tokio::test]
async fn exit_timeout_cancellation_and_the_session_limit() {
    if !real_tools("debug::exit_timeout_cancellation_and_the_session_limit") {
        return;
    }
    let names = ["p1", "p2", "p3", "p4", "p5"];
    let ws = workspace(&names);
    let client = server(&ws).await;

    // A program that runs to its end: the exit code, and the session is gone.
    let end = launch(&client, json!({ "executable": "project/build/p1", "arguments": ["extra"] })).await;
    assert_eq!((end["state"].clone(), end["exit_code"].clone()), (json!("exited"), json!(0)), "{end}");
    assert!(end["summary"].as_str().unwrap().contains("exited with code 0"));
    let overview = structured(&call(&client, "processes_overview", json!({ "status": "all" })).await).clone();
    let program =
        overview["processes"].as_array().unwrap().iter().find(|p| p["summary"]["arguments"] == json!(["extra"]));
    let program = program.unwrap_or_else(|| panic!("the debuggee is listed: {overview}")).clone();
    assert_eq!(program["status"]["current_status"], 0, "exit code 0: {program}");

    // The timeout ends a stopped session.
    let brk = format!("{SOURCE}:{}", line("break"));
    let stop = launch(&client, json!({ "executable": "project/build/p1", "breakpoints": [brk], "timeout": 8 })).await;
    let (adapter, debuggee) = session_pids(&client, &stop["session_id"]).await;
    let marker = tree_marker(adapter);
    let sessions = structured(&call(&client, "debug_inspect", json!({})).await)["sessions"].clone();
    let remaining = sessions[0]["remaining_seconds"].as_u64().unwrap();
    assert!(remaining <= 8, "{sessions}");
    tokio::time::sleep(Duration::from_secs(remaining + 1)).await;
    assert_gone(&marker, debuggee).await;
    let res = call(&client, "debug_continue", json!({ "session_id": stop["session_id"] })).await;
    assert!(tool_error(&res).contains("its timeout passed"), "{}", text(&res));

    // Four sessions at most.
    let mut sessions = Vec::new();
    for name in &names[..4] {
        let stop =
            launch(&client, json!({ "executable": format!("project/build/{name}"), "breakpoints": [brk] })).await;
        sessions.push(stop["session_id"].clone());
    }
    let fifth = call(&client, "debug_launch", json!({ "executable": "project/build/p5" })).await;
    assert!(tool_error(&fifth).contains("4 debug sessions are running"), "{}", text(&fifth));
    for session in &sessions[1..] {
        call(&client, "debug_stop", json!({ "session_id": session })).await;
    }

    // A cancelled call ends its session: a wait on a sleeping program, cancelled after it started.
    let (adapter, debuggee) = session_pids(&client, &sessions[0]).await;
    let marker = tree_marker(adapter);
    call(&client, "debug_breakpoints", json!({ "session_id": sessions[0], "clear": [brk] })).await;
    let params = CallToolRequestParams::new("debug_continue")
        .with_arguments(json!({ "session_id": sessions[0], "wait": 120 }).as_object().cloned().unwrap());
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = client.peer().send_cancellable_request(request, PeerRequestOptions::no_options()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let cancelled = Instant::now();
    handle.cancel(Some("the test cancels".into())).await.unwrap();
    assert_gone(&marker, debuggee).await;
    assert!(cancelled.elapsed() < Duration::from_secs(3));
    let res = call(&client, "debug_inspect", json!({})).await;
    assert_eq!(structured(&res)["sessions"], json!([]));
}

#[tokio::test]
async fn stdin_eof_ends_every_session() {
    if !real_tools("debug::stdin_eof_ends_every_session") {
        return;
    }
    let ws = workspace(&["probe"]);
    #[expect(clippy::disallowed_methods, reason = "the test starts the real server binary")]
    let mut command = tokio::process::Command::new(crate::support::binary());
    command
        .arg("--workspace")
        .arg(&ws.project)
        .arg("--workspace-storage")
        .arg(&ws.storage)
        .arg("--no-admin")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let mut server = command.spawn().expect("spawn the server");
    let stdout = server.stdout.take().unwrap();
    let stdin = server.stdin.take().unwrap();
    let client: Client = rmcp::ServiceExt::serve(TestClient::new(), (stdout, stdin)).await.expect("initialize");
    let brk = format!("{SOURCE}:{}", line("break"));
    let stop = launch(&client, json!({ "executable": "project/build/probe", "breakpoints": [brk] })).await;
    assert_eq!(stop["state"], "stopped", "{stop}");
    let (adapter, debuggee) = session_pids(&client, &stop["session_id"]).await;
    let marker = tree_marker(adapter);
    client.cancel().await.expect("the client closes");
    assert_gone(&marker, debuggee).await;
    let status = tokio::time::timeout(Duration::from_secs(10), server.wait()).await.expect("the server exits").unwrap();
    assert!(status.success(), "{status}");
}

/// gdb's DAP exists from gdb 14; Debian 12's gdb 13 must be refused by its version, never launched.
#[tokio::test]
async fn gdb_is_used_only_with_dap() {
    if !real_tools("debug::gdb_is_used_only_with_dap") {
        return;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    if !std::env::split_paths(&path).any(|dir| dir.join("gdb").is_file()) {
        let ws = workspace(&["probe"]);
        let client = server(&ws).await;
        let res =
            call(&client, "debug_launch", json!({ "executable": "project/build/probe", "debugger": "gdb" })).await;
        assert!(tool_error(&res).contains("no gdb"), "{}", text(&res));
        return;
    }
    #[expect(clippy::disallowed_methods, reason = "the test asks gdb for its version")]
    let banner = std::process::Command::new("gdb").arg("--version").output().expect("gdb runs");
    let banner = String::from_utf8_lossy(&banner.stdout).into_owned();
    let major: u32 = banner
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().last())
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse().ok())
        .expect("a version");
    let ws = workspace(&["probe"]);
    let client = server(&ws).await;
    let res = call(
        &client,
        "debug_launch",
        json!({ "executable": "project/build/probe", "arguments": ["crash"], "debugger": "gdb" }),
    )
    .await;
    if major < 14 {
        assert!(tool_error(&res).contains("has no DAP interpreter"), "{}", text(&res));
    } else {
        let stop = structured(&res).clone();
        assert_eq!(stop["signal"], "SIGSEGV", "{stop}");
        assert_eq!(frame_line(&stop, 0).2, line("crash"), "{stop}");
        call(&client, "debug_stop", json!({ "session_id": stop["session_id"] })).await;
    }
}

/// Argument checks need no debugger: paths, arguments, actions, expressions, unknown sessions.
#[tokio::test]
async fn arguments_are_checked_before_any_adapter_starts() {
    let ws = TempWorkspace::new("");
    ws.write("build/not-a-program.txt", "text");
    std::fs::create_dir_all(ws.path("build/dir")).unwrap();
    let client = ws.connect(TestClient::new()).await;
    let cases = [
        (json!({ "executable": "../outside" }), "Invalid argument `executable`"),
        (json!({ "executable": "/bin/ls" }), "Invalid argument `executable`"),
        (json!({ "executable": "root/bin/ls" }), "Invalid argument `executable`"),
        (json!({ "executable": "project/build/missing" }), "Invalid argument `executable`"),
        (json!({ "executable": "project/build/dir" }), "is not a regular file"),
        (
            json!({ "executable": "project/build/not-a-program.txt", "arguments": ["a\u{0}b"] }),
            "contains a NUL character",
        ),
        (
            json!({ "executable": "project/build/not-a-program.txt", "cwd": "project/build/not-a-program.txt" }),
            "is not a directory",
        ),
        (json!({ "executable": "project/build/not-a-program.txt", "breakpoints": ["x.cpp:0"] }), "lines start at 1"),
        (json!({ "executable": "project/build/not-a-program.txt", "debugger": "windbg" }), "is not lldb-dap or gdb"),
        (json!({ "executable": "project/build/not-a-program.txt", "wait": 0 }), "Invalid argument `wait`"),
    ];
    for (args, expected) in cases {
        let res = call(&client, "debug_launch", args.clone()).await;
        assert!(tool_error(&res).contains(expected), "{args}: {}", text(&res));
    }
    let res = call(&client, "debug_continue", json!({ "session_id": 9, "action": "jump" })).await;
    assert_eq!(
        tool_error(&res),
        "Invalid argument `action`: unknown variant `jump`, expected one of `continue`, `step_over`, `step_in`, \
         `step_out`, `pause`."
    );
    let res = call(&client, "debug_continue", json!({ "session_id": 9 })).await;
    assert!(tool_error(&res).contains("no debug session 9"), "{}", text(&res));
    let res = call(&client, "debug_inspect", json!({ "session_id": 9, "expression": "platform shell id" })).await;
    assert!(tool_error(&res).contains("debugger console command"), "{}", text(&res));
    let res = call(&client, "debug_inspect", json!({ "session_id": 9, "depth": 6 })).await;
    assert!(tool_error(&res).contains("Invalid argument `depth`"), "{}", text(&res));
    let res = call(&client, "debug_stop", json!({ "session_id": 9 })).await;
    assert!(tool_error(&res).contains("no debug session 9"), "{}", text(&res));
    let res = call(&client, "debug_inspect", json!({})).await;
    assert_eq!(text(&res), "No debug sessions are running.\n");
}

/// The five debug tools stay within their share of the model-facing tool list.
#[tokio::test]
async fn the_debug_tools_fit_their_tool_list_budget() {
    let ws = TempWorkspace::new("");
    let client = ws.connect(TestClient::new()).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let debug: Vec<_> = tools.iter().filter(|t| t.name.starts_with("debug_")).collect();
    let names: Vec<&str> = debug.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["debug_breakpoints", "debug_continue", "debug_inspect", "debug_launch", "debug_stop"]);
    let bytes: usize = debug
        .iter()
        .map(|t| {
            serde_json::to_string(
                &json!({ "name": t.name, "description": t.description, "inputSchema": t.input_schema }),
            )
            .unwrap()
            .len()
        })
        .sum();
    assert!(bytes <= 2720, "the debug tools take {bytes} bytes of the tool list");
}

/// The process service's observed children (the debuggee's entry): own id and transcript, the exit
/// the owner reports, and `stopped` when their parent ends or their handle is dropped.
#[tokio::test]
async fn observed_children_are_listed_with_their_own_transcript() {
    use forgemcp::process::{CommandSpec, ProcessService, Status, StatusFilter, Stdin, Stream};
    let ws = TempWorkspace::new("");
    let processes = ProcessService::new(ws.roots());
    let helper = env!("CARGO_BIN_EXE_forgemcp-test-helper");
    let parent = processes
        .spawn_long_lived(CommandSpec::new(helper, &ws.project).arg("sleep:60000").stdin(Stdin::Piped))
        .await
        .expect("the parent starts");
    let program = ws.path("build/app");
    let args = ["x y".to_owned()];
    let exits = processes.observe_child(parent.id, 4242, &program, &args, &ws.project).expect("observed");
    exits.output(Stream::Stdout, b"hello\n");
    exits.exited(3);
    exits.output(Stream::Stdout, b"after the end\n");
    let stays = processes.observe_child(parent.id, 4243, &program, &[], &ws.project).expect("observed");
    let (info, transcript) = processes.full(exits.id()).expect("listed");
    assert_eq!((info.pid, info.status, info.summary.arguments.clone()), (4242, Status::Exited(3), args.to_vec()));
    let text: String = transcript.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(text, "hello\n");
    assert_eq!(processes.overview(StatusFilter::Running).running, 2, "the parent and the second child");
    parent.stop().await;
    for _ in 0..100 {
        if processes.full(stays.id()).unwrap().0.status == Status::Stopped {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(processes.full(stays.id()).unwrap().0.status, Status::Stopped, "ends with its parent");
    let dropped = processes.observe_child(parent.id, 4244, &program, &[], &ws.project).expect("observed");
    let id = dropped.id();
    drop(dropped);
    assert_eq!(processes.full(id).unwrap().0.status, Status::Stopped);
    processes.shutdown().await;
}

//! The admin Hub: instances joining and leaving over the local socket, the election, the HTTP guard
//! matrix over every route (cookie, Host, Origin, CSRF, login tokens), panel calls through the API,
//! reconnecting after a Hub loss, the other-OS-user socket check, and the real binary's join with a
//! pure stdout. The browser side is in `frontend/tests/admin.test.mjs`.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use forgemcp::admin::history::History;
use forgemcp::admin::hub::{self, HubOptions, RunningHub};
use forgemcp::admin::instance::{AdminLink, InstanceInfo, LinkOptions, LinkState, random_hex};
use forgemcp::admin::ipc::Endpoint;
use forgemcp::admin::open::request_url;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;

use crate::support::{TempWorkspace, TestClient, binary, call, connect};

// ---------------------------------------------------------------------------------------------
// A minimal HTTP/1.1 client: full control over Host, Origin, Cookie and CSRF headers.

#[derive(Debug)]
struct Http {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Http {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

#[derive(Debug, Clone, Default)]
struct Req {
    method: &'static str,
    path: String,
    host: Option<String>,
    origin: Option<String>,
    cookie: Option<String>,
    csrf: Option<String>,
    body: Option<String>,
}

fn decode_chunked(mut raw: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = raw.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else { break };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        raw = rest[n..].trim_start_matches("\r\n");
    }
    out
}

async fn send(port: u16, req: &Req) -> Http {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.expect("connect to the Hub");
    let mut head = format!("{} {} HTTP/1.1\r\nConnection: close\r\n", req.method, req.path);
    if let Some(host) = &req.host {
        head.push_str(&format!("Host: {host}\r\n"));
    }
    for (name, value) in [("Origin", &req.origin), ("Cookie", &req.cookie), ("X-ForgeMCP-CSRF", &req.csrf)] {
        if let Some(value) = value {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    let body = req.body.clone().unwrap_or_default();
    if req.body.is_some() {
        head.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.expect("write request");
    stream.write_all(body.as_bytes()).await.expect("write body");
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).await.expect("status line");
    let status = status_line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).expect("status code");
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).await.expect("header line");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
    let streaming =
        headers.iter().any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v.starts_with("text/event-stream"));
    let mut body = String::new();
    if streaming {
        // An event stream never ends: take its first event and stop.
        let mut raw = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), async {
            let mut buf = [0u8; 4096];
            while !String::from_utf8_lossy(&raw).contains("\n\n") {
                let n = reader.read(&mut buf).await.unwrap_or(0);
                if n == 0 {
                    break;
                }
                raw.extend_from_slice(&buf[..n]);
            }
        })
        .await;
        body = String::from_utf8_lossy(&raw).into_owned();
    } else {
        reader.read_to_string(&mut body).await.expect("body");
        if headers.iter().any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked")) {
            body = decode_chunked(&body);
        }
    }
    Http { status, headers, body }
}

/// A signed-in browser session: cookie header and CSRF value.
#[derive(Debug, Clone)]
struct Session {
    cookie: String,
    csrf: String,
}

async fn login(hub: &RunningHub) -> Session {
    let url = hub.login_url();
    let path = url.trim_start_matches(&format!("http://127.0.0.1:{}", hub.port())).to_owned();
    let host = format!("127.0.0.1:{}", hub.port());
    let res = send(hub.port(), &Req { method: "GET", path, host: Some(host.clone()), ..Req::default() }).await;
    // A same-origin page moves on to `/` (a redirect would keep the chain cross-site for the
    // browser, which then withholds the SameSite=Strict cookie).
    assert_eq!(res.status, 200, "{res:?}");
    assert!(res.body.contains(r#"<meta http-equiv="refresh" content="0;url=/">"#), "{}", res.body);
    assert!(res.header("content-security-policy").is_some_and(|csp| csp.contains("script-src 'sha256-")));
    let cookie = res.header("set-cookie").expect("a session cookie").split(';').next().expect("name=value").to_owned();
    let page = send(
        hub.port(),
        &Req { method: "GET", path: "/".into(), host: Some(host), cookie: Some(cookie.clone()), ..Req::default() },
    )
    .await;
    assert_eq!(page.status, 200);
    let csrf = page
        .body
        .split("name=\"forgemcp-csrf\" content=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the page embeds the CSRF value (is assets/admin.html built?)")
        .to_owned();
    assert_ne!(csrf, "__FORGEMCP_CSRF__");
    Session { cookie, csrf }
}

impl Session {
    fn get(&self, hub: &RunningHub, path: &str) -> Req {
        Req {
            method: "GET",
            path: path.to_owned(),
            host: Some(format!("127.0.0.1:{}", hub.port())),
            cookie: Some(self.cookie.clone()),
            csrf: Some(self.csrf.clone()),
            ..Req::default()
        }
    }

    /// Sends a signed-in POST with a JSON body.
    async fn send_post(&self, hub: &RunningHub, path: &str, body: Value) -> Http {
        send(hub.port(), &self.post(hub, path, body)).await
    }

    /// Sends a signed-in GET.
    async fn send_get(&self, hub: &RunningHub, path: &str) -> Http {
        send(hub.port(), &self.get(hub, path)).await
    }

    fn post(&self, hub: &RunningHub, path: &str, body: Value) -> Req {
        Req {
            method: "POST",
            origin: Some(format!("http://127.0.0.1:{}", hub.port())),
            body: Some(body.to_string()),
            ..self.get(hub, path)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// In-process Hubs and instances.

struct Group {
    _dir: tempfile::TempDir,
    endpoint: Endpoint,
}

fn group(name: &str) -> Group {
    let dir = tempfile::tempdir().expect("temp dir");
    let endpoint = Endpoint::in_dir(dir.path(), name).expect("endpoint");
    Group { _dir: dir, endpoint }
}

fn options(group: &Group) -> HubOptions {
    // Port 0 is never free to bind as "preferred", so the Hub takes a free port at once.
    let mut options = HubOptions::new(group.endpoint.clone(), 0);
    options.idle_exit = Duration::from_secs(30);
    options
}

async fn start_hub(options: HubOptions) -> RunningHub {
    hub::start(options).await.expect("the Hub starts").expect("it wins the election")
}

struct TestInstance {
    ws: TempWorkspace,
    server: forgemcp::server::ForgeServer,
    link: AdminLink,
    id: String,
    _history: Arc<History>,
}

fn instance(group: &Group, fixture: &str) -> TestInstance {
    let ws = TempWorkspace::new(fixture);
    let server = ws.server(Duration::ZERO);
    let history = AdminLink::install_history(&server);
    let id = random_hex();
    let info = InstanceInfo {
        instance_id: id.clone(),
        workspace: ws.project.clone(),
        storage: ws.storage.clone(),
        started_at: Utc::now(),
        settings: json!({ "workspace": ws.project.display().to_string() }),
    };
    let options =
        LinkOptions { endpoint: group.endpoint.clone(), hub_command: None, announce: false, default_group: false };
    let link = AdminLink::start(&server, history.clone(), info, options);
    TestInstance { ws, server, link, id, _history: history }
}

/// A Hub (options adjusted by `tweak`), a signed-in session, and one linked instance.
async fn linked(
    name: &str,
    fixture: &str,
    tweak: impl FnOnce(&mut HubOptions),
) -> (Group, RunningHub, Session, TestInstance) {
    let group = group(name);
    let mut options = options(&group);
    tweak(&mut options);
    let hub = start_hub(options).await;
    let session = login(&hub).await;
    let a = instance(&group, fixture);
    until("linked", || matches!(a.link.state(), LinkState::Connected { .. })).await;
    (group, hub, session, a)
}

/// A loopback port that was free a moment ago.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("address").port()
}

async fn until<F: FnMut() -> bool>(what: &str, mut check: F) {
    tokio::time::timeout(Duration::from_secs(15), async {
        while !check() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
}

async fn until_async<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    tokio::time::timeout(Duration::from_secs(15), async {
        while !check().await {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
}

async fn instance_ids(hub: &RunningHub, session: &Session) -> Vec<(String, String)> {
    let res = send(hub.port(), &session.get(hub, "/api/instances")).await;
    assert_eq!(res.status, 200, "{res:?}");
    res.json()["instances"]
        .as_array()
        .expect("instances")
        .iter()
        .map(|i| (i["instance_id"].as_str().expect("id").to_owned(), i["state"].as_str().expect("state").to_owned()))
        .collect()
}

// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn instances_join_and_leave_and_the_hub_relays_their_history() {
    let group = group("join");
    let hub = start_hub(options(&group)).await;
    let session = login(&hub).await;
    let a = instance(&group, "//- src/main.cpp\nint main() {}\n");
    let b = instance(&group, "//- lib/x.h\n#pragma once\n");
    until("both linked", || {
        matches!(a.link.state(), LinkState::Connected { .. }) && matches!(b.link.state(), LinkState::Connected { .. })
    })
    .await;
    let ids = instance_ids(&hub, &session).await;
    assert_eq!(ids.len(), 2);
    assert!(ids.iter().all(|(_, state)| state == "connected"));

    // A call of the MCP client is in the instance's history, with its progress.
    let client = connect(a.server.clone(), TestClient::new()).await;
    call(&client, "workspace_list", json!({})).await;
    let history = session.send_get(&hub, &format!("/api/instances/{}/history", a.id)).await;
    let calls = history.json()["calls"].as_array().cloned().expect("calls");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["tool"], "workspace_list");
    assert_eq!(calls[0]["origin"], "client");
    assert_eq!(calls[0]["state"], "completed");
    assert!(!calls[0]["progress"].as_array().expect("progress").is_empty());
    assert!(calls[0]["result"]["structuredContent"].is_object());

    // Catalog and status come from the instance through its in-process MCP session.
    let catalog = session.send_get(&hub, &format!("/api/instances/{}/catalog", a.id)).await.json();
    assert!(catalog["tools"].as_array().expect("tools").iter().any(|t| t["name"] == "workspace_read_file"));
    assert!(catalog["resource_templates"].as_array().expect("templates").len() >= 5);
    let status = session.send_get(&hub, &format!("/api/instances/{}/status", a.id)).await.json();
    assert_eq!(status["settings"]["workspace"], a.ws.project.display().to_string());
    let probed: Vec<&str> =
        status["sections"].as_array().expect("sections").iter().filter_map(|s| s["tool"].as_str()).collect();
    assert!(probed.contains(&"processes_overview") && probed.contains(&"toolsets_list"), "{probed:?}");
    let debug = status["sections"].as_array().unwrap().iter().find(|s| s["tool"] == "debug_inspect").expect("debug");
    assert_eq!(debug["result"]["structuredContent"]["sessions"], serde_json::json!([]), "{debug}");
    let history = session.send_get(&hub, &format!("/api/instances/{}/history", a.id)).await.json();
    assert_eq!(history["calls"].as_array().expect("calls").len(), 1, "status probes are not history");

    // Leaving says goodbye: the tab goes at once (no "reconnecting").
    a.link.leave().await;
    until_async("the instance removed", || async { instance_ids(&hub, &session).await.len() == 1 }).await;
    assert_eq!(instance_ids(&hub, &session).await[0].0, b.id);
}

#[tokio::test]
async fn the_first_bind_wins_the_election() {
    let group = group("election");
    let first = start_hub(options(&group)).await;
    assert!(hub::start(options(&group)).await.expect("no error").is_none(), "the second Hub loses");
    let url = request_url(&group.endpoint).await.expect("the winner answers");
    assert!(url.starts_with(&format!("http://127.0.0.1:{}/login?token=", first.port())));
    first.stop().await;
    let second = start_hub(options(&group)).await;
    assert!(request_url(&group.endpoint).await.expect("the new Hub answers").contains(&format!(":{}/", second.port())));
}

#[tokio::test]
async fn an_idle_hub_exits_after_its_last_instance_leaves() {
    let group = group("idle");
    let mut options = options(&group);
    options.idle_exit = Duration::from_millis(300);
    let hub = start_hub(options).await;
    let a = instance(&group, "");
    until("linked", || matches!(a.link.state(), LinkState::Connected { .. })).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(!hub.is_finished(), "an instance keeps the Hub alive");
    a.link.leave().await;
    tokio::time::timeout(Duration::from_secs(5), hub.wait()).await.expect("the Hub exits when idle");
    assert!(request_url(&group.endpoint).await.is_err(), "the socket is gone");
}

#[tokio::test]
async fn an_instance_reconnects_to_a_new_hub_and_keeps_its_history() {
    let group = group("reconnect");
    let hub = start_hub(options(&group)).await;
    let a = instance(&group, "//- a.txt\nhello\n");
    until("linked", || matches!(a.link.state(), LinkState::Connected { .. })).await;
    let client = connect(a.server.clone(), TestClient::new()).await;
    call(&client, "workspace_list", json!({})).await;

    hub.stop().await;
    until("reconnecting", || a.link.state() == LinkState::Reconnecting).await;
    // The MCP session is unaffected while the link is down.
    call(&client, "workspace_file_info", json!({ "path": "a.txt" })).await;

    let hub = start_hub(options(&group)).await;
    until("rejoined", || matches!(a.link.state(), LinkState::Connected { .. })).await;
    assert_eq!(a.link.reconnects(), 1);
    let session = login(&hub).await;
    let instances = session.send_get(&hub, "/api/instances").await.json();
    assert_eq!(instances["instances"][0]["reconnects"], 1);
    let history = session.send_get(&hub, &format!("/api/instances/{}/history", a.id)).await.json();
    let tools: Vec<&str> =
        history["calls"].as_array().expect("calls").iter().map(|c| c["tool"].as_str().expect("tool")).collect();
    assert_eq!(tools, ["workspace_list", "workspace_file_info"], "nothing lost, nothing replayed");
}

#[tokio::test]
async fn a_lost_instance_shows_as_reconnecting_until_it_rejoins_or_expires() {
    let (_group, hub, session, a) = linked("grace", "", |o| o.reconnect_grace = Duration::from_millis(400)).await;
    // Dropping the link without `bye` is a lost connection, not a goodbye.
    let TestInstance { link, .. } = a;
    drop(link);
    until_async("reconnecting", || async {
        instance_ids(&hub, &session).await.first().is_some_and(|(_, s)| s == "reconnecting")
    })
    .await;
    until_async("expired", || async { instance_ids(&hub, &session).await.is_empty() }).await;
}

#[tokio::test]
async fn panel_calls_run_through_the_instance_and_cancel_only_their_own() {
    let (_group, hub, session, a) = linked("panel", "//- notes.txt\nalpha\n", |_| {}).await;
    let base = format!("/api/instances/{}", a.id);

    let started = session
        .send_post(
            &hub,
            &format!("{base}/calls"),
            json!({ "tool": "workspace_read_file", "arguments": { "path": "notes.txt" } }),
        )
        .await;
    assert_eq!(started.status, 200, "{started:?}");
    let call_id = started.json()["call_id"].as_u64().expect("call id");
    until_async("the panel call finished", || async {
        let history = session.send_get(&hub, &format!("{base}/history")).await.json();
        history["calls"].as_array().expect("calls").iter().any(|c| c["call_id"] == call_id && c["state"] == "completed")
    })
    .await;
    let history = session.send_get(&hub, &format!("{base}/history")).await.json();
    let entry =
        history["calls"].as_array().expect("calls").iter().find(|c| c["call_id"] == call_id).cloned().expect("entry");
    assert_eq!(entry["origin"], "panel");
    assert_eq!(entry["result"]["structuredContent"]["text"], "alpha\n");

    // Unknown tools are refused by the server itself (JSON-RPC -32602), not by the panel.
    let unknown = session.send_post(&hub, &format!("{base}/calls"), json!({ "tool": "no_such_tool" })).await;
    assert_eq!(unknown.status, 422);
    assert!(unknown.json()["error"].as_str().expect("message").contains("-32602"));

    // A call of the MCP client cannot be cancelled from the panel.
    let client = connect(a.server.clone(), TestClient::new()).await;
    call(&client, "workspace_list", json!({})).await;
    let history = session.send_get(&hub, &format!("{base}/history")).await.json();
    let client_call = history["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .find(|c| c["origin"] == "client")
        .expect("client call")["call_id"]
        .as_u64()
        .expect("id");
    let refused = session.send_post(&hub, &format!("{base}/calls/{client_call}/cancel"), json!({})).await;
    assert_eq!(refused.status, 422);
    assert!(refused.json()["error"].as_str().expect("message").contains("only that client can cancel it"));

    // Elicitations: a panel read of an external file asks, and the browser answers.
    let external = a.ws.base.join("outside.txt");
    std::fs::write(&external, "outside\n").expect("external file");
    let path = format!("root{}", external.display());
    let asked = session
        .send_post(
            &hub,
            &format!("{base}/calls"),
            json!({ "tool": "workspace_read_file", "arguments": { "path": path } }),
        )
        .await;
    let asked_id = asked.json()["call_id"].as_u64().expect("call id");
    let pending = tokio::time::timeout(Duration::from_secs(15), async {
        loop {
            let status = session.send_get(&hub, &format!("{base}/status")).await.json();
            let pending = status["pending_elicitations"].as_array().cloned().unwrap_or_default();
            if !pending.is_empty() {
                return pending;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the question");
    assert!(pending[0]["message"].as_str().expect("message").contains("outside.txt"));
    let eid = pending[0]["elicitation_id"].as_str().expect("id").to_owned();
    let answered = session
        .send_post(
            &hub,
            &format!("{base}/elicitations/{eid}"),
            json!({ "action": "accept", "content": { "allow": true } }),
        )
        .await;
    assert_eq!(answered.status, 200, "{answered:?}");
    until_async("the external read finished", || async {
        let history = session.send_get(&hub, &format!("{base}/history")).await.json();
        history["calls"]
            .as_array()
            .expect("calls")
            .iter()
            .any(|c| c["call_id"] == asked_id && c["state"] == "completed")
    })
    .await;
}

/// Every route of the admin origin with a request that passes the guard.
fn routes(base: &str) -> Vec<(&'static str, String, Option<Value>)> {
    vec![
        ("GET", "/".into(), None),
        ("GET", "/api/instances".into(), None),
        ("GET", format!("{base}/history"), None),
        ("GET", format!("{base}/catalog"), None),
        ("GET", format!("{base}/status"), None),
        ("POST", format!("{base}/resources/read"), Some(json!({ "uri": "forgemcp://processes" }))),
        ("POST", format!("{base}/calls"), Some(json!({ "tool": "workspace_list", "arguments": {} }))),
        ("POST", format!("{base}/calls/999/cancel"), Some(json!({}))),
        ("POST", format!("{base}/elicitations/e999"), Some(json!({ "action": "decline" }))),
        ("GET", "/api/events".into(), None),
        ("GET", "/no-such-page".into(), None),
    ]
}

#[tokio::test]
async fn every_route_refuses_every_missing_or_forged_credential() {
    let (_group, hub, session, a) = linked("matrix", "", |o| o.token_ttl = Duration::from_secs(2)).await;
    let base = format!("/api/instances/{}", a.id);
    let port = hub.port();
    let own_host = format!("127.0.0.1:{port}");

    // Tokens: a spent one and an expired one open no session, anywhere.
    let spent = hub.login_url();
    let spent_path = spent.trim_start_matches(&format!("http://{own_host}")).to_owned();
    let token = spent_path.trim_start_matches("/login?token=").to_owned();
    let first =
        send(port, &Req { method: "GET", path: spent_path.clone(), host: Some(own_host.clone()), ..Req::default() })
            .await;
    assert_eq!(first.status, 200);
    let reused =
        send(port, &Req { method: "GET", path: spent_path, host: Some(own_host.clone()), ..Req::default() }).await;
    assert_eq!(reused.status, 403, "a reused token");
    assert!(reused.header("set-cookie").is_none());
    let expired = hub.login_url().trim_start_matches(&format!("http://{own_host}")).to_owned();
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let late =
        send(port, &Req { method: "GET", path: expired.clone(), host: Some(own_host.clone()), ..Req::default() }).await;
    assert_eq!(late.status, 403, "an expired token");
    assert!(late.header("set-cookie").is_none());
    let fresh = hub.login_url().trim_start_matches(&format!("http://{own_host}")).to_owned();
    let wrong_host =
        send(port, &Req { method: "GET", path: fresh.clone(), host: Some("evil.example:80".into()), ..Req::default() })
            .await;
    assert_eq!(wrong_host.status, 403, "login checks Host too");
    assert!(wrong_host.header("set-cookie").is_none());

    for (method, path, body) in routes(&base) {
        let ok = match method {
            "GET" => session.get(&hub, &path),
            _ => session.post(&hub, &path, body.clone().expect("body")),
        };
        let passed = send(port, &ok).await;
        assert!(![401, 403].contains(&passed.status), "{method} {path} with valid credentials: {passed:?}");

        let variants: Vec<(&str, Req)> = vec![
            ("no cookie", Req { cookie: None, ..ok.clone() }),
            ("wrong cookie", Req { cookie: Some(format!("forgemcp_session_{port}=forged")), ..ok.clone() }),
            (
                "another Hub's cookie name",
                Req { cookie: Some(session.cookie.replace(&format!("_{port}="), "_1=")), ..ok.clone() },
            ),
            ("wrong Host", Req { host: Some("evil.example".into()), ..ok.clone() }),
            ("wrong Host port", Req { host: Some(format!("127.0.0.1:{}", port.wrapping_add(1))), ..ok.clone() }),
            ("no Host", Req { host: None, ..ok.clone() }),
            ("foreign Origin", Req { origin: Some("http://evil.example".into()), ..ok.clone() }),
            ("sandbox Origin", Req { origin: Some(format!("http://127.0.0.1:{}", hub.sandbox_port())), ..ok.clone() }),
            (
                "reused token",
                Req {
                    cookie: None,
                    path: format!("{path}{}token={token}", if path.contains('?') { '&' } else { '?' }),
                    ..ok.clone()
                },
            ),
            (
                "expired token",
                Req { cookie: None, path: format!("{path}?{}", expired.trim_start_matches("/login?")), ..ok.clone() },
            ),
        ];
        let mut variants = variants;
        if path != "/" && path != "/no-such-page" {
            variants.push(("missing CSRF header", Req { csrf: None, ..ok.clone() }));
            variants.push(("wrong CSRF header", Req { csrf: Some("forged".into()), ..ok.clone() }));
        }
        if method == "POST" {
            variants.push(("missing Origin", Req { origin: None, ..ok.clone() }));
        }
        for (what, req) in variants {
            let res = send(port, &req).await;
            assert!([401, 403].contains(&res.status), "{method} {path} with {what}: {} {}", res.status, res.body);
            assert!(
                !res.body.contains(&a.id)
                    && !res.body.contains("workspace_list")
                    && !res.body.contains("forgemcp-csrf"),
                "{what}: no data leaks"
            );
        }
    }
}

#[tokio::test]
async fn the_sandbox_origin_serves_only_the_proxy_with_a_strict_policy() {
    let group = group("sandbox");
    let hub = start_hub(options(&group)).await;
    let sandbox = hub.sandbox_port();
    let host = format!("127.0.0.1:{sandbox}");
    let page = send(
        sandbox,
        &Req { method: "GET", path: "/sandbox.html?host=127.0.0.1".into(), host: Some(host.clone()), ..Req::default() },
    )
    .await;
    assert_eq!(page.status, 200);
    let csp = page.header("content-security-policy").expect("a CSP");
    assert!(csp.contains("connect-src 'none'") && csp.contains("default-src 'none'"), "{csp}");
    assert!(csp.contains(&format!("frame-ancestors http://127.0.0.1:{}", hub.port())), "{csp}");
    assert!(page.body.contains(&format!("http://127.0.0.1:{}", hub.port())), "the admin origin is injected");
    assert!(page.header("set-cookie").is_none());
    for (path, host) in [
        ("/sandbox.html", "evil.example".to_owned()),
        ("/sandbox.html?host=evil.example", host.clone()),
        ("/api/instances", host.clone()),
        ("/", host.clone()),
    ] {
        let res = send(sandbox, &Req { method: "GET", path: path.into(), host: Some(host), ..Req::default() }).await;
        assert!(res.status >= 400, "{path}: {res:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Another OS user.

fn can_switch_users(test: &str) -> bool {
    let root = nix::unistd::geteuid().is_root();
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0");
    if !root && ci {
        panic!("{test}: CI runs as root so the negative side can run as an unprivileged user");
    }
    if !root {
        #[expect(clippy::print_stderr, reason = "a skipped test says so")]
        {
            eprintln!("skipping {test}: switching to another user needs root");
        }
    }
    root
}

/// Connects to `socket` as uid/gid 65534 (nobody), asks for a login URL, and returns what it saw:
/// `connect-failed`, `no-answer` (connection closed without a reply), or `answered`.
fn connect_as_nobody(socket: &Path) -> String {
    let script = r#"
        use Socket;
        $SIG{PIPE} = "IGNORE";
        socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die "socket: $!";
        connect($s, pack_sockaddr_un($ARGV[0])) or do { print "connect-failed"; exit 0 };
        syswrite($s, qq({"type":"open_url_request","id":"x"}\n));
        my $got = ''; my $buf;
        while (sysread($s, $buf, 4096)) { $got .= $buf; }
        print($got =~ /open_url/ ? "answered" : "no-answer");
    "#;
    #[expect(clippy::disallowed_methods, reason = "the test's negative side runs a client as another user")]
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "perl", "-e", script])
        .arg(socket)
        .output()
        .expect("setpriv and perl run");
    assert!(
        out.status.success(),
        "client failed ({}): {} {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn another_os_user_cannot_use_the_socket() {
    if !can_switch_users("another_os_user_cannot_use_the_socket") {
        return;
    }
    let group = group("users");
    let _hub = start_hub(options(&group)).await;
    let socket = Path::new(group.endpoint.address()).to_path_buf();
    let seen = tokio::task::spawn_blocking({
        let socket = socket.clone();
        move || connect_as_nobody(&socket)
    })
    .await
    .expect("client");
    assert_eq!(seen, "connect-failed", "the private directory keeps others out");

    // Even with the directory and socket opened up, the Hub refuses the peer by its uid.
    use std::os::unix::fs::PermissionsExt as _;
    let mut dir = group.endpoint.dir().to_path_buf();
    loop {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o711)).expect("chmod dir");
        if !dir.pop() || dir == std::env::temp_dir() || dir.as_os_str().is_empty() || dir == Path::new("/") {
            break;
        }
    }
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).expect("chmod socket");
    let seen = tokio::task::spawn_blocking(move || connect_as_nobody(&socket)).await.expect("client");
    assert_eq!(seen, "no-answer", "the peer uid check refuses another user");
    assert!(request_url(&group.endpoint).await.is_ok(), "this user is still served");
}

// ---------------------------------------------------------------------------------------------
// The real binary.

#[tokio::test]
#[expect(clippy::disallowed_methods, reason = "the test starts the real server binary")]
async fn the_real_binary_joins_a_hub_it_starts_and_keeps_stdout_pure() {
    let runtime = tempfile::tempdir().expect("runtime dir");
    let ws = TempWorkspace::new("//- a.txt\nhello\n");
    let name = format!("it-{}", std::process::id());
    let port = free_port();
    let mut child = tokio::process::Command::new(binary())
        .args(["--workspace"])
        .arg(&ws.project)
        .args(["--admin-ipc", &name, "--admin-port", &port.to_string()])
        .env("XDG_RUNTIME_DIR", runtime.path())
        .env("FORGEMCP_LOG", "info")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn forgemcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}});
    stdin.write_all(format!("{init}\n").as_bytes()).await.expect("write");
    let first = stdout.next_line().await.expect("read").expect("a reply");
    assert_eq!(serde_json::from_str::<Value>(&first).expect("JSON")["id"], 1);
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await.expect("write");

    // The startup line names the public address and the command, never a token.
    let line = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let line = stderr.next_line().await.expect("stderr").expect("a startup line");
            if line.starts_with("forgemcp: admin panel at ") {
                return line;
            }
        }
    })
    .await
    .expect("the startup line");
    assert!(line.contains(&format!("`forgemcp --open-admin --admin-ipc {name}`")), "{line}");
    assert!(!line.contains("token"), "{line}");
    let endpoint = Endpoint::in_dir(&runtime.path().join("forgemcp"), &name).expect("endpoint");
    let url = request_url(&endpoint).await.expect("the Hub answers");
    assert!(url.contains("/login?token="));

    let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"workspace_list","arguments":{},"_meta":{"progressToken":"p"}}});
    stdin.write_all(format!("{call}\n").as_bytes()).await.expect("write");
    let mut lines = vec![first];
    while let Some(line) = stdout.next_line().await.expect("read") {
        let done = serde_json::from_str::<Value>(&line).is_ok_and(|m| m["id"] == 2);
        lines.push(line);
        if done {
            break;
        }
    }
    drop(stdin);
    while let Some(line) = stdout.next_line().await.expect("read") {
        lines.push(line);
    }
    assert!(lines.len() >= 3, "reply, progress and result: {lines:?}");
    for line in &lines {
        let message: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("stdout is MCP only ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
    }
    assert!(child.wait().await.expect("exit").success());
    let pid: i32 = std::fs::read_to_string(runtime.path().join("forgemcp").join(format!("{name}.lock")))
        .expect("lock file")
        .trim()
        .parse()
        .expect("pid");
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
}

#[tokio::test]
#[expect(clippy::disallowed_methods, reason = "the test starts real Hub processes")]
async fn two_racing_hub_processes_leave_exactly_one() {
    let runtime = tempfile::tempdir().expect("runtime dir");
    let name = format!("race-{}", std::process::id());
    let port = free_port().to_string();
    let spawn = || {
        tokio::process::Command::new(binary())
            .args(["--admin-hub", "--admin-ipc", &name, "--admin-port", &port])
            .env("XDG_RUNTIME_DIR", runtime.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn a Hub")
    };
    let (mut first, mut second) = (spawn(), spawn());
    // The loser exits at once and quietly; the winner serves until it is idle.
    let loser = tokio::time::timeout(Duration::from_secs(10), async {
        tokio::select! {
            status = first.wait() => (status.expect("status"), second.id().expect("winner runs")),
            status = second.wait() => (status.expect("status"), first.id().expect("winner runs")),
        }
    })
    .await
    .expect("one Hub gives up");
    assert!(loser.0.success(), "losing the election is not an error");
    let endpoint = Endpoint::in_dir(&runtime.path().join("forgemcp"), &name).expect("endpoint");
    // The loser may give up between the winner's lock and its socket: wait for the socket.
    let mut served = request_url(&endpoint).await;
    for _ in 0..100 {
        if served.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        served = request_url(&endpoint).await;
    }
    assert!(served.is_ok(), "the winner serves the group: {served:?}");
    let pid: u32 = std::fs::read_to_string(runtime.path().join("forgemcp").join(format!("{name}.lock")))
        .expect("lock file")
        .trim()
        .parse()
        .expect("pid");
    assert_eq!(pid, loser.1, "the lock names the winner");
    let mut output = String::new();
    for child in [&mut first, &mut second] {
        if let Some(mut stdout) = child.stdout.take() {
            let _ = tokio::time::timeout(Duration::from_millis(200), stdout.read_to_string(&mut output)).await;
        }
    }
    assert_eq!(output, "", "a Hub writes nothing to stdout");
}

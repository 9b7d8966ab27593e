//! The process service read through the MCP surface. Runs of `forgemcp-test-helper` start through
//! the service's Rust API on the `ProcessService` of an in-process server (no MCP tool starts
//! arbitrary programs) and are read back with `processes_overview`, `process_get`, the process
//! resources and id completion. Version probes of fake tools show what MCP calls start: a cancelled
//! `toolset_get` stops its probe's tree. The real binary: stdin EOF leaves no process of any tree
//! alive one second later, and a 1 GiB flood keeps the server small and responsive with an exact tail.
#![cfg(all(feature = "test-tools", target_os = "linux"))]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use forgemcp::call::Call;
use forgemcp::process::{CommandSpec, Completed, ProcessId, ProcessService, Status, Timeout, is_alive};
use forgemcp::server::ForgeServer;
use forgemcp::toolchain::{DiscoveryOptions, ToolsetId};
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, PingRequest, ServerResult};
use rmcp::service::{PeerRequestOptions, RunningService};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::process::{assert_gone_within_a_second, helper, printed_pids};
use crate::support::{
    TempWorkspace, TestClient, binary, call, complete, connect, resource_error, resource_text, structured, text,
    tool_error,
};

type Client = RunningService<RoleClient, TestClient>;

/// A helper tree: the leader, a plain child, a child that ignores SIGTERM, a child that left the
/// session, one in a new process group, and a daemon that cleared its environment (so it carries no
/// tree marker), orphaned by its exiting parent. Each prints `pid=<pid>` and sleeps.
const TREE: &[&str] = crate::process::HOSTILE_TREE;
/// Processes of [`TREE`] that print their pid.
const TREE_PIDS: usize = crate::process::HOSTILE_TREE_PIDS;

/// An in-process server whose process service the test also holds.
pub(crate) struct Server {
    ws: TempWorkspace,
    pub(crate) processes: ProcessService,
    pub(crate) client: Client,
}

impl Server {
    pub(crate) async fn start() -> Server {
        let ws = TempWorkspace::new("");
        let discovery = ws.discovery();
        Server::on(ws, discovery).await
    }

    /// A server whose system toolset is the fake tools in `ws.base/bin`.
    async fn with_tools(ws: TempWorkspace) -> Server {
        let mut discovery = ws.discovery();
        discovery.env.path = Some(ws.base.join("bin").into_os_string());
        Server::on(ws, discovery).await
    }

    async fn on(ws: TempWorkspace, discovery: DiscoveryOptions) -> Server {
        let processes = ProcessService::new(ws.roots());
        let server = ForgeServer::new(ws.services_with_discovery(processes.clone(), discovery), Duration::ZERO);
        let client = connect(server, TestClient::new()).await;
        Server { ws, processes, client }
    }

    fn spec(&self, steps: &[&str]) -> CommandSpec {
        CommandSpec::new(helper(), &self.ws.project).args(steps)
    }

    /// Runs the helper to completion through the service's Rust API.
    pub(crate) async fn run(&self, steps: &[&str]) -> Completed {
        self.run_spec(self.spec(steps)).await
    }

    async fn run_spec(&self, spec: CommandSpec) -> Completed {
        self.processes.run(spec, &Call::detached()).await.expect("the helper starts")
    }

    /// `process_get` with `args` (plus the id); returns the structured result.
    pub(crate) async fn get(&self, id: ProcessId, mut args: Value) -> Value {
        args["process_id"] = json!(id.0);
        structured(&call(&self.client, "process_get", args).await).clone()
    }

    async fn overview(&self, status: &str) -> (String, Value) {
        let res = call(&self.client, "processes_overview", json!({ "status": status })).await;
        (text(&res).to_owned(), structured(&res).clone())
    }
}

/// The concatenated text of a `process_get` result's transcript.
pub(crate) fn transcript_text(details: &Value) -> String {
    details["transcript"].as_array().expect("transcript").iter().map(|e| e["text"].as_str().unwrap()).collect()
}

/// `(stream, start_line, end_line)` of every returned fragment.
pub(crate) fn fragments(details: &Value) -> Vec<(String, u64, u64)> {
    details["transcript"]
        .as_array()
        .expect("transcript")
        .iter()
        .map(|e| {
            (
                e["stream"].as_str().unwrap().to_owned(),
                e["start_line"].as_u64().unwrap(),
                e["end_line"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Reads a process's transcript through `process_get` until the helper printed `n` pids.
async fn pids_through_mcp(client: &Client, id: u64, n: usize) -> Vec<u32> {
    for _ in 0..400 {
        let res = call(client, "process_get", json!({ "process_id": id, "lines": { "first": 100 } })).await;
        if res.is_error != Some(true) {
            let pids = printed_pids(&transcript_text(structured(&res)), "pid");
            if pids.len() >= n {
                return pids;
            }
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("process {id} never printed {n} pids");
}

/// Waits for the first running process the server lists and returns its id.
async fn first_running(client: &Client) -> u64 {
    for _ in 0..400 {
        let res = call(client, "processes_overview", json!({ "status": "running" })).await;
        if let Some(id) = structured(&res)["processes"][0]["summary"]["process_id"].as_u64() {
            return id;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no process started");
}

/// A fake tool `dir/name`: a `/bin/sh` script that ignores its arguments and runs the helper with
/// `steps` in its place.
fn helper_tool(dir: &Path, name: &str, steps: &[&str]) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::create_dir_all(dir).expect("tools directory");
    let quoted: Vec<String> = steps
        .iter()
        .map(|step| {
            assert!(!step.contains('\''), "steps are quoted with single quotes: {step}");
            format!("'{step}'")
        })
        .collect();
    let path = dir.join(name);
    let script = format!("#!/bin/sh\nexec '{}' {}\n", helper().display(), quoted.join(" "));
    std::fs::write(&path, script).expect("write the fake tool");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

// ---------------------------------------------------------------------------------------------
// In-process server: runs started through the Rust API, read through MCP.

#[tokio::test]
async fn exit_codes_show_in_the_overview_resources_and_completions() {
    let srv = Server::start().await;
    let ok = srv.run(&["out:hello\\n"]).await;
    let failed = srv.run(&["err:boom\\n", "exit:3"]).await;
    assert_eq!((ok.id, failed.id), (ProcessId(1), ProcessId(2)));
    let lived = srv.processes.spawn_long_lived(srv.spec(&["sleep:60000"])).await.unwrap();

    let (text, all) = srv.overview("all").await;
    assert_eq!((all["running"].clone(), all["completed"].clone()), (json!(1), json!(2)));
    let statuses: Vec<&Value> =
        all["processes"].as_array().unwrap().iter().map(|p| &p["status"]["current_status"]).collect();
    assert_eq!(statuses, [&json!(0), &json!(3), &json!("running")]);
    let first = &all["processes"][0];
    assert_eq!(first["summary"]["executable"], json!(helper().to_string_lossy()));
    assert_eq!(first["summary"]["arguments"], json!(["out:hello\\n"]));
    assert_eq!(first["summary"]["cwd"], json!(srv.ws.project.to_string_lossy()));
    assert_eq!(first["status"]["pid"], json!(ok.pid));
    assert!(text.starts_with("1 running, 1 failed, 1 succeeded. Showing 3 processes (status: all)."), "{text}");
    for outcome in ["1. Completed successfully (", "2. Exited with code 3 (", "3. Running ("] {
        assert!(text.contains(outcome), "{outcome}: {text}");
    }
    let (_, running) = srv.overview("running").await;
    assert_eq!((running["running"].clone(), running["completed"].clone()), (json!(1), json!(2)), "counts are global");
    let ids = |v: &Value| -> Vec<u64> {
        v["processes"].as_array().unwrap().iter().map(|p| p["summary"]["process_id"].as_u64().unwrap()).collect()
    };
    assert_eq!(ids(&running), [3]);
    let (_, completed) = srv.overview("completed").await;
    assert_eq!(ids(&completed), [1, 2]);

    let list = resource_text(&srv.client, "forgemcp://processes", "text/markdown").await;
    assert!(list.starts_with("# Processes\n"), "{list}");
    for id in 1..=3 {
        assert!(list.contains(&format!("| [{id}](forgemcp://processes/{id}) |")), "{list}");
    }
    let detail = resource_text(&srv.client, "forgemcp://processes/2", "text/markdown").await;
    assert!(detail.starts_with(&format!("# Process 2: {}\n", helper().display())), "{detail}");
    assert!(detail.contains("boom"), "{detail}");
    // Names and arguments read literally: no backslash CommonMark does not need.
    let markdown = resource_text(&srv.client, "forgemcp://processes/1", "text/markdown").await;
    assert!(markdown.contains("out:hello\\n") && !markdown.contains("out:hello\\\\n"), "{markdown}");
    let (code, _) = resource_error(&srv.client, "forgemcp://processes/99").await;
    assert_eq!(code, -32002);
    let (code, _) = resource_error(&srv.client, "forgemcp://processes/one").await;
    assert_eq!(code, -32602);

    let completions = complete(&srv.client, "forgemcp://processes/{process_id}", "process_id", "", &[]).await;
    assert_eq!(completions, ["1", "2", "3"]);

    let unknown = call(&srv.client, "process_get", json!({ "process_id": 99 })).await;
    assert_eq!(tool_error(&unknown), "Process 99 is not retained.");
    lived.stop().await;
}

#[tokio::test]
async fn last_seconds_of_a_running_process_end_at_request_time() {
    let srv = Server::start().await;
    let lived = srv.processes.spawn_long_lived(srv.spec(&["err:tick\\n", "sleep:60000"])).await.unwrap();
    let id = lived.id;
    // Wait until the tick is recorded, then let more than the window pass.
    for _ in 0..200 {
        if srv.get(id, json!({})).await["lines"] == json!([1, 1]) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let started = Instant::now();
    tokio::time::sleep(Duration::from_millis(700)).await;
    let details = srv.get(id, json!({ "time": { "last": 0.5 } })).await;
    assert_eq!(details["process"]["status"]["current_status"], json!("running"));
    assert_eq!(details["lines"], Value::Null, "the tick is older than the last 0.5 s before now");
    let whole = srv.get(id, json!({ "time": { "last": 30.0 + started.elapsed().as_secs_f64() } })).await;
    assert_eq!(transcript_text(&whole), "tick\n");
    lived.stop().await;
    let stopped = srv.get(id, json!({ "max_bytes": 0 })).await;
    assert_eq!(stopped["process"]["status"]["current_status"], json!("stopped"));
}

#[tokio::test]
async fn timeouts_interrupt_runs_within_two_seconds() {
    let srv = Server::start().await;
    let total = Duration::from_millis(700);
    let idle = Duration::from_millis(600);
    let mut ticking = Vec::new();
    for _ in 0..4 {
        ticking.extend(["out:tick\\n", "sleep:100"]);
    }
    ticking.push("sleep:60000");
    let started = Instant::now();
    let (by_total, by_idle) = tokio::join!(
        async {
            let done = srv.run_spec(srv.spec(&["out:started\\n", "sleep:60000"]).timeout(Timeout::total(total))).await;
            (done, started.elapsed())
        },
        async {
            let timeout = Timeout { total: None, idle: Some(idle) };
            let done = srv.run_spec(srv.spec(&ticking).timeout(timeout)).await;
            (done, started.elapsed())
        },
    );
    assert!(by_total.1 < total + Duration::from_secs(2), "total timeout: result after {:?}", by_total.1);
    // Four ticks 100 ms apart, then the idle limit: the result comes within the limit + 2 s.
    assert!(by_idle.1 >= Duration::from_millis(900), "output reset the idle timer: {:?}", by_idle.1);
    assert!(by_idle.1 < Duration::from_millis(400) + idle + Duration::from_secs(2), "idle timeout: {:?}", by_idle.1);

    let t = srv.get(by_total.0.id, json!({})).await;
    assert_eq!(t["process"]["status"]["current_status"], json!("interrupted"));
    assert_eq!(t["process"]["summary"]["timeout"], json!({ "total": 0.7, "idle": null }));
    assert_eq!(transcript_text(&t), "started\n");
    let i = srv.get(by_idle.0.id, json!({})).await;
    assert_eq!(i["process"]["status"]["current_status"], json!("interrupted"));
    assert_eq!(i["process"]["summary"]["timeout"], json!({ "total": null, "idle": 0.6 }));
    assert_eq!(transcript_text(&i), "tick\n".repeat(4));
    let (text, _) = srv.overview("completed").await;
    assert_eq!(text.matches(". Interrupted by timeout (").count(), 2, "{text}");
    let work_time = t["process"]["status"]["work_time"].as_f64().unwrap();
    assert!((0.7..2.7).contains(&work_time), "work time {work_time}");
}

#[tokio::test]
async fn a_cancelled_call_stops_its_whole_tree() {
    let srv = Server::start().await;
    let call_ctx = Call::detached();
    let cancel = call_ctx.cancel.clone();
    let processes = srv.processes.clone();
    let spec = srv.spec(TREE);
    let run = tokio::spawn(async move { processes.run(spec, &call_ctx).await });
    let pids = pids_through_mcp(&srv.client, 1, TREE_PIDS).await;
    assert!(pids.iter().all(|&pid| is_alive(pid)), "the tree runs: {pids:?}");
    cancel.cancel();
    let done = tokio::time::timeout(Duration::from_secs(5), run).await.expect("cancellation ends the run").unwrap();
    assert_eq!(done.unwrap().status, Status::Stopped);
    assert_gone_within_a_second(&pids).await;
    let details = srv.get(ProcessId(1), json!({ "max_bytes": 0 })).await;
    assert_eq!(details["process"]["status"]["current_status"], json!("stopped"));
    let (text, _) = srv.overview("all").await;
    assert!(text.contains("1. Stopped ("), "{text}");
}

#[tokio::test]
async fn cancelling_an_mcp_request_stops_the_tree_it_started() {
    let ws = TempWorkspace::new("");
    helper_tool(&ws.base.join("bin"), "cmake", TREE);
    let srv = Server::with_tools(ws).await;
    let params = CallToolRequestParams::new("toolset_get")
        .with_arguments(json!({ "toolset_id": "system" }).as_object().cloned().unwrap());
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = srv.client.peer().send_cancellable_request(request, PeerRequestOptions::no_options()).await.unwrap();
    let id = first_running(&srv.client).await;
    let pids = pids_through_mcp(&srv.client, id, TREE_PIDS).await;
    let cancelled = Instant::now();
    handle.cancel(Some("the test cancels".into())).await.unwrap();
    assert_gone_within_a_second(&pids).await;
    loop {
        let details = srv.get(ProcessId(id), json!({ "max_bytes": 0 })).await;
        if details["process"]["status"]["current_status"] == json!("stopped") {
            break;
        }
        assert!(cancelled.elapsed() < Duration::from_secs(2), "not stopped: {details}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

// ---------------------------------------------------------------------------------------------
// The real binary.

/// The real server on `ws`, with `tools` (`TOOL=PATH`) as the user toolset `Fake`, and an MCP client
/// on its stdio pipes, so that closing the client closes the server's stdin.
async fn real_server(ws: &TempWorkspace, tools: &[String]) -> (tokio::process::Child, Client) {
    let empty = ws.base.join("empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    #[expect(clippy::disallowed_methods, reason = "the test starts the real server binary")]
    let mut command = tokio::process::Command::new(binary());
    command
        .arg("--workspace")
        .arg(&ws.project)
        .args(["--no-admin", "--toolset", "Fake"])
        .args(tools)
        .env("PATH", &empty)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let mut server = command.spawn().expect("spawn the server");
    let stdout = server.stdout.take().unwrap();
    let stdin = server.stdin.take().unwrap();
    let client = TestClient::new().serve((stdout, stdin)).await.expect("initialize");
    (server, client)
}

/// `toolset_get` for the user toolset `Fake`, as a request that can run in another task.
fn probe_fake_toolset(client: &Client) -> tokio::task::JoinHandle<Result<ServerResult, rmcp::ServiceError>> {
    let peer = client.peer().clone();
    let id = ToolsetId::user("Fake");
    let params = CallToolRequestParams::new("toolset_get")
        .with_arguments(json!({ "toolset_id": id.as_str() }).as_object().cloned().unwrap());
    tokio::spawn(async move { peer.send_request(ClientRequest::CallToolRequest(CallToolRequest::new(params))).await })
}

/// Pids of live (not zombie) processes whose environment carries a tree marker of the server with
/// pid `server` (the process service marks every launch with `FORGEMCP_PROCESS_TREE=<server pid>-…`,
/// and descendants inherit it).
fn marked_processes(server: u32) -> Vec<u32> {
    let wanted = format!("FORGEMCP_PROCESS_TREE={server}-");
    let mut res = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else { continue };
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else { continue };
        let marked = environ.split(|&b| b == 0).any(|var| var.starts_with(wanted.as_bytes()));
        if marked && is_alive(pid) {
            res.push(pid);
        }
    }
    res
}

/// How a test ends the real server's session.
#[derive(Debug, Clone, Copy)]
enum Ending {
    StdinEof,
    Signal(nix::sys::signal::Signal),
}

/// Ends the real server's session `how`, with a [`TREE`] running: 1 s later no process of the tree
/// is alive, and the server has exited successfully.
async fn ending_leaves_no_process_of_any_tree_alive(how: Ending) {
    let ws = TempWorkspace::new("");
    let tool = helper_tool(&ws.base.join("bin"), "cmake", TREE);
    let (mut server, client) = real_server(&ws, &[format!("cmake={}", tool.display())]).await;
    let server_pid = server.id().unwrap();
    let probe = probe_fake_toolset(&client);
    let id = first_running(&client).await;
    let pids = pids_through_mcp(&client, id, TREE_PIDS).await;
    assert_eq!(pids.len(), TREE_PIDS, "{how:?}: every process of the tree printed its pid");
    let marked = marked_processes(server_pid);
    let unmarked: Vec<&u32> = pids.iter().filter(|pid| !marked.contains(pid)).collect();
    assert_eq!(unmarked.len(), 1, "/proc shows all but the daemon that cleared its environment by the marker");

    match how {
        // Closing the client closes the server's stdin.
        Ending::StdinEof => client.cancel().await.map(drop).expect("the client closes"),
        Ending::Signal(signal) => {
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(server_pid as i32), signal).expect("signal the server")
        }
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let alive: Vec<u32> = pids.iter().copied().filter(|&pid| is_alive(pid)).collect();
    assert_eq!(alive, Vec::<u32>::new(), "{how:?}: tree processes alive 1 s later (of {pids:?})");
    assert_eq!(marked_processes(server_pid), Vec::<u32>::new(), "{how:?}: marked processes alive 1 s later");
    let status = tokio::time::timeout(Duration::from_secs(10), server.wait()).await.expect("the server exits").unwrap();
    assert!(status.success(), "{how:?}: {status}");
    probe.abort();
}

#[tokio::test]
async fn stdin_eof_leaves_no_process_of_any_tree_alive() {
    ending_leaves_no_process_of_any_tree_alive(Ending::StdinEof).await;
}

#[tokio::test]
async fn sigint_sigterm_and_sighup_shut_down_like_stdin_eof() {
    use nix::sys::signal::Signal;
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        ending_leaves_no_process_of_any_tree_alive(Ending::Signal(signal)).await;
    }
}

/// Bytes the flood test pushes through one process.
const FLOOD_BYTES: u64 = 1 << 30;

/// CPU time (user and system) `pid` has used so far.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split_whitespace().collect();
    // Fields 14 and 15 of stat(5) (utime, stime), counted from the state field (3).
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    let per_second = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK).unwrap().unwrap() as u64;
    Duration::from_millis(ticks * 1000 / per_second)
}

/// `VmHWM` (peak resident set) of `pid` in bytes.
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|line| line.starts_with("VmHWM:")).expect("VmHWM line");
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gigabyte_flood_keeps_the_server_small_responsive_and_exact() {
    let ws = TempWorkspace::new("");
    let tool = helper_tool(&ws.base.join("bin"), "cmake", &[&format!("flood:{FLOOD_BYTES}")]);
    let (server, client) = real_server(&ws, &[format!("cmake={}", tool.display())]).await;
    let server_pid = server.id().unwrap();

    let started = Instant::now();
    let probe = probe_fake_toolset(&client);
    let flooding = Arc::new(AtomicBool::new(true));
    let pinger = {
        let peer = client.peer().clone();
        let flooding = flooding.clone();
        tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut ticks = tokio::time::interval(Duration::from_millis(50));
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            while flooding.load(Ordering::SeqCst) {
                ticks.tick().await;
                let sent = Instant::now();
                peer.send_request(ClientRequest::PingRequest(PingRequest::default())).await.expect("ping");
                latencies.push(sent.elapsed());
            }
            latencies
        })
    };
    let result = probe.await.unwrap().expect("toolset_get answers");
    let flood_time = started.elapsed();
    flooding.store(false, Ordering::SeqCst);
    let mut latencies = pinger.await.unwrap();
    let ServerResult::CallToolResult(result) = result else { panic!("unexpected reply {result:?}") };
    assert_eq!(structured(&result)["tools"][0]["version"], Value::Null, "the flood is no version banner");

    let overview = call(&client, "processes_overview", json!({ "status": "all" })).await;
    let process = &structured(&overview)["processes"][0];
    assert_eq!(process["status"]["current_status"], json!(0), "the flood ran to its end: {process}");
    let id = process["summary"]["process_id"].as_u64().unwrap();

    let n_lines = FLOOD_BYTES / 64;
    let asked = Instant::now();
    let tail = call(&client, "process_get", json!({ "process_id": id, "lines": { "last": 100 } })).await;
    let tail_read = asked.elapsed();
    let tail = structured(&tail);
    assert_eq!(tail["lines"], json!([n_lines - 99, n_lines]));
    let expected: String = (n_lines - 99..=n_lines).map(|n| format!("line {n:010} {}\n", "x".repeat(47))).collect();
    assert_eq!(transcript_text(tail), expected);

    let peak = peak_rss(server_pid);
    let cpu = cpu_time(server_pid);
    latencies.sort();
    let p99 = latencies[(latencies.len() * 99).div_ceil(100) - 1];
    report(flood_time, cpu, peak, &latencies, p99, tail_read);
    assert!(peak < 256 << 20, "server peak RSS {} MiB", peak >> 20);
    assert!(latencies.len() >= 10, "pings ran during the flood: {}", latencies.len());
    assert!(p99 < Duration::from_millis(250), "ping p99 {p99:?} over {} pings", latencies.len());
    client.cancel().await.expect("the client closes");
}

#[expect(clippy::print_stderr, reason = "the flood test reports its figures in the test output")]
fn report(flood_time: Duration, cpu: Duration, peak: u64, latencies: &[Duration], p99: Duration, tail_read: Duration) {
    eprintln!(
        "flood of {} MiB: {flood_time:.2?} ({cpu:.2?} server CPU); server peak RSS {:.1} MiB; {} pings, p99 {p99:.1?}, \
         max {:.1?}; process_get of the last 100 lines: {tail_read:.1?}",
        FLOOD_BYTES >> 20,
        peak as f64 / f64::from(1 << 20),
        latencies.len(),
        latencies.last().copied().unwrap_or_default(),
    );
}

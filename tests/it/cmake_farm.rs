//! Compiler caches and build farms with the real tools (issue 32): ccache shared by two copies of
//! the acceptance project, a `distccd` on the loopback address (and the same build with its port
//! closed), and sccache in local-disk mode on a server of its own. Daemons listen on 127.0.0.1
//! only, on free ports, and are stopped when the test ends (also when it fails).

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use forgemcp::server::ForgeServer;
use rmcp::RoleClient;
use rmcp::service::RunningService;
use serde_json::{Value, json};

use crate::support::{TempWorkspace, TestClient, acceptance_project, call, connect, real_services, structured, text};

type Client = RunningService<RoleClient, TestClient>;

fn real_tools(test: &str, launcher: &str) -> bool {
    crate::support::real_tools(test, &["cmake", "ninja", "g++", launcher])
}

/// A copy of the acceptance project without its preset file (so `--cmake-profile` rules).
fn project() -> TempWorkspace {
    let ws = acceptance_project();
    std::fs::remove_file(ws.path("CMakePresets.json")).expect("remove the preset file");
    ws
}

async fn client(ws: &TempWorkspace, profile: &[String]) -> Client {
    let mut extra: Vec<&str> = vec!["--cmake-profile", "farm", "configuration=Debug"];
    extra.extend(profile.iter().map(String::as_str));
    let services = real_services(ws, &extra);
    connect(ForgeServer::new(services, Duration::ZERO), TestClient::new()).await
}

fn item(result: &rmcp::model::CallToolResult) -> Value {
    let items = structured(result)["result"].as_array().expect("a wrapped result list").clone();
    assert_eq!(items.len(), 1, "{items:#?}");
    items[0].clone()
}

/// Configures the profile, then a clean build of everything: the build's item and text.
async fn configure_and_build(client: &Client) -> (Value, String) {
    let res = call(client, "cmake_configure", json!({})).await;
    assert_eq!(item(&res)["error"], Value::Null, "{}", text(&res));
    let res = call(client, "cmake_build", json!({ "targets": ["clean"] })).await;
    assert_eq!(item(&res)["error"], Value::Null, "{}", text(&res));
    let res = call(client, "cmake_build", json!({})).await;
    let built = item(&res);
    assert_eq!(built["error"], Value::Null, "{}", text(&res));
    (built, text(&res).to_owned())
}

fn count(value: &Value) -> u64 {
    value.as_u64().unwrap_or_else(|| panic!("a count, not {value}"))
}

/// A port nobody listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("bind a free port").local_addr().expect("its address").port()
}

/// A daemon the test started: the workers it forked (which hold its listening socket too and run
/// in process groups of their own) and then the daemon are killed, and the daemon reaped, when
/// dropped.
struct Daemon(Child);

/// The pids whose parent is `parent` (`/proc/<pid>/stat`, the field after the state).
fn children(parent: u32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // `pid (comm) state ppid …`: the name may hold spaces, so read after its last `)`.
            let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
            after.split_whitespace().nth(1).and_then(|ppid| ppid.parse::<u32>().ok()) == Some(parent)
        })
        .collect()
}

impl Drop for Daemon {
    fn drop(&mut self) {
        use nix::sys::signal::{Signal, kill};
        // Stopped first, so it forks no new worker while its workers are killed.
        let daemon = nix::unistd::Pid::from_raw(i32::try_from(self.0.id()).expect("a pid"));
        let _ = kill(daemon, Signal::SIGSTOP);
        for worker in children(self.0.id()) {
            let _ = kill(nix::unistd::Pid::from_raw(worker), Signal::SIGKILL);
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_for_port(port: u16, daemon: &mut Daemon, log: &Path) {
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = daemon.0.try_wait() {
            panic!("the daemon exited with {status}: {}", std::fs::read_to_string(log).unwrap_or_default());
        }
        assert!(start.elapsed() < Duration::from_secs(20), "nothing listens on 127.0.0.1:{port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test]
async fn ccache_copies_in_other_directories_share_hits() {
    if !real_tools("ccache_copies_in_other_directories_share_hits", "ccache") {
        return;
    }
    let cache = tempfile::tempdir().expect("cache directory");
    let profile = ["compiler-launcher=ccache".to_owned(), format!("env=CCACHE_DIR={}", cache.path().display())];
    let first = project();
    let (built, shown) = configure_and_build(&client(&first, &profile).await).await;
    let figures = &built["acceleration"];
    assert_eq!(figures["launcher"], "ccache", "{shown}");
    let misses = count(&figures["misses"]);
    assert!(misses >= 4, "a cold cache misses every compile: {shown}");
    assert!(
        cache.path().join("ccache.conf").exists() || cache.path().read_dir().unwrap().next().is_some(),
        "the profile's CCACHE_DIR was used"
    );
    // Another copy in another directory: its absolute paths differ, the cache still hits.
    let second = project();
    assert_ne!(first.project, second.project);
    let (built, shown) = configure_and_build(&client(&second, &profile).await).await;
    let figures = &built["acceleration"];
    let (hits, misses_again) = (count(&figures["hits"]), count(&figures["misses"]));
    assert!(hits * 100 >= (hits + misses_again) * 90 && hits >= misses, "at least 90% hits: {shown}");
    let line = shown.lines().find(|line| line.trim_start().starts_with("ccache: ")).expect("the ccache line");
    assert!(line.contains(&format!("{hits} hits, {misses_again} miss")), "{line}");
}

/// A `distccd` on 127.0.0.1:`port` that accepts only 127.0.0.1, logging to `log`.
fn distccd(port: u16, log: &Path) -> Daemon {
    let out = std::fs::File::create(log).expect("daemon log");
    #[expect(clippy::disallowed_methods, reason = "the test starts the farm daemon, not a tool of the server")]
    let child = std::process::Command::new("distccd")
        .args(["--daemon", "--no-detach", "--listen", "127.0.0.1", "--allow", "127.0.0.1", "--log-stderr", "--verbose"])
        .args(["--port", &port.to_string(), "--jobs", "4"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(out)
        .spawn()
        .expect("distccd starts");
    let mut daemon = Daemon(child);
    wait_for_port(port, &mut daemon, log);
    daemon
}

#[tokio::test]
async fn distcc_builds_on_a_loopback_daemon_and_locally_when_it_is_gone() {
    if !real_tools("distcc_builds_on_a_loopback_daemon_and_locally_when_it_is_gone", "distcc")
        || !crate::support::real_tools("distcc test daemon", &["distccd"])
    {
        return;
    }
    let scratch = tempfile::tempdir().expect("scratch directory");
    let port = free_port();
    let log = scratch.path().join("distccd.log");
    let daemon = distccd(port, &log);
    let host = format!("127.0.0.1:{port}");
    // distcc's lock and backoff state stays with this test (the directory must exist).
    let state = scratch.path().join("distcc");
    std::fs::create_dir(&state).expect("distcc state directory");
    let profile = [
        "compiler-launcher=distcc".to_owned(),
        format!("env=DISTCC_HOSTS={host}/4"),
        format!("env=DISTCC_DIR={}", state.display()),
    ];
    let ws = project();
    let client = client(&ws, &profile).await;
    let (built, shown) = configure_and_build(&client).await;
    let figures = &built["acceleration"];
    let jobs = count(&figures["remote_jobs"]);
    assert!(jobs >= 4, "the compiles ran on the daemon: {shown}");
    assert_eq!(figures["hosts"], json!([host]), "{shown}");
    assert_eq!(figures["unreachable_hosts"], json!([]), "{shown}");
    assert!(shown.contains(&format!("distcc: {jobs} jobs on 1 host, ")), "{shown}");
    let served =
        std::fs::read_to_string(&log).expect("daemon log").lines().filter(|line| line.contains("COMPILE_OK")).count()
            as u64;
    assert_eq!(served, jobs, "the daemon's log counts the jobs the result counts");
    // Without parallel, the build ran with the farm's 4 slots.
    let process = count(&built["process_id"]);
    let res = call(&client, "process_get", json!({ "process_id": process })).await;
    assert!(text(&res).contains("--parallel 4") || structured(&res).to_string().contains("\"4\""), "{}", text(&res));

    drop(daemon);
    let closing = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(closing.elapsed() < Duration::from_secs(10), "the daemon's port is closed");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (built, shown) = configure_and_build(&client).await;
    let figures = &built["acceleration"];
    assert_eq!(count(&figures["remote_jobs"]), 0, "{shown}");
    assert!(count(&figures["local_jobs"]) >= 4, "{shown}");
    assert_eq!(figures["unreachable_hosts"], json!([host]), "{shown}");
    assert!(shown.contains(&format!("{host} was unreachable, so its compiles ran locally")), "{shown}");
}

/// An sccache server of its own port and cache directory (`env`), stopped when dropped.
struct SccacheServer(Vec<(String, PathBuf)>);

impl SccacheServer {
    fn command(&self, arg: &str) -> std::process::ExitStatus {
        #[expect(clippy::disallowed_methods, reason = "the test starts and stops the sccache server of its profile")]
        std::process::Command::new("sccache")
            .arg(arg)
            .envs(self.0.iter().map(|(k, v)| (k.as_str(), v.as_os_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("sccache runs")
    }
}

impl Drop for SccacheServer {
    fn drop(&mut self) {
        self.command("--stop-server");
    }
}

#[tokio::test]
async fn sccache_in_local_disk_mode_on_a_server_of_its_own() {
    if !real_tools("sccache_in_local_disk_mode_on_a_server_of_its_own", "sccache") {
        return;
    }
    let scratch = tempfile::tempdir().expect("scratch directory");
    let port = free_port();
    let dir = scratch.path().join("cache");
    let server = SccacheServer(vec![
        ("SCCACHE_SERVER_PORT".to_owned(), PathBuf::from(port.to_string())),
        ("SCCACHE_DIR".to_owned(), dir.clone()),
    ]);
    assert!(server.command("--start-server").success(), "the sccache server starts on 127.0.0.1:{port}");
    let profile = [
        "compiler-launcher=sccache".to_owned(),
        format!("env=SCCACHE_SERVER_PORT={port}"),
        format!("env=SCCACHE_DIR={}", dir.display()),
    ];
    let ws = project();
    let client = client(&ws, &profile).await;
    let (built, shown) = configure_and_build(&client).await;
    let figures = &built["acceleration"];
    assert_eq!(figures["launcher"], "sccache", "{shown}");
    assert!(count(&figures["misses"]) >= 4, "a cold cache misses every compile: {shown}");
    let (built, shown) = configure_and_build(&client).await;
    let figures = &built["acceleration"];
    let (hits, misses) = (count(&figures["hits"]), count(&figures["misses"]));
    assert!(hits >= 4 && misses == 0, "the second clean build hits: {shown}");
    assert!(shown.contains(&format!("sccache: {hits} hits, 0 misses (100%)")), "{shown}");
    assert!(dir.is_dir(), "the profile's SCCACHE_DIR holds the cache");
}

//! Toolset discovery and version probes through the MCP surface: fake tools (shell scripts printing
//! recorded banners) on a temporary `PATH`, user toolsets from real command-line parsing, the real
//! binary for start-up discovery, and one test against the real Debian tools (`CI` or
//! `FORGEMCP_HEAVY_TESTS=1`).

use std::ffi::OsString;
#[cfg(unix)]
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;
#[cfg(unix)]
use std::time::Instant;

use forgemcp::call::Call;
#[cfg(unix)]
use forgemcp::config;
use forgemcp::process::{ProcessService, StatusFilter};
#[cfg(unix)]
use forgemcp::process::{Status, Stream};
use forgemcp::server::ForgeServer;
use forgemcp::toolchain::DiscoveryEnv;
use forgemcp::toolchain::{DiscoveryOptions, ToolchainService};
use serde_json::{Value, json};

use crate::support::{
    TempWorkspace, TestClient, call, connect, heavy_tests, resource_error, structured, text, tool_error,
};
#[cfg(unix)]
use crate::support::{complete, progress_log, resource_text};

/// A directory of fake tools.
struct FakeTools {
    dir: PathBuf,
}

impl FakeTools {
    fn new(ws: &TempWorkspace, name: &str) -> FakeTools {
        let dir = ws.base.join(name);
        std::fs::create_dir_all(&dir).expect("tools directory");
        FakeTools { dir }
    }

    /// A `/bin/sh` script named `name` with `body`; only shell builtins are used, so it runs with
    /// any `PATH`.
    #[cfg(unix)]
    fn script(&self, name: &str, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt as _;
        let path = self.dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    }

    /// A tool that prints `banner` on stdout and exits 0.
    #[cfg(unix)]
    fn banner(&self, name: &str, banner: &str) -> PathBuf {
        self.script(name, &format!("printf '%s' '{}'", banner.replace('\'', r"'\''")))
    }

    fn path_env(&self) -> OsString {
        self.dir.clone().into_os_string()
    }
}

/// Banners recorded from real tools, the executable name they are found under, and the version
/// ForgeMCP must read from them (the fake tools are shell scripts: Unix only).
#[cfg(unix)]
const RECORDED: &[(&str, &str, &str, &str)] = &[
    (
        "cmake",
        "cmake",
        "cmake version 3.25.1\n\nCMake suite maintained and supported by Kitware (kitware.com/cmake).\n",
        "3.25.1",
    ),
    (
        "ctest",
        "ctest",
        "ctest version 3.25.1\n\nCMake suite maintained and supported by Kitware (kitware.com/cmake).\n",
        "3.25.1",
    ),
    ("ninja", "ninja", "1.11.1\n", "1.11.1"),
    (
        "make",
        "make",
        "GNU Make 4.3\nBuilt for x86_64-pc-linux-gnu\nCopyright (C) 1988-2020 Free Software Foundation, Inc.\n",
        "4.3",
    ),
    (
        "gcc",
        "gcc",
        "gcc (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright (C) 2022 Free Software Foundation, Inc.\n",
        "12.2.0",
    ),
    (
        "g++",
        "g++",
        "g++ (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright (C) 2022 Free Software Foundation, Inc.\n",
        "12.2.0",
    ),
    (
        "clang",
        "clang",
        "Debian clang version 14.0.6\nTarget: x86_64-pc-linux-gnu\nThread model: posix\nInstalledDir: /usr/bin\n",
        "14.0.6",
    ),
    (
        "clang++",
        "clang++",
        "Debian clang version 14.0.6\nTarget: x86_64-pc-linux-gnu\nThread model: posix\nInstalledDir: /usr/bin\n",
        "14.0.6",
    ),
    ("clang-cl", "clang-cl", "Debian clang version 14.0.6\nTarget: x86_64-pc-windows-msvc\n", "14.0.6"),
    ("lld", "ld.lld", "Debian LLD 14.0.6 (compatible with GNU linkers)\n", "14.0.6"),
    ("lld-link", "lld-link", "Debian LLD 14.0.6\n", "14.0.6"),
    (
        "clangd",
        "clangd",
        "Debian clangd version 14.0.6\nFeatures: linux+grpc\nPlatform: x86_64-pc-linux-gnu\n",
        "14.0.6",
    ),
    // Debian installs them as clang-tidy-14 and clang-format-14; versioned names are found too.
    (
        "clang-tidy",
        "clang-tidy-14",
        "Debian LLVM version 14.0.6\n  Optimized build.\n  Default target: x86_64-pc-linux-gnu\n",
        "14.0.6",
    ),
    ("clang-format", "clang-format-14", "Debian clang-format version 14.0.6\n", "14.0.6"),
    ("git", "git", "git version 2.47.3\n", "2.47.3"),
    ("gdb", "gdb", "GNU gdb (Debian 13.1-3) 13.1\nCopyright (C) 2023 Free Software Foundation, Inc.\n", "13.1"),
];

/// A server whose discovery uses `discovery`, sharing `processes` with the test.
fn server(ws: &TempWorkspace, processes: &ProcessService, discovery: DiscoveryOptions) -> ForgeServer {
    ForgeServer::new(ws.services_with_discovery(processes.clone(), discovery), Duration::ZERO)
}

fn with_path(ws: &TempWorkspace, tools: &FakeTools) -> DiscoveryOptions {
    let mut discovery = ws.discovery();
    discovery.env = DiscoveryEnv { path: Some(tools.path_env()), ..DiscoveryEnv::default() };
    discovery
}

/// Tool name → (path, version) from a `toolset_get` result.
fn tools_of(value: &Value) -> Vec<(String, String, Value)> {
    value["tools"]
        .as_array()
        .expect("tools array")
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_owned(), t["path"].as_str().unwrap().to_owned(), t["version"].clone()))
        .collect()
}

#[cfg(unix)]
#[tokio::test]
async fn complete_system_toolset_reports_every_tool_with_its_version() {
    let ws = TempWorkspace::new("");
    let tools = FakeTools::new(&ws, "bin");
    for (_, exe, banner, _) in RECORDED {
        tools.banner(exe, banner);
    }
    tools.script("lldb-dap", "exit 3");
    // POSIX `link` is not a linker; it must not be picked up.
    tools.script("link", "printf 'link (GNU coreutils) 9.1\\n'");
    let processes = ProcessService::new(ws.roots());
    let client = connect(server(&ws, &processes, with_path(&ws, &tools)), TestClient::new()).await;

    let listed = call(&client, "toolsets_list", json!({})).await;
    let mut names: Vec<&str> = RECORDED.iter().map(|(name, ..)| *name).chain(["lldb-dap"]).collect();
    names.sort_unstable();
    assert_eq!(structured(&listed)["result"], json!([{ "id": "system", "name": "System", "tools": names }]));
    assert_eq!(text(&listed), format!("Discovered toolsets: 1.\n\nSystem (system)\n  Tools: {}", names.join(", ")));
    assert!(processes.overview(StatusFilter::All).processes.is_empty(), "listing never probes");

    let got = call(&client, "toolset_get", json!({ "toolset_id": "system" })).await;
    let value = structured(&got);
    assert_eq!((value["id"].as_str(), value["name"].as_str()), (Some("system"), Some("System")));
    let reported = tools_of(value);
    assert_eq!(reported.len(), names.len());
    for (name, exe, _, version) in RECORDED {
        let (_, path, got) = reported.iter().find(|(n, ..)| n == name).unwrap_or_else(|| panic!("{name} listed"));
        assert_eq!(Path::new(path), tools.dir.join(exe), "{name}");
        assert_eq!(got, &json!(version), "{name}");
    }
    let lldb_dap = reported.iter().find(|(n, ..)| n == "lldb-dap").expect("lldb-dap listed");
    assert_eq!(lldb_dap.2, Value::Null, "lldb-dap has no version probe");
    let kinds: Vec<(&str, &str)> = value["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t["kind"].as_str().unwrap()))
        .collect();
    assert!(kinds.contains(&("cmake", "build_system")) && kinds.contains(&("lld", "linker")), "{kinds:?}");
    let text = text(&got);
    assert!(text.starts_with("System (system)\n  clang (compiler): "), "{text}");
    assert!(
        text.contains(&format!("\n  lldb-dap (debugger): {}; version unknown", tools.dir.join("lldb-dap").display()))
    );
}

#[cfg(unix)]
#[tokio::test]
async fn every_probe_is_a_process_with_its_transcript() {
    let ws = TempWorkspace::new("");
    let tools = FakeTools::new(&ws, "bin");
    let cmake = tools.banner("cmake", RECORDED[0].2);
    let ninja = tools.script("ninja", "printf '1.11.1\\n'; printf 'a warning\\n' >&2");
    tools.script("lldb-dap", "exit 0");
    let processes = ProcessService::new(ws.roots());
    let client = connect(server(&ws, &processes, with_path(&ws, &tools)), TestClient::new()).await;
    call(&client, "toolset_get", json!({ "toolset_id": "system" })).await;

    let overview = processes.overview(StatusFilter::All);
    let mut launched: Vec<(String, Vec<String>, Status)> = overview
        .processes
        .iter()
        .map(|p| (p.summary.executable.clone(), p.summary.arguments.clone(), p.status))
        .collect();
    launched.sort_by(|a, b| a.0.cmp(&b.0));
    let shown = |path: &Path| path.to_string_lossy().into_owned();
    assert_eq!(
        launched,
        [
            (shown(&cmake), vec!["--version".to_owned()], Status::Exited(0)),
            (shown(&ninja), vec!["--version".to_owned()], Status::Exited(0)),
        ],
        "one probe per tool with a probe (lldb-dap has none)"
    );
    for info in &overview.processes {
        assert_eq!(info.summary.timeout.total, Some(Duration::from_secs(15)));
        assert_eq!(Path::new(&info.summary.cwd), ws.project);
        let (_, transcript) = processes.full(info.id).expect("transcript is retained");
        let recorded: Vec<(Stream, &str)> = transcript.iter().map(|e| (e.stream, e.text.as_str())).collect();
        if info.summary.executable == shown(&ninja) {
            assert_eq!(recorded.len(), 2, "{recorded:?}");
            assert!(recorded.contains(&(Stream::Stdout, "1.11.1\n")), "{recorded:?}");
            assert!(recorded.contains(&(Stream::Stderr, "a warning\n")), "{recorded:?}");
        } else {
            let stdout: String = recorded.iter().map(|(_, text)| *text).collect();
            assert_eq!(stdout, RECORDED[0].2);
        }
    }

    // The same runs through the MCP surface: processes_overview lists them, process_get reads them.
    let overview = call(&client, "processes_overview", json!({ "status": "all" })).await;
    let listed = structured(&overview)["processes"].as_array().expect("processes").clone();
    assert_eq!(listed.len(), 2);
    for process in &listed {
        assert_eq!(process["summary"]["arguments"], json!(["--version"]));
        assert_eq!(process["status"]["current_status"], json!(0));
        let details = call(&client, "process_get", json!({ "process_id": process["summary"]["process_id"] })).await;
        let transcript: String = structured(&details)["transcript"]
            .as_array()
            .expect("transcript")
            .iter()
            .map(|entry| entry["text"].as_str().expect("text"))
            .collect();
        let expected =
            if process["summary"]["executable"] == json!(shown(&ninja)) { "1.11.1" } else { "cmake version 3.25.1" };
        assert!(transcript.contains(expected), "{transcript:?}");
    }

    // Versions are never cached: a second call probes again.
    call(&client, "toolset_get", json!({ "toolset_id": "system" })).await;
    assert_eq!(processes.overview(StatusFilter::All).processes.len(), 4);
}

#[tokio::test]
async fn empty_system_toolset() {
    let ws = TempWorkspace::new("");
    let tools = FakeTools::new(&ws, "empty-bin");
    let processes = ProcessService::new(ws.roots());
    let client = connect(server(&ws, &processes, with_path(&ws, &tools)), TestClient::new()).await;
    let listed = call(&client, "toolsets_list", json!({})).await;
    assert_eq!(structured(&listed)["result"], json!([{ "id": "system", "name": "System", "tools": [] }]));
    assert_eq!(text(&listed), "Discovered toolsets: 1.\n\nSystem (system)\n  Tools: none");
    let got = call(&client, "toolset_get", json!({ "toolset_id": "system" })).await;
    assert_eq!(structured(&got), &json!({ "id": "system", "name": "System", "tools": [] }));
    assert_eq!(text(&got), "System (system)\n  Tools: none");
    assert!(processes.overview(StatusFilter::All).processes.is_empty());
}

#[cfg(unix)]
#[tokio::test]
async fn failing_or_unparsable_probes_keep_the_path_with_a_null_version() {
    let ws = TempWorkspace::new("");
    let tools = FakeTools::new(&ws, "bin");
    // A correct banner, but the exit status says the probe failed.
    let cmake = tools.script("cmake", "printf 'cmake version 3.25.1\\n'; exit 1");
    // Exit 0, but nothing that looks like a version.
    let ninja = tools.script("ninja", "printf 'ninja: unknown option --version\\n'");
    // A version printed only on stderr still counts.
    let gcc = tools.script("gcc", "printf 'gcc (GCC) 13.2.1 20230801\\n' >&2");
    let processes = ProcessService::new(ws.roots());
    let client = connect(server(&ws, &processes, with_path(&ws, &tools)), TestClient::new()).await;
    let got = call(&client, "toolset_get", json!({ "toolset_id": "system" })).await;
    let shown = |path: &Path| path.to_string_lossy().into_owned();
    assert_eq!(
        tools_of(structured(&got)),
        [
            ("cmake".to_owned(), shown(&cmake), Value::Null),
            ("gcc".to_owned(), shown(&gcc), json!("13.2.1")),
            ("ninja".to_owned(), shown(&ninja), Value::Null),
        ]
    );
    let statuses: Vec<Status> = processes.overview(StatusFilter::All).processes.iter().map(|p| p.status).collect();
    assert_eq!(statuses.iter().filter(|s| **s == Status::Exited(1)).count(), 1, "{statuses:?}");
}

#[cfg(unix)]
#[tokio::test]
async fn a_hanging_probe_is_bounded_by_its_timeout() {
    let ws = TempWorkspace::new("");
    let tools = FakeTools::new(&ws, "bin");
    tools.script("clangd", "printf 'Debian clangd version 14.0.6\\n'; sleep 30");
    tools.banner("git", "git version 2.47.3\n");
    let processes = ProcessService::new(ws.roots());
    let mut discovery = with_path(&ws, &tools);
    discovery.probe_timeout = Duration::from_millis(300);
    let client = connect(server(&ws, &processes, discovery), TestClient::new()).await;
    let begin = Instant::now();
    let got = call(&client, "toolset_get", json!({ "toolset_id": "system" })).await;
    let elapsed = begin.elapsed();
    assert!(elapsed < Duration::from_secs(5), "the probe was cut after its timeout, took {elapsed:?}");
    let reported = tools_of(structured(&got));
    assert_eq!(reported[0].0, "clangd");
    assert_eq!(reported[0].2, Value::Null, "an interrupted probe has no version");
    assert_eq!(reported[1].2, json!("2.47.3"), "other probes are not held up");
    let interrupted: Vec<_> = processes
        .overview(StatusFilter::All)
        .processes
        .into_iter()
        .filter(|p| p.status == Status::Interrupted)
        .map(|p| p.summary.executable.clone())
        .collect();
    assert_eq!(interrupted, [reported[0].1.clone()]);
}

#[cfg(unix)]
#[tokio::test]
async fn toolset_get_reports_progress_per_tool() {
    let ws = TempWorkspace::new("");
    let tools = FakeTools::new(&ws, "bin");
    tools.banner("cmake", "cmake version 3.25.1\n");
    tools.banner("ninja", "1.11.1\n");
    let processes = ProcessService::new(ws.roots());
    let handler = TestClient::new();
    let client = connect(server(&ws, &processes, with_path(&ws, &tools)), handler.clone()).await;
    call(&client, "toolset_get", json!({ "toolset_id": "system" })).await;
    let mut log = progress_log(&handler);
    for _ in 0..100 {
        if log.len() >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        log = progress_log(&handler);
    }
    assert_eq!(log[0], (0.0, Some(2.0), Some("Reading tool versions".to_owned())));
    let mut rest: Vec<_> = log[1..].iter().map(|(p, t, m)| (*p, *t, m.clone().unwrap())).collect();
    assert_eq!(rest.iter().map(|(p, t, _)| (*p, *t)).collect::<Vec<_>>(), [(1.0, Some(2.0)), (2.0, Some(2.0))]);
    rest.sort_by(|a, b| a.2.cmp(&b.2));
    assert_eq!(rest.iter().map(|(.., m)| m.as_str()).collect::<Vec<_>>(), ["Read cmake", "Read ninja"]);

    let handler = TestClient::new();
    let client = connect(server(&ws, &processes, with_path(&ws, &tools)), handler.clone()).await;
    call(&client, "toolsets_list", json!({})).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        progress_log(&handler),
        [(0.0, Some(1.0), Some("Reading toolsets".to_owned())), (1.0, Some(1.0), Some("Toolsets ready".to_owned()))]
    );
}

/// Validates `forgemcp <argv…>` as if started in `cwd` and returns the user toolsets.
#[cfg(unix)]
fn user_toolsets(ws: &TempWorkspace, cwd: &Path, argv: &[&str]) -> Vec<forgemcp::toolchain::UserToolsetSpec> {
    let mut full = vec!["forgemcp", "--workspace"];
    let project = ws.project.to_str().expect("UTF-8 test path");
    full.push(project);
    full.extend_from_slice(argv);
    let args = forgemcp::cli::Args::try_parse_from(full).expect("arguments parse");
    let config = config::build(args, cwd).expect("valid configuration");
    config.serve().expect("serve mode").toolsets().to_vec()
}

#[cfg(unix)]
#[tokio::test]
async fn user_toolsets_resolve_relative_paths_and_keep_their_ids_when_paths_change() {
    let ws = TempWorkspace::new("");
    let old = FakeTools::new(&ws, "llvm-20/bin");
    old.banner("clang++", "Debian clang version 14.0.6\n");
    old.banner("cmake", "cmake version 3.25.1\n");
    let new = FakeTools::new(&ws, "llvm-22/bin");
    new.banner("clang++", "clang version 22.1.0\n");
    let empty = FakeTools::new(&ws, "empty-bin");

    let mut ids = Vec::new();
    for (dir, version) in [("llvm-20", "14.0.6"), ("llvm-22", "22.1.0")] {
        let cxx = format!("clang++=../{dir}/bin/clang++");
        let users = user_toolsets(
            &ws,
            &ws.project,
            &["--toolset", "LLVM", &cxx, "--toolset", "Tools", "cmake=../llvm-20/bin/cmake"],
        );
        let mut discovery = with_path(&ws, &empty);
        discovery.user_toolsets = users;
        let processes = ProcessService::new(ws.roots());
        let client = connect(server(&ws, &processes, discovery), TestClient::new()).await;
        let listed = call(&client, "toolsets_list", json!({})).await;
        let result = structured(&listed)["result"].as_array().unwrap().clone();
        let names: Vec<(&str, &str)> =
            result.iter().map(|t| (t["id"].as_str().unwrap(), t["name"].as_str().unwrap())).collect();
        assert_eq!(names.len(), 3);
        assert_eq!(names[0], ("system", "System"), "sorted by id");
        let llvm = result.iter().find(|t| t["name"] == "LLVM").expect("LLVM toolset");
        let id = llvm["id"].as_str().unwrap().to_owned();
        assert!(id.starts_with("user-") && id.len() == "user-".len() + 64, "{id}");
        assert_eq!(llvm["tools"], json!(["clang++"]));
        let got = call(&client, "toolset_get", json!({ "toolset_id": id })).await;
        // The configured path, made absolute against the server's working directory; nothing is
        // resolved (links and `..` stay as the operator wrote them).
        let expected_path = ws.project.join(format!("../{dir}/bin/clang++"));
        assert_eq!(
            tools_of(structured(&got)),
            [("clang++".to_owned(), expected_path.to_string_lossy().into_owned(), json!(version))]
        );
        ids.push(id);
    }
    assert_eq!(ids[0], ids[1], "the id depends on the name only");

    // The ids are deterministic: the SHA-256 of the name.
    let users = user_toolsets(&ws, &ws.project, &["--toolset", "abc", "cmake=../llvm-20/bin/cmake"]);
    let mut discovery = with_path(&ws, &empty);
    discovery.user_toolsets = users;
    let toolchain = ToolchainService::new(ProcessService::new(ws.roots()), discovery);
    let found = toolchain.find("abc").await.expect("found by name");
    assert_eq!(found.id().as_str(), "user-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_eq!(toolchain.find(found.id().as_str()).await.expect("found by id").name(), "abc");
    assert_eq!(toolchain.find("System").await.expect("System by name").id().as_str(), "system");
    let missing = toolchain.find("nope").await.expect_err("no such toolset");
    assert_eq!(missing.to_string(), "no toolset has the id or name `nope`");
}

#[cfg(unix)]
#[tokio::test]
async fn find_refuses_a_value_that_names_two_toolsets() {
    let ws = TempWorkspace::new("");
    let tools = FakeTools::new(&ws, "bin");
    tools.banner("cmake", "cmake version 3.25.1\n");
    let x_id = forgemcp::toolchain::ToolsetId::user("x");
    // A user toolset named like another toolset's id makes that value ambiguous.
    let users = user_toolsets(
        &ws,
        &ws.project,
        &["--toolset", "x", "cmake=../bin/cmake", "--toolset", x_id.as_str(), "cmake=../bin/cmake"],
    );
    let mut discovery = ws.discovery();
    discovery.user_toolsets = users;
    let toolchain = ToolchainService::new(ProcessService::new(ws.roots()), discovery);
    let err = toolchain.find(x_id.as_str()).await.expect_err("ambiguous");
    assert!(err.to_string().contains("matches several toolsets"), "{err}");
}

#[tokio::test]
async fn unknown_toolsets_are_tool_errors_and_missing_resources() {
    let ws = TempWorkspace::new("");
    let client = ws.connect(TestClient::new()).await;
    let res = call(&client, "toolset_get", json!({ "toolset_id": "System" })).await;
    assert_eq!(tool_error(&res), "No toolset has the id `System`; toolsets_list names the discovered toolsets.");
    let missing = call(&client, "toolset_get", json!({})).await;
    assert!(tool_error(&missing).contains("toolset_id"), "{}", text(&missing));
    let (code, message) = resource_error(&client, "forgemcp://toolsets/visual-studio-0").await;
    assert_eq!(code, -32002, "{message}");
}

#[cfg(unix)]
#[tokio::test]
async fn resources_list_toolsets_and_show_fresh_versions() {
    let ws = TempWorkspace::new("");
    let tools = FakeTools::new(&ws, "bin");
    let cmake = tools.banner("cmake", "cmake version 3.25.1\n");
    tools.script("gdb", "exit 1");
    let users = user_toolsets(&ws, &ws.project, &["--toolset", "Mine | 1", "cmake=../bin/cmake"]);
    let mut discovery = with_path(&ws, &tools);
    discovery.user_toolsets = users;
    let user_id = forgemcp::toolchain::ToolsetId::user("Mine | 1");
    let processes = ProcessService::new(ws.roots());
    let client = connect(server(&ws, &processes, discovery), TestClient::new()).await;

    let list = resource_text(&client, "forgemcp://toolsets", "text/markdown").await;
    assert_eq!(
        list,
        format!(
            "# Toolsets\n\n| ID | Name | Tools |\n| --- | --- | --- |\n\
             | [system](forgemcp://toolsets/system) | System | cmake, gdb |\n\
             | [{user_id}](forgemcp://toolsets/{user_id}) | Mine \\| 1 | cmake |\n"
        )
    );
    assert!(processes.overview(StatusFilter::All).processes.is_empty(), "the list resource never probes");

    let detail = resource_text(&client, "forgemcp://toolsets/system", "text/markdown").await;
    assert_eq!(
        detail,
        format!(
            "# System\n\nID: system\n\n| Tool | Kind | Absolute path | Version |\n| --- | --- | --- | --- |\n\
             | cmake | build_system | {} | 3.25.1 |\n| gdb | debugger | {} | Unknown |\n",
            cmake.display(),
            tools.dir.join("gdb").display()
        )
    );
    assert_eq!(processes.overview(StatusFilter::All).processes.len(), 2, "the detail resource probes");

    const TEMPLATE: &str = "forgemcp://toolsets/{toolset_id}";
    assert_eq!(complete(&client, TEMPLATE, "toolset_id", "", &[]).await, ["system", user_id.as_str()]);
    assert_eq!(complete(&client, TEMPLATE, "toolset_id", "us", &[]).await, [user_id.as_str()]);
    assert!(complete(&client, TEMPLATE, "toolset_id", "visual", &[]).await.is_empty());
}

#[tokio::test]
async fn discovery_runs_once_and_requests_wait_for_it() {
    let ws = TempWorkspace::new("");
    let processes = ProcessService::new(ws.roots());
    let toolchain = std::sync::Arc::new(ToolchainService::new(processes, ws.discovery()));
    // Concurrent first requests share one discovery.
    let (a, b) = tokio::join!(toolchain.toolsets(), toolchain.toolsets());
    let (a, b) = (a.expect("discovered"), b.expect("discovered"));
    assert!(std::sync::Arc::ptr_eq(&a, &b), "one discovery per service");
    toolchain.start_discovery();
    assert!(std::sync::Arc::ptr_eq(&a, &toolchain.toolsets().await.unwrap()));
    let versions = toolchain.versions(&a[0], &Call::detached()).await;
    assert!(versions.is_empty());
}

/// The real binary: discovery from the server's own `PATH` after `initialize`, user toolsets with
/// paths relative to the server's working directory.
#[cfg(unix)]
#[tokio::test]
async fn the_binary_discovers_path_and_user_toolsets() {
    use rmcp::ServiceExt as _;
    use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};

    let ws = TempWorkspace::new("");
    let tools = FakeTools::new(&ws, "bin");
    tools.banner("ninja", "1.11.1\n");
    let mine = FakeTools::new(&ws, "mine");
    mine.banner("cmake", "cmake version 3.28.0-rc2\n");
    #[expect(clippy::disallowed_methods, reason = "the test starts the real server binary")]
    let command = tokio::process::Command::new(crate::support::binary()).configure(|cmd| {
        cmd.args(["--no-admin", "--toolset", "Mine", "cmake=../mine/cmake"])
            .current_dir(&ws.project)
            .env("PATH", tools.path_env());
    });
    let (transport, _stderr) =
        TokioChildProcess::builder(command).stderr(std::process::Stdio::null()).spawn().expect("spawn server");
    let client = TestClient::new().serve(transport).await.expect("initialize");
    let listed = call(&client, "toolsets_list", json!({})).await;
    let mine_id = forgemcp::toolchain::ToolsetId::user("Mine");
    assert_eq!(
        structured(&listed)["result"],
        json!([
            { "id": "system", "name": "System", "tools": ["ninja"] },
            { "id": mine_id.as_str(), "name": "Mine", "tools": ["cmake"] },
        ])
    );
    let got = call(&client, "toolset_get", json!({ "toolset_id": mine_id.as_str() })).await;
    assert_eq!(
        tools_of(structured(&got)),
        [("cmake".to_owned(), ws.project.join("../mine/cmake").to_string_lossy().into_owned(), json!("3.28.0-rc2"))]
    );
    client.cancel().await.expect("clean shutdown");
}

/// The first line of `tool --version` as the tool prints it.
#[expect(clippy::disallowed_methods, reason = "the test asks the real tool itself for comparison")]
fn banner_line(path: &str) -> String {
    let output = std::process::Command::new(path).arg("--version").output().expect("the tool runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn real_tools_report_the_versions_they_print() {
    if !heavy_tests("real_tools_report_the_versions_they_print") {
        return;
    }
    let ws = TempWorkspace::new("");
    let mut discovery = ws.discovery();
    discovery.env = DiscoveryEnv {
        path: std::env::var_os("PATH"),
        pathext: std::env::var_os("PATHEXT"),
        ..DiscoveryEnv::default()
    };
    let processes = ProcessService::new(ws.roots());
    let client = connect(server(&ws, &processes, discovery), TestClient::new()).await;
    let got = call(&client, "toolset_get", json!({ "toolset_id": "system" })).await;
    let reported = tools_of(structured(&got));
    for name in ["cmake", "ninja", "g++", "clang", "clangd", "clang-tidy", "clang-format"] {
        let Some((_, path, version)) = reported.iter().find(|(n, ..)| n == name) else {
            panic!(
                "{name} is not on PATH; install cmake, ninja-build, g++, clang, clangd, clang-tidy and clang-format (.ci/run does)"
            );
        };
        let version = version.as_str().unwrap_or_else(|| panic!("{name} at {path} has no version"));
        let line = banner_line(path);
        assert!(
            line.split_whitespace().any(|word| word == version),
            "{name}: reported {version}, the tool prints {line:?}"
        );
    }
}

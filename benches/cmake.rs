//! `cmake_build` wall time through the whole MCP surface against a raw `cmake --build` of the same
//! build tree in the same run: full rebuilds after a clean, and no-op builds of an up-to-date tree
//! (where ForgeMCP's own overhead is all there is to see).
//!
//! Run with `cargo bench --bench cmake`. It needs cmake, ninja and a C++ compiler on `PATH` (it says
//! so and exits when one is missing), configures the `Release` profile of a temporary copy of
//! `examples/cpp-acceptance-project` with `cmake_configure`, then alternates the tool and the raw
//! command so both see the same machine state. The goal is a tool time within 1.05× of the raw
//! command. This prints figures and asserts nothing about speed.
#![expect(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use forgemcp::call::Call;
use forgemcp::cmake::CmakeOptions;
use forgemcp::config::DiscoveryEnv;
use forgemcp::process::{CommandSpec, ProcessService};
use forgemcp::server::ForgeServer;
use forgemcp::toolchain::DiscoveryOptions;
use forgemcp::workspace::WorkspaceService;
use forgemcp::workspace::path::Roots;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

const FULL_RUNS: usize = 5;
const NOOP_RUNS: usize = 15;

fn main() -> ExitCode {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for tool in ["cmake", "ninja", "c++"] {
        if !std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()) {
            println!("cmake benchmark skipped: `{tool}` is not on PATH");
            return ExitCode::SUCCESS;
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build();
    let Ok(runtime) = runtime else {
        println!("cannot start a tokio runtime");
        return ExitCode::FAILURE;
    };
    match runtime.block_on(run()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            println!("cmake benchmark failed: {err}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let base = std::fs::canonicalize(dir.path()).map_err(|e| e.to_string())?;
    let project = base.join("proj");
    copy_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cpp-acceptance-project"), &project)?;
    std::fs::remove_file(project.join("CMakePresets.json")).map_err(|e| e.to_string())?;
    let roots = Roots::new(project.clone(), base.join(".proj.forgemcp"));
    let discovery = DiscoveryOptions {
        cwd: project.clone(),
        env: DiscoveryEnv { path: std::env::var_os("PATH"), ..DiscoveryEnv::default() },
        user_toolsets: Vec::new(),
        probe_timeout: forgemcp::toolchain::version::PROBE_TIMEOUT,
    };
    let processes = ProcessService::new(roots.clone());
    let services = forgemcp::app::assemble(
        Arc::new(WorkspaceService::new(roots.clone())),
        processes.clone(),
        discovery,
        CmakeOptions::default(),
    );
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let server = ForgeServer::new(services, Duration::ZERO);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_io).await.map_err(|e| e.to_string())?;
    let call = |tool: &str, args: Value| {
        let params =
            CallToolRequestParams::new(tool.to_owned()).with_arguments(args.as_object().cloned().unwrap_or_default());
        client.call_tool(params)
    };
    let succeeded = |result: &rmcp::model::CallToolResult| {
        result.is_error != Some(true)
            && result.structured_content.as_ref().is_some_and(|v| v["result"][0]["error"].is_null())
    };
    let configured = call("cmake_configure", json!({ "profiles": ["Release"] })).await.map_err(|e| e.to_string())?;
    if !succeeded(&configured) {
        return Err(format!("cmake_configure failed: {configured:?}"));
    }
    let build_dir = roots.storage().join("build/cmake-Release");
    let build = json!({ "profiles": ["Release"] });

    let tool_build = async || -> Result<Duration, String> {
        let started = Instant::now();
        let res = call("cmake_build", build.clone()).await.map_err(|e| e.to_string())?;
        let elapsed = started.elapsed();
        if !succeeded(&res) {
            return Err(format!("cmake_build failed: {res:?}"));
        }
        Ok(elapsed)
    };
    let raw_build = || raw_cmake(&project, &["--build", &build_dir.to_string_lossy(), "--config", "Release"]);
    let clean = || raw_cmake(&project, &["--build", &build_dir.to_string_lossy(), "--target", "clean"]).map(drop);

    // Warm the compiler, the file system cache and the server once.
    tool_build().await?;

    let mut full = (Vec::new(), Vec::new());
    for run in 0..FULL_RUNS {
        // Alternate which goes first so neither always sees a warmer machine.
        for tool_turn in if run % 2 == 0 { [true, false] } else { [false, true] } {
            clean()?;
            if tool_turn {
                full.0.push(tool_build().await?);
            } else {
                full.1.push(raw_build()?);
            }
        }
    }
    // The same command through the process service alone (no MCP, no CMake layer), to attribute
    // the fixed overhead of a no-op build.
    let build_args =
        ["--build".to_owned(), build_dir.to_string_lossy().into_owned(), "--config".into(), "Release".into()];
    let supervised_build = async || -> Result<Duration, String> {
        let spec = CommandSpec::new("cmake", &project).args(&build_args);
        let started = Instant::now();
        let completed = processes.run(spec, &Call::detached()).await.map_err(|e| e.to_string())?;
        let elapsed = started.elapsed();
        if !completed.succeeded() {
            return Err(format!("supervised cmake --build failed: {completed:?}"));
        }
        Ok(elapsed)
    };
    let mut noop = (Vec::new(), Vec::new());
    let mut supervised = Vec::new();
    for run in 0..NOOP_RUNS {
        for tool_turn in if run % 2 == 0 { [true, false] } else { [false, true] } {
            if tool_turn {
                noop.0.push(tool_build().await?);
            } else {
                noop.1.push(raw_build()?);
            }
        }
        supervised.push(supervised_build().await?);
    }
    println!("cmake_build of the Release profile of examples/cpp-acceptance-project (ninja), same tree, same run:");
    report("full rebuild after clean", full);
    report("no-op build (up to date)", noop);
    supervised.sort();
    println!(
        "    (the same command through the process service alone: median {:.1} ms)",
        supervised[supervised.len() / 2].as_secs_f64() * 1000.0
    );
    Ok(())
}

fn report(label: &str, (mut tool, mut raw): (Vec<Duration>, Vec<Duration>)) {
    tool.sort();
    raw.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let (tool_median, raw_median) = (tool[tool.len() / 2], raw[raw.len() / 2]);
    println!("  {label}, {} runs each:", tool.len());
    println!("    cmake_build (MCP tool):  median {:8.1} ms, min {:8.1} ms", ms(tool_median), ms(tool[0]));
    println!("    raw cmake --build:       median {:8.1} ms, min {:8.1} ms", ms(raw_median), ms(raw[0]));
    println!("    ratio of medians: {:.3} (goal ≤ 1.05)", tool_median.as_secs_f64() / raw_median.as_secs_f64());
}

/// Runs `cmake` directly (not through ForgeMCP: it is the reference) and returns its wall time.
#[expect(clippy::disallowed_methods, reason = "the benchmark runs the raw cmake itself as the reference")]
fn raw_cmake(cwd: &Path, args: &[&str]) -> Result<Duration, String> {
    let started = Instant::now();
    let output = std::process::Command::new("cmake").args(args).current_dir(cwd).output().map_err(|e| e.to_string())?;
    let elapsed = started.elapsed();
    if !output.status.success() {
        return Err(format!("raw cmake {args:?} failed: {}", String::from_utf8_lossy(&output.stderr)));
    }
    Ok(elapsed)
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| e.to_string())?;
    for entry in std::fs::read_dir(from).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        if entry.file_name() == "build" || entry.file_name() == ".cache" {
            continue;
        }
        let target = to.join(entry.file_name());
        if entry.file_type().map_err(|e| e.to_string())?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

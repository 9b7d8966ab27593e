//! What the real-tool benchmarks share: the tool check, the runtime around the async body, and a
//! server on a temporary copy of `examples/cpp-acceptance-project` (plain Debug/Release profiles)
//! with an in-process MCP client.
#![allow(dead_code, reason = "each benchmark uses the part it needs")]

pub mod raw_client;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use forgemcp::cmake::CmakeOptions;
use forgemcp::process::ProcessService;
use forgemcp::server::{ForgeServer, Services};
use forgemcp::toolchain::DiscoveryEnv;
use forgemcp::toolchain::DiscoveryOptions;
use forgemcp::workspace::WorkspaceService;
use forgemcp::workspace::path::Roots;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

/// Runs `body` on a two-thread runtime when every one of `tools` is on `PATH`; says why not otherwise.
#[expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]
pub fn run(name: &str, tools: &[&str], body: impl Future<Output = Result<(), String>> + Send + 'static) -> ExitCode {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for tool in tools {
        if !std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()) {
            println!("{name} benchmark skipped: `{tool}` is not on PATH");
            return ExitCode::SUCCESS;
        }
    }
    let runtime = forgemcp::app::runtime();
    let Ok(runtime) = runtime else {
        println!("cannot start a tokio runtime");
        return ExitCode::FAILURE;
    };
    // On the runtime's one worker, as the binary reads, answers and writes on one thread.
    match runtime.block_on(runtime.spawn(body)).unwrap_or_else(|join| Err(join.to_string())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            println!("{name} benchmark failed: {err}");
            ExitCode::FAILURE
        }
    }
}

/// A server on a fresh copy of the acceptance project (without its presets), toolsets discovered on
/// the real `PATH`, and an MCP client connected to it in process.
pub struct Served {
    _dir: tempfile::TempDir,
    pub project: PathBuf,
    pub roots: Roots,
    pub processes: ProcessService,
    pub services: Services,
    pub client: RunningService<RoleClient, ()>,
    server: ForgeServer,
}

pub async fn serve_acceptance_copy() -> Result<Served, String> {
    serve_project(|project| {
        copy_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cpp-acceptance-project"), project)?;
        std::fs::remove_file(project.join("CMakePresets.json")).map_err(|e| e.to_string())
    })
    .await
}

/// A server like [`serve_acceptance_copy`]'s on a project `setup` writes into the given directory.
pub async fn serve_project(setup: impl FnOnce(&Path) -> Result<(), String>) -> Result<Served, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let base = std::fs::canonicalize(dir.path()).map_err(|e| e.to_string())?;
    let project = base.join("proj");
    std::fs::create_dir_all(&project).map_err(|e| e.to_string())?;
    setup(&project)?;
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
    let server = ForgeServer::new(services.clone(), forgemcp::config::DEFAULT_PROGRESS_INTERVAL);
    let client = ().serve(session(&server)).await.map_err(|e| e.to_string())?;
    Ok(Served { _dir: dir, project, roots, processes, services, client, server })
}

/// A new session of `server` on its in-process transport; the client's end of it.
pub fn session(server: &ForgeServer) -> tokio::io::DuplexStream {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let server = server.clone();
    tokio::spawn(async move {
        if let Ok(running) = server.serve(forgemcp::server::duplex::transport(server_io)).await {
            let _ = running.waiting().await;
        }
    });
    client_io
}

impl Served {
    /// Another session of the same server, read as raw lines.
    pub async fn raw_session(&self) -> Result<raw_client::RawClient, String> {
        raw_client::RawClient::connect(session(&self.server)).await
    }

    /// Calls a tool; protocol failures are errors, tool errors are results.
    pub async fn call(&self, tool: &str, args: Value) -> Result<CallToolResult, String> {
        let params =
            CallToolRequestParams::new(tool.to_owned()).with_arguments(args.as_object().cloned().unwrap_or_default());
        self.client.call_tool(params).await.map_err(|e| e.to_string())
    }
}

/// Whether a CMake-style result list succeeded in its first item.
pub fn succeeded(result: &CallToolResult) -> bool {
    result.is_error != Some(true)
        && result.structured_content.as_ref().is_some_and(|v| v["result"][0]["error"].is_null())
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| e.to_string())?;
    for entry in std::fs::read_dir(from).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        let target = to.join(entry.file_name());
        // A developer may have built the checked-in tree in place; never copy its outputs.
        if entry.file_name() == "build" || entry.file_name() == ".cache" {
            continue;
        }
        if entry.file_type().map_err(|e| e.to_string())?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

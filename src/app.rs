//! The composition root: builds the services in dependency order, wires them together, serves MCP
//! on stdio, and shuts everything down in order.
//!
//! Architecture invariant: nothing slow happens before the stdio transport starts; `initialize` is
//! answered immediately.

use std::sync::Arc;

use anyhow::Context as _;
use rmcp::ServiceExt;

use crate::config::ServeConfig;
use crate::process::ProcessService;
use crate::server::{ForgeServer, Services};
use crate::toolchain::{DiscoveryOptions, ToolchainService};
use crate::workspace::WorkspaceService;

/// Builds every service for one workspace.
pub fn build_services(config: &ServeConfig) -> Services {
    let workspace = Arc::new(WorkspaceService::new(config.roots()));
    let processes = ProcessService::new(config.roots());
    let toolchain = Arc::new(ToolchainService::new(processes.clone(), DiscoveryOptions::from_config(config)));
    Services { workspace, processes, toolchain }
}

/// Serves MCP on stdin/stdout until the client closes stdin or the process is interrupted.
pub async fn serve_stdio(config: &ServeConfig) -> anyhow::Result<()> {
    let services = build_services(config);
    let server = ForgeServer::new(services.clone(), config.progress_interval());
    tracing::info!(workspace = %config.workspace_root().display(), "serving MCP on stdio");
    let (transport, guard) = crate::server::stdio::guard(tokio::io::stdin(), tokio::io::stdout());
    let running = server.serve(transport).await.context("MCP session did not start")?;
    // Only now: discovery launches processes and must never delay `initialize`.
    services.toolchain.start_discovery();
    tokio::select! {
        reason = running.waiting() => {
            tracing::info!(?reason, "MCP session ended");
            // Let the guard write every reply rmcp produced before the process exits.
            let _ = guard.await;
        }
        _ = tokio::signal::ctrl_c() => {
            tracing::info!("interrupted");
        }
    }
    // Stop every external process tree before the process exits.
    services.processes.shutdown().await;
    Ok(())
}

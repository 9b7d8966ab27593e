//! The `forgemcp` binary: parse the command line, log to stderr, and run the selected mode.

use std::process::ExitCode;

use forgemcp::config::{self, RunMode};
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let config = match config::load() {
        Ok(config) => config,
        Err(code) => return code,
    };
    // stdout belongs to MCP: every log line goes to stderr.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(EnvFilter::try_from_env("FORGEMCP_LOG").unwrap_or_else(|_| EnvFilter::new("warn")))
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            tracing::error!("cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = match config.mode() {
        RunMode::Serve(serve) => runtime.block_on(forgemcp::app::serve_stdio(serve)),
        RunMode::OpenAdmin | RunMode::Hub => {
            Err(anyhow::anyhow!("no admin Hub is available for `--admin-ipc {}`", config.admin().ipc_name()))
        }
    };
    // Blocking reads of stdin cannot be cancelled; do not wait for them at shutdown.
    runtime.shutdown_background();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!("{err:#}");
            ExitCode::FAILURE
        }
    }
}

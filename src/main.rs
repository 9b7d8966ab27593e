//! The `forgemcp` binary: parse the command line, log to stderr, and run the selected mode.

use std::process::ExitCode;

use forgemcp::config::{self, RunMode};
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    forgemcp::allocator::tune_malloc();
    // The search index keeps descriptors of indexed files open between searches.
    forgemcp::workspace::search::index::raise_open_file_limit();
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
    let runtime = match forgemcp::app::runtime() {
        Ok(runtime) => runtime,
        Err(err) => {
            tracing::error!("cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let admin = config.admin();
    let outcome = match config.mode() {
        RunMode::Serve(serve) => runtime.block_on(forgemcp::app::serve_stdio(serve, admin, config.admin_env())),
        RunMode::OpenAdmin => {
            let code = runtime.block_on(forgemcp::admin::open::open_admin(admin.ipc_name(), config.admin_env()));
            runtime.shutdown_background();
            return ExitCode::from(code);
        }
        RunMode::Hub => runtime.block_on(async {
            let endpoint = forgemcp::admin::ipc::Endpoint::resolve(admin.ipc_name(), config.admin_env())?;
            let options = forgemcp::admin::hub::HubOptions::new(endpoint, admin.port());
            forgemcp::admin::hub::run(options).await?;
            Ok(())
        }),
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

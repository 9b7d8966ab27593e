//! The `forgemcp` binary: parse the command line, log to stderr, and run the selected mode.

use std::process::ExitCode;

use forgemcp::config::{self, RunMode};
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    tune_malloc();
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

/// glibc's allocator, tuned before any thread starts (docs/performance.md has the figures): at most
/// two arenas instead of eight per core, so memory freed by one thread's large reply is not kept
/// in an arena no other thread uses; and a fixed 256 KiB mmap threshold, so every large buffer
/// (a reply's serialization, a tree's JSON) is mapped on its own and returned to the system when
/// freed, instead of glibc raising the threshold after the first such free and keeping the next
/// ones in the heap. `FORGEMCP_MALLOC_DEFAULTS=1` keeps glibc's defaults (for comparisons).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn tune_malloc() {
    if std::env::var_os("FORGEMCP_MALLOC_DEFAULTS").is_some_and(|v| v == "1") {
        return;
    }
    // SAFETY: mallopt only sets allocator parameters; it is called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_malloc() {}

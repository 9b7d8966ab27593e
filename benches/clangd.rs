//! clangd latency: `clangd_diagnostics` through the whole MCP surface on a warm session, against a
//! raw clangd asked the same thing (open the file, wait for its diagnostics, close it) over the bare
//! LSP client in the same run; and the resident memory of one session.
//!
//! Run with `cargo bench --bench clangd`. It needs cmake, ninja, a C++ compiler and clangd on `PATH`
//! (it says so and exits when one is missing), configures a temporary copy of
//! `examples/cpp-acceptance-project` (Debug only), warms both clangd processes, then times the runs.
//! The goal is a tool latency within 1.1× of the raw request. This prints figures and asserts nothing
//! about speed.
#![expect(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use forgemcp::clangd::convert::file_uri;
use forgemcp::lsp::{Client, Handler, ResponseError};
use forgemcp::process::{CommandSpec, ProcessService, Stdin};
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::oneshot;

const RUNS: usize = 20;
const FILE: &str = "analysis/clangd_anchors.cpp";

fn main() -> ExitCode {
    common::run("clangd", &["cmake", "ninja", "c++", "clangd"], run())
}

async fn run() -> Result<(), String> {
    let served = common::serve_acceptance_copy().await?;
    let configured = served.call("cmake_configure", json!({ "profiles": ["Debug"] })).await?;
    if !common::succeeded(&configured) {
        return Err(format!("cmake_configure failed: {configured:?}"));
    }
    // Starts the session and lets its index settle.
    let first = Instant::now();
    let warm = served.call("clangd_workspace_symbols", json!({ "query": "anchor", "timeout": 120 })).await?;
    if warm.is_error == Some(true) {
        return Err(format!("clangd_workspace_symbols failed: {warm:?}"));
    }
    println!("session start and index: {:.0} ms", first.elapsed().as_secs_f64() * 1000.0);

    // The raw clangd: same flags and database, the bare client, nothing else.
    let database = served.roots.storage().join("build/cmake-Debug");
    let raw = RawClangd::start(&served.processes, &served.project, &database).await?;
    let file = served.project.join(FILE);
    let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
    raw.diagnostics(&file, &text).await?;

    // Alternate the two so both see the same machine state.
    let diagnostics = json!({ "path": FILE, "configurations": ["Debug"] });
    let mut tool_times = Vec::with_capacity(RUNS);
    let mut raw_times = Vec::with_capacity(RUNS);
    for run in 0..=RUNS {
        let started = Instant::now();
        let res = served.call("clangd_diagnostics", diagnostics.clone()).await?;
        let tool = started.elapsed();
        if res.is_error == Some(true) {
            return Err(format!("clangd_diagnostics failed: {res:?}"));
        }
        let started = Instant::now();
        raw.diagnostics(&file, &text).await?;
        let raw_time = started.elapsed();
        // The first pair warms caches on both sides.
        if run > 0 {
            tool_times.push(tool);
            raw_times.push(raw_time);
        }
    }
    tool_times.sort();
    raw_times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let (tool_median, raw_median) = (tool_times[RUNS / 2], raw_times[RUNS / 2]);
    println!("clangd_diagnostics of project/{FILE} on a warm session, {RUNS} runs:");
    println!("  MCP tool:   median {:.1} ms, min {:.1} ms", ms(tool_median), ms(tool_times[0]));
    println!(
        "  raw clangd: median {:.1} ms, min {:.1} ms (open, diagnostics, close)",
        ms(raw_median),
        ms(raw_times[0])
    );
    println!("  ratio of medians: {:.2} (goal ≤ 1.10)", tool_median.as_secs_f64() / raw_median.as_secs_f64());
    for session in served.services.clangd.sessions() {
        match session.pid.and_then(resident_kib) {
            Some(kib) => println!(
                "resident memory of the {} session's clangd: {:.1} MiB",
                session.context_id,
                kib as f64 / 1024.0
            ),
            None => println!("resident memory of the {} session's clangd: unavailable", session.context_id),
        }
    }

    raw.client.shutdown(Duration::from_secs(2)).await.ok();
    served.services.clangd.shutdown().await;
    served.processes.shutdown().await;
    Ok(())
}

/// Resident set size of a process in KiB (Linux).
fn resident_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Routes `publishDiagnostics` to whoever waits for that version.
#[derive(Default)]
struct Waiters(Mutex<HashMap<i32, oneshot::Sender<()>>>);

impl Handler for Waiters {
    fn notification(&self, method: &str, params: Value) {
        if method == "textDocument/publishDiagnostics"
            && let Some(version) = params.get("version").and_then(Value::as_i64)
            && let Some(waiter) = self.0.lock().remove(&(version as i32))
        {
            let _ = waiter.send(());
        }
    }

    fn request(&self, method: &str, params: Value) -> Result<Value, ResponseError> {
        forgemcp::lsp::default_reply(method, &params)
    }
}

struct RawClangd {
    client: Client,
    waiters: Arc<Waiters>,
    version: Mutex<i32>,
    _process: forgemcp::process::LongLived,
}

impl RawClangd {
    async fn start(processes: &ProcessService, project: &Path, database: &Path) -> Result<RawClangd, String> {
        let spec = CommandSpec::new("clangd", project)
            .arg("-j=2")
            .arg(format!("--compile-commands-dir={}", database.display()))
            .stdin(Stdin::Piped);
        let mut process = processes.spawn_long_lived(spec).await.map_err(|e| e.to_string())?;
        let stdin = process.stdin.take().ok_or("no stdin")?;
        let stdout = process.take_stdout();
        let waiters = Arc::new(Waiters::default());
        let client = Client::start("raw clangd", stdout, stdin, waiters.clone());
        let capabilities = json!({ "textDocument": { "publishDiagnostics": { "versionSupport": true } } });
        let params = lsp_types::InitializeParams {
            process_id: Some(std::process::id()),
            capabilities: serde_json::from_value(capabilities).map_err(|e| e.to_string())?,
            ..lsp_types::InitializeParams::default()
        };
        client.initialize(params, Duration::from_secs(60)).await.map_err(|e| e.to_string())?;
        Ok(RawClangd { client, waiters, version: Mutex::new(0), _process: process })
    }

    /// Opens the file, waits for its diagnostics, closes it.
    async fn diagnostics(&self, file: &Path, text: &str) -> Result<(), String> {
        let version = {
            let mut version = self.version.lock();
            *version += 1;
            *version
        };
        let (tx, rx) = oneshot::channel();
        self.waiters.0.lock().insert(version, tx);
        let uri = file_uri(file);
        let open =
            json!({ "textDocument": { "uri": uri.as_str(), "languageId": "cpp", "version": version, "text": text } });
        self.client.notify_value("textDocument/didOpen", open).map_err(|e| e.to_string())?;
        tokio::time::timeout(Duration::from_secs(60), rx)
            .await
            .map_err(|_| "no diagnostics within 60 s")?
            .map_err(|e| e.to_string())?;
        let close = json!({ "textDocument": { "uri": uri.as_str() } });
        self.client.notify_value("textDocument/didClose", close).map_err(|e| e.to_string())
    }
}

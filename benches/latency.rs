//! Per-call latency and memory of the MCP surface, in process (an rmcp client over a duplex pipe,
//! the server on its own in-process transport, as the admin panel uses it).
//!
//! Run with `cargo bench --bench latency`. The tree is `FORGEMCP_BENCH_TREE` when set, else
//! `<target>/bench-tree` when `cargo bench --bench search` generated it, else a small generated
//! tree. It prints:
//! - ping and `workspace_file_info` latency (p50/p99) on an idle server;
//! - the peak of live heap bytes during one whole-tree `workspace_list` and one explicit-range read
//!   of a 3.95 MB file, counted by this binary's allocator: the server's side of the call (tool,
//!   envelope, serialization) and the reply's bytes as read, through a client that never parses
//!   them (an rmcp client would add its own `Value` of the reply); with `--no-admin`'s server and
//!   with the admin history installed, and what each keeps after the call;
//! - ping and file-info latency while 32 whole-tree searches are kept in flight (issue 16.6).
//!
//! Figures only; nothing is asserted about speed. It fails only when a call fails.
#![expect(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::raw_client::RawClient;
use forgemcp::admin::history::History;
use forgemcp::cmake::CmakeOptions;
use forgemcp::process::ProcessService;
use forgemcp::server::ForgeServer;
use forgemcp::toolchain::DiscoveryOptions;
use forgemcp::workspace::WorkspaceService;
use forgemcp::workspace::path::Roots;
use rmcp::model::{CallToolRequestParams, ClientRequest};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

/// Counts live heap bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

#[allow(unsafe_code)]
// SAFETY: every call is forwarded to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let res = unsafe { System.realloc(ptr, layout, new_size) };
        if !res.is_null() {
            if new_size >= layout.size() {
                let live = LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size - layout.size();
                PEAK.fetch_max(live, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        res
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const IDLE_CALLS: usize = 500;
const LOADED_CALLS: usize = 100;
const SEARCHES_IN_FLIGHT: usize = 32;
const LARGE_LINES: usize = 53_391;

type Client = RunningService<RoleClient, ()>;

fn main() -> ExitCode {
    common::run("latency", &[], run())
}

async fn run() -> Result<(), String> {
    let storage = tempfile::tempdir().map_err(|e| e.to_string())?;
    let tree = match std::env::var_os("FORGEMCP_BENCH_TREE") {
        Some(tree) => PathBuf::from(tree),
        None => bench_tree(storage.path())?,
    };
    let tree = std::fs::canonicalize(&tree).map_err(|e| e.to_string())?;
    // The large file lives in storage, so the tree itself is only read.
    let line = format!("{}\n", "/* tpcds_idx-like generated line of seventy-three bytes of text */ int x;");
    std::fs::create_dir_all(storage.path().join("store")).map_err(|e| e.to_string())?;
    std::fs::write(storage.path().join("store/large.hpp"), line.repeat(LARGE_LINES)).map_err(|e| e.to_string())?;
    let roots =
        Roots::new(tree.clone(), std::fs::canonicalize(storage.path().join("store")).map_err(|e| e.to_string())?);
    let client = serve(server(roots.clone())).await?;
    let info_path = first_file(&tree).ok_or("the tree has no file")?;
    println!("tree: {}; file info on {info_path}", tree.display());

    let (ping, info) = light_latencies(&client, &info_path, IDLE_CALLS).await?;
    println!(
        "idle: ping p50 {} p99 {}; file info p50 {} p99 {}",
        ms(&ping, 50),
        ms(&ping, 99),
        ms(&info, 50),
        ms(&info, 99)
    );

    for admin in [false, true] {
        let server = server(roots.clone());
        let label = if admin {
            // The history keeps each result's text and the reply is written from it.
            server.set_observer(Arc::new(History::default()));
            "with the admin history"
        } else {
            "--no-admin"
        };
        let mut raw = RawClient::connect(common::session(&server)).await?;
        let list = json!({ "path": "project/", "depth": null });
        let (bytes, peak, kept) = peak_of(&mut raw, "workspace_list", list).await?;
        println!(
            "{label}: whole-tree list: reply {:.2} MB, peak live heap during the call +{:.1} MiB (server side and the \
             reply's bytes), kept after it +{:.1} MiB",
            bytes as f64 / 1e6,
            mib(peak),
            mib(kept)
        );
        let read = json!({ "path": "storage/large.hpp", "start_line": 1, "end_line": LARGE_LINES });
        let (bytes, peak, kept) = peak_of(&mut raw, "workspace_read_file", read).await?;
        println!(
            "{label}: 3.95 MB read, one call: reply {:.2} MB, peak live heap during the call +{:.1} MiB (server side \
             and the reply's bytes), kept after it +{:.1} MiB",
            bytes as f64 / 1e6,
            mib(peak),
            mib(kept)
        );
    }

    let stop = Arc::new(AtomicBool::new(false));
    let mut load = Vec::new();
    for _ in 0..SEARCHES_IN_FLIGHT {
        let (peer, stop) = (client.peer().clone(), stop.clone());
        load.push(tokio::spawn(async move {
            let mut done = 0_usize;
            while !stop.load(Ordering::Relaxed) {
                let args = json!({ "query": "zq_no_such_text", "max_matches": 1 });
                if peer.call_tool(params("workspace_text_search", &args)).await.is_err() {
                    break;
                }
                done += 1;
            }
            done
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (ping, info) = light_latencies(&client, &info_path, LOADED_CALLS).await?;
    stop.store(true, Ordering::Relaxed);
    let mut searches = 0;
    for task in load {
        searches += task.await.map_err(|e| e.to_string())?;
    }
    println!(
        "{SEARCHES_IN_FLIGHT} whole-tree searches in flight ({searches} done): ping p50 {} p99 {}; file info p50 {} p99 {}",
        ms(&ping, 50),
        ms(&ping, 99),
        ms(&info, 50),
        ms(&info, 99)
    );
    Ok(())
}

/// A server on `roots`, with every service the binary assembles.
fn server(roots: Roots) -> ForgeServer {
    let processes = ProcessService::new(roots.clone());
    let discovery = DiscoveryOptions {
        cwd: roots.project().to_path_buf(),
        env: Default::default(),
        user_toolsets: Vec::new(),
        probe_timeout: forgemcp::toolchain::version::PROBE_TIMEOUT,
    };
    let services =
        forgemcp::app::assemble(Arc::new(WorkspaceService::new(roots)), processes, discovery, CmakeOptions::default());
    ForgeServer::new(services, forgemcp::config::DEFAULT_PROGRESS_INTERVAL)
}

/// An rmcp client of `server`.
async fn serve(server: ForgeServer) -> Result<Client, String> {
    ().serve(common::session(&server)).await.map_err(|e| e.to_string())
}

fn params(tool: &str, args: &Value) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_owned()).with_arguments(args.as_object().cloned().unwrap_or_default())
}

/// Alternating pings and file-info calls, each timed.
async fn light_latencies(client: &Client, path: &str, calls: usize) -> Result<(Vec<Duration>, Vec<Duration>), String> {
    let (mut ping, mut info) = (Vec::new(), Vec::new());
    let args = json!({ "path": path });
    for _ in 0..calls {
        let started = Instant::now();
        client.peer().send_request(ClientRequest::PingRequest(Default::default())).await.map_err(|e| e.to_string())?;
        ping.push(started.elapsed());
        let started = Instant::now();
        let result = client.call_tool(params("workspace_file_info", &args)).await.map_err(|e| e.to_string())?;
        info.push(started.elapsed());
        if result.is_error == Some(true) {
            return Err(format!("file info failed: {result:?}"));
        }
    }
    Ok((ping, info))
}

/// The reply size, the peak of live heap bytes above the level before the call, and the live
/// bytes above it once the reply is read and dropped (what the server keeps: the history's text).
async fn peak_of(client: &mut RawClient, tool: &str, args: Value) -> Result<(usize, usize, usize), String> {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let line = client.request("tools/call", json!({ "name": tool, "arguments": args })).await?;
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(before);
    let reply: Value = serde_json::from_slice(&line).map_err(|e| e.to_string())?;
    if reply["result"]["isError"] != json!(false) {
        return Err(format!("{tool} failed: {:.300}", reply.to_string()));
    }
    let size = line.len();
    drop((reply, line));
    // The server frees the typed result after the reply is written.
    tokio::time::sleep(Duration::from_millis(50)).await;
    Ok((size, peak, LIVE.load(Ordering::Relaxed).saturating_sub(before)))
}

fn ms(samples: &[Duration], percentile: usize) -> String {
    let mut sorted = samples.to_vec();
    sorted.sort();
    let idx = ((sorted.len() * percentile).div_ceil(100)).saturating_sub(1).min(sorted.len() - 1);
    format!("{:.3} ms", sorted[idx].as_secs_f64() * 1e3)
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn first_file(tree: &Path) -> Option<String> {
    let mut dir = tree.to_path_buf();
    let mut rel = String::from("project");
    loop {
        let mut entries: Vec<_> = std::fs::read_dir(&dir).ok()?.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        let file = entries.iter().find(|e| e.file_type().is_ok_and(|t| t.is_file()));
        if let Some(file) = file {
            return Some(format!("{rel}/{}", file.file_name().to_str()?));
        }
        let sub = entries
            .iter()
            .find(|e| e.file_type().is_ok_and(|t| t.is_dir()) && !e.file_name().to_string_lossy().starts_with('.'))?;
        rel = format!("{rel}/{}", sub.file_name().to_str()?);
        dir = sub.path();
    }
}

/// `<target>/bench-tree` (from the search benchmark) or, without it, 4,000 small generated files.
fn bench_tree(scratch: &Path) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    if let Some(target) = exe.ancestors().nth(3)
        && target.join("bench-tree").is_dir()
    {
        return Ok(target.join("bench-tree"));
    }
    let tree = scratch.join("tree");
    for i in 0..4_000 {
        let dir = tree.join(format!("m{}/s{}", i % 40, i % 7));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let text = format!("// file {i}\nint value_{i}(int a) {{ return a + {i}; }}\n").repeat(60);
        std::fs::write(dir.join(format!("f{i}.cpp")), text).map_err(|e| e.to_string())?;
    }
    Ok(tree)
}

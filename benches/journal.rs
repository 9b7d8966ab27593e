//! What the undo journal costs, in one run:
//!
//! 1. `workspace_edit_file` of one line in a 1 MB file through the MCP surface (in-process session),
//!    with the journal against a server without it, interleaved (goal: at most 1.10×);
//! 2. `workspace_history` (default limit) over 10,000 changes: the first call of a fresh server (it
//!    scans the log's frames and decodes only the newest changes), later calls, a call filtered by
//!    path (it decodes every change), and the journal's own part for a fresh journal (goal: at
//!    most 50 ms);
//! 3. the journal's bytes on disk after 1,000 edits of a 100 KB file, against the compressed edited
//!    bytes: LZ4 of the file once plus LZ4 of each edit's old and new text, which is what an ideal
//!    undo log keeps (goal: within 2×, not 1,000 copies).
//!
//! Run with `cargo bench --bench journal`. It prints figures and asserts nothing about speed.
#![expect(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]

mod common;

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use forgemcp::call::Call;
use forgemcp::server::ForgeServer;
use forgemcp::workspace::WorkspaceService;
use forgemcp::workspace::path::{QualifiedPath, Roots};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

const EDIT_RUNS: usize = 41;
const HISTORY_CHANGES: u64 = 10_000;
const SIZE_EDITS: usize = 1_000;

fn main() -> ExitCode {
    common::run("journal", &[], run())
}

struct Server {
    _dir: tempfile::TempDir,
    project: std::path::PathBuf,
    roots: Roots,
    server: ForgeServer,
    client: RunningService<RoleClient, ()>,
}

async fn server(journal: Option<u64>) -> Result<Server, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let base = std::fs::canonicalize(dir.path()).map_err(|e| e.to_string())?;
    let project = base.join("proj");
    std::fs::create_dir(&project).map_err(|e| e.to_string())?;
    let roots = Roots::new(project.clone(), base.join(".proj.forgemcp"));
    let server = serve(&roots, journal);
    let client = ().serve(common::session(&server)).await.map_err(|e| e.to_string())?;
    Ok(Server { _dir: dir, project, roots, server, client })
}

fn serve(roots: &Roots, journal: Option<u64>) -> ForgeServer {
    let workspace = Arc::new(WorkspaceService::with_journal(roots.clone(), journal));
    let processes = forgemcp::process::ProcessService::new(roots.clone());
    let discovery = forgemcp::toolchain::DiscoveryOptions {
        cwd: roots.project().to_path_buf(),
        env: forgemcp::toolchain::DiscoveryEnv::default(),
        user_toolsets: Vec::new(),
        probe_timeout: forgemcp::toolchain::version::PROBE_TIMEOUT,
    };
    let services = forgemcp::app::assemble(workspace, processes, discovery, forgemcp::cmake::CmakeOptions::default());
    ForgeServer::new(services, forgemcp::config::DEFAULT_PROGRESS_INTERVAL)
}

async fn call(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> Result<Duration, String> {
    let params =
        CallToolRequestParams::new(tool.to_owned()).with_arguments(args.as_object().cloned().unwrap_or_default());
    let start = Instant::now();
    let result = client.call_tool(params).await.map_err(|e| e.to_string())?;
    let took = start.elapsed();
    if result.is_error == Some(true) {
        return Err(format!("{tool} failed: {:?}", result.content));
    }
    Ok(took)
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// A source-like text of about `bytes` bytes, numbered lines.
fn source(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 100);
    let mut i = 0;
    while text.len() < bytes {
        text.push_str(&format!("    int value_{i} = compute({i}, \"{}\"); // line {i}\n", i * 7919 % 1000));
        i += 1;
    }
    text
}

async fn run() -> Result<(), String> {
    edit_with_and_without().await?;
    history_over_many_changes().await?;
    size_after_many_edits()
}

async fn edit_with_and_without() -> Result<(), String> {
    let with = server(Some(forgemcp::workspace::journal::DEFAULT_LIMIT)).await?;
    let without = server(None).await?;
    let text = source(1 << 20);
    for s in [&with, &without] {
        std::fs::write(s.project.join("big.cpp"), &text).map_err(|e| e.to_string())?;
    }
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for run in 0..=EDIT_RUNS {
        // Every edit makes a new content (the journal stores a new delta each time).
        let old = if run == 0 { "value_5000 =".to_owned() } else { format!("renamed_{}_5000 =", run - 1) };
        let new = format!("renamed_{run}_5000 =");
        let args = json!({"path": "project/big.cpp", "old_text": old, "new_text": new});
        let a = call(&with.client, "workspace_edit_file", args.clone()).await?;
        let b = call(&without.client, "workspace_edit_file", args).await?;
        if run > 0 {
            on.push(a);
            off.push(b);
        }
    }
    let (on, off) = (median(on), median(off));
    println!(
        "workspace_edit_file, one line of a {} byte file (median of {EDIT_RUNS}): with the journal {}, without {}: {:.2}x",
        text.len(),
        ms(on),
        ms(off),
        on.as_secs_f64() / off.as_secs_f64()
    );
    Ok(())
}

async fn history_over_many_changes() -> Result<(), String> {
    use forgemcp::workspace::journal::{DEFAULT_LIMIT, DIR_NAME, Journal, Snapshot, Touched};
    let s = server(Some(DEFAULT_LIMIT)).await?;
    let dir = s.roots.storage().join(DIR_NAME);
    let start = Instant::now();
    {
        // The changes are recorded straight into the journal (the same records a write makes;
        // going through the files too would only add their flushes to the set-up).
        let journal = Journal::new(dir.clone(), DEFAULT_LIMIT);
        for i in 0..HISTORY_CHANGES {
            let path = QualifiedPath::parse(&format!("project/f{}.txt", i % 100)).map_err(|e| e.to_string())?;
            let before = format!("change {}\n", i.saturating_sub(100));
            let after = format!("change {i}\n");
            let touched = Touched {
                path,
                moved: None,
                before: if i < 100 {
                    Snapshot::Absent
                } else {
                    Snapshot::File { bytes: before.as_bytes().into(), mode: 0o644 }
                },
                after: Snapshot::File { bytes: after.as_bytes().into(), mode: 0o644 },
            };
            journal.record(None, None, &[touched]).map_err(|e| e.to_string())?;
        }
    }
    println!("recorded {HISTORY_CHANGES} changes in {:.1} s", start.elapsed().as_secs_f64());
    let log_bytes = bytes_on_disk(&dir).0;
    // The journal alone: a fresh `Journal` (nothing read yet) answering the default history.
    let mut direct = Vec::new();
    for _ in 0..5 {
        let journal = Journal::new(dir.clone(), DEFAULT_LIMIT);
        let start = Instant::now();
        let history = journal.history(None, 20).map_err(|e| e.to_string())?;
        direct.push(start.elapsed());
        if history.changes.len() != 20 || history.matching != HISTORY_CHANGES {
            return Err(format!("history: {} changes of {}", history.changes.len(), history.matching));
        }
    }
    let fresh = serve(&s.roots, Some(DEFAULT_LIMIT));
    let client = ().serve(common::session(&fresh)).await.map_err(|e| e.to_string())?;
    let first = call(&client, "workspace_history", json!({})).await?;
    let mut later = Vec::new();
    for _ in 0..20 {
        later.push(call(&client, "workspace_history", json!({})).await?);
    }
    let filtered = call(&client, "workspace_history", json!({"path": "project/f7.txt"})).await?;
    println!(
        "workspace_history over {HISTORY_CHANGES} changes ({log_bytes} byte log): first call of a fresh server {}, later calls {} (median of 20), filtered by path {}; the journal's own history of a fresh journal {} (median of 5)",
        ms(first),
        ms(median(later)),
        ms(filtered),
        ms(median(direct))
    );
    drop(s.server);
    Ok(())
}

fn size_after_many_edits() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let base = std::fs::canonicalize(dir.path()).map_err(|e| e.to_string())?;
    let project = base.join("proj");
    std::fs::create_dir(&project).map_err(|e| e.to_string())?;
    let roots = Roots::new(project.clone(), base.join(".proj.forgemcp"));
    let workspace = WorkspaceService::new(roots.clone());
    let text = source(100 * 1024);
    std::fs::write(project.join("f.cpp"), &text).map_err(|e| e.to_string())?;
    let path = QualifiedPath::parse("project/f.cpp").map_err(|e| e.to_string())?;
    let call_ctx = Call::detached();
    let mut ideal = lz4_flex::block::compress_prepend_size(text.as_bytes()).len();
    let mut edited = 0usize;
    let lines = text.lines().count();
    let start = Instant::now();
    for i in 0..SIZE_EDITS {
        // A few lines of a function body, as an agent edits: replace line n with three new lines.
        let n = (i * 7919) % lines;
        let current = std::fs::read_to_string(project.join("f.cpp")).map_err(|e| e.to_string())?;
        let old = current.lines().nth(n).ok_or("a line")?.to_owned() + "\n";
        let new = format!("    // edit {i}\n{old}    check(value_{n}, {i});\n");
        if current.matches(&old).count() != 1 {
            continue;
        }
        workspace.edit_file(&path, &old, &new, false, &call_ctx).map_err(|e| e.to_string())?;
        edited += old.len() + new.len();
        ideal += lz4_flex::block::compress_prepend_size(format!("{old}{new}").as_bytes()).len();
    }
    let took = start.elapsed();
    let journal = bytes_on_disk(&roots.storage().join(".journal"));
    println!(
        "after {SIZE_EDITS} edits of a {} byte file ({:.1} s): journal {} bytes ({} allocated); compressed edited bytes {} ({} raw): {:.2}x; {} whole copies would be {} bytes",
        text.len(),
        took.as_secs_f64(),
        journal.0,
        journal.1,
        ideal,
        edited,
        journal.0 as f64 / ideal as f64,
        SIZE_EDITS,
        SIZE_EDITS * lz4_flex::block::compress_prepend_size(text.as_bytes()).len()
    );
    Ok(())
}

/// The apparent and the allocated size of the files in `dir`.
fn bytes_on_disk(dir: &Path) -> (u64, u64) {
    let mut res = (0, 0);
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if let Ok(meta) = entry.metadata() {
            res.0 += meta.len();
            #[cfg(unix)]
            {
                res.1 += std::os::unix::fs::MetadataExt::blocks(&meta) * 512;
            }
        }
    }
    res
}

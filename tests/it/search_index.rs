//! The search index through `workspace_text_search`: every answer of a server with the index equals
//! the answer of a server without it (counts, lines, per-file and per-directory counts, the skipped
//! files), while the index is building, when it is ready, after writes through ForgeMCP, after
//! changes by another process (create, modify, rename, delete, 500 files replaced at once, random
//! edits), after lost notifications (a small test limit makes the overflow certain) and after a
//! restart; and `index` says which it was.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use forgemcp::server::ForgeServer;
use forgemcp::workspace::WorkspaceService;
use forgemcp::workspace::search::index::IndexOptions;
use rmcp::RoleClient;
use rmcp::service::RunningService;
use serde_json::{Value, json};

use crate::support::{TempWorkspace, TestClient, call, connect, resource_text, structured};

type Client = RunningService<RoleClient, TestClient>;

/// Two servers on one workspace: one with the index, one that always scans.
struct Pair {
    indexed: Client,
    scan: Client,
}

async fn pair(ws: &TempWorkspace, options: IndexOptions) -> Pair {
    let workspace = Arc::new(WorkspaceService::new(ws.roots()).with_search_index(options));
    let indexed = connect(ForgeServer::new(ws.services_with(workspace), Duration::ZERO), TestClient::new()).await;
    let scan = ws.connect(TestClient::new()).await;
    Pair { indexed, scan }
}

/// The answer without its resource links (their ids differ per server), with the skipped files'
/// list read from its link, and the `index` field apart.
async fn answer(client: &Client, args: &Value) -> (Value, String) {
    let res = call(client, "workspace_text_search", args.clone()).await;
    assert_ne!(res.is_error, Some(true), "{res:?}");
    let mut value = structured(&res).clone();
    let index = value.as_object_mut().unwrap().remove("index").map(|v| v.as_str().unwrap().to_owned()).unwrap();
    let links = value.as_object_mut().unwrap().remove("resources").unwrap();
    if let Some(uri) = links.get("skipped_files").and_then(|l| l["uri"].as_str()) {
        let list = resource_text(client, uri, "application/json").await;
        value["skipped_files"] = serde_json::from_str(&list).unwrap();
    }
    (value, index)
}

/// Asks both servers; the answers must be equal. Returns the indexed server's `index`.
async fn same(pair: &Pair, args: Value) -> String {
    let (indexed, index) = answer(&pair.indexed, &args).await;
    let (scanned, _) = answer(&pair.scan, &args).await;
    assert_eq!(indexed, scanned, "{args} (index: {index})");
    index
}

/// The queries every state is checked with.
fn queries() -> Vec<Value> {
    vec![
        json!({ "query": "needle" }),
        json!({ "query": "NEEDLE", "case_sensitive": false }),
        json!({ "query": r"ne+dle_\d+", "regex": true }),
        json!({ "query": r"^\s*$", "regex": true, "max_matches": 5 }),
        json!({ "query": "needle", "path": "project/src", "extensions": ["cpp"] }),
        json!({ "query": "needle", "path": "project/src" }),
        json!({ "query": "needle_1", "path": "project/src/a" }),
        json!({ "query": "needle", "exclude": ["gen*", "src/b/**"], "files_only": true }),
        json!({ "query": "haystack", "offset": 3, "max_matches": 4 }),
        json!({ "query": "kkk", "case_sensitive": false }),
        json!({ "query": "zz", "regex": false }),
    ]
}

async fn all_same(pair: &Pair) -> Vec<String> {
    let mut states = Vec::new();
    for q in queries() {
        states.push(same(pair, q).await);
    }
    states
}

/// Polls until the indexed server answers with `ready` (each answer still compared).
async fn until_ready(pair: &Pair) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let state = same(pair, json!({ "query": "needle" })).await;
        if state == "ready" {
            return;
        }
        assert!(Instant::now() < deadline, "the index did not become ready: {state}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A workspace of `n` files and its two servers, the index ready.
async fn ready(n: usize) -> (TempWorkspace, Pair) {
    let ws = TempWorkspace::new("");
    tree(&ws, n);
    let pair = pair(&ws, IndexOptions::default()).await;
    until_ready(&pair).await;
    (ws, pair)
}

/// The directories holding a `copy.cpp`, all with one content.
const COPIES: [&str; 5] = ["docs", "gen", "lib", "src/a", "vendor/v1"];

fn tree(ws: &TempWorkspace, n: usize) {
    for i in 0..n {
        let dir = ["src/a", "src/b", "lib", "gen", "docs/deep/er"][i % 5];
        let body = match i % 7 {
            0 => format!("int needle_{i} = {i};\n\nhaystack\n"),
            1 => format!("// NeEdLe {i}\r\nhaystack\r\n"),
            2 => format!("\u{feff}needle at the start {i}\rlone cr\r"),
            3 => format!("\u{212A}KK kelvin {i}\n   \n"),
            _ => format!("nothing here {i}\nhaystack haystack\n"),
        };
        let ext = ["cpp", "hpp", "txt", "CPP", ""][i % 5];
        let name = if ext.is_empty() { format!("{dir}/file{i}") } else { format!("{dir}/file{i}.{ext}") };
        ws.write(&name, body);
    }
    ws.write("bin/blob.o", b"needle\0binary");
    ws.write("bin/latin1.txt", b"needle caf\xe9");
    ws.write(".hidden/x.cpp", "needle in a dot dir");
    ws.write(".dotfile", "needle in a dot file");
    // Directories that sort right before and after `src/`, around a search of `project/src`; a
    // listing that took them in would read `src/a/file0.cpp` again under their names.
    ws.write("src.a/file0.cpp", "needle beside src\n");
    ws.write("src0a/file0.cpp", "needle after src\n");
    // Files with one content (vendored copies): the index reads one of them for all that are
    // unchanged, and the copies sort before, between and after other matching files.
    for dir in COPIES {
        ws.write(&format!("{dir}/copy.cpp"), "needle_7 copied\n\nhaystack\nNEEDLE copied\n");
    }
    ws.write("src/b/copy-crlf.cpp", "needle_7 copied\r\n\r\nhaystack\r\n");
    ws.write("lib/copy-crlf.cpp", "needle_7 copied\r\n\r\nhaystack\r\n");
    // Older than the index's racy-timestamp window, so the index file (not only what is re-read
    // after it) answers.
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    for entry in walk(&ws.project) {
        std::fs::File::options().append(true).open(entry).unwrap().set_modified(old).unwrap();
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        if entry.file_type().unwrap().is_dir() {
            files.extend(walk(&entry.path()));
        } else {
            files.push(entry.path());
        }
    }
    files
}

fn hold() -> (IndexOptions, Arc<AtomicBool>) {
    let hold = Arc::new(AtomicBool::new(true));
    (IndexOptions { hold_build: Some(hold.clone()), ..IndexOptions::default() }, hold)
}

#[tokio::test]
async fn answers_equal_a_scan_while_building_and_when_ready() {
    let ws = TempWorkspace::new("");
    tree(&ws, 200);
    let (options, gate) = hold();
    let pair = pair(&ws, options).await;
    assert!(all_same(&pair).await.iter().all(|s| s == "building"));
    gate.store(false, std::sync::atomic::Ordering::SeqCst);
    until_ready(&pair).await;
    assert!(all_same(&pair).await.iter().all(|s| s == "ready"));
    // The index is used as soon as it is written and saved under its name after its flush.
    let saved = ws.storage.join(".index/project.idx");
    for _ in 0..500 {
        if saved.is_file() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(saved.is_file());
}

#[tokio::test]
async fn writes_through_forgemcp_are_searched_at_once() {
    let (_ws, pair) = ready(50).await;
    let write = json!({ "path": "project/src/a/new.cpp", "text": "int needle_777;\n" });
    let res = call(&pair.indexed, "workspace_write_file", write).await;
    assert_ne!(res.is_error, Some(true), "{res:?}");
    let edit = json!({ "path": "project/lib/file2.txt", "old_text": "needle at", "new_text": "pin at" });
    let res = call(&pair.indexed, "workspace_edit_file", edit).await;
    assert_ne!(res.is_error, Some(true), "{res:?}");
    let states = all_same(&pair).await;
    assert!(states.iter().all(|s| s == "ready"), "{states:?}");
    let (value, _) = answer(&pair.indexed, &json!({ "query": "needle_777" })).await;
    assert_eq!(value["matches_count"], 1);
}

#[tokio::test]
async fn outside_changes_are_seen_before_the_next_answer() {
    let ws = TempWorkspace::new("");
    tree(&ws, 50);
    // A slow notification thread: only the barrier each search awaits keeps the answers current.
    let options = IndexOptions { notification_delay: Duration::from_millis(30), ..IndexOptions::default() };
    let pair = pair(&ws, options).await;
    until_ready(&pair).await;
    let steps: Vec<Box<dyn Fn()>> = vec![
        Box::new(|| ws.write("src/a/created.cpp", "needle_1001 created\n")),
        Box::new(|| ws.write("src/a/file0.cpp", "modified, no more\n")),
        Box::new(|| std::fs::rename(ws.path("src/a/created.cpp"), ws.path("lib/renamed.cpp")).unwrap()),
        Box::new(|| std::fs::remove_file(ws.path("lib/renamed.cpp")).unwrap()),
        Box::new(|| std::fs::rename(ws.path("src/b"), ws.path("moved")).unwrap()),
        Box::new(|| ws.write("moved/inner/deeper.cpp", "needle_1002 in a new directory\n")),
        // The first listed of the files with one content changes, then another is renamed: the
        // others are still answered alike.
        Box::new(|| ws.write("docs/copy.cpp", "needle_1003 no longer a copy\n")),
        Box::new(|| std::fs::rename(ws.path("lib/copy.cpp"), ws.path("lib/copy-renamed.cpp")).unwrap()),
        Box::new(|| std::fs::remove_dir_all(ws.path("docs")).unwrap()),
    ];
    for step in steps {
        step();
        let states = all_same(&pair).await;
        assert!(states.iter().all(|s| s == "ready"), "{states:?}");
    }
}

/// Descriptors this process holds open on files below `dir`: (all of them, those deleted).
#[cfg(target_os = "linux")]
fn descriptors_below(dir: &std::path::Path) -> (usize, usize) {
    let (mut open, mut deleted) = (0, 0);
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let Ok(target) = std::fs::read_link(entry.path()) else { continue };
        if target.starts_with(dir) {
            open += 1;
            deleted += usize::from(target.to_string_lossy().ends_with(" (deleted)"));
        }
    }
    (open, deleted)
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn kept_descriptors_are_closed_when_another_process_deletes_or_replaces_their_files() {
    let (ws, pair) = ready(50).await;
    all_same(&pair).await;
    let (open, _) = descriptors_below(&ws.project);
    assert!(open > 0, "the index keeps the descriptors of the files its searches read");
    std::fs::remove_dir_all(ws.path("src/b")).unwrap();
    std::fs::remove_file(ws.path("src/a/file0.cpp")).unwrap();
    std::fs::write(ws.path("gen/tmp"), "needle_3 replaced\n").unwrap();
    std::fs::rename(ws.path("gen/tmp"), ws.path("gen/file3.CPP")).unwrap();
    let states = all_same(&pair).await;
    assert!(states.iter().all(|s| s == "ready"), "{states:?}");
    // Re-indexing the changed paths (in the background, after the answers) closes their descriptors.
    let deadline = Instant::now() + Duration::from_secs(10);
    while descriptors_below(&ws.project).1 > 0 {
        assert!(Instant::now() < deadline, "descriptors of deleted files are still open");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let states = all_same(&pair).await;
    assert!(states.iter().all(|s| s == "ready"), "{states:?}");
}

#[tokio::test]
async fn five_hundred_files_replaced_at_once() {
    let (ws, pair) = ready(500).await;
    // As a checkout does: each file written beside and renamed over the old one.
    for i in 0..500 {
        let dir = ["src/a", "src/b", "lib", "gen", "docs/deep/er"][i % 5];
        let ext = ["cpp", "hpp", "txt", "CPP", ""][i % 5];
        let name = if ext.is_empty() { format!("{dir}/file{i}") } else { format!("{dir}/file{i}.{ext}") };
        let tmp = ws.path(&format!("{dir}/tmp{i}"));
        std::fs::write(&tmp, format!("needle_{} replaced\n", i * 3)).unwrap();
        std::fs::rename(tmp, ws.path(&name)).unwrap();
    }
    let states = all_same(&pair).await;
    assert!(states.iter().all(|s| s == "ready"), "{states:?}");
}

#[tokio::test]
async fn lost_notifications_scan_until_a_recheck() {
    let ws = TempWorkspace::new("");
    tree(&ws, 100);
    let options = IndexOptions { event_limit: 8, eager_recheck: false, ..IndexOptions::default() };
    let pair = pair(&ws, options).await;
    until_ready(&pair).await;
    for i in 0..50 {
        ws.write(&format!("src/a/burst{i}.cpp"), format!("needle_{i} burst\n"));
    }
    let first = same(&pair, json!({ "query": "needle" })).await;
    assert_eq!(first, "scanning (more than 8 file notifications between two searches)");
    until_ready(&pair).await;
    let states = all_same(&pair).await;
    assert!(states.iter().all(|s| s == "ready"), "{states:?}");
}

#[tokio::test]
async fn a_restart_reuses_the_index_file() {
    let ws = TempWorkspace::new("");
    tree(&ws, 100);
    {
        let pair = pair(&ws, IndexOptions::default()).await;
        until_ready(&pair).await;
    }
    // Changed while no server ran.
    ws.write("src/a/file0.cpp", "changed while stopped needle_5000\n");
    std::fs::remove_file(ws.path("lib/file2.txt")).unwrap();
    ws.write("lib/added.txt", "needle_5001\n");
    let pair = pair(&ws, IndexOptions::default()).await;
    until_ready(&pair).await;
    let states = all_same(&pair).await;
    assert!(states.iter().all(|s| s == "ready"), "{states:?}");
}

#[tokio::test]
async fn indexed_files_larger_than_a_whole_read_are_streamed_with_the_same_answers() {
    let ws = TempWorkspace::new("");
    tree(&ws, 100);
    // Many lines, matches far apart and a lone CR late in the file, well past the whole-read size.
    let long: String =
        (0..400).map(|i| format!("line {i} {}\n", if i % 97 == 0 { "needle_9" } else { "hay" })).collect();
    ws.write("src/a/long.cpp", format!("{long}tail\rneedle after a lone cr\r\n"));
    // A line longer than a stream's buffer may grow (64 KiB and the whole-read size): read whole.
    ws.write("gen/one-line.json", format!("[{}\"needle_9\"]\nneedle_9 on line 2\n", "\"hay\", ".repeat(12_000)));
    // Files of 20 to 50 bytes: some are read whole, the others streamed, copies among them.
    let options = IndexOptions { read_whole_up_to: 32, ..IndexOptions::default() };
    let pair = pair(&ws, options).await;
    until_ready(&pair).await;
    let states = all_same(&pair).await;
    assert!(states.iter().all(|s| s == "ready"), "{states:?}");
    // Changed files are read as a scan reads them, and the stream of the others is read again.
    ws.write("src/a/long.cpp", format!("needle_9 first\n{long}"));
    ws.write("lib/copy.cpp", "needle_7 copied, then changed\n");
    let states = all_same(&pair).await;
    assert!(states.iter().all(|s| s == "ready"), "{states:?}");
}

/// A small deterministic generator (xorshift), so a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[tokio::test]
async fn random_outside_edits_interleaved_with_queries() {
    let ws = TempWorkspace::new("");
    tree(&ws, 300);
    let pair = pair(&ws, IndexOptions::default()).await;
    until_ready(&pair).await;
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let words = ["needle", "NEEDLE", "haystack", "kelvin", "\u{212A}", "needle_1", "café", "\0"];
    let queries = queries();
    for step in 0..120 {
        let n_edits = 1 + rng.below(4);
        for _ in 0..n_edits {
            let dir = ["src/a", "src/b", "lib", "gen", "docs/deep/er", "fresh/x"][rng.below(6)];
            let file = ws.path(&format!("{dir}/r{}.cpp", rng.below(40)));
            match rng.below(5) {
                0 | 1 => {
                    let body: Vec<&str> = (0..1 + rng.below(6)).map(|_| words[rng.below(words.len())]).collect();
                    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                    std::fs::write(&file, body.join(if rng.below(2) == 0 { "\n" } else { " " })).unwrap();
                }
                2 => {
                    let _ = std::fs::remove_file(&file);
                }
                3 => {
                    let to = ws.path(&format!("lib/r{}.cpp", rng.below(40)));
                    let _ = std::fs::rename(&file, to);
                }
                4 if rng.below(2) == 0 => {
                    // One of the copies of one content changes, or goes.
                    let copy = ws.path(&format!("{}/copy.cpp", COPIES[rng.below(COPIES.len())]));
                    match rng.below(3) {
                        0 => drop(std::fs::remove_file(copy)),
                        _ => std::fs::write(copy, format!("needle_{step} no longer a copy\n")).unwrap(),
                    }
                }
                _ => {
                    let victim = ws.path(&format!("src/a/file{}.cpp", 5 * rng.below(60)));
                    if victim.exists() {
                        std::fs::write(victim, format!("needle_{step} rewritten\n")).unwrap();
                    }
                }
            }
        }
        let q = queries[rng.below(queries.len())].clone();
        let state = same(&pair, q).await;
        assert_eq!(state, "ready", "step {step}");
    }
}

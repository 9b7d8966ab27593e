//! The undo journal through the MCP surface: every mutation recorded, `workspace_history`,
//! `workspace_checkpoint` and `workspace_revert` (byte-exact restoration with modes, CRLF, binary
//! files, trees and moves; redo; checkpoints; `paths`; `dry_run`; changes made outside ForgeMCP
//! and `force`), a restart, two servers sharing one storage root, `kill -9` of the real binary
//! during a stream of writes, the journal's privacy, and argument errors.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use forgemcp::workspace::WorkspaceService;
use rmcp::RoleClient;
use rmcp::service::RunningService;
use serde_json::{Value, json};

use crate::mutation::permission_bits;
use crate::support::{TempWorkspace, TestClient, call, connect, resource_text, structured, text, tool_error};

type Client = RunningService<RoleClient, TestClient>;

/// Every entry below `dir`: its bytes (`None` for a directory) and its mode.
fn snapshot(dir: &Path) -> BTreeMap<String, (Option<Vec<u8>>, u32)> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, (Option<Vec<u8>>, u32)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for path in entries {
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            let mode = permission_bits(&meta);
            if meta.is_dir() {
                out.insert(rel, (None, mode));
                walk(base, &path, out);
            } else {
                out.insert(rel, (Some(std::fs::read(&path).unwrap()), mode));
            }
        }
    }
    let mut res = BTreeMap::new();
    walk(dir, dir, &mut res);
    res
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) {}

const BINARY: &[u8] = b"\x7fELF\x00\x01\x02\xff\xfe\x00binary\r\n\x00";

/// A project with a CRLF file without a final newline, a binary executable and a tree.
fn project() -> TempWorkspace {
    let ws = TempWorkspace::new("");
    ws.write("src/crlf.cpp", "int a;\r\nint b;\r\nint c;");
    ws.write("tree/bin/tool.bin", BINARY);
    ws.write("tree/notes.txt", "caf\u{e9} \u{2014} notes\n");
    ws.write("tree/deep/x/y.txt", "deep\n");
    set_mode(&ws.path("tree/bin/tool.bin"), 0o751);
    set_mode(&ws.path("tree/deep"), 0o700);
    ws
}

async fn ok(client: &Client, tool: &str, args: Value) -> Value {
    let result = call(client, tool, args).await;
    structured(&result).clone()
}

async fn history(client: &Client, args: Value) -> (Value, String) {
    let result = call(client, "workspace_history", args).await;
    (structured(&result).clone(), text(&result).to_owned())
}

/// Writes, edits, moves and deletes through the tools; returns the first change id.
async fn make_changes(client: &Client) -> u64 {
    ok(client, "workspace_write_file", json!({"path": "project/src/new.cpp", "text": "int n;\n"})).await;
    let first = history(client, json!({})).await.0["changes"][0]["id"].as_u64().unwrap();
    ok(
        client,
        "workspace_edit_file",
        json!({"path": "project/src/crlf.cpp", "old_text": "int b;\nint c;", "new_text": "int B;\nint C;"}),
    )
    .await;
    ok(client, "workspace_move", json!({"source": "project/tree/notes.txt", "destination": "project/src/notes.md"}))
        .await;
    ok(client, "workspace_delete", json!({"path": "project/tree", "recursive": true})).await;
    ok(client, "workspace_mkdir", json!({"path": "project/made/here"})).await;
    first
}

#[tokio::test]
async fn every_change_is_reverted_byte_for_byte_and_redone() {
    let ws = project();
    let client = ws.connect(TestClient::new()).await;
    let initial = snapshot(&ws.project);
    let first = make_changes(&client).await;
    let changed = snapshot(&ws.project);
    assert_eq!(std::fs::read(ws.path("src/crlf.cpp")).unwrap(), b"int a;\r\nint B;\r\nint C;");

    let (value, shown) = history(&client, json!({})).await;
    assert_eq!(value["matching"], 5, "{shown}");
    assert!(shown.contains(&format!("#{} ", first + 1)), "{shown}");
    assert!(shown.contains("workspace_edit_file project/src/crlf.cpp +2 -2"), "{shown}");
    assert!(shown.contains("project/src/notes.md moved from project/tree/notes.txt"), "{shown}");
    assert!(shown.contains("reaches back to change #1"), "{shown}");
    assert_eq!(value["changes"][0]["tool"], "workspace_mkdir");
    assert_eq!(value["changes"][0]["origin"], "client");
    let (with_diffs, _) = history(&client, json!({"diffs": true, "path": "project/src/crlf.cpp"})).await;
    let uri = with_diffs["changes"][0]["paths"][0]["resources"]["diff"]["uri"].as_str().expect("a diff link");
    let diff = resource_text(&client, uri, "application/json").await;
    assert!(diff.contains(r"int B;\r\n") && diff.contains(r"int b;\r\n"), "{diff}");

    let result = call(&client, "workspace_revert", json!({"change": first})).await;
    let reverted = structured(&result).clone();
    assert_eq!(snapshot(&ws.project), initial, "{}", text(&result));
    assert!(!ws.path("src/new.cpp").exists() && !ws.path("made").exists());
    let listed = text(&result);
    for file in &reverted["files"].as_array().unwrap()[..] {
        assert!(listed.contains(file["path"].as_str().unwrap()), "{listed}");
    }
    let crlf = reverted["files"].as_array().unwrap().iter().find(|f| f["path"] == "project/src/crlf.cpp").unwrap();
    assert_eq!(crlf["action"], "modified");
    let uri = crlf["resources"]["diff"]["uri"].as_str().expect("a diff link");
    assert!(resource_text(&client, uri, "application/json").await.contains("int B;"));

    // Redo: revert the revert.
    let redo = reverted["change"].as_u64().unwrap();
    ok(&client, "workspace_revert", json!({"change": redo})).await;
    assert_eq!(snapshot(&ws.project), changed);
    let (_, shown) = history(&client, json!({"limit": 100})).await;
    assert!(shown.contains(&format!("(reverted by #{redo})")), "{shown}");
}

#[tokio::test]
async fn checkpoints_paths_and_dry_runs() {
    let ws = project();
    let client = ws.connect(TestClient::new()).await;
    ok(&client, "workspace_write_file", json!({"path": "project/a.txt", "text": "a1\n"})).await;
    ok(&client, "workspace_write_file", json!({"path": "project/b.txt", "text": "b1\n"})).await;
    let point = ok(&client, "workspace_checkpoint", json!({"name": "both at one"})).await;
    assert_eq!(point["after"], 2);
    ok(&client, "workspace_edit_file", json!({"path": "project/a.txt", "old_text": "a1", "new_text": "a2"})).await;
    ok(&client, "workspace_edit_file", json!({"path": "project/b.txt", "old_text": "b1", "new_text": "b2"})).await;
    let (_, shown) = history(&client, json!({})).await;
    assert!(shown.contains("── checkpoint \"both at one\" ──\n#2 "), "{shown}");

    let before = snapshot(&ws.project);
    let dry = call(&client, "workspace_revert", json!({"checkpoint": "both at one", "dry_run": true})).await;
    assert_eq!(snapshot(&ws.project), before);
    assert!(
        text(&dry).starts_with("Dry run: going back to checkpoint \"both at one\" would change 2 paths"),
        "{}",
        text(&dry)
    );
    let dry = structured(&dry);
    assert_eq!(dry["change"], Value::Null);
    let uri = dry["files"][0]["resources"]["diff"]["uri"].as_str().unwrap();
    let diff = resource_text(&client, uri, "application/json").await;
    assert!(diff.contains("\"text\":\"a2\\n\"") && diff.contains("\"text\":\"a1\\n\""), "{diff}");

    ok(&client, "workspace_revert", json!({"checkpoint": "both at one", "paths": ["project/b.txt"]})).await;
    assert_eq!(std::fs::read_to_string(ws.path("a.txt")).unwrap(), "a2\n");
    assert_eq!(std::fs::read_to_string(ws.path("b.txt")).unwrap(), "b1\n");
    ok(&client, "workspace_revert", json!({"checkpoint": "both at one"})).await;
    assert_eq!(std::fs::read_to_string(ws.path("a.txt")).unwrap(), "a1\n");
}

#[tokio::test]
async fn outside_changes_are_refused_unless_forced_and_a_forced_revert_can_be_reverted() {
    let ws = project();
    let client = ws.connect(TestClient::new()).await;
    ok(&client, "workspace_write_file", json!({"path": "project/a.txt", "text": "mine\n"})).await;
    ok(&client, "workspace_write_file", json!({"path": "project/b.txt", "text": "mine too\n"})).await;
    std::fs::write(ws.path("a.txt"), "edited outside\r\n").unwrap();
    let before = snapshot(&ws.project);
    let refused = call(&client, "workspace_revert", json!({"change": 1})).await;
    let message = tool_error(&refused);
    assert!(message.contains("`project/a.txt` differs from what the journal recorded after change #1"), "{message}");
    assert!(message.contains("force: true") && message.starts_with("Nothing was changed"), "{message}");
    assert!(!message.contains("b.txt"), "{message}");
    assert_eq!(snapshot(&ws.project), before);

    let forced = ok(&client, "workspace_revert", json!({"change": 1, "force": true})).await;
    assert!(!ws.path("a.txt").exists() && !ws.path("b.txt").exists());
    let outside = forced["files"].as_array().unwrap().iter().find(|f| f["path"] == "project/a.txt").unwrap();
    assert_eq!(outside["outside"], true);
    ok(&client, "workspace_revert", json!({"change": forced["change"]})).await;
    assert_eq!(std::fs::read(ws.path("a.txt")).unwrap(), b"edited outside\r\n");
    assert_eq!(std::fs::read(ws.path("b.txt")).unwrap(), b"mine too\n");
}

#[tokio::test]
async fn history_and_revert_survive_a_restart_and_are_shared_by_two_servers() {
    let ws = project();
    let first = ws.connect(TestClient::new()).await;
    let second = ws.connect(TestClient::new()).await;
    ok(&first, "workspace_write_file", json!({"path": "project/one.txt", "text": "1\n"})).await;
    ok(&second, "workspace_write_file", json!({"path": "project/two.txt", "text": "2\n"})).await;
    ok(&first, "workspace_write_file", json!({"path": "project/three.txt", "text": "3\n"})).await;
    let (value, _) = history(&second, json!({})).await;
    let ids: Vec<u64> = value["changes"].as_array().unwrap().iter().map(|c| c["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, [3, 2, 1]);
    // A change made through one is reverted through the other.
    ok(&second, "workspace_revert", json!({"change": 3})).await;
    assert!(!ws.path("three.txt").exists() && ws.path("two.txt").exists());
    drop((first, second));

    let restarted = ws.connect(TestClient::new()).await;
    let (value, shown) = history(&restarted, json!({"path": "project/three.txt"})).await;
    assert_eq!(value["matching"], 2, "{shown}");
    ok(&restarted, "workspace_write_file", json!({"path": "project/four.txt", "text": "4\n"})).await;
    let (value, _) = history(&restarted, json!({"limit": 1})).await;
    assert_eq!(value["changes"][0]["id"], 5, "ids are never reused");
    ok(&restarted, "workspace_revert", json!({"change": 1})).await;
    for name in ["one.txt", "two.txt", "three.txt", "four.txt"] {
        assert!(!ws.path(name).exists(), "{name}");
    }
}

#[tokio::test]
async fn the_journal_is_private_protected_and_outside_the_project() {
    let ws = project();
    let client = ws.connect(TestClient::new()).await;
    ok(&client, "workspace_write_file", json!({"path": "project/a.txt", "text": "a\n"})).await;
    let dir = ws.storage.join(".journal");
    assert!(dir.join("journal-2.log").is_file());
    #[cfg(unix)]
    assert_eq!(permission_bits(&std::fs::metadata(&dir).unwrap()), 0o700);
    let names: Vec<String> = std::fs::read_dir(&ws.project)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.contains("journal")), "{names:?}");
    let refused = call(&client, "workspace_delete", json!({"path": "storage/.journal", "recursive": true})).await;
    assert!(tool_error(&refused).contains("protected by the undo journal"), "{}", tool_error(&refused));
}

#[tokio::test]
async fn bad_arguments_name_the_argument_and_change_nothing() {
    let ws = project();
    let client = ws.connect(TestClient::new()).await;
    ok(&client, "workspace_write_file", json!({"path": "project/a.txt", "text": "a\n"})).await;
    ok(&client, "workspace_checkpoint", json!({"name": "cp"})).await;
    let before = snapshot(&ws.project);
    let cases = [
        (
            "workspace_revert",
            json!({"change": 9}),
            "Invalid argument `change`: there is no change #9 (the newest is #1).",
        ),
        ("workspace_revert", json!({}), "Invalid argument `change`: pass exactly one of"),
        (
            "workspace_revert",
            json!({"change": 1, "checkpoint": "cp"}),
            "Invalid argument `change`: pass exactly one of",
        ),
        (
            "workspace_revert",
            json!({"checkpoint": "nope"}),
            "Invalid argument `checkpoint`: there is no checkpoint `nope` (known: `cp`).",
        ),
        ("workspace_revert", json!({"change": 1, "paths": ["root/etc"]}), "Invalid argument `paths`:"),
        ("workspace_revert", json!({"change": 1, "paths": ["/etc"]}), "Invalid argument `paths`:"),
        ("workspace_checkpoint", json!({"name": "cp"}), "Invalid argument `name`: a checkpoint `cp` already exists"),
        ("workspace_checkpoint", json!({"name": " "}), "Invalid argument `name`: a checkpoint name must not be empty."),
        ("workspace_history", json!({"path": "root/tmp"}), "Invalid argument `path`:"),
    ];
    for (tool, args, expected) in cases {
        let result = call(&client, tool, args.clone()).await;
        let message = tool_error(&result);
        assert!(message.starts_with(expected), "{tool} {args}: {message}");
    }
    assert_eq!(snapshot(&ws.project), before);
    let (value, _) = history(&client, json!({})).await;
    assert_eq!(value["matching"], 1);
}

#[tokio::test]
async fn panel_calls_are_journaled_with_their_origin() {
    let ws = project();
    let server = ws.server(std::time::Duration::ZERO);
    let panel = connect(server.with_origin(forgemcp::server::Origin::Panel), TestClient::new()).await;
    ok(&panel, "workspace_write_file", json!({"path": "project/p.txt", "text": "p\n"})).await;
    let (value, shown) = history(&panel, json!({})).await;
    assert_eq!(value["changes"][0]["origin"], "panel");
    assert!(shown.contains("workspace_write_file (admin panel) project/p.txt created"), "{shown}");
}

#[tokio::test]
async fn a_server_without_a_journal_says_so() {
    let ws = project();
    let workspace = Arc::new(WorkspaceService::with_journal(ws.roots(), None));
    let server = forgemcp::server::ForgeServer::new(ws.services_with(workspace), std::time::Duration::ZERO);
    let client = connect(server, TestClient::new()).await;
    ok(&client, "workspace_write_file", json!({"path": "project/a.txt", "text": "a\n"})).await;
    assert!(!ws.storage.join(".journal").exists());
    let result = call(&client, "workspace_history", json!({})).await;
    assert!(tool_error(&result).contains("journal is off"), "{}", tool_error(&result));
}

/// The real binary, killed with SIGKILL during a stream of writes: every write it reported is in
/// the journal and is reverted.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn every_reported_write_survives_kill_9_and_can_be_reverted() {
    use std::io::{BufRead, Write};
    let ws = project();
    let initial = snapshot(&ws.project);
    #[expect(clippy::disallowed_methods, reason = "the test starts and kills the real server binary")]
    let mut child = std::process::Command::new(crate::support::binary())
        .arg("--workspace")
        .arg(&ws.project)
        .arg("--no-admin")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn forgemcp");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"kill","version":"1"}}});
        let _ = writeln!(stdin, "{init}\n{}", json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        for i in 1..=400 {
            let write = json!({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{
                "name":"workspace_write_file","arguments":{"path":format!("project/w{i}.txt"),"text":format!("{i}\n")}}});
            if writeln!(stdin, "{write}").is_err() {
                break;
            }
        }
        stdin
    });
    let mut reported = Vec::new();
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        let reply: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let id = reply["id"].as_u64().unwrap();
        if id > 0 {
            assert_eq!(reply["result"]["isError"], false, "{reply}");
            reported.push(id);
        }
        if reported.len() == 25 {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    drop(writer.join());

    let client = ws.connect(TestClient::new()).await;
    let (value, shown) = history(&client, json!({"limit": 1000})).await;
    let journaled: Vec<&str> =
        value["changes"].as_array().unwrap().iter().map(|c| c["paths"][0]["path"].as_str().unwrap()).collect();
    for id in &reported {
        assert!(journaled.contains(&format!("project/w{id}.txt").as_str()), "w{id}.txt: {shown}");
    }
    ok(&client, "workspace_revert", json!({"change": 1})).await;
    for id in &reported {
        assert!(!ws.path(&format!("w{id}.txt")).exists(), "w{id}.txt");
    }
    let left: Vec<String> = snapshot(&ws.project).into_keys().filter(|name| !initial.contains_key(name)).collect();
    // Only writes that were never journaled (their server died first) may remain.
    assert!(left.len() <= 1, "{left:?}");
}

/// The quality tools change files through the workspace: `quality_format` applying is journaled
/// under its own name and reverted like any change (the real clang-format; CI or
/// `FORGEMCP_HEAVY_TESTS=1`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quality_fixes_are_journaled_with_their_tool() {
    if !crate::support::real_tools("quality_fixes_are_journaled_with_their_tool", &["clang-format"]) {
        return;
    }
    let ws = TempWorkspace::new("");
    let original = "int  main( ){return 0;}\r\n";
    ws.write("ugly.cpp", original);
    let services = crate::support::real_services(&ws, &[]);
    let client =
        connect(forgemcp::server::ForgeServer::new(services, std::time::Duration::ZERO), TestClient::new()).await;
    let formatted = ok(&client, "quality_format", json!({"path": "ugly.cpp", "apply": true})).await;
    assert_eq!(formatted["files"][0]["applied"], true, "{formatted}");
    assert_ne!(std::fs::read_to_string(ws.path("ugly.cpp")).unwrap(), original);
    let (value, shown) = history(&client, json!({})).await;
    assert_eq!(value["changes"][0]["tool"], "quality_format", "{shown}");
    assert_eq!(value["changes"][0]["paths"][0]["path"], "project/ugly.cpp");
    ok(&client, "workspace_revert", json!({"change": value["changes"][0]["id"]})).await;
    assert_eq!(std::fs::read_to_string(ws.path("ugly.cpp")).unwrap(), original);
}

/// Past its size limit the journal drops its oldest changes: the history says how far back it
/// reaches, a revert past that is a clear error, and ids go on increasing.
#[tokio::test]
async fn the_journal_is_bounded_and_says_how_far_back_it_reaches() {
    let ws = project();
    let workspace = Arc::new(WorkspaceService::with_journal(ws.roots(), Some(1 << 20)));
    let server = forgemcp::server::ForgeServer::new(ws.services_with(workspace), std::time::Duration::ZERO);
    let client = connect(server, TestClient::new()).await;
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    for i in 0..30 {
        // 100 KB that LZ4 cannot shrink much: hex digits of a pseudo-random sequence.
        let text: String = (0..12_800)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                format!("{:08x}", seed as u32)
            })
            .collect();
        ok(&client, "workspace_write_file", json!({"path": format!("project/big{i}.txt"), "text": text})).await;
    }
    let size = std::fs::metadata(ws.storage.join(".journal/journal-2.log")).unwrap().len();
    assert!(size <= 1 << 20, "{size} bytes");
    let (value, shown) = history(&client, json!({"limit": 100})).await;
    let oldest = value["oldest_change"].as_u64().unwrap();
    assert!(oldest > 1 && value["older_dropped"] == true, "{shown}");
    assert!(shown.contains(&format!("The journal reaches back to change #{oldest} (")), "{shown}");
    assert!(shown.contains("older changes were dropped to keep it under 1 MiB"), "{shown}");
    let refused = call(&client, "workspace_revert", json!({"change": 1})).await;
    let message = tool_error(&refused);
    assert!(message.starts_with("Invalid argument `change`: change #1 is older than the journal reaches"), "{message}");
    ok(&client, "workspace_revert", json!({"change": 30})).await;
    assert!(!ws.path("big29.txt").exists() && ws.path("big28.txt").exists());
    assert_eq!(history(&client, json!({"limit": 1})).await.0["changes"][0]["id"], 31);

    // A tree larger than half the limit is deleted and journaled without its contents.
    for i in 0..6 {
        ws.write(&format!("huge/f{i}.txt"), std::fs::read(ws.path(&format!("big{i}.txt"))).unwrap());
    }
    ok(&client, "workspace_delete", json!({"path": "project/huge", "recursive": true})).await;
    let refused = call(&client, "workspace_revert", json!({"change": 32})).await;
    let message = tool_error(&refused);
    assert!(message.contains("before change #32 was not kept"), "{message}");
}

/// Two real server processes on one project write at the same time: every change gets its own id,
/// each sees the other's, and a change made through one is reverted through the other.
#[tokio::test(flavor = "multi_thread")]
async fn two_server_processes_share_one_journal() {
    let ws = TempWorkspace::new("");
    let (a, b) = (real_server(&ws).await, real_server(&ws).await);
    tokio::join!(write_many(&a, "a"), write_many(&b, "b"));
    let (value, shown) = history(&a, json!({"limit": 100})).await;
    let mut ids: Vec<u64> = value["changes"].as_array().unwrap().iter().map(|c| c["id"].as_u64().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=40).collect::<Vec<u64>>(), "{shown}");
    let id_of = |value: &Value, path: &str| {
        value["changes"].as_array().unwrap().iter().find(|c| c["paths"][0]["path"] == path).unwrap()["id"]
            .as_u64()
            .unwrap()
    };
    let (b_history, _) = history(&b, json!({"limit": 100})).await;
    assert_eq!(b_history["changes"], value["changes"], "both servers read the same journal");
    // b's last write, reverted through a (only that path, so a's later writes stay).
    let b19 = id_of(&value, "project/b19.txt");
    ok(&a, "workspace_revert", json!({"change": b19, "paths": ["project/b19.txt"]})).await;
    assert!(!ws.path("b19.txt").exists() && ws.path("a19.txt").exists());
    // a's last write, reverted through b.
    let a19 = id_of(&value, "project/a19.txt");
    ok(&b, "workspace_revert", json!({"change": a19, "paths": ["project/a19.txt"]})).await;
    assert!(!ws.path("a19.txt").exists() && ws.path("a18.txt").exists());
    let (value, shown) = history(&b, json!({"limit": 2})).await;
    assert_eq!(value["changes"][0]["id"], 42, "{shown}");
    assert_eq!(value["changes"][1]["id"], 41, "{shown}");
    a.cancel().await.expect("clean shutdown");
    b.cancel().await.expect("clean shutdown");
}

/// Twenty writes of `project/<prefix><i>.txt`, one after the other.
async fn write_many(client: &Client, prefix: &str) {
    for i in 0..20 {
        let path = format!("project/{prefix}{i}.txt");
        ok(client, "workspace_write_file", json!({"path": path, "text": format!("{prefix} {i}\n")})).await;
    }
}

/// A write whose server died between the journal's flush and the file's rename (the two run side
/// by side): the journal holds the change but the file still holds what it held before. A revert
/// over it is not refused as a change made outside, and restores the state asked for.
#[tokio::test]
async fn a_journaled_write_that_never_reached_its_file_does_not_block_a_revert() {
    use forgemcp::workspace::journal::{DEFAULT_LIMIT, Journal, Snapshot, Touched};
    let ws = project();
    let client = ws.connect(TestClient::new()).await;
    ok(&client, "workspace_write_file", json!({"path": "project/a.txt", "text": "one\n"})).await;
    let mode = permission_bits(&std::fs::metadata(ws.path("a.txt")).unwrap());
    let journal = Journal::new(ws.storage.join(".journal"), DEFAULT_LIMIT);
    let phantom = Touched {
        path: forgemcp::workspace::path::QualifiedPath::parse("project/a.txt").unwrap(),
        moved: None,
        before: Snapshot::File { bytes: b"one\n".as_slice().into(), mode },
        after: Snapshot::File { bytes: b"two\n".as_slice().into(), mode },
    };
    assert_eq!(journal.record(None, None, &[phantom]).unwrap().unwrap().id, 2);
    assert_eq!(std::fs::read(ws.path("a.txt")).unwrap(), b"one\n");
    let result = call(&client, "workspace_revert", json!({"change": 1})).await;
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    assert!(!ws.path("a.txt").exists());
}

/// The real binary on `ws`, as an MCP client over stdio.
async fn real_server(ws: &TempWorkspace) -> Client {
    use rmcp::ServiceExt as _;
    use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
    #[expect(clippy::disallowed_methods, reason = "the test starts the real server binary")]
    let cmd = tokio::process::Command::new(crate::support::binary()).configure(|cmd| {
        cmd.arg("--workspace").arg(&ws.project).arg("--no-admin");
    });
    let (transport, _) =
        TokioChildProcess::builder(cmd).stderr(std::process::Stdio::null()).spawn().expect("spawn forgemcp");
    TestClient::new().serve(transport).await.expect("initialize")
}

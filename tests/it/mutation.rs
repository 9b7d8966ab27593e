//! Workspace mutations through the MCP surface: write, edit, move, delete and mkdir, every refusal
//! (each checked to leave the whole temporary directory unchanged, outside siblings included), the
//! escape matrix over every path argument, a link-swapping race, SIGKILL during writes of the real
//! binary, `diff.json` snapshots, line endings, observers and protected paths.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
#[cfg(unix)]
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use expect_test::{Expect, expect};
use forgemcp::server::ForgeServer;
use forgemcp::widgets::Icon;
use forgemcp::workspace::WorkspaceService;
use forgemcp::workspace::observer::{Mutation, MutationKind, MutationObserver};
use forgemcp::workspace::path::QualifiedPath;
#[cfg(unix)]
use forgemcp::workspace::write::is_temp_name;
use parking_lot::Mutex;
use rmcp::RoleClient;
use rmcp::service::RunningService;
use serde_json::{Value, json};

use crate::support::{TempWorkspace, TestClient, call, connect, resource_text, structured, text, tool_error};

type Client = RunningService<RoleClient, TestClient>;

const PROJECT: &str = r#"
//- src/main.cpp
    int main() {}
//- src/util/strings.cpp
    int strings;
//- notes.txt
    alpha
    beta
    gamma
"#;

/// A workspace with an outside sibling (`outside/`), a prefix-collision sibling (`proj-evil/`) and
/// an existing storage root, so that refused operations can be checked against everything.
fn workspace(fixture: &str) -> TempWorkspace {
    let ws = TempWorkspace::new(fixture);
    std::fs::create_dir_all(ws.base.join("outside/sub")).unwrap();
    std::fs::write(ws.base.join("outside/secret.txt"), "outside secret\n").unwrap();
    std::fs::write(ws.base.join("outside/sub/secret.txt"), "nested secret\n").unwrap();
    std::fs::create_dir_all(ws.base.join("proj-evil")).unwrap();
    std::fs::write(ws.base.join("proj-evil/file.txt"), "evil\n").unwrap();
    std::fs::create_dir_all(&ws.storage).unwrap();
    ws
}

// ---------------------------------------------------------------------------------------------
// Snapshots of the whole temporary directory

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    File { bytes: Vec<u8>, mode: u32, modified: SystemTime },
    Dir { mode: u32, modified: SystemTime },
    Link(PathBuf),
    Other,
}

/// Everything below `root`, read without following links; FIFOs are never opened.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Node> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<PathBuf, Node>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            let mode = permission_bits(&meta);
            let node = if meta.file_type().is_symlink() {
                Node::Link(std::fs::read_link(&path).unwrap())
            } else if meta.is_dir() {
                walk(&path, root, out);
                Node::Dir { mode, modified: meta.modified().unwrap() }
            } else if meta.is_file() {
                Node::File { bytes: std::fs::read(&path).unwrap(), mode, modified: meta.modified().unwrap() }
            } else {
                Node::Other
            };
            out.insert(rel, node);
        }
    }
    let mut res = BTreeMap::new();
    walk(root, root, &mut res);
    res
}

#[cfg(unix)]
pub(crate) fn permission_bits(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
pub(crate) fn permission_bits(meta: &std::fs::Metadata) -> u32 {
    u32::from(meta.permissions().readonly())
}

#[track_caller]
fn assert_same_tree(before: &BTreeMap<PathBuf, Node>, after: &BTreeMap<PathBuf, Node>, what: &str) {
    if before == after {
        return;
    }
    let mut diffs = Vec::new();
    for (path, node) in before {
        match after.get(path) {
            None => diffs.push(format!("removed {}", path.display())),
            Some(now) if now != node => diffs.push(format!("changed {}", path.display())),
            Some(_) => {}
        }
    }
    for path in after.keys().filter(|p| !before.contains_key(*p)) {
        diffs.push(format!("created {}", path.display()));
    }
    panic!("{what} changed the disk: {diffs:?}");
}

/// Calls a mutation that must be refused; asserts that nothing anywhere in the temporary
/// directory changed and returns the error text.
async fn refused(client: &Client, ws: &TempWorkspace, tool: &str, args: Value) -> String {
    let before = snapshot(&ws.base);
    let res = call(client, tool, args.clone()).await;
    let message = tool_error(&res).to_owned();
    assert_same_tree(&before, &snapshot(&ws.base), &format!("refused {tool} {args}"));
    message
}

#[track_caller]
fn assert_mentions(message: &str, fragments: &[&str]) {
    for fragment in fragments {
        assert!(message.contains(fragment), "{message:?} should mention {fragment:?}");
    }
}

fn read(ws: &TempWorkspace, rel: &str) -> String {
    std::fs::read_to_string(ws.path(rel)).unwrap()
}

/// The `diff` resource link of a write or edit result (and nothing else in `resources`).
fn diff_uri(value: &Value) -> String {
    let resources = value["resources"].as_object().expect("resources is an object");
    assert_eq!(resources.keys().collect::<Vec<_>>(), vec!["diff"], "{value}");
    let link = &resources["diff"];
    assert_eq!(link["mime_type"], "application/json");
    assert_eq!(link.as_object().unwrap().len(), 2, "descriptors hold exactly uri and mime_type");
    let uri = link["uri"].as_str().unwrap().to_owned();
    assert!(uri.starts_with("forgemcp://workspace/results/") && uri.ends_with("/diff.json"), "{uri}");
    uri
}

async fn diff_json(client: &Client, value: &Value) -> Value {
    let body = resource_text(client, &diff_uri(value), "application/json").await;
    serde_json::from_str(&body).expect("diff.json is JSON")
}

// ---------------------------------------------------------------------------------------------
// workspace_write_file

#[tokio::test]
async fn write_creates_a_file_and_links_only_a_diff() {
    let ws = workspace(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    let res = call(&client, "workspace_write_file", json!({ "path": "src/new.h", "text": "int a;\nint b;\n" })).await;
    let value = structured(&res);
    assert_eq!(value["path"], "project/src/new.h");
    assert_eq!(value["action"], "created");
    assert_eq!(value["lines_removed"], 0);
    assert_eq!(value["lines_added"], 2);
    // The keys beside the clangd summary (which says why no configuration checked the header).
    let keys = value.as_object().unwrap().keys().filter(|key| *key != "clangd").count();
    assert_eq!(keys, 5, "no diff data in the primary result: {value}");
    assert!(text(&res).starts_with("Created project/src/new.h (2 lines added)."), "{}", text(&res));
    assert_eq!(read(&ws, "src/new.h"), "int a;\nint b;\n");
    let diff = diff_json(&client, value).await;
    assert_eq!(diff["path"], "project/src/new.h");
    assert_eq!(
        diff["changes"],
        json!([{"kind":"insert","before_start":1,"before_count":0,"after_start":1,"after_count":2}])
    );
}

#[tokio::test]
async fn write_overwrites_and_keeps_permissions() {
    let ws = workspace(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(ws.path("notes.txt"), std::fs::Permissions::from_mode(0o750)).unwrap();
    }
    let res = call(&client, "workspace_write_file", json!({ "path": "./notes.txt", "text": "one line" })).await;
    let value = structured(&res);
    assert_eq!(
        (value["action"].as_str(), value["lines_removed"].as_u64(), value["lines_added"].as_u64()),
        (Some("overwritten"), Some(3), Some(1))
    );
    assert_eq!(text(&res), "Overwrote project/notes.txt (3 lines removed, 1 line added).");
    assert_eq!(read(&ws, "notes.txt"), "one line");
    #[cfg(unix)]
    assert_eq!(permission_bits(&std::fs::metadata(ws.path("notes.txt")).unwrap()), 0o750);
}

#[tokio::test]
async fn write_stores_text_without_newline_translation() {
    let ws = workspace(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    let exact = "a\r\nb\nc\rd\r\n\r\né\u{1F600}";
    let res = call(&client, "workspace_write_file", json!({ "path": "storage/x.txt", "text": exact })).await;
    assert_eq!(structured(&res)["path"], "storage/x.txt");
    assert_eq!(std::fs::read(ws.storage.join("x.txt")).unwrap(), exact.as_bytes());
}

#[tokio::test]
async fn write_needs_an_existing_parent() {
    let ws = workspace(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    let message =
        refused(&client, &ws, "workspace_write_file", json!({ "path": "src/missing/a.h", "text": "x" })).await;
    assert_eq!(
        message,
        "Invalid argument `path`: the parent directory `project/src/missing` does not exist; create it first with workspace_mkdir."
    );
    let message =
        refused(&client, &ws, "workspace_write_file", json!({ "path": "src/main.cpp/a.h", "text": "x" })).await;
    assert_mentions(&message, &["`path`", "`project/src/main.cpp` is not a directory"]);
}

#[tokio::test]
async fn write_refuses_an_existing_target_that_is_not_utf8_text() {
    let ws = workspace(PROJECT);
    ws.write("blob.bin", [0xffu8, 0xfe, 0x00, 0x01]);
    ws.write("latin1.txt", [b'c', b'a', b'f', 0xe9]);
    let client = ws.connect(TestClient::new()).await;
    let message = refused(&client, &ws, "workspace_write_file", json!({ "path": "blob.bin", "text": "x" })).await;
    assert_mentions(&message, &["`path`", "project/blob.bin"]);
    let message = refused(&client, &ws, "workspace_write_file", json!({ "path": "latin1.txt", "text": "x" })).await;
    assert_eq!(message, "Invalid argument `path`: `project/latin1.txt` is not UTF-8 text.");
}

#[tokio::test]
async fn write_refuses_directories_and_roots() {
    let ws = workspace(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    for path in ["src", "project/", "storage/", "./"] {
        let message = refused(&client, &ws, "workspace_write_file", json!({ "path": path, "text": "x" })).await;
        assert_mentions(&message, &["`path`", "is a directory"]);
    }
}

// ---------------------------------------------------------------------------------------------
// workspace_edit_file

#[tokio::test]
async fn edit_replaces_exactly_one_occurrence() {
    let ws = workspace(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    let args = json!({ "path": "notes.txt", "old_text": "beta", "new_text": "BETA" });
    let res = call(&client, "workspace_edit_file", args).await;
    let value = structured(&res);
    assert_eq!(value["path"], "project/notes.txt");
    assert_eq!(value["replacements"], 1);
    assert_eq!(value.as_object().unwrap().len(), 3, "{value}");
    diff_uri(value);
    assert_eq!(text(&res), "Updated project/notes.txt: replaced 1 occurrence.");
    assert_eq!(read(&ws, "notes.txt"), "alpha\nBETA\ngamma\n");
}

#[tokio::test]
async fn edit_replace_all_replaces_every_occurrence() {
    let ws = workspace("//- a.txt\n    x = x + x;");
    let client = ws.connect(TestClient::new()).await;
    let args = json!({ "path": "a.txt", "old_text": "x", "new_text": "yy", "replace_all": true });
    let res = call(&client, "workspace_edit_file", args).await;
    assert_eq!(structured(&res)["replacements"], 3);
    assert_eq!(text(&res), "Updated project/a.txt: replaced 3 occurrences.");
    assert_eq!(read(&ws, "a.txt"), "yy = yy + yy;\n");
}

#[tokio::test]
async fn edit_without_a_match_changes_nothing() {
    let ws = workspace(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    let args = json!({ "path": "notes.txt", "old_text": "delta", "new_text": "x" });
    let message = refused(&client, &ws, "workspace_edit_file", args).await;
    assert_eq!(message, "Invalid argument `old_text`: it does not occur in `project/notes.txt`; nothing was changed.");
    let args = json!({ "path": "notes.txt", "old_text": "Alpha", "new_text": "x" });
    refused(&client, &ws, "workspace_edit_file", args).await;
}

#[tokio::test]
async fn edit_with_several_matches_states_the_count_and_lines_and_changes_nothing() {
    let ws = workspace(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    let args = json!({ "path": "notes.txt", "old_text": "a\n", "new_text": "A\n" });
    let message = refused(&client, &ws, "workspace_edit_file", args).await;
    expect!["Invalid argument `old_text`: it occurs 3 times in `project/notes.txt` (lines 1, 2 and 3); pass `replace_all: true` to replace every occurrence, or include more surrounding text so that it occurs once; nothing was changed."]
        .assert_eq(&message);
}

#[tokio::test]
async fn edit_refuses_empty_old_text_and_missing_files() {
    let ws = workspace(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    let args = json!({ "path": "notes.txt", "old_text": "", "new_text": "x" });
    let message = refused(&client, &ws, "workspace_edit_file", args).await;
    assert_eq!(message, "Invalid argument `old_text`: the text to replace is empty.");
    let args = json!({ "path": "src/nope.cpp", "old_text": "a", "new_text": "b" });
    let message = refused(&client, &ws, "workspace_edit_file", args).await;
    assert_eq!(message, "Invalid argument `path`: `project/src/nope.cpp` does not exist.");
    let args = json!({ "path": "nope/nope.cpp", "old_text": "a", "new_text": "b" });
    let message = refused(&client, &ws, "workspace_edit_file", args).await;
    assert_eq!(message, "Invalid argument `path`: `project/nope/nope.cpp` does not exist.");
}

// ---------------------------------------------------------------------------------------------
// Line endings

#[tokio::test]
async fn editing_one_line_of_a_crlf_file_keeps_every_other_crlf() {
    let ws = workspace("");
    let original = "first\r\nsecond\r\nthird\r\nfourth";
    ws.write("win.txt", original);
    let client = ws.connect(TestClient::new()).await;
    let args = json!({ "path": "win.txt", "old_text": "second", "new_text": "2nd" });
    structured(&call(&client, "workspace_edit_file", args).await);
    assert_eq!(std::fs::read(ws.path("win.txt")).unwrap(), b"first\r\n2nd\r\nthird\r\nfourth");
}

#[tokio::test]
async fn editing_a_mixed_ending_file_keeps_its_mixture() {
    let ws = workspace("");
    ws.write("mixed.txt", "a\r\nb\nc\rd\r\ne\n");
    let client = ws.connect(TestClient::new()).await;
    let args = json!({ "path": "mixed.txt", "old_text": "b\nc", "new_text": "B\nC" });
    structured(&call(&client, "workspace_edit_file", args).await);
    assert_eq!(std::fs::read(ws.path("mixed.txt")).unwrap(), b"a\r\nB\nC\rd\r\ne\n");
    let args = json!({ "path": "mixed.txt", "old_text": "d\r\n", "new_text": "d\n" });
    structured(&call(&client, "workspace_edit_file", args).await);
    assert_eq!(std::fs::read(ws.path("mixed.txt")).unwrap(), b"a\r\nB\nC\rd\ne\n");
}

// ---------------------------------------------------------------------------------------------
// workspace_move

#[tokio::test]
async fn move_renames_a_file_and_moves_a_tree() {
    let ws = workspace(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    let res = call(&client, "workspace_move", json!({ "source": "notes.txt", "destination": "src/notes.md" })).await;
    assert_eq!(
        structured(&res),
        &json!({ "path": "project/src/notes.md", "action": "moved", "source": "project/notes.txt", "resources": {} })
    );
    assert_eq!(text(&res), "Moved project/notes.txt to project/src/notes.md.");
    assert_eq!(read(&ws, "src/notes.md"), "alpha\nbeta\ngamma\n");
    assert!(!ws.path("notes.txt").exists());

    let res = call(&client, "workspace_move", json!({ "source": "src/util", "destination": "lib" })).await;
    assert_eq!(structured(&res)["path"], "project/lib");
    assert_eq!(read(&ws, "lib/strings.cpp"), "int strings;\n");
    assert!(!ws.path("src/util").exists());
}

#[tokio::test]
async fn move_refuses_an_existing_or_parentless_destination() {
    let ws = workspace(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    let message =
        refused(&client, &ws, "workspace_move", json!({ "source": "notes.txt", "destination": "src/main.cpp" })).await;
    assert_eq!(message, "Invalid argument `destination`: `project/src/main.cpp` already exists.");
    let message = refused(&client, &ws, "workspace_move", json!({ "source": "notes.txt", "destination": "src" })).await;
    assert_mentions(&message, &["`destination`", "already exists"]);
    let message =
        refused(&client, &ws, "workspace_move", json!({ "source": "notes.txt", "destination": "no/x.txt" })).await;
    assert_mentions(&message, &["`destination`", "`project/no` does not exist"]);
    let message =
        refused(&client, &ws, "workspace_move", json!({ "source": "gone.txt", "destination": "x.txt" })).await;
    assert_eq!(message, "Invalid argument `source`: `project/gone.txt` does not exist.");
}

#[tokio::test]
async fn move_stays_within_one_root_and_never_into_itself() {
    let ws = workspace(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    let message =
        refused(&client, &ws, "workspace_move", json!({ "source": "notes.txt", "destination": "storage/notes.txt" }))
            .await;
    assert_mentions(&message, &["`destination`", "same root"]);
    let message =
        refused(&client, &ws, "workspace_move", json!({ "source": "src", "destination": "src/util/src" })).await;
    assert_eq!(
        message,
        "Invalid argument `destination`: `project/src/util/src` lies inside `project/src`; a directory cannot be moved into itself."
    );
    let message = refused(&client, &ws, "workspace_move", json!({ "source": "src", "destination": "src" })).await;
    assert_mentions(&message, &["`destination`", "into itself"]);
}

#[tokio::test]
async fn move_refuses_roots_links_and_trees_containing_links() {
    let ws = workspace(PROJECT);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(ws.path("src/main.cpp"), ws.path("src/util/inner_link")).unwrap();
        std::os::unix::fs::symlink(ws.path("src"), ws.path("src_link")).unwrap();
    }
    let client = ws.connect(TestClient::new()).await;
    for source in ["project/", "storage/", "./"] {
        let message = refused(&client, &ws, "workspace_move", json!({ "source": source, "destination": "x" })).await;
        assert_mentions(&message, &["`source`", "is a workspace root"]);
    }
    #[cfg(unix)]
    {
        let message = refused(&client, &ws, "workspace_move", json!({ "source": "src", "destination": "moved" })).await;
        assert_eq!(
            message,
            "Invalid argument `source`: `project/src` contains the link `project/src/util/inner_link`; a tree containing links is refused whole and nothing was changed."
        );
        let message =
            refused(&client, &ws, "workspace_move", json!({ "source": "src_link", "destination": "moved" })).await;
        assert_mentions(&message, &["`source`", "`project/src_link` is a link"]);
    }
}

// ---------------------------------------------------------------------------------------------
// workspace_delete

#[tokio::test]
async fn delete_removes_a_file_and_an_empty_directory() {
    let ws = workspace(PROJECT);
    std::fs::create_dir(ws.path("empty")).unwrap();
    let client = ws.connect(TestClient::new()).await;
    let res = call(&client, "workspace_delete", json!({ "path": "notes.txt" })).await;
    assert_eq!(
        structured(&res),
        &json!({ "path": "project/notes.txt", "action": "deleted", "source": null, "resources": {} })
    );
    assert_eq!(text(&res), "Deleted project/notes.txt.");
    assert!(!ws.path("notes.txt").exists());
    structured(&call(&client, "workspace_delete", json!({ "path": "empty" })).await);
    assert!(!ws.path("empty").exists());
}

#[tokio::test]
async fn delete_of_a_non_empty_directory_needs_recursive() {
    let ws = workspace(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    let message = refused(&client, &ws, "workspace_delete", json!({ "path": "src" })).await;
    assert_eq!(
        message,
        "Invalid argument `path`: `project/src` is a directory that is not empty; pass `recursive: true` to delete it with everything in it."
    );
    let res = call(&client, "workspace_delete", json!({ "path": "src", "recursive": true })).await;
    assert_eq!(structured(&res)["action"], "deleted");
    assert!(!ws.path("src").exists());
    assert!(ws.path("notes.txt").exists());
}

// Windows links: the smoke suite under Wine (`tests/windows/smoke.py`).
#[cfg(unix)]
#[tokio::test]
async fn delete_refuses_a_tree_containing_a_link_before_removing_anything() {
    let ws = workspace(PROJECT);
    std::os::unix::fs::symlink(ws.base.join("outside"), ws.path("src/util/zz_link")).unwrap();
    let client = ws.connect(TestClient::new()).await;
    let message = refused(&client, &ws, "workspace_delete", json!({ "path": "src", "recursive": true })).await;
    assert_mentions(&message, &["`path`", "`project/src/util/zz_link`", "refused whole"]);
    let message = refused(&client, &ws, "workspace_delete", json!({ "path": "src/util/zz_link" })).await;
    assert_mentions(&message, &["`path`", "is a link"]);
}

#[cfg(unix)]
#[tokio::test]
async fn trees_containing_a_hard_linked_file_are_neither_deleted_nor_moved() {
    let ws = workspace(PROJECT);
    std::fs::hard_link(ws.base.join("outside/secret.txt"), ws.path("src/util/shared.txt")).unwrap();
    let client = ws.connect(TestClient::new()).await;
    let message = refused(&client, &ws, "workspace_delete", json!({ "path": "src", "recursive": true })).await;
    assert_eq!(
        message,
        "Invalid argument `path`: `project/src` contains `project/src/util/shared.txt`, which has 2 hard links; a tree \
         containing links is refused whole and nothing was changed."
    );
    let message = refused(&client, &ws, "workspace_move", json!({ "source": "src/util", "destination": "lib" })).await;
    assert_mentions(&message, &["`source`", "`project/src/util/shared.txt`, which has 2 hard links"]);
    let message = refused(&client, &ws, "workspace_delete", json!({ "path": "src/util/shared.txt" })).await;
    assert_eq!(
        message,
        "Invalid argument `path`: `project/src/util/shared.txt` has 2 hard links; a file with more than one name may \
         be shared with a location outside the workspace, so it is not changed."
    );
}

#[tokio::test]
async fn temporary_files_are_hidden_and_removed_by_the_next_write_there() {
    let ws = workspace(PROJECT);
    let stale = ".forgemcp-tmp-0123456789abcdef";
    ws.write(&format!("src/{stale}"), "int main() { half");
    ws.write(".forgemcp-tmp-notes", "a user's file with a similar name");
    let client = ws.connect(TestClient::new()).await;
    let listed = structured(&call(&client, "workspace_list", json!({ "path": "src" })).await).clone();
    assert!(!listed.to_string().contains(stale), "{listed}");
    let found = structured(&call(&client, "workspace_find_files", json!({ "pattern": ".forgemcp*" })).await).clone();
    assert_eq!(found["paths"], json!(["project/.forgemcp-tmp-notes"]));
    let searched = structured(&call(&client, "workspace_text_search", json!({ "query": "int main" })).await).clone();
    assert_eq!(searched["matches_count"], 1, "{searched}");
    structured(&call(&client, "workspace_write_file", json!({ "path": "src/other.cpp", "text": "x" })).await);
    assert!(!ws.path(&format!("src/{stale}")).exists(), "the next write in the directory removes it");
    assert!(ws.path(".forgemcp-tmp-notes").exists());
}

#[tokio::test]
async fn delete_refuses_roots_and_missing_paths() {
    let ws = workspace(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    for path in ["project/", "storage/", "./"] {
        let message = refused(&client, &ws, "workspace_delete", json!({ "path": path, "recursive": true })).await;
        assert_mentions(&message, &["`path`", "is a workspace root"]);
    }
    let message = refused(&client, &ws, "workspace_delete", json!({ "path": "nope" })).await;
    assert_eq!(message, "Invalid argument `path`: `project/nope` does not exist.");
}

// ---------------------------------------------------------------------------------------------
// workspace_mkdir

#[tokio::test]
async fn mkdir_creates_parents_and_reports_an_existing_directory() {
    let ws = workspace(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    let res = call(&client, "workspace_mkdir", json!({ "path": "a/b/c" })).await;
    assert_eq!(
        structured(&res),
        &json!({ "path": "project/a/b/c", "action": "created", "source": null, "resources": {} })
    );
    assert_eq!(text(&res), "Created directory project/a/b/c.");
    assert!(ws.path("a/b/c").is_dir());
    let res = call(&client, "workspace_mkdir", json!({ "path": "a/b/c/" })).await;
    assert_eq!(structured(&res)["action"], "already_exists");
    assert_eq!(text(&res), "Directory project/a/b/c already exists.");
    let res = call(&client, "workspace_mkdir", json!({ "path": "storage/build/debug" })).await;
    assert_eq!(structured(&res)["path"], "storage/build/debug");
    assert!(ws.storage.join("build/debug").is_dir());
}

#[tokio::test]
async fn mkdir_refuses_a_file_or_a_link_at_the_path() {
    let ws = workspace(PROJECT);
    #[cfg(unix)]
    std::os::unix::fs::symlink(ws.path("src"), ws.path("dir_link")).unwrap();
    let client = ws.connect(TestClient::new()).await;
    let message = refused(&client, &ws, "workspace_mkdir", json!({ "path": "notes.txt" })).await;
    assert_eq!(message, "Invalid argument `path`: `project/notes.txt` is not a directory.");
    let message = refused(&client, &ws, "workspace_mkdir", json!({ "path": "notes.txt/sub" })).await;
    assert_mentions(&message, &["`path`", "`project/notes.txt` is not a directory"]);
    #[cfg(unix)]
    {
        let message = refused(&client, &ws, "workspace_mkdir", json!({ "path": "dir_link" })).await;
        assert_mentions(&message, &["`path`", "`project/dir_link` is a link"]);
        let message = refused(&client, &ws, "workspace_mkdir", json!({ "path": "dir_link/new" })).await;
        assert_mentions(&message, &["`path`", "passes through the link `project/dir_link`"]);
    }
}

// ---------------------------------------------------------------------------------------------
// Rules shared by every mutation

/// Each mutation with `path` (or the one argument under test) replaced by `value`.
fn mutation_calls(value: &str) -> Vec<(&'static str, &'static str, Value)> {
    vec![
        ("workspace_write_file", "path", json!({ "path": value, "text": "pwned\n" })),
        ("workspace_edit_file", "path", json!({ "path": value, "old_text": "secret", "new_text": "pwned" })),
        ("workspace_move", "source", json!({ "source": value, "destination": "project/moved-here" })),
        ("workspace_move", "destination", json!({ "source": "project/notes.txt", "destination": value })),
        ("workspace_delete", "path", json!({ "path": value, "recursive": true })),
        ("workspace_mkdir", "path", json!({ "path": value })),
    ]
}

#[tokio::test]
async fn root_paths_are_read_only_for_every_mutation() {
    let ws = workspace(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    let outside = format!("root/{}", ws.base.join("outside/secret.txt").display().to_string().trim_start_matches('/'));
    for (tool, argument, args) in mutation_calls(&outside) {
        let message = refused(&client, &ws, tool, args).await;
        assert_mentions(
            &message,
            &[&format!("Invalid argument `{argument}`"), "outside the managed roots", "only reading"],
        );
    }
}

#[tokio::test]
async fn mutation_tools_declare_annotations_widget_and_icons() {
    let ws = workspace("");
    let client = ws.connect(TestClient::new()).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    for name in ["workspace_write_file", "workspace_edit_file", "workspace_move", "workspace_delete", "workspace_mkdir"]
    {
        let tool = tools.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("{name} is registered"));
        let annotations = tool.annotations.as_ref().unwrap();
        let mkdir = name == "workspace_mkdir";
        assert_eq!(annotations.read_only_hint, Some(false), "{name}");
        assert_eq!(annotations.destructive_hint, Some(!mkdir), "{name}");
        assert_eq!(annotations.idempotent_hint, if mkdir { Some(true) } else { None }, "{name}");
        assert_eq!(annotations.open_world_hint, Some(false), "{name}");
        let meta = tool.meta.as_ref().unwrap();
        assert_eq!(meta["ui"]["resourceUri"], "ui://forgemcp/workspace-result.html", "{name}");
        let icon = if mkdir { Icon::Workspace } else { Icon::WorkspaceEdit };
        assert_eq!(tool.icons.as_ref().unwrap()[0].src, icon.data_uri(), "{name}");
        let schema = serde_json::to_value(&*tool.input_schema).unwrap();
        assert_eq!(schema["additionalProperties"], false, "{name} rejects unknown arguments");
    }
}

#[tokio::test]
async fn every_mutation_reports_progress_zero_then_one_of_one() {
    let ws = workspace(PROJECT);
    let handler = TestClient::new();
    let client = ws.connect(handler.clone()).await;
    let calls = [
        ("workspace_write_file", json!({ "path": "p.txt", "text": "x" })),
        ("workspace_edit_file", json!({ "path": "p.txt", "old_text": "x", "new_text": "y" })),
        ("workspace_move", json!({ "source": "p.txt", "destination": "q.txt" })),
        ("workspace_delete", json!({ "path": "q.txt" })),
        ("workspace_mkdir", json!({ "path": "d" })),
    ];
    for (tool, args) in calls {
        handler.progress.lock().clear();
        structured(&call(&client, tool, args).await);
        let deadline = Instant::now() + Duration::from_secs(5);
        while handler.progress.lock().len() < 2 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let log: Vec<(f64, Option<f64>)> = handler.progress.lock().iter().map(|p| (p.progress, p.total)).collect();
        assert_eq!(log, vec![(0.0, Some(1.0)), (1.0, Some(1.0))], "{tool}");
    }
}

// ---------------------------------------------------------------------------------------------
// Protected paths and observers

/// A workspace service with a recording observer, connected in-process.
async fn observed(ws: &TempWorkspace) -> (Client, Arc<WorkspaceService>, Arc<Recorder>) {
    let workspace = Arc::new(WorkspaceService::new(ws.roots()));
    let recorder = Arc::new(Recorder::default());
    workspace.add_observer(recorder.clone());
    let server = ForgeServer::new(ws.services_with(workspace.clone()), Duration::ZERO);
    (connect(server, TestClient::new()).await, workspace, recorder)
}

#[derive(Default)]
struct Recorder {
    changes: Mutex<Vec<Mutation>>,
}

impl MutationObserver for Recorder {
    fn mutated(&self, change: &Mutation) {
        self.changes.lock().push(change.clone());
    }
}

impl Recorder {
    /// `kind: before -> after` per change, paths only.
    fn log(&self) -> String {
        let paths = |list: &[forgemcp::workspace::observer::Affected]| {
            list.iter().map(|a| format!("{} ({:?})", a.path, a.kind)).collect::<Vec<_>>().join(", ")
        };
        self.changes
            .lock()
            .iter()
            .map(|c| {
                let kind = match &c.kind {
                    MutationKind::Moved { from, to } => format!("Moved {from} -> {to}"),
                    other => format!("{other:?}"),
                };
                format!("{kind}: [{}] -> [{}]\n", paths(&c.before), paths(&c.after))
            })
            .collect()
    }
}

#[tokio::test]
async fn observers_hear_every_change_with_paths_before_and_after() {
    let ws = workspace(PROJECT);
    let (client, _workspace, recorder) = observed(&ws).await;
    let calls = [
        ("workspace_write_file", json!({ "path": "new.txt", "text": "n" })),
        ("workspace_write_file", json!({ "path": "new.txt", "text": "m" })),
        ("workspace_edit_file", json!({ "path": "new.txt", "old_text": "m", "new_text": "o" })),
        ("workspace_mkdir", json!({ "path": "x/y" })),
        ("workspace_mkdir", json!({ "path": "x/y" })),
        ("workspace_move", json!({ "source": "src", "destination": "x/y/src" })),
        ("workspace_delete", json!({ "path": "x", "recursive": true })),
    ];
    for (tool, args) in calls {
        structured(&call(&client, tool, args).await);
    }
    refused(&client, &ws, "workspace_delete", json!({ "path": "nope" })).await;
    expect![[r#"
        Created: [] -> [project/new.txt (File)]
        Written: [project/new.txt (File)] -> [project/new.txt (File)]
        Edited: [project/new.txt (File)] -> [project/new.txt (File)]
        DirCreated: [] -> [project/x (Directory), project/x/y (Directory)]
        Moved project/src -> project/x/y/src: [project/src (Directory), project/src/main.cpp (File), project/src/util (Directory), project/src/util/strings.cpp (File)] -> [project/x/y/src (Directory), project/x/y/src/main.cpp (File), project/x/y/src/util (Directory), project/x/y/src/util/strings.cpp (File)]
        Deleted: [project/x (Directory), project/x/y (Directory), project/x/y/src (Directory), project/x/y/src/main.cpp (File), project/x/y/src/util (Directory), project/x/y/src/util/strings.cpp (File)] -> []
    "#]]
    .assert_eq(&recorder.log());
}

#[tokio::test]
async fn git_metadata_stays_readable_but_cannot_be_changed() {
    let ws = workspace("//- .git/config\n    [core]\n//- .git/objects/ab/cdef\n    obj\n//- src/a.cpp\n    int a;");
    let client = ws.connect(TestClient::new()).await;
    let res = call(&client, "workspace_read_file", json!({ "path": ".git/config" })).await;
    assert_eq!(structured(&res)["text"], "[core]\n");
    for value in [".git", ".git/config", ".git/objects/ab", ".git/new"] {
        for (tool, argument, args) in mutation_calls(value) {
            let message = refused(&client, &ws, tool, args).await;
            assert_mentions(&message, &[&format!("`{argument}`"), "protected by version control"]);
        }
    }
    let message = refused(&client, &ws, "workspace_delete", json!({ "path": "project/", "recursive": true })).await;
    assert_mentions(&message, &["workspace root"]);
}

#[tokio::test]
async fn paths_a_service_protects_are_refused_with_their_ancestors() {
    let ws = workspace(PROJECT);
    std::fs::create_dir_all(ws.storage.join("build/debug")).unwrap();
    std::fs::write(ws.storage.join("build/debug/out.o"), "o").unwrap();
    let (client, workspace, recorder) = observed(&ws).await;
    let build = QualifiedPath::parse("storage/build/debug").unwrap();
    workspace.protected().add(build.clone(), "CMake");
    let message =
        refused(&client, &ws, "workspace_write_file", json!({ "path": "storage/build/debug/out.o", "text": "x" }))
            .await;
    assert_eq!(
        message,
        "Invalid argument `path`: `storage/build/debug/out.o` is protected by CMake: it stays readable but cannot be changed through the workspace tools."
    );
    let message =
        refused(&client, &ws, "workspace_delete", json!({ "path": "storage/build", "recursive": true })).await;
    assert_eq!(
        message,
        "Invalid argument `path`: `storage/build` contains `storage/build/debug`, which is protected by CMake; it can be neither moved nor deleted."
    );
    let message =
        refused(&client, &ws, "workspace_move", json!({ "source": "storage/build", "destination": "storage/b2" }))
            .await;
    assert_mentions(&message, &["`source`", "protected by CMake"]);
    std::fs::write(ws.storage.join("b.txt"), "b").unwrap();
    let args = json!({ "source": "storage/b.txt", "destination": "storage/build/debug/b.txt" });
    let message = refused(&client, &ws, "workspace_move", args).await;
    assert_mentions(&message, &["`destination`", "protected by CMake"]);
    let message = refused(&client, &ws, "workspace_mkdir", json!({ "path": "storage/build/debug/sub" })).await;
    assert_mentions(&message, &["`path`", "protected by CMake"]);
    assert!(recorder.log().is_empty(), "refusals notify nobody");

    assert!(workspace.protected().remove(&build, "CMake"));
    structured(&call(&client, "workspace_delete", json!({ "path": "storage/build", "recursive": true })).await);
    assert!(!ws.storage.join("build").exists());
}

// ---------------------------------------------------------------------------------------------
// The escape matrix

/// Builds the hostile entries: links to outside (file, directory, dangling, in a middle
/// component), a hard link to an outside file, a FIFO, and a link to the prefix-collision sibling.
#[cfg(unix)]
fn hostile_workspace() -> TempWorkspace {
    let ws = workspace(PROJECT);
    let outside = ws.base.join("outside");
    std::os::unix::fs::symlink(outside.join("secret.txt"), ws.path("link_file")).unwrap();
    std::os::unix::fs::symlink(&outside, ws.path("link_dir")).unwrap();
    std::os::unix::fs::symlink(&outside, ws.path("src/mid")).unwrap();
    std::os::unix::fs::symlink(outside.join("not-yet"), ws.path("dangling")).unwrap();
    std::os::unix::fs::symlink(ws.base.join("proj-evil"), ws.path("evil_link")).unwrap();
    std::fs::write(outside.join("hard.txt"), "secret hard\n").unwrap();
    std::fs::hard_link(outside.join("hard.txt"), ws.path("hard.txt")).unwrap();
    rustix::fs::mkfifoat(rustix::fs::CWD, ws.path("fifo"), rustix::fs::Mode::from_raw_mode(0o644)).unwrap();
    ws
}

#[cfg(unix)]
#[tokio::test]
async fn escape_matrix_refuses_every_case_for_every_path_argument() {
    let ws = hostile_workspace();
    let client = ws.connect(TestClient::new()).await;
    let abs = |rel: &str| ws.base.join(rel).display().to_string();
    let cases: Vec<(&str, String)> = vec![
        ("parent segment", "../outside/secret.txt".into()),
        ("parent segment inside", "src/../../outside/secret.txt".into()),
        ("absolute", abs("outside/secret.txt")),
        ("absolute prefix collision", abs("proj-evil/file.txt")),
        ("root prefix collision", format!("root/{}", abs("proj-evil/file.txt").trim_start_matches('/'))),
        ("repeated separators", "src//main.cpp".into()),
        ("leading repeated separators", "project//outside".into()),
        ("backslash", "..\\outside\\secret.txt".into()),
        ("backslash inside", "src\\main.cpp".into()),
        ("NUL", "src/main.cpp\0.txt".into()),
        ("link to an outside file", "link_file".into()),
        ("link to an outside directory", "link_dir".into()),
        ("through a link to an outside directory", "link_dir/secret.txt".into()),
        ("through a link to outside, new name", "link_dir/new.txt".into()),
        ("link in a middle component", "src/mid/sub/secret.txt".into()),
        ("link in a middle component, new name", "src/mid/sub/new".into()),
        ("dangling link", "dangling".into()),
        ("through a dangling link", "dangling/x".into()),
        ("hard link to an outside file", "hard.txt".into()),
        ("FIFO", "fifo".into()),
        ("link to the prefix-collision sibling", "evil_link/file.txt".into()),
    ];
    let mut n_checked = 0;
    for (case, value) in &cases {
        for (tool, argument, args) in mutation_calls(value) {
            let message = refused(&client, &ws, tool, args.clone()).await;
            assert!(
                message.contains(&format!("`{argument}`")),
                "{case}: {tool} {args} must name `{argument}`: {message}"
            );
            n_checked += 1;
        }
    }
    assert_eq!(n_checked, cases.len() * 6);
}

#[cfg(unix)]
#[tokio::test]
async fn percent_encoded_separators_are_literal_names_inside_the_project() {
    let ws = hostile_workspace();
    let client = ws.connect(TestClient::new()).await;
    let outside_before = snapshot(&ws.base.join("outside"));
    let evil_before = snapshot(&ws.base.join("proj-evil"));
    for value in ["..%2Foutside%2Fsecret.txt", "%2e%2e%2foutside%2fsecret.txt", "link_dir%2Fsecret.txt", "..%5Coutside"]
    {
        for (tool, _argument, args) in mutation_calls(value) {
            let res = call(&client, tool, args).await;
            if res.is_error != Some(true) {
                // Succeeding is allowed: the name is literal and lives in the project.
                let path = structured(&res)["path"].as_str().unwrap().to_owned();
                assert!(path.starts_with("project/") && !path[8..].contains('/'), "{tool}: {path}");
            }
            assert_same_tree(&outside_before, &snapshot(&ws.base.join("outside")), value);
            assert_same_tree(&evil_before, &snapshot(&ws.base.join("proj-evil")), value);
        }
    }
    assert!(ws.path("..%2Foutside%2Fsecret.txt").is_dir(), "the literal name was created in the project");
}

/// Swaps `proj/race` (a real directory) with a link to `outside/` as fast as it can, while
/// mutations run through `race/…` paths: as the last component's parent and as a middle
/// component. Nothing outside may ever change.
#[cfg(unix)]
#[tokio::test]
async fn links_swapped_between_check_and_use_never_redirect_a_mutation() {
    const ITERATIONS: u64 = 1_200;
    let ws = workspace("//- race/target.txt\n    secret\n//- race/inner/f.txt\n    secret");
    let outside = ws.base.join("outside");
    // Make every operation able to succeed outside if a link were ever followed.
    std::fs::create_dir_all(outside.join("inner")).unwrap();
    std::fs::write(outside.join("target.txt"), "secret\n").unwrap();
    std::fs::write(outside.join("inner/f.txt"), "secret\n").unwrap();
    let outside_before = snapshot(&outside);
    let evil_before = snapshot(&ws.base.join("proj-evil"));

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = {
        let (stop, swaps) = (stop.clone(), swaps.clone());
        let (race, parked, outside) = (ws.path("race"), ws.path("race.parked"), outside.clone());
        std::thread::spawn(move || {
            let mut n: u64 = 0;
            while !stop.load(Ordering::Relaxed) {
                // Vary how long each state lasts so that swaps land at every step of a mutation.
                n += 1;
                let pause = Duration::from_micros((n * 37) % 300);
                if std::fs::rename(&race, &parked).is_ok() {
                    let _ = std::os::unix::fs::symlink(&outside, &race);
                    std::thread::sleep(pause / 4);
                    let _ = std::fs::remove_file(&race);
                    let _ = std::fs::rename(&parked, &race);
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
                std::thread::sleep(pause);
            }
        })
    };

    let client = ws.connect(TestClient::new()).await;
    let (mut n_ok, mut n_refused) = (0u64, 0u64);
    for i in 0..ITERATIONS {
        let (tool, args) = match i % 6 {
            0 => ("workspace_write_file", json!({ "path": "race/target.txt", "text": format!("secret {i}\n") })),
            1 => ("workspace_write_file", json!({ "path": "race/inner/f.txt", "text": format!("secret {i}\n") })),
            2 => (
                "workspace_edit_file",
                json!({ "path": "race/inner/f.txt", "old_text": "secret", "new_text": "secret" }),
            ),
            3 => ("workspace_mkdir", json!({ "path": format!("race/inner/d{}", i % 12) })),
            4 => ("workspace_delete", json!({ "path": format!("race/inner/d{}", (i + 6) % 12) })),
            _ => ("workspace_move", json!({ "source": "race/inner/f.txt", "destination": "race/inner/g.txt" })),
        };
        let res = call(&client, tool, args).await;
        if res.is_error == Some(true) {
            n_refused += 1;
        } else {
            n_ok += 1;
        }
        if i % 6 == 5 && res.is_error != Some(true) {
            // Put the file back for the next round (ignoring a refusal under the race).
            let back = json!({ "source": "race/inner/g.txt", "destination": "race/inner/f.txt" });
            let _ = call(&client, "workspace_move", back).await;
        }
        if i % 100 == 99 {
            assert_same_tree(&outside_before, &snapshot(&outside), "a racing mutation");
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert!(ws.path("race").is_dir() && !ws.path("race").is_symlink(), "the swapper restored the directory");
    assert_same_tree(&outside_before, &snapshot(&outside), "racing mutations");
    assert_same_tree(&evil_before, &snapshot(&ws.base.join("proj-evil")), "racing mutations");
    eprintln!("race: {} swaps; {n_ok} mutations succeeded, {n_refused} refused", swaps.load(Ordering::Relaxed));
    assert!(swaps.load(Ordering::Relaxed) > 0, "the swapper ran");
    assert!(n_ok > 0 && n_refused > 0, "the race both let mutations through and refused some");
    assert_eq!(temp_files(&ws.path("race")) + temp_files(&ws.path("race/inner")), 0, "failed writes clean up");
    assert_eq!(n_ok + n_refused, ITERATIONS);
}

// ---------------------------------------------------------------------------------------------
// Atomicity under SIGKILL (the real binary)

#[cfg(unix)]
#[expect(clippy::disallowed_methods, reason = "the atomicity test starts and kills the real server binary")]
fn spawn_server(ws: &TempWorkspace) -> std::process::Child {
    std::process::Command::new(crate::support::binary())
        .arg("--workspace")
        .arg(&ws.project)
        .arg("--no-admin")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn forgemcp")
}

/// The raw request lines of one session that writes `text` to `big.txt`.
#[cfg(unix)]
fn write_session(text: &str) -> Vec<u8> {
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"kill","version":"1"}}});
    let initialized = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    let write = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"workspace_write_file","arguments":{"path":"big.txt","text":text}}});
    format!("{init}\n{initialized}\n{write}\n").into_bytes()
}

/// The inode of `path` (a rename over it gives a new one).
#[cfg(unix)]
fn inode(path: &Path) -> u64 {
    std::os::unix::fs::MetadataExt::ino(&std::fs::symlink_metadata(path).unwrap())
}

#[cfg(unix)]
fn temp_names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .filter(|name| is_temp_name(name))
        .collect()
}

#[cfg(unix)]
fn temp_files(dir: &Path) -> usize {
    temp_names(dir).len()
}

/// When to kill a server that is writing.
#[cfg(unix)]
#[derive(Debug, Clone, Copy)]
enum Aim {
    /// This long after its temporary file appeared.
    AfterTempFile(Duration),
    /// This long after the request was sent.
    AfterStart(Duration),
    /// Never: let the write finish.
    Never,
}

/// Runs one server writing `session` into `ws` and kills it as `aim` says (or once the target was
/// replaced). Returns how long after the start the target was replaced, if it was.
#[cfg(unix)]
fn write_and_kill(ws: &TempWorkspace, session: &[u8], aim: Aim) -> Option<Duration> {
    use std::io::Write;
    let target = ws.path("big.txt");
    let before = inode(&target);
    let stale = temp_names(&ws.project);
    let mut child = spawn_server(ws);
    let mut stdin = child.stdin.take().unwrap();
    let session = session.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&session);
        stdin
    });
    let start = Instant::now();
    let mut seen: Option<Instant> = None;
    let mut replaced = None;
    loop {
        let now = Instant::now();
        if inode(&target) != before {
            replaced = Some(now - start);
            break;
        }
        if seen.is_none() && temp_names(&ws.project).iter().any(|name| !stale.contains(name)) {
            seen = Some(now);
        }
        let fire = match aim {
            Aim::AfterTempFile(delay) => seen.is_some_and(|at| now - at >= delay),
            Aim::AfterStart(delay) => now - start >= delay,
            Aim::Never => false,
        };
        if fire || now - start > Duration::from_secs(30) {
            break;
        }
        // Leave the server the CPU it needs while polling finely enough to catch its write.
        std::thread::sleep(Duration::from_micros(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    drop(writer.join());
    replaced
}

/// Kills servers while they write, alternating the content written, and checks after every kill
/// that the target holds the old or the new content. Three kills in four are aimed at the write
/// itself (a varying moment after the temporary file appears); the others at a moment spread over
/// one whole uninterrupted write. Returns how often the old and the new content survived and how
/// many kills left a temporary file behind.
#[cfg(unix)]
fn kill_during_writes(ws: &TempWorkspace, contents: &[String; 2], kills: u32) -> (u32, u32, u32) {
    let sessions = [write_session(&contents[0]), write_session(&contents[1])];
    let target = ws.path("big.txt");
    // Calibrate on one uninterrupted write (which leaves contents[1] in place).
    let full = write_and_kill(ws, &sessions[1], Aim::Never).expect("an uninterrupted write replaces the target");
    let mut old = 1;
    let (mut n_old, mut n_new, mut n_leftovers) = (0u32, 0u32, 0u32);
    let mut i = 0;
    // Past `kills`, go on (briefly) until a kill leaves a temporary file for the listing check.
    while i < kills || (temp_files(&ws.project) == 0 && i < kills + 50) {
        let new = 1 - old;
        let last = i + 1 >= kills;
        let aim = match i % 4 {
            _ if last => Aim::AfterTempFile(Duration::ZERO),
            0 => Aim::AfterStart(full.mul_f64(f64::from(i % 48) / 40.0)),
            _ => Aim::AfterTempFile(Duration::from_micros(u64::from(i % 12).pow(3) * 5)),
        };
        write_and_kill(ws, &sessions[new], aim);
        let now = std::fs::read_to_string(&target).unwrap();
        if now == contents[old] {
            n_old += 1;
        } else if now == contents[new] {
            n_new += 1;
            old = new;
        } else {
            panic!(
                "after kill {i} ({aim:?}) the target holds neither the old nor the new content ({} bytes)",
                now.len()
            );
        }
        n_leftovers += u32::try_from(temp_files(&ws.project)).unwrap();
        i += 1;
    }
    (n_old, n_new, n_leftovers)
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn sigkill_during_large_writes_leaves_the_old_or_the_new_content() {
    const KILLS: u32 = 200;
    let ws = Arc::new(workspace(""));
    let contents: [String; 2] = ["A".repeat(63) + "\n", "B".repeat(63) + "\n"].map(|line| line.repeat(16 * 1024));
    ws.write("big.txt", &contents[0]);
    let (n_old, n_new, n_leftovers) = {
        let ws = ws.clone();
        tokio::task::spawn_blocking(move || kill_during_writes(&ws, &contents, KILLS)).await.unwrap()
    };
    eprintln!("{KILLS} kills: old content {n_old}, new content {n_new}, temporary files left {n_leftovers}");
    assert!(n_old + n_new >= KILLS);
    assert!(n_leftovers > 0, "some kills landed while the temporary file existed");
    assert_eq!(temp_files(&ws.project), 1, "the last kill left its temporary file");

    // A later listing, file search and text search show no temporary file as user content.
    let client = ws.connect(TestClient::new()).await;
    let listed = structured(&call(&client, "workspace_list", json!({ "path": "project/" })).await).clone();
    let names: Vec<&str> = listed["entries"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["project/big.txt"], "{listed}");
    let found = structured(&call(&client, "workspace_find_files", json!({})).await).clone();
    assert_eq!(found["paths"], json!(["project/big.txt"]));
    let query = json!({ "query": "^(A+|B+)$", "regex": true, "max_matches": 1 });
    let searched = structured(&call(&client, "workspace_text_search", query).await).clone();
    assert_eq!(searched["matches_count"], 16 * 1024, "only big.txt's lines match: {}", searched["matches"]);
    assert_eq!(searched["matches"][0]["path"], "project/big.txt");
    // The next write in that directory removes what a killed server left behind.
    structured(&call(&client, "workspace_write_file", json!({ "path": "big.txt", "text": "done\n" })).await);
    let names: Vec<String> = std::fs::read_dir(&ws.project)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["big.txt"]);
}

// ---------------------------------------------------------------------------------------------
// diff.json snapshots

/// `diff.json` with one JSON object per line: the path, each change, each hunk header, each line.
fn compact(diff: &Value) -> String {
    let mut res = format!("path {}\n", diff["path"]);
    for change in diff["changes"].as_array().unwrap() {
        res.push_str(&format!("change {change}\n"));
    }
    for hunk in diff["hunks"].as_array().unwrap() {
        let mut header = hunk.clone();
        header.as_object_mut().unwrap().remove("lines");
        res.push_str(&format!("hunk {header}\n"));
        for line in hunk["lines"].as_array().unwrap() {
            res.push_str(&format!("  {line}\n"));
        }
    }
    res
}

async fn check_write_diff(before: &str, after: &str, expect: Expect) {
    let ws = workspace("");
    ws.write("f.txt", before);
    let client = ws.connect(TestClient::new()).await;
    let res = call(&client, "workspace_write_file", json!({ "path": "f.txt", "text": after })).await;
    expect.assert_eq(&compact(&diff_json(&client, structured(&res)).await));
}

#[tokio::test]
async fn diff_json_has_the_documented_shape() {
    let ws = workspace("//- f.txt\n    one\n    two");
    let client = ws.connect(TestClient::new()).await;
    let res =
        call(&client, "workspace_edit_file", json!({ "path": "f.txt", "old_text": "two", "new_text": "2" })).await;
    let diff = diff_json(&client, structured(&res)).await;
    expect![[r#"
        {
          "changes": [
            {
              "after_count": 1,
              "after_start": 2,
              "before_count": 1,
              "before_start": 2,
              "kind": "replace"
            }
          ],
          "hunks": [
            {
              "after_count": 2,
              "after_start": 1,
              "before_count": 2,
              "before_start": 1,
              "lines": [
                {
                  "after_line": 1,
                  "before_line": 1,
                  "kind": "context",
                  "spans": [],
                  "text": "one\n"
                },
                {
                  "after_line": null,
                  "before_line": 2,
                  "kind": "removed",
                  "spans": [
                    [
                      0,
                      3
                    ]
                  ],
                  "text": "two\n"
                },
                {
                  "after_line": 2,
                  "before_line": null,
                  "kind": "added",
                  "spans": [
                    [
                      0,
                      1
                    ]
                  ],
                  "text": "2\n"
                }
              ]
            }
          ],
          "path": "project/f.txt"
        }"#]]
    .assert_eq(&serde_json::to_string_pretty(&diff).unwrap());
}

#[tokio::test]
async fn diff_of_an_insertion() {
    check_write_diff(
        "a\nb\nc\nd\ne\nf\n",
        "a\nb\nc\nnew\nd\ne\nf\n",
        expect![[r#"
        path "project/f.txt"
        change {"after_count":1,"after_start":4,"before_count":0,"before_start":4,"kind":"insert"}
        hunk {"after_count":7,"after_start":1,"before_count":6,"before_start":1}
          {"after_line":1,"before_line":1,"kind":"context","spans":[],"text":"a\n"}
          {"after_line":2,"before_line":2,"kind":"context","spans":[],"text":"b\n"}
          {"after_line":3,"before_line":3,"kind":"context","spans":[],"text":"c\n"}
          {"after_line":4,"before_line":null,"kind":"added","spans":[[0,4]],"text":"new\n"}
          {"after_line":5,"before_line":4,"kind":"context","spans":[],"text":"d\n"}
          {"after_line":6,"before_line":5,"kind":"context","spans":[],"text":"e\n"}
          {"after_line":7,"before_line":6,"kind":"context","spans":[],"text":"f\n"}
    "#]],
    )
    .await;
}

#[tokio::test]
async fn diff_of_a_deletion() {
    check_write_diff(
        "1\n2\n3\n4\n5\n6\n7\n8\n9\n",
        "1\n2\n3\n4\n6\n7\n8\n9\n",
        expect![[r#"
        path "project/f.txt"
        change {"after_count":0,"after_start":5,"before_count":1,"before_start":5,"kind":"delete"}
        hunk {"after_count":6,"after_start":2,"before_count":7,"before_start":2}
          {"after_line":2,"before_line":2,"kind":"context","spans":[],"text":"2\n"}
          {"after_line":3,"before_line":3,"kind":"context","spans":[],"text":"3\n"}
          {"after_line":4,"before_line":4,"kind":"context","spans":[],"text":"4\n"}
          {"after_line":null,"before_line":5,"kind":"removed","spans":[[0,2]],"text":"5\n"}
          {"after_line":5,"before_line":6,"kind":"context","spans":[],"text":"6\n"}
          {"after_line":6,"before_line":7,"kind":"context","spans":[],"text":"7\n"}
          {"after_line":7,"before_line":8,"kind":"context","spans":[],"text":"8\n"}
    "#]],
    )
    .await;
}

#[tokio::test]
async fn diff_of_a_replacement_pairs_lines_and_marks_changed_characters() {
    check_write_diff(
        "int value = 1;\nreturn value;\n",
        "int count = 10;\nreturn count;\n",
        expect![[r#"
        path "project/f.txt"
        change {"after_count":2,"after_start":1,"before_count":2,"before_start":1,"kind":"replace"}
        hunk {"after_count":2,"after_start":1,"before_count":2,"before_start":1}
          {"after_line":null,"before_line":1,"kind":"removed","spans":[[4,7],[8,9]],"text":"int value = 1;\n"}
          {"after_line":null,"before_line":2,"kind":"removed","spans":[[7,10],[11,12]],"text":"return value;\n"}
          {"after_line":1,"before_line":null,"kind":"added","spans":[[4,6],[7,9],[13,14]],"text":"int count = 10;\n"}
          {"after_line":2,"before_line":null,"kind":"added","spans":[[7,9],[10,12]],"text":"return count;\n"}
    "#]],
    )
    .await;
}

#[tokio::test]
async fn diff_of_a_crlf_file_keeps_the_endings_in_the_text() {
    check_write_diff(
        "one\r\ntwo\r\nthree\r\n",
        "one\r\n2\r\nthree\n",
        expect![[r#"
        path "project/f.txt"
        change {"after_count":2,"after_start":2,"before_count":2,"before_start":2,"kind":"replace"}
        hunk {"after_count":3,"after_start":1,"before_count":3,"before_start":1}
          {"after_line":1,"before_line":1,"kind":"context","spans":[],"text":"one\r\n"}
          {"after_line":null,"before_line":2,"kind":"removed","spans":[[0,3]],"text":"two\r\n"}
          {"after_line":null,"before_line":3,"kind":"removed","spans":[[5,6]],"text":"three\r\n"}
          {"after_line":2,"before_line":null,"kind":"added","spans":[[0,1]],"text":"2\r\n"}
          {"after_line":3,"before_line":null,"kind":"added","spans":[],"text":"three\n"}
    "#]],
    )
    .await;
}

#[tokio::test]
async fn diff_of_a_file_without_a_final_newline() {
    check_write_diff(
        "a\nlast",
        "a\nlast\nmore",
        expect![[r#"
        path "project/f.txt"
        change {"after_count":2,"after_start":2,"before_count":1,"before_start":2,"kind":"replace"}
        hunk {"after_count":3,"after_start":1,"before_count":2,"before_start":1}
          {"after_line":1,"before_line":1,"kind":"context","spans":[],"text":"a\n"}
          {"after_line":null,"before_line":2,"kind":"removed","spans":[],"text":"last"}
          {"after_line":2,"before_line":null,"kind":"added","spans":[[4,5]],"text":"last\n"}
          {"after_line":3,"before_line":null,"kind":"added","spans":[[0,4]],"text":"more"}
    "#]],
    )
    .await;
}

#[tokio::test]
async fn diff_spans_count_code_points_not_bytes() {
    check_write_diff(
        "naïve café 😀 x\n",
        "naïve cafè 😀 y\n",
        expect![[r#"
        path "project/f.txt"
        change {"after_count":1,"after_start":1,"before_count":1,"before_start":1,"kind":"replace"}
        hunk {"after_count":1,"after_start":1,"before_count":1,"before_start":1}
          {"after_line":null,"before_line":1,"kind":"removed","spans":[[9,10],[13,14]],"text":"naïve café 😀 x\n"}
          {"after_line":1,"before_line":null,"kind":"added","spans":[[9,10],[13,14]],"text":"naïve cafè 😀 y\n"}
    "#]],
    )
    .await;
}

#[tokio::test]
async fn diff_of_an_identical_rewrite_is_empty() {
    check_write_diff(
        "same\r\ntext",
        "same\r\ntext",
        expect![[r#"
        path "project/f.txt"
    "#]],
    )
    .await;
}

#[tokio::test]
async fn write_over_a_crlf_file_with_a_byte_order_mark_keeps_both_unless_exact() {
    let ws = workspace("");
    ws.write("win.txt", "\u{feff}one\r\ntwo\r\n");
    ws.write("bom.txt", "\u{feff}x\n");
    let client = ws.connect(TestClient::new()).await;
    let res = call(&client, "workspace_write_file", json!({ "path": "win.txt", "text": "uno\ndos\ntres\n" })).await;
    assert_eq!(read(&ws, "win.txt"), "\u{feff}uno\r\ndos\r\ntres\r\n");
    assert_eq!(
        text(&res),
        "Overwrote project/win.txt (2 lines removed, 3 lines added). Kept the file's CRLF line endings and UTF-8 \
         byte-order mark (the text had LF endings and no mark); exact: true writes the text as given."
    );
    let res = call(&client, "workspace_write_file", json!({ "path": "bom.txt", "text": "y\n" })).await;
    assert_eq!(read(&ws, "bom.txt"), "\u{feff}y\n");
    assert!(
        text(&res).ends_with(
            "Kept the file's UTF-8 byte-order mark (the text had none); exact: true writes the text as given."
        ),
        "{}",
        text(&res)
    );
    // Text already in the file's form, or `exact`, is written as given and says nothing more.
    let res = call(&client, "workspace_write_file", json!({ "path": "win.txt", "text": "\u{feff}a\r\n" })).await;
    assert_eq!(
        (read(&ws, "win.txt"), text(&res)),
        ("\u{feff}a\r\n".to_owned(), "Overwrote project/win.txt (3 lines removed, 1 line added).")
    );
    let res = call(&client, "workspace_write_file", json!({ "path": "win.txt", "text": "b\n", "exact": true })).await;
    assert_eq!(
        (read(&ws, "win.txt"), text(&res)),
        ("b\n".to_owned(), "Overwrote project/win.txt (1 line removed, 1 line added).")
    );
}

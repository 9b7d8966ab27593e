//! Workspace read tools, their Markdown resources, the mirrors and the completions, through the
//! MCP surface (in-process client).

use std::time::Duration;

use chrono::{DateTime, Utc};
use expect_test::expect;
use rmcp::model::{ErrorCode, ResourceContents};
use serde_json::{Value, json};

use crate::support::{
    TempWorkspace, TestClient, call, complete, progress_log, read_resource, resource_error, resource_text, structured,
    text, tool_error,
};

const NOT_FOUND: i32 = ErrorCode::RESOURCE_NOT_FOUND.0;
const INVALID_PARAMS: i32 = ErrorCode::INVALID_PARAMS.0;

/// A small project: sources, a dot file, a dot directory, a build directory.
const PROJECT: &str = r#"
//- CMakeLists.txt
    project(demo)
//- .clang-format
    BasedOnStyle: LLVM
//- .git/config
    [core]
//- build/out.o
    obj
//- include/demo.h
    int demo();
//- src/main.cpp
    int main() {}
//- src/util/strings.cpp
    int strings;
//- src/util/deep/leaf.h
    int leaf;
"#;

/// `path → kind` lines of a structured tree, children indented.
fn outline(entries: &Value) -> String {
    fn walk(entries: &Value, level: usize, out: &mut String) {
        for entry in entries.as_array().expect("entries are an array") {
            let children = &entry["children"];
            let state = match (entry["kind"].as_str().unwrap(), children.is_null()) {
                ("directory", true) => " (not expanded)",
                _ => "",
            };
            out.push_str(&format!(
                "{}{} {}{state}\n",
                "  ".repeat(level),
                entry["path"].as_str().unwrap(),
                entry["kind"].as_str().unwrap()
            ));
            if !children.is_null() {
                walk(children, level + 1, out);
            }
        }
    }
    let mut out = String::new();
    walk(entries, 0, &mut out);
    out
}

/// Waits until the client has seen at least one progress notification, then returns them all.
async fn progress_after_call(client: &TestClient) -> Vec<(f64, Option<f64>, Option<String>)> {
    for _ in 0..200 {
        if !client.progress.lock().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    progress_log(client)
}

fn is_rfc3339_utc(value: &Value) -> bool {
    let text = value.as_str().unwrap_or_default();
    text.ends_with('Z') && DateTime::parse_from_rfc3339(text).is_ok()
}

// ---------------------------------------------------------------------------------------------
// workspace_list

#[tokio::test]
async fn list_defaults_to_the_project_root_one_level_deep() {
    let ws = TempWorkspace::new(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    let res = call(&client, "workspace_list", json!({})).await;
    let value = structured(&res);
    assert_eq!(value["path"], "project/");
    assert_eq!(value["resources"], json!({}));
    expect![[r#"
        project/.clang-format file
        project/CMakeLists.txt file
        project/build directory (not expanded)
        project/include directory (not expanded)
        project/src directory (not expanded)
    "#]]
    .assert_eq(&outline(&value["entries"]));
    expect![[r#"
        project/
        ├── .clang-format
        ├── CMakeLists.txt
        ├── build/ (not expanded)
        ├── include/ (not expanded)
        └── src/ (not expanded)"#]]
    .assert_eq(text(&res));
}

#[tokio::test]
async fn list_depth_limits_levels_and_null_lists_the_whole_tree() {
    let ws = TempWorkspace::new(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    let res = call(&client, "workspace_list", json!({ "path": "src", "depth": 2 })).await;
    assert_eq!(structured(&res)["path"], "project/src");
    expect![[r#"
        project/src/main.cpp file
        project/src/util directory
          project/src/util/deep directory (not expanded)
          project/src/util/strings.cpp file
    "#]]
    .assert_eq(&outline(&structured(&res)["entries"]));

    let res = call(&client, "workspace_list", json!({ "path": "project/src/", "depth": null })).await;
    expect![[r#"
        project/src/
        ├── main.cpp
        └── util/
            ├── deep/
            │   └── leaf.h
            └── strings.cpp"#]]
    .assert_eq(text(&res));
}

#[tokio::test]
async fn list_hides_dot_directories_unless_include_hidden() {
    let ws = TempWorkspace::new(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    let paths = |res: &rmcp::model::CallToolResult| -> Vec<String> {
        structured(res)["entries"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap().to_owned()).collect()
    };
    let hidden = call(&client, "workspace_list", json!({})).await;
    assert!(!paths(&hidden).contains(&"project/.git".to_owned()));
    assert!(paths(&hidden).contains(&"project/.clang-format".to_owned()), "dot files stay visible");
    let shown = call(&client, "workspace_list", json!({ "include_hidden": true, "depth": 2 })).await;
    assert!(paths(&shown).contains(&"project/.git".to_owned()));
    let git = structured(&shown)["entries"].as_array().unwrap().iter().find(|e| e["path"] == "project/.git").unwrap();
    assert_eq!(git["children"][0]["path"], "project/.git/config");
}

#[tokio::test]
async fn list_sorts_children_by_byte_order_and_marks_empty_directories() {
    let ws = TempWorkspace::new("");
    for name in ["b.txt", "B.txt", "a.txt", "_x", "é.txt", "Z.txt"] {
        ws.write(name, "x");
    }
    std::fs::create_dir(ws.path("empty")).unwrap();
    let client = ws.connect(TestClient::new()).await;
    let res = call(&client, "workspace_list", json!({ "depth": null })).await;
    expect![[r#"
        project/
        ├── B.txt
        ├── Z.txt
        ├── _x
        ├── a.txt
        ├── b.txt
        ├── empty/ (empty)
        └── é.txt"#]]
    .assert_eq(text(&res));
    let empty = structured(&res)["entries"].as_array().unwrap().iter().find(|e| e["path"] == "project/empty").cloned();
    assert_eq!(empty.unwrap()["children"], json!([]));

    std::fs::create_dir(ws.path("empty/nothing")).unwrap();
    let res = call(&client, "workspace_list", json!({ "path": "empty/nothing" })).await;
    assert_eq!(text(&res), "project/empty/nothing/\n(empty)");
    assert_eq!(structured(&res)["entries"], json!([]));
}

#[cfg(unix)]
#[tokio::test]
async fn list_shows_links_without_descending_and_refuses_to_start_through_one() {
    let ws = TempWorkspace::new(PROJECT);
    std::os::unix::fs::symlink(ws.path("src"), ws.path("src_link")).unwrap();
    std::os::unix::fs::symlink(ws.path("src/main.cpp"), ws.path("main_link.cpp")).unwrap();
    let client = ws.connect(TestClient::new()).await;
    let res = call(&client, "workspace_list", json!({ "depth": null })).await;
    let entries = structured(&res)["entries"].as_array().unwrap().clone();
    let link = entries.iter().find(|e| e["path"] == "project/src_link").unwrap();
    assert_eq!(link["kind"], "symlink");
    assert_eq!(link["children"], Value::Null);
    let file_link = entries.iter().find(|e| e["path"] == "project/main_link.cpp").unwrap();
    assert_eq!(file_link["kind"], "symlink");
    assert!(text(&res).ends_with("\n└── src_link (symlink)"), "{}", text(&res));

    let res = call(&client, "workspace_list", json!({ "path": "src_link" })).await;
    assert!(tool_error(&res).contains("link"), "{}", text(&res));
    let res = call(&client, "workspace_list", json!({ "path": "src_link/util" })).await;
    assert!(tool_error(&res).contains("`project/src_link`"), "{}", text(&res));
}

#[tokio::test]
async fn list_rejects_files_missing_paths_bad_depths_and_external_paths() {
    let ws = TempWorkspace::new(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    let res = call(&client, "workspace_list", json!({ "path": "src/main.cpp" })).await;
    assert_eq!(tool_error(&res), "`project/src/main.cpp` is not a directory.");
    let res = call(&client, "workspace_list", json!({ "path": "nope" })).await;
    assert_eq!(tool_error(&res), "`project/nope` does not exist.");
    let res = call(&client, "workspace_list", json!({ "depth": 0 })).await;
    assert!(tool_error(&res).starts_with("Invalid argument `depth`"), "{}", text(&res));
    let res = call(&client, "workspace_list", json!({ "depth": "all" })).await;
    assert!(tool_error(&res).starts_with("Invalid argument `depth`"), "{}", text(&res));
    let res = call(&client, "workspace_list", json!({ "path": "root/tmp" })).await;
    assert!(tool_error(&res).contains("outside the managed roots"), "{}", text(&res));
    let res = call(&client, "workspace_list", json!({ "path": "a//b" })).await;
    assert!(tool_error(&res).starts_with("Invalid argument `path`"), "{}", text(&res));
    let res = call(&client, "workspace_list", json!({ "hidden": true })).await;
    assert!(tool_error(&res).contains("`hidden`"), "{}", text(&res));
}

#[tokio::test]
async fn list_lists_storage_once_created() {
    let ws = TempWorkspace::new("");
    let client = ws.connect(TestClient::new()).await;
    let res = call(&client, "workspace_list", json!({ "path": "storage/" })).await;
    assert_eq!(structured(&res)["path"], "storage/");
    assert_eq!(text(&res), "storage/\n(empty)");
}

#[tokio::test]
async fn list_reports_a_start_then_one_update_per_entry_without_total() {
    let ws = TempWorkspace::new(PROJECT);
    let handler = TestClient::new();
    let client = ws.connect(handler.clone()).await;
    call(&client, "workspace_list", json!({ "path": "src", "depth": null })).await;
    let log = progress_after_call(&handler).await;
    assert_eq!(log[0], (0.0, None, Some("Starting directory scan".to_owned())));
    let rest: Vec<_> = log[1..].iter().map(|(p, t, m)| (*p, *t, m.clone().unwrap())).collect();
    assert_eq!(
        rest,
        vec![
            (1.0, None, "project/src/main.cpp".to_owned()),
            (2.0, None, "project/src/util".to_owned()),
            (3.0, None, "project/src/util/deep".to_owned()),
            (4.0, None, "project/src/util/deep/leaf.h".to_owned()),
            (5.0, None, "project/src/util/strings.cpp".to_owned()),
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// workspace_find_files

async fn found_paths(client: &rmcp::service::RunningService<rmcp::RoleClient, TestClient>, args: Value) -> Vec<String> {
    let res = call(client, "workspace_find_files", args).await;
    let value = structured(&res);
    let paths: Vec<String> =
        value["paths"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_owned()).collect();
    let files: Vec<&str> = value["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths, files, "paths and files agree");
    paths
}

#[tokio::test]
async fn find_files_defaults_to_every_file_outside_dot_directories() {
    let ws = TempWorkspace::new(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    assert_eq!(
        found_paths(&client, json!({})).await,
        [
            "project/.clang-format",
            "project/CMakeLists.txt",
            "project/build/out.o",
            "project/include/demo.h",
            "project/src/main.cpp",
            "project/src/util/deep/leaf.h",
            "project/src/util/strings.cpp",
        ]
    );
}

#[tokio::test]
async fn find_files_patterns_without_a_slash_match_file_names() {
    let ws = TempWorkspace::new(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    assert_eq!(
        found_paths(&client, json!({ "pattern": "*.cpp" })).await,
        ["project/src/main.cpp", "project/src/util/strings.cpp"]
    );
    assert_eq!(
        found_paths(&client, json!({ "pattern": "*.h", "path": "src" })).await,
        ["project/src/util/deep/leaf.h"]
    );
    assert!(found_paths(&client, json!({ "pattern": "*.CPP" })).await.is_empty(), "case-sensitive");
}

#[tokio::test]
async fn find_files_patterns_with_a_slash_match_relative_paths() {
    let ws = TempWorkspace::new(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    assert_eq!(found_paths(&client, json!({ "pattern": "src/*.cpp" })).await, ["project/src/main.cpp"]);
    assert_eq!(
        found_paths(&client, json!({ "pattern": "src/**/*.cpp" })).await,
        ["project/src/main.cpp", "project/src/util/strings.cpp"]
    );
    assert_eq!(
        found_paths(&client, json!({ "pattern": "**/*.h" })).await,
        ["project/include/demo.h", "project/src/util/deep/leaf.h"]
    );
    assert_eq!(
        found_paths(&client, json!({ "pattern": "util/*", "path": "src" })).await,
        ["project/src/util/strings.cpp"]
    );
    assert!(found_paths(&client, json!({ "pattern": "util/*" })).await.is_empty(), "relative to the search directory");
}

#[tokio::test]
async fn find_files_in_or_below_a_dot_directory_is_empty() {
    let ws = TempWorkspace::new(PROJECT);
    ws.write(".github/workflows/ci.yml", "on: push");
    let client = ws.connect(TestClient::new()).await;
    assert!(found_paths(&client, json!({ "path": ".git" })).await.is_empty());
    assert!(found_paths(&client, json!({ "path": ".github/workflows" })).await.is_empty());
    assert!(found_paths(&client, json!({ "path": ".git/config" })).await.is_empty());
    assert_eq!(found_paths(&client, json!({ "path": ".clang-format" })).await, ["project/.clang-format"]);
}

#[tokio::test]
async fn find_files_on_a_file_tests_just_that_file() {
    let ws = TempWorkspace::new(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    assert_eq!(found_paths(&client, json!({ "path": "src/main.cpp" })).await, ["project/src/main.cpp"]);
    assert_eq!(
        found_paths(&client, json!({ "path": "src/main.cpp", "pattern": "main.*" })).await,
        ["project/src/main.cpp"]
    );
    assert!(found_paths(&client, json!({ "path": "src/main.cpp", "pattern": "*.h" })).await.is_empty());
}

#[cfg(unix)]
#[tokio::test]
async fn find_files_never_follows_links() {
    let ws = TempWorkspace::new(PROJECT);
    std::os::unix::fs::symlink(ws.path("src"), ws.path("linked_src")).unwrap();
    std::os::unix::fs::symlink(ws.path("src/main.cpp"), ws.path("linked.cpp")).unwrap();
    let client = ws.connect(TestClient::new()).await;
    assert_eq!(
        found_paths(&client, json!({ "pattern": "*.cpp" })).await,
        ["project/src/main.cpp", "project/src/util/strings.cpp"]
    );
    let res = call(&client, "workspace_find_files", json!({ "path": "linked_src" })).await;
    assert!(tool_error(&res).contains("link"), "{}", text(&res));
}

#[tokio::test]
async fn find_files_rejects_bad_patterns_and_paths() {
    let ws = TempWorkspace::new(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    let res = call(&client, "workspace_find_files", json!({ "pattern": "" })).await;
    assert_eq!(tool_error(&res), "Invalid argument `pattern`: the file pattern is empty.");
    let res = call(&client, "workspace_find_files", json!({ "pattern": "[a" })).await;
    assert!(
        tool_error(&res).starts_with("Invalid argument `pattern`: `[a` is not a valid file pattern"),
        "{}",
        text(&res)
    );
    let res = call(&client, "workspace_find_files", json!({ "path": "missing" })).await;
    assert_eq!(tool_error(&res), "`project/missing` does not exist.");
    let res = call(&client, "workspace_find_files", json!({ "path": "../x" })).await;
    assert!(tool_error(&res).starts_with("Invalid argument `path`"), "{}", text(&res));
}

#[tokio::test]
async fn find_files_reports_metadata_text_and_progress() {
    let ws = TempWorkspace::new("//- src/a.cpp\n    int a;\n//- src/b.h\n    x");
    let handler = TestClient::new();
    let client = ws.connect(handler.clone()).await;
    let res = call(&client, "workspace_find_files", json!({ "pattern": "*.cpp" })).await;
    let file = &structured(&res)["files"][0];
    assert_eq!(file["path"], "project/src/a.cpp");
    assert_eq!(file["size_bytes"], 7);
    assert!(is_rfc3339_utc(&file["modified_at"]), "{}", file["modified_at"]);
    // Sizes and times stay in the structured result.
    assert_eq!(text(&res), "Files matching \"*.cpp\" in project/.\nFound 1 file.\n\nproject/src/a.cpp");
    let log = progress_after_call(&handler).await;
    assert!(!log.is_empty());
    assert!(
        log.iter().all(|(_, total, message)| total.is_none() && message.as_deref() == Some("Files visited")),
        "{log:?}"
    );
    assert_eq!(log.last().unwrap().0, 2.0, "both files were visited: {log:?}");
}

// ---------------------------------------------------------------------------------------------
// workspace_file_info

#[tokio::test]
async fn file_info_reports_size_times_and_owner() {
    let ws = TempWorkspace::new("//- src/main.cpp\n    int main() {}");
    let handler = TestClient::new();
    let client = ws.connect(handler.clone()).await;
    let res = call(&client, "workspace_file_info", json!({ "path": "./src/main.cpp" })).await;
    let value = structured(&res);
    assert_eq!(value["path"], "project/src/main.cpp");
    assert_eq!(value["size_bytes"], 14);
    assert!(is_rfc3339_utc(&value["modified_at"]));
    assert!(value["created_at"].is_null() || is_rfc3339_utc(&value["created_at"]), "{}", value["created_at"]);
    assert!(value["owner"].is_null() || value["owner"].is_string());
    #[cfg(unix)]
    assert!(value["owner"].is_string(), "Unix reports the owner's account name");
    assert_eq!(value["resources"], json!({}));
    let modified_at: DateTime<Utc> = value["modified_at"].as_str().unwrap().parse().unwrap();
    assert!((Utc::now() - modified_at).num_minutes() < 10);

    let lines: Vec<&str> = text(&res).lines().collect();
    assert_eq!(lines[0], "project/src/main.cpp");
    assert_eq!(lines[1], "  Size: 14 bytes");
    assert!(lines[2].starts_with("  Created: "), "{lines:?}");
    assert_eq!(lines[3], format!("  Modified: {}", value["modified_at"].as_str().unwrap()));
    assert!(lines[4].starts_with("  Owner: "), "{lines:?}");

    let log = progress_after_call(&handler).await;
    assert_eq!(log.iter().map(|(p, t, _)| (*p, *t)).collect::<Vec<_>>(), vec![(0.0, Some(1.0)), (1.0, Some(1.0))]);
}

#[tokio::test]
async fn file_info_needs_an_existing_managed_regular_file() {
    let ws = TempWorkspace::new(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    let res = call(&client, "workspace_file_info", json!({ "path": "src" })).await;
    assert_eq!(tool_error(&res), "`project/src` is not a regular file.");
    let res = call(&client, "workspace_file_info", json!({ "path": "src/nope.cpp" })).await;
    assert_eq!(tool_error(&res), "`project/src/nope.cpp` does not exist.");
    let res = call(&client, "workspace_file_info", json!({ "path": "root/etc/hostname" })).await;
    assert!(tool_error(&res).contains("outside the managed roots"), "{}", text(&res));
    let res = call(&client, "workspace_file_info", json!({})).await;
    assert!(tool_error(&res).contains("`path`"), "{}", text(&res));
    let res = call(&client, "workspace_file_info", json!({ "path": ".git/config" })).await;
    assert_eq!(structured(&res)["path"], "project/.git/config", "explicit reads may enter dot directories");
}

// ---------------------------------------------------------------------------------------------
// Markdown templates

const MD: &str = "text/markdown";

#[tokio::test]
async fn list_template_defaults_to_project_depth_one_without_hidden() {
    let ws = TempWorkspace::new(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    expect![[r#"
        # Directory tree

        ```
        project/
        ├── .clang-format
        ├── CMakeLists.txt
        ├── build/ (not expanded)
        ├── include/ (not expanded)
        └── src/ (not expanded)
        ```
    "#]]
    .assert_eq(&resource_text(&client, "forgemcp://workspace/list", MD).await);
}

#[tokio::test]
async fn list_template_takes_path_depth_and_include_hidden() {
    let ws = TempWorkspace::new(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    expect![[r#"
        # Directory tree

        ```
        project/src/
        ├── main.cpp
        └── util/
            ├── deep/
            │   └── leaf.h
            └── strings.cpp
        ```
    "#]]
    .assert_eq(&resource_text(&client, "forgemcp://workspace/list?path=project/src&depth=all", MD).await);
    let two = resource_text(&client, "forgemcp://workspace/list?depth=2&include_hidden=true", MD).await;
    assert!(two.contains("├── .git/\n│   └── config\n"), "{two}");
    assert!(two.contains("\n    └── util/ (not expanded)\n"), "{two}");
    let hidden = resource_text(&client, "forgemcp://workspace/list?include_hidden=false&depth=all", MD).await;
    assert!(!hidden.contains(".git"), "{hidden}");
}

#[tokio::test]
async fn list_template_rejects_bad_parameters() {
    let ws = TempWorkspace::new(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    for (query, needle) in [
        ("depth=0", "`depth`"),
        ("depth=x", "`depth`"),
        ("depth=", "`depth`"),
        ("include_hidden=yes", "`include_hidden`"),
        ("include_hidden=1", "`include_hidden`"),
        ("colour=blue", "`colour`"),
        ("path=src", "`path`"),
        ("path=project/a/../b", "`path`"),
        ("path=project/src/main.cpp", "not a directory"),
    ] {
        let (code, message) = resource_error(&client, &format!("forgemcp://workspace/list?{query}")).await;
        assert_eq!(code, INVALID_PARAMS, "{query}: {message}");
        assert!(message.contains(needle), "{query}: {message}");
    }
    for query in ["path=project/missing", "path=root/etc"] {
        let (code, message) = resource_error(&client, &format!("forgemcp://workspace/list?{query}")).await;
        assert_eq!(code, NOT_FOUND, "{query}: {message}");
    }
}

#[tokio::test]
async fn find_files_template_links_text_mirrors() {
    let ws = TempWorkspace::new(PROJECT);
    ws.write("src/my file+1.cpp", "x");
    let client = ws.connect(TestClient::new()).await;
    expect![[r#"
        # Files

        - [project/src/main.cpp](forgemcp://workspace/file/project/src/main.cpp)
        - [project/src/my file+1.cpp](forgemcp://workspace/file/project/src/my%20file%2B1.cpp)
        - [project/src/util/strings.cpp](forgemcp://workspace/file/project/src/util/strings.cpp)
    "#]]
    .assert_eq(&resource_text(&client, "forgemcp://workspace/find-files?pattern=*.cpp", MD).await);
    let all = resource_text(&client, "forgemcp://workspace/find-files", MD).await;
    assert!(all.contains("(forgemcp://workspace/file/project/.clang-format)"), "{all}");
    assert!(!all.contains(".git/"), "{all}");
    let scoped =
        resource_text(&client, "forgemcp://workspace/find-files?path=project/src/util&pattern=**/*.h", MD).await;
    assert_eq!(
        scoped,
        "# Files\n\n- [project/src/util/deep/leaf.h](forgemcp://workspace/file/project/src/util/deep/leaf.h)\n"
    );
    let none = resource_text(&client, "forgemcp://workspace/find-files?pattern=*.rs", MD).await;
    assert_eq!(none, "# Files\n\nNo files found.\n");

    // The linked mirror resolves to the file.
    let text = resource_text(&client, "forgemcp://workspace/file/project/src/my%20file%2B1.cpp", "text/plain").await;
    assert_eq!(text, "x");
}

#[tokio::test]
async fn find_files_template_rejects_bad_parameters() {
    let ws = TempWorkspace::new(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    for (query, needle) in [
        ("pattern=", "`pattern`"),
        ("pattern=%5Ba", "`pattern`"),
        ("path=", "`path`"),
        ("path=./src", "`path`"),
        ("regex=true", "`regex`"),
    ] {
        let (code, message) = resource_error(&client, &format!("forgemcp://workspace/find-files?{query}")).await;
        assert_eq!(code, INVALID_PARAMS, "{query}: {message}");
        assert!(message.contains(needle), "{query}: {message}");
    }
    let (code, _) = resource_error(&client, "forgemcp://workspace/find-files?path=project/missing").await;
    assert_eq!(code, NOT_FOUND);
}

#[tokio::test]
async fn file_info_template_is_a_table_and_needs_a_path() {
    let ws = TempWorkspace::new("//- src/main.cpp\n    int main() {}");
    let client = ws.connect(TestClient::new()).await;
    let md = resource_text(&client, "forgemcp://workspace/file-info?path=project/src/main.cpp", MD).await;
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(
        lines[..5],
        ["# File information", "", "| Field | Value |", "| --- | --- |", "| Path | project/src/main.cpp |"]
    );
    assert_eq!(lines[5], "| Size | 14 bytes |");
    assert!(lines[6].starts_with("| Created | "), "{md}");
    assert!(lines[7].starts_with("| Modified | ") && lines[7].ends_with(" UTC |"), "{md}");
    assert!(lines[8].starts_with("| Owner | "), "{md}");

    let (code, message) = resource_error(&client, "forgemcp://workspace/file-info").await;
    assert_eq!(code, INVALID_PARAMS);
    assert!(message.contains("`path`"), "{message}");
    let (code, _) = resource_error(&client, "forgemcp://workspace/file-info?path=project/src").await;
    assert_eq!(code, INVALID_PARAMS);
    let (code, _) = resource_error(&client, "forgemcp://workspace/file-info?path=project/nope.cpp").await;
    assert_eq!(code, NOT_FOUND);
    let (code, _) = resource_error(&client, "forgemcp://workspace/file-info?path=project/src/main.cpp&x=1").await;
    assert_eq!(code, INVALID_PARAMS);
}

#[tokio::test]
async fn markdown_templates_report_the_same_progress_as_their_tools() {
    let ws = TempWorkspace::new(PROJECT);
    let handler = TestClient::new();
    let client = ws.connect(handler.clone()).await;
    resource_text(&client, "forgemcp://workspace/list?path=project/include", MD).await;
    let log = progress_after_call(&handler).await;
    assert_eq!(log[0].2.as_deref(), Some("Starting directory scan"));
    assert_eq!(log.last().unwrap().2.as_deref(), Some("project/include/demo.h"));

    handler.progress.lock().clear();
    resource_text(&client, "forgemcp://workspace/find-files?path=project/include", MD).await;
    let log = progress_after_call(&handler).await;
    assert!(log.iter().all(|(_, _, m)| m.as_deref() == Some("Files visited")), "{log:?}");

    handler.progress.lock().clear();
    resource_text(&client, "forgemcp://workspace/file-info?path=project/include/demo.h", MD).await;
    let log = progress_after_call(&handler).await;
    assert_eq!(log.iter().map(|(p, t, _)| (*p, *t)).collect::<Vec<_>>(), vec![(0.0, Some(1.0)), (1.0, Some(1.0))]);
}

// ---------------------------------------------------------------------------------------------
// Mirrors

#[tokio::test]
async fn text_mirror_decodes_percent_twenty_and_keeps_plus() {
    let ws = TempWorkspace::new("");
    ws.write("src/my file.cpp", "spaced\n");
    ws.write("src/a+b.cpp", "plus\n");
    let client = ws.connect(TestClient::new()).await;
    assert_eq!(
        resource_text(&client, "forgemcp://workspace/file/project/src/my%20file.cpp", "text/plain").await,
        "spaced\n"
    );
    assert_eq!(resource_text(&client, "forgemcp://workspace/file/project/src/a+b.cpp", "text/plain").await, "plus\n");
    let (code, _) = resource_error(&client, "forgemcp://workspace/file/project/src/my+file.cpp").await;
    assert_eq!(code, NOT_FOUND, "`+` is not a space");
}

#[tokio::test]
async fn raw_mirror_returns_exact_bytes() {
    let ws = TempWorkspace::new("");
    ws.write("bin/data.bin", [0u8, 159, 146, 150, b'\n']);
    let client = ws.connect(TestClient::new()).await;
    let contents = read_resource(&client, "forgemcp://workspace/raw/project/bin/data.bin").await.unwrap();
    match &contents[0] {
        ResourceContents::BlobResourceContents { blob, mime_type, .. } => {
            assert_eq!(mime_type.as_deref(), Some("application/octet-stream"));
            use base64::Engine;
            let bytes = base64::engine::general_purpose::STANDARD.decode(blob).unwrap();
            assert_eq!(bytes, [0u8, 159, 146, 150, b'\n']);
        }
        other => panic!("expected a blob, got {other:?}"),
    }
    let (code, _) = resource_error(&client, "forgemcp://workspace/file/project/bin/data.bin").await;
    assert_eq!(code, INVALID_PARAMS, "binary files have no text mirror");
}

#[tokio::test]
async fn mirrors_refuse_root_shorthands_missing_files_and_encoded_separators() {
    let ws = TempWorkspace::new("//- src/main.cpp\n    int main() {}\n//- .git/config\n    [core]");
    let client = ws.connect(TestClient::new()).await;
    for mirror in ["file", "raw"] {
        for (rest, code) in [
            ("root/etc/hostname", NOT_FOUND),
            ("src/main.cpp", NOT_FOUND),
            ("project/src/missing.cpp", NOT_FOUND),
            ("project/src%2Fmain.cpp", INVALID_PARAMS),
            ("project/src/..%2F..%2Fetc", INVALID_PARAMS),
            ("project/src/%zz", INVALID_PARAMS),
        ] {
            let uri = format!("forgemcp://workspace/{mirror}/{rest}");
            let (got, message) = resource_error(&client, &uri).await;
            assert_eq!(got, code, "{uri}: {message}");
        }
    }
    let config = resource_text(&client, "forgemcp://workspace/file/project/.git/config", "text/plain").await;
    assert_eq!(config, "[core]\n", "mirrors read files under dot directories");
}

// ---------------------------------------------------------------------------------------------
// Templates list and completions

#[tokio::test]
async fn resource_templates_list_every_registered_template() {
    let ws = TempWorkspace::new("");
    let client = ws.connect(TestClient::new()).await;
    let templates = client.list_all_resource_templates().await.expect("resources/templates/list");
    let uris: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    for (uri, mime) in [
        ("forgemcp://workspace/file{/path*}", "text/plain"),
        ("forgemcp://workspace/raw{/path*}", "application/octet-stream"),
        ("forgemcp://workspace/list{?path,depth,include_hidden}", MD),
        ("forgemcp://workspace/find-files{?pattern,path}", MD),
        ("forgemcp://workspace/file-info{?path}", MD),
        ("forgemcp://workspace/results/{result_id}/{name}.json", "application/json"),
        ("forgemcp://workspace/results/{result_id}/{name}.md", MD),
    ] {
        let template = templates.iter().find(|t| t.uri_template == uri).unwrap_or_else(|| panic!("{uri} in {uris:?}"));
        assert_eq!(template.mime_type.as_deref(), Some(mime), "{uri}");
        assert!(template.description.is_some() && template.icons.is_some(), "{uri}");
    }
}

const LIST: &str = "forgemcp://workspace/list{?path,depth,include_hidden}";
const FIND: &str = "forgemcp://workspace/find-files{?pattern,path}";
const INFO: &str = "forgemcp://workspace/file-info{?path}";
const FILE: &str = "forgemcp://workspace/file{/path*}";
const RAW: &str = "forgemcp://workspace/raw{/path*}";

#[tokio::test]
async fn path_completions_offer_roots_then_children() {
    let ws = TempWorkspace::new(PROJECT);
    let client = ws.connect(TestClient::new()).await;
    for template in [LIST, FIND, INFO, FILE, RAW] {
        assert_eq!(complete(&client, template, "path", "", &[]).await, ["project/", "storage/"], "{template}");
        assert_eq!(complete(&client, template, "path", "pro", &[]).await, ["project/"], "{template}");
    }
    // Directories only for list and find-files.
    for template in [LIST, FIND] {
        assert_eq!(complete(&client, template, "path", "project/src/", &[]).await, ["project/src/util/"], "{template}");
        assert_eq!(
            complete(&client, template, "path", "project/", &[]).await,
            ["project/.git/", "project/build/", "project/include/", "project/src/"],
            "{template}"
        );
    }
    // Files too for file, raw and file-info.
    for template in [INFO, FILE, RAW] {
        assert_eq!(
            complete(&client, template, "path", "project/src/", &[]).await,
            ["project/src/main.cpp", "project/src/util/"],
            "{template}"
        );
        assert_eq!(complete(&client, template, "path", "project/src/m", &[]).await, ["project/src/main.cpp"]);
    }
    assert!(complete(&client, LIST, "path", "project/missing/", &[]).await.is_empty());
    assert!(complete(&client, LIST, "path", "root/", &[]).await.is_empty());
}

#[cfg(unix)]
#[tokio::test]
async fn path_completions_skip_links() {
    let ws = TempWorkspace::new("//- src/main.cpp\n    x");
    std::os::unix::fs::symlink(ws.path("src"), ws.path("src_link")).unwrap();
    let client = ws.connect(TestClient::new()).await;
    assert_eq!(complete(&client, FILE, "path", "project/", &[]).await, ["project/src/"]);
}

#[tokio::test]
async fn depth_and_boolean_completions() {
    let ws = TempWorkspace::new("");
    let client = ws.connect(TestClient::new()).await;
    assert_eq!(complete(&client, LIST, "depth", "", &[]).await, ["1", "2", "3", "all"]);
    assert_eq!(complete(&client, LIST, "depth", "a", &[]).await, ["all"]);
    assert_eq!(complete(&client, LIST, "include_hidden", "", &[]).await, ["false", "true"]);
    assert_eq!(complete(&client, LIST, "include_hidden", "t", &[]).await, ["true"]);
    assert!(complete(&client, FIND, "pattern", "*", &[]).await.is_empty(), "patterns are free text");
}

#[tokio::test]
async fn reads_keep_to_a_byte_budget_clip_long_lines_and_name_a_byte_order_mark() {
    let ws = TempWorkspace::new("");
    // 4,000 lines of 40 bytes: 160 KB, beyond the default budget with or without end_line.
    let lines: String = (1..=4000).map(|n| format!("{n:>38}\n")).collect();
    ws.write("big.txt", &lines);
    ws.write("gen.json", format!("{{\"k\":[{}]}}\n{{}}\n", "1,".repeat(126_000)));
    ws.write("bom.txt", "\u{feff}first\r\nsecond\r\n");
    let client = ws.connect(TestClient::new()).await;
    let read = async |args: Value| {
        let res = call(&client, "workspace_read_file", args).await;
        (text(&res).to_owned(), structured(&res).clone())
    };

    for args in [json!({ "path": "big.txt" }), json!({ "path": "big.txt", "start_line": 1, "end_line": 4000 })] {
        let (shown, value) = read(args.clone()).await;
        let returned = value["text"].as_str().unwrap().len();
        assert!(shown.len() + returned <= 80_000, "{args}: {} + {returned}", shown.len());
        let next = value["next_start_line"].as_u64().expect("cut");
        assert_eq!(returned as u64, (next - 1) * 39);
        let of = if args.get("end_line").is_some() { "of the requested 1-4000" } else { "of 4000" };
        let note = format!("Showing lines 1-{} {of}; continue with start_line={next} (or ", next - 1);
        assert!(shown.contains(&note), "{}", &shown[shown.len() - 200..]);
    }
    let (_, value) = read(json!({ "path": "big.txt", "end_line": 4000, "max_bytes": 1_000_000 })).await;
    assert_eq!((value["text"].as_str().unwrap().len(), value.get("next_start_line")), (lines.len(), None));
    let (_, value) = read(json!({ "path": "big.txt", "start_line": 3990, "max_bytes": 400 })).await;
    assert_eq!((value["text"].as_str().unwrap().lines().count(), value["next_start_line"].clone()), (4, json!(3994)));

    // One 252 KB generated line is clipped to its start, and the read continues after it.
    let (shown, value) = read(json!({ "path": "gen.json" })).await;
    assert!(shown.len() + value["text"].as_str().unwrap().len() <= 80_000, "{}", shown.len());
    assert!(
        shown.contains("Line 1 is 252,008 characters; showing the first 39,497 (raise max_bytes for more)."),
        "{}",
        &shown[shown.len() - 300..]
    );
    assert_eq!(value["next_start_line"], json!(2));

    // A byte-order mark is named, not part of line 1.
    let (shown, value) = read(json!({ "path": "bom.txt" })).await;
    assert_eq!(
        (value["text"].clone(), value["encoding"].clone()),
        (json!("first\r\nsecond\r\n"), json!("UTF-8 with BOM"))
    );
    assert_eq!(shown, "1 | first\n2 | second\n\nEncoding: UTF-8 with BOM.\nCRLF line endings.");
    let (_, value) = read(json!({ "path": "big.txt", "end_line": 1 })).await;
    assert_eq!(value["encoding"], json!("UTF-8"));
}

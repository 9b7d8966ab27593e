//! The quality tools with the real clang-tidy, clang-format, cmake, ninja and g++ on a temporary copy
//! of `examples/cpp-acceptance-project` with files added here (a `modernize-use-nullptr` finding, a
//! mis-formatted file, a `.clang-tidy` and a `.clang-format`); they run under `CI` or with
//! `FORGEMCP_HEAVY_TESTS=1` and fail when a tool is missing. Argument checks run everywhere.

use std::time::{Duration, Instant};

use forgemcp::server::ForgeServer;
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};

use crate::support::{
    TempWorkspace, TestClient, acceptance_project, call, connect, progress_log, real_services, real_tools,
    resource_text, structured, text, tool_error,
};

#[track_caller]
fn assert_contains(haystack: &str, needle: &str) {
    assert!(haystack.contains(needle), "`{needle}` not in:\n{haystack}");
}

/// Two findings of `modernize-use-nullptr` (and short names for `readability-identifier-length`),
/// in the project's `.clang-format` style (8 columns).
const TIDY_ME: &str = "#include <cstddef>\n\nint *find(int *p) {\n        if (p == NULL) {\n                return NULL;\n        }\n        return p;\n}\n\nint main() {\n        return find(NULL) == nullptr ? 0 : 1;\n}\n";
const FORMATTED: &str = "int twice(int value) {\n        return value * 2;\n}\n";
const FORMAT_ME: &str = "int  thrice( int value ){\nreturn value*3;}\n";
const FORMAT_ME_FIXED: &str = "int thrice(int value) {\n        return value * 3;\n}\n";

fn quality_project() -> TempWorkspace {
    let ws = acceptance_project();
    std::fs::remove_file(ws.path("CMakePresets.json")).expect("plain Debug and Release profiles");
    let mut lists = std::fs::read_to_string(ws.path("CMakeLists.txt")).unwrap();
    lists.push_str("\nadd_executable(fixture_quality quality/tidy_me.cpp)\nadd_library(fixture_quality_more OBJECT quality/formatted.cpp quality/format_me.cpp)\n");
    ws.write("CMakeLists.txt", lists);
    ws.write(".clang-tidy", "Checks: '-*,modernize-use-nullptr'\n");
    ws.write(".clang-format", "BasedOnStyle: LLVM\nIndentWidth: 8\nAllowShortFunctionsOnASingleLine: None\n");
    ws.write("quality/tidy_me.cpp", TIDY_ME);
    ws.write("quality/formatted.cpp", FORMATTED);
    ws.write("quality/format_me.cpp", FORMAT_ME);
    ws
}

fn codes(file: &Value) -> Vec<&str> {
    file["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap()).collect()
}

async fn clang_tidy_running(client: &rmcp::service::RunningService<rmcp::RoleClient, TestClient>) -> Vec<Value> {
    let res = call(client, "processes_overview", json!({ "status": "all" })).await;
    structured(&res)["processes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["summary"]["executable"].as_str().unwrap().contains("clang-tidy"))
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tidy_and_format_find_fix_and_format_across_configurations() {
    if !real_tools(
        "tidy_and_format_find_fix_and_format_across_configurations",
        &["cmake", "ninja", "g++", "clang-tidy", "clang-format"],
    ) {
        return;
    }
    let ws = quality_project();
    let services = real_services(&ws, &[]);
    let handler = TestClient::new();
    let client = connect(ForgeServer::new(services.clone(), Duration::ZERO), handler.clone()).await;

    let err = tool_error(&call(&client, "quality_tidy", json!({ "path": "quality/tidy_me.cpp" })).await).to_owned();
    assert_contains(&err, "run cmake_configure");
    let res = call(&client, "cmake_configure", json!({})).await;
    assert!(structured(&res)["result"].as_array().unwrap().iter().all(|r| r["error"].is_null()), "{}", text(&res));
    let res = call(&client, "cmake_build", json!({ "profiles": ["Debug"], "targets": ["fixture_quality"] })).await;
    assert!(structured(&res)["result"][0]["error"].is_null(), "{}", text(&res));

    // The project's .clang-tidy: only modernize-use-nullptr, merged across both configurations.
    let res = call(&client, "quality_tidy", json!({ "path": "quality/tidy_me.cpp" })).await;
    let value = structured(&res).clone();
    assert_eq!(value["configurations"], json!(["Debug", "Release"]), "{value}");
    assert_eq!((value["files_total"].as_u64(), value["files_checked"].as_u64()), (Some(1), Some(1)));
    let files = value["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{}", text(&res));
    assert_eq!(files[0]["configurations"], json!(["Debug", "Release"]));
    assert_eq!(files[0]["path"], "project/quality/tidy_me.cpp");
    assert_eq!(codes(&files[0]), ["modernize-use-nullptr"; 3], "{}", text(&res));
    let first = &files[0]["diagnostics"][0];
    assert_eq!(first["source"], "clang-tidy");
    assert_eq!(first["severity"], "warning");
    assert_eq!(
        first["range"],
        json!({ "start": { "line": 4, "character": 17 }, "end": { "line": 4, "character": 21 } })
    );
    assert_eq!(
        first["fixes"],
        json!([{ "path": "project/quality/tidy_me.cpp", "old_text": "NULL", "new_text": "nullptr",
                 "range": { "start": { "line": 4, "character": 17 }, "end": { "line": 4, "character": 21 } } }])
    );
    assert_contains(
        text(&res),
        "\n\nmodernize-use-nullptr: 3\nproject/quality/tidy_me.cpp:4:18: warning: use nullptr [clang-tidy, modernize-use-nullptr]; fix-it \"NULL\" → \"nullptr\"\n",
    );
    let log = progress_log(&handler);
    assert!(
        log.iter().any(|(_, total, m)| *total == Some(2.0) && m.as_deref() == Some("1 of 1 files checked")),
        "{log:?}"
    );

    // An explicit check list replaces the project's.
    let res = call(
        &client,
        "quality_tidy",
        json!({ "path": "quality/tidy_me.cpp", "checks": "readability-identifier-length", "configurations": ["Release"] }),
    )
    .await;
    let files = structured(&res)["files"].as_array().unwrap().clone();
    assert_eq!(files[0]["configurations"], json!(["Release"]));
    assert_eq!(codes(&files[0]), ["readability-identifier-length"], "{}", text(&res));

    // The budget: one diagnostic listed, the rest counted.
    let res = call(&client, "quality_tidy", json!({ "path": "quality", "max_diagnostics": 1 })).await;
    let value = structured(&res).clone();
    assert_eq!(value["files"][0]["diagnostics"].as_array().unwrap().len(), 1, "{value}");
    assert_eq!(value["more_diagnostics"], 2, "{value}");
    assert_eq!(value["checks"], json!([{ "check": "modernize-use-nullptr", "findings": 3 }]), "{value}");
    assert_contains(
        text(&res),
        "3 findings of 1 check; 1 listed, in 1 file (max_diagnostics 1); the rest are counted per check.\n\nmodernize-use-nullptr: 1 listed of 3\n",
    );

    // Fixes go through the workspace with a diff, and the file is rebuilt.
    let res = call(&client, "quality_tidy", json!({ "path": "quality/", "apply_fixes": true })).await;
    let value = structured(&res).clone();
    let changed = value["changed"].as_array().unwrap();
    assert_eq!(changed.len(), 1, "{value}");
    assert_eq!((&changed[0]["path"], &changed[0]["replacements"]), (&json!("project/quality/tidy_me.cpp"), &json!(3)));
    assert_contains(text(&res), "Applied 3 fix-it replacements to project/quality/tidy_me.cpp.");
    let uri = changed[0]["resources"]["diff"]["uri"].as_str().expect("a diff link");
    let diff: Value = serde_json::from_str(&resource_text(&client, uri, "application/json").await).unwrap();
    assert_eq!(diff["path"], "project/quality/tidy_me.cpp");
    let lines = diff["hunks"][0]["lines"].as_array().unwrap();
    assert!(lines.iter().any(|l| l["kind"] == "removed" && l["text"] == "        if (p == NULL) {\n"), "{diff}");
    assert!(lines.iter().any(|l| l["kind"] == "added" && l["text"] == "        if (p == nullptr) {\n"), "{diff}");
    let fixed = std::fs::read_to_string(ws.path("quality/tidy_me.cpp")).unwrap();
    assert_eq!(fixed, TIDY_ME.replace("NULL", "nullptr"));
    let res = call(&client, "cmake_build", json!({ "profiles": ["Debug"], "targets": ["fixture_quality"] })).await;
    let build = &structured(&res)["result"][0];
    assert!(build["error"].is_null(), "{}", text(&res));
    assert!(build["completed_steps"].as_u64().is_some_and(|n| n >= 2), "recompiled and relinked: {build}");
    let res = call(&client, "quality_tidy", json!({ "path": "quality/tidy_me.cpp" })).await;
    assert_eq!(structured(&res)["files"], json!([]), "{}", text(&res));
    assert_contains(text(&res), "No findings.");

    // A tree run cancelled midway leaves no process.
    let params = CallToolRequestParams::new("quality_tidy")
        .with_arguments(json!({ "path": "project/" }).as_object().cloned().unwrap());
    let handle = client
        .peer()
        .send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let started = Instant::now();
    while !clang_tidy_running(&client).await.iter().any(|p| p["status"]["current_status"] == "running") {
        assert!(started.elapsed() < Duration::from_secs(60), "no clang-tidy started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    handle.cancel(Some("the test cancels".into())).await.unwrap();
    let cancelled = Instant::now();
    loop {
        let processes = clang_tidy_running(&client).await;
        if processes.iter().all(|p| p["status"]["current_status"] != "running") {
            assert!(processes.iter().any(|p| p["status"]["current_status"] == "stopped"), "{processes:#?}");
            break;
        }
        assert!(cancelled.elapsed() < Duration::from_secs(3), "still running: {processes:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The cancelled runs' export files go with them.
    loop {
        let leftovers: Vec<_> = std::fs::read_dir(ws.storage.join("tmp/quality")).unwrap().flatten().collect();
        if leftovers.is_empty() {
            break;
        }
        assert!(cancelled.elapsed() < Duration::from_secs(5), "export files left: {leftovers:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // The project's .clang-format (8 columns): one file needs formatting, the diff says how.
    let res = call(&client, "quality_format", json!({ "path": "quality" })).await;
    let value = structured(&res).clone();
    assert_eq!((value["files_total"].as_u64(), value["formatted"].as_u64()), (Some(3), Some(2)), "{value}");
    let files = value["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{value}");
    assert_eq!((&files[0]["path"], &files[0]["applied"]), (&json!("project/quality/format_me.cpp"), &json!(false)));
    assert_contains(text(&res), "Checked 3 of 3 files: 2 formatted, 1 needs formatting.");
    assert_contains(text(&res), "project/quality/format_me.cpp: ");
    assert_contains(text(&res), "+    2 |         return value * 3;");
    let uri = files[0]["resources"]["diff"]["uri"].as_str().expect("a diff link");
    let diff: Value = serde_json::from_str(&resource_text(&client, uri, "application/json").await).unwrap();
    assert_eq!(diff["path"], "project/quality/format_me.cpp");
    assert_eq!(std::fs::read_to_string(ws.path("quality/format_me.cpp")).unwrap(), FORMAT_ME, "check writes nothing");

    let res = call(&client, "quality_format", json!({ "path": "quality/format_me.cpp", "apply": true })).await;
    let files = structured(&res)["files"].as_array().unwrap().clone();
    assert_eq!(files[0]["applied"], true, "{}", text(&res));
    assert!(files[0]["resources"]["diff"]["uri"].is_string());
    assert_eq!(std::fs::read_to_string(ws.path("quality/format_me.cpp")).unwrap(), FORMAT_ME_FIXED);
    let res = call(&client, "quality_format", json!({ "path": "quality" })).await;
    assert_eq!(
        (structured(&res)["formatted"].as_u64(), structured(&res)["files"].as_array().map(Vec::len)),
        (Some(3), Some(0))
    );

    // A named style instead of the project's.
    let res = call(&client, "quality_format", json!({ "path": "quality/formatted.cpp", "style": "{BasedOnStyle: LLVM, AllowShortFunctionsOnASingleLine: None}" })).await;
    assert_eq!(structured(&res)["files"][0]["path"], "project/quality/formatted.cpp", "{}", text(&res));
    assert_contains(text(&res), "+    2 |   return value * 2;");
    let res = call(&client, "cmake_build", json!({ "profiles": ["Debug"], "targets": ["fixture_quality_more"] })).await;
    assert!(structured(&res)["result"][0]["error"].is_null(), "{}", text(&res));
}

#[tokio::test]
async fn arguments_are_checked_before_anything_runs() {
    let ws = TempWorkspace::new("//- notes.txt\nhello\n//- src/a.cpp\nint a;\n");
    let client = ws.connect(TestClient::new()).await;
    let err = tool_error(&call(&client, "quality_format", json!({ "path": "../x" })).await).to_owned();
    assert_contains(&err, "Invalid argument `path`");
    let err = tool_error(&call(&client, "quality_format", json!({ "path": "missing.cpp" })).await).to_owned();
    assert_contains(&err, "Invalid argument `path`: `project/missing.cpp` does not exist.");
    let err = tool_error(&call(&client, "quality_tidy", json!({ "path": "notes.txt" })).await).to_owned();
    assert_contains(&err, "Invalid argument `path`: `project/notes.txt` is not a C/C++ file.");
    let err = tool_error(&call(&client, "quality_tidy", json!({ "path": "root/usr/include" })).await).to_owned();
    assert_contains(&err, "is outside the project and storage");
    let err = tool_error(&call(&client, "quality_tidy", json!({ "path": "src/a.cpp" })).await).to_owned();
    assert_contains(
        &err,
        "The project has no CMakeLists.txt, so the CMake tools do not apply; a compile_commands.json",
    );
    let err = tool_error(&call(&client, "quality_format", json!({ "bogus": 1 })).await).to_owned();
    assert_contains(&err, "`bogus`");
}

#[tokio::test]
async fn the_quality_tools_stay_within_their_share_of_the_tool_list() {
    let ws = TempWorkspace::new("");
    let client = ws.connect(TestClient::new()).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let quality: usize = tools
        .iter()
        .filter(|tool| tool.name.starts_with("quality_"))
        .map(|tool| {
            let facing =
                json!({ "name": tool.name, "description": tool.description, "inputSchema": tool.input_schema });
            serde_json::to_string(&facing).unwrap().len()
        })
        .sum();
    assert!(quality > 0 && quality <= 1200, "quality_tidy and quality_format take {quality} bytes of tools/list");
}

/// A library whose header two translation units include, a `.clang-tidy` that reports headers, and
/// no `.clang-format` anywhere.
const SHARED_HEADER: &str = r#"
//- CMakeLists.txt
    cmake_minimum_required(VERSION 3.20)
    project(shapes CXX)
    add_library(shapes STATIC src/a.cpp src/b.cpp)
    target_include_directories(shapes PUBLIC include)
//- .clang-tidy
    Checks: '-*,modernize-use-nullptr'
    HeaderFilterRegex: '.*'
//- include/shapes.hpp
    #include <cstddef>
    inline int* none() { return NULL; }
//- src/a.cpp
    #include "shapes.hpp"
    int* first() { return none(); }
//- src/b.cpp
    #include "shapes.hpp"
    int* second() { return none(); }
"#;

/// The resource links of a result (its content items after the text).
fn links(result: &rmcp::model::CallToolResult) -> Vec<(String, String)> {
    result.content[1..]
        .iter()
        .map(|item| item.as_resource_link().expect("a resource link"))
        .map(|link| (link.name.clone(), link.uri.clone()))
        .collect()
}

#[tokio::test]
async fn findings_are_counted_once_and_large_or_unstyled_trees_stay_small() {
    if !real_tools(
        "findings_are_counted_once_and_large_or_unstyled_trees_stay_small",
        &["cmake", "ninja", "g++", "clang-tidy", "clang-format"],
    ) {
        return;
    }
    let ws = TempWorkspace::new(SHARED_HEADER);
    // 60 files of 50 badly formatted lines: their diffs together are far beyond the text budget.
    for file in 0..60 {
        let body: String = (0..50)
            .map(|line| format!("int  scaled_value_{line}( int first_argument ){{return first_argument*{line};}}\n"))
            .collect();
        ws.write(&format!("generated/part{file:02}.cpp"), body);
    }
    let client = connect(ForgeServer::new(real_services(&ws, &[]), Duration::ZERO), TestClient::new()).await;
    let res = call(&client, "cmake_configure", json!({ "profiles": ["Debug"] })).await;
    assert!(structured(&res)["result"][0]["error"].is_null(), "{}", text(&res));

    // The header's finding, reported by both translation units, is one finding counted twice.
    let res = call(&client, "quality_tidy", json!({ "path": "project/", "configurations": ["Debug"] })).await;
    let files = structured(&res)["files"].as_array().unwrap().clone();
    assert_eq!(files.len(), 1, "{}", text(&res));
    assert_eq!(files[0]["path"], "project/include/shapes.hpp");
    assert_eq!(files[0]["diagnostics"].as_array().unwrap().len(), 1, "{}", text(&res));
    assert_eq!(files[0]["diagnostics"][0]["count"], 2);
    assert_contains(text(&res), "1 finding of 1 check in 1 file.\n\nmodernize-use-nullptr: 1\n");
    assert_contains(
        text(&res),
        "\nproject/include/shapes.hpp:2:29: warning: use nullptr [clang-tidy, modernize-use-nullptr] (reported 2 times); fix-it \"NULL\" → \"nullptr\"",
    );
    assert!(!text(&res).contains("character"), "no coordinates legend or LSP ranges: {}", text(&res));

    // No style file: the fallback is said, counted, and never written to a tree.
    let before = std::fs::read_to_string(ws.path("src/a.cpp")).unwrap();
    let res = call(&client, "quality_format", json!({ "path": "src", "apply": true })).await;
    let value = structured(&res).clone();
    assert_eq!((value["fallback_files"].as_u64(), value["files_total"].as_u64()), (Some(2), Some(2)), "{value}");
    assert!(value["files"].as_array().unwrap().iter().all(|f| f["applied"] == false && f["fallback"] == true));
    assert_contains(text(&res), "No style file was found: no .clang-format or _clang-format applies to these files");
    assert_contains(text(&res), "fallback style (LLVM) decides; it would reformat 2 of 2 checked. Nothing was written");
    assert_eq!(std::fs::read_to_string(ws.path("src/a.cpp")).unwrap(), before, "the fallback restyled a tree");
    // A named style is written.
    let res = call(&client, "quality_format", json!({ "path": "src", "apply": true, "style": "LLVM" })).await;
    assert_eq!(structured(&res)["fallback_files"], 0);
    assert_contains(text(&res), "Checked 2 of 2 files: 0 formatted, 2 reformatted.");
    assert_eq!(
        std::fs::read_to_string(ws.path("src/a.cpp")).unwrap(),
        "#include \"shapes.hpp\"\nint *first() { return none(); }\n"
    );

    // A tree whose diffs exceed the text budget: counted in the text, every diff a resource link.
    let res = call(&client, "quality_format", json!({ "path": "generated", "style": "LLVM" })).await;
    let shown = text(&res).to_owned();
    assert!(shown.len() <= 80 * 1024, "{} bytes of text", shown.len());
    assert_contains(&shown, "Checked 60 of 60 files: 0 formatted, 60 need formatting.");
    assert_contains(
        &shown,
        "more files needing formatting are not shown: the text is kept under 80 KB; each file's diff is a resource link of this result.",
    );
    let links = links(&res);
    assert_eq!(links.len(), 60, "{links:?}");
    assert_eq!(links[59].0, "project/generated/part59.cpp");
    let diff = resource_text(&client, &links[59].1, "text/markdown").await;
    assert_contains(&diff, "```diff\n--- a/project/generated/part59.cpp\n+++ b/project/generated/part59.cpp\n@@ ");
    assert_contains(&diff, "\n-int  scaled_value_49( int first_argument ){return first_argument*49;}\n");
    assert_contains(&diff, "\n+int scaled_value_49(int first_argument) { return first_argument * 49; }\n");
}

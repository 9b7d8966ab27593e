//! `workspace_text_search` and its resource through the MCP surface: matching rules, counting,
//! truncation, skipped files, spans, progress throttling and completions.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use forgemcp::call::ProgressUpdate;
use forgemcp::server::{CallEnd, CallObserver, CallStarted};
use parking_lot::Mutex;
use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use serde_json::{Value, json};

use crate::support::{TempWorkspace, TestClient, call, connect, structured, text, tool_error};

const TREE: &str = r#"
//- src/main.cpp
    int main() {
        int needle = 1;
        return needle - 1;
    }
//- src/util.hpp
    // Needle in a header
//- README
    needle without extension
//- .hidden/secret.cpp
    int needle;
//- .dotfile
    needle in a dot file
//- build/gen.cpp
    int needle_generated;
"#;

async fn search(ws: &TempWorkspace, args: Value) -> rmcp::model::CallToolResult {
    let client = ws.connect(TestClient::new()).await;
    call(&client, "workspace_text_search", args).await
}

fn paths(result: &Value) -> Vec<String> {
    result["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| format!("{}:{}", m["path"].as_str().unwrap(), m["line"]))
        .collect()
}

#[tokio::test]
async fn literal_search_skips_dot_directories_but_not_dot_files_or_build_dirs() {
    let ws = TempWorkspace::new(TREE);
    let res = search(&ws, json!({ "query": "needle" })).await;
    let value = structured(&res);
    assert_eq!(
        paths(value),
        vec![
            "project/.dotfile:1",
            "project/README:1",
            "project/build/gen.cpp:1",
            "project/src/main.cpp:2",
            "project/src/main.cpp:3"
        ]
    );
    assert_eq!(value["matches_count"], 5);
    assert_eq!(value["matches_truncated"], false);
    assert_eq!(value["resources"], json!({}));
    assert!(
        text(&res).starts_with("Search for \"needle\" (literal text; case-sensitive)\nPath: project/\n"),
        "{}",
        text(&res)
    );
}

#[tokio::test]
async fn case_insensitive_and_regex_modes() {
    let ws = TempWorkspace::new(TREE);
    let res = search(&ws, json!({ "query": "NEEDLE", "case_sensitive": false, "path": "src" })).await;
    assert_eq!(
        paths(structured(&res)),
        vec!["project/src/main.cpp:2", "project/src/main.cpp:3", "project/src/util.hpp:1"]
    );
    let res = search(&ws, json!({ "query": r"return \w+ - 1", "regex": true })).await;
    assert_eq!(paths(structured(&res)), vec!["project/src/main.cpp:3"]);
    let res = search(&ws, json!({ "query": "needle(", "regex": true })).await;
    assert!(tool_error(&res).contains("regex"), "{}", text(&res));
}

#[tokio::test]
async fn extension_filters() {
    let ws = TempWorkspace::new(TREE);
    let res = search(&ws, json!({ "query": "needle", "extensions": ["CPP"] })).await;
    assert_eq!(
        paths(structured(&res)),
        vec!["project/build/gen.cpp:1", "project/src/main.cpp:2", "project/src/main.cpp:3"]
    );
    let res = search(&ws, json!({ "query": "needle", "extensions": [""] })).await;
    assert_eq!(paths(structured(&res)), vec!["project/.dotfile:1", "project/README:1"]);
    let res = search(&ws, json!({ "query": "needle", "extensions": [] })).await;
    assert_eq!(structured(&res)["matches_count"], 0);
    let res = search(&ws, json!({ "query": "Needle", "extensions": [".hpp"] })).await;
    assert_eq!(paths(structured(&res)), vec!["project/src/util.hpp:1"]);
}

#[tokio::test]
async fn truncation_keeps_first_lines_and_counts_all() {
    let ws = TempWorkspace::new(TREE);
    let res = search(&ws, json!({ "query": "needle", "max_matches": 2 })).await;
    let value = structured(&res);
    assert_eq!(paths(value), vec!["project/.dotfile:1", "project/README:1"]);
    assert_eq!((value["matches_count"].clone(), value["matches_truncated"].clone()), (json!(5), json!(true)));
    assert!(
        text(&res).contains("Returned 2 of 5 matching lines in 2 displayed files.\nTruncated: yes"),
        "{}",
        text(&res)
    );
    let res = search(&ws, json!({ "query": "needle", "max_matches": 0 })).await;
    assert!(tool_error(&res).contains("`max_matches`"));
    let res = search(&ws, json!({ "query": "" })).await;
    assert!(tool_error(&res).contains("`query`"));
}

#[tokio::test]
async fn spans_are_code_points_and_cover_every_match() {
    let ws = TempWorkspace::new("//- u.txt\n    é needle ü needle");
    let res = search(&ws, json!({ "query": "needle" })).await;
    assert_eq!(structured(&res)["matches"][0]["spans"], json!([[2, 8], [11, 17]]));
}

#[tokio::test]
async fn binary_and_non_utf8_files_are_skipped_and_listed() {
    let ws = TempWorkspace::new("//- a.txt\n    needle");
    ws.write("bin/app", b"needle\0\x01\x02");
    ws.write("latin1.txt", b"needle caf\xe9\n");
    let client = ws.connect(TestClient::new()).await;
    let res = call(&client, "workspace_text_search", json!({ "query": "needle" })).await;
    let value = structured(&res);
    assert_eq!(value["matches_count"], 1);
    assert_eq!(value["skipped_files_count"], 2);
    let link = &value["resources"]["skipped_files"];
    assert_eq!(link["mime_type"], "application/json");
    let uri = link["uri"].as_str().unwrap();
    assert!(uri.starts_with("forgemcp://workspace/results/") && uri.ends_with("/skipped_files.json"), "{uri}");
    let read = client.read_resource(ReadResourceRequestParams::new(uri)).await.unwrap();
    let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else { panic!("text contents") };
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        json!({ "skipped_files": ["project/bin/app", "project/latin1.txt"] })
    );
}

#[cfg(unix)]
#[tokio::test]
async fn links_are_not_followed() {
    let ws = TempWorkspace::new("//- real/a.txt\n    needle");
    std::os::unix::fs::symlink(ws.path("real"), ws.path("linked_dir")).unwrap();
    std::os::unix::fs::symlink(ws.path("real/a.txt"), ws.path("linked_file.txt")).unwrap();
    let res = search(&ws, json!({ "query": "needle" })).await;
    assert_eq!(paths(structured(&res)), vec!["project/real/a.txt:1"]);
    let res = search(&ws, json!({ "query": "needle", "path": "linked_dir" })).await;
    assert!(tool_error(&res).contains("link"), "{}", text(&res));
}

#[tokio::test]
async fn search_resource_decodes_parameters() {
    let ws = TempWorkspace::new("//- a.cpp\n    a+b c\n//- b\n    a+b c");
    let client = ws.connect(TestClient::new()).await;
    let read = |uri: &'static str| {
        let client = &client;
        async move { client.read_resource(ReadResourceRequestParams::new(uri)).await }
    };
    let res = read("forgemcp://workspace/search?query=a+b%20c&extensions=").await.unwrap();
    let ResourceContents::TextResourceContents { text, mime_type, .. } = &res.contents[0] else { panic!() };
    assert_eq!(mime_type.as_deref(), Some("text/markdown"));
    assert!(text.starts_with("# Search results\n\n[project/b](forgemcp://workspace/file/project/b), line 1"), "{text}");
    assert!(text.contains("Returned 1 of 1 matching lines."), "{text}");
    let res = read("forgemcp://workspace/search?query=zzz").await.unwrap();
    let ResourceContents::TextResourceContents { text, .. } = &res.contents[0] else { panic!() };
    assert!(text.contains("No matches."), "{text}");
    for bad in [
        "forgemcp://workspace/search?path=project/",
        "forgemcp://workspace/search?query=a&regex=yes",
        "forgemcp://workspace/search?query=a&max_matches=0",
        "forgemcp://workspace/search?query=a&bogus=1",
        "forgemcp://workspace/search?query=a&path=..",
    ] {
        let err = read(bad).await.expect_err(bad);
        let rmcp::ServiceError::McpError(data) = err else { panic!("{bad}: {err:?}") };
        assert_eq!(data.code, rmcp::model::ErrorCode::INVALID_PARAMS, "{bad}: {}", data.message);
    }
}

#[tokio::test]
async fn search_completions() {
    let ws =
        TempWorkspace::new("//- src/a.cpp\n    x\n//- src/b.HPP\n    x\n//- src/c.h\n    x\n//- .git/x.pack\n    x");
    let client = ws.connect(TestClient::new()).await;
    let template = "forgemcp://workspace/search{?query,path,regex,extensions,case_sensitive,max_matches}";
    let complete = |arg: &'static str, value: &'static str| {
        let client = &client;
        async move { client.complete_resource_simple(template, arg, value).await.unwrap() }
    };
    assert_eq!(complete("extensions", "").await, vec!["cpp", "h", "hpp"]);
    assert_eq!(complete("extensions", "cpp,h").await, vec!["cpp,h", "cpp,hpp"]);
    assert_eq!(complete("regex", "t").await, vec!["true"]);
    assert_eq!(complete("case_sensitive", "").await, vec!["false", "true"]);
    assert_eq!(complete("path", "").await, vec!["project/", "storage/"]);
    assert_eq!(complete("path", "project/").await, vec!["project/.git/", "project/src/"]);
}

/// Records when each progress update was delivered.
#[derive(Default)]
struct Timing {
    at: Mutex<Vec<(Instant, ProgressUpdate)>>,
    started: Mutex<Option<Instant>>,
}

impl CallObserver for Timing {
    fn started(&self, _call: &CallStarted) {
        *self.started.lock() = Some(Instant::now());
    }
    fn progress(&self, _call_id: u64, update: &ProgressUpdate) {
        self.at.lock().push((update.at, update.clone()));
    }
    fn finished(&self, _call_id: u64, _at: DateTime<Utc>, _end: &CallEnd) -> Option<Arc<Value>> {
        None
    }
}

#[tokio::test]
async fn progress_is_immediate_then_throttled() {
    let ws = TempWorkspace::new("");
    let line = "int value = compute(needle, other_value) + 12345; // padding padding padding\n";
    let body = line.repeat(400);
    for i in 0..1500 {
        ws.write(&format!("d{}/f{i}.cpp", i % 30), &body);
    }
    let server = ws.server(Duration::from_millis(200));
    let timing = Arc::new(Timing::default());
    server.set_observer(timing.clone());
    let handler = TestClient::new();
    let client = connect(server, handler.clone()).await;
    let begin = Instant::now();
    let res =
        call(&client, "workspace_text_search", json!({ "query": "needle", "regex": true, "max_matches": 1 })).await;
    let elapsed = begin.elapsed();
    assert_eq!(structured(&res)["matches_count"], 1500 * 400);
    let delivered = timing.at.lock().clone();
    let started = timing.started.lock().unwrap();
    assert_eq!(delivered[0].1.message, "Files visited");
    assert!(delivered[0].0 - started < Duration::from_millis(150), "first notification at once");
    for pair in delivered.windows(2) {
        assert!(
            pair[1].0 - pair[0].0 >= Duration::from_millis(199),
            "at most one per 0.2 s: {:?}",
            pair[1].0 - pair[0].0
        );
        assert!(pair[1].1.progress > pair[0].1.progress, "monotonic");
    }
    let max_allowed = 1 + (elapsed.as_secs_f64() / 0.2).ceil() as usize;
    assert!(delivered.len() <= max_allowed, "{} notifications in {elapsed:?}", delivered.len());
    // Every delivered update reaches the client (its handler runs on spawned tasks, so allow a moment).
    for _ in 0..100 {
        if handler.progress.lock().len() == delivered.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(handler.progress.lock().len(), delivered.len());
    eprintln!("search took {elapsed:?} with {} progress notifications", delivered.len());
}

#[tokio::test]
async fn result_documents_complete_and_unknown_ids_are_not_found() {
    let ws = TempWorkspace::new("//- a.txt\n    needle");
    ws.write("bin/app", b"needle\0");
    let client = ws.connect(TestClient::new()).await;
    let res = call(&client, "workspace_text_search", json!({ "query": "needle" })).await;
    let uri = structured(&res)["resources"]["skipped_files"]["uri"].as_str().unwrap().to_owned();
    let id = uri.trim_start_matches("forgemcp://workspace/results/").split('/').next().unwrap().to_owned();
    let json_template = "forgemcp://workspace/results/{result_id}/{name}.json";
    let ids = client.complete_resource_simple(json_template, "result_id", "").await.unwrap();
    assert_eq!(ids, vec![id.clone()]);
    let ids = client.complete_resource_simple(json_template, "result_id", "zz").await.unwrap();
    assert!(ids.is_empty());
    let params = rmcp::model::CompleteRequestParams::new(
        rmcp::model::Reference::for_resource(json_template),
        rmcp::model::ArgumentInfo::new("name", ""),
    )
    .with_context(rmcp::model::CompletionContext::with_arguments([("result_id".to_owned(), id.clone())].into()));
    let names = client.complete(params).await.unwrap();
    assert_eq!(names.completion.values, vec!["skipped_files"]);
    assert_eq!(names.completion.total, Some(1));
    assert_eq!(names.completion.has_more, Some(false));
    let md_names = client
        .complete_resource_simple("forgemcp://workspace/results/{result_id}/{name}.md", "name", "")
        .await
        .unwrap();
    assert!(md_names.is_empty(), "no Markdown documents: {md_names:?}");
    for missing in [
        format!("forgemcp://workspace/results/{id}/nope.json"),
        format!("forgemcp://workspace/results/{id}/skipped_files.md"),
        "forgemcp://workspace/results/00000000000000000000000000000000/skipped_files.json".to_owned(),
        "forgemcp://workspace/results/not-hex/skipped_files.json".to_owned(),
    ] {
        let err = client.read_resource(ReadResourceRequestParams::new(missing.clone())).await.expect_err(&missing);
        let rmcp::ServiceError::McpError(data) = err else { panic!("{missing}: {err:?}") };
        assert_eq!(data.code, rmcp::model::ErrorCode::RESOURCE_NOT_FOUND, "{missing}");
    }
}

/// A project with vendored tests (88 + 1,336 hits), its own tests, a build tree, a file starting with
/// a byte-order mark and one long generated line.
fn vendored() -> TempWorkspace {
    let ws = TempWorkspace::new("");
    ws.write("test/googletest-1.16.0/gtest.cc", "TEST_F(A, b) {}\n".repeat(1336));
    ws.write("test/integration/load.cpp", "TEST_F(Load, x) {}\n".repeat(88));
    ws.write("build/gen/t.cpp", "TEST_F(Gen, x) {}\n");
    ws.write("src/bom.cpp", "\u{feff}TEST_F(Bom, first) {}\r\n");
    ws.write("data/gen.json", format!("{{\"TEST_F\":[{}]}}\n", "1,".repeat(126_000)));
    ws
}

#[tokio::test]
async fn search_excludes_pages_counts_per_directory_and_lists_files() {
    let ws = vendored();
    let workspace =
        forgemcp::workspace::WorkspaceService::new(ws.roots()).with_excluded_dirs(vec![ws.project.join("build")]);
    let server = forgemcp::server::ForgeServer::new(ws.services_with(Arc::new(workspace)), Duration::ZERO);
    let client = connect(server, TestClient::new()).await;
    let search = async |args: Value| {
        let res = call(&client, "workspace_text_search", args).await;
        (text(&res).to_owned(), structured(&res).clone())
    };

    // The server's excluded directory is left out and named; counts per directory show where hits are.
    let (shown, value) = search(json!({ "query": "TEST_F(" })).await;
    assert_eq!(value["matches_count"], json!(1336 + 88 + 1), "{shown}");
    assert!(shown.contains("Excluded by the server (--exclude-dir): project/build/\n"), "{shown}");
    assert!(shown.contains("By directory: 1,424 in project/test/, 1 in project/src/."), "{shown}");
    assert_eq!(value["directories"][0], json!({ "path": "project/test/", "matches": 1424 }));
    let (shown, _) = search(json!({ "query": "TEST_F(", "path": "project/test" })).await;
    assert!(
        shown.contains("By directory: 1,336 in project/test/googletest-1.16.0/, 88 in project/test/integration/."),
        "{shown}"
    );
    // However large max_matches is, the lines fit the result's byte budget, and the text says so.
    let (shown, value) = search(json!({ "query": "TEST_F(", "max_matches": 10_000 })).await;
    let returned = value["matches"].as_array().unwrap().len();
    assert!(returned < 1425 && shown.len() + value.to_string().len() < 100_000, "{returned} lines");
    assert!(
        shown.contains(&format!("byte budget left out {} more of the requested lines.", 1425 - returned)),
        "{shown:.600}"
    );
    assert!(shown.contains(&format!("More: offset={returned} ")), "{shown:.600}");
    // A search that starts inside it covers it.
    let (_, value) = search(json!({ "query": "TEST_F(", "path": "project/build" })).await;
    assert_eq!(value["matches_count"], json!(1));

    // `exclude` globs by name or path, and `offset` pages.
    let (shown, value) = search(json!({ "query": "TEST_F(", "exclude": ["googletest*"], "max_matches": 2 })).await;
    assert_eq!(value["matches_count"], json!(89));
    assert!(shown.contains("Excluded: googletest*\n"), "{shown}");
    assert!(shown.contains("More: offset=2 "), "{shown}");
    let (_, value) =
        search(json!({ "query": "TEST_F(", "exclude": ["test/googletest-1.16.0"], "offset": 2, "max_matches": 3 }))
            .await;
    let lines: Vec<(String, u64)> = value["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["path"].as_str().unwrap().to_owned(), m["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        lines,
        [
            ("project/test/integration/load.cpp".to_owned(), 2),
            ("project/test/integration/load.cpp".to_owned(), 3),
            ("project/test/integration/load.cpp".to_owned(), 4)
        ]
    );
    assert_eq!(value["offset"], json!(2));

    // Files only: the files with their counts, paged.
    let (shown, value) = search(json!({ "query": "TEST_F(", "files_only": true, "max_matches": 2, "offset": 1 })).await;
    assert_eq!(value["files_count"], json!(3));
    assert_eq!(
        value["files"],
        json!([
            { "path": "project/test/googletest-1.16.0/gtest.cc", "matches": 1336 },
            { "path": "project/test/integration/load.cpp", "matches": 88 }
        ])
    );
    assert!(shown.contains("1,425 matching lines in 3 files; returned files 2–3 of 3."), "{shown}");
    assert!(
        shown.ends_with(
            "\nproject/test/googletest-1.16.0/gtest.cc (1,336 lines)\nproject/test/integration/load.cpp (88 lines)"
        ),
        "{shown}"
    );

    // `^` matches line 1 after a byte-order mark.
    let (_, value) = search(json!({ "query": "^TEST_F\\(Bom", "regex": true })).await;
    assert_eq!(
        (value["matches_count"].clone(), value["matches"][0]["text"].clone()),
        (json!(1), json!("TEST_F(Bom, first) {}"))
    );

    // A 252 KB line is clipped around its match, in the text and the structured result.
    let (shown, value) = search(json!({ "query": "TEST_F", "path": "project/data", "max_matches": 5 })).await;
    assert!(shown.len() < 2_000, "{}", shown.len());
    assert!(shown.contains("(line 1 is 252,013 characters; showing 200 around column 3) {\"TEST_F\":[1,1,"), "{shown}");
    let found = &value["matches"][0];
    assert_eq!(
        (found["line_length"].clone(), found["text_column"].clone(), found["spans"].clone()),
        (json!(252_013), json!(0), json!([[2, 8]]))
    );
    assert_eq!(found["text"].as_str().map(|t| t.chars().count()), Some(200));
}

//! `cmake_targets` (issue 30 §1) and `cmake_test` `select` and `repeat_until_fail` (§3, §5) with
//! the real cmake, ninja and g++ on a project of two libraries and three test executables: targets
//! with their defining lines, the target compiling a file and the one including a header; the first `affected` run selects
//! everything and says why, a second selects nothing, a library edit selects exactly the tests
//! linking it, the record survives a restart, a test failing on its third run is flaky, and bad
//! values are refused before anything runs (CI or `FORGEMCP_HEAVY_TESTS=1`).

use std::time::Duration;

use forgemcp::server::ForgeServer;
use rmcp::RoleClient;
use rmcp::service::RunningService;
use serde_json::{Value, json};

use crate::support::{TempWorkspace, TestClient, call, connect, real_services, structured, text, tool_error};

type Client = RunningService<RoleClient, TestClient>;

const LISTS: &str = r#"cmake_minimum_required(VERSION 3.16)
project(affected CXX)
enable_testing()
add_library(base src/base.cpp)
add_library(core src/core.cpp)
target_link_libraries(core PUBLIC base)
add_executable(base_test tests/base_test.cpp)
target_link_libraries(base_test PRIVATE base)
add_executable(core_test tests/core_test.cpp)
target_link_libraries(core_test PRIVATE core)
add_executable(app_test tests/app_test.cpp)
add_test(NAME base_test COMMAND base_test)
add_test(NAME core_test COMMAND core_test)
add_test(NAME app_test COMMAND app_test)
add_test(NAME flaky COMMAND sh -c "n=$(cat runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > runs; echo run $n; test $n -ne 3")
"#;

const FILES: &[(&str, &str)] = &[
    ("CMakeLists.txt", LISTS),
    ("src/base.cpp", "int base() { return 1; }\n"),
    ("src/base.h", "int base();\n"),
    ("src/core.cpp", "#include \"base.h\"\nint core() { return base() + 1; }\n"),
    ("tests/base_test.cpp", "int base();\nint main() { return base() == 1 ? 0 : 1; }\n"),
    ("tests/core_test.cpp", "int core();\nint main() { return core() == 2 ? 0 : 1; }\n"),
    ("tests/app_test.cpp", "int main() { return 0; }\n"),
    ("tools/unused.cpp", "int unused() { return 0; }\n"),
];

const THREE: [&str; 3] = ["base_test", "core_test", "app_test"];

async fn client(ws: &TempWorkspace) -> Client {
    connect(ForgeServer::new(real_services(ws, &[]), Duration::ZERO), TestClient::new()).await
}

fn ran(result: &rmcp::model::CallToolResult) -> Vec<String> {
    let tests = structured(result)["result"][0]["tests"].as_array().expect("tests").clone();
    tests.iter().map(|t| t["name"].as_str().expect("a name").to_owned()).collect()
}

fn selection(result: &rmcp::model::CallToolResult) -> Value {
    structured(result)["result"][0]["selection"].clone()
}

#[track_caller]
fn assert_contains(haystack: &str, needle: &str) {
    assert!(haystack.contains(needle), "`{needle}` not in:\n{haystack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn affected_tests_flaky_tests_and_bad_values() {
    if !crate::support::real_tools("affected_tests_flaky_tests_and_bad_values", &["cmake", "ctest", "ninja", "g++"]) {
        return;
    }
    let ws = TempWorkspace::new("");
    for (path, body) in FILES {
        ws.write(path, body);
    }
    let client = client(&ws).await;
    // Bad values: refused, nothing runs (not even configured yet).
    let res = call(&client, "cmake_test", json!({ "select": "changed" })).await;
    assert_contains(tool_error(&res), "Invalid argument `select`: \"changed\" is not one of");
    for bad in [1, 1001, -3] {
        let res = call(&client, "cmake_test", json!({ "repeat_until_fail": bad })).await;
        assert_contains(tool_error(&res), "Invalid argument `repeat_until_fail`");
    }
    let res = call(&client, "cmake_configure", json!({ "profiles": ["Debug"] })).await;
    assert!(structured(&res)["result"][0]["error"].is_null(), "{}", text(&res));
    let res = call(&client, "cmake_build", json!({ "profiles": ["Debug"] })).await;
    assert!(structured(&res)["result"][0]["error"].is_null(), "{}", text(&res));

    let affected = json!({ "profiles": ["Debug"], "select": "affected", "names": THREE });
    // No earlier run: everything, and why.
    let res = call(&client, "cmake_test", affected.clone()).await;
    assert_eq!(ran(&res), THREE);
    assert_contains(
        text(&res),
        "Selected 3 of 3 tests: no earlier test run on this profile -> base_test, core_test, app_test.",
    );
    assert_eq!(selection(&res)["selected"][0]["reason"], "no_earlier_run");
    // Nothing changed: nothing runs.
    let res = call(&client, "cmake_test", affected.clone()).await;
    assert_eq!(ran(&res), Vec::<String>::new(), "{}", text(&res));
    assert_contains(text(&res), "Selected 0 of 3 tests: none is affected");
    assert!(structured(&res)["result"][0]["error"].is_null(), "{}", text(&res));
    assert!(structured(&res)["result"][0]["process_id"].is_null());

    // One library changes: exactly the tests of the executables linking it.
    std::thread::sleep(Duration::from_millis(20));
    ws.write("src/base.cpp", "int base() { return 2 - 1; }\n");
    let res = call(&client, "cmake_build", json!({ "profiles": ["Debug"] })).await;
    assert!(structured(&res)["result"][0]["error"].is_null(), "{}", text(&res));
    let res = call(&client, "cmake_test", affected.clone()).await;
    assert_eq!(ran(&res), ["base_test", "core_test"], "{}", text(&res));
    assert_contains(text(&res), "Selected 2 of 3 tests: target base changed (rebuilt ");
    assert_contains(text(&res), ") -> base_test, core_test; 1 not affected. Data files a test reads are not tracked");
    let chosen = selection(&res);
    assert_eq!(chosen["mode"], "affected");
    assert_eq!(chosen["not_selected"], 1);
    assert_eq!(chosen["selected"][0]["target"], "base");
    assert_eq!(chosen["selected"][0]["reason"], "changed");
    assert_eq!(chosen["selected"][0]["changed"], "storage/build/cmake-Debug/libbase.a");
    client.cancel().await.expect("shut down");

    // The record survives a restart.
    let client = self::client(&ws).await;
    let res = call(&client, "cmake_test", affected.clone()).await;
    assert_eq!(ran(&res), Vec::<String>::new(), "{}", text(&res));

    // A test failing on its third run is flaky; `failed` reruns it.
    let res =
        call(&client, "cmake_test", json!({ "profiles": ["Debug"], "names": ["flaky"], "repeat_until_fail": 5 })).await;
    assert_contains(text(&res), "failed: flaky (");
    assert_contains(text(&res), "flaky: failed on run 3 of 5");
    assert_eq!(structured(&res)["result"][0]["tests"][0]["flaky"], json!({ "failed_on_run": 3, "of": 5 }));
    let res = call(&client, "cmake_test", json!({ "profiles": ["Debug"], "select": "failed" })).await;
    assert_eq!(ran(&res), ["flaky"], "{}", text(&res));
    assert_contains(text(&res), "Selected 1 of 4 tests: failed last time -> flaky; 3 passed last time.");
    client.cancel().await.expect("shut down");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn targets_with_their_lines_and_the_targets_of_a_file() {
    if !crate::support::real_tools(
        "targets_with_their_lines_and_the_targets_of_a_file",
        &["cmake", "ctest", "ninja", "g++"],
    ) {
        return;
    }
    let ws = TempWorkspace::new("");
    for (path, body) in FILES {
        ws.write(path, body);
    }
    let client = client(&ws).await;
    let res = call(&client, "cmake_targets", json!({ "profiles": ["Debug"] })).await;
    assert_contains(structured(&res)["result"][0]["error"].as_str().unwrap_or_default(), "run cmake_configure first");
    let res = call(&client, "cmake_targets", json!({ "path": "root/etc/passwd" })).await;
    assert_contains(tool_error(&res), "Invalid argument `path`");
    let res = call(&client, "cmake_targets", json!({ "limit": 0 })).await;
    assert_contains(tool_error(&res), "Invalid argument `limit`");
    let res = call(&client, "cmake_configure", json!({ "profiles": ["Debug"] })).await;
    assert!(structured(&res)["result"][0]["error"].is_null(), "{}", text(&res));
    // Once after a configure: the sources no configuration compiles.
    assert_contains(text(&res), "1 source file in project/ no configuration compiles: project/tools/unused.cpp");

    let res = call(&client, "cmake_targets", json!({ "profiles": ["Debug"] })).await;
    let shown = text(&res);
    assert_contains(shown, "Debug (Debug): 5 targets");
    assert_contains(
        shown,
        "core (static_library) project/CMakeLists.txt:5 -> storage/build/cmake-Debug/libcore.a; 1 source; depends on base",
    );
    assert_contains(
        shown,
        "core_test (executable) project/CMakeLists.txt:9 -> storage/build/cmake-Debug/core_test; 1 source; depends on base, core; tests core_test",
    );
    let item = &structured(&res)["result"][0];
    let base = item["targets"].as_array().expect("targets").iter().find(|t| t["name"] == "base").expect("base").clone();
    assert_eq!(base["defined_at"], "project/CMakeLists.txt:4");
    assert_eq!(base["type"], "static_library");
    let res = call(&client, "cmake_targets", json!({ "profiles": ["Debug"], "limit": 2 })).await;
    assert_contains(text(&res), "… 3 more (raise limit to list them)");

    // A source: the target compiling it. A header: none before a build (and the note says why),
    // the including target after.
    let res = call(&client, "cmake_targets", json!({ "profiles": ["Debug"], "path": "src/base.cpp" })).await;
    assert_contains(
        text(&res),
        "Debug (Debug): 1 target\n  base (static_library) compiles it project/CMakeLists.txt:4",
    );
    let res = call(&client, "cmake_targets", json!({ "profiles": ["Debug"], "path": "project/src/base.h" })).await;
    assert_contains(text(&res), "Debug (Debug): 0 targets\n  Note: headers are looked up in Ninja's dependency log");
    let res = call(&client, "cmake_build", json!({ "profiles": ["Debug"] })).await;
    assert!(structured(&res)["result"][0]["error"].is_null(), "{}", text(&res));
    let res = call(&client, "cmake_targets", json!({ "profiles": ["Debug"], "path": "project/src/base.h" })).await;
    assert_contains(
        text(&res),
        "Debug (Debug): 1 target\n  core (static_library) includes it project/CMakeLists.txt:5",
    );
    assert_eq!(structured(&res)["result"][0]["targets"][0]["via"], "includes");

    // A new source no target compiles names the nearest candidate; moving or deleting a compiled
    // source names the target and line that list it.
    let res = call(
        &client,
        "workspace_write_file",
        json!({ "path": "src/extra.cpp", "text": "int extra() { return 3; }\n" }),
    )
    .await;
    assert_contains(
        text(&res),
        "project/src/extra.cpp is compiled by no target; add it to base at project/CMakeLists.txt:4",
    );
    let res = call(&client, "workspace_write_file", json!({ "path": "src/notes.txt", "text": "plain\n" })).await;
    assert!(!text(&res).contains("compiled by"), "{}", text(&res));
    let res =
        call(&client, "workspace_move", json!({ "source": "src/core.cpp", "destination": "src/core2.cpp" })).await;
    assert_contains(
        text(&res),
        "project/src/core.cpp was compiled by core at project/CMakeLists.txt:5; update its sources there",
    );
    let res =
        call(&client, "workspace_move", json!({ "source": "tools/unused.cpp", "destination": "src/unused.cpp" })).await;
    assert_contains(
        text(&res),
        "project/src/unused.cpp is compiled by no target; add it to base at project/CMakeLists.txt:4",
    );
    let res = call(&client, "workspace_delete", json!({ "path": "src/base.cpp" })).await;
    assert_contains(
        text(&res),
        "project/src/base.cpp was compiled by base at project/CMakeLists.txt:4; remove it there",
    );
    client.cancel().await.expect("shut down");
}

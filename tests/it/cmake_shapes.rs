//! CMake tools on small projects the tests write, shaped like the real projects issues came from
//! (pugixml's glob over `tests/*.cpp` through a variable, GSL's `GLOBAL` property and its presets
//! without `CMAKE_EXPORT_COMPILE_COMMANDS`, projects without a `CMakeLists.txt`), with the real
//! cmake, ninja, g++ and clangd (CI or `FORGEMCP_HEAVY_TESTS=1`).

use std::time::Duration;

use forgemcp::server::{ForgeServer, Services};
use rmcp::RoleClient;
use rmcp::service::RunningService;
use serde_json::{Value, json};

use crate::support::{
    TempWorkspace, TestClient, call, connect, progress_log, real_services, structured, text, tool_error,
};

type Client = RunningService<RoleClient, TestClient>;

fn real_tools(test: &str) -> bool {
    crate::support::real_tools(test, &["cmake", "ctest", "ninja", "g++", "clangd"])
}

fn items(result: &rmcp::model::CallToolResult) -> Vec<Value> {
    structured(result)["result"].as_array().expect("a wrapped result list").clone()
}

#[track_caller]
fn assert_contains(haystack: &str, needle: &str) {
    assert!(haystack.contains(needle), "`{needle}` not in:\n{haystack}");
}

/// A workspace with `files` (path, text) as its project, and a server on it.
async fn project(files: &[(&str, &str)], extra: &[&str]) -> (TempWorkspace, Services, Client, TestClient) {
    let ws = TempWorkspace::new("");
    for (path, text) in files {
        ws.write(path, text);
    }
    let services = real_services(&ws, extra);
    let handler = TestClient::new();
    let client = connect(ForgeServer::new(services.clone(), Duration::ZERO), handler.clone()).await;
    (ws, services, client, handler)
}

fn contexts(services: &Services) -> Vec<String> {
    services.cmake.contexts().borrow().iter().map(|c| c.id.clone()).collect()
}

/// pugixml's test glob (a pattern in a variable, `CONFIGURE_DEPENDS` inserted by `list`), a plain
/// glob without `CONFIGURE_DEPENDS`, and GSL's `GLOBAL` property in an included file.
const GLOB_PROJECT: &[(&str, &str)] = &[
    (
        "CMakeLists.txt",
        r#"cmake_minimum_required(VERSION 3.12)
project(shapes CXX)
include(cmake/folders.cmake)
add_library(core src/core.cpp)
set(test-pattern "tests/*.cpp")
if (CMAKE_VERSION VERSION_GREATER 3.11)
  list(INSERT test-pattern 0 CONFIGURE_DEPENDS)
endif()
file(GLOB test-sources ${test-pattern})
add_executable(check ${test-sources})
target_link_libraries(check PRIVATE core)
file(GLOB bench-sources bench/*.cpp)
add_executable(bench ${bench-sources})
"#,
    ),
    ("cmake/folders.cmake", "set_property(GLOBAL PROPERTY USE_FOLDERS ON)\n"),
    ("src/core.cpp", "int core() { return 1; }\n"),
    ("tests/main.cpp", "int core();\nint main() { return core() - 1; }\n"),
    ("bench/main.cpp", "int main() { return 0; }\n"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_files_withdraw_contexts_only_where_a_glob_lists_them() {
    if !real_tools("new_files_withdraw_contexts_only_where_a_glob_lists_them") {
        return;
    }
    let (_ws, services, client, _) = project(GLOB_PROJECT, &[]).await;
    let res = call(&client, "cmake_configure", json!({ "profiles": ["Debug"] })).await;
    assert_eq!(items(&res)[0]["error"], Value::Null, "{}", text(&res));
    assert_eq!(contexts(&services), ["Debug"]);

    // A new directory, a note, a source outside every glob and a file in a globbed directory that no pattern
    // matches keep the context (CMake 3.25 has no glob list in its File API reply; `GLOBAL` is no
    // glob).
    let res = call(&client, "workspace_mkdir", json!({ "path": "docs" })).await;
    assert!(!text(&res).contains("withdrawn"), "{}", text(&res));
    assert_eq!(contexts(&services), ["Debug"]);
    for (path, body) in [
        ("docs/agent-notes.md", "# Notes\n"),
        ("src/extra.cpp", "int extra() { return 2; }\n"),
        ("tests/data.txt", "data\n"),
    ] {
        let res = call(&client, "workspace_write_file", json!({ "path": path, "text": body })).await;
        assert!(!text(&res).contains("withdrawn"), "{path}: {}", text(&res));
        assert!(structured(&res)["clangd"]["withdrawn"].as_array().is_none_or(Vec::is_empty), "{path}");
        assert_eq!(contexts(&services), ["Debug"], "{path} keeps the context");
    }

    // A source the `CONFIGURE_DEPENDS` glob lists withdraws it, and says why.
    let res =
        call(&client, "workspace_write_file", json!({ "path": "tests/more.cpp", "text": "int more = 1;\n" })).await;
    assert_contains(
        text(&res),
        "clangd configurations Debug withdrawn: project/tests/more.cpp may change what CMake globs in project/tests/; \
         run cmake_configure to include it",
    );
    assert_eq!(structured(&res)["clangd"]["withdrawn_glob"], "project/tests");
    assert!(contexts(&services).is_empty());

    // Configure brings it back; a glob without CONFIGURE_DEPENDS withdraws it too.
    let res = call(&client, "cmake_configure", json!({ "profiles": ["Debug"] })).await;
    assert_eq!(items(&res)[0]["error"], Value::Null, "{}", text(&res));
    assert_eq!(contexts(&services), ["Debug"]);
    let res =
        call(&client, "workspace_write_file", json!({ "path": "bench/more.cpp", "text": "int bench = 1;\n" })).await;
    assert_contains(text(&res), "may change what CMake globs in project/bench/; run cmake_configure to include it");
    assert!(contexts(&services).is_empty());

    // A changed CMake input keeps its own wording.
    call(&client, "cmake_configure", json!({ "profiles": ["Debug"] })).await;
    let res = call(
        &client,
        "workspace_write_file",
        json!({ "path": "cmake/folders.cmake", "text": "set_property(GLOBAL PROPERTY USE_FOLDERS OFF)\n" }),
    )
    .await;
    assert_contains(text(&res), "withdrawn: project/cmake/folders.cmake is a CMake input; run cmake_configure");

    // A deletion and its revert say so too, and later answers name the path.
    let globbed = "clangd configurations Debug withdrawn: project/tests/more.cpp may change what CMake globs in \
                   project/tests/; run cmake_configure to include it";
    call(&client, "cmake_configure", json!({ "profiles": ["Debug"] })).await;
    let res = call(&client, "workspace_delete", json!({ "path": "tests/more.cpp" })).await;
    assert_contains(text(&res), globbed);
    assert!(contexts(&services).is_empty());
    call(&client, "cmake_configure", json!({ "profiles": ["Debug"] })).await;
    assert_eq!(contexts(&services), ["Debug"]);
    let history = call(&client, "workspace_history", json!({ "limit": 1 })).await;
    let deletion = structured(&history)["changes"][0]["id"].clone();
    let res = call(&client, "workspace_revert", json!({ "change": deletion })).await;
    assert_contains(text(&res), globbed);
    assert!(contexts(&services).is_empty());
    let res = call(
        &client,
        "workspace_edit_file",
        json!({ "path": "src/core.cpp", "old_text": "return 1;", "new_text": "return 2;" }),
    )
    .await;
    assert_contains(
        text(&res),
        "clangd: not checked — configuration Debug was withdrawn by project/tests/more.cpp; run cmake_configure",
    );
    services.clangd.shutdown().await;
}

/// GSL's preset shape: a hidden base with the generator and binary directory, no
/// `CMAKE_EXPORT_COMPILE_COMMANDS`; one preset that turns it off.
const PRESET_PROJECT: &[(&str, &str)] = &[
    ("CMakeLists.txt", "cmake_minimum_required(VERSION 3.19)\nproject(shapes CXX)\nadd_library(core src/core.cpp)\n"),
    ("src/core.cpp", "int core() { return 1; }\n"),
    (
        "CMakePresets.json",
        r#"{
  "version": 3,
  "configurePresets": [
    { "name": "base", "hidden": true, "generator": "Ninja", "binaryDir": "${sourceDir}/build/${presetName}" },
    { "name": "dbg", "inherits": "base", "cacheVariables": { "CMAKE_BUILD_TYPE": "Debug" } },
    { "name": "quiet", "inherits": "base",
      "cacheVariables": { "CMAKE_EXPORT_COMPILE_COMMANDS": { "type": "BOOL", "value": "OFF" } } }
  ]
}"#,
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configure_presets_get_a_compilation_database_unless_they_turn_it_off() {
    if !real_tools("configure_presets_get_a_compilation_database_unless_they_turn_it_off") {
        return;
    }
    let (ws, services, client, _) = project(PRESET_PROJECT, &[]).await;
    let res = call(&client, "cmake_configure", json!({})).await;
    let configured = items(&res);
    assert_eq!(configured.len(), 2, "{}", text(&res));
    assert_eq!(configured[0]["preset"], "dbg");
    assert_eq!(configured[0]["error"], Value::Null, "{}", text(&res));
    assert_eq!(configured[0]["compilation_database"], "project/build/dbg/compile_commands.json", "{}", text(&res));
    assert!(ws.path("build/dbg/compile_commands.json").is_file());
    assert_eq!(contexts(&services), ["presets/dbg"]);
    assert_eq!(configured[1]["error"], Value::Null, "{}", text(&res));
    assert_eq!(configured[1]["compilation_database"], Value::Null);
    assert_contains(
        text(&res),
        "Note: configure preset `quiet` sets CMAKE_EXPORT_COMPILE_COMMANDS to OFF, so CMake writes no \
         compile_commands.json and clangd gets no configuration from it",
    );
    let res = call(&client, "clangd_diagnostics", json!({ "path": "src/core.cpp" })).await;
    assert_eq!(res.is_error, Some(false), "a preset project gets clangd: {}", text(&res));
    drop(client);
    services.clangd.shutdown().await;

    // A new server on the same storage names the preset's build directory and the call that
    // confirms it, and answers after that configure.
    let services = real_services(&ws, &[]);
    let client = connect(ForgeServer::new(services.clone(), Duration::ZERO), TestClient::new()).await;
    let way_back = "project/build/dbg exists from an earlier session; cmake_configure with profiles [\"presets\"] and \
                    presets [\"dbg\"] confirms it";
    let res = call(&client, "clangd_configurations", json!({})).await;
    assert_contains(text(&res), way_back);
    let res = call(&client, "clangd_diagnostics", json!({ "path": "src/core.cpp" })).await;
    assert_contains(tool_error(&res), way_back);
    let res = call(&client, "cmake_configure", json!({ "profiles": ["presets"], "presets": ["dbg"] })).await;
    assert_eq!(items(&res)[0]["error"], Value::Null, "{}", text(&res));
    let res = call(&client, "clangd_diagnostics", json!({ "path": "src/core.cpp" })).await;
    assert_eq!(res.is_error, Some(false), "{}", text(&res));
    services.clangd.shutdown().await;
}

/// A Makefile project: every CMake tool says once that it does not apply, and offers no profiles.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_without_cmakelists_says_the_cmake_tools_do_not_apply() {
    let files = [("Makefile", "all:\n\tcc -o hello hello.c\n"), ("configure.ac", "AC_INIT([hello], [1.0])\n")];
    let (_ws, _services, client, _) = project(&files, &[]).await;
    let statement =
        "the project has no CMakeLists.txt (it has Makefile, configure.ac), so the CMake tools do not apply to it";
    let res = call(&client, "cmake_profiles", json!({})).await;
    assert_eq!(res.is_error, Some(false));
    assert_eq!(text(&res), format!("No CMake profiles: {statement}."));
    assert_eq!(items(&res), Vec::<Value>::new());
    for tool in ["cmake_configure", "cmake_build", "cmake_test"] {
        let res = call(&client, tool, json!({})).await;
        assert_eq!(res.is_error, Some(true), "{tool}: {}", text(&res));
        assert_eq!(tool_error(&res), format!("{}.", capitalized(statement)), "{tool}");
        assert!(!text(&res).contains("cmake_configure"), "{tool}: no CMake advice");
        assert!(!text(&res).contains("Project/"), "{tool}: qualified paths are lowercase");
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|first| first.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// Presets one at a time: a configure preset whose condition is false on Linux (and the build and
/// test presets that use it), a test preset that finds no tests.
const CONDITION_PROJECT: &[(&str, &str)] = &[
    (
        "CMakeLists.txt",
        r#"cmake_minimum_required(VERSION 3.19)
project(shapes CXX)
enable_testing()
add_executable(unit src/unit.cpp)
if(WITH_TESTS)
  add_test(NAME unit COMMAND unit)
endif()
"#,
    ),
    ("src/unit.cpp", "int main() { return 0; }\n"),
    (
        "CMakePresets.json",
        r#"{
  "version": 3,
  "configurePresets": [
    { "name": "base", "hidden": true, "generator": "Ninja", "binaryDir": "${sourceDir}/build/${presetName}" },
    { "name": "dbg", "inherits": "base", "cacheVariables": { "WITH_TESTS": "ON", "CMAKE_BUILD_TYPE": "Debug" } },
    { "name": "bare", "inherits": "base", "cacheVariables": { "WITH_TESTS": "OFF" } },
    { "name": "win", "inherits": "base",
      "condition": { "type": "equals", "lhs": "${hostSystemName}", "rhs": "Windows" } }
  ],
  "buildPresets": [
    { "name": "dbg", "configurePreset": "dbg" },
    { "name": "bare", "configurePreset": "bare" },
    { "name": "win", "configurePreset": "win" }
  ],
  "testPresets": [
    { "name": "dbg", "configurePreset": "dbg" },
    { "name": "bare", "configurePreset": "bare" },
    { "name": "win", "configurePreset": "win" }
  ]
}"#,
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn presets_run_one_at_a_time_and_say_what_they_left_out() {
    if !real_tools("presets_run_one_at_a_time_and_say_what_they_left_out") {
        return;
    }
    let (ws, services, client, handler) = project(CONDITION_PROJECT, &[]).await;
    let res = call(&client, "cmake_profiles", json!({})).await;
    let profile = &items(&res)[0];
    assert_eq!(profile["configure_presets"], json!(["dbg", "bare"]), "{}", text(&res));
    assert_eq!(profile["build_presets"], json!(["dbg", "bare"]));
    assert_eq!(profile["test_presets"], json!(["dbg", "bare"]));
    assert_eq!(profile["left_out_presets"], json!({ "configure": ["win"], "build": ["win"], "test": ["win"] }));
    assert_contains(text(&res), "\n  Left out (condition false on this host): configure win; build win; test win");

    // One preset at a time, for each kind; an unknown or left-out name is a tool error.
    let res = call(&client, "cmake_configure", json!({ "presets": ["dbg"] })).await;
    assert_eq!(items(&res).len(), 1, "{}", text(&res));
    assert_eq!(items(&res)[0]["preset"], "dbg");
    let res = call(&client, "cmake_configure", json!({ "presets": ["win", "nope"] })).await;
    assert_eq!(res.is_error, Some(true));
    assert_eq!(
        tool_error(&res),
        "No selected preset profile has the configure presets `win`, `nope`; they have dbg, bare (win left out: its \
         condition is false on this host)."
    );
    handler.progress.lock().clear();
    let res = call(&client, "cmake_build", json!({ "presets": ["dbg"], "timeout": 300 })).await;
    let built = items(&res);
    assert_eq!((built.len(), &built[0]["error"]), (1, &Value::Null), "{}", text(&res));
    // The configuration is the one the configure preset sets.
    assert_eq!(built[0]["configuration"], "Debug");
    assert_contains(text(&res), "\n  Configuration: Debug\n");
    // Ninja's `[n/m]` steps carry their total, and no progress exceeds it.
    let log = progress_log(&handler);
    let steps: Vec<&(f64, Option<f64>, Option<String>)> = log.iter().filter(|(_, total, _)| total.is_some()).collect();
    assert!(!steps.is_empty(), "{log:?}");
    assert!(log.iter().all(|(progress, total, _)| total.is_none_or(|total| *progress <= total)), "{log:?}");
    let (last, total, message) = steps.last().expect("a step");
    assert_eq!(Some(*last), *total, "{log:?}");
    assert!(message.as_deref().is_some_and(|m| m.starts_with("presets/dbg: [2/2]")), "{log:?}");
    assert!(log.windows(2).all(|w| w[0].0 < w[1].0), "{log:?}");
    let res = call(&client, "cmake_test", json!({ "presets": ["dbg"] })).await;
    let tested = items(&res);
    assert_eq!((tested.len(), &tested[0]["error"], &tested[0]["tests"][0]["name"]), (1, &Value::Null, &json!("unit")));
    assert_eq!(tested[0]["configuration"], "Debug");

    // The preset's binaryDir is where its targets and artifacts are: the targets list them, and an
    // `affected` run after that one selects nothing until the executable changes.
    let res = call(&client, "cmake_targets", json!({ "presets": ["dbg"] })).await;
    assert_contains(
        text(&res),
        "unit (executable) project/CMakeLists.txt:4 -> project/build/dbg/unit; 1 source; tests unit",
    );
    let affected = json!({ "presets": ["dbg"], "select": "affected" });
    let res = call(&client, "cmake_test", affected.clone()).await;
    assert_eq!(items(&res)[0]["tests"], json!([]), "{}", text(&res));
    assert_eq!(items(&res)[0]["configuration"], "Debug", "{}", text(&res));
    ws.write("src/unit.cpp", "int touched = 1;\nint main() { return 0; }\n");
    call(&client, "cmake_build", json!({ "presets": ["dbg"], "timeout": 300 })).await;
    let res = call(&client, "cmake_test", affected).await;
    assert_eq!(items(&res)[0]["tests"][0]["name"], "unit", "{}", text(&res));

    // A name CTest does not know lists those it knows.
    let res = call(&client, "cmake_test", json!({ "presets": ["dbg"], "names": ["unit", "nope"] })).await;
    assert_eq!(tool_error(&res), "No test is named `nope`; the tests are unit.");

    // A test preset that finds no tests fails, with the reason.
    let res = call(&client, "cmake_test", json!({ "presets": ["bare"] })).await;
    let error = items(&res)[0]["error"].as_str().expect("an error").to_owned();
    assert_contains(
        &error,
        "no tests were found: the build directory of configure preset `bare` has no CTestTestfile.cmake (it was never \
         configured: cmake_configure with presets [\"bare\"]; or the project does not call enable_testing())",
    );
    call(&client, "cmake_configure", json!({ "presets": ["bare"], "timeout": { "total": 300 } })).await;
    let res = call(&client, "cmake_test", json!({ "presets": ["bare"] })).await;
    let error = items(&res)[0]["error"].as_str().expect("an error").to_owned();
    assert_contains(
        &error,
        "ctest exited with code 8: no tests were found: the project registers no tests (add_test) in project/build/bare",
    );
    assert!(ws.path("build/bare/CTestTestfile.cmake").is_file());

    // A plain profile shows its defines and options.
    let explicit = ["--cmake-profile", "dev", "define=WITH_TESTS:BOOL=ON", "cxx-compiler=g++", "sanitizers=address"];
    let services_dev = real_services(&ws, &explicit);
    let dev = connect(ForgeServer::new(services_dev, Duration::ZERO), TestClient::new()).await;
    let res = call(&dev, "cmake_profiles", json!({})).await;
    assert_eq!(items(&res)[0]["defines"], json!(["WITH_TESTS:BOOL=ON"]));
    assert_eq!(items(&res)[0]["options"], json!(["cxx-compiler=g++", "sanitizers=address"]));
    assert_contains(text(&res), "\n  Defines: WITH_TESTS:BOOL=ON\n  Options: cxx-compiler=g++, sanitizers=address");
    services.clangd.shutdown().await;
}

/// A CMake call queued behind a running one says what it waits for (the fake cmake of the task
/// tests configures for a minute; the configure's timeout ends it).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_call_says_what_it_waits_for() {
    let cmake = crate::tasks::SleepingCmake::new();
    let options: Vec<&str> = cmake.options.iter().map(String::as_str).collect();
    let services = real_services(&cmake.ws, &options);
    let handler = TestClient::new();
    let client = connect(ForgeServer::new(services, Duration::ZERO), handler.clone()).await;
    let configure = call(&client, "cmake_configure", json!({ "timeout": 3 }));
    let queued = async {
        cmake.tree().await;
        call(&client, "cmake_test", json!({})).await
    };
    let (configured, tested) = tokio::join!(configure, queued);
    assert_contains(items(&configured)[0]["error"].as_str().unwrap_or_default(), "interrupted by the timeout");
    assert!(items(&tested)[0]["error"].is_string(), "the fake toolset has no ctest: {}", text(&tested));
    let messages: Vec<String> = progress_log(&handler).into_iter().filter_map(|(_, _, message)| message).collect();
    assert!(messages.iter().any(|m| m == "Waiting for the running cmake_configure to finish"), "{messages:?}");
}

/// zlib's shape: the library's sources at the top, a test program's in `test/`, both defined in the
/// top `CMakeLists.txt`, in C.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_source_beside_a_library_names_that_library() {
    if !real_tools("a_new_source_beside_a_library_names_that_library") {
        return;
    }
    let files: &[(&str, &str)] = &[
        (
            "CMakeLists.txt",
            "cmake_minimum_required(VERSION 3.16)\nproject(zshape C)\nadd_library(z adler.c)\n\
             add_executable(example test/example.c)\ntarget_link_libraries(example z)\n",
        ),
        ("adler.c", "int adler(void) { return 1; }\n"),
        ("test/example.c", "int adler(void);\nint main(void) { return adler() - 1; }\n"),
    ];
    let (_ws, services, client, _) = project(files, &[]).await;
    let res = call(&client, "cmake_configure", json!({ "profiles": ["Debug"] })).await;
    assert_eq!(items(&res)[0]["error"], Value::Null, "{}", text(&res));
    let res = call(
        &client,
        "workspace_write_file",
        json!({ "path": "zextra.c", "text": "int zextra(void) { return 0; }\n" }),
    )
    .await;
    assert_contains(text(&res), "project/zextra.c is compiled by no target; add it to z at project/CMakeLists.txt:3");
    services.clangd.shutdown().await;
}

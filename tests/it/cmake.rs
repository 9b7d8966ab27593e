//! CMake tools with the real cmake, ninja and g++ on a temporary copy of
//! `examples/cpp-acceptance-project` (they run under `CI` or with `FORGEMCP_HEAVY_TESTS=1`, and fail
//! when a tool is missing), plus argument checks that need no tools.
//!
//! Each real-tool test shares one configured build across its assertions: configuring and building
//! the fixture is the slow part.

use std::time::Duration;

use forgemcp::cmake::Contexts;
use forgemcp::server::{ForgeServer, Services};
use rmcp::RoleClient;
use rmcp::service::RunningService;
use serde_json::{Value, json};

use crate::support::{
    TempWorkspace, TestClient, acceptance_project, call, connect, progress_log, real_services, structured, text,
    tool_error,
};

type Client = RunningService<RoleClient, TestClient>;

/// Whether the real-tool tests run; when they do, cmake, ninja and g++ must be on `PATH`.
fn real_tools(test: &str) -> bool {
    crate::support::real_tools(test, &["cmake", "ctest", "ninja", "g++"])
}

/// A temporary copy of the acceptance project and a server on it.
struct Fixture {
    ws: TempWorkspace,
}

impl Fixture {
    /// Copies the acceptance project; `presets: false` leaves out the preset file.
    fn new(presets: bool) -> Fixture {
        let ws = acceptance_project();
        if !presets {
            std::fs::remove_file(ws.path("CMakePresets.json")).expect("remove the preset file");
        }
        Fixture { ws }
    }

    /// Services configured by `extra` command-line options, with the real `PATH` for discovery.
    fn services(&self, extra: &[&str]) -> Services {
        real_services(&self.ws, extra)
    }

    async fn connect(&self, services: &Services, handler: TestClient) -> Client {
        connect(ForgeServer::new(services.clone(), Duration::ZERO), handler).await
    }
}

fn items(result: &rmcp::model::CallToolResult) -> Vec<Value> {
    structured(result)["result"].as_array().expect("a wrapped result list").clone()
}

fn ids(contexts: &Contexts) -> Vec<String> {
    contexts.iter().map(|c| c.id.clone()).collect()
}

/// The progress messages received since the last call (the log is emptied).
fn messages(handler: &TestClient) -> Vec<String> {
    let res = progress_log(handler).into_iter().filter_map(|(_, _, message)| message).collect();
    handler.progress.lock().clear();
    res
}

#[track_caller]
fn assert_contains(haystack: &str, needle: &str) {
    assert!(haystack.contains(needle), "`{needle}` not in:\n{haystack}");
}

/// The stdout text of a process, read through `process_get`.
async fn stdout_of(client: &Client, process_id: &Value) -> String {
    let res = call(client, "process_get", json!({ "process_id": process_id, "lines": { "first": 100 } })).await;
    structured(&res)["transcript"]
        .as_array()
        .expect("transcript")
        .iter()
        .filter(|entry| entry["stream"] == "stdout")
        .map(|entry| entry["text"].as_str().expect("text"))
        .collect()
}

#[tokio::test]
async fn presets_profile_configures_builds_and_tests_every_preset() {
    if !crate::support::real_tools(
        "presets_profile_configures_builds_and_tests_every_preset",
        &["cmake", "ctest", "ninja", "g++", "clangd"],
    ) {
        return;
    }
    let fx = Fixture::new(true);
    let services = fx.services(&[]);
    let handler = TestClient::new();
    let client = fx.connect(&services, handler.clone()).await;

    let res = call(&client, "cmake_profiles", json!({})).await;
    assert_eq!(
        items(&res),
        [json!({
            "name": "presets", "toolset_id": "system", "mode": "presets", "build_directory": null,
            "configure_presets": ["ninja-debug", "ninja-debug-negative-tests", "ninja-llvm-dwarf-debug"],
            "build_presets": ["build-ninja-debug"], "test_presets": ["test-ninja-debug"],
            "configuration": null, "generator": null, "defines": [], "options": [],
            "left_out_presets": { "configure": [], "build": [], "test": [] },
        })]
    );
    assert!(text(&res).starts_with("Available CMake profiles: 1.\n\npresets\n  Toolset: system\n  Mode: presets"));
    assert_eq!(messages(&handler), ["Reading CMake profiles", "Read presets"]);

    // Every configure preset runs; the Clang-only one fails on GCC without stopping the others.
    let res = call(&client, "cmake_configure", json!({})).await;
    let configured = items(&res);
    let presets: Vec<&str> = configured.iter().map(|item| item["preset"].as_str().unwrap()).collect();
    assert_eq!(presets, ["ninja-debug", "ninja-debug-negative-tests", "ninja-llvm-dwarf-debug"]);
    // CMake reports each preset's build directory; ForgeMCP learns it from there (never from the
    // preset file) and reaches it with its File API queries.
    for (item, dir) in
        configured[..2].iter().zip(["project/build/ninja-debug", "project/build/ninja-debug-negative-tests"])
    {
        assert_eq!(item["error"], Value::Null, "{item}");
        assert_eq!((item["profile"].as_str(), item["build_directory"].as_str()), (Some("presets"), Some(dir)));
        assert_eq!(item["compilation_database"].as_str(), Some(format!("{dir}/compile_commands.json").as_str()));
        assert!(item["process_id"].is_u64(), "{item}");
    }
    let failed = &configured[2];
    let error = failed["error"].as_str().expect("the DWARF preset fails with GCC");
    assert_contains(error, "cmake exited with code 1: CMake Error at project/CMakeLists.txt:15 (message): ");
    assert_contains(error, "needs a Clang compiler");
    assert!(failed["process_id"].is_u64());
    assert_contains(text(&res), "Configure results: 2 executions succeeded; 1 failed.");
    assert_contains(text(&res), "presets (preset: ninja-llvm-dwarf-debug): Failed");
    let log = messages(&handler);
    assert_eq!(log.first().map(String::as_str), Some("Preparing CMake configure"));
    for expected in [
        "presets/ninja-debug: Starting configure",
        "presets/ninja-debug: Configuring done",
        "presets/ninja-debug: Build files have been written to: project/build/ninja-debug",
        "presets/ninja-debug: Completed successfully",
    ] {
        assert!(log.iter().any(|m| m == expected), "no `{expected}` in {log:#?}");
    }
    assert!(log.iter().any(|m| m.starts_with("presets/ninja-llvm-dwarf-debug: CMake Error at")), "{log:#?}");
    assert_eq!(ids(&services.cmake.contexts().borrow()), ["presets/ninja-debug", "presets/ninja-debug-negative-tests"]);
    // clangd works on the preset contexts.
    let res = call(&client, "clangd_configurations", json!({})).await;
    assert_contains(text(&res), "presets/ninja-debug");
    let res = call(&client, "clangd_diagnostics", json!({ "path": "app/warning_main.cpp" })).await;
    assert!(res.is_error != Some(true), "{}", text(&res));
    assert_contains(text(&res), "deprecated");
    // A second configure knows the directories already: one run per preset.
    let res = call(&client, "cmake_configure", json!({})).await;
    assert_eq!(items(&res)[0]["build_directory"].as_str(), Some("project/build/ninja-debug"));
    assert_eq!(ids(&services.cmake.contexts().borrow()), ["presets/ninja-debug", "presets/ninja-debug-negative-tests"]);
    messages(&handler);

    let res = call(&client, "cmake_build", json!({})).await;
    let built = items(&res);
    assert_eq!(built.len(), 1);
    let build = &built[0];
    assert_eq!((build["preset"].as_str(), &build["error"]), (Some("build-ninja-debug"), &Value::Null), "{build}");
    let total = build["total_steps"].as_u64().expect("ninja reported steps");
    assert!(total >= 5, "{build}");
    assert_eq!(build["completed_steps"].as_u64(), Some(total));
    assert_contains(text(&res), &format!("Steps: {total} of {total} finished"));
    assert!(messages(&handler).iter().any(|m| m.starts_with(&format!("presets/build-ninja-debug: [{total}/{total}]"))));

    let res = call(&client, "cmake_test", json!({})).await;
    let tested = items(&res);
    assert_eq!(tested.len(), 1);
    assert_eq!((tested[0]["preset"].as_str(), &tested[0]["error"]), (Some("test-ninja-debug"), &Value::Null));
    let cases: Vec<(&str, &str, &Value)> = tested[0]["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t["status"].as_str().unwrap(), &t["message"]))
        .collect();
    assert_eq!(
        cases,
        [
            ("fixture_pass", "passed", &Value::Null),
            ("fixture_expected_failure", "passed", &Value::Null),
            ("fixture_skipped", "skipped", &json!("SKIP_RETURN_CODE=77")),
        ]
    );
    assert!(tested[0]["tests"][0]["duration_seconds"].is_f64());
    assert!(messages(&handler).iter().any(|m| m.starts_with("presets/test-ninja-debug: Start 1: fixture_pass")));
    // The JUnit report's temporary directory is gone.
    let leftovers: Vec<_> = std::fs::read_dir(fx.ws.storage.join("tmp"))
        .map(|dir| {
            dir.filter_map(Result::ok)
                .map(|e| e.file_name())
                .filter(|n| n.to_string_lossy().starts_with("ctest-"))
                .collect()
        })
        .unwrap_or_default();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // A direct run passes its arguments literally: spaces, an empty string, and an option that is
    // only data after --echo-args.
    let arguments = json!(["--echo-args", "a b", "", "--fail"]);
    let res = call(
        &client,
        "cmake_run_test",
        json!({ "executable": "build/ninja-debug/fixture_tests", "arguments": arguments,
                "cwd": "project/build/ninja-debug", "timeout": { "total": 30 } }),
    )
    .await;
    let run = structured(&res);
    assert_eq!(run["executable"], "project/build/ninja-debug/fixture_tests");
    assert_eq!(
        (&run["arguments"], &run["cwd"], &run["error"]),
        (&arguments, &json!("project/build/ninja-debug"), &Value::Null)
    );
    assert_eq!(stdout_of(&client, &run["process_id"]).await, "<a b>\n<>\n<--fail>\n");
    let info = call(&client, "process_get", json!({ "process_id": run["process_id"], "max_bytes": 0 })).await;
    assert_eq!(structured(&info)["process"]["summary"]["arguments"], arguments);
    assert_contains(text(&res), "Test executable project/build/ninja-debug/fixture_tests: Succeeded");

    let res = call(
        &client,
        "cmake_run_test",
        json!({ "executable": "build/ninja-debug/fixture_tests", "arguments": ["--fail"] }),
    )
    .await;
    let run = structured(&res);
    let failed = "the test executable exited with code 1\nLast line of output:\n  failing on purpose (--fail)";
    assert_eq!((&run["error"], &run["cwd"]), (&json!(failed), &json!("project/")));
    assert!(run["process_id"].is_u64());
}

#[tokio::test]
async fn plain_profiles_publish_contexts_that_follow_their_inputs() {
    if !real_tools("plain_profiles_publish_contexts_that_follow_their_inputs") {
        return;
    }
    let fx = Fixture::new(false);
    let services = fx.services(&[]);
    let handler = TestClient::new();
    let client = fx.connect(&services, handler.clone()).await;
    let contexts = || ids(&services.cmake.contexts().borrow());

    let res = call(&client, "cmake_profiles", json!({})).await;
    let profiles: Vec<(String, String, String)> = items(&res)
        .iter()
        .map(|p| {
            assert_eq!(
                (&p["mode"], &p["generator"], &p["toolset_id"]),
                (&json!("plain"), &json!("Ninja"), &json!("system"))
            );
            let field = |name: &str| p[name].as_str().unwrap().to_owned();
            (field("name"), field("configuration"), field("build_directory"))
        })
        .collect();
    assert_eq!(
        profiles,
        [
            ("Debug".into(), "Debug".into(), "storage/build/cmake-Debug".into()),
            ("Release".into(), "Release".into(), "storage/build/cmake-Release".into()),
        ]
    );

    let res = call(&client, "cmake_configure", json!({ "profiles": [] })).await;
    for (item, name) in items(&res).iter().zip(["Debug", "Release"]) {
        assert_eq!(item["error"], Value::Null, "{item}");
        assert_eq!(item["build_directory"], format!("storage/build/cmake-{name}"));
        assert_eq!(item["compilation_database"], format!("storage/build/cmake-{name}/compile_commands.json"));
    }
    assert!(fx.ws.storage.join("build/cmake-Debug/.cmake/api/v1/query/client-forgemcp/cmakeFiles-v1").is_file());
    assert_eq!(contexts(), ["Debug", "Release"]);
    let published = services.cmake.contexts().borrow().clone();
    assert_eq!(published[0].toolset_id.as_str(), "system");
    assert_eq!(published[0].compilation_database.to_string(), "storage/build/cmake-Debug/compile_commands.json");
    // Nothing stays protected once CMake is done.
    assert!(services.workspace.protected().list().iter().all(|p| p.owner != "CMake"));

    // An ordinary source edit and an identical rewrite of CMakeLists.txt keep the contexts.
    let res = call(
        &client,
        "workspace_edit_file",
        json!({ "path": "src/math.cpp", "old_text": "return lhs + rhs;", "new_text": "return rhs + lhs;" }),
    )
    .await;
    structured(&res);
    let lists = std::fs::read_to_string(fx.ws.path("CMakeLists.txt")).unwrap();
    structured(&call(&client, "workspace_write_file", json!({ "path": "CMakeLists.txt", "text": lists })).await);
    assert_eq!(contexts(), ["Debug", "Release"]);

    // A real change withdraws both.
    let edited = format!("{lists}# edited through the workspace\n");
    structured(&call(&client, "workspace_write_file", json!({ "path": "CMakeLists.txt", "text": edited })).await);
    assert!(contexts().is_empty());

    // Configure restores the context it confirms, and only that one.
    let res = call(&client, "cmake_configure", json!({ "profiles": ["Debug"] })).await;
    assert_eq!(items(&res).len(), 1);
    assert_eq!(contexts(), ["Debug"]);

    // Building the outdated Release profile regenerates it, which restores its context too.
    let res = call(&client, "cmake_build", json!({ "profiles": ["Release"], "targets": ["fixture_core"] })).await;
    let built = items(&res);
    assert_eq!((&built[0]["error"], &built[0]["configuration"]), (&Value::Null, &json!("Release")), "{}", text(&res));
    assert_eq!(contexts(), ["Debug", "Release"]);
}

#[tokio::test]
async fn explicit_profile_with_defines_reports_failures_and_survives_a_generator_change() {
    if !real_tools("explicit_profile_with_defines_reports_failures_and_survives_a_generator_change") {
        return;
    }
    let fx = Fixture::new(true);
    let profile = ["--cmake-profile", "neg", "configuration=Debug", "define=FIXTURE_NEGATIVE_TESTS:BOOL=ON"];
    let services = fx.services(&profile);
    let handler = TestClient::new();
    let client = fx.connect(&services, handler.clone()).await;

    let res = call(&client, "cmake_profiles", json!({})).await;
    assert_eq!(
        items(&res),
        [json!({
            "name": "neg", "toolset_id": "system", "mode": "plain", "build_directory": "storage/build/cmake-neg",
            "configure_presets": [], "build_presets": [], "test_presets": [], "configuration": "Debug", "generator": "Ninja",
            "defines": ["FIXTURE_NEGATIVE_TESTS:BOOL=ON"], "options": [],
            "left_out_presets": { "configure": [], "build": [], "test": [] },
        })]
    );
    let res = call(&client, "cmake_configure", json!({})).await;
    assert_eq!(items(&res)[0]["error"], Value::Null, "{}", text(&res));
    let cache = std::fs::read_to_string(fx.ws.storage.join("build/cmake-neg/CMakeCache.txt")).unwrap();
    assert_contains(&cache, "FIXTURE_NEGATIVE_TESTS:BOOL=ON");
    assert_contains(&cache, "CMAKE_BUILD_TYPE:STRING=Debug");

    let res = call(&client, "cmake_build", json!({ "parallel": 2 })).await;
    assert_eq!(items(&res)[0]["error"], Value::Null, "{}", text(&res));
    let res = call(&client, "cmake_build", json!({ "targets": ["fixture_compile_error"] })).await;
    let error = items(&res)[0]["error"].as_str().expect("the compile error fails the build").to_owned();
    // The first compiler error names its file by the qualified path.
    assert_contains(&error, "cmake --build exited with code 1: project/negative/compile_error.cpp:4:12: error: ");

    let res = call(&client, "cmake_test", json!({})).await;
    let tested = &items(&res)[0];
    let error = tested["error"].as_str().expect("failing tests fail the execution");
    assert_contains(error, "ctest exited with code 8; 2 failed");
    let cases: Vec<(&str, &str)> = tested["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        cases,
        [
            ("fixture_pass", "passed"),
            ("fixture_expected_failure", "passed"),
            ("fixture_skipped", "skipped"),
            ("fixture_intentional_failure", "failed"),
            ("fixture_timeout", "failed"),
        ]
    );
    assert_contains(tested["tests"][3]["message"].as_str().unwrap(), "failing on purpose (--fail)");
    assert_contains(tested["tests"][4]["message"].as_str().unwrap(), "sleeping for 5 seconds");
    assert_contains(text(&res), "Tests: 2 passed; 2 failed; 1 skipped; 0 not run");
    assert_contains(text(&res), "    failed: fixture_intentional_failure (");

    let res = call(&client, "cmake_test", json!({ "names": ["fixture_pass"] })).await;
    let tested = &items(&res)[0];
    assert_eq!((&tested["error"], tested["tests"].as_array().unwrap().len()), (&Value::Null, 1));

    // A generator change clears the build directory and configures afresh.
    drop(client);
    let changed = fx.services(&[profile[0], profile[1], profile[2], profile[3], "generator=Ninja Multi-Config"]);
    let handler = TestClient::new();
    let client = fx.connect(&changed, handler.clone()).await;
    let res = call(&client, "cmake_configure", json!({})).await;
    assert_eq!(items(&res)[0]["error"], Value::Null, "{}", text(&res));
    let log = messages(&handler);
    assert!(log.iter().any(|m| m == "neg: Clearing build directory for generator change"), "{log:#?}");
    let cache = std::fs::read_to_string(fx.ws.storage.join("build/cmake-neg/CMakeCache.txt")).unwrap();
    assert_contains(&cache, "CMAKE_GENERATOR:INTERNAL=Ninja Multi-Config");
    assert!(!fx.ws.storage.join("build/cmake-neg/fixture_tests").exists(), "the old build outputs are gone");
    assert_eq!(ids(&changed.cmake.contexts().borrow()), ["neg"]);
}

#[tokio::test]
async fn selection_and_argument_errors_are_tool_errors() {
    let ws = TempWorkspace::new(
        "
//- CMakeLists.txt
    project(x NONE)
",
    );
    let client = ws.connect(TestClient::new()).await;
    let err = tool_error(&call(&client, "cmake_configure", json!({ "profiles": ["Debug", "Debug"] })).await).to_owned();
    assert_eq!(err, "Profile `Debug` is named more than once.");
    let err = tool_error(&call(&client, "cmake_build", json!({ "profiles": ["nope", "Release"] })).await).to_owned();
    assert_eq!(err, "No CMake profile is named `nope`; cmake_profiles lists them.");
    let err = tool_error(&call(&client, "cmake_build", json!({ "targets": [] })).await).to_owned();
    assert_eq!(err, "Invalid argument `targets`: the list is empty; omit it for the default target.");
    let err = tool_error(&call(&client, "cmake_test", json!({ "names": [""] })).await).to_owned();
    assert_eq!(err, "Invalid argument `names`: names must not be empty.");
    let err = tool_error(&call(&client, "cmake_configure", json!({ "timeout": { "total": -1 } })).await).to_owned();
    assert_eq!(err, "Invalid argument `timeout.total`: it must be a finite number of seconds, at least 0.");

    ws.write("bin/tool", "not really a program");
    let run = |args: Value| {
        let client = &client;
        async move { tool_error(&call(client, "cmake_run_test", args).await).to_owned() }
    };
    assert_contains(&run(json!({ "executable": "bin/missing" })).await, "Invalid argument `executable`:");
    assert_contains(&run(json!({ "executable": "root/bin/sh" })).await, "Invalid argument `executable`:");
    assert_contains(&run(json!({ "executable": "bin" })).await, "is not a regular file");
    assert_eq!(
        run(json!({ "executable": "bin/tool", "arguments": ["ok", "a\u{0}b"] })).await,
        "Invalid argument `arguments`: argument 2 contains a NUL character."
    );
    let err = run(json!({ "executable": "bin/tool", "cwd": "storage/missing" })).await;
    assert_contains(&err, "Invalid argument `cwd`:");
    assert_contains(&err, "storage is not created automatically");

    // Without discovered tools, the automatic profiles cannot run: each execution says why.
    let res = call(&client, "cmake_configure", json!({})).await;
    let configured = items(&res);
    assert_eq!(configured.len(), 2);
    for item in &configured {
        assert_eq!(item["process_id"], Value::Null);
        assert_contains(item["error"].as_str().unwrap(), "toolset `System` (system) has no cmake");
    }
}

/// A fake cmake (a shell script) keeps running long enough to try changing its build directory.
#[cfg(unix)]
#[tokio::test]
async fn the_build_directory_is_protected_while_cmake_runs() {
    use std::os::unix::fs::PermissionsExt as _;

    let fx = Fixture::new(false);
    let script = fx.ws.base.join("fake-cmake");
    std::fs::write(&script, "#!/bin/sh\necho '-- Pretending to configure'\nsleep 2\necho '-- Configuring done'\n")
        .expect("write the fake cmake");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("make it executable");
    let cmake = format!("cmake={}", script.display());
    let services =
        fx.services(&["--toolset", "fake", &cmake, "--cmake-profile", "p", "toolset=fake", "generator=Unix Makefiles"]);
    let handler = TestClient::new();
    let client = fx.connect(&services, handler.clone()).await;

    let configure = call(&client, "cmake_configure", json!({}));
    let meanwhile = async {
        for _ in 0..500 {
            if services.workspace.protected().list().iter().any(|p| p.owner == "CMake") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let write = json!({ "path": "storage/build/cmake-p/note.txt", "text": "x" });
        let refused = tool_error(&call(&client, "workspace_write_file", write).await).to_owned();
        let deleted = json!({ "path": "storage/build", "recursive": true });
        let refused_delete = tool_error(&call(&client, "workspace_delete", deleted).await).to_owned();
        (refused, refused_delete)
    };
    let (res, (refused, refused_delete)) = tokio::join!(configure, meanwhile);
    assert_contains(&refused, "protected by CMake");
    assert_contains(&refused_delete, "protected by CMake");
    let item = &items(&res)[0];
    // The fake wrote no File API reply and no database: the run succeeded, but there is no context.
    assert_eq!((&item["error"], &item["compilation_database"]), (&Value::Null, &Value::Null), "{item}");
    assert!(services.cmake.contexts().borrow().is_empty());
    assert!(fx.ws.storage.join("build/cmake-p/.cmake/api/v1/query/client-forgemcp/codemodel-v2").is_file());
    let log = messages(&handler);
    assert_eq!(
        log,
        [
            "Preparing CMake configure",
            "p: Starting configure",
            "p: Pretending to configure",
            "p: Configuring done",
            "p: Completed successfully"
        ]
    );
    // Once CMake is done, the directory is writable again.
    let write = json!({ "path": "storage/build/cmake-p/note.txt", "text": "x" });
    structured(&call(&client, "workspace_write_file", write).await);

    // A cache made for another source directory is never configured over (nor cleared).
    let cache = "CMAKE_HOME_DIRECTORY:INTERNAL=/elsewhere\nCMAKE_GENERATOR:INTERNAL=Ninja\n";
    std::fs::write(fx.ws.storage.join("build/cmake-p/CMakeCache.txt"), cache).expect("write a foreign cache");
    let res = call(&client, "cmake_configure", json!({})).await;
    let item = &items(&res)[0];
    assert_eq!(
        (&item["error"], &item["process_id"]),
        (
            &json!(
                "`storage/build/cmake-p` holds the CMake cache of another source directory; use another build-directory"
            ),
            &Value::Null
        )
    );
    assert!(fx.ws.storage.join("build/cmake-p/note.txt").is_file(), "nothing was cleared");
}

//! Failures that explain themselves, with the real cmake, ninja and g++ on a temporary copy of the
//! acceptance project extended (in the copy only) by a crashing and a buffer-overflowing test
//! executable: structured build diagnostics with qualified paths and targets, build error reasons,
//! signal names, sanitizer summaries, failed CTest cases' explaining lines, `..`-free paths, a
//! preset building outside the roots, compiler launchers (ccache), and the storage root that is never
//! created for a direct run.

use std::time::Duration;

use forgemcp::server::ForgeServer;
use rmcp::RoleClient;
use rmcp::service::RunningService;
use serde_json::{Value, json};

use crate::support::{TempWorkspace, TestClient, acceptance_project, call, connect, real_services, structured, text};

type Client = RunningService<RoleClient, TestClient>;

fn real_tools(test: &str) -> bool {
    crate::support::real_tools(test, &["cmake", "ctest", "ninja", "g++"])
}

/// Test programs added to the temporary copy (the checked-in fixture keeps its targets).
const EXTRA_TARGETS: &str = r#"
add_executable(fixture_crash EXCLUDE_FROM_ALL tests/crash.cpp)
add_executable(fixture_overflow EXCLUDE_FROM_ALL tests/overflow.cpp)
add_executable(fixture_dotdot EXCLUDE_FROM_ALL tests/../negative/dotdot.cpp)
add_executable(fixture_long_log EXCLUDE_FROM_ALL tests/long_log.cpp)
add_test(NAME fixture_crash_case COMMAND fixture_crash)
add_test(NAME fixture_long_log_case COMMAND fixture_long_log)
add_test(NAME fixture_overflow_case COMMAND fixture_overflow)
"#;

const CRASH: &str = "#include <csignal>\nint main()\n{\n    std::raise(SIGSEGV);\n    return 0;\n}\n";

const OVERFLOW: &str = "#include <cstdio>\n\
int read_past(const int* values, int count)\n{\n    return values[count];\n}\n\
int main(int argc, char**)\n{\n    int* values = new int[4]{1, 2, 3, 4};\n    std::fputs(\"reading past the buffer\\n\", stderr);\n\
    int value = read_past(values, 3 + argc);\n    delete[] values;\n    return value;\n}\n";

/// 1,500 lines of progress (about 50 KiB) with the failed assertion in the middle, then exit 1.
const LONG_LOG: &str = "#include <cstdio>\n\
int main()\n{\n    for (int step = 1; step <= 1500; ++step) {\n\
        std::printf(\"computing step %d of the long run\\n\", step);\n\
        if (step == 750) {\n\
            std::printf(\"long_log.cpp:7: assertion `total == 7` failed (total is 6)\\n\");\n        }\n    }\n\
    std::printf(\"long run finished after 1500 steps\\n\");\n    return 1;\n}\n";

const DOTDOT: &str = "int main()\n{\n    int unused_value = 1;\n    return 0;\n}\n";

fn extended_project() -> TempWorkspace {
    let ws = acceptance_project();
    std::fs::remove_file(ws.path("CMakePresets.json")).expect("remove the preset file");
    let mut lists = std::fs::read_to_string(ws.path("CMakeLists.txt")).expect("read CMakeLists.txt");
    lists.push_str(EXTRA_TARGETS);
    lists.push_str("target_compile_options(fixture_dotdot PRIVATE -Wall)\n");
    ws.write("CMakeLists.txt", lists);
    ws.write("tests/crash.cpp", CRASH);
    ws.write("tests/overflow.cpp", OVERFLOW);
    ws.write("negative/dotdot.cpp", DOTDOT);
    ws.write("tests/long_log.cpp", LONG_LOG);
    ws
}

async fn client(ws: &TempWorkspace, extra: &[&str]) -> Client {
    let services = real_services(ws, extra);
    connect(ForgeServer::new(services, Duration::ZERO), TestClient::new()).await
}

fn item(result: &rmcp::model::CallToolResult) -> Value {
    let items = structured(result)["result"].as_array().expect("a wrapped result list").clone();
    assert_eq!(items.len(), 1, "{items:#?}");
    items[0].clone()
}

#[track_caller]
fn assert_contains(haystack: &str, needle: &str) {
    assert!(haystack.contains(needle), "`{needle}` not in:\n{haystack}");
}

/// A build of `targets` (the default target when empty) of the Debug profile.
async fn build(client: &Client, targets: &[&str]) -> (Value, String) {
    let mut args = json!({ "profiles": ["Debug"] });
    if !targets.is_empty() {
        args["targets"] = json!(targets);
    }
    let res = call(client, "cmake_build", args).await;
    (item(&res), text(&res).to_owned())
}

#[tokio::test]
async fn build_and_run_failures_explain_themselves() {
    if !real_tools("build_and_run_failures_explain_themselves") {
        return;
    }
    let ws = extended_project();
    let client = client(&ws, &[]).await;
    let res = call(&client, "cmake_configure", json!({ "profiles": ["Debug"] })).await;
    assert_eq!(item(&res)["error"], Value::Null, "{}", text(&res));

    // A warning with its note and include chain, located and attributed to its target.
    let (built, shown) = build(&client, &["fixture_warning"]).await;
    assert_eq!(built["error"], Value::Null);
    let diagnostics = built["diagnostics"].as_array().expect("diagnostics");
    let warning = &diagnostics[0];
    assert_eq!(
        (&warning["path"], &warning["line"], &warning["severity"], &warning["code"], &warning["target"]),
        (
            &json!("project/app/warning_main.cpp"),
            &json!(6),
            &json!("warning"),
            &json!("-Wdeprecated-declarations"),
            &json!("fixture_warning")
        ),
        "{diagnostics:#?}"
    );
    assert!(warning["column"].is_u64());
    assert!(
        diagnostics.iter().any(|d| d["severity"] == "note" && d["path"] == "project/include/fixture/math.hpp"),
        "{diagnostics:#?}"
    );
    assert_contains(&shown, "Diagnostics: 0 errors; 1 warning; ");
    assert_contains(&shown, "  project/app/warning_main.cpp:6:");
    assert_contains(&shown, "[-Wdeprecated-declarations] (target fixture_warning)");

    // The transcript is searchable: `match` keeps the matching lines with their absolute numbers,
    // one header per run of one stream, and every cut says how much it left out.
    let id = &built["process_id"];
    let res = call(&client, "process_get", json!({ "process_id": id, "lines": { "first": 1000 } })).await;
    let whole = text(&res).to_owned();
    assert_eq!(whole.matches("stdout — ").count(), 1, "{whole}");
    let res =
        call(&client, "process_get", json!({ "process_id": id, "lines": { "first": 1000 }, "match": "warning: " }))
            .await;
    let entries = structured(&res)["transcript"].as_array().unwrap().clone();
    assert_eq!(entries.len(), 1, "{entries:#?}");
    let line = entries[0]["start_line"].as_u64().unwrap();
    assert_eq!(entries[0]["end_line"].as_u64(), Some(line));
    assert_contains(entries[0]["text"].as_str().unwrap(), "warning_main.cpp:6:");
    assert_contains(text(&res), &format!("\n{line}: "));
    let res = call(&client, "process_get", json!({ "process_id": id, "max_bytes": 10 })).await;
    assert_contains(text(&res), " more bytes: raise max_bytes or narrow lines");
    let res = call(&client, "process_get", json!({ "process_id": id, "match": "(" })).await;
    assert_contains(crate::support::tool_error(&res), "Invalid argument `match`");

    // A second build of the same target has nothing to do.
    let (_, shown) = build(&client, &["fixture_warning"]).await;
    assert_contains(&shown, "Steps: up to date (no work to do)");

    // A compile error: the reason in the error, the diagnostic with its target.
    let (built, shown) = build(&client, &["fixture_compile_error"]).await;
    let error = built["error"].as_str().expect("the compile error fails the build");
    assert_contains(error, "cmake --build exited with code 1: project/negative/compile_error.cpp:4:12: error: ");
    assert_contains(error, "fixture_undeclared_value");
    let first = &built["diagnostics"][0];
    assert_eq!((&first["severity"], &first["target"]), (&json!("error"), &json!("fixture_compile_error")));
    assert_contains(&shown, "finished; 1 step failed");
    assert_contains(&shown, "Diagnostics: 1 error; ");

    // A link error: the linker's message at the call's line.
    let (built, _) = build(&client, &["fixture_link_error"]).await;
    let error = built["error"].as_str().expect("the link error fails the build");
    assert_contains(error, "project/negative/link_error.cpp:6: error: undefined reference to");
    let link = built["diagnostics"].as_array().unwrap().iter().find(|d| d["severity"] == "error").cloned().unwrap();
    assert_eq!(
        (&link["path"], &link["target"]),
        (&json!("project/negative/link_error.cpp"), &json!("fixture_link_error"))
    );

    // The build tool's own error.
    let (built, _) = build(&client, &["no_such_target"]).await;
    assert_contains(built["error"].as_str().unwrap(), "ninja: error: unknown target 'no_such_target'");

    // A source named through `..` is reported without it.
    let (built, _) = build(&client, &["fixture_dotdot"]).await;
    let paths: Vec<&Value> = built["diagnostics"].as_array().unwrap().iter().map(|d| &d["path"]).collect();
    assert!(paths.contains(&&json!("project/negative/dotdot.cpp")), "{paths:?}");

    // A death by signal is named, with the last output lines.
    let (built, _) = build(&client, &["fixture_crash"]).await;
    assert_eq!(built["error"], Value::Null);
    let res = call(
        &client,
        "cmake_run_test",
        json!({ "executable": "storage/build/cmake-Debug/fixture_crash", "cwd": "storage/build/cmake-Debug" }),
    )
    .await;
    let error = structured(&res)["error"].as_str().expect("the crash fails the run").to_owned();
    // The reason, then the stack (issue 31), also in the structured `crash`.
    let (reason, stack) = error.split_once('\n').expect("the stack follows the reason");
    assert_eq!(reason, "the test executable was killed by signal 11 (SIGSEGV)");
    assert_contains(stack, "main at project/tests/crash.cpp:");
    assert_eq!(structured(&res)["crash"]["signal"], "SIGSEGV");
    assert_contains(text(&res), "Error: the test executable was killed by signal 11 (SIGSEGV)");
}

/// The case named `name` of a `cmake_test` item.
fn case<'a>(tested: &'a Value, name: &str) -> &'a Value {
    let cases = tested["tests"].as_array().expect("tests");
    cases.iter().find(|case| case["name"] == name).unwrap_or_else(|| panic!("no case {name} in {cases:#?}"))
}

#[tokio::test]
async fn failed_ctest_cases_keep_their_reasons() {
    if !real_tools("failed_ctest_cases_keep_their_reasons") {
        return;
    }
    let ws = extended_project();
    let client = client(&ws, &[]).await;
    let res = call(&client, "cmake_configure", json!({ "profiles": ["Debug"] })).await;
    assert_eq!(item(&res)["error"], Value::Null, "{}", text(&res));
    let (built, shown) = build(&client, &["fixture_crash", "fixture_long_log"]).await;
    assert_eq!(built["error"], Value::Null, "{shown}");
    let names = ["fixture_crash_case", "fixture_long_log_case"];
    let res = call(&client, "cmake_test", json!({ "profiles": ["Debug"], "names": names })).await;
    let tested = item(&res);
    let shown = text(&res);
    assert_contains(tested["error"].as_str().expect("failing cases fail the run"), "2 failed");

    // A death by signal is named first, in the structured message and in the text.
    let crash = case(&tested, "fixture_crash_case");
    assert_eq!(crash["status"], "failed");
    let message = crash["message"].as_str().expect("a crash message");
    assert_eq!(message.lines().next(), Some("killed by signal 11 (SIGSEGV)"), "{message}");
    assert_contains(shown, "    failed: fixture_crash_case (");
    assert_contains(shown, "\n      killed by signal 11 (SIGSEGV)\n");

    // A long log keeps its head, the assertion from its middle and its tail, within the budget.
    let long = case(&tested, "fixture_long_log_case");
    assert_eq!(long["status"], "failed");
    let message = long["message"].as_str().expect("a failure message");
    assert!(message.len() <= 8 * 1024 + 256, "{} bytes:\n{message}", message.len());
    for kept in [
        "computing step 1 of the long run\n",
        "long_log.cpp:7: assertion `total == 7` failed (total is 6)",
        "computing step 1500 of the long run\n",
        "long run finished after 1500 steps",
        " lines left out\n",
    ] {
        assert_contains(message, kept);
    }
    assert!(!message.contains("computing step 700 of"), "the middle is left out: {message}");
    let assertion = message.find("assertion `total").unwrap();
    assert!(message.find("step 10 of").unwrap() < assertion, "the head comes first: {message}");
    assert!(assertion < message.find("step 1490 of").unwrap(), "the tail comes last: {message}");
    assert_contains(shown, "\n      long_log.cpp:7: assertion `total == 7` failed (total is 6)\n");
}

#[tokio::test]
async fn an_address_sanitizer_profile_summarises_the_overflow() {
    if !real_tools("an_address_sanitizer_profile_summarises_the_overflow") {
        return;
    }
    let ws = extended_project();
    let client = client(&ws, &["--cmake-profile", "asan", "configuration=Debug", "sanitizers=address,undefined"]).await;
    let res = call(&client, "cmake_configure", json!({})).await;
    assert_eq!(item(&res)["error"], Value::Null, "{}", text(&res));
    let res = call(&client, "cmake_build", json!({ "targets": ["fixture_overflow"] })).await;
    assert_eq!(item(&res)["error"], Value::Null, "{}", text(&res));
    let res = call(
        &client,
        "cmake_run_test",
        json!({ "executable": "storage/build/cmake-asan/fixture_overflow", "cwd": "project/" }),
    )
    .await;
    let error = structured(&res)["error"].as_str().expect("the overflow fails the run").to_owned();
    assert_contains(
        &error,
        "the test executable exited with code 1\nAddressSanitizer: heap-buffer-overflow (READ of size 4",
    );
    assert_contains(&error, "\n  at project/tests/overflow.cpp:4");
    assert_contains(&error, " in read_past(int const*, int)\n  from project/tests/overflow.cpp:10");
    assert!(!error.contains(":8 in main"), "the allocation stack is not the failure's: {error}");
    assert_contains(&error, "\nLast line of output:\n  reading past the buffer");
    assert!(!error.contains(&ws.project.display().to_string()), "{error}");

    // The same report in a CTest case: the summary and the project's frames come first.
    let res = call(&client, "cmake_test", json!({ "names": ["fixture_overflow_case"] })).await;
    let tested = item(&res);
    let message = case(&tested, "fixture_overflow_case")["message"].as_str().expect("a failure message").to_owned();
    assert!(message.starts_with("AddressSanitizer: heap-buffer-overflow (READ of size 4"), "{message}");
    assert_contains(&message, "\n  at project/tests/overflow.cpp:4");
    assert_contains(text(&res), "\n      AddressSanitizer: heap-buffer-overflow (READ of size 4");
    assert!(!message.contains(&ws.project.display().to_string()), "{message}");
}

#[tokio::test]
async fn a_preset_building_outside_the_roots_is_said_plainly() {
    if !real_tools("a_preset_building_outside_the_roots_is_said_plainly") {
        return;
    }
    let ws = acceptance_project();
    let outside = ws.base.join("elsewhere/build");
    let presets = json!({
        "version": 6,
        "configurePresets": [{
            "name": "outside", "generator": "Ninja", "binaryDir": outside.display().to_string(),
            "cacheVariables": { "CMAKE_BUILD_TYPE": "Debug", "CMAKE_EXPORT_COMPILE_COMMANDS": "ON" },
        }],
    });
    ws.write("CMakePresets.json", presets.to_string());
    let client = client(&ws, &[]).await;
    let res = call(&client, "cmake_configure", json!({})).await;
    let configured = item(&res);
    assert_eq!((&configured["preset"], &configured["error"]), (&json!("outside"), &Value::Null), "{}", text(&res));
    assert!(outside.join("CMakeCache.txt").is_file(), "CMake built where the preset says");
    let shown = format!("root/{}", outside.display().to_string().trim_start_matches('/'));
    let note = format!(
        "CMake wrote the build files to {shown} (outside project/ and storage/), so clangd gets no configuration \
         from this preset"
    );
    assert_eq!(configured["build_directory"], Value::Null);
    assert_contains(text(&res), &format!("\n  Note: {note}"));
    let res = call(&client, "clangd_configurations", json!({})).await;
    assert_eq!(structured(&res)["result"], json!([]), "{}", text(&res));
}

/// ccache's hit count (direct plus preprocessed) in the user's cache, which the builds use.
fn ccache_hits() -> u64 {
    #[expect(clippy::disallowed_methods, reason = "the test reads ccache's statistics, no server process")]
    let out = std::process::Command::new("ccache").arg("--print-stats").output().expect("ccache runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .filter(|(key, _)| *key == "direct_cache_hit" || *key == "preprocessed_cache_hit")
        .filter_map(|(_, value)| value.trim().parse::<u64>().ok())
        .sum()
}

#[tokio::test]
async fn a_ccache_launcher_hits_the_cache_on_a_second_clean_build() {
    let tools = ["cmake", "ninja", "g++", "ccache"];
    if !crate::support::real_tools("a_ccache_launcher_hits_the_cache_on_a_second_clean_build", &tools) {
        return;
    }
    let ws = acceptance_project();
    std::fs::remove_file(ws.path("CMakePresets.json")).expect("remove the preset file");
    let client = client(&ws, &["--cmake-profile", "cached", "configuration=Debug", "compiler-launcher=ccache"]).await;
    let res = call(&client, "cmake_configure", json!({})).await;
    assert_eq!(item(&res)["error"], Value::Null, "{}", text(&res));
    let cache = std::fs::read_to_string(ws.storage.join("build/cmake-cached/CMakeCache.txt")).unwrap();
    assert!(cache.lines().any(|l| l.starts_with("CMAKE_CXX_COMPILER_LAUNCHER") && l.ends_with("ccache")), "{cache}");
    let mut hits = Vec::new();
    for round in 0..2 {
        let res = call(&client, "cmake_build", json!({ "targets": ["clean"] })).await;
        assert_eq!(item(&res)["error"], Value::Null, "{}", text(&res));
        let res = call(&client, "cmake_build", json!({ "targets": ["fixture_good"] })).await;
        assert_eq!(item(&res)["error"], Value::Null, "round {round}: {}", text(&res));
        hits.push(ccache_hits());
    }
    // The fixture_good build compiles three sources; the second clean build finds all of them.
    assert!(hits[1] >= hits[0] + 3, "ccache hits after each round: {hits:?}");
}

#[tokio::test]
async fn a_run_in_a_missing_storage_root_is_refused_and_creates_nothing() {
    let ws = TempWorkspace::new("//- run.sh\n    #!/bin/sh\n");
    let client = client(&ws, &[]).await;
    assert!(!ws.storage.exists(), "the storage root is not created at startup");
    for (executable, cwd, argument) in
        [("project/run.sh", "storage/", "cwd"), ("storage/build/app", "project/", "executable")]
    {
        let res = call(&client, "cmake_run_test", json!({ "executable": executable, "cwd": cwd })).await;
        let error = crate::support::tool_error(&res);
        assert_contains(error, &format!("`{argument}`"));
        assert_contains(error, "storage is not created automatically");
        assert!(!ws.storage.exists(), "a refused run created the storage root");
    }
}

/// A project whose builds print the same diagnostics many times: a header's warning in two
/// translation units of two targets (which name it differently), a template's error once per instantiation, a link that fails,
/// a source that was moved away, and (appended later) a regeneration error.
const REPEATS: &str = r#"
//- CMakeLists.txt
    cmake_minimum_required(VERSION 3.20)
    project(repeats CXX)
    add_library(shapes STATIC src/shapes.cpp)
    target_include_directories(shapes PUBLIC include)
    target_compile_options(shapes PRIVATE -Wall)
    add_executable(shapes_check tests/check.cpp)
    target_link_libraries(shapes_check PRIVATE shapes)
    target_compile_options(shapes_check PRIVATE -Wall)
    add_executable(templated EXCLUDE_FROM_ALL src/templated.cpp)
    add_executable(unlinked EXCLUDE_FROM_ALL src/unlinked.cpp)
    add_executable(moved EXCLUDE_FROM_ALL src/moved.cpp)
//- include/shapes.hpp
    #pragma once
    inline int area(int side) {
        int unused_perimeter = 4 * side;
        return side * side;
    }
//- src/shapes.cpp
    #include "shapes.hpp"
    int square(int side) { return area(side); }
//- tests/check.cpp
    #include "../include/shapes.hpp"
    int main() { return area(2) == 4 ? 0 : 1; }
//- src/templated.cpp
    template <class T> struct box {
        T value;
        int size() const { return value.size_of_it(); }
    };
    int main() {
        box<int> a{};
        box<long> b{};
        box<char> c{};
        return a.size() + b.size() + c.size();
    }
//- src/unlinked.cpp
    int missing_function(int value);
    int main() { return missing_function(1); }
//- src/moved.cpp
    int main() { return 0; }
"#;

#[tokio::test]
async fn build_diagnostics_are_counted_once_with_where_they_were_printed() {
    if !real_tools("build_diagnostics_are_counted_once_with_where_they_were_printed") {
        return;
    }
    let ws = TempWorkspace::new(REPEATS);
    let client = client(&ws, &[]).await;
    let res = call(&client, "cmake_configure", json!({ "profiles": ["Debug"] })).await;
    assert_eq!(item(&res)["error"], Value::Null, "{}", text(&res));

    // The header's warning: one diagnostic printed by two translation units of two targets, and
    // the same counts in the call's summary, the execution's line and the structured items.
    let (built, shown) = build(&client, &[]).await;
    assert_eq!(built["error"], Value::Null, "{shown}");
    let diagnostics = built["diagnostics"].as_array().expect("diagnostics").clone();
    let warnings: Vec<&Value> = diagnostics.iter().filter(|d| d["severity"] == "warning").collect();
    assert_eq!(warnings.len(), 1, "{diagnostics:#?}");
    let warning = warnings[0];
    assert_eq!(
        (&warning["path"], &warning["line"], &warning["count"]),
        (&json!("project/include/shapes.hpp"), &json!(3), &json!(2))
    );
    let mut targets: Vec<&str> = warning["targets"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    targets.sort_unstable();
    assert_eq!(targets, ["shapes", "shapes_check"], "{warning}");
    // The compilers name the header in two ways (`…/include/shapes.hpp`, `…/tests/../include/
    // shapes.hpp`); the repeat's include chain is the first printing's.
    let notes = diagnostics.iter().filter(|d| d["severity"] == "note").count();
    assert_eq!(notes, 1, "{diagnostics:#?}");
    let counts = format!("Diagnostics: 0 errors; 1 warning; {notes} note");
    assert_eq!(shown.matches(&counts).count(), 2, "the call's and the execution's counts agree:\n{shown}");
    assert_contains(&shown, "[-Wunused-variable] (2 translation units: ");
    assert_eq!(shown.matches("unused variable").count(), 1, "{shown}");

    // A template's error, printed once per instantiation, is one diagnostic.
    let (built, shown) = build(&client, &["templated"]).await;
    let errors: Vec<&Value> =
        built["diagnostics"].as_array().unwrap().iter().filter(|d| d["severity"] == "error").collect();
    assert_eq!(errors.len(), 1, "{shown}");
    assert_eq!((&errors[0]["path"], &errors[0]["count"]), (&json!("project/src/templated.cpp"), &json!(3)));
    assert_contains(&shown, "(3 instantiations in 1 translation unit: templated)");
    assert_contains(&shown, "Diagnostics: 1 error; ");
    assert_contains(&shown, "Steps: 0 of 2 finished; 1 step failed");

    // A failed link says so.
    let (built, shown) = build(&client, &["unlinked"]).await;
    assert!(built["error"].is_string(), "{shown}");
    assert_contains(&shown, "finished; linking failed (unlinked)");
    assert!(!shown.contains("before the failure"), "{shown}");

    // A source moved away after it was built: the compiler's error without a position is a
    // diagnostic.
    let (built, shown) = build(&client, &["moved"]).await;
    assert_eq!(built["error"], Value::Null, "{shown}");
    std::fs::rename(ws.path("src/moved.cpp"), ws.path("src/renamed.cpp")).unwrap();
    let (built, shown) = build(&client, &["moved"]).await;
    let errors: Vec<&Value> =
        built["diagnostics"].as_array().unwrap().iter().filter(|d| d["severity"] == "error").collect();
    assert_eq!(errors.len(), 1, "{shown}");
    assert_eq!(errors[0]["path"], Value::Null);
    assert_eq!(errors[0]["message"], "project/src/moved.cpp: No such file or directory", "{shown}");
    assert_contains(&shown, "\n  error: project/src/moved.cpp: No such file or directory (target moved)");
    assert_contains(built["error"].as_str().unwrap(), "error: project/src/moved.cpp: No such file or directory");

    // A regeneration error during a build names the file qualified.
    let mut lists = std::fs::read_to_string(ws.path("CMakeLists.txt")).unwrap();
    let line = lists.lines().count() + 1;
    lists.push_str("message(FATAL_ERROR \"stop here\")\n");
    ws.write("CMakeLists.txt", lists);
    let (built, shown) = build(&client, &[]).await;
    let error = built["error"].as_str().expect("the regeneration fails the build");
    assert_contains(error, &format!("CMake Error at project/CMakeLists.txt:{line} (message): stop here"));
    assert!(!shown.contains(&ws.project.display().to_string()), "{shown}");
}

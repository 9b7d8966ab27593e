//! MCP App widgets: every tool's `_meta.ui.resourceUri` is listed and readable with the exact MIME
//! and `_meta.ui`; and the recorded tool results in `frontend/tests/fixtures/` that the browser tests
//! render are those of the real tools (`FORGEMCP_WRITE_FIXTURES=1` rewrites them).

use std::collections::{BTreeMap, BTreeSet};

use forgemcp::widgets::{WIDGET_MIME_TYPE, Widget};
use rmcp::model::ResourceContents;
use serde_json::{Value, json};

use crate::support::{TempWorkspace, TestClient, read_resource};

fn expected_ui_meta() -> Value {
    json!({ "prefersBorder": true, "permissions": { "clipboardWrite": {} } })
}

#[tokio::test]
async fn every_tool_widget_is_listed_and_readable_as_an_mcp_app() {
    let ws = TempWorkspace::new("");
    let client = ws.connect(TestClient::new()).await;
    let listed: BTreeMap<String, rmcp::model::Resource> = client
        .list_all_resources()
        .await
        .expect("resources/list")
        .into_iter()
        .filter(|r| r.uri.starts_with("ui://"))
        .map(|r| (r.uri.clone(), r))
        .collect();
    let all: BTreeSet<String> = Widget::ALL.iter().map(|w| w.uri().to_owned()).collect();
    assert_eq!(listed.keys().cloned().collect::<BTreeSet<_>>(), all, "exactly the widget table is listed");

    let tools = client.list_all_tools().await.expect("tools/list");
    let used: BTreeSet<String> = tools
        .iter()
        .map(|tool| {
            let meta = tool.meta.as_ref().expect("_meta");
            meta.get("ui").and_then(|ui| ui.get("resourceUri")).and_then(Value::as_str).expect("uri").to_owned()
        })
        .collect();
    assert!(used.is_subset(&all), "every tool names a listed widget: {used:?}");

    for (uri, resource) in &listed {
        assert_eq!(resource.mime_type.as_deref(), Some(WIDGET_MIME_TYPE), "{uri}");
        let list_meta = resource.meta.as_ref().and_then(|m| m.get("ui")).expect("list entry _meta.ui");
        assert_eq!(list_meta, &expected_ui_meta(), "{uri}");
        let contents = read_resource(&client, uri).await.expect("resources/read");
        assert_eq!(contents.len(), 1, "{uri}: exactly one content item");
        let ResourceContents::TextResourceContents { uri: read_uri, mime_type, text, meta } = &contents[0] else {
            panic!("{uri}: a text content item");
        };
        assert_eq!(read_uri, uri);
        assert_eq!(mime_type.as_deref(), Some(WIDGET_MIME_TYPE), "{uri}");
        assert_eq!(meta.as_ref().and_then(|m| m.get("ui")), Some(&expected_ui_meta()), "{uri}");
        assert!(text.starts_with("<!doctype html>"), "{uri}: an HTML document");
        // `assets/` is committed build output, so this checkout serves the real widgets.
        assert!(!text.contains("Missing assets"), "{uri} is built (run `npm run build --prefix frontend`)");
        assert!(text.contains("ui/initialize"), "{uri} carries the MCP Apps view glue");
    }
}

#[test]
fn an_unbuilt_widget_is_an_explicit_missing_assets_page() {
    let page = forgemcp::widgets::missing_asset_page("workspace-tree.html");
    assert!(page.starts_with("<!doctype html>"));
    assert!(page.contains("Missing assets") && page.contains("assets/workspace-tree.html"));
    assert!(page.contains("npm run build --prefix frontend"));
}

#[cfg(all(feature = "test-tools", unix))]
mod fixtures {
    //! Records one result per case and tool, as the browser tests consume them:
    //! `{origin, tool, arguments, result, resources: {uri: ReadResourceResult}}` under
    //! `frontend/tests/fixtures/<widget>/<case>.json`. Machine paths, result ids, pids and times are
    //! replaced by stable values when written; the comparison also ignores times, pids, work times,
    //! owners and birth times, which differ between machines and runs.

    use std::path::{Path, PathBuf};
    use std::time::Duration;

    use forgemcp::call::Call;
    use forgemcp::process::{CommandSpec, ProcessService};
    use forgemcp::server::ForgeServer;
    use regex::Regex;
    use rmcp::model::ReadResourceResult;
    use serde_json::{Value, json};
    use tokio_util::sync::CancellationToken;

    use crate::support::{TempWorkspace, TestClient, call, connect};

    const PROJECT: &str = r#"
//- CMakeLists.txt
    cmake_minimum_required(VERSION 3.20)
    project(geometry CXX)
    add_library(geometry src/geometry/vector.cpp)
    target_include_directories(geometry PUBLIC include)
    add_executable(demo src/main.cpp)
    target_link_libraries(demo PRIVATE geometry)
//- include/geometry/vector.hpp
    #pragma once

    namespace geometry {

    /// A two-dimensional vector.
    struct Vector {
        double x = 0;
        double y = 0;

        double length() const;
        Vector normalized() const;
    };

    Vector operator+(Vector a, Vector b);

    } // namespace geometry
//- src/geometry/vector.cpp
    #include "geometry/vector.hpp"

    #include <cmath>

    namespace geometry {

    double Vector::length() const { return std::sqrt(x * x + y * y); }

    Vector Vector::normalized() const {
        const double n = length();
        return n == 0 ? Vector{} : Vector{x / n, y / n};
    }

    Vector operator+(Vector a, Vector b) { return Vector{a.x + b.x, a.y + b.y}; }

    } // namespace geometry
//- src/main.cpp
    #include <iostream>

    #include "geometry/vector.hpp"

    int main() {
        const geometry::Vector v{3, 4};
        std::cout << "length " << v.length() << '\n';
        const geometry::Vector n = v.normalized();
        std::cout << "normalized " << n.x << ", " << n.y << " (the unit vector pointing the same way as the input, whose length is exactly one unless the input was the zero vector, in which case it stays zero)\n";
        return 0;
    }
//- tests/vector_test.cpp
    #include "geometry/vector.hpp"

    int main() {
        const geometry::Vector v{3, 4};
        return v.length() == 5 ? 0 : 1;
    }
//- docs/notes.md
    # Notes

    The geometry library keeps vectors small: two doubles, no allocation.

    Design note: every operation is a free function or a const member so that callers can compose them freely in constant expressions later on, and the only type the library exports for now is geometry::Vector, which callers pass by value.
//- .config/local.txt
    hidden directory content
"#;

    const RECORDED: &str = "recorded by tests/it/widgets.rs";

    /// One recorded case: the widget's directory, the case name, the tool and its arguments.
    struct Case {
        widget: &'static str,
        name: &'static str,
        tool: &'static str,
        arguments: Value,
    }

    fn case(widget: &'static str, name: &'static str, tool: &'static str, arguments: Value) -> Case {
        Case { widget, name, tool, arguments }
    }

    impl Case {
        fn path(&self) -> PathBuf {
            fixtures_dir().join(self.widget).join(format!("{}.json", self.name))
        }
    }

    fn fixtures_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("frontend/tests/fixtures")
    }

    fn helper() -> PathBuf {
        PathBuf::from(env!("CARGO_BIN_EXE_forgemcp-test-helper"))
    }

    /// A copy of the fake tool at a fixed place in the workspace's temporary directory: texts clip
    /// long command lines, and where the clip falls must not depend on where the target directory is.
    fn placed_helper(ws: &TempWorkspace) -> PathBuf {
        let placed = ws.base.join("tools").join(helper().file_name().expect("a file name"));
        std::fs::create_dir_all(ws.base.join("tools")).expect("tools directory");
        std::fs::copy(helper(), &placed).expect("copy the helper");
        placed
    }

    /// Runs the fake tool with `steps` through the process service (it shows up in the process tools).
    async fn run_helper(processes: &ProcessService, program: &Path, cwd: &Path, steps: &[&str], call: &Call) {
        processes.run(CommandSpec::new(program, cwd).args(steps), call).await.expect("the helper runs");
    }

    #[tokio::test]
    async fn recorded_fixtures_match_the_real_tools() {
        let ws = TempWorkspace::new(PROJECT);
        ws.write("assets/logo.bin", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR Vector");
        ws.write("assets/latin1.txt", b"Vector caf\xe9\n");
        #[cfg(unix)]
        std::os::unix::fs::symlink("geometry", ws.path("src/current")).expect("symlink");

        // A System toolset found on a `PATH` of fake tools that print fixed version banners.
        let bin = ws.base.join("bin");
        std::fs::create_dir(&bin).expect("bin dir");
        for (tool, banner) in [
            ("cmake", "cmake version 3.28.3\n\nCMake suite maintained and supported by Kitware (kitware.com/cmake)."),
            ("ctest", "ctest version 3.28.3\n\nCMake suite maintained and supported by Kitware (kitware.com/cmake)."),
            ("ninja", "1.11.1"),
            ("clangd", "Debian clangd version 16.0.6 (15)\nFeatures: linux+grpc\nPlatform: x86_64-pc-linux-gnu"),
        ] {
            let path = bin.join(tool);
            std::fs::write(&path, format!("#!/bin/sh\nprintf '%s\\n' '{banner}'\n")).expect("fake tool");
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
        }
        let mut discovery = ws.discovery();
        discovery.env.path = Some(bin.into_os_string());
        let processes = ProcessService::new(ws.roots());
        let server = ForgeServer::new(ws.services_with_discovery(processes.clone(), discovery), Duration::ZERO);
        let client = connect(server, TestClient::new()).await;

        let program = placed_helper(&ws);
        let steps_ok = [
            "out:-- The CXX compiler identification is GNU 12.2.0\\n-- Detecting CXX compiler ABI info\\n",
            "sleep:60",
            "err:CMake Warning (dev) in CMakeLists.txt:\\n  No project() command is present.\\n",
            "sleep:60",
            "out:-- Configuring done (0.4s)\\n-- Generating done (0.0s)\\n-- Build files have been written to: storage/build/cmake-Debug\\n",
        ];
        run_helper(&processes, &program, &ws.project, &steps_ok, &Call::detached()).await;
        let steps_fail =
            ["out:[1/2] Building CXX object src/main.cpp.o\\n", "sleep:60", "err:FAILED: demo\\n", "exit:2"];
        run_helper(&processes, &program, &ws.project, &steps_fail, &Call::detached()).await;
        let running = CancellationToken::new();
        let running_call = Call::new(forgemcp::call::Progress::disabled(), running.clone(), None);
        let (service, project, placed) = (processes.clone(), ws.project.clone(), program.clone());
        let task = tokio::spawn(async move {
            run_helper(&service, &placed, &project, &["out:waiting for input\\n", "sleep:60000"], &running_call).await
        });
        wait_until_running(&processes).await;

        let cases = vec![
            case("workspace-tree", "list", "workspace_list", json!({ "path": "project/", "depth": 2 })),
            case(
                "workspace-tree",
                "list-all-hidden",
                "workspace_list",
                json!({ "depth": null, "include_hidden": true }),
            ),
            case("workspace-tree", "find-files", "workspace_find_files", json!({ "pattern": "*.?pp" })),
            case("workspace-file", "read", "workspace_read_file", json!({ "path": "src/main.cpp" })),
            case(
                "workspace-file",
                "read-range",
                "workspace_read_file",
                json!({ "path": "project/include/geometry/vector.hpp", "start_line": 5, "end_line": 12 }),
            ),
            case("workspace-file", "error", "workspace_read_file", json!({ "path": "src/missing.cpp" })),
            case("workspace-search", "literal", "workspace_text_search", json!({ "query": "Vector" })),
            case(
                "workspace-search",
                "regex-truncated",
                "workspace_text_search",
                json!({ "query": "\\b(length|normalized)\\b", "regex": true, "max_matches": 4 }),
            ),
            case(
                "workspace-search",
                "none",
                "workspace_text_search",
                json!({ "query": "no such text", "extensions": ["md"] }),
            ),
            case("workspace-result", "file-info", "workspace_file_info", json!({ "path": "src/main.cpp" })),
            case(
                "workspace-result",
                "write-created",
                "workspace_write_file",
                json!({ "path": "src/geometry/angle.hpp", "text": "#pragma once\n\nnamespace geometry {\ndouble degrees(double radians);\n}\n" }),
            ),
            case(
                "workspace-result",
                "write-overwritten",
                "workspace_write_file",
                json!({ "path": "docs/notes.md", "text": "# Notes\n\nThe geometry library keeps vectors small: two doubles, no heap allocation at all.\n\nDesign note: every operation is a free function or a const member so that callers can compose them in constant expressions, and the only type the library exports for now is geometry::Vector, which callers pass by value.\nAngles are in radians.\n" }),
            ),
            case(
                "workspace-result",
                "edit",
                "workspace_edit_file",
                json!({ "path": "src/geometry/vector.cpp", "old_text": "return std::sqrt(x * x + y * y);", "new_text": "return std::hypot(x, y);" }),
            ),
            case(
                "workspace-result",
                "move",
                "workspace_move",
                json!({ "source": "project/tests/vector_test.cpp", "destination": "project/tests/geometry_vector_test_with_a_long_descriptive_name.cpp" }),
            ),
            case("workspace-result", "mkdir", "workspace_mkdir", json!({ "path": "project/src/geometry/detail" })),
            case("workspace-result", "mkdir-exists", "workspace_mkdir", json!({ "path": "project/src" })),
            case("workspace-result", "delete", "workspace_delete", json!({ "path": "project/src/geometry/angle.hpp" })),
            case(
                "workspace-result",
                "error",
                "workspace_edit_file",
                json!({ "path": "src/main.cpp", "old_text": "absent text", "new_text": "x" }),
            ),
            case("process-overview", "all", "processes_overview", json!({ "status": "all" })),
            // The journal of the changes above: 1 created angle.hpp, 2 notes.md, 3 the edit, 4 the
            // move, 5 the mkdir, 6 deleted angle.hpp.
            case("workspace-history", "history", "workspace_history", json!({})),
            case("workspace-history", "checkpoint", "workspace_checkpoint", json!({ "name": "after the edits" })),
            case("workspace-revert", "dry-run", "workspace_revert", json!({ "change": 3, "dry_run": true })),
            case("workspace-revert", "revert", "workspace_revert", json!({ "change": 3 })),
            case("process-overview", "completed", "processes_overview", json!({ "status": "completed" })),
            case("process-details", "default", "process_get", json!({ "process_id": 1 })),
            case(
                "process-details",
                "failed-last-lines",
                "process_get",
                json!({ "process_id": 2, "lines": { "last": 1 } }),
            ),
            case("process-details", "error", "process_get", json!({ "process_id": 99 })),
            // Last: version probes run through the process service too.
            case("toolsets", "list", "toolsets_list", json!({})),
            case("toolsets", "get", "toolset_get", json!({ "toolset_id": "system" })),
        ];

        let sanitizer = Sanitizer::new(&ws, &program);
        let mut stale = check_or_write(&client, &sanitizer, &cases).await;
        // A recorded fixture that no case produces any more is stale too (the real-CMake and clangd
        // cases are checked by their own heavy tests, but they still count as produced).
        let produced: Vec<PathBuf> = cases
            .iter()
            .chain(&cmake_cases())
            .chain(&clangd_cases())
            .chain(&debug_cases())
            .chain(&quality_cases())
            .map(Case::path)
            .collect();
        for dir in std::fs::read_dir(fixtures_dir()).expect("fixtures dir").flatten() {
            for file in std::fs::read_dir(dir.path()).expect("widget fixtures").flatten() {
                let text = std::fs::read_to_string(file.path()).unwrap_or_default();
                if text.contains(RECORDED) && !produced.contains(&file.path()) {
                    stale.push(file.path().display().to_string());
                }
            }
        }
        running.cancel();
        task.await.expect("the running helper stops");
        processes.shutdown().await;
        assert_fresh(&stale, "widgets::fixtures");
    }

    /// The real-CMake cases, recorded in this order on one server so that a single configure and
    /// build of the acceptance project serves them all: a plain profile with the negative tests
    /// (two of them fail) and a preset profile whose only preset needs Clang (configuring fails
    /// with GCC).
    fn cmake_cases() -> Vec<Case> {
        vec![
            case("cmake-profiles", "mixed", "cmake_profiles", json!({})),
            case("cmake-configure", "mixed", "cmake_configure", json!({})),
            case("cmake-build", "mixed", "cmake_build", json!({})),
            case(
                "cmake-build",
                "up-to-date",
                "cmake_build",
                json!({ "profiles": ["Debug"], "targets": ["fixture_good"] }),
            ),
            case("cmake-test", "mixed", "cmake_test", json!({ "profiles": ["Debug"] })),
            case(
                "cmake-run-test",
                "echo-args",
                "cmake_run_test",
                json!({ "executable": "storage/build/cmake-Debug/fixture_tests",
                        "arguments": ["--echo-args", "a b", "", "--fail"], "cwd": "storage/build/cmake-Debug" }),
            ),
            case(
                "cmake-run-test",
                "failed",
                "cmake_run_test",
                json!({ "executable": "storage/build/cmake-Debug/fixture_tests", "arguments": ["--fail"] }),
            ),
        ]
    }

    /// The cmake widgets' fixtures are those of the real cmake, ctest, ninja and g++ on a temporary
    /// copy of `examples/cpp-acceptance-project` (heavy: runs under `CI` or with
    /// `FORGEMCP_HEAVY_TESTS=1`).
    #[tokio::test]
    async fn recorded_cmake_fixtures_match_the_real_tools() {
        let test = "recorded_cmake_fixtures_match_the_real_tools";
        if !crate::support::real_tools(test, &["cmake", "ctest", "ninja", "g++"]) {
            return;
        }
        let ws = crate::support::acceptance_project();
        let profiles = [
            "--cmake-profile",
            "Debug",
            "configuration=Debug",
            "define=FIXTURE_NEGATIVE_TESTS:BOOL=ON",
            "--cmake-profile",
            "presets",
            "configure-preset=ninja-llvm-dwarf-debug",
        ];
        let services = crate::support::real_services(&ws, &profiles);
        let client = connect(ForgeServer::new(services, Duration::ZERO), TestClient::new()).await;
        let stale = check_or_write(&client, &Sanitizer::new(&ws, &helper()), &cmake_cases()).await;
        assert_fresh(&stale, "widgets::fixtures::recorded_cmake");
    }

    /// The clangd cases, recorded in this order on one server with both automatic profiles (Debug and
    /// Release) configured: `main.cpp` calls a member with too many arguments (an error with a note in
    /// the header) and a deprecated function (a warning with a note), and under Release only leaves a
    /// variable used only by `assert` unused (a warning). The last case edits the file.
    fn clangd_cases() -> Vec<Case> {
        let at = |line: u64, character: u64| json!({ "line": line, "character": character });
        vec![
            case("clangd-result", "configurations", "clangd_configurations", json!({})),
            case("clangd-result", "diagnostics", "clangd_diagnostics", json!({ "path": "src/main.cpp" })),
            case(
                "clangd-result",
                "hover",
                "clangd_hover",
                json!({ "path": "src/main.cpp", "position": at(12, 28), "timeout": 120 }),
            ),
            case(
                "clangd-result",
                "definition",
                "clangd_definition",
                json!({ "path": "src/main.cpp", "position": at(12, 28), "timeout": 120 }),
            ),
            case(
                "clangd-result",
                "definition-external",
                "clangd_definition",
                json!({ "path": "src/main.cpp", "position": at(13, 4), "timeout": 120 }),
            ),
            case(
                "clangd-result",
                "references",
                "clangd_references",
                json!({ "path": "include/geometry/vector.hpp", "position": at(11, 11),
                        "include_declaration": true, "timeout": 120 }),
            ),
            case(
                "clangd-result",
                "document-symbols",
                "clangd_document_symbols",
                json!({ "path": "include/geometry/vector.hpp" }),
            ),
            case(
                "clangd-result",
                "workspace-symbols",
                "clangd_workspace_symbols",
                json!({ "query": "Vector", "timeout": 120 }),
            ),
            case("workspace-file", "read-clangd", "workspace_read_file", json!({ "path": "src/main.cpp" })),
            case(
                "workspace-result",
                "edit-clangd",
                "workspace_edit_file",
                json!({ "path": "src/main.cpp", "old_text": "assert(length == 5);", "new_text": "assert(length == 5.0);" }),
            ),
        ]
    }

    /// The files the clangd cases change in [`PROJECT`]: warnings on, documented members, and a
    /// `main.cpp` with diagnostics in every configuration and one under Release only.
    const CLANGD_CHANGES: &str = r#"
//- CMakeLists.txt
    cmake_minimum_required(VERSION 3.20)
    project(geometry CXX)
    add_compile_options(-Wall)
    add_library(geometry src/geometry/vector.cpp)
    target_include_directories(geometry PUBLIC include)
    add_executable(demo src/main.cpp)
    target_link_libraries(demo PRIVATE geometry)
//- include/geometry/vector.hpp
    #pragma once

    namespace geometry {

    /// A two-dimensional vector.
    struct Vector {
        double x = 0;
        double y = 0;

        /// The Euclidean length, `sqrt(x * x + y * y)`.
        double length() const;
        /// This vector scaled to length one; the zero vector stays zero.
        Vector normalized() const;
    };

    /// The component-wise sum.
    Vector operator+(Vector a, Vector b);

    /// The old name of `Vector::length`.
    [[deprecated("use Vector::length")]] inline double norm(Vector v) { return v.length(); }

    } // namespace geometry
//- src/main.cpp
    #include <cassert>
    #include <iostream>

    #include "geometry/vector.hpp"

    double scaled_length(const geometry::Vector& v, double factor) {
        return v.normalized(factor).length();
    }

    int main() {
        const geometry::Vector v{3, 4};
        const double length = v.length();
        assert(length == 5);
        std::cout << "length " << geometry::norm(v) << '\n';
        const geometry::Vector n = v.normalized();
        std::cout << "normalized (" << n.x << ", " << n.y << ")\n";
        return scaled_length(n, 2) > 0 ? 0 : 1;
    }
"#;

    /// The clangd widgets' fixtures are those of the real clangd on [`PROJECT`] configured by the real
    /// cmake and ninja with g++ (heavy: runs under `CI` or with `FORGEMCP_HEAVY_TESTS=1`).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn recorded_clangd_fixtures_match_the_real_tools() {
        let test = "recorded_clangd_fixtures_match_the_real_tools";
        if !crate::support::real_tools(test, &["cmake", "ninja", "g++", "clangd"]) {
            return;
        }
        let ws = TempWorkspace::new(PROJECT);
        ws.write_fixture(CLANGD_CHANGES);
        let services = crate::support::real_services(&ws, &[]);
        let client = connect(ForgeServer::new(services, Duration::ZERO), TestClient::new()).await;
        let configured = call(&client, "cmake_configure", json!({})).await;
        assert_ne!(configured.is_error, Some(true), "{configured:?}");
        let stale = check_or_write(&client, &Sanitizer::new(&ws, &helper()), &clangd_cases()).await;
        assert_fresh(&stale, "widgets::fixtures::recorded_clangd");
    }

    /// The debug widget's cases, in order on one server: a crash (session 1, then stopped), a
    /// breakpoint stop (session 2) and what a stopped session shows.
    fn debug_cases() -> Vec<Case> {
        let at_break = format!("project/debugging/probe.cpp:{}", crate::debug::line("break"));
        vec![
            case(
                "debug",
                "crash",
                "debug_launch",
                json!({ "executable": "project/build/probe", "arguments": ["crash"] }),
            ),
            case("debug", "stop", "debug_stop", json!({ "session_id": 1 })),
            case(
                "debug",
                "breakpoint",
                "debug_launch",
                json!({ "executable": "project/build/probe", "breakpoints": [at_break, "nowhere_at_all"] }),
            ),
            case("debug", "sessions", "debug_inspect", json!({})),
            case("debug", "threads", "debug_inspect", json!({ "session_id": 2 })),
            case("debug", "variables", "debug_inspect", json!({ "session_id": 2, "frame_id": 524288, "depth": 2 })),
            case("debug", "evaluate", "debug_inspect", json!({ "session_id": 2, "expression": "origin" })),
            case("debug", "breakpoints", "debug_breakpoints", json!({ "session_id": 2, "set": ["square"] })),
            case("debug", "step-in", "debug_continue", json!({ "session_id": 2, "action": "step_in" })),
            case("debug", "error", "debug_inspect", json!({ "session_id": 2, "expression": "platform shell id" })),
        ]
    }

    /// The debug widget's fixtures are those of the real lldb-dap on a probe program built by g++ in
    /// a copy of the acceptance project (heavy: runs under `CI` or with `FORGEMCP_HEAVY_TESTS=1`).
    #[tokio::test]
    async fn recorded_debug_fixtures_match_the_real_tools() {
        if !crate::debug::real_tools("recorded_debug_fixtures_match_the_real_tools") {
            return;
        }
        let ws = crate::debug::workspace(&["probe"]);
        let client =
            connect(ForgeServer::new(crate::support::real_services(&ws, &[]), Duration::ZERO), TestClient::new()).await;
        let stale = check_or_write(&client, &Sanitizer::new(&ws, &helper()), &debug_cases()).await;
        assert_fresh(&stale, "widgets::fixtures::recorded_debug");
    }

    /// The quality cases, recorded in this order on one server with both automatic profiles configured:
    /// clang-tidy with the project's `.clang-tidy` on the whole project, its fix-its applied to one
    /// file, and clang-format checking the sources and formatting one file.
    fn quality_cases() -> Vec<Case> {
        vec![
            case("quality-tidy", "tree", "quality_tidy", json!({ "path": "project/" })),
            case(
                "quality-tidy",
                "apply",
                "quality_tidy",
                json!({ "path": "src/geometry/lookup.cpp", "checks": "modernize-use-nullptr", "apply_fixes": true }),
            ),
            case("quality-format", "check", "quality_format", json!({ "path": "src" })),
            case("quality-format", "apply", "quality_format", json!({ "path": "src/main.cpp", "apply": true })),
        ]
    }

    /// What the quality cases add to [`PROJECT`]: a `.clang-tidy` and a file with `NULL` and short names.
    const QUALITY_CHANGES: &str = r#"
//- CMakeLists.txt
    cmake_minimum_required(VERSION 3.20)
    project(geometry CXX)
    add_library(geometry src/geometry/vector.cpp src/geometry/lookup.cpp)
    target_include_directories(geometry PUBLIC include)
    add_executable(demo src/main.cpp)
    target_link_libraries(demo PRIVATE geometry)
//- .clang-tidy
    Checks: '-*,modernize-use-nullptr,readability-identifier-length'
//- src/geometry/lookup.cpp
    #include <cstddef>

    #include "geometry/vector.hpp"

    namespace geometry {

    const Vector* first_or_null(const Vector* v, int count) {
        if (v == NULL || count == 0) {
            return NULL;
        }
        return v;
    }

    } // namespace geometry
"#;

    /// The quality widgets' fixtures are those of the real clang-tidy and clang-format on [`PROJECT`]
    /// configured by the real cmake and ninja with g++ (heavy: runs under `CI` or with
    /// `FORGEMCP_HEAVY_TESTS=1`).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn recorded_quality_fixtures_match_the_real_tools() {
        let test = "recorded_quality_fixtures_match_the_real_tools";
        if !crate::support::real_tools(test, &["cmake", "ninja", "g++", "clang-tidy", "clang-format"]) {
            return;
        }
        let ws = TempWorkspace::new(PROJECT);
        ws.write_fixture(QUALITY_CHANGES);
        let services = crate::support::real_services(&ws, &[]);
        let client = connect(ForgeServer::new(services, Duration::ZERO), TestClient::new()).await;
        let configured = call(&client, "cmake_configure", json!({})).await;
        assert_ne!(configured.is_error, Some(true), "{configured:?}");
        let stale = check_or_write(&client, &Sanitizer::new(&ws, &helper()), &quality_cases()).await;
        assert_fresh(&stale, "widgets::fixtures::recorded_quality");
    }

    /// Records every case; writes the fixtures with `FORGEMCP_WRITE_FIXTURES=1`, otherwise returns
    /// the cases whose committed fixture differs (beyond volatile values) from the fresh one.
    async fn check_or_write(
        client: &rmcp::service::RunningService<rmcp::RoleClient, TestClient>,
        sanitizer: &Sanitizer,
        cases: &[Case],
    ) -> Vec<String> {
        let write = std::env::var("FORGEMCP_WRITE_FIXTURES").is_ok_and(|v| v == "1");
        let mut stale = Vec::new();
        for case in cases {
            let recorded = record(client, case).await;
            let fresh = sanitizer.sanitize(&recorded);
            let path = case.path();
            if write {
                std::fs::create_dir_all(path.parent().expect("fixture dir")).expect("create fixture dir");
                let text = serde_json::to_string_pretty(&fresh).expect("serialize fixture") + "\n";
                std::fs::write(&path, text).expect("write fixture");
                continue;
            }
            let committed: Option<Value> =
                std::fs::read_to_string(&path).ok().and_then(|text| serde_json::from_str(&text).ok());
            let fresh = mask(&fresh);
            match committed.map(|c| mask(&c)) {
                Some(committed) if committed == fresh => {}
                committed => {
                    let at = first_difference(committed.as_ref().unwrap_or(&Value::Null), &fresh, String::new());
                    stale.push(format!("{}/{} (first difference: {at})", case.widget, case.name));
                }
            }
        }
        stale
    }

    /// Where two fixtures first differ: the JSON pointer and both values, committed first.
    fn first_difference(committed: &Value, fresh: &Value, at: String) -> String {
        match (committed, fresh) {
            (Value::Object(a), Value::Object(b)) => a
                .iter()
                .find_map(|(key, inner)| match b.get(key) {
                    Some(other) if other == inner => None,
                    Some(other) => Some(first_difference(inner, other, format!("{at}/{key}"))),
                    None => Some(format!("{at}/{key}: only in the committed fixture")),
                })
                .or_else(|| b.keys().find(|key| !a.contains_key(*key)).map(|key| format!("{at}/{key}: only fresh")))
                .unwrap_or_default(),
            (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
                .iter()
                .zip(b)
                .enumerate()
                .find(|(_, (x, y))| x != y)
                .map(|(i, (x, y))| first_difference(x, y, format!("{at}/{i}")))
                .unwrap_or_default(),
            (Value::String(a), Value::String(b)) => {
                let line = a.lines().zip(b.lines()).find(|(x, y)| x != y);
                let (a, b) = line.unwrap_or((a.as_str(), b.as_str()));
                format!("{at}: committed {a:?}, fresh {b:?}")
            }
            _ => format!("{at}: committed {committed}, fresh {fresh}"),
        }
    }

    #[track_caller]
    fn assert_fresh(stale: &[String], filter: &str) {
        assert!(
            stale.is_empty(),
            "fixtures differ from the real tools: {stale:?}; regenerate with `FORGEMCP_HEAVY_TESTS=1 \
             FORGEMCP_WRITE_FIXTURES=1 cargo test --all-features --test it {filter}` and review the diff"
        );
    }

    async fn wait_until_running(processes: &ProcessService) {
        for _ in 0..400 {
            let entries = processes.full(forgemcp::process::ProcessId(3)).map(|(_, entries)| entries.len());
            if entries.unwrap_or(0) > 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the long-running helper never wrote its first line");
    }

    /// Calls the tool and reads every `forgemcp://workspace/results/…` resource its result links.
    async fn record(client: &rmcp::service::RunningService<rmcp::RoleClient, TestClient>, case: &Case) -> Value {
        let result = call(client, case.tool, case.arguments.clone()).await;
        let result = serde_json::to_value(&result).expect("serialize result");
        let mut resources = serde_json::Map::new();
        // The result's own links, and those of its entries (the quality tools link one diff per file).
        let mut link_sets = Vec::new();
        collect_links(result.pointer("/structuredContent").unwrap_or(&Value::Null), &mut link_sets);
        for links in link_sets {
            for link in links.values() {
                let uri = link["uri"].as_str().expect("resource link uri");
                let read = client
                    .read_resource(rmcp::model::ReadResourceRequestParams::new(uri))
                    .await
                    .expect("linked resource reads");
                let read: ReadResourceResult = read;
                resources.insert(uri.to_owned(), serde_json::to_value(&read).expect("serialize resource"));
            }
        }
        json!({
            "origin": RECORDED,
            "tool": case.tool,
            "arguments": case.arguments,
            "result": result,
            "resources": resources,
        })
    }

    /// Every `resources` object of a structured result, at any depth, in document order.
    fn collect_links<'a>(value: &'a Value, res: &mut Vec<&'a serde_json::Map<String, Value>>) {
        match value {
            Value::Object(map) => {
                for (key, inner) in map {
                    match (key.as_str(), inner.as_object()) {
                        ("resources", Some(links)) => res.push(links),
                        _ => collect_links(inner, res),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|item| collect_links(item, res)),
            _ => {}
        }
    }

    /// Replaces machine- and run-specific values by stable ones, consistently within one fixture.
    struct Sanitizer {
        paths: Vec<(String, &'static str)>,
        timestamp: Regex,
        result_id: Regex,
    }

    impl Sanitizer {
        fn new(ws: &TempWorkspace, helper: &Path) -> Sanitizer {
            Sanitizer {
                paths: vec![
                    (helper.to_string_lossy().into_owned(), "/usr/local/bin/forgemcp-test-helper"),
                    (ws.base.to_string_lossy().into_owned(), "/home/dev"),
                ],
                timestamp: Regex::new(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z").expect("regex"),
                result_id: Regex::new(r"results/[0-9a-f]{32}/").expect("regex"),
            }
        }

        fn sanitize(&self, fixture: &Value) -> Value {
            let mut text = serde_json::to_string(fixture).expect("serialize");
            for (from, to) in &self.paths {
                text = text.replace(from.as_str(), to);
            }
            // Distinct times become 2026-09-07T12:45:12.123456Z plus one and a half seconds each,
            // in order of first appearance (so a transcript stays in order).
            let mut times: Vec<String> = Vec::new();
            text = self
                .timestamp
                .replace_all(&text, |caps: &regex::Captures| {
                    let original = caps[0].to_owned();
                    let index = times.iter().position(|t| *t == original).unwrap_or_else(|| {
                        times.push(original.clone());
                        times.len() - 1
                    });
                    let base = chrono::DateTime::parse_from_rfc3339("2026-09-07T12:45:12.123456Z").expect("base");
                    let at = base + chrono::Duration::milliseconds(1500 * index as i64);
                    let fraction = if caps.get(1).is_some() { ".%6f" } else { "" };
                    at.format(&format!("%Y-%m-%dT%H:%M:%S{fraction}Z")).to_string()
                })
                .into_owned();
            // Numbered in order of appearance in the result (the resources map is keyed by the ids).
            let result = serde_json::to_string(&fixture["result"]).expect("serialize result");
            let mut ids: Vec<String> = Vec::new();
            for found in self.result_id.find_iter(&result) {
                if !ids.iter().any(|id| id == found.as_str()) {
                    ids.push(found.as_str().to_owned());
                }
            }
            text = self
                .result_id
                .replace_all(&text, |caps: &regex::Captures| {
                    let original = caps[0].to_owned();
                    let index = ids.iter().position(|t| *t == original).unwrap_or_else(|| {
                        ids.push(original.clone());
                        ids.len() - 1
                    });
                    format!("results/{:032x}/", 0xf1c7_u64 * 0x1_0000 + index as u64)
                })
                .into_owned();
            // The debugger launches the checked file by its descriptor, `/proc/<server pid>/fd/<n>`,
            // which the debuggee sees as its `argv[0]`.
            text = Regex::new(r"/proc/\d+/fd/\d+").expect("regex").replace_all(&text, "/proc/4242/fd/9").into_owned();
            let mut value: Value = serde_json::from_str(&text).expect("sanitized JSON");
            stabilize_processes(&mut value);
            value
        }
    }

    /// Pids, work times and owners are replaced in the structured result and in the text.
    fn stabilize_processes(fixture: &mut Value) {
        let mut pids: Vec<(u64, u64)> = Vec::new();
        let mut owner: Option<String> = None;
        visit(
            fixture.pointer_mut("/result/structuredContent").unwrap_or(&mut Value::Null),
            &mut |key, value| match key {
                "pid" => {
                    let old = value.as_u64().unwrap_or(0);
                    let new = 41_000 + 17 * pids.len() as u64;
                    pids.push((old, new));
                    *value = json!(new);
                }
                "work_time" => *value = json!(1.234_567),
                "owner" if value.is_string() => {
                    owner = value.as_str().map(str::to_owned);
                    *value = json!("dev");
                }
                _ => {}
            },
        );
        if let Some(Value::String(text)) = fixture.pointer_mut("/result/content/0/text") {
            for (old, new) in &pids {
                *text = text.replace(&format!("PID: {old}"), &format!("PID: {new}"));
            }
            let work_time = Regex::new(r"Work time: \d+\.\d+ s").expect("regex");
            *text = work_time.replace_all(text, "Work time: 1.235 s").into_owned();
            if let Some(owner) = owner {
                *text = text.replace(&format!("Owner: {owner}"), "Owner: dev");
            }
        }
    }

    fn visit(value: &mut Value, f: &mut dyn FnMut(&str, &mut Value)) {
        match value {
            Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    f(key, child);
                    visit(child, f);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| visit(item, f)),
            _ => {}
        }
    }

    /// The comparison form: times, birth times, pids, work times and owners are ignored, and so are
    /// the lines of locations outside the workspace (system headers differ between machines).
    fn mask(fixture: &Value) -> Value {
        fn unplace_external(value: &mut Value) {
            match value {
                Value::Object(map) => {
                    if map.get("path").and_then(Value::as_str).is_some_and(|path| path.starts_with("root/")) {
                        map.insert("range".to_owned(), Value::Null);
                    }
                    map.values_mut().for_each(unplace_external);
                }
                Value::Array(items) => items.iter_mut().for_each(unplace_external),
                _ => {}
            }
        }
        let mut value = fixture.clone();
        unplace_external(&mut value);
        visit(&mut value, &mut |key, value| {
            if matches!(
                key,
                "created_at"
                    | "modified_at"
                    | "started"
                    | "timestamp"
                    | "pid"
                    | "work_time"
                    | "owner"
                    | "duration_seconds"
                    | "thread_id"
                    | "remaining_seconds"
            ) {
                *value = Value::Null;
            }
        });
        let patterns = [
            (r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z", "<time>"),
            // In serialized JSON a line ends at an escaped `\n`, a value at the closing quote.
            (r#"(Created|Owner|PID|Work time): [^\\;"]*"#, "$1: <volatile>"),
            // Test durations, in the text and in CTest's output.
            (r"\d+\.\d+ s(ec)?\b", "<duration>"),
            // Debug sessions: thread ids (the debuggee's pid), addresses, time left.
            (r"Thread \d+|thread \d+|pid \d+", "<thread or pid>"),
            (r"0x[0-9a-f]{6,}", "<address>"),
            (r"/proc/\d+/fd/\d+", "/proc/<pid>/fd/<n>"),
            (r"ends in \d+ s", "ends in <seconds>"),
            // Ranges of locations outside the workspace, in the text.
            (r"(root/[^,\\]*), line \d+, character \d+ to line \d+, character \d+", "$1, <range>"),
            // The journal's clock times and dates, in the history's text.
            (r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC|\b\d{2}:\d{2}:\d{2}\b", "<time>"),
        ];
        let mut text = serde_json::to_string(&value).expect("serialize");
        if fixture["tool"].as_str().is_some_and(|tool| tool.starts_with("debug_")) {
            // Thread ids are the debuggee's pid.
            text = Regex::new(r#""id":\d+"#).expect("regex").replace_all(&text, r#""id":0"#).into_owned();
            // A thread's name is the basename the debuggee was executed by: the number of the
            // descriptor the debugger launches it through (`/proc/<server pid>/fd/<n>`).
            text = Regex::new(r#""name":"\d+""#).expect("regex").replace_all(&text, r#""name":"<n>""#).into_owned();
            text = Regex::new(r"(thread \d+) \d+\\n").expect("regex").replace_all(&text, r"$1 <n>\n").into_owned();
        }
        for (pattern, replacement) in patterns {
            text = Regex::new(pattern).expect("regex").replace_all(&text, replacement).into_owned();
        }
        serde_json::from_str(&text).expect("masked JSON")
    }
}

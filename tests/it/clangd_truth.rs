//! clangd that tells the truth on projects shaped like real ones (issue 27), with the real cmake,
//! ninja, g++, clangd and clang-format (CI or `FORGEMCP_HEAVY_TESTS=1`): a GSL-shaped library of
//! headers without an extension (`include/gsl/span`, first line `// -*- C++ -*-`) accepted by every
//! clangd tool and `quality_format`; a definition that only a declaration answers; the workspace
//! symbols limit; compiler-style lines without a coordinates legend or Markdown; and a restarted
//! server that names the build directory an earlier session left and the configure that confirms it.

use std::time::Duration;

use forgemcp::server::ForgeServer;
use serde_json::json;

use crate::clangd::{assert_contains, items};
use crate::support::{
    TempWorkspace, TestClient, call, connect, real_services, real_tools, structured, text, tool_error,
};

/// A GSL-shaped project: an interface library whose headers have no extension.
const GSL_SHAPED: &str = r#"
//- CMakeLists.txt
    cmake_minimum_required(VERSION 3.16)
    project(gslish CXX)
    add_library(gslish INTERFACE)
    target_include_directories(gslish INTERFACE include)
    add_executable(app src/main.cpp src/narrow_user.cpp)
    target_link_libraries(app gslish)
//- include/gsl/span
    // -*- C++ -*-
    #pragma once
    namespace gsl {
    template <class T> struct span {
        T* data;
        int size;
        int length() const { return size; }
    };
    int undefined_helper(int x);
    } // namespace gsl
//- include/gsl/narrow
    ///////////////////////////////////////////////
    // No mode line, like most of GSL's headers.
    #pragma once
    namespace gsl {
    inline int narrow_it(int x) { return x; }
    } // namespace gsl
//- include/gsl/README
    Headers of the gslish library.
//- src/narrow_user.cpp
    #include <gsl/narrow>
    int narrowed() { return gsl::narrow_it(3); }
//- src/main.cpp
    #include <gsl/span>
    int helper_user() { return gsl::undefined_helper(1); }
    int main() {
        gsl::span<int> s{nullptr, 0};
        return s.length();
    }
"#;

const PROFILE: [&str; 3] = ["--cmake-profile", "dbg", "configuration=Debug"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_without_extension_work_and_a_restart_names_the_way_back() {
    let tools = ["cmake", "ninja", "g++", "clangd", "clang-format", "clang-tidy"];
    if !real_tools("headers_without_extension_work_and_a_restart_names_the_way_back", &tools) {
        return;
    }
    let ws = TempWorkspace::new(GSL_SHAPED);
    let services = real_services(&ws, &PROFILE);
    let client = connect(ForgeServer::new(services.clone(), Duration::ZERO), TestClient::new()).await;
    let res = call(&client, "cmake_configure", json!({ "profiles": ["dbg"] })).await;
    assert!(items(&res).iter().all(|item| item["error"].is_null()), "{}", text(&res));

    // Every clangd tool accepts the extension-less header (its first line says C++).
    let span = "include/gsl/span";
    let res = call(&client, "clangd_diagnostics", json!({ "path": span })).await;
    assert_eq!(items(&res).len(), 1, "{}", text(&res));
    let res = call(&client, "clangd_document_symbols", json!({ "path": span })).await;
    assert_contains(text(&res), "span (struct");
    let at_span = json!({ "path": span, "position": { "line": 4, "character": 26 }, "timeout": 120 });
    let res = call(&client, "clangd_hover", at_span.clone()).await;
    assert_eq!(items(&res).len(), 1, "{}", text(&res));
    assert_contains(text(&res), "Hover at project/include/gsl/span:4:27.");
    let res = call(&client, "clangd_references", at_span.clone()).await;
    assert_eq!(items(&res).len(), 1, "{}", text(&res));
    let res = call(&client, "clangd_definition", at_span).await;
    assert_eq!(items(&res).len(), 1, "{}", text(&res));
    // A header without a mode line counts too: it is in an include directory and reads as C++.
    let res = call(&client, "clangd_document_symbols", json!({ "path": "include/gsl/narrow" })).await;
    assert_contains(text(&res), "narrow_it (function");
    // A file with neither an extension nor a mode line, that reads as prose, is still refused.
    let res = call(&client, "clangd_diagnostics", json!({ "path": "include/gsl/README" })).await;
    assert_contains(
        tool_error(&res),
        "`project/include/gsl/README` is not a C/C++ source or header (no C/C++ extension",
    );

    // quality_format counts both headers (one by its mode line, one by the include directory of
    // the database) and says what it skipped; one header alone is accepted too.
    let res = call(&client, "quality_format", json!({ "path": "include/gsl" })).await;
    assert_contains(text(&res), "Checked 2 of 2 files");
    assert_contains(
        text(&res),
        "Skipped 1 file not C/C++ by extension, first lines or compilation database (1 without an extension",
    );
    for header in [span, "include/gsl/narrow"] {
        let res = call(&client, "quality_format", json!({ "path": header })).await;
        assert_eq!(res.is_error, Some(false), "{}", text(&res));
        assert_contains(text(&res), "Checked 1 of 1 file");
    }
    // quality_tidy checks a header within a unit that includes it, and lists only its findings.
    let checks = "modernize-use-trailing-return-type";
    let res = call(&client, "quality_tidy", json!({ "path": span, "checks": checks })).await;
    assert_contains(text(&res), "project/include/gsl/span is a header: checked within project/src/main.cpp");
    assert_contains(text(&res), "project/include/gsl/span:7:9: warning: use a trailing return type");
    assert!(!text(&res).contains("project/src/main.cpp:"), "{}", text(&res));
    let res = call(&client, "quality_tidy", json!({ "path": "include/gsl/narrow", "checks": checks })).await;
    assert_contains(text(&res), "project/include/gsl/narrow:5:12: warning: use a trailing return type");
    // A tree run says what it left out and why.
    let res = call(&client, "quality_tidy", json!({ "path": "project", "checks": checks })).await;
    assert_contains(text(&res), "Checked 2 of 2 translation units");
    assert_contains(text(&res), "Skipped 2 headers: clang-tidy checks headers only within the translation units");

    // A definition that only a declaration answers says so (the hint for an undefined reference).
    let at_helper = json!({ "path": "src/main.cpp", "position": { "line": 2, "character": 32 }, "timeout": 120 });
    let res = call(&client, "clangd_definition", at_helper).await;
    assert_contains(text(&res), "project/include/gsl/span:9:5");
    assert_contains(text(&res), "Only a declaration was found; nothing in the index defines it");
    assert!(!text(&res).contains("Coordinates") && !text(&res).contains('`'), "{}", text(&res));

    // workspace symbols take a limit and count what they left out.
    let res = call(&client, "clangd_workspace_symbols", json!({ "query": "s", "limit": 1, "timeout": 120 })).await;
    assert_eq!(items(&res)[0]["symbols"].as_array().unwrap().len(), 1, "{}", text(&res));
    assert!(items(&res)[0]["omitted"].as_u64().unwrap() >= 1, "{}", text(&res));
    assert_contains(text(&res), "more symbols not shown; pass a larger limit.");

    // An edit of the extension-less header gets its clangd line.
    let edit =
        json!({ "path": span, "old_text": "    int size;\n", "new_text": "    int size;\n    int broken = ;\n" });
    let res = call(&client, "workspace_edit_file", edit).await;
    assert_contains(text(&res), "clangd (dbg) in project/include/gsl/span: 1 new error, 0 resolved");
    assert_contains(text(&res), "project/include/gsl/span:7:18: error: Expected expression");
    drop(client);
    services.clangd.shutdown().await;

    // A new server on the same storage: the database is on disk, but only a configure confirms it.
    let services = real_services(&ws, &PROFILE);
    let client = connect(ForgeServer::new(services.clone(), Duration::ZERO), TestClient::new()).await;
    let way_back =
        "storage/build/cmake-dbg exists from an earlier session; cmake_configure with profiles [\"dbg\"] confirms it";
    let res = call(&client, "clangd_configurations", json!({})).await;
    assert_contains(text(&res), &format!("None is available: {way_back}."));
    assert!(!text(&res).contains("yet"), "{}", text(&res));
    let res = call(&client, "clangd_diagnostics", json!({ "path": "src/main.cpp" })).await;
    assert_contains(tool_error(&res), &format!("No clangd configuration is available: {way_back}"));
    let res = call(
        &client,
        "workspace_edit_file",
        json!({ "path": span, "old_text": "    int broken = ;\n", "new_text": "" }),
    )
    .await;
    assert_contains(text(&res), &format!("clangd: not checked — {way_back}"));
    let res = call(&client, "cmake_build", json!({ "profiles": ["dbg"] })).await;
    assert_contains(text(&res), &format!("clangd: {way_back}; a build does not"));
    let res = call(&client, "cmake_configure", json!({ "profiles": ["dbg"] })).await;
    assert!(items(&res).iter().all(|item| item["error"].is_null()), "{}", text(&res));
    let res = call(&client, "clangd_diagnostics", json!({ "path": "src/main.cpp" })).await;
    assert_eq!(structured(&res)["result"][0]["configurations"], json!(["dbg"]), "{}", text(&res));
    services.clangd.shutdown().await;
}

/// A pugixml-shaped project: a header whose signature change breaks the `.cpp` that implements it.
const PUGI_SHAPED: &str = r#"
//- CMakeLists.txt
    cmake_minimum_required(VERSION 3.16)
    project(pugiish CXX)
    add_library(pugiish src/pugiish.cpp src/warned.cpp)
    target_compile_options(pugiish PRIVATE -Wall)
    target_include_directories(pugiish PUBLIC src)
    add_executable(uses tests/uses.cpp)
    target_link_libraries(uses pugiish)
    add_executable(broken tests/broken_before.cpp)
    target_link_libraries(broken pugiish)
//- src/pugiish.hpp
    #pragma once
    namespace pugi {
    class xml_attribute {
    public:
        bool as_bool(bool def = false) const;
    };
    } // namespace pugi
//- src/pugiish.cpp
    #include "pugiish.hpp"
    namespace pugi {
    bool xml_attribute::as_bool(bool def) const { return def; }
    } // namespace pugi
//- src/warned.cpp
    int warned() {
        int unused_value = 0;
        return 1;
    }
//- tests/uses.cpp
    #include "pugiish.hpp"
    int main() { return pugi::xml_attribute().as_bool() ? 0 : 1; }
//- tests/broken_before.cpp
    #include "pugiish.hpp"
    int main() { return undeclared_before_the_edit; }
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_edit_names_the_error_it_causes_in_the_units_that_include_it() {
    let tools = ["cmake", "ninja", "g++", "clangd"];
    if !real_tools("a_header_edit_names_the_error_it_causes_in_the_units_that_include_it", &tools) {
        return;
    }
    let ws = TempWorkspace::new(PUGI_SHAPED);
    let services = real_services(&ws, &PROFILE);
    let client = connect(ForgeServer::new(services.clone(), Duration::ZERO), TestClient::new()).await;
    let res = call(&client, "cmake_configure", json!({ "profiles": ["dbg"] })).await;
    assert!(items(&res).iter().all(|item| item["error"].is_null()), "{}", text(&res));

    let edit = json!({ "path": "src/pugiish.hpp", "old_text": "bool as_bool(bool def = false) const;",
                       "new_text": "bool as_bool(bool def, int base) const;" });
    let res = call(&client, "workspace_edit_file", edit).await;
    assert_contains(text(&res), "clangd (dbg) in project/src/pugiish.hpp: no new diagnostics\n");
    // The same stem first: the implementation is always checked; the test within the budget.
    assert_contains(text(&res), " of 3 files that include it within 2 s; ");
    assert_contains(
        text(&res),
        "\n  project/src/pugiish.cpp:3:21: error: Out-of-line definition of 'as_bool' does not match",
    );
    let includers = &structured(&res)["clangd"]["includers"][0];
    assert_eq!(includers["including"], 3, "{includers}");
    assert!(includers["checked"].as_u64().unwrap() >= 1, "{includers}");
    assert_eq!(includers["errors"][0]["path"], "project/src/pugiish.cpp", "{includers}");
    if includers["checked"] == 3 {
        assert_contains(text(&res), "\n  project/tests/uses.cpp:2:");
        assert_contains(text(&res), "checked 3 of 3 files that include it within 2 s; ");
    }
    // An error the unit had before the edit is not the edit's.
    assert!(!text(&res).contains("undeclared_before_the_edit"), "{}", text(&res));
    assert!(!text(&res).contains("broken_before.cpp"), "{}", text(&res));

    // A new error hides the unused-variable warning of its function: not "resolved".
    let edit = json!({ "path": "src/warned.cpp", "old_text": "return 1;", "new_text": "return undeclared_value;" });
    let res = call(&client, "workspace_edit_file", edit).await;
    assert_contains(text(&res), "clangd (dbg): 1 new error, 0 resolved; 1 warning not reported while it stands\n");
    assert_contains(text(&res), "  not reported: project/src/warned.cpp:2:9: warning: Unused variable 'unused_value'");
    assert_eq!(structured(&res)["clangd"]["deltas"][0]["resolved_count"], 0, "{}", text(&res));
    services.clangd.shutdown().await;
}

/// A Makefile project: no CMakeLists.txt; `bear -- make` would write the root compile_commands.json.
const MAKE_ONLY: &str = r#"
//- Makefile
    app: src/main.cpp
    	c++ -Iinclude -o app src/main.cpp
//- include/util.hpp
    #pragma once
    int util(int x);
//- src/main.cpp
    #include "util.hpp"
    int main() { return util(undeclared_in_make); }
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_makefile_project_says_so_and_uses_its_root_compilation_database() {
    let tools = ["clangd", "clang-tidy", "c++"];
    if !real_tools("a_makefile_project_says_so_and_uses_its_root_compilation_database", &tools) {
        return;
    }
    let ws = TempWorkspace::new(MAKE_ONLY);
    let services = real_services(&ws, &[]);
    let client = connect(ForgeServer::new(services.clone(), Duration::ZERO), TestClient::new()).await;

    // Without a database: one plain statement, no CMake advice.
    let res = call(&client, "clangd_diagnostics", json!({ "path": "src/main.cpp" })).await;
    let err = tool_error(&res);
    assert_contains(err, "the project has no CMakeLists.txt (it has Makefile), so the CMake tools do not apply");
    assert_contains(
        err,
        "configuration external cannot run clangd: its compilation database project/compile_commands.json is missing",
    );
    assert!(!err.contains("run cmake_configure"), "{err}");
    let res = call(
        &client,
        "workspace_edit_file",
        json!({ "path": "src/main.cpp", "old_text": "int main()", "new_text": "int main(void)" }),
    )
    .await;
    assert_contains(text(&res), "clangd: not checked — the project has no CMakeLists.txt (it has Makefile)");

    // bear -- make writes the database beside the Makefile, outside the server: it is picked up.
    let database = json!([{
        "directory": ws.project.display().to_string(),
        "file": "src/main.cpp",
        "arguments": ["c++", "-Iinclude", "-c", "src/main.cpp", "-o", "main.o"],
    }]);
    std::fs::write(ws.path("compile_commands.json"), database.to_string()).unwrap();
    let res = call(&client, "clangd_diagnostics", json!({ "path": "src/main.cpp", "timeout": 120 })).await;
    assert_eq!(structured(&res)["result"][0]["configurations"], json!(["external"]), "{}", text(&res));
    assert_contains(text(&res), "project/src/main.cpp:2:30: error: Use of undeclared identifier 'undeclared_in_make'");
    let res = call(&client, "clangd_configurations", json!({})).await;
    assert_contains(text(&res), "external\n  Toolset: system\n");
    let res = call(&client, "quality_tidy", json!({ "path": "src/main.cpp", "checks": "readability-*" })).await;
    assert!(res.is_error != Some(true), "{}", text(&res));
    assert_contains(text(&res), "external");
    services.clangd.shutdown().await;
}

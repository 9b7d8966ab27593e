//! What writes and edits tell the agent about clangd's analysis, with the real clangd, cmake, ninja
//! and g++ on a temporary copy of `examples/cpp-acceptance-project` configured with Debug and
//! Release (CI or `FORGEMCP_HEAVY_TESTS=1`): introduced and resolved diagnostics, a comment edit's
//! "no new diagnostics", a new file outside the compilation database, CRLF and lone-CR files, the
//! default read size, and the contexts a CMakeLists.txt edit withdraws.

use std::time::Duration;

use forgemcp::server::ForgeServer;
use serde_json::{Value, json};

use crate::clangd::{assert_contains, clangd_document, items};
use crate::support::{
    TestClient, acceptance_project, call, connect, real_services, real_tools, structured, text, tool_error,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_say_which_diagnostics_they_introduced_and_resolved() {
    if !real_tools("edits_say_which_diagnostics_they_introduced_and_resolved", &["cmake", "ninja", "g++", "clangd"]) {
        return;
    }
    let ws = acceptance_project();
    std::fs::remove_file(ws.path("CMakePresets.json")).expect("plain Debug and Release profiles");
    let services = real_services(&ws, &[]);
    let client = connect(ForgeServer::new(services.clone(), Duration::ZERO), TestClient::new()).await;
    let res = call(&client, "cmake_configure", json!({})).await;
    assert!(items(&res).iter().all(|item| item["error"].is_null()), "{}", text(&res));

    // An undeclared identifier: named with path:line:col, errors first.
    let introduce = json!({ "path": "src/math.cpp", "old_text": "    return lhs + rhs;",
                            "new_text": "    return lhs + rhs + undeclared_forge_symbol;" });
    let res = call(&client, "workspace_edit_file", introduce).await;
    assert_contains(text(&res), "clangd (Debug, Release): 1 new error, 0 resolved\n");
    assert_contains(
        text(&res),
        "  project/src/math.cpp:7:24: error: Use of undeclared identifier 'undeclared_forge_symbol' [clang, \
         undeclared_var_use]",
    );
    let summary = &structured(&res)["clangd"];
    assert_eq!(summary["deltas"][0]["configurations"], json!(["Debug", "Release"]), "{summary}");
    assert_eq!(summary["deltas"][0]["introduced_count"], 1);
    assert_eq!(summary["deltas"][0]["introduced"][0]["line"], 7);
    assert_eq!(summary["deltas"][0]["introduced"][0]["character"], 23);
    assert!(structured(&res)["resources"]["clangd"].is_object());

    // Reverting resolves it.
    let revert = json!({ "path": "src/math.cpp", "old_text": " + undeclared_forge_symbol;", "new_text": ";" });
    let res = call(&client, "workspace_edit_file", revert).await;
    assert_contains(text(&res), "clangd (Debug, Release): no new diagnostics, 1 resolved\n");
    assert_contains(text(&res), "  resolved: project/src/math.cpp:7:24: error: Use of undeclared identifier");
    assert_eq!(structured(&res)["clangd"]["deltas"][0]["resolved_count"], 1);

    // A comment changes nothing, and says so.
    let comment = json!({ "path": "src/math.cpp", "old_text": "namespace fixture {\n",
                          "new_text": "namespace fixture {\n// Integer helpers.\n" });
    let res = call(&client, "workspace_edit_file", comment).await;
    assert!(text(&res).ends_with("clangd (Debug, Release): no new diagnostics"), "{}", text(&res));

    // Changed outside the server: the old content is analysed again (in the same document as the
    // new one), so an error that was already there is neither new nor resolved.
    let outside = std::fs::read_to_string(ws.path("src/math.cpp"))
        .unwrap()
        .replace("    return lhs + rhs;", "    return lhs + rhs + outside_forge_symbol;");
    std::fs::write(ws.path("src/math.cpp"), outside).unwrap();
    let both = json!({ "path": "src/math.cpp", "old_text": "    return add(value, 1);",
                       "new_text": "    return add(value, undeclared_forge_symbol);" });
    let res = call(&client, "workspace_edit_file", both).await;
    assert_contains(text(&res), "clangd (Debug, Release): 1 new error, 0 resolved\n");
    assert_contains(text(&res), ":13:23: error: Use of undeclared identifier 'undeclared_forge_symbol'");
    assert!(!text(&res).contains("'outside_forge_symbol'"), "{}", text(&res));
    // Both lines change back: both errors are resolved.
    let file = std::fs::read_to_string(ws.path("src/math.cpp")).unwrap();
    let reverted = file.replace(" + outside_forge_symbol;", ";").replace("undeclared_forge_symbol", "1");
    let res = call(&client, "workspace_write_file", json!({ "path": "src/math.cpp", "text": reverted })).await;
    assert_contains(text(&res), "clangd (Debug, Release): no new diagnostics, 2 resolved\n");

    // A new translation unit gets resources.clangd; clangd infers its flags, and the text says so.
    let extra = "#include \"fixture/math.hpp\"\n\nint extra() { return fixture::add(1, 2); }\n";
    let res = call(&client, "workspace_write_file", json!({ "path": "src/extra.cpp", "text": extra })).await;
    let document = clangd_document(&client, structured(&res)).await;
    assert_eq!(document["files"][0]["path"], "project/src/extra.cpp");
    assert!(!document["files"][0]["highlighting"].as_array().unwrap().is_empty(), "{document}");
    assert_contains(
        text(&res),
        "clangd (Debug, Release): project/src/extra.cpp is not in the compilation database; it was analysed with \
         flags clangd infers",
    );
    assert_eq!(structured(&res)["clangd"]["inferred_flags"], json!(["Debug", "Release"]));

    // A CRLF file edited with LF old_text keeps CRLF everywhere.
    let crlf = "int first = 1;\r\nint second = 2;\r\nint third = 3;\r\n";
    call(&client, "workspace_write_file", json!({ "path": "src/crlf.cpp", "text": crlf })).await;
    let res = call(
        &client,
        "workspace_edit_file",
        json!({ "path": "src/crlf.cpp", "old_text": "int first = 1;\nint second = 2;\n",
                "new_text": "int first = 1;\nint inserted = 0;\nint second = 2;\n" }),
    )
    .await;
    assert_eq!(structured(&res)["replacements"], 1, "{}", text(&res));
    let on_disk = std::fs::read_to_string(ws.path("src/crlf.cpp")).unwrap();
    assert_eq!(on_disk, "int first = 1;\r\nint inserted = 0;\r\nint second = 2;\r\nint third = 3;\r\n");
    let res = call(&client, "workspace_read_file", json!({ "path": "src/crlf.cpp" })).await;
    assert!(text(&res).contains("\n\nCRLF line endings."), "{}", text(&res));
    let res = call(
        &client,
        "workspace_edit_file",
        json!({ "path": "src/crlf.cpp", "old_text": "int missing;\n", "new_text": "" }),
    )
    .await;
    assert_contains(text(&res), "(the file uses CRLF line endings)");

    // A lone CR ends a line for clangd, reads and search alike.
    let lone = "int a = 1;\rint b = lone_cr_symbol;\n";
    let res = call(&client, "workspace_write_file", json!({ "path": "src/lone.cpp", "text": lone })).await;
    assert_contains(text(&res), "  project/src/lone.cpp:2:9: error: Use of undeclared identifier 'lone_cr_symbol'");
    let res =
        call(&client, "workspace_read_file", json!({ "path": "src/lone.cpp", "start_line": 2, "end_line": 2 })).await;
    assert_eq!(structured(&res)["text"], "int b = lone_cr_symbol;\n");
    let res =
        call(&client, "workspace_text_search", json!({ "query": "lone_cr_symbol", "path": "src/lone.cpp" })).await;
    assert_eq!(structured(&res)["matches"][0]["line"], 2, "{}", text(&res));

    // A 5,000-line file read without end_line stops at 2,000 lines and says how to continue.
    let long: String = (1..=5000).map(|n| format!("line {n}\n")).collect();
    call(&client, "workspace_write_file", json!({ "path": "notes.txt", "text": long })).await;
    let res = call(&client, "workspace_read_file", json!({ "path": "notes.txt" })).await;
    assert_eq!(structured(&res)["next_start_line"], 2001);
    assert_eq!(structured(&res)["text"].as_str().unwrap().lines().count(), 2000);
    assert!(
        text(&res).ends_with("2000 | line 2000\n\nShowing lines 1-2000 of 5000; continue with start_line=2001 (or pass end_line to read a larger range)."),
        "{}",
        &text(&res)[text(&res).len() - 200..]
    );
    let res = call(&client, "workspace_read_file", json!({ "path": "notes.txt", "start_line": 4001 })).await;
    assert!(structured(&res).get("next_start_line").is_none());
    let res =
        call(&client, "workspace_read_file", json!({ "path": "notes.txt", "end_line": 5000, "max_bytes": 1_000_000 }))
            .await;
    assert_eq!(structured(&res)["text"].as_str().unwrap().lines().count(), 5000, "an explicit range is read whole");

    // Editing CMakeLists.txt withdraws both configurations, and says so.
    let res = call(
        &client,
        "workspace_edit_file",
        json!({ "path": "CMakeLists.txt", "old_text": "cmake_minimum_required", "new_text": "# edited\ncmake_minimum_required" }),
    )
    .await;
    assert_contains(
        text(&res),
        "clangd configurations Debug, Release withdrawn: project/CMakeLists.txt is a CMake input; run cmake_configure",
    );
    assert_eq!(structured(&res)["clangd"]["withdrawn"], json!(["Debug", "Release"]));
    let res = call(&client, "clangd_configurations", json!({})).await;
    assert_eq!(items(&res), Vec::<Value>::new());
    let withdrawn = "configurations Debug and Release were withdrawn by project/CMakeLists.txt; run cmake_configure";
    assert_contains(text(&res), &format!("None is available: {withdrawn}."));

    // Silence is never "fine": a C/C++ edit while withdrawn says it was not checked, and why; so
    // does every clangd call.
    let edit = json!({ "path": "src/math.cpp", "old_text": "// Integer helpers.\n",
                       "new_text": "// Integer helpers (edited).\n" });
    let res = call(&client, "workspace_edit_file", edit).await;
    assert_contains(text(&res), &format!("clangd: not checked — {withdrawn}"));
    let not_checked = &structured(&res)["clangd"]["not_checked"];
    assert_eq!(not_checked["withdrawn"][0], json!({ "id": "Debug", "by": "project/CMakeLists.txt" }), "{not_checked}");
    let res = call(&client, "clangd_diagnostics", json!({ "path": "src/math.cpp" })).await;
    assert_contains(tool_error(&res), &format!("No clangd configuration is available: {withdrawn}"));
    // A configure brings them back.
    let res = call(&client, "cmake_configure", json!({})).await;
    assert!(items(&res).iter().all(|item| item["error"].is_null()), "{}", text(&res));
    let res = call(&client, "clangd_diagnostics", json!({ "path": "src/math.cpp", "configurations": ["Debug"] })).await;
    assert_eq!(items(&res).len(), 1, "{}", text(&res));
    services.clangd.shutdown().await;
}

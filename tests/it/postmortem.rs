//! Post-mortem (issue 31) with real programs and the real lldb-dap: a temporary copy of the
//! acceptance project gets `postmortem/` (tests/it/postmortem_cases.cpp and four CTest tests that
//! crash, assert, deadlock, and crash only on their first run), built by the tools; then
//! `cmake_test`, `cmake_run_test` and `debug_launch` (`test`, `core`) must explain the failures, and
//! no debugger process and no new core file may remain (CI or `FORGEMCP_HEAVY_TESTS=1`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::debug::{Client, real_tools, server};
use crate::support::{TempWorkspace, acceptance_project, call, structured, text, tool_error};

const CASES: &str = include_str!("postmortem_cases.cpp");
const SOURCE: &str = "project/postmortem/cases.cpp";

const LISTS: &str = r#"find_package(Threads REQUIRED)
add_executable(postmortem_cases cases.cpp)
target_compile_options(postmortem_cases PRIVATE -g -O0)
target_link_libraries(postmortem_cases PRIVATE Threads::Threads)
foreach(dir null assert deadlock first)
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/${dir})
endforeach()
add_test(NAME pm_null COMMAND postmortem_cases null WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/null)
add_test(NAME pm_assert COMMAND postmortem_cases assert WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/assert)
add_test(NAME pm_deadlock COMMAND postmortem_cases deadlock WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/deadlock)
set_tests_properties(pm_deadlock PROPERTIES TIMEOUT 5)
add_test(NAME pm_first COMMAND postmortem_cases first WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/first)
set_tests_properties(pm_first PROPERTIES ENVIRONMENT "PM_MARKER=first_run.flag")
"#;

/// The line of the `@name` marker.
fn line(name: &str) -> u64 {
    let marker = format!("// @{name}");
    CASES.lines().position(|l| l.trim_end().ends_with(&marker)).expect("marker") as u64 + 1
}

/// The acceptance project with `postmortem/` added, configured and built through the tools.
async fn built() -> (TempWorkspace, Client, PathBuf) {
    let ws = acceptance_project();
    ws.write("postmortem/cases.cpp", CASES);
    ws.write("postmortem/CMakeLists.txt", LISTS);
    let lists = std::fs::read_to_string(ws.path("CMakeLists.txt")).unwrap();
    ws.write("CMakeLists.txt", format!("{lists}\nadd_subdirectory(postmortem)\n"));
    let client = server(&ws).await;
    let res = call(&client, "cmake_configure", json!({})).await;
    assert!(structured(&res)["result"][0]["error"].is_null(), "{}", text(&res));
    let res = call(&client, "cmake_build", json!({ "targets": ["postmortem_cases"] })).await;
    assert!(structured(&res)["result"][0]["error"].is_null(), "{}", text(&res));
    let program = find(&ws.project.join("build"), "postmortem_cases").expect("the program was built");
    (ws, client, program)
}

fn find(dir: &Path, name: &str) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = find(&path, name) {
                return Some(found);
            }
        } else if path.file_name().is_some_and(|n| n == name) {
            return Some(path);
        }
    }
    None
}

/// Files named `core*` under `dir`.
fn cores(dir: &Path) -> Vec<PathBuf> {
    let mut res = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            res.extend(cores(&path));
        } else if entry.file_name().to_string_lossy().starts_with("core") && !path.to_string_lossy().contains("CMake") {
            res.push(path);
        }
    }
    res
}

async fn case(client: &Client, name: &str) -> (Value, String) {
    let res = call(client, "cmake_test", json!({ "names": [name] })).await;
    let item = &structured(&res)["result"][0];
    let case = item["tests"].as_array().unwrap().iter().find(|t| t["name"] == name).expect("the case ran").clone();
    (case, text(&res).to_owned())
}

/// Processes whose program is an lldb-dap, and processes other than the configurations' clangd
/// still running in `processes_overview`.
async fn leftovers(client: &Client) -> (Vec<u32>, Vec<Value>) {
    let mut adapters = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe")) else { continue };
        if exe.to_string_lossy().contains("lldb") && forgemcp::process::is_alive(pid) {
            adapters.push(pid);
        }
    }
    let overview = call(client, "processes_overview", json!({ "status": "running" })).await;
    let running = structured(&overview)["processes"].as_array().unwrap().iter().cloned();
    let running = running.filter(|p| !p["summary"]["executable"].as_str().unwrap().ends_with("clangd")).collect();
    (adapters, running)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crashes_and_hangs_explain_themselves() {
    if !real_tools("crashes_and_hangs_explain_themselves") || !crate::support::real_tools("postmortem", &["cmake"]) {
        return;
    }
    let (before, _) = {
        let ws = TempWorkspace::new("");
        let client = server(&ws).await;
        leftovers(&client).await
    };
    let (ws, client, program) = built().await;
    let null_line = line("null");

    // A null-pointer dereference: function, project path and line, the pointer's value, in one call.
    let (null, shown) = case(&client, "pm_null").await;
    assert_eq!(null["status"], "failed", "{shown}");
    let frame = format!("read_value(int *) at {SOURCE}:{null_line}");
    assert!(shown.contains(&frame), "{shown}");
    assert!(shown.contains("ptr = 0x0"), "{shown}");
    assert!(shown.contains("SIGSEGV"), "{shown}");
    assert!(shown.contains("from the core file") || shown.contains("reproduced under lldb-dap"), "{shown}");
    let crash = &null["crash"];
    assert_eq!(crash["frames"][0]["function"], "read_value(int *)", "{crash}");
    assert_eq!(crash["frames"][0]["line"], null_line, "{crash}");
    assert_eq!(crash["line"]["text"], "seen += *ptr; // @null", "{crash}");

    // A failed assert: its text and the asserting function's line.
    let (assert_case, shown) = case(&client, "pm_assert").await;
    assert!(shown.contains("Assertion failed: `x > 0`"), "{shown}");
    assert!(shown.contains(&format!("checked(int) at {SOURCE}:{}", line("assert"))), "{shown}");
    assert_eq!(assert_case["crash"]["signal"], "SIGABRT");

    // A deadlock stopped by CTest's 5 s timeout: both threads at their lines.
    let (_, shown) = case(&client, "pm_deadlock").await;
    assert!(shown.contains(&format!("{SOURCE}:{}", line("thread_a"))), "{shown}");
    assert!(shown.contains(&format!("{SOURCE}:{}", line("thread_b"))), "{shown}");

    // A crash only on the first run: intermittent, the signal kept.
    let (first, shown) = case(&client, "pm_first").await;
    assert!(shown.contains("did not crash again under the debugger: the crash is intermittent"), "{shown}");
    assert!(first["message"].as_str().unwrap().contains("SIGSEGV"), "{shown}");
    assert_eq!(first["crash"]["source"], "intermittent");

    // A direct run explains itself too.
    let executable = format!("project/{}", program.strip_prefix(&ws.project).unwrap().display());
    let res = call(&client, "cmake_run_test", json!({ "executable": executable, "arguments": ["null"] })).await;
    let shown = text(&res);
    assert!(shown.contains(&frame) && shown.contains("ptr = 0x0"), "{shown}");
    assert_eq!(structured(&res)["crash"]["frames"][0]["line"], null_line);

    // debug_launch with a test stops at a breakpoint in it.
    let breakpoint = format!("{SOURCE}:{null_line}");
    let res = call(&client, "debug_launch", json!({ "test": "pm_null", "breakpoints": [breakpoint] })).await;
    let stop = structured(&res).clone();
    assert_eq!(stop["reason"], "breakpoint", "{}", text(&res));
    assert_eq!(stop["frames"][0]["line"], null_line);
    call(&client, "debug_stop", json!({ "session_id": stop["session_id"] })).await;
    let err = tool_error(&call(&client, "debug_launch", json!({ "test": "pm_nope" })).await).to_owned();
    assert!(err.contains("`test`") && err.contains("`pm_null`"), "{err}");

    // debug_launch with a core file the program wrote shows the same stack.
    let dir = ws.path("build/core-here");
    std::fs::create_dir_all(&dir).unwrap();
    #[expect(clippy::disallowed_methods, reason = "the test makes a core file with the real program")]
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -c unlimited; exec '{}' null", program.display()))
        .current_dir(&dir)
        .status()
        .unwrap();
    assert!(!status.success());
    let core =
        cores(&dir).pop().expect("the system wrote a core file into the working directory (core_pattern `core`)");
    let core_arg = format!("project/{}", core.strip_prefix(&ws.project).unwrap().display());
    let res = call(&client, "debug_launch", json!({ "executable": executable, "core": core_arg })).await;
    let stop = structured(&res).clone();
    assert_eq!(stop["crash"]["frames"][0]["function"], "read_value(int *)", "{}", text(&res));
    assert_eq!(stop["crash"]["frames"][0]["line"], null_line);
    assert_eq!(stop["crash"]["source"], "core_file");
    call(&client, "debug_stop", json!({ "session_id": stop["session_id"] })).await;
    // A core of another executable (a copy elsewhere) is refused.
    std::fs::copy(&program, ws.path("build/other_program")).unwrap();
    let other = "project/build/other_program";
    let res = call(&client, "debug_launch", json!({ "executable": other, "core": core_arg })).await;
    let err = tool_error(&res);
    assert!(err.contains("`core`") && err.contains("was written by"), "{err}");
    std::fs::remove_file(&core).unwrap();

    // Nothing is left behind: no debugger, no running process, no core file.
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let (adapters, running) = leftovers(&client).await;
    let new: Vec<u32> = adapters.into_iter().filter(|pid| !before.contains(pid)).collect();
    assert_eq!(new, Vec::<u32>::new(), "debugger processes remain");
    assert_eq!(running, Vec::<Value>::new(), "processes remain");
    assert_eq!(cores(&ws.project), Vec::<PathBuf>::new(), "core files remain");
}

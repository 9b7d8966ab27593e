//! `cmake_test` `select=affected` against `select=all` (issue 30 §3) in one run, on a generated
//! project of 40 test executables (each sleeps 50 ms, as a small I/O-bound test does): 37 link
//! library `stable`, 3 link library `changing`. Each round edits `changing`, builds, and times
//! `cmake_test` with `select=affected` (3 tests run) or `select=all` (40 run), alternating which
//! goes first; goal ≤ 0.2×. The selection's own overhead is the whole `cmake_test select=affected`
//! round trip when nothing changed (CTest's listing, the codemodel, the record; no test runs);
//! goal ≤ 50 ms.
//!
//! Run with `cargo bench --bench cmake_select`. It needs cmake, ninja and a C++ compiler on `PATH`.
//! It prints figures and asserts nothing about speed.
#![expect(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]

mod common;

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const TESTS: usize = 40;
const AFFECTED: usize = 3;
const ROUNDS: usize = 5;
const IDLE_RUNS: usize = 21;

fn main() -> ExitCode {
    common::run("cmake_select", &["cmake", "ninja", "c++"], run())
}

fn write(project: &Path, rel: &str, text: &str) -> Result<(), String> {
    let path = project.join(rel);
    std::fs::create_dir_all(path.parent().unwrap_or(project)).map_err(|e| e.to_string())?;
    std::fs::write(path, text).map_err(|e| e.to_string())
}

fn generate(project: &Path) -> Result<(), String> {
    let mut lists = String::from(
        "cmake_minimum_required(VERSION 3.16)\nproject(select CXX)\nenable_testing()\n\
         add_library(stable src/stable.cpp)\nadd_library(changing src/changing.cpp)\n",
    );
    for n in 0..TESTS {
        let lib = if n < AFFECTED { "changing" } else { "stable" };
        lists.push_str(&format!(
            "add_executable(t{n} tests/t{n}.cpp)\ntarget_link_libraries(t{n} PRIVATE {lib})\nadd_test(NAME t{n} COMMAND t{n})\n"
        ));
        write(
            project,
            &format!("tests/t{n}.cpp"),
            &format!(
                "#include <chrono>\n#include <thread>\nint {lib}();\nint main() {{\n  \
                 std::this_thread::sleep_for(std::chrono::milliseconds(50));\n  return {lib}() > 0 ? 0 : 1;\n}}\n"
            ),
        )?;
    }
    write(project, "CMakeLists.txt", &lists)?;
    write(project, "src/stable.cpp", "int stable() { return 1; }\n")?;
    write(project, "src/changing.cpp", "int changing() { return 1; }\n")
}

fn median_ms(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1000.0
}

fn ran(result: &rmcp::model::CallToolResult) -> usize {
    result.structured_content.as_ref().and_then(|v| v["result"][0]["tests"].as_array().map(Vec::len)).unwrap_or(0)
}

async fn run() -> Result<(), String> {
    let served = common::serve_project(generate).await?;
    let call = async |tool: &str, args: Value| -> Result<rmcp::model::CallToolResult, String> {
        let res = served.call(tool, args).await?;
        if !common::succeeded(&res) {
            return Err(format!("{tool} failed: {res:?}"));
        }
        Ok(res)
    };
    call("cmake_configure", json!({ "profiles": ["Debug"] })).await?;
    call("cmake_build", json!({ "profiles": ["Debug"] })).await?;
    call("cmake_test", json!({ "profiles": ["Debug"] })).await?;
    let timed = async |select: &str, expected: usize| -> Result<Duration, String> {
        let started = Instant::now();
        let res = call("cmake_test", json!({ "profiles": ["Debug"], "select": select })).await?;
        let elapsed = started.elapsed();
        if ran(&res) != expected {
            return Err(format!("select={select} ran {} tests, not {expected}", ran(&res)));
        }
        Ok(elapsed)
    };
    let (mut affected, mut all) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS * 2 {
        write(&served.project, "src/changing.cpp", &format!("int changing() {{ return {}; }}\n", round + 2))?;
        call("cmake_build", json!({ "profiles": ["Debug"] })).await?;
        if (round + round / 2) % 2 == 0 {
            affected.push(timed("affected", AFFECTED).await?);
        } else {
            all.push(timed("all", TESTS).await?);
        }
    }
    let mut idle = Vec::new();
    for _ in 0..IDLE_RUNS {
        idle.push(timed("affected", 0).await?);
    }
    let (affected, all, idle) = (median_ms(affected), median_ms(all), median_ms(idle));
    println!("cmake_test on {TESTS} tests (50 ms each), one library edited and built before each call:");
    println!("  select=affected ({AFFECTED} tests run): median {affected:.0} ms over {ROUNDS} rounds");
    println!("  select=all ({TESTS} tests run):      median {all:.0} ms over {ROUNDS} rounds");
    println!("  ratio affected/all: {:.3}× (goal ≤ 0.2×)", affected / all);
    println!(
        "  selection overhead (select=affected with nothing changed, whole MCP call, no test runs): median {idle:.1} ms over {IDLE_RUNS} calls (goal ≤ 50 ms)"
    );
    Ok(())
}

//! Post-mortem cost: how much time the stack adds to a crashed run. `cmake_run_test` of a program
//! that dies by SIGSEGV (the stack is taken: from its core file when the system writes one ForgeMCP
//! can read, else by running it again under lldb-dap) against `cmake_run_test` of the same program
//! failing with an exit code (no stack), alternated in one run on the bundled example.
//!
//! Run with `cargo bench --bench postmortem`. It needs g++ and lldb-dap on `PATH` (it says so and
//! exits when one is missing), builds `tests/it/postmortem_cases.cpp` in a temporary copy of
//! `examples/cpp-acceptance-project`. The goal is at most 2 s added. This prints figures and asserts
//! nothing about speed.
#![expect(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]

mod common;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use forgemcp::call::Call;
use forgemcp::process::{CommandSpec, Timeout};
use serde_json::json;

const RUNS: usize = 5;
const CASES: &str = include_str!("../tests/it/postmortem_cases.cpp");

fn main() -> ExitCode {
    common::run("postmortem", &["g++", "lldb-dap-19"], run())
}

async fn run() -> Result<(), String> {
    let served = common::serve_acceptance_copy().await?;
    let source = served.project.join("postmortem/cases.cpp");
    std::fs::create_dir_all(source.parent().unwrap()).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(served.project.join("build")).map_err(|e| e.to_string())?;
    std::fs::write(&source, CASES).map_err(|e| e.to_string())?;
    let build = CommandSpec::new("g++", &served.project)
        .args(["-g", "-O0", "-std=c++17", "-pthread", "-o", "build/cases", "postmortem/cases.cpp"])
        .timeout(Timeout::total(Duration::from_secs(120)));
    let built = served.processes.run(build, &Call::detached()).await.map_err(|e| e.to_string())?;
    if !built.succeeded() {
        return Err("g++ failed to build the cases".to_owned());
    }
    let crash = json!({ "executable": "project/build/cases", "arguments": ["null"], "cwd": "project/build" });
    let plain = json!({ "executable": "project/build/cases", "arguments": ["usage"], "cwd": "project/build" });
    let (mut with_stack, mut without, mut sources) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..=RUNS {
        let started = Instant::now();
        let res = served.call("cmake_run_test", crash.clone()).await?;
        let crashed = started.elapsed();
        let result = res.structured_content.clone().unwrap_or_default();
        let source = result["crash"]["source"].as_str().unwrap_or("none").to_owned();
        if result["crash"]["frames"].as_array().is_none_or(Vec::is_empty) {
            return Err(format!("the crash came back without a stack: {res:?}"));
        }
        let started = Instant::now();
        served.call("cmake_run_test", plain.clone()).await?;
        let failed = started.elapsed();
        // The first round warms caches on both sides.
        if run > 0 {
            with_stack.push(crashed);
            without.push(failed);
            sources.push(source);
        }
    }
    with_stack.sort();
    without.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = |t: &[Duration]| t[t.len() / 2];
    sources.dedup();
    println!("cmake_run_test of project/build/cases, {RUNS} runs (stack from: {}):", sources.join(", "));
    println!("  SIGSEGV with its stack: median {:.1} ms, min {:.1} ms", ms(median(&with_stack)), ms(with_stack[0]));
    println!("  exit code 2, no stack:  median {:.1} ms, min {:.1} ms", ms(median(&without)), ms(without[0]));
    println!(
        "  time the stack adds: {:.1} ms (median difference; goal ≤ 2000 ms)",
        ms(median(&with_stack).saturating_sub(median(&without)))
    );
    served.processes.shutdown().await;
    Ok(())
}

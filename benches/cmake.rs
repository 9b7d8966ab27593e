//! `cmake_build` wall time through the whole MCP surface against a raw `cmake --build` of the same
//! build tree in the same run: full rebuilds after a clean (the project plus a generated target of
//! 200 sources printing 2,000 warnings, so transcript handling and diagnostic parsing are paid for),
//! and no-op builds of an up-to-date tree (where ForgeMCP's own overhead is all there is to see).
//!
//! Run with `cargo bench --bench cmake`. It needs cmake, ninja and a C++ compiler on `PATH` (it says
//! so and exits when one is missing), configures the `Release` profile of a temporary copy of
//! `examples/cpp-acceptance-project` with `cmake_configure`, then alternates the tool and the raw
//! command so both see the same machine state (after letting the clangd session that configuring
//! starts finish its background index). The goal is a tool time within 1.05× of the raw command.
//! For no-op builds it also prints the same build through the CMake service alone, the same
//! command through the process service alone, and the MCP round trip of a trivial tool back to back
//! and after an idle wait as long as a no-op build, and the CPU time the benchmark's own process
//! (client and server; not cmake or ninja) spends per no-op build each way, so the overhead can be
//! attributed to a layer. First it reconfigures the configured tree with `cmake_configure` against a
//! raw `cmake -S … -B …` (goal within 1.1×; `cargo bench --bench cmake -- reconfigure` stops after
//! that). This prints figures and asserts nothing about speed.
#![expect(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]

mod common;

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use forgemcp::call::Call;
use forgemcp::cmake::{BuildRequest, Selection};
use forgemcp::process::{CommandSpec, Timeout};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

const FULL_RUNS: usize = 5;
const NOOP_RUNS: usize = 61;
const RECONFIGURE_RUNS: usize = 11;

fn main() -> ExitCode {
    common::run("cmake", &["cmake", "ninja", "c++"], run())
}

async fn run() -> Result<(), String> {
    let served = common::serve_acceptance_copy().await?;
    add_warnings_target(&served.project)?;
    let configured = served.call("cmake_configure", json!({ "profiles": ["Release"] })).await?;
    if !common::succeeded(&configured) {
        return Err(format!("cmake_configure failed: {configured:?}"));
    }
    // Configuring starts a clangd session that indexes in the background; let it finish (workspace
    // symbols wait for the index) so it does not compete with the measured builds.
    served.call("clangd_workspace_symbols", json!({ "query": "main", "timeout": 300 })).await?;
    let build_dir = served.roots.storage().join("build/cmake-Release").to_string_lossy().into_owned();
    let project = &served.project;

    // Timed on a raw session, to the reply line, as a client on the binary's stdio sees it.
    let raw = tokio::sync::Mutex::new(served.raw_session().await?);
    let timed_call = async |tool: &str, args: Value| -> Result<(Duration, CallToolResult), String> {
        let mut raw = raw.lock().await;
        let started = Instant::now();
        let line = raw.request("tools/call", json!({ "name": tool, "arguments": args })).await?;
        let elapsed = started.elapsed();
        let mut reply: Value = serde_json::from_slice(&line).map_err(|e| e.to_string())?;
        let result = serde_json::from_value(reply["result"].take()).map_err(|e| format!("{tool}: {e}"))?;
        Ok((elapsed, result))
    };
    // Reconfiguring the existing tree (issue 27 §3): cmake_configure against a raw `cmake -S … -B …`
    // of the same tree (which answers ForgeMCP's File API queries too), alternating.
    let source = project.to_string_lossy().into_owned();
    let mut reconfigure = (Vec::new(), Vec::new());
    let mut service_reconfigure = Vec::new();
    let profiles = ["Release".to_owned()];
    let selection = Selection { profiles: Some(&profiles), presets: None };
    for run in 0..RECONFIGURE_RUNS {
        let started = Instant::now();
        let outcomes = served.services.cmake.configure(&selection, Timeout::NONE, &Call::detached()).await;
        service_reconfigure.push(started.elapsed());
        if outcomes.map_err(|e| e.to_string())?.iter().any(|outcome| outcome.error.is_some()) {
            return Err("the CMake service's configure failed".to_owned());
        }
        for tool_turn in if run % 2 == 0 { [true, false] } else { [false, true] } {
            if tool_turn {
                let (elapsed, res) = timed_call("cmake_configure", json!({ "profiles": ["Release"] })).await?;
                if !common::succeeded(&res) {
                    return Err(format!("cmake_configure failed: {res:?}"));
                }
                reconfigure.0.push(elapsed);
            } else {
                reconfigure.1.push(raw_cmake(project, &["-S", &source, "-B", &build_dir])?);
            }
        }
    }
    let reconfigure_labels = ("cmake_configure (MCP tool)", "raw cmake -S … -B …", 1.1);
    service_reconfigure.sort();
    let service_reconfigure = service_reconfigure[service_reconfigure.len() / 2].as_secs_f64() * 1000.0;
    if std::env::args().any(|arg| arg == "reconfigure") {
        println!("cmake_configure of the Release profile of examples/cpp-acceptance-project, configured tree:");
        report("reconfigure", reconfigure_labels, reconfigure);
        println!("    the same configure through the CMake service alone (no MCP): median {service_reconfigure:.1} ms");
        return Ok(());
    }
    let tool_build = async || -> Result<Duration, String> {
        let (elapsed, res) = timed_call("cmake_build", json!({ "profiles": ["Release"] })).await?;
        if !common::succeeded(&res) {
            return Err(format!("cmake_build failed: {res:?}"));
        }
        Ok(elapsed)
    };
    let build_args = ["--build", build_dir.as_str(), "--config", "Release"];
    let raw_build = || raw_cmake(project, &build_args);
    let clean = || raw_cmake(project, &["--build", &build_dir, "--target", "clean"]).map(drop);
    // The same command through the process service alone (no MCP, no CMake layer), to attribute the
    // fixed overhead of a no-op build.
    let supervised_build = async || -> Result<Duration, String> {
        let spec = CommandSpec::new("cmake", project).args(build_args);
        let started = Instant::now();
        let completed = served.processes.run(spec, &Call::detached()).await.map_err(|e| e.to_string())?;
        let elapsed = started.elapsed();
        if !completed.succeeded() {
            return Err(format!("supervised cmake --build failed: {completed:?}"));
        }
        Ok(elapsed)
    };

    // The same build through the CMake service alone (no MCP), to attribute the rest.
    let service_build = async || -> Result<Duration, String> {
        let request = BuildRequest { targets: Vec::new(), parallel: None };
        let profiles = ["Release".to_owned()];
        let started = Instant::now();
        let outcomes = served
            .services
            .cmake
            .build(&Selection { profiles: Some(&profiles), presets: None }, &request, Timeout::NONE, &Call::detached())
            .await
            .map_err(|e| e.to_string())?;
        let elapsed = started.elapsed();
        if outcomes.iter().any(|outcome| outcome.error.is_some()) {
            return Err(format!("the CMake service's build failed: {:?}", outcomes[0].error));
        }
        Ok(elapsed)
    };

    // Warm the compiler, the file system cache and the server once.
    tool_build().await?;
    clean()?;
    let warned = served.call("cmake_build", json!({ "profiles": ["Release"] })).await?;
    let diagnostics =
        warned.structured_content.as_ref().and_then(|v| v["result"][0]["diagnostics"].as_array().map(Vec::len));
    let per_line = parser_cost();

    let mut full = (Vec::new(), Vec::new());
    for run in 0..FULL_RUNS {
        // Alternate which goes first so neither always sees a warmer machine.
        for tool_turn in if run % 2 == 0 { [true, false] } else { [false, true] } {
            clean()?;
            if tool_turn {
                full.0.push(tool_build().await?);
            } else {
                full.1.push(raw_build()?);
            }
        }
    }
    // The four ways of running the same no-op build take turns in a rotating order, so none of them
    // always follows the same one.
    let mut noop: [Vec<Duration>; 4] = Default::default();
    let mut cpu = [Duration::ZERO; 4];
    for run in 0..NOOP_RUNS {
        for turn in 0..4 {
            let way = (run + turn) % 4;
            let cpu_before = own_cpu_time();
            let elapsed = match way {
                0 => tool_build().await?,
                1 => raw_build()?,
                2 => service_build().await?,
                _ => supervised_build().await?,
            };
            cpu[way] += own_cpu_time().saturating_sub(cpu_before);
            noop[way].push(elapsed);
        }
    }
    let cpu = cpu.map(|total| total.as_secs_f64() * 1000.0 / NOOP_RUNS as f64);
    let [tool, raw, service, supervised] = noop;
    // The MCP round trip of a trivial tool, back to back and after an idle wait as long as a no-op
    // build (parked worker threads must be woken again).
    let mut round_trips: [Vec<Duration>; 2] = Default::default();
    for (idle, runs) in [Duration::ZERO, tool[tool.len() / 2]].into_iter().zip(&mut round_trips) {
        for _ in 0..NOOP_RUNS {
            tokio::time::sleep(idle).await;
            runs.push(timed_call("cmake_profiles", json!({})).await?.0);
        }
    }
    let [hot, after_idle] = round_trips;
    println!("cmake_build of the Release profile of examples/cpp-acceptance-project (ninja), same tree, same run:");
    let build_labels = ("cmake_build (MCP tool)", "raw cmake --build", 1.05);
    report(
        &format!("full rebuild after clean ({} diagnostics parsed per build)", diagnostics.unwrap_or(0)),
        build_labels,
        full,
    );
    println!("    the diagnostic parser alone: {per_line:.0} ns per transcript line");
    report("no-op build (up to date)", build_labels, (tool, raw));
    report("reconfigure of the configured tree", reconfigure_labels, reconfigure);
    println!("    the same configure through the CMake service alone (no MCP): median {service_reconfigure:.1} ms");
    let median = |mut runs: Vec<Duration>| {
        runs.sort();
        runs[runs.len() / 2].as_secs_f64() * 1000.0
    };
    println!("    the same build through the CMake service alone (no MCP): median {:.1} ms", median(service));
    println!("    the same command through the process service alone:      median {:.1} ms", median(supervised));
    println!(
        "    an MCP round trip of cmake_profiles: median {:.2} ms back to back, {:.2} ms after a no-op build's idle wait",
        median(hot),
        median(after_idle)
    );
    println!(
        "    CPU of this process per no-op build: tool {:.2} ms, CMake service {:.2} ms, process service {:.2} ms, raw {:.2} ms",
        cpu[0], cpu[2], cpu[3], cpu[1]
    );
    Ok(())
}

/// CPU time of every thread of this process so far (the scheduler's own count, in nanoseconds;
/// threads that already ended are not counted, which the blocking pool's 10 s keep-alive makes
/// rare within one build).
fn own_cpu_time() -> Duration {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return Duration::ZERO };
    let nanos = tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|text| text.split_whitespace().next().and_then(|ns| ns.parse::<u64>().ok()))
        .sum();
    Duration::from_nanos(nanos)
}

/// Prints the medians and minimums of the tool's and the raw command's runs (`labels`: their names
/// and the goal for the ratio of medians).
fn report(label: &str, labels: (&str, &str, f64), (mut tool, mut raw): (Vec<Duration>, Vec<Duration>)) {
    tool.sort();
    raw.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let (tool_median, raw_median) = (tool[tool.len() / 2], raw[raw.len() / 2]);
    println!("  {label}, {} runs each:", tool.len());
    println!("    {:<27} median {:8.1} ms, min {:8.1} ms", format!("{}:", labels.0), ms(tool_median), ms(tool[0]));
    println!("    {:<27} median {:8.1} ms, min {:8.1} ms", format!("{}:", labels.1), ms(raw_median), ms(raw[0]));
    println!("    ratio of medians: {:.3} (goal ≤ {})", tool_median.as_secs_f64() / raw_median.as_secs_f64(), labels.2);
}

/// Translation units of the generated target, and the warnings each produces (each unused
/// variable is one `-Wunused-variable`).
const UNITS: usize = 200;
const WARNINGS_PER_UNIT: usize = 10;
const WARNINGS: usize = UNITS * WARNINGS_PER_UNIT;

/// Adds a target of [`UNITS`] sources with [`WARNINGS_PER_UNIT`] compiler warnings each to the copy,
/// so full builds measure parsing on a parallel build that prints many warnings.
fn add_warnings_target(project: &Path) -> Result<(), String> {
    let dir = project.join("bench");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let mut sources = Vec::new();
    for unit in 0..UNITS {
        let mut source = String::new();
        for n in 0..WARNINGS_PER_UNIT {
            source.push_str(&format!("int warned_{unit}_{n}() {{ int unused_{n} = {n}; return 0; }}\n"));
        }
        if unit == 0 {
            source.push_str("int main() { return warned_0_0(); }\n");
        }
        let name = format!("bench/warnings_{unit}.cpp");
        std::fs::write(project.join(&name), source).map_err(|e| e.to_string())?;
        sources.push(name);
    }
    let lists = project.join("CMakeLists.txt");
    let mut text = std::fs::read_to_string(&lists).map_err(|e| e.to_string())?;
    text.push_str(&format!("\nadd_executable(bench_warnings {})\n", sources.join(" ")));
    text.push_str("target_compile_options(bench_warnings PRIVATE -Wall)\n");
    std::fs::write(&lists, text).map_err(|e| e.to_string())
}

/// Nanoseconds per line the diagnostic parser spends on a GCC transcript of warnings.
fn parser_cost() -> f64 {
    let mut lines = Vec::new();
    for n in 0..WARNINGS {
        let (unit, line) = (n / WARNINGS_PER_UNIT, n % WARNINGS_PER_UNIT + 1);
        lines.push(format!(
            "/p/bench/warnings_{unit}.cpp:{line}:20: warning: unused variable 'unused_{line}' [-Wunused-variable]"
        ));
        lines.push(format!("  {line} | int warned_{unit}_{line}() {{ int unused_{line} = {line}; return 0; }}"));
        lines.push("      |                    ^~~~~~~~".to_owned());
    }
    let started = Instant::now();
    let mut parser = forgemcp::cmake::diagnostics::Parser::default();
    for line in &lines {
        parser.line(line);
    }
    let elapsed = started.elapsed();
    assert_eq!(parser.diagnostics.len() + parser.dropped, WARNINGS);
    elapsed.as_secs_f64() * 1e9 / lines.len() as f64
}

/// Runs `cmake` directly (not through ForgeMCP: it is the reference) and returns its wall time.
#[expect(clippy::disallowed_methods, reason = "the benchmark runs the raw cmake itself as the reference")]
fn raw_cmake(cwd: &Path, args: &[&str]) -> Result<Duration, String> {
    let started = Instant::now();
    let output = std::process::Command::new("cmake").args(args).current_dir(cwd).output().map_err(|e| e.to_string())?;
    let elapsed = started.elapsed();
    if !output.status.success() {
        return Err(format!("raw cmake {args:?} failed: {}", String::from_utf8_lossy(&output.stderr)));
    }
    Ok(elapsed)
}

//! Debugger latency: `debug_launch` to the first breakpoint stop through the whole MCP surface,
//! against lldb-dap driven directly over the bare DAP client for the same program in the same run
//! (initialize, launch, `initialized`, setBreakpoints, configurationDone, the `stopped` event; and
//! the same plus the stack and locals a stop result carries).
//!
//! Run with `cargo bench --bench debug`. It needs g++ and lldb-dap (any name discovery knows, such as
//! Debian's `lldb-dap-19`) on `PATH` (it says so and exits when one is missing), builds
//! `tests/it/debug_probe.cpp` in a temporary copy of `examples/cpp-acceptance-project`, then
//! alternates the two. The goal is a tool latency within 1.2× of the direct adapter. This prints
//! figures and asserts nothing about speed.
#![expect(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]

mod common;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use forgemcp::call::Call;
use forgemcp::dap::Client;
use forgemcp::dap::protocol::{self as dap, Event};
use forgemcp::process::{CommandSpec, ProcessService, Stdin, Timeout};
use serde_json::{Map, json};
use tokio::sync::mpsc;

const RUNS: usize = 10;
const PROBE: &str = include_str!("../tests/it/debug_probe.cpp");
const LONG: Duration = Duration::from_secs(60);

fn main() -> ExitCode {
    let Some(adapter) = lldb_dap() else {
        println!("debug benchmark skipped: no lldb-dap on PATH");
        return ExitCode::SUCCESS;
    };
    common::run("debug", &["g++"], run(adapter))
}

fn lldb_dap() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let spec = forgemcp::toolchain::spec::lookup("lldb-dap")?;
    forgemcp::toolchain::spec::executables(spec)
        .iter()
        .find_map(|name| std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| p.is_file()))
}

fn break_line() -> usize {
    PROBE.lines().position(|l| l.ends_with("// @break")).map_or(1, |i| i + 1)
}

async fn run(adapter: PathBuf) -> Result<(), String> {
    let served = common::serve_acceptance_copy().await?;
    let source = served.project.join("debugging/probe.cpp");
    std::fs::create_dir_all(source.parent().unwrap()).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(served.project.join("build")).map_err(|e| e.to_string())?;
    std::fs::write(&source, PROBE).map_err(|e| e.to_string())?;
    let build = CommandSpec::new("g++", &served.project)
        .args(["-g", "-O0", "-std=c++17", "-o", "build/probe", "debugging/probe.cpp"])
        .timeout(Timeout::total(Duration::from_secs(120)));
    let built = served.processes.run(build, &Call::detached()).await.map_err(|e| e.to_string())?;
    if !built.succeeded() {
        return Err("g++ failed to build the probe".to_owned());
    }
    let program = served.project.join("build/probe");
    let breakpoint = format!("project/debugging/probe.cpp:{}", break_line());
    let launch = json!({ "executable": "project/build/probe", "breakpoints": [breakpoint] });

    let (mut tool, mut raw_stop, mut raw_full) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..=RUNS {
        let started = Instant::now();
        let res = served.call("debug_launch", launch.clone()).await?;
        let elapsed = started.elapsed();
        let stop = res.structured_content.clone().unwrap_or_default();
        if stop["reason"] != "breakpoint" {
            return Err(format!("debug_launch did not stop at the breakpoint: {res:?}"));
        }
        served.call("debug_stop", json!({ "session_id": stop["session_id"] })).await?;
        let (stopped, full) = direct(&served.processes, &adapter, &program, &source).await?;
        // The first round warms caches on both sides.
        if run > 0 {
            tool.push(elapsed);
            raw_stop.push(stopped);
            raw_full.push(full);
        }
    }
    for times in [&mut tool, &mut raw_stop, &mut raw_full] {
        times.sort();
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = |t: &[Duration]| t[t.len() / 2];
    println!("debug_launch to the first breakpoint stop of project/build/probe, {RUNS} runs ({}):", adapter.display());
    println!("  MCP tool:           median {:.1} ms, min {:.1} ms", ms(median(&tool)), ms(tool[0]));
    println!("  lldb-dap to stop:   median {:.1} ms, min {:.1} ms", ms(median(&raw_stop)), ms(raw_stop[0]));
    println!("  + stack and locals: median {:.1} ms, min {:.1} ms", ms(median(&raw_full)), ms(raw_full[0]));
    println!(
        "  ratio of medians: {:.2} to the stop (goal ≤ 1.20), {:.2} to stop, stack and locals",
        median(&tool).as_secs_f64() / median(&raw_stop).as_secs_f64(),
        median(&tool).as_secs_f64() / median(&raw_full).as_secs_f64()
    );
    served.processes.shutdown().await;
    Ok(())
}

/// lldb-dap driven directly: the time to the `stopped` event, and to the stack and locals after it.
async fn direct(
    processes: &ProcessService,
    adapter: &Path,
    program: &Path,
    source: &Path,
) -> Result<(Duration, Duration), String> {
    let started = Instant::now();
    let cwd = program.parent().unwrap();
    let spec = CommandSpec::new(adapter, cwd).stdin(Stdin::Piped);
    let mut process = processes.spawn_long_lived(spec).await.map_err(|e| e.to_string())?;
    let stdin = process.stdin.take().ok_or("no stdin")?;
    let (events, mut received) = mpsc::unbounded_channel();
    let client = Client::start("lldb-dap", process.take_stdout(), stdin, events);
    let err = |e: forgemcp::dap::Error| e.to_string();
    let init = dap::InitializeArguments::forgemcp("lldb-dap");
    client.request::<dap::Initialize>(&init, LONG).await.map_err(err)?;
    let launch = dap::LaunchArguments {
        program: program.display().to_string(),
        args: Vec::new(),
        cwd: cwd.display().to_string(),
        extra: Map::new(),
    };
    client.request::<dap::Launch>(&launch, LONG).await.map_err(err)?;
    wait_for(&mut received, |e| matches!(e, Event::Initialized)).await?;
    let args = dap::SetBreakpointsArguments {
        source: dap::Source { path: source.display().to_string() },
        breakpoints: vec![dap::SourceBreakpoint { line: break_line() as u32 }],
    };
    client.request::<dap::SetBreakpoints>(&args, LONG).await.map_err(err)?;
    client.request::<dap::ConfigurationDone>(&Map::new(), LONG).await.map_err(err)?;
    let thread = match wait_for(&mut received, |e| matches!(e, Event::Stopped(_))).await? {
        Event::Stopped(stopped) => stopped.thread_id.unwrap_or_default(),
        _ => unreachable!("waited for a stop"),
    };
    let stopped = started.elapsed();
    let args = dap::StackTraceArguments { thread_id: thread, start_frame: 0, levels: 8 };
    let frames = client.request::<dap::StackTrace>(&args, LONG).await.map_err(err)?;
    let frame_id = frames.stack_frames.first().ok_or("no frame")?.id;
    let scopes = client.request::<dap::Scopes>(&dap::ScopesArguments { frame_id }, LONG).await.map_err(err)?;
    for scope in scopes.scopes.iter().filter(|s| s.name == "Locals") {
        let args = dap::VariablesArguments { variables_reference: scope.variables_reference, count: None };
        client.request::<dap::Variables>(&args, LONG).await.map_err(err)?;
    }
    let full = started.elapsed();
    let _ = client.request::<dap::Disconnect>(&dap::DisconnectArguments { terminate_debuggee: true }, LONG).await;
    process.stop().await;
    Ok((stopped, full))
}

async fn wait_for(
    received: &mut mpsc::UnboundedReceiver<Event>,
    want: impl Fn(&Event) -> bool,
) -> Result<Event, String> {
    loop {
        match tokio::time::timeout(LONG, received.recv()).await {
            Ok(Some(event)) if want(&event) => return Ok(event),
            Ok(Some(_)) => {}
            _ => return Err("lldb-dap ended or went silent".to_owned()),
        }
    }
}

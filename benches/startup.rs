//! Startup benchmark: the time from spawning `forgemcp` to reading its `initialize` reply.
//!
//! Prints figures (min, median, max over the runs); it asserts nothing about speed.
//! Run with `cargo bench --bench startup`.

#![expect(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 30;

#[expect(clippy::disallowed_methods, reason = "the benchmark starts the real server binary")]
fn spawn(workspace: &std::path::Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_forgemcp"))
        .arg("--workspace")
        .arg(workspace)
        .arg("--no-admin")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn forgemcp")
}

fn one_run(workspace: &std::path::Path) -> Duration {
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
    let start = Instant::now();
    let mut child = spawn(workspace);
    let mut stdin = child.stdin.take().expect("stdin is piped");
    writeln!(stdin, "{init}").expect("write initialize");
    let mut reply = String::new();
    BufReader::new(child.stdout.take().expect("stdout is piped")).read_line(&mut reply).expect("read reply");
    let elapsed = start.elapsed();
    assert!(reply.contains("\"serverInfo\""), "unexpected reply: {reply}");
    drop(stdin);
    let _ = child.wait();
    elapsed
}

fn main() {
    let dir = tempfile::tempdir().expect("temporary workspace");
    let _ = one_run(dir.path());
    let mut times: Vec<Duration> = (0..RUNS).map(|_| one_run(dir.path())).collect();
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "initialize answered after spawn: min {:.1} ms, median {:.1} ms, max {:.1} ms over {RUNS} runs (goal < 50 ms)",
        ms(times[0]),
        ms(times[RUNS / 2]),
        ms(times[RUNS - 1])
    );
}

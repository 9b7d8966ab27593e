//! `forgemcp-test-helper`: a scriptable fake tool for the process service tests (built only with the
//! `test-tools` feature).
//!
//! Each argument is one step, run in order:
//!
//! | Step | Effect |
//! | --- | --- |
//! | `out:TEXT` / `err:TEXT` | write TEXT to stdout / stderr and flush; escapes `\n`, `\r`, `\\`, `\xHH` |
//! | `sleep:MS` | sleep MS milliseconds |
//! | `flood:BYTES` | write BYTES of numbered lines (`line 0000000001 …\n`, 64 bytes each) to stdout |
//! | `echo-stdin` | copy stdin to stdout until EOF |
//! | `spawn:STEPS` | start this helper again with STEPS (`+`-separated; a `,` inside a step becomes `+`, for one more level of nesting), inheriting stdio; print `child=<pid>` |
//! | `spawn-quiet:STEPS` | like `spawn`, with null stdio |
//! | `spawn-clean:STEPS` | like `spawn`, with an empty environment (no process-tree marker) |
//! | `setsid` | leave the process group and session (`setsid(2)`, Unix) |
//! | `pgrp` | leave the process group for a new one (`setpgid(0, 0)`, Unix) |
//! | `ignore-term` | ignore SIGTERM (Unix) |
//! | `pid` | print `pid=<pid>` to stdout |
//! | `exit:N` | exit with status N at once |
//!
//! Without an `exit` step it exits with status 0 after the last step. For example
//! `spawn:setsid+spawn:pid,sleep:60000+exit:0` starts a daemon the classic way: a child leaves the
//! session, starts a grandchild that prints its pid and sleeps, and exits, orphaning the grandchild.

use std::io::{Read, Write};
use std::process::Stdio;
use std::time::Duration;

fn main() {
    let steps: Vec<String> = std::env::args().skip(1).collect();
    for step in &steps {
        run(step);
    }
}

fn run(step: &str) {
    let (name, value) = step.split_once(':').unwrap_or((step, ""));
    match name {
        "out" => write(&mut std::io::stdout().lock(), &unescape(value)),
        "err" => write(&mut std::io::stderr().lock(), &unescape(value)),
        "sleep" => std::thread::sleep(Duration::from_millis(value.parse().expect("sleep:MS"))),
        "flood" => flood(value.parse().expect("flood:BYTES")),
        "echo-stdin" => {
            let mut input = Vec::new();
            std::io::stdin().read_to_end(&mut input).expect("read stdin");
            write(&mut std::io::stdout().lock(), &input);
        }
        "spawn" => spawn(value, Spawn::Inherit),
        "spawn-quiet" => spawn(value, Spawn::Quiet),
        "spawn-clean" => spawn(value, Spawn::CleanEnv),
        "setsid" => {
            #[cfg(unix)]
            nix::unistd::setsid().expect("setsid");
        }
        "pgrp" => {
            #[cfg(unix)]
            nix::unistd::setpgid(nix::unistd::Pid::from_raw(0), nix::unistd::Pid::from_raw(0)).expect("setpgid");
        }
        "ignore-term" => {
            #[cfg(unix)]
            // SAFETY: installing SIG_IGN runs no handler code.
            #[expect(unsafe_code, reason = "ignoring a signal is an unsafe call in nix")]
            unsafe {
                nix::sys::signal::signal(nix::sys::signal::Signal::SIGTERM, nix::sys::signal::SigHandler::SigIgn)
                    .expect("ignore SIGTERM");
            }
        }
        "pid" => write(&mut std::io::stdout().lock(), format!("pid={}\n", std::process::id()).as_bytes()),
        "exit" => std::process::exit(value.parse().expect("exit:N")),
        _ => panic!("unknown step `{step}`"),
    }
}

fn write(out: &mut dyn Write, bytes: &[u8]) {
    // A closed pipe is not this helper's problem; the test decides what it expected.
    let _ = out.write_all(bytes).and_then(|()| out.flush());
}

fn unescape(text: &str) -> Vec<u8> {
    let mut res = Vec::new();
    let mut bytes = text.bytes();
    while let Some(byte) = bytes.next() {
        if byte != b'\\' {
            res.push(byte);
            continue;
        }
        match bytes.next() {
            Some(b'n') => res.push(b'\n'),
            Some(b'r') => res.push(b'\r'),
            Some(b'x') => {
                let hex: Vec<u8> = bytes.by_ref().take(2).collect();
                let hex = std::str::from_utf8(&hex).expect("ASCII hex digits");
                res.push(u8::from_str_radix(hex, 16).expect("\\xHH"));
            }
            Some(other) => res.push(other),
            None => res.push(b'\\'),
        }
    }
    res
}

/// Bytes of one flood line: `line ` + 10 digits + ` ` + 47 × `x` + LF.
const FLOOD_LINE: usize = 64;
/// Lines per write: 1 MiB.
const FLOOD_BATCH: usize = 16 * 1024;

/// Writes `total` bytes of numbered lines in 1 MiB writes. The lines are laid out once; each batch
/// only rewrites the ten digits of every line, so even an unoptimized build floods at pipe speed.
fn flood(total: u64) {
    let mut out = std::io::stdout().lock();
    let mut buf = Vec::with_capacity(FLOOD_LINE * FLOOD_BATCH);
    for _ in 0..FLOOD_BATCH {
        buf.extend_from_slice(b"line 0000000000 ");
        buf.resize(buf.len() + FLOOD_LINE - 17, b'x');
        buf.push(b'\n');
    }
    let mut digits = *b"0000000000";
    let mut written = 0u64;
    while written < total {
        for line in buf.chunks_exact_mut(FLOOD_LINE) {
            increment(&mut digits);
            line[5..15].copy_from_slice(&digits);
        }
        let take = buf.len().min(usize::try_from(total - written).unwrap_or(usize::MAX));
        if out.write_all(&buf[..take]).is_err() {
            return;
        }
        written += take as u64;
    }
    let _ = out.flush();
}

/// Adds one to a decimal number written in ASCII digits.
fn increment(digits: &mut [u8]) {
    for digit in digits.iter_mut().rev() {
        if *digit == b'9' {
            *digit = b'0';
        } else {
            *digit += 1;
            return;
        }
    }
}

/// How `spawn` steps start the grandchild.
#[derive(PartialEq)]
enum Spawn {
    Inherit,
    Quiet,
    CleanEnv,
}

fn spawn(steps: &str, how: Spawn) {
    let exe = std::env::current_exe().expect("own executable");
    #[expect(clippy::disallowed_methods, reason = "test helper: starts its own grandchildren to test tree kills")]
    let mut command = std::process::Command::new(exe);
    command.args(steps.split('+').map(|step| step.replace(',', "+")));
    match how {
        Spawn::Inherit => {}
        Spawn::Quiet => {
            command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        }
        Spawn::CleanEnv => {
            command.env_clear();
        }
    }
    #[expect(clippy::zombie_processes, reason = "the grandchild outlives this helper on purpose; tests kill it")]
    let child = command.spawn().expect("spawn a grandchild");
    write(&mut std::io::stdout().lock(), format!("child={}\n", child.id()).as_bytes());
    // The child handle is dropped without waiting: the grandchild lives on by design.
}

//! The real binary started by a person in a terminal (a pseudo-terminal here): it says at once
//! that it waits for an MCP client on stdin, and prints the admin panel line without any client.

use std::io::Read as _;
use std::time::{Duration, Instant};

use crate::support::{TempWorkspace, binary};

#[test]
#[expect(clippy::disallowed_methods, reason = "the test starts the real server binary")]
fn a_terminal_start_explains_itself_and_prints_the_panel_line_before_any_client() {
    let ws = TempWorkspace::new("//- a.txt\n    hello\n");
    let runtime = tempfile::tempdir().expect("runtime dir");
    let name = format!("terminal-{}", std::process::id());
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("address").port();
    let pty = nix::pty::openpty(None, None).expect("a pseudo-terminal");
    let slave = std::fs::File::from(pty.slave);
    let mut child = std::process::Command::new(binary())
        .arg("--workspace")
        .arg(&ws.project)
        .args(["--admin-ipc", &name, "--admin-port", &port.to_string()])
        .env("XDG_RUNTIME_DIR", runtime.path())
        .env_remove("FORGEMCP_LOG")
        .stdin(slave.try_clone().expect("slave"))
        .stdout(slave.try_clone().expect("slave"))
        .stderr(slave)
        .spawn()
        .expect("spawn forgemcp");
    let (lines_tx, lines_rx) = std::sync::mpsc::channel::<String>();
    let mut master = std::fs::File::from(pty.master);
    std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        // EIO once the last slave holder exits.
        while let Ok(n @ 1..) = master.read(&mut buffer) {
            if lines_tx.send(String::from_utf8_lossy(&buffer[..n]).into_owned()).is_err() {
                break;
            }
        }
    });
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    // Both lines, the panel line read up to its end (a chunk may stop in the middle of it).
    let panel_line_complete =
        |seen: &str| seen.split_once("admin panel at http://127.0.0.1:").is_some_and(|(_, rest)| rest.contains('\n'));
    while !(seen.contains(forgemcp::app::TERMINAL_LINE) && panel_line_complete(&seen)) {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines_rx.recv_timeout(left) {
            Ok(chunk) => seen.push_str(&chunk.replace("\r\n", "\n")),
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let hub = std::fs::read_to_string(runtime.path().join("forgemcp").join(format!("{name}.lock")));
    if let Some(pid) = hub.ok().and_then(|text| text.trim().parse::<i32>().ok()) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
    }
    let first = seen.lines().next().unwrap_or_default();
    assert_eq!(first, forgemcp::app::TERMINAL_LINE, "the first line explains what this is: {seen}");
    assert!(
        seen.contains(&format!(
            "admin panel at http://127.0.0.1:{port}/ (open it with `forgemcp --open-admin --admin-ipc {name}`)"
        )),
        "the panel line, with no client connected: {seen}"
    );
}

//! Hardening against concurrent actors: two servers writing into one folder of one project, and
//! link swaps racing reads, mirrors, searches, listings, file info, test executables and the
//! debugger. Every race is bounded in count and time and stays on this machine.

use std::time::Instant;

use serde_json::json;

use crate::support::{TempWorkspace, TestClient, call, heavy_enabled, text};

/// Bytes of each large write.
const LARGE: usize = 5 << 20;

/// Large and small writes per instance: the review's figure (60 × 5 MiB and 3,000 small files in
/// all) under `CI` or `FORGEMCP_HEAVY_TESTS=1` (about 90 s in a debug build), a fifth of it else.
fn write_counts() -> (usize, usize) {
    if heavy_enabled() { (30, 1_500) } else { (6, 300) }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_writing_into_one_folder_never_break_each_other() {
    let ws = TempWorkspace::new("//- shared/keep.txt\n    keep");
    let (large_writes, small_writes) = write_counts();
    let started = Instant::now();
    let mut writers = Vec::new();
    for instance in ["a", "b"] {
        // Each connection is its own server: its own workspace service, lock and temporary files.
        let client = ws.connect(TestClient::new()).await;
        writers.push(tokio::spawn(async move {
            let large = instance.repeat(LARGE);
            let mut failures = Vec::new();
            for i in 0..large_writes {
                let path = format!("shared/large-{instance}-{i}.txt");
                let res = call(&client, "workspace_write_file", json!({ "path": path, "text": large })).await;
                if res.is_error == Some(true) {
                    failures.push(format!("{path}: {}", text(&res)));
                }
                for j in 0..small_writes / large_writes {
                    let path = format!("shared/small-{instance}-{i}-{j}.txt");
                    let res = call(&client, "workspace_write_file", json!({ "path": path, "text": path })).await;
                    if res.is_error == Some(true) {
                        failures.push(format!("{path}: {}", text(&res)));
                    }
                }
            }
            failures
        }));
    }
    let mut failures = Vec::new();
    for writer in writers {
        failures.extend(writer.await.unwrap());
    }
    assert_eq!(failures, Vec::<String>::new(), "failed writes");
    let names: Vec<String> = std::fs::read_dir(ws.project.join("shared"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1 + 2 * (large_writes + small_writes), "every file, and no temporary file, is left");
    for instance in ["a", "b"] {
        let bytes =
            std::fs::read(ws.project.join(format!("shared/large-{instance}-{}.txt", large_writes - 1))).unwrap();
        assert!(bytes.len() == LARGE && bytes.iter().all(|&b| b == instance.as_bytes()[0]), "intact content");
    }
    report(started.elapsed(), large_writes, small_writes);
}

#[expect(clippy::print_stderr, reason = "the race reports its size and time in the test output")]
fn report(elapsed: std::time::Duration, large_writes: usize, small_writes: usize) {
    eprintln!(
        "two servers: {} × 5 MiB and {} small writes into one folder in {elapsed:.1?}, 0 failed",
        2 * large_writes,
        2 * small_writes
    );
}

/// Link swaps per tool.
const SWAPS: usize = 2_000;

/// The bytes of the file outside the roots: recognisable in text and in base64 (15 bytes per
/// repetition, so its base64 repeats too).
const OUTSIDE: &str = "OUTSIDE SECRET ";

/// Swaps `project/d` with a link to `outside` and back, `SWAPS` times, while `probe` is called
/// over and over; every answer (result, error or resource contents, serialized) must show nothing
/// of the outside directory. Returns how many calls ran.
async fn swap_race<F, Fut>(ws: &TempWorkspace, outside: &std::path::Path, probe: F) -> usize
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = String>,
{
    swap_race_paced(ws, outside, std::time::Duration::from_micros(200), probe).await
}

/// [`swap_race`] with `pause` in each state of a swap (the link, then the real directory).
async fn swap_race_paced<F, Fut>(
    ws: &TempWorkspace,
    outside: &std::path::Path,
    pause: std::time::Duration,
    probe: F,
) -> usize
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = String>,
{
    use base64::Engine as _;
    let project = ws.project.clone();
    let outside_dir = outside.to_path_buf();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let done = done.clone();
        std::thread::spawn(move || {
            let (d, real) = (project.join("d"), project.join("d.real"));
            for _ in 0..SWAPS {
                std::fs::rename(&d, &real).unwrap();
                std::os::unix::fs::symlink(&outside_dir, &d).unwrap();
                std::thread::sleep(pause);
                std::fs::remove_file(&d).unwrap();
                std::fs::rename(&real, &d).unwrap();
                std::thread::sleep(pause);
            }
            done.store(true, std::sync::atomic::Ordering::SeqCst);
        })
    };
    let encoded = base64::engine::general_purpose::STANDARD.encode(OUTSIDE.repeat(4));
    let mut calls = 0;
    while !done.load(std::sync::atomic::Ordering::SeqCst) {
        let answer = probe().await;
        calls += 1;
        for leak in [OUTSIDE.trim(), &encoded[..20], "secret-name"] {
            assert!(!answer.contains(leak), "call {calls} showed `{leak}` from outside the roots: {answer}");
        }
        // The outside file's size as a number of its own (a thread id such as 15010 is not it).
        let size = answer.match_indices("5010").any(|(at, _)| {
            let digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
            !digit(answer[..at].chars().next_back()) && !digit(answer[at + 4..].chars().next())
        });
        assert!(!size, "call {calls} showed the size 5010 of a file outside the roots: {answer}");
    }
    swapper.join().unwrap();
    calls
}

/// A workspace with `project/d/f` and, outside the roots, a directory with an `f` of
/// [`OUTSIDE`] bytes (5,010 of them) and a `secret-name` file.
fn swap_fixture() -> (TempWorkspace, tempfile::TempDir) {
    let ws = TempWorkspace::new("//- d/f\n    inside");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("f"), OUTSIDE.repeat(334)).unwrap();
    std::fs::write(outside.path().join("secret-name"), "x").unwrap();
    (ws, outside)
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn link_swaps_never_redirect_reads_mirrors_search_listing_or_info() {
    let (ws, outside) = swap_fixture();
    let client = ws.connect(TestClient::new()).await;
    let tools: [(&str, &str, serde_json::Value); 4] = [
        ("read", "workspace_read_file", json!({ "path": "project/d/f" })),
        ("search", "workspace_text_search", json!({ "query": "SECRET", "path": "project" })),
        ("list", "workspace_list", json!({ "path": "project" })),
        ("info", "workspace_file_info", json!({ "path": "project/d/f" })),
    ];
    let mut counts = Vec::new();
    for (label, tool, args) in &tools {
        let calls = swap_race(&ws, outside.path(), || async {
            serde_json::to_string(&call(&client, tool, args.clone()).await).unwrap()
        })
        .await;
        counts.push(format!("{label} {calls}"));
    }
    for (label, uri) in [
        ("file mirror", "forgemcp://workspace/file/project/d/f"),
        ("raw mirror", "forgemcp://workspace/raw/project/d/f"),
    ] {
        let calls = swap_race(&ws, outside.path(), || async {
            format!("{:?}", crate::support::read_resource(&client, uri).await)
        })
        .await;
        counts.push(format!("{label} {calls}"));
    }
    report_swaps(&counts);
}

#[expect(clippy::print_stderr, reason = "the race reports how many calls ran against the swaps")]
fn report_swaps(counts: &[String]) {
    eprintln!("{SWAPS} link swaps per tool, 0 outside bytes; calls: {}", counts.join(", "));
}

/// The outside script leaves a `ran.<pid>` file in its directory when it runs.
fn assert_no_outside_runs(outside: &std::path::Path) {
    let runs: Vec<String> = std::fs::read_dir(outside)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("ran."))
        .collect();
    assert_eq!(runs, Vec::<String>::new(), "the outside script ran");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn link_swaps_never_run_an_outside_test_executable() {
    use std::os::unix::fs::PermissionsExt as _;
    let (ws, outside) = swap_fixture();
    let script = |dir: &std::path::Path, body: &str| {
        let path = dir.join("t");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    script(&ws.project.join("d"), "echo inside");
    let ran = outside.path().join("ran");
    script(outside.path(), &format!("echo {OUTSIDE}; touch '{}.'$$", ran.display()));
    let client = ws.connect(TestClient::new()).await;
    let args = json!({ "executable": "project/d/t", "timeout": { "total": 30 } });
    let succeeded = std::sync::atomic::AtomicUsize::new(0);
    let calls = swap_race_paced(&ws, outside.path(), std::time::Duration::from_millis(1), || async {
        let res = call(&client, "cmake_run_test", args.clone()).await;
        let ran_cleanly = res.structured_content.as_ref().is_some_and(|value| value["error"].is_null());
        if res.is_error != Some(true) && ran_cleanly {
            succeeded.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        serde_json::to_string(&res).unwrap()
    })
    .await;
    assert_no_outside_runs(outside.path());
    let succeeded = succeeded.into_inner();
    assert!(succeeded > 0, "some of the {calls} runs found the real script");
    report_swaps(&[format!("cmake_run_test {calls} ({succeeded} ran the checked script)")]);
}

/// The pause in each state of a swap while the debugger races it: lldb-dap takes hundreds of
/// milliseconds per launch, so the 2,000 swaps span a hundred or more launches, and each launch
/// still sees the path change several times between its check and the program's exec.
#[cfg(target_os = "linux")]
const DEBUG_PAUSE: std::time::Duration = std::time::Duration::from_millis(15);

/// `project/d/t` is the built debug probe; the swaps put a link to an outside directory in place of
/// `project/d`, whose `t` is a script that leaves a marker when it runs. No launch may run it, and
/// every launch that succeeds debugs the checked program: stopped at the probe's crash line, its
/// process executing the built file (device and inode).
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn link_swaps_never_let_the_debugger_run_an_outside_program() {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    if !crate::debug::real_tools("races::link_swaps_never_let_the_debugger_run_an_outside_program") {
        return;
    }
    let ws = crate::debug::workspace(&["probe"]);
    std::fs::create_dir(ws.path("d")).unwrap();
    std::fs::copy(ws.path("build/probe"), ws.path("d/t")).unwrap();
    let built = std::fs::metadata(ws.path("d/t")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let ran = outside.path().join("ran");
    let script = outside.path().join("t");
    std::fs::write(&script, format!("#!/bin/sh\necho {OUTSIDE}\ntouch '{}.'$$\n", ran.display())).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let client = crate::debug::server(&ws).await;
    let args = json!({ "executable": "project/d/t", "arguments": ["crash"], "cwd": "project" });
    let (debugged, refused) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let started = Instant::now();
    let calls = swap_race_paced(&ws, outside.path(), DEBUG_PAUSE, || async {
        let res = call(&client, "debug_launch", args.clone()).await;
        let answer = serde_json::to_string(&res).unwrap();
        assert!(!answer.contains("/proc/"), "a result named a descriptor: {answer}");
        if res.is_error == Some(true) {
            if text(&res).contains("is not the checked file") {
                refused.fetch_add(1, Relaxed);
            }
            return answer;
        }
        let stop = res.structured_content.clone().expect("a stop");
        assert_eq!((&stop["state"], &stop["signal"]), (&json!("stopped"), &json!("SIGSEGV")), "{answer}");
        assert_eq!(stop["frames"][0]["path"], "project/debugging/probe.cpp", "{answer}");
        let session = stop["session_id"].clone();
        let sessions = call(&client, "debug_inspect", json!({})).await;
        let sessions = sessions.structured_content.expect("sessions")["sessions"].clone();
        let info = sessions.as_array().unwrap().iter().find(|s| s["session_id"] == session).expect("live").clone();
        assert_eq!(info["executable"], "project/d/t", "{info}");
        let pid = info["pid"].as_u64().expect("the debuggee's pid");
        let exe = std::fs::metadata(format!("/proc/{pid}/exe")).unwrap();
        assert_eq!((exe.dev(), exe.ino()), (built.dev(), built.ino()), "the debuggee runs another file");
        let stopped = call(&client, "debug_stop", json!({ "session_id": session })).await;
        assert_ne!(stopped.is_error, Some(true), "{stopped:?}");
        debugged.fetch_add(1, Relaxed);
        answer
    })
    .await;
    assert_no_outside_runs(outside.path());
    let (debugged, refused) = (debugged.into_inner(), refused.into_inner());
    assert!(debugged > 0, "some of the {calls} launches found the real program");
    report_swaps(&[format!(
        "debug_launch {calls} in {:.0?} ({debugged} debugged the checked program, {refused} refused after the launch)",
        started.elapsed()
    )]);
}

//! Process service runs with the `forgemcp-test-helper` fake tool: exit codes, transcripts, timeouts,
//! cancellation, tree kills (including `setsid` grandchildren, checked through `/proc`), long-lived
//! pipes, spilling floods.
#![cfg(feature = "test-tools")]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use forgemcp::call::Call;
use forgemcp::process::{
    CommandSpec, Error, LineSelector, ProcessId, ProcessService, Selection, Status, StatusFilter, Stdin, Stream,
    Timeout, is_alive,
};
use parking_lot::Mutex;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::support::TempWorkspace;

/// A hostile tree for the helper: the leader, a plain child, a child that ignores SIGTERM, a child
/// that left the session, one in a new process group, and a double-forking daemon that also cleared
/// its environment (no tree marker), orphaned by its exiting parent. Each prints `pid=<pid>` and
/// sleeps; the daemon prints last.
pub(crate) const HOSTILE_TREE: &[&str] = &[
    "pid",
    "spawn:pid+sleep:60000",
    "spawn:ignore-term+pid+sleep:60000",
    "spawn:setsid+pid+sleep:60000",
    "spawn:pgrp+pid+sleep:60000",
    "sleep:300",
    "spawn:setsid+spawn-clean:pid,sleep:60000+exit:0",
    "sleep:60000",
];
/// Processes of [`HOSTILE_TREE`] that print their pid.
pub(crate) const HOSTILE_TREE_PIDS: usize = 6;

pub(crate) fn helper() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_forgemcp-test-helper"))
}

fn spec(ws: &TempWorkspace, steps: &[&str]) -> CommandSpec {
    CommandSpec::new(helper(), &ws.project).args(steps)
}

fn setup() -> (TempWorkspace, ProcessService) {
    let ws = TempWorkspace::new("");
    let service = ProcessService::new(ws.roots());
    (ws, service)
}

/// The complete transcript as `stream|text` lines, for exact comparisons.
fn transcript(service: &ProcessService, id: ProcessId) -> Vec<(Stream, String)> {
    service.full(id).unwrap().1.into_iter().map(|e| (e.stream, e.text)).collect()
}

fn all_text(service: &ProcessService, id: ProcessId) -> String {
    transcript(service, id).into_iter().map(|(_, text)| text).collect()
}

/// Pids printed by the helper as `key=<pid>`.
pub(crate) fn printed_pids(text: &str, key: &str) -> Vec<u32> {
    text.lines().filter_map(|line| line.strip_prefix(key)?.strip_prefix('=')?.trim().parse().ok()).collect()
}

/// Waits until the helper printed `n` pids with `key`.
async fn wait_for_pids(service: &ProcessService, id: ProcessId, key: &str, n: usize) -> Vec<u32> {
    for _ in 0..200 {
        let text = service.full(id).map(|(_, entries)| entries.into_iter().map(|e| e.text).collect::<String>());
        let pids = printed_pids(&text.unwrap_or_default(), key);
        if pids.len() >= n {
            return pids;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("process {id} never printed {n} `{key}=` lines: {:?}", all_text(service, id));
}

/// Asserts that none of `pids` is alive one second later at the latest (`/proc` shows no running or
/// sleeping process), and that they were reaped, not left as zombies, within two seconds.
pub(crate) async fn assert_gone_within_a_second(pids: &[u32]) {
    let started = Instant::now();
    assert_dead_within_a_second(pids).await;
    loop {
        let present: Vec<u32> =
            pids.iter().copied().filter(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists()).collect();
        if present.is_empty() {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(2), "not reaped after 2 s: {present:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Asserts that none of `pids` is alive (zombies count as dead) one second later at the latest.
async fn assert_dead_within_a_second(pids: &[u32]) {
    let started = Instant::now();
    loop {
        let alive: Vec<u32> = pids.iter().copied().filter(|&pid| is_alive(pid)).collect();
        if alive.is_empty() {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(1), "still alive after 1 s: {alive:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn exit_codes_are_reported() {
    let (ws, service) = setup();
    let ok = service.run(spec(&ws, &["out:hi\\n"]), &Call::detached()).await.unwrap();
    assert_eq!(ok.status, Status::Exited(0));
    assert!(ok.succeeded());
    let failed = service.run(spec(&ws, &["exit:3"]), &Call::detached()).await.unwrap();
    assert_eq!(failed.exit_code(), Some(3));
}

#[tokio::test]
async fn ids_start_at_one_and_increase() {
    let (ws, service) = setup();
    let a = service.run(spec(&ws, &[]), &Call::detached()).await.unwrap();
    let b = service.run(spec(&ws, &[]), &Call::detached()).await.unwrap();
    assert_eq!((a.id, b.id), (ProcessId(1), ProcessId(2)));
    assert_eq!(service.ids(), vec![ProcessId(1), ProcessId(2)]);
}

#[tokio::test]
async fn spawn_failures_are_errors_and_not_registered() {
    let (ws, service) = setup();
    let missing = CommandSpec::new(ws.path("no-such-tool"), &ws.project);
    assert!(matches!(service.run(missing, &Call::detached()).await, Err(Error::Spawn { .. })));
    assert!(service.ids().is_empty());
}

#[tokio::test]
async fn working_directory_must_lie_inside_a_root() {
    let (ws, service) = setup();
    let outside = CommandSpec::new(helper(), &ws.base);
    let err = service.run(outside, &Call::detached()).await.unwrap_err();
    assert!(matches!(err, Error::CwdOutsideRoots { .. }), "{err}");
    std::fs::create_dir_all(ws.storage.join("build")).unwrap();
    let inside_storage = CommandSpec::new(helper(), ws.storage.join("build"));
    assert!(service.run(inside_storage, &Call::detached()).await.is_ok());
    let missing = CommandSpec::new(helper(), ws.path("missing"));
    assert!(matches!(service.run(missing, &Call::detached()).await, Err(Error::CwdUnavailable { .. })));
}

#[tokio::test]
async fn transcript_keeps_observed_order_across_streams() {
    let (ws, service) = setup();
    let steps = ["out:one\\n", "sleep:30", "err:two\\n", "sleep:30", "out:three"];
    let done = service.run(spec(&ws, &steps), &Call::detached()).await.unwrap();
    let details = service.get(done.id, &Selection::default()).unwrap();
    let rows: Vec<_> =
        details.transcript.iter().map(|e| (e.stream, e.text.as_str(), e.start_line, e.end_line)).collect();
    assert_eq!(
        rows,
        vec![(Stream::Stdout, "one\n", 1, 1), (Stream::Stderr, "two\n", 2, 2), (Stream::Stdout, "three", 3, 3)]
    );
    assert_eq!(details.lines, Some((1, 3)));
}

#[tokio::test]
async fn lone_cr_split_crlf_and_invalid_utf8_are_recorded_faithfully() {
    let (ws, service) = setup();
    let steps =
        ["out:10%\\r20%\\r", "sleep:30", "out:a\\r", "sleep:30", "out:\\nb\\xff\\xe2\\x82", "sleep:30", "out:\\xac\\n"];
    let done = service.run(spec(&ws, &steps), &Call::detached()).await.unwrap();
    assert_eq!(all_text(&service, done.id), "10%\r20%\ra\r\nb\u{FFFD}€\n");
    let details = service.get(done.id, &Selection::default()).unwrap();
    assert_eq!(details.lines, Some((1, 2)), "one LF for the split CRLF, one at the end");
}

#[tokio::test]
async fn stdin_bytes_are_fed_and_recorded() {
    let (ws, service) = setup();
    let spec = spec(&ws, &["echo-stdin"]).stdin(Stdin::Bytes(b"ping\n".to_vec()));
    let done = service.run(spec, &Call::detached()).await.unwrap();
    assert_eq!(
        transcript(&service, done.id),
        vec![(Stream::Stdin, "ping\n".into()), (Stream::Stdout, "ping\n".into())]
    );
}

#[tokio::test]
async fn output_lines_reach_the_line_callback() {
    let (ws, service) = setup();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let spec = spec(&ws, &["out:[1/2] a\\r\\n[2/", "sleep:20", "out:2] b\\n", "err:warn"])
        .on_line(Arc::new(move |stream, line| sink.lock().push((stream, line.to_owned()))));
    service.run(spec, &Call::detached()).await.unwrap();
    // Two pipes are read independently, so only the order within a stream is defined.
    let seen = seen.lock();
    let lines_of =
        |wanted| seen.iter().filter(|(stream, _)| *stream == wanted).map(|(_, line)| line.as_str()).collect::<Vec<_>>();
    assert_eq!(lines_of(Stream::Stdout), ["[1/2] a", "[2/2] b"]);
    assert_eq!(lines_of(Stream::Stderr), ["warn"]);
}

#[tokio::test]
async fn total_timeout_interrupts_the_whole_tree() {
    let (ws, service) = setup();
    let spec = spec(&ws, HOSTILE_TREE).timeout(Timeout::total(Duration::from_millis(1500)));
    let started = Instant::now();
    let done = service.run(spec, &Call::detached()).await.unwrap();
    assert_eq!(done.status, Status::Interrupted);
    assert!(started.elapsed() < Duration::from_millis(1500) + Duration::from_secs(2), "{:?}", started.elapsed());
    let pids = printed_pids(&all_text(&service, done.id), "pid");
    assert_eq!(pids.len(), HOSTILE_TREE_PIDS, "every process of the tree printed its pid");
    assert_gone_within_a_second(&pids).await;
}

#[tokio::test]
async fn idle_timeout_interrupts_a_silent_process() {
    let (ws, service) = setup();
    let timeout = Timeout { total: None, idle: Some(Duration::from_millis(800)) };
    // Output every 100 ms for 0.6 s keeps it alive; then 0.8 s of silence ends it.
    let mut steps = Vec::new();
    for _ in 0..6 {
        steps.extend(["out:tick\\n", "sleep:100"]);
    }
    steps.push("sleep:60000");
    let started = Instant::now();
    let done = service.run(spec(&ws, &steps).timeout(timeout), &Call::detached()).await.unwrap();
    assert_eq!(done.status, Status::Interrupted);
    let elapsed = started.elapsed();
    assert!(elapsed >= Duration::from_millis(1250), "output reset the idle timer: {elapsed:?}");
    assert!(elapsed < Duration::from_millis(1400) + Duration::from_secs(2), "{elapsed:?}");
    assert_eq!(all_text(&service, done.id).matches("tick").count(), 6);
}

#[tokio::test]
async fn cancelling_the_call_stops_the_tree() {
    let (ws, service) = setup();
    let call = Call::detached();
    let cancel = call.cancel.clone();
    let svc = service.clone();
    let ws_spec = spec(&ws, HOSTILE_TREE);
    let run = tokio::spawn(async move { svc.run(ws_spec, &call).await });
    let pids = wait_for_pids(&service, ProcessId(1), "pid", HOSTILE_TREE_PIDS).await;
    cancel.cancel();
    let done = run.await.unwrap().unwrap();
    assert_eq!(done.status, Status::Stopped);
    assert_gone_within_a_second(&pids).await;
}

#[tokio::test]
async fn dropping_the_run_future_stops_the_tree() {
    let (ws, service) = setup();
    let spec = spec(&ws, &["spawn:setsid+pid+sleep:60000", "pid", "sleep:60000"]);
    let call = Call::detached();
    let run = service.run(spec, &call);
    let waiter = wait_for_pids(&service, ProcessId(1), "pid", 2);
    let pids = tokio::select! {
        _ = run => panic!("the helper sleeps for a minute"),
        pids = waiter => pids,
    };
    // The run future is dropped here.
    for _ in 0..100 {
        if !service.overview(StatusFilter::Running).processes.is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    assert_eq!(service.overview(StatusFilter::All).processes[0].status, Status::Stopped);
    assert_gone_within_a_second(&pids).await;
}

#[tokio::test]
async fn leftovers_are_killed_when_the_leader_exits() {
    let (ws, service) = setup();
    // A detached daemon (own session, null stdio) and a plain child holding the stdout pipe.
    let steps = ["spawn-quiet:setsid+sleep:60000", "spawn:sleep:60000", "exit:0"];
    let started = Instant::now();
    let done = service.run(spec(&ws, &steps), &Call::detached()).await.unwrap();
    assert_eq!(done.status, Status::Exited(0));
    assert!(started.elapsed() < Duration::from_secs(2), "the pipe holder was killed, not waited for");
    let pids = printed_pids(&all_text(&service, done.id), "child");
    assert_eq!(pids.len(), 2);
    assert_gone_within_a_second(&pids).await;
}

#[tokio::test]
async fn shutdown_stops_every_running_tree() {
    let (ws, service) = setup();
    let svc = service.clone();
    let long = spec(&ws, &["spawn:setsid+pid+sleep:60000", "pid", "sleep:60000"]);
    let run = tokio::spawn(async move { svc.run(long, &Call::detached()).await });
    let mut pids = wait_for_pids(&service, ProcessId(1), "pid", 2).await;
    let lived = service.spawn_long_lived(spec(&ws, &["sleep:60000"])).await.unwrap();
    pids.push(lived.pid);
    service.shutdown().await;
    assert_eq!(run.await.unwrap().unwrap().status, Status::Stopped);
    assert_eq!(lived.status(), Status::Stopped);
    assert_gone_within_a_second(&pids).await;
    assert!(matches!(service.run(spec(&ws, &[]), &Call::detached()).await, Err(Error::ShuttingDown)));
}

#[tokio::test]
async fn dropping_the_service_kills_running_trees() {
    let (ws, service) = setup();
    let lived = service.spawn_long_lived(spec(&ws, &["spawn:setsid+pid+sleep:60000", "pid", "sleep:60000"])).await;
    let mut lived = lived.unwrap();
    // Long-lived stdout belongs to the caller: read the two pid lines from it.
    let mut reader = BufReader::new(&mut lived.stdout);
    let mut pids = Vec::new();
    while pids.len() < 2 {
        let mut line = String::new();
        reader.read_line(&mut line).await.unwrap();
        pids.extend(printed_pids(&line, "pid"));
    }
    pids.push(lived.pid);
    std::mem::forget(lived);
    drop(service);
    // Dropping the service aborts its supervisors, so nobody reaps: that happens as the server exits.
    assert_dead_within_a_second(&pids).await;
}

#[tokio::test]
async fn long_lived_pipes_belong_to_the_caller_and_are_recorded() {
    let (ws, service) = setup();
    let spec = spec(&ws, &["echo-stdin", "sleep:200", "err:bye\\n"]).stdin(Stdin::Piped);
    let mut lived = service.spawn_long_lived(spec).await.unwrap();
    let mut stdin = lived.stdin.take().unwrap();
    stdin.write_all(b"hello\n").await.unwrap();
    stdin.shutdown().await.unwrap();
    drop(stdin);
    let mut line = String::new();
    BufReader::new(&mut lived.stdout).read_line(&mut line).await.unwrap();
    assert_eq!(line, "hello\n");
    let done = lived.wait().await;
    assert_eq!(done.status, Status::Exited(0));
    assert_eq!(
        transcript(&service, lived.id),
        vec![(Stream::Stdin, "hello\n".into()), (Stream::Stdout, "hello\n".into()), (Stream::Stderr, "bye\n".into())]
    );
}

#[tokio::test]
async fn dropping_a_long_lived_handle_stops_it() {
    let (ws, service) = setup();
    let lived = service.spawn_long_lived(spec(&ws, &["sleep:60000"])).await.unwrap();
    let (id, pid) = (lived.id, lived.pid);
    drop(lived);
    for _ in 0..100 {
        if service.overview(StatusFilter::Running).processes.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let info = service.overview(StatusFilter::All).processes.into_iter().find(|p| p.id == id).unwrap();
    assert_eq!(info.status, Status::Stopped);
    assert_gone_within_a_second(&[pid]).await;
}

#[tokio::test]
async fn overview_counts_running_and_completed() {
    let (ws, service) = setup();
    service.run(spec(&ws, &[]), &Call::detached()).await.unwrap();
    let lived = service.spawn_long_lived(spec(&ws, &["sleep:60000"])).await.unwrap();
    let all = service.overview(StatusFilter::All);
    assert_eq!((all.running, all.completed, all.processes.len()), (1, 1, 2));
    let running = service.overview(StatusFilter::Running);
    assert_eq!((running.running, running.completed), (1, 1));
    assert_eq!(running.processes.iter().map(|p| p.id).collect::<Vec<_>>(), vec![lived.id]);
    let completed = service.overview(StatusFilter::Completed);
    assert_eq!(completed.processes.iter().map(|p| p.id).collect::<Vec<_>>(), vec![ProcessId(1)]);
    lived.stop().await;
}

#[tokio::test]
async fn unknown_ids_are_not_retained() {
    let (_ws, service) = setup();
    let err = service.get(ProcessId(7), &Selection::default()).unwrap_err();
    assert_eq!(err.to_string(), "process 7 is not retained");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flood_spills_to_disk_and_the_tail_is_exact() {
    let (ws, service) = setup();
    const BYTES: u64 = 256 * 1024 * 1024;
    let done = service.run(spec(&ws, &[&format!("flood:{BYTES}")]), &Call::detached()).await.unwrap();
    assert_eq!(done.status, Status::Exited(0));
    assert_eq!(service.transcript_bytes(done.id).unwrap(), BYTES);
    let selection = Selection { lines: Some(LineSelector::Last(100)), ..Selection::default() };
    let started = Instant::now();
    let details = service.get(done.id, &selection).unwrap();
    let tail_read = started.elapsed();
    let n_lines = BYTES / 64;
    assert_eq!(details.lines, Some((n_lines - 99, n_lines)));
    let text: String = details.transcript.iter().map(|e| e.text.as_str()).collect();
    let numbers: Vec<u64> = text.lines().map(|line| line[5..15].parse().unwrap()).collect();
    assert_eq!(numbers, (n_lines - 99..=n_lines).collect::<Vec<_>>());
    assert!(tail_read < Duration::from_secs(1), "tail read took {tail_read:?}");
    // The spill file has no name: the directory exists but stays empty.
    let spill_dir = ws.storage.join("tmp/process-journals");
    assert!(spill_dir.is_dir());
    assert_eq!(std::fs::read_dir(&spill_dir).unwrap().count(), 0);
}

//! How the process service starts a leader on Linux (`process/leader.rs`, a vfork-style clone): the
//! leader is a child subreaper that adopts the orphans of its tree, leads its own process group,
//! carries the tree marker, gets null stdin and piped stdout/stderr, and signals as std leaves them;
//! a bare name is looked up in `PATH` (the spec's when it sets one); spawn errors read as std's; a
//! pinned executable runs through its descriptor with `argv[0]` its checked path, scripts included.
#![cfg(all(feature = "test-tools", target_os = "linux"))]

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::time::Duration;

use forgemcp::call::Call;
use forgemcp::process::{CheckedExecutable, CommandSpec, Error, ProcessService, Selection, Status};

use crate::process::{assert_gone_within_a_second, helper, printed_pids};
use crate::support::TempWorkspace;

fn setup() -> (TempWorkspace, ProcessService) {
    let ws = TempWorkspace::new("");
    let service = ProcessService::new(ws.roots());
    (ws, service)
}

/// `/proc/<pid>/stat`'s parent pid and process group (fields after the command name).
fn parent_and_group(pid: u32) -> (u32, u32) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    (fields[1].parse().unwrap(), fields[2].parse().unwrap())
}

/// One line of `/proc/<pid>/status`, such as `SigBlk`.
fn status_field(pid: u32, key: &str) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|line| line.starts_with(&format!("{key}:"))).unwrap();
    line[key.len() + 1..].trim().to_owned()
}

fn text(service: &ProcessService, id: forgemcp::process::ProcessId) -> String {
    service.get(id, &Selection::default()).unwrap().transcript.into_iter().map(|e| e.text).collect()
}

async fn wait_for_pids(service: &ProcessService, id: forgemcp::process::ProcessId, n: usize) -> Vec<u32> {
    for _ in 0..200 {
        let pids = printed_pids(&text(service, id), "pid");
        if pids.len() >= n {
            return pids;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("process {id} never printed {n} pids: {:?}", text(service, id));
}

#[tokio::test]
async fn a_leader_adopts_its_orphans_leads_its_group_and_carries_the_marker() {
    let (ws, service) = setup();
    // The leader prints its pid, then a child leaves the session, starts a grandchild with an
    // empty environment and exits: the grandchild is orphaned while the leader lives.
    let steps = ["pid", "spawn:setsid+spawn-clean:pid,sleep:60000+exit:0", "sleep:60000"];
    let spec = CommandSpec::new(helper(), &ws.project).args(steps);
    let lived = service.spawn_long_lived(spec).await.unwrap();
    let mut lived = lived;
    let mut stdout = lived.take_stdout();
    let reader = tokio::spawn(async move { tokio::io::copy(&mut stdout, &mut tokio::io::sink()).await });
    let pids = wait_for_pids(&service, lived.id, 2).await;
    let (leader, orphan) = (pids[0], pids[1]);
    assert_eq!(leader, lived.pid);
    let mut adopted = parent_and_group(orphan).0;
    for _ in 0..100 {
        if adopted == leader {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        adopted = parent_and_group(orphan).0;
    }
    assert_eq!(adopted, leader, "the orphan was re-parented to its leader, a child subreaper");
    assert_eq!(parent_and_group(leader), (std::process::id(), leader), "the leader is our child and leads its group");
    let environ = std::fs::read(format!("/proc/{leader}/environ")).unwrap();
    assert!(
        environ.split(|&b| b == 0).any(|var| var.starts_with(b"FORGEMCP_PROCESS_TREE=")),
        "the leader carries the tree marker"
    );
    assert_eq!(std::fs::read_link(format!("/proc/{leader}/fd/0")).unwrap(), Path::new("/dev/null"));
    for fd in [1, 2] {
        let target = std::fs::read_link(format!("/proc/{leader}/fd/{fd}")).unwrap();
        assert!(target.to_string_lossy().starts_with("pipe:"), "fd {fd}: {}", target.display());
    }
    // The kill finds the unmarked orphan below its leader.
    assert_eq!(lived.stop().await.status, Status::Stopped);
    assert_gone_within_a_second(&[leader, orphan]).await;
    reader.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_leader_starts_with_no_signal_blocked_or_ignored_and_runs_a_bare_name_from_path() {
    let (ws, service) = setup();
    // The test process ignores SIGPIPE (Rust's runtime does) and has handlers (tokio's SIGCHLD);
    // the child gets neither, and nothing blocked.
    let spec = CommandSpec::new("sleep", &ws.project).arg("60");
    let lived = service.spawn_long_lived(spec).await.unwrap();
    assert_eq!(status_field(lived.pid, "SigBlk"), "0000000000000000");
    // What the test process ignores, except SIGPIPE (signal 13), is inherited as std passes it on.
    let ignored = u64::from_str_radix(&status_field(std::process::id(), "SigIgn"), 16).unwrap() & !(1 << 12);
    assert_eq!(status_field(lived.pid, "SigIgn"), format!("{ignored:016x}"));
    assert_eq!(lived.stop().await.status, Status::Stopped);

    // With `PATH` set by the spec, the bare name is looked up there.
    let bin = ws.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(helper(), bin.join("only-here")).unwrap();
    let spec = CommandSpec::new("only-here", &ws.project).env("PATH", &bin).arg("out:found");
    let done = service.run(spec, &Call::detached()).await.unwrap();
    assert_eq!((done.status, text(&service, done.id)), (Status::Exited(0), "found".to_owned()));
}

#[tokio::test]
async fn spawn_errors_read_as_std_reports_them() {
    let (ws, service) = setup();
    let not_executable = ws.path("plain.txt");
    std::fs::write(&not_executable, "text").unwrap();
    let cases = [
        (CommandSpec::new(ws.path("no-such-tool"), &ws.project), "No such file or directory (os error 2)"),
        (CommandSpec::new("forgemcp-no-such-tool", &ws.project), "No such file or directory (os error 2)"),
        (CommandSpec::new(&not_executable, &ws.project), "Permission denied (os error 13)"),
        (CommandSpec::new(&ws.project, &ws.project), "Permission denied (os error 13)"),
    ];
    for (spec, source) in cases {
        let shown = spec.executable.display().to_string();
        match service.run(spec, &Call::detached()).await {
            Err(Error::Spawn { executable, source: err }) => {
                assert_eq!(executable, shown);
                assert_eq!(err.to_string(), source, "{shown}");
            }
            other => panic!("{shown}: {other:?}"),
        }
    }
    assert!(service.ids().is_empty(), "failed spawns are not registered");
    // A working directory that vanished is reported before anything is started.
    let err = service.run(CommandSpec::new(helper(), ws.path("gone")), &Call::detached()).await.unwrap_err();
    assert!(matches!(err, Error::CwdUnavailable { .. }), "{err}");
}

#[tokio::test]
async fn a_pinned_executable_runs_through_its_descriptor_scripts_too() {
    let (ws, service) = setup();
    let exe = ws.path("tools/helper");
    std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
    std::fs::copy(helper(), &exe).unwrap();
    let checked = CheckedExecutable::open(&exe, &ws.roots()).unwrap();
    let lived =
        service.spawn_long_lived(CommandSpec::checked(checked.clone(), &ws.project).args(["sleep:60000"])).await;
    let lived = lived.unwrap();
    // The vfork-style start resumes us once the child's exec has replaced its memory, which is before
    // the kernel sets up the new program's arguments: the command line can read empty for a moment.
    let mut cmdline = Vec::new();
    for _ in 0..200 {
        cmdline = std::fs::read(format!("/proc/{}/cmdline", lived.pid)).unwrap();
        if !cmdline.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert_eq!(cmdline.split(|&b| b == 0).next().unwrap(), exe.to_string_lossy().as_bytes(), "argv[0]");
    assert!(checked.runs_in(lived.pid).unwrap(), "the checked file runs");
    assert_eq!(lived.stop().await.status, Status::Stopped);

    // A script's interpreter opens `/proc/self/fd/<n>`: the descriptor stayed open across the exec.
    let script = ws.path("tools/script.sh");
    std::fs::write(&script, "#!/bin/sh\necho script ran\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let checked = CheckedExecutable::open(&script, &ws.roots()).unwrap();
    let done = service.run(CommandSpec::checked(checked, &ws.project), &Call::detached()).await.unwrap();
    assert_eq!((done.status, text(&service, done.id)), (Status::Exited(0), "script ran\n".to_owned()));
}

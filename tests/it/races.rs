//! Hardening against concurrent actors: two servers writing into one folder of one project, and
//! link swaps racing reads, mirrors, searches, listings, file info and test executables. Every race
//! is bounded in count and time and stays on this machine.

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

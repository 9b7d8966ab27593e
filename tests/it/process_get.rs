//! `process_get`'s selectors through the MCP surface, on one run of `forgemcp-test-helper` with an
//! early and a late part: lines, time, both, the byte budget with its cut marker, and `match` (the
//! matching lines with their absolute numbers, after time and lines, before `max_bytes`, one header
//! per run of one stream; the whole transcript unless a selector narrows it, saying which lines it
//! searched), qualified paths in transcripts and deaths by signal.
#![cfg(all(feature = "test-tools", target_os = "linux"))]

use std::time::Duration;

use forgemcp::call::Call;
use forgemcp::process::{CommandSpec, ProcessId, ProcessService, Status};
use forgemcp::server::ForgeServer;
use rmcp::RoleClient;
use rmcp::service::RunningService;
use serde_json::{Value, json};

use crate::process_mcp::{Server, fragments, transcript_text};
use crate::support::{TempWorkspace, TestClient, call, connect, resource_text, structured, text, tool_error};

/// 120 numbered lines on stdout at once, then after a pause two lines on stderr and one on stdout
/// that starts with a three-byte character.
const LATE_PAUSE_MS: &str = "sleep:800";

async fn selector_run(srv: &Server) -> (ProcessId, Duration, f64) {
    let early: String = (1..=120).map(|n| format!("l{n}\\n")).collect();
    let early = format!("out:{early}");
    let done =
        srv.run(&[&early, LATE_PAUSE_MS, "err:late 121\\nlate 122\\n", "sleep:50", "out:\u{20ac}uro 123\\n"]).await;
    assert_eq!(done.status, Status::Exited(0));
    // The time boundary: halfway between the early and the late chunks, as the journal recorded them.
    let (_, entries) = srv.processes.full(done.id).unwrap();
    let early_end = entries.iter().filter(|e| e.start_line <= 120).map(|e| e.elapsed).max().unwrap();
    let late_start = entries.iter().filter(|e| e.start_line > 120).map(|e| e.elapsed).min().unwrap();
    assert!(late_start > early_end + Duration::from_millis(500), "{early_end:?} .. {late_start:?}");
    let boundary = (early_end + late_start).as_secs_f64() / 2.0;
    (done.id, done.work_time, boundary)
}

fn numbered(range: std::ops::RangeInclusive<u32>) -> String {
    range.map(|n| format!("l{n}\n")).collect()
}

#[tokio::test]
async fn process_get_applies_every_selector_form() {
    let srv = Server::start().await;
    let (id, work_time, boundary) = selector_run(&srv).await;
    let tail = "late 121\nlate 122\n\u{20ac}uro 123\n";

    // No selector: the last 100 lines.
    let all = srv.get(id, json!({})).await;
    assert_eq!(all["lines"], json!([24, 123]));
    assert_eq!(transcript_text(&all), numbered(24..=120) + tail);
    assert_eq!(all["process"]["status"]["current_status"], json!(0));

    // max_bytes 0: metadata only.
    let meta = srv.get(id, json!({ "max_bytes": 0 })).await;
    assert_eq!((meta["transcript"].clone(), meta["lines"].clone()), (json!([]), Value::Null));
    assert_eq!(meta["process"]["summary"]["process_id"], json!(id.0));

    // Lines: first, last and range, with absolute numbers and the streams they came from.
    let first = srv.get(id, json!({ "lines": { "first": 5 } })).await;
    assert_eq!((first["lines"].clone(), transcript_text(&first)), (json!([1, 5]), numbered(1..=5)));
    let last = srv.get(id, json!({ "lines": { "last": 2 } })).await;
    assert_eq!(last["lines"], json!([122, 123]));
    assert_eq!(fragments(&last), [("stderr".to_owned(), 122, 122), ("stdout".to_owned(), 123, 123)]);
    assert_eq!(transcript_text(&last), "late 122\n\u{20ac}uro 123\n");
    let range = srv.get(id, json!({ "lines": { "start": 119, "end": 121 } })).await;
    assert_eq!(range["lines"], json!([119, 121]));
    assert_eq!(fragments(&range), [("stdout".to_owned(), 119, 120), ("stderr".to_owned(), 121, 121)]);
    assert_eq!(transcript_text(&range), "l119\nl120\nlate 121\n");
    let beyond = srv.get(id, json!({ "lines": { "start": 500, "end": 600 } })).await;
    assert_eq!((beyond["transcript"].clone(), beyond["lines"].clone()), (json!([]), Value::Null));

    // Time: first, last (relative to completion after exit) and range, by chunk recording time.
    let early = srv.get(id, json!({ "time": { "first": boundary } })).await;
    assert_eq!((early["lines"].clone(), transcript_text(&early)), (json!([1, 120]), numbered(1..=120)));
    let late_seconds = work_time.as_secs_f64() - boundary;
    let late = srv.get(id, json!({ "time": { "last": late_seconds } })).await;
    assert_eq!((late["lines"].clone(), transcript_text(&late)), (json!([121, 123]), tail.to_owned()));
    let window = srv.get(id, json!({ "time": { "start": 0.0, "end": boundary } })).await;
    assert_eq!(window["lines"], json!([1, 120]));
    let window = srv.get(id, json!({ "time": { "start": boundary, "end": 3600.0 } })).await;
    assert_eq!(window["lines"], json!([121, 123]));

    // Time, then lines within that selection.
    let both = srv.get(id, json!({ "time": { "first": boundary }, "lines": { "last": 3 } })).await;
    assert_eq!((both["lines"].clone(), transcript_text(&both)), (json!([118, 120]), numbered(118..=120)));
    let both = srv.get(id, json!({ "time": { "start": boundary, "end": 3600.0 }, "lines": { "first": 1 } })).await;
    assert_eq!((both["lines"].clone(), transcript_text(&both)), (json!([121, 121]), "late 121\n".to_owned()));

    // Then the byte budget: tail selections keep the end, others the start; characters stay whole.
    let tail_cut = srv.get(id, json!({ "lines": { "last": 1 }, "max_bytes": 9 })).await;
    assert_eq!((tail_cut["lines"].clone(), transcript_text(&tail_cut)), (json!([123, 123]), "uro 123\n".to_owned()));
    let head_cut = srv.get(id, json!({ "lines": { "start": 123, "end": 123 }, "max_bytes": 4 })).await;
    assert_eq!(transcript_text(&head_cut), "\u{20ac}u");
    let head_cut = srv.get(id, json!({ "lines": { "start": 123, "end": 123 }, "max_bytes": 2 })).await;
    assert_eq!((head_cut["transcript"].clone(), head_cut["lines"].clone()), (json!([]), Value::Null));
    let head = srv.get(id, json!({ "lines": { "first": 10 }, "max_bytes": 7 })).await;
    assert_eq!((head["lines"].clone(), transcript_text(&head)), (json!([1, 3]), "l1\nl2\nl".to_owned()));
    let time_tail = srv.get(id, json!({ "time": { "last": late_seconds }, "max_bytes": 11 })).await;
    assert_eq!(transcript_text(&time_tail), "\u{20ac}uro 123\n", "a last-seconds selection keeps the end");

    // Selections never shorten the journal: the Markdown resource still holds every line.
    let markdown = resource_text(&srv.client, &format!("forgemcp://processes/{id}"), "text/markdown").await;
    assert!(markdown.contains(&numbered(1..=120)), "{markdown}");
    for chunk in ["late 121\nlate 122\n", "\u{20ac}uro 123\n"] {
        assert!(markdown.contains(chunk), "{markdown}");
    }

    // Each selector takes exactly one valid form.
    let mixed =
        call(&srv.client, "process_get", json!({ "process_id": id.0, "lines": { "first": 1, "last": 2 } })).await;
    assert!(tool_error(&mixed).contains("exactly one line selector form"), "{}", text(&mixed));
    let backwards =
        call(&srv.client, "process_get", json!({ "process_id": id.0, "time": { "start": 2.0, "end": 1.0 } })).await;
    assert!(tool_error(&backwards).contains("start < end"), "{}", text(&backwards));
}

/// `(start_line, text)` of every returned fragment.
fn numbered_lines(details: &Value) -> Vec<(u64, String)> {
    let entries = details["transcript"].as_array().expect("transcript");
    entries.iter().map(|e| (e["start_line"].as_u64().unwrap(), e["text"].as_str().unwrap().to_owned())).collect()
}

#[tokio::test]
async fn process_get_match_keeps_numbered_lines_between_the_selectors_and_the_budget() {
    let srv = Server::start().await;
    let (id, _, boundary) = selector_run(&srv).await;
    let get = async |args: Value| {
        let mut args = args;
        args["process_id"] = json!(id.0);
        let res = call(&srv.client, "process_get", args).await;
        (text(&res).to_owned(), structured(&res).clone())
    };
    let line = |n: u64, text: &str| (n, text.to_owned());

    // Matching lines keep their absolute numbers; one header per run of one stream.
    let (shown, details) = get(json!({ "lines": { "first": 200 }, "match": "12" })).await;
    assert_eq!(
        numbered_lines(&details),
        [
            line(12, "l12\n"),
            line(112, "l112\n"),
            line(120, "l120\n"),
            line(121, "late 121\n"),
            line(122, "late 122\n"),
            line(123, "\u{20ac}uro 123\n")
        ]
    );
    assert!(details["transcript"].as_array().unwrap().iter().all(|e| e["start_line"] == e["end_line"]));
    assert_eq!(details["lines"], json!([12, 123]));
    let headers: Vec<&str> =
        shown.lines().filter(|l| l.contains(" — ")).map(|l| l.split(" — ").next().unwrap()).collect();
    assert_eq!(headers, ["stdout", "stderr", "stdout"], "{shown}");
    assert!(shown.contains(" (lines 12–120)\n12: l12\n112: l112\n120: l120\nstderr — "), "{shown}");
    assert!(shown.contains("\n121: late 121\n122: late 122\nstdout — "), "{shown}");

    // After time and lines: only the selected lines are searched.
    let (_, details) = get(json!({ "time": { "first": boundary }, "lines": { "last": 3 }, "match": "9" })).await;
    assert_eq!(numbered_lines(&details), [line(119, "l119\n")]);
    let (shown, details) = get(json!({ "lines": { "start": 50, "end": 60 }, "match": "^nothing" })).await;
    assert_eq!((details["transcript"].clone(), details["lines"].clone()), (json!([]), Value::Null));
    assert!(shown.contains("No transcript entries in the selected range."), "{shown}");

    // Before max_bytes: the budget cuts the matches (whole lines, from the kept end) and says so.
    let numbered_bytes: u64 = (1..=120u64).map(|n| n.to_string().len() as u64 + 2).sum();
    let (shown, details) = get(json!({ "lines": { "first": 200 }, "match": "^l\\d", "max_bytes": 10 })).await;
    assert_eq!(numbered_lines(&details), [line(1, "l1\n"), line(2, "l2\n"), line(3, "l3\n")]);
    let more = numbered_bytes - 9;
    assert!(shown.ends_with(&format!("\n3: l3\n… {more} more bytes: raise max_bytes or narrow lines\n")), "{shown}");
    let (shown, details) = get(json!({ "lines": { "last": 200 }, "match": "^l\\d", "max_bytes": 10 })).await;
    assert_eq!(numbered_lines(&details), [line(119, "l119\n"), line(120, "l120\n")]);
    assert!(
        shown.contains(&format!(":\n… {} more bytes: raise max_bytes or narrow lines\nstdout — ", numbered_bytes - 10)),
        "{shown}"
    );
}

/// Processes run by `/bin/sh -c script`, one per script, in a fresh workspace, read back through
/// MCP; returns the id of the first.
async fn shell_run(scripts: &[&str]) -> (TempWorkspace, RunningService<RoleClient, TestClient>, u64) {
    let ws = TempWorkspace::new("");
    let processes = ProcessService::new(ws.roots());
    let server = ForgeServer::new(ws.services_with_discovery(processes.clone(), ws.discovery()), Duration::ZERO);
    let client = connect(server, TestClient::new()).await;
    let mut ids = Vec::new();
    for script in scripts {
        let spec = CommandSpec::new("/bin/sh", &ws.project).args(["-c", script]);
        ids.push(processes.run(spec, &Call::detached()).await.expect("sh starts").id.0);
    }
    (ws, client, ids[0])
}

#[tokio::test]
async fn match_searches_the_whole_transcript_with_qualified_paths_and_signal_deaths_in_every_text() {
    // 150 lines, every fifth an error naming a header through a host path with a `.` segment, then a
    // death by SIGSEGV.
    let script = "i=1; while [ $i -le 150 ]; do \
                  if [ $((i % 5)) -eq 0 ]; then echo \"$PWD/include/gsl/./span:$i: error: bad $i\"; \
                  else echo \"line $i\"; fi; i=$((i+1)); done; kill -SEGV $$";
    let (ws, client, id) = shell_run(&[script, "true", "exit 4"]).await;
    let res = call(&client, "process_get", json!({ "process_id": id, "match": "error:" })).await;
    let (shown, details) = (text(&res), structured(&res));
    let lines = numbered_lines(details);
    assert_eq!(lines.len(), 30, "every matching line, not only those of the last 100: {shown}");
    assert_eq!(lines[0], (5, "project/include/gsl/span:5: error: bad 5\n".to_owned()));
    assert!(shown.contains("Searched transcript lines 1–150: 30 matching lines.\n"), "{shown}");
    assert!(shown.contains("\n5: project/include/gsl/span:5: error: bad 5\n"), "{shown}");
    assert!(!shown.contains(&ws.project.to_string_lossy().into_owned()), "no host path of the project: {shown}");
    assert!(shown.contains("Outcome: Killed by signal 11 (SIGSEGV)"), "{shown}");
    assert_eq!(details["process"]["status"]["current_status"], json!(-11));

    // `lines` narrows the search, and the text says which lines it searched.
    let res =
        call(&client, "process_get", json!({ "process_id": id, "match": "error:", "lines": { "last": 20 } })).await;
    assert_eq!(numbered_lines(structured(&res)).len(), 4);
    assert!(text(&res).contains("Searched transcript lines 131–150: 4 matching lines.\n"), "{}", text(&res));

    // Without a match: the plain tail, qualified too; the overview reads the same outcome.
    let tail =
        structured(&call(&client, "process_get", json!({ "process_id": id, "lines": { "last": 1 } })).await).clone();
    assert_eq!(transcript_text(&tail), "project/include/gsl/span:150: error: bad 150\n");
    // The overview lists the failed ones, one line each, and counts the rest.
    let overview = call(&client, "processes_overview", json!({})).await;
    let shown = text(&overview);
    assert!(shown.starts_with("0 running, 2 failed, 1 succeeded. Showing 2 processes (status: running_or_failed)."));
    assert!(shown.contains("\n1. Killed by signal 11 (SIGSEGV) ("), "{shown}");
    assert!(shown.contains("\n3. Exited with code 4 ("), "{shown}");
    assert!(!shown.contains("\n2. "), "{shown}");
    assert_eq!(structured(&overview)["failed"], json!(2));
    assert_eq!(structured(&overview)["processes"].as_array().map(Vec::len), Some(2));
    let succeeded = call(&client, "processes_overview", json!({ "status": "succeeded" })).await;
    assert!(text(&succeeded).contains("\n2. Completed successfully ("), "{}", text(&succeeded));
}

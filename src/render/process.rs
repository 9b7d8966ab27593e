//! Process renderings: plain text for `processes_overview` and `process_get` (INTERFACE.md §12) and
//! Markdown for `forgemcp://processes` and `forgemcp://processes/{process_id}` (§8).
//!
//! Architecture invariant: pure functions of `process` domain values; no clock, no I/O.

use std::fmt::Write as _;
use std::time::Duration;

use super::workspace::iso_timestamp as iso;
use super::{markdown, thousands};
use crate::process::{Details, LogEntry, Overview, ProcessInfo, Shortener, Status, StatusFilter, signal_name};
use crate::text::plural;

/// The readable outcome of a status.
pub fn outcome(status: Status) -> String {
    match status {
        Status::Running => "Running".to_owned(),
        Status::Exited(0) => "Completed successfully".to_owned(),
        Status::Exited(code) if code < 0 && cfg!(unix) => {
            format!("Killed by signal {} ({})", -code, signal_name(-code))
        }
        Status::Exited(code) => format!("Exited with code {code}"),
        Status::Interrupted => "Interrupted by timeout".to_owned(),
        Status::Stopped => "Stopped".to_owned(),
        Status::StreamFailure => "Stream failure".to_owned(),
    }
}

pub fn filter_name(filter: StatusFilter) -> &'static str {
    match filter {
        StatusFilter::All => "all",
        StatusFilter::Running => "running",
        StatusFilter::Completed => "completed",
        StatusFilter::Failed => "failed",
        StatusFilter::Succeeded => "succeeded",
        StatusFilter::RunningOrFailed => "running_or_failed",
    }
}

/// `600 s`, `0.5 s`, or `None`.
fn limit(limit: Option<Duration>) -> String {
    match limit {
        Some(limit) => format!("{} s", limit.as_secs_f64()),
        None => "None".to_owned(),
    }
}

/// The command line quoted the platform's way, for reading and copying.
pub fn command_line(info: &ProcessInfo) -> String {
    let words =
        std::iter::once(info.summary.executable.as_str()).chain(info.summary.arguments.iter().map(String::as_str));
    let quoted: Vec<String> = words.map(if cfg!(windows) { quote_windows } else { quote_posix }).collect();
    quoted.join(" ")
}

/// POSIX shell quoting: safe words stay bare, others go in single quotes.
fn quote_posix(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Windows quoting as `CommandLineToArgvW` reads it back: backslashes are doubled only before a quote.
fn quote_windows(word: &str) -> String {
    if !word.is_empty() && !word.contains([' ', '\t', '\n', '"']) {
        return word.to_owned();
    }
    let mut res = String::from("\"");
    let mut backslashes = 0;
    for c in word.chars() {
        match c {
            '\\' => backslashes += 1,
            '"' => {
                res.push_str(&"\\".repeat(backslashes * 2 + 1));
                res.push('"');
                backslashes = 0;
            }
            _ => {
                res.push_str(&"\\".repeat(backslashes));
                res.push(c);
                backslashes = 0;
            }
        }
    }
    res.push_str(&"\\".repeat(backslashes * 2));
    res.push('"');
    res
}

/// The process's lines; `cwd` is the working directory as the text shows it (qualified).
fn process_block(res: &mut String, info: &ProcessInfo, cwd: &str) {
    let summary = &info.summary;
    let _ = writeln!(res, "{}", command_line(info));
    let _ = writeln!(res, "  Process: {}; PID: {}", info.id, info.pid);
    let _ = writeln!(res, "  Outcome: {}", outcome(info.status));
    let _ = writeln!(res, "  Working directory: {cwd}");
    let _ = writeln!(res, "  Started: {}", iso(&info.started));
    let _ = writeln!(res, "  Work time: {:.3} s", info.work_time.as_secs_f64());
    let _ = writeln!(res, "  Encoding: {}", summary.encoding);
    let _ = writeln!(res, "  Total timeout: {}", limit(summary.timeout.total));
    let _ = writeln!(res, "  Idle timeout: {}", limit(summary.timeout.idle));
}

/// Longest command line an overview line shows.
const COMMAND_CHARS: usize = 160;

/// Plain text of `processes_overview`: the counts, then one line per listed process with its
/// outcome, work time and command line (host paths rewritten by `shorten`, long ones clipped).
pub fn overview_text(overview: &Overview, filter: StatusFilter, shorten: &Shortener) -> String {
    let succeeded = overview.completed - overview.failed;
    let mut res = format!(
        "{} running, {} failed, {} succeeded. Showing {} (status: {}).",
        overview.running,
        overview.failed,
        succeeded,
        plural(overview.processes.len(), "process", "processes"),
        filter_name(filter),
    );
    if filter == StatusFilter::RunningOrFailed && succeeded > 0 {
        let _ = write!(res, " The {succeeded} succeeded are listed with status \"succeeded\" or \"all\".");
    }
    res.push('\n');
    if !overview.processes.is_empty() {
        res.push('\n');
    }
    for info in &overview.processes {
        let command = shorten.shorten(&command_line(info));
        let shown = match command.char_indices().nth(COMMAND_CHARS) {
            Some((cut, _)) => format!("{}…", &command[..cut]),
            None => command,
        };
        let _ = writeln!(res, "{}. {} ({:.1} s): {shown}", info.id, outcome(info.status), info.work_time.as_secs_f64());
    }
    res
}

fn line_span(a: u64, b: u64) -> String {
    if a == b { format!("line {a}") } else { format!("lines {a}–{b}") }
}

/// Transcript bytes `max_bytes` left out of a `process_get` answer, before (`at_start`) or after
/// what it returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    pub bytes: u64,
    pub at_start: bool,
}

/// What a `match` searched: the span of transcript lines and how many of them matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Search {
    pub lines: Option<(u64, u64)>,
    pub matches: u64,
}

/// Plain text of `process_get`: the process block, what a `match` searched, then one header per run
/// of entries from the same stream and their raw text (after a `match`, each line after its absolute
/// number), and a marker where `max_bytes` cut.
pub fn details_text(details: &Details, cwd: &str, cut: Option<Cut>, search: Option<Search>) -> String {
    let mut res = String::new();
    process_block(&mut res, &details.process, cwd);
    res.push('\n');
    let matched = search.is_some();
    if let Some(search) = search {
        let found = match search.matches {
            1 => "1 matching line".to_owned(),
            n => format!("{} matching lines", thousands(n)),
        };
        match search.lines {
            Some((a, b)) => {
                let _ = writeln!(res, "Searched transcript {}: {found}.", line_span(a, b));
            }
            None => res.push_str("Searched no transcript lines (none in the selected range).\n"),
        }
    }
    match details.lines {
        Some((a, b)) => {
            let _ = writeln!(res, "Returned transcript {}:", line_span(a, b));
        }
        None => res.push_str("No transcript entries in the selected range.\n"),
    }
    let marker = |res: &mut String, cut: Cut| {
        let _ = writeln!(res, "… {} more bytes: raise max_bytes or narrow lines", thousands(cut.bytes));
    };
    if let Some(cut) = cut.filter(|cut| cut.at_start) {
        marker(&mut res, cut);
    }
    let entries = &details.transcript;
    let mut idx = 0;
    while idx < entries.len() {
        let stream = entries[idx].stream;
        let run = entries[idx..].iter().take_while(|e| e.stream == stream).count();
        let group = &entries[idx..idx + run];
        let (first, last) = (&group[0], &group[run - 1]);
        let _ = writeln!(
            res,
            "{} — {} ({})",
            stream.as_str(),
            iso(&first.timestamp),
            line_span(first.start_line, last.end_line)
        );
        for entry in group {
            if matched {
                let _ = write!(res, "{}: ", entry.start_line);
            }
            // Chunks of one stream continue each other; only the run's end gets a line break.
            res.push_str(&entry.text);
            if matched && !entry.text.ends_with('\n') {
                res.push('\n');
            }
        }
        if !res.ends_with('\n') {
            res.push('\n');
        }
        idx += run;
    }
    if let Some(cut) = cut.filter(|cut| !cut.at_start) {
        marker(&mut res, cut);
    }
    res
}

/// The `forgemcp://processes` resource.
pub fn overview_markdown(overview: &Overview) -> String {
    let mut res = String::from("# Processes\n\n");
    if overview.processes.is_empty() {
        res.push_str("No processes have been started.\n");
        return res;
    }
    res.push_str("| ID | Executable | PID | Started (UTC) | Outcome |\n| --- | --- | --- | --- | --- |\n");
    for info in &overview.processes {
        let _ = writeln!(
            res,
            "| {} | {} | {} | {} | {} |",
            markdown::link(&info.id.to_string(), &format!("forgemcp://processes/{}", info.id)),
            markdown::cell(&info.summary.executable),
            info.pid,
            markdown::timestamp(&info.started),
            outcome(info.status),
        );
    }
    res
}

/// The `forgemcp://processes/{process_id}` resource: state and the complete transcript.
pub fn process_markdown(info: &ProcessInfo, transcript: &[LogEntry]) -> String {
    let summary = &info.summary;
    let mut res = format!("# Process {}: {}\n\n", info.id, markdown::escape(&summary.executable));
    res.push_str("| Property | Value |\n| --- | --- |\n");
    let rows = [
        ("Outcome", outcome(info.status)),
        ("PID", info.pid.to_string()),
        ("Started (UTC)", markdown::timestamp(&info.started)),
        ("Work time", format!("{:.2} s", info.work_time.as_secs_f64())),
        ("Working directory", summary.cwd.clone()),
        ("Encoding", summary.encoding.clone()),
        ("Total timeout", limit(summary.timeout.total)),
        ("Idle timeout", limit(summary.timeout.idle)),
    ];
    for (name, value) in rows {
        let _ = writeln!(res, "| {name} | {} |", markdown::cell(&value));
    }
    res.push_str("\n## Arguments\n\n");
    if summary.arguments.is_empty() {
        res.push_str("None\n");
    }
    for (idx, arg) in summary.arguments.iter().enumerate() {
        let shown = if arg.is_empty() { "*(empty)*".to_owned() } else { markdown::escape(arg) };
        let _ = writeln!(res, "{}. {shown}", idx + 1);
    }
    res.push_str("\n## Transcript\n");
    if transcript.is_empty() {
        res.push_str("\nNo stream chunks recorded.\n");
    }
    for entry in transcript {
        let _ = write!(
            res,
            "\n### {} · {} · +{:.2} s\n\n{}\n",
            entry.stream.as_str(),
            markdown::timestamp(&entry.timestamp),
            entry.elapsed.as_secs_f64(),
            markdown::fence(&entry.text, ""),
        );
    }
    res
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use chrono::{DateTime, Utc};
    use expect_test::{Expect, expect};

    use super::*;
    use crate::process::{ProcessId, Stream, Summary, Timeout};

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    fn info(id: u64, arguments: &[&str], status: Status) -> ProcessInfo {
        ProcessInfo {
            id: ProcessId(id),
            summary: Arc::new(Summary {
                executable: "/usr/bin/cmake".to_owned(),
                arguments: arguments.iter().map(|a| (*a).to_owned()).collect(),
                cwd: "/work/proj".to_owned(),
                encoding: "utf-8".to_owned(),
                timeout: Timeout { total: Some(Duration::from_secs(600)), idle: Some(Duration::from_millis(2500)) },
            }),
            pid: 4242,
            started: at("2026-09-07T12:45:12.123456Z"),
            work_time: Duration::from_millis(1234),
            status,
        }
    }

    fn entry(ms: u64, stream: Stream, text: &str, start_line: u64, end_line: u64) -> LogEntry {
        LogEntry {
            timestamp: at("2026-09-07T12:45:12.123456Z") + chrono::Duration::milliseconds(ms as i64),
            elapsed: Duration::from_millis(ms),
            stream,
            text: text.to_owned(),
            start_line,
            end_line,
        }
    }

    fn shortener() -> Shortener {
        Shortener::new(&crate::workspace::path::Roots::new("/work/proj".into(), "/work/.proj.forgemcp".into()))
    }

    #[track_caller]
    fn check(actual: String, expect: Expect) {
        expect.assert_eq(&actual);
    }

    #[test]
    fn outcomes_read_as_sentences() {
        let all = [
            Status::Exited(0),
            Status::Exited(2),
            Status::Exited(-9),
            Status::Running,
            Status::Interrupted,
            Status::Stopped,
            Status::StreamFailure,
        ];
        check(
            all.map(outcome).join("\n"),
            expect![[r#"
                Completed successfully
                Exited with code 2
                Killed by signal 9 (SIGKILL)
                Running
                Interrupted by timeout
                Stopped
                Stream failure"#]],
        );
    }

    #[test]
    fn posix_quoting_keeps_safe_words_bare() {
        let words = ["--build", "a b", "", "it's", "x=1", "$HOME"];
        check(words.map(quote_posix).join(" "), expect![[r#"--build 'a b' '' 'it'\''s' x=1 '$HOME'"#]]);
    }

    #[test]
    fn windows_quoting_round_trips_through_command_line_to_argv() {
        let words = [r"C:\Program Files\x.exe", r#"say "hi""#, r"dir\", "", "plain"];
        check(words.map(quote_windows).join(" "), expect![[r#""C:\Program Files\x.exe" "say \"hi\"" dir\ "" plain"#]]);
    }

    #[test]
    fn overview_lists_one_line_per_process() {
        let overview = Overview {
            running: 1,
            completed: 1,
            failed: 0,
            processes: vec![
                info(1, &["--build", "/work/.proj.forgemcp/build dir"], Status::Exited(0)),
                info(2, &[], Status::Running),
            ],
        };
        check(
            overview_text(&overview, StatusFilter::All, &shortener()),
            expect![[r#"
                1 running, 0 failed, 1 succeeded. Showing 2 processes (status: all).

                1. Completed successfully (1.2 s): root/usr/bin/cmake --build 'storage/build dir'
                2. Running (1.2 s): root/usr/bin/cmake
            "#]],
        );
    }

    #[test]
    fn empty_overview_says_so() {
        let overview = Overview { running: 0, completed: 3, failed: 1, processes: Vec::new() };
        check(
            overview_text(&overview, StatusFilter::RunningOrFailed, &shortener()),
            expect![[r#"
                0 running, 1 failed, 2 succeeded. Showing 0 processes (status: running_or_failed). The 2 succeeded are listed with status "succeeded" or "all".
            "#]],
        );
    }

    #[test]
    fn details_show_fragments_with_streams_times_and_lines() {
        let details = Details {
            process: info(3, &["-E", "echo"], Status::Exited(1)),
            transcript: vec![
                entry(10, Stream::Stdout, "configuring\n", 1, 1),
                entry(250, Stream::Stderr, "error: x\nmore", 2, 3),
            ],
            lines: Some((1, 3)),
        };
        check(
            details_text(&details, "project/", None, None),
            expect![[r#"
                /usr/bin/cmake -E echo
                  Process: 3; PID: 4242
                  Outcome: Exited with code 1
                  Working directory: project/
                  Started: 2026-09-07T12:45:12.123456Z
                  Work time: 1.234 s
                  Encoding: utf-8
                  Total timeout: 600 s
                  Idle timeout: 2.5 s

                Returned transcript lines 1–3:
                stdout — 2026-09-07T12:45:12.133456Z (line 1)
                configuring
                stderr — 2026-09-07T12:45:12.373456Z (lines 2–3)
                error: x
                more
            "#]],
        );
    }

    #[test]
    fn details_without_fragments_say_so() {
        let details = Details { process: info(3, &[], Status::Interrupted), transcript: Vec::new(), lines: None };
        let text = details_text(&details, "project/", None, None);
        assert!(text.ends_with("\nNo transcript entries in the selected range.\n"), "{text}");
    }

    #[test]
    fn overview_markdown_links_each_process() {
        let overview =
            Overview { running: 0, completed: 1, failed: 1, processes: vec![info(1, &[], Status::Interrupted)] };
        check(
            overview_markdown(&overview),
            expect![[r#"
                # Processes

                | ID | Executable | PID | Started (UTC) | Outcome |
                | --- | --- | --- | --- | --- |
                | [1](forgemcp://processes/1) | /usr/bin/cmake | 4242 | 07 Sep 2026, 12:45:12 UTC | Interrupted by timeout |
            "#]],
        );
        check(
            overview_markdown(&Overview { running: 0, completed: 0, failed: 0, processes: Vec::new() }),
            expect![[r#"
                # Processes

                No processes have been started.
            "#]],
        );
    }

    #[test]
    fn process_markdown_fences_outgrow_backticks_in_the_transcript() {
        let transcript = [entry(0, Stream::Stdin, "go\n", 1, 1), entry(1500, Stream::Stdout, "a ``` b\n", 2, 2)];
        check(
            process_markdown(&info(5, &["--x", "", "a|b"], Status::Exited(0)), &transcript),
            expect![[r#"
                # Process 5: /usr/bin/cmake

                | Property | Value |
                | --- | --- |
                | Outcome | Completed successfully |
                | PID | 4242 |
                | Started (UTC) | 07 Sep 2026, 12:45:12 UTC |
                | Work time | 1.23 s |
                | Working directory | /work/proj |
                | Encoding | utf-8 |
                | Total timeout | 600 s |
                | Idle timeout | 2.5 s |

                ## Arguments

                1. --x
                2. *(empty)*
                3. a|b

                ## Transcript

                ### stdin · 07 Sep 2026, 12:45:12 UTC · +0.00 s

                ```
                go
                ```

                ### stdout · 07 Sep 2026, 12:45:13 UTC · +1.50 s

                ````
                a ``` b
                ````
            "#]],
        );
    }

    #[test]
    fn process_markdown_without_arguments_or_chunks() {
        let text = process_markdown(&info(6, &[], Status::Running), &[]);
        assert!(text.contains("## Arguments\n\nNone\n"), "{text}");
        assert!(text.ends_with("## Transcript\n\nNo stream chunks recorded.\n"), "{text}");
    }
}

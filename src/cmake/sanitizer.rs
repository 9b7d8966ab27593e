//! Sanitizer reports (AddressSanitizer, UndefinedBehaviorSanitizer, LeakSanitizer,
//! ThreadSanitizer, MemorySanitizer) in a test's output, and the explaining lines of a failed test's
//! output.
//!
//! Architecture invariant: pure and line-by-line; paths stay as printed (the caller qualifies them
//! and keeps only the frames inside the managed roots).

/// One report: its headline and the stack frames that carry a source location.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// `AddressSanitizer: heap-buffer-overflow`, `UndefinedBehaviorSanitizer: signed integer overflow`.
    pub headline: String,
    /// The access or detail line (`READ of size 4 at 0x… thread T0` without the address).
    pub detail: Option<String>,
    /// UBSan's own location (`path:line:col: runtime error: …`).
    pub location: Option<Frame>,
    pub frames: Vec<Frame>,
}

/// A stack frame with a source location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub function: Option<String>,
    /// As printed.
    pub path: String,
    pub line: u32,
    pub column: Option<u32>,
}

/// Most reports kept per run, and frames per report.
const MAX_REPORTS: usize = 4;
const MAX_FRAMES: usize = 64;

/// Collects the reports of one run's output.
#[derive(Debug, Clone, Default)]
pub struct Watch {
    pub reports: Vec<Report>,
    /// Whether frames still belong to the last report (its first stack, before its `SUMMARY:` line).
    open: bool,
    /// Inside a report's block (from its headline to `==N==ABORTING` or the closing `=====` line
    /// after its summary): the lines a summary replaces.
    pub in_report: bool,
    summarized: bool,
}

const TOOLS: [&str; 5] =
    ["AddressSanitizer", "UndefinedBehaviorSanitizer", "LeakSanitizer", "ThreadSanitizer", "MemorySanitizer"];

impl Watch {
    pub fn line(&mut self, line: &str) {
        let line = line.trim_end();
        let trimmed = line.trim_start();
        let rule = !trimmed.is_empty() && trimmed.bytes().all(|b| b == b'=');
        if self.in_report && (trimmed.ends_with("==ABORTING") || rule && self.summarized) {
            self.in_report = false;
            return;
        }
        if rule {
            return;
        }
        if trimmed.starts_with("SUMMARY: ") {
            self.open = false;
            self.summarized = true;
            return;
        }
        if let Some(headline) = headline(trimmed) {
            self.start(Report { headline, ..Report::default() });
            self.in_report = true;
            self.summarized = false;
            return;
        }
        if let Some((location, message)) = ubsan_runtime_error(trimmed) {
            self.start(Report {
                headline: format!("UndefinedBehaviorSanitizer: {message}"),
                location: Some(location),
                ..Report::default()
            });
            return;
        }
        if !self.open {
            return;
        }
        let Some(report) = self.reports.last_mut() else { return };
        if let Some(frame) = frame(trimmed) {
            if report.frames.len() < MAX_FRAMES {
                report.frames.push(frame);
            }
        } else if trimmed.starts_with('#') {
            // A frame without a source location.
        } else if !report.frames.is_empty() {
            // The first stack ended (later ones say where the memory was allocated or freed).
            self.open = false;
        } else if report.detail.is_none() && report.frames.is_empty() && is_detail(trimmed) {
            report.detail = Some(without_addresses(trimmed));
        }
    }

    fn start(&mut self, report: Report) {
        if self.reports.len() < MAX_REPORTS {
            self.reports.push(report);
            self.open = true;
        } else {
            self.open = false;
        }
    }
}

/// `==123==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x… at pc …` →
/// `AddressSanitizer: heap-buffer-overflow`; `WARNING: ThreadSanitizer: data race (pid=1)` →
/// `ThreadSanitizer: data race`.
fn headline(line: &str) -> Option<String> {
    let rest = match line.strip_prefix("==") {
        Some(rest) => rest.split_once("==")?.1,
        None => line,
    };
    let rest = rest.strip_prefix("ERROR: ").or_else(|| rest.strip_prefix("WARNING: "))?;
    let (tool, what) = rest.split_once(": ")?;
    if !TOOLS.contains(&tool) {
        return None;
    }
    let what = what.split(" on address ").next().unwrap_or(what);
    let what = what.split(" (pid=").next().unwrap_or(what);
    let what = what.split(" on unknown address").next().unwrap_or(what);
    Some(format!("{tool}: {}", what.trim()))
}

/// `/p/a.cpp:12:5: runtime error: signed integer overflow: …`.
fn ubsan_runtime_error(line: &str) -> Option<(Frame, String)> {
    let (location, message) = line.split_once(": runtime error: ")?;
    Some((location_of(location, None)?, message.to_owned()))
}

/// `path:line[:col]` into a frame.
fn location_of(text: &str, function: Option<String>) -> Option<Frame> {
    let mut parts = text.rsplitn(3, ':');
    let last = parts.next()?.parse::<u32>().ok()?;
    match (parts.next().map(str::parse::<u32>), parts.next()) {
        (Some(Ok(line)), Some(path)) => Some(Frame { function, path: path.to_owned(), line, column: Some(last) }),
        _ => {
            let (path, _) = text.rsplit_once(':')?;
            Some(Frame { function, path: path.to_owned(), line: last, column: None })
        }
    }
}

/// `#0 0x55d1 in main /p/t.cpp:8:12` (ASan, LSan, MSan) or `#0 main /p/t.cpp:8:12 (bin+0x1)` (TSan);
/// frames without a source location (`(/lib/libc.so.6+0x2)`) give `None`.
fn frame(line: &str) -> Option<Frame> {
    let rest = line.strip_prefix('#')?;
    let (number, rest) = rest.split_once(' ')?;
    number.parse::<u32>().ok()?;
    let rest = rest.trim_start();
    let rest = match rest.strip_prefix("0x") {
        Some(address) => address.split_once(' ')?.1.trim_start(),
        None => rest,
    };
    let rest = rest.strip_prefix("in ").unwrap_or(rest);
    let rest = match rest.rsplit_once(" (") {
        Some((head, tail)) if tail.ends_with(')') && tail.contains('+') => head,
        _ => rest,
    };
    let (function, location) = rest.rsplit_once(' ')?;
    location_of(location, Some(function.to_owned()))
}

/// The access line after a headline (`READ of size 4 at 0x… thread T0`, `Direct leak of 4 byte(s) …`,
/// `Write of size 4 at 0x… by thread T1:`).
fn is_detail(line: &str) -> bool {
    ["READ of size", "WRITE of size", "Read of size", "Write of size", "Direct leak", "Indirect leak", "Uninitialized"]
        .iter()
        .any(|start| line.starts_with(start))
}

/// Drops the hexadecimal addresses a detail line carries (they differ from run to run).
fn without_addresses(line: &str) -> String {
    let words: Vec<&str> = line.trim_end_matches(':').split(' ').collect();
    let mut res: Vec<&str> = Vec::with_capacity(words.len());
    for (idx, word) in words.iter().enumerate() {
        if word.starts_with("0x") {
            if res.last() == Some(&"at") {
                res.pop();
            }
            continue;
        }
        if idx > 0 && words[idx - 1].starts_with("0x") && *word == "at" {
            continue;
        }
        res.push(word);
    }
    res.join(" ")
}

/// The lines of a failed test's output worth keeping: failure, error, assertion and sanitizer
/// lines, plus the first `head` and last `tail` lines; cuts are marked with the number of lines left
/// out.
pub fn explaining_lines(text: &str, head: usize, tail: usize, budget: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if text.len() <= budget {
        return text.to_owned();
    }
    let keep = |idx: usize, line: &str| -> bool {
        let lower = line.to_ascii_lowercase();
        idx < head
            || idx + tail >= lines.len()
            || ["fail", "error", "assert", "sanitizer", "abort", "exception", "panic", "expected", "runtime error"]
                .iter()
                .any(|w| lower.contains(w))
            || line.trim_start().starts_with('#') && line.contains(':')
    };
    let mut res = String::new();
    let mut skipped = 0usize;
    for (idx, line) in lines.iter().enumerate() {
        let line = clip(line, budget / 4);
        if keep(idx, line) && res.len() + line.len() < budget {
            if skipped > 0 {
                res.push_str(&format!("… {skipped} lines left out\n"));
                skipped = 0;
            }
            res.push_str(line);
            res.push('\n');
        } else {
            skipped += 1;
        }
    }
    if skipped > 0 {
        res.push_str(&format!("… {skipped} lines left out\n"));
    }
    res.trim_end().to_owned()
}

/// The last `max` bytes of an overlong line, marked with `…`.
fn clip(line: &str, max: usize) -> &str {
    if line.len() <= max {
        return line;
    }
    let mut start = line.len() - max;
    while !line.is_char_boundary(start) {
        start += 1;
    }
    &line[start..]
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use expect_test::{Expect, expect};

    use super::*;

    fn check(output: &str, expected: Expect) {
        let mut watch = Watch::default();
        for line in output.lines() {
            watch.line(line);
        }
        let mut res = String::new();
        for report in &watch.reports {
            let _ = writeln!(res, "{} | {}", report.headline, report.detail.as_deref().unwrap_or("-"));
            for frame in report.location.iter().chain(&report.frames) {
                let _ = writeln!(
                    res,
                    "  {} {}:{}:{}",
                    frame.function.as_deref().unwrap_or("-"),
                    frame.path,
                    frame.line,
                    frame.column.map_or("-".to_owned(), |c| c.to_string())
                );
            }
        }
        expected.assert_eq(&res);
    }

    #[test]
    fn address_sanitizer() {
        check(
            "=================================================================
==4242==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000014 at pc 0x55d1 bp 0x7ffc sp 0x7ffd
READ of size 4 at 0x602000000014 thread T0
    #0 0x55d1c0 in read_past(int const*) /p/tests/overflow.cpp:5:12
    #1 0x55d1c1 in main /p/tests/overflow.cpp:11:12
    #2 0x7f0000 in __libc_start_call_main ../sysdeps/nptl/libc_start_call_main.h:58:16
    #3 0x7f0001  (/lib/x86_64-linux-gnu/libc.so.6+0x271ca)

0x602000000014 is located 0 bytes after 4-byte region [0x602000000010,0x602000000014)
SUMMARY: AddressSanitizer: heap-buffer-overflow /p/tests/overflow.cpp:5:12 in read_past(int const*)
    #0 0x1 in not_a_frame_of_the_report /p/x.cpp:1:1
",
            expect![[r#"
                AddressSanitizer: heap-buffer-overflow | READ of size 4 thread T0
                  read_past(int const*) /p/tests/overflow.cpp:5:12
                  main /p/tests/overflow.cpp:11:12
                  __libc_start_call_main ../sysdeps/nptl/libc_start_call_main.h:58:16
            "#]],
        );
    }

    #[test]
    fn undefined_leak_and_thread_sanitizers() {
        check(
            "/p/ub.cpp:7:14: runtime error: signed integer overflow: 2147483647 + 1 cannot be represented in type 'int'
SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior /p/ub.cpp:7:14 in
==77==ERROR: LeakSanitizer: detected memory leaks

Direct leak of 4 byte(s) in 1 object(s) allocated from:
    #0 0x4c in operator new(unsigned long) ../../../../src/libsanitizer/asan/asan_new_delete.cpp:95
    #1 0x4d in main /p/leak.cpp:3:14
WARNING: ThreadSanitizer: data race (pid=9)
  Write of size 4 at 0x7b04 by thread T1:
    #0 worker() /p/race.cpp:5:11 (race+0x12a5)
",
            expect![[r#"
                UndefinedBehaviorSanitizer: signed integer overflow: 2147483647 + 1 cannot be represented in type 'int' | -
                  - /p/ub.cpp:7:14
                LeakSanitizer: detected memory leaks | Direct leak of 4 byte(s) in 1 object(s) allocated from
                  operator new(unsigned long) ../../../../src/libsanitizer/asan/asan_new_delete.cpp:95:-
                  main /p/leak.cpp:3:14
                ThreadSanitizer: data race | Write of size 4 by thread T1
                  worker() /p/race.cpp:5:11
            "#]],
        );
    }

    #[test]
    fn explaining_lines_keep_failures_head_and_tail() {
        let mut text = String::from("start\n");
        for n in 0..100 {
            let _ = writeln!(text, "step {n} ok");
        }
        text.push_str("check failed: expected 3, got 4\n");
        for n in 0..100 {
            let _ = writeln!(text, "after {n}");
        }
        expect![[r#"
            start
            step 0 ok
            … 99 lines left out
            check failed: expected 3, got 4
            … 98 lines left out
            after 98
            after 99"#]]
        .assert_eq(&explaining_lines(&text, 2, 2, 400));
        assert_eq!(explaining_lines("short", 2, 2, 400), "short");
    }
}

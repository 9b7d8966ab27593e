//! Test frameworks' output: the failing inner cases of a GoogleTest, Catch2 or doctest program (one
//! CTest test per program or per case) with their file, line and whole assertion message, and the
//! output condensed so that passing cases' lines go first when the budget is short.
//!
//! The output is cut into segments: a case's block (GoogleTest `[ RUN ]` … `[ OK ]`/`[ FAILED ]`;
//! Catch2's `-----` header … next separator; doctest's `=====` … next separator), passing or failing,
//! and the lines between them. A case that started and never finished (the program died inside it)
//! is a failure without a line.
//!
//! Architecture invariant: pure functions of the output text; paths stay as the program printed
//! them (the caller qualifies them). Output that is none of the three frameworks gives `None`.

use crate::text::plural;
use crate::workspace::path::QualifiedPath;

/// The frameworks recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framework {
    GoogleTest,
    Catch2,
    Doctest,
}

/// One failed assertion (or a case that never finished) of a failing inner case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// `Suite.Name` for GoogleTest; the test case's name for Catch2 and doctest, with its sections
    /// or subcases after ` / `.
    pub case: String,
    /// The file as the program printed it (`None`: `unknown file`, or a case that never finished).
    pub file: Option<String>,
    /// `file` qualified (`project/…`), filled by the caller, which knows the roots.
    pub path: Option<QualifiedPath>,
    pub line: Option<u32>,
    /// The whole assertion message (expected and actual values included), without the location.
    pub message: String,
}

/// Said of a case whose program stopped inside it.
pub const UNFINISHED: &str = "the case started and never finished (the program stopped inside it)";

/// Whether a segment is a passing case, a failing case or lines outside any case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Passing,
    Failing,
    Other,
}

struct Segment<'a> {
    kind: Kind,
    lines: Vec<&'a str>,
}

/// Which framework printed `output`, from its banner or its case markers.
pub fn detect(output: &str) -> Option<Framework> {
    output.lines().take(400).find_map(|line| {
        let line = line.trim_end();
        if line.starts_with("[==========] Running ") || line.starts_with("[ RUN      ] ") {
            Some(Framework::GoogleTest)
        } else if line.contains(" is a Catch") && line.ends_with("host application.") {
            Some(Framework::Catch2)
        } else if line.starts_with("[doctest] ") {
            Some(Framework::Doctest)
        } else {
            None
        }
    })
}

/// The failures of a framework's output, each once, in the order printed; `None` when no framework
/// printed it.
pub fn failures(output: &str) -> Option<Vec<Failure>> {
    let framework = detect(output)?;
    let mut res: Vec<Failure> = Vec::new();
    for failure in match framework {
        Framework::GoogleTest => googletest(output),
        Framework::Catch2 => blocks(output, Framework::Catch2).1,
        Framework::Doctest => blocks(output, Framework::Doctest).1,
    } {
        if !res.contains(&failure) {
            res.push(failure);
        }
    }
    Some(res)
}

/// `output` within `budget` bytes: whole when it fits; else passing cases' blocks are replaced by
/// a count first, then the lines outside cases are shortened, failing blocks kept whole as long as
/// they fit. `None` when no framework printed it.
pub fn condense(output: &str, budget: usize, shorten: impl Fn(&str, usize) -> String) -> Option<String> {
    let framework = detect(output)?;
    if output.len() <= budget {
        return Some(output.to_owned());
    }
    let segments = match framework {
        Framework::GoogleTest => googletest_segments(output),
        other => blocks(output, other).0,
    };
    let mut parts: Vec<String> = Vec::new();
    let (mut passing_cases, mut passing_lines) = (0usize, 0usize);
    let flush = |parts: &mut Vec<String>, cases: &mut usize, lines: &mut usize| {
        if *cases > 0 {
            parts.push(format!("… {lines} lines of {} left out", plural(*cases, "passing case", "passing cases")));
        }
        (*cases, *lines) = (0, 0);
    };
    for segment in &segments {
        if segment.kind == Kind::Passing {
            passing_cases += 1;
            passing_lines += segment.lines.len();
            continue;
        }
        flush(&mut parts, &mut passing_cases, &mut passing_lines);
        parts.push(segment.lines.join("\n"));
    }
    flush(&mut parts, &mut passing_cases, &mut passing_lines);
    let joined = parts.join("\n");
    if joined.len() <= budget {
        return Some(joined);
    }
    // Failing blocks whole, the rest shortened into what remains.
    let failing: usize =
        segments.iter().filter(|s| s.kind == Kind::Failing).map(|s| s.lines.join("\n").len() + 1).sum();
    if failing >= budget {
        return Some(shorten(&joined, budget));
    }
    let other_budget = (budget - failing) / segments.iter().filter(|s| s.kind == Kind::Other).count().max(1);
    let mut res: Vec<String> = Vec::new();
    for segment in segments.iter().filter(|s| s.kind != Kind::Passing) {
        let text = segment.lines.join("\n");
        res.push(if segment.kind == Kind::Other && text.len() > other_budget {
            shorten(&text, other_budget)
        } else {
            text
        });
    }
    Some(res.join("\n"))
}

/// `file:line: …` or MSVC's `file(line): …`: the file, the line and what follows the colon.
fn located(line: &str) -> Option<(&str, u32, &str)> {
    let line = line.trim_end();
    // `C:\x.cpp:7: Failure` has a drive colon: search for `:<digits>:` from the left after it.
    let mut from = 0;
    while let Some(found) = line[from..].find(':') {
        let at = from + found;
        let rest = &line[at + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with(':') && at > 0 {
            let number = rest[..digits].parse().ok()?;
            return Some((&line[..at], number, rest[digits + 1..].trim_start()));
        }
        from = at + 1;
    }
    let open = line.find('(')?;
    let close = open + line[open..].find(')')?;
    let number = line[open + 1..close].parse().ok()?;
    let rest = line[close + 1..].strip_prefix(':')?;
    (open > 0).then(|| (&line[..open], number, rest.trim_start()))
}

// ---- GoogleTest ----

const RUN: &str = "[ RUN      ] ";
const ENDS: [(&str, Kind); 3] =
    [("[       OK ] ", Kind::Passing), ("[  FAILED  ] ", Kind::Failing), ("[  SKIPPED ] ", Kind::Passing)];

/// The end marker of `case` on `line`, with the kind of block it closes.
fn gtest_end(line: &str, case: &str) -> Option<Kind> {
    ENDS.iter().find_map(|(prefix, kind)| {
        let rest = line.strip_prefix(prefix)?;
        let after = rest.strip_prefix(case)?;
        (after.is_empty() || after.starts_with(" (") || after.starts_with(", ")).then_some(*kind)
    })
}

fn googletest_segments(output: &str) -> Vec<Segment<'_>> {
    let mut res: Vec<Segment<'_>> = Vec::new();
    let mut current: Option<(&str, Vec<&str>)> = None;
    let mut other: Vec<&str> = Vec::new();
    for line in output.lines() {
        let trimmed = line.trim_end();
        if let Some(case) = trimmed.strip_prefix(RUN) {
            if let Some((_, lines)) = current.take() {
                res.push(Segment { kind: Kind::Failing, lines });
            }
            if !other.is_empty() {
                res.push(Segment { kind: Kind::Other, lines: std::mem::take(&mut other) });
            }
            current = Some((case, vec![line]));
            continue;
        }
        match &mut current {
            Some((case, lines)) => {
                lines.push(line);
                if let Some(kind) = gtest_end(trimmed, case) {
                    let (_, lines) = current.take().unwrap_or_default();
                    res.push(Segment { kind, lines });
                }
            }
            None => other.push(line),
        }
    }
    if let Some((_, lines)) = current {
        res.push(Segment { kind: Kind::Failing, lines });
    }
    if !other.is_empty() {
        res.push(Segment { kind: Kind::Other, lines: other });
    }
    res
}

/// An assertion's first line: `file:line: Failure`, `unknown file: Failure` or MSVC's
/// `file(line): error: …`; gives the file, the line and the message's first line (if on it).
fn gtest_assertion(line: &str) -> Option<(Option<&str>, Option<u32>, &str)> {
    let trimmed = line.trim_end();
    if trimmed == "unknown file: Failure" {
        return Some((None, None, ""));
    }
    let (file, number, rest) = located(trimmed)?;
    match rest {
        "Failure" => Some((Some(file), Some(number), "")),
        _ => rest.strip_prefix("error: ").map(|message| (Some(file), Some(number), message)),
    }
}

fn googletest(output: &str) -> Vec<Failure> {
    let mut res = Vec::new();
    for segment in googletest_segments(output).into_iter().filter(|s| s.kind == Kind::Failing) {
        let case = segment.lines[0].trim_end().strip_prefix(RUN).unwrap_or_default().to_owned();
        let finished = segment.lines.last().is_some_and(|line| gtest_end(line.trim_end(), &case).is_some());
        let body = if finished { &segment.lines[1..segment.lines.len() - 1] } else { &segment.lines[1..] };
        let mut open: Option<Failure> = None;
        for line in body {
            if let Some((file, number, first)) = gtest_assertion(line) {
                res.extend(open.take().map(finish));
                open = Some(Failure {
                    case: case.clone(),
                    file: file.map(str::to_owned),
                    path: None,
                    line: number,
                    message: first.to_owned(),
                });
            } else if let Some(failure) = &mut open {
                push_line(&mut failure.message, line);
            }
        }
        res.extend(open.take().map(finish));
        if !finished {
            res.push(Failure { case, file: None, path: None, line: None, message: UNFINISHED.to_owned() });
        }
    }
    res
}

fn push_line(message: &mut String, line: &str) {
    if !message.is_empty() {
        message.push('\n');
    }
    message.push_str(line.trim_end());
}

fn finish(mut failure: Failure) -> Failure {
    failure.message = failure.message.trim_matches('\n').trim_end().to_owned();
    failure
}

// ---- Catch2 and doctest ----

fn is_rule(line: &str, c: char) -> bool {
    let trimmed = line.trim_end();
    trimmed.len() >= 40 && trimmed.chars().all(|x| x == c)
}

/// A failed assertion's first line in Catch2 (`file:line: FAILED:`) or doctest
/// (`file:line: ERROR: …`, `FATAL ERROR: …`).
fn block_assertion(line: &str, framework: Framework) -> Option<(&str, u32, &str)> {
    let (file, number, rest) = located(line)?;
    let message = match framework {
        Framework::Catch2 => rest.strip_prefix("FAILED:").map(str::trim_start),
        _ => rest.strip_prefix("ERROR: ").or_else(|| rest.strip_prefix("FATAL ERROR: ")),
    }?;
    Some((file, number, message))
}

/// The segments of a Catch2 or doctest output and the failures of its failing blocks.
///
/// Catch2: `-----` / name / sections / `-----` / location / `.....` / assertions, up to the next
/// `-----` or the closing `=====`. doctest: `=====` / location / `TEST CASE:  name` / subcases /
/// assertions, up to the next `=====` or the `[doctest]` summary.
fn blocks(output: &str, framework: Framework) -> (Vec<Segment<'_>>, Vec<Failure>) {
    let lines: Vec<&str> = output.lines().collect();
    let separator = |line: &str| match framework {
        Framework::Catch2 => is_rule(line, '-') || is_rule(line, '='),
        _ => is_rule(line, '=') || line.starts_with("[doctest] "),
    };
    let starts_block = |idx: usize| match framework {
        Framework::Catch2 => is_rule(lines[idx], '-') && lines.get(idx + 1).is_some_and(|l| !is_rule(l, '-')),
        _ => is_rule(lines[idx], '=') && lines.get(idx + 2).is_some_and(|l| l.starts_with("TEST CASE:")),
    };
    let (mut segments, mut failures) = (Vec::new(), Vec::new());
    let mut other: Vec<&str> = Vec::new();
    let mut idx = 0;
    while idx < lines.len() {
        if !starts_block(idx) {
            other.push(lines[idx]);
            idx += 1;
            continue;
        }
        if !other.is_empty() {
            segments.push(Segment { kind: Kind::Other, lines: std::mem::take(&mut other) });
        }
        let start = idx;
        // The header: the case's name and its sections up to the location line.
        let (name_at, mut end) = match framework {
            Framework::Catch2 => (idx + 1, idx + 1),
            _ => (idx + 2, idx + 2),
        };
        let name = match framework {
            Framework::Catch2 => lines[name_at].trim().to_owned(),
            _ => lines[name_at].trim_start_matches("TEST CASE:").trim().to_owned(),
        };
        let mut sections = Vec::new();
        end += 1;
        while end < lines.len() && lines[end].starts_with("  ") && !lines[end].trim().is_empty() {
            sections.push(lines[end].trim());
            end += 1;
        }
        let case = std::iter::once(name.as_str()).chain(sections.iter().copied()).collect::<Vec<_>>().join(" / ");
        // Catch2 closes the header with a rule: skip it and look for the next block's start.
        if framework == Framework::Catch2 && end < lines.len() && is_rule(lines[end], '-') {
            end += 1;
        }
        while end < lines.len() && !separator(lines[end]) {
            end += 1;
        }
        let body = &lines[start..end];
        let mut open: Option<Failure> = None;
        let mut failed = false;
        for line in body {
            if let Some((file, number, first)) = block_assertion(line, framework) {
                failed = true;
                failures.extend(open.take().map(finish));
                open = Some(Failure {
                    case: case.clone(),
                    file: Some(file.to_owned()),
                    path: None,
                    line: Some(number),
                    message: first.to_owned(),
                });
            } else if let Some(failure) = &mut open {
                if located(line).is_some() {
                    failures.extend(open.take().map(finish));
                } else {
                    push_line(&mut failure.message, line);
                }
            }
        }
        failures.extend(open.take().map(finish));
        segments.push(Segment { kind: if failed { Kind::Failing } else { Kind::Passing }, lines: body.to_vec() });
        idx = end;
    }
    if !other.is_empty() {
        segments.push(Segment { kind: Kind::Other, lines: other });
    }
    (segments, failures)
}

#[cfg(test)]
mod tests;

//! The `cmake_test` lines of `select` and `repeat_until_fail`: `Selected 3 of 41 tests: target
//! core changed (rebuilt 14:03:05) -> core_test, app_test; 38 not affected.` and a flaky test's
//! `flaky: failed on run 7 of 20`.
//!
//! Architecture invariant: pure functions of `cmake` values.

use crate::cmake::repeat::Flaky;
use crate::cmake::{Reason, Select, TestSelection};

/// What data files a selection cannot see.
pub const UNTRACKED: &str = "Data files a test reads are not tracked unless its command line names them.";

/// `14:03:05` (UTC) of nanoseconds since the epoch.
fn clock(ns: u128) -> String {
    let ms = i64::try_from(ns / 1_000_000).unwrap_or(i64::MAX);
    super::journal::clock(ms)
}

/// Why a test was selected, as the text groups them.
pub fn reason_text(reason: &Reason) -> String {
    match reason {
        Reason::Changed { target: Some(target), modified_ns: Some(ns), .. } => {
            format!("target {target} changed (rebuilt {})", clock(*ns))
        }
        Reason::Changed { target: Some(target), modified_ns: None, .. } => format!("target {target} changed"),
        Reason::Changed { target: None, path, modified_ns: Some(ns) } => format!("{path} changed ({})", clock(*ns)),
        Reason::Changed { target: None, path, modified_ns: None } => format!("{path} is no longer an input"),
        Reason::NeverPassed => "never passed".to_owned(),
        Reason::LastFailed => "failed last time".to_owned(),
        Reason::NotAnArtifact => "runs no target's artifact, so its inputs are unknown".to_owned(),
        Reason::NoEarlierRun => "no earlier test run on this profile".to_owned(),
    }
}

/// The selection sentence.
pub fn selection_text(selection: &TestSelection) -> String {
    let total = selection.selected.len() + selection.not_selected;
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for (name, reason) in &selection.selected {
        let text = reason_text(reason);
        match groups.iter_mut().find(|(t, _)| *t == text) {
            Some((_, names)) => names.push(name),
            None => groups.push((text, vec![name])),
        }
    }
    let left = match selection.mode {
        Select::Failed => "passed last time",
        _ => "not affected",
    };
    let mut res = format!("Selected {} of {total} tests", selection.selected.len());
    if groups.is_empty() {
        res.push_str(match selection.mode {
            Select::Failed => ": none failed last time",
            _ => ": none is affected (nothing changed since each last passed)",
        });
    } else {
        let parts: Vec<String> = groups.iter().map(|(text, names)| format!("{text} -> {}", names.join(", "))).collect();
        res.push_str(&format!(": {}", parts.join("; ")));
    }
    if selection.not_selected > 0 {
        res.push_str(&format!("; {} {left}", selection.not_selected));
    }
    res.push('.');
    if selection.mode == Select::Affected {
        res.push(' ');
        res.push_str(UNTRACKED);
    }
    res
}

/// `flaky: failed on run 7 of 20`.
pub fn flaky_text(flaky: &Flaky) -> String {
    format!("flaky: failed on run {} of {}", flaky.failed_run, flaky.limit)
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn sentences() {
        let selection = TestSelection {
            mode: Select::Affected,
            selected: vec![
                (
                    "core_test".into(),
                    Reason::Changed {
                        target: Some("core".into()),
                        path: "project/build/libcore.a".into(),
                        modified_ns: Some(1_700_000_000_000_000_000),
                    },
                ),
                (
                    "app_test".into(),
                    Reason::Changed {
                        target: Some("core".into()),
                        path: "project/build/libcore.a".into(),
                        modified_ns: Some(1_700_000_000_000_000_000),
                    },
                ),
                (
                    "data_test".into(),
                    Reason::Changed {
                        target: None,
                        path: "project/data/in.txt".into(),
                        modified_ns: Some(1_700_000_100_000_000_000),
                    },
                ),
                ("new_test".into(), Reason::NeverPassed),
                ("script".into(), Reason::NotAnArtifact),
            ],
            not_selected: 36,
        };
        expect!["Selected 5 of 41 tests: target core changed (rebuilt 22:13:20) -> core_test, app_test; project/data/in.txt changed (22:15:00) -> data_test; never passed -> new_test; runs no target's artifact, so its inputs are unknown -> script; 36 not affected. Data files a test reads are not tracked unless its command line names them."]
            .assert_eq(&selection_text(&selection));
        let none = TestSelection { mode: Select::Affected, selected: Vec::new(), not_selected: 41 };
        expect!["Selected 0 of 41 tests: none is affected (nothing changed since each last passed); 41 not affected. Data files a test reads are not tracked unless its command line names them."]
            .assert_eq(&selection_text(&none));
        let failed =
            TestSelection { mode: Select::Failed, selected: vec![("t".into(), Reason::LastFailed)], not_selected: 2 };
        expect!["Selected 1 of 3 tests: failed last time -> t; 2 passed last time."]
            .assert_eq(&selection_text(&failed));
        expect!["flaky: failed on run 7 of 20"].assert_eq(&flaky_text(&Flaky { failed_run: 7, limit: 20 }));
    }
}

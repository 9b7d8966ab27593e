//! `cmake_test` `repeat_until_fail`: CTest's `--repeat until-fail:N` prints one verdict line per
//! run (`    Test #1: flaky ....   Passed    0.01 sec`, the last with its `n/m` counts); counting them
//! per test gives the run a test failed on, so a test that passed earlier runs is reported as
//! flaky (`flaky: failed on run 7 of 20`).
//!
//! Architecture invariant: pure functions of single output lines.

use std::collections::HashMap;

/// The least and greatest `repeat_until_fail`.
pub const REPEAT_RANGE: std::ops::RangeInclusive<u32> = 2..=1000;

/// A test that failed after passing earlier runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flaky {
    /// The run it failed on (2 or more).
    pub failed_run: u32,
    /// The most runs asked for.
    pub limit: u32,
}

/// A verdict line's test name and whether it passed (`None` for skipped and not-run verdicts).
pub fn run_verdict(line: &str) -> Option<(&str, Option<bool>)> {
    let trimmed = line.trim();
    let (counts, rest) = trimmed.split_once("Test #")?;
    let counts = counts.trim();
    let counted = counts
        .split_once('/')
        .is_some_and(|(a, b)| !a.is_empty() && !b.is_empty() && a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit()));
    if !counts.is_empty() && !counted {
        return None;
    }
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let rest = rest[digits..].strip_prefix(": ").filter(|_| digits > 0)?;
    let (name, verdict) = rest.split_once(" .").or_else(|| rest.split_once(' '))?;
    let verdict = verdict.trim_start_matches('.').trim();
    let passed = if verdict.starts_with("Passed") {
        Some(true)
    } else if verdict.contains("Skipped") || verdict.contains("Not Run") || verdict.contains("Disabled") {
        None
    } else {
        Some(false)
    };
    Some((name, passed))
}

/// Runs counted per test from CTest's output lines.
#[derive(Debug, Default, Clone)]
pub struct Runs {
    /// Per test: runs seen and the first failed run.
    seen: HashMap<String, (u32, Option<u32>)>,
}

impl Runs {
    pub fn line(&mut self, line: &str) {
        if let Some((name, Some(passed))) = run_verdict(line) {
            let entry = self.seen.entry(name.to_owned()).or_default();
            entry.0 += 1;
            if !passed && entry.1.is_none() {
                entry.1 = Some(entry.0);
            }
        }
    }

    /// `name` failed after passing at least one earlier run of at most `limit`.
    pub fn flaky(&self, name: &str, limit: u32) -> Option<Flaky> {
        let (_, failed) = self.seen.get(name)?;
        failed.filter(|run| *run > 1).map(|failed_run| Flaky { failed_run, limit })
    }

    /// How many runs of `name` were seen.
    pub fn runs(&self, name: &str) -> u32 {
        self.seen.get(name).map_or(0, |(runs, _)| *runs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded from CTest 3.25 with `--repeat until-fail:5`: `flaky` fails on its third run.
    const OUTPUT: &str = "Test project /tmp/fl/b
    Start 1: flaky
    Test #1: flaky ............................   Passed    0.01 sec
    Start 1: flaky
    Test #1: flaky ............................   Passed    0.01 sec
    Start 1: flaky
    Test #1: flaky ............................***Failed    0.01 sec
    Start 2: steady
    Test #2: steady ...........................   Passed    0.01 sec
    Start 2: steady
2/2 Test #2: steady ...........................   Passed    0.01 sec
    Start 3: first
3/3 Test #3: first ............................***Failed    0.01 sec
4/4 Test #4: skipper ..........................***Skipped   0.00 sec

The following tests FAILED:
	  1 - flaky (Failed)";

    #[test]
    fn counts_runs_and_names_the_failed_one() {
        let mut runs = Runs::default();
        OUTPUT.lines().for_each(|line| runs.line(line));
        assert_eq!(runs.flaky("flaky", 5), Some(Flaky { failed_run: 3, limit: 5 }));
        assert_eq!(runs.runs("flaky"), 3);
        assert_eq!(runs.flaky("steady", 5), None);
        assert_eq!(runs.runs("steady"), 2);
        // Failing on the first run is a plain failure, not flakiness.
        assert_eq!(runs.flaky("first", 5), None);
        assert_eq!(runs.runs("skipper"), 0);
        assert_eq!(run_verdict("The following tests FAILED:"), None);
        assert_eq!(run_verdict("x Test #1: a .. Passed"), None);
    }
}

//! CTest: the JUnit report it writes with `--output-junit`, and which of its output lines become
//! progress messages.
//!
//! Status mapping (CTest's `status` attribute, then the child elements for other producers):
//! `run` → passed; `fail` or a `<failure>`/`<error>` element → failed; `disabled` → skipped;
//! `notrun` whose reason is a `SKIP_…` property (`SKIP_RETURN_CODE=77`,
//! `SKIP_REGULAR_EXPRESSION_MATCHED`) → skipped; any other `notrun` (`Unable to find executable`,
//! `Fixture dependency failed`) → not_run, because CTest counts those as failures.
//!
//! A failed case's output printed by a test framework is condensed by `frameworks` (passing cases'
//! lines go first) and its failing inner cases become `failures`.
//!
//! Architecture invariant: pure functions of the report text and of single lines.

use super::frameworks::Failure;

/// Most bytes of a case's captured output kept at the end of a failure message.
pub const OUTPUT_TAIL_BYTES: usize = 8 * 1024;

/// The outcome of one test case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestStatus {
    Passed,
    Failed,
    Skipped,
    NotRun,
}

impl TestStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TestStatus::Passed => "passed",
            TestStatus::Failed => "failed",
            TestStatus::Skipped => "skipped",
            TestStatus::NotRun => "not_run",
        }
    }
}

/// One test case of a report.
#[derive(Debug, Clone, PartialEq)]
pub struct TestCase {
    pub name: String,
    pub status: TestStatus,
    pub duration_seconds: Option<f64>,
    /// For failures: CTest's failure text (when any) and the tail of the captured output; for
    /// skipped and not-run cases: the reason.
    pub message: Option<String>,
    /// The stack of a crashed or hung case (added after the report is read, `crashes.rs`).
    pub crash: Option<crate::debug::postmortem::Crash>,
    /// The failing inner cases of a failed GoogleTest, Catch2 or doctest program.
    pub failures: Vec<Failure>,
    /// With `repeat_until_fail`: failed after passing earlier runs.
    pub flaky: Option<super::repeat::Flaky>,
}

/// The message of a failed case that printed nothing and gave no reason.
pub const NO_OUTPUT: &str = "Failed without output";

/// Parses a JUnit report into its cases, in document order.
pub fn parse_junit(xml: &str) -> Result<Vec<TestCase>, String> {
    let document =
        roxmltree::Document::parse(xml).map_err(|err| format!("the JUnit report is not valid XML: {err}"))?;
    let mut res = Vec::new();
    for case in document.descendants().filter(|node| node.has_tag_name("testcase")) {
        let child = |tag: &str| case.children().find(|node| node.has_tag_name(tag));
        let problem = child("failure").or_else(|| child("error"));
        let skipped = child("skipped");
        let reason = |node: roxmltree::Node<'_, '_>| {
            node.attribute("message")
                .filter(|m| !m.trim().is_empty())
                .or_else(|| node.text())
                .map(|m| m.trim().to_owned())
        };
        let output = child("system-out").and_then(|node| node.text()).map(str::trim_end).filter(|t| !t.is_empty());
        let skip_reason = skipped.and_then(reason);
        let status = match case.attribute("status") {
            Some("run") => TestStatus::Passed,
            Some("fail") => TestStatus::Failed,
            Some("disabled") => TestStatus::Skipped,
            Some("notrun") if skip_reason.as_deref().is_some_and(|r| r.starts_with("SKIP_")) => TestStatus::Skipped,
            Some("notrun") => TestStatus::NotRun,
            _ if problem.is_some() => TestStatus::Failed,
            _ if skipped.is_some() => TestStatus::Skipped,
            _ => TestStatus::Passed,
        };
        let message = match status {
            TestStatus::Passed => None,
            TestStatus::Skipped => skip_reason.or_else(|| output.map(str::to_owned)),
            TestStatus::Failed | TestStatus::NotRun => {
                let parts: Vec<String> = [problem.and_then(reason).or(skip_reason), output.map(explain)]
                    .into_iter()
                    .flatten()
                    .filter(|part| !part.is_empty())
                    .collect();
                Some(if parts.is_empty() { NO_OUTPUT.to_owned() } else { parts.join("\n") })
            }
        };
        let duration_seconds =
            case.attribute("time").and_then(|t| t.trim().parse::<f64>().ok()).filter(|t| t.is_finite());
        let failures = match (status, output) {
            (TestStatus::Failed, Some(output)) => super::frameworks::failures(output).unwrap_or_default(),
            _ => Vec::new(),
        };
        res.push(TestCase {
            name: case.attribute("name").unwrap_or_default().to_owned(),
            status,
            duration_seconds,
            message,
            crash: None,
            failures,
            flaky: None,
        });
    }
    Ok(res)
}

/// The lines of a failed case's output that explain it within [`OUTPUT_TAIL_BYTES`]: a test
/// framework's failing cases whole with passing cases left out first, else failure, error,
/// assertion and sanitizer lines, plus its head and tail.
fn explain(text: &str) -> String {
    let lines = |text: &str, budget: usize| super::sanitizer::explaining_lines(text, 10, 20, budget);
    super::frameworks::condense(text, OUTPUT_TAIL_BYTES, lines).unwrap_or_else(|| lines(text, OUTPUT_TAIL_BYTES))
}

/// A CTest output line worth a progress message (`Start N: …`, `n/m Test #k: …`, the
/// `… tests passed, …` summary and `Total Test time …`), trimmed.
pub fn progress_message(line: &str) -> Option<&str> {
    let trimmed = line.trim();
    let starts_test = trimmed.strip_prefix("Start ").is_some_and(|rest| {
        let digits = rest.trim_start();
        let n_digits = digits.bytes().take_while(u8::is_ascii_digit).count();
        n_digits > 0 && digits[n_digits..].starts_with(':')
    });
    let finished_test = trimmed.split_once(" Test ").is_some_and(|(counts, _)| {
        counts.split_once('/').is_some_and(|(a, b)| {
            !a.is_empty() && !b.is_empty() && a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit())
        })
    });
    let summary = trimmed.contains("tests passed") || trimmed.starts_with("Total Test time");
    (starts_test || finished_test || summary).then_some(trimmed)
}

/// The case name and CTest's verdict from a finished-test line (`1/2 Test #1: crash_case
/// ....***Exception: SegFault  0.02 sec` gives `("crash_case", "***Exception: SegFault")`). The
/// JUnit report leaves the verdict out, so a death by signal is only seen here.
pub fn case_verdict(line: &str) -> Option<(&str, &str)> {
    let trimmed = line.trim();
    let (counts, rest) = trimmed.split_once(" Test #")?;
    let (a, b) = counts.split_once('/')?;
    if a.is_empty() || b.is_empty() || !a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    let (_, rest) = rest.split_once(": ")?;
    let (name, rest) = rest.split_once(" .").or_else(|| rest.split_once(' '))?;
    let verdict = rest.trim_start_matches('.').trim();
    let verdict = verdict
        .strip_suffix(" sec")
        .map_or(verdict, |v| v.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.').trim_end());
    Some((name, verdict))
}

/// A death by signal in CTest's words (`***Exception: SegFault`, `Subprocess aborted***Exception:`),
/// as ours.
pub fn signal_of(verdict: &str) -> Option<&'static str> {
    if !verdict.contains("Exception:") {
        return None;
    }
    [
        ("SegFault", "killed by signal 11 (SIGSEGV)"),
        ("Subprocess aborted", "killed by signal 6 (SIGABRT)"),
        ("Child aborted", "killed by signal 6 (SIGABRT)"),
        ("Bus error", "killed by signal 7 (SIGBUS)"),
        ("Illegal", "killed by signal 4 (SIGILL)"),
        ("Numerical", "killed by signal 8 (SIGFPE)"),
        ("Interrupt", "killed by signal 2 (SIGINT)"),
        ("Child killed", "killed by signal 9 (SIGKILL)"),
    ]
    .into_iter()
    .find(|(word, _)| verdict.contains(word))
    .map(|(_, text)| text)
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;

    #[track_caller]
    fn check(xml: &str, expect: Expect) {
        let cases = parse_junit(xml).unwrap();
        let shown: Vec<String> = cases
            .iter()
            .map(|c| format!("{} {} {:?} {:?}", c.status.as_str(), c.name, c.duration_seconds, c.message))
            .collect();
        expect.assert_eq(&shown.join("\n"));
    }

    /// Recorded from CTest 3.25 on the acceptance fixture with `FIXTURE_NEGATIVE_TESTS=ON`.
    const FIXTURE_REPORT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)"
	tests="5"
	failures="2"
	disabled="0"
	skipped="1"
	hostname=""
	time="1"
	timestamp="2026-11-30T10:33:18"
	>
	<testcase name="fixture_pass" classname="fixture_pass" time="0.0056789" status="run">
		<system-out>fixture::add passed
</system-out>
	</testcase>
	<testcase name="fixture_expected_failure" classname="fixture_expected_failure" time="0.00306348" status="run">
		<system-out>failing on purpose (--expected-failure)
</system-out>
	</testcase>
	<testcase name="fixture_skipped" classname="fixture_skipped" time="0.00387916" status="notrun">
		<skipped message="SKIP_RETURN_CODE=77"/>
		<system-out>skipping on purpose
</system-out>
	</testcase>
	<testcase name="fixture_intentional_failure" classname="fixture_intentional_failure" time="0.00173337" status="fail">
		<failure message=""/>
		<system-out>failing on purpose (--fail)
</system-out>
	</testcase>
	<testcase name="fixture_timeout" classname="fixture_timeout" time="1.0064" status="fail">
		<failure message=""/>
		<system-out>sleeping for 5 seconds
</system-out>
	</testcase>
</testsuite>
"#;

    #[test]
    fn fixture_report() {
        check(
            FIXTURE_REPORT,
            expect![[r#"
                passed fixture_pass Some(0.0056789) None
                passed fixture_expected_failure Some(0.00306348) None
                skipped fixture_skipped Some(0.00387916) Some("SKIP_RETURN_CODE=77")
                failed fixture_intentional_failure Some(0.00173337) Some("failing on purpose (--fail)")
                failed fixture_timeout Some(1.0064) Some("sleeping for 5 seconds")"#]],
        );
    }

    /// Recorded from CTest 3.25: a disabled test, a missing executable, a failed fixture setup and
    /// the test that depended on it, and a name with regex metacharacters.
    #[test]
    fn disabled_and_not_run_cases() {
        check(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)" tests="5" failures="1" disabled="1" skipped="2" hostname="" time="0" timestamp="2026-11-30T10:33:23">
	<testcase name="disabled_one" classname="disabled_one" time="0" status="disabled">
		<system-out>Disabled</system-out>
	</testcase>
	<testcase name="missing_exe" classname="missing_exe" time="0" status="notrun">
		<skipped message="Unable to find executable"/>
		<system-out>Unable to find executable: /nonexistent/x</system-out>
	</testcase>
	<testcase name="needs_fixture" classname="needs_fixture" time="0" status="notrun">
		<skipped message="Fixture dependency failed"/>
		<system-out>Failed test dependencies: setup</system-out>
	</testcase>
	<testcase name="setup" classname="setup" time="0.00175" status="fail">
		<failure message=""/>
		<system-out></system-out>
	</testcase>
	<testcase name="we ird[name] &amp; &lt;more&gt;" classname="x" time="0.00146185" status="run">
		<system-out></system-out>
	</testcase>
</testsuite>"#,
            expect![[r#"
                skipped disabled_one Some(0.0) Some("Disabled")
                not_run missing_exe Some(0.0) Some("Unable to find executable\nUnable to find executable: /nonexistent/x")
                not_run needs_fixture Some(0.0) Some("Fixture dependency failed\nFailed test dependencies: setup")
                failed setup Some(0.00175) Some("Failed without output")
                passed we ird[name] & <more> Some(0.00146185) None"#]],
        );
    }

    #[test]
    fn generic_junit_without_status_attributes() {
        check(
            r#"<testsuites><testsuite name="s">
  <testcase name="a" time="0.5"/>
  <testcase name="b"><failure message="expected 1 but got 2">trace</failure><system-out>log line</system-out></testcase>
  <testcase name="c"><error>boom</error></testcase>
  <testcase name="d" time="x"><skipped/></testcase>
</testsuite></testsuites>"#,
            expect![[r#"
                passed a Some(0.5) None
                failed b None Some("expected 1 but got 2\nlog line")
                failed c None Some("boom")
                skipped d None None"#]],
        );
    }

    #[test]
    fn long_output_keeps_the_tail_of_a_long_line() {
        let output = format!("{}é{}", "x".repeat(OUTPUT_TAIL_BYTES), "end");
        let xml = format!(
            r#"<testsuite><testcase name="t" status="fail"><system-out>{output}</system-out></testcase></testsuite>"#
        );
        let message = parse_junit(&xml).unwrap()[0].message.clone().unwrap();
        assert!(message.ends_with("éend"), "{}", &message[..20]);
        assert!(message.len() <= OUTPUT_TAIL_BYTES);
    }

    #[test]
    fn malformed_report() {
        expect!["the JUnit report is not valid XML: the root node was opened but never closed"]
            .assert_eq(&parse_junit("<testsuite><testcase").unwrap_err());
    }

    #[test]
    fn progress_lines() {
        let output = "Internal ctest changing into directory: /tmp/fxb
Test project /tmp/fxb
    Start 1: fixture_pass
1/5 Test #1: fixture_pass .....................   Passed    0.01 sec
    Start 5: fixture_timeout
5/5 Test #5: fixture_timeout ..................***Timeout   1.01 sec
sleeping for 5 seconds

60% tests passed, 2 tests failed out of 5

Total Test time (real) =   1.03 sec
The following tests FAILED:
	  4 - fixture_intentional_failure (Failed)
Start here: not a test";
        let shown: Vec<&str> = output.lines().filter_map(progress_message).collect();
        expect![[r#"
            Start 1: fixture_pass
            1/5 Test #1: fixture_pass .....................   Passed    0.01 sec
            Start 5: fixture_timeout
            5/5 Test #5: fixture_timeout ..................***Timeout   1.01 sec
            60% tests passed, 2 tests failed out of 5
            Total Test time (real) =   1.03 sec"#]]
        .assert_eq(&shown.join("\n"));
    }

    #[test]
    fn verdicts_name_deaths_by_signal() {
        let output = "1/4 Test #1: crash_case .......................***Exception: SegFault  0.02 sec
2/4 Test #2: abrt_case ........................Subprocess aborted***Exception:   0.02 sec
3/4 Test #3: fixture_pass .....................   Passed    0.01 sec
4/4 Test #4: a_test_with_a_very_long_name_that_fills_the_column ***Failed    1.50 sec
    Start 1: crash_case
The following tests FAILED:";
        let shown: Vec<String> = output
            .lines()
            .filter_map(case_verdict)
            .map(|(name, verdict)| format!("{name}: {verdict} -> {:?}", signal_of(verdict)))
            .collect();
        expect![[r#"
            crash_case: ***Exception: SegFault -> Some("killed by signal 11 (SIGSEGV)")
            abrt_case: Subprocess aborted***Exception: -> Some("killed by signal 6 (SIGABRT)")
            fixture_pass: Passed -> None
            a_test_with_a_very_long_name_that_fills_the_column: ***Failed -> None"#]]
        .assert_eq(&shown.join("\n"));
    }
}

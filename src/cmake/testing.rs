//! CTest executions: `ctest --test-dir` or a test preset, with the cases of a JUnit report written to
//! a temporary directory under `storage/tmp`.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use super::Profile;
use std::path::Path;

use super::TestCase;
use super::output::{Reporter, Shortener, failure, with_summary};
use super::profile::{Execution, Operation};
use super::run_test::sanitizer_summary;
use super::sanitizer::Watch;
use super::{
    CmakeService, Error, TestOutcome, TestRequest, TestStatus, command, ctest, label, preset_of, required_tool,
    unusable,
};
use crate::call::Call;
use crate::process::{Stream, Timeout};
use crate::text::error_chain;
use crate::toolchain::tool_command;

impl CmakeService {
    /// `cmake_test`: one CTest execution per plain profile or test preset (or the preset profile's
    /// build directory when it has no test presets); cases come from a JUnit report written to a
    /// temporary directory under `storage/tmp` and removed afterwards.
    pub async fn test(
        &self,
        names: Option<&[String]>,
        request: &TestRequest,
        timeout: Timeout,
        call: &Call,
    ) -> Result<Vec<TestOutcome>, Error> {
        let reporter = Reporter::start(&call.progress, "Preparing CTest");
        let _serialized = self.lock.lock().await;
        let mut res = Vec::new();
        for (profile, execution) in self.executions(names, Operation::Test, &reporter, call).await? {
            let (profile, execution) = match (profile, execution) {
                (Ok(profile), Ok(execution)) => (profile, execution),
                (profile, execution) => {
                    let (name, reason) = unusable(profile, execution);
                    res.push(TestOutcome {
                        profile: name,
                        preset: None,
                        configuration: None,
                        tests: Vec::new(),
                        error: Some(reason),
                        process_id: None,
                    });
                    continue;
                }
            };
            if call.is_cancelled() {
                break;
            }
            res.push(self.test_one(&profile, &execution, request, timeout, &reporter, call).await);
        }
        Ok(res)
    }

    pub(super) async fn test_one(
        &self,
        profile: &Profile,
        execution: &Execution,
        request: &TestRequest,
        timeout: Timeout,
        reporter: &Reporter,
        call: &Call,
    ) -> TestOutcome {
        let preset = preset_of(execution);
        let label = label(profile, preset);
        let mut out = TestOutcome {
            profile: profile.name.clone(),
            preset: preset.map(str::to_owned),
            configuration: profile.configuration.clone(),
            tests: Vec::new(),
            error: None,
            process_id: None,
        };
        let result = async {
            let ctest = required_tool(profile, "ctest", None)?;
            let (dir, build) = self.execution_dir(profile, execution)?;
            let report_dir = self.report_dir()?;
            let junit = report_dir.path().join("junit.xml");
            let target = match (execution, &build) {
                (Execution::Directory(_), Some(build)) => command::Target::Directory(build),
                _ => command::Target::Preset(preset.unwrap_or_default()),
            };
            let args =
                command::test(target, &junit, profile.configuration.as_deref(), &request.names, request.parallel);
            let stderr = Arc::new(Mutex::new(None::<String>));
            let verdicts = Arc::new(Mutex::new(HashMap::<String, String>::new()));
            let shortener = Shortener::new(self.roots());
            let (first_stderr, progress, label_owned, short, seen) =
                (stderr.clone(), reporter.clone(), label.clone(), shortener.clone(), verdicts.clone());
            reporter.say(&label, "Starting tests");
            let spec = tool_command(&profile.toolset, &ctest.path, self.roots().project())
                .args(args)
                .timeout(timeout)
                .on_line(Arc::new(move |stream, line| {
                    if stream == Stream::Stderr && !line.trim().is_empty() {
                        first_stderr.lock().get_or_insert_with(|| line.trim().to_owned());
                    }
                    if let Some((name, verdict)) = ctest::case_verdict(line).filter(|_| stream == Stream::Stdout) {
                        seen.lock().insert(name.to_owned(), verdict.to_owned());
                    }
                    if let Some(message) = ctest::progress_message(line) {
                        progress.say(&label_owned, &short.shorten(message));
                    }
                }));
            let completed = self.run_protected(spec, dir.as_ref(), call).await.map_err(|err| error_chain(&err))?;
            out.process_id = Some(completed.id);
            let report = match std::fs::read_to_string(&junit) {
                Ok(text) => Some(ctest::parse_junit(&text)),
                Err(_) => None,
            };
            drop(report_dir);
            let problem = failure("ctest", &completed, Some(timeout));
            match report {
                Some(Ok(tests)) => {
                    out.tests = self.explain_cases(tests, &verdicts.lock(), build.as_deref(), &shortener);
                }
                Some(Err(reason)) => return Err(problem.map_or(reason.clone(), |p| format!("{p}; {reason}"))),
                None if problem.is_none() => return Err("ctest wrote no JUnit report".to_owned()),
                None => {}
            }
            let failed = out.tests.iter().filter(|t| t.status == TestStatus::Failed).count();
            let not_run = out.tests.iter().filter(|t| t.status == TestStatus::NotRun).count();
            let mut counts = Vec::new();
            if failed > 0 {
                counts.push(format!("{failed} failed"));
            }
            if not_run > 0 {
                counts.push(format!("{not_run} not run"));
            }
            match (problem, counts.is_empty()) {
                (None, true) => Ok(()),
                (None, false) => Err(format!("{} of {} tests", counts.join(", "), out.tests.len())),
                (Some(problem), false) => Err(format!("{problem}; {}", counts.join(", "))),
                (Some(problem), true) => {
                    Err(with_summary(problem, stderr.lock().as_deref().map(|line| shortener.shorten(line))))
                }
            }
        }
        .await;
        out.error = result.err();
        reporter.say(&label, out.error.as_deref().unwrap_or("Completed successfully"));
        out
    }

    /// A fresh temporary directory under `storage/tmp` for one JUnit report.
    pub(super) fn report_dir(&self) -> Result<tempfile::TempDir, String> {
        let tmp = self.roots().storage().join("tmp");
        std::fs::create_dir_all(&tmp)
            .and_then(|()| tempfile::Builder::new().prefix("ctest-").tempdir_in(&tmp))
            .map_err(|err| format!("cannot create a temporary directory under `storage/tmp`: {err}"))
    }

    /// Failed cases' messages with their signal named (from CTest's verdict line, which the JUnit
    /// report leaves out), their sanitizer reports summarised first and host paths qualified.
    fn explain_cases(
        &self,
        tests: Vec<TestCase>,
        verdicts: &HashMap<String, String>,
        build: Option<&Path>,
        shortener: &Shortener,
    ) -> Vec<TestCase> {
        let base = build.unwrap_or(self.roots().project());
        tests
            .into_iter()
            .map(|mut case| {
                if let Some(message) = case.message.take() {
                    let mut watch = Watch::default();
                    message.lines().for_each(|line| watch.line(line));
                    let mut head: Vec<String> =
                        watch.reports.iter().map(|report| sanitizer_summary(self.roots(), base, report)).collect();
                    let verdict = verdicts.get(&case.name).map(String::as_str);
                    let signal = verdict.and_then(ctest::signal_of).or_else(|| ctest::signal_of(&message));
                    if let Some(signal) = signal {
                        head.insert(0, signal.to_owned());
                    }
                    if signal.is_none() || message != ctest::NO_OUTPUT {
                        head.push(shortener.shorten(&message));
                    }
                    case.message = Some(head.join("\n"));
                }
                case
            })
            .collect()
    }
}

//! CTest executions: `ctest --test-dir` or a test preset, with the cases of a JUnit report written to
//! a temporary directory under `storage/tmp`.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;

use super::Profile;
use std::path::Path;

use super::TestCase;
use super::output::{Reporter, Shortener, failure, qualify_reported, with_summary};
use super::preset_files::PresetFiles;
use super::profile::{Execution, Operation};
use super::repeat::Runs;
use super::run_test::sanitizer_summary;
use super::sanitizer::Watch;
use super::{
    CmakeService, Error, Selection, TestOutcome, TestRequest, TestStatus, command, ctest, label, preset_of,
    required_tool, unusable,
};
use crate::call::Call;
use crate::process::{Stream, Timeout};
use crate::text::error_chain;

/// The most test names an unknown-name error lists.
const LISTED_TESTS: usize = 40;

/// `a, b, c` (at most [`LISTED_TESTS`], then how many more), or that there are none.
fn listing(names: &[String]) -> String {
    if names.is_empty() {
        return "no tests are registered".to_owned();
    }
    let mut res = format!("the tests are {}", names.iter().take(LISTED_TESTS).cloned().collect::<Vec<_>>().join(", "));
    if names.len() > LISTED_TESTS {
        res.push_str(&format!(" and {} more", names.len() - LISTED_TESTS));
    }
    res
}

/// What CTest prints when it finds no tests.
const NO_TESTS: &str = "No tests were found!!!";

impl CmakeService {
    /// `cmake_test`: one CTest execution per plain profile or test preset (or the preset profile's
    /// build directory when it has no test presets); cases come from a JUnit report written to a
    /// temporary directory under `storage/tmp` and removed afterwards.
    pub async fn test(
        &self,
        selection: &Selection<'_>,
        request: &TestRequest,
        timeout: Timeout,
        call: &Call,
    ) -> Result<Vec<TestOutcome>, Error> {
        let reporter = Reporter::start(&call.progress, "Preparing CTest");
        let _serialized = self.lock.acquire("cmake_test", |waiting| reporter.say("", waiting)).await;
        let mut res = Vec::new();
        let mut first = None;
        for (profile, execution) in self.executions(selection, Operation::Test, &reporter, call).await? {
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
                        selection: None,
                    });
                    continue;
                }
            };
            if call.is_cancelled() {
                break;
            }
            res.push(self.test_selected(&profile, &execution, request, timeout, &reporter, call).await);
            first.get_or_insert((profile, execution));
        }
        // A name CTest does not know is a bad argument: say which tests exist.
        let ran = |name: &String| res.iter().any(|o| o.tests.iter().any(|t| t.name == *name));
        if let Some((profile, execution)) = first.filter(|_| !request.names.iter().all(ran) && !call.is_cancelled())
            && let Some(existing) = self.list_tests(&profile, &execution, call).await
        {
            let unknown: Vec<String> =
                request.names.iter().filter(|name| !existing.contains(name)).map(|name| format!("`{name}`")).collect();
            if !unknown.is_empty() {
                return Err(Error::UnknownTests { names: unknown.join(", "), existing: listing(&existing) });
            }
        }
        Ok(res)
    }

    /// The names of the tests CTest knows for an execution (`ctest --show-only=json-v1`); `None`
    /// when they cannot be listed (not configured, for example).
    async fn list_tests(&self, profile: &Profile, execution: &Execution, call: &Call) -> Option<Vec<String>> {
        Some(self.show_tests(profile, execution, call).await?.into_iter().map(|t| t.name).collect())
    }

    /// CTest's model of an execution's tests (`ctest --show-only=json-v1`).
    pub(super) async fn show_only(
        &self,
        profile: &Profile,
        execution: &Execution,
        call: &Call,
    ) -> Option<serde_json::Value> {
        let ctest = required_tool(profile, "ctest", None).ok()?;
        let (_, build) = self.execution_dir(profile, execution).ok()?;
        let mut args = match (execution, &build) {
            (Execution::Directory(_), Some(build)) => vec![OsString::from("--test-dir"), build.clone().into()],
            (Execution::Preset(preset), _) => vec![OsString::from("--preset"), preset.into()],
            _ => return None,
        };
        if let Some(configuration) = &profile.configuration {
            args.extend([OsString::from("--build-config"), configuration.into()]);
        }
        args.push("--show-only=json-v1".into());
        let stdout = Arc::new(Mutex::new(String::new()));
        let sink = stdout.clone();
        let spec = self
            .profile_command(profile, &ctest.path, call)
            .await
            .args(args)
            .timeout(Timeout::total(std::time::Duration::from_secs(60)))
            .on_line(Arc::new(move |stream, line| {
                if stream == Stream::Stdout {
                    sink.lock().push_str(line);
                }
            }));
        let completed = self.processes.run(spec, call).await.ok()?;
        failure("ctest", &completed, None).is_none().then_some(())?;
        serde_json::from_str(&stdout.lock()).ok()
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
            configuration: self.execution_configuration(profile, preset, true),
            tests: Vec::new(),
            error: None,
            process_id: None,
            selection: None,
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
            let mut args =
                command::test(target, &junit, profile.configuration.as_deref(), &request.names, request.parallel);
            if let Some(limit) = request.repeat_until_fail {
                args.extend(["--repeat".into(), format!("until-fail:{limit}").into()]);
            }
            let runs = Arc::new(Mutex::new(Runs::default()));
            let counted = runs.clone();
            let stderr = Arc::new(Mutex::new(None::<String>));
            // CTest's `Test project <dir>`: where it looked for tests.
            let test_dir = Arc::new(Mutex::new(None::<PathBuf>));
            let looked_in = test_dir.clone();
            let verdicts = Arc::new(Mutex::new(HashMap::<String, String>::new()));
            let shortener = Shortener::new(self.roots());
            let (first_stderr, progress, label_owned, short, seen) =
                (stderr.clone(), reporter.clone(), label.clone(), shortener.clone(), verdicts.clone());
            reporter.say(&label, "Starting tests");
            let since = std::time::SystemTime::now();
            let spec = self
                .profile_command(profile, &ctest.path, call)
                .await
                .args(args)
                .core_dumps()
                .timeout(timeout)
                .on_line(Arc::new(move |stream, line| {
                    if stream == Stream::Stderr && !line.trim().is_empty() {
                        first_stderr.lock().get_or_insert_with(|| line.trim().to_owned());
                    }
                    if let Some(dir) = line.strip_prefix("Test project ").filter(|_| stream == Stream::Stdout) {
                        *looked_in.lock() = Some(PathBuf::from(dir.trim_end()));
                    }
                    if stream == Stream::Stdout {
                        counted.lock().line(line);
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
                    let verdicts = verdicts.lock().clone();
                    out.tests = self.explain_cases(tests, &verdicts, build.as_deref(), &shortener);
                    for case in &mut out.tests {
                        case.flaky = request.repeat_until_fail.and_then(|limit| runs.lock().flaky(&case.name, limit));
                    }
                    let listing = self.show_only(profile, execution, call);
                    self.case_crashes(&mut out.tests, &verdicts, listing, since, call).await;
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
                (Some(problem), true) if out.tests.is_empty() && stderr.lock().as_deref() == Some(NO_TESTS) => {
                    Err(format!("{problem}: {}", self.why_no_tests(test_dir.lock().as_deref(), preset, &request.names)))
                }
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

    /// Why CTest found no tests in `dir` (the directory it named) for a test `preset`: never
    /// configured, or no test registered (or none of `names`).
    fn why_no_tests(&self, dir: Option<&Path>, preset: Option<&str>, names: &[String]) -> String {
        let shown = dir.map_or_else(
            || "the build directory".to_owned(),
            |dir| self.roots().qualify(dir).map_or_else(|| dir.display().to_string(), |path| path.to_string()),
        );
        let configure = preset.and_then(|preset| {
            PresetFiles::read(self.roots().project()).configure_preset_of(preset, true).map(str::to_owned)
        });
        match (dir.map(|dir| dir.join("CTestTestfile.cmake").is_file()), configure) {
            (Some(false) | None, Some(configure)) => format!(
                "no tests were found: the build directory of configure preset `{configure}` has no \
                 CTestTestfile.cmake (it was never configured: cmake_configure with presets [\"{configure}\"]; or \
                 the project does not call enable_testing())"
            ),
            (Some(false) | None, None) => format!(
                "no tests were found: {shown} has no CTestTestfile.cmake (it was never configured, or the project \
                 does not call enable_testing())"
            ),
            (Some(true), _) if names.is_empty() => {
                format!("no tests were found: the project registers no tests (add_test) in {shown}")
            }
            (Some(true), _) => format!("no tests were found: none is named {}", names.join(", ")),
        }
    }

    /// A fresh temporary directory under `storage/tmp` for one JUnit report.
    pub(super) fn report_dir(&self) -> Result<tempfile::TempDir, String> {
        let tmp = self.roots().storage().join("tmp");
        std::fs::create_dir_all(&tmp)
            .and_then(|()| tempfile::Builder::new().prefix("ctest-").tempdir_in(&tmp))
            .map_err(|err| format!("cannot create a temporary directory under `storage/tmp`: {err}"))
    }

    /// Failed cases' messages with their signal named (from CTest's verdict line, which the JUnit
    /// report leaves out), their sanitizer reports summarised first and host paths qualified (the
    /// inner cases' files too).
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
                for failure in &mut case.failures {
                    failure.path = failure.file.as_deref().and_then(|file| qualify_reported(self.roots(), base, file));
                    failure.message = shortener.shorten(&failure.message);
                }
                case
            })
            .collect()
    }
}

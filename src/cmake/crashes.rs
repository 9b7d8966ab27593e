//! Crashed and hung tests explain themselves: for `cmake_test` cases and `cmake_run_test` runs that
//! ended by a crash signal or their timeout, the stack from the debug service's post-mortem
//! (`debug::postmortem`), in the structured result (`crash`) and at the end of the text.
//!
//! CTest cases are run again from CTest's own model (`ctest --show-only=json-v1`): the test's
//! command line, `WORKING_DIRECTORY` and `ENVIRONMENT`, so the re-run is what CTest ran. Core files
//! come from the kernel's pattern (`process::core_dumps`) in the program's working directory, or from
//! `coredumpctl`; a core a pattern without the pid cannot attribute (two crashed tests in one
//! directory) is removed unread and the tests are run again.
//!
//! Architecture invariant: at most [`MAX_STACKS`] stacks per call and none started after
//! [`STACK_BUDGET`]; the tests beyond are named in the result, never dropped silently. No new core
//! file is left behind.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::CmakeService;
use super::ctest::TestCase;
use crate::call::Call;
use crate::debug::postmortem::{self, CRASH_SIGNALS, Crash, Failure, Target};
use crate::process::core_dumps::{Core, CorePattern, find_plain};
use crate::process::{CheckedExecutable, Completed, Status, Timeout, signal_name};

/// Stacks taken per call at most.
pub const MAX_STACKS: usize = 8;
/// No stack is started after this much time in one call.
pub const STACK_BUDGET: Duration = Duration::from_secs(60);

/// One CTest test as CTest's JSON model describes it.
#[derive(Debug, Clone, Default)]
pub struct ModelTest {
    pub command: Vec<String>,
    pub cwd: Option<PathBuf>,
    pub env: Vec<String>,
    pub timeout: Option<Duration>,
}

/// The tests of `ctest --show-only=json-v1` output, by name.
pub fn model_tests(listing: &serde_json::Value) -> HashMap<String, ModelTest> {
    let mut res = HashMap::new();
    for test in listing.get("tests").and_then(|t| t.as_array()).into_iter().flatten() {
        let Some(name) = test.get("name").and_then(|n| n.as_str()) else { continue };
        let strings = |v: &serde_json::Value| -> Vec<String> {
            v.as_array().into_iter().flatten().filter_map(|s| s.as_str().map(str::to_owned)).collect()
        };
        let mut model =
            ModelTest { command: test.get("command").map(strings).unwrap_or_default(), ..Default::default() };
        for property in test.get("properties").and_then(|p| p.as_array()).into_iter().flatten() {
            let value = property.get("value").cloned().unwrap_or_default();
            match property.get("name").and_then(|n| n.as_str()) {
                Some("WORKING_DIRECTORY") => model.cwd = value.as_str().map(PathBuf::from),
                Some("ENVIRONMENT") => model.env = strings(&value),
                Some("TIMEOUT") => model.timeout = value.as_f64().filter(|t| *t > 0.0).map(Duration::from_secs_f64),
                _ => {}
            }
        }
        res.insert(name.to_owned(), model);
    }
    res
}

/// The crash signal a status ended with (`SIGSEGV`), if it is one the post-mortem explains.
pub fn crash_signal(status: Status) -> Option<&'static str> {
    match status {
        Status::Exited(code) if code < 0 => Some(signal_name(-code)).filter(|s| CRASH_SIGNALS.contains(s)),
        _ => None,
    }
}

/// The crash signal of a CTest verdict line's death (`killed by signal 11 (SIGSEGV)`).
fn verdict_signal(verdict: &str) -> Option<&'static str> {
    let said = super::ctest::signal_of(verdict)?;
    CRASH_SIGNALS.into_iter().find(|s| said.contains(&format!("({s})")))
}

/// Spends the per-call budget of stacks.
pub struct Budget {
    started: Instant,
    taken: usize,
    left_out: Vec<String>,
}

impl Budget {
    pub fn new() -> Budget {
        Budget { started: Instant::now(), taken: 0, left_out: Vec::new() }
    }

    /// True when one more stack may be taken for `name`; else `name` is remembered as left out.
    fn take(&mut self, name: &str) -> bool {
        if self.taken < MAX_STACKS && self.started.elapsed() < STACK_BUDGET {
            self.taken += 1;
            true
        } else {
            self.left_out.push(name.to_owned());
            false
        }
    }
}

impl CmakeService {
    /// The core file the system wrote for a program that died in `cwd` since `since`.
    pub(super) async fn find_core(
        &self,
        program: &Path,
        cwd: &Path,
        pid: Option<u32>,
        since: SystemTime,
        call: &Call,
    ) -> Option<Core> {
        let name = program.file_name()?.to_string_lossy().into_owned();
        match CorePattern::system()? {
            CorePattern::Plain { pattern, uses_pid } => find_plain(&pattern, uses_pid, cwd, &name, pid, since),
            CorePattern::Systemd => {
                let tmp = self.report_dir().ok()?;
                let into = tmp.path().join("core");
                let found = self.processes.coredumpctl(program, since, &into, tmp.path(), call).await?;
                // The copy outlives the directory's handle; the post-mortem removes it.
                let kept = self.roots().storage().join("tmp").join(format!("core-{}", std::process::id()));
                std::fs::rename(&found.path, &kept).ok()?;
                Some(Core { path: kept, new: true })
            }
            CorePattern::Piped(_) => None,
        }
    }

    /// The stack of a `cmake_run_test` run that crashed or timed out; `None` for other endings.
    pub(super) async fn run_crash(
        &self,
        run: &super::run_test::TestRun,
        completed: &Completed,
        timeout: Timeout,
        since: SystemTime,
        output: String,
        call: &Call,
    ) -> Option<Crash> {
        let debug = self.debugger.get()?;
        let failure = match (completed.status, crash_signal(completed.status)) {
            (_, Some(signal)) => {
                let core =
                    self.find_core(run.executable_file.path(), &run.cwd_abs, Some(completed.pid), since, call).await;
                Failure::Signal { signal: signal.to_owned(), core }
            }
            (Status::Interrupted, None) => Failure::Hang { after: timeout.total.or(timeout.idle)? },
            _ => return None,
        };
        let target = Target {
            executable: run.executable.clone(),
            checked: run.executable_file.clone(),
            arguments: run.arguments.clone(),
            cwd: run.cwd_abs.clone(),
            env: Vec::new(),
            output,
        };
        Some(debug.postmortem(&target, &failure, call).await)
    }

    /// Adds the stacks of crashed and timed-out cases (`verdicts`: CTest's verdict per case) to
    /// their results; `listing` is CTest's JSON model, fetched only when a case needs it.
    pub(super) async fn case_crashes(
        &self,
        cases: &mut [TestCase],
        verdicts: &HashMap<String, String>,
        listing: impl Future<Output = Option<serde_json::Value>>,
        since: SystemTime,
        call: &Call,
    ) {
        let Some(debug) = self.debugger.get() else { return };
        let failing: Vec<(usize, Option<&'static str>)> = cases
            .iter()
            .enumerate()
            .filter_map(|(idx, case)| {
                let verdict = verdicts.get(&case.name)?;
                let hang = verdict.contains("Timeout");
                let signal = verdict_signal(verdict);
                (hang || signal.is_some()).then_some((idx, signal))
            })
            .collect();
        if failing.is_empty() {
            return;
        }
        let model = listing.await.map(|l| model_tests(&l)).unwrap_or_default();
        // Directories where two crashed tests ran: a core there cannot be told apart.
        let mut dirs: HashMap<PathBuf, usize> = HashMap::new();
        for (idx, _) in failing.iter().filter(|(_, s)| s.is_some()) {
            if let Some(cwd) = model.get(&cases[*idx].name).and_then(|m| m.cwd.clone()) {
                *dirs.entry(cwd).or_default() += 1;
            }
        }
        let mut budget = Budget::new();
        for (idx, signal) in failing {
            let case = &mut cases[idx];
            let Some(test) = model.get(&case.name) else { continue };
            let cwd = test.cwd.clone().unwrap_or_else(|| self.roots().project().to_path_buf());
            let program = test.command.first().map(PathBuf::from);
            let core = match (signal, &program) {
                (Some(_), Some(program)) => self.find_core(program, &cwd, None, since, call).await,
                _ => None,
            };
            let core = match core {
                Some(core) if dirs.get(&cwd).copied().unwrap_or(0) > 1 && pid_free_pattern() => {
                    core.remove();
                    None
                }
                other => other,
            };
            if call.is_cancelled() || !budget.take(&case.name) {
                if let Some(core) = core {
                    core.remove();
                }
                continue;
            }
            let crash = match self.case_target(test, program.as_deref(), &cwd, case.message.clone()) {
                Ok(target) => {
                    let failure = match signal {
                        Some(signal) => Failure::Signal { signal: signal.to_owned(), core },
                        None => {
                            let after = test.timeout.or(case.duration_seconds.map(Duration::from_secs_f64));
                            Failure::Hang { after: after.unwrap_or(postmortem::HANG_WAIT) }
                        }
                    };
                    debug.postmortem(&target, &failure, call).await
                }
                Err(reason) => {
                    if let Some(core) = core {
                        core.remove();
                    }
                    Crash::unavailable(signal.map(str::to_owned), format!("No stack: {reason}"))
                }
            };
            let text = postmortem::text(&crash, "");
            case.message = Some(match case.message.take() {
                Some(message) => format!("{message}\n{text}"),
                None => text,
            });
            case.crash = Some(crash);
        }
        if !budget.left_out.is_empty() {
            let note = format!(
                "No stack: at most {MAX_STACKS} stacks are taken per call, none after {} s; not taken for {}",
                STACK_BUDGET.as_secs(),
                budget.left_out.join(", ")
            );
            for case in cases.iter_mut().filter(|c| budget.left_out.contains(&c.name)) {
                case.message = Some(match case.message.take() {
                    Some(message) => format!("{message}\n{note}"),
                    None => note.clone(),
                });
            }
        }
    }

    /// What to run again for a CTest test: its program must be a built file in the project or
    /// storage.
    fn case_target(
        &self,
        test: &ModelTest,
        program: Option<&Path>,
        cwd: &Path,
        output: Option<String>,
    ) -> Result<Target, String> {
        let program = program.ok_or("CTest's model has no command for the test")?;
        let roots = self.roots();
        let executable = roots
            .qualify(program)
            .filter(crate::workspace::path::QualifiedPath::is_managed)
            .ok_or_else(|| format!("the test's program `{}` is not in the project or storage", program.display()))?;
        let checked = CheckedExecutable::open(program, roots).map_err(|e| format!("`{executable}` {e}"))?;
        Ok(Target {
            executable,
            checked,
            arguments: test.command[1..].to_vec(),
            cwd: cwd.to_path_buf(),
            env: test.env.clone(),
            output: output.unwrap_or_default(),
        })
    }
}

/// True when the system's core pattern names no pid (one core file per directory).
fn pid_free_pattern() -> bool {
    match CorePattern::system() {
        Some(CorePattern::Plain { pattern, uses_pid }) => {
            !uses_pid && !pattern.contains("%p") && !pattern.contains("%P")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_gives_command_directory_environment_and_timeout() {
        let listing = serde_json::json!({"tests": [{
            "name": "crash", "command": ["/b/t", "--crash"],
            "properties": [
                {"name": "WORKING_DIRECTORY", "value": "/b/w"},
                {"name": "ENVIRONMENT", "value": ["A=1", "B=2"]},
                {"name": "TIMEOUT", "value": 5.0}
            ]
        }, {"name": "plain", "command": ["/b/t"]}]});
        let model = model_tests(&listing);
        let crash = &model["crash"];
        assert_eq!(crash.command, ["/b/t", "--crash"]);
        assert_eq!(crash.cwd.as_deref(), Some(Path::new("/b/w")));
        assert_eq!(crash.env, ["A=1", "B=2"]);
        assert_eq!(crash.timeout, Some(Duration::from_secs(5)));
        assert_eq!(model["plain"].cwd, None);
    }

    #[test]
    fn crash_signals_only() {
        assert_eq!(crash_signal(Status::Exited(-11)), Some("SIGSEGV"));
        assert_eq!(crash_signal(Status::Exited(-6)), Some("SIGABRT"));
        assert_eq!(crash_signal(Status::Exited(-9)), None);
        assert_eq!(crash_signal(Status::Exited(1)), None);
        assert_eq!(verdict_signal("***Exception: SegFault"), Some("SIGSEGV"));
        assert_eq!(verdict_signal("Subprocess aborted***Exception:"), Some("SIGABRT"));
        assert_eq!(verdict_signal("***Timeout"), None);
    }
}

//! Direct test runs (`cmake_run_test`): one built executable in `project/` or `storage/`, literal
//! arguments, stdin closed, the server's environment.
//!
//! Architecture invariant: the path, argument and working-directory rules live in
//! [`resolve_test_run`] (reused by other services that start a built program); the spawn is one
//! function, [`CmakeService::spawn_test_run`].

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::output::{Shortener, failure, qualify_reported};
use super::sanitizer::{Report, Watch};
use super::{CmakeService, Error, RunTestOutcome};
use crate::call::Call;
use crate::process::{CheckedExecutable, Completed, Timeout};
use crate::text::error_chain;
use crate::workspace::WorkspaceService;
use crate::workspace::path::{Area, LinkPolicy, QualifiedPath, Roots};

/// Lines of output a failed run's error carries.
const TAIL_LINES: usize = 20;
/// Project frames a sanitizer summary lists.
const SUMMARY_FRAMES: usize = 3;

/// A checked direct run: what to start, where, with which arguments.
#[derive(Debug, Clone)]
pub struct TestRun {
    pub executable: QualifiedPath,
    /// The executable opened where it was checked (an in-root link's target): the run executes
    /// this file, whatever the path names by then.
    pub executable_file: CheckedExecutable,
    pub arguments: Vec<String>,
    pub cwd: QualifiedPath,
    pub cwd_abs: PathBuf,
}

/// The rules of a direct run: `executable` is an existing regular file and `cwd` an existing
/// directory in `project/` or `storage/` (reached through links only inside the roots; the storage
/// root is never created here), arguments carry no NUL, batch files are refused on Windows. Each
/// refusal names its argument (`executable`, `arguments`, `cwd`).
pub fn resolve_test_run(
    workspace: &WorkspaceService,
    executable: &str,
    arguments: Vec<String>,
    cwd: &str,
) -> Result<TestRun, Error> {
    let argument = |argument: &'static str| move |reason: String| Error::Argument { argument, reason };
    let roots = workspace.roots();
    let exe_path = workspace.parse_managed(executable).map_err(|e| argument("executable")(error_chain(&e)))?;
    storage_exists(roots, &exe_path).map_err(argument("executable"))?;
    let exe = roots
        .resolve_existing(&exe_path, LinkPolicy::FollowInsideRoots)
        .map_err(|e| argument("executable")(error_chain(&e)))?;
    let executable_file =
        CheckedExecutable::open(&exe.abs, roots).map_err(|e| argument("executable")(format!("`{exe_path}` {e}")))?;
    if cfg!(windows)
        && exe
            .abs
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("bat") || e.eq_ignore_ascii_case("cmd"))
    {
        return Err(argument("executable")(format!("`{exe_path}` is a batch file; batch files are not supported")));
    }
    if let Some(idx) = arguments.iter().position(|a| a.contains('\0')) {
        return Err(argument("arguments")(format!("argument {} contains a NUL character", idx + 1)));
    }
    let cwd_path = workspace.parse_managed(cwd).map_err(|e| argument("cwd")(error_chain(&e)))?;
    storage_exists(roots, &cwd_path).map_err(argument("cwd"))?;
    let dir = roots
        .resolve_existing(&cwd_path, LinkPolicy::FollowInsideRoots)
        .map_err(|e| argument("cwd")(format!("{}; storage directories are not created", error_chain(&e))))?;
    if !dir.abs.is_dir() {
        return Err(argument("cwd")(format!("`{cwd_path}` is not a directory")));
    }
    Ok(TestRun { executable: exe_path, executable_file, arguments, cwd: cwd_path, cwd_abs: dir.abs })
}

/// A `storage/` path needs the storage root to exist already (resolving would create it).
fn storage_exists(roots: &Roots, path: &QualifiedPath) -> Result<(), String> {
    if path.area() == Area::Storage && std::fs::symlink_metadata(roots.storage()).is_err() {
        return Err(format!(
            "`{path}` does not exist: the storage root does not exist (storage is not created automatically)"
        ));
    }
    Ok(())
}

/// What a run's output showed: its last lines and its sanitizer reports.
#[derive(Debug, Default)]
struct RunWatch {
    tail: VecDeque<String>,
    sanitizers: Watch,
}

impl CmakeService {
    /// `cmake_run_test`: runs one built executable in `project/` or `storage/` with literal
    /// arguments, stdin closed and the server's environment. Argument problems are errors; a failed
    /// run is the outcome's `error`: why (a signal by name), a sanitizer summary with the first frames
    /// inside the roots, and the last lines of output.
    pub async fn run_test(
        &self,
        executable: &str,
        arguments: Vec<String>,
        cwd: &str,
        timeout: Timeout,
        call: &Call,
    ) -> Result<RunTestOutcome, Error> {
        let run = resolve_test_run(&self.workspace, executable, arguments, cwd)?;
        call.progress.report_with(0.0, Some(1.0), || format!("Starting {}", run.executable));
        let _serialized =
            self.lock.acquire("cmake_run_test", |waiting| call.progress.report(0.5, Some(1.0), waiting)).await;
        let watch = Arc::new(Mutex::new(RunWatch::default()));
        let since = std::time::SystemTime::now();
        let (process_id, mut error, crash) = match self.spawn_test_run(&run, timeout, watch.clone(), call).await {
            Ok(completed) => {
                let reason = failure("the test executable", &completed, Some(timeout));
                let error = reason.map(|reason| self.explain_run(reason, &watch.lock(), &run.cwd_abs));
                let output = watch.lock().tail.iter().cloned().collect::<Vec<_>>().join("\n");
                let crash = self.run_crash(&run, &completed, timeout, since, output, call).await;
                (Some(completed.id), error, crash)
            }
            Err(err) => (None, Some(error_chain(&err)), None),
        };
        if let (Some(error), Some(crash)) = (&mut error, &crash) {
            error.push('\n');
            error.push_str(&crate::debug::postmortem::text(crash, ""));
        }
        call.progress.report(1.0, Some(1.0), error.as_deref().unwrap_or("Completed successfully"));
        let (executable, arguments, cwd) = (run.executable, run.arguments, run.cwd);
        Ok(RunTestOutcome { executable, arguments, cwd, error, process_id, crash })
    }

    /// Starts the checked executable and waits for it, feeding its output to `watch`.
    async fn spawn_test_run(
        &self,
        run: &TestRun,
        timeout: Timeout,
        watch: Arc<Mutex<RunWatch>>,
        call: &Call,
    ) -> Result<Completed, crate::process::Error> {
        let spec = crate::process::CommandSpec::checked(run.executable_file.clone(), &run.cwd_abs)
            .args(&run.arguments)
            .core_dumps()
            .timeout(timeout)
            .on_line(Arc::new(move |_stream, line| {
                let mut seen = watch.lock();
                let reporting = seen.sanitizers.in_report;
                seen.sanitizers.line(line);
                let rule = line.len() >= 10 && line.trim_end().bytes().all(|b| b == b'=');
                if reporting || seen.sanitizers.in_report || rule {
                    // The sanitizer summary stands for the report's lines.
                    return;
                }
                if seen.tail.len() == TAIL_LINES {
                    seen.tail.pop_front();
                }
                seen.tail.push_back(line.trim_end().to_owned());
            }));
        self.processes.run(spec, call).await
    }

    /// `reason`, then the sanitizer summaries and the last lines of output, paths qualified.
    fn explain_run(&self, reason: String, watch: &RunWatch, cwd: &Path) -> String {
        let shortener = Shortener::new(self.roots());
        let mut res = reason;
        for report in &watch.sanitizers.reports {
            res.push('\n');
            res.push_str(&sanitizer_summary(self.roots(), cwd, report));
        }
        if !watch.tail.is_empty() {
            match watch.tail.len() {
                1 => res.push_str("\nLast line of output:"),
                n => res.push_str(&format!("\nLast {n} lines of output:")),
            }
            for line in &watch.tail {
                res.push_str("\n  ");
                res.push_str(&shortener.shorten(line));
            }
        }
        res
    }
}

/// One sanitizer report in a line, then its first frames inside the roots: `AddressSanitizer:
/// heap-buffer-overflow (READ of size 4 thread T0) at project/tests/overflow.cpp:5:12 in read_past`.
pub(super) fn sanitizer_summary(roots: &Roots, base: &Path, report: &Report) -> String {
    let mut res = report.headline.clone();
    if let Some(detail) = &report.detail {
        res.push_str(&format!(" ({detail})"));
    }
    let located: Vec<String> = report
        .location
        .iter()
        .chain(&report.frames)
        .filter_map(|frame| {
            let path = qualify_reported(roots, base, &frame.path).filter(QualifiedPath::is_managed)?;
            let mut at = format!("{path}:{}", frame.line);
            if let Some(column) = frame.column {
                at.push_str(&format!(":{column}"));
            }
            Some(match &frame.function {
                Some(function) => format!("{at} in {function}"),
                None => at,
            })
        })
        .take(SUMMARY_FRAMES)
        .collect();
    for (idx, frame) in located.iter().enumerate() {
        res.push_str(if idx == 0 { "\n  at " } else { "\n  from " });
        res.push_str(frame);
    }
    res
}

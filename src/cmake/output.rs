//! What CMake, CTest and test output tell a result: failure reasons, the first errors of a
//! transcript, qualified paths in place of host paths, and progress messages.

use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::diagnostics::{Parser, Severity};
use super::{SUMMARY_CHARS, ninja};
use crate::call::Progress;
use crate::process::{Completed, Status, Timeout};
use crate::workspace::path::lexically_normal;
use crate::workspace::path::{QualifiedPath, Roots};

pub(super) use crate::process::Shortener;

/// The qualified form of a path a tool printed: relative to `base` unless absolute, resolved
/// lexically, `project/…`/`storage/…` inside the roots and `root/…` elsewhere; `None` when nothing is
/// there (a bare file name from debug information, say), so every path given out is usable.
pub(super) fn qualify_reported(roots: &Roots, base: &Path, raw: &str) -> Option<QualifiedPath> {
    let abs = lexically_normal(&base.join(raw));
    if !abs.is_absolute() || std::fs::symlink_metadata(&abs).is_err() {
        return None;
    }
    if let Some(managed) = roots.qualify(&abs) {
        return Some(managed);
    }
    let text = abs.to_string_lossy().replace('\\', "/");
    QualifiedPath::parse(&format!("root/{}", text.strip_prefix('/').unwrap_or(&text))).ok()
}

/// Why a finished run failed (`None` for exit status 0).
pub(super) fn failure(what: &str, completed: &Completed, timeout: Option<Timeout>) -> Option<String> {
    match completed.status {
        Status::Exited(0) => None,
        Status::Exited(code) if code < 0 && cfg!(unix) => {
            Some(format!("{what} was killed by signal {} ({})", -code, signal_name(-code)))
        }
        Status::Exited(code) => Some(format!("{what} exited with code {code}")),
        Status::Interrupted => {
            let limits = timeout.map(describe_timeout).unwrap_or_default();
            Some(format!("{what} was interrupted by the timeout{limits}"))
        }
        Status::Stopped => Some(format!("{what} was stopped before it finished (the call was cancelled)")),
        Status::StreamFailure => Some(format!("reading the output of {what} failed")),
        Status::Running => Some(format!("{what} is still running")),
    }
}

pub(super) use crate::process::signal_name;

pub(super) fn describe_timeout(timeout: Timeout) -> String {
    let secs = |d: Duration| format!("{} s", d.as_secs_f64());
    match (timeout.total, timeout.idle) {
        (Some(total), Some(idle)) => format!(" (total {}, idle {})", secs(total), secs(idle)),
        (Some(total), None) => format!(" (total {})", secs(total)),
        (None, Some(idle)) => format!(" (idle {})", secs(idle)),
        (None, None) => String::new(),
    }
}

pub(super) fn with_summary(reason: String, summary: Option<String>) -> String {
    match summary {
        Some(summary) => format!("{reason}: {summary}"),
        None => reason,
    }
}

/// Cuts a summary to [`SUMMARY_CHARS`] characters.
pub(super) fn bounded(text: &str) -> String {
    match text.char_indices().nth(SUMMARY_CHARS) {
        Some((idx, _)) => format!("{}…", &text[..idx]),
        None => text.to_owned(),
    }
}

/// The first `CMake Error` block of configure output, as one line.
#[derive(Debug, Clone, Default)]
pub(super) struct FirstError {
    lines: Vec<String>,
    done: bool,
    /// The source directory, which CMake names the files of its tree relative to.
    source: Option<PathBuf>,
}

impl FirstError {
    /// For a configure of the source tree `source`: `CMake Error at CMakeLists.txt:15 (message):`
    /// is kept as `CMake Error at <source>/CMakeLists.txt:15 …`, which the [`Shortener`] qualifies.
    pub(super) fn in_source(source: &Path) -> FirstError {
        FirstError { source: Some(source.to_path_buf()), ..FirstError::default() }
    }

    pub(super) fn configure_line(&mut self, line: &str) {
        if self.done {
            return;
        }
        if self.lines.is_empty() {
            if line.starts_with("CMake Error") {
                let header = self.anchored(line.trim());
                self.lines.push(header);
            }
            return;
        }
        if line.trim().is_empty() {
            // Blank lines may separate the header from its message; after the message they end it.
            self.done = self.lines.len() > 1;
        } else if line.starts_with(char::is_whitespace) && self.lines.len() < 5 {
            self.lines.push(line.trim().to_owned());
        } else {
            self.done = true;
        }
    }

    pub(super) fn summary(&self) -> Option<String> {
        (!self.lines.is_empty()).then(|| bounded(&self.lines.join(" ")))
    }

    /// `header` with a relative `at <file>:<line>` made absolute in the source directory.
    fn anchored(&self, header: &str) -> String {
        let Some(source) = &self.source else { return header.to_owned() };
        let Some(rest) = header.strip_prefix("CMake Error at ") else { return header.to_owned() };
        let Some((at, command)) = rest.rsplit_once(" (") else { return header.to_owned() };
        let Some((file, line)) = at.rsplit_once(':') else { return header.to_owned() };
        if file.is_empty() || Path::new(file).is_absolute() || !line.bytes().all(|b| b.is_ascii_digit()) {
            return header.to_owned();
        }
        format!("CMake Error at {}:{line} ({command}", source.join(file).display())
    }
}

/// What a build's output showed: the last step count, the failed steps, the first failed edge,
/// the build tool's own error, a regeneration's first `CMake Error`, and the compiler and linker
/// diagnostics.
#[derive(Debug, Clone, Default)]
pub(super) struct BuildWatch {
    pub(super) steps: Option<(u64, u64)>,
    pub(super) no_work: bool,
    /// The description of each failed step (`Linking CXX executable app`): ninja prints a step's
    /// `[n/m] <description>` when it ends, right before its `FAILED:` line.
    pub(super) failed_steps: Vec<String>,
    /// The description of the last `[n/m]` line.
    last_step: Option<String>,
    failed: Option<String>,
    tool_error: Option<String>,
    cmake_error: FirstError,
    pub(super) parser: Parser,
}

impl BuildWatch {
    /// For a build of the source tree `source`, whose regeneration names its files relative to it.
    pub(super) fn in_source(source: &Path) -> BuildWatch {
        BuildWatch { cmake_error: FirstError::in_source(source), ..BuildWatch::default() }
    }

    pub(super) fn line(&mut self, line: &str) {
        match ninja::classify(line) {
            Some(ninja::BuildLine::Step { completed, total }) => {
                self.steps = Some((completed, total));
                self.last_step = line.split_once("] ").map(|(_, description)| description.trim().to_owned());
            }
            Some(ninja::BuildLine::Failed) => {
                let edge = line.trim().strip_prefix("FAILED: ").unwrap_or_default().trim();
                self.failed_steps.push(self.last_step.take().unwrap_or_else(|| edge.to_owned()));
                if self.failed.is_none() {
                    self.failed = Some(line.trim().to_owned());
                }
            }
            Some(ninja::BuildLine::Ninja) => {
                if line.starts_with("ninja: error:") && self.tool_error.is_none() {
                    self.tool_error = Some(line.trim().to_owned());
                }
                self.no_work |= line.starts_with("ninja: no work to do");
            }
            Some(_) => {}
            None => {
                let trimmed = line.trim();
                if self.tool_error.is_none()
                    && (trimmed.starts_with("make: ***")
                        || trimmed.starts_with("gmake: ***")
                        || trimmed.contains(": error MSB"))
                {
                    self.tool_error = Some(trimmed.to_owned());
                }
                self.cmake_error.configure_line(line);
            }
        }
        self.parser.line(line);
    }

    /// The reasons in order: the build tool's error, the regeneration's CMake error, the first
    /// compiler or linker error (compiler-style), else the failed edge.
    pub(super) fn summary(&self) -> Option<String> {
        let first = self.parser.diagnostics.iter().find(|d| d.severity == Severity::Error).map(|d| {
            let mut at = d.path.clone().unwrap_or_default();
            for n in [d.line, d.column].into_iter().flatten() {
                at.push_str(&format!(":{n}"));
            }
            if at.is_empty() { format!("error: {}", d.message) } else { format!("{at}: error: {}", d.message) }
        });
        let cmake = self.cmake_error.summary();
        let failed = if first.is_none() && cmake.is_none() { self.failed.clone() } else { None };
        let parts: Vec<String> = [self.tool_error.clone(), cmake, first, failed].into_iter().flatten().collect();
        (!parts.is_empty()).then(|| bounded(&parts.join("; ")))
    }
}

/// Progress for one CMake call: `(0, <start>)`, then one step per message, prefixed with the
/// execution's label, through the call's throttle. A build's `[n/m]` steps are reported as `n` of
/// `m` (after what came before: a run of steps starts at the value reached so far), so the total
/// is known and never exceeded; other messages during a run of steps stay below its next step.
#[derive(Clone)]
pub(super) struct Reporter {
    progress: Progress,
    state: Arc<Mutex<ReporterState>>,
}

#[derive(Default)]
struct ReporterState {
    /// The last value reported.
    value: f64,
    /// The running build's steps: `(offset, total, last completed)`.
    steps: Option<(f64, u64, u64)>,
}

impl ReporterState {
    /// The value and total of the next message; `step` is a build's `[n/m]`.
    fn next(&mut self, step: Option<(u64, u64)>) -> (f64, Option<f64>) {
        if let Some((completed, total)) = step {
            let run = self.steps.filter(|&(_, m, last)| m == total && completed >= last);
            let offset = run.map_or(self.value, |(offset, ..)| offset);
            self.steps = Some((offset, total, completed));
            self.value = self.value.max(offset + completed as f64);
            return (self.value, Some(offset + total as f64));
        }
        match self.steps {
            // Between steps: halfway to the next one.
            Some((offset, total, last)) if last < total => {
                self.value = (self.value + offset + (last + 1) as f64) / 2.0;
                (self.value, Some(offset + total as f64))
            }
            _ => {
                self.steps = None;
                self.value = self.value.floor() + 1.0;
                (self.value, None)
            }
        }
    }
}

impl Reporter {
    pub(super) fn start(progress: &Progress, message: &str) -> Reporter {
        progress.report(0.0, None, message);
        Reporter { progress: progress.clone(), state: Arc::new(Mutex::new(ReporterState::default())) }
    }

    pub(super) fn say(&self, label: &str, message: &str) {
        self.report(label, message, None);
    }

    /// Reports a build output line (a `[n/m]` step carries its counts).
    pub(super) fn build_line(&self, label: &str, message: &str) {
        let step = match ninja::classify(message) {
            Some(ninja::BuildLine::Step { completed, total }) if completed <= total && total > 0 => {
                Some((completed, total))
            }
            _ => None,
        };
        self.report(label, message, step);
    }

    /// The value is computed and delivered under one lock: a build's last output line, reported
    /// from the process's reader while the call already reports its outcome, reaches the client
    /// before it, in the order of their values.
    fn report(&self, label: &str, message: &str, step: Option<(u64, u64)>) {
        let mut state = self.state.lock();
        let (value, total) = state.next(step);
        self.progress.report_with(value, total, || {
            if label.is_empty() { message.to_owned() } else { format!("{label}: {message}") }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::ProcessId;
    use std::path::PathBuf;

    #[test]
    fn build_steps_carry_their_total_and_never_exceed_it() {
        let mut state = ReporterState::default();
        let mut sent = vec![state.next(None)];
        for n in 1..=3 {
            sent.push(state.next(Some((n, 3))));
            if n == 2 {
                sent.push(state.next(None));
            }
        }
        sent.push(state.next(None));
        // A second build of the same call starts after the first.
        sent.push(state.next(Some((1, 2))));
        sent.push(state.next(Some((2, 2))));
        assert_eq!(
            sent,
            [
                (1.0, None),
                (2.0, Some(4.0)),
                (3.0, Some(4.0)),
                (3.5, Some(4.0)),
                (4.0, Some(4.0)),
                (5.0, None),
                (6.0, Some(7.0)),
                (7.0, Some(7.0))
            ]
        );
        assert!(sent.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn first_cmake_error_block() {
        let mut first = FirstError::in_source(Path::new("/p"));
        for line in [
            "-- Configuring incomplete",
            "CMake Error at CMakeLists.txt:15 (message):",
            "  FIXTURE_LLVM_DWARF needs a Clang compiler, but the C++ compiler is GNU",
            "",
            "",
            "CMake Error at CMakeLists.txt:20 (message):",
            "  second",
        ] {
            first.configure_line(line);
        }
        assert_eq!(
            first.summary().as_deref(),
            Some(
                "CMake Error at /p/CMakeLists.txt:15 (message): FIXTURE_LLVM_DWARF needs a Clang compiler, but the C++ compiler is GNU"
            )
        );
        let mut absolute = FirstError::in_source(Path::new("/p"));
        absolute.configure_line("CMake Error at /q/cmake/rules.cmake:3 (include):");
        absolute.configure_line("  include could not find requested file");
        assert_eq!(
            absolute.summary().as_deref(),
            Some("CMake Error at /q/cmake/rules.cmake:3 (include): include could not find requested file")
        );
        let mut single = FirstError::default();
        single.configure_line("CMake Error: The source directory \"/x\" does not exist.");
        single.configure_line("Specify --help for usage, or press the help button on the CMake GUI.");
        assert_eq!(single.summary().as_deref(), Some("CMake Error: The source directory \"/x\" does not exist."));
    }

    #[test]
    fn build_watch_keeps_the_last_step_and_the_first_failure() {
        let mut watch = BuildWatch::default();
        for line in [
            "[1/3] Building CXX object a.o",
            "FAILED: CMakeFiles/fixture_compile_error.dir/negative/compile_error.cpp.o",
            "/p/negative/compile_error.cpp:5:12: error: 'undeclared_value' was not declared in this scope",
            "/p/other.cpp:1:1: error: second",
            "[2/3] Building CXX object b.o",
            "ninja: build stopped: subcommand failed.",
        ] {
            watch.line(line);
        }
        assert_eq!(watch.steps, Some((2, 3)));
        assert_eq!(watch.failed_steps, ["Building CXX object a.o"]);
        assert_eq!(
            watch.summary().as_deref(),
            Some("/p/negative/compile_error.cpp:5:12: error: 'undeclared_value' was not declared in this scope")
        );
        let mut unknown = BuildWatch::default();
        unknown.line("ninja: error: unknown target 'no_such_target'");
        assert_eq!(unknown.summary().as_deref(), Some("ninja: error: unknown target 'no_such_target'"));
        let mut link = BuildWatch::default();
        for line in ["[41/41] Linking CXX executable app", "FAILED: app", "collect2: error: ld returned 1 exit status"]
        {
            link.line(line);
        }
        assert_eq!(link.failed_steps, ["Linking CXX executable app"]);
        // A regeneration names the files of the source tree relative to it.
        let mut regenerate = BuildWatch::in_source(Path::new("/p"));
        for line in [
            "[0/2] Re-checking globbed directories...",
            "CMake Error at CMakeLists.txt:24 (target_link_libraries):",
            "  Cannot specify link libraries for target \"nope\" which is not built by this project.",
            "",
            "ninja: error: rebuilding 'build.ninja': subcommand failed",
        ] {
            regenerate.line(line);
        }
        assert_eq!(
            regenerate.summary().as_deref(),
            Some(
                "ninja: error: rebuilding 'build.ninja': subcommand failed; CMake Error at /p/CMakeLists.txt:24 \
                 (target_link_libraries): Cannot specify link libraries for target \"nope\" which is not built by this project."
            )
        );
    }

    #[test]
    fn managed_paths_in_output_are_qualified() {
        let roots = Roots::new(PathBuf::from("/w/proj"), PathBuf::from("/w/.proj.forgemcp"));
        let short = Shortener::new(&roots);
        assert_eq!(
            short.shorten("/w/proj/negative/compile_error.cpp:4:12: error: x; see /w/.proj.forgemcp/build/cmake-Debug"),
            "project/negative/compile_error.cpp:4:12: error: x; see storage/build/cmake-Debug"
        );
        assert_eq!(short.shorten("written to: /w/proj"), "written to: project/");
        assert_eq!(
            short.shorten("/w/project2/a and /w/proj.old/b are outside"),
            "root/w/project2/a and root/w/proj.old/b are outside"
        );
        assert_eq!(short.shorten("/usr/bin/c++ -I/usr/include"), "root/usr/bin/c++ -I/usr/include");
        assert_eq!(
            short.shorten("In file '/w/proj/tests/../cJSON.c:12:3': see /w/proj/a/./b.h."),
            "In file 'project/cJSON.c:12:3': see project/a/b.h."
        );
        assert_eq!(short.shorten("3/41 steps, and/or / alone"), "3/41 steps, and/or / alone");
    }

    #[test]
    fn failures_name_the_exit_code_or_the_limit() {
        let completed = |status| Completed { id: ProcessId(1), pid: 1, status, work_time: Duration::ZERO };
        assert_eq!(failure("cmake", &completed(Status::Exited(0)), None), None);
        assert_eq!(failure("cmake", &completed(Status::Exited(1)), None).unwrap(), "cmake exited with code 1");
        assert_eq!(
            failure(
                "ctest",
                &completed(Status::Interrupted),
                Some(Timeout { total: Some(Duration::from_secs(30)), idle: None })
            )
            .unwrap(),
            "ctest was interrupted by the timeout (total 30 s)"
        );
        if cfg!(target_os = "linux") {
            assert_eq!(
                failure("the test executable", &completed(Status::Exited(-11)), None).unwrap(),
                "the test executable was killed by signal 11 (SIGSEGV)"
            );
        }
        assert_eq!(bounded(&"x".repeat(400)).chars().count(), SUMMARY_CHARS + 1);
    }
}

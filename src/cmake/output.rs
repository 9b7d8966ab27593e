//! What CMake, CTest and test output tell a result: failure reasons, the first errors of a
//! transcript, qualified paths in place of host paths, and progress messages.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::{SUMMARY_CHARS, ninja};
use crate::call::Progress;
use crate::process::{Completed, Status, Timeout};
use crate::workspace::path::{Area, Roots};

/// Rewrites absolute paths inside the managed roots in a line of tool output to their qualified
/// form (`/home/u/proj/src/a.cpp` → `project/src/a.cpp`), so summaries and progress messages never
/// show host paths of managed files.
#[derive(Debug, Clone)]
pub(super) struct Shortener {
    /// `(absolute root, area prefix)`, storage first (the roots never contain each other).
    roots: Vec<(String, &'static str)>,
}

impl Shortener {
    pub(super) fn new(roots: &Roots) -> Shortener {
        let root = |path: &Path, area: Area| (path.to_string_lossy().trim_end_matches('/').to_owned(), area.prefix());
        Shortener { roots: vec![root(roots.storage(), Area::Storage), root(roots.project(), Area::Project)] }
    }

    pub(super) fn shorten(&self, text: &str) -> String {
        let mut res = text.to_owned();
        for (root, prefix) in &self.roots {
            if root.is_empty() || !res.contains(root.as_str()) {
                continue;
            }
            let mut out = String::with_capacity(res.len());
            let mut rest = res.as_str();
            while let Some(idx) = rest.find(root.as_str()) {
                let after = &rest[idx + root.len()..];
                let boundary =
                    after.chars().next().is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | '+')));
                out.push_str(&rest[..idx]);
                if boundary {
                    out.push_str(prefix);
                    out.push('/');
                    rest = after.strip_prefix('/').unwrap_or(after);
                } else {
                    out.push_str(root);
                    rest = after;
                }
            }
            out.push_str(rest);
            res = out;
        }
        res
    }
}

/// Why a finished run failed (`None` for exit status 0).
pub(super) fn failure(what: &str, completed: &Completed, timeout: Option<Timeout>) -> Option<String> {
    match completed.status {
        Status::Exited(0) => None,
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
#[derive(Default)]
pub(super) struct FirstError {
    lines: Vec<String>,
    done: bool,
}

impl FirstError {
    pub(super) fn configure_line(&mut self, line: &str) {
        if self.done {
            return;
        }
        if self.lines.is_empty() {
            if line.starts_with("CMake Error") {
                self.lines.push(line.trim().to_owned());
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
}

/// What a build's output showed: the last step count, the first failed edge and the first
/// compiler or linker error.
#[derive(Debug, Clone, Default)]
pub(super) struct BuildWatch {
    pub(super) steps: Option<(u64, u64)>,
    failed: Option<String>,
    error: Option<String>,
}

impl BuildWatch {
    pub(super) fn line(&mut self, line: &str) {
        match ninja::classify(line) {
            Some(ninja::BuildLine::Step { completed, total }) => self.steps = Some((completed, total)),
            Some(ninja::BuildLine::Failed) if self.failed.is_none() => self.failed = Some(line.trim().to_owned()),
            Some(_) => {}
            None if self.error.is_none() => {
                let lower = line.to_ascii_lowercase();
                if lower.contains("error:") || lower.contains(": error ") || lower.contains("undefined reference") {
                    self.error = Some(line.trim().to_owned());
                }
            }
            None => {}
        }
    }

    pub(super) fn summary(&self) -> Option<String> {
        let parts: Vec<&str> = [self.failed.as_deref(), self.error.as_deref()].into_iter().flatten().collect();
        (!parts.is_empty()).then(|| bounded(&parts.join("; ")))
    }
}

/// Progress for one CMake call: `(0, <start>)`, then one step per message, prefixed with the
/// execution's label, through the call's throttle.
#[derive(Clone)]
pub(super) struct Reporter {
    progress: Progress,
    count: Arc<AtomicU64>,
}

impl Reporter {
    pub(super) fn start(progress: &Progress, message: &str) -> Reporter {
        progress.report(0.0, None, message);
        Reporter { progress: progress.clone(), count: Arc::new(AtomicU64::new(0)) }
    }

    pub(super) fn say(&self, label: &str, message: &str) {
        let n = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        self.progress.report_with(n as f64, None, || {
            if label.is_empty() { message.to_owned() } else { format!("{label}: {message}") }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::process::ProcessId;

    #[test]
    fn first_cmake_error_block() {
        let mut first = FirstError::default();
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
                "CMake Error at CMakeLists.txt:15 (message): FIXTURE_LLVM_DWARF needs a Clang compiler, but the C++ compiler is GNU"
            )
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
        assert_eq!(
            watch.summary().as_deref(),
            Some(
                "FAILED: CMakeFiles/fixture_compile_error.dir/negative/compile_error.cpp.o; /p/negative/compile_error.cpp:5:12: error: 'undeclared_value' was not declared in this scope"
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
        assert_eq!(short.shorten("/w/project2/a and /w/proj.old/b stay"), "/w/project2/a and /w/proj.old/b stay");
        assert_eq!(short.shorten("/usr/bin/c++"), "/usr/bin/c++");
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
        assert_eq!(bounded(&"x".repeat(400)).chars().count(), SUMMARY_CHARS + 1);
    }
}

//! Core files the system wrote for a crashed program: where the kernel's `core_pattern` puts them
//! (a plain pattern, relative to the program's working directory or absolute), or a copy
//! `coredumpctl` extracts where systemd-coredump takes the cores.
//!
//! Programs get core files at all only when their spec asks for `CommandSpec::core_dumps` (the soft
//! limit is raised to the hard one in the child). A found core is [`Core::new`] when it was written
//! since the run started: the post-mortem removes those after reading them, and leaves older files
//! alone.
//!
//! Architecture invariant: reading `/proc/sys/kernel/core_*` and listing one directory are the only
//! file-system accesses; nothing here deletes a file (the caller decides, see [`Core::remove`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::call::Call;

use super::{CommandSpec, ProcessService, Timeout};

/// Where the system puts core files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CorePattern {
    /// A file pattern (`core`, `/var/crash/core.%e.%p`); `uses_pid` is `core_uses_pid`.
    Plain { pattern: String, uses_pid: bool },
    /// systemd-coredump takes the cores: `coredumpctl` gives them back.
    Systemd,
    /// Another program takes the cores (apport, a container runtime): none ForgeMCP can read.
    Piped(String),
}

impl CorePattern {
    /// The system's pattern; `None` when it cannot be read (not Linux).
    pub fn system() -> Option<CorePattern> {
        let pattern = std::fs::read_to_string("/proc/sys/kernel/core_pattern").ok()?;
        let uses_pid = std::fs::read_to_string("/proc/sys/kernel/core_uses_pid").is_ok_and(|v| v.trim() == "1");
        Some(CorePattern::parse(pattern.trim_end(), uses_pid))
    }

    pub fn parse(pattern: &str, uses_pid: bool) -> CorePattern {
        match pattern.strip_prefix('|') {
            Some(program) if program.contains("systemd-coredump") => CorePattern::Systemd,
            Some(program) => CorePattern::Piped(program.split_whitespace().next().unwrap_or_default().to_owned()),
            None => CorePattern::Plain { pattern: pattern.to_owned(), uses_pid },
        }
    }
}

/// A core file found for a crash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Core {
    pub path: PathBuf,
    /// Written since the run started (or extracted by `coredumpctl`): removed after reading.
    pub new: bool,
}

impl Core {
    /// Removes the file when it is new; an older core stays.
    pub fn remove(&self) {
        if self.new {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The file pattern `pattern` gives for a program: `(directory, file-name glob)` where `*` stands for
/// what is not known (`%p` without a pid, `%t`, `%h`, …). `cwd` is the program's working directory,
/// `program` its file name, `pid` its process id when known.
pub fn expected(pattern: &str, uses_pid: bool, cwd: &Path, program: &str, pid: Option<u32>) -> (PathBuf, String) {
    let mut name = String::new();
    let mut chars = pattern.chars();
    let mut has_pid = false;
    while let Some(ch) = chars.next() {
        if ch != '%' {
            name.push(ch);
            continue;
        }
        match chars.next() {
            Some('%') => name.push('%'),
            Some('p' | 'P' | 'i' | 'I') => {
                has_pid = true;
                name.push_str(&pid.map_or_else(|| "*".to_owned(), |p| p.to_string()));
            }
            // The kernel's `comm`: the first 15 bytes of the file name.
            Some('e') => name.push_str(&program.chars().take(15).collect::<String>()),
            Some(_) => name.push('*'),
            None => {}
        }
    }
    if uses_pid && !has_pid {
        name.push('.');
        name.push_str(&pid.map_or_else(|| "*".to_owned(), |p| p.to_string()));
    }
    let full = cwd.join(&name);
    let dir = full.parent().map_or_else(|| cwd.to_path_buf(), Path::to_path_buf);
    let file = full.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    (dir, file)
}

/// True when `name` matches `glob`, where `*` matches any run of characters.
pub fn matches(glob: &str, name: &str) -> bool {
    let parts: Vec<&str> = glob.split('*').collect();
    if parts.len() == 1 {
        return glob == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || !name[first.len()..].ends_with(last) || name.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// The newest file written since `since` that a plain pattern gives for the program; `None` with
/// none.
pub fn find_plain(
    pattern: &str,
    uses_pid: bool,
    cwd: &Path,
    program: &str,
    pid: Option<u32>,
    since: SystemTime,
) -> Option<Core> {
    let (dir, glob) = expected(pattern, uses_pid, cwd, program, pid);
    let mut found: Vec<(SystemTime, PathBuf)> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|entry| matches(&glob, &entry.file_name().to_string_lossy()))
        .filter_map(|entry| {
            let meta = entry.metadata().ok().filter(std::fs::Metadata::is_file)?;
            let modified = meta.modified().ok()?;
            // File times can lag the clock by a tick.
            (modified + Duration::from_secs(1) >= since).then(|| (modified, entry.path()))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, path)| Core { path, new: true })
}

/// How long `coredumpctl` may take to extract one core.
const COREDUMPCTL_TIMEOUT: Duration = Duration::from_secs(20);

impl ProcessService {
    /// The core of `executable` systemd-coredump took since `since`, extracted by `coredumpctl` to
    /// `into` (a new file the caller removes); `None` when there is none or `coredumpctl` failed.
    pub async fn coredumpctl(
        &self,
        executable: &Path,
        since: SystemTime,
        into: &Path,
        cwd: &Path,
        call: &Call,
    ) -> Option<Core> {
        let since = since.duration_since(SystemTime::UNIX_EPOCH).ok()?.as_secs().saturating_sub(1);
        let spec = CommandSpec::new("coredumpctl", cwd)
            .args(["--no-pager", "--quiet", "--since"])
            .arg(format!("@{since}"))
            .arg("--output")
            .arg(into)
            .arg("dump")
            .arg(executable)
            .timeout(Timeout::total(COREDUMPCTL_TIMEOUT));
        let completed = self.run(spec, call).await.ok()?;
        (completed.succeeded() && into.is_file()).then(|| Core { path: into.to_path_buf(), new: true })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_read() {
        assert_eq!(CorePattern::parse("core", false), CorePattern::Plain { pattern: "core".into(), uses_pid: false });
        assert_eq!(CorePattern::parse("|/usr/lib/systemd/systemd-coredump %P %u %g", false), CorePattern::Systemd);
        assert_eq!(
            CorePattern::parse("|/usr/share/apport/apport -p%p", false),
            CorePattern::Piped("/usr/share/apport/apport".into())
        );
    }

    #[test]
    fn expected_names() {
        let cwd = Path::new("/w/build");
        let shown = |pattern: &str, uses_pid: bool, pid: Option<u32>| {
            let (dir, glob) = expected(pattern, uses_pid, cwd, "a_very_long_test_name", pid);
            format!("{} {glob}", dir.display())
        };
        assert_eq!(shown("core", false, Some(7)), "/w/build core");
        assert_eq!(shown("core", true, Some(7)), "/w/build core.7");
        assert_eq!(shown("core", true, None), "/w/build core.*");
        assert_eq!(shown("/var/crash/core.%e.%p.%t", false, Some(7)), "/var/crash core.a_very_long_tes.7.*");
        assert_eq!(shown("cores/%%%e", false, None), "/w/build/cores %a_very_long_tes");
    }

    #[test]
    fn globs() {
        assert!(matches("core", "core"));
        assert!(!matches("core", "core.1"));
        assert!(matches("core.*", "core.1234"));
        assert!(matches("core.t.*.*", "core.t.1.99"));
        assert!(!matches("core.*", "cor"));
        assert!(!matches("a*a", "a"));
    }
}

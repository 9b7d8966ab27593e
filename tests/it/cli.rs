//! The real binary's command line: help and version exit 0 on stdout; every invalid option value
//! exits 2 with exactly one `forgemcp: error: …` line on stderr that names the option, and nothing
//! on stdout (no MCP session starts).
//!
//! The detailed rules live in the unit tests of `src/config/tests/` and `src/cli.rs`; these tests check
//! the process boundary: exit status, which stream, and how many lines.

#![expect(clippy::disallowed_methods, reason = "these tests start the real binary directly; they are not server code")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A temporary directory with `proj/` (the current directory of the server) and `tools/`.
struct Scratch {
    _dir: tempfile::TempDir,
    base: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().expect("temporary directory");
        let base = std::fs::canonicalize(dir.path()).expect("canonical temporary directory");
        std::fs::create_dir(base.join("proj")).expect("project directory");
        Scratch { _dir: dir, base }
    }

    /// Creates an executable file at `rel` below the scratch directory (`.exe` added on Windows).
    fn tool(&self, rel: &str) -> PathBuf {
        let path = self.base.join(format!("{rel}{}", std::env::consts::EXE_SUFFIX));
        std::fs::create_dir_all(path.parent().expect("tool has a parent")).expect("tool directory");
        std::fs::write(&path, "#!/bin/sh\nexit 0\n").expect("tool file");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("tool mode");
        }
        path
    }

    /// Runs `forgemcp <args…>` in `proj/` with stdin closed, so a server that wrongly started would
    /// see end of input and stop instead of hanging the test.
    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_forgemcp"))
            .args(args)
            .arg("--no-admin")
            .current_dir(self.base.join("proj"))
            .stdin(Stdio::null())
            .output()
            .expect("the forgemcp binary runs")
    }

    fn run_plain(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_forgemcp"))
            .args(args)
            .current_dir(self.base.join("proj"))
            .stdin(Stdio::null())
            .output()
            .expect("the forgemcp binary runs")
    }
}

fn s(path: &Path) -> &str {
    path.to_str().expect("test paths are UTF-8")
}

/// Asserts exit status 2, empty stdout, and exactly one stderr line starting with `prefix`; returns
/// the line.
#[track_caller]
fn assert_config_error(output: &Output, prefix: &str) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "exit status for {prefix:?}; stderr: {stderr}");
    assert!(output.stdout.is_empty(), "stdout must stay empty, got {:?}", String::from_utf8_lossy(&output.stdout));
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one stderr line expected, got {stderr:?}");
    assert!(stderr.ends_with('\n'), "the line is terminated: {stderr:?}");
    let line = lines[0];
    assert!(line.starts_with(&format!("forgemcp: error: {prefix}")), "{line:?} should start with {prefix:?}");
    line.to_owned()
}

#[test]
fn help_exits_zero_on_stdout() {
    let scratch = Scratch::new();
    for flag in ["--help", "-h"] {
        let output = scratch.run_plain(&[flag]);
        assert_eq!(output.status.code(), Some(0), "{flag}");
        assert!(output.stderr.is_empty(), "{flag}: {}", String::from_utf8_lossy(&output.stderr));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.contains("Usage: forgemcp [OPTIONS]"), "{stdout}");
        for option in ["--workspace <DIR>", "--toolset <NAME> <TOOL=PATH>...", "--cmake-profile <NAME> [KEY=VALUE]..."]
        {
            assert!(stdout.contains(option), "{flag} lacks {option}: {stdout}");
        }
        assert!(!stdout.contains("--admin-hub"), "the hub flag is hidden: {stdout}");
    }
}

#[test]
fn version_exits_zero_on_stdout() {
    let output = Scratch::new().run_plain(&["--version"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stderr.is_empty());
    assert_eq!(String::from_utf8_lossy(&output.stdout), format!("forgemcp {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn bad_progress_interval_exits_2() {
    let scratch = Scratch::new();
    for value in ["-1", "nan", "inf", "abc"] {
        let line = assert_config_error(&scratch.run(&["--progress-interval", value]), "--progress-interval");
        assert!(line.contains(&format!("`{value}`")), "{line}");
    }
    assert_config_error(&scratch.run(&["--progress-interval=-1"]), "--progress-interval `-1`: must not be negative");
}

#[test]
fn nonexistent_workspace_exits_2() {
    let scratch = Scratch::new();
    let output = scratch.run(&["--workspace", "no such dir"]);
    assert_eq!(
        assert_config_error(&output, "--workspace"),
        "forgemcp: error: --workspace `no such dir`: no such directory"
    );
}

#[test]
fn storage_inside_project_exits_2() {
    let scratch = Scratch::new();
    let output = scratch.run(&["--workspace-storage", "store"]);
    assert_config_error(&output, "--workspace-storage store: the storage root must not lie inside the project");
}

#[test]
fn duplicate_toolset_name_exits_2() {
    let scratch = Scratch::new();
    let clang = scratch.tool("tools/clang");
    let entry = format!("clang={}", s(&clang));
    let output = scratch.run(&["--toolset", "LLVM 20", &entry, "--toolset", "LLVM 20", &entry]);
    assert_eq!(
        assert_config_error(&output, "--toolset"),
        "forgemcp: error: --toolset `LLVM 20`: the name is already used by another --toolset"
    );
}

#[test]
fn unknown_tool_name_exits_2() {
    let scratch = Scratch::new();
    scratch.tool("tools/clang-query");
    let output = scratch.run(&["--toolset", "llvm", "clang-query=../tools/clang-query"]);
    assert_config_error(&output, "--toolset llvm: unknown tool `clang-query` (expected one of cmake, ctest");
}

#[test]
fn missing_tool_path_exits_2() {
    let scratch = Scratch::new();
    let output = scratch.run(&["--toolset", "llvm", "clangd=../tools/clangd"]);
    assert_eq!(
        assert_config_error(&output, "--toolset"),
        "forgemcp: error: --toolset llvm: `clangd` path ../tools/clangd does not exist"
    );
}

#[test]
fn unusable_tool_paths_exit_2() {
    let scratch = Scratch::new();
    std::fs::create_dir_all(scratch.base.join("tools/cmake")).expect("a directory named like the tool");
    let output = scratch.run(&["--toolset", "mine", "cmake=../tools/cmake"]);
    assert_config_error(&output, "--toolset mine: `cmake` path ../tools/cmake is not a file");
    #[cfg(unix)]
    {
        std::fs::write(scratch.base.join("tools/ninja"), "").expect("a plain file");
        let output = scratch.run(&["--toolset", "mine", "ninja=../tools/ninja"]);
        assert_config_error(&output, "--toolset mine: `ninja` path ../tools/ninja is not executable");
    }
}

#[test]
fn a_bad_tool_path_never_falls_back_to_path() {
    let scratch = Scratch::new();
    let clangd = scratch.tool("bin/clangd");
    let output = Command::new(env!("CARGO_BIN_EXE_forgemcp"))
        .args(["--no-admin", "--toolset", "llvm", "clangd=../tools/clangd"])
        .current_dir(scratch.base.join("proj"))
        .env("PATH", clangd.parent().expect("tool directory"))
        .stdin(Stdio::null())
        .output()
        .expect("the forgemcp binary runs");
    assert_config_error(&output, "--toolset llvm: `clangd` path ../tools/clangd does not exist");
}

#[test]
fn bad_cmake_profile_exits_2() {
    let scratch = Scratch::new();
    let output = scratch.run(&["--cmake-profile", "debug", "generater=Ninja"]);
    assert_config_error(&output, "--cmake-profile debug: unknown key `generater` (expected one of toolset,");
    let output = scratch.run(&["--cmake-profile", "native", "configure-preset=a", "generator=Ninja"]);
    assert_config_error(&output, "--cmake-profile native: a preset profile takes `generator`");
    let output = scratch.run(&["--cmake-profile", "debug", "configuration"]);
    assert_config_error(&output, "--cmake-profile debug: `configuration` is not KEY=VALUE");
}

#[test]
fn bad_admin_ipc_exits_2() {
    let scratch = Scratch::new();
    assert_config_error(&scratch.run_plain(&["--open-admin", "--admin-ipc", "../x"]), "--admin-ipc `../x`");
}

#[test]
fn every_usage_error_is_one_prefixed_line() {
    let scratch = Scratch::new();
    for args in [
        &["--toolset", "only-a-name"][..],
        &["--toolset"],
        &["--admin-port", "http"],
        &["--admin-port", "65536"],
        &["--admin-port", "-1"],
        &["--admin-port"],
        &["--workspaces", "x"],
        &["--workspace"],
        &["--workspace-storage"],
        &["--progress-interval"],
        &["--cmake-toolset"],
        &["--open-admin", "--workspace", "x"],
        &["--open-admin", "--toolset", "a", "clang=x"],
        &["--cmake-profile"],
        &["stray-positional"],
        &["-x"],
        &["--no-admin=yes"],
        &["--no-admin", "--no-admin"],
        &["--help=1"],
        &["--workspace", "a", "--workspace", "b"],
    ] {
        let line = assert_config_error(&scratch.run_plain(args), "");
        assert!(line.ends_with("(see forgemcp --help)"), "{args:?}: {line}");
        assert!(!line.contains("forgemcp: error: error"), "{args:?}: {line}");
    }
}

#[test]
fn admin_port_zero_means_any_free_port() {
    // Accepted: the server starts and, with stdin closed before `initialize`, ends with status 1.
    let output = Scratch::new().run(&["--admin-port", "0"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("MCP session did not start"), "{stderr}");
}

#[test]
fn unknown_cmake_toolset_exits_2() {
    let scratch = Scratch::new();
    if cfg!(windows) {
        // Visual Studio toolsets are only known after discovery there.
        return;
    }
    assert_config_error(
        &scratch.run(&["--cmake-toolset", "nosuch"]),
        "--cmake-toolset `nosuch`: no toolset has this id or name (known: `System`, or their ids)",
    );
    assert_config_error(
        &scratch.run(&["--cmake-profile", "debug", "toolset=nosuch"]),
        "--cmake-profile debug: toolset=`nosuch`: no toolset has this id or name",
    );
}

#[test]
fn uncreatable_storage_exits_2_and_creates_nothing() {
    let scratch = Scratch::new();
    std::fs::write(scratch.base.join("afile"), "").expect("a plain file");
    assert_config_error(
        &scratch.run(&["--workspace-storage", "../afile/store"]),
        "--workspace-storage ../afile/store: ",
    );
    #[cfg(unix)]
    if !nix::unistd::Uid::effective().is_root() {
        use std::os::unix::fs::PermissionsExt as _;
        let locked = scratch.base.join("locked");
        std::fs::create_dir(&locked).expect("a directory");
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).expect("read-only");
        assert_config_error(
            &scratch.run(&["--workspace-storage", "../locked/a/b"]),
            "--workspace-storage ../locked/a/b: cannot be created or written:",
        );
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).expect("writable again");
    }
    // A creatable storage directory is accepted and not created before it is needed.
    let output = scratch.run(&["--workspace-storage", "../fresh/store"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "started, then no MCP session: {stderr}");
    assert!(stderr.contains("MCP session did not start"), "{stderr}");
}

#[cfg(target_os = "linux")]
#[test]
fn storage_that_cannot_be_created_exits_2_before_anything_starts() {
    let output = Scratch::new().run(&["--workspace-storage", "/proc/forbidden/x"]);
    assert_config_error(&output, "--workspace-storage /proc/forbidden/x: cannot be created or written: /proc");
}

/// The `--help` text's options: every `--name` that starts an option entry (`      --name` or
/// `  -h, --name`).
fn help_options(help: &str) -> Vec<String> {
    help.lines()
        .filter_map(|line| {
            let entry = line.strip_prefix("      --").or_else(|| {
                let short = line.strip_prefix("  -")?;
                short.get(3..).filter(|_| short.get(1..3) == Some(", "))?.strip_prefix("--")
            })?;
            let name: String = entry.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
            Some(format!("--{name}"))
        })
        .collect()
}

/// The README's option table: `(options of the row, the whole row)` per row.
fn readme_rows() -> Vec<(Vec<String>, String)> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).expect("README.md");
    let table = readme.split("## Command-line options").nth(1).expect("the options section");
    table
        .lines()
        .skip_while(|line| !line.starts_with("| Option"))
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|row| {
            let first = row.split('|').nth(1).unwrap_or_default();
            let options = first
                .split('`')
                .skip(1)
                .step_by(2)
                .filter_map(|code| code.split_whitespace().next())
                .map(str::to_owned)
                .collect();
            (options, row.to_owned())
        })
        .collect()
}

/// The paragraph of `--help` that describes `option`.
fn help_entry<'a>(help: &'a str, option: &str) -> &'a str {
    let start = help.find(&format!("      {option} ")).unwrap_or_else(|| panic!("{option} in --help"));
    let rest = &help[start..];
    let end = rest[1..].find("\n      --").map_or(rest.len(), |at| at + 1);
    &rest[..end]
}

#[test]
fn the_readme_option_table_matches_help() {
    let output = Scratch::new().run_plain(&["--help"]);
    let help = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut from_help = help_options(&help);
    let rows = readme_rows();
    let mut from_readme: Vec<String> = rows.iter().flat_map(|(options, _)| options.clone()).collect();
    from_readme.sort();
    let n_readme = from_readme.len();
    from_readme.dedup();
    assert_eq!(from_readme.len(), n_readme, "an option has two README rows: {rows:#?}");
    from_help.sort();
    assert_eq!(from_readme, from_help, "README rows and --help options differ");

    // Every --cmake-profile key the binary accepts is in its --help entry and its README row.
    let rejected = Scratch::new().run(&["--cmake-profile", "x", "no-such-key=1"]);
    let line = assert_config_error(&rejected, "--cmake-profile x: unknown key");
    let accepted = line.split("expected one of ").nth(1).expect("the accepted keys").trim_end_matches(')');
    let entry = help_entry(&help, "--cmake-profile");
    let (_, row) = rows.iter().find(|(options, _)| options.contains(&"--cmake-profile".to_owned())).expect("row");
    for key in accepted.split(", ") {
        assert!(entry.contains(key), "--help does not name the key {key}: {entry}");
        assert!(row.contains(&format!("`{key}")), "the README does not name the key {key}: {row}");
    }
    // And every tool name --toolset accepts is in its --help entry.
    let rejected = Scratch::new().run(&["--toolset", "t", "no-such-tool=/x"]);
    let line = assert_config_error(&rejected, "--toolset t: unknown tool");
    let tools = line.split("expected one of ").nth(1).expect("the tool names").trim_end_matches(')');
    let entry = help_entry(&help, "--toolset");
    for tool in tools.split(", ").map(|t| t.trim_start_matches("or ")) {
        assert!(entry.contains(tool), "--help does not name the tool {tool}: {entry}");
    }
}

//! Unit tests of the configuration, by option: modes, admin options and messages here; the roots,
//! toolsets and CMake profiles in their own files.

mod cmake_profiles;
mod roots;
mod toolsets;

use std::fs;

use super::error::shown;
use super::*;

/// A temporary tree: `<tmp>/proj` (the project and default cwd), `<tmp>/tools/…` executables.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("temporary directory");
        let root = fs::canonicalize(dir.path()).expect("canonical temporary directory");
        fs::create_dir(root.join("proj")).expect("project directory");
        fs::create_dir(root.join("tools")).expect("tools directory");
        Fixture { _dir: dir, root }
    }

    fn project(&self) -> PathBuf {
        self.root.join("proj")
    }

    /// Creates an executable file below the fixture root (with `.exe` appended on Windows).
    fn tool(&self, rel: &str) -> PathBuf {
        let path = self.root.join(exe(rel));
        fs::create_dir_all(path.parent().expect("tool has a parent")).expect("tool directory");
        fs::write(&path, "#!/bin/sh\n").expect("tool file");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("tool mode");
        }
        path
    }

    fn file(&self, rel: &str) -> PathBuf {
        let path = self.root.join(rel);
        fs::create_dir_all(path.parent().expect("file has a parent")).expect("file directory");
        fs::write(&path, "").expect("file");
        path
    }

    /// Validates `forgemcp <argv…>` with the project as the current directory.
    fn build(&self, argv: &[&str]) -> Result<Config, ConfigError> {
        self.build_in(&self.project(), argv)
    }

    fn build_in(&self, cwd: &Path, argv: &[&str]) -> Result<Config, ConfigError> {
        let args = cli::Args::try_parse_from(std::iter::once("forgemcp").chain(argv.iter().copied()))
            .unwrap_or_else(|err| panic!("{argv:?} should parse: {err}"));
        build(args, cwd)
    }

    #[track_caller]
    fn serve(&self, argv: &[&str]) -> ServeConfig {
        match self.build(argv) {
            Ok(config) => config.serve().expect("serve mode").clone(),
            Err(err) => panic!("{argv:?} should be valid: {err}"),
        }
    }

    #[track_caller]
    fn error(&self, argv: &[&str]) -> String {
        match self.build(argv) {
            Ok(config) => panic!("{argv:?} should be rejected, got {config:?}"),
            Err(err) => err.to_string(),
        }
    }
}

/// A tool file name as the fixture creates it: `.exe` is appended on Windows (PATHEXT).
fn exe(rel: &str) -> String {
    format!("{rel}{}", std::env::consts::EXE_SUFFIX)
}

fn s(path: &Path) -> &str {
    path.to_str().expect("test paths are UTF-8")
}

#[track_caller]
fn assert_starts(message: &str, prefix: &str) {
    assert!(message.starts_with(prefix), "message {message:?} should start with {prefix:?}");
    assert!(!message.contains('\n'), "message {message:?} should be one line");
    assert!(!message.ends_with('.'), "message {message:?} should have no final period");
}

// Modes and admin options.

#[test]
fn defaults() {
    let fx = Fixture::new();
    let config = fx.build(&[]).expect("no options is valid");
    assert_eq!(config.admin(), &AdminConfig::new(true, 8765, "forgemcp".to_owned()));
    assert!(config.admin().is_default_ipc());
    let serve = config.serve().expect("serve mode");
    assert_eq!(serve.workspace_root(), fx.project());
    assert_eq!(serve.storage_root(), fx.root.join(".proj.forgemcp"));
    assert_eq!(serve.progress_interval(), Duration::from_secs(1));
    assert!(serve.toolsets().is_empty());
    assert_eq!(serve.cmake_toolset(), "system");
    assert!(serve.cmake_profiles().is_empty());
    // What the services are given: discovery probes in the project root with an empty environment
    // (`build` reads no process state), CMake uses the automatic profiles of the System toolset.
    let discovery = serve.discovery();
    assert_eq!(discovery.cwd, fx.project());
    assert_eq!(discovery.env, crate::toolchain::DiscoveryEnv::default());
    assert_eq!(discovery.probe_timeout, crate::toolchain::version::PROBE_TIMEOUT);
    assert_eq!(serve.cmake().toolset, "system");
    assert_eq!(config.admin_env(), &crate::admin::options::AdminEnv::default());
}

#[test]
fn admin_options() {
    let fx = Fixture::new();
    let config = fx.build(&["--no-admin", "--admin-port", "9000", "--admin-ipc", "forgemcp-other"]).expect("valid");
    assert_eq!(config.admin(), &AdminConfig::new(false, 9000, "forgemcp-other".to_owned()));
    assert!(!config.admin().is_default_ipc());
}

#[test]
fn admin_ipc_accepts_safe_file_names() {
    let fx = Fixture::new();
    for name in ["a", "Group_1.test-2", "x.", "-dash"] {
        let argv = [format!("--admin-ipc={name}")];
        let config = fx.build(&[argv[0].as_str()]).unwrap_or_else(|err| panic!("{name}: {err}"));
        assert_eq!(config.admin().ipc_name(), name);
    }
}

#[test]
fn admin_ipc_rejects_unsafe_names() {
    let fx = Fixture::new();
    let long = format!("--admin-ipc={}", "a".repeat(65));
    for (arg, problem) in [
        ("--admin-ipc=", "--admin-ipc ``: the name is empty"),
        ("--admin-ipc=.hidden", "--admin-ipc `.hidden`: the name must not start with '.'"),
        ("--admin-ipc=a/b", "--admin-ipc `a/b`: use only ASCII letters"),
        ("--admin-ipc=a b", "--admin-ipc `a b`: use only"),
        ("--admin-ipc=grüße", "--admin-ipc `grüße`: use only"),
        ("--admin-ipc=..", "--admin-ipc `..`: the name must not start"),
        (long.as_str(), "--admin-ipc `aaaa"),
    ] {
        assert_starts(&fx.error(&[arg]), problem);
    }
    assert_starts(
        &fx.error(&[long.as_str()]),
        &format!("--admin-ipc `{}`: the name is longer than 64", "a".repeat(65)),
    );
}

#[test]
fn open_admin_mode_needs_no_workspace() {
    let fx = Fixture::new();
    let missing_cwd = fx.root.join("gone");
    let config = fx.build_in(&missing_cwd, &["--open-admin", "--admin-ipc", "other"]).expect("valid");
    assert!(matches!(config.mode(), RunMode::OpenAdmin));
    assert!(config.serve().is_none());
    assert_eq!(config.admin().ipc_name(), "other");
    assert_starts(
        &fx.build_in(&missing_cwd, &["--open-admin", "--admin-ipc", "a b"]).unwrap_err().to_string(),
        "--admin-ipc `a b`",
    );
}

#[test]
fn hub_mode() {
    let fx = Fixture::new();
    let config = fx.build(&["--admin-hub", "--admin-port", "9001"]).expect("valid");
    assert!(matches!(config.mode(), RunMode::Hub));
    assert_eq!(config.admin().port(), 9001);
}

// Messages.

#[test]
fn error_line_is_one_line() {
    let fx = Fixture::new();
    let err = fx.build(&["--progress-interval", "1\n2"]).unwrap_err();
    assert_eq!(err.to_line(), "forgemcp: error: --progress-interval `1\\n2`: not a number of seconds");
}

#[test]
fn names_are_quoted_only_when_needed() {
    assert_eq!(shown("debug"), "debug");
    assert_eq!(shown("LLVM 20"), "`LLVM 20`");
    assert_eq!(shown(""), "``");
    assert_eq!(shown("a\tb"), "`a\\tb`");
}

//! The validated, immutable server configuration built from [`cli::Args`]: parsing and validation
//! only. It builds the option types the services define (`toolchain::DiscoveryOptions`,
//! `cmake::CmakeOptions`, `admin::options::AdminConfig` and `AdminEnv`) and the composition root's
//! `app::ServeConfig` that bundles them.
//!
//! - `mod.rs` — `Config`, `RunMode`, `load`/`from_args`/`build`, the environment readers, the
//!   assembly of a `ServeConfig`, `--progress-interval`.
//! - `error.rs` — `ConfigError` (every message) and the quoting helpers.
//! - `roots.rs` — `--workspace`, `--workspace-storage` and `--exclude-dir`.
//! - `toolsets.rs` — `--toolset` groups and the toolset selectors known before discovery.
//! - `cmake_profiles.rs` — `--cmake-profile` groups.
//! - `admin.rs` — the admin options.
//! - `tests/` — the unit tests, by option.
//!
//! This is the high half of ripgrep's two-stage argument handling (`HiArgs`): every operator value is
//! checked here, once, before anything starts, and a bad value becomes one [`ConfigError`] that
//! `main` prints as a single stderr line before exiting with status 2 (INTERFACE.md §21).
//!
//! Architecture invariant: no service imports this module or `cli`; the services define their
//! options and this module depends on them, never the other way round (the guard is
//! `tests/it/architecture.rs`).
//! Architecture invariant: this is the only module that reads the server's current directory and
//! environment variables (`PATH`, `PATHEXT` and `ProgramFiles(x86)` for toolchain discovery;
//! `XDG_RUNTIME_DIR` and `BROWSER` for the admin Hub).
//! Everything below `from_args` receives them as parameters, so the rules are unit-tested without
//! touching process state.
//! Architecture invariant: a `Config` is never partially valid. There are no fallbacks: an invalid
//! explicit value is an error, never replaced by a default or a discovered tool.
//!
//! Decisions beyond the specification's wording (kept strict on purpose, documented here and in the
//! help text):
//! - The storage root must not be the project root, contain it, or lie inside it. The specification
//!   forbids the first two; the third is refused too because one file would then have two qualified
//!   names (`project/…` and `storage/…`), which defeats protected paths and CMake input tracking.
//! - Roots are compared after resolving links: the project root is canonical, and the storage root
//!   is canonical up to its first missing component (storage is created on first use, not here).
//! - User toolset names `system` and `System` are refused: they would make `--cmake-toolset system`
//!   (the default) ambiguous with the System toolset's id and name.
//! - Windows-only built-in tools (`cl`, `link`, `msbuild`, `cppvsdbg`) cannot be given to `--toolset`
//!   on other platforms, matching discovery, which never locates them there.
//! - `build-directory` may not be `project/` or `storage/` itself: configure may delete and recreate
//!   a build directory when the generator changes.
//! - A `define=VAR=` with an empty value is accepted (CMake's `-DVAR=` sets an empty string); a
//!   preset name may not be repeated within one key.

mod admin;
mod cmake_profiles;
mod error;
mod roots;
#[cfg(test)]
mod tests;
mod toolsets;

use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

pub use error::{ConfigError, StorageOrigin};

use crate::admin::options::{AdminConfig, AdminEnv};
use crate::app::ServeConfig;
use crate::cli;
use crate::cmake::CmakeOptions;
use crate::cmake::options::DEFAULT_CMAKE_TOOLSET;
use crate::toolchain::{DiscoveryEnv, DiscoveryOptions};
use crate::workspace::path::{Area, QualifiedPath, Roots};
use toolsets::KnownToolsets;

/// Exit status for a configuration error (INTERFACE.md §21); clap uses the same for usage errors.
pub const EXIT_CONFIG_ERROR: u8 = 2;
/// Progress throttle when `--progress-interval` is not given.
pub const DEFAULT_PROGRESS_INTERVAL: Duration = Duration::from_secs(1);

/// The whole validated configuration of one `forgemcp` process.
#[derive(Debug, Clone)]
pub struct Config {
    mode: RunMode,
    admin: AdminConfig,
    admin_env: AdminEnv,
}

impl Config {
    pub fn mode(&self) -> &RunMode {
        &self.mode
    }

    pub fn admin(&self) -> &AdminConfig {
        &self.admin
    }

    /// Environment variables the admin Hub link reads (empty when built by [`build`], as in tests).
    pub fn admin_env(&self) -> &AdminEnv {
        &self.admin_env
    }

    /// The server settings, when this process serves MCP.
    pub fn serve(&self) -> Option<&ServeConfig> {
        match &self.mode {
            RunMode::Serve(serve) => Some(serve),
            RunMode::OpenAdmin | RunMode::Hub => None,
        }
    }
}

/// What this process does.
#[derive(Debug, Clone)]
pub enum RunMode {
    /// Serve MCP on stdio for one workspace (the normal launch).
    Serve(ServeConfig),
    /// `--open-admin`: ask the running Hub for the private URL, open the browser, exit.
    OpenAdmin,
    /// Hidden `--admin-hub`: run the admin Hub for one `--admin-ipc` group.
    Hub,
}

/// Reads the variables the admin modes need from the server's environment.
fn admin_env_from_process() -> AdminEnv {
    AdminEnv {
        runtime_dir: std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()).map(PathBuf::from),
        browser: std::env::var_os("BROWSER").filter(|v| !v.is_empty()),
        user_name: std::env::var_os("USERNAME").filter(|v| !v.is_empty()),
    }
}

/// Reads the variables toolchain discovery needs from the server's environment.
fn discovery_env_from_process() -> DiscoveryEnv {
    DiscoveryEnv {
        path: std::env::var_os("PATH"),
        pathext: std::env::var_os("PATHEXT"),
        program_files_x86: std::env::var_os("ProgramFiles(x86)"),
    }
}

/// Parses the process's command line and validates it. Help and version requests exit 0 and usage
/// errors exit 2 inside clap; an invalid value prints one `forgemcp: error: …` line on stderr and
/// returns the exit status to end `main` with. Nothing is started before this returns.
pub fn load() -> Result<Config, ExitCode> {
    let args = cli::Args::parse().map_err(|err| report(&ConfigError::Usage { message: cli::usage_line(&err) }))?;
    from_args(args).map_err(|err| report(&err))
}

/// Prints the error as one stderr line and returns exit status 2.
pub fn report(err: &ConfigError) -> ExitCode {
    use std::io::Write as _;
    // Logging is not set up yet; this line is the whole report. A failed write cannot be reported.
    let _ = writeln!(io::stderr().lock(), "{}", err.to_line());
    ExitCode::from(EXIT_CONFIG_ERROR)
}

/// Validates operator input against the server's current directory.
pub fn from_args(args: cli::Args) -> Result<Config, ConfigError> {
    #[expect(clippy::disallowed_methods, reason = "config/ is the one place that reads the server's cwd")]
    let cwd = std::env::current_dir().map_err(|reason| ConfigError::CurrentDir { reason })?;
    build_with(args, &cwd, discovery_env_from_process, admin_env_from_process())
}

/// Validates operator input; relative paths resolve against `cwd` (absolute), which is also the
/// default workspace. Reads the file system (roots, tool paths, toolchain files) but no process state.
pub fn build(args: cli::Args, cwd: &Path) -> Result<Config, ConfigError> {
    build_with(args, cwd, DiscoveryEnv::default, AdminEnv::default())
}

/// [`build`] with the environment the services are given (`discovery_env` is read only to serve).
fn build_with(
    args: cli::Args,
    cwd: &Path,
    discovery_env: impl FnOnce() -> DiscoveryEnv,
    admin_env: AdminEnv,
) -> Result<Config, ConfigError> {
    let admin = admin::admin_config(&args)?;
    let mode = if args.open_admin {
        RunMode::OpenAdmin
    } else if args.admin_hub {
        RunMode::Hub
    } else {
        RunMode::Serve(serve_config(args, cwd, discovery_env)?)
    };
    Ok(Config { mode, admin, admin_env })
}

fn serve_config(
    args: cli::Args,
    cwd: &Path,
    discovery_env: impl FnOnce() -> DiscoveryEnv,
) -> Result<ServeConfig, ConfigError> {
    let workspace_root = roots::workspace_root(args.workspace.as_deref(), cwd)?;
    let storage_root = roots::storage_root(args.workspace_storage.as_deref(), &workspace_root, cwd)?;
    let progress_interval = match &args.progress_interval {
        Some(raw) => progress_interval(raw)?,
        None => DEFAULT_PROGRESS_INTERVAL,
    };
    let journal_limit = match &args.journal_limit {
        Some(raw) => match raw.trim().parse::<u64>() {
            Ok(mib @ 1..=1_048_576) => mib * 1024 * 1024,
            _ => return Err(ConfigError::JournalLimit { value: raw.clone() }),
        },
        None => crate::workspace::journal::DEFAULT_LIMIT,
    };
    let toolsets = toolsets::user_toolsets(&args.toolsets, cwd)?;
    let cmake_toolset = match args.cmake_toolset {
        Some(value) if value.trim().is_empty() => return Err(ConfigError::EmptyCmakeToolset { value }),
        Some(value) => value,
        None => DEFAULT_CMAKE_TOOLSET.to_owned(),
    };
    let known = KnownToolsets::new(&toolsets);
    if !known.may_exist(&cmake_toolset) {
        return Err(ConfigError::UnknownCmakeToolset { value: cmake_toolset, known: known.shown() });
    }
    let roots = Roots::new(workspace_root.clone(), storage_root.clone());
    let cmake_profiles = cmake_profiles::cmake_profiles(&args.cmake_profiles, &cmake_toolset, &roots)?;
    if let Some(profile) = cmake_profiles.iter().find(|profile| !known.may_exist(&profile.toolset)) {
        let (profile, value) = (profile.name.clone(), profile.toolset.clone());
        return Err(ConfigError::UnknownProfileToolset { profile, value, known: known.shown() });
    }
    let discovery = DiscoveryOptions {
        cwd: workspace_root.clone(),
        env: discovery_env(),
        user_toolsets: toolsets,
        probe_timeout: crate::toolchain::version::PROBE_TIMEOUT,
    };
    let cmake = CmakeOptions { toolset: cmake_toolset, profiles: cmake_profiles };
    let excluded_dirs = roots::excluded_dirs(&args.exclude_dirs, &workspace_root)?;
    let compile_commands = args.compile_commands.as_deref().map(compile_commands).transpose()?;
    Ok(ServeConfig::new(workspace_root, storage_root, progress_interval, discovery, cmake)
        .with_excluded_dirs(excluded_dirs)
        .with_journal_limit(journal_limit)
        .with_compile_commands(compile_commands))
}

/// `--compile-commands DIR`: a workspace directory in project/ or storage/ (the area root itself
/// included: `project` for the project root).
fn compile_commands(raw: &str) -> Result<QualifiedPath, ConfigError> {
    let fail = |problem: String| ConfigError::CompileCommands { value: raw.to_owned(), problem };
    let path = QualifiedPath::parse(raw).map_err(|err| fail(format!("is not a workspace path: {err}")))?;
    if path.area() == Area::Root {
        return Err(fail("must be in project/ or storage/, not root/".to_owned()));
    }
    Ok(path)
}

fn progress_interval(raw: &str) -> Result<Duration, ConfigError> {
    let fail = |problem| Err(ConfigError::ProgressInterval { value: raw.to_owned(), problem });
    let Ok(secs) = raw.trim().parse::<f64>() else {
        return fail("not a number of seconds");
    };
    if !secs.is_finite() {
        return fail("must be a finite number of seconds");
    }
    if secs < 0.0 {
        return fail("must not be negative");
    }
    match Duration::try_from_secs_f64(secs) {
        Ok(interval) => Ok(interval),
        Err(_) => fail("is too large"),
    }
}

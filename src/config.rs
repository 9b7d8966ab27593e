//! The validated, immutable server configuration built from [`cli::Args`].
//!
//! This is the high half of ripgrep's two-stage argument handling (`HiArgs`): every operator value is
//! checked here, once, before anything starts, and a bad value becomes one [`ConfigError`] that
//! `main` prints as a single stderr line before exiting with status 2 (INTERFACE.md §21).
//!
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

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::admin::options::{AdminConfig, AdminEnv, MAX_ADMIN_IPC_LEN};
use crate::app::ServeConfig;
use crate::cli;
use crate::cmake::options::{DEFAULT_CMAKE_TOOLSET, DEFAULT_GENERATOR, SANITIZERS};
use crate::cmake::{CmakeDefine, CmakeOptions, CmakeProfileSpec, PlainProfile, PresetProfile, ProfileKind};
use crate::toolchain::spec::{self, ToolSpec};
use crate::toolchain::{DiscoveryEnv, DiscoveryOptions, UserTool, UserToolsetSpec};
use crate::workspace::path::{Area, QualifiedPath, Roots};

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

/// Every way operator input can be invalid. Messages name the option and the offending value, are
/// lowercase, have no final period, and fit on one line.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read the current directory: {reason}")]
    CurrentDir { reason: io::Error },

    #[error("{option}: the path is empty")]
    EmptyPath { option: &'static str },
    #[error("--workspace {}: no such directory", shown_path(path))]
    WorkspaceMissing { path: PathBuf },
    #[error("--workspace {}: not a directory", shown_path(path))]
    WorkspaceNotDirectory { path: PathBuf },
    #[error("--workspace {}: {reason}", shown_path(path))]
    WorkspaceUnreadable { path: PathBuf, reason: io::Error },
    #[error(
        "--workspace {}: the project has no parent directory to hold the default storage; pass --workspace-storage",
        shown_path(path)
    )]
    NoDefaultStorage { path: PathBuf },

    #[error("{origin} {}: the storage root must not be the project root", shown_path(path))]
    StorageIsProject { origin: StorageOrigin, path: PathBuf },
    #[error("{origin} {}: the storage root must not contain the project {}", shown_path(path), shown_path(project))]
    StorageContainsProject { origin: StorageOrigin, path: PathBuf, project: PathBuf },
    #[error("{origin} {}: the storage root must not lie inside the project {}", shown_path(path), shown_path(project))]
    StorageInsideProject { origin: StorageOrigin, path: PathBuf, project: PathBuf },
    #[error("{origin} {}: exists and is not a directory", shown_path(path))]
    StorageNotDirectory { origin: StorageOrigin, path: PathBuf },
    #[error("{origin} {}: {reason}", shown_path(path))]
    StorageUnreadable { origin: StorageOrigin, path: PathBuf, reason: io::Error },
    #[error("{origin} {}: cannot be created or written: {problem}", shown_path(path))]
    StorageNotCreatable { origin: StorageOrigin, path: PathBuf, problem: String },

    /// A command line clap itself refused (unknown option, missing or malformed value).
    #[error("{message}")]
    Usage { message: String },

    #[error("--progress-interval {}: {problem}", quoted(value))]
    ProgressInterval { value: String, problem: &'static str },

    #[error("--toolset {}: {problem}", shown(name))]
    ToolsetName { name: String, problem: &'static str },
    #[error("--toolset {}: the name is already used by another --toolset", shown(name))]
    DuplicateToolset { name: String },
    #[error("--toolset {}: {} is not TOOL=PATH", shown(toolset), quoted(entry))]
    ToolEntry { toolset: String, entry: String },
    #[error("--toolset {}: unknown tool {} (expected one of {})", shown(toolset), quoted(tool), tool_names())]
    UnknownTool { toolset: String, tool: String },
    #[error("--toolset {}: tool {} is given more than once", shown(toolset), quoted(tool))]
    RepeatedTool { toolset: String, tool: String },
    #[error("--toolset {}: tool {} only exists on Windows", shown(toolset), quoted(tool))]
    WindowsOnlyTool { toolset: String, tool: String },
    #[error("--toolset {}: {}= has an empty path", shown(toolset), quoted(tool))]
    EmptyToolPath { toolset: String, tool: String },
    #[error("--toolset {}: {} path {} does not exist", shown(toolset), quoted(tool), shown_path(path))]
    ToolPathMissing { toolset: String, tool: String, path: PathBuf },
    #[error("--toolset {}: {} path {} is not a file", shown(toolset), quoted(tool), shown_path(path))]
    ToolPathNotFile { toolset: String, tool: String, path: PathBuf },
    #[error("--toolset {}: {} path {} is not executable ({hint})", shown(toolset), quoted(tool), shown_path(path))]
    ToolPathNotExecutable { toolset: String, tool: String, path: PathBuf, hint: String },
    #[error("--toolset {}: {} path {}: {reason}", shown(toolset), quoted(tool), shown_path(path))]
    ToolPathUnreadable { toolset: String, tool: String, path: PathBuf, reason: io::Error },

    #[error("--cmake-toolset {}: the toolset id or name is empty", quoted(value))]
    EmptyCmakeToolset { value: String },
    #[error("--cmake-toolset {}: no toolset has this id or name (known: {known})", quoted(value))]
    UnknownCmakeToolset { value: String, known: String },
    #[error(
        "--cmake-profile {}: toolset={}: no toolset has this id or name (known: {known})",
        shown(profile),
        quoted(value)
    )]
    UnknownProfileToolset { profile: String, value: String, known: String },

    #[error("--cmake-profile {}: {problem}", shown(name))]
    ProfileName { name: String, problem: &'static str },
    #[error("--cmake-profile {}: the name is already used by another --cmake-profile", shown(name))]
    DuplicateProfile { name: String },
    #[error("--cmake-profile {}: {} is not KEY=VALUE", shown(profile), quoted(entry))]
    ProfileEntry { profile: String, entry: String },
    #[error("--cmake-profile {}: unknown key {} (expected one of {})", shown(profile), quoted(key), PROFILE_KEYS.join(", "))]
    UnknownProfileKey { profile: String, key: String },
    #[error("--cmake-profile {}: {}= has an empty value", shown(profile), quoted(key))]
    EmptyProfileValue { profile: String, key: String },
    #[error("--cmake-profile {}: {} is given more than once", shown(profile), quoted(key))]
    RepeatedProfileKey { profile: String, key: String },
    #[error("--cmake-profile {}: {} {problem}", shown(profile), quoted(entry))]
    ProfileValue { profile: String, entry: String, problem: String },
    #[error(
        "--cmake-profile {}: a preset profile takes {} from its configure preset; drop {} or the preset keys",
        shown(profile),
        quoted(key),
        quoted(key)
    )]
    PresetConflict { profile: String, key: String },
    #[error(
        "--cmake-profile {}: the name cannot form the default build directory storage/build/cmake-<name> (use letters, digits, '-', '_', '.', '+') or set build-directory",
        shown(profile)
    )]
    UnsafeProfileDirName { profile: String },

    #[error("--admin-ipc {}: {problem}", quoted(name))]
    AdminIpcName { name: String, problem: &'static str },
}

impl ConfigError {
    /// The one line `main` prints before exiting with [`EXIT_CONFIG_ERROR`].
    pub fn to_line(&self) -> String {
        format!("forgemcp: error: {}", one_line(&self.to_string()))
    }
}

/// Where the storage root came from, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageOrigin {
    Option,
    Default,
}

impl fmt::Display for StorageOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StorageOrigin::Option => "--workspace-storage",
            StorageOrigin::Default => "default storage",
        })
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
    let admin = admin_config(&args)?;
    let mode = if args.open_admin {
        RunMode::OpenAdmin
    } else if args.admin_hub {
        RunMode::Hub
    } else {
        RunMode::Serve(serve_config(args, cwd, discovery_env)?)
    };
    Ok(Config { mode, admin, admin_env })
}

fn admin_config(args: &cli::Args) -> Result<AdminConfig, ConfigError> {
    let name = &args.admin_ipc;
    let problem = if name.is_empty() {
        Some("the name is empty")
    } else if name.starts_with('.') {
        Some("the name must not start with '.'")
    } else if name.len() > MAX_ADMIN_IPC_LEN {
        Some("the name is longer than 64 characters")
    } else if !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) {
        Some("use only ASCII letters, digits, '-', '_' and '.'")
    } else {
        None
    };
    if let Some(problem) = problem {
        return Err(ConfigError::AdminIpcName { name: name.clone(), problem });
    }
    Ok(AdminConfig::new(!args.no_admin, args.admin_port, name.clone()))
}

fn serve_config(
    args: cli::Args,
    cwd: &Path,
    discovery_env: impl FnOnce() -> DiscoveryEnv,
) -> Result<ServeConfig, ConfigError> {
    let workspace_root = workspace_root(args.workspace.as_deref(), cwd)?;
    let storage_root = storage_root(args.workspace_storage.as_deref(), &workspace_root, cwd)?;
    let progress_interval = match &args.progress_interval {
        Some(raw) => progress_interval(raw)?,
        None => DEFAULT_PROGRESS_INTERVAL,
    };
    let toolsets = user_toolsets(&args.toolsets, cwd)?;
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
    let cmake_profiles = cmake_profiles(&args.cmake_profiles, &cmake_toolset, &roots)?;
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
    Ok(ServeConfig::new(workspace_root, storage_root, progress_interval, discovery, cmake))
}

/// The toolset ids and names known before discovery: the System toolset and the user toolsets.
/// Visual Studio toolsets exist only on Windows and only discovery finds them, so there every
/// selector may name one.
struct KnownToolsets {
    names: Vec<String>,
    ids: Vec<String>,
}

impl KnownToolsets {
    fn new(user: &[UserToolsetSpec]) -> KnownToolsets {
        let mut names = vec![crate::toolchain::SYSTEM_NAME.to_owned()];
        let mut ids = vec![crate::toolchain::SYSTEM_ID.to_owned()];
        for toolset in user {
            names.push(toolset.name.clone());
            ids.push(crate::toolchain::ToolsetId::user(&toolset.name).as_str().to_owned());
        }
        KnownToolsets { names, ids }
    }

    /// Whether a toolset with this id or name can exist once discovery ran.
    fn may_exist(&self, value: &str) -> bool {
        cfg!(windows) || self.names.iter().chain(&self.ids).any(|known| known == value)
    }

    /// The names for a message (ids are `system` and `user-<sha256 of the name>`).
    fn shown(&self) -> String {
        let names: Vec<String> = self.names.iter().map(|name| quoted(name)).collect();
        format!("{}, or their ids", names.join(", "))
    }
}

fn workspace_root(given: Option<&Path>, cwd: &Path) -> Result<PathBuf, ConfigError> {
    let given = match given {
        Some(path) if path.as_os_str().is_empty() => return Err(ConfigError::EmptyPath { option: "--workspace" }),
        Some(path) => path,
        None => cwd,
    };
    let canonical = std::fs::canonicalize(cwd.join(given)).map_err(|reason| match reason.kind() {
        io::ErrorKind::NotFound => ConfigError::WorkspaceMissing { path: given.to_path_buf() },
        _ => ConfigError::WorkspaceUnreadable { path: given.to_path_buf(), reason },
    })?;
    if !canonical.is_dir() {
        return Err(ConfigError::WorkspaceNotDirectory { path: given.to_path_buf() });
    }
    Ok(canonical)
}

fn storage_root(given: Option<&Path>, project: &Path, cwd: &Path) -> Result<PathBuf, ConfigError> {
    // `path` is what messages show: the value as given, or the computed default.
    let (origin, path, absolute) = match given {
        Some(path) if path.as_os_str().is_empty() => {
            return Err(ConfigError::EmptyPath { option: "--workspace-storage" });
        }
        Some(path) => (StorageOrigin::Option, path.to_path_buf(), cwd.join(path)),
        None => {
            let (Some(parent), Some(name)) = (project.parent(), project.file_name()) else {
                return Err(ConfigError::NoDefaultStorage { path: project.to_path_buf() });
            };
            let mut dir_name = OsString::from(".");
            dir_name.push(name);
            dir_name.push(".forgemcp");
            let path = parent.join(dir_name);
            (StorageOrigin::Default, path.clone(), path)
        }
    };
    let storage = canonicalize_existing_prefix(&absolute).map_err(|reason| ConfigError::StorageUnreadable {
        origin,
        path: path.clone(),
        reason,
    })?;
    match std::fs::metadata(&storage) {
        Ok(meta) if !meta.is_dir() => return Err(ConfigError::StorageNotDirectory { origin, path }),
        Ok(_) => {}
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(reason) => return Err(ConfigError::StorageUnreadable { origin, path, reason }),
    }
    if storage == project {
        return Err(ConfigError::StorageIsProject { origin, path });
    }
    if let Err(problem) = creatable(&storage) {
        return Err(ConfigError::StorageNotCreatable { origin, path, problem });
    }
    if project.starts_with(&storage) {
        return Err(ConfigError::StorageContainsProject { origin, path, project: project.to_path_buf() });
    }
    if storage.starts_with(project) {
        return Err(ConfigError::StorageInsideProject { origin, path, project: project.to_path_buf() });
    }
    Ok(storage)
}

/// Whether the storage directory `storage` (absolute, links resolved in its existing part) exists
/// and is writable, or could be created, without creating anything: its nearest existing ancestor
/// must be a directory this process may write to and search (`access(2)`, which also sees read-only
/// file systems). Elsewhere than Unix only the ancestor's kind is checked.
fn creatable(storage: &Path) -> Result<(), String> {
    let mut existing = storage;
    loop {
        match std::fs::metadata(existing) {
            Ok(meta) if meta.is_dir() => break,
            Ok(_) => return Err(format!("{} is not a directory", shown_path(existing))),
            Err(err) if err.kind() == io::ErrorKind::NotFound => match existing.parent() {
                Some(parent) => existing = parent,
                None => return Err("no part of the path exists".to_owned()),
            },
            Err(err) => return Err(format!("{}: {err}", shown_path(existing))),
        }
    }
    #[cfg(unix)]
    {
        use rustix::fs::{Access, access};
        if let Err(err) = access(existing, Access::WRITE_OK | Access::EXEC_OK) {
            return Err(format!("{} is not writable: {}", shown_path(existing), io::Error::from(err)));
        }
    }
    Ok(())
}

/// Resolves links in the existing part of an absolute path and appends the missing rest lexically
/// (missing directories cannot be links, so `..` there simply drops the previous name). A link
/// whose target is missing is an error: the directory could not be created through it.
fn canonicalize_existing_prefix(path: &Path) -> io::Result<PathBuf> {
    let mut res = PathBuf::new();
    let mut exists = true;
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => res.push(component),
            Component::CurDir => {}
            // `res` is canonical (or below a missing directory), so its lexical parent is the real one.
            Component::ParentDir => {
                res.pop();
            }
            Component::Normal(name) => {
                res.push(name);
                if !exists {
                    continue;
                }
                match std::fs::canonicalize(&res) {
                    Ok(canonical) => res = canonical,
                    Err(err) if err.kind() == io::ErrorKind::NotFound => {
                        if std::fs::symlink_metadata(&res).is_ok() {
                            return Err(io::Error::other(format!("{} is a broken link", res.display())));
                        }
                        exists = false;
                    }
                    Err(err) => return Err(err),
                }
            }
        }
    }
    Ok(res)
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

fn user_toolsets(groups: &[Vec<String>], cwd: &Path) -> Result<Vec<UserToolsetSpec>, ConfigError> {
    let mut res: Vec<UserToolsetSpec> = Vec::with_capacity(groups.len());
    for group in groups {
        let Some((name, entries)) = group.split_first() else { continue };
        let name_problem = if name.trim().is_empty() {
            Some("the name is empty")
        } else if name.contains('=') {
            Some("the first value is the toolset name and must not contain '='")
        } else if name == "system" || name == "System" {
            Some("the name is reserved for the System toolset")
        } else {
            None
        };
        if let Some(problem) = name_problem {
            return Err(ConfigError::ToolsetName { name: name.clone(), problem });
        }
        if res.iter().any(|toolset| toolset.name == *name) {
            return Err(ConfigError::DuplicateToolset { name: name.clone() });
        }
        if entries.is_empty() {
            return Err(ConfigError::ToolsetName { name: name.clone(), problem: "no TOOL=PATH follows the name" });
        }
        let mut tools: Vec<UserTool> = Vec::with_capacity(entries.len());
        for entry in entries {
            let Some((tool, path)) = entry.split_once('=') else {
                return Err(ConfigError::ToolEntry { toolset: name.clone(), entry: entry.clone() });
            };
            let err_tool = || (name.clone(), tool.to_owned());
            let Some(spec) = spec::lookup(tool) else {
                let (toolset, tool) = err_tool();
                return Err(ConfigError::UnknownTool { toolset, tool });
            };
            if tools.iter().any(|known| known.spec.name == spec.name) {
                let (toolset, tool) = err_tool();
                return Err(ConfigError::RepeatedTool { toolset, tool });
            }
            if !spec.is_supported_here() {
                let (toolset, tool) = err_tool();
                return Err(ConfigError::WindowsOnlyTool { toolset, tool });
            }
            if path.is_empty() {
                let (toolset, tool) = err_tool();
                return Err(ConfigError::EmptyToolPath { toolset, tool });
            }
            let path = tool_path(name, tool, Path::new(path), cwd)?;
            tools.push(UserTool { spec, path });
        }
        res.push(UserToolsetSpec { name: name.clone(), tools });
    }
    Ok(res)
}

/// Makes a tool path absolute (against `cwd`, without resolving links) and checks that it names an
/// executable file.
fn tool_path(toolset: &str, tool: &str, given: &Path, cwd: &Path) -> Result<PathBuf, ConfigError> {
    let path: PathBuf = cwd.join(given).components().collect();
    let (toolset, tool) = (toolset.to_owned(), tool.to_owned());
    let meta = match std::fs::metadata(&path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Err(ConfigError::ToolPathMissing { toolset, tool, path: given.to_path_buf() });
        }
        Err(reason) => {
            return Err(ConfigError::ToolPathUnreadable { toolset, tool, path: given.to_path_buf(), reason });
        }
    };
    if !meta.is_file() {
        return Err(ConfigError::ToolPathNotFile { toolset, tool, path: given.to_path_buf() });
    }
    if let Err(hint) = check_executable(&path, &meta) {
        return Err(ConfigError::ToolPathNotExecutable { toolset, tool, path: given.to_path_buf(), hint });
    }
    Ok(path)
}

#[cfg(unix)]
fn check_executable(_path: &Path, meta: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt as _;
    match meta.permissions().mode() & 0o111 {
        0 => Err("no execute permission".to_owned()),
        _ => Ok(()),
    }
}

#[cfg(windows)]
fn check_executable(path: &Path, _meta: &std::fs::Metadata) -> Result<(), String> {
    let pathext = std::env::var_os("PATHEXT").and_then(|value| value.into_string().ok());
    let pathext = pathext.as_deref().unwrap_or(".COM;.EXE;.BAT;.CMD");
    let extension = path.extension().and_then(|ext| ext.to_str()).map(|ext| format!(".{ext}"));
    let listed = |ext: &str| pathext.split(';').any(|known| !known.is_empty() && known.eq_ignore_ascii_case(ext));
    match extension {
        Some(ext) if listed(&ext) => Ok(()),
        _ => Err(format!("its extension is not listed in PATHEXT {pathext}")),
    }
}

#[cfg(not(any(unix, windows)))]
fn check_executable(_path: &Path, _meta: &std::fs::Metadata) -> Result<(), String> {
    Ok(())
}

/// Profile keys in the order the help and error messages list them.
const PROFILE_KEYS: &[&str] = &[
    "toolset",
    "configuration",
    "generator",
    "build-directory",
    "c-compiler",
    "cxx-compiler",
    "toolchain-file",
    "define",
    "compiler-launcher",
    "sanitizers",
    "configure-preset",
    "build-preset",
    "test-preset",
];

/// A profile as it is collected, before deciding between plain and preset.
#[derive(Default)]
struct RawProfile {
    toolset: Option<String>,
    configuration: Option<String>,
    generator: Option<String>,
    build_directory: Option<QualifiedPath>,
    c_compiler: Option<&'static ToolSpec>,
    cxx_compiler: Option<&'static ToolSpec>,
    toolchain_file: Option<QualifiedPath>,
    defines: Vec<CmakeDefine>,
    compiler_launcher: Option<&'static ToolSpec>,
    sanitizers: Option<Vec<String>>,
    configure_presets: Vec<String>,
    build_presets: Vec<String>,
    test_presets: Vec<String>,
}

fn cmake_profiles(
    groups: &[Vec<String>],
    default_toolset: &str,
    roots: &Roots,
) -> Result<Vec<CmakeProfileSpec>, ConfigError> {
    let mut res: Vec<CmakeProfileSpec> = Vec::with_capacity(groups.len());
    for group in groups {
        let Some((name, entries)) = group.split_first() else { continue };
        if name.trim().is_empty() {
            return Err(ConfigError::ProfileName { name: name.clone(), problem: "the name is empty" });
        }
        if name.contains('=') {
            let problem = "the first value is the profile name and must not contain '='";
            return Err(ConfigError::ProfileName { name: name.clone(), problem });
        }
        if res.iter().any(|profile| profile.name == *name) {
            return Err(ConfigError::DuplicateProfile { name: name.clone() });
        }
        res.push(cmake_profile(name, entries, default_toolset, roots)?);
    }
    Ok(res)
}

fn cmake_profile(
    name: &str,
    entries: &[String],
    default_toolset: &str,
    roots: &Roots,
) -> Result<CmakeProfileSpec, ConfigError> {
    let profile = || name.to_owned();
    let mut raw = RawProfile::default();
    for entry in entries {
        let Some((key, value)) = entry.split_once('=') else {
            return Err(ConfigError::ProfileEntry { profile: profile(), entry: entry.clone() });
        };
        if !PROFILE_KEYS.contains(&key) {
            return Err(ConfigError::UnknownProfileKey { profile: profile(), key: key.to_owned() });
        }
        if value.is_empty() {
            return Err(ConfigError::EmptyProfileValue { profile: profile(), key: key.to_owned() });
        }
        let bad_value =
            |problem: String| ConfigError::ProfileValue { profile: profile(), entry: entry.clone(), problem };
        let repeated = || ConfigError::RepeatedProfileKey { profile: profile(), key: key.to_owned() };
        let set_once = |slot: &mut Option<String>| match slot {
            Some(_) => Err(repeated()),
            None => {
                *slot = Some(value.to_owned());
                Ok(())
            }
        };
        match key {
            "toolset" => set_once(&mut raw.toolset)?,
            "configuration" => set_once(&mut raw.configuration)?,
            "generator" => set_once(&mut raw.generator)?,
            "build-directory" | "toolchain-file" => {
                let path = profile_path(value).map_err(bad_value)?;
                let slot = if key == "build-directory" { &mut raw.build_directory } else { &mut raw.toolchain_file };
                if slot.is_some() {
                    return Err(repeated());
                }
                *slot = Some(path);
            }
            "c-compiler" | "cxx-compiler" => {
                let Some(spec) = spec::lookup(value).filter(|spec| spec.is_compiler()) else {
                    return Err(bad_value(format!(
                        "is not a built-in compiler (expected one of {})",
                        compiler_names()
                    )));
                };
                let slot = if key == "c-compiler" { &mut raw.c_compiler } else { &mut raw.cxx_compiler };
                if slot.is_some() {
                    return Err(repeated());
                }
                *slot = Some(spec);
            }
            "define" => {
                let Some((var, var_value)) = value.split_once('=') else {
                    return Err(bad_value("is not define=VAR=value".to_owned()));
                };
                if var.is_empty() {
                    return Err(bad_value("has an empty variable name".to_owned()));
                }
                if raw.defines.iter().any(|define| define.name == var) {
                    return Err(bad_value(format!("defines `{var}` a second time")));
                }
                raw.defines.push(CmakeDefine { name: var.to_owned(), value: var_value.to_owned() });
            }
            "compiler-launcher" => {
                let Some(spec) = spec::lookup(value).filter(|spec| spec.is_launcher()) else {
                    return Err(bad_value(format!(
                        "is not a built-in compiler launcher (expected one of {})",
                        spec::LAUNCHERS.join(", ")
                    )));
                };
                if raw.compiler_launcher.replace(spec).is_some() {
                    return Err(repeated());
                }
            }
            "sanitizers" => {
                let names: Vec<String> = value.split(',').map(|name| name.trim().to_owned()).collect();
                if let Some(bad) = names.iter().find(|name| !SANITIZERS.contains(&name.as_str())) {
                    return Err(bad_value(format!(
                        "names the unknown sanitizer `{bad}` (expected some of {})",
                        SANITIZERS.join(", ")
                    )));
                }
                if let Some((idx, _)) = names.iter().enumerate().find(|(idx, name)| names[..*idx].contains(name)) {
                    return Err(bad_value(format!("names `{}` twice", names[idx])));
                }
                let has = |name: &str| names.iter().any(|n| n == name);
                for (one, other) in [
                    ("address", "thread"),
                    ("address", "memory"),
                    ("thread", "memory"),
                    ("leak", "thread"),
                    ("leak", "memory"),
                ] {
                    if has(one) && has(other) {
                        return Err(bad_value(format!("combines `{one}` and `{other}`, which cannot run together")));
                    }
                }
                if raw.sanitizers.replace(names).is_some() {
                    return Err(repeated());
                }
            }
            "configure-preset" | "build-preset" | "test-preset" => {
                let list = match key {
                    "configure-preset" => &mut raw.configure_presets,
                    "build-preset" => &mut raw.build_presets,
                    _ => &mut raw.test_presets,
                };
                if list.iter().any(|preset| preset == value) {
                    return Err(bad_value("is given more than once".to_owned()));
                }
                list.push(value.to_owned());
            }
            // Unknown keys were refused above, before the empty-value check; keep both lists in sync.
            _ => return Err(ConfigError::UnknownProfileKey { profile: profile(), key: key.to_owned() }),
        }
    }
    let toolset = raw.toolset.take().unwrap_or_else(|| default_toolset.to_owned());
    let configuration = raw.configuration.take();
    let is_preset = !(raw.configure_presets.is_empty() && raw.build_presets.is_empty() && raw.test_presets.is_empty());
    let kind = if is_preset {
        let conflict = [
            ("generator", raw.generator.is_some()),
            ("c-compiler", raw.c_compiler.is_some()),
            ("cxx-compiler", raw.cxx_compiler.is_some()),
            ("toolchain-file", raw.toolchain_file.is_some()),
            ("define", !raw.defines.is_empty()),
            ("compiler-launcher", raw.compiler_launcher.is_some()),
            ("sanitizers", raw.sanitizers.is_some()),
        ]
        .into_iter()
        .find_map(|(key, set)| set.then_some(key));
        if let Some(key) = conflict {
            return Err(ConfigError::PresetConflict { profile: profile(), key: key.to_owned() });
        }
        ProfileKind::Presets(PresetProfile {
            build_directory: raw.build_directory,
            configure_presets: raw.configure_presets,
            build_presets: raw.build_presets,
            test_presets: raw.test_presets,
        })
    } else {
        if let Some(file) = &raw.toolchain_file {
            let exists = roots.lexical(file).is_some_and(|abs| abs.is_file());
            if !exists {
                let entry = format!("toolchain-file={file}");
                return Err(ConfigError::ProfileValue {
                    profile: profile(),
                    entry,
                    problem: "is not an existing file".to_owned(),
                });
            }
        }
        let build_directory = match raw.build_directory {
            Some(dir) => dir,
            None => {
                default_build_directory(name).ok_or_else(|| ConfigError::UnsafeProfileDirName { profile: profile() })?
            }
        };
        ProfileKind::Plain(PlainProfile {
            build_directory,
            generator: raw.generator.unwrap_or_else(|| DEFAULT_GENERATOR.to_owned()),
            c_compiler: raw.c_compiler,
            cxx_compiler: raw.cxx_compiler,
            toolchain_file: raw.toolchain_file,
            defines: raw.defines,
            compiler_launcher: raw.compiler_launcher,
            sanitizers: raw.sanitizers.unwrap_or_default(),
        })
    };
    Ok(CmakeProfileSpec { name: name.to_owned(), toolset, configuration, kind })
}

/// A `build-directory` or `toolchain-file` value: a workspace path in project/ or storage/, below
/// the area root.
fn profile_path(value: &str) -> Result<QualifiedPath, String> {
    let path = QualifiedPath::parse(value).map_err(|err| format!("is not a workspace path: {err}"))?;
    match path.area() {
        Area::Root => Err("must be in project/ or storage/, not root/".to_owned()),
        Area::Project | Area::Storage if path.is_area_root() => {
            Err(format!("must name a directory or file below {path}, not the root itself"))
        }
        Area::Project | Area::Storage => Ok(path),
    }
}

/// `storage/build/cmake-<name>`, when the name is a single safe directory name on every platform.
fn default_build_directory(name: &str) -> Option<QualifiedPath> {
    let safe = name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'))
        // Windows drops trailing dots, so `cmake-a.` and `cmake-a` would be the same directory.
        && !name.ends_with('.');
    if !safe {
        return None;
    }
    QualifiedPath::area_root(Area::Storage).join_name("build")?.join_name(&format!("cmake-{name}"))
}

fn tool_names() -> String {
    spec::names().collect::<Vec<_>>().join(", ")
}

fn compiler_names() -> String {
    spec::BUILTIN_TOOLS.iter().filter(|spec| spec.is_compiler()).map(|spec| spec.name).collect::<Vec<_>>().join(", ")
}

/// A name as it appears after an option: bare when it is one plain word, else in backticks.
fn shown(name: &str) -> String {
    let plain = !name.is_empty() && !name.chars().any(|c| c.is_whitespace() || c.is_control() || c == '`');
    if plain { name.to_owned() } else { quoted(name) }
}

/// A value in backticks with control characters escaped, so every message stays on one line.
fn quoted(value: &str) -> String {
    format!("`{}`", one_line(value))
}

fn shown_path(path: &Path) -> String {
    shown(&path.display().to_string())
}

fn one_line(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

#[cfg(test)]
mod tests {
    use std::fs;

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

    // Workspace root.

    #[test]
    fn relative_workspace_resolves_against_cwd() {
        let fx = Fixture::new();
        fs::create_dir_all(fx.root.join("proj/sub dir")).expect("sub directory");
        let serve = fx.serve(&["--workspace", "./sub dir/."]);
        assert_eq!(serve.workspace_root(), fx.root.join("proj/sub dir"));
        assert_eq!(serve.storage_root(), fx.root.join("proj/.sub dir.forgemcp"));
    }

    #[test]
    fn workspace_is_canonical() {
        let fx = Fixture::new();
        fs::create_dir(fx.root.join("other")).expect("other directory");
        let serve = fx.serve(&["--workspace", "../other/../proj"]);
        assert_eq!(serve.workspace_root(), fx.project());
    }

    #[cfg(unix)]
    #[test]
    fn workspace_link_is_resolved() {
        let fx = Fixture::new();
        std::os::unix::fs::symlink(fx.project(), fx.root.join("link")).expect("symlink");
        let serve = fx.serve(&["--workspace", s(&fx.root.join("link"))]);
        assert_eq!(serve.workspace_root(), fx.project());
        assert_eq!(serve.storage_root(), fx.root.join(".proj.forgemcp"));
    }

    #[test]
    fn missing_workspace() {
        let fx = Fixture::new();
        assert_eq!(fx.error(&["--workspace", "nope"]), "--workspace nope: no such directory");
        assert_eq!(fx.error(&["--workspace", "no pe"]), "--workspace `no pe`: no such directory");
    }

    #[test]
    fn workspace_must_be_a_directory() {
        let fx = Fixture::new();
        fx.file("proj/file.txt");
        assert_eq!(fx.error(&["--workspace", "file.txt"]), "--workspace file.txt: not a directory");
    }

    #[test]
    fn empty_workspace() {
        // clap already refuses `--workspace ""`; this covers `Args` built by other code.
        let fx = Fixture::new();
        let mut args = cli::Args::try_parse_from(["forgemcp"]).expect("no options");
        args.workspace = Some(PathBuf::new());
        let err = build(args, &fx.project()).expect_err("empty workspace");
        assert_eq!(err.to_string(), "--workspace: the path is empty");
    }

    #[cfg(unix)]
    #[test]
    fn filesystem_root_has_no_default_storage() {
        let fx = Fixture::new();
        assert_starts(&fx.error(&["--workspace", "/"]), "--workspace /: the project has no parent directory");
    }

    // Storage root.

    #[test]
    fn default_storage_is_not_created() {
        let fx = Fixture::new();
        let serve = fx.serve(&[]);
        assert!(!serve.storage_root().exists());
    }

    #[test]
    fn explicit_storage_resolves_against_cwd() {
        let fx = Fixture::new();
        let serve = fx.serve(&["--workspace-storage", "../store/./a/../b"]);
        assert_eq!(serve.storage_root(), fx.root.join("store/b"));
        assert!(!fx.root.join("store").exists());
    }

    #[test]
    fn explicit_storage_may_exist() {
        let fx = Fixture::new();
        fs::create_dir(fx.root.join("store")).expect("store");
        let serve = fx.serve(&["--workspace-storage", s(&fx.root.join("store"))]);
        assert_eq!(serve.storage_root(), fx.root.join("store"));
    }

    #[cfg(unix)]
    #[test]
    fn storage_links_are_resolved_up_to_the_first_missing_component() {
        let fx = Fixture::new();
        fs::create_dir(fx.root.join("real")).expect("real");
        std::os::unix::fs::symlink(fx.root.join("real"), fx.root.join("alias")).expect("symlink");
        let serve = fx.serve(&["--workspace-storage", "../alias/new/store"]);
        assert_eq!(serve.storage_root(), fx.root.join("real/new/store"));
    }

    #[cfg(unix)]
    #[test]
    fn storage_through_a_link_into_the_project_is_refused() {
        let fx = Fixture::new();
        std::os::unix::fs::symlink(fx.project(), fx.root.join("alias")).expect("symlink");
        assert_starts(
            &fx.error(&["--workspace-storage", "../alias/store"]),
            "--workspace-storage ../alias/store: the storage root must not lie inside the project",
        );
    }

    #[cfg(unix)]
    #[test]
    fn storage_broken_link_is_refused() {
        let fx = Fixture::new();
        std::os::unix::fs::symlink(fx.root.join("missing"), fx.root.join("dangling")).expect("symlink");
        let message = fx.error(&["--workspace-storage", "../dangling"]);
        assert_eq!(
            message,
            format!("--workspace-storage ../dangling: {} is a broken link", s(&fx.root.join("dangling")))
        );
    }

    #[test]
    fn storage_must_not_be_the_project() {
        let fx = Fixture::new();
        assert_eq!(
            fx.error(&["--workspace-storage", "."]),
            "--workspace-storage .: the storage root must not be the project root"
        );
    }

    #[test]
    fn storage_must_not_contain_the_project() {
        let fx = Fixture::new();
        let message = fx.error(&["--workspace-storage", ".."]);
        assert_eq!(
            message,
            format!("--workspace-storage ..: the storage root must not contain the project {}", s(&fx.project()))
        );
    }

    #[test]
    fn storage_must_not_lie_inside_the_project() {
        let fx = Fixture::new();
        assert_starts(
            &fx.error(&["--workspace-storage", ".forgemcp"]),
            "--workspace-storage .forgemcp: the storage root must not lie inside the project",
        );
    }

    #[test]
    fn storage_must_be_a_directory() {
        let fx = Fixture::new();
        fx.file("store");
        assert_eq!(
            fx.error(&["--workspace-storage", "../store"]),
            "--workspace-storage ../store: exists and is not a directory"
        );
    }

    #[test]
    fn default_storage_must_be_a_directory() {
        let fx = Fixture::new();
        fx.file(".proj.forgemcp");
        assert_starts(&fx.error(&[]), "default storage ");
        assert!(fx.error(&[]).ends_with(".proj.forgemcp: exists and is not a directory"));
    }

    #[test]
    fn empty_storage() {
        let fx = Fixture::new();
        let mut args = cli::Args::try_parse_from(["forgemcp"]).expect("no options");
        args.workspace_storage = Some(PathBuf::new());
        let err = build(args, &fx.project()).expect_err("empty storage");
        assert_eq!(err.to_string(), "--workspace-storage: the path is empty");
    }

    // Progress interval.

    #[test]
    fn progress_interval_values() {
        let fx = Fixture::new();
        for (raw, expected) in [
            ("2.5", Duration::from_millis(2500)),
            ("0", Duration::ZERO),
            ("-0", Duration::ZERO),
            ("0.2", Duration::from_millis(200)),
            ("1e2", Duration::from_secs(100)),
            ("3", Duration::from_secs(3)),
        ] {
            assert_eq!(fx.serve(&["--progress-interval", raw]).progress_interval(), expected, "{raw}");
        }
    }

    #[test]
    fn progress_interval_rejects_bad_values() {
        let fx = Fixture::new();
        for (raw, message) in [
            ("-1", "--progress-interval `-1`: must not be negative"),
            ("-0.5", "--progress-interval `-0.5`: must not be negative"),
            ("nan", "--progress-interval `nan`: must be a finite number of seconds"),
            ("inf", "--progress-interval `inf`: must be a finite number of seconds"),
            ("-inf", "--progress-interval `-inf`: must be a finite number of seconds"),
            ("1e400", "--progress-interval `1e400`: must be a finite number of seconds"),
            ("1e300", "--progress-interval `1e300`: is too large"),
            ("abc", "--progress-interval `abc`: not a number of seconds"),
            ("1s", "--progress-interval `1s`: not a number of seconds"),
            ("", "--progress-interval ``: not a number of seconds"),
        ] {
            assert_eq!(fx.error(&["--progress-interval", raw]), message);
        }
    }

    // User toolsets.

    #[test]
    fn toolset_paths_resolve_against_cwd() {
        let fx = Fixture::new();
        let clang = fx.tool("tools/llvm 20/clang");
        let cmake = fx.tool("proj/bin/cmake");
        let (clang_arg, cmake_arg) =
            (format!("clang={}", exe("../tools/llvm 20/clang")), format!("cmake={}", exe("./bin/cmake")));
        let serve = fx.serve(&["--toolset", "LLVM 20", &clang_arg, &cmake_arg]);
        let toolset = &serve.toolsets()[0];
        assert_eq!(toolset.name, "LLVM 20");
        let tools: Vec<_> = toolset.tools.iter().map(|tool| (tool.spec.name, tool.path.clone())).collect();
        assert_eq!(tools, [("clang", fx.root.join(exe("proj/../tools/llvm 20/clang"))), ("cmake", cmake)]);
        assert!(tools[0].1.is_absolute());
        assert_eq!(fs::canonicalize(&tools[0].1).expect("tool exists"), clang);
    }

    #[test]
    fn toolset_values_may_contain_equals_signs() {
        let fx = Fixture::new();
        let gxx = fx.tool("tools/a=b/g++");
        let serve = fx.serve(&["--toolset", "gnu", &format!("g++={}", s(&gxx))]);
        assert_eq!(serve.toolsets()[0].tools[0].path, gxx);
    }

    #[test]
    fn several_toolsets_stay_separate() {
        let fx = Fixture::new();
        let clang = fx.tool("tools/clang");
        let clangd = fx.tool("tools/clangd");
        let serve = fx.serve(&[
            "--toolset",
            "a",
            &format!("clang={}", s(&clang)),
            "--toolset",
            "b",
            &format!("clang={}", s(&clang)),
            &format!("clangd={}", s(&clangd)),
        ]);
        let shape: Vec<_> = serve
            .toolsets()
            .iter()
            .map(|t| (t.name.as_str(), t.tools.iter().map(|tool| tool.spec.name).collect::<Vec<_>>()))
            .collect();
        assert_eq!(shape, [("a", vec!["clang"]), ("b", vec!["clang", "clangd"])]);
    }

    #[cfg(unix)]
    #[test]
    fn toolset_links_are_kept() {
        let fx = Fixture::new();
        let clang = fx.tool("tools/clang-20");
        std::os::unix::fs::symlink(&clang, fx.root.join("tools/clang++")).expect("symlink");
        let serve = fx.serve(&["--toolset", "llvm", "clang++=../tools/clang++"]);
        assert_eq!(serve.toolsets()[0].tools[0].path, fx.root.join("proj/../tools/clang++"));
    }

    #[test]
    fn duplicate_toolset_name() {
        let fx = Fixture::new();
        fx.tool("tools/clang");
        let clang = format!("clang={}", exe("../tools/clang"));
        let message = fx.error(&["--toolset", "LLVM 20", &clang, "--toolset", "LLVM 20", &clang]);
        assert_eq!(message, "--toolset `LLVM 20`: the name is already used by another --toolset");
    }

    #[test]
    fn toolset_name_rules() {
        let fx = Fixture::new();
        fx.tool("tools/clang");
        assert_eq!(fx.error(&["--toolset", " ", "clang=../tools/clang"]), "--toolset ` `: the name is empty");
        assert_eq!(fx.error(&["--toolset", "", "clang=../tools/clang"]), "--toolset ``: the name is empty");
        assert_eq!(
            fx.error(&["--toolset", "clang=../tools/clang", "cmake=../tools/clang"]),
            "--toolset clang=../tools/clang: the first value is the toolset name and must not contain '='"
        );
        assert_eq!(
            fx.error(&["--toolset", "system", "clang=../tools/clang"]),
            "--toolset system: the name is reserved for the System toolset"
        );
        assert_eq!(
            fx.error(&["--toolset", "System", "clang=../tools/clang"]),
            "--toolset System: the name is reserved for the System toolset"
        );
        assert!(fx.build(&["--toolset", "SYSTEM", &format!("clang={}", exe("../tools/clang"))]).is_ok());
    }

    #[test]
    fn unknown_tool_name() {
        let fx = Fixture::new();
        fx.tool("tools/clang");
        let message = fx.error(&["--toolset", "llvm", "clang-query=../tools/clang"]);
        assert_eq!(
            message,
            "--toolset llvm: unknown tool `clang-query` (expected one of cmake, ctest, ninja, make, msbuild, cl, link, \
             clang, clang++, clang-cl, gcc, g++, lld, lld-link, clangd, clang-tidy, clang-format, git, lldb-dap, gdb, \
             cppvsdbg, ccache, sccache, distcc, icecc)"
        );
        assert_starts(
            &fx.error(&["--toolset", "llvm", "Clang=../tools/clang"]),
            "--toolset llvm: unknown tool `Clang`",
        );
    }

    #[test]
    fn repeated_tool() {
        let fx = Fixture::new();
        fx.tool("tools/clang");
        assert_eq!(
            fx.error(&["--toolset", "llvm", &format!("clang={}", exe("../tools/clang")), "clang=../tools/clang"]),
            "--toolset llvm: tool `clang` is given more than once"
        );
    }

    #[test]
    fn tool_entry_needs_equals_and_a_path() {
        let fx = Fixture::new();
        assert_eq!(fx.error(&["--toolset", "llvm", "clang"]), "--toolset llvm: `clang` is not TOOL=PATH");
        assert_eq!(fx.error(&["--toolset", "llvm", "clang="]), "--toolset llvm: `clang`= has an empty path");
    }

    #[test]
    fn missing_tool_path() {
        let fx = Fixture::new();
        assert_eq!(
            fx.error(&["--toolset", "llvm", "clang=../tools/none"]),
            "--toolset llvm: `clang` path ../tools/none does not exist"
        );
    }

    #[test]
    fn tool_path_must_be_a_file() {
        let fx = Fixture::new();
        assert_eq!(
            fx.error(&["--toolset", "llvm", "clang=../tools"]),
            "--toolset llvm: `clang` path ../tools is not a file"
        );
    }

    #[cfg(unix)]
    #[test]
    fn tool_path_must_be_executable() {
        let fx = Fixture::new();
        fx.file("tools/clang");
        assert_eq!(
            fx.error(&["--toolset", "llvm", "clang=../tools/clang"]),
            "--toolset llvm: `clang` path ../tools/clang is not executable (no execute permission)"
        );
    }

    #[cfg(windows)]
    #[test]
    fn tool_path_needs_a_pathext_suffix() {
        let fx = Fixture::new();
        fx.file("tools/clang.txt");
        fx.file("tools/clang.exe");
        assert_starts(
            &fx.error(&["--toolset", "llvm", "clang=../tools/clang.txt"]),
            "--toolset llvm: `clang` path ../tools/clang.txt is not executable",
        );
        assert!(fx.build(&["--toolset", "llvm", "clang=../tools/clang.EXE"]).is_ok());
    }

    #[cfg(not(windows))]
    #[test]
    fn windows_only_tools_are_refused_elsewhere() {
        let fx = Fixture::new();
        fx.tool("tools/link");
        for tool in ["cl", "link", "msbuild", "cppvsdbg"] {
            assert_eq!(
                fx.error(&["--toolset", "msvc", &format!("{tool}=../tools/link")]),
                format!("--toolset msvc: tool `{tool}` only exists on Windows")
            );
        }
    }

    // CMake toolset selector.

    #[test]
    fn cmake_toolset_selector() {
        let fx = Fixture::new();
        let clang = format!("clang={}", s(&fx.tool("tools/clang")));
        let llvm = ["--toolset", "LLVM 20", clang.as_str()];
        assert_eq!(fx.serve(&[&llvm[..], &["--cmake-toolset", "LLVM 20"]].concat()).cmake_toolset(), "LLVM 20");
        let id = crate::toolchain::ToolsetId::user("LLVM 20");
        assert_eq!(fx.serve(&[&llvm[..], &["--cmake-toolset", id.as_str()]].concat()).cmake_toolset(), id.as_str());
        assert_eq!(fx.serve(&["--cmake-toolset", "System"]).cmake_toolset(), "System");
        assert_eq!(fx.error(&["--cmake-toolset", " "]), "--cmake-toolset ` `: the toolset id or name is empty");
        if cfg!(not(windows)) {
            assert_eq!(
                fx.error(&[&llvm[..], &["--cmake-toolset", "nosuch"]].concat()),
                "--cmake-toolset `nosuch`: no toolset has this id or name (known: `System`, `LLVM 20`, or their ids)"
            );
            assert_eq!(
                fx.error(&["--cmake-profile", "a", "toolset=LLVM 20"]),
                "--cmake-profile a: toolset=`LLVM 20`: no toolset has this id or name (known: `System`, or their ids)"
            );
        }
    }

    // CMake profiles.

    #[track_caller]
    fn profile(fx: &Fixture, argv: &[&str]) -> CmakeProfileSpec {
        let serve = fx.serve(argv);
        assert_eq!(serve.cmake_profiles().len(), 1);
        serve.cmake_profiles()[0].clone()
    }

    #[track_caller]
    fn plain(spec: &CmakeProfileSpec) -> &PlainProfile {
        match &spec.kind {
            ProfileKind::Plain(plain) => plain,
            ProfileKind::Presets(_) => panic!("{} should be a plain profile", spec.name),
        }
    }

    #[track_caller]
    fn presets(spec: &CmakeProfileSpec) -> &PresetProfile {
        match &spec.kind {
            ProfileKind::Presets(presets) => presets,
            ProfileKind::Plain(_) => panic!("{} should be a preset profile", spec.name),
        }
    }

    fn qp(text: &str) -> QualifiedPath {
        QualifiedPath::parse(text).expect("valid test path")
    }

    #[test]
    fn plain_profile_defaults() {
        let fx = Fixture::new();
        let spec = profile(&fx, &["--cmake-profile", "Debug"]);
        assert_eq!(spec.name, "Debug");
        assert_eq!(spec.toolset, "system");
        assert_eq!(spec.configuration, None);
        let plain = plain(&spec);
        assert_eq!(plain.build_directory.to_string(), "storage/build/cmake-Debug");
        assert_eq!(plain.generator, "Ninja");
        assert_eq!((plain.c_compiler, plain.cxx_compiler, &plain.toolchain_file), (None, None, &None));
        assert!(plain.defines.is_empty());
        assert_eq!(spec.build_directory(), Some(&qp("storage/build/cmake-Debug")));
    }

    #[test]
    fn profile_toolset_defaults_to_cmake_toolset() {
        let fx = Fixture::new();
        let clang = format!("clang={}", s(&fx.tool("tools/clang")));
        let serve = fx.serve(&[
            "--toolset",
            "LLVM 20",
            &clang,
            "--cmake-toolset",
            "LLVM 20",
            "--cmake-profile",
            "a",
            "--cmake-profile",
            "b",
            "toolset=system",
        ]);
        let toolsets: Vec<_> = serve.cmake_profiles().iter().map(|p| p.toolset.as_str()).collect();
        assert_eq!(toolsets, ["LLVM 20", "system"]);
    }

    #[test]
    fn plain_profile_with_every_key() {
        let fx = Fixture::new();
        fx.file("proj/cmake/toolchain.cmake");
        let clang = format!("clang={}", s(&fx.tool("tools/clang")));
        let spec = profile(
            &fx,
            &[
                "--toolset",
                "LLVM 20",
                &clang,
                "--cmake-profile",
                "debug",
                "toolset=LLVM 20",
                "configuration=Debug",
                "generator=Ninja Multi-Config",
                "build-directory=build/debug/",
                "c-compiler=clang",
                "cxx-compiler=clang++",
                "toolchain-file=./cmake/toolchain.cmake",
                "define=CMAKE_CXX_FLAGS=-O0 -g -DX=1",
                "define=EMPTY=",
                "define=OPT:BOOL=ON",
            ],
        );
        assert_eq!(spec.toolset, "LLVM 20");
        assert_eq!(spec.configuration.as_deref(), Some("Debug"));
        let plain = plain(&spec);
        assert_eq!(plain.build_directory.to_string(), "project/build/debug");
        assert_eq!(plain.generator, "Ninja Multi-Config");
        assert_eq!(plain.c_compiler.map(|t| t.name), Some("clang"));
        assert_eq!(plain.cxx_compiler.map(|t| t.name), Some("clang++"));
        assert_eq!(
            plain.toolchain_file.as_ref().map(ToString::to_string).as_deref(),
            Some("project/cmake/toolchain.cmake")
        );
        let defines: Vec<_> = plain.defines.iter().map(|d| (d.name.as_str(), d.value.as_str())).collect();
        assert_eq!(defines, [("CMAKE_CXX_FLAGS", "-O0 -g -DX=1"), ("EMPTY", ""), ("OPT:BOOL", "ON")]);
    }

    #[test]
    fn toolchain_file_in_storage() {
        let fx = Fixture::new();
        fx.file(".proj.forgemcp/tc/arm.cmake");
        let spec = profile(&fx, &["--cmake-profile", "arm", "toolchain-file=storage/tc/arm.cmake"]);
        assert_eq!(plain(&spec).toolchain_file, Some(qp("storage/tc/arm.cmake")));
    }

    #[test]
    fn toolchain_file_must_exist() {
        let fx = Fixture::new();
        fs::create_dir(fx.root.join("proj/cmake")).expect("directory");
        assert_eq!(
            fx.error(&["--cmake-profile", "arm", "toolchain-file=project/missing.cmake"]),
            "--cmake-profile arm: `toolchain-file=project/missing.cmake` is not an existing file"
        );
        assert_eq!(
            fx.error(&["--cmake-profile", "arm", "toolchain-file=cmake"]),
            "--cmake-profile arm: `toolchain-file=project/cmake` is not an existing file"
        );
        assert_starts(
            &fx.error(&["--cmake-profile", "arm", "toolchain-file=root/etc/tc.cmake"]),
            "--cmake-profile arm: `toolchain-file=root/etc/tc.cmake` must be in project/ or storage/",
        );
    }

    #[test]
    fn build_directory_rules() {
        let fx = Fixture::new();
        let dir = |value: &str| plain(&profile(&fx, &["--cmake-profile", "p", value])).build_directory.to_string();
        assert_eq!(dir("build-directory=storage/build/x"), "storage/build/x");
        assert_eq!(dir("build-directory=./storage/x"), "project/storage/x");
        assert_eq!(dir("build-directory=project/out/"), "project/out");
        for (value, problem) in [
            ("build-directory=root/tmp/b", "must be in project/ or storage/, not root/"),
            ("build-directory=project/", "must name a directory or file below project/, not the root itself"),
            ("build-directory=storage", "must name a directory or file below storage/, not the root itself"),
            ("build-directory=../b", "is not a workspace path: `..` segments are not allowed"),
            ("build-directory=/abs/b", "is not a workspace path: absolute paths need the explicit `root/` prefix"),
            ("build-directory=a//b", "is not a workspace path: repeated separators (`//`) are not allowed"),
        ] {
            assert_eq!(fx.error(&["--cmake-profile", "p", value]), format!("--cmake-profile p: `{value}` {problem}"));
        }
    }

    #[test]
    fn compilers_must_be_built_in_compilers() {
        let fx = Fixture::new();
        let spec = profile(&fx, &["--cmake-profile", "p", "c-compiler=gcc", "cxx-compiler=g++"]);
        assert_eq!(plain(&spec).c_compiler.map(|t| t.name), Some("gcc"));
        for value in ["c-compiler=cmake", "cxx-compiler=clang-19", "cxx-compiler=/usr/bin/g++"] {
            assert_eq!(
                fx.error(&["--cmake-profile", "p", value]),
                format!(
                    "--cmake-profile p: `{value}` is not a built-in compiler (expected one of cl, clang, clang++, clang-cl, gcc, g++)"
                )
            );
        }
    }

    #[test]
    fn unknown_profile_key() {
        let fx = Fixture::new();
        assert_eq!(
            fx.error(&["--cmake-profile", "debug", "generater=Ninja"]),
            "--cmake-profile debug: unknown key `generater` (expected one of toolset, configuration, generator, \
             build-directory, c-compiler, cxx-compiler, toolchain-file, define, compiler-launcher, sanitizers, \
             configure-preset, build-preset, test-preset)"
        );
    }

    #[test]
    fn profile_entry_needs_equals_and_a_value() {
        let fx = Fixture::new();
        assert_eq!(fx.error(&["--cmake-profile", "debug", "Ninja"]), "--cmake-profile debug: `Ninja` is not KEY=VALUE");
        for key in PROFILE_KEYS {
            assert_eq!(
                fx.error(&["--cmake-profile", "debug", &format!("{key}=")]),
                format!("--cmake-profile debug: `{key}`= has an empty value")
            );
        }
    }

    #[test]
    fn single_keys_at_most_once() {
        let fx = Fixture::new();
        fx.file("proj/tc.cmake");
        for entry in [
            "toolset=a",
            "configuration=Debug",
            "generator=Ninja",
            "build-directory=storage/b",
            "c-compiler=clang",
            "cxx-compiler=clang++",
            "toolchain-file=tc.cmake",
        ] {
            let key = entry.split_once('=').map(|(key, _)| key).unwrap_or(entry);
            assert_eq!(
                fx.error(&["--cmake-profile", "p", entry, entry]),
                format!("--cmake-profile p: `{key}` is given more than once")
            );
        }
    }

    #[test]
    fn define_rules() {
        let fx = Fixture::new();
        assert_eq!(
            fx.error(&["--cmake-profile", "p", "define=FOO"]),
            "--cmake-profile p: `define=FOO` is not define=VAR=value"
        );
        assert_eq!(
            fx.error(&["--cmake-profile", "p", "define==1"]),
            "--cmake-profile p: `define==1` has an empty variable name"
        );
        assert_eq!(
            fx.error(&["--cmake-profile", "p", "define=A=1", "define=A=2"]),
            "--cmake-profile p: `define=A=2` defines `A` a second time"
        );
    }

    #[test]
    fn profile_name_rules() {
        let fx = Fixture::new();
        assert_eq!(fx.error(&["--cmake-profile="]), "--cmake-profile ``: the name is empty");
        assert_eq!(
            fx.error(&["--cmake-profile", "toolset=x"]),
            "--cmake-profile toolset=x: the first value is the profile name and must not contain '='"
        );
        assert_eq!(
            fx.error(&["--cmake-profile", "debug", "--cmake-profile", "debug", "configuration=Debug"]),
            "--cmake-profile debug: the name is already used by another --cmake-profile"
        );
        let serve = fx.serve(&["--cmake-profile", "debug", "--cmake-profile", "Debug"]);
        assert_eq!(serve.cmake_profiles().len(), 2);
    }

    #[test]
    fn default_build_directory_needs_a_safe_name() {
        let fx = Fixture::new();
        for name in ["my profile", "a/b", "x.", "ü", "a:b", "..", "."] {
            assert_eq!(
                fx.error(&["--cmake-profile", name]),
                format!(
                    "--cmake-profile {}: the name cannot form the default build directory storage/build/cmake-<name> \
                     (use letters, digits, '-', '_', '.', '+') or set build-directory",
                    shown(name)
                )
            );
        }
        let spec = profile(&fx, &["--cmake-profile", "my profile", "build-directory=storage/build/mine"]);
        assert_eq!(spec.name, "my profile");
        assert_eq!(plain(&spec).build_directory.to_string(), "storage/build/mine");
        for name in ["gcc-12.2_release+lto", "-x", ".hidden"] {
            let spec = profile(&fx, &[&format!("--cmake-profile={name}")]);
            assert_eq!(plain(&spec).build_directory.to_string(), format!("storage/build/cmake-{name}"));
        }
    }

    #[test]
    fn preset_profile() {
        let fx = Fixture::new();
        let spec = profile(
            &fx,
            &[
                "--cmake-profile",
                "native",
                "toolset=system",
                "configure-preset=ninja-debug",
                "build-preset=build-ninja-debug",
                "build-preset=build-all",
                "test-preset=test-ninja-debug",
                "configuration=Debug",
                "build-directory=project/build/ninja-debug",
            ],
        );
        assert_eq!(spec.configuration.as_deref(), Some("Debug"));
        let presets = presets(&spec);
        assert_eq!(presets.configure_presets, ["ninja-debug"]);
        assert_eq!(presets.build_presets, ["build-ninja-debug", "build-all"]);
        assert_eq!(presets.test_presets, ["test-ninja-debug"]);
        assert_eq!(spec.build_directory(), Some(&qp("project/build/ninja-debug")));
    }

    #[test]
    fn preset_profile_without_build_directory() {
        let fx = Fixture::new();
        let spec = profile(&fx, &["--cmake-profile", "any name", "test-preset=t"]);
        assert_eq!(presets(&spec).build_directory, None);
        assert_eq!(spec.build_directory(), None);
    }

    #[test]
    fn preset_profile_refuses_configure_settings() {
        let fx = Fixture::new();
        fx.file("proj/tc.cmake");
        for entry in
            ["generator=Ninja", "c-compiler=clang", "cxx-compiler=clang++", "toolchain-file=tc.cmake", "define=A=1"]
        {
            let key = entry.split_once('=').map(|(key, _)| key).unwrap_or(entry);
            for preset in ["configure-preset=c", "build-preset=b", "test-preset=t"] {
                assert_eq!(
                    fx.error(&["--cmake-profile", "native", entry, preset]),
                    format!(
                        "--cmake-profile native: a preset profile takes `{key}` from its configure preset; drop `{key}` or the preset keys"
                    )
                );
            }
        }
    }

    #[test]
    fn preset_names_are_not_repeated() {
        let fx = Fixture::new();
        assert_eq!(
            fx.error(&["--cmake-profile", "native", "configure-preset=a", "configure-preset=a"]),
            "--cmake-profile native: `configure-preset=a` is given more than once"
        );
        let spec = profile(&fx, &["--cmake-profile", "native", "configure-preset=a", "build-preset=a"]);
        assert_eq!(presets(&spec).build_presets, ["a"]);
    }

    #[test]
    fn profiles_keep_command_line_order() {
        let fx = Fixture::new();
        let serve = fx.serve(&["--cmake-profile", "release", "--cmake-profile", "debug"]);
        let names: Vec<_> = serve.cmake_profiles().iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["release", "debug"]);
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
}

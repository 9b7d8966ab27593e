//! Every way operator input can be invalid, and how values appear in the messages.
//!
//! Architecture invariant: every message names the option and the offending value, is lowercase,
//! has no final period, and fits on one line (control characters are escaped).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use super::cmake_profiles::PROFILE_KEYS;
use crate::toolchain::spec;

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
    #[error("--exclude-dir {}: {problem}", shown(value))]
    ExcludeDir { value: String, problem: &'static str },

    #[error("--journal-limit {}: must be a whole number of MiB from 1 to 1048576", quoted(value))]
    JournalLimit { value: String },

    #[error("--compile-commands {}: {problem}", quoted(value))]
    CompileCommands { value: String, problem: String },

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
    /// The one line `main` prints before exiting with [`super::EXIT_CONFIG_ERROR`].
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

pub(super) fn tool_names() -> String {
    spec::names().collect::<Vec<_>>().join(", ")
}

pub(super) fn compiler_names() -> String {
    spec::BUILTIN_TOOLS.iter().filter(|spec| spec.is_compiler()).map(|spec| spec.name).collect::<Vec<_>>().join(", ")
}

/// A name as it appears after an option: bare when it is one plain word, else in backticks.
pub(super) fn shown(name: &str) -> String {
    let plain = !name.is_empty() && !name.chars().any(|c| c.is_whitespace() || c.is_control() || c == '`');
    if plain { name.to_owned() } else { quoted(name) }
}

/// A value in backticks with control characters escaped, so every message stays on one line.
pub(super) fn quoted(value: &str) -> String {
    format!("`{}`", one_line(value))
}

pub(super) fn shown_path(path: &Path) -> String {
    shown(&path.display().to_string())
}

pub(super) fn one_line(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

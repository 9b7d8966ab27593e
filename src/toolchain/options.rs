//! What toolchain discovery is given: the project root as the probes' working directory, the
//! environment variables it reads, the operator's user toolsets and the probe time limit.
//!
//! These are plain values: `config` validates the command line and builds them (it is the only
//! place that reads the server's environment), tests build them directly.
//!
//! Architecture invariant: this module reads nothing (no environment, no file system) and knows
//! nothing about the command line; a [`UserToolsetSpec`] holds what was already validated.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use super::spec::ToolSpec;

/// What discovery needs to know.
#[derive(Debug, Clone)]
pub struct DiscoveryOptions {
    /// Working directory of probes and captures: the project root (the process service accepts
    /// nothing outside the workspace).
    pub cwd: PathBuf,
    /// `PATH`, `PATHEXT`, `ProgramFiles(x86)` as the server saw them at startup.
    pub env: DiscoveryEnv,
    /// `--toolset` groups, validated (unique names, known tools, absolute existing paths).
    pub user_toolsets: Vec<UserToolsetSpec>,
    /// Total time limit of one version probe.
    pub probe_timeout: Duration,
}

/// The server's environment variables that toolchain discovery reads, captured once at startup
/// (empty when a configuration is built for tests).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiscoveryEnv {
    /// `PATH`: the System toolset is found here.
    pub path: Option<OsString>,
    /// `PATHEXT`: executable suffixes on Windows.
    pub pathext: Option<OsString>,
    /// `ProgramFiles(x86)`: where the Visual Studio Installer keeps vswhere (Windows).
    pub program_files_x86: Option<OsString>,
}

/// One `--toolset NAME TOOL=PATH…`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UserToolsetSpec {
    /// The name as given: non-empty, no `=`, unique among user toolsets.
    pub name: String,
    /// Tools in command-line order; each built-in tool at most once; at least one.
    pub tools: Vec<UserTool>,
}

/// One `TOOL=PATH` of a user toolset.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UserTool {
    pub spec: &'static ToolSpec,
    /// Absolute path of an existing executable file. Links are kept as given (not resolved) because
    /// some tools behave by the name they are started under (`clang++` → `clang`).
    pub path: PathBuf,
}

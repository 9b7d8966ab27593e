//! The CMake service: operator profiles, configure, build, CTest and direct test runs, File API input
//! tracking, and the compilation contexts it publishes.
//!
//! Every operation resolves the profiles afresh (explicit `--cmake-profile`s, else the automatic
//! `presets` or `Debug`/`Release` profiles), then runs one execution per plain profile or per preset,
//! sequentially; one failed execution never suppresses the next. A failed execution is data (its
//! `error`, with the exit code), never an `Err`; only selection failures (unknown or repeated profile
//! names, a failed preset listing, bad arguments) are errors.
//!
//! Architecture invariant: every cmake, ctest and test executable run goes through `process` (so it
//! is listed with its transcript); commands run in the project root with the profile's toolset
//! environment, except `cmake_run_test`, which inherits the server's environment.
//! Architecture invariant: one lock serializes configure, build, test and direct test runs; while
//! CMake runs in a known build directory, that directory is a protected path.
//! Architecture invariant: contexts are confirmed only by a new File API reply in this lifetime
//! (configure, or a build that regenerated) and withdrawn when a workspace mutation changes a
//! recorded input (`contexts.rs`); this module knows nothing about clangd or MCP.

mod build;
mod build_dir;
pub mod cache;
pub mod command;
mod configure;
pub mod contexts;
pub mod ctest;
pub mod diagnostics;
pub mod file_api;
pub mod inputs;
pub mod ninja;
pub mod options;
mod output;
pub mod profile;
mod run_test;
pub mod sanitizer;
mod testing;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::watch;

pub use contexts::{CompilationContext, Contexts, context_id};
pub use ctest::{TestCase, TestStatus};
pub use diagnostics::Severity;
pub use options::{CmakeDefine, CmakeOptions, CmakeProfileSpec, PlainProfile, PresetProfile, ProfileKind};
pub use profile::{Mode, PresetLists, Profile};
pub use run_test::{TestRun, resolve_test_run};

use crate::call::Call;
use crate::process::{ProcessId, ProcessService, Stream, Timeout};
use crate::text::error_chain;
use crate::toolchain::{Tool, ToolchainService, Toolset, ToolsetId, tool_command};
use crate::workspace::WorkspaceService;
use crate::workspace::observer::MutationObserver;
use crate::workspace::path::{QualifiedPath, Roots};
use cache::Cache;
use contexts::Tracker;
use output::{Reporter, failure};
use profile::{Definition, Execution, Operation, PRESET_FILES};

/// Who protects build directories while CMake runs in them (named in workspace refusals).
pub const PROTECTION_OWNER: &str = "CMake";
/// The default limits of one CMake, CTest or test execution.
pub const DEFAULT_TIMEOUT: Timeout = Timeout { total: Some(Duration::from_secs(600)), idle: None };
/// Limit of one `cmake --list-presets=all`.
const LIST_PRESETS_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest error summary taken from a command's output.
const SUMMARY_CHARS: usize = 300;

/// Failures that refuse a whole call (tool errors). Failed executions are results, not errors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("profile `{0}` is named more than once")]
    DuplicateProfile(String),
    #[error("no CMake profile is named {names}; cmake_profiles lists them")]
    UnknownProfiles { names: String },
    #[error("cannot list the CMake presets of toolset `{toolset}`: {reason}")]
    PresetListing { toolset: String, reason: String },
    #[error("profile `{profile}` cannot be used: {reason}")]
    Profile { profile: String, reason: String },
    #[error("invalid argument `{argument}`: {reason}")]
    Argument { argument: &'static str, reason: String },
}

/// One configure execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigureOutcome {
    pub profile: String,
    pub preset: Option<String>,
    pub build_directory: Option<QualifiedPath>,
    pub compilation_database: Option<QualifiedPath>,
    /// Something the agent should know about a successful configure (a build directory outside
    /// the roots).
    pub note: Option<String>,
    pub error: Option<String>,
    pub process_id: Option<ProcessId>,
}

/// One build execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildOutcome {
    pub profile: String,
    pub preset: Option<String>,
    pub configuration: Option<String>,
    /// From the last `[n/m]` line.
    pub completed_steps: Option<u64>,
    pub total_steps: Option<u64>,
    /// The build tool said there was nothing to do.
    pub up_to_date: bool,
    /// Compiler and linker messages of the transcript, in order (at most
    /// [`diagnostics::MAX_DIAGNOSTICS`]).
    pub diagnostics: Vec<BuildDiagnostic>,
    pub error: Option<String>,
    pub process_id: Option<ProcessId>,
}

/// A compiler or linker message of a build, located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildDiagnostic {
    /// `None` when the tool named no file (or one that does not exist).
    pub path: Option<QualifiedPath>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub severity: Severity,
    pub message: String,
    pub code: Option<String>,
    /// The CMake target whose build step printed it, when the codemodel knows it.
    pub target: Option<String>,
}

/// One CTest execution.
#[derive(Debug, Clone, PartialEq)]
pub struct TestOutcome {
    pub profile: String,
    pub preset: Option<String>,
    pub configuration: Option<String>,
    pub tests: Vec<TestCase>,
    pub error: Option<String>,
    pub process_id: Option<ProcessId>,
}

/// One direct test executable run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunTestOutcome {
    pub executable: QualifiedPath,
    pub arguments: Vec<String>,
    pub cwd: QualifiedPath,
    pub error: Option<String>,
    pub process_id: Option<ProcessId>,
}

/// Build arguments of `cmake_build`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildRequest {
    /// Empty: the default target.
    pub targets: Vec<String>,
    pub parallel: Option<u32>,
}

/// Test arguments of `cmake_test`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestRequest {
    /// Exact test names; empty: every test.
    pub names: Vec<String>,
    pub parallel: Option<u32>,
}

/// The CMake service.
pub struct CmakeService {
    workspace: Arc<WorkspaceService>,
    processes: ProcessService,
    toolchain: Arc<ToolchainService>,
    options: CmakeOptions,
    tracker: Arc<Tracker>,
    lock: tokio::sync::Mutex<()>,
    /// Build directories CMake reported for configure presets in this lifetime.
    learned: Mutex<HashMap<(ToolsetId, String), QualifiedPath>>,
    /// The "Build files have been written to:" directory of the running configure, by label.
    written_to: Arc<Mutex<HashMap<String, PathBuf>>>,
}

/// A profile after resolution, or the reason it cannot run (`(profile name, reason)`).
type Selected = Result<Profile, (String, String)>;

impl CmakeService {
    pub fn new(
        workspace: Arc<WorkspaceService>,
        processes: ProcessService,
        toolchain: Arc<ToolchainService>,
        options: CmakeOptions,
    ) -> CmakeService {
        let tracker = Arc::new(Tracker::new(workspace.roots().clone()));
        CmakeService {
            workspace,
            processes,
            toolchain,
            options,
            tracker,
            lock: tokio::sync::Mutex::new(()),
            learned: Mutex::new(HashMap::new()),
            written_to: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// The input checks to register with the workspace (`WorkspaceService::add_observer`).
    pub fn observer(&self) -> Arc<dyn MutationObserver> {
        self.tracker.clone()
    }

    /// The contexts the last withdrawing mutation of `path` withdrew, once.
    pub fn take_withdrawn_by(&self, path: &crate::workspace::path::QualifiedPath) -> Vec<String> {
        self.tracker.take_withdrawn_by(path)
    }

    /// The published compilation contexts: the current set and every change.
    pub fn contexts(&self) -> watch::Receiver<Contexts> {
        self.tracker.subscribe()
    }

    fn roots(&self) -> &Roots {
        self.workspace.roots()
    }

    // -----------------------------------------------------------------------------------------
    // Profiles.

    /// The definitions in force: the operator's, or the automatic ones for this project.
    fn definitions(&self) -> Vec<Definition> {
        if !self.options.profiles.is_empty() {
            return self.options.profiles.iter().map(Definition::explicit).collect();
        }
        let has_preset_file = PRESET_FILES.iter().any(|name| self.roots().project().join(name).is_file());
        Definition::automatic(&self.options.toolset, has_preset_file)
    }

    /// Resolves the profiles named in `names` (all for `None` or an empty list), in profile order.
    async fn select(&self, names: Option<&[String]>, call: &Call) -> Result<Vec<Selected>, Error> {
        let chosen = choose(self.definitions(), names)?;
        let mut listings: HashMap<ToolsetId, PresetLists> = HashMap::new();
        let mut res = Vec::with_capacity(chosen.len());
        for definition in chosen {
            let toolset = match self.toolchain.find(&definition.toolset).await {
                Ok(toolset) => toolset,
                Err(err) => {
                    res.push(Err((definition.name, error_chain(&err))));
                    continue;
                }
            };
            if definition.uses_presets() && !listings.contains_key(toolset.id()) {
                let listed = self.list_presets(&toolset, call).await?;
                listings.insert(toolset.id().clone(), listed);
            }
            let listed = definition.uses_presets().then(|| listings.get(toolset.id())).flatten();
            res.push(definition.resolve(toolset, listed).map_err(|reason| (definition.name.clone(), reason)));
        }
        Ok(res)
    }

    /// `cmake --list-presets=all` of `toolset`, in the project root.
    async fn list_presets(&self, toolset: &Toolset, call: &Call) -> Result<PresetLists, Error> {
        let failed = |reason: String| Error::PresetListing { toolset: toolset.id().to_string(), reason };
        let cmake = toolset.tool("cmake").ok_or_else(|| failed("the toolset has no cmake".to_owned()))?;
        let stdout = Arc::new(Mutex::new(String::new()));
        let sink = stdout.clone();
        let spec = tool_command(toolset, &cmake.path, self.roots().project())
            .args(command::list_presets())
            .timeout(Timeout::total(LIST_PRESETS_TIMEOUT))
            .on_line(Arc::new(move |stream, line| {
                if stream == Stream::Stdout {
                    let mut out = sink.lock();
                    out.push_str(line);
                    out.push('\n');
                }
            }));
        let completed = self.processes.run(spec, call).await.map_err(|err| failed(error_chain(&err)))?;
        if let Some(reason) = failure("cmake --list-presets=all", &completed, None) {
            return Err(failed(format!("{reason}; its output: process_get(process_id={})", completed.id)));
        }
        let text = stdout.lock().clone();
        Ok(profile::parse_list_presets(&text))
    }

    /// `cmake_profiles`: every profile, resolved. Progress: `(0, "Reading CMake profiles")`, then
    /// `(k, "Read <name>")`.
    pub async fn profiles(&self, call: &Call) -> Result<Vec<Profile>, Error> {
        call.progress.report(0.0, None, "Reading CMake profiles");
        let mut res = Vec::new();
        for (idx, selected) in self.select(None, call).await?.into_iter().enumerate() {
            let profile = selected.map_err(|(profile, reason)| Error::Profile { profile, reason })?;
            call.progress.report_with((idx + 1) as f64, None, || format!("Read {}", profile.name));
            res.push(profile);
        }
        Ok(res)
    }

    /// Selects profiles and expands them into executions of `operation`; unusable profiles and
    /// executions come back as errors in place.
    async fn executions(
        &self,
        names: Option<&[String]>,
        operation: Operation,
        reporter: &Reporter,
        call: &Call,
    ) -> Result<Vec<(Selected, Result<Execution, String>)>, Error> {
        let mut res = Vec::new();
        for selected in self.select(names, call).await? {
            match &selected {
                Err((name, reason)) => {
                    reporter.say(name, reason);
                    let reason = reason.clone();
                    res.push((selected, Err(reason)));
                }
                Ok(profile) => match profile.executions(operation) {
                    Ok(executions) => {
                        res.extend(executions.into_iter().map(|execution| (Ok(profile.clone()), Ok(execution))));
                    }
                    Err(reason) => {
                        reporter.say(&profile.name, &reason);
                        res.push((selected.clone(), Err(reason)));
                    }
                },
            }
        }
        Ok(res)
    }
}

/// The definitions named in `names` (all for `None` or `[]`), in definition order.
fn choose(definitions: Vec<Definition>, names: Option<&[String]>) -> Result<Vec<Definition>, Error> {
    let Some(names) = names.filter(|names| !names.is_empty()) else { return Ok(definitions) };
    for (idx, name) in names.iter().enumerate() {
        if names[..idx].contains(name) {
            return Err(Error::DuplicateProfile(name.clone()));
        }
    }
    let unknown: Vec<String> =
        names.iter().filter(|name| !definitions.iter().any(|d| d.name == **name)).map(|n| format!("`{n}`")).collect();
    if !unknown.is_empty() {
        return Err(Error::UnknownProfiles { names: unknown.join(", ") });
    }
    Ok(definitions.into_iter().filter(|d| names.contains(&d.name)).collect())
}

/// The name and reason of an unusable profile or execution.
fn unusable(profile: Selected, execution: Result<Execution, String>) -> (String, String) {
    match (profile, execution) {
        (Err((name, reason)), _) => (name, reason),
        (Ok(profile), Err(reason)) => (profile.name, reason),
        (Ok(profile), Ok(_)) => (profile.name, "unexpected state".to_owned()),
    }
}

fn preset_of(execution: &Execution) -> Option<&str> {
    match execution {
        Execution::Preset(preset) => Some(preset),
        Execution::Directory(_) => None,
    }
}

/// `<profile>` or `<profile>/<preset>`, the prefix of progress messages.
fn label(profile: &Profile, preset: Option<&str>) -> String {
    match preset {
        Some(preset) => format!("{}/{preset}", profile.name),
        None => profile.name.clone(),
    }
}

/// The toolset's tool `name`; the error says which setting needed it (`why`, "… which <why>").
fn required_tool<'a>(profile: &'a Profile, name: &str, why: Option<&str>) -> Result<&'a Tool, String> {
    profile.toolset.tool(name).ok_or_else(|| {
        let why = why.map(|why| format!(", which {why}")).unwrap_or_default();
        format!("toolset `{}` ({}) has no {name}{why}", profile.toolset.name(), profile.toolset.id())
    })
}

fn read_cache(build: &Path) -> Option<Cache> {
    std::fs::read_to_string(build.join("CMakeCache.txt")).ok().map(|text| Cache::parse(&text))
}

impl ConfigureOutcome {
    fn failed(
        profile: String,
        preset: Option<String>,
        build_directory: Option<QualifiedPath>,
        reason: String,
    ) -> ConfigureOutcome {
        ConfigureOutcome {
            profile,
            preset,
            build_directory,
            compilation_database: None,
            note: None,
            error: Some(reason),
            process_id: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn definitions() -> Vec<Definition> {
        Definition::automatic("system", false)
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn choosing_profiles() {
        let all = |chosen: Vec<Definition>| chosen.into_iter().map(|d| d.name).collect::<Vec<_>>();
        assert_eq!(all(choose(definitions(), None).unwrap()), ["Debug", "Release"]);
        assert_eq!(all(choose(definitions(), Some(&[])).unwrap()), ["Debug", "Release"]);
        assert_eq!(all(choose(definitions(), Some(&names(&["Release", "Debug"]))).unwrap()), ["Debug", "Release"]);
        assert_eq!(
            choose(definitions(), Some(&names(&["Debug", "Debug"]))).unwrap_err().to_string(),
            "profile `Debug` is named more than once"
        );
        assert_eq!(
            choose(definitions(), Some(&names(&["debug", "x", "Release"]))).unwrap_err().to_string(),
            "no CMake profile is named `debug`, `x`; cmake_profiles lists them"
        );
    }
}

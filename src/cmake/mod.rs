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

pub mod acceleration;
mod affected;
mod build;
mod build_dir;
pub mod cache;
mod cmake_lang;
pub mod codemodel;
pub mod command;
mod configure;
pub mod contexts;
mod crashes;
pub mod ctest;
pub mod diagnostics;
mod earlier;
pub mod file_api;
pub mod frameworks;
pub mod globs;
pub mod impact;
pub mod inputs;
pub mod ninja;
pub mod options;
pub mod orphans;
mod output;
pub mod preset_files;
pub mod profile;
pub mod repeat;
mod run_test;
pub mod sanitizer;
mod serial;
pub mod targets;
mod test_command;
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
pub use impact::{Reason, Select, TestSelection};
pub use options::{CmakeDefine, CmakeOptions, CmakeProfileSpec, PlainProfile, PresetProfile, ProfileEnv, ProfileKind};
pub use profile::{Mode, PresetLists, Presets, Profile};
pub use run_test::{TestRun, resolve_test_run};
pub use test_command::TestCommand;

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
use preset_files::PresetFiles;
use profile::{Definition, DefinitionKind, Execution, Operation, PRESET_FILES};

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
    #[error("no selected preset profile has the {kind} preset{plural} {names}; {available}")]
    UnknownPresets { kind: &'static str, plural: &'static str, names: String, available: String },
    #[error("no test is named {names}; {existing}")]
    UnknownTests { names: String, existing: String },
    /// The project is not a CMake project (`has` names the build files it has, in parentheses).
    #[error("the project has no CMakeLists.txt{has}, so the CMake tools do not apply to it")]
    NotCmake { has: String },
}

/// Build files of other build systems, named when a project has no `CMakeLists.txt`.
const OTHER_BUILD_FILES: [&str; 10] = [
    "Makefile",
    "GNUmakefile",
    "makefile",
    "meson.build",
    "configure.ac",
    "configure",
    "Makefile.am",
    "SConstruct",
    "BUILD.bazel",
    "xmake.lua",
];

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
    /// Compiler and linker messages of the transcript, each once in the order of its first
    /// printing (at most [`diagnostics::MAX_DIAGNOSTICS`]).
    pub diagnostics: Vec<BuildDiagnostic>,
    /// The description of each build step that failed (`Linking CXX executable app`).
    pub failed_steps: Vec<String>,
    pub error: Option<String>,
    pub process_id: Option<ProcessId>,
    /// What the profile's compiler launcher did in this build (`None` without a launcher).
    pub acceleration: Option<acceleration::figures::Acceleration>,
}

/// A compiler or linker message of a build, located, counted once however often it was printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildDiagnostic {
    /// `None` when the tool named no file (or one that does not exist).
    pub path: Option<QualifiedPath>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub severity: Severity,
    /// The first message printed at this position.
    pub message: String,
    pub code: Option<String>,
    /// The CMake targets whose build steps printed it, each once, when the codemodel knows them.
    pub targets: Vec<String>,
    /// How many times the transcript printed it.
    pub count: u32,
    /// How many build steps printed it, and whether all of them compiled a translation unit.
    pub steps: u32,
    pub compiled: bool,
    /// How many different messages it was printed with (a template's error, per instantiation).
    pub messages: u32,
}

impl BuildDiagnostic {
    /// Whether `other` is the same message at the same place (where and how often each was
    /// printed aside).
    pub fn is_same(&self, other: &BuildDiagnostic) -> bool {
        (&self.path, self.line, self.column, self.severity, &self.code, &self.message)
            == (&other.path, other.line, other.column, other.severity, &other.code, &other.message)
    }
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
    /// What `select` chose and why (`None` for `all`).
    pub selection: Option<TestSelection>,
}

/// One direct test executable run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunTestOutcome {
    pub executable: QualifiedPath,
    pub arguments: Vec<String>,
    pub cwd: QualifiedPath,
    pub error: Option<String>,
    pub process_id: Option<ProcessId>,
    /// The stack of a crash or hang (`debug::postmortem`).
    pub crash: Option<crate::debug::postmortem::Crash>,
}

/// Which profiles, and which of their presets, an operation runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Selection<'a> {
    /// Profile names; `None` or empty: every profile.
    pub profiles: Option<&'a [String]>,
    /// Presets of the operation's kind; `None`: all. Given, only the preset profiles that have
    /// some of them run, and only those presets.
    pub presets: Option<&'a [String]>,
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
    /// Which tests run: all (default), the affected ones or those that failed last time.
    pub select: Select,
    /// Run each selected test until it fails, at most this many times (2..=1000).
    pub repeat_until_fail: Option<u32>,
}

/// The CMake service.
pub struct CmakeService {
    workspace: Arc<WorkspaceService>,
    processes: ProcessService,
    toolchain: Arc<ToolchainService>,
    options: CmakeOptions,
    tracker: Arc<Tracker>,
    lock: serial::Serial,
    /// Build directories CMake reported for configure presets in this lifetime.
    learned: Mutex<HashMap<(ToolsetId, String), QualifiedPath>>,
    /// The "Build files have been written to:" directory of the running configure, by label.
    written_to: Arc<Mutex<HashMap<String, PathBuf>>>,
    /// Explains crashed and hung tests with their stacks (`crashes.rs`), once set.
    debugger: std::sync::OnceLock<crate::debug::DebugService>,
    /// Which files no target compiles (created on first use, on the published contexts).
    orphans: std::sync::OnceLock<Arc<orphans::Orphans>>,
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
            lock: serial::Serial::new(),
            learned: Mutex::new(HashMap::new()),
            written_to: Arc::new(Mutex::new(HashMap::new())),
            debugger: std::sync::OnceLock::new(),
            orphans: std::sync::OnceLock::new(),
        }
    }

    /// Crashed and hung tests get their stacks from `debug`'s post-mortem from now on.
    pub fn explain_crashes_with(&self, debug: crate::debug::DebugService) {
        let _ = self.debugger.set(debug);
    }

    /// The path notes to register with the workspace (`WorkspaceService::add_path_notes`): files
    /// no target compiles, and the targets of moved or deleted sources.
    pub fn orphans(&self) -> Arc<orphans::Orphans> {
        self.orphans.get_or_init(|| Arc::new(orphans::Orphans::new(self.roots().clone(), self.contexts()))).clone()
    }

    /// The input checks to register with the workspace (`WorkspaceService::add_observer`).
    pub fn observer(&self) -> Arc<dyn MutationObserver> {
        self.tracker.clone()
    }

    /// What the last withdrawing mutation of `path` withdrew, and why, once.
    pub fn take_withdrawn_by(&self, path: &QualifiedPath) -> contexts::Withdrawal {
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

    /// Refuses a project without a top-level `CMakeLists.txt`, naming the build files it has.
    fn check_cmake_project(&self) -> Result<(), Error> {
        let project = self.roots().project();
        if project.join("CMakeLists.txt").is_file() {
            return Ok(());
        }
        let found: Vec<&str> = OTHER_BUILD_FILES.into_iter().filter(|name| project.join(name).is_file()).collect();
        let has = if found.is_empty() { String::new() } else { format!(" (it has {})", found.join(", ")) };
        Err(Error::NotCmake { has })
    }

    /// Resolves the profiles named in `names` (all for `None` or an empty list), in profile order.
    async fn select(&self, names: Option<&[String]>, call: &Call) -> Result<Vec<Selected>, Error> {
        self.check_cmake_project()?;
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
            let mut resolved = definition.resolve(toolset, listed);
            // The automatic profile leaves out presets whose condition is false on this host.
            if let (Ok(Profile { mode: Mode::Presets(presets), .. }), DefinitionKind::AllPresets) =
                (&mut resolved, &definition.kind)
            {
                presets.leave_out(PresetFiles::read(self.roots().project()).left_out(&presets.lists));
            }
            res.push(resolved.map_err(|reason| (definition.name.clone(), reason)));
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

    /// Selects profiles and expands them into executions of `operation` (only the chosen presets
    /// of preset profiles when `selection.presets` is given); unusable profiles and executions come
    /// back as errors in place.
    async fn executions(
        &self,
        selection: &Selection<'_>,
        operation: Operation,
        reporter: &Reporter,
        call: &Call,
    ) -> Result<Vec<(Selected, Result<Execution, String>)>, Error> {
        let selected = self.select(selection.profiles, call).await?;
        if let Some(wanted) = selection.presets {
            check_presets(&selected, wanted, operation)?;
        }
        let mut res = Vec::new();
        for selected in selected {
            match &selected {
                Err((name, reason)) => {
                    reporter.say(name, reason);
                    let reason = reason.clone();
                    res.push((selected, Err(reason)));
                }
                Ok(profile) => match (profile.executions(operation), selection.presets) {
                    (Ok(executions), wanted) => {
                        let chosen = executions.into_iter().filter(|execution| match (execution, wanted) {
                            (_, None) => true,
                            (Execution::Preset(preset), Some(wanted)) => wanted.contains(preset),
                            (Execution::Directory(_), Some(_)) => false,
                        });
                        res.extend(chosen.map(|execution| (Ok(profile.clone()), Ok(execution))));
                    }
                    // With chosen presets, a profile without such presets is not one of them.
                    (Err(_), Some(_)) => {}
                    (Err(reason), None) => {
                        reporter.say(&profile.name, &reason);
                        res.push((selected.clone(), Err(reason)));
                    }
                },
            }
        }
        Ok(res)
    }
}

/// Refuses preset names that no selected preset profile has for `operation`, saying which it has
/// and which the automatic profile left out.
fn check_presets(selected: &[Selected], wanted: &[String], operation: Operation) -> Result<(), Error> {
    let presets: Vec<&profile::Presets> = selected
        .iter()
        .filter_map(|profile| match &profile.as_ref().ok()?.mode {
            Mode::Presets(presets) => Some(presets),
            Mode::Plain(_) => None,
        })
        .collect();
    let has = |name: &String| presets.iter().any(|p| p.lists.of(operation).contains(name));
    let unknown: Vec<&String> = wanted.iter().filter(|name| !has(name)).collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let kind = operation.noun();
    let mut available: Vec<&str> = presets.iter().flat_map(|p| p.lists.of(operation)).map(String::as_str).collect();
    available.dedup();
    let left_out: Vec<&str> = unknown
        .iter()
        .filter(|name| presets.iter().any(|p| p.left_out.of(operation).contains(name)))
        .map(|name| name.as_str())
        .collect();
    let mut said = if available.is_empty() {
        format!("the selected profiles have no {kind} presets")
    } else {
        format!("they have {}", available.join(", "))
    };
    if !left_out.is_empty() {
        said.push_str(&format!(
            " ({} left out: {} condition is false on this host)",
            left_out.join(", "),
            if left_out.len() == 1 { "its" } else { "their" }
        ));
    }
    let names: Vec<String> = unknown.iter().map(|name| format!("`{name}`")).collect();
    Err(Error::UnknownPresets {
        kind,
        plural: if unknown.len() == 1 { "" } else { "s" },
        names: names.join(", "),
        available: said,
    })
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

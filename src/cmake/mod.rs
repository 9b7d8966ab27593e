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

pub mod cache;
pub mod command;
pub mod contexts;
pub mod ctest;
pub mod file_api;
pub mod inputs;
pub mod ninja;
pub mod profile;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::watch;

pub use contexts::{CompilationContext, Contexts, context_id};
pub use ctest::{TestCase, TestStatus};
pub use profile::{Mode, PresetLists, Profile};

use crate::call::{Call, Progress};
use crate::config::{CmakeProfileSpec, DEFAULT_CMAKE_TOOLSET, ServeConfig};
use crate::process::{Completed, ProcessId, ProcessService, Status, Stream, Timeout};
use crate::text::error_chain;
use crate::toolchain::{Tool, ToolchainService, Toolset, ToolsetId, tool_command};
use crate::workspace::WorkspaceService;
use crate::workspace::observer::MutationObserver;
use crate::workspace::path::{Area, LinkPolicy, QualifiedPath, Roots};
use cache::Cache;
use contexts::Tracker;
use file_api::{IndexStamp, ObjectReply};
use inputs::{Baseline, GlobBase, Globs};
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

/// The CMake settings of a server: `--cmake-toolset` and the `--cmake-profile`s.
#[derive(Debug, Clone)]
pub struct CmakeOptions {
    pub toolset: String,
    /// Explicit profiles; empty means the automatic ones.
    pub profiles: Vec<CmakeProfileSpec>,
}

impl Default for CmakeOptions {
    fn default() -> CmakeOptions {
        CmakeOptions { toolset: DEFAULT_CMAKE_TOOLSET.to_owned(), profiles: Vec::new() }
    }
}

impl CmakeOptions {
    pub fn from_config(config: &ServeConfig) -> CmakeOptions {
        CmakeOptions { toolset: config.cmake_toolset().to_owned(), profiles: config.cmake_profiles().to_vec() }
    }
}

/// One configure execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigureOutcome {
    pub profile: String,
    pub preset: Option<String>,
    pub build_directory: Option<QualifiedPath>,
    pub compilation_database: Option<QualifiedPath>,
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
    pub error: Option<String>,
    pub process_id: Option<ProcessId>,
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
        CmakeService { workspace, processes, toolchain, options, tracker, lock: tokio::sync::Mutex::new(()) }
    }

    /// The input checks to register with the workspace (`WorkspaceService::add_observer`).
    pub fn observer(&self) -> Arc<dyn MutationObserver> {
        self.tracker.clone()
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

    // -----------------------------------------------------------------------------------------
    // Configure.

    /// `cmake_configure`: one execution per plain profile or configure preset (a preset repeated in
    /// one call runs once).
    pub async fn configure(
        &self,
        names: Option<&[String]>,
        timeout: Timeout,
        call: &Call,
    ) -> Result<Vec<ConfigureOutcome>, Error> {
        let reporter = Reporter::start(&call.progress, "Preparing CMake configure");
        let _serialized = self.lock.lock().await;
        let mut res = Vec::new();
        let mut done: HashMap<(ToolsetId, String), ConfigureOutcome> = HashMap::new();
        for (profile, execution) in self.executions(names, Operation::Configure, &reporter, call).await? {
            let (profile, execution) = match (profile, execution) {
                (Ok(profile), Ok(execution)) => (profile, execution),
                (profile, execution) => {
                    let (name, reason) = unusable(profile, execution);
                    res.push(ConfigureOutcome::failed(name, None, None, reason));
                    continue;
                }
            };
            if call.is_cancelled() {
                break;
            }
            let outcome = match execution {
                Execution::Directory(dir) => self.configure_plain(&profile, &dir, timeout, &reporter, call).await,
                Execution::Preset(preset) => {
                    let key = (profile.toolset.id().clone(), preset.clone());
                    if let Some(prior) = done.get(&key) {
                        res.push(ConfigureOutcome { profile: profile.name.clone(), ..prior.clone() });
                        continue;
                    }
                    let outcome = self.configure_preset(&profile, &preset, timeout, &reporter, call).await;
                    done.insert(key, outcome.clone());
                    outcome
                }
            };
            res.push(outcome);
        }
        Ok(res)
    }

    async fn configure_plain(
        &self,
        profile: &Profile,
        dir: &QualifiedPath,
        timeout: Timeout,
        reporter: &Reporter,
        call: &Call,
    ) -> ConfigureOutcome {
        let label = profile.name.clone();
        let id = context_id(&profile.name, None);
        let mut out = ConfigureOutcome::failed(profile.name.clone(), None, Some(dir.clone()), String::new());
        let result = self.configure_plain_inner(profile, dir, timeout, reporter, &label, call, &mut out).await;
        self.finish_configure(&id, &label, result, reporter, &mut out);
        out
    }

    #[allow(clippy::too_many_arguments)]
    async fn configure_plain_inner(
        &self,
        profile: &Profile,
        dir: &QualifiedPath,
        timeout: Timeout,
        reporter: &Reporter,
        label: &str,
        call: &Call,
        out: &mut ConfigureOutcome,
    ) -> Result<(), String> {
        let Mode::Plain(plain) = &profile.mode else {
            return Err("a preset profile configures through its configure presets".to_owned());
        };
        let cmake = required_tool(profile, "cmake", None)?;
        let make_program = if command::needs_ninja(&plain.generator) {
            let reason = format!("the {} generator needs (there is no generator fallback)", plain.generator);
            Some(required_tool(profile, "ninja", Some(&reason))?.path.clone())
        } else {
            None
        };
        let compiler =
            |spec: Option<&'static crate::toolchain::spec::ToolSpec>, key: &str| -> Result<Option<PathBuf>, String> {
                spec.map(|spec| {
                    let why = format!("`{key}={}` names (no other compiler is used)", spec.name);
                    required_tool(profile, spec.name, Some(&why)).map(|tool| tool.path.clone())
                })
                .transpose()
            };
        let c_compiler = compiler(plain.c_compiler, "c-compiler")?;
        let cxx_compiler = compiler(plain.cxx_compiler, "cxx-compiler")?;
        let toolchain_file = match &plain.toolchain_file {
            Some(file) => {
                let resolved = self
                    .roots()
                    .resolve_existing(file, LinkPolicy::FollowInsideRoots)
                    .map_err(|err| format!("toolchain file: {}", error_chain(&err)))?;
                if !resolved.abs.is_file() {
                    return Err(format!("toolchain file `{file}` is not a regular file"));
                }
                Some(resolved.abs)
            }
            None => None,
        };
        let build = self.check_build_dir(dir)?;
        if let Some(cache) = read_cache(&build) {
            self.check_cache_project(dir, &cache)?;
            if cache.generator().is_some_and(|generator| generator != plain.generator) {
                reporter.say(label, "Clearing build directory for generator change");
                self.clear_build_dir(dir, call).await?;
            }
        }
        let args = command::configure_plain(&command::PlainConfigure {
            source: self.roots().project(),
            build: &build,
            generator: &plain.generator,
            configuration: profile.configuration.as_deref(),
            defines: &plain.defines,
            c_compiler: c_compiler.as_deref(),
            cxx_compiler: cxx_compiler.as_deref(),
            toolchain_file: toolchain_file.as_deref(),
            make_program: make_program.as_deref(),
        })
        .map_err(|err| err.to_string())?;
        self.create_build_dir(dir, &build)?;
        let before = file_api::latest_index(&build);
        let completed =
            self.run_configure(profile, &cmake.path, args, Some(dir), timeout, reporter, label, call).await?;
        out.process_id = Some(completed.0.id);
        if let Some(reason) = completed.1 {
            return Err(reason);
        }
        out.compilation_database =
            self.after_generation(&context_id(&profile.name, None), profile, dir, &build, before.as_ref(), false);
        Ok(())
    }

    async fn configure_preset(
        &self,
        profile: &Profile,
        preset: &str,
        timeout: Timeout,
        reporter: &Reporter,
        call: &Call,
    ) -> ConfigureOutcome {
        let label = format!("{}/{preset}", profile.name);
        let id = context_id(&profile.name, Some(preset));
        let dir = profile.build_directory().cloned();
        let mut out =
            ConfigureOutcome::failed(profile.name.clone(), Some(preset.to_owned()), dir.clone(), String::new());
        let result = async {
            let cmake = required_tool(profile, "cmake", None)?;
            // The build directory is only known when the operator named it; CMake resolves the rest.
            let known = match &dir {
                Some(dir) => {
                    let build = self.check_build_dir(dir)?;
                    self.create_build_dir(dir, &build)?;
                    let before = file_api::latest_index(&build);
                    Some((dir, build, before))
                }
                None => None,
            };
            let args = command::configure_preset(preset);
            let completed =
                self.run_configure(profile, &cmake.path, args, dir.as_ref(), timeout, reporter, &label, call).await?;
            out.process_id = Some(completed.0.id);
            if let Some(reason) = completed.1 {
                return Err(reason);
            }
            if let Some((dir, build, before)) = known {
                out.compilation_database = self.after_generation(&id, profile, dir, &build, before.as_ref(), true);
            }
            Ok(())
        }
        .await;
        self.finish_configure(&id, &label, result, reporter, &mut out);
        out
    }

    fn finish_configure(
        &self,
        id: &str,
        label: &str,
        result: Result<(), String>,
        reporter: &Reporter,
        out: &mut ConfigureOutcome,
    ) {
        match result {
            Ok(()) => {
                out.error = None;
                reporter.say(label, "Completed successfully");
            }
            Err(reason) => {
                // A failed configure can neither keep nor restore the context.
                self.tracker.withdraw(id);
                out.compilation_database = None;
                reporter.say(label, &reason);
                out.error = Some(reason);
            }
        }
    }

    /// Runs one configure command; returns the run and, when it failed, why (with the first CMake
    /// error of its output).
    #[allow(clippy::too_many_arguments)]
    async fn run_configure(
        &self,
        profile: &Profile,
        cmake: &Path,
        args: Vec<std::ffi::OsString>,
        dir: Option<&QualifiedPath>,
        timeout: Timeout,
        reporter: &Reporter,
        label: &str,
        call: &Call,
    ) -> Result<(Completed, Option<String>), String> {
        let first_error = Arc::new(Mutex::new(FirstError::default()));
        let shortener = Shortener::new(self.roots());
        let (errors, progress, label_owned, short) =
            (first_error.clone(), reporter.clone(), label.to_owned(), shortener.clone());
        reporter.say(label, "Starting configure");
        let spec = tool_command(&profile.toolset, cmake, self.roots().project()).args(args).timeout(timeout).on_line(
            Arc::new(move |_stream, line| {
                errors.lock().configure_line(line);
                if let Some(status) = command::configure_status(line) {
                    progress.say(&label_owned, &short.shorten(status));
                }
            }),
        );
        let completed = self.run_protected(spec, dir, call).await.map_err(|err| error_chain(&err))?;
        let summary = first_error.lock().summary().map(|summary| shortener.shorten(&summary));
        let reason = failure("cmake", &completed, Some(timeout)).map(|reason| with_summary(reason, summary));
        Ok((completed, reason))
    }

    /// After a successful generation: reads the new File API reply, records the inputs and confirms
    /// the context `id` when the build directory has a compilation database. Returns the database.
    fn after_generation(
        &self,
        id: &str,
        profile: &Profile,
        dir: &QualifiedPath,
        build: &Path,
        before: Option<&IndexStamp>,
        presets: bool,
    ) -> Option<QualifiedPath> {
        let database = dir.join_name("compile_commands.json").filter(|db| {
            self.roots().resolve_existing(db, LinkPolicy::FollowInsideRoots).is_ok_and(|r| r.abs.is_file())
        });
        let baseline = match self.new_baseline(build, before, presets) {
            Ok(baseline) => baseline,
            Err(reason) => {
                tracing::warn!(context = id, "no compilation context for `{dir}`: {reason}");
                self.tracker.withdraw(id);
                return database;
            }
        };
        match &database {
            Some(database) => self.tracker.confirm(
                CompilationContext {
                    id: id.to_owned(),
                    toolset_id: profile.toolset.id().clone(),
                    build_directory: dir.clone(),
                    compilation_database: database.clone(),
                },
                baseline,
            ),
            None => {
                tracing::info!(context = id, "no compilation context for `{dir}`: it has no compile_commands.json");
                self.tracker.withdraw(id);
            }
        }
        database
    }

    /// The baseline of the reply CMake wrote after `before`.
    fn new_baseline(&self, build: &Path, before: Option<&IndexStamp>, presets: bool) -> Result<Baseline, String> {
        let after = file_api::latest_index(build);
        let Some(after) = after.filter(|after| file_api::is_new(before, Some(after))) else {
            return Err("CMake wrote no new File API reply".to_owned());
        };
        let index = file_api::read_reply(build, &after.name)?;
        let file = match file_api::cmake_files_reply(&index)? {
            Some(ObjectReply::File(file)) => file,
            Some(ObjectReply::Error(error)) => {
                return Err(format!("CMake did not answer the cmakeFiles query: {error}"));
            }
            None => return Err("the File API reply does not answer the cmakeFiles query".to_owned()),
        };
        let files = file_api::parse_cmake_files(&file_api::read_reply(build, &file)?)?;
        Ok(baseline(self.roots(), &files, presets))
    }

    // -----------------------------------------------------------------------------------------
    // Build.

    /// `cmake_build`: one execution per plain profile or build preset (or the preset profile's
    /// build directory when it has no build presets).
    pub async fn build(
        &self,
        names: Option<&[String]>,
        request: &BuildRequest,
        timeout: Timeout,
        call: &Call,
    ) -> Result<Vec<BuildOutcome>, Error> {
        let reporter = Reporter::start(&call.progress, "Preparing CMake build");
        let _serialized = self.lock.lock().await;
        let mut res = Vec::new();
        for (profile, execution) in self.executions(names, Operation::Build, &reporter, call).await? {
            let (profile, execution) = match (profile, execution) {
                (Ok(profile), Ok(execution)) => (profile, execution),
                (profile, execution) => {
                    let (name, reason) = unusable(profile, execution);
                    res.push(BuildOutcome {
                        profile: name,
                        preset: None,
                        configuration: None,
                        completed_steps: None,
                        total_steps: None,
                        error: Some(reason),
                        process_id: None,
                    });
                    continue;
                }
            };
            if call.is_cancelled() {
                break;
            }
            res.push(self.build_one(&profile, &execution, request, timeout, &reporter, call).await);
        }
        Ok(res)
    }

    async fn build_one(
        &self,
        profile: &Profile,
        execution: &Execution,
        request: &BuildRequest,
        timeout: Timeout,
        reporter: &Reporter,
        call: &Call,
    ) -> BuildOutcome {
        let preset = preset_of(execution);
        let label = label(profile, preset);
        let mut out = BuildOutcome {
            profile: profile.name.clone(),
            preset: preset.map(str::to_owned),
            configuration: profile.configuration.clone(),
            completed_steps: None,
            total_steps: None,
            error: None,
            process_id: None,
        };
        let result = async {
            let cmake = required_tool(profile, "cmake", None)?;
            let (dir, build) = self.execution_dir(profile, execution)?;
            let target = match (execution, &build) {
                (Execution::Directory(_), Some(build)) => command::Target::Directory(build),
                _ => command::Target::Preset(preset.unwrap_or_default()),
            };
            let args = command::build(target, profile.configuration.as_deref(), &request.targets, request.parallel);
            let before = build.as_deref().and_then(file_api::latest_index);
            let watch = Arc::new(Mutex::new(BuildWatch::default()));
            let shortener = Shortener::new(self.roots());
            let (seen, progress, label_owned, short) =
                (watch.clone(), reporter.clone(), label.clone(), shortener.clone());
            reporter.say(&label, "Starting build");
            let spec = tool_command(&profile.toolset, &cmake.path, self.roots().project())
                .args(args)
                .timeout(timeout)
                .on_line(Arc::new(move |_stream, line| {
                    seen.lock().line(line);
                    if let Some(message) = ninja::progress_message(line) {
                        progress.say(&label_owned, &short.shorten(message));
                    }
                }));
            let completed = self.run_protected(spec, dir.as_ref(), call).await.map_err(|err| error_chain(&err))?;
            out.process_id = Some(completed.id);
            let seen = watch.lock().clone();
            if let Some((completed_steps, total_steps)) = seen.steps {
                out.completed_steps = Some(completed_steps);
                out.total_steps = Some(total_steps);
            }
            // A new File API generation during the build restores (or refreshes) the context, even
            // when compiling failed afterwards.
            if let (Some(dir), Some(build)) = (&dir, &build)
                && file_api::is_new(before.as_ref(), file_api::latest_index(build).as_ref())
            {
                let id = self.tracker.id_for_build_dir(dir).or_else(|| match execution {
                    Execution::Directory(_) if matches!(profile.mode, Mode::Plain(_)) => {
                        Some(context_id(&profile.name, None))
                    }
                    _ => None,
                });
                if let Some(id) = id {
                    self.after_generation(
                        &id,
                        profile,
                        dir,
                        build,
                        before.as_ref(),
                        matches!(profile.mode, Mode::Presets(_)),
                    );
                }
            }
            match failure("cmake --build", &completed, Some(timeout)) {
                Some(reason) => Err(with_summary(reason, seen.summary().map(|summary| shortener.shorten(&summary)))),
                None => Ok(()),
            }
        }
        .await;
        out.error = result.err();
        reporter.say(&label, out.error.as_deref().unwrap_or("Completed successfully"));
        out
    }

    /// The build directory of an execution (known for plain profiles and preset profiles with
    /// `build-directory`), checked; for ordinary (non-preset) executions the cache must belong to
    /// this project and match the profile's configuration.
    fn execution_dir(
        &self,
        profile: &Profile,
        execution: &Execution,
    ) -> Result<(Option<QualifiedPath>, Option<PathBuf>), String> {
        let dir = match execution {
            Execution::Directory(dir) => dir.clone(),
            Execution::Preset(_) => match profile.build_directory() {
                Some(dir) => dir.clone(),
                None => return Ok((None, None)),
            },
        };
        let build = self.check_build_dir(&dir)?;
        if let Execution::Directory(_) = execution {
            let Some(cache) = read_cache(&build) else {
                return Err(format!(
                    "profile `{}` is not configured: `{dir}` has no CMakeCache.txt; run cmake_configure first",
                    profile.name
                ));
            };
            self.check_cache_project(&dir, &cache)?;
            if let Some(mismatch) = cache.configuration_mismatch(profile.configuration.as_deref()) {
                return Err(mismatch);
            }
        }
        Ok((Some(dir), Some(build)))
    }

    // -----------------------------------------------------------------------------------------
    // Test.

    /// `cmake_test`: one CTest execution per plain profile or test preset (or the preset profile's
    /// build directory when it has no test presets); cases come from a JUnit report written to a
    /// temporary directory under `storage/tmp` and removed afterwards.
    pub async fn test(
        &self,
        names: Option<&[String]>,
        request: &TestRequest,
        timeout: Timeout,
        call: &Call,
    ) -> Result<Vec<TestOutcome>, Error> {
        let reporter = Reporter::start(&call.progress, "Preparing CTest");
        let _serialized = self.lock.lock().await;
        let mut res = Vec::new();
        for (profile, execution) in self.executions(names, Operation::Test, &reporter, call).await? {
            let (profile, execution) = match (profile, execution) {
                (Ok(profile), Ok(execution)) => (profile, execution),
                (profile, execution) => {
                    let (name, reason) = unusable(profile, execution);
                    res.push(TestOutcome {
                        profile: name,
                        preset: None,
                        configuration: None,
                        tests: Vec::new(),
                        error: Some(reason),
                        process_id: None,
                    });
                    continue;
                }
            };
            if call.is_cancelled() {
                break;
            }
            res.push(self.test_one(&profile, &execution, request, timeout, &reporter, call).await);
        }
        Ok(res)
    }

    async fn test_one(
        &self,
        profile: &Profile,
        execution: &Execution,
        request: &TestRequest,
        timeout: Timeout,
        reporter: &Reporter,
        call: &Call,
    ) -> TestOutcome {
        let preset = preset_of(execution);
        let label = label(profile, preset);
        let mut out = TestOutcome {
            profile: profile.name.clone(),
            preset: preset.map(str::to_owned),
            configuration: profile.configuration.clone(),
            tests: Vec::new(),
            error: None,
            process_id: None,
        };
        let result = async {
            let ctest = required_tool(profile, "ctest", None)?;
            let (dir, build) = self.execution_dir(profile, execution)?;
            let report_dir = self.report_dir()?;
            let junit = report_dir.path().join("junit.xml");
            let target = match (execution, &build) {
                (Execution::Directory(_), Some(build)) => command::Target::Directory(build),
                _ => command::Target::Preset(preset.unwrap_or_default()),
            };
            let args =
                command::test(target, &junit, profile.configuration.as_deref(), &request.names, request.parallel);
            let stderr = Arc::new(Mutex::new(None::<String>));
            let shortener = Shortener::new(self.roots());
            let (first_stderr, progress, label_owned, short) =
                (stderr.clone(), reporter.clone(), label.clone(), shortener.clone());
            reporter.say(&label, "Starting tests");
            let spec = tool_command(&profile.toolset, &ctest.path, self.roots().project())
                .args(args)
                .timeout(timeout)
                .on_line(Arc::new(move |stream, line| {
                    if stream == Stream::Stderr && !line.trim().is_empty() {
                        first_stderr.lock().get_or_insert_with(|| line.trim().to_owned());
                    }
                    if let Some(message) = ctest::progress_message(line) {
                        progress.say(&label_owned, &short.shorten(message));
                    }
                }));
            let completed = self.run_protected(spec, dir.as_ref(), call).await.map_err(|err| error_chain(&err))?;
            out.process_id = Some(completed.id);
            let report = match std::fs::read_to_string(&junit) {
                Ok(text) => Some(ctest::parse_junit(&text)),
                Err(_) => None,
            };
            drop(report_dir);
            let problem = failure("ctest", &completed, Some(timeout));
            match report {
                Some(Ok(tests)) => out.tests = tests,
                Some(Err(reason)) => return Err(problem.map_or(reason.clone(), |p| format!("{p}; {reason}"))),
                None if problem.is_none() => return Err("ctest wrote no JUnit report".to_owned()),
                None => {}
            }
            let failed = out.tests.iter().filter(|t| t.status == TestStatus::Failed).count();
            let not_run = out.tests.iter().filter(|t| t.status == TestStatus::NotRun).count();
            let mut counts = Vec::new();
            if failed > 0 {
                counts.push(format!("{failed} failed"));
            }
            if not_run > 0 {
                counts.push(format!("{not_run} not run"));
            }
            match (problem, counts.is_empty()) {
                (None, true) => Ok(()),
                (None, false) => Err(format!("{} of {} tests", counts.join(", "), out.tests.len())),
                (Some(problem), false) => Err(format!("{problem}; {}", counts.join(", "))),
                (Some(problem), true) => {
                    Err(with_summary(problem, stderr.lock().as_deref().map(|line| shortener.shorten(line))))
                }
            }
        }
        .await;
        out.error = result.err();
        reporter.say(&label, out.error.as_deref().unwrap_or("Completed successfully"));
        out
    }

    /// A fresh temporary directory under `storage/tmp` for one JUnit report.
    fn report_dir(&self) -> Result<tempfile::TempDir, String> {
        let tmp = self.roots().storage().join("tmp");
        std::fs::create_dir_all(&tmp)
            .and_then(|()| tempfile::Builder::new().prefix("ctest-").tempdir_in(&tmp))
            .map_err(|err| format!("cannot create a temporary directory under `storage/tmp`: {err}"))
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

    // -----------------------------------------------------------------------------------------
    // Direct test runs.

    /// `cmake_run_test`: runs one built executable in `project/` or `storage/` with literal
    /// arguments, stdin closed and the server's environment. Argument problems are errors; a failed
    /// run is the outcome's `error`.
    pub async fn run_test(
        &self,
        executable: &str,
        arguments: Vec<String>,
        cwd: &str,
        timeout: Timeout,
        call: &Call,
    ) -> Result<RunTestOutcome, Error> {
        let argument = |argument: &'static str| move |reason: String| Error::Argument { argument, reason };
        let exe_path = self.workspace.parse_managed(executable).map_err(|e| argument("executable")(error_chain(&e)))?;
        let exe = self
            .roots()
            .resolve_existing(&exe_path, LinkPolicy::FollowInsideRoots)
            .map_err(|e| argument("executable")(error_chain(&e)))?;
        // Pinned now: the run executes this file, whatever the path names by then.
        let pinned = crate::process::CheckedExecutable::open(&exe.abs, self.roots())
            .map_err(|e| argument("executable")(format!("`{exe_path}` {e}")))?;
        if cfg!(windows)
            && exe
                .abs
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.eq_ignore_ascii_case("bat") || e.eq_ignore_ascii_case("cmd"))
        {
            return Err(argument("executable")(format!("`{exe_path}` is a batch file; batch files are not supported")));
        }
        if let Some(idx) = arguments.iter().position(|a| a.contains('\0')) {
            return Err(argument("arguments")(format!("argument {} contains a NUL character", idx + 1)));
        }
        let cwd_path = self.workspace.parse_managed(cwd).map_err(|e| argument("cwd")(error_chain(&e)))?;
        let dir = self
            .roots()
            .resolve_existing(&cwd_path, LinkPolicy::FollowInsideRoots)
            .map_err(|e| argument("cwd")(format!("{}; storage directories are not created", error_chain(&e))))?;
        if !dir.abs.is_dir() {
            return Err(argument("cwd")(format!("`{cwd_path}` is not a directory")));
        }
        call.progress.report_with(0.0, Some(1.0), || format!("Starting {exe_path}"));
        let _serialized = self.lock.lock().await;
        let spec = crate::process::CommandSpec::checked(pinned, &dir.abs).args(&arguments).timeout(timeout);
        let (process_id, error) = match self.processes.run(spec, call).await {
            Ok(completed) => (Some(completed.id), failure("the test executable", &completed, Some(timeout))),
            Err(err) => (None, Some(error_chain(&err))),
        };
        call.progress.report(1.0, Some(1.0), error.as_deref().unwrap_or("Completed successfully"));
        Ok(RunTestOutcome { executable: exe_path, arguments, cwd: cwd_path, error, process_id })
    }

    // -----------------------------------------------------------------------------------------
    // Build directories.

    /// Checks a build directory: reached without links, not protected, a directory if it exists.
    /// Returns its absolute path (it may not exist yet).
    fn check_build_dir(&self, dir: &QualifiedPath) -> Result<PathBuf, String> {
        if dir.area() == Area::Root || dir.is_area_root() {
            return Err(format!("`{dir}` cannot be a build directory"));
        }
        if let Some(protection) = self.workspace.protected().guarding_contents(dir) {
            return Err(format!("build directory `{dir}` is protected by {}", protection.owner));
        }
        let resolved = self.roots().resolve(dir, LinkPolicy::Refuse).map_err(|err| error_chain(&err))?;
        if resolved.exists && !resolved.abs.is_dir() {
            return Err(format!("build directory `{dir}` exists and is not a directory"));
        }
        Ok(resolved.abs)
    }

    /// Creates the build directory (and its parents) and the File API queries.
    fn create_build_dir(&self, dir: &QualifiedPath, build: &Path) -> Result<(), String> {
        std::fs::create_dir_all(build).map_err(|err| format!("cannot create build directory `{dir}`: {err}"))?;
        // Nothing on the way may have become a link in the meantime.
        self.check_build_dir(dir)?;
        self.tracker.add_build_dir(dir);
        file_api::write_queries(build).map_err(|err| format!("cannot write the File API queries in `{dir}`: {err}"))
    }

    /// The cache must belong to this project (its source directory is the project root).
    fn check_cache_project(&self, dir: &QualifiedPath, cache: &Cache) -> Result<(), String> {
        let belongs = cache
            .source_dir()
            .and_then(|source| std::fs::canonicalize(source).ok())
            .is_some_and(|source| source == self.roots().project());
        if belongs {
            Ok(())
        } else {
            Err(format!("`{dir}` holds the CMake cache of another source directory; use another build-directory"))
        }
    }

    /// Removes a build directory through the workspace (root, protected-path and link checks) for a
    /// generator change; `create_build_dir` recreates it.
    async fn clear_build_dir(&self, dir: &QualifiedPath, call: &Call) -> Result<(), String> {
        let workspace = self.workspace.clone();
        let target = dir.clone();
        let quiet = Call::new(Progress::disabled(), call.cancel.clone(), None);
        let removed = tokio::task::spawn_blocking(move || workspace.delete_path(&target, true, &quiet))
            .await
            .map_err(|err| format!("clearing `{dir}` failed: {err}"))?;
        removed.map(drop).map_err(|err| format!("cannot clear `{dir}` for the generator change: {}", error_chain(&err)))
    }

    /// Runs `spec` with `dir` protected for the duration.
    async fn run_protected(
        &self,
        spec: crate::process::CommandSpec,
        dir: Option<&QualifiedPath>,
        call: &Call,
    ) -> Result<Completed, crate::process::Error> {
        let _protected = dir.map(|dir| Protected::new(&self.workspace, dir));
        self.processes.run(spec, call).await
    }
}

/// A protected-path registration that ends when dropped.
struct Protected<'a> {
    workspace: &'a WorkspaceService,
    path: QualifiedPath,
}

impl<'a> Protected<'a> {
    fn new(workspace: &'a WorkspaceService, path: &QualifiedPath) -> Protected<'a> {
        workspace.protected().add(path.clone(), PROTECTION_OWNER);
        Protected { workspace, path: path.clone() }
    }
}

impl Drop for Protected<'_> {
    fn drop(&mut self) {
        self.workspace.protected().remove(&self.path, PROTECTION_OWNER);
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

/// The baseline of a `cmakeFiles` reply: its inputs inside project/ or storage/ (external ones are
/// not tracked), plus the preset files for preset executions, hashed now.
fn baseline(roots: &Roots, files: &file_api::CmakeFiles, presets: bool) -> Baseline {
    let mut inputs = BTreeMap::new();
    for input in &files.inputs {
        if let Some(path) = qualify(roots, &input.path) {
            let hash = Tracker::hash_now(roots, &path);
            inputs.insert(path, hash);
        }
    }
    if presets {
        let project = QualifiedPath::area_root(Area::Project);
        for name in PRESET_FILES {
            if let Some(path) = project.join_name(name) {
                let hash = Tracker::hash_now(roots, &path);
                inputs.insert(path, hash);
            }
        }
    }
    let globs = match &files.globs {
        None => Globs::Unknown,
        Some(globs) => Globs::Known(
            globs
                .iter()
                .filter_map(|glob| {
                    let dir = qualify(roots, &file_api::glob_base(&glob.expression))?;
                    Some(GlobBase { dir, recurse: glob.recurse })
                })
                .collect(),
        ),
    };
    Baseline { inputs, globs }
}

/// The qualified form of an absolute path CMake reported, when it lies in a managed root.
fn qualify(roots: &Roots, path: &Path) -> Option<QualifiedPath> {
    let normal: PathBuf = path.components().collect();
    roots.qualify(&normal).filter(QualifiedPath::is_managed)
}

/// Rewrites absolute paths inside the managed roots in a line of tool output to their qualified
/// form (`/home/u/proj/src/a.cpp` → `project/src/a.cpp`), so summaries and progress messages never
/// show host paths of managed files.
#[derive(Debug, Clone)]
struct Shortener {
    /// `(absolute root, area prefix)`, storage first (the roots never contain each other).
    roots: Vec<(String, &'static str)>,
}

impl Shortener {
    fn new(roots: &Roots) -> Shortener {
        let root = |path: &Path, area: Area| (path.to_string_lossy().trim_end_matches('/').to_owned(), area.prefix());
        Shortener { roots: vec![root(roots.storage(), Area::Storage), root(roots.project(), Area::Project)] }
    }

    fn shorten(&self, text: &str) -> String {
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
fn failure(what: &str, completed: &Completed, timeout: Option<Timeout>) -> Option<String> {
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

fn describe_timeout(timeout: Timeout) -> String {
    let secs = |d: Duration| format!("{} s", d.as_secs_f64());
    match (timeout.total, timeout.idle) {
        (Some(total), Some(idle)) => format!(" (total {}, idle {})", secs(total), secs(idle)),
        (Some(total), None) => format!(" (total {})", secs(total)),
        (None, Some(idle)) => format!(" (idle {})", secs(idle)),
        (None, None) => String::new(),
    }
}

fn with_summary(reason: String, summary: Option<String>) -> String {
    match summary {
        Some(summary) => format!("{reason}: {summary}"),
        None => reason,
    }
}

/// Cuts a summary to [`SUMMARY_CHARS`] characters.
fn bounded(text: &str) -> String {
    match text.char_indices().nth(SUMMARY_CHARS) {
        Some((idx, _)) => format!("{}…", &text[..idx]),
        None => text.to_owned(),
    }
}

/// The first `CMake Error` block of configure output, as one line.
#[derive(Default)]
struct FirstError {
    lines: Vec<String>,
    done: bool,
}

impl FirstError {
    fn configure_line(&mut self, line: &str) {
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

    fn summary(&self) -> Option<String> {
        (!self.lines.is_empty()).then(|| bounded(&self.lines.join(" ")))
    }
}

/// What a build's output showed: the last step count, the first failed edge and the first
/// compiler or linker error.
#[derive(Debug, Clone, Default)]
struct BuildWatch {
    steps: Option<(u64, u64)>,
    failed: Option<String>,
    error: Option<String>,
}

impl BuildWatch {
    fn line(&mut self, line: &str) {
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

    fn summary(&self) -> Option<String> {
        let parts: Vec<&str> = [self.failed.as_deref(), self.error.as_deref()].into_iter().flatten().collect();
        (!parts.is_empty()).then(|| bounded(&parts.join("; ")))
    }
}

/// Progress for one CMake call: `(0, <start>)`, then one step per message, prefixed with the
/// execution's label, through the call's throttle.
#[derive(Clone)]
struct Reporter {
    progress: Progress,
    count: Arc<AtomicU64>,
}

impl Reporter {
    fn start(progress: &Progress, message: &str) -> Reporter {
        progress.report(0.0, None, message);
        Reporter { progress: progress.clone(), count: Arc::new(AtomicU64::new(0)) }
    }

    fn say(&self, label: &str, message: &str) {
        let n = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        self.progress.report_with(n as f64, None, || {
            if label.is_empty() { message.to_owned() } else { format!("{label}: {message}") }
        });
    }
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

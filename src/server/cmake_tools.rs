//! CMake tools: `cmake_profiles`, `cmake_configure`, `cmake_build`, `cmake_test` and
//! `cmake_run_test`. The argument and result types here are the wire shapes of INTERFACE.md §6.
//!
//! Architecture invariant: list results are wrapped as `{"result": [...]}` (except
//! `cmake_run_test`'s single object); a failed execution is data in its item's `error` (the sole
//! outcome field, null on success) with its `process_id`, never a tool error and never a copy of the
//! log. Selection and argument problems are tool errors.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;

use crate::call::Call;
use crate::clangd::standing::EarlierBuild;
use crate::cmake::{
    self, BuildDiagnostic, BuildOutcome, BuildRequest, CmakeService, ConfigureOutcome, Mode, Profile, RunTestOutcome,
    Selection, Severity, TestOutcome, TestRequest, TestStatus,
};
use crate::debug::postmortem::Crash;
use crate::render;
use crate::server::cmake_args::{
    CmakeBuildArgs, CmakeConfigureArgs, CmakeProfilesArgs, CmakeRunTestArgs, CmakeTestArgs, names_argument,
    parallel_argument, repeat_argument, select_argument,
};
use crate::server::cmake_test_items::{FlakyItem, TestFailureItem, TestSelectionItem};
use crate::server::registry::{Annotations, Registry, ToolError, ToolOutput, ToolSpec};
use crate::widgets::{Icon, Widget};

pub fn register(registry: &mut Registry, cmake: &Arc<CmakeService>) {
    register_profiles(registry, cmake);
    register_configure(registry, cmake);
    register_build(registry, cmake);
    register_test(registry, cmake);
    register_run_test(registry, cmake);
}

// ---------------------------------------------------------------------------------------------
// Results.

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProfileMode {
    Plain,
    Presets,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename = "CMakeProfile")]
pub struct CmakeProfile {
    pub name: String,
    pub toolset_id: String,
    pub mode: ProfileMode,
    /// WorkspacePath; null for preset profiles without `build-directory`.
    pub build_directory: Option<String>,
    pub configure_presets: Vec<String>,
    pub build_presets: Vec<String>,
    pub test_presets: Vec<String>,
    pub configuration: Option<String>,
    /// Plain profiles only.
    pub generator: Option<String>,
    /// `NAME[:TYPE]=value` defines (plain profiles).
    pub defines: Vec<String>,
    /// Other settings as `key=value` (plain profiles: compilers, toolchain file, launcher,
    /// sanitizers).
    pub options: Vec<String>,
    /// Presets of the files the automatic profile leaves out because their `condition` (or that of
    /// the configure preset they use) is false on this host.
    pub left_out_presets: LeftOutPresets,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct LeftOutPresets {
    pub configure: Vec<String>,
    pub build: Vec<String>,
    pub test: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CmakeProfilesResult {
    pub result: Vec<CmakeProfile>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename = "CMakeConfigureResult")]
pub struct CmakeConfigureItem {
    pub profile: String,
    pub preset: Option<String>,
    pub build_directory: Option<String>,
    /// `<build>/compile_commands.json` when it exists after success.
    pub compilation_database: Option<String>,
    /// The sole outcome field: null = success, otherwise why (with the exit code).
    pub error: Option<String>,
    /// Read the command's output with process_get; null when nothing ran.
    pub process_id: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CmakeConfigureResult {
    pub result: Vec<CmakeConfigureItem>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename = "CMakeBuildResult")]
pub struct CmakeBuildItem {
    pub profile: String,
    pub preset: Option<String>,
    pub configuration: Option<String>,
    /// From the last `[n/m]` build line.
    pub completed_steps: Option<u64>,
    pub total_steps: Option<u64>,
    /// Compiler and linker messages of the transcript.
    pub diagnostics: Vec<BuildDiagnosticItem>,
    /// The sole outcome field: null = success, otherwise why (with the exit code).
    pub error: Option<String>,
    pub process_id: Option<u64>,
    /// What the compiler launcher did in this build; null without one.
    pub acceleration: Option<crate::cmake::acceleration::figures::Acceleration>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DiagnosticSeverity {
    Error,
    Warning,
    Note,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename = "BuildDiagnostic")]
pub struct BuildDiagnosticItem {
    /// Qualified path; null when the tool named no existing file.
    pub path: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub severity: DiagnosticSeverity,
    pub message: String,
    /// `-Wflag`, `C2065`, `LNK2019`.
    pub code: Option<String>,
    /// The CMake target whose build step printed it first.
    pub target: Option<String>,
    /// Every CMake target whose build steps printed it.
    pub targets: Vec<String>,
    /// How many times the transcript printed it (a header's warning once per translation unit, a
    /// template's error once per instantiation); listed once.
    pub count: u32,
}

impl From<&BuildDiagnostic> for BuildDiagnosticItem {
    fn from(d: &BuildDiagnostic) -> BuildDiagnosticItem {
        BuildDiagnosticItem {
            path: d.path.as_ref().map(ToString::to_string),
            line: d.line,
            column: d.column,
            severity: match d.severity {
                Severity::Error => DiagnosticSeverity::Error,
                Severity::Warning => DiagnosticSeverity::Warning,
                Severity::Note => DiagnosticSeverity::Note,
            },
            message: d.message.clone(),
            code: d.code.clone(),
            target: d.targets.first().cloned(),
            targets: d.targets.clone(),
            count: d.count,
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CmakeBuildResult {
    pub result: Vec<CmakeBuildItem>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TestCaseStatus {
    Passed,
    Failed,
    Skipped,
    NotRun,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename = "TestCase")]
pub struct TestCaseItem {
    pub name: String,
    pub status: TestCaseStatus,
    pub duration_seconds: Option<f64>,
    /// Failure text and output tail, or why the test was skipped or not run.
    pub message: Option<String>,
    /// A crashed or timed-out case's stack (its text is at the end of `message`).
    pub crash: Option<Crash>,
    /// Each failing inner case of a GoogleTest, Catch2 or doctest program.
    pub failures: Vec<TestFailureItem>,
    /// With repeat_until_fail: failed after passing earlier runs.
    pub flaky: Option<FlakyItem>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename = "CMakeTestResult")]
pub struct CmakeTestItem {
    pub profile: String,
    pub preset: Option<String>,
    pub configuration: Option<String>,
    pub tests: Vec<TestCaseItem>,
    /// What select chose and why (null for "all").
    pub selection: Option<TestSelectionItem>,
    /// The sole outcome field: null = CTest exited with 0 and no case failed or did not run.
    pub error: Option<String>,
    pub process_id: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CmakeTestResult {
    pub result: Vec<CmakeTestItem>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CmakeRunTestResult {
    pub executable: String,
    pub arguments: Vec<String>,
    pub cwd: String,
    /// The sole outcome field: null = exit code 0.
    pub error: Option<String>,
    pub process_id: Option<u64>,
    /// A crash's or timeout's stack (its text is at the end of `error`).
    pub crash: Option<Crash>,
}

impl From<&Profile> for CmakeProfile {
    fn from(profile: &Profile) -> CmakeProfile {
        let (mode, lists, left_out) = match &profile.mode {
            Mode::Plain(_) => (ProfileMode::Plain, None, None),
            Mode::Presets(presets) => (ProfileMode::Presets, Some(&presets.lists), Some(&presets.left_out)),
        };
        CmakeProfile {
            name: profile.name.clone(),
            toolset_id: profile.toolset.id().to_string(),
            mode,
            build_directory: profile.build_directory().map(ToString::to_string),
            configure_presets: lists.map(|l| l.configure.clone()).unwrap_or_default(),
            build_presets: lists.map(|l| l.build.clone()).unwrap_or_default(),
            test_presets: lists.map(|l| l.test.clone()).unwrap_or_default(),
            configuration: profile.configuration.clone(),
            generator: profile.generator().map(str::to_owned),
            defines: profile.defines(),
            options: profile.options(),
            left_out_presets: LeftOutPresets {
                configure: left_out.map(|l| l.configure.clone()).unwrap_or_default(),
                build: left_out.map(|l| l.build.clone()).unwrap_or_default(),
                test: left_out.map(|l| l.test.clone()).unwrap_or_default(),
            },
        }
    }
}

impl From<&ConfigureOutcome> for CmakeConfigureItem {
    fn from(o: &ConfigureOutcome) -> CmakeConfigureItem {
        CmakeConfigureItem {
            profile: o.profile.clone(),
            preset: o.preset.clone(),
            build_directory: o.build_directory.as_ref().map(ToString::to_string),
            compilation_database: o.compilation_database.as_ref().map(ToString::to_string),
            error: o.error.clone(),
            process_id: o.process_id.map(|id| id.0),
        }
    }
}

impl From<&BuildOutcome> for CmakeBuildItem {
    fn from(o: &BuildOutcome) -> CmakeBuildItem {
        CmakeBuildItem {
            profile: o.profile.clone(),
            preset: o.preset.clone(),
            configuration: o.configuration.clone(),
            completed_steps: o.completed_steps,
            total_steps: o.total_steps,
            diagnostics: o.diagnostics.iter().map(BuildDiagnosticItem::from).collect(),
            error: o.error.clone(),
            process_id: o.process_id.map(|id| id.0),
            acceleration: o.acceleration.clone(),
        }
    }
}

impl From<&TestOutcome> for CmakeTestItem {
    fn from(o: &TestOutcome) -> CmakeTestItem {
        CmakeTestItem {
            profile: o.profile.clone(),
            preset: o.preset.clone(),
            configuration: o.configuration.clone(),
            selection: o.selection.as_ref().map(Into::into),
            tests: o
                .tests
                .iter()
                .map(|t| TestCaseItem {
                    name: t.name.clone(),
                    status: match t.status {
                        TestStatus::Passed => TestCaseStatus::Passed,
                        TestStatus::Failed => TestCaseStatus::Failed,
                        TestStatus::Skipped => TestCaseStatus::Skipped,
                        TestStatus::NotRun => TestCaseStatus::NotRun,
                    },
                    duration_seconds: t.duration_seconds,
                    message: t.message.clone(),
                    crash: t.crash.clone(),
                    failures: t.failures.iter().map(Into::into).collect(),
                    flaky: t.flaky.as_ref().map(Into::into),
                })
                .collect(),
            error: o.error.clone(),
            process_id: o.process_id.map(|id| id.0),
        }
    }
}

impl From<&RunTestOutcome> for CmakeRunTestResult {
    fn from(o: &RunTestOutcome) -> CmakeRunTestResult {
        CmakeRunTestResult {
            executable: o.executable.to_string(),
            arguments: o.arguments.clone(),
            cwd: o.cwd.to_string(),
            error: o.error.clone(),
            process_id: o.process_id.map(|id| id.0),
            crash: o.crash.clone(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Tools.

fn spec(name: &'static str, title: &'static str, description: &'static str, widget: Widget) -> ToolSpec {
    let annotations = if name == "cmake_profiles" { Annotations::CmakeList } else { Annotations::Exec };
    ToolSpec { name, title, description, annotations, widget, icon: Icon::Cmake }
}

fn register_profiles(registry: &mut Registry, cmake: &Arc<CmakeService>) {
    let service = cmake.clone();
    registry.add(
        spec(
            "cmake_profiles",
            "CMake profiles",
            "List the operator's CMake profiles (toolset, mode, build directory, presets). May run cmake --list-presets.",
            Widget::CmakeProfiles,
        ),
        move |_args: CmakeProfilesArgs, call: Call| {
            let service = service.clone();
            async move {
                let (profiles, text) = match service.profiles(&call).await {
                    Ok(profiles) => {
                        let text = render::cmake::profiles_text(&profiles);
                        (profiles, text)
                    }
                    // Not an error to list: there is nothing to list, and the text says why.
                    Err(err @ cmake::Error::NotCmake { .. }) => (Vec::new(), format!("No CMake profiles: {err}.")),
                    Err(err) => return Err(ToolError::user(&err)),
                };
                Ok(ToolOutput::new(text, CmakeProfilesResult { result: profiles.iter().map(Into::into).collect() }))
            }
        },
    );
}

fn register_configure(registry: &mut Registry, cmake: &Arc<CmakeService>) {
    let service = cmake.clone();
    registry.add(
        spec(
            "cmake_configure",
            "CMake configure",
            "Configure profiles (each plain profile or configure preset). Per-item `error` null = success; \
             read logs with process_get(process_id).",
            Widget::CmakeConfigure,
        ),
        move |args: CmakeConfigureArgs, call: Call| {
            let service = service.clone();
            async move {
                let timeout = args.timeout.to_timeout()?;
                let presets = args.presets.map(|p| names_argument("presets", Some(p), "every preset")).transpose()?;
                let selection = Selection { profiles: args.profiles.as_deref(), presets: presets.as_deref() };
                let outcomes =
                    service.configure(&selection, timeout, &call).await.map_err(|err| ToolError::user(&err))?;
                let text = render::cmake::configure_text(&outcomes);
                Ok(ToolOutput::new(text, CmakeConfigureResult { result: outcomes.iter().map(Into::into).collect() }))
            }
        },
    );
}

fn register_build(registry: &mut Registry, cmake: &Arc<CmakeService>) {
    let service = cmake.clone();
    registry.add(
        spec(
            "cmake_build",
            "CMake build",
            "Build configured profiles (or their build presets); returns step counts. Configure first.",
            Widget::CmakeBuild,
        ),
        move |args: CmakeBuildArgs, call: Call| {
            let service = service.clone();
            async move {
                let request = BuildRequest {
                    targets: names_argument("targets", args.targets, "the default target")?,
                    parallel: parallel_argument(args.parallel)?,
                };
                let timeout = args.timeout.to_timeout()?;
                let presets = args.presets.map(|p| names_argument("presets", Some(p), "every preset")).transpose()?;
                let selection = Selection { profiles: args.profiles.as_deref(), presets: presets.as_deref() };
                let outcomes =
                    service.build(&selection, &request, timeout, &call).await.map_err(|err| ToolError::user(&err))?;
                let mut text = render::cmake::build_text(&outcomes);
                // A build never confirms a context: point the agent at the configure that does.
                let earlier = service.earlier_builds().into_iter().map(EarlierBuild::from);
                let earlier: Vec<EarlierBuild> =
                    earlier.filter(|e| outcomes.iter().any(|o| o.profile == e.profile)).collect();
                text.push_str(&render::clangd_note::earlier_builds(earlier));
                Ok(ToolOutput::new(text, CmakeBuildResult { result: outcomes.iter().map(Into::into).collect() }))
            }
        },
    );
}

fn register_test(registry: &mut Registry, cmake: &Arc<CmakeService>) {
    let service = cmake.clone();
    registry.add(
        spec(
            "cmake_test",
            "CMake test",
            "Run CTest for built profiles (or their test presets); returns each test case's status. Build first.",
            Widget::CmakeTest,
        ),
        move |args: CmakeTestArgs, call: Call| {
            let service = service.clone();
            async move {
                let request = TestRequest {
                    names: names_argument("names", args.names, "every test")?,
                    parallel: parallel_argument(args.parallel)?,
                    select: select_argument(args.select.as_deref())?,
                    repeat_until_fail: repeat_argument(args.repeat_until_fail)?,
                };
                let timeout = args.timeout.to_timeout()?;
                let presets = args.presets.map(|p| names_argument("presets", Some(p), "every preset")).transpose()?;
                let selection = Selection { profiles: args.profiles.as_deref(), presets: presets.as_deref() };
                let outcomes =
                    service.test(&selection, &request, timeout, &call).await.map_err(|err| ToolError::user(&err))?;
                let text = render::cmake::test_text(&outcomes);
                Ok(ToolOutput::new(text, CmakeTestResult { result: outcomes.iter().map(Into::into).collect() }))
            }
        },
    );
}

fn register_run_test(registry: &mut Registry, cmake: &Arc<CmakeService>) {
    let service = cmake.clone();
    registry.add(
        spec(
            "cmake_run_test",
            "Run test executable",
            "Run one built test executable directly with literal arguments (no shell, stdin closed). \
             Exit 0 = success; output via process_get.",
            Widget::CmakeRunTest,
        ),
        move |args: CmakeRunTestArgs, call: Call| {
            let service = service.clone();
            async move {
                let timeout = args.timeout.to_timeout()?;
                let arguments = args.arguments.unwrap_or_default();
                let outcome = service
                    .run_test(&args.executable, arguments, &args.cwd, timeout, &call)
                    .await
                    .map_err(|err| ToolError::user(&err))?;
                let text = render::cmake::run_test_text(&outcome);
                Ok(ToolOutput::new(text, CmakeRunTestResult::from(&outcome)))
            }
        },
    );
}

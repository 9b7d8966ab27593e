//! CMake tools: `cmake_profiles`, `cmake_configure`, `cmake_build`, `cmake_test` and
//! `cmake_run_test`. The argument and result types here are the wire shapes of INTERFACE.md §6.
//!
//! Architecture invariant: list results are wrapped as `{"result": [...]}` (except
//! `cmake_run_test`'s single object); a failed execution is data in its item's `error` (the sole
//! outcome field, null on success) with its `process_id`, never a tool error and never a copy of the
//! log. Selection and argument problems are tool errors.

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::call::Call;
use crate::cmake::{
    self, BuildDiagnostic, BuildOutcome, BuildRequest, CmakeService, ConfigureOutcome, Mode, Profile, RunTestOutcome,
    Severity, TestOutcome, TestRequest, TestStatus,
};
use crate::process::Timeout;
use crate::render;
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
// Arguments.

/// `ProcessTimeout`: seconds (≥ 0); null or absent disables that limit.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessTimeoutArg {
    /// Limit from the start of each execution.
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub total: Option<f64>,
    /// Limit without new output.
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub idle: Option<f64>,
}

fn default_timeout() -> ProcessTimeoutArg {
    let secs = cmake::DEFAULT_TIMEOUT.total.map(|total| total.as_secs_f64());
    ProcessTimeoutArg { total: secs, idle: None }
}

impl ProcessTimeoutArg {
    fn to_timeout(self) -> Result<Timeout, ToolError> {
        let limit = |name: &str, value: Option<f64>| -> Result<Option<Duration>, ToolError> {
            let Some(secs) = value else { return Ok(None) };
            if !secs.is_finite() || secs < 0.0 {
                return Err(ToolError::User(format!(
                    "Invalid argument `timeout.{name}`: it must be a finite number of seconds, at least 0."
                )));
            }
            Duration::try_from_secs_f64(secs)
                .map(Some)
                .map_err(|_| ToolError::User(format!("Invalid argument `timeout.{name}`: {secs} seconds is too long.")))
        };
        Ok(Timeout { total: limit("total", self.total)?, idle: limit("idle", self.idle)? })
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CmakeProfilesArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CmakeConfigureArgs {
    /// Profile names; null or [] = all.
    #[serde(default)]
    pub profiles: Option<Vec<String>>,
    /// Per execution.
    #[serde(default = "default_timeout")]
    pub timeout: ProcessTimeoutArg,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CmakeBuildArgs {
    /// Profile names; null or [] = all.
    #[serde(default)]
    pub profiles: Option<Vec<String>>,
    /// Targets to build; null = the default target.
    #[serde(default)]
    pub targets: Option<Vec<String>>,
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub parallel: Option<u32>,
    #[serde(default = "default_timeout")]
    pub timeout: ProcessTimeoutArg,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CmakeTestArgs {
    /// Profile names; null or [] = all.
    #[serde(default)]
    pub profiles: Option<Vec<String>>,
    /// Exact test names; null = all tests.
    #[serde(default)]
    pub names: Option<Vec<String>>,
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub parallel: Option<u32>,
    #[serde(default = "default_timeout")]
    pub timeout: ProcessTimeoutArg,
}

fn default_cwd() -> String {
    "project/".to_owned()
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CmakeRunTestArgs {
    /// A built executable in project/ or storage/.
    pub executable: String,
    /// Literal arguments (spaces and empty strings kept).
    #[serde(default)]
    pub arguments: Option<Vec<String>>,
    /// Existing working directory in project/ or storage/.
    #[serde(default = "default_cwd")]
    pub cwd: String,
    #[serde(default = "default_timeout")]
    pub timeout: ProcessTimeoutArg,
}

/// A non-empty list of non-empty names, or absent.
fn names_argument(argument: &str, names: Option<Vec<String>>, what: &str) -> Result<Vec<String>, ToolError> {
    match names {
        None => Ok(Vec::new()),
        Some(names) if names.is_empty() => {
            Err(ToolError::User(format!("Invalid argument `{argument}`: the list is empty; omit it for {what}.")))
        }
        Some(names) if names.iter().any(|name| name.is_empty()) => {
            Err(ToolError::User(format!("Invalid argument `{argument}`: names must not be empty.")))
        }
        Some(names) => Ok(names),
    }
}

fn parallel_argument(parallel: Option<u32>) -> Result<Option<u32>, ToolError> {
    match parallel {
        Some(0) => Err(ToolError::User("Invalid argument `parallel`: it must be at least 1.".to_owned())),
        other => Ok(other),
    }
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
    /// The CMake target whose build step printed it.
    pub target: Option<String>,
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
            target: d.target.clone(),
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
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename = "CMakeTestResult")]
pub struct CmakeTestItem {
    pub profile: String,
    pub preset: Option<String>,
    pub configuration: Option<String>,
    pub tests: Vec<TestCaseItem>,
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
}

impl From<&Profile> for CmakeProfile {
    fn from(profile: &Profile) -> CmakeProfile {
        let (mode, lists) = match &profile.mode {
            Mode::Plain(_) => (ProfileMode::Plain, None),
            Mode::Presets(presets) => (ProfileMode::Presets, Some(&presets.lists)),
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
        }
    }
}

impl From<&TestOutcome> for CmakeTestItem {
    fn from(o: &TestOutcome) -> CmakeTestItem {
        CmakeTestItem {
            profile: o.profile.clone(),
            preset: o.preset.clone(),
            configuration: o.configuration.clone(),
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
                let profiles = service.profiles(&call).await.map_err(|err| ToolError::user(&err))?;
                let text = render::cmake::profiles_text(&profiles);
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
                let outcomes = service
                    .configure(args.profiles.as_deref(), timeout, &call)
                    .await
                    .map_err(|err| ToolError::user(&err))?;
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
                let outcomes = service
                    .build(args.profiles.as_deref(), &request, timeout, &call)
                    .await
                    .map_err(|err| ToolError::user(&err))?;
                let text = render::cmake::build_text(&outcomes);
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
                };
                let timeout = args.timeout.to_timeout()?;
                let outcomes = service
                    .test(args.profiles.as_deref(), &request, timeout, &call)
                    .await
                    .map_err(|err| ToolError::user(&err))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts() {
        let t = |total, idle| ProcessTimeoutArg { total, idle }.to_timeout();
        assert_eq!(t(Some(30.0), None).unwrap(), Timeout::total(Duration::from_secs(30)));
        assert_eq!(t(None, None).unwrap(), Timeout::NONE);
        assert_eq!(default_timeout().to_timeout().unwrap(), cmake::DEFAULT_TIMEOUT);
        let Err(ToolError::User(message)) = t(Some(-1.0), None) else { panic!("negative total accepted") };
        assert_eq!(message, "Invalid argument `timeout.total`: it must be a finite number of seconds, at least 0.");
        assert!(t(None, Some(f64::INFINITY)).is_err());
    }

    #[test]
    fn name_lists() {
        assert_eq!(names_argument("targets", None, "the default target").unwrap(), Vec::<String>::new());
        let Err(ToolError::User(message)) = names_argument("targets", Some(Vec::new()), "the default target") else {
            panic!("empty list accepted")
        };
        assert_eq!(message, "Invalid argument `targets`: the list is empty; omit it for the default target.");
        assert!(names_argument("names", Some(vec![String::new()]), "every test").is_err());
        assert!(parallel_argument(Some(0)).is_err());
    }
}

//! CMake renderings: the plain text of `cmake_profiles`, `cmake_configure`, `cmake_build`,
//! `cmake_test` and `cmake_run_test` (INTERFACE.md §6, §12).
//!
//! Architecture invariant: pure functions of `cmake` values; no log text beyond the one-line error
//! summaries the results carry; commands outputs are pointed to with `process_get(process_id=N)`.

use std::fmt::Write as _;

use super::build_diagnostics;
use crate::cmake::frameworks::Failure;
use crate::cmake::{
    BuildDiagnostic, BuildOutcome, ConfigureOutcome, Mode, Profile, RunTestOutcome, TestOutcome, TestStatus,
};
use crate::process::ProcessId;
use crate::text::plural;
use crate::workspace::path::QualifiedPath;

fn or_not_specified(value: Option<&str>) -> &str {
    value.unwrap_or("Not specified")
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() { "None".to_owned() } else { items.join(", ") }
}

fn path_or_none(path: Option<&QualifiedPath>) -> String {
    path.map_or_else(|| "None".to_owned(), ToString::to_string)
}

/// `cmake_profiles`: a count, then each profile with its settings.
pub fn profiles_text(profiles: &[Profile]) -> String {
    let mut res = format!("Available CMake profiles: {}.", profiles.len());
    for profile in profiles {
        let (mode, presets) = match &profile.mode {
            Mode::Plain(_) => ("plain", None),
            Mode::Presets(presets) => ("presets", Some(&presets.lists)),
        };
        let empty = Vec::new();
        let lists = presets.map_or([&empty, &empty, &empty], |l| [&l.configure, &l.build, &l.test]);
        let _ = write!(
            res,
            "\n\n{}\n  Toolset: {}\n  Mode: {mode}\n  Configuration: {}\n  Generator: {}\n  Build directory: {}\n  \
             Configure presets: {}\n  Build presets: {}\n  Test presets: {}",
            profile.name,
            profile.toolset.id(),
            or_not_specified(profile.configuration.as_deref()),
            or_not_specified(profile.generator()),
            profile.build_directory().map_or_else(|| "Not specified".to_owned(), ToString::to_string),
            list_or_none(lists[0]),
            list_or_none(lists[1]),
            list_or_none(lists[2]),
        );
        for (label, values) in [("Defines", profile.defines()), ("Options", profile.options())] {
            if !values.is_empty() {
                let _ = write!(res, "\n  {label}: {}", values.join(", "));
            }
        }
        if let Mode::Presets(presets) = &profile.mode {
            let left_out = [("configure", &presets.left_out.configure), ("build", &presets.left_out.build)];
            let left_out = left_out.into_iter().chain([("test", &presets.left_out.test)]);
            let parts: Vec<String> = left_out
                .filter(|(_, names)| !names.is_empty())
                .map(|(kind, names)| format!("{kind} {}", names.join(", ")))
                .collect();
            if !parts.is_empty() {
                let _ = write!(res, "\n  Left out (condition false on this host): {}", parts.join("; "));
            }
        }
    }
    res
}

/// The header line: `<kind> results: X executions succeeded; Y failed.`
fn header(kind: &str, errors: impl Iterator<Item = bool>) -> String {
    let (mut ok, mut failed) = (0, 0);
    for is_error in errors {
        if is_error {
            failed += 1;
        } else {
            ok += 1;
        }
    }
    format!("{kind} results: {} succeeded; {failed} failed.", plural(ok, "execution", "executions"))
}

/// `<profile>[ (preset: p)]: Succeeded|Failed`.
fn title(res: &mut String, profile: &str, preset: Option<&str>, error: Option<&str>) {
    let _ = write!(res, "\n\n{profile}");
    if let Some(preset) = preset {
        let _ = write!(res, " (preset: {preset})");
    }
    res.push_str(if error.is_none() { ": Succeeded" } else { ": Failed" });
}

/// The closing lines of an execution: its error and where its output is.
fn closing(res: &mut String, error: Option<&str>, process_id: Option<ProcessId>) {
    if let Some(error) = error {
        let _ = write!(res, "\n  Error: {}", error.replace('\n', "\n    "));
    }
    match process_id {
        Some(id) => {
            let _ = write!(res, "\n  Command output: process_get(process_id={id})");
        }
        None => res.push_str("\n  Process: not available"),
    }
}

pub fn configure_text(outcomes: &[ConfigureOutcome]) -> String {
    let mut res = header("Configure", outcomes.iter().map(|o| o.error.is_some()));
    for o in outcomes {
        title(&mut res, &o.profile, o.preset.as_deref(), o.error.as_deref());
        let _ = write!(
            res,
            "\n  Build directory: {}\n  Compilation database: {}",
            path_or_none(o.build_directory.as_ref()),
            path_or_none(o.compilation_database.as_ref())
        );
        if let Some(note) = &o.note {
            let _ = write!(res, "\n  Note: {note}");
        }
        closing(&mut res, o.error.as_deref(), o.process_id);
    }
    res
}

/// `Steps:` in words: "9 of 9 finished", "40 of 41 finished; linking failed (app)", "2 of 41
/// finished; 1 step failed", "3 of 41 finished before the failure" (a failure outside the steps),
/// "up to date (no work to do)".
fn steps(o: &BuildOutcome) -> String {
    if o.up_to_date && o.error.is_none() {
        return "up to date (no work to do)".to_owned();
    }
    // Ninja counts a failed step as finished.
    let failed = o.failed_steps.len() as u64;
    let outcome = if o.failed_steps.is_empty() {
        if o.error.is_some() { " before the failure".to_owned() } else { String::new() }
    } else if o.failed_steps.iter().all(|step| step.starts_with("Linking ")) {
        let linked: Vec<&str> = o.failed_steps.iter().filter_map(|step| step.rsplit(' ').next()).collect();
        format!("; linking failed ({})", linked.join(", "))
    } else {
        format!("; {} failed", plural(o.failed_steps.len(), "step", "steps"))
    };
    match (o.completed_steps, o.total_steps) {
        (Some(done), Some(total)) => format!("{} of {total} finished{outcome}", done.saturating_sub(failed)),
        (Some(done), None) => format!("{} finished{outcome}", done.saturating_sub(failed)),
        _ if !o.failed_steps.is_empty() => format!("Unknown{outcome}"),
        _ => "Unknown".to_owned(),
    }
}

pub fn build_text(outcomes: &[BuildOutcome]) -> String {
    let mut res = header("Build", outcomes.iter().map(|o| o.error.is_some()));
    build_diagnostics::section(&mut res, outcomes);
    for o in outcomes {
        title(&mut res, &o.profile, o.preset.as_deref(), o.error.as_deref());
        let _ =
            write!(res, "\n  Configuration: {}\n  Steps: {}", or_not_specified(o.configuration.as_deref()), steps(o));
        if !o.diagnostics.is_empty() {
            let all: Vec<&BuildDiagnostic> = o.diagnostics.iter().collect();
            let _ = write!(res, "\n  Diagnostics: {}", build_diagnostics::severity_counts(&all));
        }
        if let Some(figures) = &o.acceleration {
            let _ = write!(res, "\n  {}", super::acceleration::line(figures));
        }
        closing(&mut res, o.error.as_deref(), o.process_id);
    }
    res
}

pub fn test_text(outcomes: &[TestOutcome]) -> String {
    let mut res = header("CTest", outcomes.iter().map(|o| o.error.is_some()));
    for o in outcomes {
        title(&mut res, &o.profile, o.preset.as_deref(), o.error.as_deref());
        let count = |status: TestStatus| o.tests.iter().filter(|t| t.status == status).count();
        let _ = write!(
            res,
            "\n  Configuration: {}\n  Tests: {} passed; {} failed; {} skipped; {} not run",
            or_not_specified(o.configuration.as_deref()),
            count(TestStatus::Passed),
            count(TestStatus::Failed),
            count(TestStatus::Skipped),
            count(TestStatus::NotRun),
        );
        if let Some(selection) = &o.selection {
            let _ = write!(res, "\n  {}", super::cmake_selection::selection_text(selection));
        }
        for test in &o.tests {
            let duration =
                test.duration_seconds.map_or_else(|| "duration unavailable".to_owned(), |d| format!("{d:.3} s"));
            let _ = write!(res, "\n    {}: {} ({duration})", test.status.as_str(), test.name);
            if let Some(flaky) = &test.flaky {
                let _ = write!(res, " {}", super::cmake_selection::flaky_text(flaky));
            }
            for failure in &test.failures {
                let _ = write!(res, "\n      {}", failure_line(failure));
            }
            if let Some(message) = &test.message {
                for line in message.lines() {
                    let _ = write!(res, "\n      {line}");
                }
            }
        }
        closing(&mut res, o.error.as_deref(), o.process_id);
    }
    res
}

/// A failing inner case as a compiler-style line with its message's first line
/// (`project/t.cpp:57: failure: Suite.Case: Expected equality of these values:`); the whole block
/// follows in the output lines.
fn failure_line(failure: &Failure) -> String {
    let first = failure.message.lines().find(|line| !line.trim().is_empty()).unwrap_or_default().trim();
    let place = match (&failure.path, failure.line) {
        (Some(path), Some(line)) => format!("{path}:{line}: "),
        (Some(path), None) => format!("{path}: "),
        (None, _) => String::new(),
    };
    format!("{place}failure: {}: {first}", failure.case)
}

pub fn run_test_text(outcome: &RunTestOutcome) -> String {
    let mut res = format!(
        "Test executable {}: {}",
        outcome.executable,
        if outcome.error.is_none() { "Succeeded" } else { "Failed" }
    );
    // Quoted, so that spaces, commas and empty arguments stay visible.
    let quoted: Vec<String> = outcome.arguments.iter().map(|arg| format!("{arg:?}")).collect();
    let arguments = if quoted.is_empty() { "None".to_owned() } else { quoted.join(" ") };
    let _ = write!(res, "\n  Arguments: {arguments}\n  Working directory: {}", outcome.cwd);
    closing(&mut res, outcome.error.as_deref(), outcome.process_id);
    res
}

#[cfg(test)]
pub(super) mod tests {
    use std::sync::Arc;

    use expect_test::expect;

    use super::*;
    use crate::cmake::PlainProfile;
    use crate::cmake::profile::{PresetLists, Presets};
    use crate::cmake::{Severity, TestCase, TestStatus};
    use crate::toolchain::{SYSTEM_NAME, Toolset, ToolsetId};

    pub(in crate::render) fn q(text: &str) -> QualifiedPath {
        QualifiedPath::parse(text).unwrap()
    }

    fn system() -> Arc<Toolset> {
        Arc::new(Toolset::new(ToolsetId::system(), SYSTEM_NAME.to_owned(), Vec::new(), None))
    }

    #[test]
    fn profiles() {
        let plain = Profile {
            name: "Debug".into(),
            toolset: system(),
            configuration: Some("Debug".into()),
            mode: Mode::Plain(PlainProfile::new(q("storage/build/cmake-Debug"), "Ninja")),
            env: Vec::new(),
        };
        let presets = Profile {
            name: "presets".into(),
            toolset: system(),
            configuration: None,
            env: Vec::new(),
            mode: Mode::Presets(Presets {
                build_directory: None,
                lists: PresetLists {
                    configure: vec!["ninja-debug".into(), "ninja-llvm-dwarf-debug".into()],
                    build: vec!["build-ninja-debug".into()],
                    test: Vec::new(),
                },
                left_out: PresetLists { configure: vec!["msvc".into()], build: vec!["msvc".into()], test: Vec::new() },
            }),
        };
        expect![[r#"
            Available CMake profiles: 2.

            Debug
              Toolset: system
              Mode: plain
              Configuration: Debug
              Generator: Ninja
              Build directory: storage/build/cmake-Debug
              Configure presets: None
              Build presets: None
              Test presets: None

            presets
              Toolset: system
              Mode: presets
              Configuration: Not specified
              Generator: Not specified
              Build directory: Not specified
              Configure presets: ninja-debug, ninja-llvm-dwarf-debug
              Build presets: build-ninja-debug
              Test presets: None
              Left out (condition false on this host): configure msvc; build msvc"#]]
        .assert_eq(&profiles_text(&[plain, presets]));
        expect![[r#"Available CMake profiles: 0."#]].assert_eq(&profiles_text(&[]));
    }

    #[test]
    fn configure_results() {
        let outcomes = [
            ConfigureOutcome {
                profile: "presets".into(),
                preset: Some("ninja-debug".into()),
                build_directory: None,
                compilation_database: None,
                note: None,
                error: None,
                process_id: Some(ProcessId(4)),
            },
            ConfigureOutcome {
                profile: "Release".into(),
                preset: None,
                build_directory: Some(q("storage/build/cmake-Release")),
                compilation_database: None,
                note: None,
                error: Some("cmake exited with code 1: CMake Error at CMakeLists.txt:15 (message): needs Clang".into()),
                process_id: Some(ProcessId(5)),
            },
            ConfigureOutcome {
                profile: "clang".into(),
                preset: None,
                build_directory: Some(q("storage/build/cmake-clang")),
                compilation_database: None,
                note: None,
                error: Some("toolset `System` (system) has no clang++".into()),
                process_id: None,
            },
        ];
        expect![[r#"
            Configure results: 1 execution succeeded; 2 failed.

            presets (preset: ninja-debug): Succeeded
              Build directory: None
              Compilation database: None
              Command output: process_get(process_id=4)

            Release: Failed
              Build directory: storage/build/cmake-Release
              Compilation database: None
              Error: cmake exited with code 1: CMake Error at CMakeLists.txt:15 (message): needs Clang
              Command output: process_get(process_id=5)

            clang: Failed
              Build directory: storage/build/cmake-clang
              Compilation database: None
              Error: toolset `System` (system) has no clang++
              Process: not available"#]]
        .assert_eq(&configure_text(&outcomes));
    }

    fn warning(_profile: &str) -> BuildDiagnostic {
        BuildDiagnostic {
            path: Some(q("project/app/warning_main.cpp")),
            line: Some(6),
            column: Some(30),
            severity: Severity::Warning,
            message: "'increment' is deprecated".into(),
            code: Some("-Wdeprecated-declarations".into()),
            targets: vec!["fixture_warning".into()],
            count: 1,
            steps: 1,
            compiled: true,
            messages: 1,
        }
    }

    pub(in crate::render) fn error() -> BuildDiagnostic {
        BuildDiagnostic {
            path: Some(q("project/negative/compile_error.cpp")),
            line: Some(4),
            column: Some(12),
            severity: Severity::Error,
            message: "use of undeclared identifier 'x'".into(),
            code: None,
            targets: vec!["fixture_compile_error".into()],
            count: 1,
            steps: 1,
            compiled: true,
            messages: 1,
        }
    }

    #[test]
    fn build_results() {
        let outcomes = [
            BuildOutcome {
                profile: "Debug".into(),
                preset: None,
                configuration: Some("Debug".into()),
                completed_steps: Some(9),
                total_steps: Some(9),
                up_to_date: false,
                diagnostics: vec![warning("Debug")],
                failed_steps: Vec::new(),
                error: None,
                process_id: Some(ProcessId(6)),
                acceleration: None,
            },
            BuildOutcome {
                profile: "presets".into(),
                preset: Some("build-ninja-debug".into()),
                configuration: None,
                completed_steps: Some(3),
                total_steps: Some(41),
                up_to_date: false,
                diagnostics: vec![warning("presets"), error(), BuildDiagnostic { severity: Severity::Note, ..error() }],
                failed_steps: vec![
                    "Building CXX object CMakeFiles/fixture_compile_error.dir/negative/compile_error.cpp.o".into(),
                ],
                error: Some("cmake --build exited with code 1: FAILED: a.o".into()),
                process_id: Some(ProcessId(7)),
                acceleration: None,
            },
        ];
        expect![[r#"
            Build results: 1 execution succeeded; 1 failed.

            Diagnostics: 1 error; 1 warning; 1 note
              project/negative/compile_error.cpp:4:12: error: use of undeclared identifier 'x' (target fixture_compile_error) in presets/build-ninja-debug
              …and 2 more (1 warning; 1 note): process_get with match="warning|note" on processes 6, 7 finds them

            Debug: Succeeded
              Configuration: Debug
              Steps: 9 of 9 finished
              Diagnostics: 0 errors; 1 warning; 0 notes
              Command output: process_get(process_id=6)

            presets (preset: build-ninja-debug): Failed
              Configuration: Not specified
              Steps: 2 of 41 finished; 1 step failed
              Diagnostics: 1 error; 1 warning; 1 note
              Error: cmake --build exited with code 1: FAILED: a.o
              Command output: process_get(process_id=7)"#]]
        .assert_eq(&build_text(&outcomes));
    }

    #[test]
    fn test_results() {
        let case = |name: &str, status, duration_seconds, message: Option<&str>| TestCase {
            name: name.into(),
            status,
            duration_seconds,
            message: message.map(str::to_owned),
            crash: None,
            failures: Vec::new(),
            flaky: None,
        };
        let outcomes = [TestOutcome {
            profile: "neg".into(),
            preset: None,
            configuration: Some("Debug".into()),
            tests: vec![
                case("fixture_pass", TestStatus::Passed, Some(0.0056789), None),
                case(
                    "fixture_intentional_failure",
                    TestStatus::Failed,
                    Some(0.0017),
                    Some("failing on purpose\nsecond line"),
                ),
                TestCase {
                    failures: vec![
                        Failure {
                            case: "ParseTest.Empty".into(),
                            file: Some("/src/tests/parse_test.cpp".into()),
                            path: Some(q("project/tests/parse_test.cpp")),
                            line: Some(57),
                            message: "Expected equality of these values:\n  a\n    Which is: 1".into(),
                        },
                        Failure {
                            case: "ParseTest.Crash".into(),
                            file: None,
                            path: None,
                            line: None,
                            message: crate::cmake::frameworks::UNFINISHED.into(),
                        },
                    ],
                    ..case("parse_test", TestStatus::Failed, Some(0.01), Some("[ RUN      ] ParseTest.Empty"))
                },
                case("fixture_skipped", TestStatus::Skipped, None, Some("SKIP_RETURN_CODE=77")),
                case("missing", TestStatus::NotRun, Some(0.0), Some("Unable to find executable")),
            ],
            error: Some("ctest exited with code 8; 1 failed, 1 not run".into()),
            process_id: Some(ProcessId(8)),
            selection: None,
        }];
        expect![[r#"
            CTest results: 0 executions succeeded; 1 failed.

            neg: Failed
              Configuration: Debug
              Tests: 1 passed; 2 failed; 1 skipped; 1 not run
                passed: fixture_pass (0.006 s)
                failed: fixture_intentional_failure (0.002 s)
                  failing on purpose
                  second line
                failed: parse_test (0.010 s)
                  project/tests/parse_test.cpp:57: failure: ParseTest.Empty: Expected equality of these values:
                  failure: ParseTest.Crash: the case started and never finished (the program stopped inside it)
                  [ RUN      ] ParseTest.Empty
                skipped: fixture_skipped (duration unavailable)
                  SKIP_RETURN_CODE=77
                not_run: missing (0.000 s)
                  Unable to find executable
              Error: ctest exited with code 8; 1 failed, 1 not run
              Command output: process_get(process_id=8)"#]]
        .assert_eq(&test_text(&outcomes));
    }

    #[test]
    fn run_test_results() {
        let outcome = RunTestOutcome {
            executable: q("project/build/ninja-debug/fixture_tests"),
            arguments: vec!["--echo-args".into(), "a b".into(), String::new(), "--fail".into()],
            cwd: q("project/"),
            error: None,
            process_id: Some(ProcessId(9)),
            crash: None,
        };
        expect![[r#"
            Test executable project/build/ninja-debug/fixture_tests: Succeeded
              Arguments: "--echo-args" "a b" "" "--fail"
              Working directory: project/
              Command output: process_get(process_id=9)"#]]
        .assert_eq(&run_test_text(&outcome));
        let failed = RunTestOutcome {
            arguments: Vec::new(),
            error: Some("the test executable exited with code 1".into()),
            ..outcome
        };
        expect![[r#"
            Test executable project/build/ninja-debug/fixture_tests: Failed
              Arguments: None
              Working directory: project/
              Error: the test executable exited with code 1
              Command output: process_get(process_id=9)"#]]
        .assert_eq(&run_test_text(&failed));
    }
}

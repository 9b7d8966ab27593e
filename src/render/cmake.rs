//! CMake renderings: the plain text of `cmake_profiles`, `cmake_configure`, `cmake_build`,
//! `cmake_test` and `cmake_run_test` (INTERFACE.md §6, §12).
//!
//! Architecture invariant: pure functions of `cmake` values; no log text beyond the one-line error
//! summaries the results carry; commands outputs are pointed to with `process_get(process_id=N)`.

use std::fmt::Write as _;

use crate::cmake::{BuildOutcome, ConfigureOutcome, Mode, Profile, RunTestOutcome, TestOutcome, TestStatus};
use crate::process::ProcessId;
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
    format!("{kind} results: {ok} executions succeeded; {failed} failed.")
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
        closing(&mut res, o.error.as_deref(), o.process_id);
    }
    res
}

fn steps(completed: Option<u64>, total: Option<u64>) -> String {
    let shown = |n: Option<u64>| n.map_or_else(|| "Unknown".to_owned(), |n| n.to_string());
    match (completed, total) {
        (None, None) => "Unknown".to_owned(),
        _ => format!("{} completed; {} total", shown(completed), shown(total)),
    }
}

pub fn build_text(outcomes: &[BuildOutcome]) -> String {
    let mut res = header("Build", outcomes.iter().map(|o| o.error.is_some()));
    for o in outcomes {
        title(&mut res, &o.profile, o.preset.as_deref(), o.error.as_deref());
        let _ = write!(
            res,
            "\n  Configuration: {}\n  Steps: {}",
            or_not_specified(o.configuration.as_deref()),
            steps(o.completed_steps, o.total_steps)
        );
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
        for test in &o.tests {
            let duration =
                test.duration_seconds.map_or_else(|| "duration unavailable".to_owned(), |d| format!("{d:.3} s"));
            let _ = write!(res, "\n    {}: {} ({duration})", test.status.as_str(), test.name);
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
mod tests {
    use std::sync::Arc;

    use expect_test::expect;

    use super::*;
    use crate::cmake::profile::{Plain, PresetLists, Presets};
    use crate::cmake::{TestCase, TestStatus};
    use crate::toolchain::{SYSTEM_NAME, Toolset, ToolsetId};

    fn q(text: &str) -> QualifiedPath {
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
            mode: Mode::Plain(Plain {
                build_directory: q("storage/build/cmake-Debug"),
                generator: "Ninja".into(),
                c_compiler: None,
                cxx_compiler: None,
                toolchain_file: None,
                defines: Vec::new(),
            }),
        };
        let presets = Profile {
            name: "presets".into(),
            toolset: system(),
            configuration: None,
            mode: Mode::Presets(Presets {
                build_directory: None,
                lists: PresetLists {
                    configure: vec!["ninja-debug".into(), "ninja-llvm-dwarf-debug".into()],
                    build: vec!["build-ninja-debug".into()],
                    test: Vec::new(),
                },
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
              Test presets: None"#]]
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
                error: None,
                process_id: Some(ProcessId(4)),
            },
            ConfigureOutcome {
                profile: "Release".into(),
                preset: None,
                build_directory: Some(q("storage/build/cmake-Release")),
                compilation_database: None,
                error: Some("cmake exited with code 1: CMake Error at CMakeLists.txt:15 (message): needs Clang".into()),
                process_id: Some(ProcessId(5)),
            },
            ConfigureOutcome {
                profile: "clang".into(),
                preset: None,
                build_directory: Some(q("storage/build/cmake-clang")),
                compilation_database: None,
                error: Some("toolset `System` (system) has no clang++".into()),
                process_id: None,
            },
        ];
        expect![[r#"
            Configure results: 1 executions succeeded; 2 failed.

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

    #[test]
    fn build_results() {
        let outcomes = [
            BuildOutcome {
                profile: "Debug".into(),
                preset: None,
                configuration: Some("Debug".into()),
                completed_steps: Some(9),
                total_steps: Some(9),
                error: None,
                process_id: Some(ProcessId(6)),
            },
            BuildOutcome {
                profile: "presets".into(),
                preset: Some("build-ninja-debug".into()),
                configuration: None,
                completed_steps: None,
                total_steps: None,
                error: Some("cmake --build exited with code 1: FAILED: a.o".into()),
                process_id: Some(ProcessId(7)),
            },
        ];
        expect![[r#"
            Build results: 1 executions succeeded; 1 failed.

            Debug: Succeeded
              Configuration: Debug
              Steps: 9 completed; 9 total
              Command output: process_get(process_id=6)

            presets (preset: build-ninja-debug): Failed
              Configuration: Not specified
              Steps: Unknown
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
                case("fixture_skipped", TestStatus::Skipped, None, Some("SKIP_RETURN_CODE=77")),
                case("missing", TestStatus::NotRun, Some(0.0), Some("Unable to find executable")),
            ],
            error: Some("ctest exited with code 8; 1 failed, 1 not run".into()),
            process_id: Some(ProcessId(8)),
        }];
        expect![[r#"
            CTest results: 0 executions succeeded; 1 failed.

            neg: Failed
              Configuration: Debug
              Tests: 1 passed; 1 failed; 1 skipped; 1 not run
                passed: fixture_pass (0.006 s)
                failed: fixture_intentional_failure (0.002 s)
                  failing on purpose
                  second line
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

//! The text of `cmake_targets`: per profile one compact line per target,
//! `core (static_library) project/CMakeLists.txt:4 -> storage/build/cmake-Debug/libcore.a; 2 sources; depends on base; tests core_test`.
//!
//! Architecture invariant: pure functions of `cmake` values.

use std::fmt::Write as _;

use crate::cmake::targets::{NOT_CONFIGURED, TargetInfo, TargetsOutcome, Via};

/// Utility targets of CMake's own modules named on their shared line.
const MODULE_TARGETS_NAMED: usize = 4;

fn line(t: &TargetInfo) -> String {
    let mut res = format!("{} ({})", t.name, t.kind);
    if let Some(via) = t.via {
        res.push_str(match via {
            Via::Compiles => " compiles it",
            Via::Includes => " includes it",
        });
    }
    if let Some((path, line)) = &t.defined_at {
        let _ = write!(res, " {path}:{line}");
    }
    if let Some(artifact) = &t.artifact {
        let _ = write!(res, " -> {artifact}");
    }
    let _ = write!(res, "; {} source{}", t.sources, if t.sources == 1 { "" } else { "s" });
    if !t.dependencies.is_empty() {
        let _ = write!(res, "; depends on {}", t.dependencies.join(", "));
    }
    if !t.tests.is_empty() {
        let _ = write!(res, "; tests {}", t.tests.join(", "));
    }
    res
}

fn title(o: &TargetsOutcome) -> String {
    match &o.preset {
        Some(preset) => format!("{}/{preset}", o.profile),
        None => o.profile.clone(),
    }
}

/// The text; executions not configured yet (a preset profile has one per preset) share one line.
pub fn targets_text(outcomes: &[TargetsOutcome]) -> String {
    let mut res = String::from("CMake targets");
    let (unconfigured, listed): (Vec<&TargetsOutcome>, Vec<&TargetsOutcome>) =
        outcomes.iter().partition(|o| o.error.as_deref() == Some(NOT_CONFIGURED) && outcomes.len() > 1);
    for o in listed {
        let _ = write!(res, "\n\n{}", title(o));
        if let Some(configuration) = &o.configuration {
            let _ = write!(res, " ({configuration})");
        }
        if let Some(error) = &o.error {
            let _ = write!(res, ": {error}");
            continue;
        }
        let _ = write!(res, ": {} target{}", o.total, if o.total == 1 { "" } else { "s" });
        // Utility targets no project line defines (CTest's dashboard targets: Continuous, Nightly, …)
        // share one line.
        let (modules, own): (Vec<&TargetInfo>, Vec<&TargetInfo>) =
            o.targets.iter().partition(|t| t.kind == "utility" && t.defined_at.is_none() && t.via.is_none());
        for t in own {
            let _ = write!(res, "\n  {}", line(t));
        }
        match modules.as_slice() {
            [] => {}
            [one] => {
                let _ = write!(res, "\n  {}", line(one));
            }
            many => {
                let names: Vec<&str> = many.iter().take(MODULE_TARGETS_NAMED).map(|t| t.name.as_str()).collect();
                let more = many.len().saturating_sub(MODULE_TARGETS_NAMED);
                let _ = write!(
                    res,
                    "\n  {} utility targets that no line of the project defines (CMake modules such as CTest add them): {}{}",
                    many.len(),
                    names.join(", "),
                    if more > 0 { format!(" and {more} more") } else { String::new() }
                );
            }
        }
        if o.total > o.targets.len() {
            let _ = write!(res, "\n  … {} more (raise limit to list them)", o.total - o.targets.len());
        }
        if let Some(note) = &o.note {
            let _ = write!(res, "\n  Note: {note}");
        }
    }
    if !unconfigured.is_empty() {
        let names: Vec<String> = unconfigured.iter().map(|o| title(o)).collect();
        let _ =
            write!(res, "\n\nNot configured yet, so no targets (run cmake_configure for them): {}", names.join(", "));
    }
    res
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::render::cmake::tests::q;

    #[test]
    fn lines_limits_notes_and_errors() {
        let core = TargetInfo {
            name: "core".into(),
            kind: "static_library".into(),
            artifact: Some(q("storage/build/cmake-Debug/libcore.a")),
            dependencies: vec!["base".into()],
            sources: 2,
            defined_at: Some((q("project/CMakeLists.txt"), 4)),
            tests: Vec::new(),
            via: Some(Via::Includes),
        };
        let app = TargetInfo {
            name: "core_test".into(),
            kind: "executable".into(),
            artifact: Some(q("storage/build/cmake-Debug/core_test")),
            dependencies: vec!["core".into()],
            sources: 1,
            defined_at: Some((q("project/CMakeLists.txt"), 8)),
            tests: vec!["core_test".into()],
            via: Some(Via::Compiles),
        };
        let outcomes = [
            TargetsOutcome {
                profile: "Debug".into(),
                preset: None,
                configuration: Some("Debug".into()),
                targets: vec![app, core],
                total: 3,
                note: Some("headers are looked up after a build".into()),
                error: None,
            },
            TargetsOutcome {
                profile: "Release".into(),
                preset: None,
                configuration: Some("Release".into()),
                targets: Vec::new(),
                total: 0,
                note: None,
                error: Some("profile `Release` is not configured".into()),
            },
        ];
        let unconfigured = |preset: &str| TargetsOutcome {
            profile: "presets".into(),
            preset: Some(preset.into()),
            configuration: None,
            targets: Vec::new(),
            total: 0,
            note: None,
            error: Some(NOT_CONFIGURED.into()),
        };
        let outcomes = [unconfigured("gcc-14"), outcomes[0].clone(), unconfigured("clang-14"), outcomes[1].clone()];
        expect![[r#"
            CMake targets

            Debug (Debug): 3 targets
              core_test (executable) compiles it project/CMakeLists.txt:8 -> storage/build/cmake-Debug/core_test; 1 source; depends on core; tests core_test
              core (static_library) includes it project/CMakeLists.txt:4 -> storage/build/cmake-Debug/libcore.a; 2 sources; depends on base
              … 1 more (raise limit to list them)
              Note: headers are looked up after a build

            Release (Release): profile `Release` is not configured

            Not configured yet, so no targets (run cmake_configure for them): presets/gcc-14, presets/clang-14"#]]
        .assert_eq(&targets_text(&outcomes));
        // Alone, it keeps its own line.
        expect![[r#"
            CMake targets

            presets/gcc-14: the build directory has no File API codemodel; run cmake_configure"#]]
        .assert_eq(&targets_text(&outcomes[..1]));
    }

    #[test]
    fn utility_targets_of_cmake_modules_share_one_line() {
        let utility = |name: &str| TargetInfo {
            name: name.into(),
            kind: "utility".into(),
            artifact: None,
            dependencies: Vec::new(),
            sources: 2,
            defined_at: None,
            tests: Vec::new(),
            via: None,
        };
        let check = TargetInfo { defined_at: Some((q("project/CMakeLists.txt"), 319)), ..utility("check") };
        let mut targets = vec![check];
        targets.extend(["Continuous", "ContinuousBuild", "Experimental", "Nightly", "NightlyTest"].map(utility));
        let outcome = TargetsOutcome {
            profile: "dbg".into(),
            preset: None,
            configuration: Some("Debug".into()),
            total: targets.len(),
            targets,
            note: None,
            error: None,
        };
        expect![[r#"
            CMake targets

            dbg (Debug): 6 targets
              check (utility) project/CMakeLists.txt:319; 2 sources
              5 utility targets that no line of the project defines (CMake modules such as CTest add them): Continuous, ContinuousBuild, Experimental, Nightly and 1 more"#]]
        .assert_eq(&targets_text(&[outcome]));
    }
}

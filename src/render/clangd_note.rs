//! The clangd note of a workspace result: what a read, write or edit did to the analysis
//! (withdrawn configurations, inferred flags, introduced and resolved diagnostics, or why nothing
//! checked it), made from the value the clangd provider returns; and the note of a `cmake_build` of
//! a profile whose build directory an earlier session left.

use crate::clangd::includers::IncludersCheck;
use crate::clangd::model::{DiagnosticBrief, DiagnosticDelta, MutationAnalysis, Severity};
use crate::clangd::standing::{EarlierBuild, Unavailable};
use crate::render::diagnostic_line::diagnostic_line;

/// What a read, write or edit did to clangd's analysis, for the workspace result text: withdrawn
/// configurations, flags clangd inferred, and per group of agreeing configurations the
/// diagnostics the mutation introduced and resolved (errors first, at most 10 lines, then how many
/// more `resources.clangd` holds). `None` when there is nothing to say.
pub fn mutation_note(path: &str, analysis: &MutationAnalysis) -> Option<String> {
    let mut lines = Vec::new();
    if !analysis.withdrawn.is_empty() {
        let withdrawn = analysis.withdrawn.join(", ");
        lines.push(match &analysis.withdrawn_glob {
            Some(dir) => format!(
                "clangd configurations {withdrawn} withdrawn: {path} may change what CMake globs in {}/; run \
                 cmake_configure to include it",
                dir.trim_end_matches('/')
            ),
            None => {
                format!("clangd configurations {withdrawn} withdrawn: {path} is a CMake input; run cmake_configure")
            }
        });
    }
    if let Some(reason) = &analysis.not_checked {
        lines.push(format!("clangd: not checked — {reason}"));
    }
    if !analysis.inferred_flags.is_empty() {
        lines.push(format!(
            "clangd ({}): {path} is not in the compilation database; it was analysed with flags clangd infers",
            analysis.inferred_flags.join(", ")
        ));
    }
    // With the units that include a header checked too, each line says which file it is about.
    let subject = match analysis.includers.is_empty() {
        true => String::new(),
        false => format!(" in {path}"),
    };
    for delta in &analysis.deltas {
        lines.push(delta_header(delta, &subject));
        let shown = delta.introduced.iter().map(|d| ("", d)).chain(delta.resolved.iter().map(|d| ("resolved: ", d)));
        let shown = shown.chain(delta.hidden.iter().map(|d| ("not reported: ", d)));
        let mut n_shown = 0;
        for (prefix, brief) in shown.take(DELTA_LINES) {
            lines.push(format!("  {prefix}{}", brief_line(path, brief)));
            n_shown += 1;
        }
        let total = (delta.introduced_count + delta.resolved_count) as usize + delta.hidden.len();
        if total > n_shown {
            lines.push(format!("  …and {} more in resources.clangd", total - n_shown));
        }
    }
    for check in &analysis.includers {
        includers(&mut lines, check);
    }
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// The `cmake_build` line for built profiles whose build directory an earlier session left (a build
/// never confirms a context); empty when there are none.
pub fn earlier_builds(earlier: Vec<EarlierBuild>) -> String {
    if earlier.is_empty() {
        return String::new();
    }
    format!("\nclangd: {}; a build does not", Unavailable { earlier, ..Unavailable::default() })
}

/// What a header's edit did to the units that include it.
fn includers(lines: &mut Vec<String>, check: &IncludersCheck) {
    let configurations = check.configurations.join(", ");
    let budget = check.budget_ms as f64 / 1000.0;
    let n = check.including;
    if n == 0 {
        lines.push(format!(
            "clangd ({configurations}): no translation unit of the compilation database includes it by name"
        ));
        return;
    }
    let files = if n == 1 { "file that includes" } else { "files that include" };
    if check.checked == 0 {
        let first = check
            .first
            .as_deref()
            .map(|first| format!("; clangd_diagnostics on {first} checks it"))
            .unwrap_or_default();
        lines.push(format!("clangd ({configurations}): checked none of {n} {files} it within {budget} s{first}"));
        return;
    }
    let found = match check.error_count {
        0 => "no new errors in them".to_owned(),
        1 => "1 new error:".to_owned(),
        k => format!("{k} new errors:"),
    };
    lines.push(format!(
        "clangd ({configurations}): checked {} of {n} {files} it within {budget} s; {found}",
        check.checked
    ));
    for error in &check.errors {
        lines.push(format!("  {}", brief_line(&error.path, &error.diagnostic)));
    }
    if check.error_count as usize > check.errors.len() {
        let more = check.error_count as usize - check.errors.len();
        lines.push(format!("  …and {}", crate::text::plural(more, "more new error", "more new errors")));
    }
}

/// The most diagnostic lines one delta shows in text.
const DELTA_LINES: usize = 10;

/// The first line of one delta: `subject` (empty, or ` in <path>`) follows the configurations.
fn delta_header(delta: &DiagnosticDelta, subject: &str) -> String {
    let head = format!("clangd ({}){subject}", delta.configurations.join(", "));
    if delta.introduced_count == 0 {
        return match delta.resolved_count {
            0 => format!("{head}: no new diagnostics"),
            n => format!("{head}: no new diagnostics, {n} resolved"),
        };
    }
    let n = delta.introduced_count;
    let all = |severity| {
        delta.introduced.len() == n as usize && delta.introduced.iter().all(|d| d.severity == Some(severity))
    };
    let noun = if all(Severity::Error) {
        if n == 1 { "error" } else { "errors" }
    } else if all(Severity::Warning) {
        if n == 1 { "warning" } else { "warnings" }
    } else if n == 1 {
        "diagnostic"
    } else {
        "diagnostics"
    };
    let mut res = format!("{head}: {n} new {noun}, {} resolved", delta.resolved_count);
    if !delta.hidden.is_empty() {
        let k = delta.hidden.len();
        let what = if delta.hidden.iter().all(|d| d.severity == Some(Severity::Warning)) {
            if k == 1 { "warning" } else { "warnings" }
        } else if k == 1 {
            "diagnostic"
        } else {
            "diagnostics"
        };
        let stands = if n == 1 { "it stands" } else { "they stand" };
        res.push_str(&format!("; {k} {what} not reported while {stands}"));
    }
    res
}

/// `path:line:column: severity: message [source, code]`, with a one-based column as compilers
/// print it.
fn brief_line(path: &str, brief: &DiagnosticBrief) -> String {
    let code = brief.code.as_ref().map(ToString::to_string);
    let mut res = diagnostic_line(
        path,
        u64::from(brief.line),
        u64::from(brief.character) + 1,
        brief.severity.map_or("diagnostic", |s| s.as_str()),
        &brief.message,
        brief.source.as_deref(),
        code.as_deref(),
    );
    res.extend(code.as_deref().and_then(crate::render::clangd::clangd_only));
    res
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::clangd::model::DiagnosticCode;

    fn brief(line: u32, severity: Severity, message: &str) -> DiagnosticBrief {
        DiagnosticBrief {
            line,
            character: 45,
            severity: Some(severity),
            message: message.into(),
            source: Some("clang".into()),
            code: Some(DiagnosticCode::Text("undeclared_var_use".into())),
        }
    }

    #[test]
    fn notes_name_introduced_and_resolved_diagnostics() {
        let analysis = MutationAnalysis {
            deltas: vec![
                DiagnosticDelta {
                    configurations: vec!["Debug".into(), "Release".into()],
                    introduced_count: 1,
                    resolved_count: 0,
                    introduced: vec![brief(
                        1224,
                        Severity::Error,
                        "use of undeclared identifier 'undeclared_forge_symbol'",
                    )],
                    resolved: vec![],
                    hidden: vec![brief(1220, Severity::Warning, "unused variable 'x'")],
                },
                DiagnosticDelta {
                    configurations: vec!["Profile".into()],
                    introduced_count: 12,
                    resolved_count: 1,
                    introduced: (1..=10).map(|n| brief(n, Severity::Warning, "unused")).collect(),
                    resolved: vec![brief(3, Severity::Error, "gone")],
                    hidden: vec![],
                },
            ],
            inferred_flags: vec!["Debug".into()],
            withdrawn: vec![],
            withdrawn_glob: None,
            includers: vec![IncludersCheck {
                configurations: vec!["Debug".into()],
                including: 41,
                checked: 3,
                budget_ms: 2000,
                first: None,
                error_count: 1,
                errors: vec![crate::clangd::includers::UnitError {
                    path: "project/src/pugixml.cpp".into(),
                    diagnostic: brief(7092, Severity::Error, "no matching member function"),
                }],
            }],
            not_checked: None,
        };
        expect![[r#"
            clangd (Debug): project/cJSON.c is not in the compilation database; it was analysed with flags clangd infers
            clangd (Debug, Release) in project/cJSON.c: 1 new error, 0 resolved; 1 warning not reported while it stands
              project/cJSON.c:1224:46: error: use of undeclared identifier 'undeclared_forge_symbol' [clang, undeclared_var_use]
              not reported: project/cJSON.c:1220:46: warning: unused variable 'x' [clang, undeclared_var_use]
            clangd (Profile) in project/cJSON.c: 12 new diagnostics, 1 resolved
              project/cJSON.c:1:46: warning: unused [clang, undeclared_var_use]
              project/cJSON.c:2:46: warning: unused [clang, undeclared_var_use]
              project/cJSON.c:3:46: warning: unused [clang, undeclared_var_use]
              project/cJSON.c:4:46: warning: unused [clang, undeclared_var_use]
              project/cJSON.c:5:46: warning: unused [clang, undeclared_var_use]
              project/cJSON.c:6:46: warning: unused [clang, undeclared_var_use]
              project/cJSON.c:7:46: warning: unused [clang, undeclared_var_use]
              project/cJSON.c:8:46: warning: unused [clang, undeclared_var_use]
              project/cJSON.c:9:46: warning: unused [clang, undeclared_var_use]
              project/cJSON.c:10:46: warning: unused [clang, undeclared_var_use]
              …and 3 more in resources.clangd
            clangd (Debug): checked 3 of 41 files that include it within 2 s; 1 new error:
              project/src/pugixml.cpp:7092:46: error: no matching member function [clang, undeclared_var_use]"#]]
        .assert_eq(&mutation_note("project/cJSON.c", &analysis).unwrap());
        let quiet = MutationAnalysis {
            deltas: vec![DiagnosticDelta {
                configurations: vec!["Debug".into()],
                introduced_count: 0,
                resolved_count: 0,
                introduced: vec![],
                resolved: vec![],
                hidden: vec![],
            }],
            ..MutationAnalysis::default()
        };
        assert_eq!(mutation_note("project/a.c", &quiet).unwrap(), "clangd (Debug): no new diagnostics");
        let withdrawn =
            MutationAnalysis { withdrawn: vec!["Debug".into(), "Release".into()], ..MutationAnalysis::default() };
        assert_eq!(
            mutation_note("project/CMakeLists.txt", &withdrawn).unwrap(),
            "clangd configurations Debug, Release withdrawn: project/CMakeLists.txt is a CMake input; run cmake_configure"
        );
        let globbed = MutationAnalysis {
            withdrawn: vec!["dbg".into()],
            withdrawn_glob: Some("project/tests".into()),
            ..MutationAnalysis::default()
        };
        assert_eq!(
            mutation_note("project/tests/new.cpp", &globbed).unwrap(),
            "clangd configurations dbg withdrawn: project/tests/new.cpp may change what CMake globs in project/tests/; \
             run cmake_configure to include it"
        );
        assert_eq!(mutation_note("project/a.c", &MutationAnalysis::default()), None);
        let unchecked = MutationAnalysis {
            not_checked: Some(Unavailable {
                withdrawn: vec![crate::clangd::standing::Withdrawn {
                    id: "dbg".into(),
                    by: Some("project/CMakeLists.txt".into()),
                }],
                ..Unavailable::default()
            }),
            ..MutationAnalysis::default()
        };
        assert_eq!(
            mutation_note("project/a.c", &unchecked).unwrap(),
            "clangd: not checked — configuration dbg was withdrawn by project/CMakeLists.txt; run cmake_configure"
        );
        let built = vec![EarlierBuild {
            profile: "dbg".into(),
            preset: None,
            build_directory: "storage/build/cmake-dbg".into(),
        }];
        assert_eq!(
            earlier_builds(built),
            "\nclangd: storage/build/cmake-dbg exists from an earlier session; cmake_configure with profiles [\"dbg\"] \
             confirms it; a build does not"
        );
        assert_eq!(earlier_builds(Vec::new()), "");
    }
}

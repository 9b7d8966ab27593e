//! The clangd note of a workspace result: what a read, write or edit did to the analysis
//! (withdrawn configurations, inferred flags, introduced and resolved diagnostics).

use std::fmt::Write as _;

use crate::clangd::model::{DiagnosticBrief, DiagnosticDelta, MutationAnalysis, Severity};

/// What a read, write or edit did to clangd's analysis, for the workspace result text: withdrawn
/// configurations, flags clangd inferred, and per group of agreeing configurations the
/// diagnostics the mutation introduced and resolved (errors first, at most 10 lines, then how many
/// more `resources.clangd` holds). `None` when there is nothing to say.
pub fn mutation_note(path: &str, analysis: &MutationAnalysis) -> Option<String> {
    let mut lines = Vec::new();
    if !analysis.withdrawn.is_empty() {
        lines.push(format!(
            "clangd configurations {} withdrawn: {path} is a CMake input; run cmake_configure",
            analysis.withdrawn.join(", ")
        ));
    }
    if !analysis.inferred_flags.is_empty() {
        lines.push(format!(
            "clangd ({}): {path} is not in the compilation database; it was analysed with flags clangd infers",
            analysis.inferred_flags.join(", ")
        ));
    }
    for delta in &analysis.deltas {
        lines.push(delta_header(delta));
        let shown = delta.introduced.iter().map(|d| (false, d)).chain(delta.resolved.iter().map(|d| (true, d)));
        let mut n_shown = 0;
        for (resolved, brief) in shown.take(DELTA_LINES) {
            let prefix = if resolved { "resolved: " } else { "" };
            lines.push(format!("  {prefix}{}", brief_line(path, brief)));
            n_shown += 1;
        }
        let total = (delta.introduced_count + delta.resolved_count) as usize;
        if total > n_shown {
            lines.push(format!("  …and {} more in resources.clangd", total - n_shown));
        }
    }
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// The most diagnostic lines one delta shows in text.
const DELTA_LINES: usize = 10;

fn delta_header(delta: &DiagnosticDelta) -> String {
    let configurations = delta.configurations.join(", ");
    if delta.introduced_count == 0 {
        return match delta.resolved_count {
            0 => format!("clangd ({configurations}): no new diagnostics"),
            n => format!("clangd ({configurations}): no new diagnostics, {n} resolved"),
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
    format!("clangd ({configurations}): {n} new {noun}, {} resolved", delta.resolved_count)
}

/// `path:line:column: severity: message (source, code)`, with a one-based column as compilers
/// print it.
fn brief_line(path: &str, brief: &DiagnosticBrief) -> String {
    let severity = brief.severity.map_or("diagnostic", |s| s.as_str());
    let message = brief.message.lines().next().unwrap_or_default();
    let mut res = format!("{path}:{}:{}: {severity}: {message}", brief.line, brief.character + 1);
    let code = brief.code.as_ref().map(|code| match code {
        crate::clangd::model::DiagnosticCode::Number(n) => n.to_string(),
        crate::clangd::model::DiagnosticCode::Text(text) => text.clone(),
    });
    match (brief.source.as_deref(), code.as_deref()) {
        (Some(source), Some(code)) => {
            let _ = write!(res, " ({source}, {code})");
        }
        (Some(one), None) | (None, Some(one)) => {
            let _ = write!(res, " ({one})");
        }
        (None, None) => {}
    }
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
                },
                DiagnosticDelta {
                    configurations: vec!["Profile".into()],
                    introduced_count: 12,
                    resolved_count: 1,
                    introduced: (1..=10).map(|n| brief(n, Severity::Warning, "unused")).collect(),
                    resolved: vec![brief(3, Severity::Error, "gone")],
                },
            ],
            inferred_flags: vec!["Debug".into()],
            withdrawn: vec![],
        };
        expect![[r#"
            clangd (Debug): project/cJSON.c is not in the compilation database; it was analysed with flags clangd infers
            clangd (Debug, Release): 1 new error, 0 resolved
              project/cJSON.c:1224:46: error: use of undeclared identifier 'undeclared_forge_symbol' (clang, undeclared_var_use)
            clangd (Profile): 12 new diagnostics, 1 resolved
              project/cJSON.c:1:46: warning: unused (clang, undeclared_var_use)
              project/cJSON.c:2:46: warning: unused (clang, undeclared_var_use)
              project/cJSON.c:3:46: warning: unused (clang, undeclared_var_use)
              project/cJSON.c:4:46: warning: unused (clang, undeclared_var_use)
              project/cJSON.c:5:46: warning: unused (clang, undeclared_var_use)
              project/cJSON.c:6:46: warning: unused (clang, undeclared_var_use)
              project/cJSON.c:7:46: warning: unused (clang, undeclared_var_use)
              project/cJSON.c:8:46: warning: unused (clang, undeclared_var_use)
              project/cJSON.c:9:46: warning: unused (clang, undeclared_var_use)
              project/cJSON.c:10:46: warning: unused (clang, undeclared_var_use)
              …and 3 more in resources.clangd"#]]
        .assert_eq(&mutation_note("project/cJSON.c", &analysis).unwrap());
        let quiet = MutationAnalysis {
            deltas: vec![DiagnosticDelta {
                configurations: vec!["Debug".into()],
                introduced_count: 0,
                resolved_count: 0,
                introduced: vec![],
                resolved: vec![],
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
        assert_eq!(mutation_note("project/a.c", &MutationAnalysis::default()), None);
    }
}

//! The diagnostics of a `cmake_build` text: each diagnostic once, however often the transcript
//! printed it (a header's warning per translation unit, a template's error per instantiation), with
//! where it was printed, the counts per severity, and what was left out with how to find it.
//!
//! Architecture invariant: every count in a build text counts a diagnostic once, as the structured
//! `diagnostics` list it (the per-execution and the call's counts agree with the items).

use std::fmt::Write as _;

use crate::cmake::{BuildDiagnostic, BuildOutcome, Severity};
use crate::process::ProcessId;
use crate::text::plural;

/// `1 error; 2 warnings; 0 notes`, each diagnostic counted once however often it was printed.
pub(super) fn severity_counts(diagnostics: &[&BuildDiagnostic]) -> String {
    let count = |severity: Severity| diagnostics.iter().filter(|d| d.severity == severity).count();
    format!(
        "{}; {}; {}",
        plural(count(Severity::Error), "error", "errors"),
        plural(count(Severity::Warning), "warning", "warnings"),
        plural(count(Severity::Note), "note", "notes")
    )
}

/// A diagnostic as a compiler prints it, with where it was printed: `project/a.cpp:4:12: error:
/// msg [-Wx] (target fixture_good)`, or for one printed more than once `(3 translation units:
/// pugixml, pugixml-check)`, `(27 instantiations in 1 translation unit: span_tests)`.
pub fn diagnostic_line(d: &BuildDiagnostic) -> String {
    let mut res = String::new();
    if let Some(path) = &d.path {
        res.push_str(&path.to_string());
        for n in [d.line, d.column].into_iter().flatten() {
            let _ = write!(res, ":{n}");
        }
        res.push_str(": ");
    }
    let _ = write!(res, "{}: {}", d.severity.as_str(), d.message);
    if let Some(code) = &d.code {
        let _ = write!(res, " [{code}]");
    }
    let targets = d.targets.join(", ");
    if d.count <= 1 {
        if !targets.is_empty() {
            let _ = write!(res, " (target {targets})");
        }
        return res;
    }
    let times = d.count as usize;
    let repeated = if d.messages > 1 {
        format!("{times} instantiations")
    } else if d.count > d.steps {
        format!("{times} times")
    } else {
        String::new()
    };
    let steps = d.steps as usize;
    let printed_by = match steps {
        0 => String::new(),
        _ if d.compiled => plural(steps, "translation unit", "translation units"),
        _ => plural(steps, "build step", "build steps"),
    };
    let mut suffix = match (repeated.is_empty(), printed_by.is_empty()) {
        (false, false) => format!("{repeated} in {printed_by}"),
        (true, _) => printed_by,
        (false, true) => repeated,
    };
    if !targets.is_empty() {
        let _ = write!(suffix, ": {targets}");
    }
    let _ = write!(res, " ({suffix})");
    res
}

/// Most diagnostic lines a build text lists.
const LISTED_DIAGNOSTICS: usize = 10;

/// The call's diagnostics once each (a message several executions share names them), errors
/// first, at most [`LISTED_DIAGNOSTICS`] lines, then how many were left out and where they are.
pub(super) fn section(res: &mut String, outcomes: &[BuildOutcome]) {
    let mut merged: Vec<(&BuildDiagnostic, Vec<String>, Option<ProcessId>)> = Vec::new();
    for o in outcomes {
        let name = match &o.preset {
            Some(preset) => format!("{}/{preset}", o.profile),
            None => o.profile.clone(),
        };
        for d in &o.diagnostics {
            match merged.iter_mut().find(|(seen, _, _)| seen.is_same(d)) {
                Some((_, names, _)) if !names.contains(&name) => names.push(name.clone()),
                Some(_) => {}
                None => merged.push((d, vec![name.clone()], o.process_id)),
            }
        }
    }
    if merged.is_empty() {
        return;
    }
    let all: Vec<&BuildDiagnostic> = merged.iter().map(|(d, _, _)| *d).collect();
    let _ = write!(res, "\n\nDiagnostics: {}", severity_counts(&all));
    let listed = if all.iter().any(|d| d.severity == Severity::Error) { Severity::Error } else { Severity::Warning };
    let mut left: Vec<&(&BuildDiagnostic, Vec<String>, Option<ProcessId>)> = Vec::new();
    let mut shown = 0;
    for entry in &merged {
        let (d, names, _) = entry;
        if d.severity != listed || shown == LISTED_DIAGNOSTICS {
            left.push(entry);
            continue;
        }
        shown += 1;
        let _ = write!(res, "\n  {}", diagnostic_line(d));
        if outcomes.len() > 1 {
            let _ = write!(res, " in {}", names.join(", "));
        }
    }
    if left.is_empty() {
        return;
    }
    let mut counts = Vec::new();
    let mut words = Vec::new();
    for (severity, one, many) in [
        (Severity::Error, "error", "errors"),
        (Severity::Warning, "warning", "warnings"),
        (Severity::Note, "note", "notes"),
    ] {
        let n = left.iter().filter(|(d, _, _)| d.severity == severity).count();
        if n > 0 {
            counts.push(plural(n, one, many));
            words.push(one);
        }
    }
    let _ = write!(res, "\n  …and {} more ({})", left.len(), counts.join("; "));
    let mut processes: Vec<String> = Vec::new();
    for id in left.iter().filter_map(|(_, _, process)| *process) {
        if !processes.contains(&id.to_string()) {
            processes.push(id.to_string());
        }
    }
    let pattern = words.join("|");
    match processes.as_slice() {
        [] => res.push_str(" in the structured diagnostics"),
        [id] => {
            let _ = write!(res, ": process_get(process_id={id}, match=\"{pattern}\") finds them");
        }
        ids => {
            let _ = write!(res, ": process_get with match=\"{pattern}\" on processes {} finds them", ids.join(", "));
        }
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::render::cmake::build_text;
    use crate::render::cmake::tests::{error, q};

    #[test]
    fn repeated_diagnostics_and_failed_links() {
        let header = BuildDiagnostic {
            path: Some(q("project/src/pugixml.hpp")),
            severity: Severity::Warning,
            line: Some(10),
            column: Some(5),
            message: "unused parameter 'x'".into(),
            code: Some("-Wunused-parameter".into()),
            targets: vec!["pugixml".into(), "pugixml-check".into()],
            count: 3,
            steps: 3,
            ..error()
        };
        let template = BuildDiagnostic {
            path: Some(q("project/include/gsl/span")),
            line: Some(425),
            column: Some(15),
            message: "no matching function for call to 'f(int)'".into(),
            targets: vec!["span_tests".into()],
            count: 27,
            messages: 27,
            ..error()
        };
        let missing = BuildDiagnostic {
            path: None,
            line: None,
            column: None,
            message: "project/src/x.cpp: No such file or directory".into(),
            count: 2,
            steps: 2,
            compiled: false,
            targets: Vec::new(),
            ..error()
        };
        let outcomes = [BuildOutcome {
            profile: "Debug".into(),
            preset: None,
            configuration: Some("Debug".into()),
            completed_steps: Some(41),
            total_steps: Some(41),
            up_to_date: false,
            diagnostics: vec![header.clone(), template, missing],
            failed_steps: vec!["Linking CXX executable fixture_link_error".into()],
            error: Some("cmake --build exited with code 1: error: undefined reference".into()),
            process_id: Some(ProcessId(3)),
            acceleration: None,
        }];
        expect![[r#"
            Build results: 0 executions succeeded; 1 failed.

            Diagnostics: 2 errors; 1 warning; 0 notes
              project/include/gsl/span:425:15: error: no matching function for call to 'f(int)' (27 instantiations in 1 translation unit: span_tests)
              error: project/src/x.cpp: No such file or directory (2 build steps)
              …and 1 more (1 warning): process_get(process_id=3, match="warning") finds them

            Debug: Failed
              Configuration: Debug
              Steps: 40 of 41 finished; linking failed (fixture_link_error)
              Diagnostics: 2 errors; 1 warning; 0 notes
              Error: cmake --build exited with code 1: error: undefined reference
              Command output: process_get(process_id=3)"#]].assert_eq(&build_text(&outcomes));
        assert_eq!(
            diagnostic_line(&header),
            "project/src/pugixml.hpp:10:5: warning: unused parameter 'x' [-Wunused-parameter] (3 translation units: \
             pugixml, pugixml-check)"
        );
        let twice = BuildDiagnostic { count: 2, steps: 1, targets: Vec::new(), ..header };
        assert_eq!(
            diagnostic_line(&twice),
            "project/src/pugixml.hpp:10:5: warning: unused parameter 'x' [-Wunused-parameter] (2 times in 1 \
             translation unit)"
        );
    }
}

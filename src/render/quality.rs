//! Plain text for the quality tools: clang-tidy diagnostics in the clangd tools' compiler style
//! (one block per file and agreeing configurations, each fix-it under its diagnostic), and
//! clang-format's per-file changes as numbered diff lines. What a budget left out is said plainly.

use std::fmt::Write as _;

use crate::quality::format::FormatReport;
use crate::quality::model::RunFailure;
use crate::quality::tidy::TidyReport;
use crate::render::clangd::{compiler_style, range};
use crate::workspace::diff::{FileDiff, LineKind};

const COORDINATES: &str = "Coordinates: lines are one-based; characters are zero-based.";
/// Diff lines shown per file; the rest is counted.
const DIFF_LINES: usize = 40;

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 { format!("1 {one}") } else { format!("{n} {many}") }
}

fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('\n', "\\n").replace('\t', "\\t").replace('"', "\\\""))
}

/// `quality_tidy`.
pub fn tidy(report: &TidyReport, max_diagnostics: usize) -> String {
    let mut res = format!(
        "clang-tidy on {} in {}.\n{COORDINATES}\nChecked {} of {}.",
        report.path,
        plural(report.configurations.len(), "configuration", "configurations")
            + ": "
            + &report.configurations.join(", "),
        report.files_checked,
        plural(report.files_total, "translation unit", "translation units"),
    );
    let listed: usize = report.files.iter().map(|file| file.diagnostics.len()).sum();
    if report.files.is_empty() {
        res.push_str("\nNo diagnostics reported.");
    }
    for file in &report.files {
        let _ = write!(res, "\n\nConfigurations: {}", file.configurations.join(", "));
        for diagnostic in &file.diagnostics {
            res.push('\n');
            res.push_str(&compiler_style(&file.path, &diagnostic.diagnostic));
            for fix in &diagnostic.fixes {
                let at = if fix.path == file.path { String::new() } else { format!("{}, ", fix.path) };
                let _ = write!(
                    res,
                    "\n  Fix-it: {at}{}: {} → {}",
                    range(&fix.range),
                    quoted(&fix.old_text),
                    quoted(&fix.new_text)
                );
            }
        }
    }
    if report.more_diagnostics > 0 {
        let _ = write!(
            res,
            "\n\n{} listed; {} more not listed (max_diagnostics {max_diagnostics}).",
            plural(listed, "diagnostic", "diagnostics"),
            report.more_diagnostics
        );
    }
    not_checked(&mut res, "\n", report.files_total - report.files_checked, "the diagnostics budget was reached");
    for changed in &report.changed {
        let _ = write!(
            res,
            "\nApplied {} to {}.",
            plural(changed.replacements, "fix-it replacement", "fix-it replacements"),
            changed.path
        );
    }
    failures(&mut res, &report.failures);
    res
}

/// `quality_format`.
pub fn format(report: &FormatReport, apply: bool, max_files: usize) -> String {
    let mut res = format!(
        "clang-format on {} (toolset {}).\nChecked {} of {}: {} formatted, {} {}.",
        report.path,
        report.toolset,
        report.files_checked,
        plural(report.files_total, "file", "files"),
        report.formatted,
        report.files.len(),
        match (apply, report.files.len()) {
            (true, _) => "reformatted",
            (false, 1) => "needs formatting",
            (false, _) => "need formatting",
        }
    );
    for file in &report.files {
        let status = if apply && !file.applied { "; not written" } else { "" };
        let _ = write!(
            res,
            "\n\n{}: {}{}{status}",
            file.path,
            plural(file.replacements, "replacement", "replacements"),
            if file.incomplete { "; clang-format could not format all of it" } else { "" }
        );
        diff_lines(&mut res, &file.diff);
    }
    if report.more_files > 0 {
        let _ = write!(
            res,
            "\n\n{} needing formatting {} not listed{} (max_files {max_files}).",
            plural(report.more_files, "more file", "more files"),
            if report.more_files == 1 { "is" } else { "are" },
            if apply { " or written" } else { "" }
        );
    }
    let budget = plural(max_files, "file needing formatting", "files needing formatting");
    let reason = format!("the max_files budget ({budget}) was reached");
    not_checked(&mut res, "\n\n", report.files_total - report.files_checked, &reason);
    failures(&mut res, &report.failures);
    res
}

/// `-  3 | old` / `+  3 | new` / `   4 | context`, at most [`DIFF_LINES`].
fn diff_lines(res: &mut String, diff: &FileDiff) {
    let lines: Vec<_> = diff.hunks.iter().flat_map(|hunk| hunk.lines.iter()).collect();
    for line in lines.iter().take(DIFF_LINES) {
        let (mark, number) = match line.kind {
            LineKind::Removed => ('-', line.before_line),
            LineKind::Added => ('+', line.after_line),
            LineKind::Context => (' ', line.after_line),
        };
        let text = line.text.trim_end_matches(['\n', '\r']);
        let _ = write!(res, "\n{mark}{:>5} | {text}", number.unwrap_or_default());
    }
    if lines.len() > DIFF_LINES {
        let _ = write!(res, "\n… {} more diff lines", lines.len() - DIFF_LINES);
    }
}

/// `N more files not checked: <reason>.` after `separator`, when a budget left files out.
fn not_checked(res: &mut String, separator: &str, unchecked: usize, reason: &str) {
    if unchecked > 0 {
        let files = if unchecked == 1 { "file" } else { "files" };
        let _ = write!(res, "{separator}{unchecked} more {files} not checked: {reason}.");
    }
}

fn failures(res: &mut String, failures: &[RunFailure]) {
    for failure in failures {
        let configuration = failure.configuration.as_ref().map(|c| format!(" ({c})")).unwrap_or_default();
        let process = failure.process_id.map(|id| format!("; process {id}")).unwrap_or_default();
        let _ = write!(res, "\nFailed: {}{configuration}: {}{process}", failure.path, failure.error);
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::clangd::model::{Diagnostic, DiagnosticCode, Position, Severity, SourceRange};
    use crate::quality::format::FormatFile;
    use crate::quality::model::{Fix, TidyDiagnostic, TidyFile};
    use crate::workspace::diff::diff_texts;
    use crate::workspace::path::QualifiedPath;

    fn q(text: &str) -> QualifiedPath {
        QualifiedPath::parse(text).unwrap()
    }

    fn span(line: u32, start: u32, end: u32) -> SourceRange {
        SourceRange { start: Position { line, character: start }, end: Position { line, character: end } }
    }

    #[test]
    fn tidy_lists_diagnostics_fixes_budgets_and_failures() {
        let diagnostic = Diagnostic {
            range: span(4, 11, 15),
            severity: Some(Severity::Warning),
            message: "use nullptr".into(),
            code: Some(DiagnosticCode::Text("modernize-use-nullptr".into())),
            source: Some("clang-tidy".into()),
            tags: vec![],
            related: vec![],
        };
        let fix = Fix {
            path: "project/quality/tidy_me.cpp".into(),
            range: span(4, 11, 15),
            old_text: "NULL".into(),
            new_text: "nullptr".into(),
        };
        let report = TidyReport {
            path: q("project"),
            configurations: vec!["Debug".into(), "Release".into()],
            files_total: 4,
            files_checked: 3,
            files: vec![TidyFile {
                configurations: vec!["Debug".into(), "Release".into()],
                path: "project/quality/tidy_me.cpp".into(),
                diagnostics: vec![TidyDiagnostic { diagnostic, fixes: vec![fix] }],
            }],
            more_diagnostics: 2,
            changed: vec![],
            failures: vec![RunFailure {
                path: "project/src/math.cpp".into(),
                configuration: Some("Release".into()),
                error: "clang-tidy exited with code 1".into(),
                process_id: Some(7),
            }],
        };
        expect![[r#"
            clang-tidy on project/ in 2 configurations: Debug, Release.
            Coordinates: lines are one-based; characters are zero-based.
            Checked 3 of 4 translation units.

            Configurations: Debug, Release
            project/quality/tidy_me.cpp, line 4, character 11 to line 4, character 15
              warning (clang-tidy, modernize-use-nullptr): use nullptr
              Fix-it: line 4, character 11 to line 4, character 15: "NULL" → "nullptr"

            1 diagnostic listed; 2 more not listed (max_diagnostics 1).
            1 more file not checked: the diagnostics budget was reached.
            Failed: project/src/math.cpp (Release): clang-tidy exited with code 1; process 7"#]]
        .assert_eq(&tidy(&report, 1));
    }

    #[test]
    fn format_shows_numbered_diff_lines() {
        let path = q("project/src/a.cpp");
        let diff = diff_texts(&path, "int  main( ) {\nreturn 0;}\n", "int main() {\n  return 0;\n}\n");
        let report = FormatReport {
            path: q("project/src"),
            toolset: "system".into(),
            files_total: 3,
            files_checked: 2,
            formatted: 1,
            files: vec![FormatFile { path, replacements: 4, incomplete: false, diff, applied: false }],
            more_files: 2,
            failures: vec![],
        };
        expect![[r#"
            clang-format on project/src (toolset system).
            Checked 2 of 3 files: 1 formatted, 1 needs formatting.

            project/src/a.cpp: 4 replacements
            -    1 | int  main( ) {
            -    2 | return 0;}
            +    1 | int main() {
            +    2 |   return 0;
            +    3 | }

            2 more files needing formatting are not listed (max_files 1).

            1 more file not checked: the max_files budget (1 file needing formatting) was reached."#]]
        .assert_eq(&format(&report, false, 1));
    }
}

//! Plain text for the quality tools: clang-tidy findings grouped by check (a count per check, one
//! compiler-style line per finding with its fix-its), and clang-format's per-file changes as
//! numbered diff lines within a text budget. What a budget left out is counted and said plainly.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::clangd::model::Diagnostic;
use crate::quality::format::{FormatReport, Skipped};
use crate::quality::model::{Fix, RunFailure, TidyDiagnostic};
use crate::quality::tidy::{TidyReport, check_name};
use crate::text::plural;
use crate::workspace::diff::{FileDiff, LineKind};

/// Diff lines shown per file; the rest is counted.
const DIFF_LINES: usize = 40;
/// Bytes of text a quality result holds at most (clients refuse results far beyond this); what
/// does not fit is counted, and the structured result and the diff resources still have it.
pub const TEXT_BUDGET: usize = 80 * 1024;
/// Characters of a fix-it's old or new text shown.
const FIX_CHARS: usize = 40;

fn quoted(text: &str) -> String {
    let clipped: String = text.chars().take(FIX_CHARS).collect();
    let more = if clipped.len() < text.len() { "…" } else { "" };
    let escaped = clipped.replace('\\', "\\\\").replace('\n', "\\n").replace('\t', "\\t").replace('"', "\\\"");
    format!("\"{escaped}{more}\"")
}

/// `project/src/a.cpp:7065:15: warning: message [clang-tidy, check-name]`, columns one-based.
fn finding_line(path: &str, diagnostic: &Diagnostic) -> String {
    let start = diagnostic.range.start;
    let check = Some(check_name(diagnostic)).filter(|code| !code.is_empty());
    super::diagnostic_line::diagnostic_line(
        path,
        u64::from(start.line),
        u64::from(start.character) + 1,
        diagnostic.severity.map_or("diagnostic", |s| s.as_str()),
        &diagnostic.message.replace('\n', " "),
        diagnostic.source.as_deref(),
        check.as_deref(),
    )
}

/// `; fix-it "NULL" → "nullptr"`, with the place of each fix-it that is not the finding's own.
fn fixes(path: &str, finding: &TidyDiagnostic) -> String {
    let shown: Vec<String> = finding
        .fixes
        .iter()
        .map(|fix: &Fix| {
            let change = format!("{} → {}", quoted(&fix.old_text), quoted(&fix.new_text));
            let at = fix.range.start;
            match (fix.path == path, fix.range == finding.diagnostic.range) {
                (true, true) => change,
                (true, false) => format!("at {}:{}: {change}", at.line, at.character + 1),
                (false, _) => format!("at {}:{}:{}: {change}", fix.path, at.line, at.character + 1),
            }
        })
        .collect();
    match shown.len() {
        0 => String::new(),
        1 => format!("; fix-it {}", shown[0]),
        _ => format!("; fix-its {}", shown.join(", ")),
    }
}

/// Adds `line` after a line break unless the text budget is spent; says whether it was added.
fn within_budget(res: &mut String, line: &str) -> bool {
    if res.len() + line.len() + 1 > TEXT_BUDGET {
        return false;
    }
    res.push('\n');
    res.push_str(line);
    true
}

/// `quality_tidy`: the findings grouped by check, most frequent first.
pub fn tidy(report: &TidyReport, max_diagnostics: usize) -> String {
    let mut res = format!(
        "clang-tidy on {} in {}: {}. Checked {} of {}.",
        report.path,
        plural(report.configurations.len(), "configuration", "configurations"),
        report.configurations.join(", "),
        report.files_checked,
        plural(report.files_total, "translation unit", "translation units"),
    );
    if let Some(unit) = &report.through {
        let _ = write!(
            res,
            "\n{} is a header: checked within {unit}, which includes it; only its own findings are listed.",
            report.path
        );
    }
    let mut by_check: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut files: Vec<&str> = Vec::new();
    for file in &report.files {
        if !files.contains(&file.path.as_str()) {
            files.push(&file.path);
        }
        let partial = report.configurations.len() > 1 && file.configurations.len() < report.configurations.len();
        for finding in &file.diagnostics {
            let mut line = finding_line(&file.path, &finding.diagnostic);
            if finding.count > 1 {
                let _ = write!(line, " (reported {} times)", finding.count);
            }
            if partial {
                let _ = write!(line, " (only in {})", file.configurations.join(", "));
            }
            line.push_str(&fixes(&file.path, finding));
            by_check.entry(check_name(&finding.diagnostic)).or_default().push(line);
        }
    }
    let listed: usize = by_check.values().map(Vec::len).sum();
    if listed == 0 {
        res.push_str("\nNo findings.");
    } else {
        let checks = plural(report.checks.len(), "check", "checks");
        let files = plural(files.len(), "file", "files");
        if report.more_diagnostics == 0 {
            let _ = write!(res, "\n{} of {checks} in {files}.", plural(listed, "finding", "findings"));
        } else {
            let _ = write!(
                res,
                "\n{} of {checks}; {listed} listed, in {files} (max_diagnostics {max_diagnostics}); the rest are counted per check.",
                plural(listed + report.more_diagnostics, "finding", "findings"),
            );
        }
    }
    let mut shown = 0;
    'checks: for count in &report.checks {
        let lines = by_check.get(&count.check).map_or(&[][..], Vec::as_slice);
        let name = if count.check.is_empty() { "without a check name" } else { count.check.as_str() };
        let total = usize::try_from(count.findings).unwrap_or(usize::MAX);
        let listed_here =
            if lines.len() < total { format!("{} listed of {total}", lines.len()) } else { total.to_string() };
        if !within_budget(&mut res, &format!("\n{name}: {listed_here}")) {
            break;
        }
        for line in lines {
            if !within_budget(&mut res, line) {
                break 'checks;
            }
            shown += 1;
        }
    }
    if shown < listed {
        let _ = write!(
            res,
            "\n\n{} not shown: the text is kept under {} KB; the structured result lists every finding.",
            plural(listed - shown, "more finding", "more findings"),
            TEXT_BUDGET / 1024
        );
    }
    not_checked(&mut res, "\n\n", report.files_total - report.files_checked, "the diagnostics budget was reached");
    for changed in &report.changed {
        let _ = write!(
            res,
            "\nApplied {} to {}.",
            plural(changed.replacements, "fix-it replacement", "fix-it replacements"),
            changed.path
        );
    }
    failures(&mut res, &report.failures);
    skipped(&mut res, &report.skipped);
    res
}

/// `quality_format`: the counts, what the fallback style would do where no style file applies,
/// then each file needing formatting with its numbered diff lines while the text budget lasts.
pub fn format(report: &FormatReport, apply: bool, max_files: usize, style: Option<&str>) -> String {
    let style_text = style.map(|style| format!(", style {style}")).unwrap_or_default();
    let mut res = format!("clang-format on {} (toolset {}{style_text}).", report.path, report.toolset);
    fallback_note(&mut res, report, apply);
    let written = report.files.iter().filter(|file| file.applied).count();
    let pending = report.files.len() - written;
    let mut counts = vec![format!("{} formatted", report.formatted)];
    if written > 0 {
        counts.push(format!("{written} reformatted"));
    }
    if pending > 0 || written == 0 {
        let verb = if pending == 1 { "needs" } else { "need" };
        let unwritten = if apply && pending > 0 { " (not written)" } else { "" };
        counts.push(format!("{pending} {verb} formatting{unwritten}"));
    }
    let _ = write!(
        res,
        "\nChecked {} of {}: {}.",
        report.files_checked,
        plural(report.files_total, "file", "files"),
        counts.join(", ")
    );
    let mut shown = 0;
    for file in &report.files {
        // A tree restyled by the fallback is counted, one line per file, not shown line by line.
        let one_line = file.fallback && report.tree;
        let mut block = String::new();
        let status = if apply && !file.applied { "; not written" } else { "" };
        let _ = write!(
            block,
            "{}{}: {}{}{}{status}",
            if one_line { "" } else { "\n" },
            file.path,
            plural(file.replacements, "replacement", "replacements"),
            if file.fallback { "; fallback style" } else { "" },
            if file.incomplete { "; clang-format could not format all of it" } else { "" }
        );
        if !one_line {
            diff_lines(&mut block, &file.diff);
        }
        if !within_budget(&mut res, &block) {
            break;
        }
        shown += 1;
    }
    if shown < report.files.len() {
        let _ = write!(
            res,
            "\n\n{} not shown: the text is kept under {} KB; each file's diff is a resource link of this result.",
            plural(report.files.len() - shown, "more file needing formatting is", "more files needing formatting are"),
            TEXT_BUDGET / 1024
        );
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
    skipped(&mut res, &report.skipped);
    res
}

/// What a tree run left out, and why.
fn skipped(res: &mut String, skipped: &Skipped) {
    if skipped.not_cpp > 0 {
        let _ = write!(
            res,
            "\n\nSkipped {} not C/C++ by extension, first lines or compilation database",
            plural(skipped.not_cpp, "file", "files")
        );
        if skipped.without_extension > 0 {
            let _ = write!(
                res,
                " ({} without an extension and no C/C++ mode line such as // -*- C++ -*-)",
                skipped.without_extension
            );
        }
        res.push('.');
    }
    if skipped.in_build_trees > 0 {
        let _ = write!(res, "\n\nSkipped {} inside build trees.", plural(skipped.in_build_trees, "file", "files"));
    }
    if skipped.no_compile_command > 0 {
        let _ = write!(
            res,
            "\n\nSkipped {} that no selected configuration compiles (no compile command).",
            plural(skipped.no_compile_command, "translation unit", "translation units")
        );
    }
    if skipped.headers > 0 {
        let _ = write!(
            res,
            "\n\nSkipped {}: clang-tidy checks headers only within the translation units that include them \
             (quality_tidy on one header checks it within one of them).",
            plural(skipped.headers, "header", "headers")
        );
    }
}

/// What happened where no style file applies and no `style` was given: clang-format's fallback.
fn fallback_note(res: &mut String, report: &FormatReport, apply: bool) {
    if report.fallback_files == 0 {
        return;
    }
    let which = if report.fallback_files == report.files_total {
        "these files".to_owned()
    } else {
        format!("{} of the {}", report.fallback_files, plural(report.files_total, "file", "files"))
    };
    let _ = write!(
        res,
        "\nNo style file was found: no .clang-format or _clang-format applies to {which} (none in their \
         directories or above), so clang-format's fallback style (LLVM) decides; it would reformat {} of {} checked.",
        report.fallback_changes,
        report.fallback_files.min(report.files_checked),
    );
    if apply && report.tree && report.fallback_changes > 0 {
        res.push_str(
            " Nothing was written in the fallback style: give style (for example \"LLVM\" or \"Google\") to \
             format a tree that has no style file.",
        );
    }
}

/// The unified diff of one file's change as a Markdown resource (`quality_format`'s per-file link).
pub fn diff_markdown(diff: &FileDiff) -> String {
    let mut body = format!("--- a/{0}\n+++ b/{0}\n", diff.path);
    for hunk in &diff.hunks {
        let _ = writeln!(
            body,
            "@@ -{},{} +{},{} @@",
            hunk.before_start, hunk.before_count, hunk.after_start, hunk.after_count
        );
        for line in &hunk.lines {
            let mark = match line.kind {
                LineKind::Removed => '-',
                LineKind::Added => '+',
                LineKind::Context => ' ',
            };
            let _ = writeln!(body, "{mark}{}", line.text.trim_end_matches(['\n', '\r']));
        }
    }
    format!(
        "# Formatting changes of {}\n\n{}",
        super::markdown::escape(&diff.path.to_string()),
        super::markdown::fence(&body, "diff")
    )
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
    use crate::quality::model::{CheckCount, Fix, TidyDiagnostic, TidyFile};
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
            files: vec![
                TidyFile {
                    configurations: vec!["Debug".into(), "Release".into()],
                    path: "project/quality/tidy_me.cpp".into(),
                    diagnostics: vec![
                        TidyDiagnostic { diagnostic: diagnostic.clone(), fixes: vec![fix], count: 1 },
                        TidyDiagnostic {
                            diagnostic: Diagnostic { range: span(9, 4, 8), ..diagnostic.clone() },
                            fixes: vec![],
                            count: 12,
                        },
                    ],
                },
                TidyFile {
                    configurations: vec!["Release".into()],
                    path: "project/quality/other.cpp".into(),
                    diagnostics: vec![TidyDiagnostic {
                        diagnostic: Diagnostic {
                            code: Some(DiagnosticCode::Text("readability-identifier-length".into())),
                            message: "variable name 'p' is too short".into(),
                            ..diagnostic
                        },
                        fixes: vec![],
                        count: 1,
                    }],
                },
            ],
            more_diagnostics: 2,
            checks: vec![
                CheckCount { check: "modernize-use-nullptr".into(), findings: 4 },
                CheckCount { check: "readability-identifier-length".into(), findings: 1 },
            ],
            changed: vec![],
            failures: vec![RunFailure {
                path: "project/src/math.cpp".into(),
                configuration: Some("Release".into()),
                error: "clang-tidy exited with code 1".into(),
                process_id: Some(7),
            }],
            through: None,
            skipped: Skipped { no_compile_command: 1, headers: 2, ..Skipped::default() },
        };
        expect![[r#"
            clang-tidy on project/ in 2 configurations: Debug, Release. Checked 3 of 4 translation units.
            5 findings of 2 checks; 3 listed, in 2 files (max_diagnostics 1); the rest are counted per check.

            modernize-use-nullptr: 2 listed of 4
            project/quality/tidy_me.cpp:4:12: warning: use nullptr [clang-tidy, modernize-use-nullptr]; fix-it "NULL" → "nullptr"
            project/quality/tidy_me.cpp:9:5: warning: use nullptr [clang-tidy, modernize-use-nullptr] (reported 12 times)

            readability-identifier-length: 1
            project/quality/other.cpp:4:12: warning: variable name 'p' is too short [clang-tidy, readability-identifier-length] (only in Release)

            1 more file not checked: the diagnostics budget was reached.
            Failed: project/src/math.cpp (Release): clang-tidy exited with code 1; process 7

            Skipped 1 translation unit that no selected configuration compiles (no compile command).

            Skipped 2 headers: clang-tidy checks headers only within the translation units that include them (quality_tidy on one header checks it within one of them)."#]]
        .assert_eq(&tidy(&report, 1));
    }

    /// A tree run of 3 files with `files` needing formatting and the others formatted.
    fn format_report(path: &str, files: Vec<FormatFile>) -> FormatReport {
        FormatReport {
            path: q(path),
            toolset: "system".into(),
            files_total: 3,
            files_checked: 3,
            formatted: 3 - files.len(),
            files,
            more_files: 0,
            failures: vec![],
            fallback_files: 0,
            fallback_changes: 0,
            tree: true,
            skipped: Skipped::default(),
        }
    }

    #[test]
    fn format_shows_numbered_diff_lines() {
        let path = q("project/src/a.cpp");
        let diff = diff_texts(&path, "int  main( ) {\nreturn 0;}\n", "int main() {\n  return 0;\n}\n");
        let files =
            vec![FormatFile { path, replacements: 4, incomplete: false, diff, applied: false, fallback: false }];
        let report = FormatReport {
            files_checked: 2,
            formatted: 1,
            more_files: 2,
            skipped: Skipped { not_cpp: 3, without_extension: 1, in_build_trees: 2, ..Skipped::default() },
            ..format_report("project/src", files)
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

            1 more file not checked: the max_files budget (1 file needing formatting) was reached.

            Skipped 3 files not C/C++ by extension, first lines or compilation database (1 without an extension and no C/C++ mode line such as // -*- C++ -*-).

            Skipped 2 files inside build trees."#]]
        .assert_eq(&format(&report, false, 1, None));
    }

    #[test]
    fn a_tree_without_a_style_file_is_counted_not_restyled() {
        let path = q("project/adler32.c");
        let diff = diff_texts(&path, "int  a;\n", "int a;\n");
        let files = vec![
            FormatFile { path, replacements: 1, incomplete: false, diff: diff.clone(), applied: false, fallback: true },
            FormatFile {
                path: q("project/crc32.c"),
                replacements: 7,
                incomplete: false,
                diff: diff.clone(),
                applied: false,
                fallback: true,
            },
        ];
        let report = FormatReport { fallback_files: 3, fallback_changes: 2, ..format_report("project", files) };
        expect![[r#"
            clang-format on project/ (toolset system).
            No style file was found: no .clang-format or _clang-format applies to these files (none in their directories or above), so clang-format's fallback style (LLVM) decides; it would reformat 2 of 3 checked. Nothing was written in the fallback style: give style (for example "LLVM" or "Google") to format a tree that has no style file.
            Checked 3 of 3 files: 1 formatted, 2 need formatting (not written).
            project/adler32.c: 1 replacement; fallback style; not written
            project/crc32.c: 7 replacements; fallback style; not written"#]].assert_eq(&format(&report, true, 100, None));
        expect![[r#"
            # Formatting changes of project/adler32.c

            ```diff
            --- a/project/adler32.c
            +++ b/project/adler32.c
            @@ -1,1 +1,1 @@
            -int  a;
            +int a;
            ```"#]]
        .assert_eq(&diff_markdown(&diff));
    }
}

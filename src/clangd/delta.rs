//! Edit-delta diagnostics: which diagnostics a write or edit introduced and which it resolved,
//! comparing clangd's diagnostics of the content before the mutation with those after it.
//!
//! A diagnostic is the same before and after when its severity, message, source, code, columns
//! and the text of its first line agree, so one that only moved with inserted or removed lines is
//! neither new nor resolved; one on a line the mutation changed counts as both. Matching is by
//! multiset (two equal diagnostics before and one after: one resolved).
//!
//! Architecture invariant: pure; the before-state comes from the same sessions (a remembered
//! analysis of the same content, or a fresh one of the old text), never from another clangd.

use super::model::{Diagnostic, DiagnosticBrief, DiagnosticDelta, Severity};
use crate::lsp::LineIndex;

/// How many diagnostics of each list a summary carries (the rest are in `resources.clangd`).
pub const BRIEF_LIMIT: usize = 10;

/// Errors first, then by position.
pub fn errors_first(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by_key(|d| (Severity::rank(d.severity), d.range.start, d.range.end));
}

/// By position, then errors first (the order of every diagnostics list).
pub fn by_position(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by_key(|d| (d.range.start, d.range.end, Severity::rank(d.severity)));
}

fn line_text<'a>(d: &Diagnostic, lines: &'a LineIndex) -> Option<&'a str> {
    lines.line(d.range.start.line.saturating_sub(1)).map(str::trim)
}

fn same(a: &Diagnostic, a_lines: &LineIndex, b: &Diagnostic, b_lines: &LineIndex) -> bool {
    a.severity == b.severity
        && a.message == b.message
        && a.source == b.source
        && a.code == b.code
        && a.range.start.character == b.range.start.character
        && a.range.end.line - a.range.start.line == b.range.end.line - b.range.start.line
        && a.range.end.character == b.range.end.character
        && line_text(a, a_lines) == line_text(b, b_lines)
}

/// Splits the resolved diagnostics into those really resolved and those only hidden: when the
/// mutation introduced an error, a resolved warning (or note) whose line is still in the new text
/// as it was was not fixed; clang stopped reporting it past the error.
pub fn hidden_by_errors(
    introduced: &[Diagnostic],
    resolved: Vec<Diagnostic>,
    before_lines: &LineIndex,
    after_lines: &LineIndex,
) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    if !introduced.iter().any(|d| d.severity == Some(Severity::Error)) {
        return (resolved, Vec::new());
    }
    let kept_lines: std::collections::HashSet<&str> =
        (0..after_lines.line_count()).filter_map(|idx| after_lines.line(idx)).map(str::trim).collect();
    resolved.into_iter().partition(|d| {
        d.severity == Some(Severity::Error) || !line_text(d, before_lines).is_some_and(|text| kept_lines.contains(text))
    })
}

/// The diagnostics of `after` without a match in `before` (introduced) and those of `before`
/// without a match in `after` (resolved), each errors first.
pub fn compare(
    before: &[Diagnostic],
    before_lines: &LineIndex,
    after: &[Diagnostic],
    after_lines: &LineIndex,
) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    let mut matched = vec![false; before.len()];
    let mut introduced = Vec::new();
    for d in after {
        let found = (0..before.len()).find(|&i| !matched[i] && same(&before[i], before_lines, d, after_lines));
        match found {
            Some(i) => matched[i] = true,
            None => introduced.push(d.clone()),
        }
    }
    let mut resolved: Vec<Diagnostic> =
        before.iter().zip(&matched).filter(|(_, matched)| !**matched).map(|(d, _)| d.clone()).collect();
    errors_first(&mut introduced);
    errors_first(&mut resolved);
    (introduced, resolved)
}

/// The brief of one diagnostic.
pub fn brief(d: &Diagnostic) -> DiagnosticBrief {
    DiagnosticBrief {
        line: d.range.start.line,
        character: d.range.start.character,
        severity: d.severity,
        message: d.message.clone(),
        source: d.source.clone(),
        code: d.code.clone(),
    }
}

/// The typed summary of one comparison.
pub fn summary(
    configurations: Vec<String>,
    introduced: &[Diagnostic],
    resolved: &[Diagnostic],
    hidden: &[Diagnostic],
) -> DiagnosticDelta {
    DiagnosticDelta {
        configurations,
        introduced_count: introduced.len() as u32,
        resolved_count: resolved.len() as u32,
        introduced: introduced.iter().take(BRIEF_LIMIT).map(brief).collect(),
        resolved: resolved.iter().take(BRIEF_LIMIT).map(brief).collect(),
        hidden: hidden.iter().take(BRIEF_LIMIT).map(brief).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clangd::model::{Position, SourceRange};

    fn diagnostic(line: u32, character: u32, severity: Severity, message: &str) -> Diagnostic {
        Diagnostic {
            range: SourceRange {
                start: Position { line, character },
                end: Position { line, character: character + 3 },
            },
            severity: Some(severity),
            message: message.into(),
            code: None,
            source: Some("clang".into()),
            tags: vec![],
            related: vec![],
        }
    }

    #[test]
    fn moved_diagnostics_are_kept_and_changed_lines_compared() {
        let before_lines = LineIndex::new("int a = x;\nint b;\nint c = y;\n");
        let after_lines = LineIndex::new("// new\nint a = x;\nint b = z;\nint c = y;\n");
        let before = [
            diagnostic(1, 8, Severity::Error, "undeclared x"),
            diagnostic(3, 8, Severity::Error, "undeclared y"),
            diagnostic(2, 4, Severity::Warning, "unused b"),
        ];
        let after = [
            diagnostic(2, 8, Severity::Error, "undeclared x"),
            diagnostic(3, 4, Severity::Warning, "unused b"),
            diagnostic(3, 8, Severity::Error, "undeclared z"),
            diagnostic(4, 8, Severity::Error, "undeclared y"),
        ];
        let (introduced, resolved) = compare(&before, &before_lines, &after, &after_lines);
        let names = |list: &[Diagnostic]| list.iter().map(|d| d.message.clone()).collect::<Vec<_>>();
        assert_eq!(names(&introduced), ["undeclared z", "unused b"], "errors first; `int b` changed");
        assert_eq!(names(&resolved), ["unused b"]);
        let summary = summary(vec!["Debug".into()], &introduced, &resolved, &[]);
        assert_eq!((summary.introduced_count, summary.resolved_count), (2, 1));
        assert_eq!(summary.introduced[0].line, 3);
    }

    #[test]
    fn warnings_on_unchanged_lines_are_hidden_by_a_new_error_not_resolved() {
        let before_lines = LineIndex::new("void f() {\n  int unused;\n  int a = 1;\n}\n");
        let after_lines = LineIndex::new("void f() {\n  int unused;\n  int a = nope;\n}\n");
        let before = [diagnostic(2, 6, Severity::Warning, "unused variable")];
        let after = [diagnostic(3, 10, Severity::Error, "undeclared nope")];
        let (introduced, resolved) = compare(&before, &before_lines, &after, &after_lines);
        let (resolved, hidden) = hidden_by_errors(&introduced, resolved, &before_lines, &after_lines);
        assert_eq!((introduced.len(), resolved.len(), hidden.len()), (1, 0, 1));
        // Without a new error, a warning that went away is resolved.
        let (resolved, hidden) = hidden_by_errors(&[], hidden, &before_lines, &after_lines);
        assert_eq!((resolved.len(), hidden.len()), (1, 0));
    }

    #[test]
    fn equal_diagnostics_are_matched_one_for_one() {
        let lines = LineIndex::new("f(); f();\n");
        let twice = [diagnostic(1, 0, Severity::Warning, "w"), diagnostic(1, 0, Severity::Warning, "w")];
        let (introduced, resolved) = compare(&twice, &lines, &twice[..1], &lines);
        assert_eq!((introduced.len(), resolved.len()), (0, 1));
        let mut list = vec![diagnostic(2, 0, Severity::Warning, "b"), diagnostic(1, 5, Severity::Error, "a")];
        by_position(&mut list);
        assert_eq!(list[0].message, "a");
        errors_first(&mut list);
        assert_eq!(list[0].message, "a");
    }
}

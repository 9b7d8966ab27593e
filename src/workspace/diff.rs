//! Typed line diffs of a file's text before and after a write or edit (the `diff.json` resource).
//!
//! Lines are split at LF, CR LF and lone CR and keep their endings (`read::split_lines`), so a changed line ending is
//! a changed line and the exact text of every line survives. Line ranges use one-based starts; a
//! zero count is an empty range sitting before line `start` (an insertion point). Hunks carry three
//! lines of context. Replaced lines are paired in order and compared character by character; the
//! changed substrings are spans of zero-based Unicode code points, half-open `[start, end)`.
//! Unpaired added or removed lines are changed as a whole.
//!
//! Architecture invariant: pure; identical texts give no changes and no hunks.

use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, DiffTag};

use crate::workspace::path::QualifiedPath;
use crate::workspace::read::split_lines;

/// Lines of unchanged context around each hunk.
pub const CONTEXT_LINES: usize = 3;

/// Time allowed for the whole diff; past it, `similar` settles for a coarser (still correct) diff
/// and replaced lines get coarse spans.
const TIME_BUDGET: Duration = Duration::from_millis(500);

/// Code points (old and new together) compared character by character across all paired lines
/// of one diff; past it, and for longer lines, a pair's span is its middle between the common
/// prefix and suffix. Keeps a rewrite of a large file from costing quadratic time.
const CHAR_BUDGET: usize = 200_000;

/// Paired lines whose differing middles are longer than this get the coarse span.
const MAX_CHAR_DIFF_LINE: usize = 4_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Replace,
    Insert,
    Delete,
}

/// One changed range: lines `[before_start, before_start + before_count)` became
/// `[after_start, after_start + after_count)` (one-based starts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffChange {
    pub kind: ChangeKind,
    pub before_start: u64,
    pub before_count: u64,
    pub after_start: u64,
    pub after_count: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Context,
    Added,
    Removed,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    pub kind: LineKind,
    /// One-based line number before the change; `None` for added lines.
    pub before_line: Option<u64>,
    /// One-based line number after the change; `None` for removed lines.
    pub after_line: Option<u64>,
    /// The exact line, with its line ending.
    pub text: String,
    /// Changed substrings in zero-based code points, `[start, end)`; empty for context lines.
    pub spans: Vec<[usize; 2]>,
}

/// Changed lines with their context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffHunk {
    pub before_start: u64,
    pub before_count: u64,
    pub after_start: u64,
    pub after_count: u64,
    pub lines: Vec<DiffLine>,
}

/// The diff of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub path: QualifiedPath,
    pub changes: Vec<DiffChange>,
    pub hunks: Vec<DiffHunk>,
}

/// Diffs `before` against `after`.
pub fn diff_texts(path: &QualifiedPath, before: &str, after: &str) -> FileDiff {
    let mut res = FileDiff { path: path.clone(), changes: Vec::new(), hunks: Vec::new() };
    if before == after {
        return res;
    }
    let deadline = Instant::now() + TIME_BUDGET;
    let old: Vec<&str> = split_lines(before).collect();
    let new: Vec<&str> = split_lines(after).collect();
    let ops = line_ops(&old, &new, deadline);
    for op in &ops {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        let kind = match tag {
            DiffTag::Equal => continue,
            DiffTag::Replace => ChangeKind::Replace,
            DiffTag::Insert => ChangeKind::Insert,
            DiffTag::Delete => ChangeKind::Delete,
        };
        res.changes.push(DiffChange {
            kind,
            before_start: old_range.start as u64 + 1,
            before_count: old_range.len() as u64,
            after_start: new_range.start as u64 + 1,
            after_count: new_range.len() as u64,
        });
    }
    let mut budget = CharBudget { deadline, code_points: CHAR_BUDGET };
    for group in similar::group_diff_ops(ops, CONTEXT_LINES) {
        res.hunks.push(hunk(&group, &old, &new, &mut budget));
    }
    res
}

/// The line operations. When the lines between the common prefix and suffix have nothing in
/// common (a rewrite), they are one replacement: Myers' algorithm would spend quadratic time
/// proving it.
fn line_ops(old: &[&str], new: &[&str], deadline: Instant) -> Vec<DiffOp> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..].iter().rev().zip(new[prefix..].iter().rev()).take_while(|(a, b)| a == b).count();
    let (old_mid, new_mid) = (&old[prefix..old.len() - suffix], &new[prefix..new.len() - suffix]);
    let seen: std::collections::HashSet<&str> = old_mid.iter().copied().collect();
    if old_mid.is_empty() || new_mid.is_empty() || new_mid.iter().any(|line| seen.contains(line)) {
        return similar::capture_diff_slices_deadline(Algorithm::Myers, old, new, Some(deadline));
    }
    let mut ops = Vec::with_capacity(3);
    if prefix > 0 {
        ops.push(DiffOp::Equal { old_index: 0, new_index: 0, len: prefix });
    }
    ops.push(DiffOp::Replace { old_index: prefix, old_len: old_mid.len(), new_index: prefix, new_len: new_mid.len() });
    if suffix > 0 {
        ops.push(DiffOp::Equal { old_index: old.len() - suffix, new_index: new.len() - suffix, len: suffix });
    }
    ops
}

/// What is left for character comparisons in one diff.
struct CharBudget {
    deadline: Instant,
    code_points: usize,
}

fn hunk(group: &[DiffOp], old: &[&str], new: &[&str], budget: &mut CharBudget) -> DiffHunk {
    let first = group.first().expect("a group holds at least one operation");
    let last = group.last().expect("a group holds at least one operation");
    let (before_start, after_start) = (first.old_range().start, first.new_range().start);
    let mut res = DiffHunk {
        before_start: before_start as u64 + 1,
        before_count: (last.old_range().end - before_start) as u64,
        after_start: after_start as u64 + 1,
        after_count: (last.new_range().end - after_start) as u64,
        lines: Vec::new(),
    };
    for op in group {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            for (idx, new_idx) in old_range.zip(new_range) {
                res.lines.push(DiffLine {
                    kind: LineKind::Context,
                    before_line: Some(idx as u64 + 1),
                    after_line: Some(new_idx as u64 + 1),
                    text: old[idx].to_owned(),
                    spans: Vec::new(),
                });
            }
            continue;
        }
        let n_paired = if tag == DiffTag::Replace { old_range.len().min(new_range.len()) } else { 0 };
        let mut old_spans: Vec<Vec<[usize; 2]>> = Vec::with_capacity(n_paired);
        let mut new_spans: Vec<Vec<[usize; 2]>> = Vec::with_capacity(n_paired);
        for pair in 0..n_paired {
            let (a, b) = char_spans(old[old_range.start + pair], new[new_range.start + pair], budget);
            old_spans.push(a);
            new_spans.push(b);
        }
        for (pos, idx) in old_range.enumerate() {
            let spans = old_spans.get(pos).cloned().unwrap_or_else(|| whole(old[idx]));
            res.lines.push(DiffLine {
                kind: LineKind::Removed,
                before_line: Some(idx as u64 + 1),
                after_line: None,
                text: old[idx].to_owned(),
                spans,
            });
        }
        for (pos, idx) in new_range.enumerate() {
            let spans = new_spans.get(pos).cloned().unwrap_or_else(|| whole(new[idx]));
            res.lines.push(DiffLine {
                kind: LineKind::Added,
                before_line: None,
                after_line: Some(idx as u64 + 1),
                text: new[idx].to_owned(),
                spans,
            });
        }
    }
    res
}

/// The whole line as one span (empty lines have none).
fn whole(line: &str) -> Vec<[usize; 2]> {
    match line.chars().count() {
        0 => Vec::new(),
        n => vec![[0, n]],
    }
}

/// The changed substrings of a paired old and new line, in code points: the characters between
/// the common prefix and suffix, compared with Myers' algorithm while the budget lasts, else
/// that middle as one span.
fn char_spans(old: &str, new: &str, budget: &mut CharBudget) -> (Vec<[usize; 2]>, Vec<[usize; 2]>) {
    let old_chars: Vec<char> = old.chars().collect();
    let new_chars: Vec<char> = new.chars().collect();
    let prefix = old_chars.iter().zip(&new_chars).take_while(|(a, b)| a == b).count();
    let suffix =
        old_chars[prefix..].iter().rev().zip(new_chars[prefix..].iter().rev()).take_while(|(a, b)| a == b).count();
    let old_mid = &old_chars[prefix..old_chars.len() - suffix];
    let new_mid = &new_chars[prefix..new_chars.len() - suffix];
    let mut old_spans = Vec::new();
    let mut new_spans = Vec::new();
    let size = old_mid.len() + new_mid.len();
    let precise = size <= budget.code_points
        && old_mid.len().max(new_mid.len()) <= MAX_CHAR_DIFF_LINE
        && Instant::now() < budget.deadline;
    if !precise {
        push_span(&mut old_spans, prefix..prefix + old_mid.len());
        push_span(&mut new_spans, prefix..prefix + new_mid.len());
        return (old_spans, new_spans);
    }
    budget.code_points -= size;
    let ops = similar::capture_diff_slices_deadline(Algorithm::Myers, old_mid, new_mid, Some(budget.deadline));
    for op in ops {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            continue;
        }
        push_span(&mut old_spans, prefix + old_range.start..prefix + old_range.end);
        push_span(&mut new_spans, prefix + new_range.start..prefix + new_range.end);
    }
    (old_spans, new_spans)
}

/// Appends a non-empty range, merging it with an adjacent previous one.
fn push_span(spans: &mut Vec<[usize; 2]>, range: std::ops::Range<usize>) {
    if range.is_empty() {
        return;
    }
    match spans.last_mut() {
        Some(last) if last[1] == range.start => last[1] = range.end,
        _ => spans.push([range.start, range.end]),
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use expect_test::{Expect, expect};

    use super::*;

    /// A compact rendering: one line per change and per hunk line.
    fn render(diff: &FileDiff) -> String {
        let mut res = String::new();
        for c in &diff.changes {
            let _ = writeln!(
                res,
                "change {:?} -{},{} +{},{}",
                c.kind, c.before_start, c.before_count, c.after_start, c.after_count
            );
        }
        for h in &diff.hunks {
            let _ = writeln!(res, "@@ -{},{} +{},{} @@", h.before_start, h.before_count, h.after_start, h.after_count);
            for l in &h.lines {
                let mark = match l.kind {
                    LineKind::Context => ' ',
                    LineKind::Added => '+',
                    LineKind::Removed => '-',
                };
                let num = |n: Option<u64>| n.map_or("_".to_owned(), |n| n.to_string());
                let _ = writeln!(res, "{mark}{}:{} {:?} {:?}", num(l.before_line), num(l.after_line), l.text, l.spans);
            }
        }
        res
    }

    #[track_caller]
    fn check(before: &str, after: &str, expect: Expect) {
        let path = QualifiedPath::parse("project/a.txt").unwrap();
        expect.assert_eq(&render(&diff_texts(&path, before, after)));
    }

    #[test]
    fn identical_texts_have_no_changes() {
        check("a\nb\n", "a\nb\n", expect![""]);
        check("", "", expect![""]);
    }

    #[test]
    fn far_apart_changes_get_separate_hunks() {
        let before: String = (1..=12).map(|n| format!("{n}\n")).collect();
        let after: String = (1..=12)
            .map(|n| match n {
                2 => "two\n".to_owned(),
                11 => "eleven\n".to_owned(),
                n => format!("{n}\n"),
            })
            .collect();
        check(
            &before,
            &after,
            expect![[r#"
                change Replace -2,1 +2,1
                change Replace -11,1 +11,1
                @@ -1,5 +1,5 @@
                 1:1 "1\n" []
                -2:_ "2\n" [[0, 1]]
                +_:2 "two\n" [[0, 3]]
                 3:3 "3\n" []
                 4:4 "4\n" []
                 5:5 "5\n" []
                @@ -8,5 +8,5 @@
                 8:8 "8\n" []
                 9:9 "9\n" []
                 10:10 "10\n" []
                -11:_ "11\n" [[0, 2]]
                +_:11 "eleven\n" [[0, 6]]
                 12:12 "12\n" []
            "#]],
        );
    }

    #[test]
    fn unpaired_lines_of_a_replacement_change_whole() {
        check(
            "a\nold\nz\n",
            "a\nnew1\nnew2\nz\n",
            expect![[r#"
                change Replace -2,1 +2,2
                @@ -1,3 +1,4 @@
                 1:1 "a\n" []
                -2:_ "old\n" [[0, 3]]
                +_:2 "new1\n" [[0, 4]]
                +_:3 "new2\n" [[0, 5]]
                 3:4 "z\n" []
            "#]],
        );
    }

    #[test]
    fn a_complete_rewrite_of_a_large_file_is_one_replacement_and_fast() {
        let path = QualifiedPath::parse("project/big.txt").unwrap();
        let before = ("A".repeat(63) + "\n").repeat(16 * 1024);
        let after = ("B".repeat(63) + "\n").repeat(16 * 1024);
        let start = Instant::now();
        let diff = diff_texts(&path, &before, &after);
        assert!(start.elapsed() < Duration::from_secs(10), "took {:?}", start.elapsed());
        assert_eq!(diff.changes.len(), 1);
        assert_eq!(diff.changes[0].kind, ChangeKind::Replace);
        assert_eq!(diff.hunks[0].lines.len(), 32 * 1024);
        assert!(diff.hunks[0].lines.iter().all(|l| l.spans == vec![[0, 63]]));
    }

    #[test]
    fn creation_from_nothing_inserts_before_line_one() {
        check(
            "",
            "x\ny",
            expect![[r#"
                change Insert -1,0 +1,2
                @@ -1,0 +1,2 @@
                +_:1 "x\n" [[0, 2]]
                +_:2 "y" [[0, 1]]
            "#]],
        );
    }
}

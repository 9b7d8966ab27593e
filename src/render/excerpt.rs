//! Source excerpts with right-aligned line numbers: `12 | int x = 1;`.

use std::fmt::Write as _;

use super::thousands;
use crate::text::{LineEndings, line_endings};
use crate::workspace::read::FileExcerpt;

/// The text of `workspace_read_file`: the numbered lines, then notes: a line clipped to the budget,
/// where a cut read continues, a byte-order mark, line endings other than LF.
pub fn file_excerpt(excerpt: &FileExcerpt) -> String {
    let mut res = numbered(excerpt.numbered_lines(), "No lines in the selected range.");
    let endings = match line_endings(&excerpt.text) {
        Some(LineEndings::CrLf) => Some("CRLF line endings."),
        Some(LineEndings::Cr) => Some("CR line endings."),
        Some(LineEndings::Mixed) => Some("Mixed line endings (LF, CRLF or CR)."),
        Some(LineEndings::Lf) | None => None,
    };
    let mut notes = Vec::new();
    if let Some(clip) = excerpt.clipped {
        notes.push(format!(
            "Line {} is {} characters; showing the first {} (raise max_bytes for more).",
            clip.line,
            thousands(clip.chars),
            thousands(clip.shown)
        ));
    }
    if let Some(cut) = excerpt.continuation {
        let shown_end = cut.next_start_line - 1;
        let (of, more) = if cut.explicit {
            (format!("of the requested {}-{}", excerpt.start_line, cut.last_line), "raise max_bytes")
        } else {
            (format!("of {}", cut.last_line), "pass end_line to read a larger range")
        };
        notes.push(format!(
            "Showing lines {}-{shown_end} {of}; continue with start_line={} (or {more}).",
            excerpt.start_line, cut.next_start_line
        ));
    }
    if excerpt.bom {
        notes.push("Encoding: UTF-8 with BOM.".to_owned());
    }
    notes.extend(endings.map(str::to_owned));
    if !notes.is_empty() {
        res.push_str("\n\n");
        res.push_str(&notes.join("\n"));
    }
    res
}

/// Renders numbered lines; `empty` is returned when there are none.
pub fn numbered<'a>(lines: impl IntoIterator<Item = (u64, &'a str)>, empty: &str) -> String {
    let lines: Vec<(u64, &str)> = lines.into_iter().collect();
    let Some(last) = lines.iter().map(|(n, _)| *n).max() else { return empty.to_owned() };
    let width = last.to_string().len();
    let mut res = String::new();
    for (idx, (number, line)) in lines.iter().enumerate() {
        if idx > 0 {
            res.push('\n');
        }
        let _ = write!(res, "{number:>width$} | {line}");
    }
    res
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn numbers_are_right_aligned() {
        let lines = [(9, "int a;"), (10, "int b;"), (11, "")];
        expect![[r#"
             9 | int a;
            10 | int b;
            11 | "#]]
        .assert_eq(&numbered(lines, "none"));
    }

    #[test]
    fn reads_name_their_line_endings_and_continuation() {
        let excerpt = |text: &str, continuation| FileExcerpt {
            path: crate::workspace::path::QualifiedPath::parse("project/a.c").unwrap(),
            text: text.into(),
            start_line: 1,
            continuation,
            clipped: None,
            bom: false,
        };
        expect![[r#"
            1 | a
            2 | b

            CRLF line endings."#]]
        .assert_eq(&file_excerpt(&excerpt("a\r\nb\r\n", None)));
        let cut = crate::workspace::read::Continuation { next_start_line: 3, last_line: 9, explicit: false };
        expect![[r#"
            1 | a
            2 | b

            Showing lines 1-2 of 9; continue with start_line=3 (or pass end_line to read a larger range)."#]]
        .assert_eq(&file_excerpt(&excerpt("a\nb\n", Some(cut))));
        assert_eq!(file_excerpt(&excerpt("", None)), "No lines in the selected range.");
    }

    #[test]
    fn empty_selection_uses_the_given_sentence() {
        assert_eq!(numbered([], "No lines in the selected range."), "No lines in the selected range.");
    }
}

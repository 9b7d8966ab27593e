//! One test per rule of SPEC.md "Reading process logs", on small hand-made transcripts.

use std::time::{Duration, Instant};

use super::*;
use crate::process::journal::Journal;

/// Builds a transcript from `(milliseconds, stream, text)` chunks through the real journal, so line
/// numbers follow the journal's rules.
fn transcript(chunks: &[(u64, Stream, &str)]) -> Vec<Entry> {
    let journal = Journal::new(Instant::now(), None);
    for (ms, stream, text) in chunks {
        journal.record_at(*stream, text.as_bytes(), Duration::from_millis(*ms));
    }
    let mut res = Vec::new();
    journal.snapshot().for_each(|e| res.push(e.clone())).unwrap();
    res
}

/// `n` one-line stdout chunks `"line i\n"`, one per 100 ms starting at 0.
fn numbered(n: u64) -> Vec<Entry> {
    let texts: Vec<String> = (1..=n).map(|i| format!("line {i}\n")).collect();
    let chunks: Vec<(u64, Stream, &str)> =
        texts.iter().enumerate().map(|(i, t)| (i as u64 * 100, Stream::Stdout, t.as_str())).collect();
    transcript(&chunks)
}

fn sel(lines: Option<LineSelector>, time: Option<TimeSelector>, max_bytes: u64) -> Selection {
    Selection { lines, time, max_bytes }
}

/// Renders a selection compactly: `lines a-b` then one `stream a-b "text"` row per fragment.
fn show(selected: &Selected) -> String {
    let mut res = match selected.lines {
        Some((a, b)) => format!("lines {a}-{b}\n"),
        None => "lines null\n".to_owned(),
    };
    for f in &selected.fragments {
        res.push_str(&format!("{} {}-{} {:?}\n", f.stream.as_str(), f.start_line, f.end_line, f.text));
    }
    res
}

#[track_caller]
fn check(entries: &[Entry], selection: Selection, reference_ms: u64, expect: expect_test::Expect) {
    selection.validate().unwrap();
    let selected = select(entries, &selection, Duration::from_millis(reference_ms)).unwrap();
    expect.assert_eq(&show(&selected));
}

use expect_test::expect;

#[test]
fn default_max_bytes_is_65536() {
    assert_eq!(Selection::default().max_bytes, 65_536);
}

#[test]
fn no_selector_reads_the_last_100_lines() {
    let selected = select(numbered(150).as_slice(), &Selection::default(), Duration::ZERO).unwrap();
    assert_eq!(selected.lines, Some((51, 150)));
    assert_eq!(selected.fragments.len(), 100);
    assert_eq!(selected.fragments[0].text, "line 51\n");
}

#[test]
fn selectors_take_exactly_one_valid_form() {
    assert_eq!(sel(Some(LineSelector::First(0)), None, 1).validate(), Err(SelectionError::ZeroLines));
    assert_eq!(sel(Some(LineSelector::Last(0)), None, 1).validate(), Err(SelectionError::ZeroLines));
    assert!(sel(Some(LineSelector::Range { start: 0, end: 3 }), None, 1).validate().is_err());
    assert!(sel(Some(LineSelector::Range { start: 4, end: 3 }), None, 1).validate().is_err());
    assert!(sel(Some(LineSelector::Range { start: 3, end: 3 }), None, 1).validate().is_ok());
    assert!(sel(None, Some(TimeSelector::First(0.0)), 1).validate().is_err());
    assert!(sel(None, Some(TimeSelector::Last(f64::INFINITY)), 1).validate().is_err());
    assert!(sel(None, Some(TimeSelector::Last(f64::NAN)), 1).validate().is_err());
    assert!(sel(None, Some(TimeSelector::Range { start: -1.0, end: 1.0 }), 1).validate().is_err());
    assert!(sel(None, Some(TimeSelector::Range { start: 1.0, end: 1.0 }), 1).validate().is_err());
    assert!(sel(None, Some(TimeSelector::Range { start: 0.0, end: 0.5 }), 1).validate().is_ok());
}

#[test]
fn lines_start_at_one_and_ranges_include_both_endpoints() {
    check(
        &numbered(5),
        sel(Some(LineSelector::Range { start: 2, end: 4 }), None, 1000),
        0,
        expect![[r#"
            lines 2-4
            stdout 2-2 "line 2\n"
            stdout 3-3 "line 3\n"
            stdout 4-4 "line 4\n"
        "#]],
    );
    check(
        &numbered(5),
        sel(Some(LineSelector::First(1)), None, 1000),
        0,
        expect![[r#"
            lines 1-1
            stdout 1-1 "line 1\n"
        "#]],
    );
}

#[test]
fn line_range_beyond_the_transcript_is_empty() {
    check(&numbered(3), sel(Some(LineSelector::Range { start: 4, end: 9 }), None, 1000), 0, expect!["lines null\n"]);
}

#[test]
fn time_window_includes_start_and_excludes_end() {
    // Chunks at 0, 100, 200, 300, 400 ms.
    check(
        &numbered(5),
        sel(None, Some(TimeSelector::Range { start: 0.1, end: 0.3 }), 1000),
        0,
        expect![[r#"
            lines 2-3
            stdout 2-2 "line 2\n"
            stdout 3-3 "line 3\n"
        "#]],
    );
    check(
        &numbered(5),
        sel(None, Some(TimeSelector::First(0.2)), 1000),
        0,
        expect![[r#"
            lines 1-2
            stdout 1-1 "line 1\n"
            stdout 2-2 "line 2\n"
        "#]],
    );
}

#[test]
fn last_seconds_count_back_from_the_reference_time() {
    // While running the reference is "now": 1 s after the last chunk nothing is that recent.
    check(&numbered(5), sel(None, Some(TimeSelector::Last(0.5)), 1000), 1000, expect!["lines null\n"]);
    // After exit it is the completion time.
    check(
        &numbered(5),
        sel(None, Some(TimeSelector::Last(0.15)), 1000),
        450,
        expect![[r#"
            lines 4-5
            stdout 4-4 "line 4\n"
            stdout 5-5 "line 5\n"
        "#]],
    );
}

#[test]
fn time_is_the_chunk_recording_time() {
    // One chunk recorded at 300 ms holds three lines: a window containing 300 ms keeps all of them.
    let entries = transcript(&[(0, Stream::Stdout, "early\n"), (300, Stream::Stdout, "a\nb\nc\n")]);
    check(
        &entries,
        sel(None, Some(TimeSelector::Range { start: 0.25, end: 0.35 }), 1000),
        0,
        expect![[r#"
            lines 2-4
            stdout 2-4 "a\nb\nc\n"
        "#]],
    );
}

#[test]
fn lines_apply_within_the_time_selection() {
    // Time keeps chunks 2..=4 (lines 2..=4); "first 2" then counts from line 2, not line 1.
    check(
        &numbered(5),
        sel(Some(LineSelector::First(2)), Some(TimeSelector::Range { start: 0.1, end: 0.4 }), 1000),
        0,
        expect![[r#"
            lines 2-3
            stdout 2-2 "line 2\n"
            stdout 3-3 "line 3\n"
        "#]],
    );
}

#[test]
fn bytes_apply_after_lines() {
    check(
        &numbered(5),
        sel(Some(LineSelector::First(3)), None, 10),
        0,
        expect![[r#"
            lines 1-2
            stdout 1-1 "line 1\n"
            stdout 2-2 "lin"
        "#]],
    );
}

#[test]
fn absolute_line_numbers_are_retained() {
    check(
        &numbered(300),
        sel(Some(LineSelector::Last(1)), None, 1000),
        0,
        expect![[r#"
            lines 300-300
            stdout 300-300 "line 300\n"
        "#]],
    );
}

#[test]
fn tail_keeps_the_end_when_bytes_run_out() {
    check(
        &numbered(3),
        sel(Some(LineSelector::Last(3)), None, 10),
        0,
        expect![[r#"
            lines 2-3
            stdout 2-2 " 2\n"
            stdout 3-3 "line 3\n"
        "#]],
    );
}

#[test]
fn head_keeps_the_start_when_bytes_run_out() {
    check(
        &numbered(3),
        sel(Some(LineSelector::Range { start: 1, end: 3 }), None, 10),
        0,
        expect![[r#"
            lines 1-2
            stdout 1-1 "line 1\n"
            stdout 2-2 "lin"
        "#]],
    );
}

#[test]
fn lines_selector_decides_the_direction_over_time() {
    // Last seconds would be a tail, but "first lines" makes it a head.
    check(
        &numbered(3),
        sel(Some(LineSelector::First(3)), Some(TimeSelector::Last(10.0)), 8),
        300,
        expect![[r#"
            lines 1-2
            stdout 1-1 "line 1\n"
            stdout 2-2 "l"
        "#]],
    );
}

#[test]
fn time_selector_decides_the_direction_without_lines() {
    check(
        &numbered(3),
        sel(None, Some(TimeSelector::Last(10.0)), 8),
        300,
        expect![[r#"
        lines 2-3
        stdout 2-2 "\n"
        stdout 3-3 "line 3\n"
    "#]],
    );
    check(
        &numbered(3),
        sel(None, Some(TimeSelector::First(10.0)), 8),
        300,
        expect![[r#"
        lines 1-2
        stdout 1-1 "line 1\n"
        stdout 2-2 "l"
    "#]],
    );
}

#[test]
fn partial_lines_are_allowed_but_characters_are_never_split() {
    // "é" is two bytes and "€" three: a budget ending inside either keeps the character out.
    let entries = transcript(&[(0, Stream::Stdout, "aé€b\n")]);
    for (budget, head, tail) in
        [(1, "a", "\n"), (2, "a", "b\n"), (3, "aé", "b\n"), (4, "aé", "b\n"), (5, "aé", "€b\n"), (6, "aé€", "€b\n")]
    {
        let first =
            select(entries.as_slice(), &sel(Some(LineSelector::First(1)), None, budget), Duration::ZERO).unwrap();
        assert_eq!(first.fragments[0].text, head, "head with budget {budget}");
        let last = select(entries.as_slice(), &sel(Some(LineSelector::Last(1)), None, budget), Duration::ZERO).unwrap();
        assert_eq!(last.fragments[0].text, tail, "tail with budget {budget}");
    }
}

#[test]
fn budget_smaller_than_the_first_character_returns_nothing() {
    let entries = transcript(&[(0, Stream::Stdout, "€\n")]);
    check(&entries, sel(Some(LineSelector::First(1)), None, 2), 0, expect!["lines null\n"]);
}

#[test]
fn max_bytes_zero_returns_metadata_only() {
    check(&numbered(3), sel(None, None, 0), 0, expect!["lines null\n"]);
}

#[test]
fn empty_transcript_selects_nothing() {
    check(&[], Selection::default(), 0, expect!["lines null\n"]);
}

#[test]
fn response_lines_span_the_returned_fragments() {
    let entries = transcript(&[(0, Stream::Stdout, "a\nb\nc"), (1, Stream::Stderr, "d\ne\n")]);
    check(
        &entries,
        sel(Some(LineSelector::Range { start: 2, end: 4 }), None, 1000),
        0,
        expect![[r#"
            lines 2-4
            stdout 2-3 "b\nc"
            stderr 3-4 "d\ne\n"
        "#]],
    );
}

#[test]
fn streams_share_line_numbers_and_entries_can_overlap_a_line() {
    let entries = transcript(&[
        (0, Stream::Stdout, "out "),
        (1, Stream::Stderr, "err\n"),
        (2, Stream::Stdin, "in\n"),
        (3, Stream::Stdout, "more"),
    ]);
    check(
        &entries,
        Selection::default(),
        3,
        expect![[r#"
        lines 1-3
        stdout 1-1 "out "
        stderr 1-1 "err\n"
        stdin 2-2 "in\n"
        stdout 3-3 "more"
    "#]],
    );
}

#[test]
fn first_and_last_count_distinct_lines_not_entries() {
    // Line 1 is spread over three chunks; "first 2" still means lines 1 and 2.
    let entries = transcript(&[
        (0, Stream::Stdout, "a"),
        (1, Stream::Stderr, "b"),
        (2, Stream::Stdout, "c\nd\n"),
        (3, Stream::Stdout, "e\n"),
    ]);
    check(
        &entries,
        sel(Some(LineSelector::First(2)), None, 1000),
        3,
        expect![[r#"
        lines 1-2
        stdout 1-1 "a"
        stderr 1-1 "b"
        stdout 1-2 "c\nd\n"
    "#]],
    );
    check(
        &entries,
        sel(Some(LineSelector::Last(2)), None, 1000),
        3,
        expect![[r#"
        lines 2-3
        stdout 2-2 "d\n"
        stdout 3-3 "e\n"
    "#]],
    );
}

#[test]
fn cutting_to_lines_keeps_lone_cr_and_split_crlf() {
    let entries =
        transcript(&[(0, Stream::Stdout, "1%\r2%\r\n"), (1, Stream::Stdout, "x\r"), (2, Stream::Stdout, "\ny\n")]);
    check(
        &entries,
        sel(Some(LineSelector::Range { start: 2, end: 2 }), None, 1000),
        3,
        expect![[r#"
        lines 2-2
        stdout 2-2 "x\r"
        stdout 2-2 "\n"
    "#]],
    );
}

#[test]
fn selection_does_not_modify_the_journal() {
    let journal = Journal::new(Instant::now(), None);
    journal.record(Stream::Stdout, b"one\ntwo\n");
    let before = journal.snapshot();
    let _ = select(&before, &sel(Some(LineSelector::First(1)), None, 2), Duration::ZERO).unwrap();
    let mut all = String::new();
    journal.snapshot().for_each(|e| all.push_str(&e.text)).unwrap();
    assert_eq!(all, "one\ntwo\n");
}

#[test]
fn spilled_snapshot_selects_like_memory() {
    let dir = tempfile::tempdir().unwrap();
    let spilled = Journal::with_budget(Instant::now(), Some(dir.path().to_owned()), 2048);
    let memory = Journal::new(Instant::now(), None);
    for i in 0..3000u64 {
        let stream = if i % 5 == 0 { Stream::Stderr } else { Stream::Stdout };
        let text = if i % 7 == 0 { format!("part {i} ") } else { format!("line {i} é\n") };
        spilled.record_at(stream, text.as_bytes(), Duration::from_millis(i));
        memory.record_at(stream, text.as_bytes(), Duration::from_millis(i));
    }
    let (spilled, memory) = (spilled.snapshot(), memory.snapshot());
    let selections = [
        Selection::default(),
        sel(Some(LineSelector::First(10)), None, 100),
        sel(Some(LineSelector::Last(250)), None, 1000),
        sel(Some(LineSelector::Range { start: 700, end: 1900 }), None, 3333),
        sel(None, Some(TimeSelector::Range { start: 0.5, end: 2.25 }), 5000),
        sel(None, Some(TimeSelector::Last(1.0)), 777),
        sel(Some(LineSelector::Last(40)), Some(TimeSelector::First(1.2)), 65_536),
    ];
    for selection in selections {
        let reference = Duration::from_millis(3000);
        assert_eq!(
            select(&spilled, &selection, reference).unwrap(),
            select(&memory, &selection, reference).unwrap(),
            "{selection:?}"
        );
    }
}

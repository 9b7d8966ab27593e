//! `process_get`'s `match` and cut accounting: the matching lines of a selection (the whole transcript
//! unless `lines` or `time` narrow it) with their absolute line numbers, cut to `max_bytes`, the
//! lines searched, and the bytes a budget left out.
//!
//! Architecture invariant: at most [`SCAN_BYTES`] of a selection are read for a match or for
//! counting a cut, so a huge transcript never costs more than one bounded read.

use crate::process::{Details, Error, LineSelector, LogEntry, ProcessId, ProcessService, Selection};
use crate::render::process::Search;

/// Most transcript bytes a `match` scans, and the widest probe that counts what max_bytes cut.
pub const SCAN_BYTES: u64 = 32 * 1024 * 1024;

/// What a read returned beyond the details: the bytes `max_bytes` left out and, for a `match`, what
/// was searched.
#[derive(Debug, Default)]
pub struct ReadOutcome {
    pub omitted: Option<u64>,
    pub search: Option<Search>,
}

/// Reads `selection` of process `id`: with `regex`, only matching lines (before `max_bytes`,
/// keeping the tail or the head) of the whole transcript unless `lines` or `time` narrow it.
pub fn read(
    service: &ProcessService,
    id: ProcessId,
    selection: Selection,
    regex: Option<&regex::Regex>,
    tail: bool,
) -> Result<(Details, ReadOutcome), Error> {
    let budget = selection.max_bytes;
    if let Some(regex) = regex {
        // Without a selector a match searches every line, not the default last 100.
        let lines = match (selection.lines, selection.time) {
            (None, None) => Some(LineSelector::Range { start: 1, end: u64::MAX }),
            (lines, _) => lines,
        };
        let wide = Selection { lines, max_bytes: SCAN_BYTES.max(budget), ..selection };
        let mut details = service.get(id, &wide)?;
        let searched = details.lines;
        let (kept, omitted, matches) = matching_lines(&details.transcript, regex, budget, tail);
        details.lines = kept.first().zip(kept.last()).map(|(a, b)| (a.start_line, b.end_line));
        details.transcript = kept;
        let search = Search { lines: searched, matches };
        return Ok((details, ReadOutcome { omitted: Some(omitted).filter(|n| *n > 0), search: Some(search) }));
    }
    let details = service.get(id, &selection)?;
    let returned = text_bytes(&details.transcript);
    // The budget ran out: count what it left out with one wider read.
    let omitted = if budget > 0 && returned + 4 > budget && budget < SCAN_BYTES {
        let wide = Selection { max_bytes: SCAN_BYTES, ..selection };
        let all = text_bytes(&service.get(id, &wide)?.transcript);
        Some(all.saturating_sub(returned)).filter(|n| *n > 0)
    } else {
        None
    };
    Ok((details, ReadOutcome { omitted, search: None }))
}

/// The matching lines of `entries`, one entry per line with its absolute line number, then cut to
/// `max_bytes` from the kept end; returns them, the bytes cut and the number of matching lines.
pub fn matching_lines(
    entries: &[LogEntry],
    regex: &regex::Regex,
    max_bytes: u64,
    tail: bool,
) -> (Vec<LogEntry>, u64, u64) {
    let mut res = Vec::new();
    for entry in entries {
        for (idx, line) in entry.text.split_inclusive('\n').enumerate() {
            if regex.is_match(line.trim_end_matches(['\n', '\r'])) {
                let number = entry.start_line + idx as u64;
                res.push(LogEntry { text: line.to_owned(), start_line: number, end_line: number, ..entry.clone() });
            }
        }
    }
    let total: u64 = res.iter().map(|e| e.text.len() as u64).sum();
    let matches = res.len() as u64;
    let mut budget = max_bytes;
    let mut kept = Vec::new();
    let order: Box<dyn Iterator<Item = LogEntry>> =
        if tail { Box::new(res.into_iter().rev()) } else { Box::new(res.into_iter()) };
    for entry in order {
        let len = entry.text.len() as u64;
        if len > budget {
            break;
        }
        budget -= len;
        kept.push(entry);
    }
    if tail {
        kept.reverse();
    }
    let returned: u64 = kept.iter().map(|e| e.text.len() as u64).sum();
    (kept, total - returned, matches)
}

fn text_bytes(entries: &[LogEntry]) -> u64 {
    entries.iter().map(|e| e.text.len() as u64).sum()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use chrono::{DateTime, Utc};

    use super::*;
    use crate::process::Stream;

    fn entry(stream: Stream, text: &str, start_line: u64) -> LogEntry {
        let end_line = start_line + text.matches('\n').count().saturating_sub(1) as u64;
        LogEntry {
            timestamp: DateTime::<Utc>::UNIX_EPOCH,
            elapsed: Duration::ZERO,
            stream,
            text: text.to_owned(),
            start_line,
            end_line,
        }
    }

    #[test]
    fn matches_keep_absolute_line_numbers_and_the_budget_end() {
        let entries =
            [entry(Stream::Stdout, "a ok\nb warning: x\nc ok\n", 1), entry(Stream::Stderr, "d warning: y\n", 4)];
        let regex = regex::Regex::new("warning: ").unwrap();
        let (kept, omitted, matches) = matching_lines(&entries, &regex, 1000, true);
        let lines: Vec<(u64, &str)> = kept.iter().map(|e| (e.start_line, e.text.as_str())).collect();
        assert_eq!(lines, [(2, "b warning: x\n"), (4, "d warning: y\n")]);
        assert_eq!((omitted, matches), (0, 2));
        let (kept, omitted, _) = matching_lines(&entries, &regex, 15, true);
        assert_eq!((kept.len(), kept[0].start_line, omitted), (1, 4, 13));
        let (kept, _, _) = matching_lines(&entries, &regex, 15, false);
        assert_eq!(kept[0].start_line, 2);
    }
}

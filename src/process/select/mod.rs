//! Transcript selection for `process_get`: time window, then lines, then the UTF-8 byte budget.
//!
//! The algorithm is pure and works on any [`Source`] of ordered entries, so the in-memory tests and
//! the spilling journal share one implementation.
//!
//! Architecture invariant: selection never modifies or copies the whole journal; it locates the
//! window by binary search and reads only the entries it returns (plus, at most, one overflowing one).
//! Architecture invariant: a UTF-8 character is never split; fragments keep absolute line numbers.
//!
//! Why the line step reduces to one interval: line numbers come from one cursor shared by all streams,
//! so each entry starts on the line the previous one ended on, or on the next line. The lines touched
//! by any contiguous run of entries therefore form one contiguous interval, and "first/last N distinct
//! lines" is a sub-interval of it.

use std::io;
use std::time::Duration;

use super::journal::{Entry, Stream};
use crate::text::floor_char_boundary;

/// The default `max_bytes` of `process_get`.
pub const DEFAULT_MAX_BYTES: u64 = 65_536;
/// Lines returned when neither selector is given.
pub const DEFAULT_LAST_LINES: u64 = 100;

/// Which lines to return. Lines are one-based; ranges include both ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineSelector {
    First(u64),
    Last(u64),
    Range { start: u64, end: u64 },
}

/// Which chunks to keep, by the time they were recorded, in seconds from process start.
/// Windows are half-open: they include the start and exclude the end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimeSelector {
    /// `[0, S)`.
    First(f64),
    /// From `S` seconds before the reference time (now while running, completion after exit) onwards.
    Last(f64),
    /// `[start, end)`.
    Range { start: f64, end: f64 },
}

/// A complete `process_get` selection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Selection {
    pub lines: Option<LineSelector>,
    pub time: Option<TimeSelector>,
    /// Budget for the combined UTF-8 text of the returned fragments; 0 returns metadata only.
    pub max_bytes: u64,
}

impl Default for Selection {
    fn default() -> Selection {
        Selection { lines: None, time: None, max_bytes: DEFAULT_MAX_BYTES }
    }
}

/// Why a selection cannot be applied.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SelectionError {
    #[error("line counts must be at least 1")]
    ZeroLines,
    #[error("line ranges need 1 <= start <= end, got start {start} and end {end}")]
    BadLineRange { start: u64, end: u64 },
    #[error("second counts must be finite and greater than 0, got {0}")]
    BadSeconds(f64),
    #[error("time ranges need finite 0 <= start < end, got start {start} and end {end}")]
    BadTimeRange { start: f64, end: f64 },
}

impl Selection {
    pub fn validate(&self) -> Result<(), SelectionError> {
        match self.lines {
            Some(LineSelector::First(0) | LineSelector::Last(0)) => return Err(SelectionError::ZeroLines),
            Some(LineSelector::Range { start, end }) if start == 0 || end < start => {
                return Err(SelectionError::BadLineRange { start, end });
            }
            _ => {}
        }
        match self.time {
            Some(TimeSelector::First(s) | TimeSelector::Last(s)) if !(s.is_finite() && s > 0.0) => {
                Err(SelectionError::BadSeconds(s))
            }
            Some(TimeSelector::Range { start, end })
                if !(start.is_finite() && end.is_finite() && start >= 0.0 && end > start) =>
            {
                Err(SelectionError::BadTimeRange { start, end })
            }
            _ => Ok(()),
        }
    }

    /// The line selector in force: the given one, or the last 100 lines when neither selector is given.
    fn effective_lines(&self) -> Option<LineSelector> {
        match (self.lines, self.time) {
            (None, None) => Some(LineSelector::Last(DEFAULT_LAST_LINES)),
            (lines, _) => lines,
        }
    }

    /// Tail selections keep the end when the budget runs out. The lines selector decides when given,
    /// otherwise the time selector does.
    fn is_tail(&self) -> bool {
        match self.effective_lines() {
            Some(LineSelector::Last(_)) => true,
            Some(_) => false,
            None => matches!(self.time, Some(TimeSelector::Last(_))),
        }
    }
}

/// What selection needs to know about an entry without reading its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryMeta {
    pub elapsed: Duration,
    pub start_line: u64,
    pub end_line: u64,
}

/// Ordered entries: `elapsed`, `start_line` and `end_line` never decrease from one entry to the next.
pub trait Source {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn meta(&self, idx: usize) -> io::Result<EntryMeta>;
    fn entry(&self, idx: usize) -> io::Result<Entry>;

    /// The number of leading entries for which `pred` holds; `pred` must be monotone (true, then false).
    /// Sources with a coarser index override this to avoid reading every probed entry.
    fn partition_point(&self, pred: &dyn Fn(&EntryMeta) -> bool) -> io::Result<usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(&self.meta(mid)?) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }
}

impl Source for [Entry] {
    fn len(&self) -> usize {
        <[Entry]>::len(self)
    }
    fn meta(&self, idx: usize) -> io::Result<EntryMeta> {
        Ok(self[idx].meta())
    }
    fn entry(&self, idx: usize) -> io::Result<Entry> {
        Ok(self[idx].clone())
    }
}

/// One returned piece of an entry: the whole entry or the part inside the selected lines and budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fragment {
    pub elapsed: Duration,
    pub stream: Stream,
    pub text: String,
    pub start_line: u64,
    pub end_line: u64,
}

/// The outcome of a selection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selected {
    /// Fragments in recording order.
    pub fragments: Vec<Fragment>,
    /// The inclusive span `[first, last]` of the returned fragments, `None` when nothing is returned.
    pub lines: Option<(u64, u64)>,
}

/// Applies `selection` to `source`. `reference` is "now" for a running process and the completion
/// time after exit, both as elapsed time since the start; `last` time windows end there.
pub fn select<S: Source + ?Sized>(source: &S, selection: &Selection, reference: Duration) -> io::Result<Selected> {
    if selection.max_bytes == 0 || source.is_empty() {
        return Ok(Selected::default());
    }
    let Some((lo, hi)) = time_range(source, selection.time, reference)? else { return Ok(Selected::default()) };
    let first_line = source.meta(lo)?.start_line;
    let last_line = source.meta(hi - 1)?.end_line;
    let Some((a, b)) = line_span(selection.effective_lines(), first_line, last_line) else {
        return Ok(Selected::default());
    };
    // Entries overlapping [a, b]: end_line >= a and start_line <= b.
    let from = lo.max(source.partition_point(&|m| m.end_line < a)?);
    let to = hi.min(source.partition_point(&|m| m.start_line <= b)?);
    let mut budget = usize::try_from(selection.max_bytes).unwrap_or(usize::MAX);
    let mut fragments = Vec::new();
    if selection.is_tail() {
        for idx in (from..to).rev() {
            let (fragment, complete) = take_tail(cut_to_lines(source.entry(idx)?, a, b), &mut budget);
            fragments.extend(fragment);
            if !complete {
                break;
            }
        }
        fragments.reverse();
    } else {
        for idx in from..to {
            let (fragment, complete) = take_head(cut_to_lines(source.entry(idx)?, a, b), &mut budget);
            fragments.extend(fragment);
            if !complete {
                break;
            }
        }
    }
    let lines = match (fragments.first(), fragments.last()) {
        (Some(first), Some(last)) => Some((first.start_line, last.end_line)),
        _ => None,
    };
    Ok(Selected { fragments, lines })
}

/// The index range `[lo, hi)` of entries recorded inside the time window, `None` when empty.
fn time_range<S: Source + ?Sized>(
    source: &S,
    time: Option<TimeSelector>,
    reference: Duration,
) -> io::Result<Option<(usize, usize)>> {
    let before = |t: Duration| source.partition_point(&move |m| m.elapsed < t);
    let (lo, hi) = match time {
        None => (0, source.len()),
        Some(TimeSelector::First(s)) => (0, before(seconds(s))?),
        Some(TimeSelector::Last(s)) => (before(reference.saturating_sub(seconds(s)))?, source.len()),
        Some(TimeSelector::Range { start, end }) => (before(seconds(start))?, before(seconds(end))?),
    };
    Ok((lo < hi).then_some((lo, hi)))
}

fn seconds(s: f64) -> Duration {
    Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX)
}

/// The selected absolute lines `[a, b]` within the available `[first, last]`, `None` when empty.
fn line_span(lines: Option<LineSelector>, first: u64, last: u64) -> Option<(u64, u64)> {
    let (a, b) = match lines {
        None => (first, last),
        Some(LineSelector::First(n)) => (first, last.min(first.saturating_add(n.saturating_sub(1)))),
        Some(LineSelector::Last(n)) => (first.max(last.saturating_sub(n.saturating_sub(1))), last),
        Some(LineSelector::Range { start, end }) => (first.max(start), last.min(end)),
    };
    (a <= b).then_some((a, b))
}

/// The last line an entry touches when its text starts on `start_line`.
pub(crate) fn end_line_of(start_line: u64, text: &str) -> u64 {
    let n_lf = memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64;
    start_line + n_lf - u64::from(n_lf > 0 && text.ends_with('\n'))
}

/// Cuts an entry that overlaps `[a, b]` down to the text of those lines.
fn cut_to_lines(entry: Entry, a: u64, b: u64) -> Fragment {
    let Entry { elapsed, stream, text, start_line, end_line } = entry;
    if start_line >= a && end_line <= b {
        return Fragment { elapsed, stream, text, start_line, end_line };
    }
    let bytes = text.as_bytes();
    let mut from = 0;
    let mut line = start_line;
    if a > start_line {
        // The selected part begins after the (a - start_line)-th LF.
        let skip = usize::try_from(a - start_line).unwrap_or(usize::MAX);
        from = memchr::memchr_iter(b'\n', bytes).nth(skip - 1).map_or(bytes.len(), |pos| pos + 1);
        line = a;
    }
    // It ends with the (b - line + 1)-th LF after `from`, or at the end of the text.
    let keep = usize::try_from(b - line).unwrap_or(usize::MAX);
    let to = memchr::memchr_iter(b'\n', &bytes[from..]).nth(keep).map_or(bytes.len(), |pos| from + pos + 1);
    let text = text[from..to].to_owned();
    let end_line = end_line_of(line, &text);
    Fragment { elapsed, stream, text, start_line: line, end_line }
}

/// Spends the budget on a fragment from its start. Returns the kept part (if any) and whether the
/// whole fragment fitted, which means the walk may go on.
fn take_head(mut fragment: Fragment, budget: &mut usize) -> (Option<Fragment>, bool) {
    if fragment.text.len() <= *budget {
        *budget -= fragment.text.len();
        return (Some(fragment), true);
    }
    let cut = floor_char_boundary(&fragment.text, *budget);
    *budget = 0;
    if cut == 0 {
        return (None, false);
    }
    fragment.text.truncate(cut);
    fragment.end_line = end_line_of(fragment.start_line, &fragment.text);
    (Some(fragment), false)
}

/// Spends the budget on a fragment from its end; see [`take_head`].
fn take_tail(mut fragment: Fragment, budget: &mut usize) -> (Option<Fragment>, bool) {
    if fragment.text.len() <= *budget {
        *budget -= fragment.text.len();
        return (Some(fragment), true);
    }
    let cut = ceil_char_boundary(&fragment.text, fragment.text.len() - *budget);
    *budget = 0;
    if cut == fragment.text.len() {
        return (None, false);
    }
    let dropped = &fragment.text.as_bytes()[..cut];
    fragment.start_line += memchr::memchr_iter(b'\n', dropped).count() as u64;
    fragment.text.drain(..cut);
    (Some(fragment), false)
}

/// The smallest char boundary `>= idx`.
pub(crate) fn ceil_char_boundary(text: &str, idx: usize) -> usize {
    (idx..text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len())
}

#[cfg(test)]
mod tests;

//! Hover Markdown as plain text.

use std::fmt::Write as _;

use super::RULE;

/// Hover Markdown as plain text: code blocks verbatim, headings without `#`, inline code and
/// emphasis without their marks, links as `text (url)`, rules as a line of box-drawing dashes,
/// backslash escapes resolved, runs of blank lines (and blank lines next to rules) dropped.
pub fn markdown_to_text(markdown: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut fence: Option<String> = None;
    for raw in markdown.lines() {
        let trimmed = raw.trim_start();
        if let Some(open) = &fence {
            if trimmed.starts_with(open.as_str())
                && trimmed.trim_start_matches(open.chars().next().unwrap_or('`')).trim().is_empty()
            {
                fence = None;
            } else {
                lines.push(raw.to_owned());
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            let mark = trimmed.chars().next().unwrap_or('`');
            let run = trimmed.chars().take_while(|c| *c == mark).count();
            fence = Some(mark.to_string().repeat(run));
            continue;
        }
        if is_rule(trimmed) {
            while lines.last().is_some_and(|l| l.is_empty()) {
                lines.pop();
            }
            lines.push(RULE.to_owned());
            continue;
        }
        let content = raw.trim_end();
        let content = match content.trim_start().strip_prefix('#') {
            Some(_) => content.trim_start().trim_start_matches('#').trim_start(),
            None => content,
        };
        let text = inline(content);
        if text.is_empty() && (lines.last().is_none_or(|l| l.is_empty() || l == RULE)) {
            continue;
        }
        lines.push(text);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.join("\n")
}

fn is_rule(line: &str) -> bool {
    let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    compact.len() >= 3 && ["-", "*", "_"].iter().any(|mark| compact.chars().all(|c| c.to_string() == *mark))
}

/// Inline Markdown as text.
fn inline(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut res = String::with_capacity(text.len());
    let mut idx = 0;
    while idx < chars.len() {
        let ch = chars[idx];
        match ch {
            '\\' if chars.get(idx + 1).is_some_and(|next| next.is_ascii_punctuation()) => {
                res.push(chars[idx + 1]);
                idx += 2;
            }
            '`' => {
                let run = chars[idx..].iter().take_while(|c| **c == '`').count();
                let body_start = idx + run;
                let close = (body_start..chars.len()).find(|&pos| {
                    chars[pos..].iter().take_while(|c| **c == '`').count() == run && (pos == 0 || chars[pos - 1] != '`')
                });
                match close {
                    Some(close) => {
                        res.extend(&chars[body_start..close]);
                        idx = close + run;
                    }
                    None => {
                        res.extend(&chars[idx..body_start]);
                        idx = body_start;
                    }
                }
            }
            '[' => match link_at(&chars, idx) {
                Some((label, url, next)) => {
                    res.push_str(&inline(&label));
                    if !url.is_empty() && url != label {
                        let _ = write!(res, " ({url})");
                    }
                    idx = next;
                }
                None => {
                    res.push(ch);
                    idx += 1;
                }
            },
            '*' | '_' => {
                let run = chars[idx..].iter().take_while(|c| **c == ch).count();
                match emphasis_close(&chars, idx, run) {
                    Some(close) => {
                        let inner: String = chars[idx + run..close].iter().collect();
                        res.push_str(&inline(&inner));
                        idx = close + run;
                    }
                    None => {
                        res.extend(std::iter::repeat_n(ch, run));
                        idx += run;
                    }
                }
            }
            _ => {
                res.push(ch);
                idx += 1;
            }
        }
    }
    res
}

/// Where the emphasis opened by the `run` marks at `start` closes, if it is emphasis at all: the
/// opening run is followed by a non-space, the closing run (same mark, same length) follows a
/// non-space, and `_` never opens or closes inside a word (`snake_case`).
fn emphasis_close(chars: &[char], start: usize, run: usize) -> Option<usize> {
    let mark = chars[start];
    let word = |pos: Option<usize>| pos.and_then(|p| chars.get(p)).is_some_and(|c| c.is_alphanumeric());
    let opens =
        chars.get(start + run).is_some_and(|c| !c.is_whitespace()) && !(mark == '_' && word(start.checked_sub(1)));
    if !opens {
        return None;
    }
    let mut pos = start + run + 1;
    while pos + run <= chars.len() {
        let here = chars[pos..].iter().take_while(|c| **c == mark).count();
        if here == run
            && chars[pos - 1] != mark
            && !chars[pos - 1].is_whitespace()
            && chars[pos - 1] != '\\'
            && !(mark == '_' && word(Some(pos + run)))
        {
            return Some(pos);
        }
        pos += here.max(1);
    }
    None
}

/// `[label](url)` starting at `start`: the label, the url and the index after it.
fn link_at(chars: &[char], start: usize) -> Option<(String, String, usize)> {
    let mut depth = 0;
    let mut close = None;
    for (pos, ch) in chars.iter().enumerate().skip(start) {
        match ch {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(pos);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close?;
    if chars.get(close + 1) != Some(&'(') {
        return None;
    }
    let end = (close + 2..chars.len()).find(|&pos| chars[pos] == ')')?;
    let label: String = chars[start + 1..close].iter().collect();
    let url: String = chars[close + 2..end].iter().collect();
    Some((label, url.trim().to_owned(), end + 1))
}

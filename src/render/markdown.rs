//! Markdown building blocks for resources: escaping, fences, tables, links, timestamps.
//!
//! Architecture invariant: escaping adds a backslash only where CommonMark would otherwise read
//! syntax, so names and paths (`fixture_tests`, `C:\src`) read literally in the raw Markdown an
//! agent copies from.

use chrono::{DateTime, Utc};

/// Escapes plain text so Markdown shows it literally, with no needless backslashes: `_` only where
/// it could open or close emphasis (not between two letters or digits), `\` only before ASCII
/// punctuation, `#` and `>` only at the start, and always `` ` ``, `*`, `[`, `]` and `<`.
pub fn escape(text: &str) -> String {
    escape_with(text, false)
}

fn escape_with(text: &str, in_table: bool) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut res = String::with_capacity(text.len());
    for (idx, &ch) in chars.iter().enumerate() {
        let before = idx.checked_sub(1).map(|i| chars[i]);
        let after = chars.get(idx + 1).copied();
        let needed = match ch {
            '`' | '*' | '[' | ']' | '<' => true,
            '_' => !(before.is_some_and(char::is_alphanumeric) && after.is_some_and(char::is_alphanumeric)),
            '\\' => after.is_none_or(|next| next.is_ascii_punctuation()),
            '#' | '>' => idx == 0,
            '|' => in_table,
            _ => false,
        };
        if needed {
            res.push('\\');
        }
        res.push(ch);
    }
    res
}

/// Escapes a table cell: like `escape`, with `|` escaped and line breaks turned into spaces.
pub fn cell(text: &str) -> String {
    escape_with(&text.replace("\r\n", " ").replace(['\n', '\r'], " "), true)
}

/// A Markdown link whose target is escaped for `\` and `)`.
pub fn link(label: &str, target: &str) -> String {
    let target = target.replace('\\', "\\\\").replace(')', "\\)");
    format!("[{}]({target})", escape(label))
}

/// A fenced code block whose fence is longer than any backtick run inside `content`.
pub fn fence(content: &str, language: &str) -> String {
    let mut run = 0;
    let mut longest_run = 0;
    for ch in content.chars() {
        if ch == '`' {
            run += 1;
            longest_run = longest_run.max(run);
        } else {
            run = 0;
        }
    }
    let ticks = "`".repeat(longest_run.max(2) + 1);
    let body = content.strip_suffix('\n').unwrap_or(content);
    format!("{ticks}{language}\n{body}\n{ticks}")
}

/// Resource timestamps: `07 Sep 2026, 12:45:12 UTC`.
pub fn timestamp(at: &DateTime<Utc>) -> String {
    at.format("%d %b %Y, %H:%M:%S UTC").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markdown_syntax() {
        assert_eq!(escape("a_b*c|d`e"), "a_b\\*c|d\\`e");
        assert_eq!(escape("_x_ fixture_tests __init__ a_"), "\\_x\\_ fixture_tests \\_\\_init\\_\\_ a\\_");
        assert_eq!(escape(r"C:\src\[x] \*"), r"C:\src\\\[x\] \\\*");
        assert_eq!(escape("# a #b > c"), "\\# a #b > c");
        assert_eq!(escape("project/src/my_lib.cpp"), "project/src/my_lib.cpp");
        assert_eq!(cell("a\nb|c"), "a b\\|c");
        assert_eq!(link("x_y", "forgemcp://a(b)"), "[x_y](forgemcp://a(b\\))");
    }

    #[test]
    fn fences_outgrow_backtick_runs() {
        assert_eq!(fence("plain", ""), "```\nplain\n```");
        assert_eq!(fence("a ```` b\n", "cpp"), "`````cpp\na ```` b\n`````");
    }

    #[test]
    fn timestamps_are_readable_to_seconds() {
        let at = DateTime::parse_from_rfc3339("2026-09-07T12:45:12.5Z").unwrap().with_timezone(&Utc);
        assert_eq!(timestamp(&at), "07 Sep 2026, 12:45:12 UTC");
    }
}

//! Small text helpers shared by more than one module.

/// An error and its sources as one lowercase line (`a: b: c`); a source whose text is already part
/// of the line is not repeated.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// `text` with every character that could change how a one-line message reads escaped: line breaks
/// and other control characters, Unicode line and paragraph separators, and bidirectional
/// overrides and isolates become `\n`, `\r`, `\t` or `\u{…}` (backslashes stay, so Windows paths
/// read as they are).
pub fn escape_controls(text: &str) -> String {
    let mut res = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => res.push_str("\\n"),
            '\r' => res.push_str("\\r"),
            '\t' => res.push_str("\\t"),
            c if c.is_control()
                || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') =>
            {
                res.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            }
            c => res.push(c),
        }
    }
    res
}

#[cfg(test)]
mod tests {
    #[test]
    fn controls_line_breaks_and_bidi_overrides_are_escaped() {
        let escaped = super::escape_controls("/tmp/a\nAllow? yes\r\t\u{1b}[2J\u{202e}b\\c\u{2028}é");
        assert_eq!(escaped, "/tmp/a\\nAllow? yes\\r\\t\\u{1b}[2J\\u{202e}b\\c\\u{2028}é");
    }

    use super::*;

    #[test]
    fn sources_are_joined_once() {
        #[derive(Debug, thiserror::Error)]
        #[error("failed to read `project/a`")]
        struct Outer(#[source] std::io::Error);
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        assert_eq!(error_chain(&Outer(io)), "failed to read `project/a`: no such file");
    }
}

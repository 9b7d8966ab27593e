//! One diagnostic as compilers print it: `project/src/a.cpp:7065:15: error: message [clang, -Wfoo]`,
//! with a one-based line and column, so clangd, clang-tidy and the build say a place alike.
//!
//! Architecture invariant: pure; callers convert their zero-based columns (LSP's code points) to
//! one-based ones before calling; structured results keep their own ranges.

/// `path:line:column: severity: message [source, code]` (the bracket only when there is a source or
/// code). Only the message's first line is printed; the caller adds the rest, indented, when it
/// wants it.
pub fn diagnostic_line(
    path: &str,
    line: u64,
    column: u64,
    severity: &str,
    message: &str,
    source: Option<&str>,
    code: Option<&str>,
) -> String {
    let first = message.lines().next().unwrap_or_default();
    let mut res = format!("{path}:{line}:{column}: {severity}: {first}");
    match (source, code) {
        (Some(source), Some(code)) => res.push_str(&format!(" [{source}, {code}]")),
        (Some(one), None) | (None, Some(one)) => res.push_str(&format!(" [{one}]")),
        (None, None) => {}
    }
    res
}

/// `path:line:column` (a place without a diagnostic: a definition, a reference).
pub fn place(path: &str, line: u64, column: u64) -> String {
    format!("{path}:{line}:{column}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_like_a_compilers() {
        assert_eq!(
            diagnostic_line(
                "project/src/a.cpp",
                7065,
                15,
                "error",
                "no viable conversion\nnote: more",
                Some("clang"),
                Some("-Wfoo")
            ),
            "project/src/a.cpp:7065:15: error: no viable conversion [clang, -Wfoo]"
        );
        assert_eq!(
            diagnostic_line("project/a.c", 1, 1, "warning", "w", None, Some("x")),
            "project/a.c:1:1: warning: w [x]"
        );
        assert_eq!(diagnostic_line("project/a.c", 1, 1, "note", "n", None, None), "project/a.c:1:1: note: n");
        assert_eq!(place("project/a.c", 3, 9), "project/a.c:3:9");
    }
}
